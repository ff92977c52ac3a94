/* blocks2d, wrong: only the row is guarded; the grid's column 5 wraps into the next row,
 * and past the end of the array on the last row.
 * expect: FAIL no access outside an array: thread (2,1) of block (1,1) (work item 32) read a[25], outside a (5 x 5, 25 elements)
 * expect: out[5] (row 1, column 0) written by thread (0,1) of block (0,0) (work item 3) and by thread (2,0) of block (1,0) (work item 11)
 * expect: at blocks2d.row_guard.cu:11: out[r * size + c] = a[r * size + c] + 10; */
__global__ void blocks2d(const float *a, float *out, int size)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < size)
        out[r * size + c] = a[r * size + c] + 10;
}
