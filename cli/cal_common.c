/*
 * What `duet calibrate fit` and `duet validate` share (cli/cal_common.h): corpus arguments,
 * progress, --rows, the --hw profile, and the accuracy tables.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cal_common.h"

int cli_corpora_add(cli_corpora_t *cs, const char *cmd, const char *path)
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
int cli_corpora_operands(cli_corpora_t *cs, const char *cmd, int argc, char **argv)
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

int cli_corpora_load(cli_corpora_t *cs, const char *cmd)
{
    duet_build_info_t bi = duet_build_info();
    cs->stale = 0;
    for (int i = 0; i < cs->n; i++) {
        duet_status_t st = duet_corpus_load(cs->path[i], &cs->c[i]);
        if (st < 0)
            return cli_fail(cmd, st);
        cs->loaded = i + 1;
    }
    /* After every file loaded, so that a bad file's error stays the one line of its own. */
    for (int i = 0; i < cs->n; i++) {
        /* No silent staleness: a fit or an accuracy figure from kernels that have changed since
         * describes other kernels. Said on every run, and kept in the fitted profile's sources. */
        char why[256];
        int same = duet_corpus_kernel_check(&cs->c[i], &bi, why, sizeof(why));
        const char *k = cs->c[i].prov.kernel_commit[0] ? cs->c[i].prov.kernel_commit : "unknown";
        if (same == 1 || cs->c[i].n == 0) { /* no rows: nothing measured, nothing stale (refused later) */
            snprintf(cs->label_buf[i], sizeof(cs->label_buf[i]), "%s (kernels %s)", cs->path[i], k);
        } else {
            fprintf(stderr, "duet: %s: warning: %s %s%s\n", cmd, cs->path[i], why,
                    same == 0 ? ": its numbers describe other kernels than this build's" : "");
            snprintf(cs->label_buf[i], sizeof(cs->label_buf[i]), "%s (kernels %s%s %s)", cs->path[i], k,
                     same == 0 ? ", STALE: backend now" : "; backend", bi.kernel_commit);
            cs->stale++;
        }
        cs->label[i] = cs->label_buf[i];
    }
    return CLI_EXIT_OK;
}

/* Corpus i of cs then of more, as one list; NULL past the end. */
static const duet_corpus_t *cli_device_corpus(const cli_corpora_t *cs, const cli_corpora_t *more, int i,
                                              const char **path)
{
    const cli_corpora_t *set = i < cs->n ? cs : more;
    int j = i < cs->n ? i : i - cs->n;
    if (set == NULL || j >= set->n)
        return NULL;
    *path = set->path[j];
    return &set->c[j];
}

int cli_device_check(const char *cmd, const cli_corpora_t *cs, const cli_corpora_t *more, const duet_hw_t *hw,
                     const char *what)
{
    const char *p0 = NULL, *pi = NULL;
    const duet_corpus_t *c0 = cli_device_corpus(cs, more, 0, &p0), *ci;
    if (c0 == NULL)
        return CLI_EXIT_OK;
    for (int i = 1; (ci = cli_device_corpus(cs, more, i, &pi)) != NULL; i++) {
        if (duet_hw_device_match(c0->device, ci->device))
            continue;
        if (!cs->allow_device_mix) {
            cli_error(cmd,
                      "%s was measured on %s, %s on %s: corpora of one device only (pass --allow-device-mix to "
                      "mix them)",
                      pi, ci->device, p0, c0->device);
            return CLI_EXIT_USAGE;
        }
        fprintf(stderr, "duet: %s: warning: %s was measured on %s, %s on %s (--allow-device-mix)\n", cmd, pi,
                ci->device, p0, c0->device);
    }
    for (int i = 0; (ci = cli_device_corpus(cs, more, i, &pi)) != NULL; i++) {
        if (duet_hw_device_match(ci->device, hw->device))
            continue;
        if (cs->allow_device_mix) {
            fprintf(stderr, "duet: %s: warning: %s was measured on %s, %s %s is of %s (--allow-device-mix)\n", cmd, pi,
                    ci->device, what, hw->name, hw->device);
            break;
        }
        duet_hw_match_t how;
        const char *own = duet_hw_builtin_for_device(ci->device, ci->arch, &how);
        char hint[160];
        if (how == DUET_HW_MATCH_EXACT)
            snprintf(hint, sizeof(hint), "give its profile (--hw %s)", own);
        else
            snprintf(hint, sizeof(hint), "no built-in is of that device: fit one (docs/calibration.md)");
        cli_error(cmd, "%s was measured on %s, but %s %s is of %s: %s, or pass --allow-device-mix", pi, ci->device,
                  what, hw->name, hw->device, hint);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

const char *cli_corpora_one_device(const cli_corpora_t *cs)
{
    if (cs->loaded == 0 || cs->c[0].device[0] == '\0')
        return NULL;
    for (int i = 1; i < cs->loaded; i++)
        if (!duet_hw_device_match(cs->c[0].device, cs->c[i].device))
            return NULL;
    return cs->c[0].device;
}

void cli_corpora_free(cli_corpora_t *cs)
{
    for (int i = 0; i < cs->loaded; i++)
        duet_corpus_free(&cs->c[i]);
    cs->loaded = 0;
}

void cli_progress_fn(void *arg, const duet_cal_progress_t *p)
{
    cli_progress_t *pr = arg;
    if (pr->quiet)
        return;
    /* Fits run in parallel, finish in any order and differ in cost: the estimate is each running
     * fit's own rate over the iterations it may still take (calibrate/eta.c). */
    int changed = p->stages_done != pr->last_done;
    char eta[48] = "";
    double left = duet__cal_eta_update(&pr->eta, p) == DUET_OK ? duet__cal_eta_left_s(&pr->eta, p->elapsed_s) : NAN;
    if (isfinite(left))
        snprintf(eta, sizeof(eta), ", ~%.0f s left", left);
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

void cli_progress_end(cli_progress_t *pr)
{
    if (!pr->quiet && pr->tty && pr->last_print > -1e9)
        fprintf(stderr, "\r\033[K");
    duet__cal_eta_free(&pr->eta);
}

void cli_progress_init(cli_progress_t *pr, int quiet)
{
    memset(pr, 0, sizeof(*pr));
    pr->quiet = quiet;
    pr->tty = isatty(STDERR_FILENO);
    pr->last_done = -1;
    pr->last_print = -1e9;
    duet__cal_eta_init(&pr->eta);
}

/* --rows FILE: the library's CSV writer (duet_cal_rows_csv_t); NULL path: none. */
int cli_rows_open(const char *cmd, const char *path, duet_cal_rows_csv_t **csv_p)
{
    *csv_p = NULL;
    if (path == NULL)
        return CLI_EXIT_OK;
    int rc = cli_out_check(cmd, "--rows", path); /* a folder that does not exist, before the work */
    if (rc != CLI_EXIT_OK)
        return rc;
    if (duet_cal_rows_csv_open(path, csv_p) < 0) {
        cli_error(cmd, "--rows: %s", duet_last_error());
        return CLI_EXIT_FAILED;
    }
    return CLI_EXIT_OK;
}

int cli_rows_close(const char *cmd, duet_cal_rows_csv_t *csv, int rc)
{
    if (rc != CLI_EXIT_OK) {
        duet_cal_rows_csv_abort(csv);
        return rc;
    }
    duet_status_t st = duet_cal_rows_csv_close(csv);
    if (st < 0) {
        cli_error(cmd, "--rows: %s", duet_last_error());
        return st == DUET_ERR_NOT_FOUND || st == DUET_ERR_INVALID_ARG ? CLI_EXIT_USAGE : CLI_EXIT_FAILED;
    }
    return CLI_EXIT_OK;
}

/* A fraction as a percentage, or "-" when it is undefined. */
const char *cli_pct(double v, char *buf, size_t n)
{
    if (v != v)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.1f %%", 100.0 * v);
    return buf;
}

/* The rows of the accuracy table: the label people read, the key of the metrics object in the JSON
 * documents (calibrate/json.c; topk_cover.K for the top-k shares), and whether it is a count. */
static const struct {
    const char *label, *key;
    int count;
} cli_metric_rows[] = {
    {"op rows predicted", "op_rows", 1},
    {"makespan error, median", "ape_median", 0},
    {"makespan error, p95", "ape_p95", 0},
    {"shapes ranked", "shapes", 1},
    {"exact pick", "exact_pick", 0},
    {"pick within 8 CTAs (same mode, tile)", "pick_within8", 0},
    {"pick within 8 CTAs (same mode)", "pick_within8_loose", 0},
    {"regret of the pick, median", "regret_median", 0},
    {"regret of the pick, mean", "regret_mean", 0},
    {"regret of the pick, p95", "regret_p95", 0},
    {"top-1 within 3 % of the best", "topk_cover.1", 0},
    {"top-4 within 3 % of the best", "topk_cover.4", 0},
    {"top-8 within 3 % of the best", "topk_cover.8", 0},
    {"alone rows predicted", "alone_rows", 1},
    {"alone-row error, median", "alone_ape_median", 0},
    {"alone-row error, p95", "alone_ape_p95", 0},
};
#define CLI_METRIC_ROWS (sizeof(cli_metric_rows) / sizeof(cli_metric_rows[0]))

/* Row i of the table for one model: a count or a fraction. */
static double cli_metric_value(const duet_cal_metrics_t *m, size_t i)
{
    const double v[CLI_METRIC_ROWS] = {(double)m->op_rows,
                                       m->ape_median,
                                       m->ape_p95,
                                       m->shapes,
                                       m->exact_pick,
                                       m->pick_within8,
                                       m->pick_within8_loose,
                                       m->regret_median,
                                       m->regret_mean,
                                       m->regret_p95,
                                       m->topk_cover[0],
                                       m->topk_cover[1],
                                       m->topk_cover[2],
                                       (double)m->alone_rows,
                                       m->alone_ape_median,
                                       m->alone_ape_p95};
    return v[i];
}

/* The accuracy table's cells for one model: the text (a count, a percentage, "-" for none) and the
 * CSV value (a count or a fraction, NaN for none). */
static void cli_metrics_cells(duet__table_t *t, const duet_cal_metrics_t *m, size_t i)
{
    char b[32];
    double v = m != NULL ? cli_metric_value(m, i) : NAN;
    if (m == NULL)
        duet__table_str(t, "-");
    else if (cli_metric_rows[i].count)
        duet__table_strf(t, "%lld", (long long)v);
    else
        duet__table_str(t, cli_pct(v, b, sizeof(b)));
    duet__table_num(t, v);
}

duet_status_t cli_metrics_write(FILE *f, const cli_column_t *col, int ncol, duet__table_format_t format)
{
    /* A metric a row; a model two columns, its text cell and its CSV value. */
    duet__col_t cols[2 + 2 * CLI_METRICS_MAX_MODELS] = {
        {"key", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},
        {"metric", "", NULL, "%-38s", DUET__CELL_STR, 0, 0, NULL},
    };
    if (ncol > CLI_METRICS_MAX_MODELS)
        return duet__error(DUET_ERR_INVALID_ARG, "accuracy table: at most %d models", CLI_METRICS_MAX_MODELS);
    for (int c = 0; c < ncol; c++) {
        cols[2 + 2 * c] =
            (duet__col_t){col[c].key, col[c].title, NULL, " %16s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL};
        cols[3 + 2 * c] = (duet__col_t){col[c].key, NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA, NULL};
    }
    duet__table_t t;
    duet__table_init(&t, cols, 2 + 2 * ncol);
    for (size_t i = 0; i < CLI_METRIC_ROWS; i++) {
        duet__table_str(&t, cli_metric_rows[i].key);
        duet__table_str(&t, cli_metric_rows[i].label);
        for (int c = 0; c < ncol; c++)
            cli_metrics_cells(&t, col[c].m, i);
    }
    duet_status_t st = duet__table_write(&t, f, format, "", "");
    duet__table_free(&t);
    return st;
}

/* The noise floor, after the table: what the measurements allow any model. */
void cli_noise_lines(FILE *f, const duet_cal_noise_t *nz)
{
    char a[32], b[32], c[32], d[32];
    fprintf(f,
            "\nnoise floor (the rows' own spread, %d shapes): runner-up within the best's slowest run in %s of "
            "shapes, within 1 %% in %s; median gap to the runner-up %s; median run spread (max - min) / median %s.\n",
            (int)nz->shapes, cli_pct(nz->runner_up_in_spread, a, sizeof(a)),
            cli_pct(nz->runner_up_within_1pct, b, sizeof(b)), cli_pct(nz->gap_median, c, sizeof(c)),
            cli_pct(nz->row_spread_median, d, sizeof(d)));
    fprintf(f,
            "column \"noise floor\": a perfect model ranking one simulated re-measurement, scored against another "
            "(%d pairs); drift between points is not included, so no model can be expected to beat it.\n",
            (int)nz->pairs);
}

/* A fitted constant's note: why its value is not to be trusted as it stands, or "". */
static void cli_fit_param_note(const duet_cal_param_result_t *r, char *note, size_t n)
{
    note[0] = '\0';
    if (!r->fitted)
        snprintf(note, n, "not fitted: no row depends on it");
    else if (r->at_bound)
        snprintf(note, n, "at its %s bound", r->at_bound < 0 ? "lower" : "upper");
    else if (r->stderr_abs != r->stderr_abs)
        snprintf(note, n, "undetermined: the rows do not constrain it here");
    else if (r->corr_field >= 0 && (r->corr > 0.95 || r->corr < -0.95))
        snprintf(note, n, "correlated %+.2f with %s", r->corr, duet_hw_field_info(r->corr_field)->key);
}

duet_status_t cli_fit_params(FILE *f, const duet_cal_fit_t *fit)
{
    static const duet__col_t cols[] = {
        {"constant", NULL, NULL, "%-24s", DUET__CELL_STR, 0, 0, NULL},
        {"start", NULL, NULL, " %12.5g", DUET__CELL_NUM, 0, 0, NULL},
        {"fitted", NULL, NULL, " %12.5g", DUET__CELL_NUM, 0, 0, NULL},
        {"stderr", "+- stderr", NULL, " %12s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL}, /* "-" when unknown */
        {"unit", NULL, NULL, " %-14s", DUET__CELL_STR, 0, 0, NULL},
        {"note", NULL, NULL, " %s", DUET__CELL_STR, 0, 0, NULL},
    };
    duet__table_t t;
    duet__table_init(&t, cols, (int)(sizeof(cols) / sizeof(cols[0])));
    for (int32_t j = 0; j < fit->n_params; j++) {
        const duet_cal_param_result_t *r = &fit->params[j];
        const duet_hw_field_info_t *fi = duet_hw_field_info(r->field);
        char note[96];
        cli_fit_param_note(r, note, sizeof(note));
        duet__table_str(&t, fi->key);
        duet__table_num(&t, r->start);
        duet__table_num(&t, r->value);
        if (r->stderr_abs == r->stderr_abs)
            duet__table_strf(&t, "%.3g", r->stderr_abs);
        else
            duet__table_str(&t, "-");
        duet__table_str(&t, fi->unit);
        duet__table_str(&t, note);
    }
    duet_status_t st = duet__table_text(&t, f);
    duet__table_free(&t);
    return st;
}

/* The base profile, or exit 2 with "--hw: why". */
int cli_load_hw(const char *cmd, const char *arg, duet_hw_t *hw)
{
    if (duet_hw_load(arg, hw) < 0) {
        cli_error(cmd, "--hw: %s", duet_last_error()[0] ? duet_last_error() : "cannot load the profile");
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

int cli_cal_fit_option(const char *cmd, int opt, const char *arg, cli_corpora_t *cs, const char **hw_arg,
                       duet_cal_params_t *p, int *quiet, int *help)
{
    long long v;
    switch (opt) {
    case 'h':
        *help = 1;
        return CLI_EXIT_OK;
    case OPT_CORPUS:
        return cli_corpora_add(cs, cmd, arg);
    case OPT_HW:
        *hw_arg = arg;
        return CLI_EXIT_OK;
    case OPT_MAX_ITER:
        if (cli_parse_i64(arg, 1, 100000, &v) != 0)
            return cli_usage_error(cmd, "--max-iter: '%s' is not an integer in [1, 100000]", arg);
        p->max_iter = (int32_t)v;
        return CLI_EXIT_OK;
    case OPT_THREADS:
        if (cli_parse_i64(arg, 0, 4096, &v) != 0)
            return cli_usage_error(cmd, "--threads: '%s' is not an integer in [0, 4096]", arg);
        p->threads = (int32_t)v;
        return CLI_EXIT_OK;
    case OPT_QUIET:
        *quiet = 1;
        return CLI_EXIT_OK;
    case OPT_ALLOW_DEVICE_MIX:
        cs->allow_device_mix = 1;
        return CLI_EXIT_OK;
    default:
        return -1;
    }
}

int cli_cal_getopt(const char *cmd, int argc, char **argv, const struct option *longopts, cli_option_fn fn, void *o,
                   int *help, cli_corpora_t *cs, const char *const *hw_arg)
{
    int rc = cli_getopt(cmd, argc, argv, longopts, fn, o, help);
    if (rc != CLI_EXIT_OK || *help)
        return rc;
    if ((rc = cli_corpora_operands(cs, cmd, argc, argv)) != CLI_EXIT_OK)
        return rc;
    if (*hw_arg == NULL)
        return cli_usage_error(cmd, "give the base profile with --hw NAME|FILE (e.g. --hw h200)");
    return CLI_EXIT_OK;
}

void cli_table_printed(const char *cmd, duet_status_t st)
{
    if (st != DUET_OK)
        cli_error(cmd, "a table of the report could not be printed: %s", duet_last_error());
}
