/* map, wrong: adds 1, not 10 - every element is off; the grader names the first.
 * expect: 5 of 5 elements wrong; the first, out[0]: got -4, want 5 (written last by thread 0 of block 0 (work item 0))
 * expect: at map.plus_one.cu:7: out[i] = a[i] + 1; */
__global__ void map(const float *a, float *out, int size)
{
    int i = threadIdx.x;
    out[i] = a[i] + 1;
}
