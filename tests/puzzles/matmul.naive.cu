/* matmul, wrong: the naive product, straight from global memory (2 * size reads a thread).
 * expect: FAIL at most 6 global reads a thread: thread (0,0) of block (0,0) (work item 0) reads global memory 14 times
 * expect: FAIL uses shared memory */
__global__ void matmul(const float *a, const float *b, float *out, int size)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= size || col >= size)
        return;
    float acc = 0;
    for (int k = 0; k < size; ++k)
        acc += a[row * size + k] * b[k * size + col];
    out[row * size + col] = acc;
}
