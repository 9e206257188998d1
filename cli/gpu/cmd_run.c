/*
 * duet run: one operation on the GPUs (mpirun), timed, with its measured timeline next to the
 * simulator's prediction.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/gpu/gpu.h"
#include "sim/internal.h"

enum { OPT_REPEAT = OPT_FIRST_PRIVATE, OPT_WARMUP, OPT_WARMUP_MS, OPT_TRACE, OPT_SVG, OPT_POLICY };

/*
 * Rank 0's result: text (the line tools/gpu.sh reads, "measured X ms") or, with c->json, the
 * duet-run/1 document (times in us), on standard output or in out_path. @return an exit code.
 */
static int run_report(const cli_common_t *c, const gpu_env_t *e, const duet_sim_policy_ops_t *policy,
                      const duet_measure_stat_t *s, double pred_ms, const duet_trace_t *measured, const char *out_path)
{
    cli_out_t out;
    int rc = cli_out_open(&out, "run", out_path);
    if (rc != CLI_EXIT_OK)
        return rc;
    char tile[32];
    duet_config_tile_str(&c->cfg, tile, sizeof(tile));
    if (c->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "schema", "duet-run/1");
        cJSON_AddStringToObject(o, "device", e->gpu->name);
        cJSON_AddNumberToObject(o, "world", e->world);
        cJSON_AddStringToObject(o, "hw", e->hw->name);
        cJSON_AddStringToObject(o, "policy", policy->name);
        duet__workload_cjson(cJSON_AddObjectToObject(o, "workload"), &c->wl);
        cli_json_add_config(cJSON_AddObjectToObject(o, "config"), &c->cfg);
        /* The measurer's and the simulator's ms, written as us. */
        cJSON_AddNumberToObject(o, "measured_us", s->med_ms * 1e3);
        cJSON_AddNumberToObject(o, "min_us", s->min_ms * 1e3);
        cJSON_AddNumberToObject(o, "max_us", s->max_ms * 1e3);
        cJSON_AddNumberToObject(o, "runs", s->n);
        cli_json_add_num(o, "pred_us", pred_ms >= 0 ? pred_ms * 1e3 : NAN);
        if (measured != NULL) {
            cJSON_AddNumberToObject(o, "timeline_tiles", (double)measured->n);
            cJSON_AddNumberToObject(o, "timeline_us", measured->makespan_s * 1e6);
        }
        rc = cli_out_json(&out, "run", o);
    } else {
        fprintf(out.f,
                "%s gemm_wgs %d comm_wgs %d tile %s: measured %.4f ms (min %.4f, max %.4f, %d runs), predicted "
                "%.4f ms on %s (policy %s)\n",
                duet_mode_name(c->cfg.mode), c->cfg.gemm_wgs, c->cfg.comm_wgs, tile, s->med_ms, s->min_ms, s->max_ms,
                s->n, pred_ms, e->hw->name, policy->name);
        if (measured != NULL)
            fprintf(out.f, "timeline: %zu tiles over %.4f ms (the first tile's start to the last tile's end)\n",
                    measured->n, measured->makespan_s * 1e3);
    }
    return cli_out_close(&out, "run", rc);
}

int cmd_run(int argc, char **argv)
{
    static const struct option longopts[] = {CLI_WORKLOAD_LONGOPTS,
                                             CLI_CONFIG_LONGOPTS,
                                             {"repeats", required_argument, NULL, OPT_REPEAT},
                                             {"warmup", required_argument, NULL, OPT_WARMUP},
                                             {"warmup-ms", required_argument, NULL, OPT_WARMUP_MS},
                                             {"trace", required_argument, NULL, OPT_TRACE},
                                             {"svg", required_argument, NULL, OPT_SVG},
                                             {"policy", required_argument, NULL, OPT_POLICY},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_common_t c;
    cli_common_init(&c);
    const char *trace_path = NULL, *svg = NULL, *out_path = NULL;
    const duet_sim_policy_ops_t *policy = &duet_sim_policy_fluid;
    long long reps = 20, warm = 5, warm_ms = 0;
    int opt, rc;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cli_usage_run(stdout);
            return CLI_EXIT_OK;
        case 'o':
            out_path = optarg;
            continue;
        case OPT_REPEAT:
            if (cli_parse_i64(optarg, 1, 100000, &reps) != 0)
                return cli_usage_error("run", "--repeats: '%s' is not a positive integer", duet__q(optarg));
            continue;
        case OPT_WARMUP:
            if (cli_parse_i64(optarg, 0, 100000, &warm) != 0)
                return cli_usage_error("run", "--warmup: '%s' is not a non-negative integer", duet__q(optarg));
            continue;
        case OPT_WARMUP_MS:
            if (cli_parse_i64(optarg, 0, 60000, &warm_ms) != 0)
                return cli_usage_error("run", "--warmup-ms: '%s' is not an integer in [0, 60000]", duet__q(optarg));
            continue;
        case OPT_TRACE:
            trace_path = optarg;
            continue;
        case OPT_SVG:
            svg = optarg;
            continue;
        case OPT_POLICY:
            if ((policy = duet_sim_policy_find(optarg)) == NULL)
                return cli_usage_error("run", "--policy: '%s' is not fluid or frozen", duet__q(optarg));
            continue;
        default:
            break;
        }
        int h = cli_common_option(&c, "run", opt, optarg);
        if (h < 0)
            return CLI_EXIT_USAGE;
        if (h == 0)
            return cli_getopt_error("run", argv, opt);
    }
    if (optind < argc)
        return cli_usage_error("run", "unexpected argument '%s'", duet__q(argv[optind]));
    /* Vendor mode runs the GEMM in BLASLt, whose tiles the device clock cannot record: its timeline
     * would show the comm kernel alone, so it is refused here rather than drawn half. */
    int32_t mode = DUET_MODE_FUSED;
    if (c.mode_arg && duet_mode_parse(c.mode_arg, &mode) < 0)
        return cli_usage_error("run", "--mode: '%s' is not fused, concurrent or vendor", c.mode_arg);
    if (mode == DUET_MODE_VENDOR && (trace_path || svg))
        return cli_usage_error("run", "--trace and --svg record duet's own tiles: vendor mode's GEMM runs in the "
                                      "vendor library (use --mode fused or concurrent)");
    if ((rc = cli_out_check("run", "-o", out_path)) != CLI_EXIT_OK)
        return rc;
    gpu_env_t e;
    duet_measure_params_t mp = duet_measure_default_params();
    mp.ctx.heap_bytes = (size_t)2 << 30;
    mp.baseline = mode == DUET_MODE_VENDOR;   /* BLASLt for vendor mode's GEMM */
    mp.ctx.hw = c.hw_given ? c.hw_arg : NULL; /* NULL: the device's own */
    if ((rc = gpu_env_init(&e, "run", &argc, &argv, &mp)) != CLI_EXIT_OK)
        return rc;
    duet_measure_runs_t runs = duet_measure_default_runs();
    runs.warmup = (int32_t)warm;
    runs.repeats = (int32_t)reps;
    runs.warmup_ms = (double)warm_ms;
    /* The workload at this world; the configuration against the device's profile. */
    c.have_world = 1;
    c.wl.world = e.world;
    c.hw_arg = mp.ctx.hw ? mp.ctx.hw : e.hw->name; /* the device's built-in */
    duet_trace_t measured, predicted;
    duet_trace_init(&measured, "measured (rank 0)");
    duet_trace_init(&predicted, "predicted");
    duet_measure_bufs_t b;
    memset(&b, 0, sizeof(b));
    duet_sim_ws_t *ws = NULL;
    if ((rc = cli_common_workload(&c, "run")) != CLI_EXIT_OK)
        goto out;
    c.hw = *e.hw; /* the device's SM count and shared memory */
    if ((rc = cli_common_config(&c, "run", mode)) != CLI_EXIT_OK)
        goto out;
    duet_status_t st = duet_measure_bufs_alloc(e.m, &c.wl, 11, &b);
    if (st < 0) {
        rc = cli_fail("run", st);
        goto out;
    }
    duet_measure_job_t j = duet_measure_job(DUET_MEASURE_OP, &c.wl, &c.cfg);
    duet_measure_stat_t s;
    if (duet_measure_run(e.m, &j, &b, &runs, &s) < 0) {
        cli_error("run", "%s", s.error);
        rc = CLI_EXIT_FAILED;
        goto out;
    }
    duet_plan_t plan;
    duet_sim_result_t r;
    double pred = -1;
    if (duet_plan_build(&c.wl, &c.cfg, duet_plan_critical_rank(&c.wl), &plan) >= 0 && duet_sim_ws_create(&ws) >= 0 &&
        duet_sim_run(ws, policy, e.hw, &plan, svg ? &predicted : NULL, &r) >= 0)
        pred = r.makespan_s * 1e3;
    char tile[32];
    duet_config_tile_str(&c.cfg, tile, sizeof(tile));
    if (trace_path || svg) {
        size_t cap = (size_t)(plan.gemm.tiles + plan.comm.queue_len) + 16;
        if ((st = duet_measure_trace(e.m, &j, &b, cap, &measured)) < 0) {
            rc = cli_fail("run", st);
            goto out;
        }
        if (e.rank == 0 && trace_path && (st = duet_trace_write_json(&measured, &plan, e.hw, trace_path)) < 0)
            rc = cli_fail("run", st);
        if (e.rank == 0 && svg && rc == CLI_EXIT_OK) {
            const duet_trace_t *two[2] = {&measured, &predicted};
            char title[256];
            snprintf(title, sizeof(title), "%s: GEMM %lldx%lldx%lld + %s %lldx%lld, W=%d, %s gemm_wgs %d, tile %s",
                     e.gpu->name, (long long)c.wl.m, (long long)c.wl.n, (long long)c.wl.k,
                     duet_collective_name(c.wl.coll), (long long)c.wl.mc, (long long)c.wl.nc, c.wl.world,
                     duet_mode_name(c.cfg.mode), c.cfg.gemm_wgs, tile);
            if ((st = duet_trace_write_svg(two, pred >= 0 ? 2 : 1, title, svg)) < 0)
                rc = cli_fail("run", st);
        }
    }
    if (e.rank == 0 && rc == CLI_EXIT_OK)
        rc = run_report(&c, &e, policy, &s, pred, (trace_path || svg) ? &measured : NULL, out_path);
out:
    duet_sim_ws_destroy(ws);
    duet_trace_free(&measured);
    duet_trace_free(&predicted);
    duet_measure_bufs_free(e.m, &b);
    gpu_env_fini(&e);
    return rc;
}
