/*
 * GPU test harness: checks that every rank agrees on, random inputs, guard patterns, and the host
 * side of the references (the GEMM error bound, the collectives' expected outputs).
 *
 * A check passes only if it passes on every rank (MPI_Allreduce of the local verdicts), so all
 * ranks call every check in the same order. Rank 0 prints one line per check and, at the end,
 * "N passed, N failed".
 */
#ifndef DUET_TESTS_GPU_HARNESS_H
#define DUET_TESTS_GPU_HARNESS_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "backend/convert.h"

struct duet_test {
    int rank, world;
    int passed, failed;
    int verbose;
};

static void duet_test_check(duet_test *t, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void duet_test_check(duet_test *t, int ok, const char *fmt, ...)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all)
        t->passed++;
    else
        t->failed++;
    if (t->rank == 0 && (!all || t->verbose)) {
        char buf[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof(buf), fmt, ap);
        va_end(ap);
        printf("%s %s\n", all ? "PASS" : "FAIL", buf);
        fflush(stdout);
    }
}

/* Print a note from any rank (failures explain themselves on the rank that saw them). */
static void duet_test_note(const duet_test *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void duet_test_note(const duet_test *t, const char *fmt, ...)
{
    char buf[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    printf("  [rank %d] %s\n", t->rank, buf);
    fflush(stdout);
}

/* splitmix64's output function of the state after `step` increments from `s0`: element i of a
 * stream is a pure function of (s0, i), so any rank can regenerate any part of any rank's input. */
static inline uint64_t duet_test_mix(uint64_t s0, uint64_t step)
{
    uint64_t z = s0 + step * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Element i of the stream of `seed`: uniform in [-1, 1), rounded to the element type, never zero
 * (a value that rounds to +-0 becomes 2^-9), so that every product of a GEMM and every element
 * of a collective carries information, and an output that stayed zero shows. */
static inline uint16_t duet_test_value(uint64_t seed, size_t i, int dtype)
{
    uint64_t s0 = seed * 0x2545f4914f6cdd1dull + 1;
    double u = (double)(duet_test_mix(s0, (uint64_t)i + 1) >> 11) * (1.0 / 9007199254740992.0);
    uint16_t x = duet_from_f32((float)(2.0 * u - 1.0), dtype);
    if ((x & 0x7fffu) == 0)
        x = duet_from_f32(0.001953125f, dtype);
    return x;
}

/* Elements first .. first + n - 1 of the stream of `seed`. */
static inline void duet_test_fill_range(uint16_t *x, size_t first, size_t n, int dtype, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = duet_test_value(seed, first + i, dtype);
}

static inline void duet_test_fill(uint16_t *x, size_t n, int dtype, uint64_t seed)
{
    duet_test_fill_range(x, 0, n, dtype, seed);
}

/* A seed for part `what` of case `ctr` under the run's base seed (printed at the start). */
static inline uint64_t duet_test_case_seed(uint64_t base, uint64_t ctr, uint64_t what)
{
    return duet_test_mix(base ^ (what * 0xd1b54a32d192ed03ull), ctr + 1) >> 8;
}

/*
 * The guard pattern: what every element of a guard band (before and after an output, after the
 * used part of a source) holds, as a function of its index in the allocation, so that a write of
 * any value, or a shifted copy of the pattern itself, shows. Never 0xffff (the outputs' poison),
 * never +-0.
 */
DUET_CVT uint16_t duet_test_canary(size_t i)
{
    uint16_t v = (uint16_t)(0x6b3du ^ (uint16_t)((uint32_t)i * 0x9e37u) ^ (uint16_t)(i >> 16));
    return (v == 0xffffu || (v & 0x7fffu) == 0) ? (uint16_t)0x5a5au : v;
}

/* |a - b| in units in the last place of the 16-bit type (same-sign finite values). */
static inline int duet_test_ulps(uint16_t a, uint16_t b)
{
    if (a == b)
        return 0;
    if ((a ^ b) & 0x8000u) /* signs differ: only +0 / -0 are close */
        return ((a | b) & 0x7fffu) == 0 ? 0 : 1 << 20;
    int d = (int)(a & 0x7fffu) - (int)(b & 0x7fffu);
    return d < 0 ? -d : d;
}

/*
 * Reference GEMM C[m,n] = A[m,k] B[n,k]^T in double on the host, with P[i,j] = sum_k |a_ik b_jk|
 * (the magnitude the error bound scales with). Used to check the GPU's double reference on small
 * shapes (test_reference); the GPU computes the references of the checks themselves.
 */
static inline void duet_test_gemm_ref(const uint16_t *a, const uint16_t *b, double *c, double *p, int64_t m, int64_t n,
                                      int64_t k, int dtype)
{
    double *bt = (double *)malloc((size_t)(n * k) * sizeof(double));
    double *ar = (double *)malloc((size_t)k * sizeof(double));
    for (int64_t i = 0; i < n * k; i++)
        bt[i] = duet_to_f32(b[i], dtype);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t kk = 0; kk < k; kk++)
            ar[kk] = duet_to_f32(a[i * k + kk], dtype);
        for (int64_t j = 0; j < n; j++) {
            const double *bj = bt + j * k;
            double s = 0, sa = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                s += ar[kk] * bj[kk];
                sa += fabs(ar[kk] * bj[kk]);
            }
            c[i * n + j] = s;
            p[i * n + j] = sa;
        }
    }
    free(ar);
    free(bt);
}

/* gamma_n = n u / (1 - n u) (Higham, Accuracy and Stability of Numerical Algorithms, 3.1). */
static inline double duet_test_gamma(double n, double u)
{
    return n * u / (1.0 - n * u);
}

/*
 * Per-element bound on |C[i,j] - ref[i,j]| for a GEMM with fp16/bf16 inputs, fp32 accumulation
 * over K and C rounded to the input type; ref is the double reference, p = sum_k |a_ik b_jk|.
 *
 * Let s be the exact sum of the products, s32 the fp32 sum the GPU forms, and u_out the unit
 * roundoff of the output type. Then
 *  1. Every product a_ik b_jk is exact in fp32: fp16 significands have 11 bits and bf16 ones 8,
 *     so a product has at most 22 bits (fp32 keeps 24); the test's values are never zero and at
 *     least 2^-24 (fp16) or 2^-52 (bf16) in magnitude, so a product is at least 2^-104, above
 *     fp32's smallest normal 2^-126: no product is rounded, none underflows.
 *  2. The sum is formed in fp32 in some order: the tensor cores' blocks (wgmma k16, mma.sync
 *     m16n8k16, MFMA 32x32x8), the stages of the K loop, the K split's parts added in fp32, and
 *     whatever tree the vendor library uses. For any summation tree of K terms, every term passes
 *     through at most K - 1 additions, each with a relative error of at most u, so
 *     |s32 - s| <= gamma_{K-1}(u) * p (Higham, 4.2). NVIDIA's tensor cores align a block's terms
 *     to the largest exponent and truncate instead of rounding (Fasi, Higham, Mikaitis, Pranesh,
 *     "Numerical behavior of NVIDIA tensor cores", PeerJ CS 2021): truncation doubles the unit
 *     (2^-23), and the alignment of the block's b + 1 terms to one exponent costs at most
 *     (b + 1) / b times a sequential sum's error. We take u = 2^-22 (four times fp32's
 *     round-to-nearest 2^-24, covering both factors) and K + 2 additions:
 *     E_acc = gamma_{K+2}(2^-22) * p.
 *  3. Rounding s32 to fp16/bf16 (to nearest even) adds at most u_out * |s32| in the normal range,
 *     with u_out = 2^-11 (fp16) or 2^-8 (bf16), plus half the smallest subnormal spacing below it
 *     (eta = 2^-25 for fp16, 2^-134 for bf16). Overflow cannot happen: |s32| <= p <= K < 65504.
 *  4. The double reference has its own error, |ref - s| <= gamma_K(2^-53) * p (the products are
 *     exact in double), and so has p; E_ref = 2 * gamma_K(2^-53) * p covers both.
 * Together: |C - ref| <= |C - s32| + |s32 - s| + |s - ref|
 *                     <= u_out * (|ref| + E_acc + E_ref) + E_acc + E_ref + eta.
 * For scale: K = 1024 in bf16 with inputs uniform in [-1, 1) gives p ~ 256 and |s| ~ 10, so a
 * bound of about 0.06 + 0.04 = 0.1, while one product averages 0.25 in magnitude and a k-tile of 64
 * products that went missing would move the sum by about 2.7. NaN compares false and never passes.
 */
static inline double duet_test_gemm_bound(double ref, double p, int64_t k, int dtype)
{
    const double u_out = dtype == DUET_DTYPE_BF16 ? 0x1p-8 : 0x1p-11;
    const double eta = dtype == DUET_DTYPE_BF16 ? 0x1p-134 : 0x1p-25;
    const double e_acc = duet_test_gamma((double)k + 2.0, 0x1p-22) * p;
    const double e_ref = 2.0 * duet_test_gamma((double)k, 0x1p-53) * p;
    return u_out * (fabs(ref) + e_acc + e_ref) + e_acc + e_ref + eta;
}

/*
 * Which elements of an m x n output the GEMM check compares with the reference: every one up to
 * DUET_TEST_FULL_CHECK outputs (2048 x 2048); beyond, a strided sample: every 16th row and every
 * 16th column in full (offset 5, so that neither falls on a tile edge only), and the first and
 * last row and column (the ragged edges). Every 64 x 64 region of C has 4 sampled rows and 4
 * sampled columns. The other elements are still checked for being finite (NaN is the poison
 * an unwritten output keeps).
 */
#define DUET_TEST_FULL_CHECK ((int64_t)2048 * 2048)
static inline int duet_test_sampled(int64_t i, int64_t j, int64_t m, int64_t n, int all)
{
    if (all || m * n <= DUET_TEST_FULL_CHECK)
        return 1;
    return i % 16 == 5 || j % 16 == 5 || i == 0 || j == 0 || i == m - 1 || j == n - 1;
}

#endif /* DUET_TESTS_GPU_HARNESS_H */
