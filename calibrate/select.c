/*
 * Choices made on data, scored honestly: nested cross-validation of the choice among candidate
 * models (which constants to fit, from which start values).
 *
 * Scoring every candidate by cross-validation and keeping the best is itself a fit (of a discrete
 * parameter), and the best of several CV scores is biased low: the data that chose also scores.
 * So the whole procedure, choice included, runs inside an outer cross-validation: in each outer
 * fold an inner cross-validation on the outer training shapes chooses, the chosen candidate is
 * refitted on those shapes, and the outer test shapes, which took no part in the choice, score it.
 * Folds are by shape throughout, with the rule of the fit's cross-validation (calibrate/rows.c).
 *
 * Every fit is a task of calibrate/fits.c: first all the inner fits (every candidate on every inner
 * fold, for each outer fold and for all the data), which are independent; then the refits of the
 * picks they lead to.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

int64_t duet_cal_select_fit_count(int32_t outer, int32_t inner, int32_t n_candidates)
{
    if (outer < 1 || inner < 1 || n_candidates < 1)
        return -1;
    return (int64_t)outer * ((int64_t)inner * n_candidates + 1) + (int64_t)n_candidates * inner + 1;
}

/*
 * A selection's working state. "Group" g < outer is outer fold g's training shapes; g == outer is
 * every shape (the choice on all the data).
 */
typedef struct duet__sel {
    duet__cal_set_t s;
    duet_hw_t hw[DUET_CAL_MAX_CANDIDATES];        /* each candidate's start profile */
    duet_cal_params_t p[DUET_CAL_MAX_CANDIDATES]; /* each candidate's fit */
    int32_t *inner_fold;                          /* (outer + 1) x shapes: a group's inner fold, -1: not in it */
    uint8_t *masks;                               /* train and test rows of every inner fold, then of the refits */
    double *nested;                               /* each row predicted by its outer fold's refitted pick */
    duet__fits_t fits;
} duet__sel_t;

static void duet__sel_free(duet__sel_t *w)
{
    if (w == NULL)
        return;
    duet__fits_free(&w->fits);
    free(w->nested);
    free(w->masks);
    free(w->inner_fold);
    duet__cal_set_free(&w->s);
    free(w);
}

duet_status_t duet_cal_select_check(int32_t outer, int32_t inner, int32_t n_candidates)
{
    if (n_candidates < 1 || n_candidates > DUET_CAL_MAX_CANDIDATES)
        return duet__error(DUET_ERR_INVALID_ARG, "select: 1 to %d candidates (got %d)", DUET_CAL_MAX_CANDIDATES,
                           (int)n_candidates);
    if (outer < 2 || outer > DUET_CAL_MAX_FOLDS || inner < 2 || inner > DUET_CAL_MAX_FOLDS)
        return duet__error(DUET_ERR_INVALID_ARG, "select: outer and inner folds between 2 and %d (got %d and %d)",
                           DUET_CAL_MAX_FOLDS, (int)outer, (int)inner);
    int64_t fits = duet_cal_select_fit_count(outer, inner, n_candidates);
    if (fits > DUET_CAL_SELECT_MAX_FITS)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "select: %lld fits (%d outer x (%d inner x %d candidates + 1) + %d x %d + 1) is more than "
                           "the %d allowed; use fewer folds or candidates",
                           (long long)fits, (int)outer, (int)inner, (int)n_candidates, (int)n_candidates, (int)inner,
                           DUET_CAL_SELECT_MAX_FITS);
    return DUET_OK;
}

/* The candidates' start profiles and fits, each checked against the rows. */
static duet_status_t duet__sel_candidates(duet__sel_t *w, const duet_hw_t *base, const duet_cal_candidates_t *cands,
                                          const duet_cal_params_t *p)
{
    const duet_sim_policy_ops_t *policy = p->policy ? p->policy : &duet_sim_policy_fluid;
    for (int32_t c = 0; c < cands->n; c++) {
        const duet_cal_candidate_t *cand = &cands->c[c];
        duet_cal_candidate_hw(cand, base, &w->hw[c]);
        if (duet_hw_validate(&w->hw[c]) < 0 || duet__cal_set_check(&w->s, &w->hw[c], policy) < 0) {
            char why[DUET__ERRBUF_LEN];
            snprintf(why, sizeof(why), "%s", duet_last_error());
            return duet__error(DUET_ERR_INVALID_ARG, "candidate '%s': %s", cand->name, why);
        }
        w->p[c] = *p;
        w->p[c].n_fit = cand->n_fit;
        memcpy(w->p[c].fit, cand->fit, sizeof(cand->fit));
        w->p[c].folds = 0;
    }
    return DUET_OK;
}

/*
 * The folds: outer folds in s.fold; per group the inner folds of its shapes; and the masks of every
 * inner fold (train: the group's other inner folds; test: this one) and of every outer refit.
 */
static duet_status_t duet__sel_folds(duet__sel_t *w, int32_t outer, int32_t inner)
{
    duet__cal_set_t *s = &w->s;
    const size_t n = s->n ? s->n : 1, ns = (size_t)(s->n_shapes ? s->n_shapes : 1);
    DUET_CHECK(duet__cal_set_folds(s, outer));
    w->inner_fold = malloc((size_t)(outer + 1) * ns * sizeof(*w->inner_fold));
    w->masks = malloc((size_t)((outer + 1) * inner + outer) * 2 * n);
    w->nested = malloc(n * sizeof(*w->nested));
    uint8_t *in = malloc(ns);
    if (w->inner_fold == NULL || w->masks == NULL || w->nested == NULL || in == NULL) {
        free(in);
        return duet__error(DUET_ERR_NO_MEMORY, "select: cannot allocate the folds of %zu rows", s->n);
    }
    duet_status_t st = DUET_OK;
    for (int32_t g = 0; g <= outer && st >= 0; g++) {
        for (int32_t sh = 0; sh < s->n_shapes; sh++)
            in[sh] = s->fold[sh] != g;
        int32_t *f = &w->inner_fold[(size_t)g * ns];
        st = duet__cal_folds_of(s, g < outer ? in : NULL, inner, f);
        if (st < 0) {
            char why[DUET__ERRBUF_LEN];
            snprintf(why, sizeof(why), "%s", duet_last_error());
            st = duet__error(st, "select: outer fold %d/%d: %s", (int)g + 1, (int)outer, why);
        }
        for (int32_t j = 0; st >= 0 && j < inner; j++) {
            uint8_t *train = w->masks + (size_t)(g * inner + j) * 2 * n, *test = train + n;
            for (size_t i = 0; i < s->n; i++) {
                int32_t fi = f[s->shape[i]];
                train[i] = fi >= 0 && fi != j;
                test[i] = fi == j;
            }
        }
    }
    free(in);
    DUET_CHECK(st);
    for (int32_t o = 0; o < outer; o++) {
        uint8_t *train = w->masks + (size_t)((outer + 1) * inner + o) * 2 * n, *test = train + n;
        for (size_t i = 0; i < s->n; i++) {
            train[i] = s->fold[s->shape[i]] != o;
            test[i] = !train[i];
        }
    }
    for (size_t i = 0; i < s->n; i++)
        w->nested[i] = NAN;
    return DUET_OK;
}

/* Run the fits added since the last run; a failure is named by its fit (candidate and fold). */
static duet_status_t duet__sel_run(duet__sel_t *w, int32_t threads)
{
    int32_t first = w->fits.first;
    if (duet__fits_run(&w->fits, threads) >= 0)
        return DUET_OK;
    for (int32_t i = first; i < w->fits.n; i++)
        if (w->fits.tasks[i].st < 0)
            return duet__error(w->fits.tasks[i].st, "select: %s: %s", w->fits.tasks[i].name, w->fits.tasks[i].err);
    return DUET_ERR_INTERNAL;
}

/* The label of group g in progress lines and errors. */
static const char *duet__sel_group(char *buf, size_t n, int32_t g, int32_t outer)
{
    if (g < outer)
        snprintf(buf, n, "outer fold %d/%d", (int)g + 1, (int)outer);
    else
        snprintf(buf, n, "all data");
    return buf;
}

/* Each candidate's inner CV rms log error in group g (from its inner fits, pooled), and the pick. */
static int32_t duet__sel_scores(const duet__sel_t *w, int32_t g, int32_t n_cand, int32_t inner, double *rms)
{
    int32_t pick = -1;
    for (int32_t c = 0; c < n_cand; c++) {
        double sse = 0;
        int64_t nn = 0;
        for (int32_t j = 0; j < inner; j++) {
            const duet__task_t *t = &w->fits.tasks[(g * n_cand + c) * inner + j];
            sse += t->sse;
            nn += t->n_sse;
        }
        rms[c] = nn > 0 ? sqrt(sse / (double)nn) : NAN;
        /* Lowest score; a tie goes to the candidate listed first. */
        if (isfinite(rms[c]) && (pick < 0 || rms[c] < rms[pick]))
            pick = c;
    }
    return pick;
}

duet_status_t duet_cal_select_run(const duet_corpus_t *corpora, const char *const *names, int n_corpora,
                                  const duet_hw_t *base, const duet_cal_candidates_t *cands, const duet_cal_params_t *p,
                                  int32_t outer, int32_t inner, duet_cal_selection_t *sel_p)
{
    DUET_CHECK(duet_cal_init());
    if (cands == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "select: no candidates");
    DUET_CHECK(duet_cal_select_check(outer, inner, cands->n));
    const double t0 = duet__cal_now();
    const int32_t nc = cands->n;
    duet_cal_selection_t *sel = calloc(1, sizeof(*sel));
    duet__sel_t *w = calloc(1, sizeof(*w));
    if (sel == NULL || w == NULL) {
        free(sel);
        free(w);
        return duet__error(DUET_ERR_NO_MEMORY, "select: cannot allocate");
    }
    duet_status_t st = duet__cal_set_from_corpora(corpora, names, n_corpora, &w->s);
    if (st < 0) {
        free(sel);
        free(w);
        return st;
    }
    const size_t n = w->s.n ? w->s.n : 1;
    DUET_CHECK_GOTO(duet__cal_set_check_measured(&w->s), st, cleanup);
    DUET_CHECK_GOTO(duet__sel_candidates(w, base, cands, p), st, cleanup);
    DUET_CHECK_GOTO(duet__sel_folds(w, outer, inner), st, cleanup);
    const int64_t total = duet_cal_select_fit_count(outer, inner, nc);
    DUET_CHECK_GOTO(duet__fits_init(&w->fits, (int32_t)total, p->progress, p->progress_arg), st, cleanup);

    /* Every candidate on every inner fold of every group: task (g x nc + c) x inner + j. */
    char gl[48];
    for (int32_t g = 0; g <= outer; g++)
        for (int32_t c = 0; c < nc; c++)
            for (int32_t j = 0; j < inner; j++) {
                duet__task_t *t =
                    duet__fits_add(&w->fits, &w->s, &w->hw[c], &w->p[c], t0, "%s: %s, inner fold %d/%d",
                                   cands->c[c].name, duet__sel_group(gl, sizeof(gl), g, outer), (int)j + 1, (int)inner);
                if (t == NULL) {
                    st = duet__error(DUET_ERR_INTERNAL, "select: more fits than counted");
                    goto cleanup;
                }
                t->train = w->masks + (size_t)(g * inner + j) * 2 * n;
                t->test = t->train + n;
            }
    DUET_CHECK_GOTO(duet__sel_run(w, p->threads), st, cleanup);
    int32_t pick[DUET_CAL_MAX_FOLDS + 1];
    for (int32_t g = 0; g <= outer; g++) {
        pick[g] = duet__sel_scores(w, g, nc, inner, g < outer ? sel->fold[g].inner_rms : sel->all_rms);
        if (pick[g] < 0) {
            st = duet__error(DUET_ERR_INVALID_ARG, "select: %s: no candidate predicts any inner held-out row",
                             duet__sel_group(gl, sizeof(gl), g, outer));
            goto cleanup;
        }
    }

    /* The picks: refitted on each outer fold's training shapes, predicting its test shapes; and
     * the pick on all the data, fitted on every row. */
    const int32_t refit0 = w->fits.n;
    for (int32_t o = 0; o <= outer; o++) {
        const int32_t c = pick[o];
        duet__task_t *t =
            o < outer
                ? duet__fits_add(&w->fits, &w->s, &w->hw[c], &w->p[c], t0, "%s: outer fold %d/%d, refit",
                                 cands->c[c].name, (int)o + 1, (int)outer)
                : duet__fits_add(&w->fits, &w->s, &w->hw[c], &w->p[c], t0, "%s: fit on every row", cands->c[c].name);
        if (t == NULL) {
            st = duet__error(DUET_ERR_INTERNAL, "select: more fits than counted");
            goto cleanup;
        }
        if (o < outer) {
            t->train = w->masks + (size_t)((outer + 1) * inner + o) * 2 * n;
            t->test = t->train + n;
            t->held = w->nested;
        }
    }
    DUET_CHECK_GOTO(duet__sel_run(w, p->threads), st, cleanup);

    sel->outer = outer;
    sel->inner = inner;
    sel->n_candidates = nc;
    sel->fits = w->fits.n;
    for (int32_t i = 0; i < w->fits.n; i++)
        sel->fits_unconverged += !w->fits.tasks[i].fit.converged;
    for (int32_t o = 0; o < outer; o++) {
        sel->fold[o].picked = pick[o];
        sel->fold[o].refit = w->fits.tasks[refit0 + o].out;
        sel->fold[o].shapes = sel->fold[o].refit.shapes;
    }
    DUET_CHECK_GOTO(duet__cal_metrics(&w->s, w->nested, NULL, &sel->nested), st, cleanup);
    double sse;
    int64_t nn;
    duet__cal_sse(&w->s, w->nested, NULL, p, &sse, &nn);
    sel->nested_rms_log = nn > 0 ? sqrt(sse / (double)nn) : NAN;
    sel->picked = pick[outer];
    sel->fit = w->fits.tasks[refit0 + outer].fit;
    sel->rows_total = (int64_t)w->s.n;
    sel->rows_failed = w->s.rows_failed;
    sel->shapes = w->s.n_shapes;
    sel->wall_s = duet__cal_now() - t0;
    *sel_p = *sel;
cleanup:
    duet__sel_free(w);
    free(sel);
    return st;
}
