/*
 * The vendor GEMM as the library runs it: the recorded kernel or the modelled choice decides the
 * plan's GEMM geometry, its closed form counts waves on the SM target, and the choice is the
 * library's fastest kernel under the model. Values derived by hand from docs/model.md, "The
 * vendor GEMM".
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "duet/corpus.h"

/* A profile whose vendor K step is its matrix step alone: no clock, ceiling or HBM bound, L2 so
 * fast that the C store is a few ns. */
static duet_hw_t plain_hw(void)
{
    duet_hw_t hw = t_hw("h200");
    hw.vendor_gemm_eff_bf16 = 0.5;
    hw.vendor_tile_eff_mid = 1;
    hw.vendor_tile_eff_small = 1;
    hw.vendor_tile_us = 1;
    hw.vendor_clock_heat = 0;
    hw.vendor_sm_contention = 0;
    hw.l2_gbs = 1e6;
    hw.hbm_gbs = 1e6;
    hw.vendor_records = 1; /* these tests price recorded kernels */
    return hw;
}

static duet_plan_t vendor_plan(const duet_hw_t *hw, int64_t m, int64_t n, int64_t k, int32_t gemm_wgs)
{
    duet_workload_t wl = t_wl(m, n, k, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_VENDOR);
    cr_assert_eq(duet_config_complete_split(&cfg, hw, -1, gemm_wgs, 0), DUET_OK);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

Test(cost_vendor, a_recorded_128x256_tile_runs_in_waves_on_its_sm_target, T_TIMEOUT)
{
    duet_hw_t hw = plain_hw();
    duet_plan_t p = vendor_plan(&hw, 4096, 4096, 4096, 66);
    duet_vendor_kernel_t rec = {.valid = 1, .tile_m = 128, .tile_n = 256, .stage_k = 64, .split_k = 1};
    cr_assert_eq(duet_plan_vendor_kernel(&hw, &rec, &p), DUET_OK, "%s", duet_last_error());
    /* 4096 / 128 x 4096 / 256 = 32 x 16 = 512 tiles of 64 K steps. */
    cr_assert_eq(p.gemm.bm, 128);
    cr_assert_eq(p.gemm.bn, 256);
    cr_assert_eq(p.gemm.tiles, 512);
    cr_assert_eq(p.gemm.k_iters, 64);
    cr_assert_eq(p.cfg.gemm_wgs, 66);
    /* A K step: 2 x 128 x 256 x 64 FLOP at 4096 FLOP/cycle x 1.83 GHz x 0.5 = 1.11913 us; the tile
     * 64 steps, the 1 us fixed cost and its C store, 65536 B at 1e6 GB/s / 132 SMs = 8.65 ns:
     * 72.6330 us. On 66 SMs, ceil(512 / 66) = 8 waves (the last of 50 tiles): 581.064 us. */
    double t_step = 2.0 * 128 * 256 * 64 / (4096 * 1.83e9 * 0.5);
    double t_tile = 64 * t_step + 1e-6 + 65536.0 * 132 / 1e15;
    cr_assert(t_rel_eq(t_tile, 72.6330e-6, 1e-5), "%g", t_tile);
    cr_assert(t_rel_eq(duet_cost_vendor_gemm_s(&hw, &p), 8 * t_tile, 1e-4), "%g vs %g",
              duet_cost_vendor_gemm_s(&hw, &p), 8 * t_tile);
    /* On all 132 SMs, ceil(512 / 132) = 4 waves. */
    duet_plan_t q = vendor_plan(&hw, 4096, 4096, 4096, 132);
    cr_assert_eq(duet_plan_vendor_kernel(&hw, &rec, &q), DUET_OK);
    cr_assert(t_rel_eq(duet_cost_vendor_gemm_s(&hw, &q), 4 * t_tile, 1e-4), "%g", duet_cost_vendor_gemm_s(&hw, &q));
}

Test(cost_vendor, a_recorded_kernel_outside_duets_tiles_and_its_k_split_set_the_queue, T_TIMEOUT)
{
    duet_hw_t hw = plain_hw();
    duet_plan_t p = vendor_plan(&hw, 4096, 4096, 4096, 132);
    /* 192x128 with BK 32 in 2 K parts: ceil(4096 / 192) = 22 x 32 C tiles = 704, 1408 queue tiles
     * of 4096 / 32 / 2 = 64 K steps. A stage_k of 0 means BK 64. */
    duet_vendor_kernel_t rec = {.valid = 1, .tile_m = 192, .tile_n = 128, .stage_k = 32, .split_k = 2};
    cr_assert_eq(duet_plan_vendor_kernel(&hw, &rec, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.gemm.tiles, 1408);
    cr_assert_eq(p.gemm.k_iters, 64);
    rec.stage_k = 0;
    rec.split_k = 0;
    cr_assert_eq(duet_plan_vendor_kernel(&hw, &rec, &p), DUET_OK);
    cr_assert_eq(p.gemm.bk, 64);
    cr_assert_eq(p.gemm.split_k, 1);
    /* duet's own modes keep their tile: the record is the vendor's. */
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t f = duet_config_default(&hw, DUET_MODE_FUSED);
    duet_plan_t pf;
    cr_assert_eq(duet_plan_build(&wl, &f, 0, &pf), DUET_OK);
    cr_assert_eq(duet_plan_vendor_kernel(&hw, &rec, &pf), DUET_OK);
    cr_assert_eq(pf.gemm.bm, f.tile.bm);
    cr_assert_eq(duet_plan_set_gemm_kernel(&pf, f.tile, 1), DUET_ERR_INVALID_ARG);
}

/*
 * cuBLASLt splits K into parts of any length and past duet's 16 (recorded on H100: K = 704 in 9
 * parts, a small-M GEMM in 21). K = 704 is 11 steps of 64: 9 parts of ceil(11 / 9) = 2 steps leave
 * the last 4 empty; of 32, 22 steps in parts of 3 leave the 9th empty (8 x 3 = 24 > 22); of 16, 44
 * steps in parts of 5 give the 9th 4: the plan takes BK 16. 21 parts are priced as 16.
 */
Test(cost_vendor, a_recorded_k_split_of_any_length_fits_the_plan, T_TIMEOUT)
{
    duet_hw_t hw = plain_hw();
    duet_plan_t p = vendor_plan(&hw, 1024, 1024, 704, 132);
    duet_vendor_kernel_t rec = {.valid = 1, .tile_m = 128, .tile_n = 128, .stage_k = 0, .split_k = 9};
    cr_assert_eq(duet_plan_vendor_kernel(&hw, &rec, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.gemm.split_k, 9);
    cr_assert_eq(p.gemm.bk, 16);
    cr_assert_eq(p.gemm.k_iters, 5);
    duet_plan_t q = vendor_plan(&hw, 64, 1024, 16384, 132);
    rec.split_k = 21;
    cr_assert_eq(duet_plan_vendor_kernel(&hw, &rec, &q), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(q.gemm.split_k, DUET_MAX_SPLIT_K);
    cr_assert_eq(q.gemm.bk, 64);
}

Test(cost_vendor, the_modelled_choice_is_the_librarys_fastest_kernel, T_TIMEOUT)
{
    duet_hw_t hw = plain_hw();
    /* 8192^3 on 132 SMs, every class at one rate: 128x256 is 64 x 32 = 2048 tiles, 16 waves of
     * 128 steps; 128x128 is 4096 tiles, 32 waves of half the matrix time each but a fixed cost per
     * tile: the 128x256 (first of its equals 256x128) is the fastest, with no K split (2048 C tiles
     * leave no SM idle). */
    duet_plan_t p = vendor_plan(&hw, 8192, 8192, 8192, 132);
    cr_assert_eq(duet_plan_vendor_choose(&hw, &p), DUET_OK, "%s", duet_last_error());
    cr_assert(p.cfg.tile.bm == 128 && p.cfg.tile.bn == 256 && p.cfg.split_k == 1, "%dx%d/k%d", p.cfg.tile.bm,
              p.cfg.tile.bn, p.cfg.split_k);
    /* With the 16384-element class twice as fast, 32 waves of half of a half: 128x128 or 64x256. */
    hw.vendor_tile_eff_mid = 2;
    cr_assert_eq(duet_plan_vendor_choose(&hw, &p), DUET_OK);
    cr_assert_eq(p.cfg.tile.bm * p.cfg.tile.bn, 16384, "%dx%d", p.cfg.tile.bm, p.cfg.tile.bn);
    cr_assert_eq(p.gemm.tiles, 4096);
    /* 256 x 256 x 65536 on 132 SMs: 2 C tiles of 128x256; K in 8 parts (2 x 7 < 264) gives 16 queue
     * tiles of an eighth of the K loop each, far faster than 2 tiles of 1024 steps. */
    hw = plain_hw();
    duet_plan_t s = vendor_plan(&hw, 256, 256, 65536, 132);
    cr_assert_eq(duet_plan_vendor_choose(&hw, &s), DUET_OK);
    cr_assert_gt(s.cfg.split_k, 1, "%dx%d/k%d", s.cfg.tile.bm, s.cfg.tile.bn, s.cfg.split_k);
    /* Whatever it picks, no kernel of the set prices faster in closed form. */
    double best = duet_cost_vendor_gemm_s(&hw, &s);
    for (int i = 0; i < duet_vendor_tile_count(); i++) {
        duet_plan_t q = s;
        cr_assert_eq(duet_plan_set_gemm_kernel(&q, duet_vendor_tile_get(i), 1), DUET_OK);
        cr_assert_geq(duet_cost_vendor_gemm_s(&hw, &q), best * (1 - 1e-9), "tile %d", i);
    }
}

Test(cost_vendor, the_vendor_gemm_stages_nothing, T_TIMEOUT)
{
    /* duet stages operands whose K leaves rows off 16 bytes; the library reads them as they are. */
    duet_hw_t hw = plain_hw();
    duet_plan_t v = vendor_plan(&hw, 1024, 1024, 1023, 132);
    cr_assert_eq(v.stage_k, 0);
    duet_workload_t wl = t_wl(1024, 1024, 1023, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t f = duet_config_default(&hw, DUET_MODE_FUSED);
    duet_plan_t pf;
    cr_assert_eq(duet_plan_build(&wl, &f, 0, &pf), DUET_OK);
    cr_assert_eq(pf.stage_k, 1024);
}

Test(cost_vendor, the_vendor_moves_its_share_of_the_hbm_bytes, T_TIMEOUT)
{
    duet_hw_t hw = plain_hw();
    duet_plan_t p = vendor_plan(&hw, 4096, 4096, 4096, 132);
    duet_gemm_cost_t all, half;
    hw.vendor_hbm_share = 1;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 132, &all), DUET_OK);
    hw.vendor_hbm_share = 0.5;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 132, &half), DUET_OK);
    cr_assert_gt(all.hbm_bytes, 0);
    cr_assert(t_rel_eq(half.hbm_bytes, 0.5 * all.hbm_bytes, 1e-12), "%g vs %g", half.hbm_bytes, all.hbm_bytes);
    cr_assert_eq(half.t_sm, all.t_sm);
}

Test(cost_vendor, the_choice_splits_k_only_where_the_c_tiles_leave_sms_idle, T_TIMEOUT)
{
    /* 896 x 4864 in 128x256 tiles is 7 x 19 = 133 C tiles on 132 SMs: two waves, the second of one
     * tile. With free partial sums and the other tile classes slow, more K parts always price
     * faster (8 parts: 1064 tiles in 9 waves of an eighth), but a split is tried only while
     * 133 x (s - 1) < 2 x 132, so at most 2 parts (3 waves of a half). */
    duet_hw_t hw = plain_hw();
    hw.vendor_tile_eff_mid = 0.05;
    hw.vendor_tile_eff_small = 0.05;
    hw.splitk_sm_gbs = 1e5;
    duet_plan_t p = vendor_plan(&hw, 896, 4864, 8192, 132);
    cr_assert_eq(duet_plan_vendor_choose(&hw, &p), DUET_OK);
    cr_assert(p.gemm.tiles_mn * (p.cfg.split_k - 1) < 2 * 132, "%dx%d/k%d: %lld C tiles", p.cfg.tile.bm, p.cfg.tile.bn,
              p.cfg.split_k, (long long)p.gemm.tiles_mn);
    cr_assert_eq(p.cfg.split_k, 2, "%dx%d/k%d", p.cfg.tile.bm, p.cfg.tile.bn, p.cfg.split_k);
}
