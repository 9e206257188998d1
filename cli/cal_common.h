/*
 * What `duet calibrate fit` (cli/cmd_calibrate.c), `duet calibrate select` (cli/cmd_select.c) and
 * `duet validate` (cli/cmd_validate.c) share: the corpus files of the command line, the progress
 * line, --rows, and the accuracy tables they print (cli/cal_common.c).
 */
#ifndef DUET_CLI_CAL_COMMON_H
#define DUET_CLI_CAL_COMMON_H

#include "calibrate/eta.h"
#include "cli/cli.h"
#include "duet/calibrate.h"

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
    OPT_ROWS,
    OPT_SWEEP2,
    OPT_CANDIDATES,
    OPT_OUTER,
    OPT_INNER,
    OPT_ALLOW_DEVICE_MIX
};

/* The option of every command that reads corpora with a profile (cli_device_check()). */
#define CLI_ALLOW_DEVICE_MIX_LONGOPT                                                                                   \
    {                                                                                                                  \
        "allow-device-mix", no_argument, NULL, OPT_ALLOW_DEVICE_MIX                                                    \
    }

#define CLI_CAL_MAX_CORPORA 64

/* The corpus files of the command line, and those loaded. */
typedef struct cli_corpora {
    const char *path[CLI_CAL_MAX_CORPORA];
    duet_corpus_t c[CLI_CAL_MAX_CORPORA];
    /* Each file as a fitted profile's sources name it: with the kernels it measured, and
     * "STALE" when they are not this build's (cli_corpora_load()). */
    char label_buf[CLI_CAL_MAX_CORPORA][160];
    const char *label[CLI_CAL_MAX_CORPORA];
    int n, loaded, stale;
    int allow_device_mix; /* --allow-device-mix */
} cli_corpora_t;

/* Progress with an estimate of the time left, on stderr. */
typedef struct cli_progress {
    int tty, quiet, last_done;
    double last_print;
    duet__cal_eta_t eta; /* the time left, from each stage's progress */
} cli_progress_t;

/* A column of the accuracy table: a model's metrics under a title (text) and a key (CSV header). */
typedef struct cli_column {
    const char *title, *key;
    const duet_cal_metrics_t *m; /* NULL: not available */
} cli_column_t;

/** Add a corpus file given with --corpus. @return an exit code. */
int cli_corpora_add(cli_corpora_t *cs, const char *cmd, const char *path);
/** The corpus files after the first, which arrive as operands; at least one is required. */
int cli_corpora_operands(cli_corpora_t *cs, const char *cmd, int argc, char **argv);
/**
 * Load every corpus file (the first bad one is the error). A corpus whose kernels are not this
 * build's backend, or that does not say which they were, gets a warning on stderr
 * ("duet: CMD: warning: ..."), and its label says so.
 */
int cli_corpora_load(cli_corpora_t *cs, const char *cmd);
void cli_corpora_free(cli_corpora_t *cs);
/**
 * One device only: every corpus of `cs` and of `more` (NULL: none) measured on one device, and the
 * profile `hw` (`what`: "profile" or "base profile") of it too, as duet_hw_device_match() compares
 * names. Otherwise one line naming both devices and exit 2, or with cs->allow_device_mix a warning.
 * @return an exit code.
 */
int cli_device_check(const char *cmd, const cli_corpora_t *cs, const cli_corpora_t *more, const duet_hw_t *hw,
                     const char *what);
/** The device of the corpora when they are of one (named), else NULL. */
const char *cli_corpora_one_device(const cli_corpora_t *cs);

/** The progress line on stderr (a duet_cal_progress_fn; arg is a cli_progress_t). */
void cli_progress_fn(void *arg, const duet_cal_progress_t *p);
void cli_progress_init(cli_progress_t *pr, int quiet);
void cli_progress_end(cli_progress_t *pr);

/**
 * Open --rows (NULL path: none; a folder that does not exist: exit 2 before the work) and close
 * it: written when `rc` is CLI_EXIT_OK, else dropped. @return an exit code, reported.
 */
int cli_rows_open(const char *cmd, const char *path, duet_cal_rows_csv_t **csv_p);
int cli_rows_close(const char *cmd, duet_cal_rows_csv_t *csv, int rc);

/** The profile of --hw, or exit 2 with "--hw: <why>". */
int cli_load_hw(const char *cmd, const char *arg, duet_hw_t *hw);

/** A fraction as a percentage, or "-" when it is undefined. */
const char *cli_pct(double v, char *buf, size_t n);
/* The most models (columns) an accuracy table has. */
#define CLI_METRICS_MAX_MODELS 8
/**
 * The accuracy table, one column per model (base/table.c): as text, fractions as percentages; as
 * CSV, columns key (the metric's key in the JSON documents), metric (the text's label), then one
 * per model (its `key`), fractions as fractions (0.05 = 5 %), an empty field where a model has no
 * value.
 */
duet_status_t cli_metrics_write(FILE *f, const cli_column_t *col, int ncol, duet__table_format_t format);
/** The noise floor, after the table. */
void cli_noise_lines(FILE *f, const duet_cal_noise_t *nz);
/** One fit's parameters, a table (text only: the fit report has them as JSON). */
duet_status_t cli_fit_params(FILE *f, const duet_cal_fit_t *fit);
/** After the outputs are written: a table that could not be printed (out of memory) is reported on
 *  stderr rather than left out without a word; the command's outcome stands. */
void cli_table_printed(const char *cmd, duet_status_t st);

/**
 * One of the options `calibrate fit` and `calibrate select` share: -h, --corpus, --hw, --max-iter,
 * --threads, --quiet, --allow-device-mix (into *help, cs, *hw_arg, p->max_iter, p->threads, *quiet,
 * cs->allow_device_mix). @return an exit code, or -1 when `opt` is none of them.
 */
int cli_cal_fit_option(const char *cmd, int opt, const char *arg, cli_corpora_t *cs, const char **hw_arg,
                       duet_cal_params_t *p, int *quiet, int *help);

/**
 * The argument loop of `calibrate fit` and `calibrate select` (cli_getopt()), then the corpus
 * operands into cs, and a base profile required (*hw_arg, set by the loop). @return an exit code
 * (CLI_EXIT_OK to go on, or to print the usage when *help).
 */
int cli_cal_getopt(const char *cmd, int argc, char **argv, const struct option *longopts, cli_option_fn fn, void *o,
                   int *help, cli_corpora_t *cs, const char *const *hw_arg);

/** `duet calibrate select` (cli/cmd_select.c); argv[0] is "select". */
int cmd_calibrate_select(int argc, char **argv);

#endif /* DUET_CLI_CAL_COMMON_H */
