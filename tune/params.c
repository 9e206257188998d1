/*
 * Tuner parameters (defaults, the environment), the canonical key, and the small JSON and time
 * helpers the database and the candidate set share.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune/internal.h"

static const char *const duet__tune_sources[DUET_TUNE_SRC_COUNT] = {"model", "candidate_set", "heuristic", "default"};

const char *duet_tune_source_name(int32_t src)
{
    return src >= 0 && src < DUET_TUNE_SRC_COUNT ? duet__tune_sources[src] : "unknown";
}

duet_tune_params_t duet_tune_default_params(void)
{
    duet_tune_params_t p;
    memset(&p, 0, sizeof(p));
    p.top_k = 0;     /* auto */
    p.n_warmup = -1; /* auto */
    p.n_repeat = 0;  /* auto */
    p.force = -1;    /* auto */
    p.use_cache = 1;
    p.write_cache = 1;
    p.modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT);
    return p;
}

/* Read an integer environment variable strictly. *set_p tells whether it was set (and non-empty). */
static duet_status_t duet__tune_env_int(const char *name, long lo, long hi, int32_t *out, int *set_p)
{
    const char *s = getenv(name);
    *set_p = 0;
    if (s == NULL || *s == '\0')
        return DUET_OK;
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return duet__error(DUET_ERR_INVALID_ARG, "%s: '%s' is not an integer in [%ld, %ld]", name, s, lo, hi);
    *out = (int32_t)v;
    *set_p = 1;
    return DUET_OK;
}

duet_status_t duet_tune_params_resolve(const duet_tune_params_t *in, duet_tune_params_t *out_p)
{
    duet_tune_params_t p = in ? *in : duet_tune_default_params();
    int set = 0;
    int32_t v = 0;
    /* Bounds: warm-up and repeat counts are per candidate; a million is far beyond any use and keeps
     * products with the candidate count in 32 bits. */
    if (p.top_k == 0) {
        DUET_CHECK(duet__tune_env_int("DUET_TUNE_TOPK", 1, DUET_TUNE_MAX_TOPK, &v, &set));
        p.top_k = set ? v : DUET_TUNE_DEFAULT_TOPK;
    }
    if (p.n_warmup == -1) {
        DUET_CHECK(duet__tune_env_int("DUET_TUNE_NWARMUP", 0, 1000000, &v, &set));
        p.n_warmup = set ? v : DUET_TUNE_DEFAULT_NWARMUP;
    }
    if (p.n_repeat == 0) {
        DUET_CHECK(duet__tune_env_int("DUET_TUNE_NREP", 1, 1000000, &v, &set));
        p.n_repeat = set ? v : DUET_TUNE_DEFAULT_NREP;
    }
    if (p.force == -1) {
        DUET_CHECK(duet__tune_env_int("DUET_TUNE_FORCE", 0, 1, &v, &set));
        p.force = set ? v : 0;
    }
    if (p.top_k < 1 || p.top_k > DUET_TUNE_MAX_TOPK)
        return duet__error(DUET_ERR_INVALID_ARG, "tune: top_k %d is outside [1, %d]", (int)p.top_k, DUET_TUNE_MAX_TOPK);
    if (p.n_warmup < 0 || p.n_warmup > 1000000)
        return duet__error(DUET_ERR_INVALID_ARG, "tune: n_warmup %d is outside [0, 1000000]", (int)p.n_warmup);
    if (p.n_repeat < 1 || p.n_repeat > 1000000)
        return duet__error(DUET_ERR_INVALID_ARG, "tune: n_repeat %d is outside [1, 1000000]", (int)p.n_repeat);
    if ((p.force != 0 && p.force != 1) || (p.use_cache != 0 && p.use_cache != 1) ||
        (p.write_cache != 0 && p.write_cache != 1) || (p.calibrated != 0 && p.calibrated != 1))
        return duet__error(DUET_ERR_INVALID_ARG, "tune: force, use_cache, write_cache and calibrated are 0 or 1");
    uint32_t all = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT);
    if (p.modes == 0 || (p.modes & ~all) != 0)
        return duet__error(DUET_ERR_INVALID_ARG, "tune: modes 0x%x is not a non-empty set of fused and concurrent",
                           (unsigned)p.modes);
    if (p.cm < 0 || p.cn < 0 || p.group_m < 0)
        return duet__error(DUET_ERR_INVALID_ARG, "tune: cm, cn and group_m must not be negative (0 = default)");
    if (p.n_space > 0 && p.space == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "tune: n_space %zu with no space", p.n_space);
    *out_p = p;
    return DUET_OK;
}

void duet_tune_arch_strip(const char *arch, char *out, size_t n)
{
    if (n == 0)
        return;
    size_t j = 0;
    for (const char *s = arch ? arch : ""; *s && *s != ':' && j + 1 < n; s++) {
        char ch = *s;
        int keep = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' ||
                   ch == '.' || ch == '-';
        out[j++] = keep ? ch : '_';
    }
    out[j] = '\0';
}

const char *duet__tune_modes_name(uint32_t modes)
{
    int f = (modes >> DUET_MODE_FUSED) & 1, c = (modes >> DUET_MODE_CONCURRENT) & 1;
    return f && c ? "fused+concurrent" : f ? "fused" : c ? "concurrent" : "none";
}

duet_status_t duet_tune_key_make(const duet_hw_t *hw, const duet_workload_t *wl, const duet_tune_params_t *params,
                                 char *key, size_t n)
{
    duet_tune_params_t dp = duet_tune_default_params();
    const duet_tune_params_t *p = params ? params : &dp;
    DUET_CHECK(duet_workload_validate(wl));
    if (p->modes == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "tune key: empty mode set");
    char arch[32];
    duet_tune_arch_strip(hw->arch, arch, sizeof(arch));
    if (arch[0] == '\0')
        return duet__error(DUET_ERR_INVALID_ARG, "tune key: the profile names no device arch");
    /* The comm tile and swizzle are inputs of the tuning (every candidate uses them), so they are
     * part of the key; the defaults are spelled out so that "default" and "256x64" are one key. */
    duet_config_t d = duet_config_default(hw, DUET_MODE_FUSED);
    int32_t cm = p->cm > 0 ? p->cm : d.cm, cn = p->cn > 0 ? p->cn : d.cn;
    int32_t gm = p->group_m > 0 ? p->group_m : d.group_m;
    char root[24] = "";
    if (wl->coll == DUET_COLL_BROADCAST)
        snprintf(root, sizeof(root), "|root=%d", (int)wl->root);
    int len = snprintf(key, n,
                       "arch=%s|sms=%d|world=%d|modes=%s|coll=%s|dtype=%s|gemm=%lldx%lldx%lld|comm=%lldx%lld%s|"
                       "ctile=%dx%d|group_m=%d|tiles=%s",
                       arch, hw->n_sms, (int)wl->world, duet__tune_modes_name(p->modes), duet_collective_name(wl->coll),
                       duet_dtype_name(wl->dtype), (long long)wl->m, (long long)wl->n, (long long)wl->k,
                       (long long)wl->mc, (long long)wl->nc, root, (int)cm, (int)cn, (int)gm, DUET_TILE_LIST_VERSION);
    if (len < 0 || (size_t)len >= n)
        return duet__error(DUET_ERR_INVALID_ARG, "tune key: needs %d characters, the buffer holds %zu", len, n);
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Shared helpers                                                                              */
/* ------------------------------------------------------------------------------------------ */

void duet__tune_utc_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(buf, n, "unknown");
}

void duet__tune_json_num(cJSON *o, const char *key, double v)
{
    /* Exact text (cJSON's own printing may drop the last bit), or null: JSON has no infinity. */
    char buf[40];
    if (duet__json_num_text(buf, sizeof(buf), v) < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddRawToObject(o, key, buf);
}

double duet__tune_json_get_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

void duet__tune_db_warn(duet_tune_db_t *db, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    db->n_warnings++;
    /* One line, whatever a path or a key in it holds. */
    duet__text_escape(db->last_warning, sizeof(db->last_warning), msg, sizeof(msg));
    snprintf(msg, sizeof(msg), "%s", db->last_warning);
    if (db->warn)
        db->warn(db->warn_user, msg);
    else
        fprintf(stderr, "duet: warning: %s\n", msg);
}

duet_status_t duet__tune_predict(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_workload_t *wl,
                                 const duet_config_t *cfg, double *ms_p)
{
    duet_plan_t plan;
    duet_sim_result_t r;
    DUET_CHECK(duet_config_validate(cfg, wl, hw));
    DUET_CHECK(duet_plan_build(wl, cfg, duet_plan_critical_rank(wl), &plan));
    DUET_CHECK(duet_sim_run(ws, &duet_sim_policy_fluid, hw, &plan, NULL, &r));
    *ms_p = r.makespan_s * 1e3;
    return DUET_OK;
}
