/*
 * The simulator: the reference scheduler's golden values, the H200 push-saturation curve,
 * determinism, conservation of tiles, concurrent-mode residency, sweeps.
 */
#include <unistd.h>

#include "sim_util.h"

T_SIM_SUITE(sim);

Test(sim, frozen_reproduces_all_41_reference_cases)
{
    cJSON *g = t_load_golden();
    cr_assert_not_null(g);
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "schedule_makespan"))
    {
        duet_frozen_params_t p = {
            (int64_t)t_num(c, "n_gemm"),   t_num(c, "Lg"),
            (int64_t)t_num(c, "n_comm"),   t_num(c, "Lc_unit"),
            (int32_t)t_num(c, "num_wgs"),  (int32_t)t_num(c, "gemm_wgs"),
            t_num(c, "c_atomic_gemm"),     t_num(c, "c_atomic_comm"),
            (int32_t)t_num(c, "comm_sat"),
        };
        duet_sim_result_t r;
        cr_assert_eq(duet_sim_frozen_schedule(ws, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
        double want = t_num(c, "makespan");
        cr_assert(t_rel_eq(r.makespan_s, want, 1e-9), "case %d: %.17g != %.17g", n, r.makespan_s, want);
        n++;
    }
    cr_assert_eq(n, 41);
    cJSON_Delete(g);
}

Test(sim, frozen_trace_runs_every_tile_once)
{
    duet_frozen_params_t p = {100, 1.0, 50, 0.1, 10, 8, 0.01, 0.02, 4};
    duet_trace_t t;
    duet_trace_init(&t, "frozen");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_frozen_schedule(ws, &p, &t, &r), DUET_OK);
    cr_assert_eq(t.n, 150);
    int g[100] = {0}, c[50] = {0};
    int64_t stolen = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.recs[i].queue == DUET_QUEUE_GEMM)
            g[t.recs[i].tile]++;
        else
            c[t.recs[i].tile]++;
        stolen += t.recs[i].stolen;
        cr_assert_eq(t.recs[i].stolen, (t.recs[i].cta < 8) != (t.recs[i].queue == DUET_QUEUE_GEMM));
    }
    for (int i = 0; i < 100; i++)
        cr_assert_eq(g[i], 1);
    for (int i = 0; i < 50; i++)
        cr_assert_eq(c[i], 1);
    cr_assert_eq(stolen, r.stolen_comm + r.stolen_gemm);
    cr_assert(t_rel_eq(r.makespan_s, 12.52, 1e-9));
    duet_trace_free(&t);
    p.comm_sat = 0;
    cr_assert_eq(duet_sim_frozen_schedule(ws, &p, NULL, &r), DUET_ERR_INVALID_ARG);
}

/*
 * The raw NVLink fabric of two H200s (2026-11), measured with a streaming remote-store kernel (512 threads,
 * 16-byte stores), not with duet's comm tile. The link model (capacity against bytes in flight,
 * per-CTA rate cap) must reproduce that curve from these constants; the shipped h200 profile
 * instead carries the constants fitted to duet's own kernels (tuning_data/h200.json), whose
 * per-CTA rate and per-tile costs are those of duet's comm tile, so this test builds its own.
 */
static duet_hw_t h200_raw_fabric(void)
{
    duet_hw_t hw = t_hw("h200");
    hw.link_gbs = 380;               /* GB/s: asymptote of that remote-store curve, per direction */
    hw.link_half_inflight_kib = 129; /* KiB in flight for half of it (same fit) */
    hw.cta_push_gbs = 19.9;          /* GB/s one pushing CTA reaches (measured) */
    hw.remote_rtt_us = 1.08;         /* us: 8 KiB in flight per CTA / 7.6 GB/s one-CTA load rate (measured) */
    hw.comm_tile_overhead_us = 0.2;  /* us per tile of the streaming kernel: small against 256x1024 tiles */
    hw.dequeue_comm_us = 0.5;        /* us: one contended atomicAdd */
    /* The streaming kernel only stored to the peer; duet's all_gather tile also copies its rows into
     * its own output, at the comm tile's local rate of the shipped profile (about 36 GB/s read +
     * write, fitted on one GPU), which would bound one CTA below the link. Not what was measured. */
    hw.cta_local_gbs = 1000; /* GB/s */
    return hw;
}

/* Measured remote-store bandwidth per direction, 2 GPUs pushing, 512 MB per rank. */
Test(sim, fluid_reproduces_the_h200_push_saturation_curve)
{
    const int ctas[] = {1, 2, 4, 8, 16, 24, 32, 48, 66, 100, 132, 264};
    const double gbs[] = {19.9, 39.5, 78.4, 152.5, 292.6, 284.3, 296.2, 326.7, 340.0, 357.0, 360.4, 363.0};
    duet_hw_t hw = h200_raw_fabric();
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 16384, 16384, 2); /* 512 MiB of bf16 */
    for (size_t i = 0; i < sizeof(ctas) / sizeof(ctas[0]); i++) {
        duet_config_t cfg = duet_config_default(&hw, DUET_MODE_CONCURRENT);
        cfg.gemm_wgs = 0;
        cfg.comm_wgs = ctas[i];
        cfg.num_wgs = ctas[i];
        /* Large tiles, like the streaming kernel that was measured: per-tile costs stay small. */
        cfg.cm = 256;
        cfg.cn = 1024;
        duet_plan_t p;
        cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
        duet_sim_result_t r;
        cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
        double bw = p.comm_total.push_bytes / (r.makespan_s - (hw.launch_us + hw.comm_sync_us) * 1e-6) / 1e9;
        cr_assert(fabs(bw / gbs[i] - 1) <= 0.10, "%d CTAs: simulated %.1f GB/s, measured %.1f", ctas[i], bw, gbs[i]);
    }
}

Test(sim, fluid_is_deterministic_to_the_byte)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(8192, 8192, 4096, DUET_COLL_ALL_REDUCE, 4096, 8192, 2);
    duet_plan_t p = t_sim_plan(&hw, wl, DUET_MODE_FUSED, 100, 0);
    char path[2][64];
    duet_sim_result_t r[2];
    for (int k = 0; k < 2; k++) {
        duet_trace_t t;
        duet_trace_init(&t, "x");
        cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, &t, &r[k]), DUET_OK);
        t_tmp_path(path[k], sizeof(path[k]), k ? "det-1.json" : "det-0.json");
        cr_assert_eq(duet_trace_write_json(&t, &p, &hw, path[k]), DUET_OK);
        duet_trace_free(&t);
    }
    cr_assert_eq(memcmp(&r[0], &r[1], offsetof(duet_sim_result_t, cta_busy_s)), 0);
    FILE *a = fopen(path[0], "rb"), *b = fopen(path[1], "rb");
    int ca, cb;
    do {
        ca = fgetc(a);
        cb = fgetc(b);
        cr_assert_eq(ca, cb, "the two traces differ");
    } while (ca != EOF);
    fclose(a);
    fclose(b);
    unlink(path[0]);
    unlink(path[1]);
}

Test(sim, fluid_runs_every_tile_exactly_once)
{
    duet_hw_t hw = t_hw("h200");
    const int32_t modes[] = {DUET_MODE_FUSED, DUET_MODE_CONCURRENT};
    const int32_t colls[] = {DUET_COLL_ALL_GATHER, DUET_COLL_ALL_REDUCE, DUET_COLL_REDUCE_SCATTER, DUET_COLL_ALL_TO_ALL,
                             DUET_COLL_BROADCAST};
    for (int mi = 0; mi < 2; mi++)
        for (int ci = 0; ci < 5; ci++) {
            duet_workload_t wl = t_wl(3000, 2000, 1000, colls[ci], 2048, 4096, 4);
            duet_plan_t p = t_sim_plan(&hw, wl, modes[mi], modes[mi] == DUET_MODE_FUSED ? 90 : 120, 40);
            duet_trace_t t;
            duet_trace_init(&t, "x");
            duet_sim_result_t r;
            cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, &t, &r), DUET_OK, "%s", duet_last_error());
            cr_assert_eq((int64_t)t.n, p.gemm.tiles + p.comm.queue_len);
            char *seen = calloc((size_t)(p.gemm.tiles + p.comm.queue_len), 1);
            double busy = 0;
            for (size_t i = 0; i < t.n; i++) {
                const duet_trace_rec_t *x = &t.recs[i];
                int64_t slot = x->queue == DUET_QUEUE_GEMM ? x->tile : p.gemm.tiles + x->tile;
                cr_assert_eq(seen[slot], 0);
                seen[slot] = 1;
                cr_assert(x->end_s > x->start_s && x->end_s <= r.makespan_s);
                cr_assert(x->cta >= 0 && x->cta < r.n_ctas);
                busy += x->end_s - x->start_s;
                if (modes[mi] == DUET_MODE_CONCURRENT)
                    cr_assert_eq(x->stolen, 0, "no stealing between kernels");
            }
            double sum = 0;
            for (int32_t k = 0; k < r.n_ctas; k++)
                sum += r.cta_busy_s[k];
            cr_assert(t_rel_eq(sum, busy, 1e-9));
            cr_assert(t_rel_eq(r.gemm_busy_s + r.comm_busy_s, busy, 1e-9));
            free(seen);
            duet_trace_free(&t);
        }
}

Test(sim, fluid_gemm_alone_is_waves_of_tiles)
{
    duet_hw_t hw = t_hw_h200_start();
    /* 16 x 32 = 512 tiles on 128 CTAs: 4 full waves, nothing shared but HBM (not saturated). */
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.num_wgs = cfg.gemm_wgs = 128;
    cfg.comm_wgs = 0;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK);
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    duet_gemm_cost_t c;
    duet_cost_gemm_tile(&hw, &p, 128, &c);
    double d = 0.5e-6, launch = 6e-6;
    /* Four (dequeue + tile), then the failing dequeues on both queues. */
    double want = launch + 4 * (d + c.t_sm) + 2 * d;
    cr_assert(t_rel_eq(r.makespan_s, want, 1e-9), "%.9g vs %.9g", r.makespan_s, want);
    cr_assert(t_rel_eq(r.gemm_finish_s, launch + 4 * (d + c.t_sm), 1e-9));
    cr_assert_eq(r.comm_finish_s, 0.0);
}

Test(sim, contention_slows_both_jobs)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.hbm_gbs = 800; /* make HBM the bottleneck */
    duet_workload_t g = t_wl(8192, 8192, 2048, DUET_COLL_NONE, 0, 0, 1);
    duet_workload_t gc = t_wl(8192, 8192, 2048, DUET_COLL_ALL_GATHER, 8192, 8192, 2);
    duet_plan_t pg = t_sim_plan(&hw, g, DUET_MODE_CONCURRENT, 100, 0);
    duet_plan_t pgc = t_sim_plan(&hw, gc, DUET_MODE_CONCURRENT, 100, 32);
    duet_sim_result_t rg, rgc;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &pg, NULL, &rg), DUET_OK);
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &pgc, NULL, &rgc), DUET_OK);
    cr_assert(rgc.gemm_finish_s > rg.gemm_finish_s * 1.05, "GEMM alone %.4g ms, with comm %.4g ms",
              rg.gemm_finish_s * 1e3, rgc.gemm_finish_s * 1e3);
}

Test(sim, concurrent_comm_ctas_wait_for_sms)
{
    duet_hw_t hw = t_hw("h200");
    hw.comm_coresident = 0;
    /* 132 GEMM CTAs take every SM; the 8 comm CTAs can only start once a GEMM CTA has left.
     * 512 GEMM tiles on 132 CTAs: some CTAs run 3 tiles, some 4. */
    duet_workload_t wl = t_wl(4096, 4096, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_plan_t p = t_sim_plan(&hw, wl, DUET_MODE_CONCURRENT, 132, 8);
    duet_trace_t t;
    duet_trace_init(&t, "x");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, &t, &r), DUET_OK, "%s", duet_last_error());
    double first_comm = 1e9, last_end[132] = {0};
    for (size_t i = 0; i < t.n; i++) {
        const duet_trace_rec_t *x = &t.recs[i];
        if (x->queue == DUET_QUEUE_COMM && x->start_s < first_comm)
            first_comm = x->start_s;
        if (x->queue == DUET_QUEUE_GEMM && x->end_s > last_end[x->cta])
            last_end[x->cta] = x->end_s;
    }
    double first_exit = 1e9;
    for (int i = 0; i < 132; i++)
        first_exit = fmin(first_exit, last_end[i]);
    cr_assert(first_comm > first_exit, "comm started at %.3g us, before the first GEMM CTA left (%.3g us)",
              first_comm * 1e6, first_exit * 1e6);
    cr_assert(first_comm < r.gemm_finish_s, "but before the GEMM as a whole finished");
    duet_trace_free(&t);
    /* With room beside the GEMM CTAs they start at once instead. */
    hw.comm_coresident = 1;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &r), DUET_OK);
    cr_assert(r.comm_finish_s < r.gemm_finish_s);
}

Test(sim, policies_refuse_what_they_do_not_model)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_plan_t p = t_sim_plan(&hw, wl, DUET_MODE_CONCURRENT, 100, 32);
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_frozen, &hw, &p, NULL, &r), DUET_ERR_UNSUPPORTED);
    cr_assert(strstr(duet_last_error(), "fused") != NULL);
    /* A profile whose shared memory cannot hold the tile: infeasible, not a crash. */
    duet_plan_t f = t_sim_plan(&hw, wl, DUET_MODE_FUSED, 100, 0);
    hw.smem_kib = 64;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &f, NULL, &r), DUET_ERR_INFEASIBLE);
    cr_assert_eq(duet_sim_policy_find("frozen"), &duet_sim_policy_frozen);
    cr_assert_null(duet_sim_policy_find("quantum"));
}

Test(sim, sweep_ranks_and_places_the_default)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_REDUCE, 2048, 8192, 2);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.n_tiles = 2;
    sp.tiles[0] = (duet_gemm_tile_t){256, 128, 64};
    sp.tiles[1] = (duet_gemm_tile_t){128, 128, 64};
    sp.split_step = 4;
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    /* fused 1..132 step 4 (33 values) + concurrent 1..131 step 4 (33 values), two tiles; and
     * stream-K at the splits whose plan splits the GEMM's last wave (tests/sim/test_stream_k.c). */
    size_t n_sk = 0;
    for (size_t i = 0; i < res.n; i++)
        n_sk += res.points[i].cfg.stream_k != 0;
    cr_assert_eq(res.n - n_sk, (size_t)(33 + 33) * 2);
    cr_assert_gt(n_sk, 0);
    /* Ranked by time; tied times (DUET_RANK_TIE_REL) may come in either order. */
    for (size_t i = 1; i < res.n; i++)
        cr_assert(res.points[i - 1].makespan_s <= res.points[i].makespan_s * (1 + DUET_RANK_TIE_REL));
    size_t better = 0;
    for (size_t i = 0; i < res.n; i++)
        better += res.points[i].makespan_s < res.dflt.makespan_s;
    cr_assert_eq(res.default_rank, better + 1);
    cr_assert_eq(res.dflt.cfg.gemm_wgs, 99);
    cr_assert(res.events > 0);
    char path[64];
    t_tmp_path(path, sizeof(path), "curve.svg");
    cr_assert_eq(duet_sweep_write_svg(&res, "t", path), DUET_OK);
    FILE *f = fopen(path, "rb");
    char head[64] = {0};
    cr_assert_eq(fread(head, 1, 38, f), 38);
    fclose(f);
    cr_assert(strstr(head, "<?xml") == head);
    unlink(path);
    duet_sweep_result_free(&res);

    sp.policy = &duet_sim_policy_frozen;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_ERR_UNSUPPORTED, "frozen with both modes");
    sp.modes = 1u << DUET_MODE_FUSED;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK);
    cr_assert_eq(res.n, 33 * 2);
    duet_sweep_result_free(&res);
}

Test(sim, sweep_tries_k_splits_where_c_tiles_leave_sms_idle)
{
    duet_hw_t hw = t_hw("h200");
    /* 512 x 8192 x 8192: 256x256 gives 64 C tiles, 128x128 gives 256 (of 132 SMs). */
    duet_workload_t wl = t_wl(512, 8192, 8192, DUET_COLL_ALL_GATHER, 1024, 8192, 2);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.n_tiles = 2;
    sp.tiles[0] = (duet_gemm_tile_t){256, 256, 64};
    sp.tiles[1] = (duet_gemm_tile_t){128, 128, 64};
    sp.modes = 1u << DUET_MODE_FUSED;
    sp.split_step = 33; /* gemm_wgs 1, 34, 67, 100: 4 values */
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    /* 256x256: 64 x (S - 1) < 264 for S in {1, 2, 3, 4}, not 6 or 8; 128x128: 256 x (S - 1) <
     * 264 for S in {1, 2}. */
    int seen[2][9] = {{0}};
    size_t n_sk = 0;
    for (size_t i = 0; i < res.n; i++) {
        const duet_config_t *c = &res.points[i].cfg;
        cr_assert(c->split_k >= 1 && c->split_k <= 8);
        if (c->stream_k) {
            n_sk++; /* stream-K: split_k 1, the plan splits the tail */
            continue;
        }
        seen[c->tile.bm == 128][c->split_k]++;
    }
    cr_assert_eq(res.n - n_sk, (size_t)(4 + 2) * 4);
    for (int k = 1; k <= 4; k++)
        cr_assert_eq(seen[0][k], 4, "256x256 split %d", k);
    cr_assert(seen[1][1] == 4 && seen[1][2] == 4 && seen[1][3] == 0);
    duet_sweep_result_free(&res);

    /* 1x8192x8192 alone in 64x256 tiles: 32 C tiles for 132 SMs. Measured (bench-h200-w2.json):
     * 64x256 in 4 parts 0.051 ms, the best unsplit tile of the round before 0.072 ms. The model
     * must rank a split first. */
    duet_workload_t gemv = t_wl(1, 8192, 8192, DUET_COLL_NONE, 0, 0, 1);
    gemv.dtype = DUET_DTYPE_FP16;
    duet_sweep_params_t gp = duet_sweep_default_params();
    gp.n_tiles = 1;
    gp.tiles[0] = (duet_gemm_tile_t){64, 256, 64};
    gp.modes = 1u << DUET_MODE_FUSED;
    gp.split_min = gp.split_max = 132;
    cr_assert_eq(duet_sweep_run(ws, &hw, &gemv, &gp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert(res.n >= 4);
    cr_assert(res.points[0].cfg.split_k > 1, "best: split %d", res.points[0].cfg.split_k);
    duet_sweep_result_free(&res);

    /* An explicit list, with a split that leaves parts without K steps left out. */
    duet_workload_t short_k = t_wl(512, 8192, 128, DUET_COLL_ALL_GATHER, 1024, 8192, 2);
    sp.n_split_ks = 2;
    sp.split_ks[0] = 1;
    sp.split_ks[1] = 3; /* K = 128: 2 steps */
    cr_assert_eq(duet_sweep_run(ws, &hw, &short_k, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, (size_t)2 * 4);
    for (size_t i = 0; i < res.n; i++)
        cr_assert_eq(res.points[i].cfg.split_k, 1);
    duet_sweep_result_free(&res);

    /* The reference rules (frozen) try no split. */
    sp.n_split_ks = 0;
    sp.policy = &duet_sim_policy_frozen;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, (size_t)2 * 4);
    duet_sweep_result_free(&res);
}

Test(sim, trace_json_round_trips)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_TO_ALL, 512, 2048, 2);
    duet_plan_t p = t_sim_plan(&hw, wl, DUET_MODE_FUSED, 100, 0);
    duet_trace_t t, back;
    duet_trace_init(&t, "predicted");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, &t, &r), DUET_OK);
    char path[64];
    t_tmp_path(path, sizeof(path), "trace.json");
    cr_assert_eq(duet_trace_write_json(&t, &p, &hw, path), DUET_OK);
    cr_assert_eq(duet_trace_read_json(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.n, t.n);
    cr_assert_str_eq(back.label, "predicted");
    for (size_t i = 0; i < t.n; i++) {
        cr_assert(back.recs[i].cta == t.recs[i].cta && back.recs[i].tile == t.recs[i].tile);
        cr_assert(fabs(back.recs[i].end_s - t.recs[i].end_s) < 1e-11);
    }
    unlink(path); /* the trace JSON, read back: leave nothing behind in /tmp */
    const duet_trace_t *two[2] = {&back, &t};
    t_tmp_path(path, sizeof(path), "gantt.svg");
    cr_assert_eq(duet_trace_write_svg(two, 2, "two timelines", path), DUET_OK);
    unlink(path);
    duet_trace_free(&t);
    duet_trace_free(&back);
    cr_assert_eq(duet_trace_read_json("/nonexistent.json", &back), DUET_ERR_NOT_FOUND);
}

Test(sim, vendor_mode_prices_the_vendor_gemm)
{
    duet_hw_t hw = t_hw("h200");
    hw.gemm_eff_bf16 = 0.3;        /* a duet tile that slow (the mma.sync tile was) */
    hw.vendor_gemm_eff_bf16 = 0.8; /* the vendor library's */
    /* Every duet tile at gemm_eff itself, whatever the calibrated per-tile factors are. */
    hw.tile_eff_128x256 = hw.tile_eff_256x128 = hw.tile_eff_128x128 = hw.tile_eff_256x64 = 1.0;
    hw.tile_eff_64x128 = hw.tile_eff_64x256 = hw.tile_eff_64x64 = 1.0;
    duet_workload_t wl = t_wl(8192, 8192, 4096, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    duet_plan_t pc = t_sim_plan(&hw, wl, DUET_MODE_CONCURRENT, 116, 16);
    duet_plan_t pv = t_sim_plan(&hw, wl, DUET_MODE_VENDOR, 116, 16);
    cr_assert_eq(pv.steal, 0);
    cr_assert_eq(pv.cfg.num_wgs, 132);
    duet_sim_result_t rc, rv;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &pc, NULL, &rc), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &pv, NULL, &rv), DUET_OK, "%s", duet_last_error());
    /* Same waves, each tile 0.8 / 0.3 as fast in its K loop, and no GEMM dequeues. */
    cr_assert(rv.gemm_finish_s < rc.gemm_finish_s * 0.5, "vendor %.4g ms vs duet %.4g ms", rv.gemm_finish_s * 1e3,
              rc.gemm_finish_s * 1e3);
    cr_assert(t_rel_eq(rv.comm_finish_s, rc.comm_finish_s, 0.05), "the comm kernel is the same");
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_frozen, &hw, &pv, NULL, &rv), DUET_ERR_UNSUPPORTED);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.modes = 1u << DUET_MODE_VENDOR;
    sp.n_tiles = 1;
    sp.tiles[0] = (duet_gemm_tile_t){256, 128, 64};
    sp.split_step = 16;
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, 9, "gemm_wgs 1, 17, ..., 129");
    for (size_t i = 0; i < res.n; i++)
        cr_assert(res.points[i].cfg.mode == DUET_MODE_VENDOR &&
                  res.points[i].cfg.comm_wgs == 132 - res.points[i].cfg.gemm_wgs);
    duet_sweep_result_free(&res);
}

/* The cross-rank barriers are paid once by an operation with a collective, never by a GEMM alone. */
Test(sim, comm_sync_is_paid_once_per_collective_operation)
{
    duet_hw_t hw = t_hw_h200_start(), more = hw;
    more.comm_sync_us = hw.comm_sync_us + 10.0; /* us */
    duet_workload_t g = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_workload_t gc = t_wl(4096, 4096, 4096, DUET_COLL_ALL_REDUCE, 2048, 4096, 2);
    duet_workload_t c = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    const struct {
        duet_workload_t wl;
        int32_t mode, gemm_wgs, comm_wgs;
        double extra_s;
    } cases[] = {
        {g, DUET_MODE_FUSED, 132, 0, 0.0},
        {gc, DUET_MODE_FUSED, 100, 0, 10e-6},
        {gc, DUET_MODE_CONCURRENT, 116, 16, 10e-6},
        {c, DUET_MODE_CONCURRENT, 0, 32, 10e-6},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_plan_t p = t_sim_plan(&hw, cases[i].wl, cases[i].mode, cases[i].gemm_wgs, cases[i].comm_wgs);
        duet_sim_result_t a, b;
        cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &a), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(duet_sim_run(ws, NULL, &more, &p, NULL, &b), DUET_OK, "%s", duet_last_error());
        cr_assert(fabs(b.makespan_s - a.makespan_s - cases[i].extra_s) < 1e-12, "case %zu: %.9g -> %.9g s", i,
                  a.makespan_s, b.makespan_s);
    }
}

/* The comm drain claims its next position while the current tile runs (backend/kernels.h), except
 * when at most two grids' worth of tiles remain after it: of n CTAs draining T tiles in lockstep,
 * only the first dequeue and the last two rounds' (the one that finds the queue empty included)
 * add their cost, not all T/n + 1 of them. */
Test(sim, comm_dequeues_are_hidden_but_the_last_two_rounds)
{
    duet_hw_t hw = t_hw_h200_start(), slow = hw;
    slow.dequeue_comm_us = hw.dequeue_comm_us + 5.0; /* us */
    /* 2 x 64 = 128 tiles of 256x64 */
    duet_workload_t c = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 512, 4096, 2);
    const int32_t ctas[] = {4, 16, 64};
    for (size_t i = 0; i < sizeof(ctas) / sizeof(ctas[0]); i++) {
        duet_plan_t p = t_sim_plan(&hw, c, DUET_MODE_CONCURRENT, 0, ctas[i]);
        cr_assert_eq(p.comm.queue_len, 128);
        duet_sim_result_t a, b;
        cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &a), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(duet_sim_run(ws, NULL, &slow, &p, NULL, &b), DUET_OK, "%s", duet_last_error());
        cr_assert(fabs(b.makespan_s - a.makespan_s - 3 * 5e-6) < 1e-12, "%d CTAs: %.9g -> %.9g s", ctas[i],
                  a.makespan_s, b.makespan_s);
    }
}

/* Remote loads stretch beside running GEMM tiles: pulling collectives slow down, pushing ones and
 * a collective alone do not. */
Test(sim, gemm_stretches_only_the_remote_loads)
{
    duet_hw_t hw = t_hw_h200_start(), slow = hw;
    hw.rtt_gemm_stretch = 0.0;
    slow.rtt_gemm_stretch = 1.0; /* round trips twice as long with every SM on a GEMM tile */
    duet_workload_t ar = t_wl(8192, 8192, 2048, DUET_COLL_ALL_REDUCE, 4096, 8192, 2);
    duet_workload_t ag = t_wl(8192, 8192, 2048, DUET_COLL_ALL_GATHER, 4096, 8192, 2);
    duet_workload_t ar_alone = t_wl(0, 0, 0, DUET_COLL_ALL_REDUCE, 4096, 8192, 2);
    duet_plan_t p_ar = t_sim_plan(&hw, ar, DUET_MODE_CONCURRENT, 100, 32);
    duet_plan_t p_ag = t_sim_plan(&hw, ag, DUET_MODE_CONCURRENT, 100, 32);
    duet_plan_t p_alone = t_sim_plan(&hw, ar_alone, DUET_MODE_CONCURRENT, 0, 32);
    duet_sim_result_t a, b;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p_ar, NULL, &a), DUET_OK);
    cr_assert_eq(duet_sim_run(ws, NULL, &slow, &p_ar, NULL, &b), DUET_OK);
    cr_assert(b.comm_finish_s > a.comm_finish_s * 1.05, "all_reduce comm %.4g -> %.4g ms", a.comm_finish_s * 1e3,
              b.comm_finish_s * 1e3);
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p_ag, NULL, &a), DUET_OK);
    cr_assert_eq(duet_sim_run(ws, NULL, &slow, &p_ag, NULL, &b), DUET_OK);
    cr_assert(fabs(b.makespan_s - a.makespan_s) < 1e-12, "all_gather only pushes");
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p_alone, NULL, &a), DUET_OK);
    cr_assert_eq(duet_sim_run(ws, NULL, &slow, &p_alone, NULL, &b), DUET_OK);
    cr_assert(fabs(b.makespan_s - a.makespan_s) < 1e-12, "no GEMM runs beside it");
}

/* The built-in h200 is calibrated to duet's kernels as the corpus measured them: the GEMM of 8192^3
 * (fp16, 256x256x64 tiles, alone on 132 SMs) took 1.629 ms with the wgmma tile on 2 x H200
 * (tuning_data/h200_world2.json, the first all_gather shape's gemm_alone row; 675 TFLOP/s, against
 * cuBLASLt's 700-750 in the bench runs of that day). The same configuration measured 1.62-1.84 ms
 * in the other shapes' rows: the tolerance is that drift. */
Test(sim, builtin_h200_predicts_duets_measured_gemm)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_NONE, 0, 0, 1);
    wl.dtype = DUET_DTYPE_FP16;
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.gemm_wgs = cfg.num_wgs = 132;
    cfg.comm_wgs = 0;
    cfg.tile = (duet_gemm_tile_t){256, 256, 64};
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &r), DUET_OK, "%s", duet_last_error());
    cr_assert(fabs(r.makespan_s / 1.629e-3 - 1) <= 0.10, "predicted %.3f ms, measured 1.629 ms", r.makespan_s * 1e3);
}
