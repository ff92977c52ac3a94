/* map, wrong: the right values, written in two steps (a[i], then 10 added after a
 * barrier): the output matches, the access pattern does not. (Was map.raw_write: a write
 * around the probes; real CUDA C has no way around the trace.)
 * expect: ok   output matches the reference
 * expect: FAIL each output element written once: out[0] written twice by thread 0 of block 0 (work item 0): write each element once
 * expect: at map.write_twice.cu:13: out[i] += 10;
 * expect: FAIL at most 1 global read a thread: thread 0 of block 0 (work item 0) reads global memory 2 times (a[0], out[0]) */
__global__ void map(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    out[i] = a[i];
    __syncthreads();
    out[i] += 10;
}
