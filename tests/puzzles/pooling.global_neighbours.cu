/* pooling, wrong: the neighbours come from global memory, three reads a thread.
 * expect: FAIL at most 1 global read a thread: thread 1 of block 0 (work item 1) reads global memory 2 times
 * expect: FAIL uses shared memory: block 0 never writes shared memory */
__global__ void pooling(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    if (i < size) {
        float sum = a[i];
        if (i >= 1)
            sum += a[i - 1];
        if (i >= 2)
            sum += a[i - 2];
        out[i] = sum;
    }
}
