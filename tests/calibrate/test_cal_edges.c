/*
 * The calibration layer's edges, on rows whose figures follow by hand: what each entry point
 * refuses, a row that cannot be planned and a corpus of another device named as such, picks
 * "within 8 CTAs" that need the same tile and K split, shapes without a pick, the rows the mode
 * errors and the noise floor cannot judge, and an evaluation with nothing predicted.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "synth.h"

TestSuite(cal_edges, T_TIMEOUT);

static const duet_gemm_tile_t T256x256 = {256, 256, 64}, T256x128 = {256, 128, 64};

/* A measured row of the H200: ms with a 1 % spread over 8 repeats (ms <= 0: failed). */
static duet_corpus_row_t mrow(int32_t kind, duet_workload_t wl, duet_config_t cfg, double ms)
{
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.kind = kind;
    r.wl = wl;
    r.cfg = cfg;
    r.repeats = 8;
    if (ms > 0) {
        r.ok = 1;
        r.ms = ms;
        r.min_ms = 0.99 * ms;
        r.max_ms = 1.01 * ms;
    }
    return r;
}

static duet_workload_t wl_of(int64_t m)
{
    return t_wl(m, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
}

Test(cal_edges, every_entry_point_without_rows_says_so)
{
    duet_corpus_row_t r = mrow(DUET_ROW_OP, wl_of(4096), duet_config_default(&(duet_hw_t){0}, DUET_MODE_FUSED), 1.0);
    double pred = 1.0, err[DUET_MODE_COUNT];
    int64_t cnt[DUET_MODE_COUNT];
    duet_cal_metrics_t m;
    duet_cal_noise_t nz;
    cr_assert_eq(duet_cal_metrics_compute(NULL, &pred, 1, &m), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "metrics: no rows");
    cr_assert_eq(duet_cal_metrics_compute(&r, NULL, 1, &m), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_cal_metrics_compute(&r, &pred, 0, &m), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_cal_mode_errors_compute(NULL, &pred, 1, err, cnt), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "mode errors: no rows");
    cr_assert_eq(duet_cal_mode_errors_compute(&r, NULL, 1, err, cnt), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_cal_mode_errors_compute(&r, &pred, 0, err, cnt), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_cal_noise_compute(NULL, 1, &nz), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "noise floor: no rows");
    cr_assert_eq(duet_cal_noise_compute(&r, 0, &nz), DUET_ERR_INVALID_ARG);

    duet_cal_eval_row_t e = {0, DUET_ROW_OP, 0, 1.0, 1.0, 1.0, NAN, DUET_MODE_FUSED, 0, 0};
    duet_cal_eval_t ev;
    cr_assert_eq(duet_cal_eval_compute(NULL, 1, 1, 10, 1, &ev), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "evaluate: no rows, workloads or resamples");
    cr_assert_eq(duet_cal_eval_compute(&e, 1, 0, 10, 1, &ev), DUET_ERR_INVALID_ARG);
    e.workload = -1;
    cr_assert_eq(duet_cal_eval_compute(&e, 1, 2, 10, 1, &ev), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "evaluate: row 0 names workload -1 of 2");

    duet_hw_t hw = t_hw("h200");
    duet_cal_validation_t v;
    duet_corpus_t c = t_corpus_header(132, 2);
    cr_assert_eq(duet_cal_validate(&c, NULL, 0, &hw, NULL, NULL, &v), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "calibration: no corpus given");
    cr_assert_eq(duet_cal_validate(NULL, NULL, 1, &hw, NULL, NULL, &v), DUET_ERR_INVALID_ARG);
}

Test(cal_edges, the_selections_counts_have_both_bounds)
{
    /* outer x (inner x candidates + 1) + candidates x inner + 1 fits; a count below 1 has none. */
    cr_assert_eq(duet_cal_select_fit_count(2, 3, 4), 2 * (3 * 4 + 1) + 4 * 3 + 1);
    cr_assert_eq(duet_cal_select_fit_count(0, 3, 4), -1);
    cr_assert_eq(duet_cal_select_fit_count(2, 0, 4), -1);
    cr_assert_eq(duet_cal_select_fit_count(2, 3, 0), -1);
    cr_assert_eq(duet_cal_select_check(2, 2, 1), DUET_OK);
    cr_assert_eq(duet_cal_select_check(2, 2, 0), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "select: 1 to 32 candidates (got 0)");
    cr_assert_eq(duet_cal_select_check(2, 2, DUET_CAL_MAX_CANDIDATES + 1), DUET_ERR_INVALID_ARG);
    static const int32_t folds[4][2] = {{1, 2}, {DUET_CAL_MAX_FOLDS + 1, 2}, {2, 1}, {2, DUET_CAL_MAX_FOLDS + 1}};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(duet_cal_select_check(folds[i][0], folds[i][1], 1), DUET_ERR_INVALID_ARG, "%d", i);
        cr_assert(strstr(duet_last_error(), "select: outer and inner folds between 2 and") == duet_last_error(), "%s",
                  duet_last_error());
    }
}

Test(cal_edges, a_row_that_cannot_be_planned_names_where_it_is)
{
    duet_hw_t hw = t_hw("h200");
    duet_config_t bad = t_fused(&hw, 132, 99, T256x256);
    bad.gemm_wgs = 0;
    bad.comm_wgs = 0;
    duet_corpus_row_t rows[2] = {mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 99, T256x256), 1.0),
                                 mrow(DUET_ROW_OP, wl_of(4096), bad, 1.0)};
    double pred[2] = {1.0, 1.0};
    duet_cal_metrics_t m;
    /* Rows handed over as an array are "rows"; rows of an unnamed corpus are "corpus #N". */
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, 2, &m), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "rows: rows[1]: ") == duet_last_error(), "%s", duet_last_error());
    duet_corpus_t c = t_corpus_header(132, 2);
    for (int i = 0; i < 2; i++)
        cr_assert_eq(duet_corpus_add(&c, &rows[i]), DUET_OK);
    duet_cal_validation_t v;
    cr_assert_eq(duet_cal_validate(&c, NULL, 1, &hw, NULL, NULL, &v), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "corpus #1: rows[1]: ") == duet_last_error(), "%s", duet_last_error());
    duet_corpus_free(&c);
}

Test(cal_edges, a_corpus_of_another_device_names_the_profile_to_use)
{
    duet_hw_t hw = t_hw("h200");
    static const struct {
        int32_t sms;
        const char *hint;
    } cases[] = {{304, "--hw mi300x)"}, {256, "--hw mi350x)"}, {100, "--hw FILE)"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_corpus_t c = t_corpus_header(cases[i].sms, 2);
        duet_corpus_row_t r = mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 100, 75, T256x256), 1.0);
        cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
        const char *names[1] = {"x.json"};
        duet_cal_validation_t v;
        cr_assert_eq(duet_cal_validate(&c, names, 1, &hw, NULL, NULL, &v), DUET_ERR_INVALID_ARG);
        char want[256];
        snprintf(want, sizeof(want), "x.json: measured on NVIDIA H200 with %d SMs, but profile h200 has 132 SMs",
                 (int)cases[i].sms);
        cr_assert(strstr(duet_last_error(), want) == duet_last_error(), "%s", duet_last_error());
        const char *end = duet_last_error() + strlen(duet_last_error()) - strlen(cases[i].hint);
        cr_assert_str_eq(end, cases[i].hint);
        duet_corpus_free(&c);
    }
}

Test(cal_edges, a_pick_within_8_ctas_needs_the_same_tile_and_k_split)
{
    duet_hw_t hw = t_hw("h200");
    /* Shape 0: best 100/32 256x256 (1.0 ms, predicted 1.2); the model picks 104/28 with the 256x128
     * tile (1.1 ms, predicted 1.0): 4 CTAs off, but another tile. Shape 1: the same configuration
     * measured without and with a K split of 2 (1.0 and 1.1 ms); the model picks the split.
     * Both: not exact, not within 8 CTAs, within the loose reading, regret 0.1. */
    duet_config_t split = t_fused(&hw, 132, 100, T256x256);
    split.split_k = 2;
    duet_corpus_row_t rows[4] = {mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 100, T256x256), 1.0),
                                 mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 104, T256x128), 1.1),
                                 mrow(DUET_ROW_OP, wl_of(8192), t_fused(&hw, 132, 100, T256x256), 1.0),
                                 mrow(DUET_ROW_OP, wl_of(8192), split, 1.1)};
    double pred[4] = {1.2, 1.0, 1.2, 1.0};
    duet_cal_metrics_t m;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, 4, &m), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(m.shapes, 2);
    cr_assert_eq(m.exact_pick, 0.0);
    cr_assert_eq(m.pick_within8, 0.0);
    cr_assert_eq(m.pick_within8_loose, 1.0);
    cr_assert(t_rel_eq(m.regret_mean, 0.1, 1e-12), "%.17g", m.regret_mean);
    /* Top 1 is 10 % off (not within 3 %); the top 4 hold the best. */
    cr_assert_eq(m.topk_cover[0], 0.0);
    cr_assert_eq(m.topk_cover[1], 1.0);
    /* APEs: 0.2 and 1/11 - 1 in absolute value, twice each. */
    cr_assert_eq(m.op_rows, 4);
    cr_assert(t_rel_eq(m.ape_mean, (0.2 + (1 - 1 / 1.1)) / 2, 1e-12), "%.17g", m.ape_mean);
    cr_assert(isnan(m.alone_ape_median), "no GEMM-alone or comm-alone row");
}

Test(cal_edges, without_two_predicted_rows_in_a_shape_there_is_no_pick)
{
    duet_hw_t hw = t_hw("h200");
    /* Shape 0: two measured rows, one predicted; shape 1: one row; a GEMM-alone row predicted 5 %
     * high; a failed row, predicted, counts nowhere. */
    duet_config_t g = t_fused(&hw, 132, 132, T256x256);
    g.comm_wgs = 0;
    duet_corpus_row_t rows[5] = {mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 100, T256x256), 1.0),
                                 mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 90, T256x256), 1.5),
                                 mrow(DUET_ROW_OP, wl_of(8192), t_fused(&hw, 132, 100, T256x256), 2.0),
                                 mrow(DUET_ROW_GEMM_ALONE, wl_of(4096), g, 0.8),
                                 mrow(DUET_ROW_OP, wl_of(8192), t_fused(&hw, 132, 90, T256x256), 0)};
    double pred[5] = {1.1, NAN, 2.0, 0.84, 1.0};
    duet_cal_metrics_t m;
    cr_assert_eq(duet_cal_metrics_compute(rows, pred, 5, &m), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(m.shapes, 0);
    cr_assert(isnan(m.exact_pick) && isnan(m.pick_within8) && isnan(m.pick_within8_loose));
    cr_assert(isnan(m.regret_mean) && isnan(m.regret_median) && isnan(m.regret_p95));
    for (int t = 0; t < DUET_CAL_TOPK_N; t++)
        cr_assert(isnan(m.topk_cover[t]));
    cr_assert_eq(m.op_rows, 2);
    cr_assert(t_rel_eq(m.ape_mean, 0.05, 1e-12), "(0.1 + 0) / 2: %.17g", m.ape_mean);
    cr_assert_eq(m.alone_rows, 1);
    cr_assert(t_rel_eq(m.alone_ape_median, 0.05, 1e-12), "%.17g", m.alone_ape_median);

    /* Nothing predicted at all is refused. */
    double none[5] = {NAN, NAN, -1.0, INFINITY, 0.0};
    cr_assert_eq(duet_cal_metrics_compute(rows, none, 5, &m), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "metrics: no measured row was predicted");
}

Test(cal_edges, mode_errors_leave_out_the_rows_they_cannot_judge)
{
    duet_hw_t hw = t_hw("h200");
    /* One shape: fused A (1.0 ms, predicted 1.1), fused B (2.0, 2.0), concurrent C (1.0, 1.5); a
     * failed fused row, a GEMM-alone row and a fused row without a prediction are left out.
     * Log errors ln 1.1, 0, ln 1.5; their median ln 1.1. Fused distances {0, ln 1.1}: the 90th
     * percentile 0.9 ln 1.1, an error of 1.1^0.9 - 1. Concurrent: ln 1.5 - ln 1.1, 1.5 / 1.1 - 1. */
    duet_config_t g = t_fused(&hw, 132, 132, T256x256);
    g.comm_wgs = 0;
    duet_corpus_row_t rows[6] = {mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 100, T256x256), 1.0),
                                 mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 90, T256x256), 2.0),
                                 mrow(DUET_ROW_OP, wl_of(4096), t_concurrent(&hw, 100, 32, T256x256), 1.0),
                                 mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 80, T256x256), 0),
                                 mrow(DUET_ROW_GEMM_ALONE, wl_of(4096), g, 0.5),
                                 mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 70, T256x256), 1.0)};
    double pred[6] = {1.1, 2.0, 1.5, 9.0, 9.0, NAN};
    double err[DUET_MODE_COUNT];
    int64_t cnt[DUET_MODE_COUNT];
    cr_assert_eq(duet_cal_mode_errors_compute(rows, pred, 6, err, cnt), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(cnt[DUET_MODE_FUSED], 2);
    cr_assert_eq(cnt[DUET_MODE_CONCURRENT], 1);
    cr_assert_eq(cnt[DUET_MODE_VENDOR], 0);
    cr_assert(t_rel_eq(err[DUET_MODE_FUSED], pow(1.1, 0.9) - 1, 1e-12), "%.17g", err[DUET_MODE_FUSED]);
    cr_assert(t_rel_eq(err[DUET_MODE_CONCURRENT], 1.5 / 1.1 - 1, 1e-12), "%.17g", err[DUET_MODE_CONCURRENT]);
    cr_assert(isnan(err[DUET_MODE_VENDOR]));
}

Test(cal_edges, rows_without_a_spread_to_read_are_remeasured_as_they_are)
{
    duet_hw_t hw = t_hw("h200");
    /* Two shapes of two rows each; no row has a spread the floor can read (one repeat, a maximum
     * below the minimum, or no spread at all), so every redraw is the median itself and a perfect
     * model re-measured picks exactly, without regret. The runner-up of shape 0 (1.005) is inside
     * the best's range [0.99, 1.01] and within 1 %; shape 1's (1.5) is neither. */
    duet_corpus_row_t rows[4] = {mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 100, T256x256), 1.0),
                                 mrow(DUET_ROW_OP, wl_of(4096), t_fused(&hw, 132, 90, T256x256), 1.005),
                                 mrow(DUET_ROW_OP, wl_of(8192), t_fused(&hw, 132, 100, T256x256), 1.0),
                                 mrow(DUET_ROW_OP, wl_of(8192), t_fused(&hw, 132, 90, T256x256), 1.5)};
    rows[0].repeats = 1;
    rows[1].max_ms = rows[1].min_ms / 2;
    rows[2].min_ms = rows[2].max_ms = rows[2].ms;
    rows[3].repeats = 1;
    duet_cal_noise_t nz;
    cr_assert_eq(duet_cal_noise_compute(rows, 4, &nz), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(nz.shapes, 2);
    cr_assert_eq(nz.runner_up_in_spread, 0.5);
    cr_assert_eq(nz.runner_up_within_1pct, 0.5);
    cr_assert_eq(nz.remeasure.exact_pick, 1.0);
    cr_assert_eq(nz.remeasure.regret_mean, 0.0);
    cr_assert_eq(nz.remeasure.ape_median, 0.0);

    /* One row per shape: no runner-up anywhere. */
    cr_assert_eq(duet_cal_noise_compute(rows + 1, 2, &nz), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(nz.shapes, 0);
    cr_assert(isnan(nz.runner_up_in_spread) && isnan(nz.runner_up_within_1pct));
}

Test(cal_edges, an_evaluation_with_nothing_predicted_has_no_pick_but_scores_the_rule)
{
    /* One workload: the static default (fused, 1.0 ms) and the rule's concurrent pick (1.2 ms), neither
     * predicted nor measured twice; a row without a time; a GEMM-alone row on too few SMs and one
     * without a prediction. No pick, no ceiling, no APE; the rule's pick is scored: 20 % regret,
     * not within the band (0: nothing measured twice), a switch worse than the default. */
    duet_cal_eval_row_t r[] = {
        {0, DUET_ROW_OP, 0, 1.0, NAN, NAN, NAN, DUET_MODE_FUSED, 1, 0},
        {0, DUET_ROW_OP, 0, 1.2, NAN, NAN, NAN, DUET_MODE_CONCURRENT, 0, 1},
        {0, DUET_ROW_OP, 0, NAN, 1.0, 0.5, NAN, DUET_MODE_FUSED, 0, 0},
        {0, DUET_ROW_GEMM_ALONE, 0, 1.0, 1.0, 1.0, NAN, DUET_MODE_FUSED, 0, 0},
        {0, DUET_ROW_GEMM_ALONE, 1, 1.0, 1.0, NAN, NAN, DUET_MODE_FUSED, 0, 0},
    };
    duet_cal_eval_t e;
    cr_assert_eq(duet_cal_eval_compute(r, 5, 1, 50, 1, &e), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(e.gemm_rows, 0);
    cr_assert_eq(e.op_rows, 0);
    cr_assert(isnan(e.gemm_ape_median.value) && isnan(e.op_ape_median.value));
    cr_assert(isnan(e.pick.value) && isnan(e.exact_pick.value) && isnan(e.ceiling.value));
    cr_assert(isnan(e.regret_mean.value) && isnan(e.regret_p95.value));
    cr_assert_eq(e.band_median, 0.0);
    cr_assert_eq(e.worse_switch_of, 0, "no model pick to compare with the default");
    cr_assert_eq(e.rule_workloads, 1);
    cr_assert_eq(e.rule_left_n, 1);
    cr_assert_eq(e.rule_worse_switch_n, 1);
    cr_assert_eq(e.rule_pick.value, 0.0);
    cr_assert(t_rel_eq(e.rule_regret_mean.value, 0.2, 1e-12), "%.17g", e.rule_regret_mean.value);
    cr_assert_eq(e.rule_worse_switch.value, 1.0);
    /* No figure with a value of NaN is judged; neither is one without a target; nothing to compare
     * with the reference rules. */
    for (int i = 0; i < duet_cal_eval_n_figures; i++) {
        const duet_cal_eval_figure_t *f = &duet_cal_eval_figures[i];
        if (f->cmp == DUET_CAL_TARGET_NONE || isnan(duet_cal_eval_figure_ci(&e, f)->value))
            cr_assert_eq(duet_cal_eval_figure_met(&e, f), -1, "%s", f->label);
        if (f->cmp == DUET_CAL_TARGET_NONE)
            cr_assert(isnan(duet_cal_eval_figure_threshold(&e, f)), "%s", f->label);
    }
    cr_assert_eq(duet_cal_eval_better_than_reference(&e), -1);
    cr_assert_eq(duet_cal_eval_better_than_reference_all(&e), -1);
}

Test(cal_edges, candidates_lines_past_the_limits_and_a_file_with_a_nul)
{
    duet_hw_t base = t_hw("h200");
    duet_cal_candidates_t cs;
    static char text[8192];
    /* A line of 4097 characters. */
    memset(text, 'a', 4097);
    text[4097] = '\0';
    cr_assert_eq(duet_cal_candidates_parse(text, "c", &base, &cs), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "c:1: line longer than 4096 characters");
    /* A name, a list and 26 more words: more words than a line can hold. */
    snprintf(text, sizeof(text), "a launch_us");
    for (int i = 0; i < 26; i++)
        strcat(text, " x=1");
    cr_assert_eq(duet_cal_candidates_parse(text, "c", &base, &cs), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "c:1: more than 24 start values");
    /* 25 start values of distinct constants, each at its lower bound: one more than a candidate holds. */
    snprintf(text, sizeof(text), "a launch_us");
    for (int k = 0, n = 0; k < DUET_HW_NFIELDS && n < 25; k++, n++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(k);
        snprintf(text + strlen(text), sizeof(text) - strlen(text), " %s=%.17g", fi->key, fi->min);
    }
    cr_assert_eq(duet_cal_candidates_parse(text, "c", &base, &cs), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "c:1: more than 24 start values");
    /* A constant's name longer than any (64 characters), and a value that is not finite. */
    char key[80];
    memset(key, 'k', 64);
    key[64] = '\0';
    snprintf(text, sizeof(text), "a launch_us %s=1", key);
    cr_assert_eq(duet_cal_candidates_parse(text, "c", &base, &cs), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "=1' is not CONST=VALUE") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_cal_candidates_parse("a launch_us launch_us=inf", "c", &base, &cs), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "c:1: launch_us: 'inf' is not a number");
    /* A file with a NUL byte is not text. */
    char path[256];
    t_tmp_path(path, sizeof(path), "cands.txt");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fwrite("a launch_us\n\0b launch_us\n", 1, 25, f);
    fclose(f);
    cr_assert_eq(duet_cal_candidates_load(path, &base, &cs), DUET_ERR_PARSE);
    char want[300];
    snprintf(want, sizeof(want), "%s: not a text file (a NUL byte)", path);
    cr_assert_str_eq(duet_last_error(), want);
}

Test(cal_edges, a_report_needs_between_0_and_32_folds)
{
    duet_hw_t hw = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&hw, &duet_sim_policy_fluid, 0.0);
    duet_cal_params_t p = duet_cal_default_params();
    duet_cal_report_t *rep = malloc(sizeof(*rep));
    static const int32_t bad[2] = {-1, DUET_CAL_MAX_FOLDS + 1};
    for (int i = 0; i < 2; i++) {
        p.folds = bad[i];
        cr_assert_eq(duet_cal_report_run(&c, NULL, 1, &hw, &p, rep), DUET_ERR_INVALID_ARG);
        char want[96];
        snprintf(want, sizeof(want), "cross-validation: between 0 and 32 folds (got %d)", (int)bad[i]);
        cr_assert_str_eq(duet_last_error(), want);
    }
    free(rep);
    duet_corpus_free(&c);
}
