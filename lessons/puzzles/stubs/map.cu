/* Puzzle 1, map: out[i] = a[i] + 10.
 *
 *   a    [size]   input        out  [size]   output        size = 5
 *   launch: map<<<1, 5>>>(a, out, size): one block of 5 threads, one per element.
 *   Each thread: i = threadIdx.x; one read of a[i], one write of out[i].
 *
 * This is plain CUDA C: kscope compiles the file with clang, runs the kernel on its
 * simulator and records every load and store with its source line; the grader reads
 * that trace (docs/puzzles.md). Complete the kernel; keep its name and parameters.
 * Grade: kscope puzzle map     Stuck: kscope puzzle map --solution */
__global__ void map(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    /* TODO: out[i] = a[i] + 10 (one line) */
}
