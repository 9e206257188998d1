/*
 * duet measurement: time operations on the GPUs of this node the way `duet bench`, `duet run`,
 * `duet tune` and `duet calibrate collect` do, from the C API.
 *
 *   duet_measure_params_t p = duet_measure_default_params();
 *   duet_measure_h m;
 *   duet_measure_create(MPI_COMM_WORLD, &p, &m);                  collective: context, streams
 *   duet_measure_bufs_t b;
 *   duet_measure_bufs_alloc(m, &wl, seed, &b);                     collective: random A, B, src
 *   duet_measure_job_t job = duet_measure_job(DUET_MEASURE_OP, &wl, &cfg);
 *   duet_measure_runs_t runs = duet_measure_default_runs();        5 warm-up, 20 timed runs
 *   duet_measure_stat_t s;
 *   duet_measure_run(m, &job, &b, &runs, &s);                      collective: median, min, max
 *   duet_measure_tune(m, &wl, &b, &tune_params, &result);         collective: the GPU tuner
 *   duet_measure_bufs_free(m, &b);
 *   duet_measure_destroy(m);                                       collective
 *
 * Every run of a measurement starts after a barrier of all ranks and is timed with device events
 * on each rank; the run's time is the slowest rank's (the operation ends when every rank's part
 * has ended), so every rank sees the same figures. A run that fails on any rank fails the
 * measurement on every rank, and the context is resynchronised so that the next one can run.
 *
 * Needs a GPU build (make gpu), MPI, and the baseline libraries at link time (duet/baseline.h).
 * The device utilities at the top give host C code buffers, streams and timing without GPU
 * headers.
 */
#ifndef DUET_MEASURE_H
#define DUET_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "duet/backend.h"
#include "duet/baseline.h"
#include "duet/corpus.h"
#include "duet/sim.h"
#include "duet/status.h"
#include "duet/tune.h"
#include "duet/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================================================== */
/* Device utilities for host C code                                                            */
/* ========================================================================================== */

duet_status_t duet_gpu_malloc(size_t bytes, void **ptr_p);
void duet_gpu_free(void *ptr);
/** Fill n elements of dtype with uniform values in [-1, 1) from `seed` (never zeros). */
duet_status_t duet_gpu_fill_random(void *ptr, size_t n, int32_t dtype, uint64_t seed, void *stream);

/** What a device is. */
typedef struct duet_gpu_info {
    char name[96];    /* "NVIDIA H200" */
    char arch[32];    /* "sm_90", "gfx942:sramecc+:xnack-" */
    char driver[64];  /* "CUDA driver API 13.0" */
    char runtime[64]; /* "CUDA runtime 13.0" */
    int32_t sms;      /* SMs (CUs) */
} duet_gpu_info_t;

/** Describe a device. *info_p is written only on success. */
duet_status_t duet_gpu_describe(int device, duet_gpu_info_t *info_p);

/** Two streams: work timed on `main`, with `side` for the second job of a pair. */
typedef struct duet_gpu_streams {
    void *main, *side;
    void *ev[4]; /* start, stop, fork, join */
} duet_gpu_streams_t;

/** Create the streams and their events; *s_p is written only on success. */
duet_status_t duet_gpu_streams_create(duet_gpu_streams_t *s_p);
/** Destroy and zero them; zeroed streams are a no-op. */
void duet_gpu_streams_destroy(duet_gpu_streams_t *s);

/** Work to time: enqueue on `main` (and on `side`, which starts when main starts). */
typedef duet_status_t (*duet_timed_fn)(void *user, void *main_stream, void *side_stream);

/**
 * Time one run of `fn` with device events: start on main, fork side from it, run, join side
 * back into main, stop; wait; return the elapsed milliseconds.
 */
duet_status_t duet_gpu_time(duet_gpu_streams_t *s, duet_timed_fn fn, void *user, double *ms_p);

/* ========================================================================================== */
/* The measurer                                                                                */
/* ========================================================================================== */

typedef struct duet_measure *duet_measure_h;

/** How a measurer is made. Start from duet_measure_default_params(). */
typedef struct duet_measure_params {
    duet_ctx_params_t ctx; /* the context it creates (heap, wait bound, device, profile) */
    duet_ctx_h use_ctx;    /* measure on this context instead (over the same ranks as `comm`); it is
                            * borrowed: duet_measure_destroy() leaves it. NULL (default): create one */
    int32_t baseline;      /* 1: also create the baseline context (vendor mode and the DUET_MEASURE_BASE_*
                            * jobs need it); default 0 */
    duet_baseline_params_t base;
} duet_measure_params_t;

duet_measure_params_t duet_measure_default_params(void);

/**
 * Create a measurer over `comm` (collective; MPI must be initialised): the context, the device's
 * description, two streams and, when asked for, the baseline context. Creation steps that can
 * fail on one rank only are agreed on, so all ranks fail together. *m_p is written only on success.
 */
duet_status_t duet_measure_create(MPI_Comm comm, const duet_measure_params_t *params, duet_measure_h *m_p);
/** Destroy (collective); a borrowed context is left as it is. NULL is a no-op. */
void duet_measure_destroy(duet_measure_h m);

duet_ctx_h duet_measure_ctx(duet_measure_h m);
/** The baseline context, or NULL when the measurer has none. */
duet_baseline_h duet_measure_baseline(duet_measure_h m);
/** The profile operations are validated against: the device's SM count and shared memory. */
const duet_hw_t *duet_measure_hw(duet_measure_h m);
const duet_gpu_info_t *duet_measure_gpu(duet_measure_h m);
int duet_measure_rank(duet_measure_h m);
int duet_measure_world(duet_measure_h m);
/** The two streams measurements run on (main and side). */
duet_gpu_streams_t *duet_measure_streams(duet_measure_h m);

/* ========================================================================================== */
/* Buffers                                                                                     */
/* ========================================================================================== */

/**
 * Device buffers of one workload: A [m, k], B [n, k] and C [m, n] in device memory; src and dst
 * in the symmetric heap (duet_op_src_bytes(), duet_op_dst_bytes()); base_dst, the baseline
 * collective's output, in device memory. A caller may fill one with its own pointers instead.
 */
typedef struct duet_measure_bufs {
    void *a, *b, *c, *src, *dst, *base_dst;
    size_t src_bytes, dst_bytes;
} duet_measure_bufs_t;

/**
 * Allocate the buffers of `wl` and fill A, B and src with random values drawn from `seed` (src
 * differs per rank); base_dst only when the measurer has a baseline context. Collective (the heap
 * allocation is): every rank asks for the same workload. *b_p is written only on success.
 */
duet_status_t duet_measure_bufs_alloc(duet_measure_h m, const duet_workload_t *wl, uint64_t seed,
                                      duet_measure_bufs_t *b_p);
/** Release them (collective: the heap reclaims in stack order) and zero *b; a zeroed one is a no-op. */
void duet_measure_bufs_free(duet_measure_h m, duet_measure_bufs_t *b);

/* ========================================================================================== */
/* Measuring                                                                                   */
/* ========================================================================================== */

/** How many runs. Start from duet_measure_default_runs(). */
typedef struct duet_measure_runs {
    int32_t warmup;  /* untimed runs first; default 5 */
    int32_t repeats; /* timed runs; default 20 */
    /* Then more untimed runs until this much device time (ms, the slowest rank's) has passed: a
     * figure then comes from the clock the board's power limit settles at, not from the first
     * 0.1-0.2 s at boost (on H200, 8192^3 takes 1.5 ms at boost, 1.7 ms settled; 300 ms is enough
     * there). 0 (default): the warm-up count alone. At most DUET_MEASURE_WARMUP_MAX_RUNS runs. */
    double warmup_ms;
} duet_measure_runs_t;

duet_measure_runs_t duet_measure_default_runs(void);

/* A bound on the time-based warm-up's runs: a 5 us operation would take 60000 for 300 ms. */
#define DUET_MEASURE_WARMUP_MAX_RUNS 100000

/** A measurement: median, min and max over the timed runs (each the slowest rank's time). */
typedef struct duet_measure_stat {
    int32_t ok;                    /* 1: measured; 0: failed, `error` says why */
    double med_ms, min_ms, max_ms; /* milliseconds */
    int32_t n;                     /* timed runs */
    char error[200];
} duet_measure_stat_t;

/** What a job runs. */
typedef enum {
    /* duet's operation in cfg.mode: duet_run() (fused, concurrent), duet_vendor_run() (vendor). */
    DUET_MEASURE_OP = 0,
    DUET_MEASURE_GEMM_ALONE = 1, /* the same, with the collective removed from the workload */
    DUET_MEASURE_COMM_ALONE = 2, /* the same, with the GEMM removed from the workload */
    /* The baselines (need the baseline context); cfg is not used. */
    DUET_MEASURE_BASE_GEMM = 3,       /* the library's GEMM alone, planned for sm_target SMs (0: its own plan) */
    DUET_MEASURE_BASE_COLL = 4,       /* the library's collective alone, on communicator `slot` */
    DUET_MEASURE_BASE_SEQUENTIAL = 5, /* the GEMM, then the collective, on one stream */
    DUET_MEASURE_BASE_STREAMS = 6,    /* the GEMM (sm_target) and the collective (slot) on two streams at once */
    DUET_MEASURE_WHAT_COUNT
} duet_measure_what_t;

/** One thing to time on a measurer's buffers. */
typedef struct duet_measure_job {
    int32_t what; /* duet_measure_what_t */
    duet_workload_t wl;
    duet_config_t cfg;
    int32_t sm_target; /* baselines: BLASLt's SM-count target; 0: the library's own plan */
    int32_t slot;      /* baselines: communicator slot (0: uncapped; i: capped_ctas[i - 1]) */
} duet_measure_job_t;

/** A job of `what` on the whole workload under cfg (NULL for the baselines), sm_target and slot 0. */
duet_measure_job_t duet_measure_job(int32_t what, const duet_workload_t *wl, const duet_config_t *cfg);
/** The GEMM part of a workload (collective removed) and the collective part (GEMM removed). */
duet_workload_t duet_measure_gemm_part(const duet_workload_t *wl);
duet_workload_t duet_measure_comm_part(const duet_workload_t *wl);

/**
 * Measure a job (collective): runs->warmup untimed runs (more until runs->warmup_ms of them have
 * run), then runs->repeats timed ones, each after a barrier. *st_p is always written: ok = 1 with
 * the figures, or ok = 0 with the reason (this rank's error, or "failed on another rank"), like
 * a tuner's outcome. @return DUET_OK, or the failure's status on every rank (the reason is also
 * duet_last_error()); DUET_ERR_INVALID_ARG for a bad job (nothing run).
 */
duet_status_t duet_measure_run(duet_measure_h m, const duet_measure_job_t *job, const duet_measure_bufs_t *bufs,
                               const duet_measure_runs_t *runs, duet_measure_stat_t *st_p);

/**
 * The loop of duet_measure_run() for callers that gather the samples of one job over several
 * calls (calibrate collect's rounds): the warm-up, then runs->repeats timed runs, each time (ms)
 * appended at samples[*n_inout] (room for runs->repeats more). Collective. @return DUET_OK, or
 * the failure's status on every rank with the reason in duet_last_error() (samples then partial).
 */
duet_status_t duet_measure_samples(duet_measure_h m, const duet_measure_job_t *job, const duet_measure_bufs_t *bufs,
                                   const duet_measure_runs_t *runs, double *samples, int32_t *n_inout);

/**
 * Run a job of duet's own kinds once more with its tiles recorded (collective): up to max_tiles
 * records (duet_ctx_trace_enable()), after a barrier; this rank's measured timeline is appended
 * to `trace` (duet_ctx_trace_read()), and recording is switched off again. Vendor mode and the
 * baselines are refused (DUET_ERR_INVALID_ARG): the libraries' tiles are not recorded.
 */
duet_status_t duet_measure_trace(duet_measure_h m, const duet_measure_job_t *job, const duet_measure_bufs_t *bufs,
                                 size_t max_tiles, duet_trace_t *trace);

/** The same loop for any work: `fn` is timed as duet_gpu_time() times it. */
duet_status_t duet_measure_fn(duet_measure_h m, duet_timed_fn fn, void *user, const duet_measure_runs_t *runs,
                              double *samples, int32_t *n_inout);

/** Median, min and max of n samples (sorts them) as a measurement; n < 1 is a failed one ("no timed run"). */
void duet_measure_summarise(double *samples, int32_t n, duet_measure_stat_t *st);

/* ========================================================================================== */
/* The GPU tuner                                                                               */
/* ========================================================================================== */

/**
 * Tune `wl` on the GPUs (collective): duet_tune_run() with real benchmarks. Every rank
 * benchmarks the same candidates in the same order (each a duet_measure_run() of the operation
 * with params->n_warmup and n_repeat runs); rank 0's verdicts (cache hit, winner) are agreed on
 * over MPI, so every rank returns the same configuration; only rank 0 writes the database and
 * reports warnings (through params->warn). wl->world must be the measurer's world. `bufs` may be
 * NULL: buffers of random values are allocated for the call. A failed candidate keeps its reason
 * in res_p->cands[i].error. *res_p is written only on success.
 */
duet_status_t duet_measure_tune(duet_measure_h m, const duet_workload_t *wl, const duet_measure_bufs_t *bufs,
                                const duet_tune_params_t *params, duet_tune_result_t *res_p);

/* ========================================================================================== */
/* duet bench: duet against the baselines, one workload at a time                              */
/* ========================================================================================== */

#define DUET_BENCH_MAX_SWEEP 128
#define DUET_BENCH_MAX_TILES 8
/* The collective alone: at 7 CTA counts x 2 comm tiles. */
#define DUET_BENCH_NCOMM 14
/* The carve-outs: the GEMM planned for 8, 16 and 32 fewer SMs, the collective capped at as many CTAs. */
#define DUET_BENCH_NCARVE 3

/** The parameters of a bench. Start from duet_bench_default_params(). */
typedef struct duet_bench_params {
    duet_measure_runs_t runs;
    int32_t top;  /* the simulator's best configurations per mode in the sweep; default 4 */
    int32_t grid; /* 1 (default): the coarse grid joins the sweep */
} duet_bench_params_t;

duet_bench_params_t duet_bench_default_params(void);
/** A measurer for benches: a 2 GiB heap, and the baseline context with the carve-outs' capped communicators. */
duet_measure_params_t duet_bench_measure_params(void);

/** The figures of one workload. */
typedef struct duet_bench_row {
    duet_workload_t wl;
    /* The baselines: the GEMM and the collective alone, one after the other, on two streams, and
     * on two streams with the GEMM planned for carve[i] fewer SMs and the collective capped at
     * carve[i] CTAs. */
    duet_measure_stat_t base_gemm, base_coll, base_seq, base_streams, base_carve[DUET_BENCH_NCARVE];
    int32_t carve[DUET_BENCH_NCARVE];
    /* duet's GEMM alone on every SM: the best tile and K split, and each tile at its best split. */
    duet_measure_stat_t gemm;
    duet_gemm_tile_t gemm_tile;
    int32_t gemm_split;
    duet_measure_stat_t gemm_tiles[DUET_BENCH_MAX_TILES];
    int32_t gemm_tiles_split[DUET_BENCH_MAX_TILES];
    /* duet's collective alone at CTA count comm_ctas[i] (as asked; capped at the SMs when run) and
     * comm tile comm_cm[i] x comm_cn[i]; best_comm indexes the best, -1 when none ran. */
    duet_measure_stat_t comm[DUET_BENCH_NCOMM];
    int32_t comm_ctas[DUET_BENCH_NCOMM], comm_cm[DUET_BENCH_NCOMM], comm_cn[DUET_BENCH_NCOMM];
    int32_t best_comm;
    /* duet at the static defaults of both modes. */
    duet_config_t fused_def, conc_def;
    duet_measure_stat_t fused_def_stat, conc_def_stat;
    /* The sweep: the simulator's picks (sweep_pred: its makespan, ms; NaN for the grid's) and the
     * grid; best_mode[mode] indexes each mode's best, -1 when none ran. */
    int32_t n_sweep;
    duet_config_t sweep_cfg[DUET_BENCH_MAX_SWEEP];
    double sweep_pred[DUET_BENCH_MAX_SWEEP];
    duet_measure_stat_t sweep[DUET_BENCH_MAX_SWEEP];
    int32_t best_mode[DUET_MODE_COUNT];
    /* Vendor mode with carve[i] CTAs on the collective. */
    duet_config_t vmode_cfg[DUET_BENCH_NCARVE];
    duet_measure_stat_t vmode[DUET_BENCH_NCARVE];
} duet_bench_row_t;

/**
 * Measure the figures of `wl` (collective) on `bufs` (its buffers, with base_dst). A workload
 * without a collective gets the baseline GEMM and duet's GEMM only. The GEMM figures of a shape
 * already in `earlier` (n_earlier rows, e.g. the same GEMM with another collective) are copied,
 * not measured again. `ws` serves the simulator's sweep. A figure that fails is recorded as
 * failed in its stat. @return DUET_OK with *row_p written, or DUET_ERR_INVALID_ARG.
 */
duet_status_t duet_bench_workload(duet_measure_h m, duet_sim_ws_t *ws, const duet_bench_params_t *params,
                                  const duet_workload_t *wl, const duet_measure_bufs_t *bufs,
                                  const duet_bench_row_t *earlier, size_t n_earlier, duet_bench_row_t *row_p);

/** The figures derived from a row (ms; infinite when a figure is missing). */
typedef struct duet_bench_derived {
    double bound_ms;     /* max(baseline GEMM alone, baseline collective alone) */
    double best_base_ms; /* the best baseline practice: sequential, two streams, a carve-out */
    double best_duet_ms; /* duet's best: a default, the sweep's best (copy mode's too), or vendor mode */
    double best_own_ms;  /* duet's own kernels only (fused, concurrent, copy), without vendor mode */
    double duet_gemm_ms, duet_comm_ms;
    const char *best_base_name; /* "sequential", "two streams", "carve-out 8", ... ("-" when none) */
    const char *best_duet_name; /* "fused default", "concurrent sweep", "copy sweep", "vendor mode 16", ... */
} duet_bench_derived_t;

void duet_bench_derive(const duet_bench_row_t *row, duet_bench_derived_t *d);

/* ========================================================================================== */
/* duet bench --gemm-only --random: duet's GEMM against the vendor's on an SM budget           */
/* ========================================================================================== */

/* Candidates of one (shape, budget): the tiles x (the K splits of DUET_AUTO_SPLIT_KS and
 * stream-K) (8 x 7). */
#define DUET_GEMM_BUDGET_MAX_CANDS 56

/**
 * The figures of one GEMM on a budget of `sms` SMs: the vendor library planned for that many SMs
 * (its SM-count target; at every SM of the device its own plan), and duet's GEMM alone on a grid
 * of exactly `sms` CTAs (fused mode, num_wgs = gemm_wgs = sms, comm_wgs 0: one persistent CTA per
 * SM, the way `duet run --mode fused --num-wgs n --gemm-wgs n` runs it) at every tile and every
 * K split of DUET_AUTO_SPLIT_KS the configuration rules allow, each marked with whether
 * duet_split_k_worth_trying_on() would try it on that many SMs, and with stream-K where its
 * plan splits the last wave on that many SMs (which the rule, as the sweep, tries). The model's pick is the
 * candidate among those the rule tries that the simulator (fluid policy, the measurer's
 * profile) predicts fastest: what the sweep and the tuner would choose; pick_all is its
 * fastest over every candidate (what a wider rule would choose). Every candidate carries its
 * prediction. Ratios are vendor ms / duet ms: above 1, duet is faster.
 */
typedef struct duet_gemm_budget_row {
    duet_workload_t wl;         /* the GEMM alone (no collective) */
    int32_t sms;                /* the budget: duet's grid and the vendor's SM count */
    int32_t vendor_target;      /* the SM-count target given to the vendor library: 0 (its own plan) at every SM */
    duet_measure_stat_t vendor; /* timed before and after duet's figures, the two halves pooled */
    int32_t n_cand;
    duet_config_t cand_cfg[DUET_GEMM_BUDGET_MAX_CANDS];
    double cand_pred_ms[DUET_GEMM_BUDGET_MAX_CANDS]; /* the simulator's time, ms (NaN: not priced) */
    int8_t cand_rule[DUET_GEMM_BUDGET_MAX_CANDS];    /* 1: duet_split_k_worth_trying_on() tries it */
    duet_measure_stat_t cand[DUET_GEMM_BUDGET_MAX_CANDS];
    int32_t best;     /* the fastest measured candidate; -1 when none ran */
    int32_t pick;     /* the model's pick (fastest predicted the rule tries); -1 when none was priced */
    int32_t pick_all; /* the fastest predicted of every candidate; -1 when none was priced */
} duet_gemm_budget_row_t;

/**
 * The candidates of `wl`'s GEMM on `sms` SMs and their predicted times, with nothing measured
 * (pure host code: the time estimate before a run, and the tests): row_p gets wl, sms,
 * vendor_target, the candidates, their predictions and the pick; best -1, every stat failed
 * ("not measured"). `hw` prices them (its n_sms is the device's). @return DUET_OK, or
 * DUET_ERR_INVALID_ARG (no GEMM, sms outside [1, hw->n_sms]).
 */
duet_status_t duet_bench_gemm_budget_plan(const duet_hw_t *hw, duet_sim_ws_t *ws, const duet_workload_t *wl,
                                          int32_t sms, duet_gemm_budget_row_t *row_p);

/**
 * Measure one GEMM on a budget of `sms` SMs (collective; bufs: the GEMM's buffers): the vendor's
 * GEMM (params->runs, with runs.warmup_ms spent once, before its first half, so that every
 * figure of the row comes from the clock the board settles at), then every candidate of
 * duet_bench_gemm_budget_plan() (runs.warmup runs, runs.repeats timed), then the vendor's second
 * half. A figure that fails is recorded as failed. @return DUET_OK with *row_p written, or the
 * errors of duet_bench_gemm_budget_plan() and DUET_ERR_NO_MEMORY.
 */
duet_status_t duet_bench_gemm_budget(duet_measure_h m, duet_sim_ws_t *ws, const duet_bench_params_t *params,
                                     const duet_workload_t *wl, const duet_measure_bufs_t *bufs, int32_t sms,
                                     duet_gemm_budget_row_t *row_p);

/* ========================================================================================== */
/* duet calibrate collect: the corpus grid, measured in interleaved rounds                     */
/* ========================================================================================== */

/** Points of one workload at most (the largest grid: W1 at world >= 2, 102). */
#define DUET_COLLECT_MAX_POINTS 104

/*
 * The collector's grids:
 *  - REFERENCE (default): the grid below (duet_collect_points()), the reference design's fractions;
 *  - W1: the one-GPU corpus (docs/calibration.md, "A corpus of one GPU"): every mode at W = 1
 *    (fused at 4 fractions x 5 tiles, concurrent and vendor with 8, 16, 32 CTAs on the
 *    collective), the GEMM alone at a quarter, half, three quarters and all of the SMs for every
 *    tile (and K in 2 and 4 parts where worth trying), the vendor GEMM alone at the same SM
 *    targets, the collective alone at 8 to 132 CTAs, and for all_gather, all_to_all and broadcast
 *    copy mode on 1 and 2 copy streams (2 where the critical rank has two copies) beside the GEMM
 *    and alone. Vendor rows need the baseline context.
 *  - COPY: copy mode's rows only, for the copy engines' constants (docs/calibration.md, "Copy
 *    mode's constants"): for all_gather, all_to_all and broadcast, copy mode on 1 and 2 copy
 *    streams (as in W1) beside the GEMM and alone, and the GEMM alone on every SM for every tile
 *    (the GEMM copy mode runs, without the copies); other collectives get only the GEMM rows.
 */
enum { DUET_COLLECT_GRID_REFERENCE = 0, DUET_COLLECT_GRID_W1 = 1, DUET_COLLECT_GRID_COPY = 2, DUET_COLLECT_GRID_COUNT };
const char *duet_collect_grid_name(int32_t grid); /* "reference", "w1", "copy" */
/** The grid named `name` ("reference", "w1", "copy"); -1 for another name. */
int32_t duet_collect_grid_parse(const char *name);

/** Record the grid the collector sweeps in a corpus's header (fracs, tiles, comm grids, K splits). */
void duet_collect_grid(duet_corpus_t *c);
/** The same for a grid of duet_collect_points_grid(). */
void duet_collect_grid_of(duet_corpus_t *c, int32_t grid);

/**
 * The points of one workload on a device of `sms` SMs and profile `hw`, in grid order: fused
 * mode at the fractions x tiles, concurrent mode at the comm grids, the GEMM alone per tile, the
 * collective alone at several CTA counts, and, per tile where duet_split_k_worth_trying() allows
 * it, the GEMM alone and fused points with K in 2 and in 4 parts. @return how many (at most cap).
 */
size_t duet_collect_points(const duet_hw_t *hw, int32_t sms, const duet_workload_t *wl, duet_corpus_row_t *pts,
                           size_t cap);
/**
 * The W1 grid at world >= 2 also measures the vendor's collective (NCCL, RCCL) alone at each CTA
 * cap of its vendor points (rows of kind comm_alone in vendor mode, comm_wgs the cap), on the
 * baseline context's capped communicators; at world 1 NCCL refuses two ranks on one GPU, so none.
 * Set those caps in the baseline's parameters (slot i + 1 is capped at the grid's i-th cap).
 */
void duet_collect_baseline_caps(int32_t grid, duet_baseline_params_t *base);
/** The points of one workload in grid `grid` (DUET_COLLECT_GRID_*). */
size_t duet_collect_points_grid(const duet_hw_t *hw, int32_t sms, int32_t grid, const duet_workload_t *wl,
                                duet_corpus_row_t *pts, size_t cap);

/**
 * The order in which round `round` visits a workload's n points: a permutation of 0..n-1 seeded
 * by the workload and the round, the same on every rank and in a resumed run.
 */
void duet_collect_order(const duet_workload_t *wl, int32_t round, size_t *order, size_t n);
/**
 * The same with an order seed: 0 gives duet_collect_order()'s permutations; another seed gives
 * other permutations in every round (a second sweep of the same grid in another order, whose
 * spread against the first is the measurement's noise band).
 */
void duet_collect_order_seeded(const duet_workload_t *wl, int32_t round, uint64_t order_seed, size_t *order, size_t n);

/** How a workload's points are measured. Start from duet_collect_default_params(). */
typedef struct duet_collect_params {
    int32_t warmup;      /* untimed runs at a point's first visit (one at each later visit); default 3 */
    int32_t repeats;     /* timed runs per point at least; default 8 */
    int32_t rounds;      /* interleaved rounds; each takes ceil(repeats / rounds) runs per point; default 3 */
    int32_t grid;        /* DUET_COLLECT_GRID_*; default REFERENCE */
    uint64_t order_seed; /* duet_collect_order_seeded()'s seed; default 0 */
    /* Untimed runs of a workload's first point until this many ms of them have run (default 0):
     * the points after it, measured back to back, then run at the clock the board's power limit
     * settles at, not at the boost of an idle GPU. */
    double warmup_ms;
} duet_collect_params_t;

duet_collect_params_t duet_collect_default_params(void);
/** Timed runs each point gets: rounds x ceil(repeats / rounds), at least `repeats`. */
int32_t duet_collect_runs_per_point(const duet_collect_params_t *params);

/** A point's state: in, whether to measure it; out, whether that failed. */
enum { DUET_COLLECT_SKIP = 0, DUET_COLLECT_RUN = 1, DUET_COLLECT_FAILED = 2 };

/** Called before each visit of a point to measure: round, and its place q in the round's order. */
typedef void (*duet_collect_progress_fn)(void *user, const duet_corpus_row_t *pt, int32_t round, size_t q);

/**
 * Measure the points pts[0..n) of one workload (collective) on its buffers in params->rounds
 * rounds, each visiting the points in duet_collect_order()'s order. state[p] says which to
 * measure (DUET_COLLECT_RUN); a point that fails becomes DUET_COLLECT_FAILED and is not run in
 * later rounds. Afterwards every point that was to run has its row's results filled (ok, ms,
 * min_ms, max_ms, repeats, error). `progress` may be NULL. @return DUET_OK, DUET_ERR_NO_MEMORY.
 */
duet_status_t duet_collect_workload(duet_measure_h m, const duet_collect_params_t *params,
                                    const duet_measure_bufs_t *bufs, duet_corpus_row_t *pts, int32_t *state, size_t n,
                                    duet_collect_progress_fn progress, void *user);

#ifdef __cplusplus
}
#endif
#endif /* DUET_MEASURE_H */
