/*
 * The library's results as JSON, for the CLI's --json and for callers in other languages: one
 * builder per result (predict "duet-predict/2", simulate "duet-simulate/1", plan "duet-plan/1"),
 * shared by `duet ... --json` and by duet_predict_json(), the entry point that takes a request as
 * JSON text and answers with JSON text (the Python package python/duet calls it through ctypes).
 * Every time is in microseconds (keys ending in _us), every size in bytes.
 */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "model/internal.h"
#include "sim/internal.h"
#include "sim/request.h"

/* ------------------------------------------------------------------------------------------ */
/* Ranks and ties                                                                              */
/* ------------------------------------------------------------------------------------------ */

int duet_sweep_tied(const duet_sweep_result_t *res, size_t i)
{
    double t = res->points[i].makespan_s;
    return (i > 0 && duet__time_eq(res->points[i - 1].makespan_s, t, DUET_RANK_TIE_REL)) ||
           (i + 1 < res->n && duet__time_eq(res->points[i + 1].makespan_s, t, DUET_RANK_TIE_REL));
}

size_t duet_sweep_rank(const duet_sweep_result_t *res, size_t i)
{
    /* Competition ranking: a point tied with the one before it shares that one's rank (1, 1, 3). */
    while (i > 0 && duet__time_eq(res->points[i - 1].makespan_s, res->points[i].makespan_s, DUET_RANK_TIE_REL))
        i--;
    return i + 1;
}

double duet_gemm_tflops(const duet_workload_t *wl, double gemm_s)
{
    return gemm_s > 0 ? 2.0 * (double)wl->m * (double)wl->n * (double)wl->k / gemm_s / 1e12 : 0.0;
}

/* ------------------------------------------------------------------------------------------ */
/* Builders                                                                                    */
/* ------------------------------------------------------------------------------------------ */

void duet__workload_cjson(cJSON *o, const duet_workload_t *wl)
{
    (void)duet__workload_to_cjson(o, wl); /* cJSON's failures show as a missing member, as below */
    cJSON_AddNumberToObject(o, "comm_bytes", duet_coll_bytes(wl));
    cJSON_AddNumberToObject(o, "busbw_factor", duet_coll_busbw_factor(wl->coll, wl->world));
}

/* The times of a run in us, and what they mean in rates: GEMM TFLOP/s, nccl-tests' algbw and busbw. */
static void duet__json_times(cJSON *o, const duet_workload_t *wl, const char *total_key, double total_s, double gemm_s,
                             double comm_s)
{
    cJSON_AddNumberToObject(o, total_key, total_s * 1e6);
    cJSON_AddNumberToObject(o, "gemm_finish_us", gemm_s * 1e6);
    cJSON_AddNumberToObject(o, "comm_finish_us", comm_s * 1e6);
    double alg, bus;
    duet_coll_bandwidth(wl, comm_s, &alg, &bus);
    cJSON_AddNumberToObject(o, "gemm_tflops", duet_gemm_tflops(wl, gemm_s));
    cJSON_AddNumberToObject(o, "algbw_gbs", alg);
    cJSON_AddNumberToObject(o, "busbw_gbs", bus);
}

duet_status_t duet__predict_decide(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_workload_t *wl,
                                   const duet_sweep_params_t *sp, const duet_sweep_result_t *res,
                                   int32_t running_gemm_sms, int32_t running_comm_ctas, duet_decision_t *dec_p)
{
    duet_sweep_point_t safe = res->dflt;
    int32_t kind = DUET_SAFE_DEFAULT;
    if (running_gemm_sms > 0) {
        DUET_CHECK(duet_decide_vendor_point(ws, hw, wl, sp, running_gemm_sms, running_comm_ctas, &safe));
        kind = DUET_SAFE_VENDOR;
    }
    return duet_decide(hw, res, &safe, kind, dec_p);
}

/* The decision as JSON: the safe choice, the alternative weighed, the pick, the gain and its band. */
static void duet__decision_cjson(cJSON *o, const duet_hw_t *hw, const duet_workload_t *wl, const duet_decision_t *d)
{
    cJSON *e = cJSON_AddObjectToObject(o, "decision");
    cJSON_AddStringToObject(e, "safe_kind", d->safe_kind == DUET_SAFE_VENDOR ? "running_vendor" : "static_default");
    cJSON_AddItemToObject(e, "safe", duet__point_iv_cjson(hw, wl, &d->safe));
    cJSON_AddBoolToObject(e, "moved", d->moved);
    cJSON_AddItemToObject(e, "pick", duet__point_iv_cjson(hw, wl, duet_decision_pick(d)));
    if (!d->has_alt) {
        cJSON_AddNullToObject(e, "alternative");
        return;
    }
    cJSON_AddItemToObject(e, "alternative", duet__point_iv_cjson(hw, wl, &d->alt));
    cJSON_AddNumberToObject(e, "gain", d->gain);
    cJSON_AddNumberToObject(e, "gain_lo", d->gain_lo);
    cJSON_AddNumberToObject(e, "gain_hi", d->gain_hi);
    cJSON_AddNumberToObject(e, "band", d->band);
}

cJSON *duet__predict_cjson(const duet_hw_t *hw, const duet_workload_t *wl, const duet_sweep_params_t *sp,
                           const duet_sweep_result_t *res, const duet_decision_t *dec, size_t shown, int32_t emit,
                           const duet_stack_limits_t *lim, const char *settings)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "duet-predict/2");
    cJSON_AddStringToObject(o, "hw", hw->name);
    cJSON_AddStringToObject(o, "policy", sp->policy ? sp->policy->name : duet_sim_policy_fluid.name);
    duet__workload_cjson(o, wl);
    cJSON_AddNumberToObject(o, "n_configs", (double)res->n_configs);
    cJSON_AddNumberToObject(o, "n_simulated", (double)res->n_simulated);
    cJSON_AddNumberToObject(o, "events", (double)res->events);
    cJSON_AddNumberToObject(o, "wall_us", res->wall_s * 1e6);
    duet__table_t t;
    duet__point_table_init(&t, 1);
    for (size_t j = 0; j < shown && j < res->n && j < dec->n; j++)
        duet__point_table_row(&t, hw, wl, &res->points[dec->order[j]], dec->rank[j], duet_decision_tied(dec, j));
    (void)duet__table_cjson_take(&t, o, "ranked"); /* out of memory: the member is missing, as for the others */
    cJSON *d = duet__point_iv_cjson(hw, wl, &res->dflt);
    cJSON_AddNumberToObject(d, "rank", (double)res->default_rank);
    cJSON_AddNumberToObject(d, "tied_with", (double)res->default_ties);
    cJSON_AddItemToObject(o, "static_default", d);
    duet__decision_cjson(o, hw, wl, dec);
    const duet_sweep_point_t *vbest = duet_sweep_best(res, 1u << DUET_MODE_VENDOR);
    const duet_sweep_point_t *dbest = duet_sweep_best(res, (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT));
    if (emit >= 0 && lim != NULL) {
        cJSON *e = cJSON_AddObjectToObject(o, "emit");
        cJSON_AddStringToObject(e, "stack", duet_stack_name(emit));
        cJSON_AddStringToObject(e, "libraries", lim->libs);
        cJSON_AddNumberToObject(e, "max_ctas", lim->max_ctas);
        cJSON_AddBoolToObject(e, "reachable", vbest != NULL);
        if (!lim->gemm_target)
            cJSON_AddStringToObject(e, "unreachable_because", lim->no_target);
        if (vbest != NULL)
            cJSON_AddItemToObject(e, "vendor_best", duet__point_iv_cjson(hw, wl, vbest));
        if (dbest != NULL)
            cJSON_AddItemToObject(e, "duet_best", duet__point_iv_cjson(hw, wl, dbest));
        if (vbest != NULL && dbest != NULL) {
            /* duet's speed-up over the vendor split and its interval within the band of the two. */
            double r = vbest->makespan_s / dbest->makespan_s,
                   band = duet_decide_band(hw, dbest->cfg.mode, DUET_MODE_VENDOR);
            cJSON_AddNumberToObject(e, "duet_speedup", r);
            cJSON_AddNumberToObject(e, "duet_speedup_lo", r / (1 + band));
            cJSON_AddNumberToObject(e, "duet_speedup_hi", r * (1 + band));
            cJSON_AddNumberToObject(e, "band", band);
        }
        cJSON *lines = cJSON_AddArrayToObject(e, "settings");
        for (const char *l = settings; l != NULL && *l != '\0';) {
            const char *nl = strchr(l, '\n');
            size_t len = nl ? (size_t)(nl - l) : strlen(l);
            char *line = malloc(len + 1);
            if (line != NULL) {
                memcpy(line, l, len);
                line[len] = '\0';
                cJSON_AddItemToArray(lines, cJSON_CreateString(line));
                free(line);
            }
            l = nl ? nl + 1 : l + len;
        }
    }
    return o;
}

cJSON *duet__simulate_cjson(const duet_hw_t *hw, const duet_workload_t *wl, const duet_config_t *cfg,
                            const duet_sim_policy_ops_t *policy, const duet_sim_result_t *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "duet-simulate/1");
    cJSON_AddStringToObject(o, "hw", hw->name);
    cJSON_AddStringToObject(o, "policy", policy->name);
    duet__workload_cjson(o, wl);
    (void)duet__config_to_cjson(cJSON_AddObjectToObject(o, "config"), cfg);
    duet__json_times(o, wl, "makespan_us", r->makespan_s, r->gemm_finish_s, r->comm_finish_s);
    cJSON_AddNumberToObject(o, "gemm_busy_cta_us", r->gemm_busy_s * 1e6);
    cJSON_AddNumberToObject(o, "comm_busy_cta_us", r->comm_busy_s * 1e6);
    cJSON_AddNumberToObject(o, "stolen_gemm_tiles", (double)r->stolen_gemm);
    cJSON_AddNumberToObject(o, "stolen_comm_tiles", (double)r->stolen_comm);
    cJSON_AddNumberToObject(o, "events", (double)r->events);
    cJSON_AddNumberToObject(o, "ctas", r->n_ctas);
    return o;
}

cJSON *duet__plan_cjson(const duet_hw_t *hw, const duet_plan_t *p)
{
    duet_gemm_cost_t gc;
    duet_comm_cost_t cc;
    int64_t active = duet_plan_gemm_concurrent(p);
    memset(&gc, 0, sizeof(gc));
    memset(&cc, 0, sizeof(cc));
    (void)duet_cost_gemm_tile_kind(hw, p, active, 0, &gc); /* stream-K: a whole C tile */
    (void)duet_cost_comm_tile(hw, p, &cc);
    double t_static = duet_cost_gemm_static_s(hw, p, hw->n_sms);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "duet-plan/1");
    cJSON_AddStringToObject(o, "hw", hw->name);
    duet__workload_cjson(cJSON_AddObjectToObject(o, "workload"), &p->wl);
    (void)duet__config_to_cjson(cJSON_AddObjectToObject(o, "config"), &p->cfg);
    cJSON_AddNumberToObject(o, "rank", p->rank);
    cJSON *g = cJSON_AddObjectToObject(o, "gemm");
    cJSON_AddNumberToObject(g, "tiles", (double)p->gemm.tiles);
    cJSON_AddNumberToObject(g, "grid_m", (double)p->gemm.grid_m);
    cJSON_AddNumberToObject(g, "grid_n", (double)p->gemm.grid_n);
    cJSON_AddNumberToObject(g, "k_iters", (double)p->gemm.k_iters);
    cJSON_AddNumberToObject(g, "split_k", (double)p->gemm.split_k);
    cJSON_AddNumberToObject(g, "c_tiles", (double)p->gemm.tiles_mn);
    if (p->gemm.split_from > 0) {
        /* Stream-K: the whole C tiles before the tail's parts; tile_us below is a whole one's. */
        duet_gemm_cost_t pc;
        (void)duet_cost_gemm_tile_kind(hw, p, active, 1, &pc);
        cJSON_AddNumberToObject(g, "stream_k_whole_tiles", (double)p->gemm.split_from);
        cJSON_AddNumberToObject(g, "stream_k_part_us", pc.t_sm * 1e6);
    }
    cJSON_AddNumberToObject(g, "flops", p->gemm_flops);
    cJSON_AddNumberToObject(g, "tile_us", gc.t_sm * 1e6);
    cJSON_AddNumberToObject(g, "tile_hbm_bytes", gc.hbm_bytes);
    cJSON_AddNumberToObject(g, "l2_hit", gc.l2_hit);
    cJSON_AddNumberToObject(g, "static_alone_us", t_static * 1e6);
    cJSON *m = cJSON_AddObjectToObject(o, "comm");
    cJSON_AddNumberToObject(m, "queue_tiles", (double)p->comm.queue_len);
    cJSON_AddNumberToObject(m, "valid_tiles", (double)p->comm_valid_tiles);
    cJSON_AddNumberToObject(m, "total_tiles", (double)p->comm.total);
    cJSON_AddNumberToObject(m, "push_bytes", p->comm_total.push_bytes);
    cJSON_AddNumberToObject(m, "pull_bytes", p->comm_total.pull_bytes);
    cJSON_AddNumberToObject(m, "local_read_bytes", p->comm_total.local_read_bytes);
    cJSON_AddNumberToObject(m, "local_write_bytes", p->comm_total.local_write_bytes);
    cJSON_AddNumberToObject(m, "remote_bytes", p->remote_bytes);
    cJSON_AddNumberToObject(m, "remote_bytes_tiles", p->remote_bytes_tiles);
    cJSON_AddNumberToObject(m, "bytes_per_peer_out", p->bytes_per_peer_out);
    cJSON_AddNumberToObject(m, "bytes_per_peer_in", p->bytes_per_peer_in);
    cJSON_AddNumberToObject(m, "tile_alone_us", cc.t_alone * 1e6);
    cJSON_AddNumberToObject(m, "tile_round_trips", (double)cc.round_trips);
    cJSON *q = cJSON_AddObjectToObject(o, "queues");
    cJSON_AddNumberToObject(q, "gemm_home_ctas", p->gemm_home_ctas);
    cJSON_AddNumberToObject(q, "comm_home_ctas", p->comm_home_ctas);
    cJSON_AddBoolToObject(q, "steal", p->steal);
    return o;
}

/* ------------------------------------------------------------------------------------------ */
/* The JSON entry point                                                                        */
/* ------------------------------------------------------------------------------------------ */

/*
 * Every member a request may give, whatever its op, in one list: a member not in it is refused
 * (with the nearest known name as a suggestion), as the command line refuses an unknown option,
 * so that a misspelt "wrld" cannot silently answer for the default world.
 */
/* clang-format off: one member a line, so that adding one is a one-line change */
static const char *const duet__req_members[] = {
    "op",
    "hw",
    /* the workload */
    "collective",
    "dtype",
    "m",
    "n",
    "k",
    "mc",
    "nc",
    "world",
    "root",
    "comm_bytes",
    /* plan and simulate */
    "config",
    "rank",
    /* simulate and predict */
    "policy",
    /* predict */
    "modes",
    "tiles",
    "split_ks",
    "split_step",
    "num_wgs",
    "comm_tile",
    "group_m",
    "reference_pricing",
    "top",
    "max_events",
    "emit",
    "nccl_version",
    "rccl_version",
    "hipblaslt_version",
    "running_vendor",
};
/* clang-format on */

/* An optional integer member in [lo, hi]; absent leaves *v as it is. */
static duet_status_t duet__req_int(const cJSON *o, const char *key, int64_t lo, int64_t hi, int64_t *v)
{
    if (cJSON_GetObjectItemCaseSensitive(o, key) == NULL)
        return DUET_OK;
    return duet__json_member_int(o, key, lo, hi, "request", v);
}

/* An optional string member; absent gives NULL. */
static duet_status_t duet__req_str(const cJSON *o, const char *key, const char **s)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *s = NULL;
    if (v == NULL)
        return DUET_OK;
    if (!cJSON_IsString(v))
        return duet__error(DUET_ERR_PARSE, "request.%s: must be a string", key);
    *s = v->valuestring;
    return DUET_OK;
}

/* The profile: a built-in name or file path (string), or a profile object; default h200. */
static duet_status_t duet__req_hw(const cJSON *req, duet__request_t *r)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, "hw");
    r->hw_given = 1;
    if (v == NULL || cJSON_IsString(v))
        return duet_hw_load(v ? v->valuestring : "h200", &r->hw);
    if (!cJSON_IsObject(v))
        return duet__error(DUET_ERR_PARSE, "request.hw: must be a profile name or a profile object");
    char *text = cJSON_PrintUnformatted(v);
    if (text == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "request.hw: cannot print the profile");
    duet_status_t st = duet_hw_from_json(text, "request.hw", &r->hw);
    cJSON_free(text);
    return st;
}

/* An optional integer member in [lo, hi] into an int32_t; absent leaves *v as it is. */
static duet_status_t duet__req_i32(const cJSON *o, const char *key, int64_t lo, int64_t hi, int32_t *v)
{
    int64_t x = *v;
    DUET_CHECK(duet__req_int(o, key, lo, hi, &x));
    *v = (int32_t)x;
    return DUET_OK;
}

/* The workload's members, as given (the request's rules complete it). */
static duet_status_t duet__req_workload(const cJSON *req, duet__request_t *r)
{
    duet_workload_t *wl = &r->wl;
    const char *s;
    DUET_CHECK(duet__req_str(req, "collective", &s));
    if (s != NULL)
        DUET_CHECK(duet_collective_parse(s, &wl->coll));
    r->have_coll = wl->coll != DUET_COLL_NONE;
    DUET_CHECK(duet__req_str(req, "dtype", &s));
    if (s != NULL)
        DUET_CHECK(duet_dtype_parse(s, &wl->dtype));
    const int64_t big = INT64_C(1) << 40;
    DUET_CHECK(duet__req_int(req, "m", 0, big, &wl->m));
    DUET_CHECK(duet__req_int(req, "n", 0, big, &wl->n));
    DUET_CHECK(duet__req_int(req, "k", 0, big, &wl->k));
    DUET_CHECK(duet__req_int(req, "mc", 0, big, &wl->mc));
    DUET_CHECK(duet__req_int(req, "nc", 0, big, &wl->nc));
    r->have_gemm = wl->m != 0 || wl->n != 0 || wl->k != 0;
    r->have_comm = wl->mc != 0 || wl->nc != 0;
    r->have_world = cJSON_GetObjectItemCaseSensitive(req, "world") != NULL;
    DUET_CHECK(duet__req_i32(req, "world", 1, 1024, &wl->world));
    DUET_CHECK(duet__req_i32(req, "root", 0, 1023, &wl->root));
    return duet__req_int(req, "comm_bytes", 0, INT64_MAX, &r->comm_bytes);
}

/* "comm_tile": "CMxCN" of object o (named `where` in messages); absent leaves r's as they are. */
static duet_status_t duet__req_comm_tile(const cJSON *o, const char *where, duet__request_t *r)
{
    const char *s;
    int64_t d[2];
    DUET_CHECK(duet__req_str(o, "comm_tile", &s));
    if (s == NULL)
        return DUET_OK;
    /* Two positive integers, as --comm-tile takes (a 0 would silently mean the default). */
    if (duet_dims_parse(s, 2, 1 << 20, d) < 0 || d[0] < 1 || d[1] < 1)
        return duet__error(DUET_ERR_PARSE, "%s.comm_tile: '%s' is not CMxCN (two positive integers)", where,
                           duet__q(s));
    r->cm = (int32_t)d[0];
    r->cn = (int32_t)d[1];
    return DUET_OK;
}

/* The configuration's members, as given (the request's rules complete it from the static default). */
static duet_status_t duet__req_config(const cJSON *req, duet__request_t *r)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(req, "config");
    const char *s = NULL;
    DUET_CHECK(duet__req_i32(req, "rank", 0, 1023, &r->rank));
    if (o == NULL)
        return DUET_OK;
    if (!cJSON_IsObject(o))
        return duet__error(DUET_ERR_PARSE, "request.config: must be an object");
    size_t n_keys;
    const char *const *keys = duet__config_key_names(&n_keys);
    DUET_CHECK(duet__json_known_members(o, keys, n_keys, "request.config"));
    DUET_CHECK(duet__req_str(o, "mode", &s));
    if (s != NULL)
        DUET_CHECK(duet_mode_parse(s, &r->mode));
    DUET_CHECK(duet__req_i32(o, "num_wgs", 1, 1 << 20, &r->num_wgs));
    DUET_CHECK(duet__req_i32(o, "gemm_wgs", 0, 1 << 20, &r->gemm_wgs));
    DUET_CHECK(duet__req_i32(o, "comm_wgs", 0, 1 << 20, &r->comm_wgs));
    DUET_CHECK(duet__req_str(o, "tile", &s));
    if (s != NULL && (r->have_tile = 1))
        DUET_CHECK(duet_tile_parse(s, &r->tile));
    DUET_CHECK(duet__req_comm_tile(o, "request.config", r));
    DUET_CHECK(duet__req_i32(o, "group_m", 1, 64, &r->group_m));
    return duet__req_i32(o, "split_k", 1, DUET_MAX_SPLIT_K, &r->split_k);
}

/* "modes", "tiles", "split_ks": the sweep's lists. */
static duet_status_t duet__req_lists(const cJSON *req, duet__request_t *r)
{
    duet_sweep_params_t *sp = &r->sp;
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(req, "modes"), *e;
    if (a != NULL) {
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) == 0)
            return duet__error(DUET_ERR_PARSE, "request.modes: must be a list of mode names");
        sp->modes = 0;
        r->modes_given = 1;
        cJSON_ArrayForEach(e, a)
        {
            int32_t m;
            if (!cJSON_IsString(e))
                return duet__error(DUET_ERR_PARSE, "request.modes: must be a list of mode names");
            DUET_CHECK(duet_mode_parse(e->valuestring, &m));
            sp->modes |= 1u << m;
        }
    }
    if ((a = cJSON_GetObjectItemCaseSensitive(req, "tiles")) != NULL) {
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) > DUET_SWEEP_MAX_TILES)
            return duet__error(DUET_ERR_PARSE, "request.tiles: must be a list of 1 to %d tiles", DUET_SWEEP_MAX_TILES);
        sp->n_tiles = 0;
        cJSON_ArrayForEach(e, a)
        {
            if (!cJSON_IsString(e))
                return duet__error(DUET_ERR_PARSE, "request.tiles: must be a list of tiles such as \"256x128x64\"");
            DUET_CHECK(duet_tile_parse(e->valuestring, &sp->tiles[sp->n_tiles++]));
        }
    }
    if ((a = cJSON_GetObjectItemCaseSensitive(req, "split_ks")) == NULL)
        return DUET_OK;
    if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) < 1 || cJSON_GetArraySize(a) > DUET_SWEEP_MAX_SPLIT_KS)
        return duet__error(DUET_ERR_PARSE, "request.split_ks: must be a list of 1 to %d integers",
                           DUET_SWEEP_MAX_SPLIT_KS);
    sp->n_split_ks = 0;
    cJSON_ArrayForEach(e, a)
    {
        if (!cJSON_IsNumber(e) || e->valuedouble < 1 || e->valuedouble > DUET_MAX_SPLIT_K ||
            e->valuedouble != (double)(int32_t)e->valuedouble)
            return duet__error(DUET_ERR_PARSE, "request.split_ks: integers in [1, %d]", DUET_MAX_SPLIT_K);
        sp->split_ks[sp->n_split_ks++] = (int32_t)e->valuedouble;
    }
    return DUET_OK;
}

/* The policy (simulate and predict). */
static duet_status_t duet__req_policy(const cJSON *req, duet__request_t *r)
{
    const char *s;
    DUET_CHECK(duet__req_str(req, "policy", &s));
    if (s != NULL && (r->sp.policy = duet_sim_policy_find(s)) == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "request.policy: '%s' is not fluid or frozen", duet__q(s));
    return DUET_OK;
}

/* The sweep's grid, comm tile and swizzle (the bounds of duet predict's flags), and reference_pricing. */
static duet_status_t duet__req_sweep_shape(const cJSON *req, duet__request_t *r)
{
    DUET_CHECK(duet__req_i32(req, "num_wgs", 1, 1 << 20, &r->num_wgs));
    DUET_CHECK(duet__req_comm_tile(req, "request", r));
    DUET_CHECK(duet__req_i32(req, "group_m", 1, 64, &r->group_m));
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, "reference_pricing");
    if (v != NULL && !cJSON_IsBool(v))
        return duet__error(DUET_ERR_PARSE, "request.reference_pricing: must be true or false");
    r->reference_pricing = cJSON_IsTrue(v);
    return DUET_OK;
}

/* The sweep's other members: split_step, the shape, top, max_events, emit and the stack's versions. */
static duet_status_t duet__req_sweep(const cJSON *req, duet__request_t *r)
{
    duet_sweep_params_t *sp = &r->sp;
    const char *s;
    DUET_CHECK(duet__req_lists(req, r));
    DUET_CHECK(duet__req_i32(req, "split_step", 1, 4096, &sp->split_step));
    DUET_CHECK(duet__req_sweep_shape(req, r));
    DUET_CHECK(duet__req_int(req, "top", 0, INT64_C(1) << 30, &r->top));
    /* The caller's bound on the sweep's work, at most the library's own (DUET_SWEEP_MAX_EVENTS). */
    DUET_CHECK(duet__req_int(req, "max_events", 1, DUET_SWEEP_MAX_EVENTS, &sp->max_events));
    DUET_CHECK(duet__req_str(req, "emit", &s));
    if (s != NULL)
        DUET_CHECK(duet_stack_parse(s, &r->emit));
    static const char *const vkeys[] = {"nccl_version", "rccl_version", "hipblaslt_version"};
    int32_t *vals[] = {&r->ver.nccl, &r->ver.rccl, &r->ver.hipblaslt};
    for (int i = 0; i < 3; i++) {
        DUET_CHECK(duet__req_str(req, vkeys[i], &s));
        if (s != NULL && duet_version_parse(s, vals[i]) < 0)
            return duet__error(DUET_ERR_INVALID_ARG, "request.%s: %s", vkeys[i], duet_last_error());
    }
    return DUET_OK;
}

duet_status_t duet__predict_emit_setup(int32_t emit, const duet_hw_t *hw, const duet_stack_versions_t *v,
                                       duet_sweep_params_t *sp, duet_stack_limits_t *lim_p)
{
    if (emit < 0)
        return DUET_OK;
    DUET_CHECK(duet_stack_limits(emit, hw, v, lim_p));
    /* The vendor split is compared with duet's own best: sweep both (duet's modes as given), the
     * vendor splits the stack can reach only, and none where its GEMM has no SM target. */
    if (!(sp->modes & ((1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT))))
        sp->modes |= (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT);
    if (lim_p->gemm_target) {
        sp->modes |= 1u << DUET_MODE_VENDOR;
        sp->vendor_comm_max = lim_p->max_ctas;
    } else {
        sp->modes &= ~(1u << DUET_MODE_VENDOR);
    }
    /* Copy mode is the counterpart of the library's zero-CTA copy-engine path: swept where it has one. */
    if (duet_stack_copy_colls(emit, hw, v) != 0)
        sp->modes |= 1u << DUET_MODE_COPY;
    return DUET_OK;
}

duet_status_t duet__predict_emit_text(int32_t emit, const duet_hw_t *hw, const duet_stack_versions_t *v,
                                      const duet_workload_t *wl, const duet_sweep_result_t *res, char *buf, size_t n)
{
    const duet_sweep_point_t *vbest = duet_sweep_best(res, 1u << DUET_MODE_VENDOR);
    const duet_sweep_point_t *cbest = duet_sweep_best(res, 1u << DUET_MODE_COPY);
    buf[0] = '\0';
    if (emit < 0)
        return DUET_OK;
    if (vbest != NULL)
        DUET_CHECK(duet_emit_settings_at(emit, hw, v, wl->coll, &vbest->cfg, buf, n));
    /* Where copy mode beats every vendor split, the library's copy-engine path is the answer to name;
     * beyond the two modes' known error only (duet_decide_band): a gain inside it is not one to act on. */
    if (cbest == NULL || (vbest != NULL && cbest->makespan_s >= vbest->makespan_s))
        return DUET_OK;
    char split[48];
    duet_config_split_str(&cbest->cfg, split, sizeof(split));
    size_t len = strlen(buf);
    int inside = 0; /* the gain within the band: the split stands, no copy-engine settings */
    if (vbest != NULL) {
        double band = duet_decide_band(hw, DUET_MODE_COPY, DUET_MODE_VENDOR);
        double r = vbest->makespan_s / cbest->makespan_s;
        inside = r / (1.0 + band) <= 1.0;
        if (inside)
            duet__emit_line(buf, n, &len,
                            "# duet's copy mode %s is predicted %.1f %% faster (%.2f us), inside the known error of "
                            "the two modes (%.1f %%): the split above stands",
                            split, (r - 1.0) * 100.0, cbest->makespan_s * 1e6, band * 100.0);
        else
            duet__emit_line(buf, n, &len,
                            "# predicted faster: duet's copy mode %s, %.2f us against the split's %.2f us (priced "
                            "with duet's GEMM and copies); the library's counterpart:",
                            split, cbest->makespan_s * 1e6, vbest->makespan_s * 1e6);
    } else {
        duet__emit_line(buf, n, &len,
                        "# duet's copy mode %s, %.2f us (priced with duet's GEMM and copies); the library's "
                        "counterpart:",
                        split, cbest->makespan_s * 1e6);
    }
    if (len >= n)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: %zu bytes do not hold the settings (%zu)", n, len + 1);
    if (inside)
        return DUET_OK;
    return duet_emit_copy_settings_at(emit, hw, v, wl->coll, &cbest->cfg, buf + len, n - len);
}

/* "running_vendor": {"gemm_sms": G, "comm_ctas": C}, the vendor split the caller runs (C optional). */
static duet_status_t duet__req_running(const cJSON *req, duet__request_t *r)
{
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(req, "running_vendor");
    if (o == NULL)
        return DUET_OK;
    if (!cJSON_IsObject(o) || cJSON_GetObjectItemCaseSensitive(o, "gemm_sms") == NULL)
        return duet__error(DUET_ERR_PARSE, "request.running_vendor: must be an object with gemm_sms (and comm_ctas)");
    int64_t v = 0;
    DUET_CHECK(duet__json_member_int(o, "gemm_sms", 1, r->hw.n_sms, "request.running_vendor", &v));
    r->run_gemm_sms = (int32_t)v;
    return duet__req_i32(o, "comm_ctas", 0, 1 << 20, &r->run_comm_ctas);
}

/* Plan or simulate a resolved request: the plan of its configuration, the library's kernel in vendor mode. */
static duet_status_t duet__api_simulate_or_plan(const duet__request_t *r, cJSON **out_p)
{
    duet_plan_t plan;
    DUET_CHECK(duet_plan_build(&r->wl, &r->cfg, r->rank, &plan));
    DUET_CHECK(duet_plan_vendor_kernel(&r->hw, NULL, &plan)); /* vendor mode: the library's kernel */
    if (r->op == DUET__OP_PLAN) {
        *out_p = duet__plan_cjson(&r->hw, &plan);
        return DUET_OK;
    }
    duet_sim_ws_t *ws = NULL;
    duet_sim_result_t res;
    DUET_CHECK(duet_sim_ws_create(&ws));
    duet_status_t st = duet_sim_run(ws, r->sp.policy, &r->hw, &plan, NULL, &res);
    if (st >= 0)
        *out_p = duet__simulate_cjson(&r->hw, &r->wl, &plan.cfg, r->sp.policy, &res);
    duet_sim_ws_destroy(ws);
    return st;
}

/* Fill a request from the JSON object (its op already read), resolve it and answer it. */
static duet_status_t duet__api_answer(const cJSON *req, duet__request_t *r, cJSON **out_p)
{
    DUET_CHECK(duet__req_workload(req, r));
    DUET_CHECK(duet__req_policy(req, r));
    if (r->op == DUET__OP_PREDICT) {
        DUET_CHECK(duet__req_sweep(req, r));
        DUET_CHECK(duet__req_running(req, r));
    } else {
        DUET_CHECK(duet__req_config(req, r));
    }
    DUET_CHECK(duet__request_resolve(r));
    if (r->op != DUET__OP_PREDICT)
        return duet__api_simulate_or_plan(r, out_p);
    duet__predicted_t *p = malloc(sizeof(*p));
    if (p == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "duet_predict_json: out of memory");
    duet_status_t st = duet__request_predict(r, p);
    if (st >= 0) {
        *out_p = duet__request_predict_cjson(r, p);
        duet__predicted_free(p);
    }
    free(p);
    return st;
}

/* The operation a request names: hw, plan, simulate or predict (-1: hw). */
static duet_status_t duet__req_op(const cJSON *req, int32_t *op)
{
    static const char *const names[] = {"plan", "simulate", "predict"};
    const char *s = "predict";
    DUET_CHECK(duet__req_str(req, "op", &s));
    if (s == NULL)
        s = "predict";
    *op = -1;
    for (int32_t i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0)
            *op = i;
    if (*op < 0 && strcmp(s, "hw") != 0)
        return duet__error(DUET_ERR_INVALID_ARG, "request.op: '%s' is not hw, plan, simulate or predict", duet__q(s));
    return DUET_OK;
}

/* The answer to a request object. */
static duet_status_t duet__api_request(const cJSON *req, duet__request_t *r, cJSON **out_p)
{
    int32_t op;
    if (!cJSON_IsObject(req))
        return duet__error(DUET_ERR_PARSE, "request: must be a JSON object");
    DUET_CHECK(duet__json_known_members(req, duet__req_members,
                                        sizeof(duet__req_members) / sizeof(duet__req_members[0]), "request"));
    DUET_CHECK(duet__req_op(req, &op));
    duet__request_init(r, op < 0 ? DUET__OP_PREDICT : op, 0);
    DUET_CHECK(duet__req_hw(req, r));
    if (op >= 0)
        return duet__api_answer(req, r, out_p);
    char *text = NULL;
    DUET_CHECK(duet_hw_to_json(&r->hw, &text));
    *out_p = cJSON_Parse(text);
    free(text);
    return DUET_OK;
}

duet_status_t duet_predict_json(const char *request_json, char **response_json_p)
{
    if (request_json == NULL || response_json_p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_predict_json: NULL argument");
    cJSON *req = duet__json_parse(request_json, strlen(request_json), "request", 1);
    if (req == NULL)
        return duet__last_status(); /* malformed, or out of memory */
    cJSON *out = NULL;
    duet__request_t *r = malloc(sizeof(*r));
    duet_status_t st = r != NULL ? duet__api_request(req, r, &out)
                                 : duet__error(DUET_ERR_NO_MEMORY, "duet_predict_json: out of memory");
    free(r);
    cJSON_Delete(req);
    if (st < 0) {
        cJSON_Delete(out);
        return st;
    }
    char *text = out != NULL ? cJSON_Print(out) : NULL;
    cJSON_Delete(out);
    if (text == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "duet_predict_json: cannot print the response");
    /* The caller frees with duet_json_free(), which frees with the allocator that made it. */
    *response_json_p = text;
    return DUET_OK;
}

void duet_json_free(char *json)
{
    if (json != NULL)
        cJSON_free(json);
}
