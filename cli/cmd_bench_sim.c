/*
 * duet bench-sim: how fast the simulator sweeps. Two figures (docs/simulator.md):
 *  1. the reference design's _best_split_for_tile sweep with policy frozen (304 CUs, gemm_wgs
 *     38..302 step 8, its five tiles) on three inputs, against the seed's Python times;
 *  2. a full fluid sweep (every split, five tiles, both modes) of 8192^3 + 64 MB all_gather on
 *     the h200 profile.
 * Each figure is the median of --repeat runs on one core, with the spread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

enum { OPT_REPEAT = OPT_FIRST_PRIVATE };

static const duet_gemm_tile_t seed_tiles[5] = {
    {256, 256, 64}, {128, 256, 64}, {256, 128, 64}, {128, 128, 64}, {256, 64, 64}};

typedef struct bench_case {
    const char *name;
    const char *hw;
    const char *policy;
    int64_t m, n, k, mc, nc;
    int32_t coll, world;
    int32_t split_min, split_max, split_step;
    uint32_t modes;
    double seed_ms; /* the reference Python's time for the same sweep, 0 if none */
    double target_ms;
} bench_case_t;

int cmd_bench_sim(int argc, char **argv)
{
    static const struct option longopts[] = {{"repeat", required_argument, NULL, OPT_REPEAT},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    long long repeat = 15;
    int json = 0, opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            printf("usage: duet bench-sim [--repeat N] [--json]\n"
                   "\n"
                   "Times the simulator's sweeps (median of N runs, default 15, with min and max):\n"
                   "  frozen-a/b/c  the reference design's split sweep (policy frozen, 304 CUs, gemm_wgs 38..302 step 8,\n"
                   "                five tiles) on the three inputs whose Python times are 114, 498 and 1640 ms;\n"
                   "                target: at least 100x faster\n"
                   "  fluid         every split, five tiles, both modes, 8192^3 GEMM + 64 MB all_gather on h200;\n"
                   "                target: under 100 ms\n");
            return CLI_EXIT_OK;
        case OPT_REPEAT:
            if (cli_parse_i64(optarg, 1, 10000, &repeat) != 0)
                return cli_usage_error("bench-sim", "--repeat: '%s' is not an integer in [1, 10000]", optarg);
            break;
        case OPT_JSON:
            json = 1;
            break;
        default:
            return cli_getopt_error("bench-sim", argv, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("bench-sim", "unexpected argument '%s'", argv[optind]);

    const uint32_t fused = 1u << DUET_MODE_FUSED, both = fused | (1u << DUET_MODE_CONCURRENT);
    const bench_case_t cases[] = {
        {"frozen-a", "mi300x", "frozen", 4096, 4096, 4096, 512, 2048, DUET_COLL_ALL_GATHER, 2, 38, 302, 8, fused, 114, 1.14},
        {"frozen-b", "mi300x", "frozen", 8192, 8192, 8192, 2048, 4096, DUET_COLL_ALL_GATHER, 8, 38, 302, 8, fused, 498, 4.98},
        {"frozen-c", "mi300x", "frozen", 16384, 16384, 16384, 2048, 4096, DUET_COLL_ALL_REDUCE, 8, 38, 302, 8, fused, 1640,
         16.4},
        {"fluid", "h200", "fluid", 8192, 8192, 8192, 4096, 8192, DUET_COLL_ALL_GATHER, 2, 0, 0, 1, both, 0, 100},
    };
    const int ncases = (int)(sizeof(cases) / sizeof(cases[0]));
    double *t = calloc((size_t)repeat, sizeof(double));
    duet_sim_ws_t *ws = NULL;
    duet_status_t st = t ? duet_sim_ws_create(&ws) : DUET_ERR_NO_MEMORY;
    if (st < 0) {
        free(t);
        return cli_fail("bench-sim", st);
    }
    int rc = CLI_EXIT_OK;
    if (json)
        printf("{\"repeat\": %lld, \"cases\": [\n", repeat);
    else
        printf("%-9s %-7s %7s %10s %10s %10s %12s %14s %9s %s\n", "case", "hw", "configs", "median ms", "min ms",
               "max ms", "events", "events/s", "speedup", "target");
    for (int i = 0; i < ncases; i++) {
        const bench_case_t *bc = &cases[i];
        duet_hw_t hw;
        duet_workload_t wl = duet_workload_empty();
        wl.m = bc->m;
        wl.n = bc->n;
        wl.k = bc->k;
        wl.mc = bc->mc;
        wl.nc = bc->nc;
        wl.coll = bc->coll;
        wl.world = bc->world;
        wl.dtype = DUET_DTYPE_FP16;
        duet_sweep_params_t sp = duet_sweep_default_params();
        sp.policy = duet_sim_policy_find(bc->policy);
        sp.modes = bc->modes;
        sp.n_tiles = 5;
        memcpy(sp.tiles, seed_tiles, sizeof(seed_tiles));
        sp.split_min = bc->split_min;
        sp.split_max = bc->split_max;
        sp.split_step = bc->split_step;
        sp.cm = 256;
        sp.cn = 64;
        if ((st = duet_hw_builtin(bc->hw, &hw)) < 0) {
            rc = cli_fail("bench-sim", st);
            break;
        }
        /* The reference sweep ran on 2-byte tiles that fill MI300X's LDS with one stage. */
        duet_sweep_result_t res;
        int64_t events = 0;
        size_t configs = 0;
        for (long long r = 0; r < repeat; r++) {
            if ((st = duet_sweep_run(ws, &hw, &wl, &sp, &res)) < 0)
                break;
            t[r] = res.wall_s;
            events = res.events;
            configs = res.n + 1;
            duet_sweep_result_free(&res);
        }
        if (st < 0) {
            rc = cli_fail("bench-sim", st);
            break;
        }
        cli_sort_doubles(t, (size_t)repeat);
        double med = t[repeat / 2], ms = med * 1e3;
        double speedup = bc->seed_ms > 0 ? bc->seed_ms / ms : 0;
        int met = ms <= bc->target_ms;
        if (json)
            printf("  {\"case\": \"%s\", \"hw\": \"%s\", \"policy\": \"%s\", \"configs\": %zu, \"median_ms\": %.4f, "
                   "\"min_ms\": %.4f, \"max_ms\": %.4f, \"events\": %lld, \"events_per_s\": %.4g, \"seed_ms\": %g, "
                   "\"speedup\": %.1f, \"target_ms\": %g, \"met\": %s}%s\n",
                   bc->name, bc->hw, bc->policy, configs, ms, t[0] * 1e3, t[repeat - 1] * 1e3, (long long)events,
                   events / med, bc->seed_ms, speedup, bc->target_ms, met ? "true" : "false", i + 1 < ncases ? "," : "");
        else
            printf("%-9s %-7s %7zu %10.3f %10.3f %10.3f %12lld %14.3g %8.0fx %s %.3g ms: %s\n", bc->name, bc->hw,
                   configs, ms, t[0] * 1e3, t[repeat - 1] * 1e3, (long long)events, events / med, speedup,
                   bc->seed_ms > 0 ? "<=" : "<", bc->target_ms, met ? "met" : "MISSED");
    }
    if (json && rc == CLI_EXIT_OK)
        printf("]}\n");
    duet_sim_ws_destroy(ws);
    free(t);
    return rc;
}
