// BUG: forward differences with a shuffle whose mask names only the low 16 lanes,
// while all 32 lanes of the warp execute it.
__global__ void forward_diff(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    float next = __shfl_down_sync(0x0000ffff, v, 1);
    if (i < n)
        out[i] = next - v;
}
