/*
 * Comm tiles: one CTA moves one tile of the plan's comm queue (docs/architecture.md, "the comm queue").
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

/*
 * Vectors of a reduction whose loads go together (BV of duet__comm_tile_coll), per kernel: all
 * four of a round in the comm kernel, which has no GEMM tile; one in the fused kernels. There the
 * comm code shares the kernel's 255 registers with the GEMM tile, and ptxas allocates the whole
 * kernel at once: with four, the 128x256 tile's spills grew from 196 to 1964 bytes and
 * 4096x512x8192 took 0.0968 ms against 0.0741; with two, 196 -> 208 bytes and 2-4 % on the
 * small-M GEMMs, more than one run could tell from noise. One H200, both ranks on it
 * (measured 2026-12, as tools/gpu.sh comm runs it), 64 MB reduce_scatter alone on 4 CTAs: 1.70 ms with one, 1.37 with
 * two, 0.88 with four.
 */
#define DUET__COMM_BATCH(BM) ((BM) == 0 ? 4 : 1)

/* duet__sum_parts's DT for "the element type of the operation" (a run-time value). */
#define DUET__DT_RUNTIME (-1)

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

/*
 * What a tile reads of the launch parameters, in registers. The tile runs inside a function
 * that is not inlined (kernels.h), where `p` is a generic pointer: reading p.src or p.src_at[q]
 * per element was a dependent load in front of every data access (seen in the SASS).
 *
 * WMAX: a compile-time bound on the world size (2, 4 or DUET_OP_MAX_WORLD). Every per-rank loop
 * below runs to WMAX with a run-time guard; with WMAX = 8 at W = 2 the guarded-off ranks were most
 * of a tile's instructions (about 800 PTX instructions per round of DUET__COMM_UNROLL vectors in
 * an all_gather), and a CTA moved 7 GB/s where the bare loop moves 21 (bench/micro/nvlink_rate.cu).
 */
template <int WMAX> struct duet__comm_view {
    char *src_base[WMAX], *dst_base[WMAX]; /* src and dst on every rank, as mapped here */
    int64_t nc, mc, chunk;
    int32_t world, rank, dtype;
    __device__ inline explicit duet__comm_view(const duet__kparams_t &p)
    {
#pragma unroll
        for (int q = 0; q < WMAX; q++) {
            const int r = q < p.world ? q : 0;
            src_base[q] = (char *)p.src_at[r];
            dst_base[q] = p.dst_at[r];
        }
        nc = p.comm.nc;
        mc = p.comm.mc;
        chunk = p.comm.chunk;
        world = p.world;
        rank = p.rank;
        dtype = p.dtype;
    }
    /* Rank q's entry of a per-rank array. The rank is a run-time value: the pointer is picked by
     * an unrolled select, so the arrays stay in registers instead of local memory. */
    __device__ static inline char *pick(char *const (&a)[WMAX], int q)
    {
        char *b = a[0];
#pragma unroll
        for (int i = 1; i < WMAX; i++)
            if (q == i)
                b = a[i];
        return b;
    }
    /* Element `off` of src (or dst) on rank q. */
    template <typename V> __device__ inline const V *src(int q, int64_t off) const
    {
        return (const V *)(pick(src_base, q) + off * 2);
    }
    template <typename V> __device__ inline V *dst(int q, int64_t off) const
    {
        return (V *)(pick(dst_base, q) + off * 2);
    }
};

/* The sum of W element groups, one per rank, in rank order 0..W-1. DT: the element type as a
 * compile-time value, so the conversions hold no branch (with a run-time type every element's
 * conversion was a branch: 192 in a round of four vectors at W = 2), or DUET__DT_RUNTIME:
 * v.dtype (one instantiation for both types, where code size and registers matter more). */
template <typename V, int WMAX, int DT>
__device__ static inline V duet__sum_parts(const duet__comm_view<WMAX> &v, const V (&parts)[WMAX])
{
    typedef duet__access<V> A;
    float acc[A::NE];
#pragma unroll
    for (int i = 0; i < A::NE; i++)
        acc[i] = 0.0f;
#pragma unroll
    for (int q = 0; q < WMAX; q++)
        if (q < v.world)
            A::add(acc, parts[q], DT == DUET__DT_RUNTIME ? v.dtype : DT);
    return A::pack(acc, DT == DUET__DT_RUNTIME ? v.dtype : DT);
}

/* Element group `off` of every rank's src (the W loads of one vector). */
template <typename V, int WMAX>
__device__ static inline void duet__pull_parts(const duet__comm_view<WMAX> &v, int64_t off, V (&parts)[WMAX])
{
#pragma unroll
    for (int q = 0; q < WMAX; q++)
        if (q < v.world)
            parts[q] = *(const V *)(v.src_base[q] + off * 2);
}

/* Store element group `x` at element offset `off` of dst on every rank, starting after ours. */
template <typename V, int WMAX>
__device__ static inline void duet__push_all(const duet__comm_view<WMAX> &v, int64_t off, V x)
{
#pragma unroll
    for (int i = 1; i <= WMAX; i++)
        if (i <= v.world) {
            int q = v.rank + i;
            q = q >= v.world ? q - v.world : q;
            *v.template dst<V>(q, off) = x;
        }
}

/*
 * One tile of collective COLL (a compile-time value: the element loops then hold no branch on
 * the collective, and the compiler issues a round's loads back to back). Offsets are in
 * elements of the matrix the tiles cover (row * nc + col).
 */
template <typename V, int COLL, int WMAX, int DT, int BV>
__device__ static void duet__comm_tile_coll(const duet__comm_view<WMAX> &v, const duet_comm_rect_t &r)
{
    constexpr bool REDUCE = COLL == DUET_COLL_ALL_REDUCE || COLL == DUET_COLL_REDUCE_SCATTER;
    /* A reduction issues the loads of BV vectors (each from every rank) before the first add, so
     * a thread waits one remote round trip per BV vectors: with the adds of vector u between the
     * loads of u and u + 1 (BV = 1), a reduce_scatter CTA moved 2.7 GB/s where the bare pull loop
     * moves 11.5 (bench/micro/nvlink_rate.cu). BV comes from the kernel (DUET__COMM_BATCH in
     * kernels.h); at a world bound above 2 each vector's W loads still go alone (registers). */
    constexpr bool BATCH = REDUCE && WMAX <= 2 && BV > 1;
    static_assert(DUET__COMM_UNROLL % BV == 0, "a round is whole batches");
    typedef duet__access<V> A;
    const int per_row = r.cols / A::NE; /* cols is a multiple of NE on the vector path */
    const int total = r.rows * per_row;
    /* Where this rank's rows land or come from, per collective. */
    const int64_t shift = COLL == DUET_COLL_ALL_GATHER       ? (int64_t)v.rank * v.mc * v.nc
                          : COLL == DUET_COLL_REDUCE_SCATTER ? (int64_t)v.rank * v.chunk * v.nc
                                                             : 0;
    for (int base = threadIdx.x; base < total; base += DUET_THREADS * DUET__COMM_UNROLL) {
        V val[DUET__COMM_UNROLL];
        int64_t row[DUET__COMM_UNROLL], off[DUET__COMM_UNROLL];
#pragma unroll
        for (int u = 0; u < DUET__COMM_UNROLL; u++) {
            const int i = base + u * DUET_THREADS;
            const int rr = i / per_row;
            row[u] = r.row0 + rr;
            off[u] = row[u] * v.nc + r.col0 + (int64_t)(i - rr * per_row) * A::NE;
        }
        /* Phase 1: every load of the group, so DUET__COMM_UNROLL accesses are in flight. */
        if constexpr (BATCH) {
#pragma unroll
            for (int u0 = 0; u0 < DUET__COMM_UNROLL; u0 += BV) {
                V parts[BV][WMAX];
#pragma unroll
                for (int u = u0; u < u0 + BV; u++)
                    if (base + u * DUET_THREADS < total)
                        duet__pull_parts<V, WMAX>(v, shift + off[u], parts[u - u0]);
#pragma unroll
                for (int u = u0; u < u0 + BV; u++)
                    if (base + u * DUET_THREADS < total)
                        val[u] = duet__sum_parts<V, WMAX, DT>(v, parts[u - u0]);
            }
        } else {
#pragma unroll
            for (int u = 0; u < DUET__COMM_UNROLL; u++) {
                if (base + u * DUET_THREADS >= total)
                    continue;
                if constexpr (REDUCE) {
                    V parts[WMAX];
                    duet__pull_parts<V, WMAX>(v, shift + off[u], parts);
                    val[u] = duet__sum_parts<V, WMAX, DT>(v, parts);
                } else {
                    val[u] = *v.template src<V>(v.rank, off[u]);
                }
            }
        }
        /* Phase 2: the stores. */
#pragma unroll
        for (int u = 0; u < DUET__COMM_UNROLL; u++) {
            if (base + u * DUET_THREADS >= total)
                continue;
            if (COLL == DUET_COLL_ALL_GATHER) {
                duet__push_all<V, WMAX>(v, shift + off[u], val[u]);
            } else if (COLL == DUET_COLL_ALL_REDUCE || COLL == DUET_COLL_BROADCAST) {
                duet__push_all<V, WMAX>(v, off[u], val[u]);
            } else if (COLL == DUET_COLL_REDUCE_SCATTER) {
                *v.template dst<V>(v.rank, off[u]) = val[u];
            } else if (COLL == DUET_COLL_ALL_TO_ALL) {
                /* Per row: a tile may straddle two ranks' chunks when mc/W is not a multiple of cm. */
                const int peer = (int)(row[u] / v.chunk);
                const int64_t drow = (int64_t)v.rank * v.chunk + (row[u] - (int64_t)peer * v.chunk);
                *v.template dst<V>(peer, off[u] + (drow - row[u]) * v.nc) = val[u];
            }
        }
    }
}

/* The batched reductions per element type (their conversions); the rest once for both. */
template <typename V, int COLL, int WMAX, int BV>
__device__ static void duet__comm_tile_dt(const duet__comm_view<WMAX> &v, const duet_comm_rect_t &r)
{
    if constexpr (BV == 1)
        duet__comm_tile_coll<V, COLL, WMAX, DUET__DT_RUNTIME, BV>(v, r);
    else if (v.dtype == DUET_DTYPE_BF16)
        duet__comm_tile_coll<V, COLL, WMAX, DUET_DTYPE_BF16, BV>(v, r);
    else
        duet__comm_tile_coll<V, COLL, WMAX, DUET_DTYPE_FP16, BV>(v, r);
}

template <typename V, int WMAX, int BV>
__device__ static void duet__comm_tile_w(const duet__kparams_t &p, const duet_comm_rect_t &r)
{
    const duet__comm_view<WMAX> v(p);
    switch (p.comm.coll) {
    case DUET_COLL_ALL_GATHER:
        duet__comm_tile_coll<V, DUET_COLL_ALL_GATHER, WMAX, DUET_DTYPE_FP16, 1>(v, r);
        break;
    case DUET_COLL_ALL_REDUCE:
        duet__comm_tile_dt<V, DUET_COLL_ALL_REDUCE, WMAX, BV>(v, r);
        break;
    case DUET_COLL_REDUCE_SCATTER:
        duet__comm_tile_dt<V, DUET_COLL_REDUCE_SCATTER, WMAX, BV>(v, r);
        break;
    case DUET_COLL_ALL_TO_ALL:
        duet__comm_tile_coll<V, DUET_COLL_ALL_TO_ALL, WMAX, DUET_DTYPE_FP16, 1>(v, r);
        break;
    case DUET_COLL_BROADCAST:
        duet__comm_tile_coll<V, DUET_COLL_BROADCAST, WMAX, DUET_DTYPE_FP16, 1>(v, r);
        break;
    default:
        break;
    }
}

/* The tile for the world size: the smallest compiled bound that holds it. */
template <typename V, int BV>
__device__ static void duet__comm_tile_body(const duet__kparams_t &p, const duet_comm_rect_t &r)
{
    if (p.world <= 2)
        duet__comm_tile_w<V, 2, BV>(p, r);
    else if (p.world <= 4)
        duet__comm_tile_w<V, 4, BV>(p, r);
    else
        duet__comm_tile_w<V, DUET_OP_MAX_WORLD, BV>(p, r);
}

/** Run comm-queue position q (all threads of the CTA). */
template <int BV> __device__ static inline void duet__comm_tile(const duet__kparams_t &p, int64_t q)
{
    duet_comm_rect_t r;
    duet_comm_tile(&p.comm, q, &r);
    if (!r.valid)
        return;
    if (p.comm_vec)
        duet__comm_tile_body<uint4, BV>(p, r);
    else
        duet__comm_tile_body<uint16_t, BV>(p, r);
}

#endif /* DUET_BACKEND_COMM_TILE_H */
