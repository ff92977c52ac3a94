// __syncwarp() orders a warp's lanes (warpred passes check); without it the same reduction races
// (racy); __activemask() past an early return names the lanes left (am)
__global__ void warpred(const float *in, float *out)
{
    __shared__ float s[64];
    int tid = threadIdx.x;
    s[tid] = in[tid];
    __syncthreads();
    if (tid < 32) {
        float v = s[tid];
        for (int off = 16; off > 0; off /= 2) {
            v += s[tid + off];
            __syncwarp();
            s[tid] = v;
            __syncwarp();
        }
        if (tid == 0) out[blockIdx.x] = v;
    }
}
__global__ void racy(const float *in, float *out)
{
    __shared__ float s[64];
    int tid = threadIdx.x;
    s[tid] = in[tid];
    __syncthreads();
    if (tid < 32) {
        for (int off = 16; off > 0; off /= 2) s[tid] += s[tid + off];
        if (tid == 0) out[blockIdx.x] = s[0];
    }
}
__global__ void am(int *out, int n)
{
    int i = threadIdx.x;
    if (i >= n) return;
    out[i] = __activemask();
}
