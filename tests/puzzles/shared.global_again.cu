/* shared, wrong: fills the tile, then reads a again instead of the tile: two global reads a
 * thread, and a tile nobody reads (a compiler may drop the stores of a __shared__ array
 * nobody reads: then the block does not even write shared memory).
 * expect: FAIL uses shared memory: block 0 never */
#define TPB 4

__global__ void shared(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int local = threadIdx.x, i = blockIdx.x * TPB + local;
    if (i < size)
        tile[local] = a[i];
    __syncthreads();
    if (i < size)
        out[i] = a[i] + 10;
}
