// BUG: a 2:1 downsample where both threads of a pair store to the same output element
// with a plain store (it should be one thread per output, or an atomicAdd).
__global__ void downsample2(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i / 2] = in[i];
}
