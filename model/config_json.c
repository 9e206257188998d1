/*
 * The JSON codec of a configuration: its members "mode", "num_wgs", "gemm_wgs", "comm_wgs",
 * "tile", "comm_tile", "group_m" and "split_k", in that order, and "stream_k" (written only when
 * 1, read as 0 when absent), written and read here only. Corpus
 * rows, the tuning database and every command's --json output share it, so a configuration
 * reads back from any of them with the same strict rules: integers in their ranges, a supported
 * GEMM tile, a comm tile "CMxCN", and the shape checks of duet_config_validate() that need no
 * profile.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "duet/model.h"
#include "duet/plan_map.h"
#include "model/internal.h"

enum {
    DUET__CFG_MODE,
    DUET__CFG_NUM_WGS,
    DUET__CFG_GEMM_WGS,
    DUET__CFG_COMM_WGS,
    DUET__CFG_TILE,
    DUET__CFG_COMM_TILE,
    DUET__CFG_GROUP_M,
    DUET__CFG_SPLIT_K,
    DUET__CFG_MEMBERS
};

static const char *const duet__config_keys[DUET__CFG_MEMBERS] = {"mode", "num_wgs",   "gemm_wgs", "comm_wgs",
                                                                 "tile", "comm_tile", "group_m",  "split_k"};

/* Optional, after the members: written only for stream-K, so every other configuration's text is
 * what it was before stream-K existed. */
static const char duet__config_key_stream_k[] = "stream_k";

/* CTA counts read back: far above any device (4096 SMs at most), small enough for int32_t. */
#define DUET__CFG_MAX_CTAS (1 << 20)

/* One member's value: a string (written quoted) or an integer. */
typedef struct duet__cfg_member {
    int is_str;
    char str[48];
    int num;
} duet__cfg_member_t;

static duet__cfg_member_t duet__cfg_member(const duet_config_t *c, int i)
{
    duet__cfg_member_t m = {0, "", 0};
    switch (i) {
    case DUET__CFG_MODE:
        m.is_str = 1;
        snprintf(m.str, sizeof(m.str), "%s", duet_mode_name(c->mode));
        break;
    case DUET__CFG_NUM_WGS:
        m.num = c->num_wgs;
        break;
    case DUET__CFG_GEMM_WGS:
        m.num = c->gemm_wgs;
        break;
    case DUET__CFG_COMM_WGS:
        m.num = c->comm_wgs;
        break;
    case DUET__CFG_TILE:
        m.is_str = 1;
        snprintf(m.str, sizeof(m.str), "%dx%dx%d", (int)c->tile.bm, (int)c->tile.bn, (int)c->tile.bk);
        break;
    case DUET__CFG_COMM_TILE:
        m.is_str = 1;
        snprintf(m.str, sizeof(m.str), "%dx%d", (int)c->cm, (int)c->cn);
        break;
    case DUET__CFG_GROUP_M:
        m.num = c->group_m;
        break;
    default:
        /* split_k 0 means no split, as 1 does: written as 1. */
        m.num = c->split_k > 1 ? c->split_k : 1;
        break;
    }
    return m;
}

int duet__config_json_key(const char *key)
{
    for (int i = 0; i < DUET__CFG_MEMBERS; i++)
        if (strcmp(key, duet__config_keys[i]) == 0)
            return 1;
    return strcmp(key, duet__config_key_stream_k) == 0;
}

const char *const *duet__config_key_names(size_t *n_p)
{
    *n_p = DUET__CFG_MEMBERS;
    return duet__config_keys;
}

duet_status_t duet__config_to_cjson(struct cJSON *o, const duet_config_t *cfg)
{
    for (int i = 0; o != NULL && i < DUET__CFG_MEMBERS; i++) {
        duet__cfg_member_t m = duet__cfg_member(cfg, i);
        const char *key = duet__config_keys[i];
        if ((m.is_str ? cJSON_AddStringToObject(o, key, m.str) : cJSON_AddNumberToObject(o, key, m.num)) == NULL)
            o = NULL;
    }
    if (o != NULL && cfg->stream_k && cJSON_AddNumberToObject(o, duet__config_key_stream_k, 1) == NULL)
        o = NULL;
    if (o == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "configuration: cannot build its JSON");
    return DUET_OK;
}

void duet__config_json_text(duet__sbuf_t *b, const duet_config_t *cfg, int split)
{
    for (int i = 0; i < DUET__CFG_SPLIT_K; i++) {
        duet__cfg_member_t m = duet__cfg_member(cfg, i);
        duet__sbuf_printf(b, "%s\"%s\": ", i ? ", " : "", duet__config_keys[i]);
        if (m.is_str)
            duet__json_str(b, m.str);
        else
            duet__sbuf_printf(b, "%d", m.num);
    }
    duet__config_json_split_text(b, cfg, split);
}

void duet__config_json_split_text(duet__sbuf_t *b, const duet_config_t *cfg, int split)
{
    if (split == DUET__CONFIG_SPLIT_ALWAYS || (split == DUET__CONFIG_SPLIT_IF_SPLIT && cfg->split_k > 1))
        duet__sbuf_printf(b, ", \"%s\": %d", duet__config_keys[DUET__CFG_SPLIT_K],
                          duet__cfg_member(cfg, DUET__CFG_SPLIT_K).num);
    if (split != DUET__CONFIG_SPLIT_NONE && cfg->stream_k)
        duet__sbuf_printf(b, ", \"%s\": 1", duet__config_key_stream_k);
}

/* An integer member into an int32_t field. */
static duet_status_t duet__cfg_int(const cJSON *o, int i, int64_t lo, int64_t hi, const char *where, int32_t *out)
{
    int64_t v;
    DUET_CHECK(duet__json_member_int(o, duet__config_keys[i], lo, hi, where, &v));
    *out = (int32_t)v;
    return DUET_OK;
}

duet_status_t duet__config_from_json(const struct cJSON *o, const duet_workload_t *wl, const char *where,
                                     duet_config_t *cfg_p)
{
    if (!cJSON_IsObject(o))
        return duet__error(DUET_ERR_PARSE, "%s: must be an object", where);
    duet_config_t c;
    memset(&c, 0, sizeof(c));
    DUET_CHECK(duet__json_member_named(o, duet__config_keys[DUET__CFG_MODE], where, duet_mode_parse, &c.mode));
    DUET_CHECK(duet__cfg_int(o, DUET__CFG_NUM_WGS, 0, DUET__CFG_MAX_CTAS, where, &c.num_wgs));
    DUET_CHECK(duet__cfg_int(o, DUET__CFG_GEMM_WGS, 0, DUET__CFG_MAX_CTAS, where, &c.gemm_wgs));
    DUET_CHECK(duet__cfg_int(o, DUET__CFG_COMM_WGS, 0, DUET__CFG_MAX_CTAS, where, &c.comm_wgs));
    DUET_CHECK(duet__cfg_int(o, DUET__CFG_GROUP_M, 1, 64, where, &c.group_m));
    /* Optional: corpora and databases written before the K split have none, which is no split. */
    c.split_k = 1;
    if (cJSON_GetObjectItemCaseSensitive(o, duet__config_keys[DUET__CFG_SPLIT_K]) != NULL)
        DUET_CHECK(duet__cfg_int(o, DUET__CFG_SPLIT_K, 1, DUET_MAX_SPLIT_K, where, &c.split_k));
    if (cJSON_GetObjectItemCaseSensitive(o, duet__config_key_stream_k) != NULL) {
        int64_t v;
        DUET_CHECK(duet__json_member_int(o, duet__config_key_stream_k, 0, 1, where, &v));
        c.stream_k = (int32_t)v;
    }
    char buf[64];
    DUET_CHECK(duet__json_member_str(o, duet__config_keys[DUET__CFG_TILE], where, buf, sizeof(buf)));
    if (duet_tile_parse(buf, &c.tile) < 0)
        return duet__error(DUET_ERR_PARSE, "%s.tile: %s", where, duet_last_error());
    DUET_CHECK(duet__json_member_str(o, duet__config_keys[DUET__CFG_COMM_TILE], where, buf, sizeof(buf)));
    int64_t ct[2];
    if (duet_dims_parse(buf, 2, DUET__CFG_MAX_CTAS, ct) < 0)
        return duet__error(DUET_ERR_PARSE, "%s.comm_tile: '%s' is not CMxCN", where, duet__q(buf));
    c.cm = (int32_t)ct[0];
    c.cn = (int32_t)ct[1];
    if (duet__config_check_shape(&c, wl) < 0)
        return duet__error(DUET_ERR_PARSE, "%s: %s", where, duet_last_error());
    *cfg_p = c;
    return DUET_OK;
}
