/* parallel.c - see parallel.h. */
#define _POSIX_C_SOURCE 200809L
#include "parallel.h"

#include <pthread.h>
#include <stdlib.h>
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

struct ks_team {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    pthread_t th[KS_MAX_THREADS];
    int n, left, quit;
    unsigned long gen; /* counts the steps handed out */
    void *(*fn)(void *);
    char *jobs;
    size_t size;
};

typedef struct member {
    ks_team *t;
    int id;
} member;

static void *team_member(void *arg)
{
    ks_team *t = ((member *)arg)->t;
    const int id = ((member *)arg)->id;
    free(arg);
    unsigned long seen = 0;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (t->gen == seen && !t->quit) pthread_cond_wait(&t->go, &t->mu);
        if (t->quit) break;
        seen = t->gen;
        void *(*fn)(void *) = t->fn;
        void *job = t->jobs + (size_t)id * t->size;
        pthread_mutex_unlock(&t->mu);
        fn(job);
        pthread_mutex_lock(&t->mu);
        if (--t->left == 0) pthread_cond_signal(&t->done);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

ks_team *ks_team_new(int n)
{
    ks_team *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->go, NULL);
    pthread_cond_init(&t->done, NULL);
    if (n > KS_MAX_THREADS) n = KS_MAX_THREADS;
    t->n = 1;
    for (int i = 1; i < n; ++i) {
        member *m = malloc(sizeof *m);
        if (!m) break;
        *m = (member){t, t->n};
        if (pthread_create(&t->th[t->n], NULL, team_member, m) != 0) {
            free(m);
            break;
        }
        t->n++;
    }
    return t;
}

int ks_team_size(const ks_team *t) { return t->n; }

void ks_team_run(ks_team *t, void *(*fn)(void *), void *jobs, size_t job_size)
{
    pthread_mutex_lock(&t->mu);
    t->fn = fn, t->jobs = jobs, t->size = job_size, t->left = t->n - 1;
    t->gen++;
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->mu);
    fn(jobs); /* member 0 */
    pthread_mutex_lock(&t->mu);
    while (t->left > 0) pthread_cond_wait(&t->done, &t->mu);
    pthread_mutex_unlock(&t->mu);
}

void ks_team_free(ks_team *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->mu);
    for (int i = 1; i < t->n; ++i) pthread_join(t->th[i], NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->go);
    pthread_cond_destroy(&t->done);
    free(t);
}
