/* Puzzle 12, prefix_sum: out[i] = a[0] + a[1] + ... + a[i] (an inclusive scan).
 *
 *   a    [size]   input        out  [size]   output        size = 13
 *   launch: prefix_sum<<<1, TPB>>>(a, out, size), TPB = 16.
 *   Each thread: 1 global read into the tile (0 past the end). Then log2(TPB) steps: in
 *   step s = 1, 2, 4, 8 every slot i >= s adds the slot s before it. All threads must
 *   read their two slots before any thread writes (a __syncthreads()), and all must write
 *   before the next step reads (another one).
 *
 * Graded too: shared memory used, no race, no read of a tile slot nobody wrote.
 * Grade: kscope puzzle prefix_sum     Stuck: kscope puzzle prefix_sum --solution */
#define TPB 16

__global__ void prefix_sum(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int i = threadIdx.x;
    /* TODO */
}
