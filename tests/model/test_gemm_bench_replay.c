/*
 * The random GEMM benchmark's analysis (model/gemm_bench_stats.c) against what the GPU command
 * computed before it moved into the library: the committed H100 results (kernels 6963302, written by
 * cli/gpu/bench_random.c's own statistics) hold every row's vendor, pick, pick-over-every-split and
 * best time with the summary per budget and dtype and per class of shape. Replaying the rows through
 * the library must give those summaries: the move changed no arithmetic. The file's numbers are
 * cJSON's text, which keeps 15 significant digits where they read back within a double's epsilon,
 * so the times and the summaries agree to a relative 1e-12, not to the bit.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "model/gemm_bench_stats.h"

/* The file's rows as the analysis reads them (times in us in the file; the ratios do not care). */
static size_t replay_rows(const cJSON *root, duet__gemm_bench_row_t *rows, size_t cap)
{
    size_t n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(root, "rows"))
    {
        cr_assert_lt(n, cap);
        duet__gemm_bench_row_t *a = &rows[n++];
        a->m = (int64_t)t_num(r, "m");
        a->n = (int64_t)t_num(r, "n");
        a->k = (int64_t)t_num(r, "k");
        a->dtype =
            strcmp(cJSON_GetObjectItem(r, "dtype")->valuestring, "fp16") == 0 ? DUET_DTYPE_FP16 : DUET_DTYPE_BF16;
        a->sms = (int32_t)t_num(r, "sms");
        const cJSON *v = cJSON_GetObjectItem(r, "vendor");
        a->vendor_ms = cJSON_IsTrue(cJSON_GetObjectItem(v, "ok")) ? t_num(v, "us") : NAN;
        a->pick_ms = t_num(r, "pick_us");
        a->pick_all_ms = t_num(r, "pick_all_splits_us");
        a->best_ms = t_num(r, "best_us");
        /* The same candidate: two candidates measured to the same double do not occur in these files. */
        a->pick_is_best = a->pick_ms == a->best_ms;
    }
    return n;
}

#define REL 1e-12

static void expect_near(double got, double want, const char *what, const char *k)
{
    cr_assert(fabs(got - want) <= REL * fabs(want), "%s: %s %.17g, the file %.17g", what, k, got, want);
}

static void expect_group(const cJSON *s, const duet__gemm_bench_group_t *g, const char *what)
{
    static const char *const q[3] = {"median", "p10", "min"};
    char k[64];
    cr_assert_eq((double)g->n, t_num(s, "n"), "%s: n", what);
    for (int i = 0; i < 3; i++) {
        snprintf(k, sizeof(k), "pick_%s", q[i]);
        expect_near(g->pick[i], t_num(s, k), what, k);
        snprintf(k, sizeof(k), "pick_all_splits_%s", q[i]);
        expect_near(g->pick_all[i], t_num(s, k), what, k);
        snprintf(k, sizeof(k), "best_%s", q[i]);
        expect_near(g->best[i], t_num(s, k), what, k);
    }
    expect_near(g->regret_med, t_num(s, "pick_over_best_median"), what, "pick_over_best_median");
    cr_assert_eq((double)g->exact, t_num(s, "pick_is_best"), "%s: exact", what);
}

static void replay(const char *path)
{
    char *text = t_slurp(path);
    cr_assert_not_null(text, "%s", path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cr_assert_not_null(root);
    static duet__gemm_bench_row_t rows[256];
    static double scratch[4 * 256];
    size_t nr = replay_rows(root, rows, 256), groups = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(root, "summary"))
    {
        const char *dt = cJSON_GetObjectItem(s, "dtype")->valuestring;
        int32_t dtype = strcmp(dt, "both") == 0 ? -1 : strcmp(dt, "fp16") == 0 ? DUET_DTYPE_FP16 : DUET_DTYPE_BF16;
        duet__gemm_bench_group_t g;
        duet__gemm_bench_group(rows, nr, duet__gemm_bench_in_dtype, dtype, (int32_t)t_num(s, "sms"), scratch, &g);
        expect_group(s, &g, dt);
        groups++;
    }
    cJSON_ArrayForEach(s, cJSON_GetObjectItem(root, "classes"))
    {
        const char *name = cJSON_GetObjectItem(s, "class")->valuestring;
        int32_t cls = -1;
        for (int32_t c = 0; c < DUET__GEMM_BENCH_CLS_COUNT; c++)
            if (strcmp(duet__gemm_bench_class_names[c], name) == 0)
                cls = c;
        cr_assert_geq(cls, 0, "class %s", name);
        duet__gemm_bench_group_t g;
        duet__gemm_bench_group(rows, nr, duet__gemm_bench_in_class, cls, (int32_t)t_num(s, "sms"), scratch, &g);
        expect_group(s, &g, name);
        groups++;
    }
    cr_assert_gt(groups, 6);
    cJSON_Delete(root);
}

Test(gemm_bench_replay, the_h100_random_set_every_sm, T_TIMEOUT)
{
    replay("bench/results/gemm-random-h100-seed1796646262.json");
}

Test(gemm_bench_replay, the_h100_sm_budget_set, T_TIMEOUT)
{
    replay("bench/results/sm-budget-h100-seed1796646494.json");
}
