/* parallel.c - see parallel.h. */
#define _POSIX_C_SOURCE 200809L
#include "parallel.h"

#include <pthread.h>
#include <unistd.h>

int ks_threads_for(uint64_t work, uint64_t per_thread)
{
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t n = cpus > 1 ? (uint64_t)cpus : 1;
    if (n > KS_MAX_THREADS) n = KS_MAX_THREADS;
    const uint64_t useful = work / (per_thread ? per_thread : 1) + 1;
    return (int)(n < useful ? n : useful);
}

void ks_run_parallel(void *(*fn)(void *), void *jobs, size_t job_size, int n)
{
    pthread_t th[KS_MAX_THREADS];
    int started[KS_MAX_THREADS] = {0};
    if (n > KS_MAX_THREADS) n = KS_MAX_THREADS;
    for (int t = 1; t < n; ++t) started[t] = pthread_create(&th[t], NULL, fn, (char *)jobs + (size_t)t * job_size) == 0;
    if (n > 0) fn(jobs);
    for (int t = 1; t < n; ++t) {
        if (started[t]) pthread_join(th[t], NULL);
        else fn((char *)jobs + (size_t)t * job_size);
    }
}
