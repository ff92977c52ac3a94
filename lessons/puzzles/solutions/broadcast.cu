/* Puzzle 5, broadcast: a solution. a's element is the thread's row, b's its column:
 * every thread of a row reads the same element of a. */
__global__ void broadcast(const float *a, const float *b, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    if (r < size && c < size)
        out[r * size + c] = a[r] + b[c];
}
