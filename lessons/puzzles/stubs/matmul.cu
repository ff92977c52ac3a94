/* Puzzle 14, matmul: out = a @ b, out[row][col] = sum over k of a[row][k] * b[k][col].
 *
 *   a    [size][size]   input        b    [size][size]   input
 *   out  [size][size]   output (all row-major: a[row * size + k])        size = 7
 *   launch: matmul<<<dim3(3, 3), dim3(TPB, TPB)>>>(a, b, out, size), TPB = 3: block
 *   (blockIdx.x, blockIdx.y) computes the TPB x TPB tile of out at columns
 *   blockIdx.x * TPB .., rows blockIdx.y * TPB ..; thread (threadIdx.x, threadIdx.y) its
 *   element (row, col).
 *   Each thread: for each of the 3 k-tiles, load one element of a and one of b into the
 *   block's two tiles (0 outside the matrices), __syncthreads(), add its TPB products,
 *   __syncthreads() (before the next load overwrites the tiles). At most 6 global reads
 *   a thread: the naive loop's 14 is what tiling saves.
 *
 * Graded too: shared memory used, no race, no read of a tile slot nobody wrote.
 * Grade: kscope puzzle matmul     Stuck: kscope puzzle matmul --solution */
#define TPB 3

__global__ void matmul(const float *a, const float *b, float *out, int size)
{
    __shared__ float ta[TPB][TPB];
    __shared__ float tb[TPB][TPB];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TPB + ty, col = blockIdx.x * TPB + tx;
    /* TODO */
}
