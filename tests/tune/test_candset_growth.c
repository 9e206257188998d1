/*
 * The candidate set's table of (shape, configuration) times grows as rows arrive: its columns
 * double from 64 when the 65th configuration comes, and every time measured before must keep its
 * cell (the re-layout copies row by row into the wider stride). A scrambled cell changes which
 * configurations the greedy ordering takes, which these tests pin from times chosen by hand.
 */
#include "tune_util.h"

/* Three shapes (M = 1024, 2048, 3072) and 70 fused configurations on 132 SMs (gemm_wgs 1 + c,
 * comm_wgs 131 - c), added configuration by configuration, every shape measuring every one:
 *   shape A: c = 0 at 1.0 ms, every other at 2.0;
 *   shape B: c = 1 at 1.0, c = 0 at 1.01 (within 3 %), every other at 2.0;
 *   shape C: c = 68 at 1.0 (a column past the first 64), every other at 2.0. */
static double time_of(int shape, int c)
{
    if (shape == 0)
        return c == 0 ? 1.0 : 2.0;
    if (shape == 1)
        return c == 1 ? 1.0 : c == 0 ? 1.01 : 2.0;
    return c == 68 ? 1.0 : 2.0;
}

Test(candset_growth, times_keep_their_cells_when_the_table_grows_past_64_configurations, T_TIMEOUT)
{
    duet_corpus_t corpus = tt_corpus("sm_90", 132, 2);
    for (int c = 0; c < 70; c++)
        for (int s = 0; s < 3; s++) {
            duet_workload_t wl = t_wl(1024 * (s + 1), 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
            duet_corpus_row_t r =
                tt_row(wl, DUET_MODE_FUSED, 132, 1 + c, 131 - c, (duet_gemm_tile_t){256, 128, 64}, time_of(s, c));
            cr_assert_eq(duet_corpus_add(&corpus, &r), DUET_OK, "%s", duet_last_error());
        }
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&corpus, 1, 0.03, &set), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(set.n_archs, 1);
    const duet_tune_candset_arch_t *a = &set.archs[0];
    cr_assert_eq(a->n_shapes, 3);
    /* Greedy: c = 0 covers A and B (1.01 <= 1.03 x 1.0); then only C is left, which c = 68 covers;
     * then nothing is left. */
    cr_assert_eq(a->n_order, 2);
    cr_assert_eq(a->order[0].gain, 2);
    cr_assert(fabs(a->order[0].gemm_frac - 1.0 / 132) < 1e-6 && fabs(a->order[0].comm_frac - 131.0 / 132) < 1e-6,
              "%g %g", a->order[0].gemm_frac, a->order[0].comm_frac);
    cr_assert(fabs(a->order[0].mean_rel - (1.0 + 1.01 + 2.0) / 3) < 1e-12, "%.15g", a->order[0].mean_rel);
    cr_assert_eq(a->order[1].gain, 1);
    cr_assert(fabs(a->order[1].gemm_frac - 69.0 / 132) < 1e-6, "%g", a->order[1].gemm_frac);
    cr_assert(fabs(a->order[1].mean_rel - (2.0 + 2.0 + 1.0) / 3) < 1e-12, "%.15g", a->order[1].mean_rel);
    /* Coverage: with c = 0 alone, A and B are within 3 % (C at 2x); with c = 68 too, all three. */
    cr_assert_eq(a->n_coverage, 2);
    cr_assert(fabs(a->coverage[0].share_within_tol - 2.0 / 3) < 1e-12);
    cr_assert(fabs(a->coverage[0].mean_slowdown - (1.0 + 1.01 + 2.0) / 3) < 1e-12, "%.15g",
              a->coverage[0].mean_slowdown);
    cr_assert_eq(a->coverage[0].max_slowdown, 2.0);
    cr_assert_eq(a->coverage[1].share_within_tol, 1.0);
    cr_assert(fabs(a->coverage[1].mean_slowdown - (1.0 + 1.01 + 1.0) / 3) < 1e-12);
    cr_assert(fabs(a->coverage[1].max_slowdown - 1.01) < 1e-12);
    duet_tune_candset_free(&set);
    duet_corpus_free(&corpus);
}

/* The same with the shapes growing past 64 rows: 70 shapes of one configuration pair, the fast
 * one measured first for every shape, the slow one after the table has grown. */
Test(candset_growth, times_keep_their_cells_when_the_table_grows_past_64_shapes, T_TIMEOUT)
{
    duet_corpus_t corpus = tt_corpus("sm_90", 132, 2);
    for (int pass = 0; pass < 2; pass++)
        for (int s = 0; s < 70; s++) {
            duet_workload_t wl = t_wl(128 * (s + 1), 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
            /* pass 0: config X (gemm 100) at 1.0 on every shape; pass 1: config Y (gemm 120) at 1.5,
             * except shape 69 where Y is 0.5 (so Y covers shape 69 alone, X the other 69). */
            int32_t g = pass == 0 ? 100 : 120;
            double ms = pass == 0 ? 1.0 : s == 69 ? 0.5 : 1.5;
            duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, 132, g, 132 - g, (duet_gemm_tile_t){256, 128, 64}, ms);
            cr_assert_eq(duet_corpus_add(&corpus, &r), DUET_OK, "%s", duet_last_error());
        }
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&corpus, 1, 0.03, &set), DUET_OK, "%s", duet_last_error());
    const duet_tune_candset_arch_t *a = &set.archs[0];
    cr_assert_eq(a->n_shapes, 70);
    cr_assert_eq(a->n_order, 2);
    cr_assert_eq(a->order[0].gain, 69);
    cr_assert(fabs(a->order[0].gemm_frac - 100.0 / 132) < 1e-6);
    /* X: 1.0 / 1.0 on 69 shapes and 1.0 / 0.5 on shape 69. */
    cr_assert(fabs(a->order[0].mean_rel - (69.0 + 2.0) / 70) < 1e-12, "%.15g", a->order[0].mean_rel);
    cr_assert_eq(a->order[1].gain, 1);
    cr_assert(fabs(a->order[1].mean_rel - (69 * 1.5 + 1.0) / 70) < 1e-12, "%.15g", a->order[1].mean_rel);
    duet_tune_candset_free(&set);
    duet_corpus_free(&corpus);
}
