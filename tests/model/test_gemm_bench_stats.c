/*
 * The random GEMM benchmark's analysis (model/gemm_bench_stats.c): the classes of shapes, each
 * group's median, p10 and min of the ratio vendor time / duet time, and the targets. Every expected
 * value below is worked out by hand in the comment beside it.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "model/gemm_bench_stats.h"

#define EPS 1e-12

/* A row whose ratios are vendor / pick, vendor / best and vendor / pick_all. */
static duet__gemm_bench_row_t row(int32_t dtype, int32_t sms, double vendor, double pick, double best, double pick_all)
{
    duet__gemm_bench_row_t r = {4096, 4096, 4096, dtype, sms, vendor, pick, pick_all, best, pick == best};
    return r;
}

static duet__gemm_bench_row_t shape(int64_t m, int64_t n, int64_t k)
{
    duet__gemm_bench_row_t r = {m, n, k, DUET_DTYPE_FP16, 132, 1, 1, 1, 1, 1};
    return r;
}

/* Each shape's classes, from its extents: K % 8, K % 2 and N % 8 pick one of the first four
 * classes; K <= 1024 and M <= 1024 the last two. */
Test(gemm_bench_stats, classes_follow_the_extents, T_TIMEOUT)
{
    static const struct {
        int64_t m, n, k;
        int in[DUET__GEMM_BENCH_CLS_COUNT]; /* aligned, N ragged, K even, K odd, small K, small M */
    } c[] = {
        {2048, 4096, 4096, {1, 0, 0, 0, 0, 0}}, /* 4096 = 512 * 8 for both K and N; K, M > 1024 */
        {512, 1001, 1024, {0, 1, 0, 0, 1, 1}},  /* K = 128 * 8, N = 125 * 8 + 1; K, M <= 1024 */
        {1025, 8, 1030, {0, 0, 1, 0, 0, 0}},    /* K = 128 * 8 + 6: even, not a multiple of 8; K, M > 1024 */
        {1024, 7, 777, {0, 0, 0, 1, 1, 1}},     /* K odd (N % 8 does not matter then); K, M <= 1024 */
        {1025, 1024, 1025, {0, 0, 0, 1, 0, 0}}, /* K odd; both just above 1024 */
        {4096, 12, 1028, {0, 0, 1, 0, 0, 0}},   /* K = 128 * 8 + 4: even; N = 12 does not matter then */
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        duet__gemm_bench_row_t r = shape(c[i].m, c[i].n, c[i].k);
        int split = 0;
        for (int32_t k = 0; k < DUET__GEMM_BENCH_CLS_COUNT; k++) {
            cr_assert_eq(duet__gemm_bench_in_class(&r, k), c[i].in[k], "shape %zu class %s", i,
                         duet__gemm_bench_class_names[k]);
            split += k <= DUET__GEMM_BENCH_CLS_K_ODD && duet__gemm_bench_in_class(&r, k);
        }
        cr_assert_eq(split, 1, "shape %zu: the first four classes split every shape", i);
    }
    /* The names the report prints, in the order of the classes. */
    cr_assert_str_eq(duet__gemm_bench_class_names[DUET__GEMM_BENCH_CLS_ALIGNED], "K%8=0,N%8=0");
    cr_assert_str_eq(duet__gemm_bench_class_names[DUET__GEMM_BENCH_CLS_N_RAGGED], "K%8=0,N%8!=0");
    cr_assert_str_eq(duet__gemm_bench_class_names[DUET__GEMM_BENCH_CLS_K_EVEN], "K%8!=0,K even");
    cr_assert_str_eq(duet__gemm_bench_class_names[DUET__GEMM_BENCH_CLS_K_ODD], "K odd");
    cr_assert_str_eq(duet__gemm_bench_class_names[DUET__GEMM_BENCH_CLS_SMALL_K], "K<=1024");
    cr_assert_str_eq(duet__gemm_bench_class_names[DUET__GEMM_BENCH_CLS_SMALL_M], "M<=1024");
}

Test(gemm_bench_stats, ratio_is_vendor_over_duet_and_nan_for_a_missing_figure, T_TIMEOUT)
{
    cr_assert_float_eq(duet__gemm_bench_ratio(3.0, 1.5), 2.0, EPS);
    cr_assert(isnan(duet__gemm_bench_ratio(NAN, 1.0)));
    cr_assert(isnan(duet__gemm_bench_ratio(1.0, NAN)));
}

/* The rows of the group tests: five fp16 rows on 100 SMs with the vendor at 1 ms, so each ratio is
 * 1 / duet ms, one bf16 row there, and rows the statistics leave out. */
static size_t group_rows(duet__gemm_bench_row_t *r)
{
    size_t n = 0;
    /*                     vendor pick  best  pick_all   ratios pick, best, pick_all; pick/best */
    r[n++] = row(DUET_DTYPE_FP16, 100, 1, 0.5, 0.5, 0.5);    /* 2, 2, 2; 1 (exact) */
    r[n++] = row(DUET_DTYPE_FP16, 100, 1, 1.0, 0.5, 1.0);    /* 1, 2, 1; 2 */
    r[n++] = row(DUET_DTYPE_FP16, 100, 1, 2.0, 1.0, 1.0);    /* 0.5, 1, 1; 2 */
    r[n++] = row(DUET_DTYPE_FP16, 100, 1, 4.0, 2.0, 2.0);    /* 0.25, 0.5, 0.5; 2 */
    r[n++] = row(DUET_DTYPE_FP16, 100, 1, 0.25, 0.25, 0.25); /* 4, 4, 4; 1 (exact) */
    r[n++] = row(DUET_DTYPE_BF16, 100, 1, 1.0, 1.0, 1.0);    /* 1, 1, 1; 1 (exact) */
    r[n++] = row(DUET_DTYPE_FP16, 50, 1, 0.1, 0.1, 0.1);     /* another budget */
    r[n++] = row(DUET_DTYPE_FP16, 100, 1, NAN, 0.5, 0.5);    /* the pick failed */
    r[n++] = row(DUET_DTYPE_FP16, 100, NAN, 0.5, 0.5, 0.5);  /* the vendor failed */
    r[n++] = row(DUET_DTYPE_FP16, 100, 1, 0.5, 0.5, NAN);    /* no pick over every split */
    r[n++] = row(DUET_DTYPE_BF16, 100, 1, 0.5, NAN, 0.5);    /* no best measured */
    return n;
}

/* The statistics of the group `sel(row, arg)` on `sms` SMs among the rows above. */
static duet__gemm_bench_group_t group_of(duet__gemm_bench_sel_fn sel, int32_t arg, int32_t sms)
{
    duet__gemm_bench_row_t r[16];
    double scratch[4 * 16];
    size_t n = group_rows(r);
    duet__gemm_bench_group_t g;
    duet__gemm_bench_group(r, n, sel, arg, sms, scratch, &g);
    return g;
}

/* g holds n rows, `exact` of them exact, with these median, p10 and min and this median pick/best. */
static void assert_group(const duet__gemm_bench_group_t *g, size_t n, size_t exact, const double pick[3],
                         const double pick_all[3], const double best[3], double regret)
{
    cr_assert_eq(g->n, n);
    cr_assert_eq(g->exact, exact);
    for (int i = 0; i < 3; i++) {
        cr_assert_float_eq(g->pick[i], pick[i], EPS, "pick[%d] = %.17g", i, g->pick[i]);
        cr_assert_float_eq(g->pick_all[i], pick_all[i], EPS, "pick_all[%d] = %.17g", i, g->pick_all[i]);
        cr_assert_float_eq(g->best[i], best[i], EPS, "best[%d] = %.17g", i, g->best[i]);
    }
    cr_assert_float_eq(g->regret_med, regret, EPS, "pick/best median = %.17g", g->regret_med);
}

/* fp16 on 100 SMs: the five first rows. Sorted ratios at the pick {0.25, 0.5, 1, 2, 4}: median 1,
 * p10 at position 0.1 * 4 = 0.4, 0.25 + 0.4 * (0.5 - 0.25) = 0.35, min 0.25. Pick over every split
 * {0.5, 1, 1, 2, 4}: 1, 0.5 + 0.4 * 0.5 = 0.7, 0.5. Best {0.5, 1, 2, 2, 4}: 2, 0.7, 0.5.
 * pick/best {1, 1, 2, 2, 2}: median 2. Exact: rows 1 and 5. */
Test(gemm_bench_stats, group_of_one_dtype_on_one_budget, T_TIMEOUT)
{
    duet__gemm_bench_group_t g = group_of(duet__gemm_bench_in_dtype, DUET_DTYPE_FP16, 100);
    const double pick[3] = {1, 0.35, 0.25}, pick_all[3] = {1, 0.7, 0.5}, best[3] = {2, 0.7, 0.5};
    assert_group(&g, 5, 2, pick, pick_all, best, 2.0);
}

/* Both dtypes on 100 SMs add the bf16 row (ratios 1, 1, 1, pick/best 1): pick {0.25, 0.5, 1, 1,
 * 2, 4}, median (1 + 1) / 2 = 1, p10 at 0.1 * 5 = 0.5: 0.25 + 0.5 * 0.25 = 0.375, min 0.25; over
 * every split {0.5, 1, 1, 1, 2, 4}: 1, 0.5 + 0.5 * 0.5 = 0.75, 0.5; best {0.5, 1, 1, 2, 2, 4}:
 * (1 + 2) / 2 = 1.5, 0.75, 0.5; pick/best {1, 1, 1, 2, 2, 2}: 1.5; exact 3 of 6. */
Test(gemm_bench_stats, group_of_both_dtypes_counts_an_even_number_of_rows, T_TIMEOUT)
{
    duet__gemm_bench_group_t g = group_of(duet__gemm_bench_in_dtype, -1, 100);
    const double pick[3] = {1, 0.375, 0.25}, pick_all[3] = {1, 0.75, 0.5}, best[3] = {1.5, 0.75, 0.5};
    assert_group(&g, 6, 3, pick, pick_all, best, 1.5);
    /* The other budget holds one row: ratio 1 / 0.1 = 10 everywhere, pick/best 1. */
    g = group_of(duet__gemm_bench_in_dtype, -1, 50);
    cr_assert_eq(g.n, 1);
    cr_assert_float_eq(g.pick[0], 10.0, 1e-9);
    cr_assert_float_eq(g.pick[1], 10.0, 1e-9);
    cr_assert_float_eq(g.best[2], 10.0, 1e-9);
    cr_assert_float_eq(g.regret_med, 1.0, EPS);
    /* No row on 7 SMs: an empty group, all zeros. */
    g = group_of(duet__gemm_bench_in_dtype, -1, 7);
    cr_assert_eq(g.n, 0);
    cr_assert_eq(g.exact, 0);
    cr_assert_float_eq(g.pick[0], 0.0, EPS);
    cr_assert_float_eq(g.regret_med, 0.0, EPS);
}

/* Grouped by class: the rows above are all 4096 x 4096 x 4096 (aligned), so the aligned class on
 * 100 SMs is the group of both dtypes, and the K-odd class is empty. */
Test(gemm_bench_stats, group_by_class, T_TIMEOUT)
{
    duet__gemm_bench_group_t g = group_of(duet__gemm_bench_in_class, DUET__GEMM_BENCH_CLS_ALIGNED, 100);
    cr_assert_eq(g.n, 6);
    cr_assert_float_eq(g.pick[1], 0.375, EPS);
    g = group_of(duet__gemm_bench_in_class, DUET__GEMM_BENCH_CLS_K_ODD, 100);
    cr_assert_eq(g.n, 0);
}

/* Which target a budget answers to: every SM of 132 is the full target, 66 (2 * 66 = 132, half)
 * and 100 the budget's, 65 (130 < 132) none. */
Test(gemm_bench_stats, target_by_budget, T_TIMEOUT)
{
    cr_assert_eq(duet__gemm_bench_target(132, 132), DUET__GEMM_BENCH_TARGET_FULL);
    cr_assert_eq(duet__gemm_bench_target(100, 132), DUET__GEMM_BENCH_TARGET_BUDGET);
    cr_assert_eq(duet__gemm_bench_target(66, 132), DUET__GEMM_BENCH_TARGET_BUDGET);
    cr_assert_eq(duet__gemm_bench_target(65, 132), DUET__GEMM_BENCH_TARGET_NONE);
}

/* The verdicts: on every SM median >= 0.98, p10 >= 0.93 and min >= 0.85, each bound included; on a
 * budget median >= 0.97 and p10 >= 0.90; no target is never met. */
Test(gemm_bench_stats, target_verdicts_at_their_bounds, T_TIMEOUT)
{
    duet__gemm_bench_group_t g = {0};
    g.n = 1;
    g.pick[0] = 0.98, g.pick[1] = 0.93, g.pick[2] = 0.85;
    cr_assert(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_FULL, &g));
    g.pick[2] = 0.849;
    cr_assert_not(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_FULL, &g));
    g.pick[2] = 0.85, g.pick[1] = 0.929;
    cr_assert_not(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_FULL, &g));
    g.pick[1] = 0.93, g.pick[0] = 0.97;
    cr_assert_not(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_FULL, &g));
    cr_assert(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_BUDGET, &g));
    g.pick[0] = 0.969;
    cr_assert_not(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_BUDGET, &g));
    g.pick[0] = 0.97, g.pick[1] = 0.90;
    cr_assert(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_BUDGET, &g));
    g.pick[1] = 0.899;
    cr_assert_not(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_BUDGET, &g));
    g.pick[0] = g.pick[1] = g.pick[2] = 10;
    cr_assert_not(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_NONE, &g));
}

/* The verdict is taken on the aligned rows of both dtypes: above on 100 of 132 SMs they are the six
 * rows of 4096^3, median 1 >= 0.97 but p10 0.375 < 0.90, so the budget's target is missed (it was met
 * on the median alone); a group whose p10 were 0.9 would meet it. */
Test(gemm_bench_stats, target_of_a_computed_group, T_TIMEOUT)
{
    duet__gemm_bench_group_t g = group_of(duet__gemm_bench_in_class, DUET__GEMM_BENCH_CLS_ALIGNED, 100);
    int t = duet__gemm_bench_target(100, 132);
    cr_assert_eq(t, DUET__GEMM_BENCH_TARGET_BUDGET);
    cr_assert_eq(g.n, 6);
    cr_assert_not(duet__gemm_bench_target_met(t, &g));
    g.pick[1] = 0.9;
    cr_assert(duet__gemm_bench_target_met(t, &g));
    cr_assert_not(duet__gemm_bench_target_met(DUET__GEMM_BENCH_TARGET_FULL, &g));
}
