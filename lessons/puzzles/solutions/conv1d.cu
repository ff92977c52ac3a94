/* Puzzle 11, conv1d: a solution. The block's tile is its TPB elements of a plus a halo of
 * MAX_CONV - 1 past them (0 past the end of a); the first b_size threads also load the
 * kernel b. */
#define TPB 8
#define MAX_CONV 4

__global__ void conv1d(const float *a, const float *b, float *out, int a_size, int b_size)
{
    __shared__ float tile[TPB + MAX_CONV - 1];
    __shared__ float kern[MAX_CONV];
    int local = threadIdx.x, i = blockIdx.x * TPB + local;
    tile[local] = i < a_size ? a[i] : 0.0f;
    if (local < MAX_CONV - 1)
        tile[TPB + local] = i + TPB < a_size ? a[i + TPB] : 0.0f;
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
