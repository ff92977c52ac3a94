/* Puzzle 3, guard: out[i] = a[i] + 10, with more threads than elements.
 *
 *   a    [size]   input        out  [size]   output        size = 5
 *   launch: guard<<<1, 8>>>(a, out, size): threads 5, 6 and 7 have no element.
 *   Each thread with an element: one read of a, one write of out. The others touch
 *   nothing: an access outside an array fails the puzzle (on a GPU it is a bug that may
 *   or may not crash; here the access is not made and the thread stops).
 *
 * Grade: kscope puzzle guard     Stuck: kscope puzzle guard --solution */
__global__ void guard(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    /* TODO: out[i] = a[i] + 10 for the threads that have an element */
}
