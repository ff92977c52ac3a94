/* axis_sum, wrong: the tree's barrier sits inside the if, so only some threads reach it
 * (4-7 miss the first: the earliest).
 * expect: FAIL every barrier reached by every thread: divergent barrier: block 0 thread 4 passes 1 barriers, thread 0 passes 4; thread 4 never reaches the one at line 17 (phase 1)
 * expect: inside an if
 * expect: at axis_sum.barrier_in_if.cu:17: __syncthreads(); */
#define TPB 8

__global__ void axis_sum(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int r = blockIdx.y, c = threadIdx.x;
    tile[c] = c < size ? a[r * size + c] : 0.0f;
    __syncthreads();
    for (int s = TPB / 2; s > 0; s /= 2)
        if (c < s) {
            tile[c] += tile[c + s];
            __syncthreads();
        }
    if (c == 0)
        out[r] = tile[0];
}
