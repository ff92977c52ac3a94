// FAULT: waits for a flag nobody sets: the time limit stops it
__global__ void wait_flag(int *flag)
{
    volatile int *f = flag;
    while (f[0] == 0) {
    }
}
