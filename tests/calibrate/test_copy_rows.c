/*
 * Copy-mode corpus rows, as `duet calibrate collect --grid w1` records them (the collective on the
 * copy engines on 1 or 2 copy streams, beside the GEMM on every SM and alone): the corpus keeps
 * them through a save and a load, the fit's default parameter list gains the copy engines'
 * constants only with them, and their times determine those constants (a synthetic corpus
 * "measured" by the fluid model on a profile whose ce_* values are known).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "synth.h"

/* The w1 grid's copy rows of one all_gather on `truth`: at W = 1 one stream (one local copy), at
 * W = 2 one and two streams (a remote copy and the local one), each beside the GEMM and alone. */
static void t_add_copy_rows(duet_corpus_t *c, const duet_hw_t *truth, int32_t world)
{
    duet_sim_ws_t *ws = NULL;
    if (duet_sim_ws_create(&ws) != DUET_OK)
        abort();
    static const int64_t mcs[] = {1024, 4096};
    for (size_t s = 0; s < sizeof(mcs) / sizeof(mcs[0]); s++) {
        duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, mcs[s], 8192, world);
        for (int32_t q = 1; q <= world && q <= 2; q++) {
            duet_config_t cfg = duet_config_default(truth, DUET_MODE_COPY);
            cfg.num_wgs = cfg.gemm_wgs = truth->n_sms;
            cfg.comm_wgs = q;
            t_add_sim(c, ws, &duet_sim_policy_fluid, truth, DUET_ROW_OP, wl, cfg, 0);
            t_add_sim(c, ws, &duet_sim_policy_fluid, truth, DUET_ROW_COMM_ALONE, wl, cfg, 0);
        }
    }
    duet_sim_ws_destroy(ws);
}

Test(copy_rows, kept_by_the_corpus_and_named_in_the_fit, T_TIMEOUT)
{
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_corpus_header(truth.n_sms, 2);
    t_add_copy_rows(&c, &truth, 2);
    /* 2 shapes x 2 streams x (beside the GEMM, alone) = 8 rows. */
    cr_assert_eq(c.n, 8);
    char path[512];
    t_tmp(path, sizeof(path), "copy_rows.json");
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK, "%s", duet_last_error());
    duet_corpus_t back;
    cr_assert_eq(duet_corpus_load(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.n, 8);
    for (size_t i = 0; i < back.n; i++) {
        cr_assert_eq(back.rows[i].cfg.mode, DUET_MODE_COPY, "row %zu", i);
        cr_assert_eq(back.rows[i].cfg.comm_wgs, c.rows[i].cfg.comm_wgs, "row %zu", i);
        cr_assert_eq(back.rows[i].kind, c.rows[i].kind, "row %zu", i);
        cr_assert(t_rel_eq(back.rows[i].ms, c.rows[i].ms, 1e-6), "row %zu: %g against %g", i, back.rows[i].ms,
                  c.rows[i].ms);
    }
    /* The default list gains the five constants the copy rows depend on, in this order. */
    duet_cal_params_t p = duet_cal_default_params(), q = p;
    cr_assert_eq(duet_cal_params_set_default_fit(&p, &back, 1), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.n_fit, q.n_fit + 5);
    static const int32_t ce[] = {DUET_HW_F_ce_gbs, DUET_HW_F_ce_local_gbs, DUET_HW_F_ce_copy_us, DUET_HW_F_ce_op_us,
                                 DUET_HW_F_ce_gemm_stretch};
    for (int i = 0; i < 5; i++)
        cr_assert_eq(p.fit[q.n_fit + i], ce[i], "%d", i);
    duet_corpus_free(&back);
    duet_corpus_free(&c);
}

/* Fit `names` from `base` on c: the fitted profile. */
static duet_hw_t t_fit(const duet_corpus_t *c, const duet_hw_t *base, const char *names)
{
    duet_cal_params_t p = duet_cal_default_params();
    cr_assert_eq(duet_cal_params_set_fit(&p, names), DUET_OK);
    duet_cal_fit_t fit;
    cr_assert_eq(duet_cal_fit_run(c, NULL, 1, base, &p, &fit), DUET_OK, "%s", duet_last_error());
    return fit.hw;
}

Test(copy_rows, determine_the_copy_constants, T_TIMEOUT)
{
    /* The truth: local copies at 1500 GB/s, the GEMM 30 % slower beside the copies. */
    duet_hw_t truth = t_hw("h200");
    truth.ce_local_gbs = 1500;
    truth.ce_gemm_stretch = 0.3;
    duet_hw_t base = truth;
    base.ce_local_gbs = 2150;
    base.ce_gemm_stretch = 0.15;
    /* W = 1: one local copy per operation (2 shapes x 1 stream x 2 rows); its rate comes back. */
    duet_corpus_t c1 = t_corpus_header(truth.n_sms, 1);
    t_add_copy_rows(&c1, &truth, 1);
    cr_assert_eq(c1.n, 4);
    duet_hw_t fit = t_fit(&c1, &base, "ce_local_gbs");
    cr_assert(t_rel_eq(fit.ce_local_gbs, 1500, 0.01), "%g", fit.ce_local_gbs);
    /* W = 2 (a remote copy and the local one; 2 shapes x 2 streams x 2 rows): the stretch comes back.
     * At W = 1 the fluid model's prediction does not depend on ce_gemm_stretch, so only W = 2 rows
     * can fix it. */
    duet_corpus_t c2 = t_corpus_header(truth.n_sms, 2);
    t_add_copy_rows(&c2, &truth, 2);
    cr_assert_eq(c2.n, 8);
    base.ce_local_gbs = 1500; /* as the W = 1 rows gave it */
    fit = t_fit(&c2, &base, "ce_gemm_stretch");
    cr_assert(t_rel_eq(fit.ce_gemm_stretch, 0.3, 0.01), "%g", fit.ce_gemm_stretch);
    duet_corpus_free(&c2);
    duet_corpus_free(&c1);
}
