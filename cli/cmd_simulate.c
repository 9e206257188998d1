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

int cmd_simulate(int argc, char **argv)
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
    cli_common_t c;
    cli_common_init(&c);
    const duet_sim_policy_ops_t *policy = &duet_sim_policy_fluid;
    const char *trace_path = NULL, *svg_path = NULL, *measured_path = NULL, *out_path = NULL;
    int opt, rc, chrome = 0;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cmd_simulate_usage(stdout);
            return CLI_EXIT_OK;
        case 'o':
            out_path = optarg;
            continue;
        case OPT_POLICY:
            if ((policy = duet_sim_policy_find(optarg)) == NULL)
                return cli_usage_error("simulate", "--policy: '%s' is not fluid or frozen", optarg);
            continue;
        case OPT_TRACE:
            trace_path = optarg;
            continue;
        case OPT_SVG:
            svg_path = optarg;
            continue;
        case OPT_MEASURED:
            measured_path = optarg;
            continue;
        case OPT_TRACE_FORMAT:
            if (cli_parse_trace_format("simulate", optarg, &chrome) != CLI_EXIT_OK)
                return CLI_EXIT_USAGE;
            continue;
        default:
            break;
        }
        int h = cli_common_option(&c, "simulate", opt, optarg);
        if (h < 0)
            return CLI_EXIT_USAGE;
        if (h == 0)
            return cli_getopt_error("simulate", argv, opt);
    }
    if (optind < argc)
        return cli_usage_error("simulate", "unexpected argument '%s'", argv[optind]);
    if (measured_path != NULL && svg_path == NULL && !(chrome && trace_path != NULL))
        return cli_usage_error("simulate", "--measured is drawn with --svg FILE or written with --trace-format chrome");
    if ((rc = cli_common_workload(&c, "simulate")) != CLI_EXIT_OK)
        return rc;
    int32_t mode = DUET_MODE_FUSED;
    if (c.mode_arg)
        duet_mode_parse(c.mode_arg, &mode);
    if ((rc = cli_common_config(&c, "simulate", mode)) != CLI_EXIT_OK)
        return rc;

    duet_plan_t plan;
    duet_status_t st = duet_plan_build(&c.wl, &c.cfg, duet_plan_critical_rank(&c.wl), &plan);
    /* Vendor mode: the GEMM is the library's kernel, as the model expects it to choose. */
    if (st >= 0)
        st = duet_plan_vendor_kernel(&c.hw, NULL, &plan);
    if (st < 0)
        return cli_fail("simulate", st);
    c.cfg = plan.cfg;
    duet_trace_t trace, measured;
    cli_out_t out = {NULL, NULL, 0, NULL}; /* standard output until cli_out_open() */
    duet_trace_init(&trace, "predicted");
    duet_trace_init(&measured, "measured");
    duet_sim_ws_t *ws = NULL;
    duet_sim_result_t r;
    rc = CLI_EXIT_OK;
    if ((rc = cli_out_open(&out, "simulate", out_path)) != CLI_EXIT_OK)
        goto out;
    if ((st = duet_sim_ws_create(&ws)) < 0 ||
        (st = duet_sim_run(ws, policy, &c.hw, &plan, (trace_path || svg_path) ? &trace : NULL, &r)) < 0) {
        rc = cli_fail("simulate", st);
        goto out;
    }
    if (c.json) {
        cJSON *o = duet__simulate_cjson(&c.hw, &c.wl, &c.cfg, policy, &r);
        char *text = cJSON_Print(o);
        cJSON_Delete(o);
        if (text != NULL) {
            fprintf(out.f, "%s\n", text);
            cJSON_free(text);
        }
    } else {
        double util = r.makespan_s > 0 ? (r.gemm_busy_s + r.comm_busy_s) / (r.makespan_s * r.n_ctas) : 0;
        char tile[32];
        fprintf(out.f, "%s mode, gemm_wgs %d, comm_wgs %d, tile %s, comm tile %dx%d on %s (policy %s)\n",
                duet_mode_name(c.cfg.mode), c.cfg.gemm_wgs, c.cfg.comm_wgs,
                duet_config_tile_str(&c.cfg, tile, sizeof(tile)), c.cfg.cm, c.cfg.cn, c.hw.name, policy->name);
        fprintf(out.f, "makespan      %.4f ms\n", r.makespan_s * 1e3);
        fprintf(out.f, "GEMM finish   %.4f ms (%lld tiles, %lld stolen by comm-home CTAs)\n", r.gemm_finish_s * 1e3,
                (long long)plan.gemm.tiles, (long long)r.stolen_gemm);
        fprintf(out.f, "comm finish   %.4f ms (%lld tiles, %lld stolen by GEMM-home CTAs)\n", r.comm_finish_s * 1e3,
                (long long)plan.comm.queue_len, (long long)r.stolen_comm);
        fprintf(out.f, "CTA busy      %.1f %% of %d CTAs x makespan (GEMM %.3f, comm %.3f CTA-ms)\n", util * 100,
                r.n_ctas, r.gemm_busy_s * 1e3, r.comm_busy_s * 1e3);
        fprintf(out.f, "events        %lld\n", (long long)r.events);
    }
    if (measured_path && (st = duet_trace_read_json(measured_path, &measured)) < 0) {
        rc = cli_fail("simulate", st);
        goto out;
    }
    if (measured_path && strncmp(measured.label, "measured", 8) != 0) {
        /* The file's own label names where it came from; say which side of the comparison it is. */
        char label[sizeof(measured.label)];
        snprintf(label, sizeof(label), "measured: %.50s", measured.label);
        memcpy(measured.label, label, sizeof(label));
    }
    if (trace_path && chrome && measured_path) {
        /* Predicted and measured side by side: two processes of one Chrome trace. */
        const duet_trace_t *both[2] = {&trace, &measured};
        st = duet_trace_write_chrome(both, 2, trace_path);
    } else if (trace_path)
        st = cli_write_trace(&trace, &plan, &c.hw, chrome, trace_path);
    if (st < 0) {
        rc = cli_fail("simulate", st);
        goto out;
    }
    if (svg_path) {
        const duet_trace_t *list[2];
        int n = 0;
        if (measured_path)
            list[n++] = &measured;
        list[n++] = &trace;
        char title[256], tile[32];
        snprintf(title, sizeof(title), "%s: GEMM %lldx%lldx%lld + %s %lldx%lld, W=%d, %s, gemm_wgs %d/%d, tile %s",
                 c.hw.name, (long long)c.wl.m, (long long)c.wl.n, (long long)c.wl.k, duet_collective_name(c.wl.coll),
                 (long long)c.wl.mc, (long long)c.wl.nc, c.wl.world, duet_mode_name(c.cfg.mode), c.cfg.gemm_wgs,
                 c.cfg.mode == DUET_MODE_FUSED ? c.cfg.num_wgs : c.cfg.gemm_wgs + c.cfg.comm_wgs,
                 duet_config_tile_str(&c.cfg, tile, sizeof(tile)));
        if ((st = duet_trace_write_svg(list, n, title, svg_path)) < 0)
            rc = cli_fail("simulate", st);
    }
out:
    rc = cli_out_close(&out, "simulate", rc);
    duet_trace_free(&trace);
    duet_trace_free(&measured);
    duet_sim_ws_destroy(ws);
    return rc;
}
