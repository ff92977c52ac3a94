/* guard, wrong: i < size - 1 leaves the last element unwritten.
 * expect: 1 of 5 elements wrong; the first, out[4]: got 0, want
 * expect: (no thread wrote it)
 * expect: FAIL each output element written once: no thread wrote out[4] */
__global__ void guard(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    if (i < size - 1)
        out[i] = a[i] + 10;
}
