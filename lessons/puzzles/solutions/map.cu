/* Puzzle 1, map: a solution. Each thread owns one element, its thread index. */
__global__ void map(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    out[i] = a[i] + 10;
}
