/*
 * Corpora for the calibration tests: synthetic ones measured by the simulator itself (so the
 * constants that produced them are known), and small hand-built ones.
 */
#ifndef DUET_TEST_CAL_SYNTH_H
#define DUET_TEST_CAL_SYNTH_H

#include <unistd.h>

#include "../test_util.h"
#include "duet/calibrate.h"
#include "duet/corpus.h"

/* An empty corpus with the header a collector writes (132 SMs: an H200). */
static inline duet_corpus_t t_corpus_header(int32_t sms, int32_t world)
{
    duet_corpus_t c;
    duet_corpus_init(&c);
    snprintf(c.device, sizeof(c.device), "NVIDIA H200");
    snprintf(c.arch, sizeof(c.arch), "sm_90");
    snprintf(c.driver, sizeof(c.driver), "none");
    snprintf(c.runtime, sizeof(c.runtime), "duet simulator");
    snprintf(c.date, sizeof(c.date), "2026-12-01T00:00:00Z");
    snprintf(c.duet_version, sizeof(c.duet_version), "%s", DUET_VERSION);
    c.sms = sms;
    c.world = world;
    c.repeats = 8;
    c.warmup = 2;
    c.n_fracs = 1;
    c.fracs[0] = 0.75;
    c.n_tiles = 1;
    c.tiles[0] = (duet_gemm_tile_t){256, 128, 64};
    c.n_comm_wgs = 1;
    c.comm_wgs[0] = 16;
    return c;
}

/* Append a row "measured" by the simulator on `truth` with `policy`, times exp(noise). */
static inline void t_add_sim(duet_corpus_t *c, duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy,
                             const duet_hw_t *truth, int32_t kind, duet_workload_t wl, duet_config_t cfg, double noise)
{
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.kind = kind;
    r.wl = wl;
    r.cfg = cfg;
    r.ok = 1;
    r.repeats = 8;
    double ms = 0;
    duet_status_t st = duet_cal_row_predict(ws, policy, truth, &r, &ms);
    if (st != DUET_OK) {
        fprintf(stderr, "synthetic row: %s\n", duet_last_error());
        abort();
    }
    r.ms = ms * exp(noise);
    r.min_ms = r.ms * 0.99;
    r.max_ms = r.ms * 1.01;
    if (duet_corpus_add(c, &r) != DUET_OK)
        abort();
}

static inline duet_config_t t_fused(const duet_hw_t *hw, int32_t num_wgs, int32_t gemm_wgs, duet_gemm_tile_t tile)
{
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_FUSED);
    cfg.num_wgs = num_wgs;
    cfg.gemm_wgs = gemm_wgs;
    cfg.comm_wgs = num_wgs - gemm_wgs;
    cfg.tile = tile;
    return cfg;
}

static inline duet_config_t t_concurrent(const duet_hw_t *hw, int32_t gemm_wgs, int32_t comm_wgs, duet_gemm_tile_t tile)
{
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_CONCURRENT);
    cfg.gemm_wgs = gemm_wgs;
    cfg.comm_wgs = comm_wgs;
    cfg.num_wgs = gemm_wgs + comm_wgs;
    cfg.tile = tile;
    return cfg;
}

/* A measured op row: median `ms`, fastest `lo` and slowest `hi` of `repeats` timed runs. */
static inline duet_corpus_row_t t_op_row(duet_workload_t wl, duet_config_t cfg, double ms, double lo, double hi,
                                         int32_t repeats)
{
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.kind = DUET_ROW_OP;
    r.wl = wl;
    r.cfg = cfg;
    r.ok = 1;
    r.repeats = repeats;
    r.ms = ms;
    r.min_ms = lo;
    r.max_ms = hi;
    return r;
}

/* An op row of shape `shape` (an all_gather with m = 1024 (shape + 1)), fused on the H200's 132
 * SMs with `gemm_wgs` of them on the GEMM, in 256x128x64 tiles. */
static inline duet_corpus_row_t t_noise_row(int shape, int32_t gemm_wgs, int32_t repeats, double ms, double lo,
                                            double hi)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(1024 * (shape + 1), 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    return t_op_row(wl, t_fused(&hw, 132, gemm_wgs, (duet_gemm_tile_t){256, 128, 64}), ms, lo, hi, repeats);
}

/*
 * A synthetic world-2 corpus on `truth` (132 SMs): five shapes (every collective but broadcast,
 * both dtypes, GEMMs bound by the matrix units, by HBM and by per-tile costs), and per shape
 * - op rows: fused at 55 %, 80 % and 100 % of the SMs on GEMM and concurrent with 8 or 64 comm
 *   CTAs beside 124 GEMM CTAs, each with two GEMM tiles;
 * - gemm_alone on 16, 66 and 132 CTAs (the intercept and slope of the tile count per CTA
 *   separate per-tile from per-CTA costs);
 * - comm_alone on 1, 4, 16, 64 and 128 CTAs (the link's saturation curve).
 * 90 rows. Row i is multiplied by exp(noise * u_i), u_i uniform in [-1, 1] from a fixed seed.
 */
static inline duet_corpus_t t_synthetic_corpus(const duet_hw_t *truth, const duet_sim_policy_ops_t *policy,
                                               double noise)
{
    static const struct {
        int64_t m, n, k;
        int32_t coll;
        int64_t mc, nc;
        int32_t dtype;
    } shapes[] = {
        {4096, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, DUET_DTYPE_BF16},
        {8192, 8192, 2048, DUET_COLL_ALL_REDUCE, 512, 4096, DUET_DTYPE_FP16},
        {2048, 2048, 16384, DUET_COLL_REDUCE_SCATTER, 512, 2048, DUET_DTYPE_BF16},
        {128, 8192, 8192, DUET_COLL_ALL_GATHER, 1024, 4096, DUET_DTYPE_BF16},
        {4096, 8192, 512, DUET_COLL_ALL_TO_ALL, 512, 2048, DUET_DTYPE_FP16},
    };
    static const double fracs[] = {0.55, 0.8, 1.0};
    static const int32_t comm_concurrent[] = {8, 64}, gemm_alone[] = {16, 66, 132}, comm_alone[] = {1, 4, 16, 64, 128};
    const duet_gemm_tile_t tiles[] = {{256, 128, 64}, {128, 128, 64}};
    duet_corpus_t c = t_corpus_header(truth->n_sms, 2);
    /* Measured (by the simulator) with this build's kernels, as a fresh corpus would be. */
    duet_build_info_t bi = duet_build_info();
    snprintf(c.prov.kernel_commit, sizeof(c.prov.kernel_commit), "%s", bi.kernel_commit);
    snprintf(c.prov.kernel_hash, sizeof(c.prov.kernel_hash), "%s", bi.kernel_hash);
    duet_sim_ws_t *ws = NULL;
    if (duet_sim_ws_create(&ws) != DUET_OK)
        abort();
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        duet_workload_t wl = t_wl(shapes[s].m, shapes[s].n, shapes[s].k, shapes[s].coll, shapes[s].mc, shapes[s].nc, 2);
        wl.dtype = shapes[s].dtype;
        duet_config_t cfg[32];
        int32_t kind[32], n = 0;
        for (int t = 0; t < 2; t++) {
            for (int f = 0; f < 3; f++) {
                int32_t g = (int32_t)lround(fracs[f] * truth->n_sms);
                kind[n] = DUET_ROW_OP;
                cfg[n++] = t_fused(truth, truth->n_sms, g, tiles[t]);
            }
            for (int k = 0; k < 2; k++) {
                kind[n] = DUET_ROW_OP;
                cfg[n++] = t_concurrent(truth, truth->n_sms - 8, comm_concurrent[k], tiles[t]);
            }
        }
        for (int k = 0; k < 3; k++) {
            kind[n] = DUET_ROW_GEMM_ALONE;
            cfg[n++] = t_fused(truth, gemm_alone[k], gemm_alone[k], tiles[0]);
        }
        for (int k = 0; k < 5; k++) {
            kind[n] = DUET_ROW_COMM_ALONE;
            cfg[n++] = t_fused(truth, comm_alone[k], 0, tiles[0]);
        }
        for (int32_t i = 0; i < n; i++) {
            /* xorshift64: a fixed, portable sequence. */
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            double u = (double)(seed >> 11) / 9007199254740992.0 * 2.0 - 1.0;
            if (policy == &duet_sim_policy_frozen && cfg[i].mode != DUET_MODE_FUSED)
                continue; /* the reference rules model fused mode only */
            t_add_sim(&c, ws, policy, truth, kind[i], wl, cfg[i], noise * u);
        }
    }
    duet_sim_ws_destroy(ws);
    return c;
}

/* Six K-split rows on the 128-row GEMM of the synthetic corpus (64 C tiles of 256x128 on 132 SMs,
 * K in 2 and in 4 parts: the GEMM alone, and fused with 111 and 132 CTAs first on the GEMM, as the
 * collector measures them), "measured" on `truth` by the fluid model. */
static inline void t_add_split_rows(duet_corpus_t *c, const duet_hw_t *truth)
{
    duet_sim_ws_t *ws = NULL;
    if (duet_sim_ws_create(&ws) != DUET_OK)
        abort();
    duet_workload_t wl = t_wl(128, 8192, 8192, DUET_COLL_ALL_GATHER, 1024, 4096, 2);
    wl.dtype = DUET_DTYPE_BF16;
    const duet_gemm_tile_t tile = {256, 128, 64};
    for (int32_t s = 2; s <= 4; s += 2) {
        if (!duet_split_k_worth_trying(truth, &wl, tile, s))
            abort();
        duet_config_t g = t_fused(truth, truth->n_sms, truth->n_sms, tile);
        g.split_k = s;
        t_add_sim(c, ws, &duet_sim_policy_fluid, truth, DUET_ROW_GEMM_ALONE, wl, g, 0);
        for (int32_t gw = 111; gw <= 132; gw += 21) {
            duet_config_t f = t_fused(truth, truth->n_sms, gw, tile);
            f.split_k = s;
            t_add_sim(c, ws, &duet_sim_policy_fluid, truth, DUET_ROW_OP, wl, f, 0);
        }
    }
    duet_sim_ws_destroy(ws);
}

/* A path in this test's own temporary folder, named by tag. */
static inline void t_tmp(char *buf, size_t n, const char *tag)
{
    t_tmp_path(buf, n, tag);
}

#endif /* DUET_TEST_CAL_SYNTH_H */
