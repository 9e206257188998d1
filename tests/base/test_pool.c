/*
 * The thread pool (base/pool.c): every task runs exactly once, whatever the number of threads,
 * and the lock counts the finished tasks.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "base/pool.h"

typedef struct {
    int runs[1000];
    size_t max_done_seen;
} t_work_t;

static void t_task(duet__pool_t *pool, size_t i, void *arg)
{
    t_work_t *w = arg;
    w->runs[i]++; /* each task owns its slot: a task run twice would leave 2 */
    duet__pool_lock(pool);
    size_t done = duet__pool_done(pool);
    if (done > w->max_done_seen)
        w->max_done_seen = done;
    duet__pool_unlock(pool);
}

static void t_run(size_t n, int32_t threads)
{
    duet__pool_t pool;
    t_work_t *w = calloc(1, sizeof(*w));
    cr_assert_eq(duet__pool_init(&pool), DUET_OK);
    duet__pool_run(&pool, n, threads, t_task, w);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(w->runs[i], 1, "task %zu of %zu on %d threads ran %d times", i, n, (int)threads, w->runs[i]);
    cr_assert_eq(duet__pool_done(&pool), n);
    /* A task sees at most the others finished, never itself. */
    cr_assert(n == 0 || w->max_done_seen < n);
    duet__pool_destroy(&pool);
    free(w);
}

Test(pool, every_task_runs_once, T_TIMEOUT)
{
    t_run(1000, 4);
    t_run(1000, 1);
    t_run(1000, 0); /* one per CPU */
    t_run(3, 16);   /* more threads than tasks */
    t_run(0, 4);    /* nothing to do */
}

Test(pool, destroy_is_safe_on_what_init_did_not_set_up, T_TIMEOUT)
{
    duet__pool_destroy(NULL);
    duet__pool_t pool;
    memset(&pool, 0, sizeof(pool));
    duet__pool_destroy(&pool);
}
