/* Puzzle 5, broadcast: out[r][c] = a[r] + b[c] - a column plus a row.
 *
 *   a    [size][1]   input (a column)        b    [1][size]   input (a row)
 *   out  [size][size]   output (row-major: out[r * size + c])        size = 3
 *   launch: broadcast<<<1, dim3(4, 4)>>>(a, b, out, size): threadIdx.x = c, threadIdx.y = r,
 *   as in map2d.
 *   Each thread inside out: one read of a, one of b, one write of out.
 *
 * Grade: kscope puzzle broadcast     Stuck: kscope puzzle broadcast --solution */
__global__ void broadcast(const float *a, const float *b, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    /* TODO: out[r][c] = a[r][0] + b[0][c] for the threads inside out */
}
