/* Puzzle 2, zip: a solution. */
__global__ void zip(const float *a, const float *b, float *out, int size)
{
    int i = threadIdx.x;
    out[i] = a[i] + b[i];
}
