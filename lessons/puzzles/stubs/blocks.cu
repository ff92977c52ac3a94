/* Puzzle 6, blocks: out[i] = a[i] + 10 with several blocks.
 *
 *   a    [size]   input        out  [size]   output        size = 9
 *   launch: blocks<<<3, 4>>>(a, out, size): 3 blocks of 4 threads (12 threads for 9
 *   elements).
 *   Each thread: its element is i = blockIdx.x * blockDim.x + threadIdx.x; one read, one
 *   write, if i < size.
 *
 * Grade: kscope puzzle blocks     Stuck: kscope puzzle blocks --solution */
__global__ void blocks(const float *a, float *out, int size)
{
    /* TODO: work out i, then out[i] = a[i] + 10 when i < size */
}
