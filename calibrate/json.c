/*
 * The calibration layer's JSON: one writer of the metrics object (duet_cal_metrics_t), of the
 * noise floor and of a fit, shared by the two documents that hold them: the fit report
 * ("duet-calibration/2", `duet calibrate fit --report`) and the validation
 * ("duet-validation/1", `duet validate --json`). docs/calibration.md describes both. Times are
 * microseconds, under keys ending in _us (duet-calibration/1 had the run times in seconds, wall_s).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

/*
 * A number as the shortest text that reads back as the same double (cJSON's own printing accepts
 * a text within an epsilon and can drop the last bit), or null: NaN and infinities are not JSON.
 */
static void duet__num(cJSON *o, const char *key, double v)
{
    char buf[40];
    if (duet__json_num_text(buf, sizeof(buf), v) < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddRawToObject(o, key, buf);
}

static cJSON *duet__cal_metrics_json(const duet_cal_metrics_t *m)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "op_rows", (double)m->op_rows);
    duet__num(o, "ape_median", m->ape_median);
    duet__num(o, "ape_p95", m->ape_p95);
    duet__num(o, "ape_mean", m->ape_mean);
    cJSON_AddNumberToObject(o, "alone_rows", (double)m->alone_rows);
    duet__num(o, "alone_ape_median", m->alone_ape_median);
    duet__num(o, "alone_ape_p95", m->alone_ape_p95);
    cJSON_AddNumberToObject(o, "shapes", m->shapes);
    duet__num(o, "exact_pick", m->exact_pick);
    duet__num(o, "pick_within8", m->pick_within8);
    duet__num(o, "pick_within8_loose", m->pick_within8_loose);
    duet__num(o, "regret_median", m->regret_median);
    duet__num(o, "regret_mean", m->regret_mean);
    duet__num(o, "regret_p95", m->regret_p95);
    cJSON *cov = cJSON_AddObjectToObject(o, "topk_cover");
    for (int t = 0; t < DUET_CAL_TOPK_N; t++) {
        char k[16];
        snprintf(k, sizeof(k), "%d", duet_cal_topk[t]);
        duet__num(cov, k, m->topk_cover[t]);
    }
    return o;
}

static cJSON *duet__cal_noise_json(const duet_cal_noise_t *nz)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "shapes", nz->shapes);
    duet__num(o, "runner_up_in_spread", nz->runner_up_in_spread);
    duet__num(o, "runner_up_within_1pct", nz->runner_up_within_1pct);
    duet__num(o, "gap_median", nz->gap_median);
    duet__num(o, "row_spread_median", nz->row_spread_median);
    cJSON_AddNumberToObject(o, "pairs", nz->pairs);
    cJSON_AddItemToObject(o, "remeasure", duet__cal_metrics_json(&nz->remeasure));
    return o;
}

static cJSON *duet__cal_fit_json(const duet_cal_fit_t *fit)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "policy", fit->policy ? fit->policy : "fluid");
    cJSON_AddNumberToObject(o, "rows", (double)fit->rows);
    cJSON_AddNumberToObject(o, "shapes", fit->shapes);
    cJSON_AddNumberToObject(o, "iterations", fit->iterations);
    cJSON_AddBoolToObject(o, "converged", fit->converged != 0);
    cJSON_AddStringToObject(o, "stop_reason", fit->stop_reason);
    duet__num(o, "rms_log_start", fit->rms_log_start);
    duet__num(o, "rms_log_end", fit->rms_log_end);
    cJSON_AddNumberToObject(o, "evaluations", (double)fit->evaluations);
    duet__num(o, "wall_us", fit->wall_s * 1e6);
    cJSON *arr = cJSON_AddArrayToObject(o, "params");
    for (int32_t j = 0; j < fit->n_params; j++) {
        const duet_cal_param_result_t *r = &fit->params[j];
        const duet_hw_field_info_t *fi = duet_hw_field_info(r->field);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", fi->key);
        cJSON_AddStringToObject(e, "unit", fi->unit);
        cJSON_AddBoolToObject(e, "fitted", r->fitted != 0);
        duet__num(e, "start", r->start);
        duet__num(e, "value", r->value);
        duet__num(e, "stderr", r->stderr_abs);
        duet__num(e, "rel_stderr", r->stderr_rel);
        cJSON_AddStringToObject(e, "at_bound", r->at_bound < 0 ? "lower" : r->at_bound > 0 ? "upper" : "no");
        if (r->corr_field >= 0) {
            cJSON_AddStringToObject(e, "most_correlated_with", duet_hw_field_info(r->corr_field)->key);
            duet__num(e, "correlation", r->corr);
        }
        cJSON_AddItemToArray(arr, e);
    }
    return o;
}

static cJSON *duet__cal_model_json(const duet_cal_model_report_t *mr)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "fit", duet__cal_fit_json(&mr->fit));
    cJSON_AddItemToObject(o, "start", duet__cal_metrics_json(&mr->start));
    cJSON_AddItemToObject(o, "in_sample", duet__cal_metrics_json(&mr->in_sample));
    cJSON_AddNumberToObject(o, "folds", mr->folds);
    if (mr->folds > 0) {
        cJSON_AddItemToObject(o, "held_out", duet__cal_metrics_json(&mr->held_out));
        cJSON *arr = cJSON_AddArrayToObject(o, "fold_fits");
        for (int32_t f = 0; f < mr->folds; f++) {
            const duet_cal_fold_t *fo = &mr->fold[f];
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "fold", f);
            cJSON_AddNumberToObject(e, "shapes_held_out", fo->shapes);
            cJSON_AddNumberToObject(e, "rows_train", (double)fo->rows_train);
            cJSON_AddNumberToObject(e, "iterations", fo->iterations);
            cJSON_AddBoolToObject(e, "converged", fo->converged != 0);
            duet__num(e, "rms_log_train", fo->rms_log_train);
            duet__num(e, "rms_log_held_out", fo->rms_log_held_out);
            cJSON_AddItemToArray(arr, e);
        }
    }
    return o;
}

/* The document as text with a final newline (malloc'd), or NULL with the error recorded; deletes o. */
static char *duet__cal_json_text(cJSON *o)
{
    char *text = o != NULL ? cJSON_Print(o) : NULL;
    cJSON_Delete(o);
    size_t len = text != NULL ? strlen(text) : 0;
    char *with_nl = text != NULL ? malloc(len + 2) : NULL;
    if (with_nl == NULL) {
        cJSON_free(text);
        duet__error(DUET_ERR_NO_MEMORY, "calibration: cannot print JSON");
        return NULL;
    }
    memcpy(with_nl, text, len);
    with_nl[len] = '\n';
    with_nl[len + 1] = '\0';
    cJSON_free(text);
    return with_nl;
}

/* Write the document atomically; deletes o. */
static duet_status_t duet__cal_json_write(cJSON *o, const char *path)
{
    char *text = duet__cal_json_text(o);
    if (text == NULL)
        return DUET_ERR_NO_MEMORY;
    duet_status_t st = duet__write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

duet_status_t duet_cal_report_write_json(const duet_cal_report_t *rep, const char *const *files, int n,
                                         const char *base_name, const char *path)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "report: cannot build JSON");
    cJSON_AddStringToObject(o, "schema", DUET_CAL_REPORT_SCHEMA);
    cJSON_AddStringToObject(o, "duet", DUET_VERSION);
    cJSON *arr = cJSON_AddArrayToObject(o, "corpora");
    for (int f = 0; f < n; f++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(files && files[f] ? files[f] : "corpus"));
    cJSON_AddStringToObject(o, "base_profile", base_name ? base_name : "");
    cJSON_AddStringToObject(o, "fitted_profile", rep->model.fit.hw.name);
    cJSON_AddNumberToObject(o, "rows", (double)rep->rows_total);
    cJSON_AddNumberToObject(o, "rows_failed", (double)rep->rows_failed);
    cJSON_AddNumberToObject(o, "shapes", rep->shapes);
    duet__num(o, "wall_us", rep->wall_s * 1e6);
    cJSON *d = cJSON_AddObjectToObject(o, "definitions");
    cJSON_AddStringToObject(d, "ape", "|pred/meas - 1| over measured op rows (fractions: 0.05 = 5 %)");
    cJSON_AddStringToObject(d, "exact_pick", "share of shapes whose predicted best configuration is the measured best");
    cJSON_AddStringToObject(d, "pick_within8",
                            "same mode, GEMM tile and K split, |gemm_wgs - best| <= 8 and |comm_wgs - best| <= 8");
    cJSON_AddStringToObject(d, "pick_within8_loose", "same mode, |gemm_wgs - best| <= 8, any GEMM tile");
    cJSON_AddStringToObject(d, "regret", "meas(predicted best) / meas(best) - 1, over shapes");
    cJSON_AddStringToObject(d, "topk_cover",
                            "share of shapes where one of the model's top k is within 3 % of the best");
    cJSON_AddStringToObject(d, "reference_rules",
                            "policy frozen (the reference predictor) on unsplit fused rows, seed_link_gbs fitted on "
                            "them; concurrent and K-split rows are not predicted and count as missed picks");
    cJSON_AddStringToObject(d, "noise_floor",
                            "from the rows' own min/max spread: runner_up_in_spread is the share of shapes whose "
                            "second-best median is within the best's slowest run; remeasure scores a perfect model "
                            "ranking one simulated re-measurement against another (mean over pairs); drift between "
                            "points is not included, so these bound every model from above");
    cJSON_AddItemToObject(o, "noise_floor", duet__cal_noise_json(&rep->noise));
    cJSON_AddItemToObject(o, "model", duet__cal_model_json(&rep->model));
    if (rep->seed.fit.n_params > 0)
        cJSON_AddItemToObject(o, "reference_rules", duet__cal_model_json(&rep->seed));
    else
        cJSON_AddNullToObject(o, "reference_rules");
    return duet__cal_json_write(o, path);
}

duet_status_t duet_cal_validation_to_json(const duet_cal_validation_t *v, const char *const *files, int n,
                                          const char *profile, char **text_p)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "validation: cannot build JSON");
    cJSON_AddStringToObject(o, "schema", DUET_CAL_VALIDATION_SCHEMA);
    cJSON_AddStringToObject(o, "duet", DUET_VERSION);
    cJSON_AddStringToObject(o, "profile", profile ? profile : "");
    cJSON *arr = cJSON_AddArrayToObject(o, "corpora");
    for (int f = 0; f < n; f++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(files && files[f] ? files[f] : "corpus"));
    cJSON_AddNumberToObject(o, "rows", (double)v->rows_total);
    cJSON_AddNumberToObject(o, "rows_failed", (double)v->rows_failed);
    cJSON_AddNumberToObject(o, "shapes", v->shapes);
    cJSON_AddItemToObject(o, "model", duet__cal_metrics_json(&v->model));
    cJSON_AddItemToObject(o, "noise_floor", duet__cal_noise_json(&v->noise));
    if (v->seed_fit.n_params > 0) {
        /* The reference rules' metrics, and the one constant fitted for them. */
        cJSON *s = duet__cal_metrics_json(&v->seed);
        duet__num(s, "seed_link_gbs", v->seed_fit.params[0].value);
        duet__num(s, "seed_link_gbs_stderr", v->seed_fit.params[0].stderr_abs);
        cJSON_AddItemToObject(o, "reference_rules", s);
    } else {
        cJSON_AddNullToObject(o, "reference_rules");
    }
    char *text = duet__cal_json_text(o);
    if (text == NULL)
        return DUET_ERR_NO_MEMORY;
    *text_p = text;
    return DUET_OK;
}
