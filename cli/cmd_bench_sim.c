/*
 * duet bench-sim: how fast the simulator sweeps on this machine (docs/simulator.md, "Speed").
 * Four sweeps, each timed --repeat times on one thread:
 *  frozen-a/b/c  the reference design's split sweep (its _best_split_for_tile: policy frozen, 304
 *                CUs, gemm_wgs 38..302 step 8, its five tiles) on three inputs;
 *  fluid         every split, five tiles, both modes, 8192^3 + 64 MB all_gather on h200.
 * It prints what it measured: per sweep the median, fastest and slowest time, the events and events
 * per second, and per policy the events per second over its sweeps. The reference predictor's own
 * times are printed as a figure with the machine they were measured on; nothing is compared with
 * them here, because they come from another machine and a time on a loaded one says nothing.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"
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
} bench_case_t;

/* What one case measured: times of the whole sweep in seconds, over the repeats. */
typedef struct bench_row {
    double med_s, min_s, max_s;
    int64_t events;
    size_t configs;
} bench_row_t;

/*
 * The reference design's Python predictor timed on the same three frozen sweeps, as the project
 * recorded it when the simulator was specified (milliseconds per sweep). Printed as a figure only.
 */
static const char ref_source[] = "the reference design's predictor (Python, _best_split_for_tile)";
static const char ref_machine[] = "the project's 2-core x86-64 build machine, November 2026 (CPU model not recorded)";
static const struct {
    const char *name;
    double ms;
} ref_times[] = {{"frozen-a", 114}, {"frozen-b", 498}, {"frozen-c", 1640}};

/* The first "model name" of /proc/cpuinfo (Linux), else "unknown": the machine a figure is from. */
static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f == NULL)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f) != NULL) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon != NULL) {
            colon++;
            while (*colon == ' ' || *colon == '\t')
                colon++;
            snprintf(buf, n, "%s", colon);
            buf[strcspn(buf, "\r\n")] = '\0';
            break;
        }
    }
    fclose(f);
}

/* Run one case `repeat` times into `row`; `t` holds `repeat` doubles of scratch. */
static duet_status_t bench_run(duet_sim_ws_t *ws, const bench_case_t *bc, long long repeat, double *t, bench_row_t *row)
{
    duet_hw_t hw;
    duet_status_t st = duet_hw_builtin(bc->hw, &hw);
    if (st < 0)
        return st;
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
    /* A benchmark of the sweep's speed on a fixed set of configurations: the seed's, without
     * stream-K, so that its figures compare across versions. */
    sp.stream_k = 0;
    /* The reference sweep's comm tile (256 x 64 elements). */
    sp.cm = 256;
    sp.cn = 64;
    for (long long r = 0; r < repeat; r++) {
        duet_sweep_result_t res;
        if ((st = duet_sweep_run(ws, &hw, &wl, &sp, &res)) < 0)
            return st;
        t[r] = res.wall_s;
        row->events = res.events;
        row->configs = res.n + 1; /* the ranked configurations and the static default */
        duet_sweep_result_free(&res);
    }
    row->med_s = duet__median(t, (size_t)repeat); /* sorts t */
    row->min_s = t[0];
    row->max_s = t[repeat - 1];
    return DUET_OK;
}

static void cmd_bench_sim_usage(FILE *f)
{
    fprintf(f, "usage: duet bench-sim [--repeat N] [--json|--csv] [-o FILE]\n"
               "\n"
               "Times the simulator's sweeps on this machine, one thread, N runs each (default 15), and prints\n"
               "per sweep the median, fastest and slowest time, the events and events per second, and per\n"
               "policy the events per second over its sweeps:\n"
               "  frozen-a/b/c  the reference design's split sweep (policy frozen, 304 CUs, gemm_wgs 38..302\n"
               "                step 8, five tiles): 4096^3 + 2 MB all_gather at W = 2, 8192^3 + 16 MB\n"
               "                all_gather at W = 8, 16384^3 + 16 MB all_reduce at W = 8\n"
               "  fluid         every split, five tiles, both modes, 8192^3 + 64 MB all_gather on h200\n"
               "The reference predictor's own times for frozen-a/b/c follow as a figure with the machine they\n"
               "were measured on; they are not compared with this run. Times depend on the machine and its\n"
               "load (the load average at the start is printed).\n"
               "\n"
               "options:\n"
               "  --repeat N            runs of each sweep (default 15)\n"
               "  --json                the result as JSON (schema duet-bench-sim/1, times in us)\n"
               "  --csv                 the per-sweep table as CSV (times in us)\n"
               "  -o, --output FILE     write the result (text, --json or --csv) to FILE instead of standard output\n"
               "  -h, --help            this text\n"
               "\n"
               "examples:\n"
               "  duet bench-sim\n"
               "  duet bench-sim --repeat 5 --csv -o bench-sim.csv\n");
}

/* bench-sim's flags. */
typedef struct bench_opts {
    long long repeat;
    cli_outopt_t oo;
    int help;
} bench_opts_t;

/*
 * The per-sweep table: text, CSV and JSON's "cases". Times are in ms in the text and in us in CSV and
 * JSON, each computed from the time in seconds, so each is two columns (one per form): the text
 * column's text_scale of the us value would print the last ms digit one apart for about one time in
 * 10^4, as (s * 1e6) * 1e-3 is not always s * 1e3 in doubles.
 */
static const duet__col_t cmd_bench_sim_cols[] = {
    {"case", NULL, NULL, "%-9s", DUET__CELL_STR, 0, 0, NULL},
    {"policy", NULL, NULL, " %-7s", DUET__CELL_STR, 0, 0, NULL},
    {"hw", NULL, NULL, " %-7s", DUET__CELL_STR, 0, 0, NULL},
    {"configs", NULL, NULL, " %7lld", DUET__CELL_INT, 0, 0, NULL},
    {"median_ms", "ms/sweep", NULL, " %10.3f", DUET__CELL_NUM, 0, DUET__COL_TEXT, NULL},
    {"min_ms", "min", "ms", " %10.3f", DUET__CELL_NUM, 0, DUET__COL_TEXT, NULL},
    {"max_ms", "max", "ms", " %10.3f", DUET__CELL_NUM, 0, DUET__COL_TEXT, NULL},
    /* The clock reads nanoseconds: three decimals of a microsecond say all it measured. */
    {"median_us", NULL, NULL, "%f", DUET__CELL_NUM, 0, DUET__COL_DATA, "%.3f"},
    {"min_us", NULL, NULL, "%f", DUET__CELL_NUM, 0, DUET__COL_DATA, "%.3f"},
    {"max_us", NULL, NULL, "%f", DUET__CELL_NUM, 0, DUET__COL_DATA, "%.3f"},
    {"events", NULL, NULL, " %10lld", DUET__CELL_INT, 0, 0, NULL},
    {"events_per_second", "events/s", NULL, " %11.3g", DUET__CELL_NUM, 0, 0, "%.0f"},
    {"us_per_config", "us/config", NULL, " %10.2f", DUET__CELL_NUM, 0, 0, "%.4f"},
};

/* The reference design's split sweeps and duet's fluid sweep, and the policies they time. */
static const char *const bench_policies[] = {"frozen", "fluid"};
#define BENCH_FUSED (1u << DUET_MODE_FUSED)
#define BENCH_BOTH (BENCH_FUSED | (1u << DUET_MODE_CONCURRENT))
static const bench_case_t bench_cases[] = {
    {"frozen-a", "mi300x", "frozen", 4096, 4096, 4096, 512, 2048, DUET_COLL_ALL_GATHER, 2, 38, 302, 8, BENCH_FUSED},
    {"frozen-b", "mi300x", "frozen", 8192, 8192, 8192, 2048, 4096, DUET_COLL_ALL_GATHER, 8, 38, 302, 8, BENCH_FUSED},
    {"frozen-c", "mi300x", "frozen", 16384, 16384, 16384, 2048, 4096, DUET_COLL_ALL_REDUCE, 8, 38, 302, 8, BENCH_FUSED},
    {"fluid", "h200", "fluid", 8192, 8192, 8192, 4096, 8192, DUET_COLL_ALL_GATHER, 2, 0, 0, 1, BENCH_BOTH},
};
enum {
    BENCH_NCASES = sizeof(bench_cases) / sizeof(bench_cases[0]),
    BENCH_NPOL = sizeof(bench_policies) / sizeof(bench_policies[0])
};

/* One run of bench-sim: the machine, each sweep's times and each policy's totals. */
typedef struct bench_result {
    const bench_case_t *cases;
    long long repeat;
    bench_row_t rows[BENCH_NCASES];
    char cpu[256];
    long cpus;
    double load;
    int64_t pol_events[BENCH_NPOL];
    double pol_s[BENCH_NPOL];
    int pol_sweeps[BENCH_NPOL];
} bench_result_t;

/* Time every sweep, then total each policy's. */
static duet_status_t bench_measure(bench_result_t *r)
{
    r->cases = bench_cases;
    cpu_model(r->cpu, sizeof(r->cpu));
    r->cpus = sysconf(_SC_NPROCESSORS_ONLN);
    r->load = -1;
    if (getloadavg(&r->load, 1) != 1)
        r->load = -1;

    double *t = calloc((size_t)r->repeat, sizeof(double));
    duet_sim_ws_t *ws = NULL;
    duet_status_t st = t ? duet_sim_ws_create(&ws) : DUET_ERR_NO_MEMORY;
    for (int i = 0; i < BENCH_NCASES && st >= 0; i++)
        st = bench_run(ws, &r->cases[i], r->repeat, t, &r->rows[i]);
    duet_sim_ws_destroy(ws);
    free(t);
    if (st < 0)
        return st;

    /* Per policy: every event of its sweeps over the sum of their median times. */
    for (int i = 0; i < BENCH_NCASES; i++)
        for (int p = 0; p < BENCH_NPOL; p++)
            if (strcmp(r->cases[i].policy, bench_policies[p]) == 0) {
                r->pol_events[p] += r->rows[i].events;
                r->pol_s[p] += r->rows[i].med_s;
                r->pol_sweeps[p]++;
            }
    return DUET_OK;
}

/* The per-sweep table of a run. */
static void bench_table(duet__table_t *t, const bench_result_t *r)
{
    duet__table_init(t, cmd_bench_sim_cols, (int)(sizeof(cmd_bench_sim_cols) / sizeof(cmd_bench_sim_cols[0])));
    for (int i = 0; i < BENCH_NCASES; i++) {
        const bench_row_t *w = &r->rows[i];
        duet__table_str(t, r->cases[i].name);
        duet__table_str(t, r->cases[i].policy);
        duet__table_str(t, r->cases[i].hw);
        duet__table_int(t, (long long)w->configs);
        duet__table_num(t, w->med_s * 1e3);
        duet__table_num(t, w->min_s * 1e3);
        duet__table_num(t, w->max_s * 1e3);
        duet__table_num(t, w->med_s * 1e6);
        duet__table_num(t, w->min_s * 1e6);
        duet__table_num(t, w->max_s * 1e6);
        duet__table_int(t, (long long)w->events);
        duet__table_num(t, (double)w->events / w->med_s);
        duet__table_num(t, w->med_s * 1e6 / (double)w->configs);
    }
}

/* bench-sim --json (duet-bench-sim/1), its "cases" the per-sweep table `t` (freed here). */
static int bench_json(cli_out_t *out, const bench_result_t *r, duet__table_t *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "duet-bench-sim/1");
    cJSON_AddNumberToObject(o, "repeat", (double)r->repeat);
    cJSON *mach = cJSON_AddObjectToObject(o, "machine");
    cJSON_AddStringToObject(mach, "cpu", r->cpu);
    cJSON_AddNumberToObject(mach, "cpus_online", (double)r->cpus);
    cli_json_add_num(mach, "load_average_1min", r->load >= 0 ? r->load : NAN);
    if (!duet__table_cjson_take(t, o, "cases")) {
        cJSON_Delete(o);
        return cli_out_json(out, "bench-sim", NULL); /* out of memory: it says so */
    }
    cJSON *arr = cJSON_AddArrayToObject(o, "policies");
    for (int p = 0; p < BENCH_NPOL; p++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "policy", bench_policies[p]);
        cJSON_AddNumberToObject(c, "sweeps", r->pol_sweeps[p]);
        cJSON_AddNumberToObject(c, "events", (double)r->pol_events[p]);
        cJSON_AddNumberToObject(c, "median_us_sum", r->pol_s[p] * 1e6);
        cli_json_add_num(c, "events_per_second", (double)r->pol_events[p] / r->pol_s[p]);
        cJSON_AddItemToArray(arr, c);
    }
    cJSON *ref = cJSON_AddObjectToObject(o, "reference");
    cJSON_AddStringToObject(ref, "source", ref_source);
    cJSON_AddStringToObject(ref, "machine", ref_machine);
    arr = cJSON_AddArrayToObject(ref, "cases");
    for (size_t j = 0; j < sizeof(ref_times) / sizeof(ref_times[0]); j++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "case", ref_times[j].name);
        cJSON_AddNumberToObject(c, "us", ref_times[j].ms * 1e3);
        cJSON_AddItemToArray(arr, c);
    }
    return cli_out_json(out, "bench-sim", o);
}

/* bench-sim's text: the machine, the per-sweep table `t` (freed here), the policies, the reference's times. */
static int bench_text(FILE *f, const bench_result_t *r, duet__table_t *t)
{
    fprintf(f, "duet bench-sim: %lld runs of each sweep on one thread; %s, %ld CPUs online", r->repeat, r->cpu,
            r->cpus);
    if (r->load >= 0)
        fprintf(f, ", load average %.2f at the start", r->load);
    fprintf(f, "\n\n");
    duet_status_t st = duet__table_text(t, f);
    duet__table_free(t);
    if (st < 0)
        return cli_fail("bench-sim", st);
    fprintf(f, "\nper policy (the sweeps' events over the sum of their median times):\n");
    for (int p = 0; p < BENCH_NPOL; p++)
        fprintf(f, "  %-7s %d sweep%s, %lld events in %.3f ms: %.3g events/s\n", bench_policies[p], r->pol_sweeps[p],
                r->pol_sweeps[p] == 1 ? "" : "s", (long long)r->pol_events[p], r->pol_s[p] * 1e3,
                (double)r->pol_events[p] / r->pol_s[p]);
    fprintf(f, "\nfor reference, not measured here: %s took", ref_source);
    for (size_t j = 0; j < sizeof(ref_times) / sizeof(ref_times[0]); j++)
        fprintf(f, "%s %g ms (%s)", j == 0 ? "" : ",", ref_times[j].ms, ref_times[j].name);
    fprintf(f, "\non %s.\n", ref_machine);
    return CLI_EXIT_OK;
}

/* The result in the format asked for. @return an exit code. */
static int bench_print(cli_out_t *out, const cli_outopt_t *oo, const bench_result_t *r)
{
    duet__table_t t;
    bench_table(&t, r);
    if (oo->json)
        return bench_json(out, r, &t);
    if (oo->csv)
        return cli_out_table(out, "bench-sim", &t, 0, 1, NULL, NULL);
    return bench_text(out->f, r, &t);
}

/* bench-sim's one option besides the output's. */
static int bench_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    bench_opts_t *o = arg0;
    if (opt == OPT_REPEAT) {
        if (cli_parse_i64(arg, 1, 10000, &o->repeat) != 0)
            return cli_usage_error(cmd, "--repeat: '%s' is not an integer in [1, 10000]", duet__q(arg));
        return CLI_EXIT_OK;
    }
    return cli_out_option(&o->oo, opt, arg) ? CLI_EXIT_OK : CLI_OPT_UNKNOWN;
}

int cmd_bench_sim(int argc, char **argv)
{
    static const struct option longopts[] = {{"repeat", required_argument, NULL, OPT_REPEAT},
                                             CLI_OUTPUT_LONGOPTS,
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    bench_opts_t o = {15, {0, 0, NULL}, 0};
    int rc = cli_getopt("bench-sim", argc, argv, longopts, bench_option, &o, &o.help);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cmd_bench_sim_usage(stdout);
        return rc;
    }
    if ((rc = cli_no_operands("bench-sim", argc, argv)) != CLI_EXIT_OK ||
        (rc = cli_out_validate("bench-sim", &o.oo)) != CLI_EXIT_OK)
        return rc;

    bench_result_t r;
    memset(&r, 0, sizeof(r));
    r.repeat = o.repeat;
    duet_status_t st = bench_measure(&r);
    if (st < 0)
        return cli_fail("bench-sim", st);
    cli_out_t out;
    if ((rc = cli_out_open(&out, "bench-sim", o.oo.path)) != CLI_EXIT_OK)
        return rc;
    return cli_out_close(&out, "bench-sim", bench_print(&out, &o.oo, &r));
}
