/*
 * Deciding within the model's known error (docs/model.md, "Deciding within the known error"): each
 * prediction carries its mode's held-out error from the profile (err_<mode>), the sweep is ranked by
 * the pessimistic end of each interval, and the safe choice is left only for a configuration whose
 * predicted gain exceeds the band of the two predictions compared.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/internal.h"
#include "sim/internal.h"

duet_interval_t duet_decide_interval(const duet_hw_t *hw, const duet_sweep_point_t *p)
{
    double e = duet_hw_mode_err(hw, p->cfg.mode);
    duet_interval_t iv = {p->makespan_s / (1.0 + e), p->makespan_s * (1.0 + e)};
    return iv;
}

/*
 * Why the errors add in quadrature, on the log scale. err_<mode> is measured against the median error
 * of the prediction's own workload (calibrate: duet_cal_mode_errors_compute), so what the two
 * predictions compared here share through their workload (its GEMM shape mispriced, its clock) is
 * already taken out: it moves both and cannot change which is faster. What is left is each
 * configuration's own error. Across modes those come from different parts of the model (duet's tile
 * and queues, the concurrent kernels' residency, the vendor library's GEMM), so they are taken as
 * independent, and independent errors of equal quantile add as sqrt(a^2 + b^2). Within one mode the
 * two errors are positively correlated (the same tile model on neighbouring splits), which makes the
 * true band of their difference narrower than this: the rule then keeps the safe choice more often
 * than it needs to, the side on which to err. Adding the errors (a + b, perfectly opposed errors)
 * would hold the safe choice against gains the model does resolve. With err at the 90th percentile,
 * a gain beyond the band is one the model would show on a held-out workload about 19 times in 20.
 */
double duet_decide_band(const duet_hw_t *hw, int32_t mode_a, int32_t mode_b)
{
    double la = log1p(duet_hw_mode_err(hw, mode_a)), lb = log1p(duet_hw_mode_err(hw, mode_b));
    return expm1(sqrt(la * la + lb * lb));
}

/* Weigh alt against the safe choice: gain, band and interval; 1 when the gain clears the band. */
static int duet__decide_weigh(const duet_hw_t *hw, const duet_sweep_point_t *safe, const duet_sweep_point_t *alt,
                              duet_decision_t *d)
{
    double r = safe->makespan_s / alt->makespan_s, band = duet_decide_band(hw, safe->cfg.mode, alt->cfg.mode);
    d->alt = *alt;
    d->has_alt = 1;
    d->band = band;
    d->gain = r - 1.0;
    d->gain_lo = r / (1.0 + band) - 1.0;
    d->gain_hi = r * (1.0 + band) - 1.0;
    return d->gain_lo > 0;
}

duet_status_t duet_decide(const duet_hw_t *hw, const duet_sweep_result_t *res, const duet_sweep_point_t *safe,
                          int32_t safe_kind, duet_decision_t *d_p)
{
    if (res == NULL || res->n == 0 || safe == NULL || !(safe->makespan_s > 0))
        return duet__error(DUET_ERR_INVALID_ARG, "decide: no sweep point, or a safe choice without a time");
    duet_decision_t d;
    memset(&d, 0, sizeof(d));
    d.n = res->n;
    d.safe = *safe;
    d.safe_kind = safe_kind;
    d.order = malloc(res->n * sizeof(*d.order));
    d.rank = malloc(res->n * sizeof(*d.rank));
    duet_rank_item_t *key = malloc(res->n * sizeof(*key));
    if (d.order == NULL || d.rank == NULL || key == NULL) {
        free(key);
        duet_decision_free(&d);
        return duet__error(DUET_ERR_NO_MEMORY, "decide: cannot rank %zu points", res->n);
    }
    /* The figure: the interval's upper end, what the configuration is predicted to take at worst
     * (within the profile's known error). Within a mode it orders as the makespan does. */
    for (size_t i = 0; i < res->n; i++) {
        key[i].pred = duet_decide_interval(hw, &res->points[i]).hi_s;
        key[i].cfg = res->points[i].cfg;
        key[i].idx = i;
    }
    duet_rank_sort(key, res->n);
    for (size_t j = 0; j < res->n; j++) {
        d.order[j] = key[j].idx;
        d.rank[j] = j > 0 && duet__time_eq(key[j - 1].pred, key[j].pred, DUET_RANK_TIE_REL) ? d.rank[j - 1] : j + 1;
    }
    free(key);
    /* The pick: the best-ranked configuration that clears the band; else the safe choice, and the
     * best-ranked other configuration is the one shown beside it. */
    duet_decision_t first;
    int have_first = 0;
    for (size_t j = 0; j < res->n && !d.moved; j++) {
        const duet_sweep_point_t *p = &res->points[d.order[j]];
        if (duet_config_same(&p->cfg, &safe->cfg))
            continue;
        d.moved = duet__decide_weigh(hw, safe, p, &d);
        if (!have_first) {
            first = d;
            have_first = 1;
        }
    }
    if (!d.moved && have_first) {
        first.order = d.order;
        first.rank = d.rank;
        d = first;
    }
    *d_p = d;
    return DUET_OK;
}

int duet_decision_tied(const duet_decision_t *d, size_t j)
{
    return (j > 0 && d->rank[j - 1] == d->rank[j]) || (j + 1 < d->n && d->rank[j + 1] == d->rank[j]);
}

const duet_sweep_point_t *duet_decision_pick(const duet_decision_t *d)
{
    return d->moved ? &d->alt : &d->safe;
}

void duet_decision_free(duet_decision_t *d)
{
    if (d == NULL)
        return;
    free(d->order);
    free(d->rank);
    d->order = d->rank = NULL;
    d->n = 0;
}

duet_status_t duet_decide_vendor_point(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_workload_t *wl,
                                       const duet_sweep_params_t *sp, int32_t gemm_sms, int32_t comm_ctas,
                                       duet_sweep_point_t *pt_p)
{
    const duet_sim_policy_ops_t *policy = sp->policy != NULL ? sp->policy : &duet_sim_policy_fluid;
    if (comm_ctas < 0)
        comm_ctas = hw->n_sms - gemm_sms; /* as the sweep splits the SMs */
    /* As the sweep prices a vendor split (sim/sweep.c): one plan, the library's kernel for the SM
     * target (duet_plan_vendor_choose()), simulated once. */
    duet_config_t c = duet__sweep_config_base(hw, sp, DUET_MODE_VENDOR);
    duet_plan_t plan;
    duet_sim_result_t r;
    duet_status_t st = duet_config_complete_split(&c, hw, -1, gemm_sms, comm_ctas);
    if (st >= 0)
        st = duet_config_validate(&c, wl, hw);
    if (st >= 0)
        st = duet_plan_build(wl, &c, duet_plan_critical_rank(wl), &plan);
    if (st >= 0)
        st = duet_plan_vendor_choose(hw, &plan);
    if (st >= 0)
        st = duet_sim_run(ws, policy, hw, &plan, NULL, &r);
    if (st < 0) {
        char msg[256];
        snprintf(msg, sizeof(msg), "%s", duet_last_error());
        return duet__error(st, "the vendor split (GEMM on %d SMs, comm on %d CTAs): %s", (int)gemm_sms, (int)comm_ctas,
                           msg);
    }
    duet_sweep_point_t best;
    memset(&best, 0, sizeof(best));
    best.cfg = plan.cfg;
    best.makespan_s = r.makespan_s;
    best.gemm_finish_s = r.gemm_finish_s;
    best.comm_finish_s = r.comm_finish_s;
    *pt_p = best;
    return DUET_OK;
}
