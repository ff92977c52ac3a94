// HOSTILE: a kernel that forks, spawns a shell, writes a file or takes SIGALRM over: each
// stops the run with one line naming the call; nothing is created
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <signal.h>
__global__ void forker(int *o) { if (fork() == 0) for (;;) {} o[0] = 1; }
__global__ void shell(int *o) { o[0] = system("touch /tmp/kscope_pwned"); }
__global__ void writer(int *o) { FILE *f = fopen("/tmp/kscope_pwned", "w"); o[0] = f != 0; }
__global__ void sleeper(int *o) { signal(SIGALRM, SIG_IGN); volatile int *p = o; while (p[1] == 0) {} }
__global__ void spinner(int *o) { volatile int *p = o; while (p[1] == 0) {} }
