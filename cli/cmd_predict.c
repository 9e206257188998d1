/*
 * duet predict: sweep splits and tiles with the simulator and rank them.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/cli.h"
#include "sim/internal.h"

enum {
    OPT_TILES = OPT_FIRST_PRIVATE,
    OPT_SPLITS,
    OPT_TOP,
    OPT_POLICY,
    OPT_SVG,
    OPT_TIMELINE,
    OPT_TRACE,
    OPT_EMIT,
    OPT_TRACE_FORMAT,
    OPT_REF,
    OPT_NCCL_VERSION,
    OPT_RCCL_VERSION,
    OPT_HIPBLASLT_VERSION,
    OPT_RUNNING
};

/* The usage text (the workload flags' help goes in at %s). */
static const char cmd_predict_usage_text[] =
    "usage: duet predict [workload] [--mode fused|concurrent|both] [--tiles LIST] [--splits all|step:N]\n"
    "                    [--split-k LIST] [--top K] [--policy fluid|frozen] [--reference-pricing]\n"
    "                    [--running-vendor SMS[,CTAS]] [--svg FILE]\n"
    "                    [--emit nccl|rccl|torch|te|env] [--nccl-version V] [--rccl-version V]\n"
    "                    [--hipblaslt-version V] [--json|--csv] [-o FILE]\n"
    "\n"
    "Simulates every configuration of the sweep (each GEMM tile x K split x gemm_wgs value x mode) on the\n"
    "hardware profile and prints them ranked by the upper end of each prediction's interval (the profile's\n"
    "held-out error of its mode, err_<mode>), with a verdict: leave the safe choice (the static default, or\n"
    "the vendor split you run) only for a configuration whose predicted gain exceeds the error band of the\n"
    "two predictions. No GPU is needed. When only the first rows are shown (--top K, no --svg, no\n"
    "--running-vendor), the sweep is two-phase: a lower bound for every configuration, and the simulation\n"
    "only for those that can be among the rows shown, the fastest of their mode or as fast as the static\n"
    "default; the answer is the full sweep's.\n"
    "\n"
    "%s\n"
    "sweep:\n"
    "  --mode M              fused, concurrent, vendor (the vendor GEMM on gemm_wgs SMs beside duet's comm\n"
    "                        kernel), copy (the collective on the copy engines; all_gather, all_to_all,\n"
    "                        broadcast), both (fused and concurrent) or all; default fused, concurrent, copy\n"
    "  --tiles LIST          GEMM tiles, comma-separated, e.g. 256x128x64,128x128x64 (default: all that fit)\n"
    "  --splits all|step:N   gemm_wgs values: every one (default) or every N-th\n"
    "  --split-k LIST        GEMM K splits, comma-separated, e.g. 1,2,4 (default: 1, plus 2, 3, 4, 6 and 8\n"
    "                        for a tile with fewer C tiles than that many waves need; frozen: 1)\n"
    "  --num-wgs N           fused grid size (default: one CTA per SM)\n"
    "  --comm-tile CMxCN     comm tile (default 256x64)\n"
    "  --group-m G           GEMM swizzle (default 8)\n"
    "  --policy P            fluid (default: shared link/HBM/SM, max-min fair) or frozen (the reference\n"
    "                        design's scheduler and rules; fused mode only)\n"
    "  --reference-pricing   with --policy frozen: price as the reference predictor did, unchanged (its\n"
    "                        fused-kernel factor 1.44, its spreading over num_wgs; duet's GEMM time stands\n"
    "                        in for origami), and also print the reference's own pick (predict_split: its\n"
    "                        candidates max(16, SMs/8)..SMs step 8, its 20 %% tile margin gate)\n"
    "decision:\n"
    "  --running-vendor SMS[,CTAS]\n"
    "                        the vendor split you run now (the vendor GEMM's SM target, the collective's CTAs;\n"
    "                        default the SMs the GEMM leaves) is the safe choice instead of the static default\n"
    "output:\n"
    "  --top K               rows to print (default 10; 0 prints all). Rows are distinct configurations; a\n"
    "                        rank marked '=' ties another (within 1e-9). range us: the prediction's interval\n"
    "                        (the profile's err_<mode>). CTAs: fused 'G+C steal' (CTAs that start on GEMM and\n"
    "                        on comm; every CTA steals once its queue is drained, so comm tiles run on a comm\n"
    "                        home of 0), concurrent 'G|C' (the two grids), vendor 'G SM|C' (the vendor GEMM's\n"
    "                        SM target and the comm CTAs). TFLOP/s: the GEMM's FLOPs over its finish; busbw:\n"
    "                        nccl-tests' bus bandwidth of the collective over its finish\n"
    "  --emit STACK          also sweep the vendor splits STACK can reach and write the best as its settings\n"
    "                        (nccl, rccl, torch, te or env: ncclConfig_t.minCTAs/maxCTAs or NCCL_MIN_CTAS/\n"
    "                        NCCL_MAX_CTAS within the library's cap, the cuBLASLt/hipBLASLt SM count target,\n"
    "                        PyTorch's SM carve-out, TE's NVTE_EXT_MARGIN_SM), beside duet's own best and\n"
    "                        one verdict. nccl and te run on NVIDIA profiles, rccl on AMD ones. Where copy\n"
    "                        mode beats every vendor split, the library's copy-engine path follows (NCCL or\n"
    "                        RCCL 2.28 and later: the zero-CTA policy, NCCL_CTA_POLICY=2, for all_gather and\n"
    "                        all_to_all on symmetric windows; when it falls back to SM kernels, how to tell)\n"
    "  --nccl-version V      the NCCL the settings are for (default 2.27): it caps the collective at 32 CTAs\n"
    "                        before 2.25, 64 from 2.25; 2.17 is the first with the CTA settings\n"
    "  --rccl-version V      the RCCL (default 2.20.5, ROCm 6.2): 32 CTAs before 2.18.6, 64 before 2.20,\n"
    "                        then 128\n"
    "  --hipblaslt-version V the hipBLASLt (default 1.4): before 1.4 it has no CU count target, so no\n"
    "                        vendor split is reachable through --emit rccl or env on AMD\n"
    "  --svg FILE            draw predicted makespan against gemm_wgs, one line per mode and tile\n"
    "  --timeline FILE       draw the timeline of the best configuration (SVG Gantt chart)\n"
    "  --trace FILE          write the timeline of the best configuration (JSON; see --trace-format)\n"
    "  --trace-format F      duet (default: duet-trace/1) or chrome (Chrome trace events: Perfetto and\n"
    "                        chrome://tracing open it)\n"
    "  --json                the result as JSON (schema duet-predict/2, times in us)\n"
    "  --csv                 the ranked rows as CSV (times in us)\n"
    "  -o, --output FILE     write the result (text, --json or --csv) to FILE instead of standard output\n"
    "  -h, --help            this text\n"
    "\n"
    "examples:\n"
    "  duet predict --collective all_gather --gemm 8192x8192x8192 --comm 4096x8192 --top 5\n"
    "  duet predict --collective all_gather --gemm 8192x8192x8192 --comm-bytes 128M --emit torch\n"
    "  duet predict --hw mi300x --collective all_reduce --gemm 16384x16384x16384 --comm 2048x4096 --world 8 \\\n"
    "               --mode fused --tiles 256x256x64 --splits step:8 --svg curve.svg\n";

static void cmd_predict_usage(FILE *f)
{
    fprintf(f, cmd_predict_usage_text, cli_workload_help);
}

/* --split-k 1,2,4: the K splits of the sweep. */
static int cmd_predict_split_ks(const char *arg, duet_sweep_params_t *sp)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", arg);
    sp->n_split_ks = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
        long long v;
        if (cli_parse_i64(t, 1, DUET_MAX_SPLIT_K, &v) != 0)
            return cli_usage_error("predict", "--split-k: '%s' is not an integer in [1, %d]", duet__q(t),
                                   DUET_MAX_SPLIT_K);
        if (sp->n_split_ks == DUET_SWEEP_MAX_SPLIT_KS)
            return cli_usage_error("predict", "--split-k: at most %d values", DUET_SWEEP_MAX_SPLIT_KS);
        sp->split_ks[sp->n_split_ks++] = (int32_t)v;
    }
    if (sp->n_split_ks == 0)
        return cli_usage_error("predict", "--split-k: empty list");
    return CLI_EXIT_OK;
}

/* Parse "256x128x64,128x128x64" into the sweep's tile list. */
static int cmd_predict_tiles(const char *arg, duet_sweep_params_t *sp)
{
    char buf[512];
    snprintf(buf, sizeof(buf), "%s", arg);
    sp->n_tiles = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (sp->n_tiles >= DUET_SWEEP_MAX_TILES)
            return cli_usage_error("predict", "--tiles: at most %d tiles", DUET_SWEEP_MAX_TILES);
        if (duet_tile_parse(tok, &sp->tiles[sp->n_tiles]) < 0)
            return cli_usage_error("predict", "--tiles: %s", duet_last_error());
        sp->n_tiles++;
    }
    if (sp->n_tiles == 0)
        return cli_usage_error("predict", "--tiles: empty list");
    return CLI_EXIT_OK;
}

/*
 * --emit's comparison: duet's best against the best vendor split the stack can reach, with the gain's
 * interval within the band of the two predictions. What to use is the decision's (its pick), so the
 * two verdicts never disagree: "use the vendor split" only where the decision leaves the safe choice
 * for a vendor split, "use duet's kernels" only where its pick is one of duet's.
 */
static void cmd_predict_gain(FILE *f, const duet_hw_t *hw, const duet_decision_t *d, const duet_sweep_point_t *duet,
                             const duet_sweep_point_t *vendor, const char *what)
{
    double r = vendor->makespan_s / duet->makespan_s, band = duet_decide_band(hw, duet->cfg.mode, vendor->cfg.mode);
    double lo = (r / (1 + band) - 1) * 100, hi = (r * (1 + band) - 1) * 100;
    const duet_sweep_point_t *pick = duet_decision_pick(d);
    /* A pick of duet's own: the static default kept, or another of duet's configurations. */
    const char *use = d->moved ? "use duet's kernels" : "keep duet's static default";
    fprintf(f,
            "duet's kernels are predicted %.1f %% %s than %s (%.1f us against %.1f us; duet's gain %+.1f .. %+.1f %%, "
            "%s the band of %.1f %%): ",
            fabs(r - 1) * 100, r >= 1 ? "faster" : "slower", what, duet->makespan_s * 1e6, vendor->makespan_s * 1e6, lo,
            hi, lo > 0 || hi < 0 ? "beyond" : "within", band * 100);
    if (pick->cfg.mode == DUET_MODE_VENDOR)
        fprintf(f, "%s\n",
                d->moved ? "use the vendor split (the verdict)" : "keep the vendor split you run (the verdict)");
    else if (lo > 0)
        fprintf(f, "%s\n", use);
    else if (hi < 0)
        fprintf(f, "but it does not clear the band against %s: %s (the verdict)\n",
                d->safe_kind == DUET_SAFE_VENDOR ? "the vendor split you run" : "the static default", use);
    else
        fprintf(f, "the model cannot tell them apart: %s (the verdict)\n", use);
}

/*
 * --emit's verdict, one of three and never two: the vendor split the stack can reach with its settings
 * and how duet's best compares, or why no split is reachable and duet's best alone.
 */
static void cmd_predict_emit_verdict(FILE *f, const duet_hw_t *hw, const duet_decision_t *d, int32_t emit,
                                     const duet_stack_limits_t *lim, const duet_sweep_point_t *vbest,
                                     const duet_sweep_point_t *dbest, const char *settings)
{
    char split[48], tile[32];
    /* No profile measures the library's collective yet (a one-GPU corpus cannot: NCCL refuses two
     * ranks on one GPU): say what the split's comm time is. */
    if (vbest != NULL)
        fprintf(f,
                "\nbest split %s can reach (--emit %s; the collective on at most %d CTAs): %s, %.2f us (the "
                "collective priced as duet's comm kernel on that CTA cap: profile %s has no measurements of the "
                "library's collective, whose own time may differ)\n%s",
                lim->libs, duet_stack_name(emit), lim->max_ctas,
                duet_config_split_str(&vbest->cfg, split, sizeof(split)), vbest->makespan_s * 1e6, hw->name, settings);
    else
        fprintf(f, "\nno vendor split is reachable through %s (--emit %s): %s\n", lim->libs, duet_stack_name(emit),
                lim->no_target[0] ? lim->no_target : "none in the sweep");
    if (dbest == NULL)
        return;
    fprintf(f, "duet's best: %s %s, tile %s, %.2f us\n", duet_mode_name(dbest->cfg.mode),
            duet_config_split_str(&dbest->cfg, split, sizeof(split)),
            duet_config_tile_str(&dbest->cfg, tile, sizeof(tile)), dbest->makespan_s * 1e6);
    if (vbest != NULL)
        cmd_predict_gain(f, hw, d, dbest, vbest, "the best vendor split");
}

/* "fused 99+33 steal, tile 256x128x64, 123.45 us (110.00-138.00)": a point with its interval. */
static const char *cmd_predict_point_str(const duet_hw_t *hw, const duet_sweep_point_t *p, char *buf, size_t n)
{
    char split[48], tile[32];
    duet_interval_t iv = duet_decide_interval(hw, p);
    snprintf(tile, sizeof(tile), "%s", ""); /* vendor mode: the library picks its kernel */
    if (p->cfg.mode != DUET_MODE_VENDOR) {
        char t[24];
        snprintf(tile, sizeof(tile), ", tile %s", duet_config_tile_str(&p->cfg, t, sizeof(t)));
    }
    snprintf(buf, n, "%s %s%s, %.2f us (%.2f-%.2f)", duet_mode_name(p->cfg.mode),
             duet_config_split_str(&p->cfg, split, sizeof(split)), tile, p->makespan_s * 1e6, iv.lo_s * 1e6,
             iv.hi_s * 1e6);
    return buf;
}

/* The verdict: the safe choice kept or left, the alternative weighed, the gain with its interval. */
static void cmd_predict_verdict(FILE *f, const duet_hw_t *hw, const duet_decision_t *d)
{
    char safe[160], alt[160];
    const char *what = d->safe_kind == DUET_SAFE_VENDOR ? "the vendor split you run" : "the static default";
    cmd_predict_point_str(hw, &d->safe, safe, sizeof(safe));
    if (!d->has_alt) {
        fprintf(f, "verdict: keep %s, %s: nothing else in the sweep\n", what, safe);
        return;
    }
    cmd_predict_point_str(hw, &d->alt, alt, sizeof(alt));
    if (d->moved)
        fprintf(f,
                "verdict: run %s\n         predicted %.1f %% faster than %s, %s; gain %+.1f .. %+.1f %%, beyond the "
                "band of %.1f %%\n",
                alt, d->gain * 100, what, safe, d->gain_lo * 100, d->gain_hi * 100, d->band * 100);
    else
        fprintf(f,
                "verdict: keep %s, %s\n         best-ranked alternative %s: gain %+.1f %% (%+.1f .. %+.1f %%), %s "
                "the band of %.1f %%\n",
                what, safe, alt, d->gain * 100, d->gain_lo * 100, d->gain_hi * 100,
                d->gain_hi < 0 ? "slower beyond" : "within", d->band * 100);
}

/* Bytes in binary units, as sizes are given (--comm-bytes 64M = 64 MiB). */
static const char *cmd_predict_mib(double bytes, char *buf, size_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 4) {
        bytes /= 1024.0;
        u++;
    }
    snprintf(buf, n, "%.4g %s", bytes, units[u]);
    return buf;
}

/* The collective's size for people: per rank, and nccl-tests' S. */
static void cmd_predict_sizes(FILE *f, const duet_workload_t *wl)
{
    char src[32], tot[32];
    if (wl->coll == DUET_COLL_NONE)
        return;
    fprintf(f, "collective: %s per rank, %s as nccl-tests counts it (%.0f bytes; busbw = algbw x %.4g)\n",
            cmd_predict_mib((double)wl->mc * (double)wl->nc * duet_dtype_bytes(wl->dtype), src, sizeof(src)),
            cmd_predict_mib(duet_coll_bytes(wl), tot, sizeof(tot)), duet_coll_bytes(wl),
            duet_coll_busbw_factor(wl->coll, wl->world));
}

/* Simulate the best configuration again, with its trace, and draw or write it. */
static int cmd_predict_best_timeline(const duet__request_t *c, const duet_sweep_params_t *sp,
                                     const duet_sweep_point_t *best, const char *svg, const char *json, int chrome)
{
    duet_plan_t plan;
    duet_trace_t trace;
    duet_trace_init(&trace, "predicted, best configuration");
    duet_sim_ws_t *ws = NULL;
    duet_sim_result_t r;
    duet_status_t st = duet_plan_build(&c->wl, &best->cfg, duet_plan_critical_rank(&c->wl), &plan);
    if (st >= 0)
        st = duet_sim_ws_create(&ws);
    if (st >= 0)
        st = duet_sim_run(ws, sp->policy, &c->hw, &plan, &trace, &r);
    if (st >= 0 && json != NULL)
        st = cli_write_trace(&trace, &plan, &c->hw, chrome, json);
    if (st >= 0 && svg != NULL) {
        char title[256];
        char tile[32];
        char split[48];
        snprintf(title, sizeof(title), "%s: best of the sweep: %s, CTAs %s, tile %s", c->hw.name,
                 duet_mode_name(best->cfg.mode), duet_config_split_str(&best->cfg, split, sizeof(split)),
                 duet_config_tile_str(&best->cfg, tile, sizeof(tile)));
        const duet_trace_t *list[1] = {&trace};
        st = duet_trace_write_svg(list, 1, title, svg);
    }
    duet_sim_ws_destroy(ws);
    duet_trace_free(&trace);
    return st < 0 ? cli_fail("predict", st) : CLI_EXIT_OK;
}

/* What `duet predict`'s command line gives beyond the request. */
typedef struct cmd_predict_opts {
    cli_common_t c; /* the workload and configuration flags; c.r the request */
    const char *svg, *timeline, *trace_path, *out_path;
    int chrome, help;
} cmd_predict_opts_t;

/* --mode: one mode, both of duet's or all. */
static int cmd_predict_modes(cmd_predict_opts_t *o, const char *cmd, const char *arg)
{
    duet_sweep_params_t *sp = &o->c.r.sp;
    int32_t m;
    o->c.r.modes_given = 1;
    if (strcmp(arg, "both") == 0)
        sp->modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT);
    else if (strcmp(arg, "all") == 0)
        sp->modes = (1u << DUET_MODE_COUNT) - 1;
    else if (duet_mode_parse(arg, &m) < 0)
        return cli_usage_error(cmd, "--mode: %s", duet_last_error());
    else
        sp->modes = 1u << m;
    return CLI_EXIT_OK;
}

/* --splits all|step:N, --running-vendor SMS[,CTAS]. */
static int cmd_predict_splits(cmd_predict_opts_t *o, const char *cmd, int opt, const char *arg)
{
    long long n, d[2] = {0, -1};
    if (opt == OPT_SPLITS) {
        if (strcmp(arg, "all") == 0)
            o->c.r.sp.split_step = 1;
        else if (strncmp(arg, "step:", 5) == 0 && cli_parse_i64(arg + 5, 1, 4096, &n) == 0)
            o->c.r.sp.split_step = (int32_t)n;
        else
            return cli_usage_error(cmd, "--splits: '%s' is not 'all' or 'step:N'", duet__q(arg));
        return CLI_EXIT_OK;
    }
    char buf[64], *comma;
    snprintf(buf, sizeof(buf), "%s", arg);
    if ((comma = strchr(buf, ',')) != NULL)
        *comma = '\0';
    if (cli_parse_i64(buf, 1, 4096, &d[0]) != 0 || (comma != NULL && cli_parse_i64(comma + 1, 0, 1 << 20, &d[1]) != 0))
        return cli_usage_error(cmd, "--running-vendor: '%s' is not SMS or SMS,CTAS (integers)", duet__q(arg));
    o->c.r.run_gemm_sms = (int32_t)d[0];
    o->c.r.run_comm_ctas = (int32_t)d[1];
    return CLI_EXIT_OK;
}

/* --emit and the stack's versions. */
static int cmd_predict_stack(cmd_predict_opts_t *o, const char *cmd, int opt, const char *arg)
{
    duet__request_t *r = &o->c.r;
    if (opt == OPT_EMIT)
        return duet_stack_parse(arg, &r->emit) < 0 ? cli_usage_error(cmd, "--emit: %s", duet_last_error())
                                                   : CLI_EXIT_OK;
    int32_t *v = opt == OPT_NCCL_VERSION ? &r->ver.nccl : opt == OPT_RCCL_VERSION ? &r->ver.rccl : &r->ver.hipblaslt;
    if (duet_version_parse(arg, v) < 0)
        return cli_usage_error(cmd, "--%s: %s",
                               opt == OPT_NCCL_VERSION   ? "nccl-version"
                               : opt == OPT_RCCL_VERSION ? "rccl-version"
                                                         : "hipblaslt-version",
                               duet_last_error());
    return CLI_EXIT_OK;
}

/* One option of `duet predict`. @return an exit code, or CLI_OPT_UNKNOWN. */
static int cmd_predict_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cmd_predict_opts_t *o = arg0;
    duet__request_t *r = &o->c.r;
    long long top;
    switch (opt) {
    case 'o':
    case OPT_SVG:
    case OPT_TIMELINE:
    case OPT_TRACE:
        *(opt == 'o'            ? &o->out_path
          : opt == OPT_SVG      ? &o->svg
          : opt == OPT_TIMELINE ? &o->timeline
                                : &o->trace_path) = arg;
        return CLI_EXIT_OK;
    case OPT_EMIT:
    case OPT_NCCL_VERSION:
    case OPT_RCCL_VERSION:
    case OPT_HIPBLASLT_VERSION:
        return cmd_predict_stack(o, cmd, opt, arg);
    case OPT_TRACE_FORMAT:
        return cli_parse_trace_format(cmd, arg, &o->chrome);
    case OPT_MODE:
        return cmd_predict_modes(o, cmd, arg);
    case OPT_TILES:
        return cmd_predict_tiles(arg, &r->sp);
    case OPT_SPLITS:
    case OPT_RUNNING:
        return cmd_predict_splits(o, cmd, opt, arg);
    case OPT_SPLIT_K:
        return cmd_predict_split_ks(arg, &r->sp);
    case OPT_TOP:
        if (cli_parse_i64(arg, 0, 1 << 30, &top) != 0)
            return cli_usage_error(cmd, "--top: '%s' is not a non-negative integer", duet__q(arg));
        r->top = top;
        return CLI_EXIT_OK;
    case OPT_POLICY:
        if ((r->sp.policy = duet_sim_policy_find(arg)) == NULL)
            return cli_usage_error(cmd, "--policy: '%s' is not fluid or frozen", duet__q(arg));
        return CLI_EXIT_OK;
    case OPT_REF:
        r->reference_pricing = 1;
        return CLI_EXIT_OK;
    default:
        return cli_common_take(&o->c, cmd, opt, arg);
    }
}

/* Parse the command line into the request, and resolve it. @return an exit code (CLI_EXIT_OK to go on). */
static int cmd_predict_parse(cmd_predict_opts_t *o, int argc, char **argv)
{
    static const struct option longopts[] = {CLI_WORKLOAD_LONGOPTS,
                                             {"mode", required_argument, NULL, OPT_MODE},
                                             {"num-wgs", required_argument, NULL, OPT_NUM_WGS},
                                             {"comm-tile", required_argument, NULL, OPT_COMM_TILE},
                                             {"group-m", required_argument, NULL, OPT_GROUP_M},
                                             {"split-k", required_argument, NULL, OPT_SPLIT_K},
                                             {"tiles", required_argument, NULL, OPT_TILES},
                                             {"splits", required_argument, NULL, OPT_SPLITS},
                                             {"top", required_argument, NULL, OPT_TOP},
                                             {"policy", required_argument, NULL, OPT_POLICY},
                                             {"svg", required_argument, NULL, OPT_SVG},
                                             {"timeline", required_argument, NULL, OPT_TIMELINE},
                                             {"trace", required_argument, NULL, OPT_TRACE},
                                             {"reference-pricing", no_argument, NULL, OPT_REF},
                                             {"running-vendor", required_argument, NULL, OPT_RUNNING},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"csv", no_argument, NULL, OPT_CSV},
                                             {"emit", required_argument, NULL, OPT_EMIT},
                                             {"nccl-version", required_argument, NULL, OPT_NCCL_VERSION},
                                             {"rccl-version", required_argument, NULL, OPT_RCCL_VERSION},
                                             {"hipblaslt-version", required_argument, NULL, OPT_HIPBLASLT_VERSION},
                                             {"trace-format", required_argument, NULL, OPT_TRACE_FORMAT},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof(*o));
    cli_common_init(&o->c);
    duet__request_init(&o->c.r, DUET__OP_PREDICT, 1);
    duet__request_t saved = o->c.r; /* the predict flags, kept over cli_common_workload()'s fill */
    int rc = cli_getopt("predict", argc, argv, longopts, cmd_predict_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help || (rc = cli_no_operands("predict", argc, argv)) != CLI_EXIT_OK)
        return rc;
    saved = o->c.r;
    if ((rc = cli_common_workload(&o->c, "predict")) != CLI_EXIT_OK)
        return rc;
    if ((rc = cli_out_formats("predict", o->c.json, o->c.csv)) != CLI_EXIT_OK)
        return rc;
    duet__request_t *r = &o->c.r;
    r->op = DUET__OP_PREDICT;
    r->sp = saved.sp;
    r->modes_given = saved.modes_given;
    r->reference_pricing = saved.reference_pricing;
    r->emit = saved.emit;
    r->ver = saved.ver;
    r->top = saved.top;
    r->run_gemm_sms = saved.run_gemm_sms;
    r->run_comm_ctas = saved.run_comm_ctas;
    r->every_point = o->svg != NULL;
    duet_status_t st = duet__request_resolve_op(r);
    return st < 0 ? cli_request_fail("predict", r, st) : CLI_EXIT_OK;
}

/* The ranked rows shown, as one table (sim/point_table.c's columns). */
static void cmd_predict_table(duet__table_t *t, const duet__request_t *r, const duet__predicted_t *p)
{
    duet__point_table_init(t, 1);
    for (size_t j = 0; j < p->shown; j++)
        duet__point_table_row(t, &r->hw, &r->wl, &p->res.points[p->dec.order[j]], p->dec.rank[j],
                              duet_decision_tied(&p->dec, j));
}

static void cmd_predict_text_tail(FILE *f, const duet__request_t *r, const duet__predicted_t *p,
                                  const duet_frozen_ref_result_t *ref);

/* The ranked rows and what they mean, for people. */
static duet_status_t cmd_predict_text(FILE *f, const duet__request_t *r, const duet__predicted_t *p,
                                      const duet_frozen_ref_result_t *ref)
{
    const duet_workload_t *wl = &r->wl;
    const duet_sweep_result_t *res = &p->res;
    fprintf(f, "%s %lldx%lldx%lld %s with %s of %lldx%lld over %d ranks on %s, policy %s\n", wl->m ? "GEMM" : "no GEMM",
            (long long)wl->m, (long long)wl->n, (long long)wl->k, duet_dtype_name(wl->dtype),
            duet_collective_name(wl->coll), (long long)wl->mc, (long long)wl->nc, wl->world, r->hw.name,
            r->sp.policy->name);
    cmd_predict_sizes(f, wl);
    fprintf(f, "%zu configurations, %zu simulated in %.1f ms (%lld events)\n\n", res->n_configs, res->n_simulated,
            res->wall_s * 1e3, (long long)res->events);
    duet__table_t t;
    cmd_predict_table(&t, r, p);
    duet_status_t st = duet__table_text(&t, f);
    duet__table_free(&t);
    if (st < 0)
        return st;
    int vendor_shown = 0;
    for (size_t j = 0; j < p->shown; j++)
        vendor_shown |= res->points[p->dec.order[j]].cfg.mode == DUET_MODE_VENDOR;
    /* No profile measures the vendor's collective yet (NCCL refuses two ranks on one GPU, so
     * one-GPU corpora cannot): say what vendor mode's comm time is. */
    if (vendor_shown && wl->coll != DUET_COLL_NONE && wl->m > 0)
        fprintf(f,
                "vendor rows: the GEMM is the library's kernel as the model expects its heuristic to choose it; "
                "the collective is priced as duet's comm kernel on the same CTA cap (profile %s has no "
                "measurements of the vendor's collective)\n",
                r->hw.name);
    fprintf(f, "\n");
    cmd_predict_verdict(f, &r->hw, &p->dec);
    cmd_predict_text_tail(f, r, p, ref);
    return DUET_OK;
}

/* After the verdict: the static default, the reference's pick, --emit's settings and verdict. */
static void cmd_predict_text_tail(FILE *f, const duet__request_t *r, const duet__predicted_t *p,
                                  const duet_frozen_ref_result_t *ref)
{
    const duet_sweep_point_t *d = &p->res.dflt;
    char rank[128];
    fprintf(f, "static default (fused, gemm_wgs %d of %d, %dx%dx%d): %.2f us, ", d->cfg.gemm_wgs, d->cfg.num_wgs,
            d->cfg.tile.bm, d->cfg.tile.bn, d->cfg.tile.bk, d->makespan_s * 1e6);
    fprintf(f, "%s (by predicted makespan alone)\n", duet_sweep_rank_str(&p->res, rank, sizeof(rank)));
    if (ref != NULL)
        fprintf(f,
                "the reference's predict_split (its candidates and 20 %% tile margin): gemm_wgs %d, tile %dx%dx%d, "
                "%.1f us\n",
                ref->gemm_wgs, ref->tile.bm, ref->tile.bn, ref->tile.bk, ref->pred_ms * 1e3);
    if (r->emit < 0)
        return;
    const uint32_t duet_modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT);
    cmd_predict_emit_verdict(f, &r->hw, &p->dec, r->emit, &r->lim, duet_sweep_best(&p->res, 1u << DUET_MODE_VENDOR),
                             duet_sweep_best(&p->res, duet_modes), p->settings);
}

/* The result in the format asked for. @return an exit code. */
static int cmd_predict_print(cli_out_t *out, const cmd_predict_opts_t *o, const duet__predicted_t *p)
{
    const duet__request_t *r = &o->c.r;
    if (o->c.json)
        return cli_out_json(out, "predict", duet__request_predict_cjson(r, p));
    if (!o->c.csv) {
        duet_status_t st = cmd_predict_text(out->f, r, p, p->ref);
        return st < 0 ? cli_fail("predict", st) : CLI_EXIT_OK;
    }
    duet__table_t t;
    cmd_predict_table(&t, r, p);
    return cli_out_table(out, "predict", &t, 0, 1, NULL, NULL);
}

/* --svg, --timeline and --trace, after the result. @return an exit code. */
static int cmd_predict_files(const cmd_predict_opts_t *o, const duet__predicted_t *p)
{
    const duet__request_t *r = &o->c.r;
    const duet_workload_t *wl = &r->wl;
    if (o->svg != NULL) {
        char title[256];
        snprintf(title, sizeof(title), "%s: GEMM %lldx%lldx%lld + %s %lldx%lld, W=%d, %s (policy %s)", r->hw.name,
                 (long long)wl->m, (long long)wl->n, (long long)wl->k, duet_collective_name(wl->coll),
                 (long long)wl->mc, (long long)wl->nc, wl->world, duet_dtype_name(wl->dtype), r->sp.policy->name);
        duet_status_t st = duet_sweep_write_svg(&p->res, title, o->svg);
        if (st < 0)
            return cli_fail("predict", st);
    }
    if (o->timeline != NULL || o->trace_path != NULL)
        return cmd_predict_best_timeline(r, &r->sp, &p->res.points[0], o->timeline, o->trace_path, o->chrome);
    return CLI_EXIT_OK;
}

int cmd_predict(int argc, char **argv)
{
    cmd_predict_opts_t *o = calloc(1, sizeof(*o));
    duet__predicted_t *p = calloc(1, sizeof(*p));
    int rc = o == NULL || p == NULL ? (cli_error("predict", "out of memory"), CLI_EXIT_FAILED)
                                    : cmd_predict_parse(o, argc, argv);
    if (rc == CLI_EXIT_OK && o->help)
        cmd_predict_usage(stdout);
    if (rc != CLI_EXIT_OK || o->help)
        goto done;
    duet_status_t st = duet__request_predict(&o->c.r, p);
    if (st < 0) {
        rc = cli_fail("predict", st);
        goto done;
    }
    cli_out_t out;
    if ((rc = cli_out_open(&out, "predict", o->out_path)) == CLI_EXIT_OK)
        rc = cli_out_close(&out, "predict", cmd_predict_print(&out, o, p));
    if (rc == CLI_EXIT_OK)
        rc = cmd_predict_files(o, p);
    duet__predicted_free(p);
done:
    free(p);
    free(o);
    return rc;
}
