/*
 * The result of a fit: at the end point, the Jacobian and from it the covariance of the log
 * parameters; each fitted constant's value, standard error (the delta method from log space),
 * whether it sits at a bound, and the parameter it correlates with most. And the sources a
 * fitted profile records.
 */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "calibrate/fit.h"

duet_status_t duet__fit_results(duet__fit_ctx_t *c, const gsl_vector *x, const int32_t *active, int32_t na,
                                gsl_matrix *J, gsl_matrix *covar, duet_cal_fit_t *fit)
{
    /* The result: the Jacobian at the end point and the covariance from it. */
    if (duet__fit_df(x, c, J) != GSL_SUCCESS)
        return c->st < 0 ? c->st : duet__error(DUET_ERR_INTERNAL, "fit: the solution could not be evaluated");
    fit->rms_log_end = duet__fit_rms(c->f0);
    /* Columns whose pivot falls below 1e-10 of the largest are treated as dependent: their
     * variance is reported as undetermined instead of a huge number. */
    GSL_CHECK(gsl_multifit_nlinear_covar(J, 1e-10, covar), "fit: covariance");
    /* Residual variance per degree of freedom scales the covariance (the rows carry no weights). */
    double sigma2 = c->n > (size_t)na ? pow(gsl_blas_dnrm2(c->f0), 2) / (double)(c->n - (size_t)na) : NAN;
    duet__fit_apply(c, x);
    for (int32_t a = 0; a < na; a++) {
        duet_cal_param_result_t *r = &fit->params[active[a]];
        double lv = gsl_vector_get(x, (size_t)a) + c->off[a];
        r->value = duet_hw_get(&c->hw, r->field);
        r->at_bound = lv <= c->lo[a] ? -1 : lv >= c->hi[a] ? 1 : 0;
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
                r->corr_field = c->field[b];
            }
        }
    }
    /* Constants left out keep their start (the coarse search moves nothing it cannot see). */
    for (int32_t j = 0; j < fit->n_params; j++)
        if (!fit->params[j].fitted)
            fit->params[j].value = duet_hw_get(&c->hw, fit->params[j].field);
    fit->hw = c->hw;
    return DUET_OK;
}

/* The corpora and the date as a fit's sources name them; `today` holds the date when `date` is NULL. */
static const char *duet__fit_source_names(const char *const *files, int n, const char *date, char *list, size_t len,
                                          char today[16])
{
    if (date == NULL) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(today, 16, "%Y-%m-%d", &tm);
        date = today;
    }
    list[0] = '\0';
    for (int f = 0; f < n; f++) {
        const char *name = files && files[f] ? files[f] : "corpus";
        size_t used = strlen(list);
        /* Keep the source within its field: name the first files, count the rest. */
        if (used + strlen(name) + 2 >= len - 24) {
            snprintf(list + used, len - used, " and %d more", n - f);
            break;
        }
        snprintf(list + used, len - used, "%s%s", f ? " " : "", name);
    }
    return date;
}

/* A source composed in full, cut to the profile's source field (a long list of files may not fit). */
static void duet__fit_source_cut(char dst[DUET_HW_SOURCE_LEN], const char *full)
{
    size_t len = strlen(full) < DUET_HW_SOURCE_LEN ? strlen(full) : DUET_HW_SOURCE_LEN - 1;
    memcpy(dst, full, len);
    dst[len] = '\0';
}

void duet__cal_fit_set_mode_errors(duet_cal_model_report_t *mr, const char *const *files, int n, const char *date)
{
    static const int field[DUET_MODE_COUNT] = {DUET_HW_F_err_fused, DUET_HW_F_err_concurrent, DUET_HW_F_err_vendor,
                                               DUET_HW_F_err_copy};
    char today[16], list[128];
    date = duet__fit_source_names(files, n, date, list, sizeof(list), today);
    for (int m = 0; m < DUET_MODE_COUNT; m++) {
        double e = mr->mode_err[m];
        if (mr->mode_err_rows[m] <= 0 || !isfinite(e))
            continue; /* no row of the mode held out: the profile keeps its own figure */
        const duet_hw_field_info_t *fi = duet_hw_field_info(field[m]);
        duet_hw_set(&mr->fit.hw, field[m], e < fi->min ? fi->min : e > fi->max ? fi->max : e);
        char full[256];
        snprintf(full, sizeof(full), "fit: k-fold held-out, %s, %s, p%d of %lld op rows", list, date,
                 (int)lround(DUET_CAL_MODE_ERR_Q * 100), (long long)mr->mode_err_rows[m]);
        duet__fit_source_cut(mr->fit.hw.source[field[m]], full);
    }
}

void duet_cal_fit_set_sources(duet_cal_fit_t *fit, const char *const *files, int n, const char *date)
{
    char today[16], list[128];
    date = duet__fit_source_names(files, n, date, list, sizeof(list), today);
    for (int32_t j = 0; j < fit->n_params; j++) {
        const duet_cal_param_result_t *r = &fit->params[j];
        if (!r->fitted)
            continue;
        const duet_hw_field_info_t *fi = duet_hw_field_info(r->field);
        char err[48];
        if (isfinite(r->stderr_abs))
            snprintf(err, sizeof(err), "+-%.3g%s%s", r->stderr_abs, strcmp(fi->unit, "1") ? " " : "",
                     strcmp(fi->unit, "1") ? fi->unit : "");
        else
            snprintf(err, sizeof(err), "+-undetermined");
        char full[256];
        snprintf(full, sizeof(full), "fit: %s, %s, %s", list, date, err);
        duet__fit_source_cut(fit->hw.source[r->field], full);
    }
}
