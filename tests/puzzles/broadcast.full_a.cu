/* broadcast, wrong: a read as if it were size x size.
 * expect: FAIL no access outside an array: thread (0,1) of block (0,0) (work item 4) read a[3], outside a (3 x 1, 3 elements)
 * expect: at broadcast.full_a.cu:8: out[r * size + c] = a[r * size + c] + b[c]; */
__global__ void broadcast(const float *a, const float *b, float *out, int size)
{
    int c = threadIdx.x, r = threadIdx.y;
    if (r < size && c < size)
        out[r * size + c] = a[r * size + c] + b[c];
}
