/*
 * `duet calibrate select` as a user meets it: the fit count on stderr first, the pick of a
 * synthetic corpus in text and JSON, the profile it writes, and one-line errors with exit status 2
 * for bad candidates files and for work beyond the limit.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <sys/stat.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "synth.h"

TestSuite(cli_select, T_TIMEOUT);

/* The synthetic corpus on the h200 profile with every GEMM tile's fixed cost 2.5 times its own. */
static void save_corpus(const char *path)
{
    duet_hw_t truth = t_hw("h200");
    truth.tile_overhead_us *= 2.5;
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.01);
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK, "%s", duet_last_error());
    duet_corpus_free(&c);
}

Test(cli_select, help_names_the_options_and_the_fit_count)
{
    t_cli_t *r = malloc(sizeof(*r));
    t_cli_run(r, NULL, "calibrate", "select", "--help", NULL);
    cr_assert_eq(r->code, 0);
    cr_assert(strstr(r->out, "--candidates FILE") != NULL && strstr(r->out, "--outer K") != NULL, "%s", r->out);
    cr_assert(strstr(r->out, "outer x (inner x candidates + 1) + candidates x inner + 1") != NULL, "%s", r->out);
    t_cli_run(r, NULL, "calibrate", "--help", NULL);
    cr_assert(strstr(r->out, "select") != NULL, "%s", r->out);
    free(r);
}

Test(cli_select, picks_the_right_candidate_and_writes_its_profile)
{
    t_cli_t *r = malloc(sizeof(*r));
    char corpus[128], cands[128], prof[128];
    t_tmp(corpus, sizeof(corpus), "corpus.json");
    t_tmp(cands, sizeof(cands), "cands.txt");
    t_tmp(prof, sizeof(prof), "picked.json");
    save_corpus(corpus);
    cr_assert_eq(t_spill(cands, "launch launch_us\nright tile_overhead_us  # the truth's constant\n"), 0);
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", corpus, "--hw", "h200", "--candidates", cands, "--outer", "2",
              "--inner", "2", "--max-iter", "20", "--json", "-o", prof, NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    /* 2 x (2 x 2 + 1) + 2 x 2 + 1 fits, said before any progress. */
    cr_assert(strncmp(r->err, "calibrate select: 15 fits = 2 outer folds", 41) == 0, "%s", r->err);
    cJSON *doc = cJSON_Parse(r->out);
    cr_assert_not_null(doc, "%s", r->out);
    cr_assert_str_eq(cJSON_GetObjectItem(doc, "schema")->valuestring, "duet-selection/1");
    cr_assert_eq(cJSON_GetObjectItem(doc, "fits")->valuedouble, 15);
    const cJSON *outer = cJSON_GetObjectItem(doc, "outer");
    cr_assert_eq(cJSON_GetArraySize(outer), 2);
    for (int f = 0; f < 2; f++) {
        const cJSON *fo = cJSON_GetArrayItem(outer, f);
        cr_assert_str_eq(cJSON_GetObjectItem(fo, "picked")->valuestring, "right");
        const cJSON *in = cJSON_GetObjectItem(fo, "inner_rms_log");
        cr_assert(cJSON_GetObjectItem(in, "right")->valuedouble < cJSON_GetObjectItem(in, "launch")->valuedouble);
    }
    const cJSON *all = cJSON_GetObjectItem(doc, "all_data");
    cr_assert_str_eq(cJSON_GetObjectItem(all, "picked")->valuestring, "right");
    double nested = cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "nested"), "rms_log")->valuedouble;
    cr_assert(nested < 0.01, "the noise is 0.01 / sqrt(3): %g", nested);
    cr_assert_eq(cJSON_GetObjectItem(all, "nested_rms_log")->valuedouble, nested);
    cr_assert_eq(cJSON_GetObjectItem(all, "optimism")->valuedouble,
                 nested - cJSON_GetObjectItem(all, "cv_rms_log")->valuedouble);
    cJSON_Delete(doc);
    /* The profile: the pick fitted on every row, its source naming the corpus. */
    duet_hw_t hw;
    cr_assert_eq(duet_hw_load(prof, &hw), DUET_OK, "%s", duet_last_error());
    cr_assert(fabs(hw.tile_overhead_us / (2.5 * t_hw("h200").tile_overhead_us) - 1) < 0.05, "%g", hw.tile_overhead_us);
    cr_assert(strncmp(hw.source[DUET_HW_F_tile_overhead_us], "fit: ", 5) == 0, "%s",
              hw.source[DUET_HW_F_tile_overhead_us]);
    /* The text report: each fold's scores with the pick marked, and the optimism line. */
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", corpus, "--hw", "h200", "--candidates", cands, "--outer", "2",
              "--inner", "2", "--max-iter", "20", "--quiet", NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    cr_assert_str_eq(r->err, "", "--quiet");
    cr_assert(strstr(r->out, "outer fold 2/2") != NULL && strstr(r->out, "all data (not nested)") != NULL, "%s",
              r->out);
    cr_assert(strstr(r->out, "choosing on data flatters it by") != NULL, "%s", r->out);
    free(r);
}

Test(cli_select, bad_candidates_and_absurd_sizes_exit_2_with_one_line)
{
    t_cli_t *r = malloc(sizeof(*r));
    char corpus[128], cands[128], bad[128], missing[128], prof[128];
    t_tmp(corpus, sizeof(corpus), "corpus.json");
    t_tmp(cands, sizeof(cands), "cands.txt");
    t_tmp(bad, sizeof(bad), "bad.txt");
    t_tmp(missing, sizeof(missing), "missing.txt");
    t_tmp(prof, sizeof(prof), "never.json");
    save_corpus(corpus);
    cr_assert_eq(t_spill(cands, "a launch_us\nb tile_overhead_us\n"), 0);
    cr_assert_eq(t_spill(bad, "# ok so far\na launch_us\nb nope_us\n"), 0);
    char want[256];
    snprintf(want, sizeof(want), "--candidates: %s:3: candidate 'b': parameter 'nope_us' is not a profile constant",
             bad);
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", corpus, "--hw", "h200", "--candidates", bad, "-o", prof,
              NULL);
    t_cli_expect_error(r, 2, "calibrate select", want);
    struct stat st;
    cr_assert(stat(prof, &st) != 0, "nothing written on bad input");
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", corpus, "--hw", "h200", "--candidates", missing, NULL);
    t_cli_expect_error(r, 2, "calibrate select", "missing.txt");
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", corpus, "--hw", "h200", NULL);
    t_cli_expect_error(r, 2, "calibrate select", "--candidates FILE");
    /* 32 x (32 x 2 + 1) + 2 x 32 + 1 = 2145 fits: refused before any work. */
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", corpus, "--hw", "h200", "--candidates", cands, "--outer",
              "32", "--inner", "32", NULL);
    t_cli_expect_error(r, 2, "calibrate select", "2145 fits");
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", corpus, "--hw", "h200", "--candidates", cands, "--outer", "1",
              NULL);
    t_cli_expect_error(r, 2, "calibrate select", "--outer: '1' is not an integer in [2, 32]");
    /* 6 outer folds of the corpus's 5 shapes: refused by the library, exit 2 too. */
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", corpus, "--hw", "h200", "--candidates", cands, "--outer", "6",
              "--quiet", NULL);
    t_cli_expect_error(r, 2, "calibrate select", "6 folds need at least 6 shapes");
    free(r);
}
