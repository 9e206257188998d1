/*
 * duet bench: duet against the vendor libraries, side by side in one run (docs/performance.md).
 *
 * For each workload, on the same buffers: the vendor GEMM alone, the vendor collective alone,
 * both one after the other, both on two streams, both on two streams with the GEMM planned for
 * 8/16/32 fewer SMs and the collective capped at that many CTAs; duet's GEMM alone, duet's
 * collective alone at its best CTA count and comm tile, duet fused and concurrent at the static default and
 * at the best of a sweep (the simulator's top picks plus a coarse grid). Every figure is the
 * median over --repeats runs after --warmup, with a barrier before each run, of the slowest
 * rank's time.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/gpu/gpu.h"
#include "base/base.h"

#define BENCH_MAX_SWEEP 128
#define BENCH_MAX_TILES 8
#define BENCH_NCTAS 7
static const int32_t bench_comm_ctas[BENCH_NCTAS] = {8, 16, 32, 48, 66, 100, 132};
/* Comm tiles of the collective alone: the default 256 x 64 (32 KB of fp16), and 64 x 64 (8 KB),
 * which spreads a small collective over more CTAs: at 2 MB per rank a reduce_scatter has 32 tiles
 * of 32 KB for 132 CTAs, and each tile's remote reads wait in turn (H200, 132 CTAs: 30.2 us with
 * 256 x 64, 22.7 us with 64 x 64; tools/h200-commtile.sh). */
#define BENCH_NCTILES 2
static const int32_t bench_comm_tiles[BENCH_NCTILES][2] = {{256, 64}, {64, 64}};
#define BENCH_NCOMM (BENCH_NCTAS * BENCH_NCTILES)

/* Entry i of the collective-alone list: CTA count i % BENCH_NCTAS, comm tile i / BENCH_NCTAS. */
static const char *bench_comm_tile_str(int i, char *buf, size_t n)
{
    snprintf(buf, n, "%dx%d", (int)bench_comm_tiles[i / BENCH_NCTAS][0], (int)bench_comm_tiles[i / BENCH_NCTAS][1]);
    return buf;
}
static const int32_t bench_carve[3] = {8, 16, 32};

enum { V_GEMM, V_COLL, V_SEQ, V_STREAMS, V_CARVE };

typedef struct vendor_job {
    gpu_env_t *e;
    const duet_workload_t *wl;
    const gpu_bufs_t *b;
    int kind;
    int32_t sm_target, slot;
} vendor_job_t;

static duet_status_t run_vendor(void *user, void *main_stream, void *side_stream)
{
    vendor_job_t *j = user;
    duet_vendor_h v = j->e->vendor;
    const gpu_bufs_t *b = j->b;
    switch (j->kind) {
    case V_GEMM:
        return duet_vendor_gemm(v, j->wl, b->a, b->b, b->c, 0, main_stream);
    case V_COLL:
        return duet_vendor_coll(v, 0, j->wl, b->src, b->vdst, main_stream);
    case V_SEQ:
        DUET_CHECK_CLI(duet_vendor_gemm(v, j->wl, b->a, b->b, b->c, 0, main_stream));
        return duet_vendor_coll(v, 0, j->wl, b->src, b->vdst, main_stream);
    default: /* V_STREAMS, V_CARVE: GEMM on main, collective on side */
        DUET_CHECK_CLI(duet_vendor_gemm(v, j->wl, b->a, b->b, b->c, j->sm_target, main_stream));
        return duet_vendor_coll(v, j->slot, j->wl, b->src, b->vdst, side_stream);
    }
}

typedef struct bench_row {
    duet_workload_t wl;
    gpu_stat_t v_gemm, v_coll, v_seq, v_streams, v_carve[3];
    gpu_stat_t d_gemm;                          /* duet's GEMM alone, all SMs, at its best tile */
    duet_gemm_tile_t d_gemm_tile;               /* that tile */
    int32_t d_gemm_split;                       /* and its K split */
    gpu_stat_t d_gemm_tiles[BENCH_MAX_TILES];   /* every tile of duet_tile_get(), at its best K split */
    int32_t d_gemm_tiles_split[BENCH_MAX_TILES];
    gpu_stat_t d_comm[BENCH_NCOMM];
    int best_comm; /* index into d_comm, -1 if none ran */
    duet_config_t fused_def, conc_def;
    gpu_stat_t d_fused_def, d_conc_def;
    int n_sweep;
    duet_config_t sweep_cfg[BENCH_MAX_SWEEP];
    double sweep_pred[BENCH_MAX_SWEEP];
    gpu_stat_t sweep[BENCH_MAX_SWEEP];
    int best_mode[DUET_MODE_COUNT]; /* index into sweep, -1 if none */
    duet_config_t vmode_cfg[3];     /* vendor mode with 8, 16, 32 CTAs on comm */
    gpu_stat_t vmode[3];
} bench_row_t;

static void add_candidate(bench_row_t *r, const duet_config_t *c, double pred)
{
    if (r->n_sweep >= BENCH_MAX_SWEEP)
        return;
    for (int i = 0; i < r->n_sweep; i++)
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
static void add_grid_candidate(bench_row_t *r, const duet_config_t *c)
{
    add_candidate(r, c, NAN);
    if (duet_op_src_bytes(&r->wl) <= ((size_t)8 << 20) && r->d_gemm.ok && r->d_gemm.med < 0.5) {
        duet_config_t s = *c;
        s.cm = bench_comm_tiles[1][0];
        s.cn = bench_comm_tiles[1][1];
        add_candidate(r, &s, NAN);
    }
}

/* The sweep: the simulator's top picks of both modes, then a coarse grid of fractions and
 * comm grids over the tiles that do well on this hardware, each unsplit and, where
 * duet_split_k_worth_trying() allows, with K in two parts (add_grid_candidate). */
static void bench_candidates(const gpu_env_t *e, duet_sim_ws_t *ws, bench_row_t *r, int top, int grid)
{
    duet_sweep_params_t sp = duet_sweep_default_params();
    duet_sweep_result_t res;
    if (duet_sweep_run(ws, &e->hw, &r->wl, &sp, &res) >= 0) {
        int got[DUET_MODE_COUNT] = {0};
        for (size_t i = 0; i < res.n; i++) {
            int32_t m = res.points[i].cfg.mode;
            if (got[m] < top) {
                add_candidate(r, &res.points[i].cfg, res.points[i].makespan_s * 1e3);
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
            duet_config_t c = duet_config_default(&e->hw, DUET_MODE_FUSED);
            c.tile = tiles[t];
            c.gemm_wgs = (int32_t)lround(fracs[f] * c.num_wgs);
            c.comm_wgs = c.num_wgs - c.gemm_wgs;
            for (c.split_k = 1; c.split_k <= 2; c.split_k++)
                if (duet_split_k_worth_trying(&e->hw, &r->wl, c.tile, c.split_k) &&
                    duet_config_validate(&c, &r->wl, &e->hw) >= 0)
                    add_grid_candidate(r, &c);
        }
        for (int32_t cw = 8; cw <= 32 && t < 2; cw *= 2) {
            duet_config_t c = duet_config_default(&e->hw, DUET_MODE_CONCURRENT);
            c.tile = tiles[t];
            c.comm_wgs = cw;
            c.gemm_wgs = e->sms - cw;
            c.num_wgs = e->sms;
            for (c.split_k = 1; c.split_k <= 2; c.split_k++)
                if (duet_split_k_worth_trying(&e->hw, &r->wl, c.tile, c.split_k) &&
                    duet_config_validate(&c, &r->wl, &e->hw) >= 0)
                    add_grid_candidate(r, &c);
        }
    }
}

static double stat_or_inf(const gpu_stat_t *s) { return s->ok ? s->med : INFINITY; }

/*
 * duet's GEMM alone on every SM at each tile it builds; the best is "duet GEMM". A GEMM shape
 * that an earlier row (another collective) already measured is copied, not measured again.
 */
static void bench_gemm_alone(gpu_env_t *e, bench_row_t *rows, size_t i, int warmup, int reps, const gpu_bufs_t *b)
{
    bench_row_t *r = &rows[i];
    const duet_workload_t *w = &r->wl;
    for (size_t j = 0; j < i; j++) {
        const duet_workload_t *x = &rows[j].wl;
        if (x->m == w->m && x->n == w->n && x->k == w->k && x->dtype == w->dtype && rows[j].d_gemm.ok) {
            r->d_gemm = rows[j].d_gemm;
            r->d_gemm_tile = rows[j].d_gemm_tile;
            r->d_gemm_split = rows[j].d_gemm_split;
            memcpy(r->d_gemm_tiles, rows[j].d_gemm_tiles, sizeof(r->d_gemm_tiles));
            memcpy(r->d_gemm_tiles_split, rows[j].d_gemm_tiles_split, sizeof(r->d_gemm_tiles_split));
            return;
        }
    }
    duet_workload_t g = gpu_gemm_part(w);
    r->d_gemm.ok = 0;
    snprintf(r->d_gemm.error, sizeof(r->d_gemm.error), "no tile ran");
    static const int32_t splits[] = DUET_AUTO_SPLIT_KS;
    for (int t = 0; t < duet_tile_count() && t < BENCH_MAX_TILES; t++) {
        gpu_stat_t *best = &r->d_gemm_tiles[t];
        best->ok = 0;
        snprintf(best->error, sizeof(best->error), "no K split ran");
        for (size_t si = 0; si < sizeof(splits) / sizeof(splits[0]); si++) {
            duet_config_t gc = duet_config_default(&e->hw, DUET_MODE_FUSED);
            gc.tile = duet_tile_get(t);
            gc.split_k = splits[si];
            gc.gemm_wgs = gc.num_wgs;
            gc.comm_wgs = 0;
            if (!duet_split_k_worth_trying(&e->hw, &g, gc.tile, gc.split_k))
                continue;
            gpu_stat_t s;
            if (duet_config_validate(&gc, &g, &e->hw) < 0) {
                if (gc.split_k == 1) {
                    best->ok = 0;
                    snprintf(best->error, sizeof(best->error), "%s", duet_last_error());
                }
                continue;
            }
            gpu_duet_job_t dj;
            gpu_duet_job_init(&dj, e, &g, &gc, b);
            gpu_measure(e, gpu_run_duet, &dj, warmup, reps, &s);
            if (s.ok && (!best->ok || s.med < best->med)) {
                *best = s;
                r->d_gemm_tiles_split[t] = gc.split_k;
            }
        }
        if (best->ok && (!r->d_gemm.ok || best->med < r->d_gemm.med)) {
            r->d_gemm = *best;
            r->d_gemm_tile = duet_tile_get(t);
            r->d_gemm_split = r->d_gemm_tiles_split[t];
        }
    }
}

/* The figures of one workload, measured. */
static void bench_workload(gpu_env_t *e, duet_sim_ws_t *ws, bench_row_t *rows, size_t ri, int warmup, int reps,
                           int top, int grid, const gpu_bufs_t *b)
{
    bench_row_t *r = &rows[ri];
    vendor_job_t vj = {e, &r->wl, b, V_GEMM, 0, 0};
    gpu_measure(e, run_vendor, &vj, warmup, reps, &r->v_gemm);
    bench_gemm_alone(e, rows, ri, warmup, reps, b);
    if (r->wl.coll == DUET_COLL_NONE)
        return; /* --gemm-only */
    vj.kind = V_COLL;
    gpu_measure(e, run_vendor, &vj, warmup, reps, &r->v_coll);
    vj.kind = V_SEQ;
    gpu_measure(e, run_vendor, &vj, warmup, reps, &r->v_seq);
    vj.kind = V_STREAMS;
    gpu_measure(e, run_vendor, &vj, warmup, reps, &r->v_streams);
    for (int i = 0; i < 3; i++) {
        vj.kind = V_CARVE;
        vj.sm_target = e->sms - bench_carve[i];
        vj.slot = i + 1;
        gpu_measure(e, run_vendor, &vj, warmup, reps, &r->v_carve[i]);
    }

    gpu_duet_job_t dj;
    duet_workload_t c = gpu_comm_part(&r->wl);
    r->best_comm = -1;
    for (int i = 0; i < BENCH_NCOMM; i++) {
        duet_config_t cc = duet_config_default(&e->hw, DUET_MODE_FUSED);
        cc.num_wgs = bench_comm_ctas[i % BENCH_NCTAS] < e->sms ? bench_comm_ctas[i % BENCH_NCTAS] : e->sms;
        cc.gemm_wgs = 0;
        cc.comm_wgs = cc.num_wgs;
        cc.cm = bench_comm_tiles[i / BENCH_NCTAS][0];
        cc.cn = bench_comm_tiles[i / BENCH_NCTAS][1];
        gpu_duet_job_init(&dj, e, &c, &cc, b);
        gpu_measure(e, gpu_run_duet, &dj, warmup, reps, &r->d_comm[i]);
        if (r->d_comm[i].ok && (r->best_comm < 0 || r->d_comm[i].med < r->d_comm[r->best_comm].med))
            r->best_comm = i;
    }

    r->fused_def = duet_config_default(&e->hw, DUET_MODE_FUSED);
    r->conc_def = duet_config_default(&e->hw, DUET_MODE_CONCURRENT);
    gpu_duet_job_init(&dj, e, &r->wl, &r->fused_def, b);
    gpu_measure(e, gpu_run_duet, &dj, warmup, reps, &r->d_fused_def);
    gpu_duet_job_init(&dj, e, &r->wl, &r->conc_def, b);
    gpu_measure(e, gpu_run_duet, &dj, warmup, reps, &r->d_conc_def);

    for (int i = 0; i < 3; i++) {
        gpu_duet_job_t vm;
        duet_config_t vc = duet_config_default(&e->hw, DUET_MODE_VENDOR);
        vc.comm_wgs = bench_carve[i];
        vc.gemm_wgs = e->sms - bench_carve[i];
        vc.num_wgs = e->sms;
        r->vmode_cfg[i] = vc;
        gpu_duet_job_init(&vm, e, &r->wl, &vc, b);
        gpu_measure(e, gpu_run_duet, &vm, warmup, reps, &r->vmode[i]);
    }

    bench_candidates(e, ws, r, top, grid);
    for (int m = 0; m < DUET_MODE_COUNT; m++)
        r->best_mode[m] = -1;
    for (int i = 0; i < r->n_sweep; i++) {
        gpu_duet_job_init(&dj, e, &r->wl, &r->sweep_cfg[i], b);
        gpu_measure(e, gpu_run_duet, &dj, warmup, reps, &r->sweep[i]);
        int32_t m = r->sweep_cfg[i].mode;
        if (r->sweep[i].ok && (r->best_mode[m] < 0 || r->sweep[i].med < r->sweep[r->best_mode[m]].med))
            r->best_mode[m] = i;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Derived figures                                                                             */
/* ------------------------------------------------------------------------------------------ */

typedef struct bench_derived {
    double bound, best_vendor, best_duet, duet_gemm, duet_comm;
    double best_own; /* duet's own kernels only (fused, concurrent), without the vendor-mode fallback */
    const char *best_vendor_name;
    const char *best_duet_name;
} bench_derived_t;

static void bench_derive(const bench_row_t *r, bench_derived_t *d)
{
    d->bound = fmax(stat_or_inf(&r->v_gemm), stat_or_inf(&r->v_coll));
    struct {
        const char *name;
        const gpu_stat_t *s;
    } v[] = {{"sequential", &r->v_seq},
             {"two streams", &r->v_streams},
             {"carve-out 8", &r->v_carve[0]},
             {"carve-out 16", &r->v_carve[1]},
             {"carve-out 32", &r->v_carve[2]}};
    d->best_vendor = INFINITY;
    d->best_vendor_name = "-";
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        if (stat_or_inf(v[i].s) < d->best_vendor) {
            d->best_vendor = v[i].s->med;
            d->best_vendor_name = v[i].name;
        }
    d->best_duet = INFINITY;
    d->best_duet_name = "-";
    if (stat_or_inf(&r->d_fused_def) < d->best_duet) {
        d->best_duet = r->d_fused_def.med;
        d->best_duet_name = "fused default";
    }
    if (stat_or_inf(&r->d_conc_def) < d->best_duet) {
        d->best_duet = r->d_conc_def.med;
        d->best_duet_name = "concurrent default";
    }
    for (int m = 0; m < DUET_MODE_COUNT; m++)
        if (r->best_mode[m] >= 0 && r->sweep[r->best_mode[m]].med < d->best_duet) {
            d->best_duet = r->sweep[r->best_mode[m]].med;
            d->best_duet_name = m == DUET_MODE_FUSED ? "fused sweep" : "concurrent sweep";
        }
    d->best_own = d->best_duet;
    static const char *const vnames[3] = {"vendor mode 8", "vendor mode 16", "vendor mode 32"};
    for (int i = 0; i < 3; i++)
        if (stat_or_inf(&r->vmode[i]) < d->best_duet) {
            d->best_duet = r->vmode[i].med;
            d->best_duet_name = vnames[i];
        }
    d->duet_gemm = stat_or_inf(&r->d_gemm);
    d->duet_comm = r->best_comm >= 0 ? r->d_comm[r->best_comm].med : INFINITY;
}

static cJSON *stat_json(const gpu_stat_t *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", s->ok);
    if (s->ok) {
        cJSON_AddNumberToObject(o, "ms", s->med);
        cJSON_AddNumberToObject(o, "min_ms", s->min);
        cJSON_AddNumberToObject(o, "max_ms", s->max);
        cJSON_AddNumberToObject(o, "n", s->n);
    } else {
        cJSON_AddStringToObject(o, "error", s->error);
    }
    return o;
}

static cJSON *stat_cfg_json(const gpu_stat_t *s, const duet_config_t *c, double pred)
{
    cJSON *o = stat_json(s);
    cli_json_add_config(cJSON_AddObjectToObject(o, "config"), c);
    if (isfinite(pred))
        cJSON_AddNumberToObject(o, "pred_ms", pred);
    return o;
}

static cJSON *row_json(const bench_row_t *r)
{
    cJSON *o = cJSON_CreateObject();
    const duet_workload_t *w = &r->wl;
    cJSON_AddStringToObject(o, "collective", duet_collective_name(w->coll));
    cJSON_AddStringToObject(o, "dtype", duet_dtype_name(w->dtype));
    cJSON_AddNumberToObject(o, "m", (double)w->m);
    cJSON_AddNumberToObject(o, "n", (double)w->n);
    cJSON_AddNumberToObject(o, "k", (double)w->k);
    cJSON_AddNumberToObject(o, "mc", (double)w->mc);
    cJSON_AddNumberToObject(o, "nc", (double)w->nc);
    cJSON_AddNumberToObject(o, "world", w->world);
    cJSON_AddNumberToObject(o, "comm_bytes_per_rank", (double)duet_op_src_bytes(w));
    cJSON *v = cJSON_AddObjectToObject(o, "vendor");
    cJSON_AddItemToObject(v, "gemm", stat_json(&r->v_gemm));
    cJSON *d = cJSON_AddObjectToObject(o, "duet");
    cJSON_AddItemToObject(d, "gemm", stat_json(&r->d_gemm));
    if (r->d_gemm.ok) {
        char tn[32];
        snprintf(tn, sizeof(tn), "%dx%dx%d", r->d_gemm_tile.bm, r->d_gemm_tile.bn, r->d_gemm_tile.bk);
        cJSON_AddStringToObject(d, "gemm_tile", tn);
        cJSON_AddNumberToObject(d, "gemm_split_k", r->d_gemm_split);
    }
    cJSON *gt = cJSON_AddObjectToObject(d, "gemm_tiles");
    for (int t = 0; t < duet_tile_count() && t < BENCH_MAX_TILES; t++) {
        duet_gemm_tile_t tl = duet_tile_get(t);
        char tn[32];
        snprintf(tn, sizeof(tn), "%dx%dx%d", tl.bm, tl.bn, tl.bk);
        cJSON *st = stat_json(&r->d_gemm_tiles[t]);
        if (r->d_gemm_tiles[t].ok)
            cJSON_AddNumberToObject(st, "split_k", r->d_gemm_tiles_split[t]);
        cJSON_AddItemToObject(gt, tn, st);
    }
    if (w->coll == DUET_COLL_NONE) { /* --gemm-only */
        cli_json_add_num(o, "gemm_ratio", stat_or_inf(&r->v_gemm) / stat_or_inf(&r->d_gemm));
        return o;
    }
    cJSON_AddItemToObject(v, "collective", stat_json(&r->v_coll));
    cJSON_AddItemToObject(v, "sequential", stat_json(&r->v_seq));
    cJSON_AddItemToObject(v, "two_streams", stat_json(&r->v_streams));
    for (int i = 0; i < 3; i++) {
        char k[32];
        snprintf(k, sizeof(k), "carve_out_%d", bench_carve[i]);
        cJSON_AddItemToObject(v, k, stat_json(&r->v_carve[i]));
    }
    cJSON *ca = cJSON_AddArrayToObject(d, "collective");
    for (int i = 0; i < BENCH_NCOMM; i++) {
        cJSON *x = stat_json(&r->d_comm[i]);
        cJSON_AddNumberToObject(x, "ctas", bench_comm_ctas[i % BENCH_NCTAS]);
        char t[32];
        cJSON_AddStringToObject(x, "comm_tile", bench_comm_tile_str(i, t, sizeof(t)));
        cJSON_AddItemToArray(ca, x);
    }
    cJSON_AddItemToObject(d, "fused_default", stat_cfg_json(&r->d_fused_def, &r->fused_def, NAN));
    cJSON_AddItemToObject(d, "concurrent_default", stat_cfg_json(&r->d_conc_def, &r->conc_def, NAN));
    cJSON *vm = cJSON_AddArrayToObject(d, "vendor_mode");
    for (int i = 0; i < 3; i++)
        cJSON_AddItemToArray(vm, stat_cfg_json(&r->vmode[i], &r->vmode_cfg[i], NAN));
    cJSON *sw = cJSON_AddArrayToObject(d, "sweep");
    for (int i = 0; i < r->n_sweep; i++)
        cJSON_AddItemToArray(sw, stat_cfg_json(&r->sweep[i], &r->sweep_cfg[i], r->sweep_pred[i]));
    bench_derived_t x;
    bench_derive(r, &x);
    cJSON *dv = cJSON_AddObjectToObject(o, "derived");
    cli_json_add_num(dv, "bound_ms", x.bound);
    cli_json_add_num(dv, "best_vendor_ms", x.best_vendor);
    cJSON_AddStringToObject(dv, "best_vendor", x.best_vendor_name);
    cli_json_add_num(dv, "best_duet_ms", x.best_duet);
    cJSON_AddStringToObject(dv, "best_duet", x.best_duet_name);
    cli_json_add_num(dv, "duet_over_bound", x.best_duet / x.bound);
    cli_json_add_num(dv, "best_own_kernels_ms", x.best_own);
    cli_json_add_num(dv, "own_kernels_over_bound", x.best_own / x.bound);
    cli_json_add_num(dv, "vendor_over_bound", x.best_vendor / x.bound);
    cli_json_add_num(dv, "speedup_over_vendor", x.best_vendor / x.best_duet);
    cli_json_add_num(dv, "gemm_tflops_ratio", stat_or_inf(&r->v_gemm) / x.duet_gemm);
    cli_json_add_num(dv, "collective_speed_ratio", stat_or_inf(&r->v_coll) / x.duet_comm);
    if (r->best_comm >= 0) {
        char t[32];
        cJSON_AddNumberToObject(dv, "collective_best_ctas", bench_comm_ctas[r->best_comm % BENCH_NCTAS]);
        cJSON_AddStringToObject(dv, "collective_best_comm_tile", bench_comm_tile_str(r->best_comm, t, sizeof(t)));
    }
    if (w->coll == DUET_COLL_ALL_GATHER && isfinite(x.duet_comm))
        cli_json_add_num(dv, "all_gather_push_gbs", (double)duet_op_src_bytes(w) * (w->world - 1) / (x.duet_comm * 1e-3) / 1e9);
    return o;
}

/* Horizontal bars per workload, normalised to the bound max(GEMM alone, collective alone). */
static duet_status_t bench_svg(const bench_row_t *rows, int n, const gpu_env_t *e, const char *path)
{
    const double left = 330, W = 1100, bar = 7, row_h = 20, top = 84;
    double H = top + n * row_h + 60, xmax = 2.5, pw = W - left - 40;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (f == NULL)
        return DUET_ERR_NO_MEMORY;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
            "height=\"%.0f\"><rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
            "<text x=\"20\" y=\"24\" font-size=\"16\" font-weight=\"bold\" font-family=\"sans-serif\">%s x%d: makespan "
            "/ max(GEMM alone, collective alone), vendor best practice vs duet best</text>\n"
            "<rect x=\"20\" y=\"38\" width=\"14\" height=\"8\" fill=\"#9d9d9d\"/><text x=\"40\" y=\"46\" "
            "font-size=\"12\" font-family=\"sans-serif\">best of sequential, two streams, carve-outs (%s)</text>\n"
            "<rect x=\"20\" y=\"52\" width=\"14\" height=\"8\" fill=\"#4c78a8\"/><text x=\"40\" y=\"60\" "
            "font-size=\"12\" font-family=\"sans-serif\">best duet mode (fused, concurrent or vendor); the label is "
            "vendor / duet</text>\n",
            W, H, e->device, e->world, duet_vendor_describe(e->vendor));
    for (double x = 0; x <= xmax + 1e-9; x += 0.25) {
        double px = left + x / xmax * pw;
        fprintf(f,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\" font-family=\"sans-serif\">%.2f</text>\n",
                px, top - 6, px, top + n * row_h, fabs(x - 1) < 1e-9 ? "#d62728" : "#e0e0e0",
                fabs(x - 1) < 1e-9 ? "1.5" : "0.7", px, top + n * row_h + 14, x);
    }
    for (int i = 0; i < n; i++) {
        bench_derived_t d;
        bench_derive(&rows[i], &d);
        const duet_workload_t *w = &rows[i].wl;
        double y = top + i * row_h;
        fprintf(f,
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" font-family=\"monospace\">%lldx%lldx%lld "
                "%s %lldx%lld</text>\n",
                left - 8, y + 12, (long long)w->m, (long long)w->n, (long long)w->k, duet_collective_name(w->coll),
                (long long)w->mc, (long long)w->nc);
        double vals[2] = {d.best_vendor / d.bound, d.best_duet / d.bound};
        const char *cols[2] = {"#9d9d9d", "#4c78a8"};
        for (int k = 0; k < 2; k++) {
            if (!isfinite(vals[k]))
                continue;
            double wpx = fmin(vals[k], xmax) / xmax * pw;
            fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", left,
                    y + 2 + k * (bar + 1), wpx, bar, cols[k]);
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" font-family=\"sans-serif\">%.2fx</text>\n",
                left + fmin(fmax(vals[0], vals[1]), xmax) / xmax * pw + 4, y + 12,
                isfinite(vals[0] / vals[1]) ? vals[0] / vals[1] : 0);
    }
    fprintf(f, "</svg>\n");
    fclose(f);
    duet_status_t st = duet__write_file_atomic(path, buf, len);
    free(buf);
    return st;
}

/* --gemm-only: each GEMM shape of the workloads once, without its collective. */
static void bench_gemms_only(duet_workloads_t *wls)
{
    size_t n = 0;
    for (size_t i = 0; i < wls->n; i++) {
        duet_workload_t g = gpu_gemm_part(&wls->w[i]);
        int seen = 0;
        for (size_t j = 0; j < n && !seen; j++)
            seen = wls->w[j].m == g.m && wls->w[j].n == g.n && wls->w[j].k == g.k;
        if (!seen && g.m > 0)
            wls->w[n++] = g;
    }
    wls->n = n;
}

/*
 * The summary line of duet's GEMM against the vendor's: one ratio per workload shape (the first
 * row of each M, N, K, Mc, Nc: every collective of a shape shares its GEMM figures), split at
 * M = 512.
 */
static void bench_print_gemm_summary(const bench_row_t *rows, size_t n)
{
    double *big = calloc(n + 1, sizeof(double)), *small = calloc(n + 1, sizeof(double));
    size_t nb = 0, ns = 0;
    double big_min = INFINITY;
    for (size_t i = 0; i < n && big && small; i++) {
        const duet_workload_t *w = &rows[i].wl;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) {
            const duet_workload_t *x = &rows[j].wl;
            seen = x->m == w->m && x->n == w->n && x->k == w->k && x->mc == w->mc && x->nc == w->nc;
        }
        double ratio = stat_or_inf(&rows[i].v_gemm) / stat_or_inf(&rows[i].d_gemm);
        if (seen || !isfinite(ratio))
            continue;
        if (w->m >= 512) {
            big[nb++] = ratio;
            big_min = fmin(big_min, ratio);
        } else {
            small[ns++] = ratio;
        }
    }
    printf("  duet GEMM / vendor TFLOP/s: median %.3f for M >= 512 (min %.3f), median %.3f for M < 512\n",
           cli_median(big, nb), big_min, cli_median(small, ns));
    free(big);
    free(small);
}

/* " and 300 ms" where a time-based warm-up was asked for (--warmup-ms), else "". */
static const char *warm_ms_str(const gpu_env_t *e, char *buf, size_t n)
{
    buf[0] = '\0';
    if (e->warmup_ms > 0)
        snprintf(buf, n, " and %.0f ms", e->warmup_ms);
    return buf;
}

static void bench_print_gemms(const bench_row_t *rows, size_t n, const gpu_env_t *e, long long reps, long long warm)
{
    printf("%-22s %10s %8s %10s %8s %-12s %7s\n", "GEMM", "vendor ms", "TFLOP/s", "duet ms", "TFLOP/s", "duet tile",
           "d/v");
    for (size_t i = 0; i < n; i++) {
        const bench_row_t *r = &rows[i];
        const duet_workload_t *w = &r->wl;
        double flop = 2.0 * (double)w->m * (double)w->n * (double)w->k;
        double vm = stat_or_inf(&r->v_gemm), dm = stat_or_inf(&r->d_gemm), ratio = vm / dm;
        char g[32], tn[24] = "-";
        snprintf(g, sizeof(g), "%lldx%lldx%lld", (long long)w->m, (long long)w->n, (long long)w->k);
        if (r->d_gemm.ok && r->d_gemm_split > 1)
            snprintf(tn, sizeof(tn), "%dx%d/k%d", r->d_gemm_tile.bm, r->d_gemm_tile.bn, (int)r->d_gemm_split);
        else if (r->d_gemm.ok)
            snprintf(tn, sizeof(tn), "%dx%d", r->d_gemm_tile.bm, r->d_gemm_tile.bn);
        printf("%-22s %10.4f %8.1f %10.4f %8.1f %-12s %7.3f\n", g, vm, flop / (vm * 1e-3) / 1e12, dm,
               flop / (dm * 1e-3) / 1e12, tn, ratio);
    }
    char wm[48];
    printf("\nsummary (%zu GEMMs, %s x%d, median of %lld after %lld warm-up%s):\n", n, e->device, e->world, reps, warm,
           warm_ms_str(e, wm, sizeof(wm)));
    bench_print_gemm_summary(rows, n);
}

static void bench_usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np W duet bench [--shapes FILE] [--collective LIST] [--dtype fp16|bf16] [--repeats N]\n"
               "                  [--warmup N] [--warmup-ms MS] [--top K] [--no-grid] [--gemm-only] [--json FILE]\n"
               "                  [--svg FILE] [--hw PROFILE]\n"
               "\n"
               "Times duet against the vendor libraries (cuBLASLt + NCCL on NVIDIA, hipBLASLt + RCCL on AMD) in the same\n"
               "run, one rank per GPU. Default workloads: the reference design's 15 GEMM shapes x all five collectives\n"
               "at this world size. Prints a table, writes every figure as JSON and a picture of the makespans.\n"
               "\n"
               "options:\n"
               "  --shapes FILE      workloads from a shape file ('MxNxK McxNc COLL[,COLL] [dtype]' per line)\n"
               "  --collective LIST  restrict the default set to these collectives (comma-separated)\n"
               "  --dtype D          fp16 (default) or bf16\n"
               "  --repeats N        timed runs per figure (default 20), after --warmup N (default 5)\n"
               "  --warmup-ms MS     then untimed runs until MS ms of them have run (default 0): every figure then\n"
               "                     comes from the clock the board's power limit settles at, as in a long job, not\n"
               "                     from the first 0.1-0.2 s at boost clock (on H200, 8192^3 takes 1.5 ms at boost,\n"
               "                     1.7 ms settled); 300 is enough there, and adds 0.3 s per figure\n"
               "  --top K            the simulator's K best configurations per mode join the sweep (default 4)\n"
               "  --no-grid          sweep only the simulator's picks, not the coarse grid (fractions x tiles, each also\n"
               "                     with K in two parts where the C tiles leave SMs idle)\n"
               "  --gemm-only        only the GEMMs of the workloads (each shape once): the vendor GEMM against duet's\n"
               "                     GEMM at every tile and K split worth trying; runs on one GPU (mpirun -np 1)\n"
               "  --json FILE        every figure (default bench-<arch>-w<W>.json)\n"
               "  --svg FILE         makespans relative to the bound, vendor best vs duet best\n"
               "  --hw PROFILE       profile for the simulator's picks (default: by architecture)\n"
               "\n"
               "example:\n"
               "  NCCL_NVLS_ENABLE=0 mpirun -np 2 build-gpu/duet bench --repeats 20 --json bench/results/h200-w2.json \\\n"
               "      --svg bench/results/h200-w2.svg\n");
}

int cmd_bench(int argc, char **argv)
{
    enum { O_SHAPES = 300, O_COLL, O_DTYPE, O_REP, O_WARM, O_WARMMS, O_TOP, O_NOGRID, O_JSON, O_SVG, O_HW, O_GEMM };
    static const struct option longopts[] = {
        {"shapes", required_argument, NULL, O_SHAPES}, {"collective", required_argument, NULL, O_COLL},
        {"dtype", required_argument, NULL, O_DTYPE},   {"repeats", required_argument, NULL, O_REP},
        {"warmup", required_argument, NULL, O_WARM},   {"top", required_argument, NULL, O_TOP},
        {"no-grid", no_argument, NULL, O_NOGRID},      {"json", required_argument, NULL, O_JSON},
        {"svg", required_argument, NULL, O_SVG},       {"hw", required_argument, NULL, O_HW},
        {"gemm-only", no_argument, NULL, O_GEMM},      {"warmup-ms", required_argument, NULL, O_WARMMS},
        {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0}};
    const char *shapes = NULL, *json = NULL, *svg = NULL, *hw = NULL;
    uint32_t colls = 0;
    int32_t dtype = DUET_DTYPE_FP16;
    long long reps = 20, warm = 5, warm_ms = 0, top = 4;
    int grid = 1, gemm_only = 0, opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            bench_usage(stdout);
            return CLI_EXIT_OK;
        case O_SHAPES:
            shapes = optarg;
            break;
        case O_COLL: {
            int rc = cli_parse_collectives("bench", optarg, &colls);
            if (rc != CLI_EXIT_OK)
                return rc;
            break;
        }
        case O_DTYPE:
            if (duet_dtype_parse(optarg, &dtype) < 0)
                return cli_usage_error("bench", "--dtype: %s", duet_last_error());
            break;
        case O_REP:
            if (cli_parse_i64(optarg, 1, 100000, &reps) != 0)
                return cli_usage_error("bench", "--repeats: '%s' is not a positive integer", optarg);
            break;
        case O_WARM:
            if (cli_parse_i64(optarg, 0, 100000, &warm) != 0)
                return cli_usage_error("bench", "--warmup: '%s' is not a non-negative integer", optarg);
            break;
        case O_WARMMS:
            if (cli_parse_i64(optarg, 0, 60000, &warm_ms) != 0)
                return cli_usage_error("bench", "--warmup-ms: '%s' is not an integer in [0, 60000]", optarg);
            break;
        case O_TOP:
            if (cli_parse_i64(optarg, 0, 64, &top) != 0)
                return cli_usage_error("bench", "--top: '%s' is not an integer in [0, 64]", optarg);
            break;
        case O_NOGRID:
            grid = 0;
            break;
        case O_GEMM:
            gemm_only = 1;
            break;
        case O_JSON:
            json = optarg;
            break;
        case O_SVG:
            svg = optarg;
            break;
        case O_HW:
            hw = optarg;
            break;
        default:
            return cli_getopt_error("bench", argv, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
    if (gemm_only && svg)
        return cli_usage_error("bench", "--svg draws makespans with the collective: not with --gemm-only");

    gpu_env_t e;
    gpu_env_params_t ep = {0};
    ep.heap_bytes = (size_t)2 << 30;
    ep.hw = hw;
    ep.vendor = 1;
    ep.n_capped = 3;
    memcpy(ep.capped_ctas, bench_carve, sizeof(bench_carve));
    int rc = gpu_env_init(&e, "bench", &argc, &argv, &ep);
    if (rc != CLI_EXIT_OK)
        return rc;
    e.warmup_ms = (double)warm_ms;
    duet_workloads_t wls = {NULL, 0};
    duet_status_t st = shapes ? duet_workloads_load(shapes, e.world, dtype, &wls)
                              : duet_workloads_seed(e.world, colls, dtype, &wls);
    bench_row_t *rows = NULL;
    duet_sim_ws_t *ws = NULL;
    if (st < 0) {
        rc = cli_fail("bench", st);
        goto out;
    }
    if (gemm_only)
        bench_gemms_only(&wls);
    rows = calloc(wls.n, sizeof(*rows));
    if (rows == NULL || duet_sim_ws_create(&ws) < 0) {
        rc = cli_fail("bench", DUET_ERR_NO_MEMORY);
        goto out;
    }
    double t0 = gpu_now();
    for (size_t i = 0; i < wls.n; i++) {
        bench_row_t *r = &rows[i];
        r->wl = wls.w[i];
        char what[96];
        snprintf(what, sizeof(what), "%lldx%lldx%lld %s", (long long)r->wl.m, (long long)r->wl.n, (long long)r->wl.k,
                 duet_collective_name(r->wl.coll));
        gpu_progress(&e, what, i, wls.n, t0);
        gpu_bufs_t b;
        if ((st = gpu_bufs_alloc(&e, &r->wl, 1000 + i, &b)) < 0) {
            rc = cli_fail("bench", st);
            goto out;
        }
        bench_workload(&e, ws, rows, i, (int)warm, (int)reps, (int)top, grid, &b);
        gpu_bufs_free(&e, &b);
    }
    gpu_progress(&e, "done", wls.n, wls.n, t0);

    if (e.rank == 0 && gemm_only)
        bench_print_gemms(rows, wls.n, &e, reps, warm);
    if (e.rank == 0 && !gemm_only) {
        /* The table, then the summary lines of docs/performance.md. */
        printf("%-22s %-14s %8s %8s %8s %8s %-12s %8s %-18s %6s %6s %6s %6s\n", "GEMM", "collective", "vGEMM", "vColl",
               "bound", "vBest", "(which)", "duet", "(which)", "d/bnd", "v/d", "G tf", "C sp");
        double *over_bound = calloc(wls.n, sizeof(double)), *speedup = calloc(wls.n, sizeof(double));
        double *own_bound = calloc(wls.n, sizeof(double)), *own_speedup = calloc(wls.n, sizeof(double));
        int no = 0, nos = 0;
        int nb = 0, ns = 0, comm_short = 0, comm_n = 0;
        for (size_t i = 0; i < wls.n; i++) {
            bench_derived_t d;
            bench_derive(&rows[i], &d);
            const duet_workload_t *w = &rows[i].wl;
            char g[32];
            snprintf(g, sizeof(g), "%lldx%lldx%lld", (long long)w->m, (long long)w->n, (long long)w->k);
            double gr = stat_or_inf(&rows[i].v_gemm) / d.duet_gemm, cr = stat_or_inf(&rows[i].v_coll) / d.duet_comm;
            printf("%-22s %-14s %8.4f %8.4f %8.4f %8.4f %-12s %8.4f %-18s %6.3f %6.3f %6.3f %6.3f\n", g,
                   duet_collective_name(w->coll), stat_or_inf(&rows[i].v_gemm), stat_or_inf(&rows[i].v_coll), d.bound,
                   d.best_vendor, d.best_vendor_name, d.best_duet, d.best_duet_name, d.best_duet / d.bound,
                   d.best_vendor / d.best_duet, gr, cr);
            if (isfinite(d.best_duet / d.bound))
                over_bound[nb++] = d.best_duet / d.bound;
            if (isfinite(d.best_vendor / d.best_duet))
                speedup[ns++] = d.best_vendor / d.best_duet;
            if (isfinite(d.best_own / d.bound))
                own_bound[no++] = d.best_own / d.bound;
            if (isfinite(d.best_vendor / d.best_own))
                own_speedup[nos++] = d.best_vendor / d.best_own;
            if (isfinite(cr) && duet_op_src_bytes(w) >= (1u << 20)) {
                comm_n++;
                comm_short += cr < 1.0;
            }
        }
        char wm[48];
        printf("\nsummary (%zu workloads, %s, %s x%d, median of %lld after %lld warm-up%s):\n", wls.n,
               duet_dtype_name(dtype), e.device, e.world, reps, warm, warm_ms_str(&e, wm, sizeof(wm)));
        bench_print_gemm_summary(rows, wls.n);
        printf("  duet collective faster than the vendor's: %d of %d workloads with >= 1 MB per rank\n",
               comm_n - comm_short, comm_n);
        printf("  best duet makespan / bound: median %.3f (own kernels only: %.3f)\n", cli_median(over_bound, (size_t)nb),
               cli_median(own_bound, (size_t)no));
        printf("  best vendor practice / best duet: median %.3f (own kernels only: %.3f)\n", cli_median(speedup, (size_t)ns),
               cli_median(own_speedup, (size_t)nos));
        free(own_bound);
        free(own_speedup);
        free(over_bound);
        free(speedup);

    }
    if (e.rank == 0) {
        char defpath[128];
        if (json == NULL) {
            snprintf(defpath, sizeof(defpath), gemm_only ? "bench-gemm-%s.json" : "bench-%s-w%d.json", e.arch, e.world);
            json = defpath;
        }
        cJSON *o = cJSON_CreateObject();
        time_t now = time(NULL);
        char date[32];
        strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
        cJSON_AddStringToObject(o, "schema", "duet-bench/1");
        cJSON_AddBoolToObject(o, "gemm_only", gemm_only);
        cJSON_AddStringToObject(o, "device", e.device);
        cJSON_AddStringToObject(o, "arch", e.arch);
        cJSON_AddNumberToObject(o, "sms", e.sms);
        cJSON_AddNumberToObject(o, "world", e.world);
        cJSON_AddStringToObject(o, "driver", e.driver);
        cJSON_AddStringToObject(o, "runtime", e.runtime);
        cJSON_AddStringToObject(o, "vendor", duet_vendor_describe(e.vendor));
        cJSON_AddStringToObject(o, "date", date);
        cJSON_AddStringToObject(o, "duet", DUET_VERSION);
        cJSON_AddNumberToObject(o, "repeats", (double)reps);
        cJSON_AddNumberToObject(o, "warmup", (double)warm);
        cJSON_AddNumberToObject(o, "warmup_ms", (double)warm_ms);
        cJSON *arr = cJSON_AddArrayToObject(o, "workloads");
        for (size_t i = 0; i < wls.n; i++)
            cJSON_AddItemToArray(arr, row_json(&rows[i]));
        char *text = cJSON_Print(o);
        cJSON_Delete(o);
        if (text == NULL || (st = duet__write_file_atomic(json, text, strlen(text))) < 0)
            rc = cli_fail("bench", text ? st : DUET_ERR_NO_MEMORY);
        cJSON_free(text);
        if (rc == CLI_EXIT_OK && svg && (st = bench_svg(rows, (int)wls.n, &e, svg)) < 0)
            rc = cli_fail("bench", st);
        if (rc == CLI_EXIT_OK)
            printf("wrote %s%s%s\n", json, svg ? " and " : "", svg ? svg : "");
    }
out:
    duet_sim_ws_destroy(ws);
    free(rows);
    duet_workloads_free(&wls);
    gpu_env_fini(&e);
    return rc;
}
