/*
 * The Hopper GEMM tile (NVIDIA sm_90a): wgmma.mma_async fed by TMA through an mbarrier ring.
 * Same contract as the mma.sync tile of gemm_tile.h (C[BM x BN] = A[M,K] * B[N,K]^T, fp32
 * accumulation, any M, N), for operands TMA can address: K % 8 == 0 and 16-byte aligned A and
 * B (kparams.tma, set by the launcher when both tensor maps were encoded). Included by
 * gemm_tile.h, after the C store helper both tiles use.
 *
 * Structure:
 * - The CTA's 384 threads are three warpgroups: two consumers, which compute, and a producer,
 *   one thread of which issues the loads (duet__wg_producer); the producer gives its registers
 *   to the consumers (setmaxnreg, kernels.h). A pass of PM x BN is split between the consumers
 *   by rows (PM >= 128: each owns PM / 2 rows, one or two m64 blocks, all BN columns) or by
 *   columns (PM = 64: each owns BN / 2 columns). 256x256 runs as two 128x256 passes: 128 fp32
 *   accumulators per thread is the most that fits beside the addresses in 240 registers.
 * - K advances in k-tiles of 64 elements (128 bytes, one swizzle row). A k-tile's A (PM rows) and
 *   B (BN rows) land by TMA with the 128-byte swizzle in one of STAGES shared-memory stages;
 *   `full[s]` completes when both boxes' bytes arrived. wgmma reads the stage in place through
 *   descriptors (no register fragments, no ldmatrix).
 * - The producer claims the CTA's GEMM tiles from the queue and hands each to the consumers
 *   through a one-tile slot (duet__wg_tslot). It runs up to STAGES uses of the ring ahead of
 *   them, across passes and tiles: after a consumer warpgroup's wgmma group for k-tile kt - 1
 *   has completed (wait_group 1 at k-tile kt), each of its warps arrives on `empty[s]`, and
 *   the producer, waiting for that, refills the stage. No consumer ever waits for a refill to
 *   be issued, only for its bytes (the earlier design's thread 0 did both, and each wait on the
 *   other warpgroup's release stalled its own).
 * - The ring's uses are a sequence both sides walk alike: per pass, its k-tiles,
 *   then the uses that hand stages to the consumers' epilogue instead of to a load: STAGES -
 *   AHEAD for the staging of C, all STAGES for a K split's sum. The producer "fills" those with
 *   a plain arrive on `full[s]` once the stage's last reader released it; the consumers release
 *   them when the staging was read out. So the next pass's first AHEAD k-tiles load during the
 *   epilogue, and nothing loads into a stage the epilogue uses.
 * - The barriers live for the whole kernel (initialised once per CTA, duet__wg_cta_init); their
 *   phases follow counts of ring uses and of tiles that each side keeps (duet__wg_consume,
 *   duet__wg_producer). A CTA takes GEMM tiles in one stretch, before or after its comm tiles.
 * - Epilogue: accumulators -> fp16/bf16 -> a staging block laid out as C's TMA boxes -> one TMA
 *   store per box by thread 0 where C allows it (else 16-byte row-contiguous stores,
 *   bounds-checked). With a K split, the parts store fp32 blocks instead, and one part sums them
 *   into C (splitk.h, duet__bulk_splitk_finish).
 */
#ifndef DUET_BACKEND_GEMM_HOPPER_H
#define DUET_BACKEND_GEMM_HOPPER_H

#include "backend/convert.h"
#include "backend/internal.h"

#if defined(DUET_GPU_NVIDIA)
#include "backend/ptx_hopper.h"
#include "backend/wgmma.h"

#define DUET_WG_KS 64                    /* elements of one k-tile: 128 bytes of fp16/bf16, the swizzle span */
#define DUET_WG_MAX_STAGES 8             /* mbarriers reserved per CTA */
#define DUET_WG_SMEM_BUDGET (220 * 1024) /* bytes of stages: under sm_90's 227 KiB with the slack */

template <int BM, int BN> struct duet__wg_cfg {
    static constexpr int PM = (BM * BN > 32768) ? 32768 / BN : BM; /* rows per pass */
    static constexpr int PASSES = BM / PM;
    static constexpr bool SPLIT_M = PM >= 128;          /* warpgroups split rows, else columns */
    static constexpr int WG_M = SPLIT_M ? PM / 2 : PM;  /* rows of one warpgroup */
    static constexpr int MI = WG_M / 64;                /* m64 blocks of one warpgroup */
    static constexpr int WG_N = SPLIT_M ? BN : BN / 2;  /* the wgmma's N */
    static constexpr int A_BYTES = PM * DUET_WG_KS * 2; /* one stage's A box */
    static constexpr int B_BYTES = BN * DUET_WG_KS * 2; /* one stage's B box */
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int STAGES_FIT = DUET_WG_SMEM_BUDGET / STAGE_BYTES;
    static constexpr int STAGES = STAGES_FIT < DUET_WG_MAX_STAGES ? STAGES_FIT : DUET_WG_MAX_STAGES;
    /* K split (splitk.h, duet__bulk_splitk_finish): the last part keeps its own fp32 block in the
     * stages, rows of SK_OWN_LDB floats (32 bytes of padding: the eight rows of one fragment
     * store fall on different banks), beside rounds of the other parts' rows. The region grows
     * past the stages where needed for 64 rows of one other part (4 KiB more for the 128-row
     * passes of 256 columns: two rounds instead of three). SK_OWN_MAX: the most parts that
     * leave at least 8 rows of each other part a round. */
    static constexpr int SK_OWN_LDB = BN + 8;
    static constexpr int SK_OWN_BYTES = PM * SK_OWN_LDB * 4;
    static constexpr int SK_NEED = SK_OWN_BYTES + 64 * BN * 4;
    static constexpr int SK_REGION = (STAGES * STAGE_BYTES > SK_NEED) ? (STAGES * STAGE_BYTES) : SK_NEED;
    static constexpr int SK_OWN_MAX = 1 + (SK_REGION - SK_OWN_BYTES) / (8 * BN * 4);
    static constexpr int SMEM_BYTES = SK_REGION + 1024; /* + alignment slack (swizzle atoms) */
    /* The epilogue's staging: BN / 64 boxes of PM rows of 128 bytes, BPS of them to a stage, in
     * the last STAGES - AHEAD stages of the ring's next pass; the first AHEAD k-tiles of the next
     * pass or tile may load meanwhile (duet__gemm_tile_wg). */
    static constexpr int BOX = PM * 128;
    static constexpr int BPS = STAGE_BYTES / BOX;
    static constexpr int AHEAD = BPS > 0 ? STAGES - (BN / 64 + BPS - 1) / BPS : 0;
    static constexpr int BN_ = BN;
    /* Independent accumulator sets: the k16 steps of a k-tile go round-robin to NACC sets, summed
     * at the end of the pass. Successive wgmmas on one accumulator wait for each other, and for a
     * narrow tile (m64n32: 16 clocks of work) that latency, not the matrix unit, sets the pace;
     * NACC sets cut the dependent chain per k-tile from 4 wgmmas to 4 / NACC. At most 128 fp32
     * accumulators per thread in all. */
    static constexpr int ACC_REGS = MI * WG_N / 2;
    static constexpr int NACC = ACC_REGS * 4 <= 128 ? 4 : (ACC_REGS * 2 <= 128 ? 2 : 1);
    static_assert(MI >= 1 && MI * 64 == WG_M, "a warpgroup owns whole m64 blocks");
    static_assert(WG_N == 32 || WG_N == 64 || WG_N == 128 || WG_N == 256, "wgmma N of this tile is not generated");
    static_assert(PM <= 256 && BN <= 256, "a TMA box dimension is at most 256");
    static_assert(STAGES >= 3, "the ring needs at least three stages");
    static_assert(AHEAD >= 1, "the epilogue's staging leaves a stage to the next pass");
    static_assert(BN % 64 == 0, "the epilogue's staging is made of 64-column boxes");
};

/* Per-CTA pipeline state: kernels.h initialises it once per CTA before the first tile. */
__shared__ uint64_t duet__wg_full[DUET_WG_MAX_STAGES];  /* stage s is filled (TMA bytes landed, or handed over) */
__shared__ uint64_t duet__wg_empty[DUET_WG_MAX_STAGES]; /* every consumer warp is done with stage s */
__shared__ uint64_t duet__wg_fin;                       /* the bulk copies of one round of a K-split sum have landed */
__shared__ uint32_t duet__wg_fin_uses;                  /* completed phases of duet__wg_fin */
__shared__ long long duet__wg_tslot;                    /* the next GEMM tile, from the producer (>= tiles: none) */
__shared__ uint64_t duet__wg_tfull, duet__wg_tempty;    /* duet__wg_tslot written / read by every consumer */
__shared__ uint64_t duet__wg_go;                        /* a comm-home CTA's consumers reached the GEMM queue */

/** Initialise the CTA's barriers (one thread), before the CTA's first GEMM tile; a barrier follows. */
template <int BM, int BN> __device__ static inline void duet__wg_cta_init(void)
{
    typedef duet__wg_cfg<BM, BN> CFG;
    if (threadIdx.x == 0) {
        for (int s = 0; s < CFG::STAGES; s++) {
            duet__mbar_init(&duet__wg_full[s], 1);
            duet__mbar_init(&duet__wg_empty[s], DUET_THREADS / 32);
        }
        duet__mbar_init(&duet__wg_fin, 1);
        duet__wg_fin_uses = 0;
        duet__mbar_init(&duet__wg_tfull, 1);
        duet__mbar_init(&duet__wg_tempty, DUET_THREADS);
        duet__mbar_init(&duet__wg_go, 1);
        /* Make the initialised barriers visible to the TMA unit (async proxy). */
        duet__fence_mbar_init();
    }
}

/* The 1024-byte aligned start of the stages in the dynamic shared memory: swizzle atoms need
 * that alignment of the shared-memory address itself. */
__device__ static inline uint8_t *duet__wg_stages(uint8_t *smem)
{
    return smem + ((1024u - (duet__smem_addr(smem) & 1023u)) & 1023u);
}

/* Ring uses of a pass of queue tile t after its k-tiles that hand stages to the consumers: all
 * of them for a K part's sum, else the epilogue's staging (duet__wg_cfg: STAGES - AHEAD). */
template <class CFG> __device__ static inline int duet__wg_handed(const duet_gemm_geom_t &g, long long t)
{
    return duet_gemm_tile_is_part(&g, t) ? CFG::STAGES : CFG::STAGES - CFG::AHEAD;
}

/* Producer: wait until every consumer has released the previous use of the stage of ring use
 * `gi`; returns the stage. */
template <class CFG> __device__ static inline uint32_t duet__wg_claim_stage(uint32_t gi)
{
    const uint32_t s = gi % CFG::STAGES, use = gi / CFG::STAGES;
    if (use > 0)
        duet__mbar_wait(&duet__wg_empty[s], (use - 1) & 1);
    return s;
}

/* Producer: ring use `gi` is k-tile `kt` of the pass at rows m0 / columns n0. */
template <class CFG>
__device__ static inline void duet__wg_produce(const duet__kparams_t &p, uint8_t *stages, uint32_t gi, int kt,
                                               int64_t m0, int64_t n0)
{
    const uint32_t s = duet__wg_claim_stage<CFG>(gi);
    uint8_t *st = stages + s * CFG::STAGE_BYTES;
    duet__mbar_expect_tx(&duet__wg_full[s], CFG::STAGE_BYTES);
    duet__tma_load_2d(st, &p.tma_a, kt * DUET_WG_KS, (int32_t)m0, &duet__wg_full[s]);
    duet__tma_load_2d(st + CFG::A_BYTES, &p.tma_b, kt * DUET_WG_KS, (int32_t)n0, &duet__wg_full[s]);
}

/* Producer: ring use `gi` hands its stage to the consumers (no load; the phase completes). */
template <class CFG> __device__ static inline void duet__wg_hand(uint32_t gi)
{
    duet__mbar_arrive(&duet__wg_full[duet__wg_claim_stage<CFG>(gi)]);
}

/* Consumers (every thread): wait for the n handed uses from gi on. The stages' earlier readers,
 * both warpgroups, are done with them then. */
template <class CFG> __device__ static inline void duet__wg_take(uint32_t gi, int n)
{
    for (int x = 0; x < n; x++)
        duet__mbar_wait(&duet__wg_full[(gi + x) % CFG::STAGES], ((gi + x) / CFG::STAGES) & 1);
}

/*
 * Consumers: done with stage s. The stages' barriers count warps, not threads: lane 0 arrives
 * for its warp. After a wgmma group, once the warp has waited for it (its reads are complete);
 * elsewhere (duet__wg_give), after the warp's lanes are done. One arrival per thread, as before,
 * was 256 shared-memory atomics per k-tile and CTA.
 */
__device__ static inline void duet__wg_release(uint32_t s)
{
    if (threadIdx.x % 32 == 0)
        duet__mbar_arrive(&duet__wg_empty[s]);
}

/* Lane 0, its warp done with them: release the n uses from gi on to the producer. */
template <class CFG> __device__ static inline void duet__wg_give_warp(uint32_t gi, int n)
{
    for (int x = 0; x < n; x++)
        duet__mbar_arrive(&duet__wg_empty[(gi + x) % CFG::STAGES]);
}

/* Consumers (every thread of a warp, once done with them): the same. The fence orders this
 * thread's ordinary shared-memory accesses before the TMA writes of the stages' next loads.
 * Used after a K-split pass, whose shared-memory accesses (the last part's sum) end at a CTA
 * barrier already; the epilogue's staging is given back after one (duet__wg_epilogue). */
template <class CFG> __device__ static inline void duet__wg_give(uint32_t gi, int n)
{
    duet__fence_proxy_async();
    __syncwarp();
    if (threadIdx.x % 32 == 0)
        duet__wg_give_warp<CFG>(gi, n);
}

/* Thread 0: release the staging uses it held back (warp 0's), once its TMA stores of C have read
 * them. `held`: how many, thread 0's own count (a register: no other thread reads it, and as a
 * shared variable racecheck reported its accesses as hazards). They are the `held` ring uses
 * just before `gbase`: the epilogue that held them back advanced gbase past them, and nothing
 * advances it before the next pass calls this. */
template <class CFG> __device__ static inline void duet__wg_give_pending(uint32_t gbase, uint32_t &held)
{
    if (held != 0) {
        duet__bulk_wait_read();
        duet__wg_give_warp<CFG>(gbase - held, (int)held);
        held = 0;
    }
}

template <class CFG, int R> __device__ static inline void duet__wg_zero(float (&acc)[CFG::NACC][CFG::MI][R])
{
#pragma unroll
    for (int a = 0; a < CFG::NACC; a++)
#pragma unroll
        for (int mi = 0; mi < CFG::MI; mi++)
#pragma unroll
            for (int i = 0; i < R; i++)
                acc[a][mi][i] = 0.0f;
}

template <class CFG, int R> __device__ static inline void duet__wg_fence_acc(float (&acc)[CFG::NACC][CFG::MI][R])
{
#pragma unroll
    for (int a = 0; a < CFG::NACC; a++)
#pragma unroll
        for (int mi = 0; mi < CFG::MI; mi++)
            duet__fence_regs(acc[a][mi]);
}

/* Two fp32 values as one 32-bit word of the output type. */
template <bool BF16> __device__ static inline uint32_t duet__pack2(float lo, float hi)
{
    const int32_t dt = BF16 ? DUET_DTYPE_BF16 : DUET_DTYPE_FP16;
    return (uint32_t)duet_from_f32(lo, dt) | ((uint32_t)duet_from_f32(hi, dt) << 16);
}

/* Byte offset of the epilogue's staging box b (64 columns) in the stages: BPS boxes to a stage,
 * from stage slot0 on, round the ring (duet__wg_cfg). */
template <class CFG> __device__ static inline uint32_t duet__wg_box(uint32_t slot0, int b)
{
    uint32_t s = slot0 + (uint32_t)(b / CFG::BPS);
    s = s >= (uint32_t)CFG::STAGES ? s - CFG::STAGES : s;
    return s * CFG::STAGE_BYTES + (uint32_t)(b % CFG::BPS) * CFG::BOX;
}

/* Staging byte offset of row `row`, columns col.. col + 7 (col % 8 == 0): box col / 64, the
 * 16-byte chunk of row r at chunk ^ (r % 8) (the 128-byte swizzle). */
template <class CFG> __device__ static inline uint32_t duet__wg_stage_at(uint32_t slot0, int row, int col)
{
    return duet__wg_box<CFG>(slot0, col / 64) + row * 128 + ((((col % 64) / 8) ^ (row % 8)) << 4);
}

/*
 * The epilogue of one pass (all consumer threads): the warpgroups' accumulators as fp16/bf16
 * into a staging block in the stages, laid out as C's TMA boxes (duet__wg_stage_at), so that
 * the eight rows of one warp's store fall on different banks. The boxes go into the STAGES -
 * AHEAD stages of the ring uses handed over from gi on (the next pass's first CFG::AHEAD
 * k-tiles load meanwhile, into the others). Then
 * - p.c_tma: thread 0 stores the boxes by TMA and goes on. The stores drain while the next pass
 *   or tile runs; thread 0 releases their stages once they have read them (at the next pass,
 *   duet__wg_give_pending), and waits for their completion before the CTA ends (duet__cta_run).
 *   Measured without any C store (one H200, a diagnostic build): 4096x8192x512 0.0825 -> 0.0723
 *   ms, the SMs waiting on their stores;
 * - else 16-byte row-contiguous stores by every thread (32-bit pairs where N % 8 != 0 but N is
 *   even, elements where N is odd), bounds-checked, and a second CTA
 *   barrier before the stages go back (below). Plain per-thread stores of register pairs were
 *   measured slower (4096x8192x512: 0.115 ms against 0.087 ms): each warp store instruction then
 *   touches eight rows, and every pair needs its own bounds check.
 * Synchronisation: the staging is written after duet__wg_take (the producer handed the stages
 * over once all eight warps had released their previous use) and read after a barrier of the
 * 256 consumer threads (duet_dev_sync), by the TMA unit or by the threads. */
template <bool BF16, class CFG, int R>
__device__ static inline void duet__wg_epilogue(const duet__kparams_t &p, const float (&acc)[CFG::MI][R],
                                                uint8_t *stages, uint32_t gi, uint32_t &held, int64_t m0, int64_t n0)
{
    constexpr int NSTG = CFG::STAGES - CFG::AHEAD;
    const duet_gemm_geom_t &g = p.gemm;
    const uint32_t slot0 = gi % CFG::STAGES;
    const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, wq = (tid % 128) / 32;
    const int r0 = CFG::SPLIT_M ? wg * CFG::WG_M : 0, c0 = CFG::SPLIT_M ? 0 : wg * CFG::WG_N;
    /* This thread's rows are r0 + wq * 16 + lane / 4 (+ 8, + 64 mi): all == lane / 4 mod 8, so
     * duet__wg_stage_at, decomposed: a per-thread base, the box, and the chunk ^ (lane / 4). */
    const uint32_t swz = (uint32_t)(lane / 4) << 4;
    uint8_t *at = stages + (r0 + wq * 16 + lane / 4) * 128 + (lane % 4) * 4;
    /* Both warpgroups have finished reading the staging's stages, and nothing loads into them. */
    duet__wg_take<CFG>(gi, NSTG);
#pragma unroll
    for (int mi = 0; mi < CFG::MI; mi++)
#pragma unroll
        for (int j = 0; j < R / 4; j++) {
            const int col = c0 + j * 8; /* this pair's first column is col + 2 (lane % 4) */
            uint8_t *x =
                at + duet__wg_box<CFG>(slot0, col / 64) + mi * 64 * 128 + ((((uint32_t)(col % 64) / 8) << 4) ^ swz);
            *(uint32_t *)x = duet__pack2<BF16>(acc[mi][4 * j], acc[mi][4 * j + 1]);
            *(uint32_t *)(x + 8 * 128) = duet__pack2<BF16>(acc[mi][4 * j + 2], acc[mi][4 * j + 3]);
        }
    if (p.c_tma) {
        /* The staging is written by ordinary stores and read by the TMA unit. */
        duet__fence_proxy_async();
        duet_dev_sync();
        if (tid == 0) {
            if (m0 < g.m) {
                for (int b = 0; b < CFG::BN_ / 64 && n0 + b * 64 < g.n; b++)
                    duet__tma_store_2d(&p.tma_c, stages + duet__wg_box<CFG>(slot0, b), (int32_t)(n0 + b * 64),
                                       (int32_t)m0);
                duet__bulk_commit();
            }
            held = NSTG;
        } else if (tid % 32 == 0) {
            /* Every warp is done with the staging (the barrier above); warp 0's release is thread
             * 0's, after its stores have read it. */
            duet__wg_give_warp<CFG>(gi, NSTG);
        }
        return;
    }
    duet_dev_sync();
    constexpr int CPR = CFG::BN_ / 8; /* 16-byte chunks per row */
    const bool vec = p.c_vec16, pairs = p.c_vec;
    for (int c = tid; c < CFG::PM * CPR; c += DUET_THREADS) {
        const int row = c / CPR, col = (c % CPR) * 8;
        const int64_t gr = m0 + row, gc = n0 + col;
        if (gr >= g.m || gc >= g.n)
            continue;
        const uint16_t *src = (const uint16_t *)(stages + duet__wg_stage_at<CFG>(slot0, row, col));
        uint16_t *dst = p.c + gr * g.n + gc;
        if (vec && gc + 8 <= g.n) {
            *(uint4 *)dst = *(const uint4 *)src;
        } else if (pairs) {
            /* N even (c_vec): dst starts on 4 bytes (gc % 8 == 0) and the row ends after a whole
             * pair, so the chunk goes as 32-bit pairs, half the stores of the element loop. */
            for (int e = 0; e < 8 && gc + e < g.n; e += 2)
                *(uint32_t *)(dst + e) = *(const uint32_t *)(src + e);
        } else {
            for (int e = 0; e < 8 && gc + e < g.n; e++)
                dst[e] = src[e];
        }
    }
    /* Every consumer thread has read the staging before any warp gives its stages back: a
     * barrier of the 256, one a pass. The releases alone order these reads before the stages'
     * next writes too (each warp's arrival on empty[s], the producer's wait for all eight and
     * its hand-over or load on full[s], the next writer's wait), but compute-sanitizer's
     * racecheck did not follow that chain through the producer: it reported the next pass's
     * staging stores as racing with these reads (56 hazards on the quick set at W = 1). The
     * fence orders the reads before the TMA loads that may fill the stages next. */
    duet__fence_proxy_async();
    duet_dev_sync();
    if (tid % 32 == 0)
        duet__wg_give_warp<CFG>(gi, NSTG);
}

/*
 * A pass's accumulators as fp32 into a K-split block, the epilogue's map, row-major with `ldb`
 * floats a row: BN in global memory, SK_OWN_LDB for the last part's own block in the stages.
 * Rows from rows_valid on (beyond M) are not stored: no sum reads them. One call site with the
 * stride at run time: a second inlined copy for the shared block, or a padded stride known at
 * compile time, cost ptxas registers (the 128x256 tile spilled 420-720 bytes instead of 192).
 */
template <class CFG, int R>
__device__ static inline void duet__wg_put_partial(const float (&acc)[CFG::MI][R], float *blk, int ldb, int rows_valid)
{
    const int tid = threadIdx.x, wg = tid / 128, lane = tid % 32, wq = (tid % 128) / 32;
    const int r0 = CFG::SPLIT_M ? wg * CFG::WG_M : 0, c0 = CFG::SPLIT_M ? 0 : wg * CFG::WG_N;
    const int row = r0 + wq * 16 + lane / 4;
    float *at = blk + row * ldb + c0 + 2 * (lane % 4);
#pragma unroll
    for (int mi = 0; mi < CFG::MI; mi++)
#pragma unroll
        for (int j = 0; j < R / 4; j++) {
            if (row + mi * 64 < rows_valid)
                *(float2 *)(at + mi * 64 * ldb + j * 8) = make_float2(acc[mi][4 * j], acc[mi][4 * j + 1]);
            if (row + mi * 64 + 8 < rows_valid)
                *(float2 *)(at + (mi * 64 + 8) * ldb + j * 8) = make_float2(acc[mi][4 * j + 2], acc[mi][4 * j + 3]);
        }
}

/*
 * The K split's sum on NVIDIA, both tile paths (all threads): the fp32 blocks of (C tile mn,
 * pass), PM x BN each, come into the (idle) shared memory `buf` (SMEM bytes)
 * by bulk copies, as many rows of every part at a time as fit, and are summed from there in part
 * order, as duet__splitk_finish sums them (the same bits); C is stored 16 bytes at a time. The
 * copy engine keeps a whole round in flight with no registers: duet__splitk_finish's loads, two
 * per thread at a time, waited some 30 L2 round trips per thread for a 128x256 tile in two parts
 * (4096x512x8192: the part that ended last took 64.8 us against 50.7 for the other, in a measured
 * timeline), and giving it more loads in flight cost the fused kernel's tiles registers (ptxas
 * spilled 0.5-2 KB more per thread). Rows beyond M are not copied.
 *
 * Two callers:
 * - own = false: the part that completed the C tile's count (duet__splitk_arrive) sums all
 *   split_k blocks from global memory (the mma.sync tile; the wgmma tile beyond SK_OWN_MAX).
 * - own = true: the wgmma tile's last part (split_k <= SK_OWN_MAX) has put its own block at the
 *   start of `buf` (rows of OWN_LDB floats) instead of global memory. It waits until the
 *   split_k - 1 parts before it have counted themselves in, and copies only theirs, after it;
 *   its own is added last, its place in part order. That saves the SM writing 4 PM BN bytes to
 *   L2 and reading them back. The wait is on parts that come earlier in the GEMM queue (a C
 *   tile's parts are consecutive, duet_gemm_tile_split), so CTAs that have claimed them run
 *   them, and those never wait for anything: it cannot deadlock. It is unbounded, like the
 *   mbarrier waits: it depends on this GPU's tiles only.
 */
template <int PM, int BN, int OWN_LDB, int SMEM>
__device__ static __noinline__ void duet__bulk_splitk_finish(const duet__kparams_t &p, int64_t mn, int pass, int passes,
                                                             uint8_t *buf, int64_t m0, int64_t n0, bool own)
{
    constexpr int ROW_BYTES = BN * 4, OWN_BYTES = PM * OWN_LDB * 4;
    const duet_gemm_geom_t &g = p.gemm;
    const int S = g.split_k, copied = own ? S - 1 : S;
    const duet__c_out_t o = duet__c_out(p);
    const int rows_valid = (int)(g.m - m0 < PM ? g.m - m0 : PM);
    /* >= 8 rows a round: S <= 16, BN <= 256 and SMEM >= 128 KiB, or own (SK_OWN_MAX). */
    const int fit = (SMEM - (own ? OWN_BYTES : 0)) / (copied * ROW_BYTES);
    const int R = fit < PM ? fit : PM;
    const float *first = duet__splitk_block(p, mn, pass, passes, 0, PM * BN);
    const float *mine = (const float *)buf;                         /* own: this part's block */
    const float *sm = (const float *)(buf + (own ? OWN_BYTES : 0)); /* the copied rows */
    if (own) {
        /* Every thread's own block is in place, and the stages' last readers are done. */
        duet_dev_sync();
        if (threadIdx.x == 0) {
            uint32_t *cnt = &p.sk_cnt[mn * passes + pass];
            while (duet_dev_load_acquire_gpu(cnt) != (uint32_t)(S - 1)) {
            }
            /* Every other part has counted itself: the next operation finds the counter at zero. */
            *cnt = 0;
        }
    }
    /* Read after a CTA barrier (the own part's above, or duet__splitk_arrive's) that thread 0
     * passed after storing it at the end of the previous call. In the wgmma tile the stages'
     * releases order the two as well, but only through the producer, an order racecheck did
     * not follow in the epilogue (duet__wg_epilogue). */
    const uint32_t uses0 = duet__wg_fin_uses;
    uint32_t round = 0;
    for (int r0 = 0; r0 < rows_valid; r0 += R, round++) {
        const int rows = rows_valid - r0 < R ? rows_valid - r0 : R;
        if (threadIdx.x == 0) {
            /* The partials were written by other SMs' ordinary stores and acquired (arrive, or the
             * wait above); the buffer was last touched by ordinary loads and stores, or by wgmma:
             * all before these async-proxy copies. */
            duet__fence_proxy_async_all();
            duet__mbar_expect_tx(&duet__wg_fin, (uint32_t)(copied * rows * ROW_BYTES));
            for (int q = 0; q < copied; q++)
                duet__bulk_load((uint8_t *)sm + (size_t)q * R * ROW_BYTES, first + ((int64_t)q * PM + r0) * BN,
                                (uint32_t)(rows * ROW_BYTES), &duet__wg_fin);
        }
        duet__mbar_wait(&duet__wg_fin, (uses0 + round) & 1);
        for (int e = threadIdx.x; e < rows * (BN / 8); e += DUET_THREADS) {
            const int row = e / (BN / 8), col = (e % (BN / 8)) * 8;
            const int64_t gr = m0 + r0 + row, gc = n0 + col;
            if (gc >= o.n)
                continue;
            float s[8];
            for (int q = 0; q < copied; q++) {
                const float *x = sm + ((size_t)q * R + row) * BN + col;
                duet__sum8_add(s, *(const float4 *)x, *(const float4 *)(x + 4), q);
            }
            if (own) {
                const float *x = mine + (size_t)(r0 + row) * OWN_LDB + col;
                duet__sum8_add(s, *(const float4 *)x, *(const float4 *)(x + 4), S - 1);
            }
            duet__store_c8(o, s, gr, gc);
        }
        /* Every thread is done with the round's rows before the next round's copies land. */
        duet_dev_sync();
    }
    /* After the last round's barrier, which every thread passed after reading uses0 (no round,
     * no phase used: nothing to store). */
    if (threadIdx.x == 0 && round != 0)
        duet__wg_fin_uses = uses0 + round;
}

/**
 * Run GEMM-queue position `tile` with wgmma (the DUET_THREADS consumer threads), on the stages
 * the producer fills (duet__wg_producer), from ring use `gbase` on (advanced past the tile's
 * uses). smem: CFG::SMEM_BYTES bytes of dynamic shared memory.
 * Inlined into the kernel: ptxas serialises wgmma whose pipeline would cross a call boundary
 * (C7510).
 *
 * The K split's wait (duet__bulk_splitk_finish) cannot deadlock: a part waits only for parts
 * claimed before it, and a claimed part's CTA is running a part claimed before that one (the
 * producer claims one tile ahead of its consumers).
 */
template <bool BF16, int BM, int BN>
__device__ static __forceinline__ void duet__gemm_tile_wg(const duet__kparams_t &p, int64_t tile, uint8_t *smem,
                                                          uint32_t &gbase, uint32_t &held)
{
    typedef duet__wg_cfg<BM, BN> CFG;
    typedef duet__wgmma<CFG::WG_N, BF16> MMA;
    const duet_gemm_geom_t &g = p.gemm;
    int64_t pid_m, pid_n, k0, k1;
    duet_gemm_tile_coords(&g, tile, &pid_m, &pid_n);
    duet_gemm_tile_krange(&g, tile, &k0, &k1); /* k0: a multiple of bk = DUET_WG_KS */
    uint8_t *stages = duet__wg_stages(smem);
    const uint32_t sbase = duet__smem_addr(stages);
    const int tid = threadIdx.x, wg = tid / 128;
    const int kt_total = (int)duet_cdiv(k1, DUET_WG_KS) - (int)(k0 / DUET_WG_KS);
    /* This warpgroup's block of the pass: rows r0.., columns c0.. of the stage's A and B boxes. */
    const int r0 = CFG::SPLIT_M ? wg * CFG::WG_M : 0, c0 = CFG::SPLIT_M ? 0 : wg * CFG::WG_N;
    const int64_t n0 = pid_n * BN;
    float acc[CFG::NACC][CFG::MI][MMA::REGS];

#pragma unroll 1
    for (int pass = 0; pass < CFG::PASSES; pass++) {
        const int64_t m0 = pid_m * BM + (int64_t)pass * CFG::PM;
        /* A pass whose rows all lie beyond M has nothing to compute or store (256x256 where the
         * last tile-row holds at most 128 rows of M): skipped, here and in the producer alike, so
         * both sides still walk the same ring uses. Every part of a K split skips it too, so its
         * counters are never touched. */
        if (m0 >= g.m)
            continue;
        /* The previous pass's staging goes back to the producer, which needs it from this
         * pass's k-tile AHEAD on. */
        if (tid == 0)
            duet__wg_give_pending<CFG>(gbase, held);
        duet__wg_zero<CFG>(acc);
        /* The epilogue stays outside this loop: accumulator reads on a (to ptxas) divergent
         * path inside it make ptxas serialise every wgmma (C7518). */
#pragma unroll 1
        for (int kt = 0; kt < kt_total; kt++) {
            const uint32_t gi = gbase + kt, s = gi % CFG::STAGES;
            duet__mbar_wait(&duet__wg_full[s], (gi / CFG::STAGES) & 1);
            const uint32_t sa = sbase + s * CFG::STAGE_BYTES + r0 * 128;
            const uint32_t sb = sbase + s * CFG::STAGE_BYTES + CFG::A_BYTES + c0 * 128;
            duet__wg_fence_acc<CFG>(acc);
            duet__wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < DUET_WG_KS / 16; kk++)
#pragma unroll
                for (int mi = 0; mi < CFG::MI; mi++)
                    MMA::mma(acc[kk % CFG::NACC][mi], duet__wg_desc(sa + mi * 64 * 128 + kk * 32),
                             duet__wg_desc(sb + kk * 32), 1);
            duet__wgmma_commit();
            duet__wg_fence_acc<CFG>(acc);
            /* k-tile kt - 1's group is complete: release its stage to the producer. */
            duet__wgmma_wait<1>();
            if (kt > 0)
                duet__wg_release((gi - 1) % CFG::STAGES);
        }
        duet__wgmma_wait<0>();
        duet__wg_fence_acc<CFG>(acc);
        if (kt_total > 0)
            duet__wg_release((gbase + kt_total - 1) % CFG::STAGES);
        gbase += kt_total;
#pragma unroll
        for (int a = 1; a < CFG::NACC; a++)
#pragma unroll
            for (int mi = 0; mi < CFG::MI; mi++)
#pragma unroll
                for (int i = 0; i < MMA::REGS; i++)
                    acc[0][mi][i] += acc[a][mi][i];
        if (duet_gemm_tile_is_part(&g, tile)) {
            /* K split (or a stream-K tail part): the sum uses the whole of the stages, which the
             * producer hands over. (The part and its C tile are recomputed here: live across the
             * K loop they cost the 128-accumulator tiles registers, and ptxas spilled more.) The
             * workspace and the counters are indexed by the C tile's slot among the split ones. */
            int64_t mn;
            int32_t part;
            duet_gemm_tile_split(&g, tile, &mn, &part);
            mn = duet_gemm_split_slot(&g, mn);
            const int rows_valid = (int)(g.m - m0 < CFG::PM ? g.m - m0 : CFG::PM);
            const bool own = g.split_k <= CFG::SK_OWN_MAX && part == g.split_k - 1;
            duet__wg_take<CFG>(gbase, CFG::STAGES);
            duet__wg_put_partial<CFG>(
                acc[0], own ? (float *)stages : duet__splitk_block(p, mn, pass, CFG::PASSES, part, CFG::PM * BN),
                own ? CFG::SK_OWN_LDB : BN, rows_valid);
            if (own || duet__splitk_arrive(p, mn, pass, CFG::PASSES))
                duet__bulk_splitk_finish<CFG::PM, BN, CFG::SK_OWN_LDB, CFG::SK_REGION>(p, mn, pass, CFG::PASSES, stages,
                                                                                       m0, n0, own);
            duet__wg_give<CFG>(gbase, CFG::STAGES);
            gbase += CFG::STAGES;
            continue;
        }
        duet__wg_epilogue<BF16, CFG>(p, acc[0], stages, gbase, held, m0, n0);
        gbase += CFG::STAGES - CFG::AHEAD;
    }
}

/**
 * The consumers' loop over the GEMM queue (all DUET_THREADS consumer threads): take each tile
 * the producer claimed from the tile slot and run it. begin(idx) and end(): the measured
 * timeline's hooks around each tile (kernels.h).
 */
template <bool BF16, int BM, int BN, class BEGIN, class END>
__device__ static __forceinline__ void duet__wg_consume(const duet__kparams_t &p, uint8_t *smem, long long len,
                                                        BEGIN begin, END end)
{
    /* Each thread's own counts of the ring's uses and of the tiles taken: every thread walks
     * the same sequence, and shared copies would need a barrier per tile before the next read. */
    uint32_t gi = 0, nt = 0, held = 0; /* held: thread 0's staging uses held back (the epilogue) */
    for (;; nt++) {
        duet__mbar_wait(&duet__wg_tfull, nt & 1);
        const long long idx = *(volatile long long *)&duet__wg_tslot;
        duet__mbar_arrive(&duet__wg_tempty);
        if (idx >= len)
            break;
        begin(idx);
        duet__gemm_tile_wg<BF16, BM, BN>(p, idx, smem, gi, held);
        end();
    }
}

/**
 * The producer (one thread of the producer warpgroup): claim the CTA's GEMM tiles, hand each to
 * the consumers through the tile slot, and issue the ring's uses for it (the header comment),
 * until the queue is empty; the last value handed over is the first position past the queue's
 * end. `wait_go`: a comm-home CTA of the fused kernel, whose consumers drain the comm queue
 * first; the GEMM queue is claimed from only once they reach it, as in the plan.
 *
 * The next tile is claimed once the current one's first load is issued, so the claim's L2 round
 * trip overlaps the loads (a claim between tiles cost 6.9 % of the warps' samples at 4096 x 8192
 * x 512, Nsight Compute); its loads follow the current tile's without a gap.
 */
template <int BM, int BN>
__device__ static __forceinline__ void duet__wg_producer(const duet__kparams_t &p, uint8_t *smem,
                                                         unsigned long long *queue, bool wait_go)
{
    typedef duet__wg_cfg<BM, BN> CFG;
    const duet_gemm_geom_t &g = p.gemm;
    const long long len = (long long)g.tiles;
    if (len <= 0)
        return;
    if (wait_go)
        duet__mbar_wait(&duet__wg_go, 0);
    uint8_t *stages = duet__wg_stages(smem);
    uint32_t gi = 0, nt = 0;
    long long t = (long long)atomicAdd(queue, 1ull);
    for (;; nt++) {
        if (nt > 0)
            duet__mbar_wait(&duet__wg_tempty, (nt - 1) & 1);
        *(volatile long long *)&duet__wg_tslot = t;
        duet__mbar_arrive(&duet__wg_tfull); /* release: orders the slot's store before it */
        if (t >= len)
            return;
        int64_t pid_m, pid_n, k0, k1;
        duet_gemm_tile_coords(&g, t, &pid_m, &pid_n);
        duet_gemm_tile_krange(&g, t, &k0, &k1);
        const int kt_first = (int)(k0 / DUET_WG_KS);
        const int kt_total = (int)duet_cdiv(k1, DUET_WG_KS) - kt_first;
        const int handed = duet__wg_handed<CFG>(g, t);
        bool claimed = false;
        long long next = 0;
#pragma unroll 1
        for (int pass = 0; pass < CFG::PASSES; pass++) {
            const int64_t m0 = pid_m * BM + (int64_t)pass * CFG::PM;
            if (m0 >= g.m)
                continue; /* as the consumers skip it (duet__gemm_tile_wg) */
#pragma unroll 1
            for (int kt = 0; kt < kt_total; kt++) {
                duet__wg_produce<CFG>(p, stages, gi++, kt_first + kt, m0, pid_n * BN);
                if (!claimed) {
                    next = (long long)atomicAdd(queue, 1ull);
                    claimed = true;
                }
            }
#pragma unroll 1
            for (int x = 0; x < handed; x++)
                duet__wg_hand<CFG>(gi++);
        }
        t = claimed ? next : (long long)atomicAdd(queue, 1ull);
    }
}

#endif /* DUET_GPU_NVIDIA */
#endif /* DUET_BACKEND_GEMM_HOPPER_H */
