/*
 * duet calibrate select: choose among candidate models (the constants to fit, their start values)
 * by cross-validation, and score the choice with nested cross-validation (the library's
 * duet_cal_candidates_load, duet_cal_select_run and duet_cal_selection_to_json; this file parses,
 * calls and prints).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cal_common.h"

static void cmd_select_usage(FILE *f)
{
    fprintf(f,
            "usage: duet calibrate select --corpus FILE... --hw BASE --candidates FILE [--outer K] [--inner K]\n"
            "                             [--max-iter N] [--threads N] [--json] [-o FILE] [--quiet]\n"
            "\n"
            "Which constants to fit, and from which start values, are choices made on data; the best of several\n"
            "cross-validation scores flatters the choice, since the data that chose also scores it. select makes\n"
            "the choice inside an outer cross-validation by shape: in each outer fold an inner k-fold CV on the\n"
            "outer training shapes scores every candidate by its held-out rms log error and picks the lowest; the\n"
            "pick is refitted on all the outer training shapes and predicts the outer test shapes. Those\n"
            "predictions score the whole procedure (nested). Then the same inner CV on every shape picks the\n"
            "candidate for the data, and its own (non-nested) CV score is printed beside the nested one: the\n"
            "difference is the optimism of choosing on data. docs/calibration.md has the details.\n"
            "\n"
            "Fits: outer x (inner x candidates + 1) + candidates x inner + 1, printed first; at most %d.\n"
            "\n"
            "options:\n"
            "  --corpus FILE...    duet-corpus/1 files (repeat the flag or list several files after it)\n"
            "  --hw NAME|FILE      the base profile: start values, bounds, and every constant not fitted\n"
            "  --candidates FILE   one candidate a line: NAME PARAM,PARAM,... [CONST=VALUE ...]\n"
            "                      NAME: 1 to 31 of A-Z a-z 0-9 _ . -; the constants to fit as for 'calibrate\n"
            "                      fit --params'; each CONST=VALUE a start value over BASE; '#' starts a comment\n"
            "  --outer K           outer folds (default 5; 2 to %d)\n"
            "  --inner K           inner folds (default 5; 2 to %d)\n"
            "  --max-iter N        trust-region iterations per fit (default 100)\n"
            "  --threads N         fits run in parallel (default 0: one per CPU)\n"
            "  --json              the result as JSON (duet-selection/1) on stdout\n"
            "  -o, --output FILE   the candidate picked on all the data, fitted on every row, as a profile\n"
            "                      (duet-hw/1, written atomically)\n"
            "  --quiet             no progress on stderr\n"
            "  --allow-device-mix  take corpora of different devices, or a base profile of another device than the\n"
            "                      corpora's (a warning instead of the refusal)\n"
            "  -h, --help          this text\n"
            "\n"
            "example (candidates.txt):\n"
            "  # name  constants to fit                                  start values over the base\n"
            "  core    gemm_eff_bf16,tile_overhead_us,launch_us\n"
            "  heat    gemm_eff_bf16,tile_overhead_us,launch_us,clock_heat  clock_heat=0.1\n"
            "\n"
            "  duet calibrate select --corpus tuning_data/h200_world1-train-s1.json --hw h200 \\\n"
            "                        --candidates candidates.txt --outer 3 --inner 3 -o h200-picked.json\n",
            DUET_CAL_SELECT_MAX_FITS, DUET_CAL_MAX_FOLDS, DUET_CAL_MAX_FOLDS);
}

/* The options of `calibrate select`. */
typedef struct cli_select_opts {
    cli_corpora_t *cs;
    const char *hw_arg, *cands_arg, *out;
    int32_t outer, inner;
    int json, quiet, help;
    duet_cal_params_t p;
} cli_select_opts_t;

/* One option of `calibrate select`. @return an exit code (CLI_EXIT_OK to go on). */
static int cli_select_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cli_select_opts_t *o = arg0;
    long long v;
    int rc = cli_cal_fit_option(cmd, opt, arg, o->cs, &o->hw_arg, &o->p, &o->quiet, &o->help);
    if (rc >= 0)
        return rc;
    switch (opt) {
    case OPT_CANDIDATES:
        o->cands_arg = arg;
        return CLI_EXIT_OK;
    case 'o':
        o->out = arg;
        return CLI_EXIT_OK;
    case OPT_OUTER:
    case OPT_INNER:
        if (cli_parse_i64(arg, 2, DUET_CAL_MAX_FOLDS, &v) != 0)
            return cli_usage_error(cmd, "--%s: '%s' is not an integer in [2, %d]", opt == OPT_OUTER ? "outer" : "inner",
                                   arg, DUET_CAL_MAX_FOLDS);
        *(opt == OPT_OUTER ? &o->outer : &o->inner) = (int32_t)v;
        return CLI_EXIT_OK;
    case OPT_JSON:
        o->json = 1;
        return CLI_EXIT_OK;
    default:
        return CLI_OPT_UNKNOWN;
    }
}

/* Parse `calibrate select`'s arguments into o. @return an exit code (CLI_EXIT_OK to go on). */
static int cli_select_parse(cli_select_opts_t *o, const char *cmd, int argc, char **argv)
{
    static const struct option longopts[] = {{"corpus", required_argument, NULL, OPT_CORPUS},
                                             {"hw", required_argument, NULL, OPT_HW},
                                             {"candidates", required_argument, NULL, OPT_CANDIDATES},
                                             {"outer", required_argument, NULL, OPT_OUTER},
                                             {"inner", required_argument, NULL, OPT_INNER},
                                             {"max-iter", required_argument, NULL, OPT_MAX_ITER},
                                             {"threads", required_argument, NULL, OPT_THREADS},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"output", required_argument, NULL, 'o'},
                                             {"quiet", no_argument, NULL, OPT_QUIET},
                                             CLI_ALLOW_DEVICE_MIX_LONGOPT,
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int rc = cli_cal_getopt(cmd, argc, argv, longopts, cli_select_option, o, &o->help, o->cs, &o->hw_arg);
    if (rc != CLI_EXIT_OK || o->help)
        return rc;
    if (o->cands_arg == NULL)
        return cli_usage_error(cmd, "give the candidate models with --candidates FILE");
    return CLI_EXIT_OK;
}

/* The candidates, and the size of the work: refused (exit 2) beyond DUET_CAL_SELECT_MAX_FITS fits. */
static int cli_select_load(const cli_select_opts_t *o, const char *cmd, const duet_hw_t *base,
                           duet_cal_candidates_t *cands)
{
    if (duet_cal_candidates_load(o->cands_arg, base, cands) < 0) {
        cli_error(cmd, "--candidates: %s", duet_last_error());
        return CLI_EXIT_USAGE;
    }
    duet_status_t st = duet_cal_select_check(o->outer, o->inner, cands->n);
    return st < 0 ? cli_fail(cmd, st) : CLI_EXIT_OK;
}

/* Select (the library's duet_cal_select_run), with the fit count first and progress. */
static int cli_select_run(cli_select_opts_t *o, const char *cmd, const duet_hw_t *base,
                          const duet_cal_candidates_t *cands, duet_cal_selection_t *sel)
{
    if (!o->quiet)
        fprintf(stderr,
                "calibrate select: %lld fits = %d outer folds x (%d inner folds x %d candidates + 1 refit) + %d "
                "candidates x %d inner folds on all the data + 1 final fit\n",
                (long long)duet_cal_select_fit_count(o->outer, o->inner, cands->n), (int)o->outer, (int)o->inner,
                (int)cands->n, (int)cands->n, (int)o->inner);
    cli_progress_t pr;
    cli_progress_init(&pr, o->quiet);
    o->p.progress = cli_progress_fn;
    o->p.progress_arg = &pr;
    duet_status_t st =
        duet_cal_select_run(o->cs->c, o->cs->path, o->cs->n, base, cands, &o->p, o->outer, o->inner, sel);
    cli_progress_end(&pr);
    return st < 0 ? cli_fail(cmd, st) : CLI_EXIT_OK;
}

/* The table of inner scores (text only: --json has them): a label, shapes, each candidate's score
 * and its mark ('*' the pick) in a column as wide as its name (at least 10), the pick's held-out score. */
typedef struct cli_select_table {
    duet__col_t cols[3 + 2 * DUET_CAL_MAX_CANDIDATES];
    char fmt[DUET_CAL_MAX_CANDIDATES][24];
    duet__table_t t;
} cli_select_table_t;

static void cli_select_table_init(cli_select_table_t *st, const duet_cal_candidates_t *cands)
{
    int n = 0;
    st->cols[n++] = (duet__col_t){"label", "", NULL, "%-24s", DUET__CELL_STR, 0, 0, NULL};
    st->cols[n++] = (duet__col_t){"shapes", NULL, NULL, " %7lld", DUET__CELL_INT, 0, 0, NULL};
    for (int32_t c = 0; c < cands->n; c++) {
        int w = (int)strlen(cands->c[c].name) > 10 ? (int)strlen(cands->c[c].name) : 10;
        snprintf(st->fmt[c], sizeof(st->fmt[c]), "  %%%d.4f", w);
        st->cols[n++] = (duet__col_t){cands->c[c].name, NULL, NULL, st->fmt[c], DUET__CELL_NUM, 0, 0, NULL};
        st->cols[n++] = (duet__col_t){"picked", "", NULL, "%1s", DUET__CELL_STR, 0, 0, NULL};
    }
    st->cols[n++] = (duet__col_t){"held_out", "held out", NULL, "  %10s", DUET__CELL_STR, 0, 0, NULL}; /* "-": none */
    duet__table_init(&st->t, st->cols, n);
}

/* One row of the inner scores. */
static void cli_select_row(duet__table_t *t, const char *label, int32_t shapes, const duet_cal_candidates_t *cands,
                           const double *rms, int32_t picked, double held)
{
    duet__table_str(t, label);
    duet__table_int(t, shapes);
    for (int32_t c = 0; c < cands->n; c++) {
        duet__table_num(t, rms[c]);
        duet__table_str(t, c == picked ? "*" : " ");
    }
    if (isfinite(held))
        duet__table_strf(t, "%.4f", held);
    else
        duet__table_str(t, "-");
}

/* What `calibrate select` prints. */
static void cli_select_print(const cli_select_opts_t *o, const duet_cal_candidates_t *cands,
                             const duet_cal_selection_t *sel)
{
    printf("duet calibrate select: %d corpus file%s, %lld rows (%lld failed), %d shapes, base profile %s; %d "
           "candidates, %d outer x %d inner folds: %lld fits (%lld stopped before converging), %.1f s\n\n",
           o->cs->n, o->cs->n > 1 ? "s" : "", (long long)sel->rows_total, (long long)sel->rows_failed, (int)sel->shapes,
           o->hw_arg, (int)cands->n, (int)sel->outer, (int)sel->inner, (long long)sel->fits,
           (long long)sel->fits_unconverged, sel->wall_s);
    printf("rms log error of each candidate's inner cross-validation (* the pick), and the pick refitted on the\n"
           "outer training shapes, on the outer test shapes (held out):\n\n");
    cli_select_table_t tab;
    cli_select_table_init(&tab, cands);
    char label[48];
    for (int32_t f = 0; f < sel->outer; f++) {
        const duet_cal_select_fold_t *fo = &sel->fold[f];
        snprintf(label, sizeof(label), "outer fold %d/%d", (int)f + 1, (int)sel->outer);
        cli_select_row(&tab.t, label, fo->shapes, cands, fo->inner_rms, fo->picked, fo->refit.rms_log_held_out);
    }
    cli_select_row(&tab.t, "all data (not nested)", sel->shapes, cands, sel->all_rms, sel->picked, NAN);
    cli_table_printed("calibrate select", duet__table_text(&tab.t, stdout));
    duet__table_free(&tab.t);
    printf("\nnested held out (every shape predicted by its outer fold's pick, refitted without it):\n\n");
    cli_column_t col = {"nested", "nested", &sel->nested};
    cli_table_printed("calibrate select", cli_metrics_write(stdout, &col, 1, DUET__TABLE_TEXT));
    double cv = sel->all_rms[sel->picked];
    printf("\nrms log error of the procedure, nested: %.4f. The pick on all the data, '%s', scores %.4f by the\n"
           "cross-validation that chose it (not nested): choosing on data flatters it by %+.4f.\n",
           sel->nested_rms_log, cands->c[sel->picked].name, cv, sel->nested_rms_log - cv);
    if (o->out != NULL)
        printf("\nwrote %s (profile %s: candidate '%s' fitted on every row, %d iterations, %s; rms log error "
               "%.4f -> %.4f)\n",
               o->out, sel->fit.hw.name, cands->c[sel->picked].name, (int)sel->fit.iterations, sel->fit.stop_reason,
               sel->fit.rms_log_start, sel->fit.rms_log_end);
}

/* -o: the pick fitted on every row, its fitted constants' sources naming the corpora. */
static int cli_select_save(const cli_select_opts_t *o, const char *cmd, duet_cal_selection_t *sel)
{
    if (o->out == NULL)
        return CLI_EXIT_OK;
    duet_cal_fit_set_sources(&sel->fit, o->cs->label, o->cs->n, NULL);
    /* The profile is of the device its corpora measured (when they are of one), as a fit's. */
    const char *dev = cli_corpora_one_device(o->cs);
    if (dev != NULL)
        snprintf(sel->fit.hw.device, sizeof(sel->fit.hw.device), "%s", dev);
    duet_status_t st = duet_hw_save(&sel->fit.hw, o->out);
    if (st < 0)
        return cli_fail(cmd, st);
    if (!sel->fit.converged)
        fprintf(stderr, "duet: %s: warning: the final fit did not converge (%s); %s holds where it stopped\n", cmd,
                sel->fit.stop_reason, o->out);
    return CLI_EXIT_OK;
}

int cmd_calibrate_select(int argc, char **argv)
{
    static const char cmd[] = "calibrate select";
    cli_select_opts_t o;
    memset(&o, 0, sizeof(o));
    o.p = duet_cal_default_params();
    o.outer = o.inner = 5;
    o.cs = calloc(1, sizeof(*o.cs));
    duet_cal_candidates_t *cands = calloc(1, sizeof(*cands));
    duet_cal_selection_t *sel = calloc(1, sizeof(*sel));
    duet_hw_t base;
    char *text = NULL;
    int rc;
    if (o.cs == NULL || cands == NULL || sel == NULL) {
        cli_error(cmd, "out of memory");
        rc = CLI_EXIT_FAILED;
        goto cleanup;
    }
    if ((rc = cli_select_parse(&o, cmd, argc, argv)) != CLI_EXIT_OK || o.help) {
        if (o.help)
            cmd_select_usage(stdout);
        goto cleanup;
    }
    if ((rc = cli_load_hw(cmd, o.hw_arg, &base)) != CLI_EXIT_OK ||
        (rc = cli_select_load(&o, cmd, &base, cands)) != CLI_EXIT_OK ||
        (rc = cli_corpora_load(o.cs, cmd)) != CLI_EXIT_OK ||
        (rc = cli_device_check(cmd, o.cs, NULL, &base, "base profile")) != CLI_EXIT_OK ||
        (rc = cli_select_run(&o, cmd, &base, cands, sel)) != CLI_EXIT_OK ||
        (rc = cli_select_save(&o, cmd, sel)) != CLI_EXIT_OK)
        goto cleanup;
    if (o.json) {
        duet_status_t st = duet_cal_selection_to_json(sel, cands, o.cs->path, o.cs->n, o.hw_arg, &text);
        if (st < 0) {
            rc = cli_fail(cmd, st);
            goto cleanup;
        }
        fputs(text, stdout);
    } else {
        cli_select_print(&o, cands, sel);
    }
cleanup:
    free(text);
    if (o.cs != NULL)
        cli_corpora_free(o.cs);
    free(o.cs);
    free(sel);
    free(cands);
    return rc;
}
