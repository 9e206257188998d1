/*
 * The fit's parameter mapping: which profile constants are fitted (the defaults, a list of
 * names), the checks of a fit's parameters, and the map between the constants and the log
 * parameters GSL sees.
 *
 * Parameters are the logarithms of profile constants: every constant stays positive whatever
 * step the solver takes, and a step means the same relative change for a bandwidth in GB/s as
 * for an overhead in microseconds. Each constant is clamped to its profile field's bounds when
 * the profile is built from the parameters, so the simulator only ever sees a valid profile.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calibrate/fit.h"

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
 *   rate for the split's partial sums;
 * - for corpora with copy-mode rows, the copy engines' constants: ce_gbs and ce_local_gbs (the
 *   rates into a peer and within the GPU), ce_copy_us and ce_op_us (the fixed costs per copy and
 *   per operation) and ce_gemm_stretch (the GEMM's slow-down beside the copies). ce_engines is
 *   an integer and stays the profile's.
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
    /* Vendor rows too: the corpus of the one-GPU grid measures the vendor GEMM at SM targets and
     * beside the collective, and only they fix vendor_gemm_eff_* and vendor_ragged_eff. */
    p.modes =
        (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT) | (1u << DUET_MODE_VENDOR) | (1u << DUET_MODE_COPY);
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
    int split = 0, copy = 0;
    for (int f = 0; f < n; f++)
        for (size_t i = 0; i < corpora[f].n; i++) {
            const duet_corpus_row_t *r = &corpora[f].rows[i];
            split |= r->ok && r->cfg.split_k > 1;
            copy |= r->ok && r->cfg.mode == DUET_MODE_COPY && r->wl.coll != DUET_COLL_NONE;
        }
    /* The copy engines' constants likewise: only copy-mode rows with a collective depend on them. */
    char list[sizeof(duet_cal_default_fit_names) + 128];
    snprintf(list, sizeof(list), "%s%s%s", duet_cal_default_fit_names, split ? ",splitk_sm_gbs" : "",
             copy ? ",ce_gbs,ce_local_gbs,ce_copy_us,ce_op_us,ce_gemm_stretch" : "");
    return duet_cal_params_set_fit(p, list);
}

int32_t duet__cal_field_find(const char *name)
{
    for (int k = 0; k < DUET_HW_NFIELDS; k++)
        if (strcmp(duet_hw_field_info(k)->key, name) == 0)
            return k;
    return -1;
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
        int32_t f = duet__cal_field_find(name);
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

duet_status_t duet__fit_check_params(const duet_cal_params_t *p)
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

double duet__fit_clamp(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/*
 * Set the profile's fitted constants from log parameters, within their bounds. exp(log(max)) can
 * round above max, so the value is clamped again in linear space against the field's bounds.
 */
void duet__fit_apply(duet__fit_ctx_t *c, const gsl_vector *x)
{
    for (int32_t j = 0; j < c->np; j++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(c->field[j]);
        double v = exp(duet__fit_clamp(gsl_vector_get(x, (size_t)j) + c->off[j], c->lo[j], c->hi[j]));
        duet_hw_set(&c->hw, c->field[j], duet__fit_clamp(v, fi->min, fi->max));
    }
}

duet_status_t duet__fit_map_init(duet__fit_ctx_t *c, const duet_hw_t *base, const duet_cal_params_t *p,
                                 duet_cal_fit_t *fit)
{
    /* Every requested constant as a log parameter with its bounds. x = log(value) - off puts
     * every start at x = 1: GSL's first trust region is then about a 30 % change of each
     * constant, and its step test (relative to |x|) means the same for every constant. */
    const int32_t np_all = p->n_fit;
    for (int32_t j = 0; j < np_all; j++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(p->fit[j]);
        double v0 = duet_hw_get(base, p->fit[j]);
        if (!(v0 > 0))
            return duet__error(DUET_ERR_INVALID_ARG,
                               "fit: %s starts at %g %s; it is fitted as a logarithm and needs a positive start value "
                               "in the base profile",
                               fi->key, v0, fi->unit);
        /* A lower bound of 0 becomes a millionth of the start: the logarithm needs a floor. */
        double lo = fi->min > 0 ? fi->min : v0 * 1e-6;
        fit->params[j].field = p->fit[j];
        fit->params[j].start = v0;
        fit->params[j].value = v0;
        fit->params[j].stderr_abs = NAN;
        fit->params[j].stderr_rel = NAN;
        fit->params[j].corr_field = -1;
        fit->params[j].corr = NAN;
        c->field[j] = p->fit[j];
        c->lo[j] = log(lo);
        c->hi[j] = log(fi->max);
        c->off[j] = log(v0) - 1.0;
    }
    fit->n_params = np_all;
    c->np = np_all;
    return DUET_OK;
}

void duet__fit_map_compact(duet__fit_ctx_t *c, const int32_t *active, int32_t na, const gsl_vector *x_all,
                           gsl_vector *x, duet_cal_fit_t *fit)
{
    /* GSL sees the active parameters, compacted in place (active[] is increasing, so a <= active[a]). */
    for (int32_t a = 0; a < na; a++) {
        int32_t j = active[a];
        c->field[a] = c->field[j];
        c->lo[a] = c->lo[j];
        c->hi[a] = c->hi[j];
        c->off[a] = c->off[j];
        gsl_vector_set(x, (size_t)a, gsl_vector_get(x_all, (size_t)j));
        fit->params[j].fitted = 1;
    }
    c->np = na;
}
