/* zip, wrong: a[i] + a[i] - b never read.
 * expect: FAIL output matches the reference
 * expect: want
 * expect: at zip.a_twice.cu:8: out[i] = a[i] + a[i]; */
__global__ void zip(const float *a, const float *b, float *out, int size)
{
    int i = threadIdx.x;
    out[i] = a[i] + a[i];
}
