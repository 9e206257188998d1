/*
 * The GEMM tile: one CTA computes a BM x BN block of C = A[M,K] * B[N,K]^T on the matrix units,
 * with fp32 accumulation, for any M, N, K.
 *
 * Structure (both vendors):
 * - The block is computed in PASSES passes of PM x BN rows, so that one pass's accumulators fit
 *   in registers (at most 128 fp32 per thread): 256x256 runs as two 128x256 passes, every other
 *   tile in one pass.
 * - K advances in steps of KS elements through a STAGES-deep ring of shared-memory stages. A
 *   stage holds PM x KS of A and BN x KS of B, row-major with a 16-byte-chunk XOR swizzle, so
 *   that the eight rows one matrix load touches fall in distinct banks.
 * - Global loads are 16-byte asynchronous copies with zero fill outside [M, N, K) when
 *   K % 8 == 0 and A, B are 16-byte aligned (ab_vec); 4-byte asynchronous copies when K is even
 *   (ab_vec4); otherwise element loads (slow, correct).
 * - Warps are laid out WM x WN over the pass; each owns a 64 x WTN block of C.
 *
 * The inner matrix instruction is the one vendor switch:
 * - NVIDIA sm_90a: mma.sync m16n8k16 (fp16 or bf16 in, fp32 accumulate), fragments by ldmatrix,
 *   cp.async pipeline, KS = 64, 3 stages (144 KiB for a 128x256 pass).
 * - AMD gfx90a / gfx94x: v_mfma_f32_32x32x8 (f16, or bf16_1k) on 64-wide wavefronts, KS = 32,
 *   2 stages (at most 48 KiB, inside the 64 KiB LDS).
 */
#ifndef DUET_BACKEND_GEMM_TILE_H
#define DUET_BACKEND_GEMM_TILE_H

#include "backend/convert.h"
#include "backend/internal.h"
#include "backend/splitk.h"

#if defined(DUET_GPU_NVIDIA)
#define DUET_GEMM_KS 64
#define DUET_GEMM_STAGES 3
#else
#define DUET_GEMM_KS 32
#define DUET_GEMM_STAGES 2
#endif

template <int BM, int BN> struct duet__gemm_cfg {
    /* Rows per pass: the pass's C block holds at most 128 x 256 = 32768 accumulators. */
    static constexpr int PM = (BM * BN > 32768) ? 32768 / BN : BM;
    static constexpr int PASSES = BM / PM;
    static constexpr int NWARPS = DUET_THREADS / DUET_WARP;
    static constexpr int WM = PM / 64;
    /* A warp's C block is at least MIN_WTN wide (NVIDIA: two n8 blocks per B fragment load; AMD:
     * one 32-wide MFMA block). A tile too narrow for every warp (64x64) leaves the rest idle in
     * the multiply; they still share the loads. */
#if defined(DUET_GPU_NVIDIA)
    static constexpr int MIN_WTN = 16;
#else
    static constexpr int MIN_WTN = 32;
#endif
    static constexpr int WN = (NWARPS / WM < BN / MIN_WTN) ? NWARPS / WM : BN / MIN_WTN;
    static constexpr int ACTIVE = WM * WN; /* warps that multiply */
    static constexpr int WTN = BN / WN;    /* columns of one warp's C block */
    static constexpr int KS = DUET_GEMM_KS;
    static constexpr int STAGES = DUET_GEMM_STAGES;
    static constexpr int CH = KS / 8; /* 16-byte chunks per shared-memory row */
    static constexpr int A_ELEMS = PM * KS;
    static constexpr int STAGE_ELEMS = (PM + BN) * KS;
    static constexpr int SMEM_BYTES = STAGES * STAGE_ELEMS * 2;
    static_assert(PM % 64 == 0 && BM % PM == 0, "tile rows must be whole passes of 64-row warp blocks");
    static_assert(ACTIVE <= NWARPS && WN * WTN == BN && WTN % MIN_WTN == 0, "warps must cover the pass");
    static_assert((PM * CH) % DUET_THREADS == 0 && (BN * CH) % DUET_THREADS == 0, "stage loads split evenly");
};

/* Element offset of 16-byte chunk `ch` of row `row` in a swizzled [rows][KS] stage tile. */
template <int KS> __device__ static inline int duet__swz(int row, int ch)
{
    constexpr int CH = KS / 8;
    constexpr int ROWS_PER_128B = 8 / CH; /* rows that share one 128-byte bank window */
    return row * KS + ((ch ^ ((row / ROWS_PER_128B) % CH)) * 8);
}

/*
 * The global-to-shared loads of one operand for one pass. Thread t always moves chunk t % CH of
 * rows t / CH + it * RSTEP, so its row pointer, its row count and its (swizzled) shared-memory
 * offset are fixed for the whole K loop; a K step only adds k0.
 */
template <int ROWS, int KS> struct duet__loader {
    static constexpr int CH = KS / 8;
    static constexpr int RSTEP = DUET_THREADS / CH; /* rows between a thread's chunks */
    static constexpr int ITERS = ROWS / RSTEP;
    const uint16_t *X; /* this thread's first row, its chunk's first column */
    int rows_left;     /* rows of X at or below this thread's first row */
    int kcol;          /* this thread's chunk column within a stage row, elements */
    int soff;          /* shared-memory offset of this thread's first chunk, elements */

    __device__ inline duet__loader(const uint16_t *base, int64_t nrows, int64_t k, int64_t r0)
    {
        int r = threadIdx.x / CH, ch = threadIdx.x % CH;
        kcol = ch * 8;
        rows_left = (int)duet_min64(nrows - (r0 + r), (int64_t)ROWS + 1);
        X = base + (r0 + r) * k + kcol;
        /* The swizzle term of row r + it * RSTEP equals row r's (RSTEP is a multiple of 8 / CH * CH). */
        soff = duet__swz<KS>(r, ch);
    }

    /* K and the operand's base (kernel parameters) are passed in rather than held, to spare
     * registers in the K loop. A zero-filled copy still names an address: the base, always valid.
     * vec: 16 (ab_vec), 4 (ab_vec4) or 0, the same in every thread. */
    __device__ inline void load(uint16_t *s, const uint16_t *base, int64_t K, int64_t k0, int vec) const
    {
        const int64_t stride = (int64_t)RSTEP * K;
        const bool kin = k0 + kcol < K;
#pragma unroll
        for (int it = 0; it < ITERS; it++) {
            uint16_t *d = s + soff + it * RSTEP * KS;
            const bool ok = kin && it * RSTEP < rows_left;
            if (vec == 16) {
                /* K % 8 == 0: a chunk is wholly inside or outside [0, K). */
                duet_dev_cp_async16(d, ok ? (const void *)(X + it * stride + k0) : (const void *)base, ok);
            } else if (vec == 4) {
                /* K even: every row, and so every pair of the chunk (k0 + kcol is even), starts on
                 * 4 bytes, and a pair is wholly inside or outside [0, K). Asynchronous like the
                 * 16-byte copies, so the loads overlap the matrix work of the stages before, which
                 * the element loads below (synchronous) do not. */
                const bool rin = it * RSTEP < rows_left;
                const uint16_t *x = X + it * stride + k0;
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const bool pin = rin && k0 + kcol + 2 * e < K;
                    duet_dev_cp_async4(d + 2 * e, pin ? (const void *)(x + 2 * e) : (const void *)base, pin);
                }
            } else {
                load_slow(d, K, it, k0);
            }
        }
    }

    /* Element loads for odd K or unaligned operands. */
    __device__ inline void load_slow(uint16_t *d, int64_t K, int it, int64_t k0) const
    {
        uint32_t w[4];
        const bool rin = it * RSTEP < rows_left;
        const uint16_t *x = X + it * (int64_t)RSTEP * K + k0;
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int64_t k = k0 + kcol + 2 * e;
            uint32_t lo = (rin && k < K) ? x[2 * e] : 0u;
            uint32_t hi = (rin && k + 1 < K) ? x[2 * e + 1] : 0u;
            w[e] = lo | (hi << 16);
        }
        *(uint4 *)d = make_uint4(w[0], w[1], w[2], w[3]);
    }
};

/* Store one fp32 value of C (bounds-checked); pairs go as one 32-bit store when allowed. */
__device__ static inline void duet__store_c2(const duet__kparams_t &p, int64_t row, int64_t col, float v0, float v1)
{
    const int64_t M = p.gemm.m, N = p.gemm.n;
    if (row >= M || col >= N)
        return;
    uint16_t h0 = duet_from_f32(v0, p.dtype), h1 = duet_from_f32(v1, p.dtype);
    uint16_t *c = p.c + row * N + col;
    if (p.c_vec) { /* N even and col even: the pair is inside the row and 4-byte aligned */
        *(uint32_t *)c = (uint32_t)h0 | ((uint32_t)h1 << 16);
    } else {
        c[0] = h0;
        if (col + 1 < N)
            c[1] = h1;
    }
}

/* The Hopper wgmma tile; it stores C through duet__store_c2 above. */
#include "backend/gemm_hopper.h"

#if defined(DUET_GPU_NVIDIA)
/* ------------------------------------------------------------------------------------------ */
/* NVIDIA: mma.sync m16n8k16                                                                   */
/* ------------------------------------------------------------------------------------------ */

__device__ static inline void duet__ldmatrix_x4(uint32_t (&r)[4], const uint16_t *smem)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}

template <bool BF16>
__device__ static inline void duet__mma16816(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
{
    if (BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
                     "{%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* One warp's 64 x WTN accumulators: 4 m16 blocks x NI n8 blocks x 4 floats. */
template <int WTN> struct duet__acc {
    static constexpr int NI = WTN / 8;
    float v[4][NI][4];
    __device__ inline void zero()
    {
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < NI; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    v[i][j][e] = 0.0f;
    }
};

/* Multiply one stage: KS / 16 steps of k16. */
template <bool BF16, class CFG>
__device__ static inline void duet__mma_stage(duet__acc<CFG::WTN> &acc, const uint16_t *sA, const uint16_t *sB, int wm,
                                              int wn)
{
    constexpr int NI = CFG::WTN / 8;
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int kk = 0; kk < CFG::KS / 16; kk++) {
        uint32_t bf[NI][2];
#pragma unroll
        for (int nj = 0; nj < NI / 2; nj++) {
            /* Matrices: (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15): the b0, b1
             * fragments of two n8 blocks, since B is stored n-major with k contiguous. */
            int n = wn * CFG::WTN + nj * 16 + (lane & 7) + ((lane >> 4) << 3);
            uint32_t r[4];
            duet__ldmatrix_x4(r, sB + duet__swz<CFG::KS>(n, kk * 2 + ((lane >> 3) & 1)));
            bf[2 * nj][0] = r[0];
            bf[2 * nj][1] = r[1];
            bf[2 * nj + 1][0] = r[2];
            bf[2 * nj + 1][1] = r[3];
        }
        /* One m16 block of A at a time keeps only 4 A registers live beside the accumulators. */
#pragma unroll
        for (int mi = 0; mi < 4; mi++) {
            /* Lanes 0-15 address rows 0-15 at k chunk 2kk, lanes 16-31 the same rows at 2kk+1:
             * the four 8x8 matrices are a0..a3 of the m16k16 A fragment. */
            uint32_t af[4];
            int row = wm * 64 + mi * 16 + (lane & 15);
            duet__ldmatrix_x4(af, sA + duet__swz<CFG::KS>(row, kk * 2 + (lane >> 4)));
#pragma unroll
            for (int ni = 0; ni < NI; ni++)
                duet__mma16816<BF16>(acc.v[mi][ni], af, bf[ni]);
        }
    }
}

template <class CFG>
__device__ static inline void duet__store_acc(const duet__kparams_t &p, const duet__acc<CFG::WTN> &acc, int64_t m0,
                                              int64_t n0, int wm, int wn)
{
    constexpr int NI = CFG::WTN / 8;
    const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int ni = 0; ni < NI; ni++) {
            /* m16n8 accumulator: c0, c1 at (g, 2t..2t+1), c2, c3 at (g + 8, 2t..2t+1). */
            int64_t row = m0 + wm * 64 + mi * 16 + g, col = n0 + wn * CFG::WTN + ni * 8 + 2 * t;
            duet__store_c2(p, row, col, acc.v[mi][ni][0], acc.v[mi][ni][1]);
            duet__store_c2(p, row + 8, col, acc.v[mi][ni][2], acc.v[mi][ni][3]);
        }
}

/* The same fragments as fp32 into a K-split block (PM x BN, row-major). */
template <class CFG>
__device__ static inline void duet__put_partial(const duet__acc<CFG::WTN> &acc, float *blk, int wm, int wn)
{
    constexpr int NI = CFG::WTN / 8, BN = CFG::WN * CFG::WTN;
    const int lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    float *at = blk + (wm * 64 + g) * BN + wn * CFG::WTN + 2 * t;
#pragma unroll
    for (int mi = 0; mi < 4; mi++)
#pragma unroll
        for (int ni = 0; ni < NI; ni++) {
            duet__splitk_put2(at + mi * 16 * BN + ni * 8, acc.v[mi][ni][0], acc.v[mi][ni][1]);
            duet__splitk_put2(at + (mi * 16 + 8) * BN + ni * 8, acc.v[mi][ni][2], acc.v[mi][ni][3]);
        }
}

#else
/* ------------------------------------------------------------------------------------------ */
/* AMD: v_mfma_f32_32x32x8 on 64-wide wavefronts                                               */
/* ------------------------------------------------------------------------------------------ */

typedef float duet__f32x16 __attribute__((ext_vector_type(16)));
typedef _Float16 duet__f16x4 __attribute__((ext_vector_type(4)));
typedef short duet__i16x4 __attribute__((ext_vector_type(4)));

/* One wavefront's 64 x WTN accumulators: 2 x NI blocks of 32 x 32 (16 floats per lane each). */
template <int WTN> struct duet__acc {
    static constexpr int NI = WTN / 32;
    duet__f32x16 v[2][NI];
    __device__ inline void zero()
    {
#pragma unroll
        for (int i = 0; i < 2; i++)
#pragma unroll
            for (int j = 0; j < NI; j++)
#pragma unroll
                for (int e = 0; e < 16; e++)
                    v[i][j][e] = 0.0f;
    }
};

template <bool BF16>
__device__ static inline duet__f32x16 duet__mfma32x32x8(const uint16_t *a, const uint16_t *b, duet__f32x16 c)
{
#if defined(DUET_DEVICE_PASS)
#if !defined(__gfx90a__) && !defined(__gfx940__) && !defined(__gfx941__) && !defined(__gfx942__)
#error "the AMD GEMM tile uses MFMA (v_mfma_f32_32x32x8*): build for gfx90a or gfx94x"
#endif
    if (BF16) {
        duet__i16x4 av = *(const duet__i16x4 *)a, bv = *(const duet__i16x4 *)b;
        return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(av, bv, c, 0, 0, 0);
    }
    duet__f16x4 av = *(const duet__f16x4 *)a, bv = *(const duet__f16x4 *)b;
    return __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, c, 0, 0, 0);
#else
    return c;
#endif
}

/* Multiply one stage: KS / 8 steps of k8. Operand layout of the 32x32x8 instruction: lane l
 * holds A[l % 32][4 (l / 32) .. +3] and B[4 (l / 32) .. +3][l % 32]; B is stored n-major, so both
 * are 8 contiguous bytes of one swizzled chunk. */
template <bool BF16, class CFG>
__device__ static inline void duet__mma_stage(duet__acc<CFG::WTN> &acc, const uint16_t *sA, const uint16_t *sB, int wm,
                                              int wn)
{
    constexpr int NI = CFG::WTN / 32;
    const int lane = threadIdx.x % 64;
    const int half = (lane / 32) * 4;
#pragma unroll
    for (int kk = 0; kk < CFG::KS / 8; kk++) {
        const uint16_t *ap[2], *bp[NI];
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
            ap[mi] = sA + duet__swz<CFG::KS>(wm * 64 + mi * 32 + lane % 32, kk) + half;
#pragma unroll
        for (int ni = 0; ni < NI; ni++)
            bp[ni] = sB + duet__swz<CFG::KS>(wn * CFG::WTN + ni * 32 + lane % 32, kk) + half;
#pragma unroll
        for (int mi = 0; mi < 2; mi++)
#pragma unroll
            for (int ni = 0; ni < NI; ni++)
                acc.v[mi][ni] = duet__mfma32x32x8<BF16>(ap[mi], bp[ni], acc.v[mi][ni]);
    }
}

/* Call f(row, col, value) for every accumulator of this lane; row and column within the pass. */
template <class CFG, class F>
__device__ static inline void duet__acc_each(const duet__acc<CFG::WTN> &acc, int wm, int wn, F &&f)
{
    constexpr int NI = CFG::WTN / 32;
    const int lane = threadIdx.x % 64;
#pragma unroll
    for (int mi = 0; mi < 2; mi++)
#pragma unroll
        for (int ni = 0; ni < NI; ni++)
#pragma unroll
            for (int e = 0; e < 16; e++) {
                /* 32x32 accumulator: lane l, item e holds row (e % 4) + 4 (l / 32) + 8 (e / 4), column l % 32. */
                const int row = wm * 64 + mi * 32 + (e % 4) + 4 * (lane / 32) + 8 * (e / 4);
                f(row, wn * CFG::WTN + ni * 32 + lane % 32, acc.v[mi][ni][e]);
            }
}

template <class CFG>
__device__ static inline void duet__store_acc(const duet__kparams_t &p, const duet__acc<CFG::WTN> &acc, int64_t m0,
                                              int64_t n0, int wm, int wn)
{
    duet__acc_each<CFG>(acc, wm, wn, [&](int row, int col, float x) {
        const int64_t gr = m0 + row, gc = n0 + col;
        if (gr < p.gemm.m && gc < p.gemm.n)
            p.c[gr * p.gemm.n + gc] = duet_from_f32(x, p.dtype);
    });
}

/* The same fragments as fp32 into a K-split block (PM x BN, row-major). */
template <class CFG>
__device__ static inline void duet__put_partial(const duet__acc<CFG::WTN> &acc, float *blk, int wm, int wn)
{
    constexpr int BN = CFG::WN * CFG::WTN;
    duet__acc_each<CFG>(acc, wm, wn, [&](int row, int col, float x) { blk[row * BN + col] = x; });
}
#endif

/**
 * Run GEMM-queue position `tile` (all threads of the CTA). smem: CFG::SMEM_BYTES bytes. Not
 * inlined into the persistent loop: the register allocator then treats the tile alone, which
 * keeps its 128 accumulators per thread from spilling (one call per tile costs nothing).
 */
template <bool BF16, int BM, int BN>
__device__ static void duet__gemm_tile(const duet__kparams_t &p, int64_t tile, uint16_t *smem)
{
    typedef duet__gemm_cfg<BM, BN> CFG;
    const duet_gemm_geom_t &g = p.gemm;
    int64_t pid_m, pid_n, mn, k0, k1;
    int32_t part;
    duet_gemm_tile_coords(&g, tile, &pid_m, &pid_n);
    duet_gemm_tile_split(&g, tile, &mn, &part);
    duet_gemm_tile_krange(&g, tile, &k0, &k1); /* k0, k1 < K: multiples of bk = 64, so of KS */
    const bool split = duet_gemm_mn_split(&g, mn);
    mn = duet_gemm_split_slot(&g, mn); /* the workspace's index of a split C tile */
    const int warp = threadIdx.x / DUET_WARP;
    const int wm = warp / CFG::WN, wn = warp % CFG::WN;
    const bool active = warp < CFG::ACTIVE;
    const int64_t n0 = pid_n * BN;
    const int64_t kb = k0;                                             /* first K element of this part */
    const int kt_total = (int)(duet_cdiv(k1, CFG::KS) - k0 / CFG::KS); /* K <= 2^24: fits */
    duet__acc<CFG::WTN> acc;
    const int vec = p.ab_vec ? 16 : p.ab_vec4 ? 4 : 0; /* the operands' copies (duet__loader::load) */

#pragma unroll 1
    for (int pass = 0; pass < CFG::PASSES; pass++) {
        const int64_t m0 = pid_m * BM + (int64_t)pass * CFG::PM;
        /* A pass whose rows all lie beyond M has nothing to compute or store; every part of a
         * K split skips it alike, so its counters are never touched. */
        if (m0 >= g.m)
            continue;
        const duet__loader<CFG::PM, CFG::KS> la(p.a, g.m, g.k, m0);
        const duet__loader<BN, CFG::KS> lb(p.b, g.n, g.k, n0);
        acc.zero();
        /* Prologue: fill STAGES - 1 stages. A group is committed even when empty, so that
         * "wait until at most STAGES - 2 groups are pending" always means "stage kt landed". */
#pragma unroll
        for (int s = 0; s < CFG::STAGES - 1; s++) {
            if (s < kt_total) {
                uint16_t *st = smem + s * CFG::STAGE_ELEMS;
                la.load(st, p.a, g.k, kb + (int64_t)s * CFG::KS, vec);
                lb.load(st + CFG::A_ELEMS, p.b, g.k, kb + (int64_t)s * CFG::KS, vec);
            }
            duet_dev_cp_async_commit();
        }
        int read_stage = 0, write_stage = CFG::STAGES - 1;
        for (int kt = 0; kt < kt_total; kt++) {
            duet_dev_cp_async_wait<CFG::STAGES - 2>();
            /* Stage kt is visible to all threads, and every thread is done with stage kt - 1,
             * which the next load overwrites. */
            duet_dev_sync();
            const int nk = kt + CFG::STAGES - 1;
            if (nk < kt_total) {
                uint16_t *st = smem + write_stage * CFG::STAGE_ELEMS;
                la.load(st, p.a, g.k, kb + (int64_t)nk * CFG::KS, vec);
                lb.load(st + CFG::A_ELEMS, p.b, g.k, kb + (int64_t)nk * CFG::KS, vec);
            }
            duet_dev_cp_async_commit();
            const uint16_t *cur = smem + read_stage * CFG::STAGE_ELEMS;
            if (active)
                duet__mma_stage<BF16, CFG>(acc, cur, cur + CFG::A_ELEMS, wm, wn);
            read_stage = read_stage + 1 == CFG::STAGES ? 0 : read_stage + 1;
            write_stage = write_stage + 1 == CFG::STAGES ? 0 : write_stage + 1;
        }
        duet_dev_cp_async_wait<0>();
        /* Nobody may refill stage 0 (next pass or tile) while a slower warp still reads it. */
        duet_dev_sync();
        if (split) {
            /* K split (or a stream-K tail part): store this part's partial; the part that
             * completes the C tile sums. */
            if (active)
                duet__put_partial<CFG>(acc, duet__splitk_block(p, mn, pass, CFG::PASSES, part, CFG::PM * BN), wm, wn);
            if (duet__splitk_arrive(p, mn, pass, CFG::PASSES)) {
#if defined(DUET_GPU_NVIDIA)
                /* The dynamic shared memory holds the wgmma tile's stages too (duet__tile_smem). */
                typedef duet__wg_cfg<BM, BN> WG;
                duet__bulk_splitk_finish<CFG::PM, BN, WG::SK_OWN_LDB, WG::SK_REGION>(p, mn, pass, CFG::PASSES,
                                                                                     (uint8_t *)smem, m0, n0, false);
#else
                duet__splitk_finish<CFG::PM, BN>(p, mn, pass, CFG::PASSES, m0, n0);
#endif
            }
            continue;
        }
        if (active)
            duet__store_acc<CFG>(p, acc, m0, n0, wm, wn);
    }
}

/* Dynamic shared memory of a persistent kernel: both tiles it may run (NVIDIA) share it. */
template <int BM, int BN> struct duet__tile_smem {
#if defined(DUET_GPU_NVIDIA)
    static constexpr int A = duet__gemm_cfg<BM, BN>::SMEM_BYTES, B = duet__wg_cfg<BM, BN>::SMEM_BYTES;
    static constexpr int BYTES = A > B ? A : B;
#else
    static constexpr int BYTES = duet__gemm_cfg<BM, BN>::SMEM_BYTES;
#endif
};

#endif /* DUET_BACKEND_GEMM_TILE_H */
