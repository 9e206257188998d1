/*
 * The target table in `duet validate --json` (duet_cal_validation_targets_to_json): on a small
 * two-sweep corpus whose figures are derived by hand, the JSON carries those values, and the text
 * table and the JSON agree line by line.
 *
 * The corpus: three W = 1 workloads (an all_gather beside a 128 x N x 4096 bf16 GEMM, N = 4096,
 * 6144, 8192). Each has four fused op rows that differ only in group_m (1, 2, 4, 8): with M = 128 a
 * 256-row tile covers M once, so the swizzle changes nothing and every model predicts the four
 * alike (asserted). The "measured" times are those predictions times known factors, so every
 * figure follows from the factors alone:
 * - op rows, sweep 1 x {1.04, 1.00, 1.10, 1.20}, sweep 2 x {1.05, 1.00, 1.10, 1.20};
 * - GEMM alone on 132, 66, 33 and 16 CTAs, x {1.00, 1.01, 1.02, 1.50} in both sweeps (16 CTAs is
 *   below a quarter of the SMs: out of the GEMM target, its 33 % error must not count).
 * The workloads are alike in every factor, so each bootstrap resample holds the same multisets as
 * the whole set, and every interval of duet's figures is its point.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "synth.h"

TestSuite(cal_eval_json, T_TIMEOUT);

static const double f1[4] = {1.04, 1.00, 1.10, 1.20}, f2[4] = {1.05, 1.00, 1.10, 1.20};
static const int32_t group_m[4] = {1, 2, 4, 8};
static const int32_t gemm_ctas[4] = {132, 66, 33, 16};
static const double gemm_f[4] = {1.00, 1.01, 1.02, 1.50};

/* A row of kind `kind`, measured `ms`. */
static duet_corpus_row_t meas_row(int32_t kind, duet_workload_t wl, duet_config_t cfg, double ms)
{
    duet_corpus_row_t r = t_op_row(wl, cfg, ms, 0.99 * ms, 1.01 * ms, 6);
    r.kind = kind;
    return r;
}

/* Sweep `sweep` (1 or 2) of the test set; the reference rules' predictions of the op rows go to
 * ref_over_pred[w] (the ratio frozen / fluid, alike for a workload's four rows). */
static duet_corpus_t two_sweep_corpus(int sweep, double ref_over_pred[3])
{
    duet_hw_t hw = t_hw("h200");
    duet_corpus_t c = t_corpus_header(hw.n_sms, 1);
    duet_build_info_t bi = duet_build_info();
    snprintf(c.prov.kernel_commit, sizeof(c.prov.kernel_commit), "%s", bi.kernel_commit);
    snprintf(c.prov.kernel_hash, sizeof(c.prov.kernel_hash), "%s", bi.kernel_hash);
    snprintf(c.prov.shapes, sizeof(c.prov.shapes), "synthetic n=3 seed=7 world=1");
    c.prov.seed = 7;
    c.prov.order_seed = sweep;
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    const duet_gemm_tile_t tile = {256, 128, 64};
    for (int w = 0; w < 3; w++) {
        duet_workload_t wl = t_wl(128, 4096 + 2048 * w, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 1);
        wl.dtype = DUET_DTYPE_BF16;
        double p0 = NAN, q0 = NAN;
        for (int j = 0; j < 4; j++) {
            duet_config_t cfg = t_fused(&hw, 132, 99, tile);
            cfg.group_m = group_m[j];
            duet_corpus_row_t r = meas_row(DUET_ROW_OP, wl, cfg, 1.0);
            double p = 0, q = 0;
            cr_assert_eq(duet_cal_row_predict(ws, &duet_sim_policy_fluid, &hw, &r, &p), DUET_OK, "%s",
                         duet_last_error());
            cr_assert_eq(duet_cal_row_predict(ws, &duet_sim_policy_frozen, &hw, &r, &q), DUET_OK, "%s",
                         duet_last_error());
            if (j == 0) {
                p0 = p;
                q0 = q;
            }
            /* The premise of the hand derivation: group_m changes no prediction here. */
            cr_assert(p == p0 && q == q0, "group_m %d: predicted %.17g / %.17g, group_m 1: %.17g / %.17g",
                      (int)group_m[j], p, q, p0, q0);
            r = meas_row(DUET_ROW_OP, wl, cfg, p * (sweep == 1 ? f1[j] : f2[j]));
            cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
        }
        ref_over_pred[w] = q0 / p0;
        for (int j = 0; j < 4; j++) {
            duet_config_t cfg = t_fused(&hw, gemm_ctas[j], gemm_ctas[j], tile);
            duet_corpus_row_t r = meas_row(DUET_ROW_GEMM_ALONE, wl, cfg, 1.0);
            double p = 0;
            cr_assert_eq(duet_cal_row_predict(ws, &duet_sim_policy_fluid, &hw, &r, &p), DUET_OK);
            r.ms = p * gemm_f[j];
            r.min_ms = 0.99 * r.ms;
            r.max_ms = 1.01 * r.ms;
            cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
        }
    }
    duet_sim_ws_destroy(ws);
    return c;
}

/* The hand-derived point values of duet's figures (see the file's comment). */
typedef struct want {
    const char *key;
    double value;
    int met; /* 1, 0, -1 (no target) */
} want_t;

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static const cJSON *member(const cJSON *o, const char *key)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert_not_null(m, "no member '%s'", key);
    return m;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *m = member(o, key);
    cr_assert(cJSON_IsNumber(m), "'%s' is not a number", key);
    return m->valuedouble;
}

/* met as the JSON writes it: true 1, false 0, null -1. */
static int met_of(const cJSON *x)
{
    const cJSON *m = member(x, "met");
    return cJSON_IsNull(m) ? -1 : cJSON_IsTrue(m) ? 1 : 0;
}

Test(cal_eval_json, the_json_target_table_holds_the_hand_derived_figures)
{
    double ratio[3];
    duet_corpus_t s1 = two_sweep_corpus(1, ratio), s2 = two_sweep_corpus(2, ratio);
    duet_hw_t hw = t_hw("h200");
    duet_cal_validation_t v;
    duet_cal_eval_t e;
    cr_assert_eq(duet_cal_validate(&s1, NULL, 1, &hw, NULL, NULL, &v), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_cal_evaluate(&s1, 1, &s2, 1, &hw, NULL, NULL, &e), DUET_OK, "%s", duet_last_error());
    const char *files[] = {"s1.json"}, *files2[] = {"s2.json"};
    char *text = NULL;
    cr_assert_eq(duet_cal_validation_targets_to_json(&v, &e, files, 1, files2, 1, "h200", &text), DUET_OK);
    cJSON *doc = cJSON_Parse(text);
    cr_assert_not_null(doc, "%s", text);
    cr_assert_str_eq(cJSON_GetStringValue(member(doc, "schema")), "duet-validation/1");
    const cJSON *t = member(doc, "targets");

    /* Op rows, per workload: APEs |1/f - 1| = {0.04/1.04, 0, 0.1/1.1, 0.2/1.2}, three times over:
     * twelve values whose median is the mean of the 6th and 7th (0.04/1.04 and 0.1/1.1) and whose
     * p95 (position 10.45) lies between the two largest, both 0.2/1.2. */
    const double a = 0.04 / 1.04, b = 0.1 / 1.1, c = 0.2 / 1.2;
    /* GEMM alone on >= 33 CTAs: {0, 0.01/1.01, 0.02/1.02} three times: median the 5th of nine
     * (0.01/1.01), p95 (position 7.6) between the 8th and 9th, both 0.02/1.02. */
    const double d = 0.01 / 1.01, g = 0.02 / 1.02;
    /* Band: the spreads |f1 - f2| / min are {0.01/1.04, 0, 0, 0}; their 90th percentile (position
     * 2.7) is 0.7 x 0.01/1.04. The model's pick (a four-way tie: the first row, 1.04) is 4 % above
     * the best (1.00), outside the band: wrong, regret 0.04. Sweep 2's fastest is the 1.00 row
     * itself: the ceiling is right. */
    const double band = 0.7 * 0.01 / 1.04;
    const want_t want[] = {
        {"gemm_ape_median", d, 1},   {"gemm_ape_p95", g, 1},    {"op_ape_median", (a + b) / 2, 0},
        {"op_ape_p95", c, 0},        {"pick", 0.0, 0},          {"ceiling", 1.0, -1},
        {"pick_vs_ceiling", 0.0, 0}, {"exact_pick", 0.0, -1},   {"regret_p95", 0.04, 0},
        {"regret_mean", 0.04, -1},   {"worse_switch", 0.0, -1},
    };
    const cJSON *figs = member(t, "figures");
    cr_assert_eq(cJSON_GetArraySize(figs), (int)(sizeof(want) / sizeof(want[0])));
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        const cJSON *x = member(figs, want[i].key);
        double val = num(x, "value");
        cr_assert(t_rel_eq(val, want[i].value, 1e-9), "%s: %.17g, derived %.17g", want[i].key, val, want[i].value);
        /* Identical workloads: every resample is the whole set again, the interval is the point. */
        cr_assert(t_rel_eq(num(x, "lo"), want[i].value, 1e-9) && t_rel_eq(num(x, "hi"), want[i].value, 1e-9),
                  "%s: [%.17g, %.17g]", want[i].key, num(x, "lo"), num(x, "hi"));
        cr_assert_eq(met_of(x), want[i].met, "%s: met %d, derived %d", want[i].key, met_of(x), want[i].met);
        cr_assert_eq(cJSON_IsNull(member(x, "target")), want[i].met < 0, "%s: target", want[i].key);
    }
    /* The targets themselves: issue 27's thresholds, and 3 points under the ceiling (1 - 0.03). */
    const cJSON *tg = member(member(figs, "gemm_ape_p95"), "target");
    cr_assert_str_eq(cJSON_GetStringValue(member(tg, "comparison")), "<=");
    cr_assert_eq(num(tg, "threshold"), 0.08);
    tg = member(member(figs, "pick"), "target");
    cr_assert_str_eq(cJSON_GetStringValue(member(tg, "comparison")), ">=");
    cr_assert_eq(num(tg, "threshold"), 0.90);
    tg = member(member(figs, "pick_vs_ceiling"), "target");
    cr_assert(t_rel_eq(num(tg, "threshold"), 0.97, 1e-12), "%.17g", num(tg, "threshold"));
    cr_assert_str_eq(cJSON_GetStringValue(member(tg, "relative_to")), "ceiling");

    /* The decision rule: every prediction of a workload ties, so no gain clears any band and the rule
     * keeps the static default (fused 99 of 132, 256x128x64, group_m 8: the row measured x 1.20),
     * 20 % over the best (x 1.00), outside the band: wrong, regret 0.20; fused, so no worse switch. */
    const cJSON *dr = member(t, "decision_rule");
    cr_assert_eq(num(dr, "workloads"), 3);
    cr_assert_eq(num(dr, "left_default"), 0);
    cr_assert(t_rel_eq(num(member(dr, "err"), "vendor"), hw.err_vendor, 1e-12));
    const want_t rule[] = {
        {"pick", 0.0, -1}, {"regret_p95", 0.20, -1}, {"regret_mean", 0.20, -1}, {"worse_switch", 0.0, -1}};
    for (size_t i = 0; i < sizeof(rule) / sizeof(rule[0]); i++) {
        const cJSON *x = member(member(dr, "figures"), rule[i].key);
        cr_assert(t_rel_eq(num(x, "value"), rule[i].value, 1e-9) && t_rel_eq(num(x, "hi"), rule[i].value, 1e-9),
                  "%s: %.17g, derived %.17g", rule[i].key, num(x, "value"), rule[i].value);
    }
    cr_assert_eq(num(member(member(t, "worse_switches"), "decision_rule"), "count"), 0);
    cr_assert_eq(num(member(member(t, "worse_switches"), "fastest_predicted"), "workloads"), 3);

    cr_assert_eq(num(t, "workloads"), 3);
    cr_assert_eq(num(t, "gemm_rows"), 9, "three GEMM rows of each workload on >= 1/4 of the SMs");
    cr_assert_eq(num(t, "op_rows"), 12);
    cr_assert(t_rel_eq(num(member(t, "noise_band"), "median"), band, 1e-9), "%.17g vs %.17g",
              num(member(t, "noise_band"), "median"), band);
    cr_assert_eq(num(member(t, "noise_band"), "quantile"), 0.9);
    cr_assert_eq(num(member(t, "bootstrap"), "resamples"), DUET_CAL_EVAL_RESAMPLES);
    cr_assert_eq(num(member(t, "bootstrap"), "seed"), (double)DUET_CAL_EVAL_SEED);
    const cJSON *ts = member(t, "test_set");
    cr_assert_str_eq(cJSON_GetStringValue(member(ts, "shapes")), "synthetic n=3 seed=7 world=1");
    cr_assert_eq(num(ts, "seed"), 7);
    cr_assert_eq(num(ts, "order_seed"), 1);
    cr_assert_eq(num(ts, "sweep2_order_seed"), 2);
    cr_assert_str_eq(cJSON_GetStringValue(member(ts, "kernel_commit")), duet_build_info().kernel_commit);
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetArrayItem(member(ts, "sweep2_corpora"), 0)), "s2.json");

    /* The reference rules (not fitted at W = 1) see the same four-way tie and pick the same row:
     * regret 0.04, a wrong pick. Their APEs are |r_w / f - 1|, r_w = frozen / fluid of workload w:
     * twelve values, median the mean of the 6th and 7th, p95 the 11th + 0.45 x (12th - 11th). */
    const cJSON *ref = member(t, "reference_rules");
    cr_assert_eq(num(ref, "workloads"), 3);
    cr_assert(cJSON_IsFalse(member(ref, "seed_link_gbs_fitted")));
    const cJSON *rf = member(ref, "figures");
    double ape[12];
    for (int w = 0; w < 3; w++)
        for (int j = 0; j < 4; j++)
            ape[4 * w + j] = fabs(ratio[w] / f1[j] - 1.0);
    qsort(ape, 12, sizeof(double), cmp_dbl);
    double rm = num(member(rf, "op_ape_median"), "value"), rp = num(member(rf, "op_ape_p95"), "value");
    cr_assert(t_rel_eq(rm, (ape[5] + ape[6]) / 2, 1e-9), "%.17g", rm);
    cr_assert(t_rel_eq(rp, ape[10] + 0.45 * (ape[11] - ape[10]), 1e-9), "%.17g", rp);
    cr_assert(t_rel_eq(num(member(rf, "regret_p95"), "value"), 0.04, 1e-9));
    cr_assert(t_rel_eq(num(member(rf, "regret_mean"), "value"), 0.04, 1e-9));
    cr_assert_eq(num(member(rf, "pick"), "value"), 0.0);
    cr_assert(cJSON_IsNull(member(member(rf, "pick"), "met")), "the reference's lines have no target");
    /* Both regret intervals are the point 0.04: they touch, so "better" is not met. */
    cr_assert(cJSON_IsFalse(member(member(t, "better_than_reference"), "met")));
    /* Every row is fused and predicted by the rules: the best of every mode is the best of their own
     * options, so the second scoring gives the same figures, and the model's regret mean 0.04 does not
     * lie below theirs. */
    const cJSON *ra = member(ref, "figures_all_modes");
    cr_assert(t_rel_eq(num(member(ra, "regret_p95"), "value"), 0.04, 1e-9));
    cr_assert(t_rel_eq(num(member(ra, "regret_mean"), "value"), 0.04, 1e-9));
    cr_assert_eq(num(member(ra, "pick"), "value"), 0.0);
    cr_assert(cJSON_IsFalse(member(member(t, "better_than_reference_all_modes"), "met")));

    /* Without a second sweep the member is there, null. */
    char *plain = NULL;
    cr_assert_eq(duet_cal_validation_to_json(&v, files, 1, "h200", &plain), DUET_OK);
    cJSON *doc2 = cJSON_Parse(plain);
    cr_assert(cJSON_IsNull(member(doc2, "targets")));
    cJSON_Delete(doc2);
    free(plain);
    cJSON_Delete(doc);
    free(text);
    duet_corpus_free(&s1);
    duet_corpus_free(&s2);
}

/* The verdict against the reference rules, on hand-set intervals. */
Test(cal_eval_json, better_than_the_reference_needs_both_intervals_apart)
{
    duet_cal_eval_t e;
    memset(&e, 0, sizeof(e));
    e.ref_workloads = 5;
    e.regret_p95 = (duet_cal_ci_t){0.02, 0.01, 0.03};
    e.ref_regret_p95 = (duet_cal_ci_t){0.08, 0.04, 0.12};
    e.regret_mean = (duet_cal_ci_t){0.005, 0.002, 0.009};
    e.ref_regret_mean = (duet_cal_ci_t){0.02, 0.01, 0.03};
    cr_assert_eq(duet_cal_eval_better_than_reference(&e), 1);
    e.regret_mean.hi = 0.01; /* touches the reference's lower end: overlapping */
    cr_assert_eq(duet_cal_eval_better_than_reference(&e), 0);
    e.ref_workloads = 0;
    cr_assert_eq(duet_cal_eval_better_than_reference(&e), -1);
    cr_assert_eq(duet_cal_eval_better_than_reference_all(&e), -1);
    /* Against every mode only the regret mean counts: the model's top below the rules' bottom. */
    e.ref_workloads = 5;
    e.ref_all_regret_mean = (duet_cal_ci_t){0.03, 0.0101, 0.05};
    cr_assert_eq(duet_cal_eval_better_than_reference_all(&e), 1);
    e.ref_all_regret_mean.lo = 0.01;
    cr_assert_eq(duet_cal_eval_better_than_reference_all(&e), 0);
}

/* Find `label` in `text` from *pos on, parse "value %  [lo, hi] %  target  met" after it. */
static void text_figure(const char *text, const char **pos, const char *label, double v[3], char *met, size_t n)
{
    const char *at = strstr(*pos, label);
    cr_assert_not_null(at, "no line '%s' in the table", label);
    const char *p = at + strlen(label);
    cr_assert_eq(sscanf(p, "%lf %% [%lf, %lf] %%", &v[0], &v[1], &v[2]), 3, "line '%s': %.80s", label, p);
    const char *eol = strchr(p, '\n');
    cr_assert_not_null(eol);
    met[0] = '\0';
    if (eol - p >= 8 && strncmp(eol - 7, "NOT MET", 7) == 0)
        snprintf(met, n, "NOT MET");
    else if (strncmp(eol - 3, "met", 3) == 0)
        snprintf(met, n, "met");
    else if (strncmp(eol - 3, "n/a", 3) == 0)
        snprintf(met, n, "n/a");
    *pos = eol;
    (void)text;
}

Test(cal_eval_json, the_text_table_and_the_json_agree)
{
    double ratio[3];
    duet_corpus_t s1 = two_sweep_corpus(1, ratio), s2 = two_sweep_corpus(2, ratio);
    char p1[128], p2[128];
    t_tmp(p1, sizeof(p1), "test-s1.json");
    t_tmp(p2, sizeof(p2), "test-s2.json");
    cr_assert_eq(duet_corpus_save(&s1, p1), DUET_OK);
    cr_assert_eq(duet_corpus_save(&s2, p2), DUET_OK);
    duet_corpus_free(&s1);
    duet_corpus_free(&s2);
    t_cli_t *txt = malloc(sizeof(*txt)), *js = malloc(sizeof(*js));
    t_cli_run(txt, NULL, "validate", "--hw", "h200", "--corpus", p1, "--sweep2", p2, "--quiet", NULL);
    cr_assert_eq(txt->code, 0, "%s", txt->err);
    t_cli_run(js, NULL, "validate", "--hw", "h200", "--corpus", p1, "--sweep2", p2, "--quiet", "--json", NULL);
    cr_assert_eq(js->code, 0, "%s", js->err);
    cJSON *doc = cJSON_Parse(js->out);
    cr_assert_not_null(doc, "%s", js->out);
    const cJSON *t = member(doc, "targets");
    const char *pos = strstr(txt->out, "targets (held-out test set");
    cr_assert_not_null(pos, "%s", txt->out);
    for (int i = 0; i < duet_cal_eval_n_figures; i++) {
        const duet_cal_eval_figure_t *f = &duet_cal_eval_figures[i];
        const cJSON *grp = f->reference == 3 ? member(t, "decision_rule")
                           : f->reference    ? member(t, "reference_rules")
                                             : t;
        const cJSON *x = member(member(grp, f->reference == 2 ? "figures_all_modes" : "figures"), f->key);
        double v[3];
        char met[16];
        text_figure(txt->out, &pos, f->label, v, met, sizeof(met));
        const char *keys[3] = {"value", "lo", "hi"};
        for (int k = 0; k < 3; k++)
            cr_assert(fabs(v[k] - 100 * num(x, keys[k])) <= 0.005 + 1e-9, "%s %s: text %.2f, JSON %.17g", f->key,
                      keys[k], v[k], num(x, keys[k]));
        int m = met_of(x);
        const char *want = m > 0 ? "met" : m == 0 ? "NOT MET" : cJSON_IsNull(member(x, "target")) ? "" : "n/a";
        cr_assert_str_eq(met, want, "%s: text '%s', JSON met %d", f->key, met, m);
    }
    const char *verdict = strstr(pos, "intervals not overlapping: ");
    cr_assert_not_null(verdict);
    int better = met_of(member(t, "better_than_reference"));
    cr_assert_eq(strncmp(verdict + 27, better > 0 ? "met" : "NOT MET", better > 0 ? 3 : 7), 0, "%.40s", verdict);
    /* The header's counts and settings are the JSON's. */
    char head[160];
    snprintf(head, sizeof(head), "%d workloads, %d GEMM-alone rows", (int)num(t, "workloads"),
             (int)num(t, "gemm_rows"));
    cr_assert_not_null(strstr(txt->out, head), "%s", head);
    snprintf(head, sizeof(head), "median band %.2f %%", 100 * num(member(t, "noise_band"), "median"));
    cr_assert_not_null(strstr(txt->out, head), "%s", head);
    cr_assert_not_null(strstr(txt->out, "test set: synthetic n=3 seed=7 world=1"));
    cJSON_Delete(doc);
    free(txt);
    free(js);
}
