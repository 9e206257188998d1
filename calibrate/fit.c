/*
 * The fit: minimise sum_i log(pred_i / meas_i)^2 over the measured rows with GSL's trust-region
 * nonlinear least squares (gsl_multifit_nlinear, Levenberg-Marquardt subproblem).
 *
 * Parameters are the logarithms of profile constants: every constant stays positive whatever
 * step the solver takes, and a step means the same relative change for a bandwidth in GB/s as
 * for an overhead in microseconds. Each constant is clamped to its profile field's bounds when
 * the profile is built from the parameters, so the simulator only ever sees a valid profile.
 *
 * The residuals come from the simulator, which has no derivatives: the Jacobian is a finite
 * difference with a fixed step in log space (1e-4 by default: a 0.01 % change of the constant,
 * large against the simulator's rounding, small against the kinks that wave quantisation and
 * work stealing put into the makespan). GSL calls the residual function at a point and then the
 * Jacobian at the same point, so the last residual vector is cached and reused as the base of a
 * forward difference.
 *
 * Everything a fit needs (the GSL workspace, vectors, the simulator workspace) is allocated once
 * before the first iteration; the residual function itself allocates nothing.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

/*
 * Why these constants by default (docs/calibration.md has the long form):
 * - gemm_eff_fp16/bf16: the sustained matrix rate sets every GEMM tile's K loop;
 * - tile_overhead_us: the fixed part of a GEMM tile, which decides small-K and skinny shapes;
 * - dequeue_gemm_us, dequeue_comm_us: the queue atomics, charged per tile and per CTA;
 * - link_gbs, link_half_inflight_kib: the link's peak and how many bytes in flight reach half of
 *   it, i.e. at which CTA count comm saturates, which is what the split trades off;
 * - cta_push_gbs: one CTA's remote store rate, the slope of comm time against comm CTAs;
 * - hbm_gbs: what GEMM and comm tiles share when both run;
 * - launch_us: the floor of every measured time, which dominates the small shapes;
 * - comm_sm_share: the slow-down of a GEMM tile beside comm CTAs in concurrent mode;
 * - and, for corpora with K-split rows (duet_cal_params_set_default_fit), splitk_sm_gbs: one SM's
 *   rate for the split's partial sums.
 * Constants no row depends on (e.g. gemm_eff_fp16 on a bf16 corpus) are left out of the fit
 * automatically and reported as not fitted.
 */
const char duet_cal_default_fit_names[] =
    "gemm_eff_fp16,gemm_eff_bf16,tile_overhead_us,dequeue_gemm_us,dequeue_comm_us,"
    "link_gbs,link_half_inflight_kib,cta_push_gbs,hbm_gbs,launch_us,comm_sm_share";

duet_cal_params_t duet_cal_default_params(void)
{
    duet_cal_params_t p;
    memset(&p, 0, sizeof(p));
    p.policy = &duet_sim_policy_fluid;
    p.kinds = (1u << DUET_ROW_OP) | (1u << DUET_ROW_GEMM_ALONE) | (1u << DUET_ROW_COMM_ALONE);
    p.modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT);
    p.folds = 5;
    p.max_iter = 100;
    p.xtol = 1e-8;
    p.gtol = 1e-10;
    p.fd_step = 1e-4;
    p.central = 0;
    p.presearch = 2;
    if (duet_cal_params_set_fit(&p, duet_cal_default_fit_names) < 0)
        p.n_fit = 0; /* cannot happen: the default names are profile fields (a test checks) */
    return p;
}

duet_status_t duet_cal_params_set_default_fit(duet_cal_params_t *p, const duet_corpus_t *corpora, int n)
{
    /* splitk_sm_gbs prices a K split's partial sums: only rows with a split depend on it. Listed
     * without them it would be searched for nothing and reported as not fitted. */
    int split = 0;
    for (int f = 0; f < n && !split; f++)
        for (size_t i = 0; i < corpora[f].n && !split; i++)
            split = corpora[f].rows[i].ok && corpora[f].rows[i].cfg.split_k > 1;
    char list[sizeof(duet_cal_default_fit_names) + 32];
    snprintf(list, sizeof(list), "%s%s", duet_cal_default_fit_names, split ? ",splitk_sm_gbs" : "");
    return duet_cal_params_set_fit(p, list);
}

duet_status_t duet_cal_params_set_fit(duet_cal_params_t *p, const char *list)
{
    int32_t fields[DUET_CAL_MAX_PARAMS];
    int32_t n = 0;
    const char *s = list;
    if (list == NULL || *list == '\0')
        return duet__error(DUET_ERR_INVALID_ARG, "parameter list: empty");
    while (*s) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        char name[64];
        if (len == 0 || len >= sizeof(name))
            return duet__error(DUET_ERR_INVALID_ARG, "parameter list '%s': empty or overlong name", list);
        memcpy(name, s, len);
        name[len] = '\0';
        int32_t f = -1;
        for (int k = 0; k < DUET_HW_NFIELDS; k++)
            if (strcmp(duet_hw_field_info(k)->key, name) == 0)
                f = k;
        if (f < 0)
            return duet__error(DUET_ERR_INVALID_ARG,
                               "parameter '%s' is not a profile constant (see 'duet hw show h200' for the names)",
                               name);
        if (duet_hw_field_info(f)->is_int)
            return duet__error(DUET_ERR_INVALID_ARG,
                               "parameter '%s' is a count (%s), not a continuous constant; it cannot be fitted", name,
                               duet_hw_field_info(f)->unit);
        for (int32_t k = 0; k < n; k++)
            if (fields[k] == f)
                return duet__error(DUET_ERR_INVALID_ARG, "parameter '%s' is listed twice", name);
        if (n == DUET_CAL_MAX_PARAMS)
            return duet__error(DUET_ERR_INVALID_ARG, "more than %d parameters", DUET_CAL_MAX_PARAMS);
        fields[n++] = f;
        s += len;
        if (*s == ',')
            s++;
        if (end != NULL && *s == '\0')
            return duet__error(DUET_ERR_INVALID_ARG, "parameter list '%s': trailing comma", list);
    }
    memcpy(p->fit, fields, (size_t)n * sizeof(fields[0]));
    p->n_fit = n;
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The residual function and its Jacobian                                                      */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet__fit_ctx {
    const duet__cal_set_t *s;
    const size_t *idx; /* rows in the objective */
    size_t n;
    const duet_sim_policy_ops_t *policy;
    duet_hw_t hw; /* the profile being fitted, rebuilt from x at every evaluation */
    duet_sim_ws_t *ws;
    int32_t np; /* parameters GSL sees (the fitted ones) */
    int32_t field[DUET_CAL_MAX_PARAMS];
    double lo[DUET_CAL_MAX_PARAMS], hi[DUET_CAL_MAX_PARAMS]; /* log-space bounds */
    double off[DUET_CAL_MAX_PARAMS];                         /* x = log(value) - off: every parameter starts at x = 1 */
    double h;                                                /* finite-difference step, log space */
    int central;
    gsl_vector *x_cache, *f_cache; /* the last evaluated point and its residuals */
    int cached;
    gsl_vector *x_step, *f0, *f1, *f2; /* Jacobian scratch */
    duet_status_t st;                  /* the first duet error seen inside a GSL callback */
    int64_t evals;
} duet__fit_ctx_t;

static double duet__clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/*
 * Set the profile's fitted constants from log parameters, within their bounds. exp(log(max)) can
 * round above max, so the value is clamped again in linear space against the field's bounds.
 */
static void duet__apply(duet__fit_ctx_t *c, const gsl_vector *x)
{
    for (int32_t j = 0; j < c->np; j++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(c->field[j]);
        double v = exp(duet__clamp(gsl_vector_get(x, (size_t)j) + c->off[j], c->lo[j], c->hi[j]));
        duet_hw_set(&c->hw, c->field[j], duet__clamp(v, fi->min, fi->max));
    }
}

static int duet__fit_f(const gsl_vector *x, void *arg, gsl_vector *f)
{
    duet__fit_ctx_t *c = arg;
    if (c->st < 0)
        return GSL_EFAILED;
    duet__apply(c, x);
    for (size_t k = 0; k < c->n; k++) {
        size_t i = c->idx[k];
        double ms;
        duet_status_t st = duet__cal_predict(c->ws, c->policy, &c->hw, c->s, i, &ms);
        if (st < 0) {
            c->st = st; /* recorded by duet__cal_predict; GSL only learns that the call failed */
            return GSL_EFAILED;
        }
        gsl_vector_set(f, k, log(ms / c->s->row[i]->ms));
    }
    c->evals++;
    gsl_vector_memcpy(c->x_cache, x);
    gsl_vector_memcpy(c->f_cache, f);
    c->cached = 1;
    return GSL_SUCCESS;
}

static int duet__same_vector(const gsl_vector *a, const gsl_vector *b)
{
    for (size_t j = 0; j < a->size; j++)
        if (gsl_vector_get(a, j) != gsl_vector_get(b, j))
            return 0;
    return 1;
}

/* Finite-difference Jacobian with a fixed step in log space. */
static int duet__fit_df(const gsl_vector *x, void *arg, gsl_matrix *J)
{
    duet__fit_ctx_t *c = arg;
    int gs;
    if (c->cached && duet__same_vector(x, c->x_cache))
        gsl_vector_memcpy(c->f0, c->f_cache);
    else if ((gs = duet__fit_f(x, c, c->f0)) != GSL_SUCCESS)
        return gs;
    for (int32_t j = 0; j < c->np; j++) {
        gsl_vector_memcpy(c->x_step, x);
        double xj = gsl_vector_get(x, (size_t)j);
        gsl_vector_set(c->x_step, (size_t)j, xj + c->h);
        if ((gs = duet__fit_f(c->x_step, c, c->f1)) != GSL_SUCCESS)
            return gs;
        if (c->central) {
            gsl_vector_set(c->x_step, (size_t)j, xj - c->h);
            if ((gs = duet__fit_f(c->x_step, c, c->f2)) != GSL_SUCCESS)
                return gs;
        }
        for (size_t k = 0; k < c->n; k++) {
            double d = c->central ? (gsl_vector_get(c->f1, k) - gsl_vector_get(c->f2, k)) / (2 * c->h)
                                  : (gsl_vector_get(c->f1, k) - gsl_vector_get(c->f0, k)) / c->h;
            gsl_matrix_set(J, k, (size_t)j, d);
        }
    }
    return GSL_SUCCESS;
}

static double duet__rms(const gsl_vector *f)
{
    return gsl_blas_dnrm2(f) / sqrt((double)f->size);
}

/* ------------------------------------------------------------------------------------------ */
/* One fit                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Rows of the set in the objective: usable by the policy, of a selected kind and mode, in `use`. */
static size_t duet__select(const duet__cal_set_t *s, const uint8_t *use, const duet_cal_params_t *p, size_t *idx)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        const duet_corpus_row_t *r = s->row[i];
        if ((use != NULL && !use[i]) || !duet__cal_row_usable(s, i, p->policy))
            continue;
        if (!(p->kinds & (1u << r->kind)) || !(p->modes & (1u << r->cfg.mode)))
            continue;
        idx[n++] = i;
    }
    return n;
}

static duet_status_t duet__check_params(const duet_cal_params_t *p)
{
    if (p->n_fit < 1 || p->n_fit > DUET_CAL_MAX_PARAMS)
        return duet__error(DUET_ERR_INVALID_ARG, "fit: between 1 and %d parameters (got %d)", DUET_CAL_MAX_PARAMS,
                           (int)p->n_fit);
    for (int32_t j = 0; j < p->n_fit; j++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(p->fit[j]);
        if (fi == NULL || fi->is_int)
            return duet__error(DUET_ERR_INVALID_ARG, "fit: parameter %d is not a continuous profile constant",
                               (int)p->fit[j]);
    }
    if (p->max_iter < 1 || !(p->xtol > 0) || !(p->gtol > 0) || !(p->fd_step > 0) || p->fd_step > 0.1)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "fit: need max_iter >= 1, xtol > 0, gtol > 0 and 0 < fd_step <= 0.1 (log space)");
    if (p->presearch < 0 || p->presearch > 20)
        return duet__error(DUET_ERR_INVALID_ARG, "fit: presearch rounds must be in [0, 20]");
    if (p->threads < 0 || p->threads > 4096)
        return duet__error(DUET_ERR_INVALID_ARG, "fit: threads must be in [0, 4096] (0: one per CPU)");
    if (p->kinds == 0 || p->modes == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "fit: no row kind or no mode selected");
    return DUET_OK;
}

/*
 * Coarse coordinate search from x (np parameters of the context): each parameter in turn is
 * tried at 2^(+-k/2) times its value, k = 1..4 (a quarter to four times), and the best point is
 * kept; `rounds` passes. The cost model has kinks (a GEMM K step costs the max of its matrix and
 * L2 times; a comm tile is capped by its CTA or by the link), and a constant can sit where the
 * rows do not depend on it locally at all, e.g. a GEMM efficiency so high that every tile is
 * L2-bound, or an overhead driven so small that it no longer matters: a gradient method never
 * moves it from there. The search does. `f` holds the residuals at x on entry and on return;
 * `sensitive[j]` is set when some trial point changed some residual. With `move` 0 the search
 * only probes (nothing moves).
 */
static duet_status_t duet__presearch(duet__fit_ctx_t *c, gsl_vector *x, gsl_vector *f, int rounds, int move,
                                     int *sensitive, int *moved_p)
{
    static const double grid[] = {-2.0, -1.5, -1.0, -0.5, 0.5, 1.0, 1.5, 2.0};
    const double ln2 = log(2.0);
    double cost = pow(gsl_blas_dnrm2(f), 2);
    int moved_any = 0;
    for (int round = 0; round < rounds; round++) {
        int moved = 0;
        for (int32_t j = 0; j < c->np; j++) {
            double xj = gsl_vector_get(x, (size_t)j), best_x = xj;
            for (size_t g = 0; g < sizeof(grid) / sizeof(grid[0]); g++) {
                double xt = duet__clamp(xj + c->off[j] + grid[g] * ln2, c->lo[j], c->hi[j]) - c->off[j];
                if (xt == xj)
                    continue;
                gsl_vector_set(x, (size_t)j, xt);
                if (duet__fit_f(x, c, c->f1) != GSL_SUCCESS)
                    return c->st < 0 ? c->st : duet__error(DUET_ERR_INTERNAL, "fit: a trial point failed");
                for (size_t k = 0; k < c->n && !sensitive[j]; k++)
                    sensitive[j] = gsl_vector_get(c->f1, k) != gsl_vector_get(f, k);
                double ct = pow(gsl_blas_dnrm2(c->f1), 2);
                /* Move only for a clear gain, so constants the rows barely see stay put. */
                if (move && ct < cost * (1.0 - 1e-9)) {
                    cost = ct;
                    best_x = xt;
                    gsl_vector_memcpy(c->f2, c->f1);
                }
            }
            gsl_vector_set(x, (size_t)j, best_x);
            if (best_x != xj) {
                gsl_vector_memcpy(f, c->f2); /* the next constant is probed around the point kept */
                moved = 1;
            }
        }
        moved_any |= moved;
        if (!moved)
            break;
    }
    *moved_p = moved_any;
    return DUET_OK;
}

/* The cost is stationary when it fell by less than this fraction over this many iterations. */
#define DUET__STATIONARY_ITERS 10
#define DUET__STATIONARY_REL 1e-9

/* Trust-region iterations from x until a stop; x and f receive the end point. */
static duet_status_t duet__trust_region(duet__fit_ctx_t *c, gsl_multifit_nlinear_workspace *w,
                                        gsl_multifit_nlinear_fdf *fdf, const duet_cal_params_t *p,
                                        const duet__cal_stage_t *stage, double t_start, gsl_vector *x, gsl_vector *f,
                                        duet_cal_fit_t *fit)
{
    int gs = gsl_multifit_nlinear_init(x, fdf, w);
    if (c->st < 0)
        return c->st;
    GSL_CHECK(gs, "fit: initialising the trust-region solver");
    int noprog = 0;
    /* Cost of the last DUET__STATIONARY_ITERS iterations (a ring): the trust region can crawl
     * for many iterations along a valley where constants trade off (e.g. tile_overhead_us
     * against dequeue_gemm_us) while the cost no longer changes. */
    double hist[DUET__STATIONARY_ITERS];
    int it0 = fit->iterations;
    fit->converged = 0;
    for (;;) {
        double rms = duet__rms(w->f);
        int k = fit->iterations - it0;
        double cost = rms * rms;
        if (k >= DUET__STATIONARY_ITERS) {
            double before = hist[k % DUET__STATIONARY_ITERS];
            if (before - cost <= DUET__STATIONARY_REL * before) {
                snprintf(fit->stop_reason, sizeof(fit->stop_reason),
                         "cost stationary (relative decrease below %.0e over %d iterations)", DUET__STATIONARY_REL,
                         DUET__STATIONARY_ITERS);
                fit->converged = 1;
                break;
            }
        }
        hist[k % DUET__STATIONARY_ITERS] = cost;
        if (rms < 1e-12) {
            snprintf(fit->stop_reason, sizeof(fit->stop_reason), "exact fit (rms log error %.1e)", rms);
            fit->converged = 1;
            break;
        }
        if (fit->iterations >= p->max_iter) {
            snprintf(fit->stop_reason, sizeof(fit->stop_reason), "iteration limit (%d)", (int)p->max_iter);
            break;
        }
        gs = gsl_multifit_nlinear_iterate(w);
        if (c->st < 0)
            return c->st;
        fit->iterations++;
        if (gs == GSL_ENOPROG) {
            /* No step inside the trust region lowered the cost. GSL resets the damping after
             * this, so one more attempt is worth making; two in a row means the cost is at the
             * floor the simulator's kinks allow. */
            if (++noprog >= 2) {
                snprintf(fit->stop_reason, sizeof(fit->stop_reason),
                         "no further progress (no step lowers the cost; gradient test not met)");
                break;
            }
        } else {
            noprog = 0;
            GSL_CHECK(gs, "fit: trust-region iteration");
        }
        if (p->progress != NULL) {
            duet_cal_progress_t pr = {.stage = stage ? stage->name : "fit",
                                      .stage_index = stage ? stage->index : 0,
                                      .n_stages = stage ? stage->count : 1,
                                      .stages_done = 0,
                                      .iteration = fit->iterations,
                                      .max_iter = p->max_iter,
                                      .rms_log = duet__rms(w->f),
                                      .elapsed_s = duet__cal_now() - (stage ? stage->t0 : t_start)};
            p->progress(p->progress_arg, &pr);
        }
        int info = 0;
        gs = gsl_multifit_nlinear_test(p->xtol, p->gtol, 0.0, &info, w);
        if (gs == GSL_SUCCESS) {
            if (info == 1)
                snprintf(fit->stop_reason, sizeof(fit->stop_reason), "small step (xtol %.0e)", p->xtol);
            else
                snprintf(fit->stop_reason, sizeof(fit->stop_reason), "small gradient (gtol %.0e)", p->gtol);
            fit->converged = 1;
            break;
        }
        if (gs != GSL_CONTINUE)
            GSL_CHECK(gs, "fit: convergence test");
    }
    gsl_vector_memcpy(x, w->x);
    gsl_vector_memcpy(f, w->f);
    return DUET_OK;
}

/* A coarse search may restart the trust region this many times from a better point. */
#define DUET__MAX_RESTARTS 4

duet_status_t duet__cal_fit_set(const duet__cal_set_t *s, const uint8_t *use, const duet_hw_t *base,
                                const duet_cal_params_t *p, const duet__cal_stage_t *stage, duet_cal_fit_t *fit_p)
{
    DUET_CHECK(duet_cal_init());
    DUET_CHECK(duet__check_params(p));
    const double t_start = duet__cal_now();
    duet_status_t st = DUET_OK;
    duet_cal_fit_t fit;
    memset(&fit, 0, sizeof(fit));
    fit.hw = *base;
    fit.policy = p->policy ? p->policy->name : duet_sim_policy_fluid.name;

    duet__fit_ctx_t c;
    memset(&c, 0, sizeof(c));
    c.s = s;
    c.policy = p->policy ? p->policy : &duet_sim_policy_fluid;
    c.hw = *base;
    c.h = p->fd_step;
    c.central = p->central;
    size_t *idx = malloc((s->n ? s->n : 1) * sizeof(*idx));
    uint8_t *seen = calloc((size_t)(s->n_shapes ? s->n_shapes : 1), 1);
    gsl_multifit_nlinear_workspace *w = NULL;
    gsl_matrix *J = NULL, *covar = NULL;
    gsl_vector *x_all = NULL, *x = NULL, *f = NULL;
    if (idx == NULL || seen == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate for %zu rows", s->n);
        goto cleanup;
    }
    c.idx = idx;
    c.n = duet__select(s, use, p, idx);
    if (c.n == 0) {
        st = duet__error(DUET_ERR_INVALID_ARG,
                         "fit: no measured row to fit (%zu rows, %lld of them failed; row kinds selected:%s%s%s; "
                         "modes:%s%s)",
                         s->n, (long long)s->rows_failed, (p->kinds & 1u) ? " op" : "",
                         (p->kinds & 2u) ? " gemm_alone" : "", (p->kinds & 4u) ? " comm_alone" : "",
                         (p->modes & 1u) ? " fused" : "", (p->modes & 2u) ? " concurrent" : "");
        goto cleanup;
    }
    fit.rows = (int64_t)c.n;
    for (size_t k = 0; k < c.n; k++)
        if (!seen[s->shape[idx[k]]]) {
            seen[s->shape[idx[k]]] = 1;
            fit.shapes++;
        }
    DUET_CHECK_GOTO(duet_sim_ws_create(&c.ws), st, cleanup);

    /* Every requested constant as a log parameter with its bounds. x = log(value) - off puts
     * every start at x = 1: GSL's first trust region is then about a 30 % change of each
     * constant, and its step test (relative to |x|) means the same for every constant. */
    const int32_t np_all = p->n_fit;
    for (int32_t j = 0; j < np_all; j++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(p->fit[j]);
        double v0 = duet_hw_get(base, p->fit[j]);
        if (!(v0 > 0)) {
            st = duet__error(DUET_ERR_INVALID_ARG,
                             "fit: %s starts at %g %s; it is fitted as a logarithm and needs a positive start value "
                             "in the base profile",
                             fi->key, v0, fi->unit);
            goto cleanup;
        }
        /* A lower bound of 0 becomes a millionth of the start: the logarithm needs a floor. */
        double lo = fi->min > 0 ? fi->min : v0 * 1e-6;
        fit.params[j].field = p->fit[j];
        fit.params[j].start = v0;
        fit.params[j].value = v0;
        fit.params[j].stderr_abs = NAN;
        fit.params[j].stderr_rel = NAN;
        fit.params[j].corr_field = -1;
        fit.params[j].corr = NAN;
        c.field[j] = p->fit[j];
        c.lo[j] = log(lo);
        c.hi[j] = log(fi->max);
        c.off[j] = log(v0) - 1.0;
    }
    fit.n_params = np_all;

    /* Everything the fit needs, allocated once (sized for all parameters; fewer may be used). */
    c.np = np_all;
    x_all = gsl_vector_alloc((size_t)np_all);
    f = gsl_vector_alloc(c.n);
    c.x_cache = gsl_vector_alloc((size_t)np_all);
    c.x_step = gsl_vector_alloc((size_t)np_all);
    c.f_cache = gsl_vector_alloc(c.n);
    c.f0 = gsl_vector_alloc(c.n);
    c.f1 = gsl_vector_alloc(c.n);
    c.f2 = gsl_vector_alloc(c.n);
    if (x_all == NULL || f == NULL || c.x_cache == NULL || c.x_step == NULL || c.f_cache == NULL || c.f0 == NULL ||
        c.f1 == NULL || c.f2 == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate for %zu rows x %d parameters", c.n, (int)np_all);
        goto cleanup;
    }

    /* The start, then the coarse search; a constant no trial point affects is not fitted. */
    gsl_vector_set_all(x_all, 1.0);
    if (duet__fit_f(x_all, &c, f) != GSL_SUCCESS) {
        st = c.st < 0 ? c.st : duet__error(DUET_ERR_INTERNAL, "fit: the start point could not be evaluated");
        goto cleanup;
    }
    fit.rms_log_start = duet__rms(f);
    int sensitive[DUET_CAL_MAX_PARAMS] = {0}, moved = 0;
    DUET_CHECK_GOTO(
        duet__presearch(&c, x_all, f, p->presearch > 0 ? p->presearch : 1, p->presearch > 0, sensitive, &moved), st,
        cleanup);
    int32_t active[DUET_CAL_MAX_PARAMS], na = 0;
    for (int32_t j = 0; j < np_all; j++)
        if (sensitive[j])
            active[na++] = j;
    if (na == 0) {
        st = duet__error(DUET_ERR_INVALID_ARG, "fit: none of the %d parameters changes any predicted row (policy %s)",
                         (int)np_all, c.policy->name);
        goto cleanup;
    }
    if (c.n < (size_t)na) {
        st = duet__error(DUET_ERR_INVALID_ARG, "fit: %zu measured rows cannot determine %d parameters", c.n, (int)na);
        goto cleanup;
    }
    /* The profile keeps the searched values of the constants left out (they changed nothing);
     * GSL sees the active ones, compacted in place (active[] is increasing, so a <= active[a]). */
    duet__apply(&c, x_all);
    x = gsl_vector_alloc((size_t)na);
    J = gsl_matrix_alloc(c.n, (size_t)na);
    covar = gsl_matrix_alloc((size_t)na, (size_t)na);
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, c.n, (size_t)na);
    if (x == NULL || J == NULL || covar == NULL || w == NULL) {
        st =
            duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate the solver (%zu rows x %d parameters)", c.n, (int)na);
        goto cleanup;
    }
    for (int32_t a = 0; a < na; a++) {
        int32_t j = active[a];
        c.field[a] = c.field[j];
        c.lo[a] = c.lo[j];
        c.hi[a] = c.hi[j];
        c.off[a] = c.off[j];
        gsl_vector_set(x, (size_t)a, gsl_vector_get(x_all, (size_t)j));
        fit.params[j].fitted = 1;
    }
    c.np = na;
    c.cached = 0;
    gsl_vector_free(c.x_cache);
    gsl_vector_free(c.x_step);
    c.x_cache = gsl_vector_alloc((size_t)na);
    c.x_step = gsl_vector_alloc((size_t)na);
    if (c.x_cache == NULL || c.x_step == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate for %d parameters", (int)na);
        goto cleanup;
    }

    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof(fdf));
    fdf.f = duet__fit_f;
    fdf.df = duet__fit_df;
    fdf.fvv = NULL;
    fdf.n = c.n;
    fdf.p = (size_t)na;
    fdf.params = &c;

    /* Trust region; then one coarse pass around its end point: if that finds a clearly better
     * point (the trust region stopped in a kink or a flat region), start again from there. */
    int dummy[DUET_CAL_MAX_PARAMS] = {0};
    for (int restart = 0;; restart++) {
        DUET_CHECK_GOTO(duet__trust_region(&c, w, &fdf, p, stage, t_start, x, f, &fit), st, cleanup);
        if (p->presearch == 0 || restart == DUET__MAX_RESTARTS || duet__rms(f) < 1e-12 || fit.iterations >= p->max_iter)
            break;
        DUET_CHECK_GOTO(duet__presearch(&c, x, f, 1, 1, dummy, &moved), st, cleanup);
        if (!moved)
            break;
    }

    /* The result: the Jacobian at the end point and the covariance from it. */
    if (duet__fit_df(x, &c, J) != GSL_SUCCESS) {
        st = c.st < 0 ? c.st : duet__error(DUET_ERR_INTERNAL, "fit: the solution could not be evaluated");
        goto cleanup;
    }
    fit.rms_log_end = duet__rms(c.f0);
    /* Columns whose pivot falls below 1e-10 of the largest are treated as dependent: their
     * variance is reported as undetermined instead of a huge number. */
    GSL_CHECK_GOTO(gsl_multifit_nlinear_covar(J, 1e-10, covar), "fit: covariance", st, cleanup);
    /* Residual variance per degree of freedom scales the covariance (the rows carry no weights). */
    double sigma2 = c.n > (size_t)na ? pow(gsl_blas_dnrm2(c.f0), 2) / (double)(c.n - (size_t)na) : NAN;
    duet__apply(&c, x);
    for (int32_t a = 0; a < na; a++) {
        duet_cal_param_result_t *r = &fit.params[active[a]];
        double lv = gsl_vector_get(x, (size_t)a) + c.off[a];
        r->value = duet_hw_get(&c.hw, r->field);
        r->at_bound = lv <= c.lo[a] ? -1 : lv >= c.hi[a] ? 1 : 0;
        double caa = gsl_matrix_get(covar, (size_t)a, (size_t)a);
        if (caa > 0 && isfinite(sigma2) && !r->at_bound) {
            r->stderr_rel = sqrt(sigma2 * caa);
            /* Delta method: d(value) = value * d(log value). */
            r->stderr_abs = r->value * r->stderr_rel;
        }
        double best = 0;
        for (int32_t b = 0; b < na; b++) {
            double cbb = gsl_matrix_get(covar, (size_t)b, (size_t)b);
            if (b == a || !(caa > 0) || !(cbb > 0))
                continue;
            double rho = gsl_matrix_get(covar, (size_t)a, (size_t)b) / sqrt(caa * cbb);
            if (fabs(rho) > best) {
                best = fabs(rho);
                r->corr = rho;
                r->corr_field = c.field[b];
            }
        }
    }
    /* Constants left out keep their start (the coarse search moves nothing it cannot see). */
    for (int32_t j = 0; j < np_all; j++)
        if (!fit.params[j].fitted)
            fit.params[j].value = duet_hw_get(&c.hw, fit.params[j].field);
    fit.hw = c.hw;
    fit.evaluations = c.evals;
    fit.wall_s = duet__cal_now() - t_start;
    *fit_p = fit;

cleanup:
    if (w != NULL)
        gsl_multifit_nlinear_free(w);
    gsl_matrix_free(covar);
    gsl_matrix_free(J);
    gsl_vector_free(c.f2);
    gsl_vector_free(c.f1);
    gsl_vector_free(c.f0);
    gsl_vector_free(c.f_cache);
    gsl_vector_free(c.x_step);
    gsl_vector_free(c.x_cache);
    gsl_vector_free(f);
    gsl_vector_free(x);
    gsl_vector_free(x_all);
    duet_sim_ws_destroy(c.ws);
    free(seen);
    free(idx);
    return st;
}
