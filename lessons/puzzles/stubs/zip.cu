/* Puzzle 2, zip: out[i] = a[i] + b[i].
 *
 *   a    [size]   input        b    [size]   input        out  [size]   output   size = 5
 *   launch: zip<<<1, 5>>>(a, b, out, size): one block of 5 threads, one per element.
 *   Each thread: one read of a, one of b, one write of out (at most 2 global reads).
 *
 * Grade: kscope puzzle zip     Stuck: kscope puzzle zip --solution */
__global__ void zip(const float *a, const float *b, float *out, int size)
{
    int i = threadIdx.x;
    /* TODO: out[i] = a[i] + b[i] */
}
