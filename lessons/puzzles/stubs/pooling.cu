/* Puzzle 9, pooling: out[i] = a[i - 2] + a[i - 1] + a[i] (leave out the terms before a[0]).
 *
 *   a    [size]   input        out  [size]   output        size = 11
 *   launch: pooling<<<1, TPB>>>(a, out, size), TPB = 16.
 *   Each thread reads at most 1 element of a (global memory is slow): its own, into the
 *   tile; after __syncthreads() it sums its three from the tile.
 *
 * Graded too: at most 1 global read a thread, shared memory used, no race.
 * Grade: kscope puzzle pooling     Stuck: kscope puzzle pooling --solution */
#define TPB 16

__global__ void pooling(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int i = threadIdx.x;
    /* TODO */
}
