/*
 * Ranking configurations by a prediction: time first; among times the prediction cannot tell
 * apart, the tie rule, and never the order of the input.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

static duet_rank_item_t item(double pred, int32_t comm_wgs, size_t idx)
{
    duet_rank_item_t it;
    memset(&it, 0, sizeof(it));
    it.pred = pred;
    it.cfg.mode = DUET_MODE_FUSED;
    it.cfg.num_wgs = 132;
    it.cfg.gemm_wgs = 132 - comm_wgs;
    it.cfg.comm_wgs = comm_wgs;
    it.cfg.tile = (duet_gemm_tile_t){256, 128, 64};
    it.cfg.cm = 256;
    it.cfg.cn = 64;
    it.cfg.group_m = 8;
    it.idx = idx;
    return it;
}

Test(rank, time_first_and_ties_with_the_most_collective_ctas_first, T_TIMEOUT)
{
    /* Five configurations tied at 1 ms (one 1e-12 above: floating-point resolution) and two
     * slower ones. */
    const int32_t comm[] = {0, 59, 5, 46, 29, 33, 16};
    const double pred[] = {1.0, 1.0, 1.0 + 1e-12, 1.0, 1.0, 1.2, 1.1};
    enum { N = sizeof(comm) / sizeof(comm[0]) };
    const int32_t want[] = {59, 46, 29, 5, 0, 16, 33};
    for (int order = 0; order < 2; order++) {
        duet_rank_item_t it[N];
        for (size_t i = 0; i < N; i++) {
            size_t j = order ? N - 1 - i : i; /* the same items, listed backwards */
            it[i] = item(pred[j], comm[j], j);
        }
        duet_rank_sort(it, N);
        for (size_t i = 0; i < N; i++)
            cr_assert_eq(it[i].cfg.comm_wgs, want[i], "order %d, rank %zu: %d CTAs, want %d", order, i,
                         it[i].cfg.comm_wgs, want[i]);
    }
}

Test(rank, ties_across_modes_and_tiles_and_short_lists, T_TIMEOUT)
{
    /* The collective's CTAs decide in either mode; equal ones go by configuration (fused first,
     * then the smaller tile), whatever the input order. */
    duet_rank_item_t it[4] = {item(2.0, 16, 0), item(2.0, 16, 1), item(2.0, 20, 2), item(2.0 + 1e-6, 40, 3)};
    it[0].cfg.mode = DUET_MODE_CONCURRENT;
    it[0].cfg.gemm_wgs = 116;
    it[1].cfg.tile = (duet_gemm_tile_t){128, 128, 64};
    duet_rank_sort(it, 4);
    cr_assert_eq(it[0].idx, 2); /* 20 collective CTAs */
    cr_assert_eq(it[1].idx, 1); /* fused, 16 */
    cr_assert_eq(it[2].idx, 0); /* concurrent, 16 */
    cr_assert_eq(it[3].idx, 3); /* 1e-6 slower is not a tie */
    duet_rank_sort(NULL, 0);
    duet_rank_sort(it, 1);
    cr_assert_eq(it[0].idx, 2);
}
