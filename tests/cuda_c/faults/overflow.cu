// FAULT: unbounded recursion with a large frame overflows the thread's stack
__device__ int deep(int k, volatile int *sink)
{
    int buf[256];
    buf[k % 256] = k;
    sink[0] = buf[(k * 7) % 256];
    return k > 0 ? deep(k - 1, sink) + 1 : 0;
}

__global__ void recurse(int *out)
{
    out[threadIdx.x] = deep(1 << 20, out);
}
