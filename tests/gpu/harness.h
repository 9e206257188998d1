/*
 * GPU test harness: checks that every rank agrees on, random inputs, and host references.
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

/* splitmix64: a reproducible stream per seed, so any rank can regenerate any rank's input. */
static inline uint64_t duet_test_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform values in [-1, 1), rounded to the element type; never all zeros. */
static inline void duet_test_fill(uint16_t *x, size_t n, int dtype, uint64_t seed)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dull + 1;
    for (size_t i = 0; i < n; i++) {
        double u = (double)(duet_test_rng(&s) >> 11) * (1.0 / 9007199254740992.0);
        x[i] = duet_from_f32((float)(2.0 * u - 1.0), dtype);
    }
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

/* Reference GEMM C[m,n] = A[m,k] B[n,k]^T in double, from the 16-bit inputs. */
static inline void duet_test_gemm_ref(const uint16_t *a, const uint16_t *b, double *c, int64_t m, int64_t n, int64_t k,
                                      int dtype)
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
            double s = 0;
            for (int64_t kk = 0; kk < k; kk++)
                s += ar[kk] * bj[kk];
            c[i * n + j] = s;
        }
    }
    free(ar);
    free(bt);
}

/* The same on a deterministic sample of about 1 in 997 entries; the others are set to NaN. */
static inline void duet_test_gemm_ref_sampled(const uint16_t *a, const uint16_t *b, double *c, int64_t m, int64_t n,
                                              int64_t k, int dtype)
{
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            if ((i * 7919 + j * 104729) % 997 != 0) {
                c[i * n + j] = NAN;
                continue;
            }
            double s = 0;
            for (int64_t kk = 0; kk < k; kk++)
                s += (double)duet_to_f32(a[i * k + kk], dtype) * duet_to_f32(b[j * k + kk], dtype);
            c[i * n + j] = s;
        }
}

#endif /* DUET_TESTS_GPU_HARNESS_H */
