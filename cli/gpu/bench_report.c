/*
 * duet bench's report: the table and the summary lines (docs/performance.md) on stdout, every
 * figure as JSON, and the picture of the makespans. The figures are the library's
 * (duet_bench_workload(), duet_bench_derive()).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "cli/gpu/gpu.h"
#include "model/internal.h"

static double stat_or_inf(const duet_measure_stat_t *s)
{
    return s->ok ? s->med_ms : INFINITY;
}

/* " and 300 ms" where a time-based warm-up was asked for (--warmup-ms), else "". */
static const char *warm_ms_str(const duet_bench_params_t *p, char *buf, size_t n)
{
    buf[0] = '\0';
    if (p->runs.warmup_ms > 0)
        snprintf(buf, n, " and %.0f ms", p->runs.warmup_ms);
    return buf;
}

/*
 * The summary line of duet's GEMM against the baseline's: one ratio per workload shape (the first
 * row of each M, N, K, Mc, Nc: every collective of a shape shares its GEMM figures), split at
 * M = 512. `scratch` holds 2 n doubles.
 */
static void bench_print_gemm_summary(FILE *f, const duet_bench_row_t *rows, size_t n, double *scratch)
{
    double *big = scratch, *small = scratch + n;
    size_t nb = 0, ns = 0;
    double big_min = INFINITY;
    for (size_t i = 0; i < n; i++) {
        const duet_workload_t *w = &rows[i].wl;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) {
            const duet_workload_t *x = &rows[j].wl;
            seen = x->m == w->m && x->n == w->n && x->k == w->k && x->mc == w->mc && x->nc == w->nc;
        }
        double ratio = stat_or_inf(&rows[i].base_gemm) / stat_or_inf(&rows[i].gemm);
        if (seen || !isfinite(ratio))
            continue;
        if (w->m >= 512) {
            big[nb++] = ratio;
            big_min = fmin(big_min, ratio);
        } else {
            small[ns++] = ratio;
        }
    }
    fprintf(f, "  duet GEMM / vendor TFLOP/s: median %.3f for M >= 512 (min %.3f), median %.3f for M < 512\n",
            duet__median(big, nb), big_min, duet__median(small, ns));
}

/* Room for the summaries' samples, 6 n doubles (the table's four sets, then the GEMM summary's
 * two), or NULL with the error recorded. */
static double *bench_scratch(size_t n)
{
    double *s = calloc(6 * (n ? n : 1), sizeof(double));
    if (s == NULL)
        duet__error(DUET_ERR_NO_MEMORY, "cannot allocate the summary of %zu workloads", n);
    return s;
}

duet_status_t bench_print_gemms(FILE *f, const gpu_env_t *e, const duet_bench_row_t *rows, size_t n,
                                const duet_bench_params_t *p)
{
    double *scratch = bench_scratch(n);
    if (scratch == NULL)
        return DUET_ERR_NO_MEMORY;
    fprintf(f, "%-22s %10s %8s %10s %8s %-12s %7s\n", "GEMM", "vendor ms", "TFLOP/s", "duet ms", "TFLOP/s", "duet tile",
            "d/v");
    for (size_t i = 0; i < n; i++) {
        const duet_bench_row_t *r = &rows[i];
        const duet_workload_t *w = &r->wl;
        double flop = 2.0 * (double)w->m * (double)w->n * (double)w->k;
        double vm = stat_or_inf(&r->base_gemm), dm = stat_or_inf(&r->gemm), ratio = vm / dm;
        char g[32], tn[24] = "-";
        snprintf(g, sizeof(g), "%lldx%lldx%lld", (long long)w->m, (long long)w->n, (long long)w->k);
        if (r->gemm.ok && r->gemm_split > 1)
            snprintf(tn, sizeof(tn), "%dx%d/k%d", r->gemm_tile.bm, r->gemm_tile.bn, (int)r->gemm_split);
        else if (r->gemm.ok)
            snprintf(tn, sizeof(tn), "%dx%d", r->gemm_tile.bm, r->gemm_tile.bn);
        fprintf(f, "%-22s %10.4f %8.1f %10.4f %8.1f %-12s %7.3f\n", g, vm, flop / (vm * 1e-3) / 1e12, dm,
                flop / (dm * 1e-3) / 1e12, tn, ratio);
    }
    char wm[48];
    fprintf(f, "\nsummary (%zu GEMMs, %s x%d, median of %d after %d warm-up%s):\n", n, e->gpu->name, e->world,
            (int)p->runs.repeats, (int)p->runs.warmup, warm_ms_str(p, wm, sizeof(wm)));
    bench_print_gemm_summary(f, rows, n, scratch + 4 * n);
    free(scratch);
    return DUET_OK;
}

duet_status_t bench_print_table(FILE *f, const gpu_env_t *e, const duet_bench_row_t *rows, size_t n,
                                const duet_bench_params_t *p, int32_t dtype)
{
    double *scratch = bench_scratch(n);
    if (scratch == NULL)
        return DUET_ERR_NO_MEMORY;
    double *over_bound = scratch, *speedup = scratch + n, *own_bound = scratch + 2 * n, *own_speedup = scratch + 3 * n;
    size_t nb = 0, ns = 0, no = 0, nos = 0;
    int comm_short = 0, comm_n = 0;
    fprintf(f, "%-22s %-14s %8s %8s %8s %8s %-12s %8s %-18s %6s %6s %6s %6s\n", "GEMM", "collective", "vGEMM ms",
            "vColl ms", "bound ms", "vBest ms", "(which)", "duet ms", "(which)", "d/bnd", "v/d", "G tf", "C sp");
    for (size_t i = 0; i < n; i++) {
        duet_bench_derived_t d;
        duet_bench_derive(&rows[i], &d);
        const duet_workload_t *w = &rows[i].wl;
        char g[32];
        snprintf(g, sizeof(g), "%lldx%lldx%lld", (long long)w->m, (long long)w->n, (long long)w->k);
        double gr = stat_or_inf(&rows[i].base_gemm) / d.duet_gemm_ms;
        double cr = stat_or_inf(&rows[i].base_coll) / d.duet_comm_ms;
        fprintf(f, "%-22s %-14s %8.4f %8.4f %8.4f %8.4f %-12s %8.4f %-18s %6.3f %6.3f %6.3f %6.3f\n", g,
                duet_collective_name(w->coll), stat_or_inf(&rows[i].base_gemm), stat_or_inf(&rows[i].base_coll),
                d.bound_ms, d.best_base_ms, d.best_base_name, d.best_duet_ms, d.best_duet_name,
                d.best_duet_ms / d.bound_ms, d.best_base_ms / d.best_duet_ms, gr, cr);
        if (isfinite(d.best_duet_ms / d.bound_ms))
            over_bound[nb++] = d.best_duet_ms / d.bound_ms;
        if (isfinite(d.best_base_ms / d.best_duet_ms))
            speedup[ns++] = d.best_base_ms / d.best_duet_ms;
        if (isfinite(d.best_own_ms / d.bound_ms))
            own_bound[no++] = d.best_own_ms / d.bound_ms;
        if (isfinite(d.best_base_ms / d.best_own_ms))
            own_speedup[nos++] = d.best_base_ms / d.best_own_ms;
        if (isfinite(cr) && duet_op_src_bytes(w) >= (1u << 20)) {
            comm_n++;
            comm_short += cr < 1.0;
        }
    }
    char wm[48];
    fprintf(f, "\nsummary (%zu workloads, %s, %s x%d, median of %d after %d warm-up%s):\n", n, duet_dtype_name(dtype),
            e->gpu->name, e->world, (int)p->runs.repeats, (int)p->runs.warmup, warm_ms_str(p, wm, sizeof(wm)));
    bench_print_gemm_summary(f, rows, n, scratch + 4 * n);
    fprintf(f, "  duet collective faster than the vendor's: %d of %d workloads with >= 1 MB per rank\n",
            comm_n - comm_short, comm_n);
    fprintf(f, "  best duet makespan / bound: median %.3f (own kernels only: %.3f)\n", duet__median(over_bound, nb),
            duet__median(own_bound, no));
    fprintf(f, "  best vendor practice / best duet: median %.3f (own kernels only: %.3f)\n", duet__median(speedup, ns),
            duet__median(own_speedup, nos));
    free(scratch);
    return DUET_OK;
}

/* A zero-CTA figure that was asked for: measured, or failed with its reason (ok 0, no error: not asked). */
static int zero_asked(const bench_zero_t *zero, size_t i)
{
    return zero != NULL && (zero[i].stat.ok || zero[i].stat.error[0] != '\0');
}

/* The path the library took, in words: "copy engines (2 copies, 0 kernels)" and the like. */
static void zero_path_words(const bench_zero_t *z, char *buf, size_t len)
{
    if (z->probed < 0)
        snprintf(buf, len, "path unknown (%s)", z->error);
    else if (z->probed == 0)
        snprintf(buf, len, "path not probed");
    else
        snprintf(buf, len, "%s (%d copies, %d kernels, %d other nodes)",
                 z->nodes[DUET_BASELINE_NODE_KERNEL] > 0 ? "SM kernels"
                 : z->nodes[DUET_BASELINE_NODE_COPY] > 0 ? "copy engines"
                                                         : "no data movement",
                 (int)z->nodes[DUET_BASELINE_NODE_COPY], (int)z->nodes[DUET_BASELINE_NODE_KERNEL],
                 (int)z->nodes[DUET_BASELINE_NODE_OTHER]);
}

void bench_print_zero_cta(FILE *f, const gpu_env_t *e, const duet_bench_row_t *rows, const bench_zero_t *zero, size_t n)
{
    size_t asked = 0, nr = 0;
    double *ratio = calloc(n ? n : 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        asked += zero_asked(zero, i);
    if (asked == 0 || ratio == NULL) {
        free(ratio);
        return;
    }
    fprintf(f, "\nthe zero-CTA policy (the collective on the copy engines) beside the GEMM on every SM, %s:\n",
            duet_baseline_describe(duet_measure_baseline(e->m)));
    for (size_t i = 0; i < n; i++) {
        if (!zero_asked(zero, i))
            continue;
        const duet_workload_t *w = &rows[i].wl;
        duet_bench_derived_t d;
        duet_bench_derive(&rows[i], &d);
        char g[32];
        snprintf(g, sizeof(g), "%lldx%lldx%lld", (long long)w->m, (long long)w->n, (long long)w->k);
        char path[200];
        zero_path_words(&zero[i], path, sizeof(path));
        if (!zero[i].stat.ok) {
            fprintf(f, "  %-22s %-14s failed: %s; %s\n", g, duet_collective_name(w->coll), zero[i].stat.error, path);
            continue;
        }
        double r = zero[i].stat.med_ms / d.best_duet_ms;
        fprintf(f, "  %-22s %-14s %8.4f ms  zero-CTA / best duet %6.3f  %s\n", g, duet_collective_name(w->coll),
                zero[i].stat.med_ms, r, path);
        if (isfinite(r))
            ratio[nr++] = r;
    }
    fprintf(f, "  zero-CTA / best duet: median %.3f over %zu workloads\n", duet__median(ratio, nr), nr);
    free(ratio);
}

cJSON *bench_stat_json(const duet_measure_stat_t *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", s->ok);
    if (s->ok) {
        /* The measurer's ms, written as us. */
        cJSON_AddNumberToObject(o, "us", s->med_ms * 1e3);
        cJSON_AddNumberToObject(o, "min_us", s->min_ms * 1e3);
        cJSON_AddNumberToObject(o, "max_us", s->max_ms * 1e3);
        cJSON_AddNumberToObject(o, "n", s->n);
    } else {
        cJSON_AddStringToObject(o, "error", s->error);
    }
    return o;
}

cJSON *bench_stat_cfg_json(const duet_measure_stat_t *s, const duet_config_t *c, double pred_ms)
{
    cJSON *o = bench_stat_json(s);
    cli_json_add_config(cJSON_AddObjectToObject(o, "config"), c);
    if (isfinite(pred_ms))
        cJSON_AddNumberToObject(o, "pred_us", pred_ms * 1e3);
    return o;
}

/* duet's GEMM alone: the best tile and K split, and every tile at its best split. */
static void gemm_json(cJSON *d, const duet_bench_row_t *r)
{
    cJSON_AddItemToObject(d, "gemm", bench_stat_json(&r->gemm));
    if (r->gemm.ok) {
        char tn[32];
        snprintf(tn, sizeof(tn), "%dx%dx%d", r->gemm_tile.bm, r->gemm_tile.bn, r->gemm_tile.bk);
        cJSON_AddStringToObject(d, "gemm_tile", tn);
        cJSON_AddNumberToObject(d, "gemm_split_k", r->gemm_split);
    }
    cJSON *gt = cJSON_AddObjectToObject(d, "gemm_tiles");
    for (int t = 0; t < duet_tile_count() && t < DUET_BENCH_MAX_TILES; t++) {
        duet_gemm_tile_t tl = duet_tile_get(t);
        char tn[32];
        snprintf(tn, sizeof(tn), "%dx%dx%d", tl.bm, tl.bn, tl.bk);
        cJSON *st = bench_stat_json(&r->gemm_tiles[t]);
        if (r->gemm_tiles[t].ok)
            cJSON_AddNumberToObject(st, "split_k", r->gemm_tiles_split[t]);
        cJSON_AddItemToObject(gt, tn, st);
    }
}

static void derived_json(cJSON *o, const duet_bench_row_t *r)
{
    const duet_workload_t *w = &r->wl;
    duet_bench_derived_t x;
    duet_bench_derive(r, &x);
    cJSON *dv = cJSON_AddObjectToObject(o, "derived");
    cli_json_add_num(dv, "bound_us", x.bound_ms * 1e3);
    cli_json_add_num(dv, "best_vendor_us", x.best_base_ms * 1e3);
    cJSON_AddStringToObject(dv, "best_vendor", x.best_base_name);
    cli_json_add_num(dv, "best_duet_us", x.best_duet_ms * 1e3);
    cJSON_AddStringToObject(dv, "best_duet", x.best_duet_name);
    cli_json_add_num(dv, "duet_over_bound", x.best_duet_ms / x.bound_ms);
    cli_json_add_num(dv, "best_own_kernels_us", x.best_own_ms * 1e3);
    cli_json_add_num(dv, "own_kernels_over_bound", x.best_own_ms / x.bound_ms);
    cli_json_add_num(dv, "vendor_over_bound", x.best_base_ms / x.bound_ms);
    cli_json_add_num(dv, "speedup_over_vendor", x.best_base_ms / x.best_duet_ms);
    cli_json_add_num(dv, "gemm_tflops_ratio", stat_or_inf(&r->base_gemm) / x.duet_gemm_ms);
    cli_json_add_num(dv, "collective_speed_ratio", stat_or_inf(&r->base_coll) / x.duet_comm_ms);
    if (r->best_comm >= 0) {
        char t[32];
        snprintf(t, sizeof(t), "%dx%d", (int)r->comm_cm[r->best_comm], (int)r->comm_cn[r->best_comm]);
        cJSON_AddNumberToObject(dv, "collective_best_ctas", r->comm_ctas[r->best_comm]);
        cJSON_AddStringToObject(dv, "collective_best_comm_tile", t);
    }
    if (w->coll == DUET_COLL_ALL_GATHER && isfinite(x.duet_comm_ms))
        cli_json_add_num(dv, "all_gather_push_gbs",
                         (double)duet_op_src_bytes(w) * (w->world - 1) / (x.duet_comm_ms * 1e-3) / 1e9);
}

static cJSON *row_json(const duet_bench_row_t *r, const bench_zero_t *zero)
{
    cJSON *o = cJSON_CreateObject();
    const duet_workload_t *w = &r->wl;
    (void)duet__workload_to_cjson(o, w);
    cJSON_AddNumberToObject(o, "comm_bytes_per_rank", (double)duet_op_src_bytes(w));
    cJSON *v = cJSON_AddObjectToObject(o, "vendor");
    cJSON_AddItemToObject(v, "gemm", bench_stat_json(&r->base_gemm));
    cJSON *d = cJSON_AddObjectToObject(o, "duet");
    gemm_json(d, r);
    if (w->coll == DUET_COLL_NONE) { /* --gemm-only */
        cli_json_add_num(o, "gemm_ratio", stat_or_inf(&r->base_gemm) / stat_or_inf(&r->gemm));
        return o;
    }
    cJSON_AddItemToObject(v, "collective", bench_stat_json(&r->base_coll));
    cJSON_AddItemToObject(v, "sequential", bench_stat_json(&r->base_seq));
    cJSON_AddItemToObject(v, "two_streams", bench_stat_json(&r->base_streams));
    for (int i = 0; i < DUET_BENCH_NCARVE; i++) {
        char k[32];
        snprintf(k, sizeof(k), "carve_out_%d", (int)r->carve[i]);
        cJSON_AddItemToObject(v, k, bench_stat_json(&r->base_carve[i]));
    }
    cJSON *ca = cJSON_AddArrayToObject(d, "collective");
    for (int i = 0; i < DUET_BENCH_NCOMM; i++) {
        cJSON *x = bench_stat_json(&r->comm[i]);
        char t[32];
        cJSON_AddNumberToObject(x, "ctas", r->comm_ctas[i]);
        snprintf(t, sizeof(t), "%dx%d", (int)r->comm_cm[i], (int)r->comm_cn[i]);
        cJSON_AddStringToObject(x, "comm_tile", t);
        cJSON_AddItemToArray(ca, x);
    }
    cJSON_AddItemToObject(d, "fused_default", bench_stat_cfg_json(&r->fused_def_stat, &r->fused_def, NAN));
    cJSON_AddItemToObject(d, "concurrent_default", bench_stat_cfg_json(&r->conc_def_stat, &r->conc_def, NAN));
    cJSON *vm = cJSON_AddArrayToObject(d, "vendor_mode");
    for (int i = 0; i < DUET_BENCH_NCARVE; i++)
        cJSON_AddItemToArray(vm, bench_stat_cfg_json(&r->vmode[i], &r->vmode_cfg[i], NAN));
    cJSON *sw = cJSON_AddArrayToObject(d, "sweep");
    for (int32_t i = 0; i < r->n_sweep; i++)
        cJSON_AddItemToArray(sw, bench_stat_cfg_json(&r->sweep[i], &r->sweep_cfg[i], r->sweep_pred[i]));
    derived_json(o, r);
    if (zero != NULL) { /* the zero-CTA baseline, where it was asked for */
        duet_bench_derived_t x;
        duet_bench_derive(r, &x);
        cJSON *z = bench_stat_json(&zero->stat);
        cJSON_AddItemToObject(v, "zero_cta", z);
        if (zero->probed > 0) { /* the nodes of the captured collective (duet_baseline_coll_path()) */
            cJSON *pa = cJSON_AddObjectToObject(z, "path");
            cJSON_AddNumberToObject(pa, "copies", zero->nodes[DUET_BASELINE_NODE_COPY]);
            cJSON_AddNumberToObject(pa, "kernels", zero->nodes[DUET_BASELINE_NODE_KERNEL]);
            cJSON_AddNumberToObject(pa, "other", zero->nodes[DUET_BASELINE_NODE_OTHER]);
        } else if (zero->probed < 0) {
            cJSON_AddStringToObject(z, "path_error", zero->error);
        }
        cli_json_add_num(cJSON_GetObjectItem(o, "derived"), "zero_cta_over_best_duet",
                         stat_or_inf(&zero->stat) / x.best_duet_ms);
    }
    return o;
}

/*
 * cJSON's builders carry on past a failed allocation (adding to a NULL object does nothing), so
 * a tree built while memory ran out would be written with figures missing. Its allocations go
 * through this while the report is built, and one failure fails the report.
 */
static int bench_json_oom;
static void *bench_json_malloc(size_t n)
{
    void *p = malloc(n);
    bench_json_oom |= p == NULL;
    return p;
}

cJSON *bench_json_begin(const gpu_env_t *e, const duet_bench_params_t *p, const char *schema)
{
    cJSON_Hooks hooks = {bench_json_malloc, free};
    cJSON_InitHooks(&hooks);
    bench_json_oom = 0;
    cJSON *o = cJSON_CreateObject();
    time_t now = time(NULL);
    char date[32];
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    cJSON_AddStringToObject(o, "schema", schema);
    cJSON_AddStringToObject(o, "device", e->gpu->name);
    cJSON_AddStringToObject(o, "arch", e->gpu->arch);
    cJSON_AddNumberToObject(o, "sms", e->gpu->sms);
    cJSON_AddNumberToObject(o, "world", e->world);
    cJSON_AddStringToObject(o, "driver", e->gpu->driver);
    cJSON_AddStringToObject(o, "runtime", e->gpu->runtime);
    cJSON_AddStringToObject(o, "vendor", duet_baseline_describe(duet_measure_baseline(e->m)));
    cJSON_AddStringToObject(o, "date", date);
    cJSON_AddStringToObject(o, "duet", DUET_VERSION);
    cJSON_AddNumberToObject(o, "repeats", (double)p->runs.repeats);
    cJSON_AddNumberToObject(o, "warmup", (double)p->runs.warmup);
    cJSON_AddNumberToObject(o, "warmup_us", p->runs.warmup_ms * 1e3);
    return o;
}

duet_status_t bench_json_end(cJSON *o, FILE *f)
{
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    duet_status_t st = DUET_OK;
    if (text == NULL || bench_json_oom)
        st = duet__error(DUET_ERR_NO_MEMORY, "out of memory while formatting the report");
    else
        fprintf(f, "%s\n", text);
    cJSON_free(text);
    cJSON_InitHooks(NULL); /* back to malloc and free */
    return st;
}

duet_status_t bench_write_json(FILE *f, const gpu_env_t *e, const duet_bench_row_t *rows, const bench_zero_t *zero,
                               size_t n, const duet_bench_params_t *p, int gemm_only)
{
    /* duet-bench/2: every time in us (duet-bench/1 had them in ms, under _ms keys and "ms"). */
    cJSON *o = bench_json_begin(e, p, "duet-bench/2");
    cJSON_AddBoolToObject(o, "gemm_only", gemm_only);
    cJSON *arr = cJSON_AddArrayToObject(o, "workloads");
    for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray(arr, row_json(&rows[i], zero_asked(zero, i) ? &zero[i] : NULL));
    return bench_json_end(o, f);
}

/* The CSV columns: the table's, times in us. */
static const char *const bench_csv_cols[] = {"m",
                                             "n",
                                             "k",
                                             "collective",
                                             "mc",
                                             "nc",
                                             "dtype",
                                             "world",
                                             "vendor_gemm_us",
                                             "vendor_collective_us",
                                             "bound_us",
                                             "best_vendor_us",
                                             "best_vendor",
                                             "best_duet_us",
                                             "best_duet",
                                             "best_own_kernels_us",
                                             "duet_over_bound",
                                             "speedup_over_vendor",
                                             "gemm_tflops_ratio",
                                             "collective_speed_ratio"};
static const char *const bench_csv_gemm_cols[] = {"m",
                                                  "n",
                                                  "k",
                                                  "dtype",
                                                  "vendor_us",
                                                  "vendor_tflops",
                                                  "duet_us",
                                                  "duet_tflops",
                                                  "duet_tile",
                                                  "duet_split_k",
                                                  "duet_over_vendor_tflops"};

/* A time in ms as us, an empty field when it is missing (infinite or NaN). */
static void bench_csv_us(duet__csv_t *c, double ms)
{
    duet__csv_num_fmt(c, "%.3f", ms * 1e3);
}

duet_status_t bench_write_csv(FILE *f, const duet_bench_row_t *rows, size_t n, int gemm_only)
{
    duet__csv_t c;
    duet__csv_init(&c, f);
    if (gemm_only)
        duet__csv_names(&c, bench_csv_gemm_cols, sizeof(bench_csv_gemm_cols) / sizeof(bench_csv_gemm_cols[0]));
    else
        duet__csv_names(&c, bench_csv_cols, sizeof(bench_csv_cols) / sizeof(bench_csv_cols[0]));
    for (size_t i = 0; i < n; i++) {
        const duet_bench_row_t *r = &rows[i];
        const duet_workload_t *w = &r->wl;
        duet__csv_printf(&c, "%lld", (long long)w->m);
        duet__csv_printf(&c, "%lld", (long long)w->n);
        duet__csv_printf(&c, "%lld", (long long)w->k);
        if (gemm_only) {
            double flop = 2.0 * (double)w->m * (double)w->n * (double)w->k;
            double vm = stat_or_inf(&r->base_gemm), dm = stat_or_inf(&r->gemm);
            duet__csv_str(&c, duet_dtype_name(w->dtype));
            bench_csv_us(&c, vm);
            duet__csv_num_fmt(&c, "%.2f", flop / (vm * 1e-3) / 1e12);
            bench_csv_us(&c, dm);
            duet__csv_num_fmt(&c, "%.2f", flop / (dm * 1e-3) / 1e12);
            if (r->gemm.ok)
                duet__csv_printf(&c, "%dx%dx%d", r->gemm_tile.bm, r->gemm_tile.bn, r->gemm_tile.bk);
            else
                duet__csv_str(&c, "");
            duet__csv_printf(&c, "%d", r->gemm.ok ? (int)r->gemm_split : 0);
            duet__csv_num_fmt(&c, "%.4f", vm / dm);
            duet__csv_end(&c);
            continue;
        }
        duet_bench_derived_t d;
        duet_bench_derive(r, &d);
        duet__csv_str(&c, duet_collective_name(w->coll));
        duet__csv_printf(&c, "%lld", (long long)w->mc);
        duet__csv_printf(&c, "%lld", (long long)w->nc);
        duet__csv_str(&c, duet_dtype_name(w->dtype));
        duet__csv_printf(&c, "%d", (int)w->world);
        bench_csv_us(&c, stat_or_inf(&r->base_gemm));
        bench_csv_us(&c, stat_or_inf(&r->base_coll));
        bench_csv_us(&c, d.bound_ms);
        bench_csv_us(&c, d.best_base_ms);
        duet__csv_str(&c, d.best_base_name);
        bench_csv_us(&c, d.best_duet_ms);
        duet__csv_str(&c, d.best_duet_name);
        bench_csv_us(&c, d.best_own_ms);
        duet__csv_num_fmt(&c, "%.4f", d.best_duet_ms / d.bound_ms);
        duet__csv_num_fmt(&c, "%.4f", d.best_base_ms / d.best_duet_ms);
        duet__csv_num_fmt(&c, "%.4f", stat_or_inf(&r->base_gemm) / d.duet_gemm_ms);
        duet__csv_num_fmt(&c, "%.4f", stat_or_inf(&r->base_coll) / d.duet_comm_ms);
        duet__csv_end(&c);
    }
    return c.err ? duet__error(DUET_ERR_IO, "write error while printing the CSV") : DUET_OK;
}

/* Horizontal bars per workload, normalised to the bound max(GEMM alone, collective alone); the
 * picture is cli/bench_plot.c's, which `duet bench-plot` also draws from the JSON file. */
duet_status_t bench_write_svg(const gpu_env_t *e, const duet_bench_row_t *rows, size_t n, const char *path)
{
    cli_bench_bar_t *bars = calloc(n ? n : 1, sizeof(*bars));
    if (bars == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate the rows of %zu workloads", path, n);
    for (size_t i = 0; i < n; i++) {
        duet_bench_derived_t d;
        duet_bench_derive(&rows[i], &d);
        bars[i].wl = rows[i].wl;
        bars[i].vendor_over_bound = d.best_base_ms / d.bound_ms;
        bars[i].duet_over_bound = d.best_duet_ms / d.bound_ms;
    }
    duet_status_t st =
        cli_bench_svg_write(bars, n, e->gpu->name, e->world, duet_baseline_describe(duet_measure_baseline(e->m)), path);
    free(bars);
    return st;
}
