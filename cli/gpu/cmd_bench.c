/*
 * duet bench: duet against the baselines (cuBLASLt + NCCL, hipBLASLt + RCCL), side by side in one
 * run (docs/performance.md). The library measures every figure of a workload
 * (duet_bench_workload(), include/duet/measure.h); this file parses the options and runs the
 * workloads, cli/gpu/bench_report.c prints and writes the results.
 */
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

/* Rank 0: the table, the JSON file and the picture. @return an exit code. */
static int bench_report(const gpu_env_t *e, const duet_bench_params_t *p, const duet_bench_row_t *rows, size_t n,
                        int32_t dtype, int gemm_only, const char *json, const char *svg)
{
    char defpath[128];
    duet_status_t st = gemm_only ? bench_print_gemms(e, rows, n, p) : bench_print_table(e, rows, n, p, dtype);
    if (json == NULL) {
        snprintf(defpath, sizeof(defpath), gemm_only ? "bench-gemm-%s.json" : "bench-%s-w%d.json", e->gpu->arch,
                 e->world);
        json = defpath;
    }
    if (st >= 0)
        st = bench_write_json(e, rows, n, p, gemm_only, json);
    if (st >= 0 && svg)
        st = bench_write_svg(e, rows, n, svg);
    if (st < 0)
        return cli_fail("bench", st);
    printf("wrote %s%s%s\n", json, svg ? " and " : "", svg ? svg : "");
    return CLI_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
    enum { O_SHAPES = 300, O_COLL, O_DTYPE, O_REP, O_WARM, O_WARMMS, O_TOP, O_NOGRID, O_JSON, O_SVG, O_HW, O_GEMM };
    static const struct option longopts[] = {{"shapes", required_argument, NULL, O_SHAPES},
                                             {"collective", required_argument, NULL, O_COLL},
                                             {"dtype", required_argument, NULL, O_DTYPE},
                                             {"repeats", required_argument, NULL, O_REP},
                                             {"warmup", required_argument, NULL, O_WARM},
                                             {"top", required_argument, NULL, O_TOP},
                                             {"no-grid", no_argument, NULL, O_NOGRID},
                                             {"json", required_argument, NULL, O_JSON},
                                             {"svg", required_argument, NULL, O_SVG},
                                             {"hw", required_argument, NULL, O_HW},
                                             {"gemm-only", no_argument, NULL, O_GEMM},
                                             {"warmup-ms", required_argument, NULL, O_WARMMS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *shapes = NULL, *json = NULL, *svg = NULL, *hw = NULL;
    uint32_t colls = 0;
    int32_t dtype = DUET_DTYPE_FP16;
    long long reps = 20, warm = 5, warm_ms = 0, top = 4;
    int grid = 1, gemm_only = 0, opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
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
            if (duet_dtype_parse(optarg, &dtype) < 0)
                return cli_usage_error("bench", "--dtype: %s", duet_last_error());
            break;
        case O_REP:
            if (cli_parse_i64(optarg, 1, 100000, &reps) != 0)
                return cli_usage_error("bench", "--repeats: '%s' is not a positive integer", optarg);
            break;
        case O_WARM:
            if (cli_parse_i64(optarg, 0, 100000, &warm) != 0)
                return cli_usage_error("bench", "--warmup: '%s' is not a non-negative integer", optarg);
            break;
        case O_WARMMS:
            if (cli_parse_i64(optarg, 0, 60000, &warm_ms) != 0)
                return cli_usage_error("bench", "--warmup-ms: '%s' is not an integer in [0, 60000]", optarg);
            break;
        case O_TOP:
            if (cli_parse_i64(optarg, 0, 64, &top) != 0)
                return cli_usage_error("bench", "--top: '%s' is not an integer in [0, 64]", optarg);
            break;
        case O_NOGRID:
            grid = 0;
            break;
        case O_GEMM:
            gemm_only = 1;
            break;
        case O_JSON:
            json = optarg;
            break;
        case O_SVG:
            svg = optarg;
            break;
        case O_HW:
            hw = optarg;
            break;
        default:
            return cli_getopt_error("bench", argv, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("bench", "unexpected argument '%s'", argv[optind]);
    if (gemm_only && svg)
        return cli_usage_error("bench", "--svg draws makespans with the collective: not with --gemm-only");

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
        rc = bench_report(&e, &bp, rows, wls.n, dtype, gemm_only, json, svg);
out:
    free(rows);
    duet_workloads_free(&wls);
    gpu_env_fini(&e);
    return rc;
}
