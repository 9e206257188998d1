/*
 * GPU commands of the duet tool (bench, run, tune, calibrate collect): the MPI set-up they share
 * around the library's measurer (include/duet/measure.h), which does the measuring. Built only by
 * `make gpu`.
 */
#ifndef DUET_CLI_GPU_H
#define DUET_CLI_GPU_H

#include <mpi.h>

#include "cli/cli.h"
#include "duet/measure.h"

/** What a GPU command holds for its whole run. */
typedef struct gpu_env {
    MPI_Comm comm;
    int rank, world;
    duet_measure_h m;
    const duet_gpu_info_t *gpu; /* the device: name, arch, SMs, versions */
    const duet_hw_t *hw;        /* the context's profile: the device's SM count and shared memory */
    int mpi_inited_here;
} gpu_env_t;

/**
 * MPI_Init (if needed) and the measurer over MPI_COMM_WORLD (collective). Failures are reported
 * as "duet: <cmd>: rank R: <why>". @return an exit code; on failure nothing is left to release.
 */
int gpu_env_init(gpu_env_t *e, const char *cmd, int *argc, char ***argv, const duet_measure_params_t *p);
void gpu_env_fini(gpu_env_t *e);

/** A progress line on stderr (rank 0): "[done/total] what ... ETA". */
void gpu_progress(const gpu_env_t *e, const char *what, size_t done, size_t total, double t0);

double gpu_now(void);

int cmd_bench(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_run(int argc, char **argv);
struct duet_tune_params;
/**
 * duet tune WORKLOAD under mpirun (cli/gpu/cmd_tune_gpu.c); c holds the parsed workload flags. Rank 0
 * prints the result (text, or with `json` the duet-tune/1 document) on standard output or in
 * `out_path` (NULL: standard output).
 */
int cmd_tune_gpu(cli_common_t *c, const struct duet_tune_params *params, const char *hw_arg, int json,
                 const char *out_path, int *argc, char ***argv);

/* duet bench's result goes to -o FILE (else standard output) in the format of --json or --csv
 * (neither: the table as text); with -o the table is printed on standard output as well, so that a
 * long GPU run shows its figures. */
/* duet bench's report (cli/gpu/bench_report.c): the table and summary as text, the JSON
 * (duet-bench/2, times in us), the CSV (one row per workload, times in us), the picture. */
duet_status_t bench_print_table(FILE *f, const gpu_env_t *e, const duet_bench_row_t *rows, size_t n,
                                const duet_bench_params_t *p, int32_t dtype);
duet_status_t bench_print_gemms(FILE *f, const gpu_env_t *e, const duet_bench_row_t *rows, size_t n,
                                const duet_bench_params_t *p);
/* The zero-CTA baseline of one workload: NCCL's zero-CTA policy beside the library's GEMM on every
 * SM (stat: ok 0 with no error where not measured) and the path the library took for the collective
 * (duet_baseline_coll_path(); probed 0 where not asked, -1 where the probe failed, error saying why). */
typedef struct bench_zero {
    duet_measure_stat_t stat;
    int probed;
    int32_t nodes[DUET_BASELINE_NODE_KINDS]; /* the captured collective's nodes by kind */
    char error[160];
} bench_zero_t;
/* Its lines after the summary (zero may be NULL), and its figure, path and ratio in each workload's JSON. */
void bench_print_zero_cta(FILE *f, const gpu_env_t *e, const duet_bench_row_t *rows, const bench_zero_t *zero,
                          size_t n);
duet_status_t bench_write_json(FILE *f, const gpu_env_t *e, const duet_bench_row_t *rows, const bench_zero_t *zero,
                               size_t n, const duet_bench_params_t *p, int gemm_only);
duet_status_t bench_write_csv(FILE *f, const duet_bench_row_t *rows, size_t n, int gemm_only);
duet_status_t bench_write_svg(const gpu_env_t *e, const duet_bench_row_t *rows, size_t n, const char *path);

/* The JSON pieces the bench reports share: a figure ({ok, us, min_us, max_us, n} or {ok, error}),
 * the same with its configuration and prediction (pred_us; left out when NaN), and a report's start
 * (the schema, the device, the vendor library, the date, the runs) and end (printed on f; a failed
 * allocation anywhere in between fails it). Times are the measurer's ms written as us. */
struct cJSON;
struct cJSON *bench_stat_json(const duet_measure_stat_t *s);
struct cJSON *bench_stat_cfg_json(const duet_measure_stat_t *s, const duet_config_t *c, double pred_ms);
struct cJSON *bench_json_begin(const gpu_env_t *e, const duet_bench_params_t *p, const char *schema);
duet_status_t bench_json_end(struct cJSON *o, FILE *f);

/* duet bench --gemm-only --random (cli/gpu/bench_random.c). */
typedef struct bench_random_opts {
    size_t n;      /* shapes drawn */
    uint64_t seed; /* their seed */
    int64_t min_dim, max_dim;
    int both_dtypes; /* 1: every shape in fp16 and in bf16; 0: in `dtype` only */
    int32_t dtype;
    int32_t n_budgets;
    double budgets[8]; /* SM budgets as given: (0, 1] a share of the SMs, >= 2 a count */
} bench_random_opts_t;

/** Parse "1,0.75,0.5" or "132,99,66" into o->budgets. @return an exit code. */
int bench_random_parse_budgets(const char *arg, bench_random_opts_t *o);
/** Draw the shapes, measure every (shape, dtype, budget), print and write the report. @return an exit code. */
int bench_random_run(gpu_env_t *e, const duet_bench_params_t *p, const bench_random_opts_t *o, const cli_outopt_t *bo);

#endif /* DUET_CLI_GPU_H */
