/*
 * The analysis of the random GEMM benchmark: classes of shapes, each group's statistics of the
 * ratio vendor time / duet time, and the targets (model/gemm_bench_stats.h).
 */
#include "model/gemm_bench_stats.h"

#include <math.h>
#include <string.h>

#include "base/base.h"

const char *const duet__gemm_bench_class_names[DUET__GEMM_BENCH_CLS_COUNT] = {
    "K%8=0,N%8=0", "K%8=0,N%8!=0", "K%8!=0,K even", "K odd", "K<=1024", "M<=1024"};

double duet__gemm_bench_ratio(double vendor_ms, double duet_ms)
{
    return vendor_ms / duet_ms;
}

int duet__gemm_bench_in_dtype(const duet__gemm_bench_row_t *r, int32_t dtype)
{
    return dtype < 0 || r->dtype == dtype;
}

int duet__gemm_bench_in_class(const duet__gemm_bench_row_t *r, int32_t cls)
{
    const int64_t m = r->m, n = r->n, k = r->k;
    switch (cls) {
    case DUET__GEMM_BENCH_CLS_ALIGNED:
        return k % 8 == 0 && n % 8 == 0;
    case DUET__GEMM_BENCH_CLS_N_RAGGED:
        return k % 8 == 0 && n % 8 != 0;
    case DUET__GEMM_BENCH_CLS_K_EVEN:
        return k % 8 != 0 && k % 2 == 0;
    case DUET__GEMM_BENCH_CLS_K_ODD:
        return k % 2 != 0;
    case DUET__GEMM_BENCH_CLS_SMALL_K:
        return k <= 1024;
    default:
        return m <= 1024;
    }
}

/* Median, p10 and min of v[0..n), n > 0 (sorts v). */
static void stats3(double *v, size_t n, double out[3])
{
    out[0] = duet__median(v, n); /* sorts */
    out[1] = duet__quantile_sorted(v, n, 0.10);
    out[2] = v[0];
}

void duet__gemm_bench_group(const duet__gemm_bench_row_t *rows, size_t nr, duet__gemm_bench_sel_fn sel, int32_t arg,
                            int32_t sms, double *scratch, duet__gemm_bench_group_t *g_p)
{
    double *pk = scratch, *pa = scratch + nr, *bs = scratch + 2 * nr, *rg = scratch + 3 * nr;
    duet__gemm_bench_group_t *g = g_p;
    memset(g, 0, sizeof(*g));
    for (size_t i = 0; i < nr; i++) {
        const duet__gemm_bench_row_t *r = &rows[i];
        if (!sel(r, arg) || r->sms != sms)
            continue;
        double a = duet__gemm_bench_ratio(r->vendor_ms, r->pick_ms),
               b = duet__gemm_bench_ratio(r->vendor_ms, r->best_ms),
               c = duet__gemm_bench_ratio(r->vendor_ms, r->pick_all_ms);
        if (!isfinite(a) || !isfinite(b) || !isfinite(c))
            continue;
        pk[g->n] = a;
        pa[g->n] = c;
        bs[g->n] = b;
        rg[g->n] = r->pick_ms / r->best_ms;
        g->exact += r->pick_is_best != 0;
        g->n++;
    }
    if (g->n == 0)
        return;
    stats3(pk, g->n, g->pick);
    stats3(pa, g->n, g->pick_all);
    stats3(bs, g->n, g->best);
    g->regret_med = duet__median(rg, g->n);
}

int duet__gemm_bench_target(int32_t sms, int32_t device_sms)
{
    if (sms == device_sms)
        return DUET__GEMM_BENCH_TARGET_FULL;
    return 2 * sms >= device_sms ? DUET__GEMM_BENCH_TARGET_BUDGET : DUET__GEMM_BENCH_TARGET_NONE;
}

int duet__gemm_bench_target_met(int target, const duet__gemm_bench_group_t *g)
{
    switch (target) {
    case DUET__GEMM_BENCH_TARGET_FULL:
        return g->pick[0] >= DUET__GEMM_BENCH_TARGET_FULL_MEDIAN && g->pick[1] >= DUET__GEMM_BENCH_TARGET_FULL_P10 &&
               g->pick[2] >= DUET__GEMM_BENCH_TARGET_FULL_MIN;
    case DUET__GEMM_BENCH_TARGET_BUDGET:
        return g->pick[0] >= DUET__GEMM_BENCH_TARGET_BUDGET_MEDIAN && g->pick[1] >= DUET__GEMM_BENCH_TARGET_BUDGET_P10;
    default:
        return 0;
    }
}
