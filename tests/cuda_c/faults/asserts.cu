// FAULT: thread 5's assert fails (a[5] == 5); the others print and run on
#include <cassert>
#include <cstdio>

__global__ void checked(const int *a, int *out)
{
    int i = threadIdx.x;
    assert(a[i] != 5);
    printf("thread %d sees %d\n", i, a[i]);
    out[i] = a[i] * 2;
}
