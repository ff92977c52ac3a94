/* map2d, wrong: the flat index uses the block's width (4), not the array's (3).
 * expect: FAIL no access outside an array: thread (1,2) of block (0,0) (work item 9) read a[9], outside a (3 x 3, 9 elements)
 * expect: at map2d.block_width.cu:8: out[r * blockDim.x + c] = a[r * blockDim.x + c] + 10; */
__global__ void map2d(const float *a, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    if (r < size && c < size)
        out[r * blockDim.x + c] = a[r * blockDim.x + c] + 10;
}
