/*
 * Device helpers of the GPU tests (tests/gpu/check.hip): guard bands, buffer comparison and the
 * double-precision GEMM reference. Each waits for its result where it returns one; failures of
 * the GPU runtime abort every rank (a test binary has nothing sensible left to do then).
 */
#ifndef DUET_TESTS_GPU_CHECK_H
#define DUET_TESTS_GPU_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "backend/gpu.h"

#define CHECK_HIP(_call)                                                                                               \
    do {                                                                                                               \
        hipError_t _e = (_call);                                                                                       \
        if (_e != hipSuccess) {                                                                                        \
            fprintf(stderr, "%s failed: %s (%s:%d)\n", #_call, hipGetErrorString(_e), __FILE__, __LINE__);             \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                                              \
        }                                                                                                              \
    } while (0)

/* Allocate the helpers' scratch word (once, before any other call) and free it. */
void duet_test_dev_init(void);
void duet_test_dev_fini(void);

/* base[lo, hi) := 0xffff (NaN in fp16 and bf16: an output element nobody wrote stays NaN), and
 * every other element of base[0, total) := duet_test_canary(index). Enqueued on `s`. */
void duet_test_dev_guard_fill(uint16_t *base, size_t lo, size_t hi, size_t total, hipStream_t s);

/* The first index of base[0, total) outside [lo, hi) that no longer holds the guard pattern, or
 * -1; *got_p is its value. Waits for `s`. */
int64_t duet_test_dev_guard_check(const uint16_t *base, size_t lo, size_t hi, size_t total, hipStream_t s,
                                  uint16_t *got_p);

/* The first index where p[0, n) and q[0, n) differ, or -1. Waits for `s`. */
int64_t duet_test_dev_first_diff(const uint16_t *p, const uint16_t *q, size_t n, hipStream_t s);

/* ref[i,j] = sum_k a_ik b_jk and p[i,j] = sum_k |a_ik b_jk| in double, for every element of the
 * m x n output (row-major, A m x k and B n x k, both K-contiguous). Enqueued on `s`. */
void duet_test_dev_gemm_ref(const uint16_t *a, const uint16_t *b, int64_t m, int64_t n, int64_t k, int dtype,
                            double *ref, double *p, hipStream_t s);

#endif /* DUET_TESTS_GPU_CHECK_H */
