/* conv1d, wrong: the inner loop reads global memory, 2 * b_size reads a thread.
 * expect: FAIL at most 3 global reads a thread: thread 0 of block 0 (work item 0) reads global memory 8 times
 * expect: FAIL uses shared memory */
__global__ void conv1d(const float *a, const float *b, float *out, int a_size, int b_size)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < a_size) {
        float sum = 0;
        for (int j = 0; j < b_size && i + j < a_size; ++j)
            sum += a[i + j] * b[j];
        out[i] = sum;
    }
}
