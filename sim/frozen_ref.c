/*
 * The reference predictor end to end: iris.concurrent predictor.py's predict_split and
 * _best_split_for_tile (predictor.py of iris.concurrent, ROCm/iris PR #544), on top of its scheduler (sim/frozen.c).
 *
 * Everything here is in milliseconds and follows the reference's order of floating-point
 * operations, because the goal is its numbers: the 60 golden cases of
 * tests/data/seed-golden-predict.json (the reference's own outputs with origami's full-chip GEMM
 * time given per tile) are reproduced to 1e-9 relative, split, tile and whole curve. What is not
 * reproduced is origami itself: the caller supplies the full-chip GEMM time of each tile, and
 * duet_frozen_ref_gemm_full() offers duet's closed form in its place.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "sim/internal.h"

double duet_frozen_ref_lg(double t_full, int64_t n_gemm, double spread, int32_t num_wgs, int32_t gemm_wgs,
                          double comm_full, double mult, double alpha)
{
    /* CU-seconds per tile: the full-chip time over the tiles, so that n_gemm tiles on `spread`
     * workers take t_full. */
    double l_tile = t_full * spread / (double)n_gemm;
    double f_comm = num_wgs > gemm_wgs ? (double)(num_wgs - gemm_wgs) / (double)num_wgs : 0.0;
    double intensity = t_full > 0 ? comm_full / t_full : 0.0;
    return l_tile * mult * (1.0 + alpha * f_comm * fmax(0.0, intensity));
}

duet_frozen_ref_params_t duet_frozen_ref_default_params(void)
{
    duet_frozen_ref_params_t p;
    memset(&p, 0, sizeof(p));
    p.world = 2;
    p.num_wgs = 304;
    p.cb_m = 256;
    p.cb_n = 64;
    p.dtype_bytes = 2;
    p.prefer = (duet_gemm_tile_t){256, 256, 64};
    p.n_tiles = 1;
    p.tiles[0] = p.prefer;
    p.margin = 0.20;
    p.c_atomic_gemm_ms = 0.99e-3;
    p.c_atomic_comm_ms = 2.36e-3;
    p.comm_sat = 64;
    p.fused_mult = DUET_REF_FUSED_GEMM_MULT;
    p.alpha = 0.40;
    p.link_gbs = 120.0;
    p.launch_us = 5.0;
    return p;
}

static int64_t duet__cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* The reference's comm pricing (3.3): remote bytes per rank at one bandwidth plus the launch floor,
 * its work items, and the all_reduce saturation floor (3.4). */
static void duet__ref_comm(const duet_frozen_ref_params_t *p, double *full_ms_p, int64_t *n_comm_p, int32_t *sat_p)
{
    *full_ms_p = 0.0;
    *n_comm_p = 0;
    *sat_p = 1;
    if (p->coll == DUET_COLL_NONE || p->comm_m <= 0 || p->comm_n <= 0)
        return;
    const int64_t w = p->world;
    const int64_t full = duet__cdiv(p->comm_m, p->cb_m) * duet__cdiv(p->comm_n, p->cb_n);
    const int64_t tb = (int64_t)p->cb_m * p->cb_n * p->dtype_bytes;
    int64_t bytes, n;
    switch (p->coll) {
    case DUET_COLL_ALL_REDUCE:
        n = duet__cdiv(full, w);
        bytes = n * 2 * (w - 1) * tb;
        break;
    case DUET_COLL_REDUCE_SCATTER:
        bytes = duet__cdiv(full, w) * (w - 1) * tb;
        n = duet__cdiv(p->comm_m / w, p->cb_m) * duet__cdiv(p->comm_n, p->cb_n);
        break;
    case DUET_COLL_ALL_TO_ALL:
        bytes = full * (w - 1) / w * tb;
        n = full;
        break;
    default: /* all_gather and broadcast (the root's bytes, charged on every rank) */
        bytes = full * (w - 1) * tb;
        n = full;
        break;
    }
    *full_ms_p = (double)bytes / (p->link_gbs * 1e9) * 1e3 + p->launch_us * 1e-3;
    *n_comm_p = n;
    if (p->coll == DUET_COLL_ALL_REDUCE) {
        int32_t s = (int32_t)lround(p->comm_sat * 2.0);
        if (s > p->num_wgs)
            s = p->num_wgs;
        *sat_p = s > 1 ? s : 1;
    }
}

static int duet__tile_eq(duet_gemm_tile_t a, duet_gemm_tile_t b)
{
    return a.bm == b.bm && a.bn == b.bn && a.bk == b.bk;
}

/* _best_split_for_tile: the curve of one tile and its best point (strict <). */
static duet_status_t duet__ref_best_split(duet_sim_ws_t *ws, const duet_frozen_ref_params_t *p, int ti,
                                          const int32_t *cand, int32_t n_cand, duet_frozen_ref_result_t *r)
{
    const duet_gemm_tile_t mt = p->tiles[ti];
    const double t_full = p->gemm_full_ms[ti];
    double comm_full;
    int64_t n_comm;
    int32_t sat;
    duet__ref_comm(p, &comm_full, &n_comm, &sat);
    const int64_t n_gemm = p->gemm_m > 0 ? duet__cdiv(p->gemm_m, mt.bm) * duet__cdiv(p->gemm_n, mt.bn) : 0;
    const double lc = n_comm > 0 ? comm_full / (double)n_comm : 0.0;
    memset(r, 0, offsetof(duet_frozen_ref_result_t, curve));
    r->tile_index = ti;
    r->tile = mt;
    r->t_comm_ms = comm_full;
    r->lc_ms = lc;
    r->n_gemm = n_gemm;
    r->n_comm = n_comm;
    int best = -1;
    for (int32_t i = 0; i < n_cand; i++) {
        const int32_t gw = cand[i];
        double lg = n_gemm > 0 ? duet_frozen_ref_lg(t_full, n_gemm, (double)p->num_wgs, p->num_wgs, gw, comm_full,
                                                    p->fused_mult, p->alpha)
                               : 0.0;
        duet_frozen_params_t fp = {n_gemm, lg, n_comm, lc, p->num_wgs, gw, p->c_atomic_gemm_ms, p->c_atomic_comm_ms,
                                   sat};
        duet_sim_result_t sr;
        DUET_CHECK(duet_sim_frozen_schedule(ws, &fp, NULL, &sr));
        duet_frozen_ref_point_t pt = {gw, lg * (double)duet__cdiv(n_gemm, gw), comm_full, sr.makespan_s};
        r->curve[i] = pt;
        if (best < 0 || pt.makespan_ms < r->curve[best].makespan_ms) {
            best = (int)i;
            r->lg_ms = lg;
        }
    }
    r->n_curve = n_cand;
    r->gemm_wgs = r->curve[best].gemm_wgs;
    r->pred_ms = r->curve[best].makespan_ms;
    r->t_gemm_ms = r->curve[best].t_gemm_ms;
    return DUET_OK;
}

duet_status_t duet_frozen_ref_predict(duet_sim_ws_t *ws, const duet_frozen_ref_params_t *p,
                                      duet_frozen_ref_result_t *res_p)
{
    if (p->num_wgs < 1 || p->n_tiles < 1 || p->n_tiles > DUET_FROZEN_REF_MAX_TILES || p->n_candidates < 0 ||
        p->n_candidates > DUET_FROZEN_REF_MAX_CANDIDATES || p->cb_m < 1 || p->cb_n < 1 || p->dtype_bytes < 1 ||
        p->world < 1 || p->comm_sat < 1 || !(p->link_gbs > 0) || !(p->launch_us >= 0) || !(p->fused_mult > 0) ||
        !(p->alpha >= 0) || !(p->margin >= 0 && p->margin < 1) || p->gemm_m < 0 ||
        (p->gemm_m > 0 && (p->gemm_n < 1 || p->gemm_k < 1)))
        return duet__error(DUET_ERR_INVALID_ARG, "reference predictor: inputs out of range");
    for (int i = 0; i < p->n_tiles; i++)
        if (p->tiles[i].bm < 1 || p->tiles[i].bn < 1 ||
            (p->gemm_m > 0 && !(p->gemm_full_ms[i] > 0 && isfinite(p->gemm_full_ms[i]))))
            return duet__error(DUET_ERR_INVALID_ARG,
                               "reference predictor: tile %d needs a positive tile size and full-chip GEMM time", i);
    int32_t cand[DUET_FROZEN_REF_MAX_CANDIDATES];
    int32_t n_cand = p->n_candidates;
    if (n_cand > 0) {
        for (int32_t i = 0; i < n_cand; i++) {
            if (p->candidates[i] < 0 || p->candidates[i] > p->num_wgs)
                return duet__error(DUET_ERR_INVALID_ARG, "reference predictor: candidate %d is not in 0..%d",
                                   p->candidates[i], p->num_wgs);
            cand[i] = p->candidates[i];
        }
    } else {
        /* range(max(16, num_wgs // 8), num_wgs + 1, 8): num_wgs itself only when it lies on the
         * step (256 yes, 304 no), as in the reference. */
        int32_t lo = p->num_wgs / 8 > 16 ? p->num_wgs / 8 : 16;
        for (int32_t g = lo; g <= p->num_wgs && n_cand < DUET_FROZEN_REF_MAX_CANDIDATES; g += 8)
            cand[n_cand++] = g;
        if (n_cand == 0)
            return duet__error(DUET_ERR_INVALID_ARG,
                               "reference predictor: num_wgs %d leaves its default candidate range empty (give them)",
                               p->num_wgs);
    }
    duet_frozen_ref_result_t *cur = malloc(sizeof(*cur)), *best = malloc(sizeof(*best));
    duet_status_t st = DUET_OK;
    if (cur == NULL || best == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "reference predictor: out of memory");
        goto cleanup;
    }
    int prefer = -1;
    for (int i = 0; i < p->n_tiles; i++) {
        DUET_CHECK_GOTO(duet__ref_best_split(ws, p, i, cand, n_cand, cur), st, cleanup);
        if (i == 0 || cur->pred_ms < best->pred_ms)
            memcpy(best, cur, sizeof(*best));
        if (prefer < 0 && duet__tile_eq(p->tiles[i], p->prefer))
            prefer = i;
    }
    /* The margin gate: switching away from the preferred tile needs a predicted win of more than
     * `margin`; otherwise the preferred tile's answer stands. */
    if (prefer >= 0 && best->tile_index != prefer) {
        DUET_CHECK_GOTO(duet__ref_best_split(ws, p, prefer, cand, n_cand, cur), st, cleanup);
        if (best->pred_ms >= cur->pred_ms * (1.0 - p->margin))
            memcpy(best, cur, sizeof(*best));
    }
    memcpy(res_p, best, sizeof(*best));
cleanup:
    free(best);
    free(cur);
    return st;
}

duet_status_t duet_frozen_ref_gemm_full(const duet_hw_t *hw, const duet_workload_t *wl, duet_gemm_tile_t tile,
                                        int32_t num_wgs, double *ms_p)
{
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_FUSED);
    cfg.tile = tile;
    cfg.num_wgs = num_wgs;
    cfg.gemm_wgs = num_wgs;
    cfg.comm_wgs = 0;
    duet_plan_t plan;
    DUET_CHECK(duet_plan_build(wl, &cfg, duet_plan_critical_rank(wl), &plan));
    *ms_p = (duet_cost_gemm_static_s(hw, &plan, num_wgs) - hw->launch_us * 1e-6) * 1e3;
    return DUET_OK;
}
