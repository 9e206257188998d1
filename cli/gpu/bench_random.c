/*
 * duet bench --gemm-only --random N --seed S: duet's GEMM against the vendor's on shapes nobody
 * chose (model/random.c draws them from the seed), each on SM budgets (--sm-budgets), with the
 * vendor library planned for the same number of SMs (its SM-count target). Every figure is the
 * library's (duet_bench_gemm_budget(), include/duet/measure.h), and so is their analysis (the
 * classes of shapes, each group's statistics and the targets: model/gemm_bench_stats.h); this file
 * draws the shapes, estimates the GPU time, runs the rows, prints the table and the summary,
 * and writes the report (text, JSON or CSV; times in us in the JSON and CSV). Ratios are vendor
 * time / duet time (equal to duet TFLOP/s / vendor TFLOP/s): above 1, duet is faster.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/gpu/gpu.h"
#include "model/gemm_bench_stats.h"

/* Host time per timed or warm-up run beside the GPU's (the barrier, the events, the wait), ms: a
 * rough figure for the estimate only. */
#define RUN_OVERHEAD_MS 0.05

int bench_random_parse_budgets(const char *arg, bench_random_opts_t *o)
{
    char buf[256];
    if (strlen(arg) >= sizeof(buf))
        return cli_usage_error("bench", "--sm-budgets: the list is too long");
    snprintf(buf, sizeof(buf), "%s", arg);
    o->n_budgets = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        double v;
        if (o->n_budgets >= (int32_t)(sizeof(o->budgets) / sizeof(o->budgets[0])))
            return cli_usage_error("bench", "--sm-budgets: at most 8 budgets");
        /* (0, 1]: a share of the SMs ("1" is all of them); 2 or more: a count of SMs. */
        if (cli_parse_double(t, 1e-9, 4096, &v) != 0 || (v > 1 && v != floor(v)))
            return cli_usage_error(
                "bench", "--sm-budgets: '%s' is neither a share of the SMs in (0, 1] nor a count of SMs", duet__q(t));
        o->budgets[o->n_budgets++] = v;
    }
    if (o->n_budgets == 0)
        return cli_usage_error("bench", "--sm-budgets: no budget given");
    return CLI_EXIT_OK;
}

/* A budget as SMs of this device: a share rounded to the nearest count (at least 1). */
static int32_t budget_sms(double b, int32_t sms)
{
    if (b <= 1) {
        long v = lround(b * sms);
        return v < 1 ? 1 : (int32_t)v;
    }
    return (int32_t)b;
}

/* Candidate i's measured time, ms; NaN when there is none (i < 0) or it failed. */
static double cand_ms(const duet_gemm_budget_row_t *r, int32_t i)
{
    return i >= 0 && r->cand[i].ok ? r->cand[i].med_ms : NAN;
}

static double row_ratio(const duet_gemm_budget_row_t *r, int32_t i)
{
    return duet__gemm_bench_ratio(r->vendor.ok ? r->vendor.med_ms : NAN, cand_ms(r, i));
}

/* The row as the analysis reads it (model/gemm_bench_stats.h). */
static void analysis_row(const duet_gemm_budget_row_t *r, duet__gemm_bench_row_t *a)
{
    a->m = r->wl.m;
    a->n = r->wl.n;
    a->k = r->wl.k;
    a->dtype = r->wl.dtype;
    a->sms = r->sms;
    a->vendor_ms = r->vendor.ok ? r->vendor.med_ms : NAN;
    a->pick_ms = cand_ms(r, r->pick);
    a->pick_all_ms = cand_ms(r, r->pick_all);
    a->best_ms = cand_ms(r, r->best);
    a->pick_is_best = r->pick == r->best;
}

/* The estimated GPU time of a row, seconds: every run of every figure at its predicted time. */
static double row_estimate_s(const duet_gemm_budget_row_t *r, const duet_bench_params_t *p)
{
    double runs = (double)(p->runs.warmup + p->runs.repeats), ms = p->runs.warmup_ms, best = INFINITY;
    for (int32_t i = 0; i < r->n_cand; i++) {
        double t = isfinite(r->cand_pred_ms[i]) ? r->cand_pred_ms[i] : 1.0;
        ms += runs * (t + RUN_OVERHEAD_MS);
        best = fmin(best, t);
    }
    /* The vendor's two halves, each with its warm-up runs, at about duet's best. */
    if (isfinite(best))
        ms += (2.0 * p->runs.warmup + p->runs.repeats + 1) * (best + RUN_OVERHEAD_MS);
    return ms * 1e-3;
}

static const char *cfg_tile(const duet_gemm_budget_row_t *r, int32_t i, char *buf, size_t n)
{
    if (i < 0) {
        snprintf(buf, n, "-");
        return buf;
    }
    return duet_config_tile_str(&r->cand_cfg[i], buf, n);
}

/* What the summary reads: every row as the analysis takes it, and the analysis's scratch (4 doubles a row). */
typedef struct summary_ws {
    duet__gemm_bench_row_t *rows;
    double *scratch;
} summary_ws_t;

static const char *met(int ok)
{
    return ok ? "met" : "NOT met";
}

static void group_print(FILE *f, const char *sms, const char *name, const duet__gemm_bench_group_t *g)
{
    if (f == NULL)
        return;
    fprintf(f, "%5s %-13s %4zu  %6.3f %6.3f %6.3f | %6.3f %6.3f %6.3f | %6.3f %6.3f %6.3f  %6.3f %3zu/%zu\n", sms, name,
            g->n, g->pick[0], g->pick[1], g->pick[2], g->pick_all[0], g->pick_all[1], g->pick_all[2], g->best[0],
            g->best[1], g->best[2], g->regret_med, g->exact, g->n);
}

static cJSON *group_json(int32_t sms, const char *key, const char *name, const duet__gemm_bench_group_t *g)
{
    static const char *const q[3] = {"median", "p10", "min"};
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "sms", sms);
    cJSON_AddStringToObject(o, key, name);
    cJSON_AddNumberToObject(o, "n", (double)g->n);
    for (int i = 0; i < 3; i++) {
        char k[32];
        snprintf(k, sizeof(k), "pick_%s", q[i]);
        cli_json_add_num(o, k, g->pick[i]);
        snprintf(k, sizeof(k), "pick_all_splits_%s", q[i]);
        cli_json_add_num(o, k, g->pick_all[i]);
        snprintf(k, sizeof(k), "best_%s", q[i]);
        cli_json_add_num(o, k, g->best[i]);
    }
    cli_json_add_num(o, "pick_over_best_median", g->regret_med);
    cJSON_AddNumberToObject(o, "pick_is_best", (double)g->exact);
    return o;
}

/* The verdict on `sms` SMs against its target, if it has one, judged on the aligned rows (g: their
 * group, both dtypes): printed on f (NULL: not printed) and added to o, the group of both dtypes. */
static void target_verdict(FILE *f, cJSON *o, int32_t sms, int32_t device_sms, const duet__gemm_bench_group_t *g)
{
    const int t = duet__gemm_bench_target(sms, device_sms);
    if (t == DUET__GEMM_BENCH_TARGET_NONE)
        return;
    const int ok = g->n > 0 && duet__gemm_bench_target_met(t, g);
    if (f != NULL && t == DUET__GEMM_BENCH_TARGET_FULL)
        fprintf(f, "      target on every SM, %zu aligned rows (pick: median >= %.2f, p10 >= %.2f, min >= %.2f): %s\n",
                g->n, DUET__GEMM_BENCH_TARGET_FULL_MEDIAN, DUET__GEMM_BENCH_TARGET_FULL_P10,
                DUET__GEMM_BENCH_TARGET_FULL_MIN, met(ok));
    else if (f != NULL)
        fprintf(f,
                "      target on %d SMs, %zu aligned rows (pick: median >= %.2f, p10 >= %.2f against the vendor at the "
                "same SM target): %s\n",
                (int)sms, g->n, DUET__GEMM_BENCH_TARGET_BUDGET_MEDIAN, DUET__GEMM_BENCH_TARGET_BUDGET_P10, met(ok));
    cJSON_AddBoolToObject(o, "target_met", ok);
}

/* Add item to arr, or delete it when there is no array (the summary printed only). */
static void add_or_drop(cJSON *arr, cJSON *item)
{
    if (arr != NULL)
        cJSON_AddItemToArray(arr, item);
    else
        cJSON_Delete(item);
}

/* The summary as text on f (NULL: none) and in the JSON (`arr`, `classes`; NULL: none): per
 * budget, per dtype and both together, with the targets; then per class of shapes, both dtypes
 * together. */
static void summary(FILE *f, const gpu_env_t *e, const summary_ws_t *sw, size_t nr, const int32_t *sms_list, int32_t nb,
                    cJSON *arr, cJSON *classes)
{
    static const int32_t dts[] = {DUET_DTYPE_FP16, DUET_DTYPE_BF16, -1};
    if (f != NULL) {
        fprintf(f,
                "\nduet/vendor TFLOP/s (vendor time / duet time; above 1: duet faster): median p10 min at the model's\n"
                "pick | at the model's pick over every K split | at the best measured tile and split; pick/best: the\n"
                "median of pick time / best time; exact: rows where the pick is the best measured\n");
        fprintf(f, "%5s %-13s %4s  %-20s | %-20s | %-20s  %6s %6s\n", "SMs", "dtype", "n", "pick (the rule's splits)",
                "pick (every split)", "best measured", "pk/bst", "exact");
    }
    for (int32_t b = 0; b < nb; b++) {
        char smsb[16];
        snprintf(smsb, sizeof(smsb), "%d", (int)sms_list[b]);
        for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
            duet__gemm_bench_group_t g;
            duet__gemm_bench_group(sw->rows, nr, duet__gemm_bench_in_dtype, dts[d], sms_list[b], sw->scratch, &g);
            if (g.n == 0)
                continue;
            const char *dn = dts[d] < 0 ? "both" : duet_dtype_name(dts[d]);
            group_print(f, smsb, dn, &g);
            cJSON *o = group_json(sms_list[b], "dtype", dn, &g);
            if (dts[d] < 0) {
                duet__gemm_bench_group(sw->rows, nr, duet__gemm_bench_in_class, DUET__GEMM_BENCH_CLS_ALIGNED,
                                       sms_list[b], sw->scratch, &g);
                target_verdict(f, o, sms_list[b], e->gpu->sms, &g);
            }
            add_or_drop(arr, o);
        }
    }
    if (f != NULL)
        fprintf(f, "\nby class of shape (both dtypes):\n");
    for (int32_t b = 0; b < nb; b++) {
        char smsb[16];
        snprintf(smsb, sizeof(smsb), "%d", (int)sms_list[b]);
        for (int32_t c = 0; c < DUET__GEMM_BENCH_CLS_COUNT; c++) {
            duet__gemm_bench_group_t g;
            duet__gemm_bench_group(sw->rows, nr, duet__gemm_bench_in_class, c, sms_list[b], sw->scratch, &g);
            if (g.n == 0)
                continue;
            group_print(f, smsb, duet__gemm_bench_class_names[c], &g);
            add_or_drop(classes, group_json(sms_list[b], "class", duet__gemm_bench_class_names[c], &g));
        }
    }
}

static cJSON *row_json(const duet_gemm_budget_row_t *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "m", (double)r->wl.m);
    cJSON_AddNumberToObject(o, "n", (double)r->wl.n);
    cJSON_AddNumberToObject(o, "k", (double)r->wl.k);
    cJSON_AddStringToObject(o, "dtype", duet_dtype_name(r->wl.dtype));
    cJSON_AddNumberToObject(o, "sms", r->sms);
    cJSON_AddNumberToObject(o, "vendor_sm_target", r->vendor_target);
    cJSON_AddItemToObject(o, "vendor", bench_stat_json(&r->vendor));
    cJSON *c = cJSON_AddArrayToObject(o, "candidates");
    for (int32_t i = 0; i < r->n_cand; i++) {
        cJSON *x = bench_stat_cfg_json(&r->cand[i], &r->cand_cfg[i], r->cand_pred_ms[i]);
        cJSON_AddBoolToObject(x, "split_rule_tries", r->cand_rule[i]);
        cJSON_AddItemToArray(c, x);
    }
    char t[32];
    /* The row's ms, written as us. */
    cJSON_AddStringToObject(o, "best_tile", cfg_tile(r, r->best, t, sizeof(t)));
    cli_json_add_num(o, "best_us", 1e3 * (r->best >= 0 ? r->cand[r->best].med_ms : NAN));
    cJSON_AddStringToObject(o, "pick_tile", cfg_tile(r, r->pick, t, sizeof(t)));
    cli_json_add_num(o, "pick_pred_us", 1e3 * (r->pick >= 0 ? r->cand_pred_ms[r->pick] : NAN));
    cli_json_add_num(o, "pick_us", 1e3 * (r->pick >= 0 && r->cand[r->pick].ok ? r->cand[r->pick].med_ms : NAN));
    cJSON_AddStringToObject(o, "pick_all_splits_tile", cfg_tile(r, r->pick_all, t, sizeof(t)));
    cli_json_add_num(o, "pick_all_splits_pred_us", 1e3 * (r->pick_all >= 0 ? r->cand_pred_ms[r->pick_all] : NAN));
    cli_json_add_num(o, "pick_all_splits_us",
                     1e3 * (r->pick_all >= 0 && r->cand[r->pick_all].ok ? r->cand[r->pick_all].med_ms : NAN));
    cli_json_add_num(o, "ratio_best", row_ratio(r, r->best));
    cli_json_add_num(o, "ratio_pick", row_ratio(r, r->pick));
    cli_json_add_num(o, "ratio_pick_all_splits", row_ratio(r, r->pick_all));
    return o;
}

/* The report as JSON (schema duet-bench-gemm-random/2; /1 had its times in ms) on f. */
static duet_status_t write_json(FILE *f, const gpu_env_t *e, const duet_bench_params_t *p, const bench_random_opts_t *o,
                                const duet_gemm_budget_row_t *rows, size_t nr, const int32_t *sms_list,
                                const summary_ws_t *sw)
{
    /* The commit measured: DUET_COMMIT where the caller names it; else tools/gpu.sh stamps its own
     * (git's) into the file afterwards. Asking git here would fork an MPI process. */
    const char *commit = getenv("DUET_COMMIT");
    cJSON *j = bench_json_begin(e, p, "duet-bench-gemm-random/2");
    if (commit != NULL && commit[0] != '\0')
        cJSON_AddStringToObject(j, "commit", commit);
    cJSON_AddStringToObject(j, "ratio", "vendor time / duet time: above 1, duet is faster");
    cJSON_AddStringToObject(j, "clocks", p->runs.warmup_ms > 0 ? "settled" : "as found (no time-based warm-up)");
    cJSON_AddStringToObject(j, "warmup_us_is", "spent once per row, before the vendor's first half");
    cJSON *rp = cJSON_AddObjectToObject(j, "random");
    cJSON_AddNumberToObject(rp, "shapes", (double)o->n);
    char seed[32];
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)o->seed);
    cJSON_AddStringToObject(rp, "seed", seed); /* a string: a double does not hold every 64-bit seed */
    cJSON_AddNumberToObject(rp, "min_dim", (double)o->min_dim);
    cJSON_AddNumberToObject(rp, "max_dim", (double)o->max_dim);
    cJSON_AddStringToObject(rp, "dtypes", o->both_dtypes ? "both" : duet_dtype_name(o->dtype));
    cJSON *b = cJSON_AddArrayToObject(j, "sm_budgets");
    for (int32_t i = 0; i < o->n_budgets; i++)
        cJSON_AddItemToArray(b, cJSON_CreateNumber(sms_list[i]));
    cJSON *sum = cJSON_AddArrayToObject(j, "summary");
    cJSON *cls = cJSON_AddArrayToObject(j, "classes");
    summary(NULL, e, sw, nr, sms_list, o->n_budgets, sum, cls);
    cJSON *arr = cJSON_AddArrayToObject(j, "rows");
    for (size_t i = 0; i < nr; i++)
        cJSON_AddItemToArray(arr, row_json(&rows[i]));
    return bench_json_end(j, f);
}

static const char *const rows_csv_cols[] = {"m",
                                            "n",
                                            "k",
                                            "dtype",
                                            "sms",
                                            "vendor_sm_target",
                                            "vendor_us",
                                            "best_tile",
                                            "best_us",
                                            "pick_tile",
                                            "pick_pred_us",
                                            "pick_us",
                                            "pick_all_splits_tile",
                                            "pick_all_splits_us",
                                            "ratio_best",
                                            "ratio_pick",
                                            "ratio_pick_all_splits"};

/* One row per (shape, dtype, budget) as CSV on f, times in us (an empty field where there is none). */
static duet_status_t write_csv(FILE *f, const duet_gemm_budget_row_t *rows, size_t nr)
{
    duet__csv_t c;
    duet__csv_init(&c, f);
    duet__csv_names(&c, rows_csv_cols, sizeof(rows_csv_cols) / sizeof(rows_csv_cols[0]));
    for (size_t i = 0; i < nr; i++) {
        const duet_gemm_budget_row_t *r = &rows[i];
        char t[32];
        duet__csv_printf(&c, "%lld", (long long)r->wl.m);
        duet__csv_printf(&c, "%lld", (long long)r->wl.n);
        duet__csv_printf(&c, "%lld", (long long)r->wl.k);
        duet__csv_str(&c, duet_dtype_name(r->wl.dtype));
        duet__csv_printf(&c, "%d", (int)r->sms);
        duet__csv_printf(&c, "%d", (int)r->vendor_target);
        duet__csv_num_fmt(&c, "%.3f", r->vendor.ok ? r->vendor.med_ms * 1e3 : NAN);
        duet__csv_str(&c, cfg_tile(r, r->best, t, sizeof(t)));
        duet__csv_num_fmt(&c, "%.3f", r->best >= 0 ? r->cand[r->best].med_ms * 1e3 : NAN);
        duet__csv_str(&c, cfg_tile(r, r->pick, t, sizeof(t)));
        duet__csv_num_fmt(&c, "%.3f", r->pick >= 0 ? r->cand_pred_ms[r->pick] * 1e3 : NAN);
        duet__csv_num_fmt(&c, "%.3f", r->pick >= 0 && r->cand[r->pick].ok ? r->cand[r->pick].med_ms * 1e3 : NAN);
        duet__csv_str(&c, cfg_tile(r, r->pick_all, t, sizeof(t)));
        duet__csv_num_fmt(&c, "%.3f",
                          r->pick_all >= 0 && r->cand[r->pick_all].ok ? r->cand[r->pick_all].med_ms * 1e3 : NAN);
        duet__csv_num_fmt(&c, "%.4f", row_ratio(r, r->best));
        duet__csv_num_fmt(&c, "%.4f", row_ratio(r, r->pick));
        duet__csv_num_fmt(&c, "%.4f", row_ratio(r, r->pick_all));
        duet__csv_end(&c);
    }
    return c.err ? duet__error(DUET_ERR_IO, "write error while printing the CSV") : DUET_OK;
}

static void print_rows(FILE *f, const duet_gemm_budget_row_t *rows, size_t nr)
{
    fprintf(f, "%-20s %-5s %4s %9s %-13s %9s %-13s %9s %9s %6s %6s %-13s %6s\n", "GEMM", "dtype", "SMs", "vendor ms",
            "best tile", "best ms", "pick tile", "pred ms", "pick ms", "v/best", "v/pick", "pick (all k)", "v/pka");
    for (size_t i = 0; i < nr; i++) {
        const duet_gemm_budget_row_t *r = &rows[i];
        char g[48], bt[32], pt[32], at[32];
        snprintf(g, sizeof(g), "%lldx%lldx%lld", (long long)r->wl.m, (long long)r->wl.n, (long long)r->wl.k);
        fprintf(f, "%-20s %-5s %4d %9.4f %-13s %9.4f %-13s %9.4f %9.4f %6.3f %6.3f %-13s %6.3f\n", g,
                duet_dtype_name(r->wl.dtype), (int)r->sms, r->vendor.ok ? r->vendor.med_ms : NAN,
                cfg_tile(r, r->best, bt, sizeof(bt)), r->best >= 0 ? r->cand[r->best].med_ms : NAN,
                cfg_tile(r, r->pick, pt, sizeof(pt)), r->pick >= 0 ? r->cand_pred_ms[r->pick] : NAN,
                r->pick >= 0 && r->cand[r->pick].ok ? r->cand[r->pick].med_ms : NAN, row_ratio(r, r->best),
                row_ratio(r, r->pick), cfg_tile(r, r->pick_all, at, sizeof(at)), row_ratio(r, r->pick_all));
    }
}

/* The table and the summary as text on f. */
static void print_text(FILE *f, const gpu_env_t *e, const duet_bench_params_t *p, const bench_random_opts_t *o,
                       const duet_gemm_budget_row_t *rows, size_t nr, const int32_t *sms_list, const summary_ws_t *sw,
                       double elapsed_s)
{
    print_rows(f, rows, nr);
    fprintf(f, "\nsummary (%zu rows, %s, median of %d after %d warm-up runs, %.0f ms of warm-up per row, %.0f s):\n",
            nr, e->gpu->name, (int)p->runs.repeats, (int)p->runs.warmup, p->runs.warmup_ms, elapsed_s);
    summary(f, e, sw, nr, sms_list, o->n_budgets, NULL, NULL);
}

/* Rank 0: the analysis's rows (sw) from the measured ones, then the report in its format (-o FILE
 * or standard output), the text on standard output beside a file. @return an exit code. */
static int report(const gpu_env_t *e, const duet_bench_params_t *p, const bench_random_opts_t *o,
                  const cli_outopt_t *bo, const duet_gemm_budget_row_t *rows, size_t nr, const int32_t *sms_list,
                  const summary_ws_t *sw, double elapsed_s)
{
    for (size_t i = 0; i < nr; i++)
        analysis_row(&rows[i], &sw->rows[i]);
    if (bo->path != NULL || (!bo->json && !bo->csv))
        print_text(stdout, e, p, o, rows, nr, sms_list, sw, elapsed_s);
    if (bo->path == NULL && !bo->json && !bo->csv)
        return CLI_EXIT_OK;
    cli_out_t out;
    int rc = cli_out_open(&out, "bench", bo->path);
    if (rc != CLI_EXIT_OK)
        return rc;
    duet_status_t st = DUET_OK;
    if (bo->json)
        st = write_json(out.f, e, p, o, rows, nr, sms_list, sw);
    else if (bo->csv)
        st = write_csv(out.f, rows, nr);
    else
        print_text(out.f, e, p, o, rows, nr, sms_list, sw, elapsed_s);
    rc = cli_out_close(&out, "bench", st < 0 ? cli_fail("bench", st) : CLI_EXIT_OK);
    if (rc == CLI_EXIT_OK && bo->path != NULL)
        printf("wrote %s\n", bo->path);
    return rc;
}

/* The random GEMM shapes of --random (no collective), in one element type. */
static duet_status_t random_draw(const bench_random_opts_t *o, duet_workloads_t *wls)
{
    duet_random_params_t rp = duet_random_default_params();
    rp.seed = o->seed;
    rp.min_dim = o->min_dim;
    rp.max_dim = o->max_dim;
    /* The small extents of skinny M and small K stay at their default bound where the range allows. */
    rp.skinny_max = rp.skinny_max < rp.min_dim ? rp.min_dim : rp.skinny_max > rp.max_dim ? rp.max_dim : rp.skinny_max;
    rp.dtypes = 1u << DUET_DTYPE_FP16; /* the element type is set below: the same shapes in each */
    rp.colls = 1u << DUET_COLL_NONE;
    return duet_workloads_random(&rp, o->n, wls);
}

/* Every row's candidates and the model's picks (rows: workload, dtype, budget), with the GPU time
 * they will take and the figures they measure. */
static duet_status_t random_plan(gpu_env_t *e, const duet_bench_params_t *p, const bench_random_opts_t *o,
                                 const duet_workloads_t *wls, duet_sim_ws_t *ws, const int32_t *sms_list,
                                 duet_gemm_budget_row_t *rows, double *est_s, size_t *figures)
{
    const size_t ndt = o->both_dtypes ? 2 : 1;
    duet_status_t st;
    for (size_t i = 0; i < wls->n; i++)
        for (size_t d = 0; d < ndt; d++)
            for (int32_t b = 0; b < o->n_budgets; b++) {
                duet_workload_t w = wls->w[i];
                w.dtype = o->both_dtypes ? (d == 0 ? DUET_DTYPE_FP16 : DUET_DTYPE_BF16) : o->dtype;
                duet_gemm_budget_row_t *r = &rows[(i * ndt + d) * (size_t)o->n_budgets + (size_t)b];
                if ((st = duet_bench_gemm_budget_plan(e->hw, ws, &w, sms_list[b], r)) < 0)
                    return st;
                *est_s += row_estimate_s(r, p);
                *figures += (size_t)r->n_cand + 1;
            }
    return DUET_OK;
}

/* Measure every row on the GPUs, one buffer set per workload and dtype. */
static duet_status_t random_measure(gpu_env_t *e, const duet_bench_params_t *p, const bench_random_opts_t *o,
                                    size_t n_wl, duet_sim_ws_t *ws, const int32_t *sms_list,
                                    duet_gemm_budget_row_t *rows, double t0)
{
    const size_t ndt = o->both_dtypes ? 2 : 1, nr = n_wl * ndt * (size_t)o->n_budgets;
    duet_status_t st = DUET_OK;
    for (size_t i = 0; i < n_wl && st >= 0; i++) {
        for (size_t d = 0; d < ndt && st >= 0; d++) {
            duet_workload_t w = rows[(i * ndt + d) * (size_t)o->n_budgets].wl;
            duet_measure_bufs_t bufs;
            if ((st = duet_measure_bufs_alloc(e->m, &w, 2000 + i, &bufs)) < 0)
                break;
            for (int32_t b = 0; b < o->n_budgets && st >= 0; b++) {
                size_t k = (i * ndt + d) * (size_t)o->n_budgets + (size_t)b;
                char what[96];
                snprintf(what, sizeof(what), "%lldx%lldx%lld %s on %d SMs", (long long)w.m, (long long)w.n,
                         (long long)w.k, duet_dtype_name(w.dtype), (int)sms_list[b]);
                gpu_progress(e, what, k, nr, t0);
                st = duet_bench_gemm_budget(e->m, ws, p, &w, &bufs, sms_list[b], &rows[k]);
            }
            duet_measure_bufs_free(e->m, &bufs);
        }
    }
    return st;
}

int bench_random_run(gpu_env_t *e, const duet_bench_params_t *p, const bench_random_opts_t *o, const cli_outopt_t *bo)
{
    int rc = CLI_EXIT_OK;
    duet_workloads_t wls = {NULL, 0};
    duet_gemm_budget_row_t *rows = NULL;
    summary_ws_t sw = {NULL, NULL};
    duet_sim_ws_t *ws = NULL;
    int32_t sms_list[8];
    const int32_t sms = e->gpu->sms;
    for (int32_t b = 0; b < o->n_budgets; b++) {
        sms_list[b] = budget_sms(o->budgets[b], sms);
        if (sms_list[b] > sms || sms_list[b] > e->hw->n_sms)
            return cli_usage_error("bench", "--sm-budgets: %d SMs, but the device has %d", (int)sms_list[b], (int)sms);
    }
    duet_status_t st = random_draw(o, &wls);
    if (st < 0)
        return cli_fail("bench", st);
    const size_t ndt = o->both_dtypes ? 2 : 1, nr = wls.n * ndt * (size_t)o->n_budgets;
    rows = calloc(nr, sizeof(*rows));
    sw.rows = calloc(nr, sizeof(*sw.rows));
    sw.scratch = calloc(4 * nr, sizeof(double));
    if (rows == NULL || sw.rows == NULL || sw.scratch == NULL) {
        rc = cli_fail("bench", duet__error(DUET_ERR_NO_MEMORY, "cannot allocate %zu rows", nr));
        goto out;
    }
    if ((st = duet_sim_ws_create(&ws)) < 0) {
        rc = cli_fail("bench", st);
        goto out;
    }
    /* The candidates and the model's picks first: the time estimate, before any GPU work. */
    double est_s = 0;
    size_t figures = 0;
    if ((st = random_plan(e, p, o, &wls, ws, sms_list, rows, &est_s, &figures)) < 0) {
        rc = cli_fail("bench", st);
        goto out;
    }
    if (e->rank == 0) {
        printf("bench: %zu random GEMMs (seed %llu, extents %lld..%lld) x %zu dtype(s) x %d SM budget(s): %zu rows, "
               "%zu figures; estimated GPU time %.0f s\n",
               wls.n, (unsigned long long)o->seed, (long long)o->min_dim, (long long)o->max_dim, ndt, (int)o->n_budgets,
               nr, figures, est_s);
        fflush(stdout);
    }
    double t0 = gpu_now();
    st = random_measure(e, p, o, wls.n, ws, sms_list, rows, t0);
    if (st < 0) {
        rc = cli_fail("bench", st);
        goto out;
    }
    gpu_progress(e, "done", nr, nr, t0);
    if (e->rank == 0)
        rc = report(e, p, o, bo, rows, nr, sms_list, &sw, gpu_now() - t0);
out:
    duet_sim_ws_destroy(ws);
    free(sw.scratch);
    free(sw.rows);
    free(rows);
    duet_workloads_free(&wls);
    return rc;
}
