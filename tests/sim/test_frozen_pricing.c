/*
 * The reference rules' pricing (duet_sim_frozen_params): the inputs policy frozen hands the
 * reference scheduler, derived by hand from the reference predictor's formulas and constants
 * (predictor.py: XGMI_BW_GBPS 120, COMM_LAUNCH_US 5, GEMM_INTERFERENCE_ALPHA 0.40,
 * COMM_SAT_CHANNELS 64, C_ATOMIC_GEMM_MS 0.99e-3, C_ATOMIC_COMM_MS 2.36e-3), and its table of
 * reference values (3.8) for the predictor-test shape.
 */
#include "sim_util.h"

T_SIM_SUITE(frozen_pricing);

static duet_plan_t fused_plan(const duet_hw_t *hw, duet_workload_t wl, int32_t num_wgs, int32_t gemm_wgs)
{
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_FUSED);
    cfg.num_wgs = num_wgs;
    cfg.gemm_wgs = gemm_wgs;
    cfg.comm_wgs = num_wgs - gemm_wgs;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, duet_plan_critical_rank(&wl), &p), DUET_OK, "%s", duet_last_error());
    return p;
}

/*
 * The reference design's worked example in predictor.py: W = 8, comm 8192 x 4608 fp16 in 256 x 64 tiles (full = 32 x 72
 * = 2304 tiles of 32768 B). comm_full = bytes / 120 GB/s + 5 us; Lc_unit = comm_full / n_comm. The table prints
 * comm_full in ms to 4 decimals and Lc_unit in us to 3; the exact values are the formula's.
 */
Test(frozen_pricing, comm_of_every_collective_is_the_reference_table)
{
    duet_hw_t hw = t_hw("mi300x"); /* 304 CUs, the reference's device */
    const struct {
        int32_t coll;
        double bytes;   /* remote bytes per rank, the reference design's worked example */
        int64_t n_comm; /* comm work items */
        double full_ms; /* printed comm_full */
        double lc_us;   /* printed Lc_unit */
        int32_t sat;
    } ref[] = {
        /* AG and BC: full (W - 1) tb = 2304 x 7 x 32768 */
        {DUET_COLL_ALL_GATHER, 528482304.0, 2304, 4.4090, 1.914, 1},
        /* AR: ceil(full / W) 2 (W - 1) tb = 288 x 14 x 32768; floor min(2 x 64, num_wgs) */
        {DUET_COLL_ALL_REDUCE, 132120576.0, 288, 1.1060, 3.840, 128},
        /* RS: ceil(full / W) (W - 1) tb = 288 x 7 x 32768 */
        {DUET_COLL_REDUCE_SCATTER, 66060288.0, 288, 0.5555, 1.929, 1},
        /* A2A: floor(full (W - 1) / W) tb = 2016 x 32768 */
        {DUET_COLL_ALL_TO_ALL, 66060288.0, 2304, 0.5555, 0.241, 1},
        {DUET_COLL_BROADCAST, 528482304.0, 2304, 4.4090, 1.914, 1},
    };
    for (size_t i = 0; i < sizeof(ref) / sizeof(ref[0]); i++) {
        duet_workload_t wl = t_wl(0, 0, 0, ref[i].coll, 8192, 4608, 8);
        wl.dtype = DUET_DTYPE_FP16;
        duet_plan_t p = fused_plan(&hw, wl, 304, 228);
        duet_frozen_params_t f;
        cr_assert_eq(duet_sim_frozen_params(&hw, &p, &f), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(p.remote_bytes_tiles, ref[i].bytes, "case %zu", i);
        cr_assert_eq(f.n_comm, ref[i].n_comm, "case %zu", i);
        cr_assert_eq(f.n_gemm, 0);
        cr_assert_eq(f.lg, 0.0);
        double full = ref[i].bytes / 120e9 + 5e-6; /* s */
        cr_assert(t_rel_eq(f.lc_unit, full / (double)ref[i].n_comm, 1e-12), "case %zu: Lc %.9g", i, f.lc_unit);
        cr_assert(t_rel_eq(f.lc_unit * (double)f.n_comm * 1e3, ref[i].full_ms, 1e-4), "case %zu", i);
        cr_assert(t_rel_eq(f.lc_unit * 1e6, ref[i].lc_us, 1e-3), "case %zu: %.4f us", i, f.lc_unit * 1e6);
        cr_assert_eq(f.comm_sat, ref[i].sat, "case %zu", i);
        cr_assert_eq(f.num_wgs, 304);
        cr_assert_eq(f.gemm_wgs, 228);
        cr_assert(t_rel_eq(f.c_atomic_gemm, 0.99e-6, 1e-12));
        cr_assert(t_rel_eq(f.c_atomic_comm, 2.36e-6, 1e-12));
    }
}

/*
 * The reference predictor's golden output (iris.concurrent predictor.py at ee764d95, predict_split
 * on all_gather, GEMM 16384 x 8192 x 1024, comm 4096 x 8192, W = 4): T_comm 1.6827216 ms and Lc
 * 0.00082164140625 ms over 2048 comm tiles (16 x 128 tiles of 256 x 64; 2048 x 3 x 32768 B at
 * 120 GB/s = 1.6777216 ms, plus 5 us).
 */
Test(frozen_pricing, all_gather_matches_the_reference_predictors_golden_output)
{
    duet_hw_t hw = t_hw("mi350x"); /* 256 CUs, as that case */
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 4096, 8192, 4);
    wl.dtype = DUET_DTYPE_FP16;
    duet_plan_t p = fused_plan(&hw, wl, 256, 192);
    duet_frozen_params_t f;
    cr_assert_eq(duet_sim_frozen_params(&hw, &p, &f), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(f.n_comm, 2048);
    cr_assert(t_rel_eq(f.lc_unit * 1e3, 0.00082164140625, 1e-12), "Lc %.17g ms", f.lc_unit * 1e3);
    cr_assert(t_rel_eq(f.lc_unit * 2048 * 1e3, 1.6827216, 1e-12));
}

/* The all_reduce floor is min(2 x COMM_SAT_CHANNELS, num_wgs) (predictor.py, the [F]
 * revision); other collectives get 1. */
Test(frozen_pricing, all_reduce_floor_is_twice_the_channels_capped_by_the_grid)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t ar = t_wl(0, 0, 0, DUET_COLL_ALL_REDUCE, 2048, 4096, 2);
    const struct {
        int32_t num_wgs, sat;
    } cases[] = {{132, 128}, {128, 128}, {127, 127}, {100, 100}, {64, 64}, {1, 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_plan_t p = fused_plan(&hw, ar, cases[i].num_wgs, 0);
        duet_frozen_params_t f;
        cr_assert_eq(duet_sim_frozen_params(&hw, &p, &f), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(f.comm_sat, cases[i].sat, "num_wgs %d: floor %d", cases[i].num_wgs, f.comm_sat);
    }
    hw.seed_sat_channels = 10;
    duet_plan_t p = fused_plan(&hw, ar, 132, 99);
    duet_frozen_params_t f;
    cr_assert_eq(duet_sim_frozen_params(&hw, &p, &f), DUET_OK);
    cr_assert_eq(f.comm_sat, 20);
}

/*
 * The GEMM tile: Lg = T_full x spread / n_tiles x (1 + alpha x f_comm x I), T_full the static
 * full-chip time on num_wgs CTAs without the launch, spread = min(n_tiles, num_wgs), f_comm =
 * comm-home CTAs / num_wgs, I = comm_full / T_full. Worked by hand for 8192^3 in 256x128x64 on the
 * start profile with the clock factor off (the cost test gemm_tile_on_h200_by_hand has the tile):
 *   matrix step 2*256*128*64 FLOP / (4096 FLOP/cycle x 1.83 GHz) = 0.55957 us, x (1 + 0.3 x
 *   128 / 132) (contention 0.3; the 2048 tiles' 16 waves of 132 CTAs keep 2048 / 16 = 128 busy on
 *   average); t_sm = 128 steps + 1 us prologue + the C tile (64 KiB) at 24 TB/s / 132 + 0.3 us
 *   overhead = 94.12 us; its HBM bytes (L2 hit 1 - 3200/27648) on 132 SMs at 4.3 TB/s take
 *   24.4 us, less: the SM binds. 16 waves of (t_sm + 0.5 us dequeue): T_full = 1.5139 ms.
 * Comm: all_gather W = 2 of 2048 x 4096 bf16 is 8 x 64 = 512 tiles pushed to one peer:
 *   512 x 32768 B / 120 GB/s + 5 us = 144.81 us.
 */
Test(frozen_pricing, gemm_tile_is_the_spread_full_chip_time_with_interference)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.clock_heat = 0;
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    duet_plan_t p = fused_plan(&hw, wl, 132, 99);
    duet_frozen_params_t f;
    cr_assert_eq(duet_sim_frozen_params(&hw, &p, &f), DUET_OK, "%s", duet_last_error());

    double mma = 2.0 * 256 * 128 * 64 / (4096 * 1.83e9); /* s */
    double l2share = 24000e9 / 132;                      /* bytes/s */
    /* The K step's contention: 2048 tiles in 16 waves of 132 CTAs keep 128 busy on average. */
    double t_sm = 128 * mma * (1 + 0.3 * 128 / 132) + 1.0e-6 + 256.0 * 128 * 2 / l2share + 0.3e-6;
    double hbm = (3200.0 / 27648.0) * 384 * 64 * 2 * 128 + 256.0 * 128 * 2; /* bytes */
    cr_assert_lt(hbm * 132 / 4300e9, t_sm, "the SM binds, not HBM");
    double t_full = 16 * (t_sm + 0.5e-6);
    cr_assert(t_rel_eq(t_full, 1.5139e-3, 1e-4), "T_full %.6g s", t_full);
    double comm_full = 512.0 * 32768 / 120e9 + 5e-6;
    cr_assert(t_rel_eq(comm_full, 144.81e-6, 1e-4));
    double l_tile = t_full * 132 / 2048;
    double lg = l_tile * (1 + 0.40 * (33.0 / 132) * (comm_full / t_full));

    cr_assert_eq(f.n_gemm, 2048);
    cr_assert_eq(f.n_comm, 512);
    cr_assert(t_rel_eq(f.lg, lg, 1e-12), "Lg %.9g s, want %.9g", f.lg, lg);
    cr_assert(t_rel_eq(f.lc_unit, comm_full / 512, 1e-12));
    cr_assert_eq(f.comm_sat, 1);

    /* Every CTA on the GEMM: no comm-home fraction, no interference. */
    duet_plan_t all = fused_plan(&hw, wl, 132, 132);
    cr_assert_eq(duet_sim_frozen_params(&hw, &all, &f), DUET_OK);
    cr_assert(t_rel_eq(f.lg, l_tile, 1e-12), "Lg %.9g s, want %.9g", f.lg, l_tile);
    /* Half of them home on comm: f_comm = 66 / 132. */
    duet_plan_t half = fused_plan(&hw, wl, 132, 66);
    cr_assert_eq(duet_sim_frozen_params(&hw, &half, &f), DUET_OK);
    cr_assert(t_rel_eq(f.lg, l_tile * (1 + 0.40 * 0.5 * (comm_full / t_full)), 1e-12));
}

/* Fewer GEMM tiles than CTAs: each tile is the whole full-chip time (spread = n_tiles), as one
 * wave of them is. 1024 x 1024 in 256x128 tiles is 4 x 8 = 32 tiles on 132 CTAs. */
Test(frozen_pricing, fewer_tiles_than_ctas_spread_over_the_tiles)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_workload_t wl = t_wl(1024, 1024, 8192, DUET_COLL_NONE, 0, 0, 1);
    duet_plan_t p = fused_plan(&hw, wl, 132, 132);
    duet_frozen_params_t f;
    cr_assert_eq(duet_sim_frozen_params(&hw, &p, &f), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(f.n_gemm, 32);
    cr_assert_eq(f.n_comm, 0);
    cr_assert_eq(f.lc_unit, 0.0);
    /* One wave: T_full is one tile plus one dequeue (duet_cost_gemm_static_s less the launch). */
    double t_full = duet_cost_gemm_static_s(&hw, &p, 132) - 6e-6;
    duet_gemm_cost_t c;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 32, &c), DUET_OK);
    cr_assert(t_rel_eq(t_full, c.t_sm + 0.5e-6, 1e-12));
    cr_assert(t_rel_eq(f.lg, t_full, 1e-12), "Lg %.9g s, want T_full %.9g", f.lg, t_full);
}

/* Policy frozen runs the reference schedule on exactly these inputs. */
Test(frozen_pricing, the_policy_schedules_the_priced_inputs)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_REDUCE, 2048, 4096, 2);
    duet_plan_t p = fused_plan(&hw, wl, 132, 110);
    duet_frozen_params_t f;
    cr_assert_eq(duet_sim_frozen_params(&hw, &p, &f), DUET_OK);
    duet_sim_result_t a, b;
    cr_assert_eq(duet_sim_frozen_schedule(ws, &f, NULL, &a), DUET_OK);
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_frozen, &hw, &p, NULL, &b), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(a.makespan_s, b.makespan_s);
    cr_assert_eq(a.gemm_finish_s, b.gemm_finish_s);
    cr_assert_eq(a.comm_finish_s, b.comm_finish_s);
}

/*
 * The reference scheduler's order among workers free at the same instant: the lowest id first.
 * Four comm-home workers and 8 comm tiles with a saturation floor of 8: every tile lasts 8 x Lc,
 * so all four come back at t = 8 together and take tiles 4..7 in id order.
 */
Test(frozen_pricing, simultaneous_workers_go_in_id_order)
{
    duet_frozen_params_t p = {0, 0.0, 8, 1.0, 4, 0, 0.0, 0.0, 8};
    duet_trace_t t;
    duet_trace_init(&t, "frozen");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_frozen_schedule(ws, &p, &t, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(t.n, 8);
    for (size_t i = 0; i < t.n; i++) {
        const duet_trace_rec_t *x = &t.recs[i];
        cr_assert_eq(x->cta, (int32_t)(x->tile % 4), "tile %lld ran on worker %d", (long long)x->tile, x->cta);
        cr_assert_eq(x->start_s, x->tile < 4 ? 0.0 : 8.0);
        cr_assert_eq(x->end_s - x->start_s, 8.0);
    }
    cr_assert_eq(r.makespan_s, 16.0);
    duet_trace_free(&t);
}
