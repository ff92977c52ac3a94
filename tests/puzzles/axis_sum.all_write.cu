/* axis_sum, wrong: every thread of the block writes out[r].
 * expect: FAIL each output element written once: out[0] written by thread (0,0) of block (0,0) (work item 0) and by thread (1,0) of block (0,0) (work item 1)
 * expect: at axis_sum.all_write.cu:17: out[r] = tile[0]; */
#define TPB 8

__global__ void axis_sum(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int r = blockIdx.y, c = threadIdx.x;
    tile[c] = c < size ? a[r * size + c] : 0.0f;
    __syncthreads();
    for (int s = TPB / 2; s > 0; s /= 2) {
        if (c < s)
            tile[c] += tile[c + s];
        __syncthreads();
    }
    out[r] = tile[0];
}
