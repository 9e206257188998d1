/*
 * duet bench's picture: each workload's makespans over its bound, the vendor's best practice
 * against duet's best (base/plot.c draws it). The GPU bench draws it from its measurements
 * (cli/gpu/bench_report.c); `duet bench-plot` draws it again from a bench's JSON file on any
 * machine, so a picture can be redrawn without the GPUs that measured it.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/cli.h"
#include "model/internal.h"

/* More rows than this would make a picture 120,000 px tall: no one reads it. */
#define CLI_BENCH_PLOT_MAX_ROWS 10000

duet_status_t cli_bench_svg_write(const cli_bench_bar_t *bars, size_t n, const char *device, int world,
                                  const char *vendor, const char *path)
{
    duet__hbar_row_t *rows = calloc(n ? n : 1, sizeof(*rows));
    if (rows == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate the rows of %zu workloads", path, n);
    /* One group per workload shape (a GEMM and a collective's tensor), one row per collective in it. */
    for (size_t i = 0; i < n; i++) {
        const duet_workload_t *w = &bars[i].wl;
        duet__hbar_row_t *r = &rows[i];
        snprintf(r->group, sizeof(r->group), "%lldx%lldx%lld, comm %lldx%lld", (long long)w->m, (long long)w->n,
                 (long long)w->k, (long long)w->mc, (long long)w->nc);
        snprintf(r->label, sizeof(r->label), "%s", duet_collective_name(w->coll));
        r->v[0] = bars[i].vendor_over_bound;
        r->v[1] = bars[i].duet_over_bound;
        double ratio = r->v[0] / r->v[1];
        snprintf(r->note, sizeof(r->note), isfinite(ratio) ? "%.2fx" : "-", ratio);
    }
    char title[256], legend0[256];
    snprintf(title, sizeof(title),
             "%s x%d: makespan / max(GEMM alone, collective alone), vendor best practice vs duet best", device, world);
    snprintf(legend0, sizeof(legend0), "best of sequential, two streams, carve-outs (%s)", vendor);
    duet__hbars_t chart = {.title = title,
                           .legend = {legend0, "best duet mode (fused, concurrent or vendor)"},
                           .colour = {"#9d9d9d", "#4c78a8"},
                           .ref = 1.0,
                           .xlabel =
                               "makespan / bound (bound = max(GEMM alone, collective alone); 1 = perfect overlap)",
                           .note_title = "vendor / duet",
                           .n = n,
                           .rows = rows};
    /* The axis ends at the first round tick at or past the longest bar. */
    duet__hbars_auto_axis(&chart);
    duet_status_t st = duet__svg_hbars_write(&chart, path);
    free(rows);
    return st;
}

/* A ratio of the workload's "derived" object: a number, or null where a figure was missing (NaN). */
static duet_status_t cli_bench_ratio(const cJSON *derived, const char *key, const char *where, double *v_p)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(derived, key);
    if (cJSON_IsNull(v)) {
        *v_p = NAN;
        return DUET_OK;
    }
    DUET_CHECK(duet__json_member(derived, key, DUET__JSON_NUMBER, where, &v));
    if (!(v->valuedouble >= 0) || !isfinite(v->valuedouble))
        return duet__error(DUET_ERR_PARSE, "%s.%s: %g is not a ratio >= 0", where, key, v->valuedouble);
    *v_p = v->valuedouble;
    return DUET_OK;
}

/* One workload of the file: its shape, collective and the two ratios the chart draws. */
static duet_status_t cli_bench_bar_read(const cJSON *o, const char *where, cli_bench_bar_t *bar)
{
    const cJSON *derived;
    memset(bar, 0, sizeof(*bar));
    DUET_CHECK(duet__workload_from_json(o, where, DUET__WORKLOAD_ROOT_OPTIONAL, &bar->wl));
    if (bar->wl.coll == DUET_COLL_NONE)
        return duet__error(DUET_ERR_PARSE, "%s.collective: none: the chart draws a GEMM beside a collective", where);
    DUET_CHECK(duet__json_member(o, "derived", DUET__JSON_OBJECT, where, &derived));
    char w2[160];
    snprintf(w2, sizeof(w2), "%s.derived", where);
    DUET_CHECK(cli_bench_ratio(derived, "vendor_over_bound", w2, &bar->vendor_over_bound));
    DUET_CHECK(cli_bench_ratio(derived, "duet_over_bound", w2, &bar->duet_over_bound));
    return DUET_OK;
}

/* A bench file's header: its schema (duet-bench/1, with makespans), device, vendor and world. */
static duet_status_t cli_bench_file_header(const cJSON *root, const char *path, char *device, char *vendor, size_t len,
                                           int64_t *world)
{
    char schema[32];
    if (!cJSON_IsObject(root))
        return duet__error(DUET_ERR_PARSE, "%s: not a bench file (a JSON object)", path);
    DUET_CHECK(duet__json_member_str(root, "schema", path, schema, sizeof(schema)));
    if (strcmp(schema, "duet-bench/1") != 0)
        return duet__error(DUET_ERR_PARSE, "%s: schema '%s': this duet draws duet-bench/1", path, duet__q(schema));
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "gemm_only")))
        return duet__error(DUET_ERR_PARSE, "%s: a --gemm-only bench has no makespans with a collective to draw", path);
    DUET_CHECK(duet__json_member_str(root, "device", path, device, len));
    DUET_CHECK(duet__json_member_str(root, "vendor", path, vendor, len));
    return duet__json_member_int(root, "world", 1, 4096, path, world);
}

/* The header and the workloads of a bench file (schema duet-bench/1); *bars_p is malloc'd. */
static duet_status_t cli_bench_file_read(const char *path, char *device, char *vendor, size_t len, int64_t *world,
                                         cli_bench_bar_t **bars_p, size_t *n_p)
{
    char *text = NULL;
    size_t n = 0;
    cli_bench_bar_t *bars = NULL;
    cJSON *root = NULL;
    const cJSON *arr, *e;
    duet_status_t st;
    DUET_CHECK(duet__read_file(path, &text, &n));
    root = duet__json_parse(text, n, path, 1);
    if (root == NULL) {
        st = duet__last_status(); /* malformed, or out of memory */
        goto done;
    }
    DUET_CHECK_GOTO(cli_bench_file_header(root, path, device, vendor, len, world), st, done);
    DUET_CHECK_GOTO(duet__json_member(root, "workloads", DUET__JSON_ARRAY, path, &arr), st, done);
    n = (size_t)cJSON_GetArraySize(arr);
    if (n == 0 || n > CLI_BENCH_PLOT_MAX_ROWS) {
        st =
            duet__error(DUET_ERR_PARSE, "%s: %zu workloads: the chart draws 1 to %d", path, n, CLI_BENCH_PLOT_MAX_ROWS);
        goto done;
    }
    bars = calloc(n, sizeof(*bars));
    if (bars == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate %zu workloads", path, n);
        goto done;
    }
    size_t i = 0;
    cJSON_ArrayForEach(e, arr)
    {
        char where[96];
        snprintf(where, sizeof(where), "%s: workloads[%zu]", path, i);
        DUET_CHECK_GOTO(cli_bench_bar_read(e, where, &bars[i]), st, done);
        i++;
    }
    *bars_p = bars;
    *n_p = n;
    bars = NULL;
    st = DUET_OK;
done:
    free(bars);
    cJSON_Delete(root);
    free(text);
    return st;
}

static void cmd_bench_plot_usage(FILE *f)
{
    fprintf(f, "usage: duet bench-plot FILE --svg OUT\n"
               "\n"
               "Draws the picture of a bench's JSON file (schema duet-bench/1, written by the GPU build's 'duet\n"
               "bench'): each workload's makespan over its bound max(GEMM alone, collective alone), the vendor's\n"
               "best practice against duet's best, grouped by shape, with vendor / duet beside each. The same\n"
               "picture as 'duet bench --svg', drawn on any machine from the file.\n"
               "\n"
               "  --svg OUT    the picture to write (SVG, written atomically)\n"
               "  -h, --help   this text\n"
               "\n"
               "example:\n"
               "  duet bench-plot bench/results/bench-h200-w2.json --svg bench-h200-w2.svg\n");
}

int cmd_bench_plot(int argc, char **argv)
{
    enum { O_SVG = 300 };
    static const struct option longopts[] = {
        {"svg", required_argument, NULL, O_SVG}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *cmd = "bench-plot", *svg = NULL;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cmd_bench_plot_usage(stdout);
            return CLI_EXIT_OK;
        case O_SVG:
            svg = optarg;
            break;
        default:
            return cli_getopt_error(cmd, argv, opt);
        }
    }
    if (optind + 1 != argc)
        return optind < argc ? cli_usage_error(cmd, "give one bench file (got '%s' and more)", duet__q(argv[optind]))
                             : cli_usage_error(cmd, "give the bench file to draw");
    if (svg == NULL)
        return cli_usage_error(cmd, "give --svg OUT, the picture to write");
    char device[128], vendor[128];
    int64_t world = 0;
    cli_bench_bar_t *bars = NULL;
    size_t n = 0;
    duet_status_t st = cli_bench_file_read(argv[optind], device, vendor, sizeof(device), &world, &bars, &n);
    if (st >= 0)
        st = cli_bench_svg_write(bars, n, device, (int)world, vendor, svg);
    free(bars);
    if (st < 0)
        return cli_fail(cmd, st);
    printf("%s: %zu workloads drawn to %s\n", cmd, n, svg);
    return CLI_EXIT_OK;
}
