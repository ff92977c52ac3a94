/* parallel.h - a batch of like jobs, one a thread: the trace writer's chunk encoding and
 * the recorder's sort and event making split their work this way. */
#ifndef KS_PARALLEL_H
#define KS_PARALLEL_H
#include <stddef.h>
#include <stdint.h>

#define KS_MAX_THREADS 16

/* The threads worth starting for `work` units of which one thread should take at least
 * `per_thread`: the machine's CPUs, at most KS_MAX_THREADS, at least 1. */
int ks_threads_for(uint64_t work, uint64_t per_thread);

/* Runs fn(jobs + i * job_size) for i < n (n <= KS_MAX_THREADS): job 0 on the calling
 * thread, the others on threads of their own; a job whose thread does not start runs on
 * the calling thread. Returns when all are done. */
void ks_run_parallel(void *(*fn)(void *), void *jobs, size_t job_size, int n);

/* A team of threads kept for a run of steps (the recorder's sorter runs dozens; starting
 * 15 threads a step cost more than some steps): the calling thread is member 0, the
 * others wait between steps. ks_team_new(n) starts n - 1 threads (the team is smaller
 * when some do not start; NULL only when out of memory). */
typedef struct ks_team ks_team;
ks_team *ks_team_new(int n);
int ks_team_size(const ks_team *t);
/* Runs fn(jobs + i * job_size) on member i, for every member; returns when all are done. */
void ks_team_run(ks_team *t, void *(*fn)(void *), void *jobs, size_t job_size);
void ks_team_free(ks_team *t);
#endif
