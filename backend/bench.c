/*
 * duet bench's figures of one workload (include/duet/measure.h), on the same buffers: the
 * baseline GEMM alone, the baseline collective alone, both one after the other, both on two
 * streams, both on two streams with the GEMM planned for 8/16/32 fewer SMs and the collective
 * capped at that many CTAs; duet's GEMM alone at every tile, duet's collective alone at several
 * CTA counts and comm tiles, duet fused and concurrent at the static default and at the best of a
 * sweep (the simulator's top picks plus a coarse grid), and vendor mode. Every figure is a
 * duet_measure_run(): the median over the timed runs, each the slowest rank's, after a barrier.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "duet/measure.h"

#define BENCH_NCTAS 7
static const int32_t bench_comm_ctas[BENCH_NCTAS] = {8, 16, 32, 48, 66, 100, 132};
/* Comm tiles of the collective alone: the default 256 x 64 (32 KB of fp16), and 64 x 64 (8 KB),
 * which spreads a small collective over more CTAs: at 2 MB per rank a reduce_scatter has 32 tiles
 * of 32 KB for 132 CTAs, and each tile's remote reads wait in turn (H200, 132 CTAs: 30.2 us with
 * 256 x 64, 22.7 us with 64 x 64). */
#define BENCH_NCTILES 2
static const int32_t bench_comm_tiles[BENCH_NCTILES][2] = {{256, 64}, {64, 64}};
static const int32_t bench_carve[DUET_BENCH_NCARVE] = {8, 16, 32};

_Static_assert(DUET_BENCH_NCOMM == BENCH_NCTAS * BENCH_NCTILES, "DUET_BENCH_NCOMM is the CTA counts x comm tiles");

duet_bench_params_t duet_bench_default_params(void)
{
    duet_bench_params_t p;
    memset(&p, 0, sizeof(p));
    p.runs = duet_measure_default_runs();
    p.top = 4;
    p.grid = 1;
    return p;
}

duet_measure_params_t duet_bench_measure_params(void)
{
    duet_measure_params_t p = duet_measure_default_params();
    p.ctx.heap_bytes = (size_t)2 << 30;
    p.baseline = 1;
    p.base.n_capped = DUET_BENCH_NCARVE;
    memcpy(p.base.capped_ctas, bench_carve, sizeof(bench_carve));
    return p;
}

static void bench_add_candidate(duet_bench_row_t *r, const duet_config_t *c, double pred)
{
    if (r->n_sweep >= DUET_BENCH_MAX_SWEEP)
        return;
    for (int32_t i = 0; i < r->n_sweep; i++)
        if (duet_config_same(&r->sweep_cfg[i], c))
            return;
    r->sweep_cfg[r->n_sweep] = *c;
    r->sweep_pred[r->n_sweep] = pred;
    r->n_sweep++;
}

/*
 * A grid point, and for a collective of at most 8 MiB per rank beside a GEMM that takes under
 * 0.5 ms alone the same point with 64 x 64 comm tiles: such a collective has only 32-128 tiles
 * of the default 32 KB, too few to spread over the CTAs that steal them at the end (the
 * collective alone gained up to 25 % from it). Beside a longer GEMM it does not matter, and
 * those sweeps are the bench's longest.
 */
static void bench_add_grid_candidate(duet_bench_row_t *r, const duet_config_t *c)
{
    bench_add_candidate(r, c, NAN);
    if (duet_op_src_bytes(&r->wl) <= ((size_t)8 << 20) && r->gemm.ok && r->gemm.med_ms < 0.5) {
        duet_config_t s = *c;
        s.cm = bench_comm_tiles[1][0];
        s.cn = bench_comm_tiles[1][1];
        bench_add_candidate(r, &s, NAN);
    }
}

/* Grid points with K unsplit and, where duet_split_k_worth_trying() allows, in two parts. */
static void bench_add_grid_splits(const duet_hw_t *hw, duet_bench_row_t *r, duet_config_t c)
{
    for (c.split_k = 1; c.split_k <= 2; c.split_k++)
        if (duet_split_k_worth_trying(hw, &r->wl, c.tile, c.split_k) && duet_config_validate(&c, &r->wl, hw) >= 0)
            bench_add_grid_candidate(r, &c);
}

/* The sweep: the simulator's top picks of both modes, then a coarse grid of fractions and comm
 * grids over the tiles that do well on this hardware. */
static void bench_candidates(const duet_hw_t *hw, int32_t sms, duet_sim_ws_t *ws, duet_bench_row_t *r, int32_t top,
                             int32_t grid)
{
    duet_sweep_params_t sp = duet_sweep_default_params();
    duet_sweep_result_t res;
    if (duet_sweep_run(ws, hw, &r->wl, &sp, &res) >= 0) {
        int32_t got[DUET_MODE_COUNT] = {0};
        for (size_t i = 0; i < res.n; i++) {
            int32_t m = res.points[i].cfg.mode;
            if (got[m] < top) {
                bench_add_candidate(r, &res.points[i].cfg, res.points[i].makespan_s * 1e3);
                got[m]++;
            }
        }
        duet_sweep_result_free(&res);
    }
    if (!grid)
        return;
    static const double fracs[] = {0.65, 0.75, 0.84, 0.92, 1.0};
    static const duet_gemm_tile_t tiles[] = {{256, 128, 64}, {128, 256, 64}, {256, 256, 64}, {128, 128, 64}};
    for (size_t t = 0; t < sizeof(tiles) / sizeof(tiles[0]); t++) {
        for (size_t f = 0; f < sizeof(fracs) / sizeof(fracs[0]); f++) {
            duet_config_t c = duet_config_default(hw, DUET_MODE_FUSED);
            c.tile = tiles[t];
            c.gemm_wgs = (int32_t)lround(fracs[f] * c.num_wgs);
            c.comm_wgs = c.num_wgs - c.gemm_wgs;
            bench_add_grid_splits(hw, r, c);
        }
        for (int32_t cw = 8; cw <= 32 && t < 2; cw *= 2) {
            duet_config_t c = duet_config_default(hw, DUET_MODE_CONCURRENT);
            c.tile = tiles[t];
            c.comm_wgs = cw;
            c.gemm_wgs = sms - cw;
            c.num_wgs = sms;
            bench_add_grid_splits(hw, r, c);
        }
    }
}

/* A GEMM shape already measured in an earlier row (another collective): its figures. */
static int bench_gemm_copy(duet_bench_row_t *r, const duet_bench_row_t *earlier, size_t n_earlier)
{
    const duet_workload_t *w = &r->wl;
    for (size_t j = 0; j < n_earlier; j++) {
        const duet_workload_t *x = &earlier[j].wl;
        if (x->m == w->m && x->n == w->n && x->k == w->k && x->dtype == w->dtype && earlier[j].gemm.ok) {
            r->gemm = earlier[j].gemm;
            r->gemm_tile = earlier[j].gemm_tile;
            r->gemm_split = earlier[j].gemm_split;
            memcpy(r->gemm_tiles, earlier[j].gemm_tiles, sizeof(r->gemm_tiles));
            memcpy(r->gemm_tiles_split, earlier[j].gemm_tiles_split, sizeof(r->gemm_tiles_split));
            return 1;
        }
    }
    return 0;
}

/* duet's GEMM alone on every SM at each tile it builds, each at its best K split; the best is
 * "duet GEMM". */
static void bench_gemm_alone(duet_measure_h m, const duet_bench_params_t *p, const duet_measure_bufs_t *b,
                             duet_bench_row_t *r)
{
    const duet_hw_t *hw = duet_measure_hw(m);
    const duet_workload_t g = duet_measure_gemm_part(&r->wl);
    static const int32_t splits[] = DUET_AUTO_SPLIT_KS;
    r->gemm.ok = 0;
    snprintf(r->gemm.error, sizeof(r->gemm.error), "no tile ran");
    for (int t = 0; t < duet_tile_count() && t < DUET_BENCH_MAX_TILES; t++) {
        duet_measure_stat_t *best = &r->gemm_tiles[t];
        best->ok = 0;
        snprintf(best->error, sizeof(best->error), "no K split ran");
        for (size_t si = 0; si < sizeof(splits) / sizeof(splits[0]); si++) {
            duet_config_t gc = duet_config_default(hw, DUET_MODE_FUSED);
            gc.tile = duet_tile_get(t);
            gc.split_k = splits[si];
            gc.gemm_wgs = gc.num_wgs;
            gc.comm_wgs = 0;
            if (!duet_split_k_worth_trying(hw, &g, gc.tile, gc.split_k))
                continue;
            if (duet_config_validate(&gc, &g, hw) < 0) {
                if (gc.split_k == 1) {
                    best->ok = 0;
                    snprintf(best->error, sizeof(best->error), "%s", duet_last_error());
                }
                continue;
            }
            duet_measure_job_t j = duet_measure_job(DUET_MEASURE_GEMM_ALONE, &r->wl, &gc);
            duet_measure_stat_t s;
            duet_measure_run(m, &j, b, &p->runs, &s);
            if (s.ok && (!best->ok || s.med_ms < best->med_ms)) {
                *best = s;
                r->gemm_tiles_split[t] = gc.split_k;
            }
        }
        if (best->ok && (!r->gemm.ok || best->med_ms < r->gemm.med_ms)) {
            r->gemm = *best;
            r->gemm_tile = duet_tile_get(t);
            r->gemm_split = r->gemm_tiles_split[t];
        }
    }
}

/* The baselines with the collective: alone, one after the other, on two streams, carved out. */
static void bench_baselines(duet_measure_h m, const duet_bench_params_t *p, const duet_measure_bufs_t *b,
                            duet_bench_row_t *r)
{
    duet_measure_job_t j = duet_measure_job(DUET_MEASURE_BASE_COLL, &r->wl, NULL);
    duet_measure_run(m, &j, b, &p->runs, &r->base_coll);
    j.what = DUET_MEASURE_BASE_SEQUENTIAL;
    duet_measure_run(m, &j, b, &p->runs, &r->base_seq);
    j.what = DUET_MEASURE_BASE_STREAMS;
    duet_measure_run(m, &j, b, &p->runs, &r->base_streams);
    for (int i = 0; i < DUET_BENCH_NCARVE; i++) {
        j.sm_target = duet_measure_gpu(m)->sms - bench_carve[i];
        j.slot = i + 1;
        duet_measure_run(m, &j, b, &p->runs, &r->base_carve[i]);
    }
}

/* duet's collective alone at each CTA count and comm tile; the best is "duet collective". */
static void bench_comm_alone(duet_measure_h m, const duet_bench_params_t *p, const duet_measure_bufs_t *b,
                             duet_bench_row_t *r)
{
    const int32_t sms = duet_measure_gpu(m)->sms;
    r->best_comm = -1;
    for (int i = 0; i < DUET_BENCH_NCOMM; i++) {
        duet_config_t cc = duet_config_default(duet_measure_hw(m), DUET_MODE_FUSED);
        r->comm_ctas[i] = bench_comm_ctas[i % BENCH_NCTAS];
        r->comm_cm[i] = bench_comm_tiles[i / BENCH_NCTAS][0];
        r->comm_cn[i] = bench_comm_tiles[i / BENCH_NCTAS][1];
        cc.num_wgs = r->comm_ctas[i] < sms ? r->comm_ctas[i] : sms;
        cc.gemm_wgs = 0;
        cc.comm_wgs = cc.num_wgs;
        cc.cm = r->comm_cm[i];
        cc.cn = r->comm_cn[i];
        duet_measure_job_t j = duet_measure_job(DUET_MEASURE_COMM_ALONE, &r->wl, &cc);
        duet_measure_run(m, &j, b, &p->runs, &r->comm[i]);
        if (r->comm[i].ok && (r->best_comm < 0 || r->comm[i].med_ms < r->comm[r->best_comm].med_ms))
            r->best_comm = i;
    }
}

/* duet's operation at a configuration. */
static void bench_op(duet_measure_h m, const duet_bench_params_t *p, const duet_measure_bufs_t *b,
                     const duet_workload_t *wl, const duet_config_t *cfg, duet_measure_stat_t *s)
{
    duet_measure_job_t j = duet_measure_job(DUET_MEASURE_OP, wl, cfg);
    duet_measure_run(m, &j, b, &p->runs, s);
}

duet_status_t duet_bench_workload(duet_measure_h m, duet_sim_ws_t *ws, const duet_bench_params_t *params,
                                  const duet_workload_t *wl, const duet_measure_bufs_t *bufs,
                                  const duet_bench_row_t *earlier, size_t n_earlier, duet_bench_row_t *row_p)
{
    if (duet_measure_baseline(m) == NULL)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "bench: the measurer has no baseline context (duet_bench_measure_params())");
    const duet_hw_t *hw = duet_measure_hw(m);
    const int32_t sms = duet_measure_gpu(m)->sms;
    duet_bench_row_t *r = row_p;
    memset(r, 0, sizeof(*r));
    r->wl = *wl;
    memcpy(r->carve, bench_carve, sizeof(bench_carve));
    duet_measure_job_t j = duet_measure_job(DUET_MEASURE_BASE_GEMM, wl, NULL);
    duet_measure_run(m, &j, bufs, &params->runs, &r->base_gemm);
    if (!bench_gemm_copy(r, earlier, n_earlier))
        bench_gemm_alone(m, params, bufs, r);
    if (wl->coll == DUET_COLL_NONE)
        return DUET_OK; /* the GEMM only */
    bench_baselines(m, params, bufs, r);
    bench_comm_alone(m, params, bufs, r);
    r->fused_def = duet_config_default(hw, DUET_MODE_FUSED);
    r->conc_def = duet_config_default(hw, DUET_MODE_CONCURRENT);
    bench_op(m, params, bufs, wl, &r->fused_def, &r->fused_def_stat);
    bench_op(m, params, bufs, wl, &r->conc_def, &r->conc_def_stat);
    for (int i = 0; i < DUET_BENCH_NCARVE; i++) {
        duet_config_t vc = duet_config_default(hw, DUET_MODE_VENDOR);
        vc.comm_wgs = bench_carve[i];
        vc.gemm_wgs = sms - bench_carve[i];
        vc.num_wgs = sms;
        r->vmode_cfg[i] = vc;
        bench_op(m, params, bufs, wl, &vc, &r->vmode[i]);
    }
    bench_candidates(hw, sms, ws, r, params->top, params->grid);
    for (int i = 0; i < DUET_MODE_COUNT; i++)
        r->best_mode[i] = -1;
    for (int32_t i = 0; i < r->n_sweep; i++) {
        bench_op(m, params, bufs, wl, &r->sweep_cfg[i], &r->sweep[i]);
        int32_t mode = r->sweep_cfg[i].mode;
        if (r->sweep[i].ok && (r->best_mode[mode] < 0 || r->sweep[i].med_ms < r->sweep[r->best_mode[mode]].med_ms))
            r->best_mode[mode] = i;
    }
    return DUET_OK;
}

static double bench_ms(const duet_measure_stat_t *s)
{
    return s->ok ? s->med_ms : INFINITY;
}

/* The lowest of the named figures that beats *best_ms. */
static void bench_pick(const char *const *names, const duet_measure_stat_t *const *stats, int n, double *best_ms,
                       const char **best_name)
{
    for (int i = 0; i < n; i++)
        if (bench_ms(stats[i]) < *best_ms) {
            *best_ms = stats[i]->med_ms;
            *best_name = names[i];
        }
}

void duet_bench_derive(const duet_bench_row_t *r, duet_bench_derived_t *d)
{
    static const char *const base_names[] = {"sequential", "two streams", "carve-out 8", "carve-out 16",
                                             "carve-out 32"};
    static const char *const own_names[] = {"fused default", "concurrent default", "fused sweep", "concurrent sweep",
                                            "copy sweep"};
    static const char *const vmode_names[DUET_BENCH_NCARVE] = {"vendor mode 8", "vendor mode 16", "vendor mode 32"};
    static const duet_measure_stat_t missing = {0}; /* ok = 0: never the best */
    const int32_t bf = r->best_mode[DUET_MODE_FUSED], bc = r->best_mode[DUET_MODE_CONCURRENT],
                  bk = r->best_mode[DUET_MODE_COPY];
    const duet_measure_stat_t *base[] = {&r->base_seq, &r->base_streams, &r->base_carve[0], &r->base_carve[1],
                                         &r->base_carve[2]};
    const duet_measure_stat_t *own[] = {&r->fused_def_stat, &r->conc_def_stat, bf >= 0 ? &r->sweep[bf] : &missing,
                                        bc >= 0 ? &r->sweep[bc] : &missing, bk >= 0 ? &r->sweep[bk] : &missing};
    const duet_measure_stat_t *vmode[DUET_BENCH_NCARVE] = {&r->vmode[0], &r->vmode[1], &r->vmode[2]};
    memset(d, 0, sizeof(*d));
    d->bound_ms = fmax(bench_ms(&r->base_gemm), bench_ms(&r->base_coll));
    d->best_base_ms = INFINITY;
    d->best_base_name = "-";
    bench_pick(base_names, base, 5, &d->best_base_ms, &d->best_base_name);
    d->best_duet_ms = INFINITY;
    d->best_duet_name = "-";
    bench_pick(own_names, own, 5, &d->best_duet_ms, &d->best_duet_name);
    d->best_own_ms = d->best_duet_ms;
    bench_pick(vmode_names, vmode, DUET_BENCH_NCARVE, &d->best_duet_ms, &d->best_duet_name);
    d->duet_gemm_ms = bench_ms(&r->gemm);
    d->duet_comm_ms = r->best_comm >= 0 ? r->comm[r->best_comm].med_ms : INFINITY;
}

/* ------------------------------------------------------------------------------------------ */
/* duet bench --gemm-only --random: one GEMM on an SM budget                                   */
/* ------------------------------------------------------------------------------------------ */

/* duet's GEMM alone on a grid of `sms` CTAs, every CTA starting on the GEMM queue. */
static duet_config_t bench_budget_config(const duet_hw_t *hw, int32_t sms, duet_gemm_tile_t tile, int32_t split_k)
{
    duet_config_t c = duet_config_default(hw, DUET_MODE_FUSED);
    c.tile = tile;
    c.split_k = split_k;
    c.num_wgs = sms;
    c.gemm_wgs = sms;
    c.comm_wgs = 0;
    return c;
}

/* The simulator's time of one configuration (fluid policy), ms; NaN where it cannot price it. */
static double bench_budget_predict(const duet_hw_t *hw, duet_sim_ws_t *ws, const duet_workload_t *wl,
                                   const duet_config_t *c)
{
    duet_plan_t plan;
    duet_sim_result_t res;
    if (duet_plan_build(wl, c, 0, &plan) < 0 || duet_sim_run(ws, &duet_sim_policy_fluid, hw, &plan, NULL, &res) < 0)
        return NAN;
    return res.makespan_s * 1e3;
}

duet_status_t duet_bench_gemm_budget_plan(const duet_hw_t *hw, duet_sim_ws_t *ws, const duet_workload_t *wl,
                                          int32_t sms, duet_gemm_budget_row_t *row_p)
{
    static const int32_t splits[] = DUET_AUTO_SPLIT_KS;
    const duet_workload_t g = duet_measure_gemm_part(wl);
    if (g.m <= 0)
        return duet__error(DUET_ERR_INVALID_ARG, "bench: the workload has no GEMM");
    if (sms < 1 || sms > hw->n_sms)
        return duet__error(DUET_ERR_INVALID_ARG, "bench: an SM budget of %d is outside [1, %d]", (int)sms,
                           (int)hw->n_sms);
    duet_gemm_budget_row_t *r = row_p;
    memset(r, 0, sizeof(*r));
    r->wl = g;
    r->sms = sms;
    r->vendor_target = sms >= hw->n_sms ? 0 : sms;
    snprintf(r->vendor.error, sizeof(r->vendor.error), "not measured");
    r->best = -1;
    duet_rank_item_t items[DUET_GEMM_BUDGET_MAX_CANDS];
    for (int t = 0; t < duet_tile_count(); t++) {
        for (size_t si = 0; si < sizeof(splits) / sizeof(splits[0]); si++) {
            duet_config_t c = bench_budget_config(hw, sms, duet_tile_get(t), splits[si]);
            if (r->n_cand >= DUET_GEMM_BUDGET_MAX_CANDS || duet_config_validate(&c, &g, hw) < 0)
                continue;
            int32_t i = r->n_cand++;
            r->cand_cfg[i] = c;
            r->cand_pred_ms[i] = bench_budget_predict(hw, ws, &g, &c);
            r->cand_rule[i] = (int8_t)duet_split_k_worth_trying_on(&g, c.tile, c.split_k, sms);
            snprintf(r->cand[i].error, sizeof(r->cand[i].error), "not measured");
        }
        /* Stream-K, where its plan splits the last wave on these SMs (else it is the unsplit
         * candidate again); the sweep tries it there too. */
        duet_config_t c = bench_budget_config(hw, sms, duet_tile_get(t), 1);
        c.stream_k = 1;
        duet_plan_t sk;
        if (r->n_cand < DUET_GEMM_BUDGET_MAX_CANDS && duet_config_validate(&c, &g, hw) >= 0 &&
            duet_plan_build_queues(&g, &c, 0, &sk) >= 0 && sk.gemm.split_k > 1) {
            int32_t i = r->n_cand++;
            r->cand_cfg[i] = c;
            r->cand_pred_ms[i] = bench_budget_predict(hw, ws, &g, &c);
            r->cand_rule[i] = 1;
            snprintf(r->cand[i].error, sizeof(r->cand[i].error), "not measured");
        }
    }
    /* The picks follow the ranking rule of the sweeps and the tuner, ties included: among the
     * candidates the K-split rule tries, and among all of them. */
    for (int all = 0; all <= 1; all++) {
        size_t n_items = 0;
        for (int32_t i = 0; i < r->n_cand; i++) {
            if (!isfinite(r->cand_pred_ms[i]) || (!all && !r->cand_rule[i]))
                continue;
            items[n_items].pred = r->cand_pred_ms[i];
            items[n_items].cfg = r->cand_cfg[i];
            items[n_items].idx = (size_t)i;
            n_items++;
        }
        int32_t pick = -1;
        if (n_items > 0) {
            duet_rank_sort(items, n_items);
            pick = (int32_t)items[0].idx;
        }
        *(all ? &r->pick_all : &r->pick) = pick;
    }
    return DUET_OK;
}

duet_status_t duet_bench_gemm_budget(duet_measure_h m, duet_sim_ws_t *ws, const duet_bench_params_t *params,
                                     const duet_workload_t *wl, const duet_measure_bufs_t *bufs, int32_t sms,
                                     duet_gemm_budget_row_t *row_p)
{
    duet_gemm_budget_row_t *r = row_p;
    DUET_CHECK(duet_bench_gemm_budget_plan(duet_measure_hw(m), ws, wl, sms, r));
    /* The vendor's samples: its first half after the settling warm-up, its second half after
     * duet's figures, so that a clock still drifting favours neither side. */
    const int32_t half = params->runs.repeats > 1 ? (params->runs.repeats + 1) / 2 : 1;
    double *vs = calloc((size_t)(2 * half), sizeof(double));
    if (vs == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "bench: out of memory");
    int32_t nv = 0;
    duet_measure_job_t vj = duet_measure_job(DUET_MEASURE_BASE_GEMM, &r->wl, NULL);
    vj.sm_target = r->vendor_target;
    duet_measure_runs_t settle = params->runs, later = params->runs;
    settle.repeats = half;
    later.repeats = half;
    later.warmup_ms = 0;
    duet_status_t vst = duet_measure_samples(m, &vj, bufs, &settle, vs, &nv);
    for (int32_t i = 0; i < r->n_cand; i++) {
        duet_measure_job_t j = duet_measure_job(DUET_MEASURE_GEMM_ALONE, &r->wl, &r->cand_cfg[i]);
        duet_measure_runs_t fr = params->runs;
        fr.warmup_ms = 0; /* the clock settled in the vendor's warm-up; the GPU has been busy since */
        duet_measure_run(m, &j, bufs, &fr, &r->cand[i]);
        if (r->cand[i].ok && (r->best < 0 || r->cand[i].med_ms < r->cand[r->best].med_ms))
            r->best = i;
    }
    if (vst >= 0)
        vst = duet_measure_samples(m, &vj, bufs, &later, vs, &nv);
    if (vst >= 0) {
        duet_measure_summarise(vs, nv, &r->vendor);
    } else {
        memset(&r->vendor, 0, sizeof(r->vendor));
        snprintf(r->vendor.error, sizeof(r->vendor.error), "%s", duet_last_error());
    }
    free(vs);
    return DUET_OK;
}
