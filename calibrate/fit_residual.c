/*
 * The fit's residual function and its Jacobian: the objective is sum_i log(pred_i / meas_i)^2
 * over the rows in the objective, each pred_i a simulation of the row on the profile the
 * parameters make.
 *
 * The residuals come from the simulator, which has no derivatives: the Jacobian is a finite
 * difference with a fixed step in log space (1e-4 by default: a 0.01 % change of the constant,
 * large against the simulator's rounding, small against the kinks that wave quantisation and
 * work stealing put into the makespan). GSL calls the residual function at a point and then the
 * Jacobian at the same point, so the last residual vector is cached and reused as the base of a
 * forward difference. Nothing here allocates.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <math.h>

#include "calibrate/fit.h"

/* Rows of the set in the objective: usable by the policy, of a selected kind and mode, in `use`. */
size_t duet__fit_select(const duet__cal_set_t *s, const uint8_t *use, const duet_cal_params_t *p, size_t *idx)
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

int duet__fit_f(const gsl_vector *x, void *arg, gsl_vector *f)
{
    duet__fit_ctx_t *c = arg;
    if (c->st < 0)
        return GSL_EFAILED;
    duet__fit_apply(c, x);
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
int duet__fit_df(const gsl_vector *x, void *arg, gsl_matrix *J)
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

double duet__fit_rms(const gsl_vector *f)
{
    return gsl_blas_dnrm2(f) / sqrt((double)f->size);
}
