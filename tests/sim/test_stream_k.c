/*
 * Stream-K (configuration stream_k 1): the plan's geometry worked out by hand, the queue the
 * kernels walk (include/duet/plan_map.h) covering every C tile's K range once, and the simulator
 * pricing each queue position as the kernel runs it (a whole C tile or a K part).
 */
#include "sim_util.h"

T_SIM_SUITE(stream_k);

/* A GEMM alone in concurrent mode on `budget` CTAs: the stream-K budget is the GEMM grid. */
static duet_plan_t sk_plan(const duet_hw_t *hw, int64_t m, int64_t n, int64_t k, duet_gemm_tile_t t, int32_t budget,
                           int32_t stream_k)
{
    duet_workload_t wl = t_wl(m, n, k, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_CONCURRENT);
    cfg.tile = t;
    cfg.stream_k = stream_k;
    cr_assert_eq(duet_config_complete_split(&cfg, hw, -1, budget, hw->n_sms - budget), DUET_OK);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

static const duet_gemm_tile_t T128x256 = {128, 256, 64};

/*
 * 8192^3 in 128x256 tiles on 66 CTAs: 64 x 32 = 2048 C tiles = 31 full waves of 66 + 2, K = 128
 * steps. A part's fixed charge is ceil(4 x 128 x 256 / (384 x 64)) = ceil(5.33) = 6 steps.
 * Splitting the 2 tail tiles in s parts: 2s <= 66 parts run in one round of ceil(128 / s) + 6
 * steps, least at s = 16 (8 + 6 = 14, against 128 unsplit); splitting the last full wave too
 * (68 tiles after 30 waves) costs 30 x 128 + ceil(68 s / 66) (ceil(128 / s) + 6), at best s = 4:
 * 5 x 38 = 190 steps, so 4030 against 31 x 128 + 14 = 3982. So: 2046 whole tiles, then 2 x 16
 * parts of 8 steps; the workspace holds 2 x 16 blocks of 128 x 256 fp32 (4 MiB), 2 x 2 counters.
 */
Test(stream_k, eight_k_cubed_on_66_ctas_splits_the_two_tail_tiles_in_16)
{
    duet_hw_t hw = t_hw("h200");
    duet_plan_t p = sk_plan(&hw, 8192, 8192, 8192, T128x256, 66, 1);
    cr_assert_eq(p.gemm.tiles_mn, 2048);
    cr_assert_eq(p.gemm.split_from, 2046);
    cr_assert_eq(p.gemm.split_k, 16);
    cr_assert_eq(p.gemm.k_iters, 8);
    cr_assert_eq(p.gemm.tiles, 2046 + 32);
    cr_assert_eq(p.splitk_ws_bytes, INT64_C(2) * 16 * 128 * 256 * 4);
    cr_assert_eq(p.splitk_counters, 4);
    /* The queue: whole tiles first, each over all of K; then the parts of C tile 2046, 2047. */
    int64_t mn, k0, k1;
    int32_t part;
    duet_gemm_tile_split(&p.gemm, 2045, &mn, &part);
    duet_gemm_tile_krange(&p.gemm, 2045, &k0, &k1);
    cr_assert(mn == 2045 && part == 0 && k0 == 0 && k1 == 8192 && !duet_gemm_tile_is_part(&p.gemm, 2045));
    duet_gemm_tile_split(&p.gemm, 2046 + 17, &mn, &part);
    duet_gemm_tile_krange(&p.gemm, 2046 + 17, &k0, &k1);
    cr_assert(mn == 2047 && part == 1 && k0 == 512 && k1 == 1024 && duet_gemm_tile_is_part(&p.gemm, 2046 + 17));
    cr_assert_eq(duet_gemm_split_slot(&p.gemm, 2047), 1);
}

/*
 * 256 x 13568 x 8192 in 128x256: 2 x 53 = 106 C tiles on 66 CTAs (1.6 waves), 128 steps, charge
 * 6. Data-parallel: 2 x 128 = 256 steps. The 40 tail tiles in s parts after one full wave: s = 3
 * gives 120 parts, two rounds of 43 + 6: 128 + 98 = 226; s = 2: 2 x 70 = 140 (268); s = 4:
 * 3 x 38 = 114 (242); s = 6: 4 x 28 (240); s = 8: 5 x 22 (238); no s does better than 98. All 106
 * tiles split: s = 3 gives 5 rounds of 49 = 245, s = 2 4 x 70 = 280, worse. So: 66 whole tiles,
 * then 40 x 3 parts of 43, 43 and 42 steps.
 */
Test(stream_k, one_and_a_half_waves_split_the_tail_in_three)
{
    duet_hw_t hw = t_hw("h200");
    duet_plan_t p = sk_plan(&hw, 256, 13568, 8192, T128x256, 66, 1);
    cr_assert_eq(p.gemm.tiles_mn, 106);
    cr_assert_eq(p.gemm.split_from, 66);
    cr_assert_eq(p.gemm.split_k, 3);
    cr_assert_eq(p.gemm.k_iters, 43);
    cr_assert_eq(p.gemm.tiles, 66 + 120);
    int64_t k0, k1;
    duet_gemm_tile_krange(&p.gemm, 66 + 3 * 39 + 2, &k0, &k1);
    cr_assert(k0 == 86 * 64 && k1 == 8192, "the last part: steps 86..127");
}

/* Where the budget divides the C tiles, or at one wave in two parts, stream-K is today's queue. */
Test(stream_k, no_tail_is_data_parallel_and_one_partial_wave_is_a_k_split)
{
    duet_hw_t hw = t_hw("h200");
    /* 2048 tiles on 128 CTAs: 16 full waves. */
    duet_plan_t sk = sk_plan(&hw, 8192, 8192, 8192, T128x256, 128, 1);
    duet_plan_t dp = sk_plan(&hw, 8192, 8192, 8192, T128x256, 128, 0);
    cr_assert(sk.gemm.split_k == 1 && sk.gemm.split_from == 0 && sk.gemm.tiles == dp.gemm.tiles);
    cr_assert_eq(sk.splitk_ws_bytes, 0);
    /* 4096 x 512 x 8192: 32 x 2 = 64 tiles on 131 CTAs, one partial wave; two parts fill 128
     * CTAs in one round of 64 + 6 steps against 128; three take two rounds of 43 + 6 (98). */
    sk = sk_plan(&hw, 4096, 512, 8192, T128x256, 131, 1);
    cr_assert(sk.gemm.split_k == 2 && sk.gemm.split_from == 0 && sk.gemm.tiles == 128);
    duet_workload_t wl = t_wl(4096, 512, 8192, DUET_COLL_NONE, 0, 0, 1);
    duet_gemm_geom_t k2;
    duet_gemm_geom_init(&k2, wl.m, wl.n, wl.k, T128x256, sk.cfg.group_m, 2);
    cr_assert(memcmp(&k2, &sk.gemm, sizeof(k2)) == 0, "the same queue as split_k 2");
}

/*
 * The queue the kernels walk: over shapes, tiles and budgets, whole C tiles come first, each C
 * tile appears once whole or as split_k consecutive parts whose K ranges cover [0, K) in order,
 * every part has K steps, and the workspace slots stay inside the plan's workspace.
 */
Test(stream_k, every_c_tile_covers_k_once_in_queue_order, .timeout = 60)
{
    duet_hw_t hw = t_hw("h200");
    const int64_t dims[][3] = {{8192, 8192, 8192}, {256, 13568, 8192}, {1000, 3000, 512},
                               {4096, 512, 8192},  {3000, 777, 4160},  {16384, 16384, 640}};
    const duet_gemm_tile_t tiles[] = {{128, 256, 64}, {256, 128, 64}, {64, 64, 64}, {256, 256, 64}};
    const int32_t budgets[] = {33, 66, 99, 131, 7};
    long split_plans = 0;
    for (size_t d = 0; d < sizeof(dims) / sizeof(dims[0]); d++)
        for (size_t t = 0; t < sizeof(tiles) / sizeof(tiles[0]); t++)
            for (size_t b = 0; b < sizeof(budgets) / sizeof(budgets[0]); b++) {
                duet_plan_t p = sk_plan(&hw, dims[d][0], dims[d][1], dims[d][2], tiles[t], budgets[b], 1);
                const duet_gemm_geom_t *g = &p.gemm;
                split_plans += g->split_from > 0;
                int64_t q = 0, steps = 0;
                for (int64_t mn = 0; mn < g->tiles_mn; mn++) {
                    int64_t k_next = 0;
                    const int parts = duet_gemm_mn_split(g, mn) ? g->split_k : 1;
                    for (int32_t part = 0; part < parts; part++, q++) {
                        int64_t qmn, k0, k1;
                        int32_t qpart;
                        duet_gemm_tile_split(g, q, &qmn, &qpart);
                        duet_gemm_tile_krange(g, q, &k0, &k1);
                        cr_assert(qmn == mn && qpart == part, "position %lld", (long long)q);
                        cr_assert(k0 == k_next && k1 > k0, "position %lld: [%lld, %lld)", (long long)q, (long long)k0,
                                  (long long)k1);
                        cr_assert_eq(duet_gemm_tile_is_part(g, q), parts > 1);
                        if (parts > 1) {
                            int64_t slot = duet_gemm_split_slot(g, mn);
                            cr_assert(slot >= 0 && (slot + 1) * 2 <= p.splitk_counters);
                            cr_assert_leq((slot + 1) * g->split_k * g->bm * g->bn * 4, p.splitk_ws_bytes);
                        }
                        steps += duet_cdiv(k1, g->bk) - k0 / g->bk;
                        k_next = k1;
                    }
                    cr_assert_eq(k_next, g->k);
                }
                cr_assert_eq(q, g->tiles, "the queue holds every unit");
                cr_assert_eq(steps, g->tiles_mn * g->k_iters_total);
            }
    cr_assert_gt(split_plans, 20, "%ld plans with a tail split", split_plans);
}

/*
 * The simulator prices each GEMM queue position as the kernel runs it: the GEMM alone, with HBM
 * made too wide to bind so that every tile runs at full speed, takes the whole tile's price at the
 * positions the kernel runs whole and the part's at its parts (duet_cost_gemm_tile_kind), and
 * runs every position once.
 */
Test(stream_k, the_simulator_prices_each_position_as_the_kernel_runs_it)
{
    duet_hw_t hw = t_hw("h200");
    hw.hbm_gbs = 1e6;
    duet_plan_t p = sk_plan(&hw, 256, 13568, 8192, T128x256, 66, 1);
    cr_assert_gt(p.gemm.split_from, 0);
    duet_gemm_cost_t whole, part;
    int64_t active = p.gemm_home_ctas;
    cr_assert_eq(duet_cost_gemm_tile_kind(&hw, &p, active, 0, &whole), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile_kind(&hw, &p, active, 1, &part), DUET_OK);
    cr_assert_eq(whole.k_iters, 128);
    cr_assert_eq(part.k_iters, 43);
    cr_assert_lt(part.t_sm, whole.t_sm, "whole %g us, part %g us", whole.t_sm * 1e6, part.t_sm * 1e6);
    duet_trace_t tr;
    duet_trace_init(&tr, "predicted");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, &tr, &r), DUET_OK, "%s", duet_last_error());
    int64_t seen = 0;
    for (size_t i = 0; i < tr.n; i++) {
        const duet_trace_rec_t *x = &tr.recs[i];
        if (x->queue != DUET_QUEUE_GEMM)
            continue;
        seen++;
        double want = duet_gemm_tile_is_part(&p.gemm, x->tile) ? part.t_sm : whole.t_sm;
        cr_assert_float_eq(x->end_s - x->start_s, want, want * 1e-9, "position %lld: %g us, priced %g",
                           (long long)x->tile, (x->end_s - x->start_s) * 1e6, want * 1e6);
    }
    cr_assert_eq(seen, p.gemm.tiles);
    duet_trace_free(&tr);
    /* A tail split pays where it replaces a nearly empty wave: 8192^3 on 66 CTAs ends with 2 C
     * tiles of 128 steps, which 32 parts of 8 steps (plus their partial sums) replace. */
    duet_plan_t sk = sk_plan(&hw, 8192, 8192, 8192, T128x256, 66, 1);
    duet_plan_t dp = sk_plan(&hw, 8192, 8192, 8192, T128x256, 66, 0);
    duet_sim_result_t rs, rd;
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &sk, NULL, &rs), DUET_OK);
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &dp, NULL, &rd), DUET_OK);
    cr_assert_lt(rs.gemm_finish_s, rd.gemm_finish_s, "stream-K %g us, data-parallel %g us", rs.gemm_finish_s * 1e6,
                 rd.gemm_finish_s * 1e6);
}

/*
 * The K step's contention follows the CTAs the GEMM keeps busy on average over its span (its K
 * steps over its span's), which is what stream-K changes. 896 x 2560 x 8192 in 128x256 on 66
 * CTAs: 7 x 10 = 70 C tiles of 128 steps, one full wave and 4 tiles.
 * - Data-parallel: two waves of 128 steps, 70 x 128 / (2 x 128) = 35 CTAs busy on average; per
 *   wave (66, then 4 tiles) the factors 1 + 0.4 x 66 / 132 and 1 + 0.4 x 4 / 132 sum to
 *   2 x (1 + 0.4 x 35 / 132): the mean prices the two waves as their own loads would. At the
 *   peak, min(70, 66) = 66, the last wave of 4 tiles cost as much as the full one.
 * - Stream-K: the 4 tail tiles in s <= 16 parts run in one round of ceil(128 / s) + 6 steps,
 *   least at s = 16 (8 + 6): 66 whole tiles, then 64 parts of 8 steps. Busy on average:
 *   (66 x 128 + 64 x 8) / (128 + 8) = 8960 / 136 CTAs, nearly the whole grid.
 */
Test(stream_k, the_k_step_contention_follows_the_ctas_busy_on_average)
{
    duet_hw_t hw = t_hw("h100");
    hw.l2_gbs = 1e9; /* matrix-bound: the step is the matrix time times the factors */
    hw.tile_oob_row_ns = 0;
    hw.box_rows_per_us = 1e12;
    hw.clock_heat = 0;
    hw.gemm_sm_contention = 0.4;
    cr_assert_eq(hw.n_sms, 132);
    duet_plan_t dp = sk_plan(&hw, 896, 2560, 8192, T128x256, 66, 0);
    duet_plan_t sk = sk_plan(&hw, 896, 2560, 8192, T128x256, 66, 1);
    cr_assert_eq(dp.gemm.tiles, 70);
    cr_assert(sk.gemm.split_from == 66 && sk.gemm.split_k == 16 && sk.gemm.k_iters == 8 && sk.gemm.tiles == 130);
    duet_gemm_cost_t c, whole, part;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &dp, 66, &c), DUET_OK);
    cr_assert(t_rel_eq(c.t_step, c.t_step_mma * (1 + 0.4 * 35.0 / 132), 1e-12),
              "data-parallel: %.6g of the matrix time", c.t_step / c.t_step_mma);
    const double f_sk = 1 + 0.4 * (8960.0 / 136) / 132;
    cr_assert_eq(duet_cost_gemm_tile_kind(&hw, &sk, 66, 0, &whole), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile_kind(&hw, &sk, 66, 1, &part), DUET_OK);
    cr_assert(t_rel_eq(whole.t_step, whole.t_step_mma * f_sk, 1e-12), "whole: %.6g", whole.t_step / whole.t_step_mma);
    cr_assert(t_rel_eq(part.t_step, part.t_step_mma * f_sk, 1e-12), "part: %.6g", part.t_step / part.t_step_mma);
}

/* The configuration rules, the label and the JSON codec. */
Test(stream_k, configuration_rules_label_and_json)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t c = duet_config_default(&hw, DUET_MODE_FUSED);
    c.stream_k = 1;
    cr_assert_eq(duet_config_validate(&c, &wl, &hw), DUET_OK, "%s", duet_last_error());
    char buf[64];
    cr_assert_str_eq(duet_config_tile_str(&c, buf, sizeof(buf)), "256x128x64/sk");
    duet_config_t d = c;
    d.stream_k = 0;
    cr_assert(!duet_config_same(&c, &d), "stream-K is another configuration");
    d = c;
    d.split_k = 2;
    cr_assert_eq(duet_config_validate(&d, &wl, &hw), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "stream_k") != NULL, "%s", duet_last_error());
    d = c;
    d.mode = DUET_MODE_VENDOR;
    cr_assert_eq(duet_config_validate(&d, &wl, &hw), DUET_ERR_INVALID_ARG);
    d = c;
    d.stream_k = 2;
    cr_assert_eq(duet_config_validate(&d, &wl, &hw), DUET_ERR_INVALID_ARG);
}

/*
 * The GPU tests' stream-K shapes (tests/gpu/test_gpu.hip, sk-200 and sk-266) in 128x256: 200 C
 * tiles on 33, 66 and 99 CTAs and 266 on 132 leave 2 tail tiles; K = 1096 is 18 steps. One round
 * of 2s <= budget parts costs ceil(18 / s) + 6 steps: 2 + 6 = 8 from s = 9 on (s = 16 ties), so
 * 9 parts, against 18 unsplit.
 */
Test(stream_k, the_gpu_tests_shapes_split_two_tail_tiles_in_nine)
{
    duet_hw_t hw = t_hw("h200");
    const int32_t budgets[] = {33, 66, 99, 132};
    for (int i = 0; i < 4; i++) {
        int32_t b = budgets[i];
        duet_plan_t p =
            b == 132 ? sk_plan(&hw, 1790, 4800, 1096, T128x256, b, 1) : sk_plan(&hw, 1270, 5100, 1096, T128x256, b, 1);
        cr_assert_eq(p.gemm.tiles_mn, b == 132 ? 266 : 200);
        cr_assert_eq(p.gemm.split_from, p.gemm.tiles_mn - 2, "budget %d", (int)b);
        cr_assert_eq(p.gemm.split_k, 9, "budget %d", (int)b);
        cr_assert_eq(p.gemm.k_iters, 2);
    }
}

/*
 * The same in fused mode beside a collective: the budget is the 62 GEMM-home CTAs of 132, and
 * 2048 = 33 x 62 + 2 leaves the same 2-tile tail in 16 parts (2046 whole tiles). The 70
 * comm-home CTAs, done with the collective, steal GEMM tiles beside the 62, so claims of 62 and
 * 70 positions no longer stop at 2046: one runs from the whole tiles into the parts, and each of
 * its positions keeps its own price.
 */
Test(stream_k, stolen_claims_across_the_parts_boundary_keep_each_positions_price)
{
    duet_hw_t hw = t_hw("h200");
    hw.hbm_gbs = 1e6;
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 4096, 4096, 2);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.tile = T128x256;
    cfg.stream_k = 1;
    cr_assert_eq(duet_config_complete_split(&cfg, &hw, 132, 62, -1), DUET_OK);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    cr_assert(p.gemm.split_from == 2046 && p.gemm.split_k == 16, "one round of 16 parts: 8 + 6 steps");
    duet_gemm_cost_t whole, part;
    int64_t active = p.gemm_home_ctas;
    cr_assert_eq(duet_cost_gemm_tile_kind(&hw, &p, active, 0, &whole), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile_kind(&hw, &p, active, 1, &part), DUET_OK);
    duet_trace_t tr;
    duet_trace_init(&tr, "predicted");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, &tr, &r), DUET_OK, "%s", duet_last_error());
    int64_t seen = 0, stolen = 0;
    for (size_t i = 0; i < tr.n; i++) {
        const duet_trace_rec_t *x = &tr.recs[i];
        if (x->queue != DUET_QUEUE_GEMM)
            continue;
        seen++;
        stolen += x->stolen;
        double want = duet_gemm_tile_is_part(&p.gemm, x->tile) ? part.t_sm : whole.t_sm;
        cr_assert_float_eq(x->end_s - x->start_s, want, want * 1e-9, "position %lld: %g us, priced %g",
                           (long long)x->tile, (x->end_s - x->start_s) * 1e6, want * 1e6);
    }
    cr_assert_eq(seen, p.gemm.tiles);
    cr_assert_gt(stolen, 0, "the comm-home CTAs stole GEMM tiles");
    duet_trace_free(&tr);
}
