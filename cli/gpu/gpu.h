/*
 * GPU commands of the duet tool (bench, calibrate collect, tune): the MPI + backend + vendor
 * environment they share, and the measurement loop. Built only by `make gpu`.
 */
#ifndef DUET_CLI_GPU_H
#define DUET_CLI_GPU_H

#include <mpi.h>

#include "cli/cli.h"
#include "duet/backend.h"
#include "duet/vendor.h"

/** Propagate an error status to a cleanup label. */
#define DUET_CHECK_GOTO_CLI(_call, _status, _label)                                                                    \
    do {                                                                                                               \
        (_status) = (_call);                                                                                           \
        if ((_status) < 0)                                                                                             \
            goto _label;                                                                                               \
    } while (0)

/** Propagate an error status. */
#define DUET_CHECK_CLI(_call)                                                                                          \
    do {                                                                                                               \
        duet_status_t _st = (_call);                                                                                   \
        if (_st < 0)                                                                                                   \
            return _st;                                                                                                \
    } while (0)

/** Everything a GPU command holds for its whole run. */
typedef struct gpu_env {
    MPI_Comm comm;
    int rank, world;
    duet_ctx_h ctx;
    duet_vendor_h vendor;      /* NULL unless asked for */
    duet_gpu_streams_t streams;
    duet_hw_t hw;              /* the context's profile: device SM count and shared memory */
    char device[96], arch[32], driver[64], runtime[64];
    int32_t sms;
    int mpi_inited_here;
    /* Untimed runs go on, beyond the warm-up count, until this much device time (ms, the slowest
     * rank's) has passed: a figure then comes from the clock the board's power limit settles at,
     * not from the first 0.1-0.2 s at boost (docs/performance.md, "One GPU, seventh session").
     * 0 (default): the warm-up count alone. */
    double warmup_ms;
} gpu_env_t;

/** Options of the environment. */
typedef struct gpu_env_params {
    size_t heap_bytes;
    const char *hw;            /* profile name or file; NULL: by architecture */
    int vendor;                /* create the vendor context (BLASLt + NCCL/RCCL) */
    int32_t n_capped;          /* vendor: capped communicators, and their caps */
    int32_t capped_ctas[3];
    int64_t timeout_ms;
} gpu_env_params_t;

/** MPI_Init (if needed), context, vendor, streams. Collective. @return an exit code. */
int gpu_env_init(gpu_env_t *e, const char *cmd, int *argc, char ***argv, const gpu_env_params_t *p);
void gpu_env_fini(gpu_env_t *e);

/** Device buffers of one workload: A, B, C anywhere; src and dst in the symmetric heap. */
typedef struct gpu_bufs {
    void *a, *b, *c, *src, *dst, *vdst; /* vdst: the vendor collective's output (plain memory) */
    size_t src_bytes, dst_bytes;
} gpu_bufs_t;

/** Allocate and fill with random values (collective: the heap allocation is). */
duet_status_t gpu_bufs_alloc(gpu_env_t *e, const duet_workload_t *wl, uint64_t seed, gpu_bufs_t *b);
void gpu_bufs_free(gpu_env_t *e, gpu_bufs_t *b);

/** A measurement: median, min and max over the timed runs of the slowest rank. */
typedef struct gpu_stat {
    int ok;
    double med, min, max; /* milliseconds */
    int n;
    char error[200];
} gpu_stat_t;

/**
 * Run `fn` warmup (more while e->warmup_ms is not reached) + reps times (collective). Before each
 * run all ranks meet at a barrier; each run is timed with device events and the slowest rank's
 * time counts (the operation ends when every rank's part has ended). If any rank fails, every rank
 * stops and reports it; a context in error is resynchronised so the next measurement can run.
 */
void gpu_measure(gpu_env_t *e, duet_timed_fn fn, void *user, int warmup, int reps, gpu_stat_t *st);

/* A bound on the time-based warm-up's runs: a 5 us operation would take 60000 for 300 ms. */
#define GPU_WARMUP_MAX_RUNS 100000

/**
 * The loop of gpu_measure, for callers that gather the samples of one configuration over several
 * calls (calibrate collect's rounds): `warmup` untimed runs (more until e->warmup_ms of them have
 * run), then `reps` timed ones, each the slowest rank's time in ms appended at samples[*n] (room
 * for `reps` more; *n grows by one per timed run). Collective. @return 0, or -1 when a run failed
 * on any rank: every rank returns -1 with the reason in `error`, and the context is resynchronised.
 */
int gpu_measure_runs(gpu_env_t *e, duet_timed_fn fn, void *user, int warmup, int reps, double *samples, int *n,
                     char *error, size_t error_size);
/** Median, min and max of n samples (sorts them) as a successful measurement; n < 1 is a failed one. */
void gpu_stat_summarise(double *samples, int n, gpu_stat_t *st);

/* Ready-made things to time. */
typedef struct gpu_duet_job {
    gpu_env_t *e;
    duet_op_t op;
} gpu_duet_job_t;
/** One run of j->op: duet_run(), or duet_vendor_run() in vendor mode (which needs gpu_env_params_t.vendor). */
duet_status_t gpu_run_duet(void *user, void *main_stream, void *side_stream);

/** A duet operation of `wl` (or its GEMM or comm part) on the buffers under `cfg`. */
void gpu_duet_job_init(gpu_duet_job_t *j, gpu_env_t *e, const duet_workload_t *wl, const duet_config_t *cfg,
                       const gpu_bufs_t *b);
/** The GEMM part of a workload (collective removed) and the comm part (GEMM removed). */
duet_workload_t gpu_gemm_part(const duet_workload_t *wl);
duet_workload_t gpu_comm_part(const duet_workload_t *wl);

/** A progress line on stderr (rank 0): "[done/total] what ... ETA". */
void gpu_progress(const gpu_env_t *e, const char *what, size_t done, size_t total, double t0);

double gpu_now(void);

int cmd_bench(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_run(int argc, char **argv);
struct duet_tune_params;
/** duet tune WORKLOAD under mpirun (cli/gpu/cmd_tune_gpu.c); c holds the parsed workload flags. */
int cmd_tune_gpu(cli_common_t *c, const struct duet_tune_params *params, const char *hw_arg, int json, int *argc,
                 char ***argv);

#endif /* DUET_CLI_GPU_H */
