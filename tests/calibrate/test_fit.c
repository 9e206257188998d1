/*
 * The fit: recovery of known constants from corpora the simulator measured, standard errors on
 * noisy data, the reference rules' one-constant fit, cross-validation by shape, unusable input,
 * sources, the report file, and the GSL boundary.
 */
#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>

#include "../test_util.h"
#include "calibrate/internal.h"
#include "synth.h"

/* The truth: the uncalibrated h200 profile (datasheet values, where the H200 calibration starts)
 * with a few constants moved off their values, so that a fit that merely returned the defaults
 * would fail. Not the built-in h200: that is calibrated to duet's tiles, which are L2-bound at
 * these shapes, so a synthetic corpus from it would not determine gemm_eff_bf16. */
static duet_hw_t truth_profile(void)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.gemm_eff_bf16 = 0.72;
    hw.link_gbs = 350;
    hw.hbm_gbs = 1800; /* low enough that HBM still binds some GEMM rows with the K loop slowed by
                        * gemm_sm_contention on every SM, so that the rows determine it */
    hw.seed_link_gbs = 200;
    /* The fill of a box's rows beyond M is overlapped with the matrix work (max, not sum): at 8 ns
     * a row the 128 rows of the 128-row GEMM's 256x128 tiles (1.02 us) outlast the step's matrix
     * work (0.78 us at this efficiency), so the rows determine it. */
    hw.tile_oob_row_ns = 8.0;
    return hw;
}

/* The base: every fitted constant of the truth moved by a factor between 0.72 and 1.35. */
static duet_hw_t perturbed(const duet_hw_t *truth, const duet_cal_params_t *p)
{
    static const double factor[] = {0.75, 1.3, 0.8, 1.25, 1.35, 0.72, 1.2, 0.85, 1.15, 0.78, 1.28};
    duet_hw_t base = *truth;
    for (int32_t j = 0; j < p->n_fit; j++)
        duet_hw_set(&base, p->fit[j], duet_hw_get(truth, p->fit[j]) * factor[j % 11]);
    return base;
}

static const duet_cal_param_result_t *param(const duet_cal_fit_t *fit, int32_t field)
{
    for (int32_t j = 0; j < fit->n_params; j++)
        if (fit->params[j].field == field)
            return &fit->params[j];
    cr_assert_fail("field %d is not among the fitted parameters", (int)field);
    return NULL;
}

/* Eleven constants the synthetic corpus determines (launch_us is left out here: with both
 * per-tile costs fitted it only trades off against them; comm_sm_share needs co-resident
 * comm CTAs that the corpus does not have). gemm_sm_contention is seen through the GEMM alone on
 * 16, 66 and 132 SMs, tile_oob_row_ns through the 256x128 tiles of the 128-row GEMM (truth_profile). */
static const char identifiable[] = "gemm_eff_fp16,gemm_eff_bf16,tile_overhead_us,dequeue_gemm_us,dequeue_comm_us,"
                                   "link_gbs,link_half_inflight_kib,cta_push_gbs,hbm_gbs,gemm_sm_contention,"
                                   "tile_oob_row_ns";

Test(fit, default_parameters_are_continuous_profile_constants, T_TIMEOUT)
{
    duet_cal_params_t p = duet_cal_default_params();
    cr_assert_eq(p.n_fit, 11, "%d", (int)p.n_fit);
    cr_assert_eq(p.policy, &duet_sim_policy_fluid);
    cr_assert_eq(p.folds, 5);
    for (int32_t j = 0; j < p.n_fit; j++)
        cr_assert(!duet_hw_field_info(p.fit[j])->is_int);
    cr_assert_eq(duet_cal_params_set_fit(&p, "link_gbs,hbm_gbs"), DUET_OK);
    cr_assert_eq(p.n_fit, 2);
    cr_assert_eq(p.fit[0], DUET_HW_F_link_gbs);
    cr_assert_eq(p.fit[1], DUET_HW_F_hbm_gbs);

    static const struct {
        const char *list, *why;
    } bad[] = {{"link_gbs,warp_speed", "'warp_speed' is not a profile constant"},
               {"n_sms", "is a count"},
               {"hbm_gbs,hbm_gbs", "listed twice"},
               {"hbm_gbs,", "trailing comma"},
               {"", "empty"},
               {"hbm_gbs,,link_gbs", "empty or overlong"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(duet_cal_params_set_fit(&p, bad[i].list), DUET_ERR_INVALID_ARG, "%s", bad[i].list);
        cr_assert(strstr(duet_last_error(), bad[i].why) != NULL, "'%s': %s", bad[i].list, duet_last_error());
        cr_assert_eq(p.n_fit, 2, "a failed call leaves the list alone");
    }
}

Test(fit, recovers_known_constants_within_one_percent, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    cr_assert_eq(c.n, 90);
    duet_cal_params_t p = duet_cal_default_params();
    cr_assert_eq(duet_cal_params_set_fit(&p, identifiable), DUET_OK);
    duet_hw_t base = perturbed(&truth, &p);
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(&c, NULL, 1, &base, &p, &fit), DUET_OK, "%s", duet_last_error());
    cr_assert(fit.converged, "%s", fit.stop_reason);
    cr_assert_eq(fit.rows, 90);
    cr_assert_eq(fit.shapes, 5);
    cr_assert_gt(fit.rms_log_start, 0.05, "the start is really off: %g", fit.rms_log_start);
    cr_assert_lt(fit.rms_log_end, 1e-6, "%g", fit.rms_log_end);
    for (int32_t j = 0; j < fit.n_params; j++) {
        const duet_cal_param_result_t *r = &fit.params[j];
        double want = duet_hw_get(&truth, r->field);
        cr_assert(r->fitted, "%s", duet_hw_field_info(r->field)->key);
        cr_assert(fabs(r->start / want - 1) > 0.1, "%s starts off", duet_hw_field_info(r->field)->key);
        cr_assert(t_rel_eq(r->value, want, 0.01), "%s: fitted %g, truth %g (start %g)",
                  duet_hw_field_info(r->field)->key, r->value, want, r->start);
        cr_assert_eq(duet_hw_get(&fit.hw, r->field), r->value);
    }
    /* Constants not fitted are the base's, untouched. */
    cr_assert_eq(fit.hw.launch_us, base.launch_us);
    cr_assert_str_eq(fit.hw.source[DUET_HW_F_launch_us], base.source[DUET_HW_F_launch_us]);
    duet_corpus_free(&c);
}

/* The chip's box rows (box_rows_per_us): at 20000 rows/us, half of it below 66 busy SMs, they bind
 * the 128-row GEMM's 256x128 tiles on 64 SMs (its 64 tiles, 264 rows a K step each after the A
 * panel's reuse), while on 16 CTAs the SMs' own K loop binds: the rows separate the capacity
 * from tile_oob_row_ns and the per-tile costs. */
Test(fit, recovers_the_box_row_capacity, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    truth.box_rows_per_us = 20000;
    truth.box_min_share = 0.5;
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_params_t p = duet_cal_default_params();
    char list[sizeof(identifiable) + 32];
    snprintf(list, sizeof(list), "%s,box_rows_per_us", identifiable);
    cr_assert_eq(duet_cal_params_set_fit(&p, list), DUET_OK);
    duet_hw_t base = perturbed(&truth, &p);
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(&c, NULL, 1, &base, &p, &fit), DUET_OK, "%s", duet_last_error());
    cr_assert(fit.converged, "%s", fit.stop_reason);
    cr_assert_lt(fit.rms_log_end, 1e-6, "%g", fit.rms_log_end);
    const duet_cal_param_result_t *r = param(&fit, DUET_HW_F_box_rows_per_us);
    cr_assert(fabs(r->start / 20000 - 1) > 0.1, "starts off: %g", r->start);
    cr_assert(t_rel_eq(r->value, 20000, 0.01), "fitted %g", r->value);
    duet_corpus_free(&c);
}

Test(fit, every_default_constant_fits_the_rows, T_TIMEOUT)
{
    /* The default list includes launch_us and comm_sm_share: the predictions must still come
     * back exactly, the constants the rows pin down must come back within 1 %, and a constant
     * no row depends on is reported as not fitted and left at its start. */
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_params_t p = duet_cal_default_params();
    duet_hw_t base = perturbed(&truth, &p);
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(&c, NULL, 1, &base, &p, &fit), DUET_OK, "%s", duet_last_error());
    cr_assert_lt(fit.rms_log_end, 1e-4, "%g (%s)", fit.rms_log_end, fit.stop_reason);
    static const int32_t pinned[] = {DUET_HW_F_gemm_eff_fp16, DUET_HW_F_gemm_eff_bf16, DUET_HW_F_link_gbs,
                                     DUET_HW_F_cta_push_gbs, DUET_HW_F_hbm_gbs};
    for (size_t i = 0; i < sizeof(pinned) / sizeof(pinned[0]); i++) {
        const duet_cal_param_result_t *r = param(&fit, pinned[i]);
        double want = duet_hw_get(&truth, r->field);
        cr_assert(t_rel_eq(r->value, want, 0.01), "%s: fitted %g, truth %g", duet_hw_field_info(r->field)->key,
                  r->value, want);
    }
    const duet_cal_param_result_t *share = param(&fit, DUET_HW_F_comm_sm_share);
    cr_assert(!share->fitted);
    cr_assert_eq(share->value, base.comm_sm_share);
    cr_assert(isnan(share->stderr_abs));
    duet_corpus_free(&c);
}

Test(fit, standard_errors_cover_the_error_on_noisy_rows, T_TIMEOUT)
{
    /* Every row off by up to +-3 % (uniform, fixed seed): rms log noise 0.03 / sqrt(3). */
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.03);
    duet_cal_params_t p = duet_cal_default_params();
    cr_assert_eq(duet_cal_params_set_fit(&p, "gemm_eff_fp16,gemm_eff_bf16,dequeue_comm_us,link_gbs,cta_push_gbs"),
                 DUET_OK);
    duet_hw_t base = perturbed(&truth, &p);
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(&c, NULL, 1, &base, &p, &fit), DUET_OK, "%s", duet_last_error());
    cr_assert(fit.converged, "%s", fit.stop_reason);
    cr_assert(fit.rms_log_end > 0.008 && fit.rms_log_end < 0.025, "rms %g", fit.rms_log_end);
    for (int32_t j = 0; j < fit.n_params; j++) {
        const duet_cal_param_result_t *r = &fit.params[j];
        const char *key = duet_hw_field_info(r->field)->key;
        double want = duet_hw_get(&truth, r->field);
        cr_assert(isfinite(r->stderr_abs) && r->stderr_abs > 0, "%s: stderr %g", key, r->stderr_abs);
        cr_assert(t_rel_eq(r->stderr_abs, r->value * r->stderr_rel, 1e-12), "%s", key);
        /* A 4-sigma band: the noise is fixed, so this is deterministic, not flaky. */
        cr_assert(fabs(r->value - want) <= 4 * r->stderr_abs, "%s: %g +- %g, truth %g", key, r->value, r->stderr_abs,
                  want);
        cr_assert(fabs(r->corr) <= 1.0 + 1e-12, "%s: correlation %g", key, r->corr);
    }
    duet_corpus_free(&c);
}

Test(fit, reference_rules_recover_their_link_bandwidth, T_TIMEOUT)
{
    /* A corpus measured by the reference rules themselves (policy frozen) with an effective
     * link bandwidth of 200 GB/s: the one-constant fit from 120 GB/s finds it. */
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_frozen, 0.0);
    cr_assert_eq(c.n, 70, "fused rows only: %zu", c.n);
    duet_cal_params_t p = duet_cal_default_params();
    p.policy = &duet_sim_policy_frozen;
    cr_assert_eq(duet_cal_params_set_fit(&p, "seed_link_gbs"), DUET_OK);
    p.kinds = 1u << DUET_ROW_OP;
    duet_hw_t base = truth;
    base.seed_link_gbs = 120;
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(&c, NULL, 1, &base, &p, &fit), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(fit.rows, 30, "fused op rows");
    cr_assert_str_eq(fit.policy, "frozen");
    cr_assert(t_rel_eq(fit.hw.seed_link_gbs, 200, 0.01), "%g", fit.hw.seed_link_gbs);
    duet_corpus_free(&c);
}

Test(fit, constants_no_row_depends_on_are_reported_not_fitted, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_params_t p = duet_cal_default_params();
    /* seed_alpha belongs to the reference rules: the fluid model never reads it. */
    cr_assert_eq(duet_cal_params_set_fit(&p, "seed_alpha,cta_push_gbs"), DUET_OK);
    duet_hw_t base = truth;
    base.cta_push_gbs = 25;
    base.seed_alpha = 0.7;
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(&c, NULL, 1, &base, &p, &fit), DUET_OK, "%s", duet_last_error());
    cr_assert(!fit.params[0].fitted);
    cr_assert_eq(fit.params[0].value, 0.7);
    cr_assert_eq(fit.hw.seed_alpha, 0.7);
    cr_assert(fit.params[1].fitted);
    cr_assert(t_rel_eq(fit.hw.cta_push_gbs, truth.cta_push_gbs, 0.01), "%g", fit.hw.cta_push_gbs);

    /* Only constants nothing depends on: an error, not a silent no-op. */
    cr_assert_eq(duet_cal_params_set_fit(&p, "seed_alpha,seed_launch_us"), DUET_OK);
    cr_assert_eq(duet_cal_fit_run(&c, NULL, 1, &base, &p, &fit), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "none of the 2 parameters changes any predicted row"), "%s", duet_last_error());
    duet_corpus_free(&c);
}

Test(fit, splitk_sm_gbs_is_a_default_parameter_only_with_k_split_rows, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    truth.splitk_sm_gbs = 30;
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_params_t p = duet_cal_default_params(), q = p;
    /* Without split rows: the default list as it is. */
    cr_assert_eq(duet_cal_params_set_default_fit(&p, &c, 1), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.n_fit, q.n_fit);
    cr_assert_eq(memcmp(p.fit, q.fit, sizeof(p.fit[0]) * (size_t)p.n_fit), 0);
    /* A failed split row is no evidence either. */
    duet_corpus_row_t failed = c.rows[0];
    failed.cfg.split_k = 2;
    failed.ok = 0;
    failed.ms = failed.min_ms = failed.max_ms = 0;
    snprintf(failed.error, sizeof(failed.error), "timed out");
    cr_assert_eq(duet_corpus_add(&c, &failed), DUET_OK);
    cr_assert_eq(duet_cal_params_set_default_fit(&p, &c, 1), DUET_OK);
    cr_assert_eq(p.n_fit, q.n_fit);

    /* With measured split rows (in the second corpus): splitk_sm_gbs joins the list. */
    duet_corpus_t two[2] = {c, t_corpus_header(truth.n_sms, 2)};
    t_add_split_rows(&two[1], &truth);
    cr_assert_eq(two[1].n, 6);
    cr_assert_eq(duet_cal_params_set_default_fit(&p, two, 2), DUET_OK);
    cr_assert_eq(p.n_fit, q.n_fit + 1);
    cr_assert_eq(p.fit[p.n_fit - 1], DUET_HW_F_splitk_sm_gbs);

    /* And the split rows determine it: from twice the truth back to it. */
    cr_assert_eq(duet_cal_params_set_fit(&p, "splitk_sm_gbs"), DUET_OK);
    p.presearch = 0;
    duet_hw_t base = truth;
    base.splitk_sm_gbs = 60;
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(two, NULL, 2, &base, &p, &fit), DUET_OK, "%s", duet_last_error());
    cr_assert(fit.params[0].fitted);
    cr_assert(t_rel_eq(fit.hw.splitk_sm_gbs, 30, 0.01), "%g", fit.hw.splitk_sm_gbs);
    duet_corpus_free(&two[1]);
    duet_corpus_free(&c);
}

Test(fit, unusable_corpora_and_profiles_are_refused_with_reasons, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_params_t p = duet_cal_default_params();
    p.folds = 0;
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    const char *names[] = {"w2.json"};

    /* A profile of another device: 304 CUs for a corpus measured on 132 SMs. */
    duet_hw_t mi = t_hw("mi300x");
    cr_assert_eq(duet_cal_report_run(&c, names, 1, &mi, &p, rep), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "w2.json: measured on NVIDIA H200 with 132 SMs, but profile mi300x has 304"),
              "%s", duet_last_error());

    /* A start value of 0 cannot be a logarithm. */
    duet_hw_t zero = truth;
    zero.tile_overhead_us = 0;
    cr_assert_eq(duet_cal_fit_run(&c, names, 1, &zero, &p, &rep->model.fit), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "tile_overhead_us starts at 0"), "%s", duet_last_error());

    /* More parameters than rows. */
    duet_corpus_t few = t_corpus_header(132, 2);
    for (size_t i = 0; i < 3; i++)
        duet_corpus_add(&few, &c.rows[i]);
    cr_assert_eq(duet_cal_fit_run(&few, names, 1, &truth, &p, &rep->model.fit), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "3 measured rows cannot determine"), "%s", duet_last_error());

    /* Every row failed. */
    for (size_t i = 0; i < few.n; i++) {
        few.rows[i].ok = 0;
        snprintf(few.rows[i].error, sizeof(few.rows[i].error), "peer access denied");
    }
    cr_assert_eq(duet_cal_report_run(&few, names, 1, &truth, &p, rep), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "w2.json: all 3 rows are failed measurements (the first says: peer access"),
              "%s", duet_last_error());
    cr_assert_eq(duet_cal_fit_run(&few, names, 1, &truth, &p, &rep->model.fit), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "no measured row to fit (3 rows, 3 of them failed"), "%s", duet_last_error());

    /* No rows at all. */
    duet_corpus_t empty = t_corpus_header(132, 2);
    cr_assert_eq(duet_cal_report_run(&empty, names, 1, &truth, &p, rep), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "w2.json: the corpus has no rows"), "%s", duet_last_error());
    duet_cal_validation_t v;
    cr_assert_eq(duet_cal_validate(&empty, names, 1, &truth, NULL, NULL, &v), DUET_ERR_INVALID_ARG);

    /* More folds than shapes. */
    p.folds = 6;
    cr_assert_eq(duet_cal_report_run(&c, names, 1, &truth, &p, rep), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "6 folds need at least 6 shapes, but the corpora have 5"), "%s",
              duet_last_error());
    free(rep);
    duet_corpus_free(&empty);
    duet_corpus_free(&few);
    duet_corpus_free(&c);
}

/* Report of a quick fit: three constants, five folds (one shape each). */
static void quick_report(duet_corpus_t *c, const duet_hw_t *truth, duet_cal_report_t *rep)
{
    duet_cal_params_t p = duet_cal_default_params();
    cr_assert_eq(duet_cal_params_set_fit(&p, "gemm_eff_fp16,gemm_eff_bf16,link_gbs"), DUET_OK);
    p.folds = 5;
    duet_hw_t base = perturbed(truth, &p);
    cr_assert_eq(duet_cal_report_run(c, NULL, 1, &base, &p, rep), DUET_OK, "%s", duet_last_error());
}

Test(fit, cross_validation_holds_out_whole_shapes_deterministically, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_report_t *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    quick_report(&c, &truth, a);
    cr_assert_eq(a->shapes, 5);
    cr_assert_eq(a->model.folds, 5);
    int64_t held = 0;
    for (int f = 0; f < 5; f++) {
        /* One shape per fold, all 18 of its rows held out together. */
        cr_assert_eq(a->model.fold[f].shapes, 1, "fold %d", f);
        cr_assert_eq(a->model.fit.rows - a->model.fold[f].rows_train, 18, "fold %d", f);
        held += a->model.fit.rows - a->model.fold[f].rows_train;
        cr_assert_lt(a->model.fold[f].rms_log_held_out, 1e-6, "fold %d", f);
    }
    cr_assert_eq(held, a->model.fit.rows, "every row is held out exactly once");
    /* Noise-free rows and the true model: the held-out predictions are exact. */
    cr_assert_lt(a->model.held_out.ape_p95, 1e-6);
    cr_assert_eq(a->model.held_out.exact_pick, 1.0);
    cr_assert_gt(a->model.start.ape_median, 0.05, "the base profile is off");
    /* The reference rules were fitted and cross-validated on the fused op rows. */
    cr_assert_eq(a->seed.fit.n_params, 1);
    cr_assert_eq(a->seed.fit.rows, 30);
    cr_assert_eq(a->seed.folds, 5);

    /* The same corpus in reverse row order: the same folds, the same answers. */
    for (size_t i = 0; i < c.n / 2; i++) {
        duet_corpus_row_t tmp = c.rows[i];
        c.rows[i] = c.rows[c.n - 1 - i];
        c.rows[c.n - 1 - i] = tmp;
    }
    quick_report(&c, &truth, b);
    for (int f = 0; f < 5; f++) {
        cr_assert_eq(b->model.fold[f].rows_train, a->model.fold[f].rows_train, "fold %d", f);
        cr_assert(t_rel_eq(b->model.fold[f].rms_log_train + 1, a->model.fold[f].rms_log_train + 1, 1e-9));
    }
    /* (Picks are not compared: the synthetic corpus has configurations with equal times, and
     * which of two equal rows is "the best" follows the row order.) */
    cr_assert(t_rel_eq(b->model.held_out.ape_median + 1, a->model.held_out.ape_median + 1, 1e-9));
    cr_assert(t_rel_eq(b->model.held_out.regret_mean + 1, a->model.held_out.regret_mean + 1, 1e-9));
    free(a);
    free(b);
    duet_corpus_free(&c);
}

Test(fit, sources_and_report_name_the_corpora, T_TIMEOUT)
{
    duet_hw_t truth = truth_profile();
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.01);
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    quick_report(&c, &truth, rep);
    duet_cal_fit_t *fit = &rep->model.fit;
    const char *files[] = {"tuning_data/h200_world2.json", "w4.json"};
    duet_cal_fit_set_sources(fit, files, 2, "2026-12-01");
    const char *src = fit->hw.source[DUET_HW_F_link_gbs];
    cr_assert(strncmp(src, "fit: tuning_data/h200_world2.json w4.json, 2026-12-01, +-", 57) == 0, "%s", src);
    cr_assert(strstr(src, " GB/s") != NULL, "%s", src);
    cr_assert(strstr(fit->hw.source[DUET_HW_F_gemm_eff_fp16], "+-") != NULL);
    cr_assert_str_eq(fit->hw.source[DUET_HW_F_hbm_gbs], truth.source[DUET_HW_F_hbm_gbs]);
    /* Many corpora: the first names, then a count, within the source field. */
    const char *many[12];
    for (int i = 0; i < 12; i++)
        many[i] = "tuning_data/gfx942_world8_part.json";
    duet_cal_fit_set_sources(fit, many, 12, "2026-12-01");
    cr_assert(strstr(fit->hw.source[DUET_HW_F_link_gbs], " more, 2026-12-01, +-") != NULL, "%s",
              fit->hw.source[DUET_HW_F_link_gbs]);
    cr_assert_eq(duet_hw_validate(&fit->hw), DUET_OK, "%s", duet_last_error());

    /* The report file. */
    char path[96];
    t_tmp(path, sizeof(path), "report.json");
    cr_assert_eq(duet_cal_report_write_json(rep, files, 2, "h200", path), DUET_OK, "%s", duet_last_error());
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    static char text[1 << 16];
    size_t got = fread(text, 1, sizeof(text) - 1, f);
    text[got] = '\0';
    fclose(f);
    unlink(path);
    cJSON *o = cJSON_Parse(text);
    cr_assert_not_null(o, "the report is JSON");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "schema")->valuestring, "duet-calibration/2");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "corpora")), 2);
    cJSON *model = cJSON_GetObjectItem(o, "model");
    cJSON *params = cJSON_GetObjectItem(cJSON_GetObjectItem(model, "fit"), "params");
    cr_assert_eq(cJSON_GetArraySize(params), 3);
    cJSON *p0 = cJSON_GetArrayItem(params, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(p0, "name")->valuestring, "gemm_eff_fp16");
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(p0, "stderr")));
    cr_assert(cJSON_IsString(cJSON_GetObjectItem(cJSON_GetObjectItem(model, "fit"), "stop_reason")));
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(model, "held_out"), "exact_pick")));
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(model, "fold_fits")), 5);
    cr_assert(cJSON_IsObject(cJSON_GetObjectItem(o, "reference_rules")));
    cJSON_Delete(o);
    free(rep);
    duet_corpus_free(&c);
}

Test(fit, gsl_errors_return_as_duet_status_codes, T_TIMEOUT)
{
    cr_assert_eq(duet_cal_init(), DUET_OK);
    /* With GSL's default handler, a size mismatch would print and abort the process. */
    gsl_matrix *a = gsl_matrix_alloc(2, 2), *b = gsl_matrix_alloc(3, 3);
    cr_assert_eq(gsl_matrix_memcpy(a, b), GSL_EBADLEN);
    gsl_matrix_free(a);
    gsl_matrix_free(b);
    cr_assert_eq(duet__cal_gsl_error(GSL_ENOMEM, "fit: solver"), DUET_ERR_NO_MEMORY);
    cr_assert(strstr(duet_last_error(), "fit: solver: GSL: ") == duet_last_error(), "%s", duet_last_error());
    cr_assert_eq(duet__cal_gsl_error(GSL_EMAXITER, "fit"), DUET_ERR_NOT_CONVERGED);
    cr_assert_eq(duet__cal_gsl_error(GSL_ESING, "fit"), DUET_ERR_NOT_CONVERGED);
    cr_assert_eq(duet__cal_gsl_error(GSL_EBADLEN, "fit"), DUET_ERR_INTERNAL);
}
