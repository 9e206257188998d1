/*
 * The reference predictor end to end (duet_frozen_ref_predict) against the reference
 * implementation's own outputs: tests/data/seed-golden-predict.json, 60 cases of iris.concurrent's
 * predict_split (ROCm/iris PR #544) with origami's full-chip GEMM time given per tile. Every case
 * must give the reference's split, tile, prediction, T_gemm, T_comm, n_gemm, Lg, Lc and whole
 * curve to 1e-9 relative.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_util.h"

T_SIM_SUITE(frozen_ref_golden);

static duet_gemm_tile_t tile_of(const cJSON *a)
{
    duet_gemm_tile_t t = {cJSON_GetArrayItem(a, 0)->valueint, cJSON_GetArrayItem(a, 1)->valueint,
                          cJSON_GetArrayItem(a, 2)->valueint};
    return t;
}

static const cJSON *item(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert_not_null(v, "missing key %s", k);
    return v;
}

/* The case's inputs as the reference's predict_split arguments. */
static void case_params(const cJSON *c, duet_frozen_ref_params_t *p)
{
    *p = duet_frozen_ref_default_params();
    const cJSON *s = item(c, "shape");
    p->gemm_m = (int64_t)t_num(s, "gemm_m");
    p->gemm_n = (int64_t)t_num(s, "gemm_n");
    p->gemm_k = (int64_t)t_num(s, "gemm_k");
    p->comm_m = (int64_t)t_num(s, "comm_m");
    p->comm_n = (int64_t)t_num(s, "comm_n");
    cr_assert_eq(duet_collective_parse(item(s, "collective")->valuestring, &p->coll), DUET_OK);
    p->world = (int32_t)t_num(s, "world");
    p->num_wgs = (int32_t)t_num(c, "num_wgs");
    p->comm_sat = (int32_t)t_num(c, "comm_sat");
    const cJSON *cb = item(c, "cb");
    p->cb_m = cJSON_GetArrayItem(cb, 0)->valueint;
    p->cb_n = cJSON_GetArrayItem(cb, 1)->valueint;
    /* Every case uses the reference's default candidate range; it is spelled in the file. */
    cr_assert_str_eq(item(c, "candidates")->valuestring, "range(max(16, num_wgs // 8), num_wgs + 1, 8)");
    p->n_candidates = 0;
    const cJSON *mts = item(c, "mt_candidates"), *full = item(c, "gemm_full_ms");
    p->n_tiles = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, mts)
    {
        duet_gemm_tile_t mt = tile_of(t);
        char key[48];
        snprintf(key, sizeof(key), "%dx%dx%d", mt.bm, mt.bn, mt.bk);
        p->tiles[p->n_tiles] = mt;
        p->gemm_full_ms[p->n_tiles] = t_num(full, key);
        p->n_tiles++;
    }
    p->prefer = tile_of(item(c, "mt_prefer"));
    p->margin = t_num(c, "mt_margin");
    p->c_atomic_gemm_ms = t_num(c, "c_atomic_gemm_ms");
    p->c_atomic_comm_ms = t_num(c, "c_atomic_comm_ms");
}

/* Cases [lo, hi) of the file; the 60 are split over several tests to stay well inside the timeout
 * under the sanitizers (about 3.4 s for all 60 at -O2). */
static void check_cases(int lo, int hi, int *switches_p, int *gated_p)
{
    cJSON *g = t_load_json("tests/data/seed-golden-predict.json");
    cr_assert_not_null(g, "tests/data/seed-golden-predict.json not found or not JSON");
    const cJSON *cases = item(g, "cases");
    cr_assert_eq(cJSON_GetArraySize(cases), 60);
    duet_frozen_ref_result_t *r = malloc(sizeof(*r));
    duet_frozen_ref_params_t *p = malloc(sizeof(*p));
    int i = 0, tile_switches = 0, gated = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        if (i < lo || i >= hi) {
            i++;
            continue;
        }
        case_params(c, p);
        cr_assert_eq(duet_frozen_ref_predict(ws, p, r), DUET_OK, "case %d: %s", i, duet_last_error());
        const cJSON *e = item(c, "expect");
        duet_gemm_tile_t mt = tile_of(item(e, "mt"));
        cr_assert_eq(r->gemm_wgs, (int32_t)t_num(e, "gemm_wgs"), "case %d: gemm_wgs %d", i, r->gemm_wgs);
        cr_assert(r->tile.bm == mt.bm && r->tile.bn == mt.bn && r->tile.bk == mt.bk, "case %d: tile %dx%dx%d", i,
                  r->tile.bm, r->tile.bn, r->tile.bk);
        tile_switches += mt.bm != p->prefer.bm || mt.bn != p->prefer.bn;
        cr_assert_eq(r->n_gemm, (int64_t)t_num(e, "n_gemm"), "case %d", i);
        const double rel = 1e-9;
        cr_assert(t_rel_eq(r->pred_ms, t_num(e, "pred_ms"), rel), "case %d: pred %.17g vs %.17g", i, r->pred_ms,
                  t_num(e, "pred_ms"));
        cr_assert(t_rel_eq(r->t_gemm_ms, t_num(e, "T_gemm"), rel), "case %d: T_gemm %.17g", i, r->t_gemm_ms);
        cr_assert(t_rel_eq(r->t_comm_ms, t_num(e, "T_comm"), rel), "case %d: T_comm %.17g", i, r->t_comm_ms);
        cr_assert(t_rel_eq(r->lg_ms, t_num(e, "Lg"), rel), "case %d: Lg %.17g vs %.17g", i, r->lg_ms, t_num(e, "Lg"));
        cr_assert(t_rel_eq(r->lc_ms, t_num(e, "Lc"), rel), "case %d: Lc %.17g", i, r->lc_ms);
        const cJSON *curve = item(e, "curve");
        cr_assert_eq(r->n_curve, cJSON_GetArraySize(curve), "case %d: %d curve points", i, r->n_curve);
        int j = 0;
        const cJSON *pt;
        cJSON_ArrayForEach(pt, curve)
        {
            cr_assert_eq(r->curve[j].gemm_wgs, cJSON_GetArrayItem(pt, 0)->valueint, "case %d point %d", i, j);
            cr_assert(t_rel_eq(r->curve[j].t_gemm_ms, cJSON_GetArrayItem(pt, 1)->valuedouble, rel),
                      "case %d point %d: T_gemm %.17g vs %.17g", i, j, r->curve[j].t_gemm_ms,
                      cJSON_GetArrayItem(pt, 1)->valuedouble);
            cr_assert(t_rel_eq(r->curve[j].t_comm_ms, cJSON_GetArrayItem(pt, 2)->valuedouble, rel), "case %d point %d",
                      i, j);
            cr_assert(t_rel_eq(r->curve[j].makespan_ms, cJSON_GetArrayItem(pt, 3)->valuedouble, rel),
                      "case %d point %d: makespan %.17g vs %.17g", i, j, r->curve[j].makespan_ms,
                      cJSON_GetArrayItem(pt, 3)->valuedouble);
            j++;
        }
        /* Cases where the gate kept the preferred tile although another was predicted faster. */
        if (p->n_tiles > 1 && r->tile_index == 0) {
            for (int k = 1; k < p->n_tiles; k++) {
                duet_frozen_ref_params_t one = *p;
                one.n_tiles = 1;
                one.tiles[0] = p->tiles[k];
                one.gemm_full_ms[0] = p->gemm_full_ms[k];
                duet_frozen_ref_result_t *o = malloc(sizeof(*o));
                cr_assert_eq(duet_frozen_ref_predict(ws, &one, o), DUET_OK);
                gated += o->pred_ms < r->pred_ms;
                free(o);
                break;
            }
        }
        i++;
    }
    *switches_p = tile_switches;
    *gated_p = gated;
    free(p);
    free(r);
    cJSON_Delete(g);
}

#define GOLDEN_PART(name, lo, hi)                                                                                      \
    Test(frozen_ref_golden, name)                                                                                      \
    {                                                                                                                  \
        int sw, gated;                                                                                                 \
        check_cases(lo, hi, &sw, &gated);                                                                              \
        cr_log_info("cases %d..%d: %d tile switches, %d held by the margin gate", lo, hi - 1, sw, gated);              \
    }

GOLDEN_PART(cases_0_to_9, 0, 10)
GOLDEN_PART(cases_10_to_19, 10, 20)
GOLDEN_PART(cases_20_to_29, 20, 30)
GOLDEN_PART(cases_30_to_39, 30, 40)
GOLDEN_PART(cases_40_to_49, 40, 50)
GOLDEN_PART(cases_50_to_59, 50, 60)

/*
 * The margin gate by hand: GEMM 512 x 512 x 512 alone, 8 workers, one candidate (8), no dequeue
 * charge. Tile 256x256: 4 tiles, Lg = T_A x 8 / 4 x 1.44 = 2.88 T_A, one wave: makespan 2.88 T_A.
 * Tile 128x128: 16 tiles, Lg = T_B x 8 / 16 x 1.44 = 0.72 T_B, two waves: 1.44 T_B. With T_A = 1:
 * T_B = 1.8 gives 2.592 ms, 10 % faster than 2.88, inside the 20 % margin, so 256x256 stays;
 * T_B = 1.4 gives 2.016 ms, 30 % faster, so the predictor switches.
 */
Test(frozen_ref_golden, the_margin_gate_by_hand)
{
    duet_frozen_ref_params_t *p = malloc(sizeof(*p));
    duet_frozen_ref_result_t *r = malloc(sizeof(*r));
    *p = duet_frozen_ref_default_params();
    p->gemm_m = p->gemm_n = p->gemm_k = 512;
    p->coll = DUET_COLL_NONE;
    p->num_wgs = 8;
    p->n_candidates = 1;
    p->candidates[0] = 8;
    p->c_atomic_gemm_ms = p->c_atomic_comm_ms = 0;
    p->n_tiles = 2;
    p->tiles[0] = (duet_gemm_tile_t){256, 256, 64};
    p->tiles[1] = (duet_gemm_tile_t){128, 128, 64};
    p->gemm_full_ms[0] = 1.0;
    p->gemm_full_ms[1] = 1.8;
    cr_assert_eq(duet_frozen_ref_predict(ws, p, r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(r->tile_index, 0);
    cr_assert(t_rel_eq(r->pred_ms, 2.88, 1e-12), "%.17g", r->pred_ms);
    p->gemm_full_ms[1] = 1.4;
    cr_assert_eq(duet_frozen_ref_predict(ws, p, r), DUET_OK);
    cr_assert_eq(r->tile_index, 1);
    cr_assert(t_rel_eq(r->pred_ms, 2.016, 1e-12), "%.17g", r->pred_ms);
    cr_assert(t_rel_eq(r->lg_ms, 1.008, 1e-12));
    cr_assert_eq(r->n_gemm, 16);
    /* Without the preferred tile among the candidates there is no gate: the faster tile wins. */
    p->prefer = (duet_gemm_tile_t){64, 64, 64};
    p->gemm_full_ms[1] = 1.8;
    cr_assert_eq(duet_frozen_ref_predict(ws, p, r), DUET_OK);
    cr_assert_eq(r->tile_index, 1);
    free(r);
    free(p);
}
