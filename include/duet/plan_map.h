/*
 * duet: the plan's index arithmetic, shared by the simulator and the GPU kernels.
 *
 * "The tile id a CTA dequeues in the kernel is the tile id the simulator dequeues": both sides
 * turn a queue position into a tile with the functions below, so tiling and tile order are
 * decided once; the queue policy is the plan's (duet_kernel_geom_t), read through the last two
 * functions. Everything here is header-only, allocation-free and compiles as C11, as HIP device
 * code and as CUDA device code.
 */
#ifndef DUET_PLAN_MAP_H
#define DUET_PLAN_MAP_H

#include <stdint.h>

#include "duet/types.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define DUET_HD static inline __host__ __device__
#else
#define DUET_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** ceil(a / b) for a >= 0, b > 0. */
DUET_HD int64_t duet_cdiv(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

DUET_HD int64_t duet_min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/** Element size in bytes of a duet_dtype_t (both supported types are 2 bytes). */
DUET_HD int32_t duet_dtype_bytes(int32_t dtype)
{
    return dtype == DUET_DTYPE_FP16 || dtype == DUET_DTYPE_BF16 ? 2 : 0;
}

/* ------------------------------------------------------------------------------------------ */
/* GEMM tiles                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/** GEMM tiling of one workload under one configuration. */
typedef struct duet_gemm_geom {
    int64_t m, n, k;        /* problem extents, elements */
    int32_t bm, bn, bk;     /* tile */
    int32_t group_m;        /* swizzle group height, in tile rows */
    int32_t split_k;        /* K parts per C tile (>= 1) */
    int64_t grid_m, grid_n; /* C tiles along M and N */
    int64_t tiles_mn;       /* grid_m * grid_n: C tiles */
    int64_t tiles;          /* tiles_mn * split_k: length of the GEMM queue */
    int64_t k_iters_total;  /* ceil(k / bk): K steps of a whole C tile */
    int64_t k_iters;        /* ceil(k_iters_total / split_k): K steps of one K part (the last
                             * part of a C tile may have fewer) */
    int64_t split_from;     /* C tiles (in dequeue order) before this one run whole, the others in
                             * split_k parts: 0 for a K split of every C tile (and without one);
                             * > 0 for stream-K, whose data-parallel tiles come first and whose
                             * last wave's C tiles share their K steps as parts
                             * (duet_gemm_geom_split_tail) */
} duet_gemm_geom_t;

/** Largest K split a configuration may ask for. */
#define DUET_MAX_SPLIT_K 16

/**
 * Fill a GEMM geometry. split_k < 1 is read as 1. A split that leaves a part without K steps
 * (duet_gemm_parts_nonempty() false) is the caller's to reject (duet_config_validate()).
 */
DUET_HD void duet_gemm_geom_init(duet_gemm_geom_t *g, int64_t m, int64_t n, int64_t k, duet_gemm_tile_t t,
                                 int32_t group_m, int32_t split_k)
{
    g->m = m;
    g->n = n;
    g->k = k;
    g->bm = t.bm;
    g->bn = t.bn;
    g->bk = t.bk;
    g->group_m = group_m < 1 ? 1 : group_m;
    g->split_k = split_k < 1 ? 1 : split_k;
    if (m > 0 && n > 0 && k > 0 && t.bm > 0 && t.bn > 0 && t.bk > 0) {
        g->grid_m = duet_cdiv(m, t.bm);
        g->grid_n = duet_cdiv(n, t.bn);
        g->k_iters_total = duet_cdiv(k, t.bk);
        g->k_iters = duet_cdiv(g->k_iters_total, g->split_k);
    } else {
        g->grid_m = g->grid_n = g->k_iters_total = g->k_iters = 0;
    }
    g->tiles_mn = g->grid_m * g->grid_n;
    g->tiles = g->tiles_mn * g->split_k;
    g->split_from = 0;
}

/**
 * Stream-K (data-parallel + K-split tail): the first `split_from` C tiles in dequeue order run
 * whole, and each later one runs as `parts` K parts, consecutive in the queue after the whole
 * tiles. The geometry must come from duet_gemm_geom_init() with split_k 1; parts < 2 or
 * split_from outside [0, tiles_mn) leaves it unchanged. The plan decides both
 * (duet_plan_stream_k_choose).
 */
DUET_HD void duet_gemm_geom_split_tail(duet_gemm_geom_t *g, int64_t split_from, int32_t parts)
{
    if (parts < 2 || split_from < 0 || split_from >= g->tiles_mn || g->split_k != 1)
        return;
    g->split_k = parts;
    g->split_from = split_from;
    g->k_iters = duet_cdiv(g->k_iters_total, parts);
    g->tiles = split_from + (g->tiles_mn - split_from) * parts;
}

/** C tiles that run in K parts: every one with a K split, the tail ones with stream-K, else 0. */
DUET_HD int64_t duet_gemm_split_tiles(const duet_gemm_geom_t *g)
{
    return g->split_k > 1 ? g->tiles_mn - g->split_from : 0;
}

/** 1 if C tile `mn` runs in K parts (its partial sums go through the workspace). */
DUET_HD int duet_gemm_mn_split(const duet_gemm_geom_t *g, int64_t mn)
{
    return g->split_k > 1 && mn >= g->split_from;
}

/** 1 if queue tile `tile` is a K part (the whole C tiles come first in the queue). */
DUET_HD int duet_gemm_tile_is_part(const duet_gemm_geom_t *g, int64_t tile)
{
    return g->split_k > 1 && tile >= g->split_from;
}

/** The workspace slot of a C tile that runs in K parts: its place among those tiles. */
DUET_HD int64_t duet_gemm_split_slot(const duet_gemm_geom_t *g, int64_t mn)
{
    return mn - g->split_from;
}

/** 1 if every K part of a C tile has at least one K step (always true without a split). */
DUET_HD int duet_gemm_parts_nonempty(const duet_gemm_geom_t *g)
{
    return (int64_t)(g->split_k - 1) * g->k_iters < g->k_iters_total;
}

/**
 * Queue tile -> (C tile, K part). The split_k parts of one C tile are consecutive in the queue,
 * so they run side by side and the C tile is complete early, as in the unsplit order. A whole
 * C tile (before split_from) is its part 0.
 */
DUET_HD void duet_gemm_tile_split(const duet_gemm_geom_t *g, int64_t tile, int64_t *mn, int32_t *part)
{
    if (tile < g->split_from) {
        *mn = tile;
        *part = 0;
        return;
    }
    const int64_t u = tile - g->split_from;
    *mn = g->split_from + u / g->split_k;
    *part = (int32_t)(u % g->split_k);
}

/** K range of part `part` of a C tile, in elements: [*k0, *k1), k0 a multiple of bk. */
DUET_HD void duet_gemm_part_krange(const duet_gemm_geom_t *g, int32_t part, int64_t *k0, int64_t *k1)
{
    int64_t step = g->k_iters * g->bk;
    *k0 = duet_min64((int64_t)part * step, g->k);
    *k1 = duet_min64(*k0 + step, g->k);
}

/** K range of queue tile `tile`, in elements: the whole of K for a whole C tile, else its part's. */
DUET_HD void duet_gemm_tile_krange(const duet_gemm_geom_t *g, int64_t tile, int64_t *k0, int64_t *k1)
{
    int64_t mn;
    int32_t part;
    duet_gemm_tile_split(g, tile, &mn, &part);
    if (!duet_gemm_mn_split(g, mn)) {
        *k0 = 0;
        *k1 = g->k;
        return;
    }
    duet_gemm_part_krange(g, part, k0, k1);
}

/**
 * The GROUP_M swizzle of the reference design: consecutive C tiles walk down group_m tile-rows
 * of one tile-column before moving right, so CTAs that run together share rows of A and columns
 * of B in L2. The last group may be shorter than group_m. `tile` is a queue tile: its C tile is
 * duet_gemm_tile_split's (tile / split_k without stream-K).
 */
DUET_HD void duet_gemm_tile_coords(const duet_gemm_geom_t *g, int64_t tile, int64_t *pid_m, int64_t *pid_n)
{
    int64_t mn;
    int32_t part;
    duet_gemm_tile_split(g, tile, &mn, &part);
    int64_t per_group = (int64_t)g->group_m * g->grid_n;
    int64_t group = mn / per_group;
    int64_t first_m = group * g->group_m;
    int64_t height = duet_min64(g->grid_m - first_m, g->group_m);
    int64_t in_group = mn % per_group;
    *pid_m = first_m + in_group % height;
    *pid_n = in_group / height;
}

/* ------------------------------------------------------------------------------------------ */
/* Comm tiles                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/**
 * Comm tiling of one rank's share of a collective. The tiles cover a matrix of rows x nc
 * elements: the source tensor (all_gather, all_reduce, all_to_all, broadcast) or this rank's
 * output block (reduce_scatter), in row-major tile order.
 */
typedef struct duet_comm_geom {
    int32_t coll; /* duet_collective_t */
    int32_t world, rank, root;
    int32_t cm, cn;         /* comm tile, elements */
    int64_t mc, nc;         /* per-rank source tensor, elements */
    int64_t rows;           /* rows the tiles cover: mc, or mc / world for reduce_scatter */
    int64_t chunk;          /* all_to_all and reduce_scatter: mc / world rows per rank; else 0 */
    int64_t grid_m, grid_n; /* tiles over rows x nc */
    int64_t total;          /* grid_m * grid_n */
    int64_t per_rank;       /* all_reduce: tiles each rank owns, ceil(total / world); else total */
    int64_t queue_len;      /* length of this rank's comm queue */
} duet_comm_geom_t;

/** One comm tile, in the coordinates of the matrix the tiles cover. */
typedef struct duet_comm_rect {
    int64_t tile;       /* tile index in row-major order over grid_m x grid_n */
    int64_t row0, col0; /* first element */
    int32_t rows, cols; /* valid extent, <= cm x cn at the bottom and right edges */
    int32_t valid;      /* 0: a queue slot with nothing to move (all_reduce padding) */
} duet_comm_rect_t;

/**
 * Fill a comm geometry. The caller has validated the workload (duet_workload_validate()), so
 * mc is divisible by world where the collective needs it.
 */
DUET_HD void duet_comm_geom_init(duet_comm_geom_t *g, int32_t coll, int32_t world, int32_t rank, int32_t root,
                                 int64_t mc, int64_t nc, int32_t cm, int32_t cn)
{
    g->coll = coll;
    g->world = world;
    g->rank = rank;
    g->root = root;
    g->cm = cm;
    g->cn = cn;
    g->mc = mc;
    g->nc = nc;
    g->chunk = (coll == DUET_COLL_ALL_TO_ALL || coll == DUET_COLL_REDUCE_SCATTER) ? mc / world : 0;
    g->rows = coll == DUET_COLL_REDUCE_SCATTER ? g->chunk : mc;
    if (coll == DUET_COLL_NONE || g->rows <= 0 || nc <= 0 || cm <= 0 || cn <= 0) {
        g->grid_m = g->grid_n = g->total = g->per_rank = g->queue_len = 0;
        return;
    }
    g->grid_m = duet_cdiv(g->rows, cm);
    g->grid_n = duet_cdiv(nc, cn);
    g->total = g->grid_m * g->grid_n;
    g->per_rank = coll == DUET_COLL_ALL_REDUCE ? duet_cdiv(g->total, world) : g->total;
    if (coll == DUET_COLL_BROADCAST)
        g->queue_len = rank == root ? g->total : 0;
    else
        g->queue_len = g->per_rank;
}

/**
 * Map position q of this rank's comm queue to a tile. all_reduce: rank r owns the contiguous
 * block of tiles [r * per_rank, (r + 1) * per_rank); the last rank's block may run past the end,
 * and those slots are not valid.
 */
DUET_HD void duet_comm_tile(const duet_comm_geom_t *g, int64_t q, duet_comm_rect_t *r)
{
    int64_t t = g->coll == DUET_COLL_ALL_REDUCE ? (int64_t)g->rank * g->per_rank + q : q;
    r->tile = t;
    r->valid = t < g->total;
    if (!r->valid) {
        r->row0 = r->col0 = 0;
        r->rows = r->cols = 0;
        return;
    }
    int64_t tm = t / g->grid_n, tn = t % g->grid_n;
    r->row0 = tm * g->cm;
    r->col0 = tn * g->cn;
    r->rows = (int32_t)duet_min64(g->cm, g->rows - r->row0);
    r->cols = (int32_t)duet_min64(g->cn, g->nc - r->col0);
}

/* ------------------------------------------------------------------------------------------ */
/* Copy mode: the collective as whole-block copies on the copy engines                         */
/* ------------------------------------------------------------------------------------------ */

/*
 * In copy mode (DUET_MODE_COPY) the comm queue holds copies, not tiles: each moves one contiguous
 * block of rows of the per-rank source src[mc, nc] into the output of one rank (this rank's own
 * for the local copy), where the rows are contiguous too. The remote copies come first, peer
 * rank + 1, rank + 2, ... (mod world), so that the ranks do not all write into one peer at once;
 * the local copy comes last. The simulator and the backend walk the same list.
 */

/** Largest copy-stream count (comm_wgs) of a copy-mode configuration. */
#define DUET_MAX_COPY_STREAMS 8

/** One copy, in elements of the collective's dtype. */
typedef struct duet_copy {
    int32_t peer;    /* rank whose output receives the block (this rank: the local copy) */
    int64_t src_off; /* first element in this rank's src */
    int64_t dst_off; /* first element in the peer's output */
    int64_t elems;   /* elements moved (whole rows of nc) */
} duet_copy_t;

/** Whether copy mode can run a collective: it moves bytes only (no reduction). */
DUET_HD int duet_copy_supports(int32_t coll)
{
    return coll == DUET_COLL_NONE || coll == DUET_COLL_ALL_GATHER || coll == DUET_COLL_ALL_TO_ALL ||
           coll == DUET_COLL_BROADCAST;
}

/** The copies of `rank`: world for all_gather and all_to_all and for the broadcast root, else 0. */
DUET_HD int64_t duet_copy_count(int32_t coll, int32_t world, int32_t rank, int32_t root)
{
    if (coll == DUET_COLL_ALL_GATHER || coll == DUET_COLL_ALL_TO_ALL)
        return world;
    return coll == DUET_COLL_BROADCAST && rank == root ? world : 0;
}

/**
 * Fill the geometry of copy mode's comm queue: queue_len is the rank's copy count; the tile
 * fields (cm, cn, grids, total, per_rank) are 0, as no tile runs.
 */
DUET_HD void duet_copy_geom_init(duet_comm_geom_t *g, int32_t coll, int32_t world, int32_t rank, int32_t root,
                                 int64_t mc, int64_t nc)
{
    g->coll = coll;
    g->world = world;
    g->rank = rank;
    g->root = root;
    g->cm = g->cn = 0;
    g->mc = mc;
    g->nc = nc;
    g->rows = mc;
    g->chunk = coll == DUET_COLL_ALL_TO_ALL ? mc / world : 0;
    g->grid_m = g->grid_n = g->total = g->per_rank = 0;
    g->queue_len = duet_copy_count(coll, world, rank, root);
}

/**
 * Copy i (0 <= i < queue_len) of a copy-mode comm geometry.
 * all_gather: src (all mc rows) to rows rank*mc of every rank's [world*mc, nc] output.
 * all_to_all: src rows p*mc/world to rows rank*mc/world of rank p's output.
 * broadcast (root): src to every rank's output, whole.
 */
DUET_HD void duet_copy_get(const duet_comm_geom_t *g, int64_t i, duet_copy_t *c)
{
    int32_t w = g->world;
    /* i < world - 1: the remote copies, rank + 1 first; i = world - 1: the local one. */
    int32_t peer = (int32_t)((g->rank + 1 + i) % w);
    c->peer = peer;
    switch (g->coll) {
    case DUET_COLL_ALL_GATHER:
        c->src_off = 0;
        c->dst_off = (int64_t)g->rank * g->mc * g->nc;
        c->elems = g->mc * g->nc;
        break;
    case DUET_COLL_ALL_TO_ALL:
        c->src_off = (int64_t)peer * g->chunk * g->nc;
        c->dst_off = (int64_t)g->rank * g->chunk * g->nc;
        c->elems = g->chunk * g->nc;
        break;
    default: /* broadcast */
        c->src_off = 0;
        c->dst_off = 0;
        c->elems = g->mc * g->nc;
        break;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Queue policy                                                                                */
/* ------------------------------------------------------------------------------------------ */

/*
 * The plan decides the policy (duet_plan_t.kernel, model/plan.c); the executors only read it
 * through these two functions, so a CTA of the simulator and the same CTA of the kernel start on
 * the same queue and steal alike.
 */

/** The queue CTA `cta` (numbered within its kernel, from 0) drains first. */
DUET_HD int32_t duet_kernel_home(const duet_kernel_geom_t *k, int32_t cta)
{
    return cta < k->gemm_home ? DUET_QUEUE_GEMM : DUET_QUEUE_COMM;
}

/** How many queues a CTA of the kernel drains in turn: its home queue, and the other one if it steals. */
DUET_HD int32_t duet_kernel_queues(const duet_kernel_geom_t *k)
{
    return k->steal ? 2 : 1;
}

#ifdef __cplusplus
}
#endif
#endif /* DUET_PLAN_MAP_H */
