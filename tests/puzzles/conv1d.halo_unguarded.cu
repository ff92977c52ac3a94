/* conv1d, wrong: the halo load is not guarded against the end of a.
 * expect: FAIL no access outside an array: thread 0 of block 1 (work item 8) read a[16], outside a (15 elements)
 * expect: at conv1d.halo_unguarded.cu:14: tile[TPB + local] = a[i + TPB]; */
#define TPB 8
#define MAX_CONV 4

__global__ void conv1d(const float *a, const float *b, float *out, int a_size, int b_size)
{
    __shared__ float tile[TPB + MAX_CONV - 1];
    __shared__ float kern[MAX_CONV];
    int local = threadIdx.x, i = blockIdx.x * TPB + local;
    tile[local] = i < a_size ? a[i] : 0.0f;
    if (local < MAX_CONV - 1)
        tile[TPB + local] = a[i + TPB];
    if (local < b_size)
        kern[local] = b[local];
    __syncthreads();
    if (i < a_size) {
        float sum = 0;
        for (int j = 0; j < b_size; ++j)
            sum += tile[local + j] * kern[j];
        out[i] = sum;
    }
}
