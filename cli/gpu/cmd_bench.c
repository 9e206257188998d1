/*
 * duet bench: duet against the baselines (cuBLASLt + NCCL, hipBLASLt + RCCL), side by side in one
 * run (docs/performance.md). The library measures every figure of a workload
 * (duet_bench_workload(), include/duet/measure.h); this file parses the options and runs the
 * workloads, cli/gpu/bench_report.c prints and writes the results.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/gpu/gpu.h"

/* --gemm-only: each GEMM shape of the workloads once, without its collective. */
static void bench_gemms_only(duet_workloads_t *wls)
{
    size_t n = 0;
    for (size_t i = 0; i < wls->n; i++) {
        duet_workload_t g = duet_measure_gemm_part(&wls->w[i]);
        int seen = 0;
        for (size_t j = 0; j < n && !seen; j++)
            seen = wls->w[j].m == g.m && wls->w[j].n == g.n && wls->w[j].k == g.k;
        if (!seen && g.m > 0)
            wls->w[n++] = g;
    }
    wls->n = n;
}

/*
 * The baseline "NCCL with the zero-CTA policy beside the GEMM on every SM": the library's GEMM on its
 * own plan (no SM target) and the collective on the zero-CTA communicator on two streams at once.
 * Only where the library has the policy (duet_baseline_has_zero_cta()) and copies this collective;
 * elsewhere z->stat stays ok = 0 with no error: not measured. Then the path the library took for the
 * collective (users report copy-engine settings falling back to SM kernels without a word).
 */
static void bench_zero_cta(const gpu_env_t *e, const duet_bench_params_t *p, const duet_workload_t *w,
                           const duet_measure_bufs_t *b, bench_zero_t *z)
{
    memset(z, 0, sizeof(*z));
    duet_baseline_h base = duet_measure_baseline(e->m);
    if (!duet_baseline_has_zero_cta(base) || !duet_baseline_zero_cta_runs(w->coll))
        return;
    duet_measure_job_t j = duet_measure_job(DUET_MEASURE_BASE_STREAMS, w, NULL);
    j.sm_target = 0;
    j.slot = DUET_BASELINE_SLOT_ZERO_CTA;
    duet_measure_run(e->m, &j, b, &p->runs, &z->stat);
    z->probed = duet_baseline_coll_path(base, DUET_BASELINE_SLOT_ZERO_CTA, w, z->nodes) == DUET_OK ? 1 : -1;
    if (z->probed < 0)
        snprintf(z->error, sizeof(z->error), "%s", duet_last_error());
}

/* Every workload's figures, one after the other, each on its own buffers. @return an exit code. */
static int bench_run(gpu_env_t *e, const duet_bench_params_t *p, const duet_workloads_t *wls, duet_bench_row_t *rows,
                     bench_zero_t *zero)
{
    duet_sim_ws_t *ws = NULL;
    duet_status_t st = duet_sim_ws_create(&ws);
    if (st < 0)
        return cli_fail("bench", st);
    double t0 = gpu_now();
    for (size_t i = 0; i < wls->n && st >= 0; i++) {
        const duet_workload_t *w = &wls->w[i];
        char what[96];
        snprintf(what, sizeof(what), "%lldx%lldx%lld %s", (long long)w->m, (long long)w->n, (long long)w->k,
                 duet_collective_name(w->coll));
        gpu_progress(e, what, i, wls->n, t0);
        duet_measure_bufs_t b;
        if ((st = duet_measure_bufs_alloc(e->m, w, 1000 + i, &b)) < 0)
            break;
        st = duet_bench_workload(e->m, ws, p, w, &b, rows, i, &rows[i]);
        if (st >= 0)
            bench_zero_cta(e, p, w, &b, &zero[i]);
        duet_measure_bufs_free(e->m, &b);
    }
    duet_sim_ws_destroy(ws);
    if (st < 0)
        return cli_fail("bench", st);
    gpu_progress(e, "done", wls->n, wls->n, t0);
    return CLI_EXIT_OK;
}

/* The table and summary as text on f. */
static duet_status_t bench_text(FILE *f, const gpu_env_t *e, const duet_bench_params_t *p, const duet_bench_row_t *rows,
                                const bench_zero_t *zero, size_t n, int32_t dtype, int gemm_only)
{
    if (gemm_only)
        return bench_print_gemms(f, e, rows, n, p);
    DUET_CHECK(bench_print_table(f, e, rows, n, p, dtype));
    bench_print_zero_cta(f, e, rows, zero, n);
    return DUET_OK;
}

/* Rank 0: the result in its format (-o FILE or standard output), the table on standard output
 * beside a file, and the picture. @return an exit code. */
static int bench_report(const gpu_env_t *e, const duet_bench_params_t *p, const duet_bench_row_t *rows,
                        const bench_zero_t *zero, size_t n, int32_t dtype, int gemm_only, const cli_outopt_t *bo,
                        const char *svg)
{
    duet_status_t st = DUET_OK;
    int rc = CLI_EXIT_OK;
    if (bo->path != NULL || (!bo->json && !bo->csv))
        st = bench_text(stdout, e, p, rows, zero, n, dtype, gemm_only);
    if (st >= 0 && (bo->path != NULL || bo->json || bo->csv)) {
        cli_out_t out;
        if ((rc = cli_out_open(&out, "bench", bo->path)) != CLI_EXIT_OK)
            return rc;
        st = bo->json  ? bench_write_json(out.f, e, rows, zero, n, p, gemm_only)
             : bo->csv ? bench_write_csv(out.f, rows, n, gemm_only)
                       : bench_text(out.f, e, p, rows, zero, n, dtype, gemm_only);
        rc = cli_out_close(&out, "bench", st < 0 ? cli_fail("bench", st) : CLI_EXIT_OK);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (st >= 0 && svg)
        st = bench_write_svg(e, rows, n, svg);
    if (st < 0)
        return cli_fail("bench", st);
    if (bo->path != NULL || svg != NULL)
        printf("wrote %s%s%s\n", bo->path ? bo->path : "", bo->path && svg ? " and " : "", svg ? svg : "");
    return CLI_EXIT_OK;
}

enum {
    O_SHAPES = 300,
    O_COLL,
    O_DTYPE,
    O_REP,
    O_WARM,
    O_WARMMS,
    O_TOP,
    O_NOGRID,
    O_SVG,
    O_HW,
    O_GEMM,
    O_RANDOM,
    O_SEED,
    O_MINDIM,
    O_MAXDIM,
    O_BUDGETS
};

/* duet bench's flags. */
typedef struct bench_opts {
    const char *shapes, *svg, *hw;
    cli_outopt_t bo;
    uint32_t colls;
    int32_t dtype;
    long long reps, warm, warm_ms, top, rnd;
    int grid, gemm_only, dtype_given, random_given, help;
    bench_random_opts_t ro;
} bench_opts_t;

/* --dtype and the flags of --random: what a random draw is. */
static int bench_random_option(bench_opts_t *o, int opt, const char *arg)
{
    long long dim;
    switch (opt) {
    case O_DTYPE:
        o->dtype_given = 1;
        o->ro.both_dtypes = strcmp(arg, "both") == 0;
        if (!o->ro.both_dtypes && duet_dtype_parse(arg, &o->dtype) < 0)
            return cli_usage_error("bench", "--dtype: %s (or both, with --random)", duet_last_error());
        return CLI_EXIT_OK;
    case O_RANDOM:
        if (cli_parse_i64(arg, 1, 100000, &o->rnd) != 0)
            return cli_usage_error("bench", "--random: '%s' is not an integer in [1, 100000]", duet__q(arg));
        return CLI_EXIT_OK;
    case O_SEED: {
        o->random_given = 1;
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 10);
        if (arg[0] < '0' || arg[0] > '9' || errno != 0 || end == arg || *end != '\0')
            return cli_usage_error("bench", "--seed: '%s' is not an unsigned 64-bit integer", duet__q(arg));
        o->ro.seed = (uint64_t)v;
        return CLI_EXIT_OK;
    }
    case O_MINDIM:
    case O_MAXDIM:
        o->random_given = 1;
        if (cli_parse_i64(arg, 1, INT64_C(1) << 24, &dim) != 0)
            return cli_usage_error("bench", "--%s: '%s' is not an integer in [1, 2^24]",
                                   opt == O_MINDIM ? "min-dim" : "max-dim", duet__q(arg));
        *(opt == O_MINDIM ? &o->ro.min_dim : &o->ro.max_dim) = dim;
        return CLI_EXIT_OK;
    case O_BUDGETS:
        o->random_given = 1;
        return bench_random_parse_budgets(arg, &o->ro);
    default:
        return CLI_OPT_UNKNOWN;
    }
}

/* --repeats, --warmup, --warmup-ms and --top: how each workload is measured. */
static int bench_runs_option(bench_opts_t *o, int opt, const char *arg)
{
    switch (opt) {
    case O_REP:
        if (cli_parse_i64(arg, 1, 100000, &o->reps) != 0)
            return cli_usage_error("bench", "--repeats: '%s' is not a positive integer", duet__q(arg));
        return CLI_EXIT_OK;
    case O_WARM:
        if (cli_parse_i64(arg, 0, 100000, &o->warm) != 0)
            return cli_usage_error("bench", "--warmup: '%s' is not a non-negative integer", duet__q(arg));
        return CLI_EXIT_OK;
    case O_WARMMS:
        if (cli_parse_i64(arg, 0, 60000, &o->warm_ms) != 0)
            return cli_usage_error("bench", "--warmup-ms: '%s' is not an integer in [0, 60000]", duet__q(arg));
        return CLI_EXIT_OK;
    case O_TOP:
        if (cli_parse_i64(arg, 0, 64, &o->top) != 0)
            return cli_usage_error("bench", "--top: '%s' is not an integer in [0, 64]", duet__q(arg));
        return CLI_EXIT_OK;
    default:
        return CLI_OPT_UNKNOWN;
    }
}

/* One option of duet bench. */
static int bench_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    bench_opts_t *o = arg0;
    int rc;
    switch (opt) {
    case O_SHAPES:
        o->shapes = arg;
        return CLI_EXIT_OK;
    case O_COLL:
        return cli_parse_collectives("bench", arg, &o->colls);
    case O_NOGRID:
        o->grid = 0;
        return CLI_EXIT_OK;
    case O_GEMM:
        o->gemm_only = 1;
        return CLI_EXIT_OK;
    case O_SVG:
        o->svg = arg;
        return CLI_EXIT_OK;
    case O_HW:
        o->hw = arg;
        return CLI_EXIT_OK;
    default:
        break;
    }
    if ((rc = bench_random_option(o, opt, arg)) != CLI_OPT_UNKNOWN ||
        (rc = bench_runs_option(o, opt, arg)) != CLI_OPT_UNKNOWN)
        return rc;
    return cli_out_option(&o->bo, opt, arg) ? CLI_EXIT_OK : CLI_OPT_UNKNOWN;
}

/* The rules between the flags, after the parse. @return an exit code (CLI_EXIT_OK to go on). */
static int bench_check(bench_opts_t *o, int argc, char **argv)
{
    if (optind < argc) {
        /* The form before duet 0.2: --json took the file name. */
        size_t len = strlen(argv[optind]);
        int json_name = o->bo.json && len > 5 && strcmp(argv[optind] + len - 5, ".json") == 0;
        return cli_usage_error("bench", "unexpected argument '%s'%s", duet__q(argv[optind]),
                               json_name ? " (--json is a flag: --json -o FILE writes the JSON to FILE)" : "");
    }
    int frc = cli_out_validate("bench", &o->bo);
    if (frc != CLI_EXIT_OK)
        return frc;
    if (o->gemm_only && o->svg)
        return cli_usage_error("bench", "--svg draws makespans with the collective: not with --gemm-only");
    if (o->rnd > 0 && (!o->gemm_only || o->shapes || o->colls))
        return cli_usage_error("bench",
                               "--random draws GEMM shapes: it needs --gemm-only, and no --shapes or --collective");
    if (o->rnd == 0 && o->random_given)
        return cli_usage_error("bench", "--seed, --min-dim, --max-dim and --sm-budgets are for --random");
    if (o->rnd == 0 && (o->ro.both_dtypes && o->dtype_given))
        return cli_usage_error("bench", "--dtype both is for --random");
    if (o->ro.min_dim > o->ro.max_dim)
        return cli_usage_error("bench", "--min-dim %lld is above --max-dim %lld", (long long)o->ro.min_dim,
                               (long long)o->ro.max_dim);
    o->ro.n = (size_t)o->rnd;
    o->ro.dtype = o->dtype;
    return CLI_EXIT_OK;
}

/* Parse argv into o (its defaults set here). @return an exit code (CLI_EXIT_OK to go on). */
static int bench_parse(bench_opts_t *o, int argc, char **argv)
{
    static const struct option longopts[] = {{"shapes", required_argument, NULL, O_SHAPES},
                                             {"collective", required_argument, NULL, O_COLL},
                                             {"dtype", required_argument, NULL, O_DTYPE},
                                             {"repeats", required_argument, NULL, O_REP},
                                             {"warmup", required_argument, NULL, O_WARM},
                                             {"top", required_argument, NULL, O_TOP},
                                             {"no-grid", no_argument, NULL, O_NOGRID},
                                             CLI_OUTPUT_LONGOPTS,
                                             {"svg", required_argument, NULL, O_SVG},
                                             {"hw", required_argument, NULL, O_HW},
                                             {"gemm-only", no_argument, NULL, O_GEMM},
                                             {"warmup-ms", required_argument, NULL, O_WARMMS},
                                             {"random", required_argument, NULL, O_RANDOM},
                                             {"seed", required_argument, NULL, O_SEED},
                                             {"min-dim", required_argument, NULL, O_MINDIM},
                                             {"max-dim", required_argument, NULL, O_MAXDIM},
                                             {"sm-budgets", required_argument, NULL, O_BUDGETS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof(*o));
    o->dtype = DUET_DTYPE_FP16;
    o->reps = 20;
    o->warm = 5;
    o->top = 4;
    o->grid = 1;
    o->ro.seed = 1;
    o->ro.min_dim = 512;
    o->ro.max_dim = 16384;
    o->ro.both_dtypes = 1;
    o->ro.n_budgets = 1;
    o->ro.budgets[0] = 1.0;
    int rc = cli_getopt("bench", argc, argv, longopts, bench_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help)
        return rc;
    return bench_check(o, argc, argv);
}

/* The workloads of --shapes or the seed's set, measured and reported (rank 0). @return an exit code. */
static int bench_workloads(gpu_env_t *e, const bench_opts_t *o, const duet_bench_params_t *bp)
{
    int rc;
    duet_workloads_t wls = {NULL, 0};
    duet_bench_row_t *rows = NULL;
    bench_zero_t *zero = NULL; /* the zero-CTA baseline of each workload (bench_zero_cta) */
    duet_status_t st = o->shapes ? duet_workloads_load(o->shapes, e->world, o->dtype, &wls)
                                 : duet_workloads_seed(e->world, o->colls, o->dtype, &wls);
    if (st < 0) {
        rc = cli_fail("bench", st);
        goto out;
    }
    if (o->gemm_only)
        bench_gemms_only(&wls);
    rows = calloc(wls.n ? wls.n : 1, sizeof(*rows));
    zero = calloc(wls.n ? wls.n : 1, sizeof(*zero));
    if (rows == NULL || zero == NULL) {
        rc = cli_fail("bench", duet__error(DUET_ERR_NO_MEMORY, "cannot allocate the rows of %zu workloads", wls.n));
        goto out;
    }
    rc = bench_run(e, bp, &wls, rows, zero);
    if (rc == CLI_EXIT_OK && e->rank == 0)
        rc = bench_report(e, bp, rows, zero, wls.n, o->dtype, o->gemm_only, &o->bo, o->svg);
out:
    free(zero);
    free(rows);
    duet_workloads_free(&wls);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    bench_opts_t o;
    int rc = bench_parse(&o, argc, argv);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cli_usage_bench(stdout);
        return rc;
    }
    duet_bench_params_t bp = duet_bench_default_params();
    bp.runs.warmup = (int32_t)o.warm;
    bp.runs.repeats = (int32_t)o.reps;
    bp.runs.warmup_ms = (double)o.warm_ms;
    bp.top = (int32_t)o.top;
    bp.grid = o.grid;
    gpu_env_t e;
    duet_measure_params_t mp = duet_bench_measure_params();
    mp.ctx.hw = o.hw;
    rc = gpu_env_init(&e, "bench", &argc, &argv, &mp);
    if (rc != CLI_EXIT_OK)
        return rc;
    rc = o.rnd > 0 ? bench_random_run(&e, &bp, &o.ro, &o.bo) : bench_workloads(&e, &o, &bp);
    gpu_env_fini(&e);
    return rc;
}
