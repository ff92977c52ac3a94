/* Puzzle 4, map2d: out[r][c] = a[r][c] + 10 on a 2-D array.
 *
 *   a    [size][size]   input        out  [size][size]   output        size = 3
 *   Row-major, as CUDA C sees a matrix: element (r, c) is a[r * size + c].
 *   launch: map2d<<<1, dim3(4, 4)>>>(a, out, size): one block of 4 x 4 threads; the
 *   thread at threadIdx.x = c, threadIdx.y = r owns element (r, c).
 *   Each thread inside the array: one read of a, one write of out; the threads of row 3
 *   and of column 3 have no element.
 *
 * Grade: kscope puzzle map2d     Stuck: kscope puzzle map2d --solution */
__global__ void map2d(const float *a, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    /* TODO: out[r][c] = a[r][c] + 10 for the threads inside the array */
}
