/* Puzzle 3, guard: a solution. The guard compares with the size, not the thread count. */
__global__ void guard(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    if (i < size)
        out[i] = a[i] + 10;
}
