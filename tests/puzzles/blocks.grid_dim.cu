/* blocks, wrong: blockIdx.x * gridDim.x (3) where blockIdx.x * blockDim.x (4) is meant:
 * blocks overlap.
 * expect: FAIL each output element written once: out[3] written by thread 3 of block 0 (work item 3) and by thread 0 of block 1 (work item 4)
 * expect: at blocks.grid_dim.cu:9: out[i] = a[i] + 10; */
__global__ void blocks(const float *a, float *out, int size)
{
    int i = blockIdx.x * gridDim.x + threadIdx.x;
    if (i < size)
        out[i] = a[i] + 10;
}
