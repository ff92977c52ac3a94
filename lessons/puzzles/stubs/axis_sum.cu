/* Puzzle 13, axis_sum: out[r] = a[r][0] + a[r][1] + ... + a[r][size - 1].
 *
 *   a    [5][size]   input (row-major: a[r * size + c])     out  [5]   output
 *   size = 7 (a row's length)
 *   launch: axis_sum<<<dim3(1, 5), TPB>>>(a, out, size), TPB = 8: block blockIdx.y sums
 *   row blockIdx.y.
 *   Each thread c: 1 global read, a[r][c], into the tile (0 past the row's end). Then a
 *   tree: s = 4, 2, 1, thread c < s adds slot c + s into slot c; a __syncthreads() after
 *   each step. One thread writes out[r].
 *
 * Graded too: out written once an element, shared memory used, no race, no read of a
 * tile slot nobody wrote.
 * Grade: kscope puzzle axis_sum     Stuck: kscope puzzle axis_sum --solution */
#define TPB 8

__global__ void axis_sum(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int r = blockIdx.y, c = threadIdx.x;
    /* TODO */
}
