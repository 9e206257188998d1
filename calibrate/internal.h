/*
 * Internal helpers of the calibration layer (not installed). Names start with duet__cal_.
 *
 * GSL stays behind this layer: GSL_CHECK translates a GSL status into a duet status at the
 * boundary, recording the explanation once (convention 2).
 */
#ifndef DUET_CALIBRATE_INTERNAL_H
#define DUET_CALIBRATE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "base/pool.h"
#include "duet/calibrate.h"

/** Translate a GSL status into a duet status and record "<what>: GSL: <gsl_strerror>". */
duet_status_t duet__cal_gsl_error(int gsl_status, const char *what);

/** A GSL call at the foreign boundary: on failure, record once and go to the cleanup label. */
#define GSL_CHECK_GOTO(_call, _what, _status, _label)                                                                  \
    do {                                                                                                               \
        int _gs = (_call);                                                                                             \
        if (_gs != 0) {                                                                                                \
            (_status) = duet__cal_gsl_error(_gs, (_what));                                                             \
            goto _label;                                                                                               \
        }                                                                                                              \
    } while (0)

/** A GSL call at the foreign boundary: on failure, record once and return. */
#define GSL_CHECK(_call, _what)                                                                                        \
    do {                                                                                                               \
        int _gs = (_call);                                                                                             \
        if (_gs != 0)                                                                                                  \
            return duet__cal_gsl_error(_gs, (_what));                                                                  \
    } while (0)

/*
 * The rows of one or more corpora, flattened, grouped by shape, with their plans built once
 * (a plan does not depend on the profile, so every simulation of a fit reuses it).
 */
typedef struct duet__cal_set {
    size_t n;
    const duet_corpus_row_t **row; /* into the caller's corpora (or array) */
    int32_t *file;                 /* corpus the row comes from */
    int64_t *line;                 /* index of the row in that corpus */
    int32_t *shape;                /* shape id of the row */
    duet_plan_t *plan;             /* plan of the row's predicted workload (measured rows only) */
    int32_t n_shapes;
    int32_t *fold;        /* per shape; -1 before duet__cal_set_folds() */
    int32_t *shape_order; /* shape ids in sort order (the fold assignment order) */
    int64_t rows_failed;
    const duet_corpus_t *corpora; /* NULL for a set built from an array */
    const char *const *names;     /* names of the corpora for messages; may be NULL */
    int n_corpora;
} duet__cal_set_t;

/** Flatten the rows of n corpora (or of one array) into a set. */
duet_status_t duet__cal_set_from_corpora(const duet_corpus_t *corpora, const char *const *names, int n,
                                         duet__cal_set_t *s);
duet_status_t duet__cal_set_from_array(const duet_corpus_row_t *rows, size_t n, duet__cal_set_t *s);
void duet__cal_set_free(duet__cal_set_t *s);
/** Assign shapes to k folds (sorted shape order, round robin). */
duet_status_t duet__cal_set_folds(duet__cal_set_t *s, int32_t k);
/** 1 if the set's row i can be predicted by `policy` (measured; frozen: fused only). */
int duet__cal_row_usable(const duet__cal_set_t *s, size_t i, const duet_sim_policy_ops_t *policy);
/**
 * Check that the profile can run every usable row (same SM count as the corpora, tiles that fit),
 * naming the first offending corpus and row.
 */
duet_status_t duet__cal_set_check(const duet__cal_set_t *s, const duet_hw_t *hw, const duet_sim_policy_ops_t *policy);
/** "a.json" or "corpus #2": how messages name corpus f of the set. */
const char *duet__cal_set_name(const duet__cal_set_t *s, int32_t f, char *buf, size_t n);
/** Predict row i (ms) with the prebuilt plan. */
duet_status_t duet__cal_predict(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                                const duet__cal_set_t *s, size_t i, double *ms_p);
/** Predict every usable row; others get NaN. */
duet_status_t duet__cal_predict_all(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                                    const duet__cal_set_t *s, double *pred);

/** Metrics of predictions over a set (pred[i] NaN: not predicted). `mask` (may be NULL) limits rows. */
duet_status_t duet__cal_metrics(const duet__cal_set_t *s, const double *pred, const uint8_t *mask,
                                duet_cal_metrics_t *m_p);
/* Write each mode's known error with rows (mr->mode_err) into mr->fit.hw, with its source. */
void duet__cal_fit_set_mode_errors(duet_cal_model_report_t *mr, const char *const *files, int n, const char *date);
/* Each mode's known error from the predictions `pred` of the set's rows (duet_cal_mode_errors_compute()). */
duet_status_t duet__cal_mode_errors(const duet__cal_set_t *s, const double *pred, double *err, int64_t *n_rows);

/**
 * The reference rules' predictions of the set (NaN where they have none): seed_link_gbs fitted on
 * its unsplit fused op rows (*fit_p), then policy frozen. *have_p 0: no such rows, no fit.
 */
duet_status_t duet__cal_ref_predict(duet_sim_ws_t *ws, const duet__cal_set_t *s, const duet_hw_t *hw,
                                    duet_cal_progress_fn progress, void *progress_arg, double *pred,
                                    duet_cal_fit_t *fit_p, int *have_p);

/** The noise floor of the set's measured op rows (calibrate/noise.c). */
duet_status_t duet__cal_noise(const duet__cal_set_t *s, duet_cal_noise_t *nz_p);

/**
 * Fit over the rows of the set for which `use[i]` is 1 (NULL: every usable row). `stage` and
 * the stage indices feed the progress callback; `t0` is the run's start (CLOCK_MONOTONIC s).
 */
typedef struct duet__cal_stage {
    const char *name;
    int32_t index, count;
    double t0;
} duet__cal_stage_t;

duet_status_t duet__cal_fit_set(const duet__cal_set_t *s, const uint8_t *use, const duet_hw_t *base,
                                const duet_cal_params_t *p, const duet__cal_stage_t *stage, duet_cal_fit_t *fit_p);

/** Monotonic wall clock, seconds. */
/** The fit report's JSON text (duet_cal_report_write_json's), malloc'd into *text_p. */
duet_status_t duet__cal_report_text(const duet_cal_report_t *rep, const char *const *files, int n,
                                    const char *base_name, char **text_p);
double duet__cal_now(void);

/** The profile field named `name` (duet_hw_field_t), or -1. */
int32_t duet__cal_field_find(const char *name);

/** Refuse a set whose corpora hold nothing measured, naming the file and, for all-failed ones, why. */
duet_status_t duet__cal_set_check_measured(const duet__cal_set_t *s);

/**
 * Assign the shapes with in[shape] != 0 (`in` NULL: every shape) to k folds by the rule of
 * duet__cal_set_folds (sorted shape order, round robin) into fold[shape]; the others get -1.
 * @return DUET_ERR_INVALID_ARG when fewer than k shapes are in.
 */
duet_status_t duet__cal_folds_of(const duet__cal_set_t *s, const uint8_t *in, int32_t k, int32_t *fold);

/**
 * The sum of squared log errors log(pred / measured)^2, and their count, over the rows in `mask`
 * (NULL: every row) that are measured, predicted (pred[i] positive and finite) and in the
 * objective of p (its row kinds and modes).
 */
void duet__cal_sse(const duet__cal_set_t *s, const double *pred, const uint8_t *mask, const duet_cal_params_t *p,
                   double *sse_p, int64_t *n_p);

/* ------------------------------------------------------------------------------------------ */
/* Fits in parallel (calibrate/fits.c)                                                         */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet__fits duet__fits_t;

/**
 * One fit as a task of a thread pool: fit p's constants of `base` on the `train` rows (NULL: every
 * usable row), then predict the `test` rows (NULL: none) with the fitted profile.
 */
typedef struct duet__task {
    duet__fits_t *fits;
    const duet__cal_set_t *s;
    const duet_hw_t *base;
    const duet_cal_params_t *p;
    const uint8_t *train, *test;
    double *held; /* NULL, or where the test rows' predictions go (NaN: not predicted) */
    uint8_t *own; /* a mask buffer the task owns (freed by duet__fits_free), or NULL */
    char name[96];
    duet__cal_stage_t stage;
    duet_cal_fit_t fit;
    duet_cal_fold_t out; /* with test rows: the fit's figures, the rms over the test rows in the objective */
    double sse;          /* the test rows' squared log errors (duet__cal_sse), and their count */
    int64_t n_sse;
    duet_status_t st;
    char err[DUET__ERRBUF_LEN]; /* the error text, carried from the worker thread */
} duet__task_t;

struct duet__fits {
    duet__task_t *tasks;
    int32_t n, cap;
    int32_t first;       /* the first task of the current run */
    int32_t done_before; /* fits finished by earlier runs, for the progress count */
    duet__pool_t pool;
    duet_cal_progress_fn fn;
    void *arg;
};

/** Room for `cap` tasks; progress (fn may be NULL) goes to fn(arg, ...). */
duet_status_t duet__fits_init(duet__fits_t *fits, int32_t cap, duet_cal_progress_fn fn, void *arg);
/** The next task (zeroed, named by the printf format), with its stage set to start at t0. NULL: full. */
duet__task_t *duet__fits_add(duet__fits_t *fits, const duet__cal_set_t *s, const duet_hw_t *base,
                             const duet_cal_params_t *p, double t0, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/**
 * Run the tasks added since the last run on up to `threads` threads (0: one per CPU). The result
 * does not depend on the number of threads. @return the first failure in task order.
 */
duet_status_t duet__fits_run(duet__fits_t *fits, int32_t threads);
/** Release the tasks and their masks (a zeroed fits is fine). */
void duet__fits_free(duet__fits_t *fits);

#endif /* DUET_CALIBRATE_INTERNAL_H */
