// Stream compaction with warp votes: every warp ballots which of its elements are
// positive, lane 0 reserves room for them with one atomicAdd, and each kept element
// goes to the warp's base plus the number of kept lanes before it. The order between
// warps is whatever order the atomics ran in; inside a warp it is the input order.
#define FULL_MASK 0xffffffffu

__global__ void compact_positive(const float *in, int n, float *out, int *count)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const float v = i < n ? in[i] : 0.0f;
    const bool keep = i < n && v > 0.0f;

    const unsigned ballot = __ballot_sync(FULL_MASK, keep);
    int base = 0;
    if (lane == 0 && ballot != 0)
        base = atomicAdd(count, __popc(ballot));
    base = __shfl_sync(FULL_MASK, base, 0);
    if (keep)
        out[base + __popc(ballot & ((1u << lane) - 1u))] = v;
}
