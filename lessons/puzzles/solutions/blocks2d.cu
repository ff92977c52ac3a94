/* Puzzle 7, blocks2d: a solution. The 1-D index formula once per dimension. */
__global__ void blocks2d(const float *a, float *out, int size)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < size && c < size)
        out[r * size + c] = a[r * size + c] + 10;
}
