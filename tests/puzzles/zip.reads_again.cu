/* zip, wrong: the right sum, but a is read twice: out[i] is written first, and out might
 * be a (nothing tells the compiler otherwise), so a[i] is loaded again after that store.
 * expect: FAIL at most 2 global reads a thread: thread 0 of block 0 (work item 0) reads global memory 3 times (a[0], a[0], b[0])
 * expect: at zip.reads_again.cu:9: out[i] = a[i] + b[i]; */
__global__ void zip(const float *a, const float *b, float *out, int size)
{
    int i = threadIdx.x;
    out[i] = a[i];
    out[i] = a[i] + b[i];
}
