/*
 * Simulator workspace and the policy entry point.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "sim/internal.h"

duet_status_t duet_sim_ws_create(duet_sim_ws_t **ws_p)
{
    duet_sim_ws_t *ws = calloc(1, sizeof(*ws));
    if (ws == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "cannot allocate a simulator workspace");
    duet_status_t st = duet__sim_ws_reserve(ws, 512);
    if (st < 0) {
        duet_sim_ws_destroy(ws);
        return st;
    }
    *ws_p = ws;
    return DUET_OK;
}

void duet_sim_ws_destroy(duet_sim_ws_t *ws)
{
    if (ws == NULL)
        return;
    free(ws->cta_busy);
    free(ws->sm_of);
    free(ws->ring);
    free(ws->heap);
    free(ws->members);
    free(ws->cohorts);
    free(ws->due);
    free(ws->mm_var);
    free(ws->workers);
    free(ws);
}

/* Grow one buffer to hold n elements of `size` bytes. */
static int duet__grow(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, n * size);
    if (q == NULL)
        return -1;
    *p = q;
    return 0;
}

duet_status_t duet__sim_ws_reserve(duet_sim_ws_t *ws, size_t n_ctas)
{
    if (n_ctas <= ws->cap_ctas)
        return DUET_OK;
    size_t n = ws->cap_ctas ? ws->cap_ctas : 64;
    while (n < n_ctas)
        n *= 2;
    /* Cohorts: at most one per CTA, plus the initial placement classes. */
    if (duet__grow((void **)&ws->cta_busy, n, sizeof(double)) || duet__grow((void **)&ws->sm_of, n, sizeof(int32_t)) ||
        duet__grow((void **)&ws->ring, n, sizeof(duet__frozen_ent_t)) ||
        duet__grow((void **)&ws->heap, n, sizeof(duet__frozen_ent_t)) ||
        duet__grow((void **)&ws->members, n, sizeof(int32_t)) ||
        duet__grow((void **)&ws->cohorts, n + 8, sizeof(duet__cohort_t)) ||
        duet__grow((void **)&ws->due, n + 8, sizeof(int32_t)) ||
        duet__grow((void **)&ws->mm_var, n + 8, sizeof(duet__maxmin_var_t)) ||
        duet__grow((void **)&ws->workers, n, sizeof(duet_sim_worker_t)))
        return duet__error(DUET_ERR_NO_MEMORY, "cannot grow the simulator workspace to %zu CTAs", n);
    ws->cap_ctas = n;
    return DUET_OK;
}

const duet_sim_policy_ops_t *duet_sim_policy_find(const char *name)
{
    if (name == NULL)
        return NULL;
    if (strcmp(name, duet_sim_policy_fluid.name) == 0)
        return &duet_sim_policy_fluid;
    if (strcmp(name, duet_sim_policy_frozen.name) == 0)
        return &duet_sim_policy_frozen;
    if (strcmp(name, duet_sim_policy_frozen_reference.name) == 0)
        return &duet_sim_policy_frozen_reference;
    return NULL;
}

int duet_sim_policy_is_frozen(const duet_sim_policy_ops_t *policy)
{
    return policy == &duet_sim_policy_frozen || policy == &duet_sim_policy_frozen_reference;
}

duet_status_t duet_sim_run(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                           const duet_plan_t *plan, duet_trace_t *trace, duet_sim_result_t *res_p)
{
    if (policy == NULL)
        policy = &duet_sim_policy_fluid;
    /* The plan was checked when it was built; whether it fits this profile was not. */
    DUET_CHECK(duet_plan_check_hw(plan, hw));
    return policy->run(ws, hw, plan, trace, res_p);
}

duet_status_t duet_sim_workers(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                               const duet_plan_t *plan, const duet_sim_worker_t **workers_p, int32_t *n_p)
{
    if (policy == NULL)
        policy = &duet_sim_policy_fluid;
    DUET_CHECK(duet_plan_check_hw(plan, hw));
    int32_t n = 0;
    DUET_CHECK(policy->workers(ws, hw, plan, &n));
    *workers_p = ws->workers;
    *n_p = n;
    return DUET_OK;
}
