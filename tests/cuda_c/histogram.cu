// Histogram: each block counts into shared bins with shared atomics, then adds its
// bins into the global histogram with one global atomic per bin.
#define NBINS 64

__global__ void histogram(const int *data, int n, int *hist)
{
    __shared__ int bins[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        bins[b] = 0;
    __syncthreads();

    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[data[i] % NBINS], 1);
    __syncthreads();

    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        if (bins[b] != 0)
            atomicAdd(&hist[b], bins[b]);
}
