/*
 * Comm tiles: one CTA moves one tile of the plan's comm queue (DESIGN.md, the workload table).
 *
 *   all_gather      push the local tile to every rank at rows rank*mc + r
 *   all_reduce      (owned tile) pull the W partials, add in fp32 in rank order, store, push
 *   reduce_scatter  pull rows rank*mc/W + r from every rank, add in fp32 in rank order, store
 *   all_to_all      source row r goes to rank r / (mc/W), row rank*(mc/W) + r % (mc/W)
 *   broadcast       the root pushes the tile to every rank
 *
 * Accesses are 16-byte vectors (8 elements) when every row is (nc % 8 == 0 and aligned bases),
 * and single elements otherwise. Each thread keeps DUET__COMM_UNROLL vectors in flight. Sums run
 * in a fixed rank order, so every rank's copy of an all_reduce tile has the same bits, and the
 * result does not depend on the mode or on which CTA ran the tile.
 */
#ifndef DUET_BACKEND_COMM_TILE_H
#define DUET_BACKEND_COMM_TILE_H

#include "backend/convert.h"
#include "backend/sync.h"

#define DUET__COMM_UNROLL 4

/* Element-group access: V is the memory type, NE its number of 2-byte elements. */
template <typename V> struct duet__access;
template <> struct duet__access<uint4> {
    static constexpr int NE = 8;
    __device__ static inline void add(float *acc, uint4 v, int dtype)
    {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; i++) {
            acc[2 * i] += duet_to_f32((uint16_t)(w[i] & 0xffffu), dtype);
            acc[2 * i + 1] += duet_to_f32((uint16_t)(w[i] >> 16), dtype);
        }
    }
    __device__ static inline uint4 pack(const float *acc, int dtype)
    {
        uint32_t w[4];
#pragma unroll
        for (int i = 0; i < 4; i++)
            w[i] = (uint32_t)duet_from_f32(acc[2 * i], dtype) | ((uint32_t)duet_from_f32(acc[2 * i + 1], dtype) << 16);
        return make_uint4(w[0], w[1], w[2], w[3]);
    }
};
template <> struct duet__access<uint16_t> {
    static constexpr int NE = 1;
    __device__ static inline void add(float *acc, uint16_t v, int dtype) { acc[0] += duet_to_f32(v, dtype); }
    __device__ static inline uint16_t pack(const float *acc, int dtype) { return duet_from_f32(acc[0], dtype); }
};

/* Sum of element group `off` (element offset) of every rank's src, in rank order 0..W-1. */
template <typename V> __device__ static inline V duet__pull_sum(const duet__kparams_t &p, int64_t off)
{
    typedef duet__access<V> A;
    float acc[A::NE];
#pragma unroll
    for (int i = 0; i < A::NE; i++)
        acc[i] = 0.0f;
    V parts[DUET_OP_MAX_WORLD];
    /* Issue every load before the first add, so the W remote reads overlap. */
#pragma unroll
    for (int q = 0; q < DUET_OP_MAX_WORLD; q++)
        if (q < p.world)
            parts[q] = *(const V *)(duet__peer_ptr(p, p.src, q) + off);
#pragma unroll
    for (int q = 0; q < DUET_OP_MAX_WORLD; q++)
        if (q < p.world)
            A::add(acc, parts[q], p.dtype);
    return A::pack(acc, p.dtype);
}

/* Store element group `v` at element offset `off` of dst on every rank, starting after ours. */
template <typename V> __device__ static inline void duet__push_all(const duet__kparams_t &p, int64_t off, V v)
{
    for (int i = 1; i <= p.world; i++) {
        int q = (p.rank + i) % p.world;
        *(V *)(duet__peer_ptr(p, p.dst, q) + off) = v;
    }
}

template <typename V> __device__ static void duet__comm_tile_body(const duet__kparams_t &p, const duet_comm_rect_t &r)
{
    typedef duet__access<V> A;
    const duet_comm_geom_t &g = p.comm;
    const int64_t nc = g.nc;
    const int per_row = r.cols / A::NE; /* cols is a multiple of NE on the vector path */
    const int total = r.rows * per_row;
    for (int base = threadIdx.x; base < total; base += DUET_THREADS * DUET__COMM_UNROLL) {
        V val[DUET__COMM_UNROLL];
        int64_t row[DUET__COMM_UNROLL], col[DUET__COMM_UNROLL];
        /* Phase 1: every load of the group, so DUET__COMM_UNROLL accesses are in flight. */
#pragma unroll
        for (int u = 0; u < DUET__COMM_UNROLL; u++) {
            int i = base + u * DUET_THREADS;
            if (i >= total)
                continue;
            row[u] = r.row0 + i / per_row;
            col[u] = r.col0 + (int64_t)(i % per_row) * A::NE;
            if (g.coll == DUET_COLL_ALL_REDUCE)
                val[u] = duet__pull_sum<V>(p, row[u] * nc + col[u]);
            else if (g.coll == DUET_COLL_REDUCE_SCATTER)
                val[u] = duet__pull_sum<V>(p, ((int64_t)p.rank * g.chunk + row[u]) * nc + col[u]);
            else
                val[u] = *(const V *)(p.src + row[u] * nc + col[u]);
        }
        /* Phase 2: the stores. */
#pragma unroll
        for (int u = 0; u < DUET__COMM_UNROLL; u++) {
            int i = base + u * DUET_THREADS;
            if (i >= total)
                continue;
            switch (g.coll) {
            case DUET_COLL_ALL_GATHER:
                duet__push_all<V>(p, ((int64_t)p.rank * g.mc + row[u]) * nc + col[u], val[u]);
                break;
            case DUET_COLL_ALL_REDUCE:
            case DUET_COLL_BROADCAST:
                duet__push_all<V>(p, row[u] * nc + col[u], val[u]);
                break;
            case DUET_COLL_REDUCE_SCATTER:
                *(V *)(p.dst + row[u] * nc + col[u]) = val[u];
                break;
            case DUET_COLL_ALL_TO_ALL: {
                /* Per row: a tile may straddle two ranks' chunks when mc/W is not a multiple of cm. */
                int peer = (int)(row[u] / g.chunk);
                int64_t drow = (int64_t)p.rank * g.chunk + (row[u] - (int64_t)peer * g.chunk);
                *(V *)(duet__peer_ptr(p, p.dst, peer) + drow * nc + col[u]) = val[u];
                break;
            }
            default:
                break;
            }
        }
    }
}

/** Run comm-queue position q (all threads of the CTA). */
__device__ static inline void duet__comm_tile(const duet__kparams_t &p, int64_t q)
{
    duet_comm_rect_t r;
    duet_comm_tile(&p.comm, q, &r);
    if (!r.valid)
        return;
    if (p.comm_vec)
        duet__comm_tile_body<uint4>(p, r);
    else
        duet__comm_tile_body<uint16_t>(p, r);
}

#endif /* DUET_BACKEND_COMM_TILE_H */
