/*
 * The honest evaluation (duet_cal_eval_compute) on small cases derived by hand: an interval of
 * identical workloads is a point; the noise band, the noise-aware pick, its ceiling and regret of a
 * constructed two-workload case; the reference rules scored within their own options.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "duet/calibrate.h"

TestSuite(cal_eval, T_TIMEOUT);

static duet_cal_eval_row_t row(int32_t w, int32_t kind, double m1, double m2, double pred, double ref)
{
    duet_cal_eval_row_t r = {w, kind, kind == DUET_ROW_GEMM_ALONE, m1, m2, pred, ref, DUET_MODE_FUSED, 0, 0};
    return r;
}

static void assert_point(const duet_cal_ci_t *c, double want, const char *what)
{
    cr_assert(t_rel_eq(c->value, want, 1e-12), "%s: %.17g vs %.17g", what, c->value, want);
    cr_assert(c->lo == c->value && c->hi == c->value, "%s: [%.17g, %.17g] is not the point %.17g", what, c->lo, c->hi,
              c->value);
}

/*
 * Three identical workloads: every resample holds the same multiset in the same proportions, so
 * every statistic is the same in every resample and each interval is the point itself. Per
 * workload: a GEMM row predicted 2 % high; op rows m1 = m2 = {1.0, 1.1} (band 0) predicted
 * {1.0, 1.2}: APEs {0, 1/11}, pooled median (0 + 1/11) / 2, the pick is the best (regret 0).
 */
Test(cal_eval, identical_workloads_give_point_intervals)
{
    duet_cal_eval_row_t r[9];
    int k = 0;
    for (int w = 0; w < 3; w++) {
        r[k++] = row(w, DUET_ROW_GEMM_ALONE, 1.0, 1.0, 1.02, NAN);
        r[k++] = row(w, DUET_ROW_OP, 1.0, 1.0, 1.0, 1.05);
        r[k++] = row(w, DUET_ROW_OP, 1.1, 1.1, 1.2, 1.0);
    }
    duet_cal_eval_t e;
    cr_assert_eq(duet_cal_eval_compute(r, 9, 3, 500, 7, &e), DUET_OK, "%s", duet_last_error());
    assert_point(&e.gemm_ape_median, 0.02, "gemm median");
    assert_point(&e.gemm_ape_p95, 0.02, "gemm p95");
    assert_point(&e.op_ape_median, (0 + 1.2 / 1.1 - 1) / 2, "op median");
    assert_point(&e.pick, 1.0, "pick");
    assert_point(&e.ceiling, 1.0, "ceiling");
    assert_point(&e.regret_p95, 0.0, "regret p95");
    /* The reference rules pick the 1.1 row (their prediction 1.0 < 1.05): regret 0.1 in their options. */
    assert_point(&e.ref_regret_mean, 0.1, "reference regret");
    assert_point(&e.ref_pick, 0.0, "reference pick");
    cr_assert_eq(e.workloads, 3);
    cr_assert_eq(e.gemm_rows, 3);
    cr_assert_eq(e.op_rows, 6);
    cr_assert_eq(e.band_median, 0.0);
}

/*
 * Workload 0: m1 = {1.00, 1.02, 1.10}, m2 = {1.03, 1.00, 1.10}: spreads {0.03, 0.02, 0}, band =
 * their 90th percentile = 0.02 + 0.8 x 0.01 = 0.028. The model predicts {2, 1, 3}: it picks the
 * 1.02 row, within 1.00 x 1.028 of the best: right, not exact, regret 0.02. Sweep 2's fastest is
 * the same row: the ceiling is right. The reference rules predict only the 1.10 row: within their
 * own options it is the best (regret 0, right).
 * Workload 1: m1 = m2 = {1.0, 1.5} (band 0); the model picks 1.5: wrong, regret 0.5; the ceiling
 * picks 1.0: right.
 * Together: pick 1/2, ceiling 1, exact 0, regret mean 0.26, regret p95 = 0.02 + 0.95 x 0.48.
 */
Test(cal_eval, the_noise_aware_pick_of_a_constructed_case)
{
    duet_cal_eval_row_t r[] = {
        row(0, DUET_ROW_OP, 1.00, 1.03, 2.0, NAN), row(0, DUET_ROW_OP, 1.02, 1.00, 1.0, NAN),
        row(0, DUET_ROW_OP, 1.10, 1.10, 3.0, 1.0), row(1, DUET_ROW_OP, 1.0, 1.0, 2.0, NAN),
        row(1, DUET_ROW_OP, 1.5, 1.5, 1.0, NAN),
    };
    duet_cal_eval_t e, again;
    cr_assert_eq(duet_cal_eval_compute(r, 5, 2, 2000, DUET_CAL_EVAL_SEED, &e), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(e.pick.value, 0.5, 1e-12));
    cr_assert(t_rel_eq(e.ceiling.value, 1.0, 1e-12));
    cr_assert_eq(e.exact_pick.value, 0.0);
    cr_assert(t_rel_eq(e.regret_mean.value, 0.26, 1e-12), "%.17g", e.regret_mean.value);
    cr_assert(t_rel_eq(e.regret_p95.value, 0.02 + 0.95 * 0.48, 1e-12), "%.17g", e.regret_p95.value);
    cr_assert(t_rel_eq(e.band_median, (0.028 + 0) / 2, 1e-12), "%.17g", e.band_median);
    cr_assert_eq(e.ref_workloads, 1);
    cr_assert_eq(e.ref_regret_mean.value, 0.0);
    cr_assert_eq(e.ref_pick.value, 1.0);
    /* Two workloads resampled: the pick share is 0, 1/2 or 1 (chances 1/4, 1/2, 1/4), so the 95 %
     * interval spans [0, 1]; the ceiling is 1 in every resample. */
    cr_assert_eq(e.pick.lo, 0.0);
    cr_assert_eq(e.pick.hi, 1.0);
    cr_assert(e.ceiling.lo == 1.0 && e.ceiling.hi == 1.0);
    /* The same seed gives the same intervals. */
    cr_assert_eq(duet_cal_eval_compute(r, 5, 2, 2000, DUET_CAL_EVAL_SEED, &again), DUET_OK);
    cr_assert_eq(memcmp(&e, &again, sizeof(e)), 0);
}

/*
 * The reference rules scored two ways. Every m2 equals its m1, so each band is 0.
 * Workload 0: fused rows m1 1.00 and 1.20 (the rules predict 1.00 and 0.90: they pick the 1.20 row),
 * a concurrent row m1 0.80 that only the model predicts (0.70, its pick: regret 0). Within their own
 * options the rules' best is 1.00: regret 0.2, a wrong pick; against every mode the best is 0.80:
 * regret 1.2 / 0.8 - 1 = 0.5, wrong.
 * Workload 1: a fused row m1 1.00 (model 1.00, rules 1.00) and a concurrent row m1 0.90 (model 1.10).
 * The model picks the fused row: regret 1 / 0.9 - 1. The rules have one option: regret 0, right;
 * against every mode 1 / 0.9 - 1, wrong.
 * Own options: pick 1/2, regret mean 0.1, p95 of {0, 0.2} = 0.05 x 0 + 0.95 x 0.2.
 * Every mode: pick 0, regret mean (0.5 + 1/9) / 2, p95 0.05 x 1/9 + 0.95 x 0.5.
 */
Test(cal_eval, the_reference_rules_within_their_options_and_against_every_mode)
{
    duet_cal_eval_row_t r[] = {
        row(0, DUET_ROW_OP, 1.00, 1.00, 1.10, 1.00), row(0, DUET_ROW_OP, 1.20, 1.20, 1.20, 0.90),
        row(0, DUET_ROW_OP, 0.80, 0.80, 0.70, NAN),  row(1, DUET_ROW_OP, 1.00, 1.00, 1.00, 1.00),
        row(1, DUET_ROW_OP, 0.90, 0.90, 1.10, NAN),
    };
    duet_cal_eval_t e;
    cr_assert_eq(duet_cal_eval_compute(r, 5, 2, 200, 3, &e), DUET_OK, "%s", duet_last_error());
    const double r1 = 1.0 / 0.9 - 1.0;
    cr_assert(t_rel_eq(e.regret_mean.value, r1 / 2, 1e-12), "%.17g", e.regret_mean.value);
    cr_assert(t_rel_eq(e.pick.value, 0.5, 1e-12));
    cr_assert_eq(e.ref_workloads, 2);
    cr_assert(t_rel_eq(e.ref_pick.value, 0.5, 1e-12));
    cr_assert(t_rel_eq(e.ref_regret_mean.value, 0.1, 1e-12), "%.17g", e.ref_regret_mean.value);
    cr_assert(t_rel_eq(e.ref_regret_p95.value, 0.95 * 0.2, 1e-12), "%.17g", e.ref_regret_p95.value);
    cr_assert_eq(e.ref_all_pick.value, 0.0);
    cr_assert(t_rel_eq(e.ref_all_regret_mean.value, (0.5 + r1) / 2, 1e-12), "%.17g", e.ref_all_regret_mean.value);
    cr_assert(t_rel_eq(e.ref_all_regret_p95.value, 0.05 * r1 + 0.95 * 0.5, 1e-12), "%.17g", e.ref_all_regret_p95.value);
    /* Every resample's figure lies between the extremes of the two workloads. */
    cr_assert(e.ref_all_regret_mean.lo >= r1 - 1e-12 && e.ref_all_regret_mean.hi <= 0.5 + 1e-12);
    /* The model's regret mean interval [0, 1/9] lies below the rules' every-mode interval only if its
     * top is below their bottom: 1/9 is their bottom (both resampled workloads 1), so not met. */
    cr_assert_eq(duet_cal_eval_better_than_reference_all(&e), 0);
}

Test(cal_eval, bad_input_is_refused)
{
    duet_cal_eval_row_t r[] = {row(2, DUET_ROW_OP, 1.0, 1.0, 1.0, NAN)};
    duet_cal_eval_t e;
    cr_assert_eq(duet_cal_eval_compute(r, 1, 2, 10, 1, &e), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_cal_eval_compute(r, 0, 2, 10, 1, &e), DUET_ERR_INVALID_ARG);
    r[0].workload = 0;
    cr_assert_eq(duet_cal_eval_compute(r, 1, 1, 0, 1, &e), DUET_ERR_INVALID_ARG);
}
