/*
 * The calibration layer's JSON: one writer of the metrics object (duet_cal_metrics_t), of the
 * noise floor and of a fit, shared by the documents that hold them: the fit report
 * ("duet-calibration/2", `duet calibrate fit --report`), the validation ("duet-validation/1",
 * `duet validate --json`) and the selection ("duet-selection/1", `duet calibrate select
 * --json`). docs/calibration.md describes them. Times are microseconds, under keys ending in _us
 * (duet-calibration/1 had the run times in seconds, wall_s).
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

/* A document's head: its schema, duet's version and the corpora (`files`, n of them); NULL: no memory. */
static cJSON *duet__cal_json_doc(const char *schema, const char *const *files, int n)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "schema", schema);
    cJSON_AddStringToObject(o, "duet", DUET_VERSION);
    cJSON *arr = cJSON_AddArrayToObject(o, "corpora");
    for (int f = 0; f < n; f++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(files && files[f] ? files[f] : "corpus"));
    return o;
}

duet_status_t duet__cal_report_text(const duet_cal_report_t *rep, const char *const *files, int n,
                                    const char *base_name, char **text_p)
{
    cJSON *o = duet__cal_json_doc(DUET_CAL_REPORT_SCHEMA, files, n);
    if (o == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "report: cannot build JSON");
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
    *text_p = duet__cal_json_text(o);
    return *text_p != NULL ? DUET_OK : DUET_ERR_NO_MEMORY;
}

duet_status_t duet_cal_report_write_json(const duet_cal_report_t *rep, const char *const *files, int n,
                                         const char *base_name, const char *path)
{
    char *text = NULL;
    DUET_CHECK(duet__cal_report_text(rep, files, n, base_name, &text));
    duet_status_t st = duet__write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}

/* A string member, or null when it was not recorded (empty). */
static void duet__str_or_null(cJSON *o, const char *key, const char *v)
{
    if (v[0])
        cJSON_AddStringToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

/* A count member that -1 marks as not recorded. */
static void duet__count_or_null(cJSON *o, const char *key, int64_t v)
{
    if (v >= 0)
        cJSON_AddNumberToObject(o, key, (double)v);
    else
        cJSON_AddNullToObject(o, key);
}

/* The figures of one group of the target table (duet's model or the reference rules), in its order. */
static cJSON *duet__cal_figures_json(const duet_cal_eval_t *e, int reference)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < duet_cal_eval_n_figures; i++) {
        const duet_cal_eval_figure_t *f = &duet_cal_eval_figures[i];
        if (f->reference != reference)
            continue;
        const duet_cal_ci_t *c = duet_cal_eval_figure_ci(e, f);
        cJSON *x = cJSON_AddObjectToObject(o, f->key);
        cJSON_AddStringToObject(x, "label", f->label);
        duet__num(x, "value", c->value);
        duet__num(x, "lo", c->lo);
        duet__num(x, "hi", c->hi);
        if (f->cmp == DUET_CAL_TARGET_NONE) {
            cJSON_AddNullToObject(x, "target");
        } else {
            cJSON *t = cJSON_AddObjectToObject(x, "target");
            cJSON_AddStringToObject(t, "comparison", f->cmp == DUET_CAL_TARGET_LE ? "<=" : ">=");
            duet__num(t, "threshold", duet_cal_eval_figure_threshold(e, f));
            if (f->relative_to_ceiling) {
                cJSON_AddStringToObject(t, "relative_to", "ceiling");
                duet__num(t, "offset", f->threshold);
            }
        }
        int met = duet_cal_eval_figure_met(e, f);
        if (met < 0)
            cJSON_AddNullToObject(x, "met");
        else
            cJSON_AddBoolToObject(x, "met", met);
    }
    return o;
}

/* The target table of a test set in two sweeps (docs/calibration.md, "duet-validation/1"). */
static cJSON *duet__cal_targets_json(const duet_cal_eval_t *e, const char *const *files2, int n2)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "workloads", e->workloads);
    cJSON_AddNumberToObject(o, "gemm_rows", e->gemm_rows);
    cJSON_AddNumberToObject(o, "op_rows", e->op_rows);
    cJSON *ts = cJSON_AddObjectToObject(o, "test_set");
    duet__str_or_null(ts, "shapes", e->prov.shapes);
    duet__count_or_null(ts, "seed", e->prov.seed);
    duet__str_or_null(ts, "kernel_commit", e->prov.kernel_commit);
    duet__str_or_null(ts, "date", e->date);
    duet__count_or_null(ts, "order_seed", e->prov.order_seed);
    duet__count_or_null(ts, "sweep2_order_seed", e->sweep2_order_seed);
    cJSON *arr = cJSON_AddArrayToObject(ts, "sweep2_corpora");
    for (int f = 0; f < n2; f++)
        cJSON_AddItemToArray(arr, cJSON_CreateString(files2 && files2[f] ? files2[f] : "corpus"));
    cJSON *b = cJSON_AddObjectToObject(o, "bootstrap");
    cJSON_AddNumberToObject(b, "resamples", e->resamples);
    cJSON_AddNumberToObject(b, "seed", (double)e->seed);
    duet__num(b, "interval", 0.95);
    cJSON *band = cJSON_AddObjectToObject(o, "noise_band");
    duet__num(band, "quantile", e->band_q);
    duet__num(band, "median", e->band_median);
    cJSON_AddItemToObject(o, "figures", duet__cal_figures_json(e, 0));
    cJSON *r = cJSON_AddObjectToObject(o, "reference_rules");
    cJSON_AddNumberToObject(r, "workloads", e->ref_workloads);
    cJSON_AddBoolToObject(r, "seed_link_gbs_fitted", e->ref_fitted != 0);
    cJSON_AddItemToObject(r, "figures", duet__cal_figures_json(e, 1));
    /* The same picks scored as the model's are, against the fastest row of every mode. */
    cJSON_AddItemToObject(r, "figures_all_modes", duet__cal_figures_json(e, 2));
    /* The decision rule's pick (the static default kept unless the gain clears the band), scored as the
     * model's fastest prediction is; and the switches of either that came out worse than the default. */
    cJSON *dr = cJSON_AddObjectToObject(o, "decision_rule");
    cJSON_AddNumberToObject(dr, "workloads", e->rule_workloads);
    cJSON_AddStringToObject(dr, "safe_choice", "the static default (fused, 3/4 of the SMs on the GEMM, default tile)");
    cJSON *err = cJSON_AddObjectToObject(dr, "err");
    for (int m = 0; m < DUET_MODE_COUNT; m++)
        duet__num(err, duet_mode_name(m), e->rule_err[m]);
    cJSON_AddNumberToObject(dr, "left_default", e->rule_left_n);
    cJSON_AddItemToObject(dr, "figures", duet__cal_figures_json(e, 3));
    cJSON *ws = cJSON_AddObjectToObject(o, "worse_switches");
    cJSON_AddStringToObject(ws, "rule",
                            "a vendor or concurrent pick measured slower than the static default by more than the "
                            "workload's noise band");
    cJSON *wa = cJSON_AddObjectToObject(ws, "fastest_predicted");
    cJSON_AddNumberToObject(wa, "count", e->worse_switch_n);
    cJSON_AddNumberToObject(wa, "workloads", e->worse_switch_of);
    wa = cJSON_AddObjectToObject(ws, "decision_rule");
    cJSON_AddNumberToObject(wa, "count", e->rule_worse_switch_n);
    cJSON_AddNumberToObject(wa, "workloads", e->rule_workloads);
    cJSON *v = cJSON_AddObjectToObject(o, "better_than_reference");
    cJSON_AddStringToObject(v, "rule", "regret p95 and mean: the model's 95 % interval entirely below the reference's");
    int better = duet_cal_eval_better_than_reference(e);
    if (better < 0)
        cJSON_AddNullToObject(v, "met");
    else
        cJSON_AddBoolToObject(v, "met", better);
    v = cJSON_AddObjectToObject(o, "better_than_reference_all_modes");
    cJSON_AddStringToObject(v, "rule",
                            "regret mean: the model's 95 % interval entirely below the reference rules' "
                            "scored against the best of every mode");
    better = duet_cal_eval_better_than_reference_all(e);
    if (better < 0)
        cJSON_AddNullToObject(v, "met");
    else
        cJSON_AddBoolToObject(v, "met", better);
    return o;
}

duet_status_t duet_cal_validation_to_json(const duet_cal_validation_t *v, const char *const *files, int n,
                                          const char *profile, char **text_p)
{
    return duet_cal_validation_targets_to_json(v, NULL, files, n, NULL, 0, profile, text_p);
}

duet_status_t duet_cal_validation_targets_to_json(const duet_cal_validation_t *v, const duet_cal_eval_t *e,
                                                  const char *const *files, int n, const char *const *files2, int n2,
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
    if (e != NULL)
        cJSON_AddItemToObject(o, "targets", duet__cal_targets_json(e, files2, n2));
    else
        cJSON_AddNullToObject(o, "targets");
    char *text = duet__cal_json_text(o);
    if (text == NULL)
        return DUET_ERR_NO_MEMORY;
    *text_p = text;
    return DUET_OK;
}

/* One number per candidate, keyed by its name. */
static cJSON *duet__cal_per_candidate(const duet_cal_candidates_t *cands, const double *v)
{
    cJSON *o = cJSON_CreateObject();
    for (int32_t c = 0; c < cands->n; c++)
        duet__num(o, cands->c[c].name, v[c]);
    return o;
}

duet_status_t duet_cal_selection_to_json(const duet_cal_selection_t *sel, const duet_cal_candidates_t *cands,
                                         const char *const *files, int n, const char *base_name, char **text_p)
{
    cJSON *o = duet__cal_json_doc(DUET_CAL_SELECTION_SCHEMA, files, n);
    if (o == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "selection: cannot build JSON");
    cJSON_AddStringToObject(o, "base_profile", base_name ? base_name : "");
    cJSON_AddNumberToObject(o, "rows", (double)sel->rows_total);
    cJSON_AddNumberToObject(o, "rows_failed", (double)sel->rows_failed);
    cJSON_AddNumberToObject(o, "shapes", sel->shapes);
    cJSON_AddNumberToObject(o, "outer_folds", sel->outer);
    cJSON_AddNumberToObject(o, "inner_folds", sel->inner);
    cJSON_AddNumberToObject(o, "fits", (double)sel->fits);
    cJSON_AddNumberToObject(o, "fits_unconverged", (double)sel->fits_unconverged);
    duet__num(o, "wall_s", sel->wall_s);
    cJSON *arr = cJSON_AddArrayToObject(o, "candidates");
    for (int32_t c = 0; c < cands->n; c++) {
        const duet_cal_candidate_t *cand = &cands->c[c];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", cand->name);
        cJSON_AddNumberToObject(e, "line", cand->line);
        cJSON *ps = cJSON_AddArrayToObject(e, "params");
        for (int32_t j = 0; j < cand->n_fit; j++)
            cJSON_AddItemToArray(ps, cJSON_CreateString(duet_hw_field_info(cand->fit[j])->key));
        cJSON *start = cJSON_AddObjectToObject(e, "start");
        for (int32_t j = 0; j < cand->n_set; j++)
            duet__num(start, duet_hw_field_info(cand->set_field[j])->key, cand->set_value[j]);
        cJSON_AddItemToArray(arr, e);
    }
    arr = cJSON_AddArrayToObject(o, "outer");
    for (int32_t f = 0; f < sel->outer; f++) {
        const duet_cal_select_fold_t *fo = &sel->fold[f];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "fold", f);
        cJSON_AddNumberToObject(e, "shapes_held_out", fo->shapes);
        cJSON_AddStringToObject(e, "picked", cands->c[fo->picked].name);
        cJSON_AddItemToObject(e, "inner_rms_log", duet__cal_per_candidate(cands, fo->inner_rms));
        cJSON_AddNumberToObject(e, "rows_train", (double)fo->refit.rows_train);
        cJSON_AddNumberToObject(e, "iterations", fo->refit.iterations);
        cJSON_AddBoolToObject(e, "converged", fo->refit.converged != 0);
        duet__num(e, "rms_log_train", fo->refit.rms_log_train);
        duet__num(e, "rms_log_held_out", fo->refit.rms_log_held_out);
        cJSON_AddItemToArray(arr, e);
    }
    cJSON *nested = cJSON_AddObjectToObject(o, "nested");
    duet__num(nested, "rms_log", sel->nested_rms_log);
    cJSON_AddItemToObject(nested, "metrics", duet__cal_metrics_json(&sel->nested));
    cJSON *all = cJSON_AddObjectToObject(o, "all_data");
    cJSON_AddItemToObject(all, "inner_rms_log", duet__cal_per_candidate(cands, sel->all_rms));
    cJSON_AddStringToObject(all, "picked", cands->c[sel->picked].name);
    duet__num(all, "cv_rms_log", sel->all_rms[sel->picked]);
    duet__num(all, "nested_rms_log", sel->nested_rms_log);
    duet__num(all, "optimism", sel->nested_rms_log - sel->all_rms[sel->picked]);
    cJSON_AddItemToObject(all, "fit", duet__cal_fit_json(&sel->fit));
    char *text = duet__cal_json_text(o);
    if (text == NULL)
        return DUET_ERR_NO_MEMORY;
    *text_p = text;
    return DUET_OK;
}
