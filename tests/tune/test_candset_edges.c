/*
 * The candidate set's edges: configurations that differ only in their comm fraction, a
 * configuration measured twice in either order, one workload on two SM counts, the inputs derive
 * refuses, and the clamping of fractions to what a device and a mode allow.
 */
#include "tune_util.h"

static const duet_gemm_tile_t T256 = {256, 256, 64};

/* A concurrent op row on a 100-SM device: gemm_wgs and comm_wgs are the fractions in hundredths. */
static duet_corpus_row_t conc_row(duet_workload_t wl, int32_t gemm, int32_t comm, double ms)
{
    return tt_row(wl, DUET_MODE_CONCURRENT, gemm + comm, gemm, comm, T256, ms);
}

static duet_workload_t shape(int s)
{
    return t_wl(1024 * (s + 1), 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
}

Test(candset_edges, configurations_that_differ_in_their_comm_fraction_only_are_two, T_TIMEOUT)
{
    /* A = (80, 12), B = (80, 20): s0 A 1.0 B 1.5, s1 A 1.5 B 1.0. Each covers one shape with the same
     * mean relative cost, 1.25: the tie goes to the lower key, here the lower comm fraction. */
    duet_corpus_t c = tt_corpus("sm_90", 100, 2);
    duet_corpus_row_t rows[4] = {conc_row(shape(0), 80, 12, 1.0), conc_row(shape(0), 80, 20, 1.5),
                                 conc_row(shape(1), 80, 20, 1.0), conc_row(shape(1), 80, 12, 1.5)};
    for (int i = 0; i < 4; i++)
        cr_assert_eq(duet_corpus_add(&c, &rows[i]), DUET_OK);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_OK, "%s", duet_last_error());
    const duet_tune_candset_arch_t *a = &set.archs[0];
    cr_assert_eq(a->n_order, 2);
    cr_assert_eq(a->order[0].mode, DUET_MODE_CONCURRENT);
    cr_assert(fabs(a->order[0].comm_frac - 0.12) < 1e-9, "%g", a->order[0].comm_frac);
    cr_assert(fabs(a->order[1].comm_frac - 0.20) < 1e-9, "%g", a->order[1].comm_frac);
    cr_assert(fabs(a->order[0].gemm_frac - 0.80) < 1e-9 && fabs(a->order[1].gemm_frac - 0.80) < 1e-9);
    cr_assert(t_rel_eq(a->order[0].mean_rel, 1.25, 1e-12), "%.17g", a->order[0].mean_rel);
    cr_assert_eq(a->order[0].gain, 1);
    cr_assert_eq(a->order[1].gain, 1);
    duet_tune_candset_free(&set);
    duet_corpus_free(&c);
}

Test(candset_edges, a_configuration_measured_twice_keeps_its_lower_time_in_either_order, T_TIMEOUT)
{
    /* A measured at 1.0 and 1.2, B at 1.1: with A's lower time A is the best and B is 10 % off (not
     * covering at 3 %), so the set is A alone; had 1.2 been kept, B would be the best. */
    for (int order = 0; order < 2; order++) {
        duet_corpus_t c = tt_corpus("sm_90", 100, 2);
        duet_corpus_row_t a1 = conc_row(shape(0), 80, 20, order ? 1.2 : 1.0);
        duet_corpus_row_t a2 = conc_row(shape(0), 80, 20, order ? 1.0 : 1.2);
        duet_corpus_row_t b = conc_row(shape(0), 60, 40, 1.1);
        cr_assert_eq(duet_corpus_add(&c, &a1), DUET_OK);
        cr_assert_eq(duet_corpus_add(&c, &b), DUET_OK);
        cr_assert_eq(duet_corpus_add(&c, &a2), DUET_OK);
        duet_tune_candset_t set;
        cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_OK, "%s", duet_last_error());
        const duet_tune_candset_arch_t *a = &set.archs[0];
        cr_assert_eq(a->n_order, 1, "order %d", order);
        cr_assert(fabs(a->order[0].gemm_frac - 0.80) < 1e-9, "order %d: %g", order, a->order[0].gemm_frac);
        cr_assert_eq(a->order[0].mean_rel, 1.0);
        duet_tune_candset_free(&set);
        duet_corpus_free(&c);
    }
}

Test(candset_edges, one_workload_on_two_sm_counts_is_two_shapes, T_TIMEOUT)
{
    /* The same workload measured on 132 and on 114 SMs of one arch: two shapes, and the SM counts
     * listed in ascending order whatever the corpora's order. */
    duet_corpus_t cs[2] = {tt_corpus("sm_90", 132, 2), tt_corpus("sm_90", 114, 2)};
    duet_corpus_row_t r0 = tt_row(shape(0), DUET_MODE_FUSED, 132, 99, 33, T256, 1.0);
    duet_corpus_row_t r1 = tt_row(shape(0), DUET_MODE_FUSED, 114, 57, 57, T256, 1.0);
    cr_assert_eq(duet_corpus_add(&cs[0], &r0), DUET_OK);
    cr_assert_eq(duet_corpus_add(&cs[1], &r1), DUET_OK);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(cs, 2, 0.03, &set), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(set.n_archs, 1);
    const duet_tune_candset_arch_t *a = &set.archs[0];
    cr_assert_eq(a->n_shapes, 2);
    cr_assert_eq(a->n_sms, 2);
    cr_assert_eq(a->sms[0], 114);
    cr_assert_eq(a->sms[1], 132);
    /* 99/132 = 0.75 and 57/114 = 0.5: two configurations, each the best of its shape. */
    cr_assert_eq(a->n_order, 2);
    cr_assert_eq(a->coverage[1].share_within_tol, 1.0);
    duet_tune_candset_free(&set);
    duet_corpus_free(&cs[0]);
    duet_corpus_free(&cs[1]);
}

Test(candset_edges, what_derive_refuses, T_TIMEOUT)
{
    duet_corpus_t c = tt_corpus("sm_90", 100, 2);
    duet_corpus_row_t r = conc_row(shape(0), 80, 20, 1.0);
    cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, NAN, &set), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "candidate set: tolerance nan is outside [0, 1]");
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 1.5, &set), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "candidate set: tolerance 1.5 is outside [0, 1]");
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 1.0, &set), DUET_OK, "a tolerance of 1 is allowed");
    duet_tune_candset_free(&set);

    /* A corpus without an arch (":" strips to nothing) or without an SM count. */
    snprintf(c.arch, sizeof(c.arch), ":sramecc+");
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "candidate set: corpus 0 names no arch or SM count");
    snprintf(c.arch, sizeof(c.arch), "sm_90");
    c.sms = 0;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "candidate set: corpus 0 names no arch or SM count");
    duet_corpus_free(&c);

    /* Only rows the set does not take: not the operation, failed, no time, a K split. */
    c = tt_corpus("sm_90", 100, 2);
    duet_corpus_row_t skip[4] = {conc_row(shape(0), 80, 20, 1.0), conc_row(shape(0), 80, 20, 0),
                                 conc_row(shape(0), 80, 20, 1.0), conc_row(shape(0), 80, 20, 1.0)};
    skip[0].kind = DUET_ROW_COMM_ALONE;
    skip[2].ms = 0; /* measured, yet no time: not a time the set can compare */
    skip[3].cfg.split_k = 2;
    for (int i = 0; i < 4; i++)
        cr_assert_eq(duet_corpus_add(&c, &skip[i]), DUET_OK, "%d: %s", i, duet_last_error());
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "candidate set: the corpora of sm_90 hold no measured op rows");
    duet_corpus_free(&c);
}

Test(candset_edges, fractions_are_clamped_to_what_the_device_and_mode_allow, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200"); /* 132 SMs */
    static const struct {
        int32_t mode;
        double g, k;
        int32_t num, gemm, comm;
    } cases[] = {
        /* Fused: num = round((g + k) x 132) in [1, 132]; gemm = round(g x 132) in [0, num]. */
        {DUET_MODE_FUSED, 0.9, 0.3, 132, 119, 13},
        {DUET_MODE_FUSED, 1.5, 0.0, 132, 132, 0},
        {DUET_MODE_FUSED, -0.1, 0.1, 1, 0, 1},
        /* Concurrent: gemm = round(g x 132) in [1, 132], comm = round(k x 132) >= 1, num their sum. */
        {DUET_MODE_CONCURRENT, 0.0, 0.5, 67, 1, 66},
        {DUET_MODE_CONCURRENT, 2.0, 0.0, 133, 132, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_tune_cand_t c = {cases[i].mode, cases[i].g, cases[i].k, T256, 1, 1.0, 0};
        duet_config_t cfg = duet_tune_cand_config(&c, &hw, 128, 32, 4);
        cr_assert_eq(cfg.mode, cases[i].mode, "%zu", i);
        cr_assert_eq(cfg.num_wgs, cases[i].num, "%zu: num_wgs %d", i, cfg.num_wgs);
        cr_assert_eq(cfg.gemm_wgs, cases[i].gemm, "%zu: gemm_wgs %d", i, cfg.gemm_wgs);
        cr_assert_eq(cfg.comm_wgs, cases[i].comm, "%zu: comm_wgs %d", i, cfg.comm_wgs);
        cr_assert(cfg.cm == 128 && cfg.cn == 32 && cfg.group_m == 4, "%zu: the caller's comm tile and group_m", i);
    }
    /* 0 keeps the defaults. */
    duet_tune_cand_t c = {DUET_MODE_FUSED, 0.75, 0.25, T256, 1, 1.0, 0};
    duet_config_t cfg = duet_tune_cand_config(&c, &hw, 0, 0, 0), d = duet_config_default(&hw, DUET_MODE_FUSED);
    cr_assert(cfg.cm == d.cm && cfg.cn == d.cn && cfg.group_m == d.group_m);
    /* No set finds nothing; an arch is found by its stripped name. */
    cr_assert_null(duet_tune_candset_find(NULL, "sm_90"));
}
