/* guard, wrong: i <= size lets thread 5 read and write one past the end.
 * expect: FAIL no access outside an array: thread 5 of block 0 (work item 5) read a[5], outside a (5 elements)
 * expect: at guard.off_by_one.cu:9: out[i] = a[i] + 10;
 * expect: kscope step guard.kst --index 5 */
__global__ void guard(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    if (i <= size)
        out[i] = a[i] + 10;
}
