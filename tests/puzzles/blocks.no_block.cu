/* blocks, wrong: i is the thread index only - every block does elements 0..3.
 * expect: the first, out[4]: got 0, want
 * expect: FAIL each output element written once: out[0] written by thread 0 of block 0 (work item 0) and by thread 0 of block 1 (work item 4) */
__global__ void blocks(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    if (i < size)
        out[i] = a[i] + 10;
}
