/*
 * Corpus rows as the calibration sees them: flattened over several corpora, grouped by shape,
 * assigned to cross-validation folds, and predicted with the simulator.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

duet_workload_t duet_cal_row_workload(const duet_corpus_row_t *row)
{
    return duet_corpus_row_part(row);
}

duet_status_t duet_cal_row_predict(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                                   const duet_corpus_row_t *row, double *ms_p)
{
    if (policy == NULL)
        policy = &duet_sim_policy_fluid;
    duet_workload_t wl = duet_cal_row_workload(row);
    duet_plan_t plan;
    duet_sim_result_t r;
    DUET_CHECK(duet_plan_build(&wl, &row->cfg, duet_plan_critical_rank(&wl), &plan));
    DUET_CHECK(duet_plan_vendor_kernel(hw, &row->vendor, &plan));
    DUET_CHECK(duet_sim_run(ws, policy, hw, &plan, NULL, &r));
    if (!(r.makespan_s > 0) || !isfinite(r.makespan_s))
        return duet__error(DUET_ERR_INTERNAL, "the simulator predicted %g s for a %s row", r.makespan_s,
                           duet_row_kind_name(row->kind));
    *ms_p = r.makespan_s * 1e3;
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Sets                                                                                        */
/* ------------------------------------------------------------------------------------------ */

void duet__cal_set_free(duet__cal_set_t *s)
{
    if (s == NULL)
        return;
    free(s->shape_order);
    free(s->fold);
    free(s->plan);
    free(s->shape);
    free(s->line);
    free(s->file);
    free(s->row);
    memset(s, 0, sizeof(*s));
}

const char *duet__cal_set_name(const duet__cal_set_t *s, int32_t f, char *buf, size_t n)
{
    if (s->names != NULL && s->names[f] != NULL)
        snprintf(buf, n, "%s", s->names[f]);
    else if (s->corpora == NULL)
        snprintf(buf, n, "rows");
    else
        snprintf(buf, n, "corpus #%d", (int)f + 1);
    return buf;
}

/* Shapes sort by (collective, world, dtype, m, n, k, mc, nc, root): a stable, file-order-free key. */
static int duet__wl_cmp(const duet_workload_t *a, const duet_workload_t *b)
{
    const int64_t ka[9] = {a->coll, a->world, a->dtype, a->m, a->n, a->k, a->mc, a->nc, a->root};
    const int64_t kb[9] = {b->coll, b->world, b->dtype, b->m, b->n, b->k, b->mc, b->nc, b->root};
    for (int i = 0; i < 9; i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

/* qsort has no context argument: the shape table being sorted is passed through this
 * thread-local pointer, set only for the duration of the qsort() call in duet__cal_set_group(),
 * so sets can be built on several threads at once. */
static _Thread_local const duet_workload_t *const *duet__sort_wl_tls;

static int duet__shape_cmp(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    int c = duet__wl_cmp(duet__sort_wl_tls[a], duet__sort_wl_tls[b]);
    return c != 0 ? c : (a > b) - (a < b);
}

/* Group the rows by workload and build the plans of the measured ones. */
static duet_status_t duet__cal_set_group(duet__cal_set_t *s)
{
    duet_status_t st = DUET_OK;
    const duet_workload_t **first = NULL; /* workload of each shape (its first row's) */
    size_t cap = 0;
    s->n_shapes = 0;
    for (size_t i = 0; i < s->n; i++) {
        const duet_workload_t *wl = &s->row[i]->wl;
        int32_t id = -1;
        /* Rows of a shape are usually contiguous: try the previous row's shape first. */
        if (i > 0 && duet_workload_same(wl, first[s->shape[i - 1]]))
            id = s->shape[i - 1];
        for (int32_t k = 0; id < 0 && k < s->n_shapes; k++)
            if (duet_workload_same(wl, first[k]))
                id = k;
        if (id < 0) {
            if ((size_t)s->n_shapes == cap) {
                cap = cap ? cap * 2 : 64;
                const duet_workload_t **grown = realloc(first, cap * sizeof(*first));
                if (grown == NULL) {
                    st = duet__error(DUET_ERR_NO_MEMORY, "calibration: cannot group %zu rows by shape", s->n);
                    goto cleanup;
                }
                first = grown;
            }
            id = s->n_shapes++;
            first[id] = wl;
        }
        s->shape[i] = id;
    }
    s->fold = malloc((size_t)(s->n_shapes ? s->n_shapes : 1) * sizeof(*s->fold));
    s->shape_order = malloc((size_t)(s->n_shapes ? s->n_shapes : 1) * sizeof(*s->shape_order));
    if (s->fold == NULL || s->shape_order == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "calibration: cannot allocate %d shapes", (int)s->n_shapes);
        goto cleanup;
    }
    for (int32_t k = 0; k < s->n_shapes; k++) {
        s->fold[k] = -1;
        s->shape_order[k] = k;
    }
    if (s->n_shapes > 1) {
        duet__sort_wl_tls = first;
        qsort(s->shape_order, (size_t)s->n_shapes, sizeof(*s->shape_order), duet__shape_cmp);
        duet__sort_wl_tls = NULL;
    }
cleanup:
    free(first);
    return st;
}

/* Allocate the per-row arrays and fill in everything but the rows themselves. */
static duet_status_t duet__cal_set_alloc(duet__cal_set_t *s, size_t n)
{
    memset(s, 0, sizeof(*s));
    size_t m = n ? n : 1;
    s->n = n;
    s->row = malloc(m * sizeof(*s->row));
    s->file = malloc(m * sizeof(*s->file));
    s->line = malloc(m * sizeof(*s->line));
    s->shape = malloc(m * sizeof(*s->shape));
    s->plan = malloc(m * sizeof(*s->plan));
    if (s->row == NULL || s->file == NULL || s->line == NULL || s->shape == NULL || s->plan == NULL) {
        duet__cal_set_free(s);
        return duet__error(DUET_ERR_NO_MEMORY, "calibration: cannot allocate %zu rows", n);
    }
    return DUET_OK;
}

/* Group, and build the plan of every measured row. */
static duet_status_t duet__cal_set_finish(duet__cal_set_t *s)
{
    DUET_CHECK(duet__cal_set_group(s));
    for (size_t i = 0; i < s->n; i++) {
        const duet_corpus_row_t *r = s->row[i];
        if (!r->ok) {
            s->rows_failed++;
            continue;
        }
        duet_workload_t wl = duet_cal_row_workload(r);
        if (duet_plan_build(&wl, &r->cfg, duet_plan_critical_rank(&wl), &s->plan[i]) < 0) {
            char name[256];
            return duet__error(DUET_ERR_INVALID_ARG, "%s: rows[%lld]: %s",
                               duet__cal_set_name(s, s->file[i], name, sizeof(name)), (long long)s->line[i],
                               duet_last_error());
        }
    }
    return DUET_OK;
}

duet_status_t duet__cal_set_from_corpora(const duet_corpus_t *corpora, const char *const *names, int n,
                                         duet__cal_set_t *s)
{
    if (n < 1 || corpora == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "calibration: no corpus given");
    size_t total = 0;
    for (int f = 0; f < n; f++)
        total += corpora[f].n;
    DUET_CHECK(duet__cal_set_alloc(s, total));
    s->corpora = corpora;
    s->names = names;
    s->n_corpora = n;
    size_t i = 0;
    for (int f = 0; f < n; f++)
        for (size_t j = 0; j < corpora[f].n; j++, i++) {
            s->row[i] = &corpora[f].rows[j];
            s->file[i] = f;
            s->line[i] = (int64_t)j;
        }
    duet_status_t st = duet__cal_set_finish(s);
    if (st < 0)
        duet__cal_set_free(s);
    return st;
}

duet_status_t duet__cal_set_from_array(const duet_corpus_row_t *rows, size_t n, duet__cal_set_t *s)
{
    DUET_CHECK(duet__cal_set_alloc(s, n));
    for (size_t i = 0; i < n; i++) {
        s->row[i] = &rows[i];
        s->file[i] = 0;
        s->line[i] = (int64_t)i;
    }
    duet_status_t st = duet__cal_set_finish(s);
    if (st < 0)
        duet__cal_set_free(s);
    return st;
}

duet_status_t duet__cal_folds_of(const duet__cal_set_t *s, const uint8_t *in, int32_t k, int32_t *fold)
{
    int32_t n_in = 0;
    for (int32_t sh = 0; sh < s->n_shapes; sh++)
        n_in += in == NULL || in[sh];
    if (k > n_in)
        return duet__error(DUET_ERR_INVALID_ARG, "cross-validation: %d folds need at least %d shapes, but %s %d",
                           (int)k, (int)k, in == NULL ? "the corpora have" : "the training shapes are", (int)n_in);
    /* Round robin over the sorted shapes: balanced folds, and the same folds whatever the order
     * of the rows or of the corpus files. */
    int32_t i = 0;
    for (int32_t j = 0; j < s->n_shapes; j++) {
        int32_t sh = s->shape_order[j];
        fold[sh] = in == NULL || in[sh] ? i++ % k : -1;
    }
    return DUET_OK;
}

duet_status_t duet__cal_set_folds(duet__cal_set_t *s, int32_t k)
{
    if (k < 2) {
        for (int32_t i = 0; i < s->n_shapes; i++)
            s->fold[i] = 0;
        return DUET_OK;
    }
    return duet__cal_folds_of(s, NULL, k, s->fold);
}

int duet__cal_row_usable(const duet__cal_set_t *s, size_t i, const duet_sim_policy_ops_t *policy)
{
    const duet_corpus_row_t *r = s->row[i];
    if (!r->ok)
        return 0;
    /* The vendor's collective alone (NCCL, RCCL): the model prices vendor mode's collective as
     * duet's comm kernel, which these rows do not measure, so no constant may be fitted to them. */
    if (r->kind == DUET_ROW_COMM_ALONE && r->cfg.mode == DUET_MODE_VENDOR)
        return 0;
    /* The reference design modelled fused mode only, and no K split. */
    if (duet_sim_policy_is_frozen(policy) && (r->cfg.mode != DUET_MODE_FUSED || r->cfg.split_k > 1))
        return 0;
    return 1;
}

duet_status_t duet__cal_set_check(const duet__cal_set_t *s, const duet_hw_t *hw, const duet_sim_policy_ops_t *policy)
{
    char name[256];
    for (int f = 0; s->corpora != NULL && f < s->n_corpora; f++) {
        const duet_corpus_t *c = &s->corpora[f];
        /* Configurations are CTA counts of one device: they mean nothing on another one. */
        if (c->sms != hw->n_sms)
            return duet__error(DUET_ERR_INVALID_ARG,
                               "%s: measured on %s with %d SMs, but profile %s has %d SMs (fit a profile of the same "
                               "device, e.g. --hw %s)",
                               duet__cal_set_name(s, f, name, sizeof(name)), c->device[0] ? c->device : "a device",
                               (int)c->sms, hw->name, hw->n_sms,
                               c->sms == 304   ? "mi300x"
                               : c->sms == 256 ? "mi350x"
                               : c->sms == 132 ? "h200"
                                               : "FILE");
    }
    for (size_t i = 0; i < s->n; i++) {
        if (!duet__cal_row_usable(s, i, policy))
            continue;
        const duet_plan_t *p = &s->plan[i];
        if (duet_config_validate(&p->cfg, &p->wl, hw) < 0)
            return duet__error(DUET_ERR_INVALID_ARG, "%s: rows[%lld] (%s): profile %s cannot run it: %s",
                               duet__cal_set_name(s, s->file[i], name, sizeof(name)), (long long)s->line[i],
                               duet_row_kind_name(s->row[i]->kind), hw->name, duet_last_error());
    }
    return DUET_OK;
}

duet_status_t duet__cal_predict(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                                const duet__cal_set_t *s, size_t i, double *ms_p)
{
    duet_sim_result_t r;
    /* A vendor row's GEMM is the library's kernel: the recorded one, or the one the model
     * expects the library to choose under this profile (it moves with the fitted constants). */
    const duet_plan_t *plan = &s->plan[i];
    duet_plan_t vplan;
    duet_status_t st = DUET_OK;
    if (plan->cfg.mode == DUET_MODE_VENDOR) {
        vplan = *plan;
        st = duet_plan_vendor_kernel(hw, &s->row[i]->vendor, &vplan);
        plan = &vplan;
    }
    if (st >= 0)
        st = duet_sim_run(ws, policy, hw, plan, NULL, &r);
    if (st < 0) {
        char name[256];
        return duet__error(st, "%s: rows[%lld]: %s", duet__cal_set_name(s, s->file[i], name, sizeof(name)),
                           (long long)s->line[i], duet_last_error());
    }
    if (!(r.makespan_s > 0) || !isfinite(r.makespan_s))
        return duet__error(DUET_ERR_INTERNAL, "rows[%lld]: the simulator predicted %g s", (long long)s->line[i],
                           r.makespan_s);
    *ms_p = r.makespan_s * 1e3;
    return DUET_OK;
}

duet_status_t duet__cal_predict_all(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                                    const duet__cal_set_t *s, double *pred)
{
    for (size_t i = 0; i < s->n; i++) {
        pred[i] = NAN;
        if (duet__cal_row_usable(s, i, policy))
            DUET_CHECK(duet__cal_predict(ws, policy, hw, s, i, &pred[i]));
    }
    return DUET_OK;
}
