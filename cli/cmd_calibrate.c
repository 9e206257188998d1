/*
 * duet calibrate fit: fit a hardware profile's constants to measured corpora and report the
 * held-out accuracy (the library's duet_cal_report_run and duet_cal_fit_save; this file parses,
 * calls and prints). `duet calibrate collect` (the measurement, under mpirun) lives in the GPU
 * build; `duet validate` in cli/cmd_validate.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cal_common.h"
#ifdef DUET_GPU_BUILD
#include "cli/gpu/gpu.h" /* cmd_collect: the measurement, in the GPU build only */
#define CLI_HAVE_COLLECT 1
#else
#define CLI_HAVE_COLLECT 0
#endif

static void cmd_calibrate_usage(FILE *f)
{
    fprintf(f,
            "usage: duet calibrate <subcommand> [options]\n"
            "\n"
            "Calibration fits the constants of a hardware profile to measurements of the real kernels, so that\n"
            "'duet predict' ranks configurations the way the GPU does. docs/calibration.md has the procedure.\n"
            "\n"
            "subcommands:\n"
            "  collect   measure a corpus on this node's GPUs, under mpirun (%s)\n"
            "  fit       fit a profile to corpora and report its held-out accuracy (CPU, no GPU needed)\n"
            "  select    choose which constants to fit (and their start values) among candidates, scored by\n"
            "            nested cross-validation (CPU)\n"
            "\n"
            "  duet calibrate <subcommand> --help   shows a subcommand's options and examples\n"
            "  duet validate --help                 the accuracy table of a profile on corpora\n"
            "\n"
            "examples:\n"
            "  mpirun -np 8 build-gpu/duet calibrate collect --hw mi300x -o tuning_data/gfx942_world8.json\n"
            "  duet calibrate fit --corpus tuning_data/gfx942_world8.json --hw mi300x -o mi300x-fit.json \\\n"
            "                     --report mi300x-fit-report.json\n",
            CLI_HAVE_COLLECT ? "this build has it" : "needs a GPU build (make gpu)");
}

/* The default parameter list, wrapped onto indented lines of the help text. */
static void cli_print_default_params(FILE *f)
{
    const char *s = duet_cal_default_fit_names;
    int col = 24;
    fprintf(f, "%24s", "");
    while (*s) {
        const char *end = strchr(s, ',');
        int len = end ? (int)(end - s) : (int)strlen(s);
        if (s != duet_cal_default_fit_names) {
            if (col + len + 2 > 110) {
                fprintf(f, ",\n%24s", "");
                col = 24;
            } else {
                fprintf(f, ", ");
                col += 2;
            }
        }
        fprintf(f, "%.*s", len, s);
        col += len;
        s += len + (end ? 1 : 0);
    }
    fprintf(f, ";\n%24sand splitk_sm_gbs when a corpus has K-split rows)\n", "");
}

static void cmd_fit_usage(FILE *f)
{
    fprintf(
        f,
        "usage: duet calibrate fit --corpus FILE... --hw BASE -o PROFILE.json --report REPORT.json\n"
        "                          [--params LIST] [--folds K] [--max-iter N] [--threads N] [--name NAME]\n"
        "                          [--date DATE] [--accept-unconverged] [--rows FILE] [--quiet]\n"
        "\n"
        "Fits the chosen constants of the profile BASE to every measured row of the corpora: minimises the\n"
        "sum of squared log errors log(predicted / measured) with GSL's trust-region least squares, each\n"
        "constant as its logarithm (so it stays positive) within the profile's bounds. Then k-fold\n"
        "cross-validation grouped by shape (all rows of a workload in one fold) says how well the fitted\n"
        "model predicts shapes it has not seen. The same is done for the reference design's rules\n"
        "(policy frozen, seed_link_gbs fitted), so the two compare on the same rows.\n"
        "\n"
        "inputs:\n"
        "  --corpus FILE...      corpus files, duet-corpus/2 or /1 (repeat the flag or list several files after it)\n"
        "  --hw NAME|FILE        the base profile: start values, bounds, and every constant not fitted\n"
        "fit:\n"
        "  --params LIST         constants to fit, comma-separated (default:\n");
    cli_print_default_params(f);
    fprintf(f,
            "  --folds K             cross-validation folds (default 5; 0 = none)\n"
            "  --max-iter N          trust-region iterations per fit (default 100)\n"
            "  --threads N           fits run in parallel (the full fit and each fold; default 0: one per CPU)\n"
            "outputs (written atomically, only when the fit succeeds):\n"
            "  -o, --output FILE     the fitted profile (duet-hw/1); each fitted constant's source becomes\n"
            "                        \"fit: <corpora>, <date>, +-<standard error>\"\n"
            "  --report FILE         the fit report (duet-calibration/2, times in us): parameters, standard errors,\n"
            "                        iterations, stop reason, accuracy in sample and held out\n"
            "  --name NAME           name of the fitted profile (default: the base's)\n"
            "  --date DATE           date written into the sources (default: today, UTC)\n"
            "  --accept-unconverged  write the outputs even when the fit stopped without converging\n"
            "  --rows FILE           per-row predictions as CSV (measured, fitted and held-out times in us), for\n"
            "                        residual analysis\n"
            "  --quiet               no progress on stderr\n"
            "  --allow-device-mix    fit corpora of different devices, or from a base profile of another device than\n"
            "                        the corpora's (a warning instead of the refusal); the fitted profile names the\n"
            "                        corpora's device when they are of one\n"
            "  -h, --help            this text\n"
            "\n"
            "examples:\n"
            "  duet calibrate fit --corpus tuning_data/h200_world2.json --hw h200 -o h200.json --report h200-fit.json\n"
            "  duet calibrate fit --corpus w2.json w4.json w8.json --hw mi300x -o mi300x-fit.json --report r.json \\\n"
            "                     --params gemm_eff_fp16,link_gbs,cta_push_gbs --folds 10\n");
}

/* ------------------------------------------------------------------------------------------ */
/* duet calibrate fit                                                                          */
/* ------------------------------------------------------------------------------------------ */

/* The options of `calibrate fit`. */
typedef struct cli_fit_opts {
    cli_corpora_t *cs;
    const char *hw_arg, *out, *report, *name, *date, *rows;
    int quiet, accept, params_given, help;
    duet_cal_params_t p;
} cli_fit_opts_t;

/* One option of `calibrate fit`. @return an exit code (CLI_EXIT_OK to go on). */
static int cli_fit_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cli_fit_opts_t *o = arg0;
    long long v;
    int rc = cli_cal_fit_option(cmd, opt, arg, o->cs, &o->hw_arg, &o->p, &o->quiet, &o->help);
    if (rc >= 0)
        return rc;
    switch (opt) {
    case 'o':
        o->out = arg;
        return CLI_EXIT_OK;
    case OPT_REPORT:
        o->report = arg;
        return CLI_EXIT_OK;
    case OPT_PARAMS:
        if (duet_cal_params_set_fit(&o->p, arg) < 0)
            return cli_usage_error(cmd, "--params: %s", duet_last_error());
        o->params_given = 1;
        return CLI_EXIT_OK;
    case OPT_FOLDS:
        if (cli_parse_i64(arg, 0, DUET_CAL_MAX_FOLDS, &v) != 0)
            return cli_usage_error(cmd, "--folds: '%s' is not an integer in [0, %d]", arg, DUET_CAL_MAX_FOLDS);
        o->p.folds = (int32_t)v;
        return CLI_EXIT_OK;
    case OPT_NAME:
        if (strlen(arg) == 0 || strlen(arg) >= sizeof(((duet_hw_t *)0)->name))
            return cli_usage_error(cmd, "--name: 1 to %zu characters", sizeof(((duet_hw_t *)0)->name) - 1);
        o->name = arg;
        return CLI_EXIT_OK;
    case OPT_DATE:
        if (strlen(arg) == 0 || strlen(arg) > 32)
            return cli_usage_error(cmd, "--date: 1 to 32 characters, e.g. 2026-12-01");
        o->date = arg;
        return CLI_EXIT_OK;
    case OPT_ACCEPT:
        o->accept = 1;
        return CLI_EXIT_OK;
    case OPT_ROWS:
        o->rows = arg;
        return CLI_EXIT_OK;
    default:
        return CLI_OPT_UNKNOWN;
    }
}

/* Parse `calibrate fit`'s arguments into o. @return an exit code (CLI_EXIT_OK to go on). */
static int cli_fit_parse(cli_fit_opts_t *o, const char *cmd, int argc, char **argv)
{
    static const struct option longopts[] = {{"corpus", required_argument, NULL, OPT_CORPUS},
                                             {"hw", required_argument, NULL, OPT_HW},
                                             {"output", required_argument, NULL, 'o'},
                                             {"report", required_argument, NULL, OPT_REPORT},
                                             {"params", required_argument, NULL, OPT_PARAMS},
                                             {"folds", required_argument, NULL, OPT_FOLDS},
                                             {"max-iter", required_argument, NULL, OPT_MAX_ITER},
                                             {"name", required_argument, NULL, OPT_NAME},
                                             {"date", required_argument, NULL, OPT_DATE},
                                             {"accept-unconverged", no_argument, NULL, OPT_ACCEPT},
                                             {"threads", required_argument, NULL, OPT_THREADS},
                                             {"rows", required_argument, NULL, OPT_ROWS},
                                             {"quiet", no_argument, NULL, OPT_QUIET},
                                             CLI_ALLOW_DEVICE_MIX_LONGOPT,
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int rc = cli_cal_getopt(cmd, argc, argv, longopts, cli_fit_option, o, &o->help, o->cs, &o->hw_arg);
    if (rc != CLI_EXIT_OK || o->help)
        return rc;
    if (o->out == NULL || o->report == NULL)
        return cli_usage_error(cmd, "give both -o PROFILE.json and --report REPORT.json");
    if (strcmp(o->out, o->report) == 0)
        return cli_usage_error(cmd, "-o and --report name the same file '%s'", o->out);
    /* A folder that does not exist is found before the fit, not after it. */
    if ((rc = cli_out_check(cmd, "-o", o->out)) != CLI_EXIT_OK)
        return rc;
    return cli_out_check(cmd, "--report", o->report);
}

/* Fit and cross-validate (the library's duet_cal_report_run), with progress and --rows. */
static int cli_fit_run(cli_fit_opts_t *o, const char *cmd, const duet_hw_t *base, duet_cal_report_t *rep)
{
    duet_status_t st;
    /* The default list depends on the corpora: splitk_sm_gbs only where rows have a K split. */
    if (!o->params_given && (st = duet_cal_params_set_default_fit(&o->p, o->cs->c, o->cs->n)) < 0)
        return cli_fail(cmd, st);
    cli_progress_t pr;
    cli_progress_init(&pr, o->quiet);
    o->p.progress = cli_progress_fn;
    o->p.progress_arg = &pr;
    duet_cal_rows_csv_t *csv = NULL;
    int rc = cli_rows_open(cmd, o->rows, &csv);
    if (rc != CLI_EXIT_OK)
        return rc;
    o->p.rows = csv != NULL ? duet_cal_rows_csv_row : NULL;
    o->p.rows_arg = csv;
    st = duet_cal_report_run(o->cs->c, o->cs->path, o->cs->n, base, &o->p, rep);
    cli_progress_end(&pr);
    return cli_rows_close(cmd, csv, st < 0 ? cli_fail(cmd, st) : CLI_EXIT_OK);
}

/* What `calibrate fit` prints after writing its outputs. */
static void cli_fit_print(const cli_fit_opts_t *o, const duet_cal_report_t *rep)
{
    const duet_cal_fit_t *fit = &rep->model.fit;
    printf("duet calibrate fit: %d corpus file%s, %lld rows (%lld failed), %d shapes, base profile %s\n", o->cs->n,
           o->cs->n > 1 ? "s" : "", (long long)rep->rows_total, (long long)rep->rows_failed, (int)rep->shapes,
           o->hw_arg);
    printf("fit (policy %s) on %lld rows: %d iterations, %s; rms log error %.4f -> %.4f; %lld simulations of the "
           "row set, %.1f s in all\n\n",
           fit->policy, (long long)fit->rows, (int)fit->iterations, fit->stop_reason, fit->rms_log_start,
           fit->rms_log_end, (long long)fit->evaluations, rep->wall_s);
    cli_table_printed("calibrate fit", cli_fit_params(stdout, fit));
    printf("\n");
    char t_held[32];
    snprintf(t_held, sizeof(t_held), "held out (%d-f)", (int)rep->model.folds);
    int seed = rep->seed.fit.n_params > 0;
    cli_column_t cols[6] = {
        {"base profile", "base_profile", &rep->model.start},
        {"fitted", "fitted", &rep->model.in_sample},
        {t_held, "held_out", rep->model.folds > 0 ? &rep->model.held_out : NULL},
        {"ref. fitted", "reference_fitted", seed ? &rep->seed.in_sample : NULL},
        {"ref. held out", "reference_held_out", seed && rep->seed.folds > 0 ? &rep->seed.held_out : NULL},
        {"noise floor", "noise_floor", &rep->noise.remeasure}};
    cli_table_printed("calibrate fit", cli_metrics_write(stdout, cols, 6, DUET__TABLE_TEXT));
    cli_noise_lines(stdout, &rep->noise);
    if (rep->model.folds > 0) {
        /* The figures the fitted profile keeps as err_<mode> (duet predict decides within them). */
        printf("\nknown error per mode (held out, p%d of |log(pred/meas)| about its workload's median):",
               (int)lround(DUET_CAL_MODE_ERR_Q * 100));
        for (int m = 0; m < DUET_MODE_COUNT; m++)
            if (rep->model.mode_err_rows[m] > 0)
                printf(" %s %.1f %% (%lld rows)", duet_mode_name(m), rep->model.mode_err[m] * 100,
                       (long long)rep->model.mode_err_rows[m]);
        printf("\n");
    }
    if (seed)
        printf("\nreference rules: policy frozen on fused rows, seed_link_gbs fitted to %.4g GB/s (%s); concurrent "
               "and K-split rows are not predicted by them.\n",
               rep->seed.fit.params[0].value, rep->seed.fit.stop_reason);
    printf("\nwrote %s (profile %s) and %s\n", o->out, fit->hw.name, o->report);
}

static int cmd_calibrate_fit(int argc, char **argv)
{
    static const char cmd[] = "calibrate fit";
    cli_fit_opts_t o;
    memset(&o, 0, sizeof(o));
    o.p = duet_cal_default_params();
    o.cs = calloc(1, sizeof(*o.cs));
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    duet_hw_t base;
    int rc;
    if (o.cs == NULL || rep == NULL) {
        cli_error(cmd, "out of memory");
        rc = CLI_EXIT_FAILED;
        goto cleanup;
    }
    if ((rc = cli_fit_parse(&o, cmd, argc, argv)) != CLI_EXIT_OK || o.help) {
        if (o.help)
            cmd_fit_usage(stdout);
        goto cleanup;
    }
    if ((rc = cli_load_hw(cmd, o.hw_arg, &base)) != CLI_EXIT_OK || (rc = cli_corpora_load(o.cs, cmd)) != CLI_EXIT_OK ||
        (rc = cli_device_check(cmd, o.cs, NULL, &base, "base profile")) != CLI_EXIT_OK ||
        (rc = cli_fit_run(&o, cmd, &base, rep)) != CLI_EXIT_OK)
        goto cleanup;
    const duet_cal_fit_t *fit = &rep->model.fit;
    /* The fitted profile is of the device its corpora measured (when they are of one). */
    if (cli_corpora_one_device(o.cs) != NULL)
        snprintf(rep->model.fit.hw.device, sizeof(rep->model.fit.hw.device), "%s", cli_corpora_one_device(o.cs));
    if (!fit->converged && !o.accept) {
        cli_error(cmd,
                  "the fit stopped without converging (%s after %d iterations); nothing written (raise "
                  "--max-iter, fit fewer --params, or pass --accept-unconverged)",
                  fit->stop_reason, fit->iterations);
        rc = CLI_EXIT_FAILED;
        goto cleanup;
    }
    duet_status_t st = duet_cal_fit_save(rep, o.cs->label, o.cs->n, o.hw_arg, o.name, o.date, o.out, o.report);
    if (st < 0) {
        rc = cli_fail(cmd, st);
        goto cleanup;
    }
    cli_fit_print(&o, rep);
    if (!fit->converged)
        fprintf(stderr, "duet: %s: warning: the fit did not converge (%s); written because of --accept-unconverged\n",
                cmd, fit->stop_reason);
cleanup:
    if (o.cs != NULL)
        cli_corpora_free(o.cs);
    free(rep);
    free(o.cs);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    if (argc < 2) {
        cmd_calibrate_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0 || strcmp(sub, "help") == 0) {
        cmd_calibrate_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(sub, "fit") == 0)
        return cmd_calibrate_fit(argc - 1, argv + 1);
    if (strcmp(sub, "select") == 0)
        return cmd_calibrate_select(argc - 1, argv + 1);
#ifdef DUET_GPU_BUILD
    if (strcmp(sub, "collect") == 0)
        return cmd_collect(argc - 1, argv + 1);
#else
    if (strcmp(sub, "collect") == 0)
        return cli_gpu_only("calibrate collect", argc - 1, argv + 1, cli_usage_collect);
#endif
    cli_error("calibrate", "unknown subcommand '%s'", sub);
    cmd_calibrate_usage(stderr);
    return CLI_EXIT_USAGE;
}
