/* broadcast, wrong: a indexed by the column and b by the row.
 * expect: FAIL output matches the reference
 * expect: written last by thread
 * expect: at broadcast.swapped.cu:9: out[r * size + c] = a[c] + b[r]; */
__global__ void broadcast(const float *a, const float *b, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    if (r < size && c < size)
        out[r * size + c] = a[c] + b[r];
}
