// y = a * x + y, each thread handling four consecutive elements i*4 .. i*4+3.
__global__ void saxpy4(int n, float a, const float *x, float *y)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int j = i * 4 + k;
        if (j < n)
            y[j] = a * x[j] + y[j];
    }
}
