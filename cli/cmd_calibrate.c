/*
 * duet calibrate fit: fit a hardware profile's constants to measured corpora and report the
 * held-out accuracy; duet validate: a profile's accuracy on corpora beside the reference rules'.
 * `duet calibrate collect` (the measurement, under mpirun) lives in the GPU build.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "duet/calibrate.h"
#ifdef DUET_GPU_BUILD
#include "cli/gpu/gpu.h" /* cmd_collect: the measurement, in the GPU build only */
#define CLI_HAVE_COLLECT 1
#else
#define CLI_HAVE_COLLECT 0
#endif

enum {
    OPT_CORPUS = OPT_FIRST_PRIVATE,
    OPT_REPORT,
    OPT_PARAMS,
    OPT_FOLDS,
    OPT_MAX_ITER,
    OPT_NAME,
    OPT_DATE,
    OPT_QUIET,
    OPT_ACCEPT,
    OPT_THREADS,
    OPT_ROWS
};

#define CLI_CAL_MAX_CORPORA 64

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
    fprintf(f,
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
            "  --corpus FILE...      duet-corpus/1 files (repeat the flag or list several files after it)\n"
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
            "  --report FILE         the fit report (duet-calibration/1): parameters, standard errors,\n"
            "                        iterations, stop reason, accuracy in sample and held out\n"
            "  --name NAME           name of the fitted profile (default: the base's)\n"
            "  --date DATE           date written into the sources (default: today, UTC)\n"
            "  --accept-unconverged  write the outputs even when the fit stopped without converging\n"
            "  --rows FILE           per-row predictions as CSV (measured, fitted and held-out ms), for residual analysis\n"
            "  --quiet               no progress on stderr\n"
            "  -h, --help            this text\n"
            "\n"
            "examples:\n"
            "  duet calibrate fit --corpus tuning_data/h200_world2.json --hw h200 -o h200.json --report h200-fit.json\n"
            "  duet calibrate fit --corpus w2.json w4.json w8.json --hw mi300x -o mi300x-fit.json --report r.json \\\n"
            "                     --params gemm_eff_fp16,link_gbs,cta_push_gbs --folds 10\n");
}

static void cmd_validate_usage(FILE *f)
{
    fprintf(f, "usage: duet validate --corpus FILE... --hw PROFILE [--json] [--rows FILE] [--quiet]\n"
               "\n"
               "Predicts every measured row of the corpora with the profile and prints the accuracy table: makespan\n"
               "error, exact picks, picks within 8 CTAs, regret of the predicted best and top-k coverage within 3 %%.\n"
               "Beside it, the same table for the reference design's rules (policy frozen, fused rows, its one\n"
               "effective link bandwidth seed_link_gbs fitted on these corpora). docs/calibration.md explains\n"
               "each line.\n"
               "\n"
               "options:\n"
               "  --corpus FILE...   duet-corpus/1 files (repeat the flag or list several files after it)\n"
               "  --hw NAME|FILE     the profile to validate (e.g. the output of 'duet calibrate fit')\n"
               "  --json             machine-readable output\n"
               "  --rows FILE        per-row predictions as CSV (measured and predicted ms), for residual analysis\n"
               "  --quiet            no progress on stderr\n"
               "  -h, --help         this text\n"
               "\n"
               "examples:\n"
               "  duet validate --corpus tuning_data/h200_world2.json --hw h200\n"
               "  duet validate --corpus w2.json w8.json --hw mi300x-fit.json --json\n");
}

/* ------------------------------------------------------------------------------------------ */
/* Shared: corpora, progress, the accuracy table                                               */
/* ------------------------------------------------------------------------------------------ */

typedef struct cli_corpora {
    const char *path[CLI_CAL_MAX_CORPORA];
    duet_corpus_t c[CLI_CAL_MAX_CORPORA];
    int n, loaded;
} cli_corpora_t;

static int cli_corpora_add(cli_corpora_t *cs, const char *cmd, const char *path)
{
    if (cs->n == CLI_CAL_MAX_CORPORA)
        return cli_usage_error(cmd, "at most %d corpora", CLI_CAL_MAX_CORPORA);
    cs->path[cs->n++] = path;
    return CLI_EXIT_OK;
}

/*
 * "--corpus a.json b.json": the files after the first arrive as operands (after getopt). At least
 * one corpus is required.
 */
static int cli_corpora_operands(cli_corpora_t *cs, const char *cmd, int argc, char **argv)
{
    for (int i = optind; i < argc; i++) {
        if (cs->n == 0)
            return cli_usage_error(cmd, "unexpected argument '%s' (corpus files follow --corpus)", argv[i]);
        int rc = cli_corpora_add(cs, cmd, argv[i]);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (cs->n == 0)
        return cli_usage_error(cmd, "give at least one --corpus FILE");
    return CLI_EXIT_OK;
}

static int cli_corpora_load(cli_corpora_t *cs, const char *cmd)
{
    for (int i = 0; i < cs->n; i++) {
        duet_status_t st = duet_corpus_load(cs->path[i], &cs->c[i]);
        if (st < 0)
            return cli_fail(cmd, st);
        cs->loaded = i + 1;
    }
    return CLI_EXIT_OK;
}

static void cli_corpora_free(cli_corpora_t *cs)
{
    for (int i = 0; i < cs->loaded; i++)
        duet_corpus_free(&cs->c[i]);
    cs->loaded = 0;
}

/* Progress with an estimate of the time left, on stderr. */
typedef struct cli_progress {
    int tty, quiet, last_done;
    double last_print;
} cli_progress_t;

static void cli_progress_fn(void *arg, const duet_cal_progress_t *p)
{
    cli_progress_t *pr = arg;
    if (pr->quiet)
        return;
    /* Fits run in parallel and finish in any order: the estimate is the rate of finished fits
     * so far, applied to the fits left (the reference rules' fits are cheaper than duet's, so
     * it errs long at first and corrects itself). */
    int changed = p->stages_done != pr->last_done;
    char eta[48] = "";
    if (p->stages_done > 0) {
        double left = p->elapsed_s / p->stages_done * (p->n_stages - p->stages_done);
        snprintf(eta, sizeof(eta), ", ~%.0f s left", left);
    }
    if (pr->tty) {
        if (p->elapsed_s - pr->last_print < 0.1 && !changed)
            return;
        fprintf(stderr, "\r\033[K[%d/%d done] %s: iteration %d, rms log error %.4f, %.0f s%s", p->stages_done,
                p->n_stages, p->stage, p->iteration, p->rms_log, p->elapsed_s, eta);
    } else {
        /* A log file gets a line when a fit finishes and one every 30 s, not one per iteration. */
        if (!changed && p->elapsed_s - pr->last_print < 30.0)
            return;
        fprintf(stderr, "[%d/%d done] %s: iteration %d, rms log error %.4f, %.0f s%s\n", p->stages_done, p->n_stages,
                p->stage, p->iteration, p->rms_log, p->elapsed_s, eta);
    }
    fflush(stderr);
    pr->last_print = p->elapsed_s;
    pr->last_done = p->stages_done;
}

static void cli_progress_end(cli_progress_t *pr)
{
    if (!pr->quiet && pr->tty && pr->last_print > -1e9)
        fprintf(stderr, "\r\033[K");
}

static void cli_progress_init(cli_progress_t *pr, int quiet)
{
    memset(pr, 0, sizeof(*pr));
    pr->quiet = quiet;
    pr->tty = isatty(STDERR_FILENO);
    pr->last_done = -1;
    pr->last_print = -1e9;
}

/*
 * --rows FILE: one CSV line per measured row with its prediction(s), for residual analysis
 * (docs/calibration.md). Columns: the row's corpus and index, shape id and fold, what ran, the
 * workload and configuration (the tile with "/kS" for a K split in S parts), the measured
 * median, fastest and slowest run (ms), and the predictions (ms): by the fitted profile and, for
 * `calibrate fit` with folds, by the fold's fit that did not see the row's shape.
 */
typedef struct cli_rows {
    FILE *f;
    int err;
} cli_rows_t;

static const char cli_rows_header[] = "corpus,index,shape,fold,kind,collective,dtype,m,n,k,mc,nc,world,mode,num_wgs,"
                                      "gemm_wgs,comm_wgs,tile,comm_tile,group_m,ms,min_ms,max_ms,pred_ms,held_out_ms\n";

static void cli_rows_fn(void *arg, const duet_cal_row_pred_t *r)
{
    cli_rows_t *rw = arg;
    const duet_corpus_row_t *w = r->row;
    char tile[48];
    if (fprintf(rw->f, "%d,%lld,%d,%d,%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%d,%s,%d,%d,%d,%s,%dx%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                (int)r->corpus, (long long)r->index, (int)r->shape, (int)r->fold, duet_row_kind_name(w->kind),
                duet_collective_name(w->wl.coll), duet_dtype_name(w->wl.dtype), (long long)w->wl.m, (long long)w->wl.n,
                (long long)w->wl.k, (long long)w->wl.mc, (long long)w->wl.nc, (int)w->wl.world,
                duet_mode_name(w->cfg.mode), (int)w->cfg.num_wgs, (int)w->cfg.gemm_wgs, (int)w->cfg.comm_wgs,
                duet_config_tile_str(&w->cfg, tile, sizeof(tile)), (int)w->cfg.cm, (int)w->cfg.cn, (int)w->cfg.group_m,
                w->ms, w->min_ms, w->max_ms, r->fitted_ms, r->held_out_ms) < 0)
        rw->err = 1;
}

/* Open the --rows file and write its header; NULL path: nothing to do. */
static int cli_rows_open(cli_rows_t *rw, const char *cmd, const char *path)
{
    rw->f = NULL;
    rw->err = 0;
    if (path == NULL)
        return CLI_EXIT_OK;
    rw->f = fopen(path, "w");
    if (rw->f == NULL) {
        cli_error(cmd, "--rows: cannot write '%s': %s", path, strerror(errno));
        return CLI_EXIT_FAILED;
    }
    fputs(cli_rows_header, rw->f);
    return CLI_EXIT_OK;
}

static int cli_rows_close(cli_rows_t *rw, const char *cmd, const char *path)
{
    if (rw->f == NULL)
        return CLI_EXIT_OK;
    int bad = rw->err | (fclose(rw->f) != 0);
    rw->f = NULL;
    if (bad) {
        cli_error(cmd, "--rows: error while writing '%s'", path);
        return CLI_EXIT_FAILED;
    }
    return CLI_EXIT_OK;
}

/* A fraction as a percentage, or "-" when it is undefined. */
static const char *cli_pct(double v, char *buf, size_t n)
{
    if (v != v)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f %%", 100.0 * v);
    return buf;
}

typedef struct cli_column {
    const char *title;
    const duet_cal_metrics_t *m; /* NULL: not available */
} cli_column_t;

/* The accuracy table, one column per model. */
static void cli_metrics_table(const cli_column_t *col, int ncol)
{
    char b[32];
    printf("%-38s", "");
    for (int c = 0; c < ncol; c++)
        printf(" %16s", col[c].title);
    printf("\n");
#define CLI_ROW(label, expr)                                                                                           \
    do {                                                                                                               \
        printf("%-38s", label);                                                                                        \
        for (int c = 0; c < ncol; c++) {                                                                               \
            const duet_cal_metrics_t *m = col[c].m;                                                                    \
            printf(" %16s", m ? cli_pct((expr), b, sizeof(b)) : "-");                                                  \
        }                                                                                                              \
        printf("\n");                                                                                                  \
    } while (0)
#define CLI_COUNT(label, expr)                                                                                         \
    do {                                                                                                               \
        printf("%-38s", label);                                                                                        \
        for (int c = 0; c < ncol; c++) {                                                                               \
            const duet_cal_metrics_t *m = col[c].m;                                                                    \
            if (m)                                                                                                     \
                printf(" %16lld", (long long)(expr));                                                                  \
            else                                                                                                       \
                printf(" %16s", "-");                                                                                  \
        }                                                                                                              \
        printf("\n");                                                                                                  \
    } while (0)
    CLI_COUNT("op rows predicted", m->op_rows);
    CLI_ROW("makespan error, median", m->ape_median);
    CLI_ROW("makespan error, p95", m->ape_p95);
    CLI_COUNT("shapes ranked", m->shapes);
    CLI_ROW("exact pick", m->exact_pick);
    CLI_ROW("pick within 8 CTAs (same mode, tile)", m->pick_within8);
    CLI_ROW("pick within 8 CTAs (same mode)", m->pick_within8_loose);
    CLI_ROW("regret of the pick, median", m->regret_median);
    CLI_ROW("regret of the pick, mean", m->regret_mean);
    CLI_ROW("regret of the pick, p95", m->regret_p95);
    CLI_ROW("top-1 within 3 % of the best", m->topk_cover[0]);
    CLI_ROW("top-4 within 3 % of the best", m->topk_cover[1]);
    CLI_ROW("top-8 within 3 % of the best", m->topk_cover[2]);
    CLI_COUNT("alone rows predicted", m->alone_rows);
    CLI_ROW("alone-row error, median", m->alone_ape_median);
    CLI_ROW("alone-row error, p95", m->alone_ape_p95);
#undef CLI_ROW
#undef CLI_COUNT
}

/* The noise floor, after the table: what the measurements allow any model. */
static void cli_noise_lines(const duet_cal_noise_t *nz)
{
    char a[32], b[32], c[32], d[32];
    printf("\nnoise floor (the rows' own spread, %d shapes): runner-up within the best's slowest run in %s of shapes, "
           "within 1 %% in %s; median gap to the runner-up %s; median run spread (max - min) / median %s.\n",
           (int)nz->shapes, cli_pct(nz->runner_up_in_spread, a, sizeof(a)),
           cli_pct(nz->runner_up_within_1pct, b, sizeof(b)), cli_pct(nz->gap_median, c, sizeof(c)),
           cli_pct(nz->row_spread_median, d, sizeof(d)));
    printf("column \"noise floor\": a perfect model ranking one simulated re-measurement, scored against another "
           "(%d pairs); drift between points is not included, so no model can be expected to beat it.\n",
           (int)nz->pairs);
}

/* Print one fit's parameters. */
static void cli_fit_params(const duet_cal_fit_t *fit)
{
    printf("%-24s %12s %12s %12s %-14s %s\n", "constant", "start", "fitted", "+- stderr", "unit", "note");
    for (int32_t j = 0; j < fit->n_params; j++) {
        const duet_cal_param_result_t *r = &fit->params[j];
        const duet_hw_field_info_t *fi = duet_hw_field_info(r->field);
        char se[32], note[96] = "";
        if (r->stderr_abs == r->stderr_abs)
            snprintf(se, sizeof(se), "%.3g", r->stderr_abs);
        else
            snprintf(se, sizeof(se), "-");
        if (!r->fitted)
            snprintf(note, sizeof(note), "not fitted: no row depends on it");
        else if (r->at_bound)
            snprintf(note, sizeof(note), "at its %s bound", r->at_bound < 0 ? "lower" : "upper");
        else if (r->stderr_abs != r->stderr_abs)
            snprintf(note, sizeof(note), "undetermined: the rows do not constrain it here");
        else if (r->corr_field >= 0 && (r->corr > 0.95 || r->corr < -0.95))
            snprintf(note, sizeof(note), "correlated %+.2f with %s", r->corr, duet_hw_field_info(r->corr_field)->key);
        printf("%-24s %12.5g %12.5g %12s %-14s %s\n", fi->key, r->start, r->value, se, fi->unit, note);
    }
}

#ifndef DUET_GPU_BUILD
static int cli_have_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    return 0;
}
#endif

/* ------------------------------------------------------------------------------------------ */
/* duet calibrate fit                                                                          */
/* ------------------------------------------------------------------------------------------ */

static int cmd_calibrate_fit(int argc, char **argv)
{
    static const char cmd[] = "calibrate fit";
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
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_corpora_t *cs = calloc(1, sizeof(*cs));
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    const char *hw_arg = NULL, *out = NULL, *report = NULL, *name = NULL, *date = NULL, *rows = NULL;
    cli_rows_t rw = {NULL, 0};
    int quiet = 0, accept = 0, params_given = 0, rc = CLI_EXIT_OK, opt;
    long long v;
    duet_cal_params_t p = duet_cal_default_params();
    if (cs == NULL || rep == NULL) {
        cli_error(cmd, "out of memory");
        rc = CLI_EXIT_FAILED;
        goto cleanup;
    }
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cmd_fit_usage(stdout);
            goto cleanup;
        case OPT_CORPUS:
            if ((rc = cli_corpora_add(cs, cmd, optarg)) != CLI_EXIT_OK)
                goto cleanup;
            break;
        case OPT_HW:
            hw_arg = optarg;
            break;
        case 'o':
            out = optarg;
            break;
        case OPT_REPORT:
            report = optarg;
            break;
        case OPT_PARAMS:
            if (duet_cal_params_set_fit(&p, optarg) < 0) {
                rc = cli_usage_error(cmd, "--params: %s", duet_last_error());
                goto cleanup;
            }
            params_given = 1;
            break;
        case OPT_FOLDS:
            if (cli_parse_i64(optarg, 0, DUET_CAL_MAX_FOLDS, &v) != 0) {
                rc = cli_usage_error(cmd, "--folds: '%s' is not an integer in [0, %d]", optarg, DUET_CAL_MAX_FOLDS);
                goto cleanup;
            }
            p.folds = (int32_t)v;
            break;
        case OPT_MAX_ITER:
            if (cli_parse_i64(optarg, 1, 100000, &v) != 0) {
                rc = cli_usage_error(cmd, "--max-iter: '%s' is not an integer in [1, 100000]", optarg);
                goto cleanup;
            }
            p.max_iter = (int32_t)v;
            break;
        case OPT_NAME:
            if (strlen(optarg) == 0 || strlen(optarg) >= sizeof(((duet_hw_t *)0)->name)) {
                rc = cli_usage_error(cmd, "--name: 1 to %zu characters", sizeof(((duet_hw_t *)0)->name) - 1);
                goto cleanup;
            }
            name = optarg;
            break;
        case OPT_DATE:
            if (strlen(optarg) == 0 || strlen(optarg) > 32) {
                rc = cli_usage_error(cmd, "--date: 1 to 32 characters, e.g. 2026-12-01");
                goto cleanup;
            }
            date = optarg;
            break;
        case OPT_THREADS:
            if (cli_parse_i64(optarg, 0, 4096, &v) != 0) {
                rc = cli_usage_error(cmd, "--threads: '%s' is not an integer in [0, 4096]", optarg);
                goto cleanup;
            }
            p.threads = (int32_t)v;
            break;
        case OPT_ACCEPT:
            accept = 1;
            break;
        case OPT_ROWS:
            rows = optarg;
            break;
        case OPT_QUIET:
            quiet = 1;
            break;
        default:
            rc = cli_getopt_error(cmd, argv, opt);
            goto cleanup;
        }
    }
    if ((rc = cli_corpora_operands(cs, cmd, argc, argv)) != CLI_EXIT_OK)
        goto cleanup;
    if (hw_arg == NULL) {
        rc = cli_usage_error(cmd, "give the base profile with --hw NAME|FILE (e.g. --hw mi300x)");
        goto cleanup;
    }
    if (out == NULL || report == NULL) {
        rc = cli_usage_error(cmd, "give both -o PROFILE.json and --report REPORT.json");
        goto cleanup;
    }
    if (strcmp(out, report) == 0) {
        rc = cli_usage_error(cmd, "-o and --report name the same file '%s'", out);
        goto cleanup;
    }
    duet_hw_t base;
    duet_status_t st = duet_hw_load(hw_arg, &base);
    if (st < 0) {
        cli_error(cmd, "--hw: %s", duet_last_error()[0] ? duet_last_error() : "cannot load the profile");
        rc = CLI_EXIT_USAGE;
        goto cleanup;
    }
    if ((rc = cli_corpora_load(cs, cmd)) != CLI_EXIT_OK)
        goto cleanup;
    /* The default list depends on the corpora: splitk_sm_gbs only where rows have a K split. */
    if (!params_given && (st = duet_cal_params_set_default_fit(&p, cs->c, cs->n)) < 0) {
        rc = cli_fail(cmd, st);
        goto cleanup;
    }

    cli_progress_t pr;
    cli_progress_init(&pr, quiet);
    p.progress = cli_progress_fn;
    p.progress_arg = &pr;
    if ((rc = cli_rows_open(&rw, cmd, rows)) != CLI_EXIT_OK)
        goto cleanup;
    if (rw.f != NULL) {
        p.rows = cli_rows_fn;
        p.rows_arg = &rw;
    }
    st = duet_cal_report_run(cs->c, cs->path, cs->n, &base, &p, rep);
    cli_progress_end(&pr);
    if (st < 0) {
        rc = cli_fail(cmd, st);
        goto cleanup;
    }
    if ((rc = cli_rows_close(&rw, cmd, rows)) != CLI_EXIT_OK)
        goto cleanup;
    duet_cal_fit_t *fit = &rep->model.fit;
    if (!fit->converged && !accept) {
        cli_error(cmd,
                  "the fit stopped without converging (%s after %d iterations); nothing written (raise "
                  "--max-iter, fit fewer --params, or pass --accept-unconverged)",
                  fit->stop_reason, fit->iterations);
        rc = CLI_EXIT_FAILED;
        goto cleanup;
    }

    /* The fitted profile: sources name the corpora and the date; the name is the base's unless
     * --name says otherwise. */
    char today[16];
    if (date == NULL) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(today, sizeof(today), "%Y-%m-%d", &tm);
        date = today;
    }
    duet_cal_fit_set_sources(fit, cs->path, cs->n, date);
    if (name != NULL)
        snprintf(fit->hw.name, sizeof(fit->hw.name), "%s", name);
    if ((st = duet_cal_report_write_json(rep, cs->path, cs->n, hw_arg, report)) < 0) {
        rc = cli_fail(cmd, st);
        goto cleanup;
    }
    if ((st = duet_hw_save(&fit->hw, out)) < 0) {
        rc = cli_fail(cmd, st);
        unlink(report); /* outputs come as a pair or not at all */
        goto cleanup;
    }

    printf("duet calibrate fit: %d corpus file%s, %lld rows (%lld failed), %d shapes, base profile %s\n", cs->n,
           cs->n > 1 ? "s" : "", (long long)rep->rows_total, (long long)rep->rows_failed, (int)rep->shapes, hw_arg);
    printf("fit (policy %s) on %lld rows: %d iterations, %s; rms log error %.4f -> %.4f; %lld simulations of the "
           "row set, %.1f s in all\n\n",
           fit->policy, (long long)fit->rows, (int)fit->iterations, fit->stop_reason, fit->rms_log_start,
           fit->rms_log_end, (long long)fit->evaluations, rep->wall_s);
    cli_fit_params(fit);
    printf("\n");
    char t_held[32], t_seed[32];
    snprintf(t_held, sizeof(t_held), "held out (%d-f)", (int)rep->model.folds);
    snprintf(t_seed, sizeof(t_seed), "ref. held out");
    cli_column_t cols[6] = {{"base profile", &rep->model.start},
                            {"fitted", &rep->model.in_sample},
                            {t_held, rep->model.folds > 0 ? &rep->model.held_out : NULL},
                            {"ref. fitted", rep->seed.fit.n_params > 0 ? &rep->seed.in_sample : NULL},
                            {t_seed, rep->seed.fit.n_params > 0 && rep->seed.folds > 0 ? &rep->seed.held_out : NULL},
                            {"noise floor", &rep->noise.remeasure}};
    cli_metrics_table(cols, 6);
    cli_noise_lines(&rep->noise);
    if (rep->seed.fit.n_params > 0)
        printf("\nreference rules: policy frozen on fused rows, seed_link_gbs fitted to %.4g GB/s (%s); concurrent "
               "and K-split rows are not predicted by them.\n",
               rep->seed.fit.params[0].value, rep->seed.fit.stop_reason);
    printf("\nwrote %s (profile %s) and %s\n", out, fit->hw.name, report);
    if (!fit->converged)
        fprintf(stderr, "duet: %s: warning: the fit did not converge (%s); written because of --accept-unconverged\n",
                cmd, fit->stop_reason);
cleanup:
    if (rw.f != NULL)
        fclose(rw.f);
    if (cs != NULL)
        cli_corpora_free(cs);
    free(rep);
    free(cs);
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
#ifdef DUET_GPU_BUILD
    if (strcmp(sub, "collect") == 0)
        return cmd_collect(argc - 1, argv + 1);
#else
    if (strcmp(sub, "collect") == 0) {
        if (cli_have_help(argc - 1, argv + 1)) {
            cmd_calibrate_usage(stdout);
            return CLI_EXIT_OK;
        }
        cli_error("calibrate collect",
                  "needs a GPU build (make gpu), run as 'mpirun -np W build-gpu/duet calibrate collect ...'; this "
                  "duet has no GPU backend");
        return CLI_EXIT_USAGE;
    }
#endif
    cli_error("calibrate", "unknown subcommand '%s'", sub);
    cmd_calibrate_usage(stderr);
    return CLI_EXIT_USAGE;
}

/* ------------------------------------------------------------------------------------------ */
/* duet validate                                                                               */
/* ------------------------------------------------------------------------------------------ */

int cmd_validate(int argc, char **argv)
{
    static const char cmd[] = "validate";
    static const struct option longopts[] = {{"corpus", required_argument, NULL, OPT_CORPUS},
                                             {"hw", required_argument, NULL, OPT_HW},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"rows", required_argument, NULL, OPT_ROWS},
                                             {"quiet", no_argument, NULL, OPT_QUIET},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    cli_corpora_t *cs = calloc(1, sizeof(*cs));
    const char *hw_arg = NULL, *rows = NULL;
    int json = 0, quiet = 0, rc = CLI_EXIT_OK, opt;
    if (cs == NULL) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAILED;
    }
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cmd_validate_usage(stdout);
            goto cleanup;
        case OPT_CORPUS:
            if ((rc = cli_corpora_add(cs, cmd, optarg)) != CLI_EXIT_OK)
                goto cleanup;
            break;
        case OPT_HW:
            hw_arg = optarg;
            break;
        case OPT_JSON:
            json = 1;
            break;
        case OPT_ROWS:
            rows = optarg;
            break;
        case OPT_QUIET:
            quiet = 1;
            break;
        default:
            rc = cli_getopt_error(cmd, argv, opt);
            goto cleanup;
        }
    }
    if ((rc = cli_corpora_operands(cs, cmd, argc, argv)) != CLI_EXIT_OK)
        goto cleanup;
    if (hw_arg == NULL) {
        rc = cli_usage_error(cmd, "give the profile to validate with --hw NAME|FILE");
        goto cleanup;
    }
    duet_hw_t hw;
    duet_status_t st = duet_hw_load(hw_arg, &hw);
    if (st < 0) {
        cli_error(cmd, "--hw: %s", duet_last_error()[0] ? duet_last_error() : "cannot load the profile");
        rc = CLI_EXIT_USAGE;
        goto cleanup;
    }
    if ((rc = cli_corpora_load(cs, cmd)) != CLI_EXIT_OK)
        goto cleanup;
    cli_progress_t pr;
    cli_progress_init(&pr, quiet);
    duet_cal_validation_t v;
    cli_rows_t rw = {NULL, 0};
    if ((rc = cli_rows_open(&rw, cmd, rows)) != CLI_EXIT_OK)
        goto cleanup;
    st = duet_cal_validate_rows(cs->c, cs->path, cs->n, &hw, cli_progress_fn, &pr, rw.f ? cli_rows_fn : NULL, &rw, &v);
    cli_progress_end(&pr);
    int rc_rows = cli_rows_close(&rw, cmd, rows);
    if (st < 0) {
        rc = cli_fail(cmd, st);
        goto cleanup;
    }
    if ((rc = rc_rows) != CLI_EXIT_OK)
        goto cleanup;
    int have_seed = v.seed_fit.n_params > 0;
    if (json) {
        char *text = NULL;
        if ((st = duet_cal_validation_to_json(&v, cs->path, cs->n, hw.name, &text)) < 0) {
            rc = cli_fail(cmd, st);
            goto cleanup;
        }
        fputs(text, stdout);
        free(text);
        goto cleanup;
    }
    printf("duet validate: profile %s on %d corpus file%s: %lld rows (%lld failed), %d shapes\n\n", hw.name, cs->n,
           cs->n > 1 ? "s" : "", (long long)v.rows_total, (long long)v.rows_failed, (int)v.shapes);
    cli_column_t cols[3] = {
        {"duet (fluid)", &v.model}, {"reference rules", have_seed ? &v.seed : NULL}, {"noise floor", &v.noise.remeasure}};
    cli_metrics_table(cols, 3);
    cli_noise_lines(&v.noise);
    if (have_seed)
        printf("\nreference rules: policy frozen on fused rows, seed_link_gbs fitted to %.4g GB/s on %lld fused op "
               "rows (%s%s); concurrent and K-split rows are not predicted by them and count as misses when they are "
               "the best.\n",
               v.seed_fit.params[0].value, (long long)v.seed_fit.rows, v.seed_fit.stop_reason,
               v.seed_fit.params[0].at_bound ? ", at its bound" : "");
    else
        printf("\nreference rules: not available (the corpora have no measured unsplit fused op rows)\n");
cleanup:
    cli_corpora_free(cs);
    free(cs);
    return rc;
}
