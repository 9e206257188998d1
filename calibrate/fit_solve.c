/*
 * The fit's solver driver: minimise sum_i log(pred_i / meas_i)^2 over the rows in the objective
 * with GSL's trust-region nonlinear least squares (gsl_multifit_nlinear, Levenberg-Marquardt
 * subproblem), after a coarse coordinate search that also finds the constants no row depends on.
 * GSL's errors become duet status codes through GSL_CHECK at this boundary.
 *
 * Everything a fit needs (the GSL workspace, vectors, the simulator workspace) is allocated once
 * before the first iteration (duet__fit_bufs_alloc); the residual function allocates nothing.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/fit.h"

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
                double xt = duet__fit_clamp(xj + c->off[j] + grid[g] * ln2, c->lo[j], c->hi[j]) - c->off[j];
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
        double rms = duet__fit_rms(w->f);
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
                                      .rms_log = duet__fit_rms(w->f),
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

/* What one fit allocates besides its context's vectors. */
typedef struct duet__fit_bufs {
    size_t *idx;
    uint8_t *seen;
    gsl_vector *x_all, *f, *x;
    gsl_matrix *J, *covar;
    gsl_multifit_nlinear_workspace *w;
} duet__fit_bufs_t;

static void duet__fit_free(duet__fit_ctx_t *c, duet__fit_bufs_t *b)
{
    if (b->w != NULL)
        gsl_multifit_nlinear_free(b->w);
    gsl_matrix_free(b->covar);
    gsl_matrix_free(b->J);
    gsl_vector_free(c->f2);
    gsl_vector_free(c->f1);
    gsl_vector_free(c->f0);
    gsl_vector_free(c->f_cache);
    gsl_vector_free(c->x_step);
    gsl_vector_free(c->x_cache);
    gsl_vector_free(b->f);
    gsl_vector_free(b->x);
    gsl_vector_free(b->x_all);
    duet_sim_ws_destroy(c->ws);
    free(b->seen);
    free(b->idx);
}

/* The rows in the objective, and the shapes they belong to. */
static duet_status_t duet__fit_rows(duet__fit_ctx_t *c, duet__fit_bufs_t *b, const uint8_t *use,
                                    const duet_cal_params_t *p, duet_cal_fit_t *fit)
{
    const duet__cal_set_t *s = c->s;
    b->idx = malloc((s->n ? s->n : 1) * sizeof(*b->idx));
    b->seen = calloc((size_t)(s->n_shapes ? s->n_shapes : 1), 1);
    if (b->idx == NULL || b->seen == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate for %zu rows", s->n);
    c->idx = b->idx;
    c->n = duet__fit_select(s, use, p, b->idx);
    if (c->n == 0)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "fit: no measured row to fit (%zu rows, %lld of them failed; row kinds selected:%s%s%s; "
                           "modes:%s%s%s)",
                           s->n, (long long)s->rows_failed, (p->kinds & 1u) ? " op" : "",
                           (p->kinds & 2u) ? " gemm_alone" : "", (p->kinds & 4u) ? " comm_alone" : "",
                           (p->modes & 1u) ? " fused" : "", (p->modes & 2u) ? " concurrent" : "",
                           (p->modes & 4u) ? " vendor" : "");
    fit->rows = (int64_t)c->n;
    for (size_t k = 0; k < c->n; k++)
        if (!b->seen[s->shape[b->idx[k]]]) {
            b->seen[s->shape[b->idx[k]]] = 1;
            fit->shapes++;
        }
    return DUET_OK;
}

/* The vectors of the start and the coarse search, sized for all parameters (fewer may be used). */
static duet_status_t duet__fit_vectors(duet__fit_ctx_t *c, duet__fit_bufs_t *b)
{
    const int32_t np_all = c->np;
    b->x_all = gsl_vector_alloc((size_t)np_all);
    b->f = gsl_vector_alloc(c->n);
    c->x_cache = gsl_vector_alloc((size_t)np_all);
    c->x_step = gsl_vector_alloc((size_t)np_all);
    c->f_cache = gsl_vector_alloc(c->n);
    c->f0 = gsl_vector_alloc(c->n);
    c->f1 = gsl_vector_alloc(c->n);
    c->f2 = gsl_vector_alloc(c->n);
    if (b->x_all == NULL || b->f == NULL || c->x_cache == NULL || c->x_step == NULL || c->f_cache == NULL ||
        c->f0 == NULL || c->f1 == NULL || c->f2 == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate for %zu rows x %d parameters", c->n, (int)np_all);
    return DUET_OK;
}

/*
 * The start, then the coarse search; a constant no trial point affects is not fitted. The
 * active parameters' indices go to active[0..*na_p).
 */
static duet_status_t duet__fit_start(duet__fit_ctx_t *c, duet__fit_bufs_t *b, const duet_cal_params_t *p,
                                     duet_cal_fit_t *fit, int32_t *active, int32_t *na_p)
{
    const int32_t np_all = c->np;
    gsl_vector_set_all(b->x_all, 1.0);
    if (duet__fit_f(b->x_all, c, b->f) != GSL_SUCCESS)
        return c->st < 0 ? c->st : duet__error(DUET_ERR_INTERNAL, "fit: the start point could not be evaluated");
    fit->rms_log_start = duet__fit_rms(b->f);
    int sensitive[DUET_CAL_MAX_PARAMS] = {0}, moved = 0;
    DUET_CHECK(
        duet__presearch(c, b->x_all, b->f, p->presearch > 0 ? p->presearch : 1, p->presearch > 0, sensitive, &moved));
    int32_t na = 0;
    for (int32_t j = 0; j < np_all; j++)
        if (sensitive[j])
            active[na++] = j;
    if (na == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "fit: none of the %d parameters changes any predicted row (policy %s)",
                           (int)np_all, c->policy->name);
    if (c->n < (size_t)na)
        return duet__error(DUET_ERR_INVALID_ARG, "fit: %zu measured rows cannot determine %d parameters", c->n,
                           (int)na);
    *na_p = na;
    return DUET_OK;
}

/*
 * The solver for the active parameters. The profile keeps the searched values of the constants
 * left out (they changed nothing); GSL sees the active ones.
 */
static duet_status_t duet__fit_solver(duet__fit_ctx_t *c, duet__fit_bufs_t *b, const int32_t *active, int32_t na,
                                      duet_cal_fit_t *fit)
{
    duet__fit_apply(c, b->x_all);
    b->x = gsl_vector_alloc((size_t)na);
    b->J = gsl_matrix_alloc(c->n, (size_t)na);
    b->covar = gsl_matrix_alloc((size_t)na, (size_t)na);
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    b->w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, c->n, (size_t)na);
    if (b->x == NULL || b->J == NULL || b->covar == NULL || b->w == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate the solver (%zu rows x %d parameters)", c->n,
                           (int)na);
    duet__fit_map_compact(c, active, na, b->x_all, b->x, fit);
    c->cached = 0;
    gsl_vector_free(c->x_cache);
    gsl_vector_free(c->x_step);
    c->x_cache = gsl_vector_alloc((size_t)na);
    c->x_step = gsl_vector_alloc((size_t)na);
    if (c->x_cache == NULL || c->x_step == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "fit: cannot allocate for %d parameters", (int)na);
    return DUET_OK;
}

/*
 * Trust region; then one coarse pass around its end point: if that finds a clearly better point
 * (the trust region stopped in a kink or a flat region), start again from there.
 */
static duet_status_t duet__fit_solve(duet__fit_ctx_t *c, duet__fit_bufs_t *b, const duet_cal_params_t *p,
                                     const duet__cal_stage_t *stage, double t_start, duet_cal_fit_t *fit)
{
    gsl_multifit_nlinear_fdf fdf;
    memset(&fdf, 0, sizeof(fdf));
    fdf.f = duet__fit_f;
    fdf.df = duet__fit_df;
    fdf.fvv = NULL;
    fdf.n = c->n;
    fdf.p = (size_t)c->np;
    fdf.params = c;
    int dummy[DUET_CAL_MAX_PARAMS] = {0}, moved = 0;
    for (int restart = 0;; restart++) {
        DUET_CHECK(duet__trust_region(c, b->w, &fdf, p, stage, t_start, b->x, b->f, fit));
        if (p->presearch == 0 || restart == DUET__MAX_RESTARTS || duet__fit_rms(b->f) < 1e-12 ||
            fit->iterations >= p->max_iter)
            break;
        DUET_CHECK(duet__presearch(c, b->x, b->f, 1, 1, dummy, &moved));
        if (!moved)
            break;
    }
    return DUET_OK;
}

duet_status_t duet__cal_fit_set(const duet__cal_set_t *s, const uint8_t *use, const duet_hw_t *base,
                                const duet_cal_params_t *p, const duet__cal_stage_t *stage, duet_cal_fit_t *fit_p)
{
    DUET_CHECK(duet_cal_init());
    DUET_CHECK(duet__fit_check_params(p));
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
    duet__fit_bufs_t b;
    memset(&b, 0, sizeof(b));
    int32_t active[DUET_CAL_MAX_PARAMS], na = 0;

    DUET_CHECK_GOTO(duet__fit_rows(&c, &b, use, p, &fit), st, cleanup);
    DUET_CHECK_GOTO(duet_sim_ws_create(&c.ws), st, cleanup);
    DUET_CHECK_GOTO(duet__fit_map_init(&c, base, p, &fit), st, cleanup);
    DUET_CHECK_GOTO(duet__fit_vectors(&c, &b), st, cleanup);
    DUET_CHECK_GOTO(duet__fit_start(&c, &b, p, &fit, active, &na), st, cleanup);
    DUET_CHECK_GOTO(duet__fit_solver(&c, &b, active, na, &fit), st, cleanup);
    DUET_CHECK_GOTO(duet__fit_solve(&c, &b, p, stage, t_start, &fit), st, cleanup);
    DUET_CHECK_GOTO(duet__fit_results(&c, b.x, active, na, b.J, b.covar, &fit), st, cleanup);
    fit.evaluations = c.evals;
    fit.wall_s = duet__cal_now() - t_start;
    *fit_p = fit;
cleanup:
    duet__fit_free(&c, &b);
    return st;
}
