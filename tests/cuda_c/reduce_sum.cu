// Block sum: a grid-stride partial sum per thread, a warp reduction with
// __shfl_down_sync, the warps' sums through shared memory, the first warp finishes.
// out[blockIdx.x] = the sum of the block's elements.
#define FULL_MASK 0xffffffffu

__device__ __forceinline__ float warp_sum(float v)
{
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        v += __shfl_down_sync(FULL_MASK, v, offset);
    return v;
}

__global__ void reduce_sum(const float *in, float *out, int n)
{
    __shared__ float warp_sums[32];
    const int lane = threadIdx.x % warpSize;
    const int warp = threadIdx.x / warpSize;

    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += in[i];
    v = warp_sum(v);
    if (lane == 0)
        warp_sums[warp] = v;
    __syncthreads();

    if (warp == 0) {
        v = lane < blockDim.x / warpSize ? warp_sums[lane] : 0.0f;
        v = warp_sum(v);
        if (lane == 0)
            out[blockIdx.x] = v;
    }
}
