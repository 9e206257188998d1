/*
 * Evidence without a GPU: replay the tuner on a measurement corpus. For every shape, the tuner
 * core runs as it would on the device, except that the benchmark reads the corpus's median
 * instead of timing a kernel, and the model ranks the configurations the corpus measured (a
 * pick outside the corpus could not be scored).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/internal.h"

/* The benchmark of the replay: the corpus rows of one shape. */
typedef struct duet__tune_eval_bench {
    const duet_corpus_t *corpus;
    const size_t *rows; /* indices of the shape's op rows */
    size_t n;
} duet__tune_eval_bench_t;

static duet_status_t duet__tune_eval_bench(void *user, const duet_config_t *cfg, double *med, double *lo, double *hi)
{
    const duet__tune_eval_bench_t *b = user;
    for (size_t i = 0; i < b->n; i++) {
        const duet_corpus_row_t *r = &b->corpus->rows[b->rows[i]];
        if (!duet_config_same(&r->cfg, cfg))
            continue;
        if (!r->ok)
            return duet__error(DUET_ERR_BACKEND, "failed in the corpus: %s", r->error);
        *med = r->ms;
        *lo = r->min_ms;
        *hi = r->max_ms;
        return DUET_OK;
    }
    return duet__error(DUET_ERR_NOT_FOUND, "not measured in the corpus");
}

/* Warnings of the replay ("not measured in the corpus") are expected; keep them off stderr. */
static void duet__tune_eval_quiet(void *user, const char *msg)
{
    (void)user;
    (void)msg;
}

/* Evaluate one shape (rows[] of corpus ci). @return DUET_OK and *added 1 when it had a measured row. */
static duet_status_t duet__tune_eval_shape(const duet_corpus_t *c, size_t ci, const size_t *rows, size_t n_rows,
                                           const duet_hw_t *hw, const duet_tune_params_t *base, duet_tune_result_t *res,
                                           duet_config_t *space, duet_tune_eval_shape_t *out, int *added)
{
    *added = 0;
    memset(out, 0, sizeof(*out));
    out->corpus = ci;
    out->wl = c->rows[rows[0]].wl;
    out->n_configs = (int32_t)n_rows;
    out->oracle_ms = INFINITY;
    for (size_t i = 0; i < n_rows; i++) {
        const duet_corpus_row_t *r = &c->rows[rows[i]];
        space[i] = r->cfg;
        if (r->ok && r->ms < out->oracle_ms) {
            out->oracle_ms = r->ms;
            out->oracle_cfg = r->cfg;
        }
    }
    if (!isfinite(out->oracle_ms))
        return DUET_OK; /* nothing measured: no oracle to compare with */

    duet_tune_params_t p = *base;
    p.space = space;
    p.n_space = n_rows;
    p.use_cache = 0;
    if (p.warn == NULL)
        p.warn = duet__tune_eval_quiet;
    /* The corpus fixes the comm tile and swizzle; the candidates must use the same to be found. */
    const duet_config_t *first = &c->rows[rows[0]].cfg;
    if (p.cm == 0)
        p.cm = first->cm;
    if (p.cn == 0)
        p.cn = first->cn;
    if (p.group_m == 0)
        p.group_m = first->group_m;

    duet__tune_eval_bench_t bench = {c, rows, n_rows};
    DUET_CHECK(duet_tune_run(&out->wl, hw, &p, duet__tune_eval_bench, NULL, &bench, res));
    out->n_cands = res->n_cands;
    for (int32_t i = 0; i < res->n_cands; i++)
        out->n_cands_measured += res->cands[i].ok;
    out->tuned_cfg = res->cfg;
    /* The pick's time as the corpus holds it (ms; the tuner's result holds us). */
    double lo, hi;
    out->tuned_ms = NAN;
    if (res->fell_back || duet__tune_eval_bench(&bench, &res->cfg, &out->tuned_ms, &lo, &hi) < 0)
        out->tuned_ms = NAN;
    out->tuned_source = res->winner >= 0 ? res->cands[res->winner].source : DUET_TUNE_SRC_DEFAULT;
    out->default_cfg = duet_tune_static_default(hw, &p);
    out->default_ms = NAN;
    if (duet__tune_eval_bench(&bench, &out->default_cfg, &out->default_ms, &lo, &hi) < 0)
        out->default_ms = NAN;
    *added = 1;
    return DUET_OK;
}

duet_status_t duet_tune_evaluate(const duet_corpus_t *corpora, size_t n_corpora, const duet_hw_t *hw,
                                 const duet_tune_params_t *params, duet_tune_eval_t *ev_p)
{
    duet_tune_params_t base;
    DUET_CHECK(duet_tune_params_resolve(params, &base));
    for (size_t ci = 0; ci < n_corpora; ci++)
        if (corpora[ci].sms != hw->n_sms)
            return duet__error(DUET_ERR_INVALID_ARG,
                               "evaluate: corpus %zu was measured on %d SMs but profile %s has %d", ci,
                               (int)corpora[ci].sms, hw->name, hw->n_sms);

    duet_status_t st = DUET_OK;
    duet_tune_eval_t ev;
    memset(&ev, 0, sizeof(ev));
    size_t total = 0;
    for (size_t ci = 0; ci < n_corpora; ci++)
        total += corpora[ci].n;
    size_t *rows = malloc((total ? total : 1) * sizeof(*rows));
    unsigned char *done = NULL;
    duet_config_t *space = malloc((total ? total : 1) * sizeof(*space));
    duet_tune_result_t *res = malloc(sizeof(*res));
    double *ratios = NULL;
    ev.shapes = malloc((total ? total : 1) * sizeof(*ev.shapes));
    if (rows == NULL || space == NULL || res == NULL || ev.shapes == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "evaluate: cannot allocate for %zu rows", total);
        goto out;
    }
    for (size_t ci = 0; ci < n_corpora; ci++) {
        const duet_corpus_t *c = &corpora[ci];
        free(done);
        done = calloc(c->n ? c->n : 1, 1);
        if (done == NULL) {
            st = duet__error(DUET_ERR_NO_MEMORY, "evaluate: cannot allocate for %zu rows", c->n);
            goto out;
        }
        /* Shapes in the corpus's order: the op rows of one workload. */
        for (size_t i = 0; i < c->n; i++) {
            if (done[i] || c->rows[i].kind != DUET_ROW_OP)
                continue;
            size_t n = 0;
            for (size_t j = i; j < c->n; j++)
                if (!done[j] && c->rows[j].kind == DUET_ROW_OP && duet_workload_same(&c->rows[j].wl, &c->rows[i].wl)) {
                    rows[n++] = j;
                    done[j] = 1;
                }
            int added = 0;
            DUET_CHECK_GOTO(duet__tune_eval_shape(c, ci, rows, n, hw, &base, res, space, &ev.shapes[ev.n], &added), st,
                            out);
            ev.n += (size_t)added;
        }
    }

    /* Summary. */
    ratios = malloc((ev.n ? ev.n : 1) * sizeof(*ratios));
    if (ratios == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "evaluate: cannot allocate the summary");
        goto out;
    }
    size_t m = 0;
    ev.max_tuned_over_oracle = ev.max_default_over_oracle = NAN;
    for (size_t i = 0; i < ev.n; i++) {
        const duet_tune_eval_shape_t *s = &ev.shapes[i];
        if (!isfinite(s->tuned_ms))
            continue;
        double r = s->tuned_ms / s->oracle_ms;
        ratios[m++] = r;
        if (!(r <= ev.max_tuned_over_oracle))
            ev.max_tuned_over_oracle = r;
        ev.n_within_2pct += s->tuned_ms <= 1.02 * s->oracle_ms;
        ev.n_exact += s->tuned_ms == s->oracle_ms;
        if (isfinite(s->default_ms))
            ev.n_tuned_slower_than_default += s->tuned_ms > s->default_ms;
    }
    ev.n_tuned = m;
    ev.mean_tuned_over_oracle = duet__mean(ratios, m); /* before the median sorts ratios */
    ev.median_tuned_over_oracle = duet__median(ratios, m);
    m = 0;
    for (size_t i = 0; i < ev.n; i++) {
        const duet_tune_eval_shape_t *s = &ev.shapes[i];
        if (!isfinite(s->default_ms))
            continue;
        double r = s->default_ms / s->oracle_ms;
        ratios[m++] = r;
        if (!(r <= ev.max_default_over_oracle))
            ev.max_default_over_oracle = r;
    }
    ev.n_with_default = m;
    ev.median_default_over_oracle = duet__median(ratios, m);
    *ev_p = ev;
    ev.shapes = NULL;
out:
    free(ratios);
    free(ev.shapes);
    free(res);
    free(space);
    free(done);
    free(rows);
    return st;
}

void duet_tune_eval_free(duet_tune_eval_t *ev)
{
    if (ev == NULL)
        return;
    free(ev->shapes);
    ev->shapes = NULL;
    ev->n = 0;
}
