/*
 * Fits in parallel: the independent fits of a report (calibrate/report.c: the fit on every row and
 * one per cross-validation fold, for duet and for the reference rules) and of a selection
 * (calibrate/select.c: every candidate on every inner fold, then the refits of the picks) run as
 * tasks of a thread pool (base/pool.h).
 *
 * Every task has its own simulator workspace and GSL workspace (inside duet__cal_fit_set) and
 * writes only its own result and the predictions of its own test rows, which no other task of the
 * run shares, so what a run computes does not depend on the number of threads or on the order the
 * tasks finish.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

void duet__cal_sse(const duet__cal_set_t *s, const double *pred, const uint8_t *mask, const duet_cal_params_t *p,
                   double *sse_p, int64_t *n_p)
{
    double sum = 0;
    int64_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const duet_corpus_row_t *r = s->row[i];
        if ((mask != NULL && !mask[i]) || !r->ok || !isfinite(pred[i]) || !(pred[i] > 0))
            continue;
        if (!(p->kinds & (1u << r->kind)) || !(p->modes & (1u << r->cfg.mode)))
            continue;
        double e = log(pred[i] / r->ms);
        sum += e * e;
        n++;
    }
    *sse_p = sum;
    *n_p = n;
}

/* Progress from any worker: one call at a time, with the count of finished fits. */
static void duet__fits_progress(void *arg, const duet_cal_progress_t *pr)
{
    duet__task_t *t = arg;
    duet__fits_t *fits = t->fits;
    duet__pool_lock(&fits->pool);
    duet_cal_progress_t q = *pr;
    q.stages_done = fits->done_before + (int32_t)duet__pool_done(&fits->pool);
    if (fits->fn != NULL)
        fits->fn(fits->arg, &q);
    duet__pool_unlock(&fits->pool);
}

/* Predict the task's test rows with its fitted profile, and score them. */
static duet_status_t duet__task_test(duet__task_t *t, const duet_cal_params_t *p)
{
    const duet__cal_set_t *s = t->s;
    const duet_sim_policy_ops_t *policy = p->policy ? p->policy : &duet_sim_policy_fluid;
    duet_sim_ws_t *ws = NULL;
    double *pred = malloc((s->n ? s->n : 1) * sizeof(*pred));
    uint8_t *seen = calloc((size_t)(s->n_shapes ? s->n_shapes : 1), 1);
    duet_status_t st = pred == NULL || seen == NULL
                           ? duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate for %zu rows", s->n)
                           : duet_sim_ws_create(&ws);
    for (size_t i = 0; st >= 0 && i < s->n; i++) {
        pred[i] = NAN;
        if (!t->test[i])
            continue;
        if (!seen[s->shape[i]]) {
            seen[s->shape[i]] = 1;
            t->out.shapes++;
        }
        if (duet__cal_row_usable(s, i, policy))
            st = duet__cal_predict(ws, policy, &t->fit.hw, s, i, &pred[i]);
        if (t->held != NULL)
            t->held[i] = pred[i];
    }
    if (st >= 0) {
        duet__cal_sse(s, pred, t->test, p, &t->sse, &t->n_sse);
        t->out.rows_train = t->fit.rows;
        t->out.iterations = t->fit.iterations;
        t->out.converged = t->fit.converged;
        t->out.rms_log_train = t->fit.rms_log_end;
        t->out.rms_log_held_out = t->n_sse ? sqrt(t->sse / (double)t->n_sse) : NAN;
    }
    duet_sim_ws_destroy(ws);
    free(seen);
    free(pred);
    return st;
}

static void duet__task_run(duet__pool_t *pool, size_t task, void *arg)
{
    (void)pool;
    duet__fits_t *fits = arg;
    duet__task_t *t = &fits->tasks[fits->first + (int32_t)task];
    duet_cal_params_t p = *t->p;
    p.progress = duet__fits_progress;
    p.progress_arg = t;
    duet_status_t st = duet__cal_fit_set(t->s, t->train, t->base, &p, &t->stage, &t->fit);
    if (st >= 0 && t->test != NULL)
        st = duet__task_test(t, &p);
    t->st = st;
    if (st < 0)
        snprintf(t->err, sizeof(t->err), "%s", duet_last_error());
}

duet_status_t duet__fits_init(duet__fits_t *fits, int32_t cap, duet_cal_progress_fn fn, void *arg)
{
    memset(fits, 0, sizeof(*fits));
    fits->tasks = calloc((size_t)(cap > 0 ? cap : 1), sizeof(*fits->tasks));
    if (fits->tasks == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "calibration: cannot allocate %d fits", (int)cap);
    fits->cap = cap;
    fits->fn = fn;
    fits->arg = arg;
    duet_status_t st = duet__pool_init(&fits->pool);
    if (st < 0) {
        free(fits->tasks);
        fits->tasks = NULL;
    }
    return st;
}

duet__task_t *duet__fits_add(duet__fits_t *fits, const duet__cal_set_t *s, const duet_hw_t *base,
                             const duet_cal_params_t *p, double t0, const char *fmt, ...)
{
    if (fits->n >= fits->cap)
        return NULL;
    duet__task_t *t = &fits->tasks[fits->n];
    memset(t, 0, sizeof(*t));
    t->fits = fits;
    t->s = s;
    t->base = base;
    t->p = p;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->name, sizeof(t->name), fmt, ap);
    va_end(ap);
    t->stage.name = t->name;
    t->stage.index = fits->n;
    t->stage.count = fits->cap;
    t->stage.t0 = t0;
    fits->n++;
    return t;
}

duet_status_t duet__fits_run(duet__fits_t *fits, int32_t threads)
{
    int32_t first = fits->first;
    duet__pool_run(&fits->pool, (size_t)(fits->n - first), threads, duet__task_run, fits);
    fits->done_before += fits->n - first;
    fits->first = fits->n;
    /* The first failing task, in task order, reports (on this thread's error text). */
    for (int32_t i = first; i < fits->n; i++)
        if (fits->tasks[i].st < 0)
            return duet__error(fits->tasks[i].st, "%s", fits->tasks[i].err);
    return DUET_OK;
}

void duet__fits_free(duet__fits_t *fits)
{
    if (fits->tasks == NULL)
        return;
    duet__pool_destroy(&fits->pool);
    for (int32_t i = 0; i < fits->n; i++)
        free(fits->tasks[i].own);
    free(fits->tasks);
    memset(fits, 0, sizeof(*fits));
}
