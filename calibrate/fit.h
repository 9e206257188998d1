/*
 * The fit's pieces (not installed), split as GSL's multifit driver is: the parameter mapping
 * (fit_params.c: profile constants <-> log parameters), the residual function and its Jacobian
 * (fit_residual.c), the solver driver (fit_solve.c: coarse search, trust region, restarts), and
 * the reporting of a result (fit_report.c: standard errors, correlations, sources). GSL appears
 * in this header only among calibrate/'s.
 */
#ifndef DUET_CALIBRATE_FIT_H
#define DUET_CALIBRATE_FIT_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "calibrate/internal.h"

/*
 * One fit's state: the rows in the objective, the profile being fitted, the mapping of its fitted
 * constants to the parameters GSL sees, and the scratch of the residual function. Everything is
 * allocated before the first iteration; the residual function allocates nothing.
 */
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

/* fit_params.c: the parameter mapping. */

/** The fit's parameters are usable (counts, tolerances, threads, row kinds and modes). */
duet_status_t duet__fit_check_params(const duet_cal_params_t *p);
/** v within [lo, hi]. */
double duet__fit_clamp(double v, double lo, double hi);
/**
 * Map every constant of p->fit to a log parameter starting at x = 1, with its log-space bounds,
 * and start fit->params; c->np becomes p->n_fit. DUET_ERR_INVALID_ARG for a start value that is
 * not positive.
 */
duet_status_t duet__fit_map_init(duet__fit_ctx_t *c, const duet_hw_t *base, const duet_cal_params_t *p,
                                 duet_cal_fit_t *fit);
/** Set the profile's fitted constants from the log parameters x, within their bounds. */
void duet__fit_apply(duet__fit_ctx_t *c, const gsl_vector *x);
/**
 * Keep the `na` active parameters (indices in `active`, increasing) of the mapping, in place, and
 * their values of x_all in x; mark them fitted in fit->params.
 */
void duet__fit_map_compact(duet__fit_ctx_t *c, const int32_t *active, int32_t na, const gsl_vector *x_all,
                           gsl_vector *x, duet_cal_fit_t *fit);

/* fit_residual.c: the residual function and its Jacobian. */

/** Rows of the set in the objective (usable by the policy, of a selected kind and mode, in `use`) into idx. */
size_t duet__fit_select(const duet__cal_set_t *s, const uint8_t *use, const duet_cal_params_t *p, size_t *idx);
/** Residuals log(pred / meas) at x (GSL's f callback; arg is the context). */
int duet__fit_f(const gsl_vector *x, void *arg, gsl_vector *f);
/** Forward (or central) difference Jacobian at x with the context's step (GSL's df callback). */
int duet__fit_df(const gsl_vector *x, void *arg, gsl_matrix *J);
/** Root-mean-square of the residuals. */
double duet__fit_rms(const gsl_vector *f);

/* fit_report.c: the result. */

/**
 * The result at the end point x of the `na` active parameters: the Jacobian there (into J, its
 * residuals into c->f0), the covariance (into covar), each fitted constant's value, standard
 * error, bound and strongest correlation, and the values of the constants left out.
 */
duet_status_t duet__fit_results(duet__fit_ctx_t *c, const gsl_vector *x, const int32_t *active, int32_t na,
                                gsl_matrix *J, gsl_matrix *covar, duet_cal_fit_t *fit);

#endif /* DUET_CALIBRATE_FIT_H */
