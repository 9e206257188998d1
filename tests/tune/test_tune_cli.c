/*
 * duet tune and duet derive-candidates as a user meets them: exit codes, messages, files.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <sys/wait.h>

#include "../cli_run.h"
#include "tune_util.h"

Test(tune_cli, tuning_a_workload_says_it_needs_the_gpu_build, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    t_cli_t *t = malloc(sizeof(*t));
    t_cli_run(t, NULL, "tune", "--collective", "all_gather", "--gemm", "8192x8192x8192", "--comm", "4096x8192", NULL);
    cr_assert_eq(t->code, 2, "exit %d: %s", t->code, t->err);
    cr_assert(strncmp(t->err, "duet: tune: ", 12) == 0, "%s", t->err);
    cr_assert(strstr(t->err, "needs a GPU build: make gpu") != NULL, "%s", t->err);
    cr_assert_str_eq(t->out, "");
    struct stat sb;
    cr_assert_neq(stat(getenv("DUET_CACHE"), &sb), 0, "no fake tuning, no database");

    t_cli_run(t, NULL, "tune", NULL);
    cr_assert_eq(t->code, 2);
    cr_assert(strstr(t->err, "nothing to do") != NULL, "%s", t->err);
    t_cli_run(t, NULL, "tune", "--list", "--clear", NULL);
    cr_assert_eq(t->code, 2);
    cr_assert(strstr(t->err, "only one of") != NULL, "%s", t->err);
    t_cli_run(t, NULL, "tune", "--top", "0", "--list", NULL);
    cr_assert_eq(t->code, 2);
    t_cli_run(t, NULL, "tune", "--evaluate", NULL);
    cr_assert_eq(t->code, 2);
    cr_assert(strstr(t->err, "--corpus") != NULL, "%s", t->err);
    t_cli_run(t, NULL, "tune", "--help", NULL);
    cr_assert_eq(t->code, 0);
    cr_assert(strstr(t->out, "examples:") != NULL);
    free(t);
    tt_rmdir(dir);
}

Test(tune_cli, list_and_clear_the_database, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    t_cli_t *t = malloc(sizeof(*t));
    t_cli_run(t, NULL, "tune", "--list", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    cr_assert(strstr(t->out, ": 0 entries") != NULL, "%s", t->out);

    /* Two winners stored by the library, as a GPU run would. */
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_tune_params_t p = duet_tune_default_params();
    p.top_k = 2;
    p.warn = tt_warn;
    p.warn_user = &w;
    duet_tune_result_t *r = malloc(sizeof(*r));
    for (int i = 0; i < 2; i++) {
        duet_workload_t wl = t_wl(1024 * (i + 1), 2048, 2048, DUET_COLL_ALL_REDUCE, 512, 2048, 2);
        tt_bench_t b = {.target = 100};
        cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, r), DUET_OK);
        cr_assert_eq(r->stored, 1);
    }
    t_cli_run(t, NULL, "tune", "--list", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    cr_assert(strstr(t->out, ": 2 entries") != NULL, "%s", t->out);
    cr_assert(strstr(t->out, "1024x2048x2048") != NULL && strstr(t->out, "2048x2048x2048") != NULL, "%s", t->out);
    cr_assert(strstr(t->out, "all_reduce") != NULL);

    t_cli_run(t, NULL, "tune", "--list", "--json", NULL);
    cr_assert_eq(t->code, 0);
    cJSON *doc = cJSON_Parse(t->out);
    cr_assert_str_eq(cJSON_GetObjectItem(doc, "schema")->valuestring, "duet-tune-list/1");
    const cJSON *arr = cJSON_GetObjectItem(doc, "entries");
    cr_assert(cJSON_IsArray(arr), "%s", t->out);
    cr_assert_eq(cJSON_GetArraySize(arr), 2);
    const cJSON *e0 = cJSON_GetArrayItem(arr, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(e0, "arch")->valuestring, "sm_90");
    cr_assert(strncmp(cJSON_GetObjectItem(e0, "key")->valuestring, "arch=sm_90|sms=132|", 19) == 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(e0, "candidates")), r->n_cands);
    cJSON_Delete(doc);

    t_cli_run(t, NULL, "tune", "--clear", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    cr_assert(strstr(t->out, "cleared") != NULL);
    t_cli_run(t, NULL, "tune", "--list", NULL);
    cr_assert(strstr(t->out, ": 0 entries") != NULL, "%s", t->out);
    free(r);
    free(t);
    tt_rmdir(dir);
}

Test(tune_cli, derive_candidates_and_evaluate_on_a_corpus_file, T_TIMEOUT)
{
    char dir[64], corpus[128], out[128];
    tt_tmpdir(dir, sizeof(dir));
    /* An H200 corpus: three shapes on a 2 x 3 grid that holds the default (99, 256x128x64). */
    duet_corpus_t c = tt_corpus("sm_90", 132, 2);
    static const int32_t gw[3] = {80, 99, 120};
    static const duet_gemm_tile_t tiles[2] = {{256, 128, 64}, {256, 256, 64}};
    for (int s = 0; s < 3; s++) {
        duet_workload_t wl = t_wl(2048 << s, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
        for (int i = 0; i < 6; i++) {
            double v = 1.0 + 0.02 * (double)((i + 2 * s) % 6);
            duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, 132, gw[i / 2], 132 - gw[i / 2], tiles[i % 2], v);
            cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
        }
    }
    snprintf(corpus, sizeof(corpus), "%s/h200.json", dir);
    snprintf(out, sizeof(out), "%s/sub/candidate_set.json", dir);
    cr_assert_eq(duet_corpus_save(&c, corpus), DUET_OK);
    duet_corpus_free(&c);

    t_cli_t *t = malloc(sizeof(*t));
    /* Shape s is covered by grid points (6 - 2s) % 6 and the next one only: three are needed. */
    char sub[160];
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    mkdir(sub, 0755);
    t_cli_run(t, NULL, "derive-candidates", "--corpus", corpus, NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    cr_assert(strstr(t->out, "sm_90: 3 shapes") != NULL, "%s", t->out);
    t_cli_run(t, NULL, "derive-candidates", "--corpus", corpus, "--json", "-o", out, NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    cr_assert_str_eq(t->out, "", "the result went to the file");
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_load(out, &set), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(set.n_archs, 1);
    cr_assert_eq(set.archs[0].n_order, 3);
    cr_assert_eq(set.archs[0].coverage[2].share_within_tol, 1.0);
    duet_hw_t hw = t_hw("h200");
    duet_tune_params_t dp = duet_tune_default_params();
    duet_config_t first = duet_tune_cand_config(&set.archs[0].order[0], &hw, 0, 0, 0),
                  dflt = duet_tune_static_default(&hw, &dp);
    int lead_is_default = memcmp(&first, &dflt, sizeof(first)) == 0;
    duet_tune_candset_free(&set);

    t_cli_run(t, NULL, "derive-candidates", "--corpus", corpus, "--json", NULL);
    cr_assert_eq(t->code, 0);
    cJSON *j = cJSON_Parse(t->out);
    cr_assert_not_null(j, "%s", t->out);
    cr_assert_str_eq(cJSON_GetObjectItem(j, "schema")->valuestring, DUET_TUNE_CANDSET_SCHEMA);
    cJSON_Delete(j);
    t_cli_run(t, NULL, "derive-candidates", NULL);
    cr_assert_eq(t->code, 2);
    t_cli_run(t, NULL, "derive-candidates", "--corpus", "/nonexistent/c.json", NULL);
    cr_assert_eq(t->code, 2, "%s", t->err);
    cr_assert(strncmp(t->err, "duet: derive-candidates: ", 25) == 0, "%s", t->err);

    t_cli_run(t, NULL, "tune", "--evaluate", "--corpus", corpus, "--hw", "h200", "--top", "8", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    cr_assert(strstr(t->out, "tuner replayed on 3 shapes") != NULL, "%s", t->out);
    /* 6 grid points, top 8: every point is benchmarked, so tuned = oracle. */
    cr_assert(strstr(t->out, "median 1.0000, max 1.0000") != NULL, "%s", t->out);
    cr_assert(strstr(t->out, "tuned slower than the static default: 0") != NULL, "%s", t->out);

    t_cli_run(t, NULL, "tune", "--evaluate", corpus, "--json", "--top", "1", "--candidates", out, "--lead",
              "candidates", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    j = cJSON_Parse(t->out);
    cr_assert_not_null(j, "%s", t->out);
    const cJSON *sum = cJSON_GetObjectItem(j, "summary");
    cr_assert_eq(cJSON_GetObjectItem(sum, "n_shapes")->valueint, 3);
    cr_assert_eq(cJSON_GetObjectItem(sum, "n_tuned_slower_than_default")->valueint, 0);
    /* The set's first configuration leads (top 1) and the default follows. */
    const cJSON *s0 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "shapes"), 0);
    cr_assert_eq(cJSON_GetObjectItem(s0, "n_cands")->valueint, lead_is_default ? 1 : 2);
    /* Shape 0 measured grid point i at 1 + 0.02 i; the pick is the better of the lead and the default (i = 2). */
    int gi = first.gemm_wgs == 80 ? 0 : first.gemm_wgs == 99 ? 1 : 2, fi = gi * 2 + (first.tile.bn == 256);
    double lead_ms = 1.0 + 0.02 * fi, want = fmin(lead_ms, 1.04);
    const cJSON *tuned = cJSON_GetObjectItem(s0, "tuned");
    cr_assert_str_eq(cJSON_GetObjectItem(j, "schema")->valuestring, "duet-tune-evaluate/1");
    cr_assert(t_rel_eq(cJSON_GetObjectItem(tuned, "us")->valuedouble, want * 1e3, 1e-12), "lead %d", fi);
    cr_assert_str_eq(cJSON_GetObjectItem(tuned, "source")->valuestring, lead_ms < 1.04 ? "candidate_set" : "default");
    cJSON_Delete(j);
    free(t);
    tt_rmdir(dir);
}
