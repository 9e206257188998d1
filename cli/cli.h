/*
 * duet command-line tool: shared option handling. The CLI is a thin front end: every decision
 * (validation, defaults, planning, pricing) is the library's; this layer parses, calls and prints.
 */
#ifndef DUET_CLI_H
#define DUET_CLI_H

#include <getopt.h>
#include <stdio.h>

#include "base/base.h"
#include "base/table.h"
#include "duet/duet.h"
#include "sim/request.h"

/* Exit codes (documented in `duet --help`). */
enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILED = 1, CLI_EXIT_USAGE = 2 };

/* Long-option codes shared by the subcommands (above the ASCII range of short options). */
enum {
    OPT_HW = 256,
    OPT_COLLECTIVE,
    OPT_GEMM,
    OPT_COMM,
    OPT_WORLD,
    OPT_DTYPE,
    OPT_ROOT,
    OPT_RANK,
    OPT_MODE,
    OPT_NUM_WGS,
    OPT_GEMM_WGS,
    OPT_COMM_WGS,
    OPT_TILE,
    OPT_COMM_TILE,
    OPT_GROUP_M,
    OPT_SPLIT_K,
    OPT_STREAM_K,
    OPT_JSON,
    OPT_HELP,
    OPT_COMM_BYTES,
    OPT_CSV,
    OPT_FIRST_PRIVATE /* subcommands number their own options from here */
};

/* getopt_long entries for the workload and configuration flags, to splice into a table. */
#define CLI_WORKLOAD_LONGOPTS                                                                                          \
    {"hw", required_argument, NULL, OPT_HW}, {"collective", required_argument, NULL, OPT_COLLECTIVE},                  \
        {"gemm", required_argument, NULL, OPT_GEMM}, {"comm", required_argument, NULL, OPT_COMM},                      \
        {"world", required_argument, NULL, OPT_WORLD}, {"dtype", required_argument, NULL, OPT_DTYPE},                  \
        {"comm-bytes", required_argument, NULL, OPT_COMM_BYTES},                                                       \
    {                                                                                                                  \
        "root", required_argument, NULL, OPT_ROOT                                                                      \
    }
#define CLI_CONFIG_LONGOPTS                                                                                            \
    {"mode", required_argument, NULL, OPT_MODE}, {"num-wgs", required_argument, NULL, OPT_NUM_WGS},                    \
        {"gemm-wgs", required_argument, NULL, OPT_GEMM_WGS}, {"comm-wgs", required_argument, NULL, OPT_COMM_WGS},      \
        {"tile", required_argument, NULL, OPT_TILE}, {"comm-tile", required_argument, NULL, OPT_COMM_TILE},            \
        {"group-m", required_argument, NULL, OPT_GROUP_M}, {"split-k", required_argument, NULL, OPT_SPLIT_K},          \
    {                                                                                                                  \
        "stream-k", no_argument, NULL, OPT_STREAM_K                                                                    \
    }

/* Help text for those flags, shared so every subcommand documents them the same way. */
extern const char cli_workload_help[];
extern const char cli_config_help[];

/** What the workload and configuration flags collected. */
typedef struct cli_common {
    const char *hw_arg; /* --hw, else the default profile (cli_default_hw()) */
    int hw_given;       /* 1: --hw was given */
    duet_hw_t hw;
    duet_workload_t wl;
    int have_gemm, have_comm, have_coll, have_world;
    const char *mode_arg;
    int num_wgs, gemm_wgs, comm_wgs, group_m, split_k; /* -1: not given */
    int stream_k;                                      /* --stream-k: 1 */
    const char *tile_arg, *comm_tile_arg;
    int64_t comm_bytes; /* --comm-bytes; 0: not given */
    duet_config_t cfg;
    int json, csv;     /* --json, --csv */
    duet__request_t r; /* the request the flags fill (cli_common_workload(), cli_common_config()) */
} cli_common_t;

void cli_common_init(cli_common_t *c);
/**
 * Handle one option if it is a workload or configuration flag.
 * @return 1 if handled, 0 if not ours, -1 on a bad value (already reported).
 */
int cli_common_option(cli_common_t *c, const char *cmd, int opt, const char *arg);
/** cli_common_option() for cli_getopt(): CLI_EXIT_OK when taken, CLI_EXIT_USAGE, or CLI_OPT_UNKNOWN. */
int cli_common_take(cli_common_t *c, const char *cmd, int opt, const char *arg);
/** Load the profile and check the workload. @return an exit code (CLI_EXIT_OK to go on). */
int cli_common_workload(cli_common_t *c, const char *cmd);
/** Build c->cfg for `mode` from the defaults and the flags, and validate it (c->r.rank: the rank's too). */
int cli_common_config(cli_common_t *c, const char *cmd, int32_t mode);
/** A request's rule broken: a usage error (pointing at --help) or a library failure. @return an exit code. */
int cli_request_fail(const char *cmd, const duet__request_t *r, duet_status_t st);

/**
 * The built-in profile of a device (duet_hw_builtin_for_device()); when the device is not the one
 * that profile describes, a note on stderr says which profile it falls back to and why.
 */
const char *cli_device_profile(const char *cmd, const char *device, const char *arch);
/**
 * The profile of a command given no --hw: in the GPU build the built-in of GPU 0 (with the note of
 * cli_device_profile(); h200 with a note when no GPU answers), else h200.
 */
const char *cli_default_hw(const char *cmd);

/** Print "duet: <cmd>: <why>" to stderr. */
/* The GPU commands' usage texts (cli/usage_gpu.c), in every build so that --help works without GPUs. */
void cli_usage_bench(FILE *f);
void cli_usage_collect(FILE *f);
void cli_usage_run(FILE *f);
/**
 * In the CPU build, a line on f saying that WHAT (e.g. "duet bench") needs the GPU build, run as
 * 'mpirun -np W build-gpu/duet CMD ...'; nothing in the GPU build.
 */
void cli_gpu_build_note(FILE *f, const char *what, const char *cmd);
/**
 * A GPU command in the CPU build: with -h or --help among argv[1..], its usage and the note on stdout
 * (exit 0); otherwise the one-line error (exit 2).
 */
int cli_gpu_only(const char *cmd, int argc, char **argv, void (*usage)(FILE *f));

/* What an option handler answers for an option that is not one of its own. */
enum { CLI_OPT_UNKNOWN = -1 };

/**
 * A command's handler of one option (`o` its options struct, `arg` the value or NULL).
 * @return CLI_EXIT_OK when taken, an exit code after a bad value (reported), or CLI_OPT_UNKNOWN.
 */
typedef int (*cli_option_fn)(void *o, const char *cmd, int opt, const char *arg);

/**
 * The argument loop of every command: getopt_long over argv with the short options -h and -o FILE
 * and `longopts`; -h (or --help mapped to 'h') sets *help and stops; every other option goes to
 * `fn`, until one fails; an option no handler takes is reported as getopt saw it. Operands are left
 * at argv[optind..] (cli_no_operands() refuses them).
 * @return an exit code (CLI_EXIT_OK to go on, or to print the usage when *help).
 */
int cli_getopt(const char *cmd, int argc, char **argv, const struct option *longopts, cli_option_fn fn, void *o,
               int *help);
/** Refuse the first operand left after cli_getopt() ("unexpected argument"). @return an exit code. */
int cli_no_operands(const char *cmd, int argc, char **argv);

void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Report a failed library call (its last error text) and map the status to an exit code. */
int cli_fail(const char *cmd, duet_status_t st);
/** Report a bad command line and point at --help. @return CLI_EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Report an unknown option or a missing argument seen by getopt_long. */
int cli_getopt_error(const char *cmd, char **argv, int opt);

/** Strict parsers: the whole string must be consumed. @return 0 on success, -1 otherwise. */
int cli_parse_i64(const char *s, long long lo, long long hi, long long *out);
int cli_parse_dims(const char *s, int n, long long *out); /* "AxBxC" with n parts, each >= 0 */
int cli_parse_double(const char *s, double lo, double hi, double *out);

/** Parse "all_gather,all_reduce" into a bitmask of 1 << duet_collective_t. @return an exit code. */
int cli_parse_collectives(const char *cmd, const char *arg, uint32_t *mask_p);

/* JSON output shared by the commands (cJSON objects). */
struct cJSON;
/**
 * Add a configuration's fields: mode, num_wgs, gemm_wgs, comm_wgs, tile, comm_tile, group_m,
 * split_k (the model's configuration codec, model/config_json.c).
 */
void cli_json_add_config(struct cJSON *o, const duet_config_t *c);
/** Add a number, or null when it is not finite (JSON has no NaN). */
void cli_json_add_num(struct cJSON *o, const char *key, double v);

/** Parse --trace-format duet|chrome into *chrome (0 or 1). @return an exit code (reported). */
int cli_parse_trace_format(const char *cmd, const char *arg, int *chrome);
/** Write one timeline to path as duet's JSON (with its plan) or as a Chrome trace. */
duet_status_t cli_write_trace(const duet_trace_t *t, const duet_plan_t *plan, const duet_hw_t *hw, int chrome,
                              const char *path);

/*
 * The result of every command that prints one, in one of three formats: text (tables for people,
 * the unit of each time in its column's header), --json (an object with a "schema": "duet-<what>/<N>"
 * member, every time in microseconds under a key ending in _us) or --csv (the table's rows, RFC 4180,
 * a header record first, times in microseconds). -o FILE puts whichever it is in FILE instead of
 * standard output, through the careful writer (base/fileio.c: atomic; a failed command leaves FILE
 * as it was).
 */
/** --json and --csv together are a usage error (exit 2, one line). @return CLI_EXIT_OK or CLI_EXIT_USAGE. */
int cli_out_formats(const char *cmd, int json, int csv);
/** The output flags a command takes: --json, --csv, -o FILE (NULL: standard output). */
typedef struct cli_outopt {
    int json, csv;
    const char *path;
} cli_outopt_t;
/* getopt_long entries of those flags (-o is also the short option 'o'). */
#define CLI_OUTPUT_LONGOPTS                                                                                            \
    {"json", no_argument, NULL, OPT_JSON}, {"csv", no_argument, NULL, OPT_CSV},                                        \
    {                                                                                                                  \
        "output", required_argument, NULL, 'o'                                                                         \
    }
/** Take `opt` when it is --json, --csv or -o. @return 1 when taken, 0 when it is another option. */
int cli_out_option(cli_outopt_t *o, int opt, const char *arg);
/** cli_out_formats() and cli_out_check() of the flags, before the work. @return an exit code (reported). */
int cli_out_validate(const char *cmd, const cli_outopt_t *o);
/**
 * Where a command's result goes: standard output, or (with -o FILE) a memory stream that
 * cli_out_close() writes to FILE atomically, so a failed command leaves FILE as it was.
 */
typedef struct cli_out {
    FILE *f;
    char *buf;
    size_t len;
    const char *path;
} cli_out_t;
/**
 * Check that an output file (`opt` FILE: -o, --rows, --report) can be written before the work
 * starts: its folder exists (else exit 2, "<opt>: FOLDER: no such folder"), so that a mistyped path
 * costs nothing. NULL: nothing to check.
 * @return an exit code (reported).
 */
int cli_out_check(const char *cmd, const char *opt, const char *path);
/** Open the result's stream (cli_out_check() first). @return an exit code (reported). */
int cli_out_open(cli_out_t *o, const char *cmd, const char *path);
/** Write the result to its file when `rc` is CLI_EXIT_OK, release it. @return rc or the write's exit code. */
int cli_out_close(cli_out_t *o, const char *cmd, int rc);
/** Print a JSON document on o->f with a final newline and delete it. @return an exit code (reported). */
int cli_out_json(cli_out_t *o, const char *cmd, struct cJSON *doc);
/**
 * Render a result table (base/table.h) on o->f: text, --csv, or with --json the document
 * {"schema": SCHEMA, MEMBER: rows}; then free the table. @return an exit code (reported).
 */
int cli_out_table(cli_out_t *o, const char *cmd, duet__table_t *t, int json, int csv, const char *schema,
                  const char *member);
/** The CSV writer (base/csv.c) on the result's stream. */
void cli_out_csv(cli_out_t *o, duet__csv_t *csv);

/** Format a byte count with a decimal unit ("16.8 MB"). */
const char *cli_bytes(double b, char *buf, size_t n);

/** One workload of duet bench's picture: its makespans over the bound max(GEMM alone, collective alone). */
typedef struct cli_bench_bar {
    duet_workload_t wl;
    double vendor_over_bound; /* the vendor's best practice; NaN when missing (no bar) */
    double duet_over_bound;   /* duet's best; NaN when missing */
} cli_bench_bar_t;
/**
 * Draw duet bench's picture of n workloads to `path` (cli/bench_plot.c): grouped by shape, one row
 * per collective. `device` ("NVIDIA H200"), `world` and `vendor` ("cuBLASLt ... + NCCL ...") name it.
 */
duet_status_t cli_bench_svg_write(const cli_bench_bar_t *bars, size_t n, const char *device, int world,
                                  const char *vendor, const char *path);

/* Subcommands: argc/argv start at the subcommand name. */
int cmd_hw(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_bench_sim(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_derive_candidates(int argc, char **argv);
int cmd_shapes(int argc, char **argv);
int cmd_bench_plot(int argc, char **argv);

#endif /* DUET_CLI_H */
