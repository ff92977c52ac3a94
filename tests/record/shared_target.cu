// shared_target.cu - a program for kscope record --shared-accesses (test_gpu_record):
// reverse_block reverses each block's slice of x through a __shared__ tile. It runs twice:
// with its __syncthreads() (correct: every thread reads a slot another thread wrote before
// the barrier) and without it (a shared-memory race: the read may come before the write).
// 3 blocks of 128 threads over n = 300 elements (the first launch also asks for 256 bytes of
// dynamic shared memory it does not use, for the trace's params); prints "shared_target: done".
#include <cstdio>
#include <cuda_runtime.h>

__global__ void reverse_block(const float *x, float *y, int n, int sync)
{
    __shared__ float tile[128];
    const int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    tile[t] = i < n ? x[i] : 0.0f;
    if (sync) __syncthreads();
    if (i < n) y[i] = tile[blockDim.x - 1 - t];
}

static int check(cudaError_t e, const char *what)
{
    if (e == cudaSuccess) return 0;
    fprintf(stderr, "shared_target: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
}

int main(void)
{
    const int n = 300;
    float h[300], *x, *y;
    for (int i = 0; i < n; ++i) h[i] = (float)(i * 7 % 31) - 15.0f;
    if (check(cudaMalloc(&x, n * sizeof(float)), "cudaMalloc") ||
        check(cudaMalloc(&y, n * sizeof(float)), "cudaMalloc") ||
        check(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice), "cudaMemcpy"))
        return 1;
    for (int sync = 1; sync >= 0; --sync) {
        reverse_block<<<3, 128, sync ? 256 : 0>>>(x, y, n, sync); // dynamic shared: in the params
        if (check(cudaGetLastError(), "launch") || check(cudaDeviceSynchronize(), "reverse_block")) return 1;
    }
    cudaFree(x);
    cudaFree(y);
    printf("shared_target: done\n");
    return 0;
}
