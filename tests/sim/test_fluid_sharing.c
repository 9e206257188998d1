/*
 * The fluid engine's sharing (docs/simulator.md, policy fluid), worked by hand: running tiles are
 * flows; the link's capacity C(f) = peak x f / (f + half) depends on the bytes f in flight on it;
 * speeds are the max-min fair allocation (progressive filling): every unfrozen tile rises to the
 * lowest of its own bound and cap / demand of each resource, the tiles of that bottleneck freeze
 * and take their share, the others go on with what is left. The tile prices come from the cost
 * model (tested by hand in tests/model); this file checks what the engine does with them.
 */
#include "sim_util.h"

T_SIM_SUITE(fluid_sharing);

#define US 1e-6
#define B_TILE (256.0 * 64 * 2) /* bytes of one 256 x 64 bf16 comm tile */

/*
 * all_reduce W = 2 of 2048 x 4096 alone on 64 CTAs (start profile): 256 owned tiles, 4 rounds of
 * 64 in lockstep. A tile pulls and pushes 32 KiB each; by symmetry the peer's pull and push cross
 * the same links, so each direction carries 2 x 32 KiB per tile and holds one pushing CTA's
 * 21 GB/s x 1.08 us = 22680 B plus an 8 KiB pull window in flight:
 *   f = 64 x 30872 B, C = 380 GB/s x f / (f + 129 KiB) = 356.2 GB/s,
 * against 64 x 64 KiB / 6.08 us = 690 GB/s wanted: every tile runs at C / demand and a round takes
 * 64 x 64 KiB / C = 11.78 us. Dequeues: the first, and the last two rounds' (0.5 us each).
 */
Test(fluid_sharing, all_reduce_on_a_saturated_switch_link)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_plan_t p = t_sim_plan(&hw, t_wl(0, 0, 0, DUET_COLL_ALL_REDUCE, 2048, 4096, 2), DUET_MODE_CONCURRENT, 0, 64);
    cr_assert_eq(p.comm.queue_len, 256);
    duet_comm_cost_t cc;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &cc), DUET_OK);
    cr_assert(t_rel_eq(cc.t_alone, 4 * 1.08 * US + B_TILE / 21e9 + 0.2 * US, 1e-12));
    double f = 64 * (21e9 * 1.08e-6 + 8 * 1024.0);
    double cap = 380e9 * f / (f + 129 * 1024.0);
    double demand = 64 * 2 * B_TILE / cc.t_alone;
    cr_assert_lt(cap, demand, "the link binds");
    double round = 64 * 2 * B_TILE / cap;
    cr_assert(t_rel_eq(round, 11.7755 * US, 1e-4), "%.6f us", round / US);
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    double t0 = (6 + 4.3) * US;
    cr_assert(t_rel_eq(r.comm_finish_s, t0 + 0.5 * US + 4 * round + 0.5 * US, 1e-9), "%.6f us", r.comm_finish_s / US);
    cr_assert(t_rel_eq(r.makespan_s, r.comm_finish_s + 0.5 * US, 1e-9), "%.6f us", r.makespan_s / US);
}

/*
 * all_gather W = 8 on an MI300X mesh: every tile pushes 7 x 32 KiB, one link per peer (7 of the
 * 7): peak 7 x 42.86 GB/s, half of it at 7 x 16 KiB in flight. 64 CTAs each hold one pushing CTA's
 * 9 GB/s x 0.66 us = 5940 B: f = 380160 B, C = 300.02 GB/s x f / (f + 114688) = 230.5 GB/s against
 * 64 x 7 x 32 KiB / 25.79 us = 569 GB/s wanted. 512 tiles are 8 rounds of 64 x 7 x 32 KiB / C;
 * the first dequeue and the last two rounds' cost 2.36 us each; launch 4.7 us and barriers 2.6 us.
 */
Test(fluid_sharing, all_gather_on_a_mesh_uses_a_link_per_peer)
{
    duet_hw_t hw = t_hw("mi300x");
    duet_plan_t p = t_sim_plan(&hw, t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 2048, 4096, 8), DUET_MODE_CONCURRENT, 0, 64);
    cr_assert_eq(p.comm.queue_len, 512);
    duet_comm_cost_t cc;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &cc), DUET_OK);
    cr_assert(t_rel_eq(cc.t_alone, 7 * B_TILE / 9e9 + 0.3 * US, 1e-12));
    double f = 64 * 9e9 * 0.66e-6;
    double cap = 7 * 42.86e9 * f / (f + 7 * 16 * 1024.0);
    cr_assert(t_rel_eq(cap, 230.5e9, 1e-3), "%.4g", cap);
    cr_assert_lt(cap, 64 * 7 * B_TILE / cc.t_alone);
    double round = 64 * 7 * B_TILE / cap;
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    double want = (4.7 + 2.6) * US + 3 * 2.36 * US + 8 * round;
    cr_assert(t_rel_eq(r.makespan_s, want, 1e-9), "%.6f us, want %.6f", r.makespan_s / US, want / US);
}

/*
 * A GEMM alone that HBM binds: 4096^3 in 256x128 tiles on 128 CTAs with HBM cut to 100 GB/s.
 * Each wave of 128 tiles shares the 100 GB/s, so a tile takes 128 x its HBM bytes / 100 GB/s
 * (far more than its SM time); 4 waves, each after a 0.5 us dequeue, then the failing dequeues.
 */
Test(fluid_sharing, gemm_waves_share_hbm)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.hbm_gbs = 100;
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.num_wgs = cfg.gemm_wgs = 128;
    cfg.comm_wgs = 0;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK);
    duet_gemm_cost_t c;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 128, &c), DUET_OK);
    double tile = 128 * c.hbm_bytes / 100e9;
    cr_assert_gt(tile, 2 * c.t_sm, "HBM binds");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    double want = 6 * US + 4 * (0.5 * US + tile) + 2 * 0.5 * US;
    cr_assert(t_rel_eq(r.makespan_s, want, 1e-9), "%.6f us, want %.6f", r.makespan_s / US, want / US);
}

/*
 * Two bottlenecks in turn: 100 GEMM CTAs (8192^3, 256x128) beside 32 comm CTAs of an all_gather
 * (W = 2, 16384 x 4096) on the 32 idle SMs, HBM cut to 1400 GB/s.
 *   Link: 32 x 22680 B in flight give C = 380 GB/s x f / (f + 129 KiB); the comm tiles want
 *   32 x 32 KiB / t_c; the link is the first bottleneck (level L1 = C / demand) if HBM would allow
 *   more: 1400 GB/s / (comm 32 x 3 x 32 KiB / t_c + GEMM 100 x hbm_g / t_sm) > L1.
 *   The comm tiles freeze at L1 and take 32 x 3 x 32 KiB / t_c x L1 of HBM (read, local write and
 *   the peer's push into us); the GEMM tiles rise on the rest until HBM is full:
 *   L2 = (1400 GB/s - that) / (100 x hbm_g / t_sm).
 * The first GEMM tile then lasts t_sm / L2 and a comm tile t_c / L1 (the comm runs for longer than
 * that GEMM tile, and its dequeues hide behind its tiles).
 */
Test(fluid_sharing, frozen_tiles_leave_the_rest_of_a_resource_to_the_others)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.hbm_gbs = 1400;
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 16384, 4096, 2);
    duet_plan_t p = t_sim_plan(&hw, wl, DUET_MODE_CONCURRENT, 100, 32);
    duet_gemm_cost_t gc;
    duet_comm_cost_t cc;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 100, &gc), DUET_OK);
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &cc), DUET_OK);
    double t_c = cc.t_alone, t_sm = gc.t_sm;
    double f = 32 * 21e9 * 1.08e-6;
    double cap = 380e9 * f / (f + 129 * 1024.0);
    double l1 = cap / (32 * B_TILE / t_c);
    double hbm_c = 32 * 3 * B_TILE / t_c, hbm_g = 100 * gc.hbm_bytes / t_sm; /* bytes/s at full speed */
    cr_assert(l1 < 1 && 1400e9 / (hbm_c + hbm_g) > l1, "the link binds first (L1 %.4f)", l1);
    double l2 = (1400e9 - hbm_c * l1) / hbm_g;
    cr_assert(l2 > l1 && l2 < 1, "then HBM binds the GEMM (L2 %.4f)", l2);
    duet_trace_t t;
    duet_trace_init(&t, "x");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, &t, &r), DUET_OK, "%s", duet_last_error());
    int gemm = 0, comm = 0;
    for (size_t i = 0; i < t.n; i++) {
        const duet_trace_rec_t *x = &t.recs[i];
        double d = x->end_s - x->start_s;
        if (x->queue == DUET_QUEUE_GEMM && x->tile < 100) {
            cr_assert(t_rel_eq(d, t_sm / l2, 1e-9), "GEMM tile %lld: %.4f us, want %.4f", (long long)x->tile, d / US,
                      t_sm / l2 / US);
            gemm++;
        } else if (x->queue == DUET_QUEUE_COMM && x->tile < 32) {
            cr_assert(t_rel_eq(d, t_c / l1, 1e-9), "comm tile %lld: %.4f us, want %.4f", (long long)x->tile, d / US,
                      t_c / l1 / US);
            comm++;
        }
    }
    cr_assert(gemm == 100 && comm == 32);
    duet_trace_free(&t);
}

/*
 * Remote loads beside running GEMM tiles: a comm tile's pull part stretches by rtt_gemm_stretch
 * (0.5) x running GEMM CTAs / SMs = 0.5 x 66 / 132. One all_reduce CTA (W = 2: 4 round trips of
 * 1.08 us a tile, far below the link) beside 66 GEMM CTAs that run without a gap (GEMM dequeues
 * cost nothing here): every comm tile takes t_alone + 0.25 x 4.32 us.
 */
Test(fluid_sharing, remote_loads_stretch_with_the_running_gemm_ctas)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.dequeue_gemm_us = 0;
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_REDUCE, 2048, 4096, 2);
    duet_plan_t p = t_sim_plan(&hw, wl, DUET_MODE_CONCURRENT, 66, 1);
    duet_comm_cost_t cc;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &cc), DUET_OK);
    cr_assert(t_rel_eq(cc.t_pull, 4 * 1.08 * US, 1e-12));
    double want = cc.t_alone + 0.5 * 66 / 132 * cc.t_pull;
    duet_trace_t t;
    duet_trace_init(&t, "x");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, &t, &r), DUET_OK, "%s", duet_last_error());
    int n = 0;
    for (size_t i = 0; i < t.n; i++) {
        const duet_trace_rec_t *x = &t.recs[i];
        if (x->queue != DUET_QUEUE_COMM || x->end_s > r.gemm_finish_s)
            continue;
        cr_assert(t_rel_eq(x->end_s - x->start_s, want, 1e-9), "comm tile %lld: %.4f us, want %.4f", (long long)x->tile,
                  (x->end_s - x->start_s) / US, want / US);
        n++;
    }
    cr_assert_eq(n, 256, "every comm tile ran beside the GEMM");
    duet_trace_free(&t);
}

/*
 * The vendor library's GEMM schedules its tiles itself: no dequeue before or after a tile. 4096^3
 * in 256x128 tiles on 128 CTAs (start profile) is 4 waves of the vendor tile's time after the
 * 6 us launch, and nothing else.
 */
Test(fluid_sharing, the_vendor_gemm_pays_no_dequeue)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_VENDOR);
    cfg.gemm_wgs = 128;
    cfg.comm_wgs = 4;
    cfg.num_wgs = 132;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    duet_gemm_cost_t c;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 128, &c), DUET_OK);
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    double want = 6 * US + 4 * c.t_sm;
    cr_assert(t_rel_eq(r.makespan_s, want, 1e-9), "%.6f us, want %.6f", r.makespan_s / US, want / US);
}

/*
 * The comm drain's prefetch counts the grid of the kernel that holds the comm queue: the comm
 * kernel's 64 CTAs in concurrent mode, whatever the GEMM kernel's size. All_gather W = 2 of
 * 2048 x 4096 (512 tiles, 8 rounds of 64) beside 66 GEMM CTAs on their own SMs: the dequeues after
 * rounds 0-5 hide (64 r + 2 x 64 < 512); the first one and those after rounds 6 and 7 are paid,
 * and the last of these (finding the queue empty) follows the last tile. A comm dequeue 5 us
 * dearer thus moves the end of the last comm tile by 2 x 5 us (nothing the comm shares depends on
 * the GEMM here: no pulls to stretch, HBM far from full).
 */
Test(fluid_sharing, the_prefetch_counts_the_comm_kernels_grid)
{
    duet_hw_t hw = t_hw_h200_start(), slow = hw;
    slow.dequeue_comm_us = hw.dequeue_comm_us + 5.0;
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    duet_plan_t p = t_sim_plan(&hw, wl, DUET_MODE_CONCURRENT, 66, 64);
    cr_assert_eq(p.comm.queue_len, 512);
    duet_sim_result_t a, b;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &a), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_sim_run(ws, NULL, &slow, &p, NULL, &b), DUET_OK, "%s", duet_last_error());
    cr_assert_lt(a.comm_finish_s, a.gemm_finish_s, "the comm ends beside the GEMM");
    cr_assert(fabs(b.comm_finish_s - a.comm_finish_s - 2 * 5 * US) < 1e-12, "%.6f us later",
              (b.comm_finish_s - a.comm_finish_s) / US);
}

/*
 * Fused GEMM tiles are priced with the GEMM-home CTAs running together (their L2 reuse), not the
 * whole grid: 64 running tiles of 1024 x 4096 x 4096 (4 x 32 tiles of 256x128, group_m 8) span
 * 4 x 16 tiles and share 1 - 3072 / (64 x 384) of their rows in L2, all 128 would span 4 x 32 and
 * share 1 - 5120 / (128 x 384). 64 of 132 CTAs start on the GEMM (after a 0.5 us dequeue), the
 * other 68 find the comm queue empty and 64 of them steal the remaining tiles one dequeue later. HBM cut to 100 GB/s
 * binds every tile, which needs W bytes (its HBM bytes at 64 running): the first 64 run alone for 0.5 us at 100 GB/s /
 * 64 each, then all 128 share it; the first cohort ends at 6 us + 128 W / 100 GB/s, the second 0.5 us later, then one
 * failing dequeue.
 */
Test(fluid_sharing, fused_gemm_tiles_are_priced_at_the_gemm_home_ctas)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.hbm_gbs = 100;
    duet_workload_t wl = t_wl(1024, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.gemm_wgs = 64;
    cfg.comm_wgs = 68;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.gemm.tiles, 128);
    duet_gemm_cost_t c64, c128;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 64, &c64), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 128, &c128), DUET_OK);
    cr_assert(t_rel_eq(c64.l2_hit, 1 - 3072.0 / (64 * 384), 1e-12), "%g", c64.l2_hit);
    cr_assert(t_rel_eq(c128.l2_hit, 1 - 5120.0 / (128 * 384), 1e-12), "%g", c128.l2_hit);
    double w = c64.hbm_bytes;
    cr_assert_lt(100e9 / 64, w / c64.t_sm, "HBM binds from the start");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    double first = 6 * US + 128 * w / 100e9;
    cr_assert(t_rel_eq(r.gemm_finish_s, first + 0.5 * US, 1e-9), "%.6f us, want %.6f", r.gemm_finish_s / US,
              (first + 0.5 * US) / US);
    cr_assert(t_rel_eq(r.makespan_s, first + 1.0 * US, 1e-9));
}
