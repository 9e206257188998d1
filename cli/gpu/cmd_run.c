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

/* duet run's flags. */
typedef struct run_opts {
    cli_common_t c;
    const char *trace_path, *svg, *out_path;
    const duet_sim_policy_ops_t *policy;
    long long reps, warm, warm_ms;
    int32_t mode;
    int help;
} run_opts_t;

/* One option of duet run: its own, then the workload's and configuration's. */
static int run_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    run_opts_t *o = arg0;
    switch (opt) {
    case 'o':
        o->out_path = arg;
        return CLI_EXIT_OK;
    case OPT_REPEAT:
        if (cli_parse_i64(arg, 1, 100000, &o->reps) != 0)
            return cli_usage_error("run", "--repeats: '%s' is not a positive integer", duet__q(arg));
        return CLI_EXIT_OK;
    case OPT_WARMUP:
        if (cli_parse_i64(arg, 0, 100000, &o->warm) != 0)
            return cli_usage_error("run", "--warmup: '%s' is not a non-negative integer", duet__q(arg));
        return CLI_EXIT_OK;
    case OPT_WARMUP_MS:
        if (cli_parse_i64(arg, 0, 60000, &o->warm_ms) != 0)
            return cli_usage_error("run", "--warmup-ms: '%s' is not an integer in [0, 60000]", duet__q(arg));
        return CLI_EXIT_OK;
    case OPT_TRACE:
        o->trace_path = arg;
        return CLI_EXIT_OK;
    case OPT_SVG:
        o->svg = arg;
        return CLI_EXIT_OK;
    case OPT_POLICY:
        if ((o->policy = duet_sim_policy_find(arg)) == NULL)
            return cli_usage_error("run", "--policy: '%s' is not fluid or frozen", duet__q(arg));
        return CLI_EXIT_OK;
    default:
        return cli_common_take(&o->c, cmd, opt, arg);
    }
}

/* Parse argv and check the flags together. @return an exit code (CLI_EXIT_OK to go on). */
static int run_parse(run_opts_t *o, int argc, char **argv)
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
    int rc = cli_getopt("run", argc, argv, longopts, run_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help || (rc = cli_no_operands("run", argc, argv)) != CLI_EXIT_OK)
        return rc;
    /* Vendor mode runs the GEMM in BLASLt, whose tiles the device clock cannot record: its timeline
     * would show the comm kernel alone, so it is refused here rather than drawn half. */
    o->mode = DUET_MODE_FUSED;
    if (o->c.mode_arg && duet_mode_parse(o->c.mode_arg, &o->mode) < 0)
        return cli_usage_error("run", "--mode: '%s' is not fused, concurrent or vendor", o->c.mode_arg);
    if (o->mode == DUET_MODE_VENDOR && (o->trace_path || o->svg))
        return cli_usage_error("run", "--trace and --svg record duet's own tiles: vendor mode's GEMM runs in the "
                                      "vendor library (use --mode fused or concurrent)");
    return cli_out_check("run", "-o", o->out_path);
}

/* What one run holds on the GPUs: the environment, the buffers, the timelines and the measurement. */
typedef struct run_state {
    gpu_env_t e;
    duet_measure_bufs_t b;
    duet_sim_ws_t *ws;
    duet_trace_t measured, predicted;
    duet_measure_job_t j;
    duet_measure_stat_t s;
    duet_plan_t plan;
    double pred; /* ms; -1: not predicted */
} run_state_t;

/* Resolve the workload and configuration on the device, time the operation, predict it. */
static int run_measure(run_opts_t *o, run_state_t *r, const duet_measure_runs_t *runs)
{
    cli_common_t *c = &o->c;
    int rc;
    if ((rc = cli_common_workload(c, "run")) != CLI_EXIT_OK)
        return rc;
    c->hw = *r->e.hw; /* the device's SM count and shared memory */
    if ((rc = cli_common_config(c, "run", o->mode)) != CLI_EXIT_OK)
        return rc;
    duet_status_t st = duet_measure_bufs_alloc(r->e.m, &c->wl, 11, &r->b);
    if (st < 0)
        return cli_fail("run", st);
    r->j = duet_measure_job(DUET_MEASURE_OP, &c->wl, &c->cfg);
    if (duet_measure_run(r->e.m, &r->j, &r->b, runs, &r->s) < 0) {
        cli_error("run", "%s", r->s.error);
        return CLI_EXIT_FAILED;
    }
    duet_sim_result_t res;
    r->pred = -1;
    if (duet_plan_build(&c->wl, &c->cfg, duet_plan_critical_rank(&c->wl), &r->plan) >= 0 &&
        duet_sim_ws_create(&r->ws) >= 0 &&
        duet_sim_run(r->ws, o->policy, r->e.hw, &r->plan, o->svg ? &r->predicted : NULL, &res) >= 0)
        r->pred = res.makespan_s * 1e3;
    return CLI_EXIT_OK;
}

/* --trace and --svg: record the measured timeline, write it (rank 0) and draw it beside the prediction. */
static int run_traces(const run_opts_t *o, run_state_t *r)
{
    const cli_common_t *c = &o->c;
    int rc = CLI_EXIT_OK;
    duet_status_t st;
    char tile[32];
    duet_config_tile_str(&c->cfg, tile, sizeof(tile));
    size_t cap = (size_t)(r->plan.gemm.tiles + r->plan.comm.queue_len) + 16;
    if ((st = duet_measure_trace(r->e.m, &r->j, &r->b, cap, &r->measured)) < 0)
        return cli_fail("run", st);
    if (r->e.rank == 0 && o->trace_path &&
        (st = duet_trace_write_json(&r->measured, &r->plan, r->e.hw, o->trace_path)) < 0)
        rc = cli_fail("run", st);
    if (r->e.rank == 0 && o->svg && rc == CLI_EXIT_OK) {
        const duet_trace_t *two[2] = {&r->measured, &r->predicted};
        char title[256];
        snprintf(title, sizeof(title), "%s: GEMM %lldx%lldx%lld + %s %lldx%lld, W=%d, %s gemm_wgs %d, tile %s",
                 r->e.gpu->name, (long long)c->wl.m, (long long)c->wl.n, (long long)c->wl.k,
                 duet_collective_name(c->wl.coll), (long long)c->wl.mc, (long long)c->wl.nc, c->wl.world,
                 duet_mode_name(c->cfg.mode), c->cfg.gemm_wgs, tile);
        if ((st = duet_trace_write_svg(two, r->pred >= 0 ? 2 : 1, title, o->svg)) < 0)
            rc = cli_fail("run", st);
    }
    return rc;
}

int cmd_run(int argc, char **argv)
{
    run_opts_t o;
    memset(&o, 0, sizeof(o));
    cli_common_init(&o.c);
    o.policy = &duet_sim_policy_fluid;
    o.reps = 20;
    o.warm = 5;
    int rc = run_parse(&o, argc, argv);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cli_usage_run(stdout);
        return rc;
    }
    run_state_t r;
    memset(&r, 0, sizeof(r));
    duet_measure_params_t mp = duet_measure_default_params();
    mp.ctx.heap_bytes = (size_t)2 << 30;
    mp.baseline = o.mode == DUET_MODE_VENDOR;     /* BLASLt for vendor mode's GEMM */
    mp.ctx.hw = o.c.hw_given ? o.c.hw_arg : NULL; /* NULL: the device's own */
    if ((rc = gpu_env_init(&r.e, "run", &argc, &argv, &mp)) != CLI_EXIT_OK)
        return rc;
    duet_measure_runs_t runs = duet_measure_default_runs();
    runs.warmup = (int32_t)o.warm;
    runs.repeats = (int32_t)o.reps;
    runs.warmup_ms = (double)o.warm_ms;
    /* The workload at this world; the configuration against the device's profile. */
    o.c.have_world = 1;
    o.c.wl.world = r.e.world;
    o.c.hw_arg = mp.ctx.hw ? mp.ctx.hw : r.e.hw->name; /* the device's built-in */
    duet_trace_init(&r.measured, "measured (rank 0)");
    duet_trace_init(&r.predicted, "predicted");
    rc = run_measure(&o, &r, &runs);
    if (rc == CLI_EXIT_OK && (o.trace_path || o.svg))
        rc = run_traces(&o, &r);
    if (r.e.rank == 0 && rc == CLI_EXIT_OK)
        rc = run_report(&o.c, &r.e, o.policy, &r.s, r.pred, (o.trace_path || o.svg) ? &r.measured : NULL, o.out_path);
    duet_sim_ws_destroy(r.ws);
    duet_trace_free(&r.measured);
    duet_trace_free(&r.predicted);
    duet_measure_bufs_free(r.e.m, &r.b);
    gpu_env_fini(&r.e);
    return rc;
}
