/* blocks2d, wrong: r and c from threadIdx only - every block does the top-left 3 x 3.
 * expect: the first, out[3] (row 0, column 3): got 0, want
 * expect: FAIL each output element written once: out[0] (row 0, column 0) written by thread (0,0) of block (0,0) (work item 0) and by thread (0,0) of block (1,0) (work item 9)
 * expect: at blocks2d.no_block.cu:9: out[r * size + c] = a[r * size + c] + 10; */
__global__ void blocks2d(const float *a, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    if (r < size && c < size)
        out[r * size + c] = a[r * size + c] + 10;
}
