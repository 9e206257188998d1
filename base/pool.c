/*
 * The thread pool of base/pool.h: a shared cursor over the task numbers, taken under the lock by
 * each worker in turn until none are left.
 */
#include <string.h>
#include <unistd.h>

#include "base/pool.h"

duet_status_t duet__pool_init(duet__pool_t *pool)
{
    memset(pool, 0, sizeof(*pool));
    if (pthread_mutex_init(&pool->mu, NULL) != 0)
        return duet__error(DUET_ERR_INTERNAL, "thread pool: cannot create a mutex");
    pool->mu_ok = 1;
    return DUET_OK;
}

void duet__pool_destroy(duet__pool_t *pool)
{
    if (pool == NULL || !pool->mu_ok)
        return;
    pthread_mutex_destroy(&pool->mu);
    pool->mu_ok = 0;
}

void duet__pool_lock(duet__pool_t *pool)
{
    pthread_mutex_lock(&pool->mu);
}

void duet__pool_unlock(duet__pool_t *pool)
{
    pthread_mutex_unlock(&pool->mu);
}

size_t duet__pool_done(const duet__pool_t *pool)
{
    return pool->done;
}

static void *duet__pool_worker(void *arg)
{
    duet__pool_t *pool = arg;
    for (;;) {
        pthread_mutex_lock(&pool->mu);
        int have = pool->next < pool->n;
        size_t i = have ? pool->next++ : 0;
        pthread_mutex_unlock(&pool->mu);
        if (!have)
            return NULL;
        pool->fn(pool, i, pool->arg);
        pthread_mutex_lock(&pool->mu);
        pool->done++;
        pthread_mutex_unlock(&pool->mu);
    }
}

void duet__pool_run(duet__pool_t *pool, size_t n, int32_t threads, duet__pool_task_fn fn, void *arg)
{
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (int32_t)(cpus < DUET__POOL_MAX_THREADS ? cpus : DUET__POOL_MAX_THREADS) : 1;
    }
    if ((size_t)threads > n)
        threads = (int32_t)n;
    pool->n = n;
    pool->next = pool->done = 0;
    pool->fn = fn;
    pool->arg = arg;
    pthread_t tid[DUET__POOL_MAX_THREADS];
    int32_t started = 0;
    for (int32_t i = 1; i < threads && i < DUET__POOL_MAX_THREADS; i++)
        if (pthread_create(&tid[started], NULL, duet__pool_worker, pool) == 0)
            started++;
    duet__pool_worker(pool);
    for (int32_t i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
}
