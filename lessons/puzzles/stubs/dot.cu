/* Puzzle 10, dot: out[0] = a[0] * b[0] + ... + a[size - 1] * b[size - 1].
 *
 *   a    [size]   input        b    [size]   input        out  [1]   output   size = 11
 *   launch: dot<<<1, TPB>>>(a, b, out, size), TPB = 16.
 *   Each thread: at most 2 global reads (its a[i] and b[i]); its product goes into the
 *   tile. out[0] is written by one thread only, once: on a GPU, threads writing one
 *   element race.
 *
 * Graded too: out written once, shared memory used, no race, no read of a tile slot
 * nobody wrote (threads past the end: store 0).
 * Grade: kscope puzzle dot     Stuck: kscope puzzle dot --solution */
#define TPB 16

__global__ void dot(const float *a, const float *b, float *out, int size)
{
    __shared__ float products[TPB];
    int i = threadIdx.x;
    /* TODO */
}
