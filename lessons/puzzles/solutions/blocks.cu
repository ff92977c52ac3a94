/* Puzzle 6, blocks: a solution. */
__global__ void blocks(const float *a, float *out, int size)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < size)
        out[i] = a[i] + 10;
}
