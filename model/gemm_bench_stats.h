/*
 * The analysis of the random GEMM benchmark (`duet bench --gemm-only --random`, model/gemm_bench_stats.c;
 * not installed): the classes of shapes the kernels treat differently, each group's statistics of
 * the ratio vendor time / duet time (above 1, duet is faster), and the targets the ratio is held
 * to (docs/performance.md). Host code only: the GPU command fills the rows from its measurements,
 * and the tests from hand-made figures.
 */
#ifndef DUET_MODEL_GEMM_BENCH_STATS_H
#define DUET_MODEL_GEMM_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The targets at the model's pick, judged on the aligned rows (K % 8 = 0 and N % 8 = 0: the shapes of
 * real models; on ragged ones cuBLASLt falls to fallback kernels, which would carry any median): on
 * every SM, the median, p10 and minimum of the ratio; on a budget of half the SMs or more, the median
 * and p10 against the vendor at the same SM-count target. */
#define DUET__GEMM_BENCH_TARGET_FULL_MEDIAN 0.98
#define DUET__GEMM_BENCH_TARGET_FULL_P10 0.93
#define DUET__GEMM_BENCH_TARGET_FULL_MIN 0.85
#define DUET__GEMM_BENCH_TARGET_BUDGET_MEDIAN 0.97
#define DUET__GEMM_BENCH_TARGET_BUDGET_P10 0.90

/**
 * One row as the analysis reads it: a GEMM on a budget of SMs, the vendor's time and duet's at
 * three of its candidates, ms. A figure that failed, or a candidate that does not exist, is NaN.
 */
typedef struct duet__gemm_bench_row {
    int64_t m, n, k;
    int32_t dtype;      /* DUET_DTYPE_* */
    int32_t sms;        /* the budget */
    double vendor_ms;   /* the vendor library on that many SMs */
    double pick_ms;     /* the model's pick among the candidates the split rule tries */
    double pick_all_ms; /* the model's pick over every candidate (every K split) */
    double best_ms;     /* the fastest measured candidate */
    int pick_is_best;   /* 1: the pick is the best measured candidate (the same one, not an equal time) */
} duet__gemm_bench_row_t;

/** vendor_ms / duet_ms: NaN where either is NaN (a figure missing or failed). */
double duet__gemm_bench_ratio(double vendor_ms, double duet_ms);

/*
 * The classes of shapes the kernels treat differently (backend/run.hip, tma.hip, gemm_tile.h):
 * K % 8 != 0 runs the mma.sync tile (no TMA: odd K with element loads), N % 8 != 0 stores C by the
 * threads instead of TMA; small K and small M are where the fixed costs of a tile weigh. The
 * first four split every shape; the last two overlap them.
 */
enum {
    DUET__GEMM_BENCH_CLS_ALIGNED,
    DUET__GEMM_BENCH_CLS_N_RAGGED,
    DUET__GEMM_BENCH_CLS_K_EVEN,
    DUET__GEMM_BENCH_CLS_K_ODD,
    DUET__GEMM_BENCH_CLS_SMALL_K,
    DUET__GEMM_BENCH_CLS_SMALL_M,
    DUET__GEMM_BENCH_CLS_COUNT
};
/** The classes' names, as the report prints them ("K%8=0,N%8=0", ...). */
extern const char *const duet__gemm_bench_class_names[DUET__GEMM_BENCH_CLS_COUNT];

/** Which rows a group holds: 1 if `r` belongs to the group `arg` names. */
typedef int (*duet__gemm_bench_sel_fn)(const duet__gemm_bench_row_t *r, int32_t arg);
/** A group by element type: `dtype` (DUET_DTYPE_*), or -1 for both. */
int duet__gemm_bench_in_dtype(const duet__gemm_bench_row_t *r, int32_t dtype);
/** A group by class of shapes: `cls` is one of DUET__GEMM_BENCH_CLS_*. */
int duet__gemm_bench_in_class(const duet__gemm_bench_row_t *r, int32_t cls);

/** One group's ratios: median, p10 and min, at the pick, at the pick over every K split and at the best. */
typedef struct duet__gemm_bench_group {
    size_t n;                             /* rows with all three ratios finite */
    double pick[3], pick_all[3], best[3]; /* median, p10, min */
    double regret_med;                    /* median of pick ms / best ms: what the model's choice costs */
    size_t exact;                         /* rows where the pick is the best measured */
} duet__gemm_bench_group_t;

/**
 * The statistics of the rows on `sms` SMs that `sel(row, arg)` selects and whose three ratios are
 * finite (the others are left out). scratch: 4 nr doubles of the caller's. *g_p is all zeros when
 * no row counts.
 */
void duet__gemm_bench_group(const duet__gemm_bench_row_t *rows, size_t nr, duet__gemm_bench_sel_fn sel, int32_t arg,
                            int32_t sms, double *scratch, duet__gemm_bench_group_t *g_p);

/** Which target a group of both element types answers to (its aligned rows: DUET__GEMM_BENCH_CLS_ALIGNED). */
enum { DUET__GEMM_BENCH_TARGET_NONE, DUET__GEMM_BENCH_TARGET_FULL, DUET__GEMM_BENCH_TARGET_BUDGET };
/** The target of a budget of `sms` on a device of `device_sms`: FULL on every SM, BUDGET on half or more, else NONE. */
int duet__gemm_bench_target(int32_t sms, int32_t device_sms);
/** 1 if group g meets `target` (DUET__GEMM_BENCH_TARGET_*; NONE is never met). */
int duet__gemm_bench_target_met(int target, const duet__gemm_bench_group_t *g);

#endif
