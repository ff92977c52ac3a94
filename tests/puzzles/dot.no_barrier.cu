/* dot, wrong: thread 0 adds the products before the others have stored theirs.
 * expect: FAIL no shared-memory race:
 * expect: write of products[1] in phase 0, which thread (0,0,0) reads
 * expect: by thread 1 of block 0 (work item 1)
 * expect: got NaN, want 55 (written last by thread 0 of block 0 (work item 0))
 * expect: at dot.no_barrier.cu:13: products[i] = i < size ? a[i] * b[i] : 0.0f; */
#define TPB 16

__global__ void dot(const float *a, const float *b, float *out, int size)
{
    __shared__ float products[TPB];
    int i = threadIdx.x;
    products[i] = i < size ? a[i] * b[i] : 0.0f;
    if (i == 0) {
        float sum = 0;
        for (int k = 0; k < TPB; ++k)
            sum += products[k];
        out[0] = sum;
    }
}
