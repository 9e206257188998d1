/*
 * Sweeps stay bounded: the sweep's event budget (DUET_SWEEP_MAX_EVENTS), the automatic tile list
 * leaving out tiles over DUET_MAX_GEMM_TILES, and the comm queue walked once per sweep giving the
 * same points as a plan built from scratch for each.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

static duet_sim_ws_t *ws;
static void setup(void)
{
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
}
static void teardown(void)
{
    duet_sim_ws_destroy(ws);
}

TestSuite(sweep_bounds, .init = setup, .fini = teardown, .timeout = 20);

/*
 * The sweep copies the first plan's comm traffic into the plans of other tiles, K splits and
 * modes. Every point must equal the simulation of duet_plan_build() for its configuration, bit
 * for bit; all_to_all with a comm tile that straddles the ranks' row blocks and edge tiles
 * exercises every traffic field.
 */
Test(sweep_bounds, every_point_equals_its_own_plan)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wls[] = {t_wl(1000, 3000, 777, DUET_COLL_ALL_TO_ALL, 2046, 1000, 3),
                             t_wl(512, 8192, 8192, DUET_COLL_ALL_REDUCE, 2048, 4096, 4),
                             t_wl(2048, 2048, 2048, DUET_COLL_BROADCAST, 1024, 4096, 4)};
    wls[2].root = 2;
    for (size_t w = 0; w < sizeof(wls) / sizeof(wls[0]); w++) {
        duet_sweep_params_t sp = duet_sweep_default_params();
        sp.modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT) | (1u << DUET_MODE_VENDOR);
        sp.split_step = 9;
        sp.cm = 100;
        sp.cn = 16;
        duet_sweep_result_t res;
        cr_assert_eq(duet_sweep_run(ws, &hw, &wls[w], &sp, &res), DUET_OK, "%s", duet_last_error());
        cr_assert(res.n > 50);
        for (size_t i = 0; i <= res.n; i++) {
            const duet_sweep_point_t *pt = i < res.n ? &res.points[i] : &res.dflt;
            duet_plan_t plan;
            duet_sim_result_t r;
            cr_assert_eq(duet_plan_build(&wls[w], &pt->cfg, duet_plan_critical_rank(&wls[w]), &plan), DUET_OK);
            cr_assert_eq(duet_sim_run(ws, NULL, &hw, &plan, NULL, &r), DUET_OK);
            cr_assert(r.makespan_s == pt->makespan_s && r.gemm_finish_s == pt->gemm_finish_s &&
                          r.comm_finish_s == pt->comm_finish_s,
                      "workload %zu point %zu: %.17g vs %.17g", w, i, r.makespan_s, pt->makespan_s);
        }
        duet_sweep_result_free(&res);
    }
}

/*
 * 2^18 x 2^18 in automatic tiles: 64x64 is 4096^2 = 2^24 tiles and 64x128 is 4096 * 2048 = 2^23,
 * over the limit; the other six are at most 2^22 (128x128 and 256x64 and 64x256 exactly). One
 * split of the fused mode keeps the sweep short.
 */
Test(sweep_bounds, automatic_tiles_leave_out_those_over_the_limit)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(262144, 262144, 64, DUET_COLL_NONE, 0, 0, 1);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.modes = 1u << DUET_MODE_FUSED;
    sp.split_min = sp.split_max = 132;
    sp.n_split_ks = 1;
    sp.split_ks[0] = 1;
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, 6);
    for (size_t i = 0; i < res.n; i++) {
        duet_gemm_tile_t t = res.points[i].cfg.tile;
        cr_assert(t.bm != 64 || t.bn == 256, "tile %dx%d is over the limit", t.bm, t.bn);
    }
    duet_sweep_result_free(&res);
    /* Asked for by name, the tile is refused with the limit's error. */
    sp.n_tiles = 1;
    sp.tiles[0] = (duet_gemm_tile_t){64, 64, 64};
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "DUET_MAX_GEMM_TILES") != NULL, "%s", duet_last_error());
    /* A GEMM no tile can cover within the limit: the sweep says why. 2^24 x 2^24 in 256 x 256 tiles
     * is 2^32 tiles. */
    wl.m = wl.n = 16777216;
    sp.n_tiles = 0;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "DUET_MAX_GEMM_TILES") != NULL, "%s", duet_last_error());
}

/*
 * The event budget. Policy frozen runs one event per tile (the reference scheduler has no
 * cohorts): 1024^2 in 256 x 128 tiles is 4 * 8 = 32 GEMM tiles, a 1024 x 1024 all_gather in 256 x 64
 * tiles 4 * 16 = 64 comm tiles, 96 events per configuration. Three splits and the static default
 * (the same tiles) are 384 events: a budget of 384 passes, 383 stops the sweep. The default
 * budget is DUET_SWEEP_MAX_EVENTS (docs/model.md: a sweep at it takes seconds; the reference shape
 * set's heaviest needs 3.2e6).
 */
Test(sweep_bounds, a_sweep_stops_at_its_event_budget)
{
    cr_assert_eq(DUET_SWEEP_MAX_EVENTS, 16777216);
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(1024, 1024, 64, DUET_COLL_ALL_GATHER, 1024, 1024, 2);
    duet_sweep_params_t sp = duet_sweep_default_params();
    cr_assert_eq(sp.max_events, 0, "the default budget");
    sp.policy = &duet_sim_policy_frozen;
    sp.modes = 1u << DUET_MODE_FUSED;
    sp.n_tiles = 1;
    sp.tiles[0] = (duet_gemm_tile_t){256, 128, 64};
    sp.split_min = 60;
    sp.split_max = 62;
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, 3);
    cr_assert_eq(res.events, 384);
    duet_sweep_result_free(&res);
    sp.max_events = 384;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    duet_sweep_result_free(&res);
    sp.max_events = 383;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "sweep: more than 383 simulation events (max_events): sweep fewer "
                                        "configurations (modes, tiles, a split step) or use larger tiles");
}
