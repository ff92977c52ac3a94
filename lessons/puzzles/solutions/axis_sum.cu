/* Puzzle 13, axis_sum: a solution. Block blockIdx.y sums row blockIdx.y: its threads load
 * the row (0 past its end), then halve the tile each step (thread c adds slot c + s into
 * slot c; the slots it reads are ones no thread writes in that step), a barrier after
 * each. */
#define TPB 8

__global__ void axis_sum(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int r = blockIdx.y, c = threadIdx.x;
    tile[c] = c < size ? a[r * size + c] : 0.0f;
    __syncthreads();
    for (int s = TPB / 2; s > 0; s /= 2) {
        if (c < s)
            tile[c] += tile[c + s];
        __syncthreads();
    }
    if (c == 0)
        out[r] = tile[0];
}
