// BUG: the vector add guarded with `i <= n`: thread n reads a[n] and b[n], one past
// the end of both inputs.
__global__ void vadd(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= n)
        c[i] = a[i] + b[i];
}
