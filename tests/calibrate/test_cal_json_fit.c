/*
 * The fit report's parameter and fold entries (calibrate/json.c): where a fitted constant sits
 * against its bounds is written as "lower", "upper" or "no", and held-out metrics and fold fits are
 * written only when cross-validation ran (folds > 0).
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/calibrate.h"

/* Write a report with three fitted constants, at the lower bound, inside and at the upper bound,
 * and `folds` folds; return it parsed. */
static cJSON *report(int32_t folds)
{
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    cr_assert_not_null(rep);
    rep->model.fit.hw = t_hw("h200");
    rep->model.fit.n_params = 3;
    const int32_t fields[3] = {DUET_HW_F_seed_link_gbs, DUET_HW_F_seed_launch_us, DUET_HW_F_seed_alpha};
    const int32_t bounds[3] = {-1, 0, 1};
    for (int i = 0; i < 3; i++) {
        rep->model.fit.params[i].field = fields[i];
        rep->model.fit.params[i].value = 1.0 + i;
        rep->model.fit.params[i].at_bound = bounds[i];
        rep->model.fit.params[i].fitted = 1;
        rep->model.fit.params[i].corr_field = -1;
    }
    rep->model.folds = folds;
    for (int32_t f = 0; f < folds; f++)
        rep->model.fold[f].shapes = 10 + f;
    char path[96];
    t_tmp_path(path, sizeof(path), "fit-report.json");
    cr_assert_eq(duet_cal_report_write_json(rep, NULL, 0, "h200", path), DUET_OK, "%s", duet_last_error());
    char *text = t_slurp(path);
    cJSON *o = cJSON_Parse(text);
    cr_assert_not_null(o, "%s", text);
    free(text);
    free(rep);
    unlink(path);
    return o;
}

Test(cal_json_fit, a_constant_at_a_bound_names_that_bound, T_TIMEOUT)
{
    cJSON *o = report(0);
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "model"), "fit"), "params");
    cr_assert_eq(cJSON_GetArraySize(params), 3);
    const char *want[3] = {"lower", "no", "upper"};
    const char *names[3] = {"seed_link_gbs", "seed_launch_us", "seed_alpha"};
    for (int i = 0; i < 3; i++) {
        const cJSON *p = cJSON_GetArrayItem(params, i);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "name")->valuestring, names[i]);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(p, "at_bound")->valuestring, want[i], "params[%d]", i);
        cr_assert_eq(cJSON_GetObjectItemCaseSensitive(p, "value")->valuedouble, 1.0 + i);
    }
    cJSON_Delete(o);
}

Test(cal_json_fit, held_out_metrics_only_with_folds, T_TIMEOUT)
{
    cJSON *o = report(0);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(o, "model");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(model, "folds")->valuedouble, 0);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(model, "held_out"), "no folds, no held-out metrics");
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(model, "fold_fits"), "no folds, no fold fits");
    cJSON_Delete(o);

    o = report(2);
    model = cJSON_GetObjectItemCaseSensitive(o, "model");
    cr_assert(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(model, "held_out")));
    const cJSON *fits = cJSON_GetObjectItemCaseSensitive(model, "fold_fits");
    cr_assert_eq(cJSON_GetArraySize(fits), 2);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(fits, 1), "fold")->valuedouble, 1);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(fits, 1), "shapes_held_out")->valuedouble, 11);
    cJSON_Delete(o);
}
