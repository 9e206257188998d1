/*
 * The calibration layer when memory runs out (tests/alloc_fail.h): a fit report with its folds and
 * a validation, each with its 1st, 2nd, ... allocation failing, report DUET_ERR_NO_MEMORY; the run
 * with memory then gives the figures of a run that never failed.
 */
#include "../alloc_fail.h"
#include <criterion/criterion.h>

#include "synth.h"

Test(cal_alloc_fail, report, .timeout = 120)
{
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_params_t p = duet_cal_default_params();
    cr_assert_eq(duet_cal_params_set_fit(&p, "gemm_eff_bf16,link_gbs"), DUET_OK);
    p.folds = 2;
    p.threads = 1;
    p.max_iter = 2;
    p.presearch = 0;
    duet_cal_report_t *rep = calloc(1, sizeof(*rep)), *clean = calloc(1, sizeof(*clean));
    cr_assert_eq(duet_cal_report_run(&c, NULL, 1, &truth, &p, clean), DUET_OK, "%s", duet_last_error());
    long runs = 0;
    T_EVERY_ALLOC_FAILS(duet_cal_report_run(&c, NULL, 1, &truth, &p, rep), (void)0, &runs);
    cr_assert_gt(runs, 10, "%ld", runs);
    cr_assert_eq(rep->rows_total, clean->rows_total);
    cr_assert_eq(rep->shapes, clean->shapes);
    cr_assert_eq(rep->model.held_out.ape_median, clean->model.held_out.ape_median);
    free(rep);
    free(clean);
    duet_corpus_free(&c);
}

Test(cal_alloc_fail, validation, .timeout = 120)
{
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    long runs = 0;
    duet_cal_validation_t *v = calloc(1, sizeof(*v)), *vclean = calloc(1, sizeof(*vclean));
    cr_assert_eq(duet_cal_validate(&c, NULL, 1, &truth, NULL, NULL, vclean), DUET_OK, "%s", duet_last_error());
    T_EVERY_ALLOC_FAILS(duet_cal_validate(&c, NULL, 1, &truth, NULL, NULL, v), (void)0, &runs);
    cr_assert_gt(runs, 0);
    cr_assert(memcmp(&v->model, &vclean->model, sizeof(v->model)) == 0, "the same figures");
    free(v);
    free(vclean);
    duet_corpus_free(&c);
}

Test(cal_alloc_fail, selection_and_evaluation, .timeout = 120)
{
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_candidates_t *cands = calloc(1, sizeof(*cands));
    cr_assert_eq(duet_cal_candidates_parse("a launch_us\nb link_gbs\n", "cands", &truth, cands), DUET_OK);
    duet_cal_params_t p = duet_cal_default_params();
    p.max_iter = 2;
    p.presearch = 0;
    p.threads = 1;
    duet_cal_selection_t *sel = calloc(1, sizeof(*sel)), *clean = calloc(1, sizeof(*clean));
    cr_assert_eq(duet_cal_select_run(&c, NULL, 1, &truth, cands, &p, 2, 2, clean), DUET_OK, "%s", duet_last_error());
    long runs = 0;
    T_EVERY_ALLOC_FAILS(duet_cal_select_run(&c, NULL, 1, &truth, cands, &p, 2, 2, sel), (void)0, &runs);
    cr_assert_gt(runs, 10, "%ld", runs);
    cr_assert_eq(sel->picked, clean->picked);
    cr_assert_eq(sel->fits, clean->fits);

    /* The same rows as both sweeps of a test set. */
    duet_cal_eval_t *e = calloc(1, sizeof(*e)), *eclean = calloc(1, sizeof(*eclean));
    cr_assert_eq(duet_cal_evaluate(&c, 1, &c, 1, &truth, NULL, NULL, eclean), DUET_OK, "%s", duet_last_error());
    T_EVERY_ALLOC_FAILS(duet_cal_evaluate(&c, 1, &c, 1, &truth, NULL, NULL, e), (void)0, &runs);
    cr_assert_gt(runs, 3, "%ld", runs);
    free(e);
    free(eclean);
    free(sel);
    free(clean);
    free(cands);
    duet_corpus_free(&c);
}
