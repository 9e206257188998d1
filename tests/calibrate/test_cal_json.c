/*
 * The calibration layer's two JSON documents share one metrics writer (calibrate/json.c): the
 * validation ("duet-validation/1", `duet validate --json`) and the fit report
 * ("duet-calibration/1") write a duet_cal_metrics_t as the same object, every value exactly, a
 * value that is not finite as null.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/calibrate.h"

/* Metrics with a distinct, high-entropy value in every field, and one NaN (an undefined share). */
static duet_cal_metrics_t some_metrics(double base)
{
    duet_cal_metrics_t m;
    memset(&m, 0, sizeof(m));
    m.op_rows = 4750;
    m.ape_median = base + 0.0306397;
    m.ape_p95 = base + 0.125547;
    m.ape_mean = base + 0.0422368;
    m.alone_rows = 1025;
    m.alone_ape_median = base + 0.0455009;
    m.alone_ape_p95 = NAN;
    m.shapes = 75;
    m.exact_pick = base + 0.6;
    m.pick_within8 = base + 0.64;
    m.pick_within8_loose = base + 0.706667;
    m.regret_median = base;
    m.regret_mean = base + 0.0145938;
    m.regret_p95 = base + 0.072958;
    m.topk_cover[0] = base + 0.8;
    m.topk_cover[1] = base + 0.973333;
    m.topk_cover[2] = base + 1.0;
    return m;
}

/* The metrics object `o` holds exactly m's values under the documented names. */
static void expect_metrics(const cJSON *o, const duet_cal_metrics_t *m, const char *what)
{
    cr_assert(cJSON_IsObject(o), "%s", what);
    const struct {
        const char *key;
        double v;
    } want[] = {{"op_rows", (double)m->op_rows},
                {"ape_median", m->ape_median},
                {"ape_p95", m->ape_p95},
                {"ape_mean", m->ape_mean},
                {"alone_rows", (double)m->alone_rows},
                {"alone_ape_median", m->alone_ape_median},
                {"alone_ape_p95", m->alone_ape_p95},
                {"shapes", (double)m->shapes},
                {"exact_pick", m->exact_pick},
                {"pick_within8", m->pick_within8},
                {"pick_within8_loose", m->pick_within8_loose},
                {"regret_median", m->regret_median},
                {"regret_mean", m->regret_mean},
                {"regret_p95", m->regret_p95}};
    size_t n = sizeof(want) / sizeof(want[0]);
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, want[i].key);
        if (isnan(want[i].v))
            cr_assert(cJSON_IsNull(v), "%s.%s: null for NaN", what, want[i].key);
        else
            cr_assert(cJSON_IsNumber(v) && v->valuedouble == want[i].v, "%s.%s: %.17g, want %.17g", what, want[i].key,
                      v ? v->valuedouble : NAN, want[i].v);
    }
    const cJSON *cov = cJSON_GetObjectItemCaseSensitive(o, "topk_cover");
    cr_assert_eq(cJSON_GetArraySize(cov), 3, "%s.topk_cover", what);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cov, "1")->valuedouble, m->topk_cover[0]);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cov, "4")->valuedouble, m->topk_cover[1]);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cov, "8")->valuedouble, m->topk_cover[2]);
    /* Nothing else: one schema. */
    cr_assert_eq((size_t)cJSON_GetArraySize(o), n + 1, "%s: %d members", what, cJSON_GetArraySize(o));
}

Test(cal_json, validation_and_report_write_one_metrics_object, T_TIMEOUT)
{
    duet_cal_validation_t v;
    memset(&v, 0, sizeof(v));
    v.model = some_metrics(0.0);
    v.seed = some_metrics(0.001);
    v.noise.shapes = 75;
    v.noise.runner_up_in_spread = 0.533333;
    v.noise.gap_median = 0.0216905;
    v.noise.row_spread_median = 0.0506513;
    v.noise.runner_up_within_1pct = 0.36;
    v.noise.pairs = 200;
    v.noise.remeasure = some_metrics(0.002);
    v.seed_fit.n_params = 1;
    v.seed_fit.params[0].field = DUET_HW_F_seed_link_gbs;
    v.seed_fit.params[0].value = 446.669069500892;
    v.seed_fit.params[0].stderr_abs = NAN;
    v.rows_total = 5775;
    v.shapes = 75;
    const char *files[] = {"a.json", "b.json"};
    char *text = NULL;
    cr_assert_eq(duet_cal_validation_to_json(&v, files, 2, "h200", &text), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(text[strlen(text) - 1], '\n');
    cJSON *o = cJSON_Parse(text);
    cr_assert_not_null(o, "%s", text);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "schema")->valuestring, "duet-validation/1");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "profile")->valuestring, "h200");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(o, "corpora")), 2);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(o, "rows")->valuedouble, 5775);
    expect_metrics(cJSON_GetObjectItemCaseSensitive(o, "model"), &v.model, "model");
    const cJSON *nz = cJSON_GetObjectItemCaseSensitive(o, "noise_floor");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(nz, "runner_up_in_spread")->valuedouble, 0.533333);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(nz, "pairs")->valuedouble, 200);
    expect_metrics(cJSON_GetObjectItemCaseSensitive(nz, "remeasure"), &v.noise.remeasure, "noise_floor.remeasure");
    /* The reference rules: the metrics object and its fitted constant beside it. */
    cJSON *ref = cJSON_DetachItemFromObjectCaseSensitive(o, "reference_rules");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(ref, "seed_link_gbs")->valuedouble, 446.669069500892);
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ref, "seed_link_gbs_stderr")));
    cJSON_DeleteItemFromObjectCaseSensitive(ref, "seed_link_gbs");
    cJSON_DeleteItemFromObjectCaseSensitive(ref, "seed_link_gbs_stderr");
    expect_metrics(ref, &v.seed, "reference_rules");
    cJSON_Delete(ref);
    cJSON_Delete(o);
    free(text);

    /* The report writes the same objects: its start, in-sample and held-out metrics, and the
     * same noise floor. */
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    rep->model.fit.hw = t_hw("h200");
    rep->model.start = some_metrics(0.003);
    rep->model.in_sample = some_metrics(0.004);
    rep->model.folds = 1;
    rep->model.held_out = some_metrics(0.005);
    rep->noise = v.noise;
    char path[96];
    t_tmp_path(path, sizeof(path), "report.json");
    cr_assert_eq(duet_cal_report_write_json(rep, files, 2, "h200", path), DUET_OK, "%s", duet_last_error());
    text = t_slurp(path);
    o = cJSON_Parse(text);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "schema")->valuestring, "duet-calibration/2");
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(o, "model");
    expect_metrics(cJSON_GetObjectItemCaseSensitive(model, "start"), &rep->model.start, "model.start");
    expect_metrics(cJSON_GetObjectItemCaseSensitive(model, "in_sample"), &rep->model.in_sample, "model.in_sample");
    expect_metrics(cJSON_GetObjectItemCaseSensitive(model, "held_out"), &rep->model.held_out, "model.held_out");
    nz = cJSON_GetObjectItemCaseSensitive(o, "noise_floor");
    expect_metrics(cJSON_GetObjectItemCaseSensitive(nz, "remeasure"), &v.noise.remeasure, "report noise_floor");
    cr_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(o, "reference_rules")), "no fused rows, no reference");
    cJSON_Delete(o);
    free(text);
    free(rep);
    unlink(path);
}
