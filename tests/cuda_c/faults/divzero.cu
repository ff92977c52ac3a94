// FAULT: thread 3 divides an integer by zero (a[3] == 3)
__global__ void divide(const int *a, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 100 / (a[i] - 3);
}
