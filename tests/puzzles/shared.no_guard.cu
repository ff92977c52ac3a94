/* shared, wrong: the load is not guarded; the last block's threads 2 and 3 read past a.
 * expect: FAIL no access outside an array: thread 2 of block 2 (work item 10) read a[10], outside a (10 elements)
 * expect: at shared.no_guard.cu:10: tile[local] = a[i]; */
#define TPB 4

__global__ void shared(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int local = threadIdx.x, i = blockIdx.x * TPB + local;
    tile[local] = a[i];
    __syncthreads();
    if (i < size)
        out[i] = tile[local] + 10;
}
