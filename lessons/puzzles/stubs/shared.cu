/* Puzzle 8, shared: out[i] = a[i] + 10, through the block's shared memory.
 *
 *   a    [size]   input        out  [size]   output        size = 10
 *   launch: shared<<<3, TPB>>>(a, out, size), TPB = 4: 12 threads for 10 elements.
 *   Each thread with an element i = blockIdx.x * TPB + threadIdx.x: reads a[i] once into
 *   its slot of the block's tile, waits at __syncthreads(), then writes out[i] from the
 *   tile.
 *
 * A __shared__ array is one per block: every thread of the block sees the same one.
 * Graded too: at most 1 global read a thread, shared memory used, no race.
 * Grade: kscope puzzle shared     Stuck: kscope puzzle shared --solution */
#define TPB 4

__global__ void shared(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int local = threadIdx.x, i = blockIdx.x * TPB + local;
    /* TODO: tile[local] = a[i]; __syncthreads(); out[i] = tile[local] + 10 (for i < size) */
}
