/*
 * Each mode's known error (duet_cal_mode_errors_compute), on rows whose log errors are chosen by hand:
 * r = log(pred / meas) per op row, m = the median of r over a workload's rows, err = exp(p90 of
 * |r - m| over a mode's rows) - 1.
 *
 * Workload A: fused r = 0.1, 0.1, 0.1; concurrent 0.3; vendor -0.1. m = 0.1: fused |r - m| = 0, 0, 0;
 *             concurrent 0.2; vendor 0.2.
 * Workload B: fused r = 0, 0.05; concurrent -0.05. m = 0: fused 0, 0.05; concurrent 0.05.
 * Fused {0, 0, 0, 0, 0.05}: p90 at position 0.9 x 4 = 3.6, 0.4 x 0 + 0.6 x 0.05 = 0.03.
 * Concurrent {0.05, 0.2}: position 0.9, 0.1 x 0.05 + 0.9 x 0.2 = 0.185. Vendor {0.2}: 0.2.
 * A GEMM-alone row (r = 1) and a failed op row (r = 1) take no part; neither does a row not predicted.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "synth.h"

TestSuite(mode_errors, T_TIMEOUT);

Test(mode_errors, the_p90_about_the_workload_median_per_mode)
{
    duet_hw_t hw = t_hw("h200");
    const duet_gemm_tile_t tile = {256, 128, 64};
    duet_workload_t a = t_wl(1024, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_workload_t b = t_wl(2048, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_config_t vend = duet_config_default(&hw, DUET_MODE_VENDOR);
    cr_assert_eq(duet_config_complete_split(&vend, &hw, -1, 120, 12), DUET_OK);
    duet_corpus_row_t rows[11];
    double r[11];
    int n = 0;
    const double meas = 2.0;
    for (int g = 0; g < 3; g++) {
        rows[n] = t_op_row(a, t_fused(&hw, 132, 90 + g, tile), meas, meas, meas, 6);
        r[n++] = 0.1;
    }
    rows[n] = t_op_row(a, t_concurrent(&hw, 100, 32, tile), meas, meas, meas, 6);
    r[n++] = 0.3;
    rows[n] = t_op_row(a, vend, meas, meas, meas, 6);
    r[n++] = -0.1;
    rows[n] = t_op_row(b, t_fused(&hw, 132, 90, tile), meas, meas, meas, 6);
    r[n++] = 0.0;
    rows[n] = t_op_row(b, t_fused(&hw, 132, 91, tile), meas, meas, meas, 6);
    r[n++] = 0.05;
    rows[n] = t_op_row(b, t_concurrent(&hw, 100, 32, tile), meas, meas, meas, 6);
    r[n++] = -0.05;
    /* Rows that must not count. */
    rows[n] = t_op_row(b, t_fused(&hw, 132, 132, tile), meas, meas, meas, 6);
    rows[n].kind = DUET_ROW_GEMM_ALONE;
    r[n++] = 1.0;
    rows[n] = t_op_row(b, t_fused(&hw, 132, 80, tile), meas, meas, meas, 6);
    rows[n].ok = 0;
    r[n++] = 1.0;
    rows[n] = t_op_row(b, t_fused(&hw, 132, 70, tile), meas, meas, meas, 6);
    r[n++] = NAN; /* not predicted */
    double pred[11];
    for (int i = 0; i < n; i++)
        pred[i] = isnan(r[i]) ? NAN : meas * exp(r[i]);
    double err[DUET_MODE_COUNT];
    int64_t cnt[DUET_MODE_COUNT];
    cr_assert_eq(duet_cal_mode_errors_compute(rows, pred, (size_t)n, err, cnt), DUET_OK, "%s", duet_last_error());
    cr_assert(cnt[DUET_MODE_FUSED] == 5 && cnt[DUET_MODE_CONCURRENT] == 2 && cnt[DUET_MODE_VENDOR] == 1);
    cr_assert(t_rel_eq(err[DUET_MODE_FUSED], expm1(0.03), 1e-9), "%.17g", err[DUET_MODE_FUSED]);
    cr_assert(t_rel_eq(err[DUET_MODE_CONCURRENT], expm1(0.185), 1e-9), "%.17g", err[DUET_MODE_CONCURRENT]);
    cr_assert(t_rel_eq(err[DUET_MODE_VENDOR], expm1(0.2), 1e-9), "%.17g", err[DUET_MODE_VENDOR]);
    /* Without vendor rows the vendor error is undefined: NaN, 0 rows. */
    cr_assert_eq(duet_cal_mode_errors_compute(rows, pred, 4, err, cnt), DUET_OK);
    cr_assert(isnan(err[DUET_MODE_VENDOR]) && cnt[DUET_MODE_VENDOR] == 0);
    cr_assert_eq(duet_cal_mode_errors_compute(rows, pred, 0, err, cnt), DUET_ERR_INVALID_ARG);
}
