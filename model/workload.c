/*
 * Names, the tile list, and the rules for workloads and configurations.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

static const char *const duet__coll_names[DUET_COLL_COUNT] = {"none",           "all_gather", "all_reduce",
                                                              "reduce_scatter", "all_to_all", "broadcast"};
static const char *const duet__dtype_names[DUET_DTYPE_COUNT] = {"fp16", "bf16"};
static const char *const duet__mode_names[DUET_MODE_COUNT] = {"fused", "concurrent", "vendor", "copy"};

const char *duet_collective_name(int32_t coll)
{
    return coll >= 0 && coll < DUET_COLL_COUNT ? duet__coll_names[coll] : "unknown";
}
const char *duet_dtype_name(int32_t dtype)
{
    return dtype >= 0 && dtype < DUET_DTYPE_COUNT ? duet__dtype_names[dtype] : "unknown";
}
const char *duet_mode_name(int32_t mode)
{
    return mode >= 0 && mode < DUET_MODE_COUNT ? duet__mode_names[mode] : "unknown";
}

static duet_status_t duet__parse_name(const char *s, const char *const *names, int n, const char *what, int32_t *out)
{
    for (int i = 0; i < n; i++)
        if (s != NULL && strcmp(s, names[i]) == 0) {
            *out = i;
            return DUET_OK;
        }
    char list[160] = "";
    for (int i = 0; i < n; i++) {
        strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
        strncat(list, names[i], sizeof(list) - strlen(list) - 1);
    }
    int near = s != NULL ? duet__nearest_name(s, names, (size_t)n) : -1;
    if (near >= 0)
        return duet__error(DUET_ERR_INVALID_ARG, "unknown %s '%s' (did you mean %s? one of: %s)", what, duet__q(s),
                           names[near], list);
    return duet__error(DUET_ERR_INVALID_ARG, "unknown %s '%s' (one of: %s)", what, s ? duet__q(s) : "", list);
}

duet_status_t duet_collective_parse(const char *s, int32_t *coll_p)
{
    return duet__parse_name(s, duet__coll_names, DUET_COLL_COUNT, "collective", coll_p);
}
duet_status_t duet_dtype_parse(const char *s, int32_t *dtype_p)
{
    return duet__parse_name(s, duet__dtype_names, DUET_DTYPE_COUNT, "dtype", dtype_p);
}
duet_status_t duet_mode_parse(const char *s, int32_t *mode_p)
{
    return duet__parse_name(s, duet__mode_names, DUET_MODE_COUNT, "mode", mode_p);
}

/* ------------------------------------------------------------------------------------------ */
/* Tiles                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* The reference design's five tiles, then three with BM = 64 for small M (decode-like GEMMs),
 * where a 256-row tile wastes most of its matrix work on padding. 64x64 exists for parallelism:
 * at M <= 128 and N = 8192 only it gives every SM a tile (128 tiles; 64x128 leaves half of an
 * H200's 132 SMs idle on a memory-bound GEMM). */
static const duet_gemm_tile_t duet__tiles[] = {
    {256, 256, 64}, {128, 256, 64}, {256, 128, 64}, {128, 128, 64},
    {256, 64, 64},  {64, 128, 64},  {64, 256, 64},  {64, 64, 64},
};

int duet_tile_count(void)
{
    return (int)(sizeof(duet__tiles) / sizeof(duet__tiles[0]));
}

duet_gemm_tile_t duet_tile_get(int i)
{
    duet_gemm_tile_t none = {0, 0, 0};
    return i >= 0 && i < duet_tile_count() ? duet__tiles[i] : none;
}

int duet_tile_supported(duet_gemm_tile_t t)
{
    for (int i = 0; i < duet_tile_count(); i++)
        if (duet__tiles[i].bm == t.bm && duet__tiles[i].bn == t.bn && duet__tiles[i].bk == t.bk)
            return 1;
    return 0;
}

/* cuBLASLt's Hopper GEMM kernels (sm90 CUTLASS-derived): CTA tiles of C from 64x64 to 256x128
 * with BK 64 (its 256x256 output is a 2x1 cluster of 128x256 CTAs, one tile per CTA here). The
 * larger tiles first: the choice keeps the first of equal prices. */
static const duet_gemm_tile_t duet__vendor_tiles[] = {
    {128, 256, 64}, {256, 128, 64}, {128, 128, 64}, {64, 256, 64}, {128, 64, 64}, {64, 128, 64}, {64, 64, 64},
};

int duet_vendor_tile_count(void)
{
    return (int)(sizeof(duet__vendor_tiles) / sizeof(duet__vendor_tiles[0]));
}

duet_gemm_tile_t duet_vendor_tile_get(int i)
{
    duet_gemm_tile_t none = {0, 0, 0};
    return i >= 0 && i < duet_vendor_tile_count() ? duet__vendor_tiles[i] : none;
}

int duet_vendor_tile_plausible(duet_gemm_tile_t t)
{
    /* A recorded kernel's tile is whatever the library reports; it only has to make a grid. */
    return t.bm >= 8 && t.bm <= 1024 && t.bm % 8 == 0 && t.bn >= 8 && t.bn <= 1024 && t.bn % 8 == 0 && t.bk >= 8 &&
           t.bk <= 1024;
}

static duet_status_t duet__tile_list_error(const char *s)
{
    char list[200] = "";
    for (int i = 0; i < duet_tile_count(); i++) {
        char one[24];
        snprintf(one, sizeof(one), "%s%dx%dx%d", i ? ", " : "", duet__tiles[i].bm, duet__tiles[i].bn,
                 duet__tiles[i].bk);
        strncat(list, one, sizeof(list) - strlen(list) - 1);
    }
    return duet__error(DUET_ERR_INVALID_ARG, "GEMM tile '%s' is not supported (tiles: %s)", s, list);
}

duet_status_t duet_dims_parse(const char *s, int n, int64_t max, int64_t *out_p)
{
    int64_t v[4];
    const char *p = s;
    if (s == NULL || n < 1 || n > 4 || max < 0)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_dims_parse: a string and 1 to 4 numbers");
    for (int i = 0; i < n; i++) {
        if (i > 0 && *p++ != 'x')
            goto bad;
        if (*p < '0' || *p > '9')
            goto bad;
        int64_t x = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            int d = *p - '0';
            if (x > (max - d) / 10)
                goto bad; /* x * 10 + d > max, tested without overflowing */
            x = x * 10 + d;
        }
        v[i] = x;
    }
    if (*p != '\0')
        goto bad;
    memcpy(out_p, v, (size_t)n * sizeof(*v));
    return DUET_OK;
bad:
    return duet__error(DUET_ERR_INVALID_ARG, "not %d integers in [0, %lld] separated by 'x'", n, (long long)max);
}

duet_status_t duet_tile_parse(const char *s, duet_gemm_tile_t *tile_p)
{
    int64_t d[3] = {0, 0, 64};
    if (s == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "missing GEMM tile");
    /* BMxBN or BMxBNxBK; the bound only keeps the numbers in int32 (the tile list decides). */
    const char *x1 = strchr(s, 'x');
    int parts = x1 != NULL && strchr(x1 + 1, 'x') != NULL ? 3 : 2;
    if (duet_dims_parse(s, parts, 1 << 20, d) < 0)
        return duet__error(DUET_ERR_INVALID_ARG, "GEMM tile '%s' is not BMxBN or BMxBNxBK", s);
    duet_gemm_tile_t t = {(int32_t)d[0], (int32_t)d[1], (int32_t)d[2]};
    if (!duet_tile_supported(t))
        return duet__tile_list_error(s);
    *tile_p = t;
    return DUET_OK;
}

int duet_split_k_worth_trying(const duet_hw_t *hw, const duet_workload_t *wl, duet_gemm_tile_t tile, int32_t split_k)
{
    return duet_split_k_worth_trying_on(wl, tile, split_k, hw->n_sms);
}

int duet_split_k_worth_trying_on(const duet_workload_t *wl, duet_gemm_tile_t tile, int32_t split_k, int32_t sms)
{
    if (split_k == 1)
        return 1;
    if (split_k < 1 || split_k > DUET_MAX_SPLIT_K || wl->m <= 0)
        return 0;
    duet_gemm_geom_t g;
    duet_gemm_geom_init(&g, wl->m, wl->n, wl->k, tile, 1, split_k);
    if (!duet_gemm_parts_nonempty(&g))
        return 0;
    return g.tiles_mn * (split_k - 1) < 2 * (int64_t)sms;
}

int duet_config_same(const duet_config_t *a, const duet_config_t *b)
{
    int ska = a->split_k > 1 ? a->split_k : 1, skb = b->split_k > 1 ? b->split_k : 1;
    return a->mode == b->mode && a->num_wgs == b->num_wgs && a->gemm_wgs == b->gemm_wgs && a->comm_wgs == b->comm_wgs &&
           a->tile.bm == b->tile.bm && a->tile.bn == b->tile.bn && a->tile.bk == b->tile.bk && a->cm == b->cm &&
           a->cn == b->cn && a->group_m == b->group_m && ska == skb && (a->stream_k != 0) == (b->stream_k != 0);
}

const char *duet_config_tile_str(const duet_config_t *cfg, char *buf, size_t n)
{
    if (cfg->mode == DUET_MODE_VENDOR)
        snprintf(buf, n, "vendor");
    else if (cfg->stream_k)
        snprintf(buf, n, "%dx%dx%d/sk", (int)cfg->tile.bm, (int)cfg->tile.bn, (int)cfg->tile.bk);
    else if (cfg->split_k > 1)
        snprintf(buf, n, "%dx%dx%d/k%d", (int)cfg->tile.bm, (int)cfg->tile.bn, (int)cfg->tile.bk, (int)cfg->split_k);
    else
        snprintf(buf, n, "%dx%dx%d", (int)cfg->tile.bm, (int)cfg->tile.bn, (int)cfg->tile.bk);
    return buf;
}

double duet_gemm_tile_smem_bytes(duet_gemm_tile_t t, int32_t dtype, int stages)
{
    /* Each pipeline stage holds one BM x BK tile of A and one BN x BK tile of B. */
    return (double)stages * (double)(t.bm + t.bn) * t.bk * duet_dtype_bytes(dtype);
}

/* ------------------------------------------------------------------------------------------ */
/* Workload                                                                                    */
/* ------------------------------------------------------------------------------------------ */

duet_workload_t duet_workload_empty(void)
{
    duet_workload_t wl;
    memset(&wl, 0, sizeof(wl));
    wl.dtype = DUET_DTYPE_BF16;
    wl.coll = DUET_COLL_NONE;
    wl.world = 1;
    return wl;
}

/* Largest extent accepted: keeps every product (m*n, m*k, tiles*bytes) far from int64 overflow
 * and from double rounding. */
#define DUET__MAX_DIM ((int64_t)1 << 24)
#define DUET__MAX_WORLD 1024

duet_status_t duet_workload_validate(const duet_workload_t *wl)
{
    if (wl->dtype < 0 || wl->dtype >= DUET_DTYPE_COUNT)
        return duet__error(DUET_ERR_INVALID_ARG, "dtype %d is not fp16 or bf16", (int)wl->dtype);
    if (wl->coll < 0 || wl->coll >= DUET_COLL_COUNT)
        return duet__error(DUET_ERR_INVALID_ARG, "collective %d is unknown", (int)wl->coll);
    if (wl->m < 0 || wl->n < 0 || wl->k < 0)
        return duet__error(DUET_ERR_INVALID_ARG, "GEMM extents must not be negative (got %lldx%lldx%lld)",
                           (long long)wl->m, (long long)wl->n, (long long)wl->k);
    int zeros = (wl->m == 0) + (wl->n == 0) + (wl->k == 0);
    if (zeros != 0 && zeros != 3)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "GEMM %lldx%lldx%lld: M, N and K must all be positive (or all 0 for no GEMM)",
                           (long long)wl->m, (long long)wl->n, (long long)wl->k);
    if (wl->m > DUET__MAX_DIM || wl->n > DUET__MAX_DIM || wl->k > DUET__MAX_DIM)
        return duet__error(DUET_ERR_INVALID_ARG, "GEMM extents above %lld are not supported", (long long)DUET__MAX_DIM);
    if (wl->world < 1 || wl->world > DUET__MAX_WORLD)
        return duet__error(DUET_ERR_INVALID_ARG, "world %d is outside [1, %d]", (int)wl->world, DUET__MAX_WORLD);
    if (wl->coll == DUET_COLL_NONE) {
        if (wl->mc != 0 || wl->nc != 0)
            return duet__error(DUET_ERR_INVALID_ARG, "a comm tensor %lldx%lld was given without a collective",
                               (long long)wl->mc, (long long)wl->nc);
        if (zeros == 3)
            return duet__error(DUET_ERR_INVALID_ARG, "the workload has neither a GEMM nor a collective");
        return DUET_OK;
    }
    if (wl->mc <= 0 || wl->nc <= 0)
        return duet__error(DUET_ERR_INVALID_ARG, "comm tensor %lldx%lld: both extents must be positive",
                           (long long)wl->mc, (long long)wl->nc);
    if (wl->mc > DUET__MAX_DIM || wl->nc > DUET__MAX_DIM)
        return duet__error(DUET_ERR_INVALID_ARG, "comm extents above %lld are not supported", (long long)DUET__MAX_DIM);
    if (wl->coll == DUET_COLL_BROADCAST && (wl->root < 0 || wl->root >= wl->world))
        return duet__error(DUET_ERR_INVALID_ARG, "broadcast root %d is outside [0, %d)", (int)wl->root, (int)wl->world);
    if ((wl->coll == DUET_COLL_REDUCE_SCATTER || wl->coll == DUET_COLL_ALL_TO_ALL) && wl->mc % wl->world != 0)
        return duet__error(
            DUET_ERR_INVALID_ARG, "%s splits the %lld rows of the comm tensor over %d ranks: %lld %% %d != 0",
            duet_collective_name(wl->coll), (long long)wl->mc, (int)wl->world, (long long)wl->mc, (int)wl->world);
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Configuration                                                                               */
/* ------------------------------------------------------------------------------------------ */

duet_config_t duet_config_default(const duet_hw_t *hw, int32_t mode)
{
    duet_config_t c;
    memset(&c, 0, sizeof(c));
    c.mode = mode;
    (void)duet_config_complete_split(&c, hw, -1, -1, -1); /* nothing given: nothing can disagree */
    /* 256x128x64 where it fits; otherwise the largest listed tile that does. */
    duet_gemm_tile_t pref = {256, 128, 64};
    c.tile = pref;
    if (duet_gemm_tile_smem_bytes(pref, DUET_DTYPE_BF16, hw->gemm_stages) > hw->smem_kib * 1024.0) {
        for (int i = 0; i < duet_tile_count(); i++) {
            duet_gemm_tile_t t = duet_tile_get(i);
            if (duet_gemm_tile_smem_bytes(t, DUET_DTYPE_BF16, hw->gemm_stages) <= hw->smem_kib * 1024.0) {
                c.tile = t;
                break;
            }
        }
    }
    c.cm = 256;
    c.cn = 64;
    c.group_m = 8;
    c.split_k = 1;
    return c;
}

duet_status_t duet_config_complete_split(duet_config_t *cfg, const duet_hw_t *hw, int32_t num_wgs, int32_t gemm_wgs,
                                         int32_t comm_wgs)
{
    int32_t sms = hw->n_sms, n, g, c;
    if (cfg->mode == DUET_MODE_FUSED) {
        /* The reference design's static split: a quarter of the grid starts on the collective. */
        n = num_wgs >= 0 ? num_wgs : sms;
        g = gemm_wgs >= 0 ? gemm_wgs : comm_wgs >= 0 ? n - comm_wgs : n * 3 / 4;
        c = n - g;
        if (comm_wgs >= 0 && comm_wgs != c)
            return duet__error(DUET_ERR_INVALID_ARG, "fused mode: comm_wgs %d disagrees with num_wgs %d - gemm_wgs %d",
                               (int)comm_wgs, (int)n, (int)g);
    } else if (cfg->mode == DUET_MODE_COPY) {
        /* The GEMM on every SM and one copy stream: the collective takes no SM. */
        g = gemm_wgs >= 0 ? gemm_wgs : sms;
        c = comm_wgs >= 0 ? comm_wgs : 1;
        n = g;
    } else {
        /* Two grids: an eighth of the SMs for the collective, the rest for the GEMM. */
        c = comm_wgs >= 0 ? comm_wgs : sms / 8 > 1 ? sms / 8 : 1;
        g = gemm_wgs >= 0 ? gemm_wgs : sms - c > 1 ? sms - c : 1;
        n = g + c;
    }
    cfg->num_wgs = n;
    cfg->gemm_wgs = g;
    cfg->comm_wgs = c;
    return DUET_OK;
}

/* The comm tile is moved with 16-byte vectors along rows, so a row must be a whole number of
 * vectors (8 elements of 2 bytes), and a tile is bounded so its index math stays in 32 bits. */
#define DUET__COMM_TILE_MAX_ELEMS (1 << 20)

/*
 * The bounds on work (DUET_MAX_GEMM_TILES, DUET_MAX_COMM_TILES). Tile counts of a workload the
 * workload rules refuse are not computed here (duet_workload_validate() reports it): within them
 * every count is below 2^53, far from int64 overflow.
 */
static duet_status_t duet__config_check_work(const duet_config_t *cfg, const duet_workload_t *wl)
{
    int in_range = wl->m >= 0 && wl->n >= 0 && wl->k >= 0 && wl->m <= DUET__MAX_DIM && wl->n <= DUET__MAX_DIM &&
                   wl->k <= DUET__MAX_DIM && wl->mc >= 0 && wl->nc >= 0 && wl->mc <= DUET__MAX_DIM &&
                   wl->nc <= DUET__MAX_DIM && wl->world >= 1 && wl->world <= DUET__MAX_WORLD;
    if (!in_range)
        return DUET_OK;
    if (wl->m > 0) {
        duet_gemm_geom_t g;
        duet_gemm_geom_init(&g, wl->m, wl->n, wl->k, cfg->tile, cfg->group_m, cfg->split_k);
        if (g.tiles > DUET_MAX_GEMM_TILES)
            return duet__error(DUET_ERR_INVALID_ARG,
                               "GEMM %lldx%lldx%lld in %dx%d tiles (split_k %d) is %lld tiles, above the limit of %lld "
                               "per plan (DUET_MAX_GEMM_TILES): use a larger tile",
                               (long long)wl->m, (long long)wl->n, (long long)wl->k, (int)cfg->tile.bm,
                               (int)cfg->tile.bn, (int)g.split_k, (long long)g.tiles, (long long)DUET_MAX_GEMM_TILES);
    }
    if (wl->coll > DUET_COLL_NONE && wl->coll < DUET_COLL_COUNT && wl->mc > 0 && wl->nc > 0) {
        duet_comm_geom_t g;
        duet_comm_geom_init(&g, wl->coll, wl->world, 0, 0, wl->mc, wl->nc, cfg->cm, cfg->cn);
        if (g.per_rank > DUET_MAX_COMM_TILES)
            return duet__error(
                DUET_ERR_INVALID_ARG,
                "%s of %lldx%lld in %dx%d comm tiles is %lld tiles per rank, above the limit of %lld per "
                "plan (DUET_MAX_COMM_TILES): use a larger comm tile",
                duet_collective_name(wl->coll), (long long)wl->mc, (long long)wl->nc, (int)cfg->cm, (int)cfg->cn,
                (long long)g.per_rank, (long long)DUET_MAX_COMM_TILES);
    }
    return DUET_OK;
}

/* Copy mode's split: the GEMM grid, and copy streams instead of comm CTAs. */
static duet_status_t duet__config_check_copy(const duet_config_t *cfg, const duet_workload_t *wl)
{
    if (!duet_copy_supports(wl->coll))
        return duet__error(DUET_ERR_INVALID_ARG,
                           "copy mode moves bytes only: %s needs a reduction (use fused, concurrent or vendor mode)",
                           duet_collective_name(wl->coll));
    if (cfg->num_wgs != cfg->gemm_wgs)
        return duet__error(DUET_ERR_INVALID_ARG, "copy mode: num_wgs %d must equal gemm_wgs %d (the copies take no SM)",
                           (int)cfg->num_wgs, (int)cfg->gemm_wgs);
    if (cfg->gemm_wgs < (wl->m > 0 ? 1 : 0))
        return duet__error(DUET_ERR_INVALID_ARG, "copy mode: the GEMM kernel needs gemm_wgs >= 1");
    if (cfg->comm_wgs < 1 || cfg->comm_wgs > DUET_MAX_COPY_STREAMS)
        return duet__error(DUET_ERR_INVALID_ARG, "copy mode: comm_wgs %d copy streams is outside [1, %d]",
                           (int)cfg->comm_wgs, DUET_MAX_COPY_STREAMS);
    return DUET_OK;
}

/* Checks that need no profile; duet_plan_build() runs them too. */
duet_status_t duet__config_check_shape(const duet_config_t *cfg, const duet_workload_t *wl)
{
    if (cfg->mode < 0 || cfg->mode >= DUET_MODE_COUNT)
        return duet__error(DUET_ERR_INVALID_ARG, "mode %d is not fused, concurrent, vendor or copy", (int)cfg->mode);
    /* Vendor mode's tile is the library's kernel (duet_plan_set_gemm_kernel()), not one of duet's. */
    if (cfg->mode == DUET_MODE_VENDOR && !duet_vendor_tile_plausible(cfg->tile))
        return duet__error(DUET_ERR_INVALID_ARG,
                           "vendor kernel tile %dx%dx%d: BM and BN multiples of 8 in [8, 1024], BK in [8, 1024]",
                           (int)cfg->tile.bm, (int)cfg->tile.bn, (int)cfg->tile.bk);
    if (cfg->mode != DUET_MODE_VENDOR && !duet_tile_supported(cfg->tile)) {
        char s[48];
        snprintf(s, sizeof(s), "%dx%dx%d", cfg->tile.bm, cfg->tile.bn, cfg->tile.bk);
        return duet__tile_list_error(s);
    }
    if (cfg->cm < 1 || cfg->cn < 8 || cfg->cn % 8 != 0 || (int64_t)cfg->cm * cfg->cn > DUET__COMM_TILE_MAX_ELEMS)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "comm tile %dx%d: rows >= 1, columns a positive multiple of 8 (16-byte vectors), at most %d "
                           "elements",
                           (int)cfg->cm, (int)cfg->cn, DUET__COMM_TILE_MAX_ELEMS);
    if (cfg->group_m < 1 || cfg->group_m > 64)
        return duet__error(DUET_ERR_INVALID_ARG, "group_m %d is outside [1, 64]", (int)cfg->group_m);
    int has_gemm = wl->m > 0;
    int has_comm = wl->coll != DUET_COLL_NONE;
    if (cfg->split_k < 0 || cfg->split_k > DUET_MAX_SPLIT_K)
        return duet__error(DUET_ERR_INVALID_ARG, "split_k %d is outside [1, %d]", (int)cfg->split_k, DUET_MAX_SPLIT_K);
    if (cfg->stream_k < 0 || cfg->stream_k > 1)
        return duet__error(DUET_ERR_INVALID_ARG, "stream_k %d is not 0 or 1", (int)cfg->stream_k);
    if (cfg->stream_k && (cfg->split_k > 1 || cfg->mode == DUET_MODE_VENDOR))
        return duet__error(DUET_ERR_INVALID_ARG,
                           "stream_k splits the GEMM's last wave itself: it needs split_k 1 and a duet GEMM (not "
                           "vendor mode)");
    if (cfg->split_k > 1 && has_gemm) {
        /* Every part must own at least one K step, or its partial sum would be an empty tile. */
        duet_gemm_geom_t g;
        duet_gemm_geom_init(&g, wl->m, wl->n, wl->k, cfg->tile, cfg->group_m, cfg->split_k);
        if (!duet_gemm_parts_nonempty(&g))
            return duet__error(DUET_ERR_INVALID_ARG,
                               "split_k %d: K = %lld has %lld steps of %d, too few for %d parts of %lld steps each",
                               (int)cfg->split_k, (long long)wl->k, (long long)g.k_iters_total, (int)cfg->tile.bk,
                               (int)cfg->split_k, (long long)g.k_iters);
    }
    DUET_CHECK(duet__config_check_work(cfg, wl));
    if (cfg->mode == DUET_MODE_COPY)
        return duet__config_check_copy(cfg, wl);
    if (cfg->mode == DUET_MODE_FUSED) {
        if (cfg->num_wgs < 1)
            return duet__error(DUET_ERR_INVALID_ARG, "fused mode needs num_wgs >= 1 (got %d)", (int)cfg->num_wgs);
        if (cfg->gemm_wgs < 0 || cfg->gemm_wgs > cfg->num_wgs)
            return duet__error(DUET_ERR_INVALID_ARG, "gemm_wgs %d is outside [0, num_wgs = %d]", (int)cfg->gemm_wgs,
                               (int)cfg->num_wgs);
        if (cfg->comm_wgs != cfg->num_wgs - cfg->gemm_wgs)
            return duet__error(DUET_ERR_INVALID_ARG, "fused mode: comm_wgs %d must equal num_wgs - gemm_wgs = %d",
                               (int)cfg->comm_wgs, (int)(cfg->num_wgs - cfg->gemm_wgs));
    } else {
        if (cfg->gemm_wgs < 0 || cfg->comm_wgs < 0)
            return duet__error(DUET_ERR_INVALID_ARG, "CTA counts must not be negative");
        if (has_gemm && cfg->gemm_wgs < 1)
            return duet__error(DUET_ERR_INVALID_ARG, "%s mode: the GEMM kernel needs gemm_wgs >= 1",
                               duet_mode_name(cfg->mode));
        if (has_comm && cfg->comm_wgs < 1)
            return duet__error(DUET_ERR_INVALID_ARG, "%s mode: the comm kernel needs comm_wgs >= 1",
                               duet_mode_name(cfg->mode));
    }
    return DUET_OK;
}

/* Checks that need the profile: the tile's shared memory and the CTA counts against the SMs. */
static duet_status_t duet__config_check_hw(const duet_config_t *cfg, const duet_workload_t *wl, const duet_hw_t *hw)
{
    /* The vendor library's kernel brings its own pipeline: duet's stages do not describe it. */
    double smem = duet_gemm_tile_smem_bytes(cfg->tile, wl->dtype, hw->gemm_stages);
    if (wl->m > 0 && cfg->mode != DUET_MODE_VENDOR && smem > hw->smem_kib * 1024.0)
        return duet__error(DUET_ERR_INFEASIBLE,
                           "GEMM tile %dx%dx%d needs %.0f KiB of shared memory (%d stages) but %s offers %.0f KiB",
                           (int)cfg->tile.bm, (int)cfg->tile.bn, (int)cfg->tile.bk, smem / 1024.0, hw->gemm_stages,
                           hw->name, hw->smem_kib);
    if (cfg->mode == DUET_MODE_FUSED) {
        /* One persistent CTA per SM: the fused CTA carries the GEMM tile's shared memory. */
        if (cfg->num_wgs > hw->n_sms)
            return duet__error(DUET_ERR_INFEASIBLE,
                               "fused mode runs one persistent CTA per SM: num_wgs %d > %d SMs of %s",
                               (int)cfg->num_wgs, hw->n_sms, hw->name);
    } else {
        if (cfg->gemm_wgs > hw->n_sms)
            return duet__error(DUET_ERR_INFEASIBLE,
                               "%s mode: the GEMM kernel holds one CTA per SM: gemm_wgs %d > %d SMs of %s",
                               duet_mode_name(cfg->mode), (int)cfg->gemm_wgs, hw->n_sms, hw->name);
        if (cfg->mode != DUET_MODE_COPY && cfg->comm_wgs > hw->n_sms * hw->comm_ctas_per_sm)
            return duet__error(DUET_ERR_INFEASIBLE, "%s mode: comm_wgs %d > %d SMs x %d comm CTAs per SM",
                               duet_mode_name(cfg->mode), (int)cfg->comm_wgs, hw->n_sms, hw->comm_ctas_per_sm);
    }
    return DUET_OK;
}

duet_status_t duet_config_validate(const duet_config_t *cfg, const duet_workload_t *wl, const duet_hw_t *hw)
{
    DUET_CHECK(duet_workload_validate(wl));
    DUET_CHECK(duet__config_check_shape(cfg, wl));
    return duet__config_check_hw(cfg, wl, hw);
}

duet_status_t duet_plan_check_hw(const duet_plan_t *plan, const duet_hw_t *hw)
{
    return duet__config_check_hw(&plan->cfg, &plan->wl, hw);
}
