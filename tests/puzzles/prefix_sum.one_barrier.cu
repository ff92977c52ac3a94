/* prefix_sum, wrong: no barrier between a step's reads and its writes.
 * expect: FAIL no shared-memory race:
 * expect: read of tile[0] in phase 1, which thread (0,0,0) writes
 * expect: by thread 1 of block 0 (work item 1)
 * expect: at prefix_sum.one_barrier.cu:17: v += tile[i - s]; */
#define TPB 16

__global__ void prefix_sum(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int i = threadIdx.x;
    tile[i] = i < size ? a[i] : 0.0f;
    __syncthreads();
    for (int s = 1; s < TPB; s *= 2) {
        float v = tile[i];
        if (i >= s)
            v += tile[i - s];
        tile[i] = v;
        __syncthreads();
    }
    if (i < size)
        out[i] = tile[i];
}
