/*
 * Copy mode (DUET_MODE_COPY): the plan's copy list, the configuration rules, and the fluid
 * simulator's makespans for small cases computed by hand from the profile's constants.
 */
#include <math.h>
#include <string.h>

#include "../../sim/internal.h"
#include "sim_util.h"

T_SIM_SUITE(copy_mode);

/* A copy-mode plan of `wl` on `rank` with `streams` copy streams and the GEMM on every SM. */
static duet_plan_t copy_plan(const duet_hw_t *hw, duet_workload_t wl, int32_t rank, int32_t streams)
{
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_COPY);
    cfg.comm_wgs = streams;
    cr_assert_eq(duet_config_validate(&cfg, &wl, hw), DUET_OK, "%s", duet_last_error());
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, rank, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

/*
 * h200 with round copy-engine constants, the link and HBM far from binding, and no dequeue cost:
 * launch 5 us, barriers 3 us, fork and join 10 us, 4 us a copy, 100 GB/s into a peer, 500 GB/s
 * locally.
 */
static duet_hw_t round_hw(void)
{
    duet_hw_t hw = t_hw("h200");
    hw.launch_us = 5;
    hw.comm_sync_us = 3;
    hw.ce_op_us = 10;
    hw.ce_copy_us = 4;
    hw.ce_gbs = 100;
    hw.ce_local_gbs = 500;
    hw.ce_engines = 2;
    hw.link_gbs = 1000;
    hw.hbm_gbs = 100000;
    hw.dequeue_gemm_us = 0;
    return hw;
}

Test(copy_mode, the_copy_list_of_each_collective)
{
    duet_hw_t hw = t_hw("h200");
    /* all_gather at world 4, rank 1: peers 2, 3, 0, then the local copy; each the whole 64 x 128
     * source into rows 64..127 of the output. */
    duet_plan_t p = copy_plan(&hw, t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 64, 128, 4), 1, 1);
    cr_assert_eq(p.comm.queue_len, 4);
    const int32_t peers[4] = {2, 3, 0, 1};
    for (int i = 0; i < 4; i++) {
        duet_copy_t c;
        duet_copy_get(&p.comm, i, &c);
        cr_assert(c.peer == peers[i] && c.src_off == 0 && c.dst_off == 64 * 128 && c.elems == 64 * 128, "%d", i);
    }
    /* 3 remote copies of 16 KiB (bf16), one local. */
    cr_assert(t_rel_eq(p.remote_bytes, 3 * 16384.0, 1e-15));
    cr_assert(t_rel_eq(p.bytes_per_peer_out, 16384.0, 1e-15) && t_rel_eq(p.bytes_per_peer_in, 16384.0, 1e-15));
    cr_assert_eq(p.comm_valid_tiles, 4);
    /* all_to_all at world 4, rank 3: row block p (16 rows) of the source to rows 48..63 of peer p. */
    p = copy_plan(&hw, t_wl(0, 0, 0, DUET_COLL_ALL_TO_ALL, 64, 128, 4), 3, 2);
    for (int i = 0; i < 4; i++) {
        duet_copy_t c;
        duet_copy_get(&p.comm, i, &c);
        cr_assert_eq(c.peer, i);
        cr_assert(c.src_off == i * 16 * 128 && c.dst_off == 48 * 128 && c.elems == 16 * 128, "%d", i);
    }
    /* broadcast from root 2: the root copies the whole tensor to 3 peers and itself; others none. */
    duet_workload_t b = t_wl(0, 0, 0, DUET_COLL_BROADCAST, 64, 128, 4);
    b.root = 2;
    p = copy_plan(&hw, b, 2, 1);
    cr_assert_eq(p.comm.queue_len, 4);
    cr_assert(t_rel_eq(p.bytes_per_peer_out, 16384.0, 1e-15) && p.bytes_per_peer_in == 0);
    p = copy_plan(&hw, b, 0, 1);
    cr_assert_eq(p.comm.queue_len, 0);
    cr_assert(t_rel_eq(p.bytes_per_peer_in, 16384.0, 1e-15));
}

Test(copy_mode, the_configuration_rules)
{
    duet_hw_t hw = t_hw("h200");
    duet_config_t c = duet_config_default(&hw, DUET_MODE_COPY);
    cr_assert(c.gemm_wgs == 132 && c.num_wgs == 132 && c.comm_wgs == 1, "every SM on the GEMM, one copy stream");
    char buf[32];
    cr_assert_str_eq(duet_config_split_str(&c, buf, sizeof(buf)), "132|1 CE");
    cr_assert_str_eq(duet_mode_name(DUET_MODE_COPY), "copy");
    int32_t m = -1;
    cr_assert(duet_mode_parse("copy", &m) == DUET_OK && m == DUET_MODE_COPY);
    duet_workload_t wl = t_wl(1024, 1024, 1024, DUET_COLL_REDUCE_SCATTER, 512, 1024, 2);
    cr_assert_eq(duet_config_validate(&c, &wl, &hw), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "copy mode moves bytes only: reduce_scatter") != NULL, "%s", duet_last_error());
    wl.coll = DUET_COLL_ALL_REDUCE;
    cr_assert_eq(duet_config_validate(&c, &wl, &hw), DUET_ERR_INVALID_ARG);
    wl.coll = DUET_COLL_ALL_GATHER;
    cr_assert_eq(duet_config_validate(&c, &wl, &hw), DUET_OK, "%s", duet_last_error());
    c.comm_wgs = DUET_MAX_COPY_STREAMS + 1;
    cr_assert_eq(duet_config_validate(&c, &wl, &hw), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "copy streams is outside [1, 8]") != NULL, "%s", duet_last_error());
    c.comm_wgs = 1;
    c.num_wgs = 133;
    cr_assert_eq(duet_config_validate(&c, &wl, &hw), DUET_ERR_INVALID_ARG);
    c.num_wgs = c.gemm_wgs = 133;
    cr_assert_eq(duet_config_validate(&c, &wl, &hw), DUET_ERR_INFEASIBLE, "more SMs than the chip has");
    /* The plan: the GEMM kernel on 132 SMs, the copy engines as the comm kernel with no SM. */
    duet_plan_t p = copy_plan(&hw, wl, 0, 2);
    cr_assert_eq(p.kernel[DUET_KERNEL_GEMM].role, DUET_ROLE_GEMM);
    cr_assert_eq(p.kernel[DUET_KERNEL_GEMM].grid, 132);
    cr_assert_eq(p.kernel[DUET_KERNEL_COMM].role, DUET_ROLE_COPY);
    cr_assert_eq(p.kernel[DUET_KERNEL_COMM].grid, 2);
    cr_assert_eq(p.comm_grid, 2);
    cr_assert_eq(p.steal, 0);
}

/*
 * An all_gather of 1024 x 4096 bf16 (8 MiB = 8388608 B) at world 2, no GEMM: one copy into the
 * peer (8388608 B at 100 GB/s = 83.88608 us) and the local one (at 500 GB/s = 16.777216 us), 4 us
 * each, after launch, barriers and fork/join (5 + 3 + 10 us).
 * One stream: one after the other, 18 + 8 + 83.88608 + 16.777216 = 126.663296 us.
 * Two streams on two engines: together, each the average copy 4 + 41.94304 + 8.388608 =
 * 54.331648 us: 72.331648 us. On one engine the two share it: 18 + 2 x 54.331648 = 126.663296 us.
 */
Test(copy_mode, a_collective_alone_by_hand)
{
    duet_hw_t hw = round_hw();
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 1024, 4096, 2);
    duet_sim_result_t r;
    duet_plan_t p = copy_plan(&hw, wl, 0, 1);
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(r.makespan_s, 126.663296e-6, 1e-9), "%.9g", r.makespan_s);
    cr_assert(t_rel_eq(r.comm_finish_s, 126.663296e-6, 1e-9));
    p = copy_plan(&hw, wl, 0, 2);
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(r.makespan_s, 72.331648e-6, 1e-9), "%.9g", r.makespan_s);
    hw.ce_engines = 1;
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(r.makespan_s, 126.663296e-6, 1e-9), "%.9g", r.makespan_s);
    /* The link caps a copy below its engine's rate. The simulator runs the average copy (half of
     * the bytes pushed, half local), which at full speed sends 4194304 B in 54.331648 us, 77.2
     * GB/s: at 50 GB/s the link binds, and each copy takes 4194304 B / 50 GB/s = 83.88608 us:
     * 18 + 2 x 83.88608 = 185.77216 us. */
    hw.link_gbs = 50;
    p = copy_plan(&hw, wl, 0, 1);
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(r.makespan_s, 185.77216e-6, 1e-9), "%.9g", r.makespan_s);
}

/*
 * A local copy is bounded by its engine's rate, not by hbm_gbs (an effective rate of the SMs'
 * traffic): at W = 1 the all_gather is one local copy of 1024 x 4096 bf16, 8388608 B, 4 us + 8388608
 * B / 500 GB/s = 20.777216 us after the launch, barriers and fork/join (18 us), whatever hbm_gbs
 * below the copy's 2 x 500 GB/s of reads and writes: 38.777216 us. (Its 16 MiB at 200 GB/s of HBM
 * would take 83.886 us.)
 */
Test(copy_mode, a_local_copy_runs_at_its_engine_rate)
{
    duet_hw_t hw = round_hw();
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 1024, 4096, 1);
    duet_sim_result_t r;
    static const double hbm[] = {200, 100};
    for (int i = 0; i < 2; i++) {
        hw.hbm_gbs = hbm[i];
        duet_plan_t p = copy_plan(&hw, wl, 0, 1);
        cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
        cr_assert(t_rel_eq(r.makespan_s, 38.777216e-6, 1e-9), "hbm %g: %.9g", hbm[i], r.makespan_s);
    }
    /* A copy byte weighs hbm_gbs / (2 ce_local_gbs) of the solver's HBM: 200 / 1000. */
    hw.hbm_gbs = 200;
    cr_assert(t_rel_eq(duet_cost_copy_hbm_weight(&hw), 0.2, 1e-15));
}

/*
 * The GEMM beside copies that outlast it runs every tile ce_gemm_stretch slower: its time after
 * the start, (1 + 0.25) times the GEMM's alone on every SM (HBM far from binding, no dequeue
 * cost). The copies start after the same launch, barriers and fork/join as the GEMM.
 */
Test(copy_mode, the_gemm_slows_while_copies_run)
{
    duet_hw_t hw = round_hw();
    hw.ce_gemm_stretch = 0.25;
    hw.ce_gbs = 1; /* 4 MiB (the average copy's push) at 1 GB/s: 4.2 ms, far longer than the GEMM */
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 1024, 4096, 2);
    duet_workload_t alone = t_wl(2048, 2048, 2048, DUET_COLL_NONE, 0, 0, 1);
    duet_sim_result_t r, a;
    duet_plan_t p = copy_plan(&hw, wl, 0, 2), pa = copy_plan(&hw, alone, 0, 1);
    cr_assert_eq(pa.kernel[DUET_KERNEL_COMM].grid, 0, "a GEMM alone has no copy stream");
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &pa, NULL, &a), DUET_OK, "%s", duet_last_error());
    double t0 = (5 + 3 + 10) * 1e-6, t0a = 5e-6;
    cr_assert(t_rel_eq(r.gemm_finish_s - t0, 1.25 * (a.gemm_finish_s - t0a), 1e-9), "%.9g %.9g", r.gemm_finish_s,
              a.gemm_finish_s);
    /* Copies: the average copy, 4194304 B pushed at 1 GB/s and 4194304 B copied at 500 GB/s, is
     * 4 + 4194.304 + 8.388608 us; both run at once on two engines. */
    cr_assert(t_rel_eq(r.makespan_s, t0 + (4 + 4194.304 + 8.388608) * 1e-6, 1e-9), "%.9g", r.makespan_s);
}

/* The sweep: copy mode only where the collective moves bytes alone; asked alone otherwise, refused. */
Test(copy_mode, the_sweep_offers_it_where_the_collective_allows)
{
    duet_hw_t hw = t_hw("h200");
    duet_sweep_params_t sp = duet_sweep_default_params();
    cr_assert(sp.modes & (1u << DUET_MODE_COPY), "in the default sweep");
    sp.n_tiles = 1;
    sp.tiles[0] = (duet_gemm_tile_t){256, 128, 64};
    sp.n_split_ks = 1;
    sp.split_ks[0] = 1;
    sp.modes = 1u << DUET_MODE_COPY;
    duet_sweep_result_t res;
    /* all_to_all at world 8: 8 copies a rank, 1..8 streams. */
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_TO_ALL, 1024, 2048, 8);
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, 8);
    duet_sweep_result_free(&res);
    wl.coll = DUET_COLL_ALL_REDUCE;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "all_reduce needs a reduction") != NULL, "%s", duet_last_error());
    sp.modes |= 1u << DUET_MODE_FUSED;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    for (size_t i = 0; i < res.n; i++)
        cr_assert_eq(res.points[i].cfg.mode, DUET_MODE_FUSED);
    duet_sweep_result_free(&res);
}

/* The makespan of cfg simulated from a plan built for it alone (rank 0, as the sweep's critical
 * rank is for these symmetric workloads). */
static double alone_s(const duet_hw_t *hw, const duet_workload_t *wl, const duet_config_t *cfg)
{
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(wl, cfg, duet_plan_critical_rank(wl), &p), DUET_OK, "%s", duet_last_error());
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    return r.makespan_s;
}

/*
 * The sweep reuses one plan's comm queue across its configurations; copy mode's queue (whole-block
 * copies) is not fused mode's (comm tiles). Swept together, every point and the static default
 * (fused) must be priced as a plan built for that configuration alone: a fused queue under copy
 * mode priced an 8192^3 + all_gather's copies at 5262 us where copy mode alone gives 1639 us, and
 * a copy queue under the static default priced it at 3368 us instead of 1717 us.
 */
Test(copy_mode, the_sweep_prices_each_mode_with_its_own_queue, .timeout = 120)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 4096, 8192, 2);
    const uint32_t mixes[3] = {1u << DUET_MODE_COPY, (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_COPY),
                               (1u << DUET_MODE_CONCURRENT) | (1u << DUET_MODE_COPY) | (1u << DUET_MODE_FUSED)};
    for (int m = 0; m < 3; m++) {
        duet_sweep_params_t sp = duet_sweep_default_params();
        sp.modes = mixes[m];
        sp.n_tiles = 1;
        sp.tiles[0] = (duet_gemm_tile_t){256, 256, 64};
        sp.n_split_ks = 1;
        sp.split_ks[0] = 1;
        sp.top = 0;
        duet_sweep_result_t res;
        cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
        int copies = 0;
        for (size_t i = 0; i < res.n; i++) {
            copies += res.points[i].cfg.mode == DUET_MODE_COPY;
            double want = alone_s(&hw, &wl, &res.points[i].cfg);
            cr_assert(t_rel_eq(res.points[i].makespan_s, want, 1e-12),
                      "mix %d point %zu (mode %d): %.9g s, alone %.9g s", m, i, (int)res.points[i].cfg.mode,
                      res.points[i].makespan_s, want);
        }
        /* all_gather at W = 2: one remote and one local copy a rank, so 1 or 2 streams. */
        cr_assert_eq(copies, 2, "mix %d: 1 or 2 copy streams", m);
        duet_config_t d = duet__sweep_config_base(&hw, &sp, DUET_MODE_FUSED);
        cr_assert(t_rel_eq(res.dflt.makespan_s, alone_s(&hw, &wl, &d), 1e-12), "mix %d: default %.9g s", m,
                  res.dflt.makespan_s);
        duet_sweep_result_free(&res);
    }
}
