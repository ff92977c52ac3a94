/* Puzzle 14, matmul: a solution. For each k-tile every thread loads one element of a and
 * one of b (0 outside), the block multiplies the two tiles, and the second barrier keeps
 * the next load from overwriting a tile still in use. */
#define TPB 3

__global__ void matmul(const float *a, const float *b, float *out, int size)
{
    __shared__ float ta[TPB][TPB];
    __shared__ float tb[TPB][TPB];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TPB + ty, col = blockIdx.x * TPB + tx;
    float acc = 0;
    for (int k0 = 0; k0 < size; k0 += TPB) {
        ta[ty][tx] = row < size && k0 + tx < size ? a[row * size + k0 + tx] : 0.0f;
        tb[ty][tx] = k0 + ty < size && col < size ? b[(k0 + ty) * size + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TPB; ++k)
            acc += ta[ty][k] * tb[k][tx];
        __syncthreads();
    }
    if (row < size && col < size)
        out[row * size + col] = acc;
}
