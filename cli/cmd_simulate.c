/*
 * duet simulate: one configuration through the simulator, with its timeline as JSON and SVG.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "sim/internal.h"

enum { OPT_POLICY = OPT_FIRST_PRIVATE, OPT_TRACE, OPT_SVG, OPT_MEASURED, OPT_TRACE_FORMAT };

static void cmd_simulate_usage(FILE *f)
{
    fprintf(f,
            "usage: duet simulate [workload] [configuration] [--policy fluid|frozen] [--trace FILE] [--svg FILE]\n"
            "                     [--trace-format duet|chrome] [--measured FILE] [--json] [-o FILE]\n"
            "\n"
            "Simulates one configuration and reports the makespan, when each queue finished, how busy the CTAs\n"
            "were and how many tiles were stolen. --trace writes the timeline (one record per tile: CTA, SM,\n"
            "queue, tile id, start, end, stolen); --svg draws it as a Gantt chart, one row per CTA.\n"
            "\n"
            "%s\n%s\n"
            "other:\n"
            "  --policy P            fluid (default) or frozen (the reference design's scheduler; fused only)\n"
            "  --trace FILE          write the predicted timeline as JSON\n"
            "  --trace-format F      duet (default: duet-trace/1, times in us) or chrome (Chrome trace events, which\n"
            "                        Perfetto opens: one process per timeline, one track per CTA)\n"
            "  --svg FILE            draw the timeline (SVG)\n"
            "  --measured FILE       a measured timeline (duet-trace/1) to draw above the predicted one, and with\n"
            "                        --trace-format chrome to write beside it as its own process\n"
            "  --json                machine-readable summary (schema duet-simulate/1, times in us)\n"
            "  -o, --output FILE     write the summary (text or --json) to FILE instead of standard output\n"
            "  -h, --help            this text\n"
            "\n"
            "examples:\n"
            "  duet simulate --collective all_gather --gemm 8192x8192x8192 --comm 4096x8192 --svg timeline.svg\n"
            "  duet simulate --collective all_reduce --gemm 4096x4096x4096 --comm 2048x8192 --mode concurrent \\\n"
            "                --gemm-wgs 112 --comm-wgs 20 --trace t.json\n",
            cli_workload_help, cli_config_help);
}

/* What `duet simulate`'s command line gives. */
typedef struct cmd_simulate_opts {
    cli_common_t c;
    const duet_sim_policy_ops_t *policy;
    const char *trace_path, *svg_path, *measured_path, *out_path;
    int chrome, help;
} cmd_simulate_opts_t;

/* One option of `duet simulate`. @return an exit code, or CLI_OPT_UNKNOWN. */
static int cmd_simulate_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cmd_simulate_opts_t *o = arg0;
    switch (opt) {
    case 'o':
        o->out_path = arg;
        return CLI_EXIT_OK;
    case OPT_POLICY:
        if ((o->policy = duet_sim_policy_find(arg)) == NULL)
            return cli_usage_error(cmd, "--policy: '%s' is not fluid or frozen", duet__q(arg));
        return CLI_EXIT_OK;
    case OPT_TRACE:
    case OPT_SVG:
    case OPT_MEASURED:
        *(opt == OPT_TRACE ? &o->trace_path : opt == OPT_SVG ? &o->svg_path : &o->measured_path) = arg;
        return CLI_EXIT_OK;
    case OPT_TRACE_FORMAT:
        return cli_parse_trace_format(cmd, arg, &o->chrome);
    default:
        return cli_common_take(&o->c, cmd, opt, arg);
    }
}

/* Parse the command line, load the profile, check the workload and the configuration. */
static int cmd_simulate_parse(cmd_simulate_opts_t *o, int argc, char **argv)
{
    static const struct option longopts[] = {CLI_WORKLOAD_LONGOPTS,
                                             CLI_CONFIG_LONGOPTS,
                                             {"policy", required_argument, NULL, OPT_POLICY},
                                             {"trace", required_argument, NULL, OPT_TRACE},
                                             {"svg", required_argument, NULL, OPT_SVG},
                                             {"measured", required_argument, NULL, OPT_MEASURED},
                                             {"trace-format", required_argument, NULL, OPT_TRACE_FORMAT},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof(*o));
    cli_common_init(&o->c);
    o->policy = &duet_sim_policy_fluid;
    int rc = cli_getopt("simulate", argc, argv, longopts, cmd_simulate_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help || (rc = cli_no_operands("simulate", argc, argv)) != CLI_EXIT_OK)
        return rc;
    if (o->measured_path != NULL && o->svg_path == NULL && !(o->chrome && o->trace_path != NULL))
        return cli_usage_error("simulate", "--measured is drawn with --svg FILE or written with --trace-format chrome");
    if ((rc = cli_common_workload(&o->c, "simulate")) != CLI_EXIT_OK)
        return rc;
    int32_t mode = DUET_MODE_FUSED;
    if (o->c.mode_arg)
        duet_mode_parse(o->c.mode_arg, &mode);
    return cli_common_config(&o->c, "simulate", mode);
}

/* The summary for people. */
static void cmd_simulate_text(FILE *f, const cli_common_t *c, const duet_sim_policy_ops_t *policy,
                              const duet_plan_t *plan, const duet_sim_result_t *r)
{
    double util = r->makespan_s > 0 ? (r->gemm_busy_s + r->comm_busy_s) / (r->makespan_s * r->n_ctas) : 0;
    char tile[32];
    fprintf(f, "%s mode, gemm_wgs %d, comm_wgs %d, tile %s, comm tile %dx%d on %s (policy %s)\n",
            duet_mode_name(c->cfg.mode), c->cfg.gemm_wgs, c->cfg.comm_wgs,
            duet_config_tile_str(&c->cfg, tile, sizeof(tile)), c->cfg.cm, c->cfg.cn, c->hw.name, policy->name);
    fprintf(f, "makespan      %.4f ms\n", r->makespan_s * 1e3);
    fprintf(f, "GEMM finish   %.4f ms (%lld tiles, %lld stolen by comm-home CTAs)\n", r->gemm_finish_s * 1e3,
            (long long)plan->gemm.tiles, (long long)r->stolen_gemm);
    fprintf(f, "comm finish   %.4f ms (%lld tiles, %lld stolen by GEMM-home CTAs)\n", r->comm_finish_s * 1e3,
            (long long)plan->comm.queue_len, (long long)r->stolen_comm);
    fprintf(f, "CTA busy      %.1f %% of %d CTAs x makespan (GEMM %.3f, comm %.3f CTA-ms)\n", util * 100, r->n_ctas,
            r->gemm_busy_s * 1e3, r->comm_busy_s * 1e3);
    fprintf(f, "events        %lld\n", (long long)r->events);
}

/* --measured: the measured timeline, labelled as the measured side of the comparison. */
static duet_status_t cmd_simulate_measured(const char *path, duet_trace_t *measured)
{
    duet_status_t st = duet_trace_read_json(path, measured);
    if (st >= 0 && strncmp(measured->label, "measured", 8) != 0) {
        /* The file's own label names where it came from; say which side of the comparison it is. */
        char label[sizeof(measured->label)];
        snprintf(label, sizeof(label), "measured: %.50s", measured->label);
        memcpy(measured->label, label, sizeof(label));
    }
    return st;
}

/* --trace and --svg: the predicted timeline (and the measured one) written and drawn. */
static duet_status_t cmd_simulate_files(const cmd_simulate_opts_t *o, const duet_plan_t *plan,
                                        const duet_trace_t *trace, const duet_trace_t *measured)
{
    const cli_common_t *c = &o->c;
    duet_status_t st = DUET_OK;
    if (o->trace_path && o->chrome && o->measured_path) {
        /* Predicted and measured side by side: two processes of one Chrome trace. */
        const duet_trace_t *both[2] = {trace, measured};
        st = duet_trace_write_chrome(both, 2, o->trace_path);
    } else if (o->trace_path) {
        st = cli_write_trace(trace, plan, &c->hw, o->chrome, o->trace_path);
    }
    if (st < 0 || o->svg_path == NULL)
        return st;
    const duet_trace_t *list[2];
    int n = 0;
    if (o->measured_path)
        list[n++] = measured;
    list[n++] = trace;
    char title[256], tile[32];
    snprintf(title, sizeof(title), "%s: GEMM %lldx%lldx%lld + %s %lldx%lld, W=%d, %s, gemm_wgs %d/%d, tile %s",
             c->hw.name, (long long)c->wl.m, (long long)c->wl.n, (long long)c->wl.k, duet_collective_name(c->wl.coll),
             (long long)c->wl.mc, (long long)c->wl.nc, c->wl.world, duet_mode_name(c->cfg.mode), c->cfg.gemm_wgs,
             c->cfg.mode == DUET_MODE_FUSED ? c->cfg.num_wgs : c->cfg.gemm_wgs + c->cfg.comm_wgs,
             duet_config_tile_str(&c->cfg, tile, sizeof(tile)));
    return duet_trace_write_svg(list, n, title, o->svg_path);
}

/* Simulate, print the summary, write the files. @return an exit code. */
static int cmd_simulate_run(cmd_simulate_opts_t *o, const duet_plan_t *plan, cli_out_t *out)
{
    duet_trace_t trace, measured;
    duet_trace_init(&trace, "predicted");
    duet_trace_init(&measured, "measured");
    duet_sim_ws_t *ws = NULL;
    duet_sim_result_t r;
    int rc = CLI_EXIT_OK;
    duet_status_t st = duet_sim_ws_create(&ws);
    if (st >= 0)
        st = duet_sim_run(ws, o->policy, &o->c.hw, plan, (o->trace_path || o->svg_path) ? &trace : NULL, &r);
    if (st >= 0 && o->c.json)
        rc = cli_out_json(out, "simulate", duet__simulate_cjson(&o->c.hw, &o->c.wl, &o->c.cfg, o->policy, &r));
    else if (st >= 0)
        cmd_simulate_text(out->f, &o->c, o->policy, plan, &r);
    if (st >= 0 && rc == CLI_EXIT_OK && o->measured_path)
        st = cmd_simulate_measured(o->measured_path, &measured);
    if (st >= 0 && rc == CLI_EXIT_OK)
        st = cmd_simulate_files(o, plan, &trace, &measured);
    if (st < 0)
        rc = cli_fail("simulate", st);
    duet_trace_free(&trace);
    duet_trace_free(&measured);
    duet_sim_ws_destroy(ws);
    return rc;
}

int cmd_simulate(int argc, char **argv)
{
    cmd_simulate_opts_t o;
    int rc = cmd_simulate_parse(&o, argc, argv);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cmd_simulate_usage(stdout);
        return rc;
    }
    duet_plan_t plan;
    duet_status_t st = duet_plan_build(&o.c.wl, &o.c.cfg, duet_plan_critical_rank(&o.c.wl), &plan);
    /* Vendor mode: the GEMM is the library's kernel, as the model expects it to choose. */
    if (st >= 0)
        st = duet_plan_vendor_kernel(&o.c.hw, NULL, &plan);
    if (st < 0)
        return cli_fail("simulate", st);
    o.c.cfg = plan.cfg;
    cli_out_t out;
    if ((rc = cli_out_open(&out, "simulate", o.out_path)) != CLI_EXIT_OK)
        return rc;
    return cli_out_close(&out, "simulate", cmd_simulate_run(&o, &plan, &out));
}
