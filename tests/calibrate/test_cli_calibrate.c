/*
 * `duet calibrate` and `duet validate` as a user meets them: exit codes (0 ok, 1 failed, 2 bad
 * usage or input), one-line "duet: <what>: <why>" messages for corrupt and partial corpora, and
 * outputs that appear together or not at all.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "synth.h"

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* The synthetic corpus saved to a file (measured by the simulator on the h200 profile). */
static void save_synthetic(const char *path, double noise)
{
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, noise);
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK, "%s", duet_last_error());
    duet_corpus_free(&c);
}

Test(cli_calibrate, subcommands_and_help, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    t_cli_run(r, NULL, "calibrate", NULL);
    cr_assert_eq(r->code, 2);
    cr_assert(strstr(r->err, "collect") != NULL && strstr(r->err, "needs a GPU build (make gpu)") != NULL, "%s",
              r->err);
    cr_assert(strstr(r->err, "fit") != NULL);
    t_cli_run(r, NULL, "calibrate", "--help", NULL);
    cr_assert_eq(r->code, 0);
    cr_assert(strstr(r->out, "needs a GPU build (make gpu)") != NULL, "%s", r->out);
    t_cli_run(r, NULL, "calibrate", "frobnicate", NULL);
    cr_assert_eq(r->code, 2);
    cr_assert(strncmp(r->err, "duet: calibrate: unknown subcommand 'frobnicate'", 48) == 0, "%s", r->err);
    cr_assert(strstr(r->err, "needs a GPU build (make gpu)") != NULL, "the help follows: %s", r->err);
    t_cli_run(r, NULL, "calibrate", "collect", "--hw", "mi300x", "-o", "x.json", NULL);
    t_cli_expect_error(r, 2, "calibrate collect", "needs a GPU build (make gpu)");
    t_cli_run(r, NULL, "calibrate", "fit", "--help", NULL);
    cr_assert_eq(r->code, 0);
    cr_assert(strstr(r->out, "--corpus FILE...") != NULL && strstr(r->out, "examples:") != NULL);
    t_cli_run(r, NULL, "validate", "--help", NULL);
    cr_assert_eq(r->code, 0);
    cr_assert(strstr(r->out, "reference design's rules") != NULL);
    t_cli_run(r, NULL, "--help", NULL);
    cr_assert(strstr(r->out, "calibrate") != NULL && strstr(r->out, "validate") != NULL);
    free(r);
}

Test(cli_calibrate, fit_writes_profile_and_report_then_validate_reads_them, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char corpus[96], prof[96], rep[96];
    t_tmp(corpus, sizeof(corpus), "corpus.json");
    t_tmp(prof, sizeof(prof), "fitted.json");
    t_tmp(rep, sizeof(rep), "report.json");
    save_synthetic(corpus, 0.01);
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, "--report", rep, "--params",
              "gemm_eff_fp16,gemm_eff_bf16,link_gbs,cta_push_gbs", "--folds", "5", "--date", "2026-12-01", "--name",
              "h200-test", NULL);
    cr_assert_eq(r->code, 0, "stderr: %s", r->err);
    cr_assert(strstr(r->out, "exact pick") != NULL && strstr(r->out, "held out (5-f)") != NULL, "%s", r->out);
    cr_assert(strstr(r->out, "seed_link_gbs fitted to") != NULL, "%s", r->out);
    cr_assert(strstr(r->err, "/12 done] ") != NULL && strstr(r->err, "s left") != NULL, "progress on stderr: %s",
              r->err);

    /* The profile loads, carries the fit's sources and the new name. */
    duet_hw_t hw;
    cr_assert_eq(duet_hw_load(prof, &hw), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(hw.name, "h200-test");
    char want[160];
    /* The sources name the corpus and the kernels it measured (this build's). */
    snprintf(want, sizeof(want), "fit: %s (kernels %s), 2026-12-01, +-", corpus, duet_build_info().kernel_commit);
    cr_assert(strncmp(hw.source[DUET_HW_F_link_gbs], want, strlen(want)) == 0, "%s", hw.source[DUET_HW_F_link_gbs]);
    duet_hw_t h200 = t_hw("h200");
    cr_assert_str_eq(hw.source[DUET_HW_F_hbm_gbs], h200.source[DUET_HW_F_hbm_gbs]);
    /* The known error of a mode with held-out rows (fused) is the fit's, with its source; a mode
     * without rows (vendor: the synthetic corpus has none) keeps the base profile's. */
    snprintf(want, sizeof(want), "fit: k-fold held-out, %s (kernels %s), 2026-12-01, p90 of ", corpus,
             duet_build_info().kernel_commit);
    cr_assert(strncmp(hw.source[DUET_HW_F_err_fused], want, strlen(want)) == 0, "%s", hw.source[DUET_HW_F_err_fused]);
    cr_assert_str_eq(hw.source[DUET_HW_F_err_vendor], h200.source[DUET_HW_F_err_vendor]);
    cr_assert_eq(hw.err_vendor, h200.err_vendor);
    cr_assert(strstr(r->out, "known error per mode (held out") != NULL, "%s", r->out);

    /* validate: the table, then JSON. */
    t_cli_run(r, NULL, "validate", "--corpus", corpus, "--hw", prof, "--quiet", NULL);
    cr_assert_eq(r->code, 0, "stderr: %s", r->err);
    cr_assert(strstr(r->out, "duet (fluid)") != NULL && strstr(r->out, "reference rules") != NULL, "%s", r->out);
    cr_assert(strstr(r->out, "top-8 within 3 % of the best") != NULL, "%s", r->out);
    cr_assert_str_eq(r->err, "", "--quiet");
    t_cli_run(r, NULL, "validate", "--corpus", corpus, "--hw", prof, "--json", "--quiet", NULL);
    cr_assert_eq(r->code, 0, "stderr: %s", r->err);
    cJSON *o = cJSON_Parse(r->out);
    cr_assert_not_null(o, "%s", r->out);
    cJSON *model = cJSON_GetObjectItem(o, "model");
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(model, "ape_median")));
    /* 1 % noise and the true model: the fitted profile predicts within the noise. */
    cr_assert_lt(cJSON_GetObjectItem(model, "ape_median")->valuedouble, 0.02);
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "reference_rules"), "seed_link_gbs")));
    cr_assert_eq(cJSON_GetObjectItem(o, "shapes")->valueint, 5);
    cJSON_Delete(o);
    unlink(corpus);
    unlink(prof);
    unlink(rep);
    free(r);
}

Test(cli_calibrate, corrupt_and_partial_corpora_exit_2_with_one_line, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char good[96], bad[96], prof[96], rep[96];
    t_tmp(good, sizeof(good), "good.json");
    t_tmp(bad, sizeof(bad), "bad.json");
    t_tmp(prof, sizeof(prof), "p.json");
    t_tmp(rep, sizeof(rep), "r.json");
    save_synthetic(good, 0.0);
    char *text = NULL;
    {
        FILE *f = fopen(good, "rb");
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        text = malloc((size_t)n + 1);
        size_t got = fread(text, 1, (size_t)n, f);
        text[got] = '\0';
        fclose(f);
    }
#define FIT(...)                                                                                                       \
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", __VA_ARGS__, "-o", prof, "--report", rep, "--quiet", NULL)

    /* Truncated mid-file (a copy cut short). */
    char *cut = strdup(text);
    cut[strlen(cut) / 2] = '\0';
    cr_assert_eq(t_spill(bad, cut), 0);
    FIT(bad, "--hw", "h200");
    t_cli_expect_error(r, 2, "calibrate fit", "not valid JSON");
    t_cli_run(r, NULL, "validate", "--corpus", bad, "--hw", "h200", NULL);
    t_cli_expect_error(r, 2, "validate", "not valid JSON");

    /* No rows at all. */
    duet_corpus_t c = t_corpus_header(132, 2);
    duet_corpus_save(&c, bad);
    FIT(bad, "--hw", "h200");
    t_cli_expect_error(r, 2, "calibrate fit", "the corpus has no rows");
    t_cli_run(r, NULL, "validate", "--corpus", bad, "--hw", "h200", NULL);
    t_cli_expect_error(r, 2, "validate", "the corpus has no rows");

    /* Every row failed. */
    duet_hw_t h200 = t_hw("h200");
    duet_corpus_t s = t_synthetic_corpus(&h200, &duet_sim_policy_fluid, 0.0);
    for (size_t i = 0; i < s.n; i++) {
        s.rows[i].ok = 0;
        s.rows[i].ms = s.rows[i].min_ms = s.rows[i].max_ms = 0;
        snprintf(s.rows[i].error, sizeof(s.rows[i].error), "hipErrorPeerAccessNotEnabled");
    }
    duet_corpus_save(&s, bad);
    FIT(bad, "--hw", "h200");
    t_cli_expect_error(r, 2, "calibrate fit",
                       "all 90 rows are failed measurements (the first says: hipErrorPeerAccess");

    /* A corpus of another world: rows of world 2 in a file that says world 4. */
    char *w4 = strdup(text);
    char *at = strstr(w4, "\"world\": 2,");
    cr_assert_not_null(at);
    at[9] = '4';
    cr_assert_eq(t_spill(bad, w4), 0);
    FIT(bad, "--hw", "h200");
    t_cli_expect_error(r, 2, "calibrate fit", "differs from the corpus's world 4");

    /* Measured on another device: refused by name, and forced, by the SM count the configurations
     * are made of. */
    FIT(good, "--hw", "mi300x");
    t_cli_expect_error(r, 2, "calibrate fit",
                       "good.json was measured on NVIDIA H200, but base profile mi300x is of AMD Instinct MI300X: "
                       "give its profile (--hw h200), or pass --allow-device-mix");
    FIT(good, "--hw", "mi300x", "--allow-device-mix");
    cr_assert_eq(r->code, 2, "%s", r->err);
    cr_assert(strstr(r->err, "duet: calibrate fit: warning: ") == r->err, "%s", r->err);
    cr_assert(strstr(r->err, "measured on NVIDIA H200 with 132 SMs, but profile mi300x has 304 SMs"), "%s", r->err);
    t_cli_run(r, NULL, "validate", "--corpus", good, "--hw", "mi300x", "--allow-device-mix", NULL);
    cr_assert_eq(r->code, 2, "%s", r->err);
    cr_assert(strstr(r->err, "but profile mi300x has 304 SMs"), "%s", r->err);

    /* A missing file; a second corpus that is bad names that file. */
    FIT("/nonexistent/corpus.json", "--hw", "h200");
    t_cli_expect_error(r, 2, "calibrate fit", "/nonexistent/corpus.json");
    cr_assert_eq(t_spill(bad, "{\"schema\": \"duet-corpus/0\"}"), 0);
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", good, bad, "--hw", "h200", "-o", prof, "--report", rep, NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "is not \"duet-corpus/2\" (or \"duet-corpus/1\", its layout in ms)");

    /* Nothing was written by any of these. */
    cr_assert(!exists(prof) && !exists(rep));

    /* Some failed rows are fine: they are left out and counted. */
    duet_corpus_t part = t_synthetic_corpus(&h200, &duet_sim_policy_fluid, 0.0);
    for (size_t i = 0; i < part.n; i += 7) {
        part.rows[i].ok = 0;
        snprintf(part.rows[i].error, sizeof(part.rows[i].error), "timed out");
    }
    duet_corpus_save(&part, bad);
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", bad, "--hw", "h200", "-o", prof, "--report", rep, "--params",
              "link_gbs,cta_push_gbs", "--folds", "0", "--quiet", NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    cr_assert(strstr(r->out, "90 rows (13 failed)") != NULL, "%s", r->out);
    cr_assert(exists(prof) && exists(rep));
    unlink(prof);
    unlink(rep);
#undef FIT
    duet_corpus_free(&part);
    duet_corpus_free(&s);
    duet_corpus_free(&c);
    free(w4);
    free(cut);
    free(text);
    unlink(good);
    unlink(bad);
    free(r);
}

Test(cli_calibrate, bad_usage_exits_2_and_failures_exit_1, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char corpus[96], prof[96], rep[96];
    t_tmp(corpus, sizeof(corpus), "c.json");
    t_tmp(prof, sizeof(prof), "p.json");
    t_tmp(rep, sizeof(rep), "r.json");
    save_synthetic(corpus, 0.0);

    t_cli_run(r, NULL, "calibrate", "fit", "--hw", "h200", "-o", prof, "--report", rep, NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "give at least one --corpus FILE");
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "-o", prof, "--report", rep, NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "--hw");
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "--report REPORT.json");
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, "--report", rep, "--params",
              "gemm_eff_fp16,warp_speed", NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "'warp_speed' is not a profile constant");
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, "--report", rep, "--folds",
              "-1", NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "--folds");
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, "--report", rep, "--folds",
              "9", "--quiet", NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "9 folds need at least 9 shapes, but the corpora have 5");
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, "--report", rep, "--bogus",
              NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "--bogus");
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "nosuch-gpu", "-o", prof, "--report", rep, NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "nosuch-gpu");
    t_cli_run(r, NULL, "validate", "--corpus", corpus, NULL);
    t_cli_expect_error(r, 2, "validate", "--hw");
    t_cli_run(r, NULL, "validate", "--hw", "h200", NULL);
    t_cli_expect_error(r, 2, "validate", "--corpus");

    /* The iteration limit: not converged, nothing written, exit 1 ... */
    duet_hw_t base = t_hw("h200");
    base.link_gbs = 250;
    base.cta_push_gbs = 30;
    char basef[96];
    t_tmp(basef, sizeof(basef), "base.json");
    cr_assert_eq(duet_hw_save(&base, basef), DUET_OK);
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", basef, "-o", prof, "--report", rep, "--params",
              "link_gbs,cta_push_gbs,link_half_inflight_kib", "--folds", "0", "--max-iter", "1", "--quiet", NULL);
    t_cli_expect_error(r, 1, "calibrate fit", "without converging (iteration limit (1) after 1 iterations)");
    cr_assert(!exists(prof) && !exists(rep));
    /* ... unless asked to write it anyway (a warning then). */
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", basef, "-o", prof, "--report", rep, "--params",
              "link_gbs,cta_push_gbs,link_half_inflight_kib", "--folds", "0", "--max-iter", "1", "--quiet",
              "--accept-unconverged", NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    cr_assert(strstr(r->err, "warning: the fit did not converge") != NULL, "%s", r->err);
    cr_assert(exists(prof) && exists(rep));
    unlink(prof);
    unlink(rep);

    /* An output in a folder that does not exist: exit 2 before the fit, and neither file is left. */
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", "/nonexistent-dir/p.json",
              "--report", rep, "--params", "link_gbs", "--folds", "0", "--quiet", NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "-o: /nonexistent-dir: no such folder");
    cr_assert(!exists(rep), "nothing written");
    /* An output that cannot be written (the profile over a folder): exit 2, and the report goes with it. */
    char folder[96];
    t_tmp(folder, sizeof(folder), "a-folder");
    cr_assert_eq(mkdir(folder, 0755), 0);
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", folder, "--report", rep,
              "--params", "link_gbs", "--folds", "0", "--quiet", NULL);
    t_cli_expect_error(r, 2, "calibrate fit", "is a folder");
    cr_assert(!exists(rep), "the report went with the failed profile");
    rmdir(folder);
    unlink(basef);
    unlink(corpus);
    free(r);
}

Test(cli_calibrate, k_split_rows_fit_splitk_sm_gbs_by_default_and_validate, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char corpus[96], prof[96], rep[96], rows[96];
    t_tmp(corpus, sizeof(corpus), "kcorpus.json");
    t_tmp(prof, sizeof(prof), "kfitted.json");
    t_tmp(rep, sizeof(rep), "kreport.json");
    t_tmp(rows, sizeof(rows), "krows.csv");
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    t_add_split_rows(&c, &truth);
    cr_assert_eq(duet_corpus_save(&c, corpus), DUET_OK, "%s", duet_last_error());
    duet_corpus_free(&c);
    /* No --params: the default list, with splitk_sm_gbs because the corpus has split rows. */
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, "--report", rep, "--folds",
              "2", "--quiet", NULL);
    cr_assert_eq(r->code, 0, "stderr: %s", r->err);
    cr_assert(strstr(r->out, "\nsplitk_sm_gbs ") != NULL, "%s", r->out);
    cr_assert(strstr(r->out, "concurrent and K-split rows are not predicted by them") != NULL, "%s", r->out);
    /* validate predicts the split rows; --rows names their tiles with the split. */
    t_cli_run(r, NULL, "validate", "--corpus", corpus, "--hw", prof, "--rows", rows, "--quiet", NULL);
    cr_assert_eq(r->code, 0, "stderr: %s", r->err);
    FILE *f = fopen(rows, "r");
    cr_assert_not_null(f);
    char line[1024];
    int split2 = 0, split4 = 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        split2 += strstr(line, ",256x128x64/k2,") != NULL;
        split4 += strstr(line, ",256x128x64/k4,") != NULL;
    }
    fclose(f);
    cr_assert(split2 == 3 && split4 == 3, "%d and %d split rows", split2, split4);
    unlink(corpus);
    unlink(prof);
    unlink(rep);
    unlink(rows);
    free(r);
}

/* Read a --rows CSV: the header, then per measured row its measured and predicted times (us). */
static int read_rows_csv(const char *path, double *ms, double *pred, double *held, int *fold, int max)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char line[1024];
    cr_assert_not_null(fgets(line, sizeof(line), f));
    cr_assert(strncmp(line, "corpus,index,shape,fold,kind,", 29) == 0, "header: %s", line);
    cr_assert(strstr(line, ",us,min_us,max_us,pred_us,held_out_us\n") != NULL, "header: %s", line);
    int n = 0;
    while (n < max && fgets(line, sizeof(line), f) != NULL) {
        /* Columns 4 (fold) and the last five; no field is quoted, an empty one is a value missing. */
        char *col[32];
        int nc = 0;
        line[strcspn(line, "\n")] = '\0';
        for (char *s = line; nc < 32; s++) {
            col[nc++] = s;
            s = strchr(s, ',');
            if (s == NULL)
                break;
            *s = '\0';
        }
        cr_assert_eq(nc, 25, "25 columns, got %d", nc);
        fold[n] = atoi(col[3]);
        ms[n] = strtod(col[20], NULL);
        pred[n] = strtod(col[23], NULL);
        held[n] = col[24][0] != '\0' ? strtod(col[24], NULL) : NAN;
        n++;
    }
    fclose(f);
    return n;
}

Test(cli_calibrate, rows_dump_per_row_predictions, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char corpus[96], prof[96], rep[96], rows[96], vrows[96];
    t_tmp(corpus, sizeof(corpus), "rcorpus.json");
    t_tmp(prof, sizeof(prof), "rfitted.json");
    t_tmp(rep, sizeof(rep), "rreport.json");
    t_tmp(rows, sizeof(rows), "rows.csv");
    t_tmp(vrows, sizeof(vrows), "vrows.csv");
    save_synthetic(corpus, 0.01);
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_load(corpus, &c), DUET_OK, "%s", duet_last_error());
    int measured = 0;
    for (size_t i = 0; i < c.n; i++)
        measured += c.rows[i].ok != 0;
    duet_corpus_free(&c);
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, "--report", rep, "--params",
              "gemm_eff_fp16,link_gbs", "--folds", "3", "--rows", rows, "--quiet", NULL);
    cr_assert_eq(r->code, 0, "stderr: %s", r->err);
    enum { MAX = 4096 };
    double *ms = calloc(4 * MAX, sizeof(double));
    double *pred = ms + MAX, *held = ms + 2 * MAX, *vpred = ms + 3 * MAX;
    int fold[MAX], vfold[MAX];
    int n = read_rows_csv(rows, ms, pred, held, fold, MAX);
    cr_assert_eq(n, measured, "one line per measured row: %d of %d", n, measured);
    for (int i = 0; i < n; i++) {
        cr_assert(fold[i] >= 0 && fold[i] < 3, "row %d: fold %d", i, fold[i]);
        cr_assert(ms[i] > 0 && pred[i] > 0 && held[i] > 0, "row %d: %g %g %g", i, ms[i], pred[i], held[i]);
        /* 1 % noise on the true model: both predictions are close to the measurement. */
        cr_assert(fabs(pred[i] / ms[i] - 1) < 0.1 && fabs(held[i] / ms[i] - 1) < 0.1, "row %d", i);
    }
    /* validate --rows predicts the same rows with the fitted profile: the fit's own predictions. */
    t_cli_run(r, NULL, "validate", "--corpus", corpus, "--hw", prof, "--rows", vrows, "--quiet", NULL);
    cr_assert_eq(r->code, 0, "stderr: %s", r->err);
    double *vms = calloc(2 * MAX, sizeof(double)), *vheld = vms + MAX;
    cr_assert_eq(read_rows_csv(vrows, vms, vpred, vheld, vfold, MAX), n);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(vms[i], ms[i]);
        cr_assert(t_rel_eq(vpred[i], pred[i], 1e-5), "row %d: %g against %g", i, vpred[i], pred[i]);
        cr_assert(vfold[i] == -1 && isnan(vheld[i]), "validate has no folds");
    }
    /* A --rows file in a folder that does not exist: exit 2 before the work, nothing written. */
    t_cli_run(r, NULL, "validate", "--corpus", corpus, "--hw", prof, "--rows", "/nonexistent/dir/rows.csv", "--quiet",
              NULL);
    t_cli_expect_error(r, 2, "validate", "--rows: /nonexistent/dir: no such folder");
    free(vms);
    free(ms);
    unlink(corpus);
    unlink(prof);
    unlink(rep);
    unlink(rows);
    unlink(vrows);
    free(r);
}
