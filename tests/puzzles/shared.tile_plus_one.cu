/* shared, wrong: each thread reads its neighbour's slot, and the last thread of a block
 * reads one past the tile: graded, not a crash.
 * expect: FAIL no access outside an array: thread 3 of block 0 (work item 3) read tile[4], outside the __shared__ array tile (4 elements)
 * expect: FAIL output matches the reference
 * expect: the first, out[0]: got
 * expect: at shared.tile_plus_one.cu:17: out[i] = tile[local + 1] + 10; */
#define TPB 4

__global__ void shared(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int local = threadIdx.x, i = blockIdx.x * TPB + local;
    if (i < size)
        tile[local] = a[i];
    __syncthreads();
    if (i < size)
        out[i] = tile[local + 1] + 10;
}
