/*
 * Measurement corpora: load with validation, save atomically, find rows (for resuming).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duet/corpus.h"
#include "model/corpus_internal.h"
#include "model/internal.h"

static const char *const duet__row_kinds[DUET_ROW_KIND_COUNT] = {"op", "gemm_alone", "comm_alone"};

const char *duet_row_kind_name(int32_t kind)
{
    return kind >= 0 && kind < DUET_ROW_KIND_COUNT ? duet__row_kinds[kind] : "unknown";
}

static void duet__prov_init(duet_corpus_provenance_t *p)
{
    memset(p, 0, sizeof(*p));
    p->seed = -1;
    p->warmup_ms = -1;
    p->order_seed = -1;
}

void duet_corpus_init(duet_corpus_t *c)
{
    memset(c, 0, sizeof(*c));
    c->rounds = 1;
    duet__prov_init(&c->prov);
}

static int duet__known(const char *s)
{
    return s[0] != '\0' && strcmp(s, "unknown") != 0;
}

duet_workload_t duet_corpus_row_part(const duet_corpus_row_t *row)
{
    duet_workload_t wl = row->wl;
    if (row->kind == DUET_ROW_GEMM_ALONE) {
        wl.coll = DUET_COLL_NONE;
        wl.mc = wl.nc = 0;
        wl.root = 0;
    } else if (row->kind == DUET_ROW_COMM_ALONE) {
        wl.m = wl.n = wl.k = 0;
    }
    return wl;
}

int duet_corpus_kernel_check(const duet_corpus_t *c, const duet_build_info_t *b, char *why, size_t n)
{
    const duet_corpus_provenance_t *p = &c->prov;
    int hashes = duet__known(p->kernel_hash) && duet__known(b->kernel_hash);
    int commits = duet__known(p->kernel_commit) && duet__known(b->kernel_commit);
    if (!hashes && !commits) {
        snprintf(why, n,
                 "records no kernel commit: nothing tells whether it measured this build's kernels (backend "
                 "at %s, hash %s)",
                 b->kernel_commit, b->kernel_hash);
        return -1;
    }
    /* The content hash decides where both sides have one: a copy of the tree without .git
     * records no commit, and a commit that left the kernels alone changes no hash. */
    int same = hashes ? strcmp(p->kernel_hash, b->kernel_hash) == 0 : strcmp(p->kernel_commit, b->kernel_commit) == 0;
    snprintf(why, n, "measured with kernels at %s (hash %s); this build's backend is at %s (hash %s)",
             p->kernel_commit[0] ? p->kernel_commit : "unknown", p->kernel_hash[0] ? p->kernel_hash : "unknown",
             b->kernel_commit, b->kernel_hash);
    return same;
}

void duet_corpus_free(duet_corpus_t *c)
{
    if (c == NULL)
        return;
    free(c->rows);
    c->rows = NULL;
    c->n = c->cap = 0;
}

duet_status_t duet_corpus_add(duet_corpus_t *c, const duet_corpus_row_t *row)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        duet_corpus_row_t *r = realloc(c->rows, cap * sizeof(*r));
        if (r == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "cannot grow a corpus to %zu rows", cap);
        c->rows = r;
        c->cap = cap;
    }
    c->rows[c->n++] = *row;
    return DUET_OK;
}

int duet_workload_same(const duet_workload_t *a, const duet_workload_t *b)
{
    return a->m == b->m && a->n == b->n && a->k == b->k && a->mc == b->mc && a->nc == b->nc && a->dtype == b->dtype &&
           a->coll == b->coll && a->world == b->world && a->root == b->root;
}

/* Steps of the duplicate check (table slots visited, rows compared) since the last corpus parse
 * began on this thread: the tests' view of how the check scales. */
static _Thread_local size_t duet__dup_steps;

size_t duet__corpus_dup_steps(void)
{
    return duet__dup_steps;
}

int duet_corpus_row_same_point(const duet_corpus_row_t *a, const duet_corpus_row_t *b)
{
    duet__dup_steps++;
    return a->kind == b->kind && duet_workload_same(&a->wl, &b->wl) && duet_config_same(&a->cfg, &b->cfg);
}

long duet_corpus_find(const duet_corpus_t *c, const duet_corpus_row_t *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (duet_corpus_row_same_point(&c->rows[i], key))
            return (long)i;
    return -1;
}

/* ------------------------------------------------------------------------------------------ */
/* Parsing                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* How messages name what is read: the file and the object, "c.json: rows[17]" or "c.json: corpus". */
typedef struct duet__ctx {
    const char *origin;
    char where[DUET__ERRBUF_LEN];
    int v1; /* the file is duet-corpus/1: its times are ms, under the /1 keys */
} duet__ctx_t;

/* A row's time keys in each layout: the median, fastest and slowest run. */
static const char *const duet__time_keys[2][3] = {{"us", "min_us", "max_us"}, {"ms", "min_ms", "max_ms"}};

static void duet__ctx_at(duet__ctx_t *x, const char *object)
{
    snprintf(x->where, sizeof(x->where), "%s: %s", x->origin, object);
}

static duet_status_t duet__kind_parse(const char *s, int32_t *out)
{
    for (int32_t i = 0; i < DUET_ROW_KIND_COUNT; i++)
        if (strcmp(s, duet__row_kinds[i]) == 0) {
            *out = i;
            return DUET_OK;
        }
    return duet__error(DUET_ERR_PARSE, "'%s' is not op, gemm_alone or comm_alone", s);
}

/*
 * A row's "vendor_kernel": the library's kernel, every member an integer (include/duet/corpus.h,
 * duet_vendor_kernel_t). The bounds are wide enough for any library's tile and loose enough not
 * to reject a future kernel; they exist to refuse garbage.
 */
static const struct {
    const char *key;
    size_t off;
    int64_t lo, hi;
} duet__vk_members[] = {
    {"algo", offsetof(duet_vendor_kernel_t, algo), -1, INT32_MAX},
    {"tile_m", offsetof(duet_vendor_kernel_t, tile_m), 0, 4096},
    {"tile_n", offsetof(duet_vendor_kernel_t, tile_n), 0, 4096},
    {"stage_k", offsetof(duet_vendor_kernel_t, stage_k), 0, 4096},
    {"stages", offsetof(duet_vendor_kernel_t, stages), 0, 64},
    {"split_k", offsetof(duet_vendor_kernel_t, split_k), 0, 1 << 16},
    {"swizzle", offsetof(duet_vendor_kernel_t, swizzle), 0, 64},
    {"cluster_m", offsetof(duet_vendor_kernel_t, cluster_m), 0, 64},
    {"cluster_n", offsetof(duet_vendor_kernel_t, cluster_n), 0, 64},
};
#define DUET__VK_N (sizeof(duet__vk_members) / sizeof(duet__vk_members[0]))

static duet_status_t duet__vendor_kernel_from_json(const cJSON *o, const char *row_where, duet_vendor_kernel_t *vk)
{
    char where[96];
    snprintf(where, sizeof(where), "%.80s.vendor_kernel", row_where);
    if (!cJSON_IsObject(o))
        return duet__error(DUET_ERR_PARSE, "%s: must be an object", where);
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        int known = 0;
        for (size_t i = 0; i < DUET__VK_N; i++)
            known |= strcmp(it->string, duet__vk_members[i].key) == 0;
        if (!known)
            return duet__error(DUET_ERR_PARSE, "%s: unknown key \"%s\"", where, it->string);
    }
    memset(vk, 0, sizeof(*vk));
    for (size_t i = 0; i < DUET__VK_N; i++) {
        int64_t v;
        DUET_CHECK(duet__json_member_int(o, duet__vk_members[i].key, duet__vk_members[i].lo, duet__vk_members[i].hi,
                                         where, &v));
        *(int32_t *)((char *)vk + duet__vk_members[i].off) = (int32_t)v;
    }
    vk->valid = 1;
    return DUET_OK;
}

static void duet__vendor_kernel_text(duet__sbuf_t *b, const duet_vendor_kernel_t *vk)
{
    duet__sbuf_printf(b, ", \"vendor_kernel\": {");
    for (size_t i = 0; i < DUET__VK_N; i++)
        duet__sbuf_printf(b, "%s\"%s\": %d", i ? ", " : "", duet__vk_members[i].key,
                          *(const int32_t *)((const char *)vk + duet__vk_members[i].off));
    duet__sbuf_printf(b, "}");
}

static duet_status_t duet__row_from_json(const cJSON *o, const duet__ctx_t *x, const duet_corpus_t *c,
                                         duet_corpus_row_t *r)
{
    /* The row's own keys; the configuration's are the codec's (model/config_json.c). */
    static const char *const keys[] = {"kind", "ok", "error", "repeats", "vendor_kernel"};
    const char *const *tk = duet__time_keys[x->v1];
    if (!cJSON_IsObject(o))
        return duet__error(DUET_ERR_PARSE, "%s: must be an object", x->where);
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        int known = duet__config_json_key(it->string) || duet__workload_json_key(it->string);
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            known |= strcmp(it->string, keys[i]) == 0;
        for (size_t i = 0; i < 3; i++)
            known |= strcmp(it->string, tk[i]) == 0;
        if (!known)
            return duet__error(DUET_ERR_PARSE, "%s: unknown key \"%s\"", x->where, it->string);
    }
    memset(r, 0, sizeof(*r));
    int64_t v;
    DUET_CHECK(duet__json_member_named(o, "kind", x->where, duet__kind_parse, &r->kind));
    DUET_CHECK(duet__workload_from_json(o, x->where, 0, &r->wl));
    if (r->wl.world != c->world)
        return duet__error(DUET_ERR_PARSE, "%s.world: %d differs from the corpus's world %d", x->where, r->wl.world,
                           c->world);
    if (r->kind == DUET_ROW_OP && (r->wl.m == 0 || r->wl.coll == DUET_COLL_NONE))
        return duet__error(DUET_ERR_PARSE, "%s: an op row needs both a GEMM and a collective", x->where);
    /* The configuration is checked against what ran: a GEMM alone in vendor mode has no comm kernel. */
    duet_workload_t part = duet_corpus_row_part(r);
    DUET_CHECK(duet__config_from_json(o, &part, x->where, &r->cfg));

    const cJSON *ok;
    DUET_CHECK(duet__json_member(o, "ok", DUET__JSON_BOOL, x->where, &ok));
    r->ok = cJSON_IsTrue(ok);
    DUET_CHECK(duet__json_member_int(o, "repeats", 0, 1 << 20, x->where, &v));
    r->repeats = (int32_t)v;
    if (r->ok) {
        const cJSON *med, *lo, *hi;
        DUET_CHECK(duet__json_member(o, tk[0], DUET__JSON_NUMBER, x->where, &med));
        DUET_CHECK(duet__json_member(o, tk[1], DUET__JSON_NUMBER, x->where, &lo));
        DUET_CHECK(duet__json_member(o, tk[2], DUET__JSON_NUMBER, x->where, &hi));
        if (!(med->valuedouble > 0) || !isfinite(med->valuedouble) || !(lo->valuedouble > 0) ||
            lo->valuedouble > med->valuedouble || med->valuedouble > hi->valuedouble || !isfinite(hi->valuedouble))
            return duet__error(DUET_ERR_PARSE, "%s: need 0 < %s <= %s <= %s (got %g, %g, %g)", x->where, tk[1], tk[0],
                               tk[2], lo->valuedouble, med->valuedouble, hi->valuedouble);
        /* In memory the times are ms; /2's us divide by 1000 (exact for every committed row: a /1
         * corpus saved as /2 loads back bit for bit, tests/model/test_corpus_v2.c). */
        r->ms = x->v1 ? med->valuedouble : med->valuedouble / 1e3;
        r->min_ms = x->v1 ? lo->valuedouble : lo->valuedouble / 1e3;
        r->max_ms = x->v1 ? hi->valuedouble : hi->valuedouble / 1e3;
        if (r->repeats < 1)
            return duet__error(DUET_ERR_PARSE, "%s.repeats: a measured row needs at least 1", x->where);
    } else {
        DUET_CHECK(duet__json_member_str(o, "error", x->where, r->error, sizeof(r->error)));
        if (r->error[0] == '\0')
            return duet__error(DUET_ERR_PARSE, "%s.error: a failed row must say why", x->where);
    }
    const cJSON *vk = cJSON_GetObjectItemCaseSensitive(o, "vendor_kernel");
    if (vk != NULL) {
        if (r->cfg.mode != DUET_MODE_VENDOR)
            return duet__error(DUET_ERR_PARSE, "%s.vendor_kernel: only a vendor-mode row records the library's kernel",
                               x->where);
        DUET_CHECK(duet__vendor_kernel_from_json(vk, x->where, &r->vendor));
    }
    return DUET_OK;
}

/* grid.<key>: up to 32 fractions of the SMs, in (0, 1]. An optional key may be absent (none). */
static duet_status_t duet__grid_fracs(const cJSON *grid, const char *key, int optional, const duet__ctx_t *x,
                                      double *out, int32_t *n)
{
    const cJSON *arr, *e;
    if (optional && cJSON_GetObjectItemCaseSensitive(grid, key) == NULL)
        return DUET_OK;
    DUET_CHECK(duet__json_member(grid, key, DUET__JSON_ARRAY, x->where, &arr));
    cJSON_ArrayForEach(e, arr)
    {
        if (!cJSON_IsNumber(e) || !(e->valuedouble > 0) || e->valuedouble > 1 || *n >= 32)
            return duet__error(DUET_ERR_PARSE, "%s: grid.%s: up to 32 numbers in (0, 1]", x->origin, key);
        out[(*n)++] = e->valuedouble;
    }
    return DUET_OK;
}

/* grid.<key>: up to 16 integers in [lo, hi]. An optional key may be absent (none). */
static duet_status_t duet__grid_ints(const cJSON *grid, const char *key, int optional, int32_t lo, int32_t hi,
                                     const duet__ctx_t *x, int32_t *out, int32_t *n)
{
    const cJSON *arr, *e;
    if (optional && cJSON_GetObjectItemCaseSensitive(grid, key) == NULL)
        return DUET_OK;
    DUET_CHECK(duet__json_member(grid, key, DUET__JSON_ARRAY, x->where, &arr));
    cJSON_ArrayForEach(e, arr)
    {
        if (!cJSON_IsNumber(e) || e->valuedouble < lo || e->valuedouble > hi ||
            e->valuedouble != floor(e->valuedouble) || *n >= 16)
            return duet__error(DUET_ERR_PARSE, "%s: grid.%s: up to 16 integers in [%d, %d]", x->origin, key, (int)lo,
                               (int)hi);
        out[(*n)++] = (int32_t)e->valuedouble;
    }
    return DUET_OK;
}

/*
 * The duplicate check of loading. Searching the rows read so far for each new one was quadratic
 * (40,000 rows: 10.6 s); an open-addressing table of the rows' hashes makes it linear. A slot
 * holds a row index + 1 (0: empty) and that row's hash; rows are compared only where the hashes
 * are equal.
 */
typedef struct duet__row_set {
    size_t *idx;
    uint64_t *hash;
    size_t mask;
} duet__row_set_t;

/* 64-bit hash of the fields duet_corpus_row_same_point() compares (splitmix64's mixer per field). */
static uint64_t duet__row_hash(const duet_corpus_row_t *r)
{
    const duet_workload_t *w = &r->wl;
    const duet_config_t *f = &r->cfg;
    const int64_t v[] = {
        r->kind,    w->m,       w->n,       w->k,    w->mc,      w->nc,       w->dtype,
        w->coll,    w->world,   w->root,    f->mode, f->num_wgs, f->gemm_wgs, f->comm_wgs,
        f->tile.bm, f->tile.bn, f->tile.bk, f->cm,   f->cn,      f->group_m,  f->split_k > 1 ? f->split_k : 1};
    uint64_t h = 0;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        h += (uint64_t)v[i] + UINT64_C(0x9e3779b97f4a7c15);
        h = (h ^ (h >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        h = (h ^ (h >> 27)) * UINT64_C(0x94d049bb133111eb);
        h ^= h >> 31;
    }
    return h;
}

static duet_status_t duet__row_set_init(duet__row_set_t *s, size_t rows)
{
    size_t n = 64;
    while (n < 2 * rows)
        n *= 2;
    s->idx = calloc(n, sizeof(*s->idx));
    s->hash = malloc(n * sizeof(*s->hash));
    s->mask = n - 1;
    if (s->idx == NULL || s->hash == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "cannot index %zu corpus rows", rows);
    return DUET_OK;
}

static void duet__row_set_free(duet__row_set_t *s)
{
    free(s->idx);
    free(s->hash);
}

/* Row i of c joins the set; @return the index of an earlier row measuring the same point, or -1. */
static long duet__row_set_add(duet__row_set_t *s, const duet_corpus_t *c, size_t i)
{
    uint64_t h = duet__row_hash(&c->rows[i]);
    size_t slot = (size_t)h & s->mask;
    for (;; slot = (slot + 1) & s->mask) {
        duet__dup_steps++;
        if (s->idx[slot] == 0) {
            s->idx[slot] = i + 1;
            s->hash[slot] = h;
            return -1;
        }
        if (s->hash[slot] == h && duet_corpus_row_same_point(&c->rows[s->idx[slot] - 1], &c->rows[i]))
            return (long)(s->idx[slot] - 1);
    }
}

/* The optional "provenance" object: every member optional, unknown members refused. */
static duet_status_t duet__corpus_prov_from_json(const cJSON *root, const char *origin, int v1,
                                                 duet_corpus_provenance_t *p)
{
    const char *warm_key = v1 ? "warmup_ms" : "warmup_us";
    duet__prov_init(p);
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(root, "provenance");
    if (o == NULL)
        return DUET_OK;
    char where[192];
    snprintf(where, sizeof(where), "%s: provenance", origin);
    if (!cJSON_IsObject(o))
        return duet__error(DUET_ERR_PARSE, "%s: must be an object", where);
    static const struct {
        const char *key;
        size_t off, len;
    } strs[] = {
        {"duet_commit", offsetof(duet_corpus_provenance_t, duet_commit), sizeof(p->duet_commit)},
        {"kernel_commit", offsetof(duet_corpus_provenance_t, kernel_commit), sizeof(p->kernel_commit)},
        {"kernel_hash", offsetof(duet_corpus_provenance_t, kernel_hash), sizeof(p->kernel_hash)},
        {"shapes", offsetof(duet_corpus_provenance_t, shapes), sizeof(p->shapes)},
        {"clocks", offsetof(duet_corpus_provenance_t, clocks), sizeof(p->clocks)},
        {"grid", offsetof(duet_corpus_provenance_t, grid), sizeof(p->grid)},
    };
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        int known = strcmp(it->string, "seed") == 0 || strcmp(it->string, warm_key) == 0 ||
                    strcmp(it->string, "order_seed") == 0;
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
            known |= strcmp(it->string, strs[i].key) == 0;
        if (!known)
            return duet__error(DUET_ERR_PARSE, "%s: unknown key \"%s\"", where, it->string);
    }
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        if (cJSON_GetObjectItemCaseSensitive(o, strs[i].key) != NULL)
            DUET_CHECK(duet__json_member_str(o, strs[i].key, where, (char *)p + strs[i].off, strs[i].len));
    int64_t v;
    if (cJSON_GetObjectItemCaseSensitive(o, "seed") != NULL) {
        DUET_CHECK(duet__json_member_int(o, "seed", 0, INT64_MAX, where, &v));
        p->seed = v;
    }
    if (cJSON_GetObjectItemCaseSensitive(o, "order_seed") != NULL) {
        DUET_CHECK(duet__json_member_int(o, "order_seed", 0, INT64_MAX, where, &v));
        p->order_seed = v;
    }
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, warm_key);
    if (w != NULL) {
        /* At most an hour: 3.6e6 ms, 3.6e9 us. */
        double hi = v1 ? 3.6e6 : 3.6e9;
        if (!cJSON_IsNumber(w) || !(w->valuedouble >= 0 && w->valuedouble <= hi))
            return duet__error(DUET_ERR_PARSE, "%s.%s: must be a number of %s in [0, %g]", where, warm_key,
                               v1 ? "ms" : "us", hi);
        p->warmup_ms = v1 ? w->valuedouble : w->valuedouble / 1e3;
    }
    return DUET_OK;
}

static duet_status_t duet__corpus_from_json(const cJSON *root, const char *origin, duet_corpus_t *c)
{
    duet__ctx_t x = {origin, "", 0};
    duet__ctx_at(&x, "corpus");
    static const char *const keys[] = {"schema", "device",  "arch",   "sms",    "world", "driver", "runtime",   "date",
                                       "duet",   "repeats", "warmup", "rounds", "grid",  "rows",   "provenance"};
    if (!cJSON_IsObject(root))
        return duet__error(DUET_ERR_PARSE, "%s: a corpus must be a JSON object", origin);
    const cJSON *it;
    cJSON_ArrayForEach(it, root)
    {
        int known = 0;
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            known |= strcmp(it->string, keys[i]) == 0;
        if (!known)
            return duet__error(DUET_ERR_PARSE, "%s: unknown key \"%s\"", origin, it->string);
    }
    char schema[32];
    DUET_CHECK(duet__json_member_str(root, "schema", x.where, schema, sizeof(schema)));
    x.v1 = strcmp(schema, DUET_CORPUS_SCHEMA_V1) == 0;
    if (strcmp(schema, DUET_CORPUS_SCHEMA) != 0 && !x.v1)
        return duet__error(DUET_ERR_PARSE, "%s: schema \"%s\" is not \"%s\" (or \"%s\", its layout in ms)", origin,
                           schema, DUET_CORPUS_SCHEMA, DUET_CORPUS_SCHEMA_V1);
    int64_t v;
    DUET_CHECK(duet__json_member_str(root, "device", x.where, c->device, sizeof(c->device)));
    DUET_CHECK(duet__json_member_str(root, "arch", x.where, c->arch, sizeof(c->arch)));
    DUET_CHECK(duet__json_member_str(root, "driver", x.where, c->driver, sizeof(c->driver)));
    DUET_CHECK(duet__json_member_str(root, "runtime", x.where, c->runtime, sizeof(c->runtime)));
    DUET_CHECK(duet__json_member_str(root, "date", x.where, c->date, sizeof(c->date)));
    DUET_CHECK(duet__json_member_str(root, "duet", x.where, c->duet_version, sizeof(c->duet_version)));
    DUET_CHECK(duet__json_member_int(root, "sms", 1, 4096, x.where, &v));
    c->sms = (int32_t)v;
    DUET_CHECK(duet__json_member_int(root, "world", 1, 1024, x.where, &v));
    c->world = (int32_t)v;
    DUET_CHECK(duet__json_member_int(root, "repeats", 1, 1 << 20, x.where, &v));
    c->repeats = (int32_t)v;
    DUET_CHECK(duet__json_member_int(root, "warmup", 0, 1 << 20, x.where, &v));
    c->warmup = (int32_t)v;
    /* Optional (corpora measured one point after the other have none): 1. */
    c->rounds = 1;
    if (cJSON_GetObjectItemCaseSensitive(root, "rounds") != NULL) {
        DUET_CHECK(duet__json_member_int(root, "rounds", 1, 1 << 20, x.where, &v));
        c->rounds = (int32_t)v;
    }

    DUET_CHECK(duet__corpus_prov_from_json(root, origin, x.v1, &c->prov));

    const cJSON *grid, *arr, *e;
    DUET_CHECK(duet__json_member(root, "grid", DUET__JSON_OBJECT, x.where, &grid));
    duet__ctx_at(&x, "grid");
    DUET_CHECK(duet__grid_fracs(grid, "fused_fracs", 0, &x, c->fracs, &c->n_fracs));
    DUET_CHECK(duet__json_member(grid, "tiles", DUET__JSON_ARRAY, x.where, &arr));
    cJSON_ArrayForEach(e, arr)
    {
        if (!cJSON_IsString(e) || c->n_tiles >= 16 || duet_tile_parse(e->valuestring, &c->tiles[c->n_tiles]) < 0)
            return duet__error(DUET_ERR_PARSE, "%s: grid.tiles: up to 16 supported tiles such as \"256x128x64\"",
                               origin);
        c->n_tiles++;
    }
    DUET_CHECK(duet__grid_ints(grid, "concurrent_comm_wgs", 0, 1, 1 << 20, &x, c->comm_wgs, &c->n_comm_wgs));
    /* Optional (grids without K-split rows have none). */
    DUET_CHECK(duet__grid_ints(grid, "split_ks", 1, 2, DUET_MAX_SPLIT_K, &x, c->split_ks, &c->n_split_ks));
    DUET_CHECK(duet__grid_fracs(grid, "split_fused_fracs", 1, &x, c->split_fracs, &c->n_split_fracs));

    duet__ctx_at(&x, "corpus");
    DUET_CHECK(duet__json_member(root, "rows", DUET__JSON_ARRAY, x.where, &arr));
    duet__row_set_t set;
    duet_status_t st = duet__row_set_init(&set, (size_t)cJSON_GetArraySize(arr));
    duet__dup_steps = 0;
    size_t i = 0;
    cJSON_ArrayForEach(e, arr)
    {
        if (st < 0)
            break;
        duet_corpus_row_t r;
        snprintf(x.where, sizeof(x.where), "%s: rows[%zu]", origin, i);
        DUET_CHECK_GOTO(duet__row_from_json(e, &x, c, &r), st, out);
        DUET_CHECK_GOTO(duet_corpus_add(c, &r), st, out);
        long dup = duet__row_set_add(&set, c, i);
        if (dup >= 0)
            st = duet__error(DUET_ERR_PARSE, "%s: rows[%zu] measures the same point as rows[%ld]", origin, i, dup);
        i++;
    }
out:
    duet__row_set_free(&set);
    return st;
}

duet_status_t duet_corpus_parse(const char *text, const char *origin, duet_corpus_t *c_p)
{
    cJSON *root = duet__json_parse(text, (size_t)-1, origin, 1);
    if (root == NULL)
        return duet__last_status(); /* malformed, or out of memory */
    duet_corpus_t c;
    duet_corpus_init(&c);
    duet_status_t st = duet__corpus_from_json(root, origin, &c);
    cJSON_Delete(root);
    if (st < 0) {
        duet_corpus_free(&c);
        return st;
    }
    *c_p = c;
    return DUET_OK;
}

duet_status_t duet_corpus_load(const char *path, duet_corpus_t *c_p)
{
    char *text = NULL;
    DUET_CHECK(duet__read_file(path, &text, NULL));
    duet_status_t st = duet_corpus_parse(text, path, c_p);
    free(text);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Writing                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* "key": [numbers] from d (doubles, exact) or else i (integers). */
static void duet__json_list(duet__sbuf_t *b, const char *key, const double *d, const int32_t *i, int32_t n)
{
    duet__sbuf_printf(b, "\"%s\": [", key);
    for (int32_t k = 0; k < n; k++) {
        if (d != NULL)
            duet__sbuf_printf(b, "%s%.17g", k ? ", " : "", d[k]);
        else
            duet__sbuf_printf(b, "%s%d", k ? ", " : "", (int)i[k]);
    }
    duet__sbuf_printf(b, "]");
}

/* The "provenance" object, with the members that say something; nothing when none does, so that
 * an older corpus saves back unchanged. */
static void duet__corpus_prov_text(duet__sbuf_t *b, const duet_corpus_provenance_t *p)
{
    const char *keys[] = {"duet_commit", "kernel_commit", "kernel_hash", "shapes", "clocks", "grid"};
    const char *vals[] = {p->duet_commit, p->kernel_commit, p->kernel_hash, p->shapes, p->clocks, p->grid};
    int any = p->seed >= 0 || p->warmup_ms >= 0 || p->order_seed >= 0;
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        any |= vals[i][0] != '\0';
    if (!any)
        return;
    const char *sep = "";
    duet__sbuf_printf(b, ",\n  \"provenance\": {");
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        if (vals[i][0] == '\0')
            continue;
        duet__sbuf_printf(b, "%s\"%s\": ", sep, keys[i]);
        duet__json_str(b, vals[i]);
        sep = ", ";
    }
    if (p->seed >= 0) {
        duet__sbuf_printf(b, "%s\"seed\": %lld", sep, (long long)p->seed);
        sep = ", ";
    }
    if (p->order_seed >= 0) {
        duet__sbuf_printf(b, "%s\"order_seed\": %lld", sep, (long long)p->order_seed);
        sep = ", ";
    }
    if (p->warmup_ms >= 0)
        duet__sbuf_printf(b, "%s\"warmup_us\": %.17g", sep, p->warmup_ms * 1e3);
    duet__sbuf_printf(b, "}");
}

duet_status_t duet_corpus_save(const duet_corpus_t *c, const char *path)
{
    /* JSON has no infinity or NaN: a file with one would not load again, so nothing is written. */
    for (int32_t i = 0; i < c->n_fracs || i < c->n_split_fracs; i++)
        if ((i < c->n_fracs && !isfinite(c->fracs[i])) || (i < c->n_split_fracs && !isfinite(c->split_fracs[i])))
            return duet__error(DUET_ERR_INVALID_ARG, "%s: grid: a fraction is not finite; nothing written", path);
    for (size_t i = 0; i < c->n; i++)
        if (c->rows[i].ok && !(isfinite(c->rows[i].ms) && isfinite(c->rows[i].min_ms) && isfinite(c->rows[i].max_ms)))
            return duet__error(DUET_ERR_INVALID_ARG, "%s: rows[%zu]: a time is not finite; nothing written", path, i);
    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__sbuf_printf(&b, "{\n  \"schema\": \"%s\",\n  \"device\": ", DUET_CORPUS_SCHEMA);
    duet__json_str(&b, c->device);
    duet__sbuf_printf(&b, ",\n  \"arch\": ");
    duet__json_str(&b, c->arch);
    duet__sbuf_printf(&b, ",\n  \"sms\": %d,\n  \"world\": %d,\n  \"driver\": ", c->sms, c->world);
    duet__json_str(&b, c->driver);
    duet__sbuf_printf(&b, ",\n  \"runtime\": ");
    duet__json_str(&b, c->runtime);
    duet__sbuf_printf(&b, ",\n  \"date\": ");
    duet__json_str(&b, c->date);
    duet__sbuf_printf(&b, ",\n  \"duet\": ");
    duet__json_str(&b, c->duet_version);
    duet__sbuf_printf(&b, ",\n  \"repeats\": %d,\n  \"warmup\": %d", c->repeats, c->warmup);
    /* Written only when it says something, so that an older corpus saves back unchanged. */
    if (c->rounds > 1)
        duet__sbuf_printf(&b, ",\n  \"rounds\": %d", c->rounds);
    duet__corpus_prov_text(&b, &c->prov);
    duet__sbuf_printf(&b, ",\n  \"grid\": {");
    duet__json_list(&b, "fused_fracs", c->fracs, NULL, c->n_fracs);
    duet__sbuf_printf(&b, ", \"tiles\": [");
    for (int i = 0; i < c->n_tiles; i++)
        duet__sbuf_printf(&b, "%s\"%dx%dx%d\"", i ? ", " : "", c->tiles[i].bm, c->tiles[i].bn, c->tiles[i].bk);
    duet__sbuf_printf(&b, "], ");
    duet__json_list(&b, "concurrent_comm_wgs", NULL, c->comm_wgs, c->n_comm_wgs);
    if (c->n_split_ks > 0) {
        duet__sbuf_printf(&b, ", ");
        duet__json_list(&b, "split_ks", NULL, c->split_ks, c->n_split_ks);
        duet__sbuf_printf(&b, ", ");
        duet__json_list(&b, "split_fused_fracs", c->split_fracs, NULL, c->n_split_fracs);
    }
    duet__sbuf_printf(&b, "},\n  \"rows\": [");
    for (size_t i = 0; i < c->n; i++) {
        const duet_corpus_row_t *r = &c->rows[i];
        duet__sbuf_printf(&b, "%s\n    {\"kind\": \"%s\", ", i ? "," : "", duet_row_kind_name(r->kind));
        duet__workload_json_text(&b, &r->wl);
        duet__sbuf_printf(&b, ", ");
        /* split_k comes after "repeats", and only for a K split: where the collector that
         * introduced it put it, so that every corpus saves back byte for byte. */
        duet__config_json_text(&b, &r->cfg, DUET__CONFIG_SPLIT_NONE);
        duet__sbuf_printf(&b, ", \"ok\": %s, \"repeats\": %d", r->ok ? "true" : "false", r->repeats);
        duet__config_json_split_text(&b, &r->cfg, DUET__CONFIG_SPLIT_IF_SPLIT);
        if (r->vendor.valid)
            duet__vendor_kernel_text(&b, &r->vendor);
        if (r->ok) {
            /* us, from the ms held in memory (the loader divides them back). */
            duet__sbuf_printf(&b, ", \"us\": %.17g, \"min_us\": %.17g, \"max_us\": %.17g}", r->ms * 1e3,
                              r->min_ms * 1e3, r->max_ms * 1e3);
        } else {
            duet__sbuf_printf(&b, ", \"error\": ");
            duet__json_str(&b, r->error);
            duet__sbuf_printf(&b, "}");
        }
    }
    duet__sbuf_printf(&b, "\n  ]\n}\n");
    return duet__sbuf_write(&b, path);
}
