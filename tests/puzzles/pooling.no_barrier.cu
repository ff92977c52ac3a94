/* pooling, wrong: no barrier between filling the tile and reading the neighbours.
 * expect: FAIL no shared-memory race:
 * expect: read of tile[0] in phase 0, which thread (0,0,0) writes
 * expect: by thread 1 of block 0 (work item 1); two threads touch one slot between the same two barriers
 * expect: at pooling.no_barrier.cu:18: sum += tile[i - 1];
 * expect: at pooling.no_barrier.cu:14 (thread 0 of block 0 (work item 0)): tile[i] = a[i]; */
#define TPB 16

__global__ void pooling(const float *a, float *out, int size)
{
    __shared__ float tile[TPB];
    int i = threadIdx.x;
    if (i < size)
        tile[i] = a[i];
    if (i < size) {
        float sum = tile[i];
        if (i >= 1)
            sum += tile[i - 1];
        if (i >= 2)
            sum += tile[i - 2];
        out[i] = sum;
    }
}
