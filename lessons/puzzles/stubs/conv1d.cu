/* Puzzle 11, conv1d: out[i] = a[i] * b[0] + a[i + 1] * b[1] + ... + a[i + B - 1] * b[B - 1],
 * a read as 0 past its end.
 *
 *   a    [a_size]   input        b    [b_size]   input (the kernel)        out  [a_size]
 *   output; a_size = 15, b_size = 4 (at most MAX_CONV).
 *   launch: conv1d<<<2, TPB>>>(a, b, out, a_size, b_size), TPB = 8.
 *   Each thread: at most 3 global reads. The block needs a[blockIdx.x * TPB ..] and
 *   b_size - 1 elements past its own (the halo): the tile is TPB + MAX_CONV - 1 long; the
 *   first MAX_CONV - 1 threads also load the halo, the first b_size the kernel b into
 *   a second tile.
 *
 * Graded too: shared memory used, no race, no read of a tile slot nobody wrote.
 * Grade: kscope puzzle conv1d     Stuck: kscope puzzle conv1d --solution */
#define TPB 8
#define MAX_CONV 4

__global__ void conv1d(const float *a, const float *b, float *out, int a_size, int b_size)
{
    __shared__ float tile[TPB + MAX_CONV - 1];
    __shared__ float kern[MAX_CONV];
    int local = threadIdx.x, i = blockIdx.x * TPB + local;
    /* TODO */
}
