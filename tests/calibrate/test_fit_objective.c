/*
 * The fit's objective is the sum of squared log errors log(pred / meas) (docs/calibration.md):
 * rows measured at exp(+d) and exp(-d) times the truth pull a log fit back to the truth exactly,
 * while a fit of relative errors would land below it (the two terms' optimum is
 * (e^-d + e^d) / (e^-2d + e^2d) = 0.88 of the truth at d = 0.3). The reported rms log errors and
 * standard errors follow from that objective by hand.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "synth.h"

#define D 0.3 /* log error of every row: half measured e^0.3 = 1.35 x the truth, half e^-0.3 */

/* The truth: the start profile with two constants moved off, so that the base is not the truth. */
static duet_hw_t truth_profile(void)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.gemm_eff_bf16 = 0.72;
    hw.link_gbs = 350;
    return hw;
}

/*
 * GEMM-alone rows (4096^3 bf16 in 256x128 tiles on 16, 66 and 132 CTAs: the matrix rate, so
 * gemm_eff_bf16) and comm-alone rows (all_gather of 8192 x 4096 on 32, 64 and 128 CTAs: the link,
 * so link_gbs), each measured `copies` times at e^+D and as often at e^-D times the truth.
 */
static duet_corpus_t pm_corpus(const duet_hw_t *truth, int copies)
{
    duet_corpus_t c = t_corpus_header(truth->n_sms, 2);
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    duet_workload_t g = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 2);
    duet_workload_t a = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 8192, 4096, 2);
    const int32_t gctas[] = {16, 66, 132}, cctas[] = {32, 64, 128};
    for (int k = 0; k < copies; k++)
        for (int s = -1; s <= 1; s += 2) {
            for (int i = 0; i < 3; i++)
                t_add_sim(&c, ws, &duet_sim_policy_fluid, truth, DUET_ROW_GEMM_ALONE, g,
                          t_fused(truth, gctas[i], gctas[i], (duet_gemm_tile_t){256, 128, 64}), s * D);
            for (int i = 0; i < 3; i++)
                t_add_sim(&c, ws, &duet_sim_policy_fluid, truth, DUET_ROW_COMM_ALONE, a,
                          t_fused(truth, cctas[i], 0, (duet_gemm_tile_t){256, 128, 64}), s * D);
        }
    duet_sim_ws_destroy(ws);
    return c;
}

static duet_cal_fit_t fit_pm(const duet_corpus_t *c, const duet_hw_t *truth)
{
    duet_cal_params_t p = duet_cal_default_params();
    cr_assert_eq(duet_cal_params_set_fit(&p, "gemm_eff_bf16,link_gbs"), DUET_OK);
    duet_hw_t base = *truth;
    base.gemm_eff_bf16 = 0.9;
    base.link_gbs = 250;
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(c, NULL, 1, &base, &p, &fit), DUET_OK, "%s", duet_last_error());
    return fit;
}

/* sqrt(mean(log(pred / meas)^2)) over the corpus's rows, predicted on `hw`. */
static double rms_log_by_hand(const duet_corpus_t *c, const duet_hw_t *hw)
{
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    double sum = 0;
    for (size_t i = 0; i < c->n; i++) {
        double ms;
        cr_assert_eq(duet_cal_row_predict(ws, &duet_sim_policy_fluid, hw, &c->rows[i], &ms), DUET_OK);
        double e = log(ms / c->rows[i].ms);
        sum += e * e;
    }
    duet_sim_ws_destroy(ws);
    return sqrt(sum / (double)c->n);
}

Test(fit_objective, symmetric_log_errors_fit_back_to_the_truth, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = pm_corpus(&truth, 1);
    cr_assert_eq(c.n, 12);
    duet_cal_fit_t fit = fit_pm(&c, &truth);
    cr_assert(fit.converged, "%s", fit.stop_reason);
    cr_assert_eq(fit.rows, 12);
    for (int32_t j = 0; j < fit.n_params; j++)
        cr_assert(fit.params[j].fitted, "%s", duet_hw_field_info(fit.params[j].field)->key);
    /* The log objective's optimum is the truth itself: every residual is then +-D. */
    cr_assert(t_rel_eq(fit.hw.gemm_eff_bf16, 0.72, 1e-4), "gemm_eff_bf16 %.6f", fit.hw.gemm_eff_bf16);
    cr_assert(t_rel_eq(fit.hw.link_gbs, 350, 1e-4), "link_gbs %.4f", fit.hw.link_gbs);
    cr_assert(t_rel_eq(fit.rms_log_end, D, 1e-6), "rms log error at the end %.9f", fit.rms_log_end);
    /* The reported rms values are the rms of log(pred / meas), computed here from the rows. */
    duet_hw_t base = truth;
    base.gemm_eff_bf16 = 0.9;
    base.link_gbs = 250;
    cr_assert(t_rel_eq(fit.rms_log_start, rms_log_by_hand(&c, &base), 1e-12), "start %.9f", fit.rms_log_start);
    cr_assert(t_rel_eq(fit.rms_log_end, rms_log_by_hand(&c, &fit.hw), 1e-12), "end %.9f", fit.rms_log_end);
    duet_corpus_free(&c);
}

/*
 * Standard errors: sigma^2 = |f|^2 / (n - p) scales the covariance (J^T J)^-1 of the log
 * parameters; stderr_rel = sqrt(sigma^2 C_jj), stderr_abs = value x stderr_rel (the delta
 * method). Each row taken twice doubles J^T J (same rows, same Jacobian at the same optimum) and
 * the residual variance goes from 12 D^2 / 10 to 24 D^2 / 22, so the variance of each parameter
 * scales by (24 / 22) / (12 / 10) / 2 = 5 / 11.
 */
Test(fit_objective, standard_errors_scale_with_the_degrees_of_freedom, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    duet_corpus_t c1 = pm_corpus(&truth, 1), c2 = pm_corpus(&truth, 2);
    cr_assert_eq(c2.n, 24);
    duet_cal_fit_t f1 = fit_pm(&c1, &truth), f2 = fit_pm(&c2, &truth);
    for (int32_t j = 0; j < f1.n_params; j++) {
        const duet_cal_param_result_t *a = &f1.params[j], *b = &f2.params[j];
        const char *key = duet_hw_field_info(a->field)->key;
        cr_assert(isfinite(a->stderr_rel) && a->stderr_rel > 0, "%s", key);
        cr_assert(t_rel_eq(a->stderr_abs, a->value * a->stderr_rel, 1e-12), "%s: delta method", key);
        cr_assert(t_rel_eq(b->stderr_abs, b->value * b->stderr_rel, 1e-12), "%s: delta method", key);
        double ratio = (b->stderr_rel * b->stderr_rel) / (a->stderr_rel * a->stderr_rel);
        cr_assert(t_rel_eq(ratio, 5.0 / 11.0, 1e-3), "%s: variance ratio %.6f, want %.6f", key, ratio, 5.0 / 11.0);
    }
    duet_corpus_free(&c1);
    duet_corpus_free(&c2);
}

/* The rows the report hands back: (fold, held-out prediction, measurement). */
typedef struct held_rows {
    int n;
    int32_t fold[128];
    double held[128], ms[128];
    duet_workload_t wl[128];
} held_rows_t;

static void collect(void *arg, const duet_cal_row_pred_t *r)
{
    held_rows_t *h = arg;
    if (h->n < 128) {
        h->fold[h->n] = r->fold;
        h->held[h->n] = r->held_out_ms;
        h->ms[h->n] = r->row->ms;
        h->wl[h->n] = r->row->wl;
        h->n++;
    }
}

/*
 * The report on the synthetic corpus plus six K-split rows of its 128-row shape:
 * - folds are dealt round robin over the shapes in sorted order (collective, world, dtype, m, n,
 *   k, ...), whatever their order in the file: all_gather 128 x 8192 x 8192 (fold 0), all_gather
 *   4096^3 (1), all_reduce (2), reduce_scatter (3), all_to_all (4);
 * - each fold's held-out rms is the rms of log(held-out prediction / measurement) over the rows of
 *   the shape it held out (computed here from the rows the report hands back);
 * - the reference rules fit their one constant, the effective link bandwidth (seed_link_gbs), on
 *   the 30 unsplit fused op rows only (6 per shape: they model neither concurrent mode nor a K
 *   split).
 */
Test(fit_objective, held_out_rms_is_the_log_error_of_the_held_out_rows, T_TIMEOUT)
{
    duet_hw_t truth = t_hw_h200_start();
    truth.gemm_eff_bf16 = 0.72;
    truth.link_gbs = 350;
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.05);
    t_add_split_rows(&c, &truth);
    cr_assert_eq(c.n, 96);
    duet_cal_params_t p = duet_cal_default_params();
    cr_assert_eq(duet_cal_params_set_fit(&p, "gemm_eff_bf16,link_gbs"), DUET_OK);
    p.folds = 5;
    held_rows_t h;
    memset(&h, 0, sizeof(h));
    p.rows = collect;
    p.rows_arg = &h;
    duet_hw_t base = truth;
    base.gemm_eff_bf16 = 0.9;
    base.link_gbs = 250;
    duet_cal_report_t rep;
    cr_assert_eq(duet_cal_report_run(&c, NULL, 1, &base, &p, &rep), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(h.n, 96);
    cr_assert_eq(rep.model.folds, 5);
    for (int i = 0; i < h.n; i++) {
        const duet_workload_t *w = &h.wl[i];
        int32_t want = w->coll == DUET_COLL_ALL_GATHER       ? (w->m == 128 ? 0 : 1)
                       : w->coll == DUET_COLL_ALL_REDUCE     ? 2
                       : w->coll == DUET_COLL_REDUCE_SCATTER ? 3
                                                             : 4;
        cr_assert_eq(h.fold[i], want, "row %d (%s, m %lld): fold %d", i, duet_collective_name(w->coll), (long long)w->m,
                     (int)h.fold[i]);
    }
    for (int32_t f = 0; f < 5; f++) {
        double sum = 0;
        int n = 0;
        for (int i = 0; i < h.n; i++)
            if (h.fold[i] == f) {
                double e = log(h.held[i] / h.ms[i]);
                sum += e * e;
                n++;
            }
        cr_assert_eq(n, f == 0 ? 24 : 18, "fold %d holds one shape's rows", (int)f);
        cr_assert(t_rel_eq(rep.model.fold[f].rms_log_held_out, sqrt(sum / n), 1e-12), "fold %d: %.9f vs %.9f", (int)f,
                  rep.model.fold[f].rms_log_held_out, sqrt(sum / n));
    }
    cr_assert_eq(rep.seed.fit.rows, 30);
    cr_assert_eq(rep.seed.fit.n_params, 1);
    cr_assert_eq(rep.seed.fit.params[0].field, DUET_HW_F_seed_link_gbs);
    cr_assert_str_eq(rep.seed.fit.policy, "frozen");
    duet_corpus_free(&c);
}
