/*
 * The JSON codec of a workload: its members "collective", "dtype", "m", "n", "k", "mc", "nc",
 * "world" and "root", in that order, written and read here only. Corpus rows, the tuning
 * database, the commands' --json output (the JSON API's workload) and the GPU bench's report share
 * it (`duet shapes` writes its rows through its table, which tests/cli/test_shapes.c holds to these
 * members), so a workload reads back from any of them with the same strict rules:
 * a known collective and dtype, integer sizes in [0, 2^40], world in [1, 1024], root in [0, 1023],
 * then duet_workload_validate(). The configuration's codec is model/config_json.c.
 */
#include <cjson/cJSON.h>
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

enum {
    DUET__WL_COLL,
    DUET__WL_DTYPE,
    DUET__WL_M,
    DUET__WL_N,
    DUET__WL_K,
    DUET__WL_MC,
    DUET__WL_NC,
    DUET__WL_WORLD,
    DUET__WL_ROOT,
    DUET__WL_MEMBERS
};

static const char *const duet__workload_keys[DUET__WL_MEMBERS] = {"collective", "dtype", "m",     "n",   "k",
                                                                  "mc",         "nc",    "world", "root"};

/* Sizes read back: 2^40 elements, far above any GEMM or tensor and exact in a double. */
#define DUET__WL_MAX_DIM (INT64_C(1) << 40)

int duet__workload_json_key(const char *key)
{
    for (int i = 0; i < DUET__WL_MEMBERS; i++)
        if (strcmp(key, duet__workload_keys[i]) == 0)
            return 1;
    return 0;
}

/* The integer members, m .. root, in key order. */
static void duet__wl_ints(const duet_workload_t *wl, long long v[DUET__WL_MEMBERS])
{
    v[DUET__WL_M] = (long long)wl->m;
    v[DUET__WL_N] = (long long)wl->n;
    v[DUET__WL_K] = (long long)wl->k;
    v[DUET__WL_MC] = (long long)wl->mc;
    v[DUET__WL_NC] = (long long)wl->nc;
    v[DUET__WL_WORLD] = wl->world;
    v[DUET__WL_ROOT] = wl->root;
}

duet_status_t duet__workload_to_cjson(struct cJSON *o, const duet_workload_t *wl)
{
    long long v[DUET__WL_MEMBERS];
    duet__wl_ints(wl, v);
    if (o != NULL &&
        cJSON_AddStringToObject(o, duet__workload_keys[DUET__WL_COLL], duet_collective_name(wl->coll)) == NULL)
        o = NULL;
    if (o != NULL &&
        cJSON_AddStringToObject(o, duet__workload_keys[DUET__WL_DTYPE], duet_dtype_name(wl->dtype)) == NULL)
        o = NULL;
    for (int i = DUET__WL_M; o != NULL && i < DUET__WL_MEMBERS; i++)
        if (cJSON_AddNumberToObject(o, duet__workload_keys[i], (double)v[i]) == NULL)
            o = NULL;
    if (o == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "workload: cannot build its JSON");
    return DUET_OK;
}

void duet__workload_json_text(duet__sbuf_t *b, const duet_workload_t *wl)
{
    long long v[DUET__WL_MEMBERS];
    duet__wl_ints(wl, v);
    duet__sbuf_printf(b, "\"%s\": \"%s\", \"%s\": \"%s\"", duet__workload_keys[DUET__WL_COLL],
                      duet_collective_name(wl->coll), duet__workload_keys[DUET__WL_DTYPE], duet_dtype_name(wl->dtype));
    for (int i = DUET__WL_M; i < DUET__WL_MEMBERS; i++)
        duet__sbuf_printf(b, ", \"%s\": %lld", duet__workload_keys[i], v[i]);
}

duet_status_t duet__workload_from_json(const struct cJSON *o, const char *where, int flags, duet_workload_t *wl_p)
{
    static const int64_t hi[DUET__WL_MEMBERS] = {
        0, 0, DUET__WL_MAX_DIM, DUET__WL_MAX_DIM, DUET__WL_MAX_DIM, DUET__WL_MAX_DIM, DUET__WL_MAX_DIM, 1024, 1023};
    if (!cJSON_IsObject(o))
        return duet__error(DUET_ERR_PARSE, "%s: must be an object", where);
    duet_workload_t wl = duet_workload_empty();
    int64_t v[DUET__WL_MEMBERS] = {0};
    DUET_CHECK(duet__json_member_named(o, duet__workload_keys[DUET__WL_COLL], where, duet_collective_parse, &wl.coll));
    DUET_CHECK(duet__json_member_named(o, duet__workload_keys[DUET__WL_DTYPE], where, duet_dtype_parse, &wl.dtype));
    for (int i = DUET__WL_M; i < DUET__WL_MEMBERS; i++) {
        /* A file written without a root (the GPU bench's reports before the codec) reads as root 0. */
        if (i == DUET__WL_ROOT && (flags & DUET__WORKLOAD_ROOT_OPTIONAL) &&
            cJSON_GetObjectItemCaseSensitive(o, duet__workload_keys[i]) == NULL)
            continue;
        DUET_CHECK(duet__json_member_int(o, duet__workload_keys[i], i == DUET__WL_WORLD ? 1 : 0, hi[i], where, &v[i]));
    }
    wl.m = v[DUET__WL_M];
    wl.n = v[DUET__WL_N];
    wl.k = v[DUET__WL_K];
    wl.mc = v[DUET__WL_MC];
    wl.nc = v[DUET__WL_NC];
    wl.world = (int32_t)v[DUET__WL_WORLD];
    wl.root = (int32_t)v[DUET__WL_ROOT];
    if (duet_workload_validate(&wl) < 0)
        return duet__error(DUET_ERR_PARSE, "%s: %s", where, duet_last_error());
    *wl_p = wl;
    return DUET_OK;
}
