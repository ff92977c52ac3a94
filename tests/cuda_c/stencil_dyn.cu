// 1-D three-point stencil out[i] = w0 * in[i-1] + w1 * in[i] + w2 * in[i+1] (0 outside),
// the block's elements and a one-element halo on each side staged in dynamic shared
// memory: launch with (blockDim.x + 2) * sizeof(float) bytes of it.
#define RADIUS 1

__global__ void stencil3(const float *in, float *out, int n, float w0, float w1, float w2)
{
    extern __shared__ float buf[];
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    const int s = threadIdx.x + RADIUS;

    buf[s] = g < n ? in[g] : 0.0f;
    if (threadIdx.x < RADIUS) {
        const int left = g - RADIUS;
        const int right = g + blockDim.x;
        buf[s - RADIUS] = left >= 0 && left < n ? in[left] : 0.0f;
        buf[s + blockDim.x] = right < n ? in[right] : 0.0f;
    }
    __syncthreads();

    if (g < n)
        out[g] = w0 * buf[s - 1] + w1 * buf[s] + w2 * buf[s + 1];
}
