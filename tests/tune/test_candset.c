/*
 * The candidate set: the greedy cover on hand-built corpora with a known answer, the coverage
 * curve, the file, the mapping of fractions to a device.
 */
#include "tune_util.h"

static const duet_gemm_tile_t T256x128 = {256, 128, 64}, T256x256 = {256, 256, 64}, T128x128 = {128, 128, 64};

/*
 * Five shapes x four fused configurations on a 100-SM device (so gemm_wgs/100 is the fraction):
 *        c0 (75, 256x128)  c1 (90, 256x256)  c2 (60, 128x128)  c3 (95, 256x128)
 *   s0   1.00              1.02              1.50              1.10
 *   s1   1.20              1.00              1.40              1.01
 *   s2   1.10              1.01              1.00              1.20
 *   s3   1.00              1.30              1.05              1.02
 *   s4   1.50              1.40              1.00              c3_s4
 * Within 3 %: c0 covers s0 s3; c1 s0 s1 s2; c2 s2 s4; c3 s1 s3 (and s4 never).
 */
static duet_corpus_t grid_corpus(double c3_s4)
{
    static const double ms[5][4] = {{1.00, 1.02, 1.50, 1.10},
                                    {1.20, 1.00, 1.40, 1.01},
                                    {1.10, 1.01, 1.00, 1.20},
                                    {1.00, 1.30, 1.05, 1.02},
                                    {1.50, 1.40, 1.00, 0}};
    const int32_t gw[4] = {75, 90, 60, 95};
    const duet_gemm_tile_t tiles[4] = {T256x128, T256x256, T128x128, T256x128};
    duet_corpus_t c = tt_corpus("gfx942:sramecc+:xnack-", 100, 2);
    for (int s = 0; s < 5; s++) {
        duet_workload_t wl = t_wl(1024 * (s + 1), 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
        for (int k = 0; k < 4; k++) {
            double v = s == 4 && k == 3 ? c3_s4 : ms[s][k];
            duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, 100, gw[k], 100 - gw[k], tiles[k], v);
            cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
        }
        /* Rows that are not the operation do not count. */
        duet_corpus_row_t g = tt_row(wl, DUET_MODE_FUSED, 100, 100, 0, T256x256, 0.01);
        g.kind = DUET_ROW_GEMM_ALONE;
        cr_assert_eq(duet_corpus_add(&c, &g), DUET_OK);
        /* Nor do K-split points: the set has no split, and this one must not lend its time to
         * c0, the unsplit configuration of the same key (it would cover every shape). */
        duet_corpus_row_t k2 = tt_row(wl, DUET_MODE_FUSED, 100, gw[0], 100 - gw[0], tiles[0], 0.5);
        k2.cfg.split_k = 2;
        cr_assert_eq(duet_corpus_add(&c, &k2), DUET_OK);
    }
    return c;
}

static void expect_cand(const duet_tune_cand_t *c, double gf, duet_gemm_tile_t t, int gain)
{
    cr_assert_eq(c->mode, DUET_MODE_FUSED);
    cr_assert(fabs(c->gemm_frac - gf) < 1e-9, "gemm_frac %g, want %g", c->gemm_frac, gf);
    cr_assert(fabs(c->gemm_frac + c->comm_frac - 1.0) < 1e-9);
    cr_assert(c->tile.bm == t.bm && c->tile.bn == t.bn && c->tile.bk == t.bk);
    cr_assert_eq(c->gain, gain);
    cr_assert_eq(c->shape_best, 0);
}

static void expect_cov(const duet_tune_coverage_t *v, int k, double share, double mean, double max)
{
    cr_assert_eq(v->k, k);
    cr_assert(t_rel_eq(v->share_within_tol, share, 1e-12), "k %d: share %g, want %g", k, v->share_within_tol, share);
    cr_assert(t_rel_eq(v->mean_slowdown, mean, 1e-12), "k %d: mean %.17g, want %g", k, v->mean_slowdown, mean);
    cr_assert(t_rel_eq(v->max_slowdown, max, 1e-12), "k %d: max %g, want %g", k, v->max_slowdown, max);
    cr_assert_eq(v->n_measured, 5);
}

Test(candset, greedy_cover_with_ties_to_the_lowest_mean_cost, T_TIMEOUT)
{
    duet_corpus_t c = grid_corpus(1.60);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(set.n_archs, 1);
    const duet_tune_candset_arch_t *a = &set.archs[0];
    cr_assert_str_eq(a->arch, "gfx942");
    cr_assert_eq(a->n_shapes, 5);
    cr_assert_eq(a->n_sms, 1);
    cr_assert_eq(a->sms[0], 100);
    cr_assert_eq(a->worlds[0], 2);
    /* Round 1: c1 covers three shapes. Round 2: c0, c2, c3 each cover one more; mean relative
     * costs 1.16, 1.19, 1.186: c0. Round 3: only c2 covers s4. Then nothing gains: c3 is left out. */
    cr_assert_eq(a->n_order, 3);
    expect_cand(&a->order[0], 0.90, T256x256, 3);
    expect_cand(&a->order[1], 0.75, T256x128, 1);
    expect_cand(&a->order[2], 0.60, T128x128, 1);
    cr_assert(t_rel_eq(a->order[1].mean_rel, 1.16, 1e-12), "%.17g", a->order[1].mean_rel);
    cr_assert_eq(a->n_coverage, 3);
    expect_cov(&a->coverage[0], 1, 0.6, 5.73 / 5, 1.4);
    expect_cov(&a->coverage[1], 2, 0.8, 5.41 / 5, 1.4);
    expect_cov(&a->coverage[2], 3, 1.0, 1.0, 1.0);
    duet_tune_candset_free(&set);
    duet_corpus_free(&c);
}

Test(candset, a_failed_row_is_a_missing_configuration, T_TIMEOUT)
{
    /* c3 failed on s4: its mean over the four shapes it has drops to 1.0825, below c0's 1.16, so it
     * wins the round-2 tie, and the curve's k = 2 changes accordingly. */
    duet_corpus_t c = grid_corpus(0);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_OK);
    const duet_tune_candset_arch_t *a = &set.archs[0];
    cr_assert_eq(a->n_order, 3);
    expect_cand(&a->order[0], 0.90, T256x256, 3);
    expect_cand(&a->order[1], 0.95, T256x128, 1);
    expect_cand(&a->order[2], 0.60, T128x128, 1);
    cr_assert(t_rel_eq(a->order[1].mean_rel, 4.33 / 4, 1e-12));
    expect_cov(&a->coverage[1], 2, 0.8, 5.45 / 5, 1.4);
    expect_cov(&a->coverage[2], 3, 1.0, 5.04 / 5, 1.02);
    duet_tune_candset_free(&set);

    /* A tolerance of 0 keeps exactly each shape's best: c0 (s0, s3), c1 (s1), c2 (s2, s4). */
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.0, &set), DUET_OK);
    a = &set.archs[0];
    cr_assert_eq(a->n_order, 3);
    cr_assert_eq(a->order[0].gain + a->order[1].gain + a->order[2].gain, 5);
    cr_assert(t_rel_eq(a->coverage[2].max_slowdown, 1.0, 1e-15));
    duet_tune_candset_free(&set);
    duet_corpus_free(&c);
}

Test(candset, archs_are_separate_and_the_file_round_trips, T_TIMEOUT)
{
    char dir[64], path[128];
    tt_tmpdir(dir, sizeof(dir));
    duet_corpus_t cs[2];
    cs[0] = grid_corpus(1.60);
    /* An H200 corpus: one shape, two configurations, 132 SMs. */
    cs[1] = tt_corpus("sm_90", 132, 4);
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_REDUCE, 1024, 2048, 4);
    duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, 132, 99, 33, T256x128, 0.9);
    duet_corpus_add(&cs[1], &r);
    r = tt_row(wl, DUET_MODE_CONCURRENT, 132, 120, 12, T256x256, 0.8);
    duet_corpus_add(&cs[1], &r);
    duet_tune_candset_t set, back;
    cr_assert_eq(duet_tune_candset_derive(cs, 2, 0.03, &set), DUET_OK);
    cr_assert_eq(set.n_archs, 2);
    cr_assert_str_eq(set.archs[0].arch, "gfx942");
    cr_assert_str_eq(set.archs[1].arch, "sm_90");
    cr_assert_eq(set.archs[1].n_order, 1);
    cr_assert_eq(set.archs[1].order[0].mode, DUET_MODE_CONCURRENT);
    cr_assert(fabs(set.archs[1].order[0].gemm_frac - 0.909091) < 1e-12, "%.17g", set.archs[1].order[0].gemm_frac);

    snprintf(path, sizeof(path), "%s/candidate_set.json", dir);
    const char *src[2] = {"a.json", "b.json"};
    cr_assert_eq(duet_tune_candset_save(&set, src, 2, path), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_tune_candset_load(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.n_archs, 2);
    cr_assert(t_rel_eq(back.tol, 0.03, 1e-15));
    cr_assert_str_eq(back.tiles, DUET_TILE_LIST_VERSION);
    for (size_t a = 0; a < 2; a++) {
        cr_assert_str_eq(back.archs[a].arch, set.archs[a].arch);
        cr_assert_eq(back.archs[a].n_order, set.archs[a].n_order);
        cr_assert_eq(back.archs[a].n_coverage, set.archs[a].n_coverage);
        for (size_t i = 0; i < set.archs[a].n_order; i++) {
            cr_assert_eq(back.archs[a].order[i].mode, set.archs[a].order[i].mode);
            cr_assert_eq(back.archs[a].order[i].gemm_frac, set.archs[a].order[i].gemm_frac);
            cr_assert_eq(back.archs[a].order[i].tile.bn, set.archs[a].order[i].tile.bn);
            cr_assert_eq(back.archs[a].order[i].gain, set.archs[a].order[i].gain);
        }
    }
    cr_assert(t_rel_eq(back.archs[0].coverage[0].mean_slowdown, 1.146, 1e-12)); /* written with 4 decimals */
    cr_assert_not_null(duet_tune_candset_find(&back, "gfx942:xnack+"));
    cr_assert_null(duet_tune_candset_find(&back, "gfx950"));

    /* Fractions transfer across SM counts: 0.75 of 304 CUs is 228, of 132 SMs 99. */
    duet_hw_t mi = t_hw("mi300x"), h = t_hw("h200");
    const duet_tune_cand_t *c0 = &back.archs[0].order[1];
    duet_config_t cfg = duet_tune_cand_config(c0, &mi, 0, 0, 0);
    cr_assert_eq(cfg.num_wgs, 304);
    cr_assert_eq(cfg.gemm_wgs, 228);
    cr_assert_eq(cfg.comm_wgs, 76);
    cr_assert_eq(cfg.cm, 256);
    cfg = duet_tune_cand_config(c0, &h, 128, 128, 4);
    cr_assert_eq(cfg.gemm_wgs, 99);
    cr_assert_eq(cfg.comm_wgs, 33);
    cr_assert_eq(cfg.cn, 128);
    cr_assert_eq(cfg.group_m, 4);
    /* The concurrent H200 entry gives back its own CTA counts on 132 SMs. */
    cfg = duet_tune_cand_config(&back.archs[1].order[0], &h, 0, 0, 0);
    cr_assert_eq(cfg.gemm_wgs, 120);
    cr_assert_eq(cfg.comm_wgs, 12);

    /* A file with a tile this build lacks keeps the rest and drops the curve. */
    FILE *f = fopen(path, "rb");
    char buf[1 << 15];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    char *t = strstr(buf, "\"128x128x64\"");
    cr_assert_not_null(t);
    memcpy(t, "\"96x128x64\" ", 12);
    f = fopen(path, "wb");
    fputs(buf, f);
    fclose(f);
    duet_tune_candset_t dropped;
    cr_assert_eq(duet_tune_candset_load(path, &dropped), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(dropped.archs[0].n_order, 2);
    cr_assert_eq(dropped.archs[0].n_coverage, 0);
    duet_tune_candset_free(&dropped);

    f = fopen(path, "wb");
    fputs("{\"schema\": \"duet-candidates/0\"}", f);
    fclose(f);
    cr_assert_eq(duet_tune_candset_load(path, &dropped), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "not a candidate set") != NULL);

    duet_tune_candset_free(&back);
    duet_tune_candset_free(&set);
    duet_corpus_free(&cs[0]);
    duet_corpus_free(&cs[1]);
    tt_rmdir(dir);
}

Test(candset, bad_inputs_are_refused, T_TIMEOUT)
{
    duet_corpus_t c = tt_corpus("sm_90", 132, 2);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_ERR_INVALID_ARG); /* no rows */
    cr_assert(strstr(duet_last_error(), "no measured op rows") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_tune_candset_derive(&c, 0, 0.03, &set), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_tune_candset_derive(&c, 1, -0.1, &set), DUET_ERR_INVALID_ARG);
    duet_corpus_free(&c);
}
