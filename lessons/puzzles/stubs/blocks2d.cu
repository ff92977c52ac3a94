/* Puzzle 7, blocks2d: out[r][c] = a[r][c] + 10 with a 2-D grid of 2-D blocks.
 *
 *   a    [size][size]   input        out  [size][size]   output (row-major)   size = 5
 *   launch: blocks2d<<<dim3(2, 2), dim3(3, 3)>>>(a, out, size): 2 x 2 blocks of 3 x 3
 *   threads, 6 x 6 threads for 5 x 5 elements.
 *   Each thread: column c = blockIdx.x * blockDim.x + threadIdx.x, row r the same in y;
 *   inside the array one read of a, one write of out.
 *
 * Grade: kscope puzzle blocks2d     Stuck: kscope puzzle blocks2d --solution */
__global__ void blocks2d(const float *a, float *out, int size)
{
    /* TODO: work out r and c, then out[r][c] = a[r][c] + 10 inside the array */
}
