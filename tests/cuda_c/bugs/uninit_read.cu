// BUG: accumulating into an output nobody initialised: out[i] += a[i] reads out[i]
// before any thread wrote it (launched with out=empty:N).
__global__ void accumulate(const float *a, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] += a[i];
}
