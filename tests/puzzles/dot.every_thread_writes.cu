/* dot, wrong: every thread writes the sum, not thread 0 alone.
 * expect: FAIL each output element written once: out[0] written by thread 0 of block 0 (work item 0) and by thread 1 of block 0 (work item 1) (and maybe more): on a GPU these writes race
 * expect: at dot.every_thread_writes.cu:15: out[0] = sum; */
#define TPB 16

__global__ void dot(const float *a, const float *b, float *out, int size)
{
    __shared__ float products[TPB];
    int i = threadIdx.x;
    products[i] = i < size ? a[i] * b[i] : 0.0f;
    __syncthreads();
    float sum = 0;
    for (int k = 0; k < TPB; ++k)
        sum += products[k];
    out[0] = sum;
}
