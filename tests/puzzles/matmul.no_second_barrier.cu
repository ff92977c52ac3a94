/* matmul, wrong: no barrier after the products, so the next load overwrites a tile that
 * other threads still read.
 * expect: FAIL no shared-memory race:
 * expect: read of ta[0] in phase 1, which thread (0,0,0) writes
 * expect: by thread (1,0) of block (0,0) (work item 1) */
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
    }
    if (row < size && col < size)
        out[row * size + col] = acc;
}
