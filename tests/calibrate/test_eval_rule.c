/*
 * The decision rule's pick in the evaluation (duet_cal_eval_compute, `duet validate --sweep2`): scored
 * as the model's fastest prediction is, beside it, and the switches to a vendor or concurrent pick that
 * measured worse than the static default beyond the workload's band; on rows whose figures follow by
 * hand.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "duet/calibrate.h"

TestSuite(cal_eval_rule, T_TIMEOUT);

/* An op row of workload w and mode m, measured m1 in sweep 1 and 1.02 m1 in sweep 2 (a spread of 2 %). */
static duet_cal_eval_row_t op(int32_t w, int32_t m, double m1, double pred, int dflt, int rule)
{
    duet_cal_eval_row_t r = {w, DUET_ROW_OP, 0, m1, 1.02 * m1, pred, NAN, m, dflt, rule};
    return r;
}

/*
 * Four workloads, every spread 2 %, so every band is 0.02:
 * - 0: the default (fused, 100, predicted 100); concurrent 110 predicted 80 (the fastest prediction);
 *   fused 95 predicted 98, the rule's pick. Best 95. The plain pick, 110: regret 110/95 - 1, outside
 *   the band (96.9), and a worse switch (concurrent, 110 > 1.02 x 100). The rule's: regret 0, right.
 * - 1: the default (fused, 50, predicted 60), kept by the rule; vendor 50.5 predicted 40 (the fastest
 *   prediction). Best 50. The plain pick: regret 0.01, inside the band (51), not worse than the default
 *   beyond it (50.5 <= 51). The rule's: regret 0, right, no switch.
 * - 2: the default (fused, 10, predicted 12), kept by the rule; fused 12 predicted 9 (the fastest
 *   prediction). Best 10. The plain pick: regret 0.2, outside the band, slower than the default but
 *   fused: no worse switch. The rule's: regret 0, right.
 * - 3: one fused row (20, predicted 20) and no static default: the plain pick is scored (regret 0,
 *   right), the rule is not, nor is a switch.
 */
Test(cal_eval_rule, the_rules_pick_beside_the_plain_one)
{
    duet_cal_eval_row_t r[] = {
        op(0, DUET_MODE_FUSED, 100, 100, 1, 0),  op(0, DUET_MODE_CONCURRENT, 110, 80, 0, 0),
        op(0, DUET_MODE_FUSED, 95, 98, 0, 1),    op(1, DUET_MODE_FUSED, 50, 60, 1, 1),
        op(1, DUET_MODE_VENDOR, 50.5, 40, 0, 0), op(2, DUET_MODE_FUSED, 10, 12, 1, 1),
        op(2, DUET_MODE_FUSED, 12, 9, 0, 0),     op(3, DUET_MODE_FUSED, 20, 20, 0, 0),
    };
    duet_cal_eval_t e;
    cr_assert_eq(duet_cal_eval_compute(r, 8, 4, 2000, DUET_CAL_EVAL_SEED, &e), DUET_OK, "%s", duet_last_error());
    const double reg0 = 110.0 / 95.0 - 1.0;
    /* The plain pick: right on workloads 1 and 3 of 4. */
    cr_assert(t_rel_eq(e.pick.value, 0.5, 1e-12), "%.17g", e.pick.value);
    cr_assert(t_rel_eq(e.regret_mean.value, (reg0 + 0.01 + 0.2 + 0.0) / 4.0, 1e-9), "%.17g", e.regret_mean.value);
    /* Worse switches: of the three workloads with the default measured, one (workload 0). */
    cr_assert_eq(e.worse_switch_n, 1);
    cr_assert_eq(e.worse_switch_of, 3);
    cr_assert(t_rel_eq(e.worse_switch.value, 1.0 / 3.0, 1e-12), "%.17g", e.worse_switch.value);
    /* Resamples (4 draws of 4 workloads): with no workload 0 but one of 1 or 2, the share is 0 (chance
     * (3/4)^4 - (1/4)^4 = 31 %); with workload 0 and neither 1 nor 2, it is 1 ((1/2)^4 - (1/4)^4 = 5.9 %):
     * both beyond 2.5 %, so the interval's ends are 0 and 1. */
    cr_assert(e.worse_switch.lo == 0.0 && e.worse_switch.hi == 1.0, "[%g, %g]", e.worse_switch.lo, e.worse_switch.hi);
    /* The rule: scored on workloads 0 to 2, right on each, no regret, no worse switch, the default left on
     * workload 0 only. Every resample agrees, so every interval is its point. */
    cr_assert_eq(e.rule_workloads, 3);
    cr_assert_eq(e.rule_left_n, 1);
    cr_assert_eq(e.rule_worse_switch_n, 0);
    cr_assert(e.rule_pick.value == 1.0 && e.rule_pick.lo == 1.0 && e.rule_pick.hi == 1.0);
    cr_assert(e.rule_regret_mean.value == 0.0 && e.rule_regret_mean.hi == 0.0);
    cr_assert(e.rule_regret_p95.value == 0.0 && e.rule_regret_p95.hi == 0.0);
    cr_assert(e.rule_worse_switch.value == 0.0 && e.rule_worse_switch.hi == 0.0);
}

/* Rows without the decision's marks (no default, no rule pick): the rule's figures are undefined, none
 * of its workloads is counted, and the plain pick's figures are as before. */
Test(cal_eval_rule, no_default_no_rule)
{
    duet_cal_eval_row_t r[] = {op(0, DUET_MODE_FUSED, 1.0, 1.0, 0, 0), op(0, DUET_MODE_CONCURRENT, 2.0, 0.5, 0, 0)};
    duet_cal_eval_t e;
    cr_assert_eq(duet_cal_eval_compute(r, 2, 1, 100, 1, &e), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(e.rule_workloads, 0);
    cr_assert_eq(e.worse_switch_of, 0);
    cr_assert(isnan(e.rule_pick.value) && isnan(e.worse_switch.value));
    cr_assert(t_rel_eq(e.regret_mean.value, 1.0, 1e-12), "%.17g", e.regret_mean.value);
}
