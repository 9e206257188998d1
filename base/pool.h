/*
 * A small thread pool (not installed; base/pool.c): independent tasks, numbered 0..n-1, run on a
 * few threads, the caller's thread among them. Tasks are handed out in index order; each writes
 * only its own results, so what a run computes does not depend on the number of threads or on
 * the order the tasks finish. The pool's lock serialises what the tasks share (a progress
 * callback) and counts the finished tasks.
 */
#ifndef DUET_BASE_POOL_H
#define DUET_BASE_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/** Threads of a pool at most (a request for more, or for one per CPU on a larger machine, gets this many). */
#define DUET__POOL_MAX_THREADS 256

typedef struct duet__pool duet__pool_t;

/** Task i of a run; `arg` is the run's argument. */
typedef void (*duet__pool_task_fn)(duet__pool_t *pool, size_t i, void *arg);

struct duet__pool {
    pthread_mutex_t mu;
    int mu_ok;
    size_t n, next, done;
    duet__pool_task_fn fn;
    void *arg;
};

/** Prepare a pool (its lock). @return DUET_ERR_INTERNAL when the lock cannot be made. */
duet_status_t duet__pool_init(duet__pool_t *pool);
/** Release a pool; one that duet__pool_init() did not set up, or NULL, is left alone. */
void duet__pool_destroy(duet__pool_t *pool);
/**
 * Run fn(pool, i, arg) for every i in [0, n) on up to `threads` threads (0: one per CPU), the
 * calling thread included, and return when all have finished. A thread that cannot start only
 * costs parallelism: the others take its tasks.
 */
void duet__pool_run(duet__pool_t *pool, size_t n, int32_t threads, duet__pool_task_fn fn, void *arg);
/** Take and release the pool's lock, around what tasks share. */
void duet__pool_lock(duet__pool_t *pool);
void duet__pool_unlock(duet__pool_t *pool);
/** Tasks finished so far in the current run; read it under the lock. */
size_t duet__pool_done(const duet__pool_t *pool);

#endif /* DUET_BASE_POOL_H */
