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

/* Every workload's figures, one after the other, each on its own buffers. @return an exit code. */
static int bench_run(gpu_env_t *e, const duet_bench_params_t *p, const duet_workloads_t *wls, duet_bench_row_t *rows)
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
                                size_t n, int32_t dtype, int gemm_only)
{
    return gemm_only ? bench_print_gemms(f, e, rows, n, p) : bench_print_table(f, e, rows, n, p, dtype);
}

/* Rank 0: the result in its format (-o FILE or standard output), the table on standard output
 * beside a file, and the picture. @return an exit code. */
static int bench_report(const gpu_env_t *e, const duet_bench_params_t *p, const duet_bench_row_t *rows, size_t n,
                        int32_t dtype, int gemm_only, const cli_outopt_t *bo, const char *svg)
{
    duet_status_t st = DUET_OK;
    int rc = CLI_EXIT_OK;
    if (bo->path != NULL || (!bo->json && !bo->csv))
        st = bench_text(stdout, e, p, rows, n, dtype, gemm_only);
    if (st >= 0 && (bo->path != NULL || bo->json || bo->csv)) {
        cli_out_t out;
        if ((rc = cli_out_open(&out, "bench", bo->path)) != CLI_EXIT_OK)
            return rc;
        st = bo->json  ? bench_write_json(out.f, e, rows, n, p, gemm_only)
             : bo->csv ? bench_write_csv(out.f, rows, n, gemm_only)
                       : bench_text(out.f, e, p, rows, n, dtype, gemm_only);
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

int cmd_bench(int argc, char **argv)
{
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
    const char *shapes = NULL, *svg = NULL, *hw = NULL;
    cli_outopt_t bo = {0, 0, NULL};
    uint32_t colls = 0;
    int32_t dtype = DUET_DTYPE_FP16;
    long long reps = 20, warm = 5, warm_ms = 0, top = 4;
    int grid = 1, gemm_only = 0, dtype_given = 0, random_given = 0, opt;
    bench_random_opts_t ro;
    memset(&ro, 0, sizeof(ro));
    ro.seed = 1;
    ro.min_dim = 512;
    ro.max_dim = 16384;
    ro.both_dtypes = 1;
    ro.n_budgets = 1;
    ro.budgets[0] = 1.0;
    long long rnd = 0, dim;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cli_usage_bench(stdout);
            return CLI_EXIT_OK;
        case O_SHAPES:
            shapes = optarg;
            break;
        case O_COLL: {
            int rc = cli_parse_collectives("bench", optarg, &colls);
            if (rc != CLI_EXIT_OK)
                return rc;
            break;
        }
        case O_DTYPE:
            dtype_given = 1;
            ro.both_dtypes = strcmp(optarg, "both") == 0;
            if (!ro.both_dtypes && duet_dtype_parse(optarg, &dtype) < 0)
                return cli_usage_error("bench", "--dtype: %s (or both, with --random)", duet_last_error());
            break;
        case O_RANDOM:
            if (cli_parse_i64(optarg, 1, 100000, &rnd) != 0)
                return cli_usage_error("bench", "--random: '%s' is not an integer in [1, 100000]", duet__q(optarg));
            break;
        case O_SEED: {
            random_given = 1;
            char *end = NULL;
            errno = 0;
            unsigned long long v = strtoull(optarg, &end, 10);
            if (optarg[0] < '0' || optarg[0] > '9' || errno != 0 || end == optarg || *end != '\0')
                return cli_usage_error("bench", "--seed: '%s' is not an unsigned 64-bit integer", duet__q(optarg));
            ro.seed = (uint64_t)v;
            break;
        }
        case O_MINDIM:
        case O_MAXDIM:
            random_given = 1;
            if (cli_parse_i64(optarg, 1, INT64_C(1) << 24, &dim) != 0)
                return cli_usage_error("bench", "--%s: '%s' is not an integer in [1, 2^24]",
                                       opt == O_MINDIM ? "min-dim" : "max-dim", duet__q(optarg));
            *(opt == O_MINDIM ? &ro.min_dim : &ro.max_dim) = dim;
            break;
        case O_BUDGETS: {
            random_given = 1;
            int brc = bench_random_parse_budgets(optarg, &ro);
            if (brc != CLI_EXIT_OK)
                return brc;
            break;
        }
        case O_REP:
            if (cli_parse_i64(optarg, 1, 100000, &reps) != 0)
                return cli_usage_error("bench", "--repeats: '%s' is not a positive integer", duet__q(optarg));
            break;
        case O_WARM:
            if (cli_parse_i64(optarg, 0, 100000, &warm) != 0)
                return cli_usage_error("bench", "--warmup: '%s' is not a non-negative integer", duet__q(optarg));
            break;
        case O_WARMMS:
            if (cli_parse_i64(optarg, 0, 60000, &warm_ms) != 0)
                return cli_usage_error("bench", "--warmup-ms: '%s' is not an integer in [0, 60000]", duet__q(optarg));
            break;
        case O_TOP:
            if (cli_parse_i64(optarg, 0, 64, &top) != 0)
                return cli_usage_error("bench", "--top: '%s' is not an integer in [0, 64]", duet__q(optarg));
            break;
        case O_NOGRID:
            grid = 0;
            break;
        case O_GEMM:
            gemm_only = 1;
            break;
        case O_SVG:
            svg = optarg;
            break;
        case O_HW:
            hw = optarg;
            break;
        default:
            if (!cli_out_option(&bo, opt, optarg))
                return cli_getopt_error("bench", argv, opt);
        }
    }
    if (optind < argc) {
        /* The form before duet 0.2: --json took the file name. */
        size_t len = strlen(argv[optind]);
        int json_name = bo.json && len > 5 && strcmp(argv[optind] + len - 5, ".json") == 0;
        return cli_usage_error("bench", "unexpected argument '%s'%s", duet__q(argv[optind]),
                               json_name ? " (--json is a flag: --json -o FILE writes the JSON to FILE)" : "");
    }
    int frc = cli_out_validate("bench", &bo);
    if (frc != CLI_EXIT_OK)
        return frc;
    if (gemm_only && svg)
        return cli_usage_error("bench", "--svg draws makespans with the collective: not with --gemm-only");
    if (rnd > 0 && (!gemm_only || shapes || colls))
        return cli_usage_error("bench",
                               "--random draws GEMM shapes: it needs --gemm-only, and no --shapes or --collective");
    if (rnd == 0 && random_given)
        return cli_usage_error("bench", "--seed, --min-dim, --max-dim and --sm-budgets are for --random");
    if (rnd == 0 && (ro.both_dtypes && dtype_given))
        return cli_usage_error("bench", "--dtype both is for --random");
    if (ro.min_dim > ro.max_dim)
        return cli_usage_error("bench", "--min-dim %lld is above --max-dim %lld", (long long)ro.min_dim,
                               (long long)ro.max_dim);
    ro.n = (size_t)rnd;
    ro.dtype = dtype;

    duet_bench_params_t bp = duet_bench_default_params();
    bp.runs.warmup = (int32_t)warm;
    bp.runs.repeats = (int32_t)reps;
    bp.runs.warmup_ms = (double)warm_ms;
    bp.top = (int32_t)top;
    bp.grid = grid;
    gpu_env_t e;
    duet_measure_params_t mp = duet_bench_measure_params();
    mp.ctx.hw = hw;
    int rc = gpu_env_init(&e, "bench", &argc, &argv, &mp);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (rnd > 0) {
        rc = bench_random_run(&e, &bp, &ro, &bo);
        gpu_env_fini(&e);
        return rc;
    }
    duet_workloads_t wls = {NULL, 0};
    duet_bench_row_t *rows = NULL;
    duet_status_t st =
        shapes ? duet_workloads_load(shapes, e.world, dtype, &wls) : duet_workloads_seed(e.world, colls, dtype, &wls);
    if (st < 0) {
        rc = cli_fail("bench", st);
        goto out;
    }
    if (gemm_only)
        bench_gemms_only(&wls);
    rows = calloc(wls.n ? wls.n : 1, sizeof(*rows));
    if (rows == NULL) {
        rc = cli_fail("bench", duet__error(DUET_ERR_NO_MEMORY, "cannot allocate the rows of %zu workloads", wls.n));
        goto out;
    }
    rc = bench_run(&e, &bp, &wls, rows);
    if (rc == CLI_EXIT_OK && e.rank == 0)
        rc = bench_report(&e, &bp, rows, wls.n, dtype, gemm_only, &bo, svg);
out:
    free(rows);
    duet_workloads_free(&wls);
    gpu_env_fini(&e);
    return rc;
}
