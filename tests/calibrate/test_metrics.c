/*
 * The accuracy metrics on a small hand-built corpus whose answers are worked out by hand:
 * makespan error, exact picks, picks within 8 CTAs, regret and top-k coverage.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "synth.h"

typedef struct hand_row {
    char shape; /* A..E */
    int32_t kind;
    int32_t mode;
    int32_t gemm_wgs, comm_wgs;
    int small_tile; /* 1: 128x128x64, else 256x128x64 */
    int ok;
    double ms, pred; /* pred NaN: the model did not predict the row */
} hand_row_t;

/*
 * Shape A: the model picks a2 (1.02 ms) over the best a0 (1.00): regret 2 %, 5 CTAs away with
 *          the same tile, covered by the top 1 (1.02 <= 1.03).
 * Shape B: picks b1 (2.5 ms, another tile, 3 CTAs away) over the best b0 (2.0): regret 25 %;
 *          b0 is the model's third, so the top 4 covers it.
 * Shape C: exact pick; a failed row and a gemm_alone row (alone error 5 %) do not take part.
 * Shape D: one op row: its error counts, but there is nothing to pick among.
 * Shape E: the best e0 (concurrent) was not predicted: the pick e1 is charged 20 % regret.
 */
static const hand_row_t hand[] = {
    {'A', DUET_ROW_OP, DUET_MODE_FUSED, 100, 32, 0, 1, 1.00, 1.3},
    {'A', DUET_ROW_OP, DUET_MODE_FUSED, 110, 22, 0, 1, 1.10, 1.4},
    {'A', DUET_ROW_OP, DUET_MODE_FUSED, 105, 27, 0, 1, 1.02, 1.0},
    {'A', DUET_ROW_OP, DUET_MODE_FUSED, 60, 72, 1, 1, 1.50, 1.2},
    {'B', DUET_ROW_OP, DUET_MODE_FUSED, 100, 32, 0, 1, 2.00, 2.2},
    {'B', DUET_ROW_OP, DUET_MODE_FUSED, 97, 35, 1, 1, 2.50, 1.9},
    {'B', DUET_ROW_OP, DUET_MODE_CONCURRENT, 116, 16, 0, 1, 2.10, 2.05},
    {'B', DUET_ROW_OP, DUET_MODE_FUSED, 132, 0, 0, 1, 3.00, 2.3},
    {'C', DUET_ROW_OP, DUET_MODE_FUSED, 80, 52, 0, 1, 0.50, 0.5},
    {'C', DUET_ROW_OP, DUET_MODE_FUSED, 120, 12, 0, 1, 0.60, 0.7},
    {'C', DUET_ROW_OP, DUET_MODE_FUSED, 90, 42, 0, 0, 0.0, 0.1},
    {'C', DUET_ROW_GEMM_ALONE, DUET_MODE_FUSED, 132, 0, 0, 1, 0.40, 0.42},
    {'D', DUET_ROW_OP, DUET_MODE_FUSED, 100, 32, 0, 1, 1.00, 1.1},
    {'E', DUET_ROW_OP, DUET_MODE_CONCURRENT, 116, 16, 0, 1, 1.00, NAN},
    {'E', DUET_ROW_OP, DUET_MODE_FUSED, 100, 32, 0, 1, 1.20, 1.0},
    {'E', DUET_ROW_OP, DUET_MODE_FUSED, 120, 12, 0, 1, 1.25, 1.1},
};
#define NHAND (sizeof(hand) / sizeof(hand[0]))

static duet_workload_t hand_shape(char s)
{
    switch (s) {
    case 'A':
        return t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    case 'B':
        return t_wl(8192, 8192, 8192, DUET_COLL_ALL_REDUCE, 512, 4096, 2);
    case 'C':
        return t_wl(2048, 2048, 16384, DUET_COLL_REDUCE_SCATTER, 512, 2048, 2);
    case 'D':
        return t_wl(4096, 8192, 512, DUET_COLL_ALL_TO_ALL, 512, 2048, 2);
    default:
        return t_wl(4096, 4096, 4096, DUET_COLL_BROADCAST, 512, 2048, 2);
    }
}

static void hand_build(duet_corpus_row_t *rows, double *pred)
{
    duet_hw_t hw = t_hw("h200");
    for (size_t i = 0; i < NHAND; i++) {
        const hand_row_t *h = &hand[i];
        duet_gemm_tile_t tile = h->small_tile ? (duet_gemm_tile_t){128, 128, 64} : (duet_gemm_tile_t){256, 128, 64};
        memset(&rows[i], 0, sizeof(rows[i]));
        rows[i].kind = h->kind;
        rows[i].wl = hand_shape(h->shape);
        rows[i].cfg = h->mode == DUET_MODE_FUSED ? t_fused(&hw, 132, h->gemm_wgs, tile)
                                                 : t_concurrent(&hw, h->gemm_wgs, h->comm_wgs, tile);
        rows[i].ok = h->ok;
        rows[i].ms = h->ms;
        rows[i].min_ms = h->ms;
        rows[i].max_ms = h->ms;
        rows[i].repeats = 8;
        if (!h->ok)
            snprintf(rows[i].error, sizeof(rows[i].error), "launch failed");
        pred[i] = h->pred;
    }
}

Test(metrics, hand_built_corpus_gives_the_worked_answers, T_TIMEOUT)
{
    duet_corpus_row_t rows[NHAND];
    double pred[NHAND];
    hand_build(rows, pred);
    duet_cal_metrics_t m;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, NHAND, &m), DUET_OK, "%s", duet_last_error());

    /* Shapes A, B, C and E rank; D has one candidate. */
    cr_assert_eq(m.shapes, 4);
    cr_assert(t_rel_eq(m.exact_pick, 0.25, 1e-12), "exact %g", m.exact_pick);
    cr_assert(t_rel_eq(m.pick_within8, 0.50, 1e-12), "within8 %g", m.pick_within8);
    cr_assert(t_rel_eq(m.pick_within8_loose, 0.75, 1e-12), "loose %g", m.pick_within8_loose);
    /* Regrets 0.02, 0.25, 0, 0.2: median (0.02 + 0.2) / 2, mean 0.47 / 4, p95 interpolated
     * at 0.95 * 3 = 2.85 between 0.2 and 0.25. */
    cr_assert(t_rel_eq(m.regret_median, 0.11, 1e-12), "median regret %g", m.regret_median);
    cr_assert(t_rel_eq(m.regret_mean, 0.1175, 1e-12), "mean regret %g", m.regret_mean);
    cr_assert(t_rel_eq(m.regret_p95, 0.2425, 1e-12), "p95 regret %g", m.regret_p95);
    cr_assert(t_rel_eq(m.topk_cover[0], 0.50, 1e-12), "top1 %g", m.topk_cover[0]);
    cr_assert(t_rel_eq(m.topk_cover[1], 0.75, 1e-12), "top4 %g", m.topk_cover[1]);
    cr_assert(t_rel_eq(m.topk_cover[2], 0.75, 1e-12), "top8 %g", m.topk_cover[2]);

    /* 13 predicted, measured op rows; the median error is the 7th smallest (c1 and e1 tie at
     * 1/6); p95 interpolates at 0.95 * 12 = 11.4 between 0.2727 (a1) and 0.3 (a0). */
    cr_assert_eq(m.op_rows, 13);
    cr_assert(t_rel_eq(m.ape_median, 1.0 / 6.0, 1e-12), "ape median %g", m.ape_median);
    cr_assert(t_rel_eq(m.ape_p95, 0.3 / 1.1 * 0.6 + 0.3 * 0.4, 1e-12), "ape p95 %g", m.ape_p95);
    cr_assert_eq(m.alone_rows, 1);
    cr_assert(t_rel_eq(m.alone_ape_median, 0.05, 1e-9), "alone %g", m.alone_ape_median);
}

Test(metrics, ties_go_to_the_most_collective_ctas_in_any_row_order_and_nothing_predicted_is_an_error, T_TIMEOUT)
{
    duet_corpus_row_t rows[NHAND], back[4];
    double pred[NHAND], pred_back[4];
    hand_build(rows, pred);
    /* Shape A predicted flat (a3 within floating-point resolution): the pick is a3, the most
     * collective CTAs (72), listed first or last; it measured 1.50 ms against a0's 1.00. */
    for (int i = 0; i < 4; i++)
        pred[i] = i == 3 ? 1.0 + 1e-12 : 1.0;
    for (int i = 0; i < 4; i++) {
        back[i] = rows[3 - i];
        pred_back[i] = pred[3 - i];
    }
    duet_cal_metrics_t m;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, 4, &m), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(m.shapes, 1);
    cr_assert_eq(m.exact_pick, 0.0);
    cr_assert(t_rel_eq(m.regret_median, 0.5, 1e-12), "regret %g", m.regret_median);
    cr_assert_eq(duet_cal_metrics_compute(back, pred_back, 4, &m), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(m.regret_median, 0.5, 1e-12), "regret %g (rows backwards)", m.regret_median);

    /* Equal measured times go by the same rule: a model that predicts a0 and a3 exactly, both
     * measured 1.00 ms, picks the measured best (a3: 72 collective CTAs over a0's 32, though a0
     * comes first). */
    rows[3].ms = 1.00;
    pred[0] = pred[3] = 1.00;
    pred[1] = 1.10;
    pred[2] = 1.02;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, 4, &m), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(m.exact_pick, 1.0);
    cr_assert_eq(m.regret_median, 0.0);

    for (size_t i = 0; i < NHAND; i++)
        pred[i] = NAN;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, NHAND, &m), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "no measured row was predicted") != NULL, "%s", duet_last_error());
}

Test(metrics, a_k_split_is_another_configuration_of_the_same_tile, T_TIMEOUT)
{
    duet_corpus_row_t rows[NHAND];
    double pred[NHAND];
    hand_build(rows, pred);
    /* Shape A: the pick a2 (105 CTAs) is 5 CTAs from the best a0 with the same tile: within 8.
     * With K in two parts the pick is another GEMM schedule: not within 8 any more (only the
     * loose reading, same mode and gemm_wgs within 8, still counts it), and no exact pick. */
    duet_cal_metrics_t m;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, 4, &m), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(m.pick_within8, 1.0);
    rows[2].cfg.split_k = 2;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, 4, &m), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(m.pick_within8, 0.0);
    cr_assert_eq(m.pick_within8_loose, 1.0);
    /* The split row on a0's own point is not a0: the model now picks it (pred 1.0 < 1.3), and the
     * pick is not exact although it has a0's CTAs and tile. */
    rows[2].cfg = rows[0].cfg;
    rows[2].cfg.split_k = 2;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, 4, &m), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(m.exact_pick, 0.0);
    cr_assert_eq(m.pick_within8, 0.0);
}

Test(metrics, perfect_predictions_score_perfectly, T_TIMEOUT)
{
    duet_corpus_row_t rows[NHAND];
    double pred[NHAND];
    hand_build(rows, pred);
    for (size_t i = 0; i < NHAND; i++)
        pred[i] = rows[i].ok ? rows[i].ms : NAN;
    duet_cal_metrics_t m;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, NHAND, &m), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(m.shapes, 4);
    cr_assert_eq(m.ape_median, 0.0);
    cr_assert_eq(m.ape_p95, 0.0);
    cr_assert_eq(m.exact_pick, 1.0);
    cr_assert_eq(m.pick_within8, 1.0);
    cr_assert_eq(m.regret_p95, 0.0);
    for (int t = 0; t < DUET_CAL_TOPK_N; t++)
        cr_assert_eq(m.topk_cover[t], 1.0);
}

/* ------------------------------------------------------------------------------------------ */
/* The noise floor                                                                             */
/* ------------------------------------------------------------------------------------------ */

Test(noise, runner_up_in_spread_is_counted_from_the_rows, T_TIMEOUT)
{
    /* Shape 0: runner-up 1.05 ms lies within the best's slowest run (1.10), 5 % away.
     * Shape 1: runner-up 2.01 ms is slower than every run of the best (2.00 flat), 0.5 % away.
     * Shape 2: one row: nothing to compare. */
    duet_corpus_row_t rows[] = {
        t_noise_row(0, 100, 8, 1.00, 0.98, 1.10), t_noise_row(0, 110, 8, 1.05, 1.00, 1.10),
        t_noise_row(0, 120, 8, 1.50, 1.50, 1.50), t_noise_row(1, 100, 8, 2.00, 2.00, 2.00),
        t_noise_row(1, 110, 8, 2.01, 2.01, 2.01), t_noise_row(2, 100, 8, 3.00, 2.90, 3.10),
    };
    duet_cal_noise_t nz;
    cr_assert_eq(duet_cal_noise_compute(rows, sizeof(rows) / sizeof(rows[0]), &nz), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(nz.shapes, 2);
    cr_assert(t_rel_eq(nz.runner_up_in_spread, 0.5, 1e-12), "%g", nz.runner_up_in_spread);
    cr_assert(t_rel_eq(nz.runner_up_within_1pct, 0.5, 1e-12), "%g", nz.runner_up_within_1pct);
    cr_assert(t_rel_eq(nz.gap_median, (0.05 + 0.005) / 2, 1e-9), "%g", nz.gap_median);
    /* Spreads 0.12, 0.0952, 0, 0, 0, 0.0667: the median interpolates between 0 and 0.0667. */
    cr_assert(t_rel_eq(nz.row_spread_median, 0.2 / 3.0 / 2.0, 1e-9), "%g", nz.row_spread_median);
    cr_assert_eq(nz.pairs, DUET_CAL_NOISE_PAIRS);
    /* Shape 1 has no spread: a second measurement always agrees there. Shape 0's runner-up is
     * 5 % away against a median's standard error of 1.2533 * 0.12 / (2.847 * sqrt 8) = 1.9 %:
     * the two re-measurements disagree sometimes, but not most of the time. */
    cr_assert_eq(nz.remeasure.shapes, 2);
    cr_assert(nz.remeasure.exact_pick > 0.75 && nz.remeasure.exact_pick < 1.0, "%g", nz.remeasure.exact_pick);
}

Test(noise, rows_without_spread_are_a_perfect_second_measurement, T_TIMEOUT)
{
    duet_corpus_row_t rows[] = {
        t_noise_row(0, 100, 8, 1.00, 1.00, 1.00),
        t_noise_row(0, 110, 8, 1.001, 1.001, 1.001),
        t_noise_row(1, 100, 8, 2.00, 2.00, 2.00),
        t_noise_row(1, 110, 8, 1.90, 1.90, 1.90),
    };
    duet_cal_noise_t nz;
    cr_assert_eq(duet_cal_noise_compute(rows, 4, &nz), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(nz.remeasure.exact_pick, 1.0);
    cr_assert_eq(nz.remeasure.regret_p95, 0.0);
    cr_assert_eq(nz.remeasure.ape_median, 0.0);
    cr_assert_eq(nz.runner_up_in_spread, 0.0);
}

Test(noise, tied_rows_are_a_coin_flip_and_the_spread_sets_the_error, T_TIMEOUT)
{
    /* 200 shapes of two configurations with the same median and a 10 % run spread: a second
     * measurement picks the same one half of the time. Each median's relative standard error is
     * sigma = 1.2533 * 0.10 / (2.847 * sqrt 8) = 1.556 %; the log ratio of two independent
     * re-measurements is normal with sd sigma * sqrt 2, so the median |A/B - 1| is
     * 0.6745 * sqrt 2 * sigma = 1.48 %. */
    enum { SHAPES = 200 };
    duet_corpus_row_t *rows = calloc(2 * SHAPES, sizeof(*rows));
    for (int s = 0; s < SHAPES; s++) {
        rows[2 * s] = t_noise_row(s, 100, 8, 1.0, 0.95, 1.05);
        rows[2 * s + 1] = t_noise_row(s, 110, 8, 1.0, 0.95, 1.05);
    }
    duet_cal_noise_t nz;
    cr_assert_eq(duet_cal_noise_compute(rows, 2 * SHAPES, &nz), DUET_OK, "%s", duet_last_error());
    free(rows);
    cr_assert_eq(nz.shapes, SHAPES);
    cr_assert_eq(nz.runner_up_in_spread, 1.0);
    /* 200 pairs x 200 shapes: the mean of 40000 coin flips is within 0.02 of 0.5 (8 sigma). */
    cr_assert(fabs(nz.remeasure.exact_pick - 0.5) < 0.02, "exact %g", nz.remeasure.exact_pick);
    double sigma = 1.2533 * 0.10 / (2.847 * sqrt(8.0));
    cr_assert(t_rel_eq(nz.remeasure.ape_median, 0.6745 * sqrt(2.0) * sigma, 0.05), "ape median %g, want %g",
              nz.remeasure.ape_median, 0.6745 * sqrt(2.0) * sigma);
}
