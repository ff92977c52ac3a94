/* Puzzle 4, map2d: a solution. Both coordinates need their guard; the row's length is
 * the array's (size), not the block's. */
__global__ void map2d(const float *a, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    if (r < size && c < size)
        out[r * size + c] = a[r * size + c] + 10;
}
