/* prefix_sum, wrong: slots past the end are never stored, then read by the scan.
 * expect: FAIL no read of unwritten shared memory: read of uninitialised shared memory tile[13]
 * expect: by thread 13 of block 0 (work item 13)
 * expect: at prefix_sum.unpadded.cu:16: float v = tile[i];
 * expect: ok   output matches the reference */
#define TPB 16

__global__ void prefix_sum(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int i = threadIdx.x;
    if (i < size)
        tile[i] = a[i];
    __syncthreads();
    for (int s = 1; s < TPB; s *= 2) {
        float v = tile[i];
        if (i >= s)
            v += tile[i - s];
        __syncthreads();
        tile[i] = v;
        __syncthreads();
    }
    if (i < size)
        out[i] = tile[i];
}
