/*
 * The random GEMM benchmark's draws and its K-split rule on an SM budget: `duet bench --gemm-only
 * --random N --min-dim 512` draws GEMMs without a collective whose every extent is at least 512
 * (model/random.c), and tries a K split on n SMs by duet_split_k_worth_trying_on().
 */
#include <criterion/criterion.h>

#include "../test_util.h"

/* The bench's draw: GEMMs only (no collective), extents in [512, 16384], small M and K in
 * [512, 1024]; every extent in range, about a third of them not a multiple of 64. */
Test(random_min, gemm_only_sets_keep_every_extent_in_range, T_TIMEOUT)
{
    duet_random_params_t p = duet_random_default_params();
    p.seed = 2026;
    p.min_dim = 512;
    p.max_dim = 16384;
    p.colls = 1u << DUET_COLL_NONE;
    duet_workloads_t w;
    cr_assert_eq(duet_workloads_random(&p, 400, &w), DUET_OK);
    int ragged = 0, small = 0;
    for (size_t i = 0; i < w.n; i++) {
        const duet_workload_t *x = &w.w[i];
        cr_assert_eq(x->coll, DUET_COLL_NONE);
        int64_t e[3] = {x->m, x->n, x->k};
        for (int j = 0; j < 3; j++) {
            cr_assert(e[j] >= 512 && e[j] <= 16384, "shape %zu extent %d = %lld", i, j, (long long)e[j]);
            ragged += e[j] % 64 != 0;
        }
        small += x->m <= 1024 || x->k <= 1024;
    }
    /* 1200 extents with a share 1/3 ragged: 400 expected, 6 sigma of binomial(1200, 1/3) is 98. */
    cr_assert(ragged > 302 && ragged < 498, "%d ragged extents", ragged);
    /* Skinny M and small K are 30 % of the shapes (and a log-uniform draw in [512, 16384] lands
     * at or below 1024 a fifth of the time on its own), so far more than a tenth have one. */
    cr_assert(small > 40, "%d shapes with a small M or K", small);
    duet_workloads_free(&w);
}

Test(random_min, extents_below_the_minimum_are_refused, T_TIMEOUT)
{
    duet_random_params_t p = duet_random_default_params();
    p.min_dim = 512;
    p.skinny_max = 384; /* a small extent below the minimum is no range */
    duet_workloads_t w = {NULL, 0};
    cr_assert_eq(duet_workloads_random(&p, 4, &w), DUET_ERR_INVALID_ARG);
    cr_assert_null(w.w);
}

/*
 * 640x3584x6144 in 256x128 tiles: ceil(640 / 256) = 3 tile-rows x 3584 / 128 = 28 tile-columns =
 * 84 C tiles, 96 K steps. On 132 SMs a split into S parts is worth trying while 84 (S - 1) < 264:
 * S = 2, 3, 4 (84, 168, 252), not 5 (336). On 66 SMs while 84 (S - 1) < 132: S = 2 only.
 */
Test(random_min, k_splits_follow_the_sm_budget, T_TIMEOUT)
{
    duet_workload_t wl = duet_workload_empty();
    wl.m = 640;
    wl.n = 3584;
    wl.k = 6144;
    duet_gemm_tile_t t = {256, 128, 64};
    cr_assert(duet_split_k_worth_trying_on(&wl, t, 1, 66));
    cr_assert(duet_split_k_worth_trying_on(&wl, t, 4, 132));
    cr_assert(!duet_split_k_worth_trying_on(&wl, t, 5, 132));
    cr_assert(duet_split_k_worth_trying_on(&wl, t, 2, 66));
    cr_assert(!duet_split_k_worth_trying_on(&wl, t, 3, 66));
    /* The profile's rule is the same one at its SM count. */
    duet_hw_t hw;
    cr_assert_eq(duet_hw_builtin("h200", &hw), DUET_OK);
    cr_assert_eq(hw.n_sms, 132);
    cr_assert_eq(duet_split_k_worth_trying(&hw, &wl, t, 4), 1);
    cr_assert_eq(duet_split_k_worth_trying(&hw, &wl, t, 5), 0);
}
