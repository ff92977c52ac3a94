/* Puzzle 12, prefix_sum: a solution (Hillis-Steele). In step s every slot i >= s adds the
 * slot s before it; the tile is read by all before anyone writes (first barrier) and
 * written by all before the next step reads (second barrier). Slots past the end hold 0,
 * so every slot a step reads was written. */
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
        __syncthreads();
        tile[i] = v;
        __syncthreads();
    }
    if (i < size)
        out[i] = tile[i];
}
