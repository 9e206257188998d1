/*
 * Nested cross-validation of the choice among candidate models (duet_cal_select_run) and the
 * candidates file (duet_cal_candidates_parse): on a synthetic corpus whose truth differs from the
 * base profile in one constant, the candidate that fits that constant is picked in every outer
 * fold and on all the data, and the nested score is the noise the corpus was made with; every
 * malformed candidates line is refused naming its file and line.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "synth.h"

TestSuite(cal_select, T_TIMEOUT);

/* The truth: the h200 profile with every GEMM tile's fixed cost 2.5 times the built-in one. */
static duet_hw_t truth_hw(void)
{
    duet_hw_t hw = t_hw("h200");
    hw.tile_overhead_us *= 2.5;
    return hw;
}

/* What a test of a selection starts from: the base profile, the synthetic corpus measured on the truth
 * with noise 0.01 (each row times exp(0.01 u), u uniform in [-1, 1]: an rms log error of
 * 0.01 / sqrt(3)), the candidates, the fit's parameters. */
typedef struct fx {
    duet_hw_t base;
    duet_corpus_t c;
    duet_cal_candidates_t cands;
    duet_cal_params_t p;
} fx_t;

static fx_t *setup(const char *text, int32_t max_iter)
{
    fx_t *x = malloc(sizeof(*x));
    duet_hw_t truth = truth_hw();
    x->base = t_hw("h200");
    x->c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.01);
    cr_assert_eq(duet_cal_candidates_parse(text, "cands.txt", &x->base, &x->cands), DUET_OK, "%s", duet_last_error());
    x->p = duet_cal_default_params();
    x->p.max_iter = max_iter;
    x->p.threads = 2;
    return x;
}

static void teardown(fx_t *x)
{
    duet_corpus_free(&x->c);
    free(x);
}

static const char cands_text[] = "# three models; only 'right' can learn the truth\n"
                                 "launch  launch_us\n"
                                 "\n"
                                 "right   tile_overhead_us     # the constant the truth changed\n"
                                 "link    link_gbs,cta_push_gbs  link_gbs=400\n";

Test(cal_select, the_candidate_that_fits_the_changed_constant_is_picked_everywhere)
{
    fx_t *x = setup(cands_text, 30);
    duet_hw_t truth = truth_hw();
    cr_assert_eq(x->cands.n, 3);
    duet_cal_selection_t *sel = malloc(sizeof(*sel));
    cr_assert_eq(duet_cal_select_run(&x->c, NULL, 1, &x->base, &x->cands, &x->p, 3, 2, sel), DUET_OK, "%s",
                 duet_last_error());
    /* 3 x (2 x 3 + 1) + 3 x 2 + 1 fits. */
    cr_assert_eq(sel->fits, 28);
    cr_assert_eq(duet_cal_select_fit_count(3, 2, 3), 28);
    cr_assert_eq(sel->shapes, 5);
    int32_t shapes = 0;
    for (int32_t f = 0; f < 3; f++) {
        const duet_cal_select_fold_t *fo = &sel->fold[f];
        cr_assert_eq(fo->picked, 1, "outer fold %d picked '%s' (scores %.4f %.4f %.4f)", (int)f,
                     x->cands.c[fo->picked].name, fo->inner_rms[0], fo->inner_rms[1], fo->inner_rms[2]);
        /* Clearly: the others miss by far more than the noise. */
        cr_assert(fo->inner_rms[1] < 0.01 && fo->inner_rms[0] > 2 * fo->inner_rms[1] &&
                      fo->inner_rms[2] > 2 * fo->inner_rms[1],
                  "fold %d: %.4f %.4f %.4f", (int)f, fo->inner_rms[0], fo->inner_rms[1], fo->inner_rms[2]);
        shapes += fo->shapes;
    }
    /* The outer folds of 5 shapes hold 2, 2 and 1 of them, each once. */
    cr_assert_eq(shapes, 5);
    cr_assert_eq(sel->fold[0].shapes + sel->fold[1].shapes + sel->fold[2].shapes, 5);
    cr_assert_eq(sel->picked, 1);
    /* The procedure held out scores the noise: 0.01 / sqrt(3) = 0.0058 for an exact model. */
    cr_assert(sel->nested_rms_log < 0.01, "nested rms log error %.4f", sel->nested_rms_log);
    cr_assert_eq(sel->nested.op_rows, 50, "every op row of the corpus predicted held out");
    /* The final fit recovers the truth's constant within a few per cent. */
    cr_assert_eq(sel->fit.n_params, 1);
    cr_assert_eq(sel->fit.params[0].field, DUET_HW_F_tile_overhead_us);
    cr_assert(fabs(sel->fit.hw.tile_overhead_us / truth.tile_overhead_us - 1) < 0.05, "%.4g vs %.4g",
              sel->fit.hw.tile_overhead_us, truth.tile_overhead_us);
    free(sel);
    teardown(x);
}

Test(cal_select, the_result_does_not_depend_on_the_threads)
{
    fx_t *x = setup("a launch_us\nb tile_overhead_us\n", 10);
    duet_cal_selection_t *one = malloc(sizeof(*one)), *two = malloc(sizeof(*two));
    x->p.threads = 1;
    cr_assert_eq(duet_cal_select_run(&x->c, NULL, 1, &x->base, &x->cands, &x->p, 2, 2, one), DUET_OK, "%s",
                 duet_last_error());
    x->p.threads = 3;
    cr_assert_eq(duet_cal_select_run(&x->c, NULL, 1, &x->base, &x->cands, &x->p, 2, 2, two), DUET_OK, "%s",
                 duet_last_error());
    cr_assert_eq(one->fits, 2 * (2 * 2 + 1) + 2 * 2 + 1);
    for (int32_t f = 0; f < 2; f++) {
        cr_assert_eq(one->fold[f].picked, two->fold[f].picked);
        cr_assert_eq(memcmp(one->fold[f].inner_rms, two->fold[f].inner_rms, 2 * sizeof(double)), 0);
    }
    cr_assert_eq(memcmp(&one->nested, &two->nested, sizeof(one->nested)), 0);
    cr_assert_eq(one->nested_rms_log, two->nested_rms_log);
    cr_assert_eq(memcmp(one->all_rms, two->all_rms, 2 * sizeof(double)), 0);
    free(one);
    free(two);
    teardown(x);
}

/* Row callback of duet_cal_report_run: the pooled squared log error of the held-out predictions. */
typedef struct held_sse {
    double sse;
    int64_t n;
} held_sse_t;

static void add_held(void *arg, const duet_cal_row_pred_t *r)
{
    held_sse_t *h = arg;
    if (isfinite(r->held_out_ms) && r->held_out_ms > 0) {
        double e = log(r->held_out_ms / r->row->ms);
        h->sse += e * e;
        h->n++;
    }
}

/*
 * With one candidate there is nothing to choose: the nested procedure is `calibrate fit`'s k-fold
 * cross-validation with k = --outer, and the inner CV on all the data is the same with k = --inner.
 * Both must reproduce its held-out predictions exactly (the same folds, the same fits).
 */
Test(cal_select, one_candidate_is_the_fits_cross_validation)
{
    fx_t *x = setup("only tile_overhead_us,launch_us\n", 15);
    duet_cal_selection_t *sel = malloc(sizeof(*sel));
    cr_assert_eq(duet_cal_select_run(&x->c, NULL, 1, &x->base, &x->cands, &x->p, 3, 2, sel), DUET_OK, "%s",
                 duet_last_error());
    cr_assert_eq(duet_cal_params_set_fit(&x->p, "tile_overhead_us,launch_us"), DUET_OK);
    duet_cal_report_t *rep = malloc(sizeof(*rep));
    held_sse_t h3 = {0, 0}, h2 = {0, 0};
    x->p.folds = 3;
    x->p.rows = add_held;
    x->p.rows_arg = &h3;
    cr_assert_eq(duet_cal_report_run(&x->c, NULL, 1, &x->base, &x->p, rep), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(memcmp(&sel->nested, &rep->model.held_out, sizeof(sel->nested)), 0,
                 "nested: median APE %.17g vs %.17g", sel->nested.ape_median, rep->model.held_out.ape_median);
    cr_assert(t_rel_eq(sel->nested_rms_log, sqrt(h3.sse / (double)h3.n), 1e-12), "%.17g vs %.17g", sel->nested_rms_log,
              sqrt(h3.sse / (double)h3.n));
    for (int32_t f = 0; f < 3; f++)
        cr_assert_eq(sel->fold[f].refit.rms_log_held_out, rep->model.fold[f].rms_log_held_out, "fold %d", (int)f);
    x->p.folds = 2;
    x->p.rows_arg = &h2;
    cr_assert_eq(duet_cal_report_run(&x->c, NULL, 1, &x->base, &x->p, rep), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(sel->all_rms[0], sqrt(h2.sse / (double)h2.n), 1e-12), "%.17g vs %.17g", sel->all_rms[0],
              sqrt(h2.sse / (double)h2.n));
    free(rep);
    free(sel);
    teardown(x);
}

Test(cal_select, counts_out_of_range_are_refused)
{
    duet_hw_t base = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&base, &duet_sim_policy_fluid, 0.0);
    duet_cal_candidates_t cands;
    cr_assert_eq(duet_cal_candidates_parse("a launch_us\n", "c", &base, &cands), DUET_OK);
    duet_cal_params_t p = duet_cal_default_params();
    duet_cal_selection_t *sel = malloc(sizeof(*sel));
    cr_assert_eq(duet_cal_select_run(&c, NULL, 1, &base, &cands, &p, 1, 2, sel), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_cal_select_run(&c, NULL, 1, &base, &cands, &p, 2, DUET_CAL_MAX_FOLDS + 1, sel),
                 DUET_ERR_INVALID_ARG);
    /* 6 outer folds of 5 shapes. */
    cr_assert_eq(duet_cal_select_run(&c, NULL, 1, &base, &cands, &p, 6, 2, sel), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "6 folds need at least 6 shapes") != NULL, "%s", duet_last_error());
    /* 3 outer folds leave 3 or 4 training shapes: 4 inner folds do not fit in the first. */
    cr_assert_eq(duet_cal_select_run(&c, NULL, 1, &base, &cands, &p, 3, 4, sel), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "outer fold 1/3") != NULL, "%s", duet_last_error());
    /* More fits than allowed. */
    for (int i = 0; i < DUET_CAL_MAX_CANDIDATES; i++)
        cands.c[i] = cands.c[0];
    cands.n = DUET_CAL_MAX_CANDIDATES;
    cr_assert(duet_cal_select_fit_count(10, 10, cands.n) > DUET_CAL_SELECT_MAX_FITS);
    cr_assert_eq(duet_cal_select_run(&c, NULL, 1, &base, &cands, &p, 10, 10, sel), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "3531 fits") != NULL, "%s", duet_last_error());
    free(sel);
    duet_corpus_free(&c);
}

Test(cal_select, a_candidates_file_parses_names_lists_and_start_values)
{
    duet_hw_t base = t_hw("h200");
    base.tile_prologue_us = 0;
    duet_cal_candidates_t cs;
    const char text[] = "  # comment line\r\n"
                        "a gemm_eff_bf16,tile_overhead_us\r\n"
                        "\t\n"
                        "b.2 launch_us launch_us=7.5 tile_prologue_us=0.25 # comment after\n"
                        "c-3 tile_prologue_us tile_prologue_us=0.5";
    cr_assert_eq(duet_cal_candidates_parse(text, "x.txt", &base, &cs), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(cs.n, 3);
    cr_assert_str_eq(cs.c[0].name, "a");
    cr_assert_eq(cs.c[0].line, 2);
    cr_assert_eq(cs.c[0].n_fit, 2);
    cr_assert_eq(cs.c[0].fit[0], DUET_HW_F_gemm_eff_bf16);
    cr_assert_eq(cs.c[0].fit[1], DUET_HW_F_tile_overhead_us);
    cr_assert_eq(cs.c[0].n_set, 0);
    cr_assert_str_eq(cs.c[1].name, "b.2");
    cr_assert_eq(cs.c[1].line, 4);
    cr_assert_eq(cs.c[1].n_set, 2);
    duet_hw_t hw;
    duet_cal_candidate_hw(&cs.c[1], &base, &hw);
    cr_assert_eq(hw.launch_us, 7.5);
    cr_assert_eq(hw.tile_prologue_us, 0.25);
    cr_assert_eq(hw.gemm_eff_bf16, base.gemm_eff_bf16, "what it does not set is the base's");
    cr_assert(strstr(hw.source[DUET_HW_F_launch_us], "candidate 'b.2'") != NULL, "%s", hw.source[DUET_HW_F_launch_us]);
    cr_assert_eq(cs.c[2].line, 5, "a last line without a newline");
}

/* Each bad line: DUET_ERR_PARSE, "<file>:<line>: " first, and what is wrong. */
Test(cal_select, every_bad_candidates_line_is_refused_with_file_and_line)
{
    duet_hw_t base = t_hw("h200");
    base.tile_prologue_us = 0;
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"a\n", "c.txt:1: a candidate is one line 'NAME PARAM,PARAM,... [CONST=VALUE ...]'"},
        {"# x\na foo_bar\n", "c.txt:2: candidate 'a': parameter 'foo_bar' is not a profile constant"},
        {"a/b launch_us\n", "c.txt:1: candidate name 'a/b'"},
        {"a launch_us\nb link_gbs\na hbm_gbs\n", "c.txt:3: candidate 'a' is already defined on line 1"},
        {"a launch_us launch_us=abc\n", "c.txt:1: launch_us: 'abc' is not a number"},
        {"a launch_us launch_us=\n", "c.txt:1: launch_us: '' is not a number"},
        {"a launch_us launch_us=-1\n", "c.txt:1: launch_us = -1 is outside its bounds"},
        {"a launch_us bogus=1\n", "c.txt:1: 'bogus' is not a profile constant"},
        {"a launch_us =1\n", "c.txt:1: '=1' is not CONST=VALUE"},
        {"a launch_us gemm_stages=2.5\n", "c.txt:1: gemm_stages is a count"},
        {"a launch_us launch_us=1 launch_us=2\n", "c.txt:1: launch_us is set twice"},
        {"a launch_us extra\n", "c.txt:1: candidate 'a': 'extra' is not CONST=VALUE"},
        {"a launch_us=3\n", "c.txt:1: candidate 'a': the parameter list comes before the start values"},
        {"a launch_us=3 launch_us\n", "c.txt:1: candidate 'a': the parameter list comes before the start values"},
        {"launch_us=3 a\n", "c.txt:1: a candidate is one line"},
        {"a launch_us,launch_us\n", "c.txt:1: candidate 'a': parameter 'launch_us' is listed twice"},
        {"a gemm_stages\n", "c.txt:1: candidate 'a': parameter 'gemm_stages' is a count"},
        {"a tile_prologue_us\n", "c.txt:1: candidate 'a' fits tile_prologue_us, which starts at 0"},
        {"a launch_us,\n", "c.txt:1: candidate 'a': parameter list 'launch_us,': trailing comma"},
        {"# nothing\n\n", "c.txt: no candidate"},
        {"", "c.txt: no candidate"},
        {"abcdefghijabcdefghijabcdefghij12 launch_us\n", "c.txt:1: candidate name"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        duet_cal_candidates_t cs;
        cs.n = -7;
        cr_assert_eq(duet_cal_candidates_parse(bad[i].text, "c.txt", &base, &cs), DUET_ERR_PARSE, "'%s' accepted",
                     bad[i].text);
        cr_assert(strstr(duet_last_error(), bad[i].want) == duet_last_error(), "'%s': got '%s', want '%s...'",
                  bad[i].text, duet_last_error(), bad[i].want);
        cr_assert(strchr(duet_last_error(), '\n') == NULL, "one line: %s", duet_last_error());
        cr_assert_eq(cs.n, -7, "nothing written on an error");
    }
    /* More than DUET_CAL_MAX_CANDIDATES. */
    char many[4096] = "";
    for (int i = 0; i <= DUET_CAL_MAX_CANDIDATES; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "c%d launch_us\n", i);
    duet_cal_candidates_t cs;
    cr_assert_eq(duet_cal_candidates_parse(many, "m.txt", &base, &cs), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "m.txt:33: more than 32 candidates") != NULL, "%s", duet_last_error());
}
