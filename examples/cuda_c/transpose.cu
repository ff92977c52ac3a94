// transpose.cu - an ordinary CUDA file: a naive and a tiled matrix transpose.
// Run it on the KernelScope simulator as it is (examples/cuda_c/README.md):
//   kscope run transpose.cu --kernel transpose_tiled --grid 2,3 --block 32,8 \
//       --arg in=@in.npy --arg out=empty:37x53 --arg rows=53 --arg cols=37 --trace t.kst
#include <cstdio>
#include <cuda_runtime.h>

#define TILE 32

// out[c][r] = in[r][c]; in is rows x cols, out cols x rows; one thread per element
__global__ void transpose_naive(const float *in, float *out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols)
        out[c * rows + r] = in[r * cols + c];
}

// the same through a shared tile: a 32 x 32 tile per block, blockDim (32, 8), each
// thread moves four rows; the +1 column keeps the column reads off one bank
__global__ void transpose_tiled(const float *in, float *out, int rows, int cols)
{
    __shared__ float tile[TILE][TILE + 1];
    int c = blockIdx.x * TILE + threadIdx.x;
    int r = blockIdx.y * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += blockDim.y)
        if (r + k < rows && c < cols)
            tile[threadIdx.y + k][threadIdx.x] = in[(r + k) * cols + c];
    __syncthreads();
    c = blockIdx.y * TILE + threadIdx.x; // now a column of out: a row of in
    r = blockIdx.x * TILE + threadIdx.y;
    for (int k = 0; k < TILE; k += blockDim.y)
        if (r + k < cols && c < rows)
            out[(r + k) * rows + c] = tile[threadIdx.x][threadIdx.y + k];
}

int main()
{
    const int rows = 53, cols = 37;
    float *in, *out;
    cudaMalloc(&in, rows * cols * sizeof(float));
    cudaMalloc(&out, rows * cols * sizeof(float));
    dim3 block(TILE, 8), grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_tiled<<<grid, block>>>(in, out, rows, cols);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
