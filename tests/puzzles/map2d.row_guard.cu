/* map2d, wrong: only the row is guarded; column 3 runs into the next row, and past the
 * end of the array on the last.
 * expect: FAIL no access outside an array: thread (3,2) of block (0,0) (work item 11) read a[9], outside a (3 x 3, 9 elements)
 * expect: FAIL each output element written once: out[3] (row 1, column 0) written by thread (3,0) of block (0,0) (work item 3) and by thread (0,1) of block (0,0) (work item 4) */
__global__ void map2d(const float *a, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    if (r < size)
        out[r * size + c] = a[r * size + c] + 10;
}
