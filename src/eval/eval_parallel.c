/* eval_parallel: independent tasks on a few threads, taken from the last by an atomic
 * counter, each task's status and message kept so that the failure reported is the first
 * in the tasks' order, whatever the timing. */
#include "eval/eval_parallel.h"

#include "runlab/error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { MAX_THREADS = 4, ERR_CAP = 1024 };

typedef struct pool {
    size_t n;
    int (*task)(void *ctx, size_t i);
    void *ctx;
    atomic_size_t next;
    int *rc;
    char (*err)[ERR_CAP];
} pool;

static void *worker(void *arg)
{
    pool *p = arg;
    size_t k;
    while ((k = atomic_fetch_add(&p->next, 1)) < p->n) {
        size_t i = p->n - 1 - k;
        p->rc[i] = p->task(p->ctx, i);
        if (p->rc[i] < 0) /* the message is the task thread's own (thread-local) */
            snprintf(p->err[i], ERR_CAP, "%s", rl_error_last());
    }
    return NULL;
}

int eval_parallel(size_t n, int (*task)(void *ctx, size_t i), void *ctx, size_t *failed_at)
{
    if (failed_at)
        *failed_at = n;
    if (n == 0)
        return RL_OK;
    pool p = {n, task, ctx, 0, calloc(n, sizeof *p.rc), calloc(n, sizeof *p.err)};
    atomic_init(&p.next, 0);
    if (!p.rc || !p.err) {
        free(p.rc);
        free(p.err);
        return rl_error_set(RL_ENOMEM, "evaluation: out of memory");
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    size_t want = cores > 1 ? (size_t)cores : 1;
    want = want < n ? want : n;
    want = want < MAX_THREADS ? want : MAX_THREADS;
    pthread_t tids[MAX_THREADS];
    size_t started = 0;
    while (started + 1 < want && pthread_create(&tids[started], NULL, worker, &p) == 0)
        started++;
    worker(&p); /* the calling thread works too (alone when no thread started) */
    for (size_t t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    int rc = RL_OK;
    for (size_t i = 0; i < n; i++)
        if (p.rc[i] < 0) {
            rc = rl_error_set(p.rc[i], "%s", p.err[i]);
            if (failed_at)
                *failed_at = i;
            break;
        }
    free(p.rc);
    free(p.err);
    return rc;
}
