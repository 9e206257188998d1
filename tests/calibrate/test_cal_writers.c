/*
 * What the calibration layer writes when its callers leave things out: corpora without names are
 * "corpus", a missing profile or base name is "", unrecorded provenance and undecided verdicts are
 * null; a fitted profile's known errors are clamped to their fields' bounds and name the corpora
 * they came from; an invalid profile is not saved (neither file of the pair); the rows file.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "duet/calibrate.h"

TestSuite(cal_writers, T_TIMEOUT);

static cJSON *parse(const char *text)
{
    cJSON *o = cJSON_Parse(text);
    cr_assert_not_null(o, "%s", text);
    return o;
}

/* The strings of array `key` of o, joined by spaces. */
static void strings_of(const cJSON *o, const char *key, char *out, size_t n)
{
    const cJSON *arr = cJSON_GetObjectItem(o, key), *it;
    cr_assert(cJSON_IsArray(arr), "%s", key);
    out[0] = '\0';
    cJSON_ArrayForEach(it, arr)
    {
        size_t used = strlen(out);
        snprintf(out + used, n - used, "%s%s", used ? " " : "", it->valuestring);
    }
}

/* A report of one fitted constant (link_gbs, 400 GB/s, no standard error) on the h200 profile. */
static duet_cal_report_t *small_report(void)
{
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    rep->model.fit.hw = t_hw("h200");
    rep->model.fit.policy = "fluid";
    rep->model.fit.n_params = 1;
    rep->model.fit.params[0] = (duet_cal_param_result_t){DUET_HW_F_link_gbs, 350, 400, NAN, NAN, 1, 0, -1, 0};
    rep->model.fit.hw.link_gbs = 400;
    for (int m = 0; m < DUET_MODE_COUNT; m++)
        rep->model.mode_err[m] = NAN;
    return rep;
}

Test(cal_writers, a_saved_fit_clamps_the_known_errors_and_names_unnamed_corpora)
{
    char profile[256], report[256];
    t_tmp_path(profile, sizeof(profile), "fit.json");
    t_tmp_path(report, sizeof(report), "fit-report.json");
    duet_cal_report_t *rep = small_report();
    /* Fused: far above its field's maximum; concurrent: below its minimum; vendor: no row held out. */
    const duet_hw_field_info_t *ff = duet_hw_field_info(DUET_HW_F_err_fused);
    const duet_hw_field_info_t *fc = duet_hw_field_info(DUET_HW_F_err_concurrent);
    rep->model.mode_err[DUET_MODE_FUSED] = ff->max * 10;
    rep->model.mode_err_rows[DUET_MODE_FUSED] = 12;
    rep->model.mode_err[DUET_MODE_CONCURRENT] = fc->min - 1;
    rep->model.mode_err_rows[DUET_MODE_CONCURRENT] = 3;
    rep->model.mode_err[DUET_MODE_VENDOR] = 0.5;
    rep->model.mode_err_rows[DUET_MODE_VENDOR] = 0;
    duet_hw_t h200 = t_hw("h200");
    cr_assert_eq(duet_cal_fit_save(rep, NULL, 2, NULL, NULL, "2026-12-01", profile, report), DUET_OK, "%s",
                 duet_last_error());
    duet_hw_t back;
    cr_assert_eq(duet_hw_load(profile, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.err_fused, ff->max);
    cr_assert_eq(back.err_concurrent, fc->min);
    cr_assert_eq(back.err_vendor, h200.err_vendor, "no row: the profile keeps its own figure");
    cr_assert_str_eq(back.source[DUET_HW_F_err_fused],
                     "fit: k-fold held-out, corpus corpus, 2026-12-01, p90 of 12 op rows");
    cr_assert_str_eq(back.source[DUET_HW_F_link_gbs], "fit: corpus corpus, 2026-12-01, +-undetermined");
    cr_assert_eq(back.link_gbs, 400);
    cr_assert_str_eq(back.name, "h200", "the base's name when the caller gives none");

    char *text = t_slurp(report), list[256];
    cJSON *o = parse(text);
    free(text);
    strings_of(o, "corpora", list, sizeof(list));
    cr_assert_str_eq(list, "corpus corpus");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "base_profile")->valuestring, "");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "reference_rules")));
    cJSON_Delete(o);
    free(rep);
}

Test(cal_writers, an_invalid_fitted_profile_is_not_saved)
{
    char profile[256], report[256];
    t_tmp_path(profile, sizeof(profile), "fit.json");
    t_tmp_path(report, sizeof(report), "fit-report.json");
    duet_cal_report_t *rep = small_report();
    rep->model.fit.hw.n_sms = 0;
    cr_assert_eq(duet_cal_fit_save(rep, NULL, 1, "h200", "mine", NULL, profile, report), DUET_ERR_INVALID_ARG);
    cr_assert_eq(access(profile, F_OK), -1);
    cr_assert_eq(access(report, F_OK), -1);
    free(rep);
}

Test(cal_writers, a_validation_without_names_or_provenance)
{
    duet_cal_validation_t *v = calloc(1, sizeof(*v));
    const char *files[2] = {"a.json", NULL};
    char *text = NULL, list[256];
    cr_assert_eq(duet_cal_validation_to_json(v, files, 2, NULL, &text), DUET_OK, "%s", duet_last_error());
    cJSON *o = parse(text);
    free(text);
    strings_of(o, "corpora", list, sizeof(list));
    cr_assert_str_eq(list, "a.json corpus");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "profile")->valuestring, "");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(o, "targets")));
    cJSON_Delete(o);

    /* A target table whose test set recorded nothing, the reference rules without a workload. */
    duet_cal_eval_row_t r[2] = {{0, DUET_ROW_OP, 0, 1.0, 1.0, 1.0, NAN, DUET_MODE_FUSED, 0, 0},
                                {0, DUET_ROW_OP, 0, 1.1, 1.1, 1.2, NAN, DUET_MODE_FUSED, 0, 0}};
    duet_cal_eval_t e;
    cr_assert_eq(duet_cal_eval_compute(r, 2, 1, 20, 1, &e), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_cal_validation_targets_to_json(v, &e, NULL, 1, files + 1, 1, "h200", &text), DUET_OK, "%s",
                 duet_last_error());
    o = parse(text);
    free(text);
    strings_of(o, "corpora", list, sizeof(list));
    cr_assert_str_eq(list, "corpus");
    const cJSON *t = cJSON_GetObjectItem(o, "targets"), *ts = cJSON_GetObjectItem(t, "test_set");
    strings_of(ts, "sweep2_corpora", list, sizeof(list));
    cr_assert_str_eq(list, "corpus");
    static const char *const unrecorded[] = {"shapes", "seed",       "kernel_commit",
                                             "date",   "order_seed", "sweep2_order_seed"};
    for (size_t i = 0; i < sizeof(unrecorded) / sizeof(unrecorded[0]); i++)
        cr_assert(cJSON_IsNull(cJSON_GetObjectItem(ts, unrecorded[i])), "%s", unrecorded[i]);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "better_than_reference"), "met")));
    cr_assert(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetObjectItem(t, "better_than_reference_all_modes"), "met")));
    /* The pick is the best (the faster row predicted faster): its target (>= 0.9) met. */
    const cJSON *pick = cJSON_GetObjectItem(cJSON_GetObjectItem(t, "figures"), "pick");
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(pick, "met")));
    cJSON_Delete(o);
    free(v);
}

Test(cal_writers, a_selection_and_a_report_without_names)
{
    char path[256], *text = NULL, list[256];
    duet_hw_t base = t_hw("h200");
    duet_cal_candidates_t cands;
    cr_assert_eq(duet_cal_candidates_parse("only launch_us launch_us=7.5\n", "c", &base, &cands), DUET_OK, "%s",
                 duet_last_error());
    duet_cal_selection_t *sel = calloc(1, sizeof(*sel));
    sel->fit.hw = base;
    cr_assert_eq(duet_cal_selection_to_json(sel, &cands, NULL, 1, NULL, &text), DUET_OK, "%s", duet_last_error());
    cJSON *o = parse(text);
    free(text);
    strings_of(o, "corpora", list, sizeof(list));
    cr_assert_str_eq(list, "corpus");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "base_profile")->valuestring, "");
    const cJSON *c0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "candidates"), 0);
    cr_assert_eq(t_num(cJSON_GetObjectItem(c0, "start"), "launch_us"), 7.5);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "all_data"), "picked")->valuestring, "only");
    cJSON_Delete(o);
    free(sel);

    duet_cal_report_t *rep = small_report();
    t_tmp_path(path, sizeof(path), "report.json");
    cr_assert_eq(duet_cal_report_write_json(rep, NULL, 1, NULL, path), DUET_OK, "%s", duet_last_error());
    text = t_slurp(path);
    o = parse(text);
    free(text);
    cr_assert_str_eq(cJSON_GetObjectItem(o, "base_profile")->valuestring, "");
    strings_of(o, "corpora", list, sizeof(list));
    cr_assert_str_eq(list, "corpus");
    cJSON_Delete(o);
    free(rep);
}

Test(cal_writers, the_rows_file_without_rows_and_where_it_cannot_be_written)
{
    char path[256];
    cr_assert_eq(duet_cal_rows_csv_close(NULL), DUET_OK);
    duet_cal_rows_csv_abort(NULL);
    /* No row: the header alone. */
    duet_cal_rows_csv_t *csv = NULL;
    t_tmp_path(path, sizeof(path), "rows.csv");
    cr_assert_eq(duet_cal_rows_csv_open(path, &csv), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_cal_rows_csv_close(csv), DUET_OK, "%s", duet_last_error());
    char *text = t_slurp(path);
    cr_assert(strncmp(text, "corpus,index,shape,fold,kind,", 29) == 0, "%s", text);
    cr_assert_eq(strchr(text, '\n'), text + strlen(text) - 1, "one line: %s", text);
    free(text);
    /* A folder that does not exist: the close fails and leaves nothing. */
    t_tmp_path(path, sizeof(path), "no/such/rows.csv");
    cr_assert_eq(duet_cal_rows_csv_open(path, &csv), DUET_OK, "%s", duet_last_error());
    cr_assert_lt(duet_cal_rows_csv_close(csv), 0);
    cr_assert(strstr(duet_last_error(), "no/such/rows.csv") != NULL, "%s", duet_last_error());
    cr_assert_eq(access(path, F_OK), -1);
}
