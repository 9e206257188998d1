/*
 * The K split (plan split_k > 1): the split_k parts of one C tile run as separate GEMM-queue
 * tiles, each over its own K range (duet_gemm_part_krange), possibly on different CTAs at the
 * same time. Each part stores its fp32 accumulators in its own workspace block and counts itself
 * in; the part that arrives last sums every block in part order and writes C. No part ever
 * waits for another, so a persistent CTA is never blocked (the work-stealing loop orders no
 * tiles), and C has the same bits whichever part finishes last.
 *
 * The wgmma tile (gemm_hopper.h), up to split_k <= SK_OWN_MAX, changes one thing: the last part
 * in queue order (part split_k - 1) always sums. It keeps its own block in shared memory, waits
 * until the parts before it have counted themselves in, copies only their blocks, and adds its
 * own last, its place in part order (the same bits). The parts it waits for were claimed before
 * it and never wait themselves, so this cannot deadlock; it saves the summing SM storing and
 * reading back one block (duet__bulk_splitk_finish).
 *
 * Stream-K (plan_map.h, duet_gemm_geom_split_tail) runs the last wave's C tiles this way and the
 * others whole; the workspace holds blocks of the split C tiles only, by their slot.
 *
 * A block is one pass of the tile, PM x BN fp32, row-major (the wgmma tile does not store rows
 * beyond M): each tile path stores its fragments there, and the sum streams through it,
 * independent of the fragment layout: on NVIDIA by bulk copies into shared memory
 * (duet__bulk_splitk_finish, gemm_hopper.h), on AMD with 16-byte loads (duet__splitk_finish).
 * Keeping the sum out of the accumulator registers matters: summing into them needs the loaded
 * blocks live beside 128 accumulators, and ptxas then spilled 0.9-2 KB per thread in every tile
 * (measured with -Xptxas -v).
 */
#ifndef DUET_BACKEND_SPLITK_H
#define DUET_BACKEND_SPLITK_H

#include "backend/convert.h"
#include "backend/internal.h"

/** The workspace block of (C tile mn, pass, part): PM x BN floats. Here and below, mn is the C
 * tile's slot among the split ones (duet_gemm_split_slot: the C tile itself without stream-K). */
__device__ static inline float *duet__splitk_block(const duet__kparams_t &p, int64_t mn, int pass, int passes, int part,
                                                   int block_elems)
{
    return p.sk_ws + ((mn * passes + pass) * p.gemm.split_k + part) * (int64_t)block_elems;
}

/** Store two horizontally adjacent accumulators at `at` (8-byte aligned) of a block. */
__device__ static inline void duet__splitk_put2(float *at, float v0, float v1)
{
    /* .cg: the reader is another SM. */
#if defined(DUET_GPU_NVIDIA)
    __stcg((float2 *)at, make_float2(v0, v1));
#else
    *(float2 *)at = make_float2(v0, v1);
#endif
}

/**
 * The part has stored its block (every thread, before this call). Count it in.
 * @return true in the CTA whose part completed the C tile's pass; it then calls
 * duet__splitk_finish.
 */
__device__ static inline bool duet__splitk_arrive(const duet__kparams_t &p, int64_t mn, int pass, int passes)
{
    __shared__ int s_last;
    /* Release: every thread's block stores are visible device-wide before the count. */
    __threadfence();
    duet_dev_sync();
    if (threadIdx.x == 0) {
        uint32_t *cnt = &p.sk_cnt[mn * passes + pass];
        const uint32_t before = atomicAdd(cnt, 1u);
        s_last = before == (uint32_t)(p.gemm.split_k - 1);
        /* Every part has counted itself: nothing touches the counter again in this operation,
         * and the next one finds it at zero. */
        if (s_last)
            *cnt = 0;
    }
    duet_dev_sync();
    const bool last = s_last != 0;
    /* Acquire (last part): the other parts' blocks are read after their counts were seen. */
    if (last)
        __threadfence();
    return last;
}

/* Part q's eight values (lo, hi) into the running sums s, in part order: part 0 sets them. Both
 * sums (duet__splitk_finish, duet__bulk_splitk_finish) add this way, so C has the same bits. */
__device__ static inline void duet__sum8_add(float (&s)[8], float4 lo, float4 hi, int q)
{
    const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int i = 0; i < 8; i++)
        s[i] = q == 0 ? v[i] : s[i] + v[i];
}

/*
 * Where the K-split sums store C, read out of the kernel parameters once. The sums are functions
 * that are not inlined, so they reach the parameters through a generic pointer, and the compiler
 * reloaded C's address, N, the 16-byte flag and the element type from it after every store to C
 * (which might alias them; seen in the PTX), and branched on the type per element. Measured (one
 * H200, bench/results/archive/2026-12-01-h200x1/onegpu-h200-hoist.txt): the summing parts of
 * 4096x512x8192 57.4 -> 55.9 us, of a sum loop that costs about 8 us in all (onegpu-h200-sumdiag.txt
 * in the same folder).
 */
typedef struct duet__c_out {
    uint16_t *c;
    int64_t n;
    int32_t vec16; /* p.c_vec16 */
    int32_t vec4;  /* p.c_vec: N even, C 4-byte aligned */
    int32_t bf16;  /* the element type is bf16 (else fp16) */
} duet__c_out_t;

__device__ static inline duet__c_out_t duet__c_out(const duet__kparams_t &p)
{
    duet__c_out_t o = {p.c, p.gemm.n, p.c_vec16, p.c_vec, p.dtype == DUET_DTYPE_BF16};
    return o;
}

/* Eight fp32 sums as C elements at row gr, columns gc.. (16 bytes at once where C allows; gr is
 * in bounds, columns are checked). */
__device__ static inline void duet__store_c8(const duet__c_out_t &o, const float (&s)[8], int64_t gr, int64_t gc)
{
    uint16_t h[8];
    if (o.bf16) {
#pragma unroll
        for (int i = 0; i < 8; i++)
            h[i] = duet_from_f32(s[i], DUET_DTYPE_BF16);
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++)
            h[i] = duet_from_f32(s[i], DUET_DTYPE_FP16);
    }
    uint16_t *dst = o.c + gr * o.n + gc;
    if (o.vec16 && gc + 8 <= o.n) {
        *(uint4 *)dst = make_uint4((uint32_t)h[0] | ((uint32_t)h[1] << 16), (uint32_t)h[2] | ((uint32_t)h[3] << 16),
                                   (uint32_t)h[4] | ((uint32_t)h[5] << 16), (uint32_t)h[6] | ((uint32_t)h[7] << 16));
    } else if (o.vec4) {
        /* N even: gc % 8 == 0, so dst starts on 4 bytes and the row ends after a whole pair. */
        for (int i = 0; i < 8 && gc + i < o.n; i += 2)
            *(uint32_t *)(dst + i) = (uint32_t)h[i] | ((uint32_t)h[i + 1] << 16);
    } else {
        for (int i = 0; i < 8 && gc + i < o.n; i++)
            dst[i] = h[i];
    }
}

/**
 * Sum the split_k blocks of (C tile mn, pass) in part order and store the PM x BN result at C
 * rows m0.., columns n0.. (bounds-checked; 16 bytes at a time where C allows). All threads.
 * Not inlined: the tile's registers hold its accumulators, and this loop needs none of them.
 * The AMD path's sum (NVIDIA's is duet__bulk_splitk_finish).
 */
template <int PM, int BN>
__device__ static __noinline__ void duet__splitk_finish(const duet__kparams_t &p, int64_t mn, int pass, int passes,
                                                        int64_t m0, int64_t n0)
{
    static_assert(BN % 8 == 0, "a thread sums 8 columns at a time");
    const duet_gemm_geom_t &g = p.gemm;
    const int S = g.split_k;
    const int64_t m = g.m;
    const duet__c_out_t o = duet__c_out(p);
    const float *first = duet__splitk_block(p, mn, pass, passes, 0, PM * BN);
    constexpr int GROUPS = PM * BN / 8;
    /* Two groups per thread per round: four 16-byte loads of each part in flight. */
#pragma unroll 2
    for (int e = threadIdx.x; e < GROUPS; e += DUET_THREADS) {
        const int row = e / (BN / 8), col = (e % (BN / 8)) * 8;
        const int64_t gr = m0 + row, gc = n0 + col;
        if (gr >= m || gc >= o.n)
            continue;
        float s[8];
        for (int q = 0; q < S; q++) {
            const float *x = first + (int64_t)q * PM * BN + row * BN + col;
            duet__sum8_add(s, duet_dev_ld_cg4((const float4 *)x), duet_dev_ld_cg4((const float4 *)(x + 4)), q);
        }
        duet__store_c8(o, s, gr, gc);
    }
}

#endif /* DUET_BACKEND_SPLITK_H */
