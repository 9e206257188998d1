/*
 * duet validate: a profile's accuracy on corpora beside the reference rules' (the library's
 * duet_cal_validate_rows and duet_cal_validation_to_json; this file parses, calls and prints).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cal_common.h"

static void cmd_validate_usage(FILE *f)
{
    fprintf(f,
            "usage: duet validate --corpus FILE... --hw PROFILE [--sweep2 FILE] [--json|--csv] [-o FILE]\n"
            "                     [--rows FILE] [--quiet]\n"
            "\n"
            "Predicts every measured row of the corpora with the profile and prints the accuracy table: makespan\n"
            "error, exact picks, picks within 8 CTAs, regret of the predicted best and top-k coverage within 3 %%.\n"
            "Beside it, the same table for the reference design's rules (policy frozen, fused rows, its one\n"
            "effective link bandwidth seed_link_gbs fitted on these corpora). docs/calibration.md explains\n"
            "each line.\n"
            "\n"
            "options:\n"
            "  --corpus FILE...   corpus files, duet-corpus/2 or /1 (repeat the flag or list several files after\n"
            "                     it)\n"
            "  --hw NAME|FILE     the profile to validate (e.g. the output of 'duet calibrate fit')\n"
            "  --json             the accuracy as JSON (schema duet-validation/1)\n"
            "  --csv              the accuracy table as CSV: key, metric, then duet, reference_rules and\n"
            "                     noise_floor, fractions (0.05 = 5 %%), an empty field where a column has none\n"
            "  -o, --output FILE  write the result (text, --json or --csv) to FILE instead of standard output\n"
            "  --rows FILE        per-row predictions as CSV (measured and predicted times in us), for residual\n"
            "                     analysis\n"
            "  --sweep2 FILE      the same grid measured again in another order (calibrate collect --order-seed):\n"
            "                     then the accuracy targets follow, every figure with a bootstrap 95 %%\n"
            "                     interval over the workloads, the noise-aware pick beside its re-measurement\n"
            "                     ceiling, the pick of duet's decision rule (the static default kept unless a\n"
            "                     gain clears the band of the known errors) beside duet's fastest prediction,\n"
            "                     vendor or concurrent picks measured worse than the default beyond the noise band,\n"
            "                     and the reference rules scored within their own options (repeatable);\n"
            "                     with --json, the same table as the object \"targets\" (no --csv form)\n"
            "  --quiet            no progress on stderr\n"
            "  --allow-device-mix take corpora of different devices, or a profile of another device than the\n"
            "                     corpora's (a warning instead of the refusal)\n"
            "  -h, --help         this text\n"
            "\n"
            "examples:\n"
            "  duet validate --corpus tuning_data/h200_world2.json --hw h200\n"
            "  duet validate --corpus w2.json w8.json --hw mi300x-fit.json --json -o accuracy.json\n"
            "  duet validate --corpus tuning_data/h200_world2.json --hw h200 --csv\n");
}

/* The options of `validate`. */
typedef struct cli_validate_opts {
    cli_corpora_t *cs;
    cli_corpora_t *sweep2;
    const char *hw_arg, *rows, *out;
    int json, csv, quiet, help;
} cli_validate_opts_t;

/* One option of `validate`. @return an exit code, or CLI_OPT_UNKNOWN. */
static int cli_validate_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cli_validate_opts_t *o = arg0;
    if (opt == OPT_CORPUS || opt == OPT_SWEEP2)
        return cli_corpora_add(opt == OPT_CORPUS ? o->cs : o->sweep2, cmd, arg);
    if (opt == OPT_HW || opt == OPT_ROWS || opt == 'o')
        *(opt == OPT_HW ? &o->hw_arg : opt == OPT_ROWS ? &o->rows : &o->out) = arg;
    else if (opt == OPT_ALLOW_DEVICE_MIX)
        o->cs->allow_device_mix = 1;
    else if (opt == OPT_JSON || opt == OPT_CSV || opt == OPT_QUIET)
        *(opt == OPT_JSON ? &o->json : opt == OPT_CSV ? &o->csv : &o->quiet) = 1;
    else
        return CLI_OPT_UNKNOWN;
    return CLI_EXIT_OK;
}

/* Parse `validate`'s arguments into o. @return an exit code (CLI_EXIT_OK to go on). */
static int cli_validate_parse(cli_validate_opts_t *o, const char *cmd, int argc, char **argv)
{
    static const struct option longopts[] = {{"corpus", required_argument, NULL, OPT_CORPUS},
                                             {"hw", required_argument, NULL, OPT_HW},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"csv", no_argument, NULL, OPT_CSV},
                                             {"output", required_argument, NULL, 'o'},
                                             {"rows", required_argument, NULL, OPT_ROWS},
                                             {"quiet", no_argument, NULL, OPT_QUIET},
                                             {"sweep2", required_argument, NULL, OPT_SWEEP2},
                                             CLI_ALLOW_DEVICE_MIX_LONGOPT,
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int rc = cli_getopt(cmd, argc, argv, longopts, cli_validate_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help)
        return rc;
    if ((rc = cli_corpora_operands(o->cs, cmd, argc, argv)) != CLI_EXIT_OK)
        return rc;
    if (o->hw_arg == NULL)
        return cli_usage_error(cmd, "give the profile to validate with --hw NAME|FILE");
    if ((rc = cli_out_formats(cmd, o->json, o->csv)) != CLI_EXIT_OK)
        return rc;
    if (o->sweep2->n > 0 && o->csv)
        return cli_usage_error(cmd, "--sweep2's target table has no CSV form: use the text or --json");
    return cli_out_check(cmd, "-o", o->out);
}

/* Validate (the library's duet_cal_validate_rows), with progress and --rows. */
static int cli_validate_run(const cli_validate_opts_t *o, const char *cmd, const duet_hw_t *hw,
                            duet_cal_validation_t *v)
{
    cli_progress_t pr;
    cli_progress_init(&pr, o->quiet);
    duet_cal_rows_csv_t *csv = NULL;
    int rc = cli_rows_open(cmd, o->rows, &csv);
    if (rc != CLI_EXIT_OK)
        return rc;
    duet_status_t st = duet_cal_validate_rows(o->cs->c, o->cs->path, o->cs->n, hw, cli_progress_fn, &pr,
                                              csv != NULL ? duet_cal_rows_csv_row : NULL, csv, v);
    cli_progress_end(&pr);
    return cli_rows_close(cmd, csv, st < 0 ? cli_fail(cmd, st) : CLI_EXIT_OK);
}

/* The columns of the accuracy table. */
static void cli_validate_columns(const duet_cal_validation_t *v, cli_column_t cols[3])
{
    cols[0] = (cli_column_t){"duet (fluid)", "duet", &v->model};
    cols[1] = (cli_column_t){"reference rules", "reference_rules", v->seed_fit.n_params > 0 ? &v->seed : NULL};
    cols[2] = (cli_column_t){"noise floor", "noise_floor", &v->noise.remeasure};
}

/* The validate table. @return the accuracy table's status. */
static duet_status_t cli_validate_print(FILE *f, const cli_validate_opts_t *o, const duet_hw_t *hw,
                                        const duet_cal_validation_t *v)
{
    int have_seed = v->seed_fit.n_params > 0;
    fprintf(f, "duet validate: profile %s on %d corpus file%s: %lld rows (%lld failed), %d shapes\n\n", hw->name,
            o->cs->n, o->cs->n > 1 ? "s" : "", (long long)v->rows_total, (long long)v->rows_failed, (int)v->shapes);
    cli_column_t cols[3];
    cli_validate_columns(v, cols);
    duet_status_t st = cli_metrics_write(f, cols, 3, DUET__TABLE_TEXT);
    if (st < 0)
        return st;
    cli_noise_lines(f, &v->noise);
    if (have_seed)
        fprintf(f,
                "\nreference rules: policy frozen on fused rows, seed_link_gbs fitted to %.4g GB/s on %lld fused op "
                "rows (%s%s); concurrent and K-split rows are not predicted by them and count as misses when they "
                "are the best.\n",
                v->seed_fit.params[0].value, (long long)v->seed_fit.rows, v->seed_fit.stop_reason,
                v->seed_fit.params[0].at_bound ? ", at its bound" : "");
    else
        fprintf(f, "\nreference rules: not fitted (no measured unsplit fused op row moves remote bytes: at W = 1 their "
                   "one constant, seed_link_gbs, has nothing to fit)\n");
    return DUET_OK;
}

/* The target table (text only: --json has it as the object "targets"), a figure of
 * duet_cal_eval_figures a row: value and interval in percent, the target, met or not. */
static const duet__col_t cli_target_cols[] = {
    {"figure", NULL, NULL, "  %-44s", DUET__CELL_STR, 0, 0, NULL},
    {"value", NULL, NULL, " %7.2f %%", DUET__CELL_NUM, 100, 0, NULL},
    {"interval", "95 % interval", NULL, "  %18s", DUET__CELL_STR, 0, 0, NULL}, /* "[lo, hi] %" */
    {"target", NULL, NULL, "  %-9s", DUET__CELL_STR, 0, 0, NULL},
    {"met", "", NULL, " %s", DUET__CELL_STR, 0, 0, NULL},
};

/* One figure's row of the target table. */
static void cli_target_row(duet__table_t *t, const duet_cal_eval_t *e, const duet_cal_eval_figure_t *f)
{
    const duet_cal_ci_t *c = duet_cal_eval_figure_ci(e, f);
    char target[40] = "";
    if (f->relative_to_ceiling)
        snprintf(target, sizeof(target), "ceil - %g", -100 * f->threshold);
    else if (f->cmp != DUET_CAL_TARGET_NONE)
        snprintf(target, sizeof(target), "%s %g %%", f->cmp == DUET_CAL_TARGET_LE ? "<=" : ">=", 100 * f->threshold);
    int met = duet_cal_eval_figure_met(e, f);
    duet__table_strf(t, "%s%s", f->indent || f->reference ? "  " : "", f->label);
    duet__table_num(t, c->value);
    duet__table_strf(t, "[%6.2f, %6.2f] %%", 100 * c->lo, 100 * c->hi);
    duet__table_str(t, target);
    duet__table_str(t, met > 0 ? "met" : met == 0 ? "NOT MET" : f->cmp != DUET_CAL_TARGET_NONE ? "n/a" : "");
}

/* One cell of the side-by-side table: "12.34 [10.00, 15.00]" in percent. */
static void cli_ci_cell(duet__table_t *t, const duet_cal_ci_t *c)
{
    if (c == NULL)
        duet__table_str(t, "  (fused picks only)");
    else
        duet__table_strf(t, "%6.2f [%6.2f, %6.2f]", 100 * c->value, 100 * c->lo, 100 * c->hi);
}

/*
 * duet's fastest prediction and its decision rule beside the reference rules under both scorings, the
 * figures the four share (the reference rules pick fused rows only: no switch of theirs is worse).
 */
static duet_status_t cli_validate_side_by_side(FILE *out, const duet_cal_eval_t *e)
{
    static const duet__col_t cols[] = {
        {"figure", "side by side, % [95 % interval]:", NULL, "  %-32s", DUET__CELL_STR, 0, 0, NULL},
        {"duet", "duet (plain argmin)", NULL, " %-24s", DUET__CELL_STR, 0, 0, NULL},
        {"duet_rule", "duet (decision rule)", NULL, " %-24s", DUET__CELL_STR, 0, 0, NULL},
        {"reference_own", "reference, own options", NULL, " %-24s", DUET__CELL_STR, 0, 0, NULL},
        {"reference_all", "reference, every mode", NULL, " %s", DUET__CELL_STR, 0, 0, NULL},
    };
    const struct {
        const char *label;
        const duet_cal_ci_t *duet, *rule, *own, *all;
    } rows[] = {{"noise-aware pick", &e->pick, &e->rule_pick, &e->ref_pick, &e->ref_all_pick},
                {"regret p95", &e->regret_p95, &e->rule_regret_p95, &e->ref_regret_p95, &e->ref_all_regret_p95},
                {"regret mean", &e->regret_mean, &e->rule_regret_mean, &e->ref_regret_mean, &e->ref_all_regret_mean},
                {"worse switch (vendor/concurrent)", &e->worse_switch, &e->rule_worse_switch, NULL, NULL}};
    duet__table_t t;
    duet__table_init(&t, cols, (int)(sizeof(cols) / sizeof(cols[0])));
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        duet__table_str(&t, rows[i].label);
        cli_ci_cell(&t, rows[i].duet);
        cli_ci_cell(&t, rows[i].rule);
        cli_ci_cell(&t, rows[i].own);
        cli_ci_cell(&t, rows[i].all);
    }
    fputc('\n', out);
    duet_status_t st = duet__table_text(&t, out);
    duet__table_free(&t);
    return st;
}

/* The line that opens the part of the target table that figure i starts, if it starts one. */
static void cli_target_section(FILE *out, const duet_cal_eval_t *e, int i)
{
    const duet_cal_eval_figure_t *f = &duet_cal_eval_figures[i];
    if (i > 0 && duet_cal_eval_figures[i - 1].reference == f->reference)
        return;
    if (f->reference == 1)
        fprintf(out,
                "\n  reference rules (the profile's calibrated GEMM constants; seed_link_gbs %s), scored within "
                "their own options (%d workloads):\n",
                e->ref_fitted ? "fitted" : "not fitted: no remote traffic", e->ref_workloads);
    if (f->reference == 2)
        fprintf(out, "\n  the same picks scored as duet's are, against the best measured row of every mode:\n");
    if (f->reference == 3)
        fprintf(out,
                "\n  duet's decision rule (the static default kept unless a prediction's gain clears the band of the "
                "two modes' known errors, err_<mode> %.2f / %.2f / %.2f %%), scored as duet's fastest prediction "
                "is (%d workloads with the static default measured):\n",
                100 * e->rule_err[DUET_MODE_FUSED], 100 * e->rule_err[DUET_MODE_CONCURRENT],
                100 * e->rule_err[DUET_MODE_VENDOR], e->rule_workloads);
}

/* The target table: its header, then the figures, each part after its opening line. */
static duet_status_t cli_target_table(FILE *out, const duet_cal_eval_t *e)
{
    duet__table_t t;
    duet__table_init(&t, cli_target_cols, (int)(sizeof(cli_target_cols) / sizeof(cli_target_cols[0])));
    for (int i = 0; i < duet_cal_eval_n_figures; i++)
        cli_target_row(&t, e, &duet_cal_eval_figures[i]);
    duet_status_t st = duet__table_text_head(&t, out);
    for (int i = 0; st == DUET_OK && i < duet_cal_eval_n_figures; i++) {
        cli_target_section(out, e, i);
        st = duet__table_text_rows(&t, out, (size_t)i, 1);
    }
    duet__table_free(&t);
    return st;
}

/* "met", "NOT MET" or why not available, for duet_cal_eval_better_than_reference*(). */
static const char *cli_better_word(int better)
{
    return better < 0 ? "not available (no rows the reference rules predict)" : better > 0 ? "met" : "NOT MET";
}

/* The targets of issue 27 on a test set in two sweeps (docs/calibration.md, "Honest evaluation"). */
static duet_status_t cli_validate_targets(FILE *out, const duet_cal_eval_t *e)
{
    fprintf(out, "\ntest set: %s (sweep 1: %s, order seed %lld; kernels %s)",
            e->prov.shapes[0] ? e->prov.shapes : "not recorded", e->date, (long long)e->prov.order_seed,
            e->prov.kernel_commit[0] ? e->prov.kernel_commit : "not recorded");
    fprintf(
        out,
        "\n\ntargets (held-out test set, two sweeps): %d workloads, %d GEMM-alone rows on >= 1/4 of the SMs, %d op "
        "rows;\n95 %% intervals from %d bootstrap resamples of the workloads (seed %llu); noise band per workload = "
        "the %.0fth percentile of its configurations' sweep-to-sweep spread (median band %.2f %%)\n\n",
        e->workloads, e->gemm_rows, e->op_rows, e->resamples, (unsigned long long)e->seed, 100 * e->band_q,
        100 * e->band_median);
    duet_status_t st = cli_target_table(out, e);
    if (st < 0)
        return st;
    fprintf(out,
            "\n  worse switches (a vendor or concurrent pick measured slower than the static default by more than the "
            "workload's band): fastest predicted %d of %d workloads, decision rule %d of %d (it left the static "
            "default on %d)\n",
            e->worse_switch_n, e->worse_switch_of, e->rule_worse_switch_n, e->rule_workloads, e->rule_left_n);
    fprintf(out, "\n  better than the reference rules on regret (p95 and mean), intervals not overlapping: %s\n",
            cli_better_word(duet_cal_eval_better_than_reference(e)));
    fprintf(out,
            "  ahead of the reference rules scored against every mode, regret mean intervals not overlapping: %s\n",
            cli_better_word(duet_cal_eval_better_than_reference_all(e)));
    return cli_validate_side_by_side(out, e);
}

/* The target table of the test set in two sweeps (the library's duet_cal_evaluate), with progress. */
static int cli_validate_eval(const cli_validate_opts_t *o, const char *cmd, const duet_hw_t *hw, duet_cal_eval_t *e)
{
    cli_progress_t pr;
    cli_progress_init(&pr, o->quiet);
    duet_status_t st = duet_cal_evaluate(o->cs->c, o->cs->n, o->sweep2->c, o->sweep2->n, hw, cli_progress_fn, &pr, e);
    cli_progress_end(&pr);
    return st < 0 ? cli_fail(cmd, st) : CLI_EXIT_OK;
}

/* The result in its format, on out; e is the target table of --sweep2, or NULL. @return an exit code. */
static int cli_validate_output(cli_out_t *out, const cli_validate_opts_t *o, const char *cmd, const duet_hw_t *hw,
                               const duet_cal_validation_t *v, const duet_cal_eval_t *e)
{
    if (o->json) {
        char *text = NULL;
        duet_status_t st = duet_cal_validation_targets_to_json(v, e, o->cs->path, o->cs->n, o->sweep2->path,
                                                               o->sweep2->n, hw->name, &text);
        if (st < 0)
            return cli_fail(cmd, st);
        fputs(text, out->f);
        free(text);
        return CLI_EXIT_OK;
    }
    cli_column_t cols[3];
    cli_validate_columns(v, cols);
    duet_status_t st =
        o->csv ? cli_metrics_write(out->f, cols, 3, DUET__TABLE_CSV) : cli_validate_print(out->f, o, hw, v);
    if (st == DUET_OK && e != NULL && !o->csv)
        st = cli_validate_targets(out->f, e);
    return st < 0 ? cli_fail(cmd, st) : CLI_EXIT_OK;
}

int cmd_validate(int argc, char **argv)
{
    static const char cmd[] = "validate";
    cli_validate_opts_t o;
    memset(&o, 0, sizeof(o));
    o.cs = calloc(1, sizeof(*o.cs));
    o.sweep2 = calloc(1, sizeof(*o.sweep2));
    if (o.cs == NULL || o.sweep2 == NULL) {
        free(o.cs);
        free(o.sweep2);
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAILED;
    }
    duet_hw_t hw;
    duet_cal_validation_t v;
    duet_cal_eval_t e;
    cli_out_t out = {NULL, NULL, 0, NULL};
    int rc = cli_validate_parse(&o, cmd, argc, argv);
    /* Every input is loaded before anything is computed or printed: a bad sweep-2 file is the one
     * line of its error, not a failure after half a table. */
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cmd_validate_usage(stdout);
    } else if ((rc = cli_load_hw(cmd, o.hw_arg, &hw)) == CLI_EXIT_OK &&
               (rc = cli_corpora_load(o.cs, cmd)) == CLI_EXIT_OK &&
               (o.sweep2->n == 0 || (rc = cli_corpora_load(o.sweep2, cmd)) == CLI_EXIT_OK) &&
               (rc = cli_device_check(cmd, o.cs, o.sweep2, &hw, "profile")) == CLI_EXIT_OK &&
               (rc = cli_validate_run(&o, cmd, &hw, &v)) == CLI_EXIT_OK &&
               (o.sweep2->n == 0 || (rc = cli_validate_eval(&o, cmd, &hw, &e)) == CLI_EXIT_OK) &&
               (rc = cli_out_open(&out, cmd, o.out)) == CLI_EXIT_OK) {
        rc = cli_out_close(&out, cmd, cli_validate_output(&out, &o, cmd, &hw, &v, o.sweep2->n > 0 ? &e : NULL));
    }
    cli_corpora_free(o.cs);
    cli_corpora_free(o.sweep2);
    free(o.cs);
    free(o.sweep2);
    return rc;
}
