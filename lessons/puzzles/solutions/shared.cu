/* Puzzle 8, shared: a solution. Each thread fills its own slot of the block's tile; the
 * barrier is where the tile becomes everyone's. */
#define TPB 4

__global__ void shared(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int local = threadIdx.x, i = blockIdx.x * TPB + local;
    if (i < size)
        tile[local] = a[i];
    __syncthreads();
    if (i < size)
        out[i] = tile[local] + 10;
}
