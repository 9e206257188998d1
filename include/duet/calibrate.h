/*
 * duet calibration layer: predict measured corpora with the simulator, fit a hardware profile's
 * constants to them, and report how well the model predicts runs it has not seen.
 *
 * The fit minimises sum_i log(pred_i / meas_i)^2 over the measured rows of one or more corpora
 * (include/duet/corpus.h) with GSL's nonlinear least-squares trust-region solver. GSL is an
 * implementation detail: nothing of it appears in this header, and its errors come back as
 * duet_status_t codes with an explanation in duet_last_error(). docs/calibration.md documents
 * the procedure, the objective and the report.
 *
 * Every public function returns a duet_status_t; outputs are written only on success.
 */
#ifndef DUET_CALIBRATE_H
#define DUET_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#include "duet/corpus.h"
#include "duet/model.h"
#include "duet/sim.h"
#include "duet/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Prepare the calibration layer: switch GSL's default error handler (which aborts the process)
 * off, once per process, so that GSL errors return to duet as status codes. Every duet_cal_
 * entry point calls it; calling it again is harmless. Note that the handler is process-wide:
 * an application that uses GSL itself and relies on the aborting handler must reinstall it.
 */
duet_status_t duet_cal_init(void);

/* ========================================================================================== */
/* Predicting a corpus row                                                                     */
/* ========================================================================================== */

/**
 * The workload a row actually ran: the row's workload for an op row, the same workload with the
 * collective removed for gemm_alone, and with the GEMM removed for comm_alone.
 */
duet_workload_t duet_cal_row_workload(const duet_corpus_row_t *row);

/**
 * Predict one row's time in milliseconds: build the plan of (duet_cal_row_workload(row),
 * row->cfg) for the critical rank and simulate it on `hw` with `policy` (NULL = fluid), reusing
 * the workspace `ws`. @return DUET_ERR_INFEASIBLE when the profile cannot run the row's
 * configuration, DUET_ERR_UNSUPPORTED when the policy does not model its mode (frozen:
 * concurrent rows).
 */
duet_status_t duet_cal_row_predict(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                                   const duet_corpus_row_t *row, double *ms_p);

/* ========================================================================================== */
/* Accuracy metrics (the reference design's, so that numbers compare)                         */
/* ========================================================================================== */

/** Coverage is reported for the model's top k configurations, k = 1, 4 and 8. */
#define DUET_CAL_TOPK_N 3
extern const int duet_cal_topk[DUET_CAL_TOPK_N];

/** A pick "within 8 CTAs" of the measured best: see duet_cal_metrics_t.pick_within8. */
#define DUET_CAL_WITHIN_CTAS 8
/** A configuration "covers" a shape when its measured time is within 3 % of the shape's best. */
#define DUET_CAL_COVER_TOL 0.03

/**
 * Accuracy of predictions against a corpus. Shares and errors are fractions (0.05 = 5 %).
 * A "shape" is one workload (every field of duet_workload_t); its candidates are its measured
 * op rows that the model predicted. Shapes with fewer than two candidates are not counted in
 * the pick metrics (a pick among one is not a pick).
 */
typedef struct duet_cal_metrics {
    /* Makespan error |pred / meas - 1| over predicted, measured op rows. */
    int64_t op_rows;
    double ape_median, ape_p95, ape_mean;
    /* The same over the gemm_alone and comm_alone rows (0 rows: NaN). */
    int64_t alone_rows;
    double alone_ape_median, alone_ape_p95;
    /* Ranking, per shape. */
    int32_t shapes;
    double exact_pick;         /* the predicted best is the measured best (same configuration) */
    double pick_within8;       /* same mode and GEMM tile, |gemm_wgs - best| <= 8 and |comm_wgs - best| <= 8 */
    double pick_within8_loose; /* the reference's reading: same mode, |gemm_wgs - best| <= 8, any tile */
    /* Regret of the predicted best: meas(predicted best) / meas(best) - 1. */
    double regret_median, regret_mean, regret_p95;
    /* Share of shapes where one of the model's top k is within 3 % of the measured best. */
    double topk_cover[DUET_CAL_TOPK_N];
} duet_cal_metrics_t;

/**
 * Metrics of predictions `pred_ms[i]` for rows `rows[i]` (a contiguous array, e.g. a corpus's
 * rows). A row takes part when it is measured (ok) and pred_ms[i] is a positive finite number;
 * NaN marks a row the model did not predict. The measured best of a shape is taken over every
 * measured op row of the shape, predicted or not, so a model that cannot predict some
 * configurations (the reference rules and concurrent mode) is charged for missing them.
 * @return DUET_ERR_INVALID_ARG when no row takes part.
 */
duet_status_t duet_cal_metrics_compute(const duet_corpus_row_t *rows, const double *pred_ms, size_t n,
                                       duet_cal_metrics_t *m_p);

/* ========================================================================================== */
/* The noise floor of a corpus                                                                 */
/* ========================================================================================== */

/** Simulated pairs of re-measurements behind duet_cal_noise_t.remeasure. */
#define DUET_CAL_NOISE_PAIRS 200

/**
 * What the measurements themselves allow (docs/calibration.md, "The noise floor"). Read from the
 * rows' min/max spread only: drift between points is not in it, so these are upper bounds on what
 * any model can score on the corpus.
 */
typedef struct duet_cal_noise {
    int32_t shapes;               /* shapes with at least two measured op rows */
    double runner_up_in_spread;   /* share of them whose runner-up's median <= the best's max_ms */
    double runner_up_within_1pct; /* share whose runner-up's median is within 1 % of the best's */
    double gap_median;            /* median over shapes of runner-up / best - 1 */
    double row_spread_median;     /* median over measured op rows of (max_ms - min_ms) / ms */
    int32_t pairs;                /* simulated measurement pairs */
    /* A perfect model scored against a second measurement: each row redrawn twice from its
     * median and the standard error its spread implies, one draw ranking, the other judging;
     * every metric is the mean over the pairs. */
    duet_cal_metrics_t remeasure;
} duet_cal_noise_t;

/** The noise floor of measured rows (the rows' shapes grouped as duet_cal_metrics_compute does). */
duet_status_t duet_cal_noise_compute(const duet_corpus_row_t *rows, size_t n, duet_cal_noise_t *nz_p);

/* ========================================================================================== */
/* The fit                                                                                     */
/* ========================================================================================== */

#define DUET_CAL_MAX_PARAMS 24

/** Where a fit is; passed to the progress callback after every iteration. */
typedef struct duet_cal_progress {
    const char *stage;   /* "fit", "fold 2/5", "reference rules", ... */
    int32_t stage_index; /* 0-based index of this stage among n_stages */
    int32_t n_stages;    /* stages of the whole run (1 for a single fit) */
    int32_t stages_done; /* stages finished so far (stages run in parallel, in any order) */
    int32_t iteration;   /* iterations done in this stage */
    int32_t max_iter;
    double rms_log;   /* current root-mean-square log error */
    double elapsed_s; /* wall time since the run started */
} duet_cal_progress_t;

typedef void (*duet_cal_progress_fn)(void *arg, const duet_cal_progress_t *p);

/**
 * One measured row's predictions, for residual analysis (`duet calibrate fit --rows`): the row
 * (`corpus`-th corpus, `index`-th row of it), the fold that held its shape out (-1: no
 * cross-validation), and its predicted time in ms by the fit on every row and by the fit that did
 * not see its shape (NaN: not predicted, e.g. no cross-validation).
 */
typedef struct duet_cal_row_pred {
    const duet_corpus_row_t *row;
    int32_t corpus;
    int64_t index;
    int32_t shape; /* shape id, shared by the rows of one workload */
    int32_t fold;
    double fitted_ms;
    double held_out_ms;
} duet_cal_row_pred_t;
typedef void (*duet_cal_row_fn)(void *arg, const duet_cal_row_pred_t *r);

/** How to fit. Start from duet_cal_default_params(). */
typedef struct duet_cal_params {
    const duet_sim_policy_ops_t *policy; /* default fluid */
    int32_t n_fit;                       /* profile constants to fit (duet_hw_field_t) */
    int32_t fit[DUET_CAL_MAX_PARAMS];
    uint32_t kinds;                /* row kinds in the objective: bits (1 << duet_row_kind_t); default all three */
    uint32_t modes;                /* configuration modes in the objective: bits (1 << duet_mode_t); default both */
    int32_t folds;                 /* k-fold cross-validation by shape; 0 or 1 = none; default 5 */
    int32_t max_iter;              /* trust-region iterations per fit; default 100 */
    double xtol;                   /* stop when every log-parameter step is below xtol (relative); default 1e-8 */
    double gtol;                   /* stop when the scaled gradient is below gtol; default 1e-10 */
    double fd_step;                /* finite-difference step of the Jacobian in log-parameter space; default 1e-4 */
    int32_t central;               /* 1: central differences (2 simulations per parameter), 0: forward (default) */
    int32_t presearch;             /* rounds of coarse coordinate search before the trust region; default 2, 0 = off */
    int32_t threads;               /* reports: fits run in parallel on this many threads; 0 = one per CPU (default) */
    duet_cal_progress_fn progress; /* may be NULL */
    void *progress_arg;
    duet_cal_row_fn rows; /* reports: once per measured row (duet's model), in row order; may be NULL */
    void *rows_arg;
} duet_cal_params_t;

/**
 * Defaults: policy fluid, fit the constants of duet_cal_default_fit_names, every row kind and
 * mode, 5 folds, 100 iterations, xtol 1e-8, gtol 1e-10, forward differences of step 1e-4, two
 * rounds of coarse search.
 */
duet_cal_params_t duet_cal_default_params(void);

/** The default parameter list, comma-separated (docs/calibration.md says why each is in it). */
extern const char duet_cal_default_fit_names[];

/**
 * The default parameters for these corpora (n of them): duet_cal_default_fit_names, plus
 * splitk_sm_gbs when a measured row has a K split (split_k > 1). Without such rows nothing
 * depends on it, so it is not listed. What `duet calibrate fit` fits without --params.
 */
duet_status_t duet_cal_params_set_default_fit(duet_cal_params_t *p, const duet_corpus_t *corpora, int n);

/**
 * Set the parameters to fit from a comma-separated list of profile field names, e.g.
 * "gemm_eff_bf16,link_gbs". @return DUET_ERR_INVALID_ARG for an unknown name, a duplicate, an
 * integer field (counts are not fitted) or more than DUET_CAL_MAX_PARAMS names.
 */
duet_status_t duet_cal_params_set_fit(duet_cal_params_t *p, const char *list);

/** One fitted constant. */
typedef struct duet_cal_param_result {
    int32_t field;      /* duet_hw_field_t */
    double start;       /* value in the base profile, in the field's unit */
    double value;       /* fitted value */
    double stderr_abs;  /* standard error, in the field's unit (NaN: not determined by the data) */
    double stderr_rel;  /* standard error of log(value): the relative standard error */
    int32_t fitted;     /* 0: left at its start because no row in the objective depends on it */
    int32_t at_bound;   /* -1 / +1: the value sits at the field's lower / upper bound; 0 otherwise */
    int32_t corr_field; /* the parameter it correlates with most (-1: none) */
    double corr;        /* that correlation, in [-1, 1] */
} duet_cal_param_result_t;

/** What one fit did. */
typedef struct duet_cal_fit {
    duet_hw_t hw;       /* the base profile with the fitted values (sources unchanged) */
    const char *policy; /* policy name */
    int32_t n_params;
    duet_cal_param_result_t params[DUET_CAL_MAX_PARAMS];
    int64_t rows;   /* rows in the objective */
    int32_t shapes; /* shapes those rows belong to */
    int32_t iterations;
    int32_t converged;     /* 1: stopped on the step, gradient or an exact fit */
    char stop_reason[128]; /* e.g. "small step (xtol 1e-08)" */
    double rms_log_start;  /* root-mean-square log error at the base profile */
    double rms_log_end;    /* ... at the fitted profile */
    int64_t evaluations;   /* simulations of the whole row set (residual evaluations) */
    double wall_s;
} duet_cal_fit_t;

/**
 * Fit the parameters `p->fit` of `base` to the measured rows of `corpora` (n of them; `names`,
 * which may be NULL, names them in error messages, e.g. their file names). Rows
 * whose kind or mode is not selected, failed rows and, for policy frozen, concurrent rows are
 * left out. Every row used must be runnable on `base` (corpus SM count = profile SM count, tiles
 * that fit). Each parameter is fitted as log(value), clamped to the profile field's bounds.
 * A fit that stops on the iteration limit or for lack of progress is not an error: see
 * converged and stop_reason.
 * @return DUET_ERR_INVALID_ARG for an unusable corpus or profile (no measured rows, fewer rows
 * than parameters, another device), DUET_ERR_NO_MEMORY, DUET_ERR_NOT_CONVERGED when GSL fails
 * numerically.
 */
duet_status_t duet_cal_fit_run(const duet_corpus_t *corpora, const char *const *names, int n, const duet_hw_t *base,
                               const duet_cal_params_t *p, duet_cal_fit_t *fit_p);

/**
 * Rewrite the sources of the fitted constants of fit->hw to "fit: <files>, <date>, +-<stderr>
 * <unit>". `files` names the corpora (n of them); `date` is e.g. "2026-12-01" (NULL: today, UTC).
 */
void duet_cal_fit_set_sources(duet_cal_fit_t *fit, const char *const *files, int n, const char *date);

/** The quantile of a mode's known error (duet_cal_mode_errors_compute()). */
#define DUET_CAL_MODE_ERR_Q 0.9

/**
 * Each mode's known error as the profile keeps it (err_fused, err_concurrent, err_vendor; docs/model.md,
 * "Deciding within the known error"), from predictions of measured rows: per workload (every field of
 * duet_workload_t), m = the median of log(pred / meas) over its predicted op rows; per mode,
 * q = the DUET_CAL_MODE_ERR_Q quantile of |log(pred / meas) - m| over its op rows; err = exp(q) - 1.
 * Given held-out predictions (each workload predicted by a fit that did not see it), this is the
 * held-out error of one prediction against the other predictions of its workload. err[mode] is NaN
 * and rows[mode] 0 for a mode without predicted op rows. @return DUET_ERR_INVALID_ARG without rows.
 */
duet_status_t duet_cal_mode_errors_compute(const duet_corpus_row_t *rows, const double *pred_ms, size_t n,
                                           double err[DUET_MODE_COUNT], int64_t n_rows[DUET_MODE_COUNT]);

/* ========================================================================================== */
/* Reports                                                                                     */
/* ========================================================================================== */

/** One fold of a cross-validation. */
typedef struct duet_cal_fold {
    int32_t shapes;     /* shapes held out */
    int64_t rows_train; /* rows the fold's fit used */
    int32_t iterations;
    int32_t converged;
    double rms_log_train;    /* on the training rows */
    double rms_log_held_out; /* on the held-out rows */
} duet_cal_fold_t;

#define DUET_CAL_MAX_FOLDS 32

/** A model's fit and its accuracy: at the start, in sample, and on held-out folds. */
typedef struct duet_cal_model_report {
    duet_cal_fit_t fit;           /* on every row */
    duet_cal_metrics_t start;     /* the base profile */
    duet_cal_metrics_t in_sample; /* the fitted profile on the rows it was fitted to */
    duet_cal_metrics_t held_out;  /* each shape predicted by the fit of the folds without it */
    int32_t folds;                /* 0: no cross-validation (held_out is not set) */
    /* Each mode's known error from the held-out predictions (duet_cal_mode_errors_compute(); NaN and
     * 0 rows where the corpora have none of the mode, or without cross-validation). */
    double mode_err[DUET_MODE_COUNT];
    int64_t mode_err_rows[DUET_MODE_COUNT];
    duet_cal_fold_t fold[DUET_CAL_MAX_FOLDS];
} duet_cal_model_report_t;

/**
 * What `duet calibrate fit` reports: duet's model (the fit of p) and the reference design's rules
 * (policy frozen, fused op rows, seed_link_gbs fitted as its single constant), each with k-fold
 * cross-validation grouped by shape.
 */
typedef struct duet_cal_report {
    duet_cal_model_report_t model;
    duet_cal_model_report_t seed;
    duet_cal_noise_t noise; /* what the measurements allow any model */
    int64_t rows_total;     /* rows in the corpora */
    int64_t rows_failed;    /* of which failed measurements */
    int32_t shapes;         /* shapes in the corpora */
    double wall_s;
} duet_cal_report_t;

/**
 * Fit and cross-validate duet's model and the reference rules on the corpora. Shapes are
 * assigned to folds deterministically: sorted by (collective, world, dtype, m, n, k, mc, nc,
 * root), the i-th goes to fold i mod k. Each fold's fit starts from `base`, as the full fit does.
 * The fits are independent and run on p->threads threads; the result does not depend on the
 * number of threads. The progress callback is called from those threads, one call at a time.
 */
duet_status_t duet_cal_report_run(const duet_corpus_t *corpora, const char *const *names, int n, const duet_hw_t *base,
                                  const duet_cal_params_t *p, duet_cal_report_t *rep_p);

/*
 * The JSON documents of this layer (calibrate/json.c, docs/calibration.md): the fit report, the
 * validation and the selection (DUET_CAL_SELECTION_SCHEMA, below). They hold the same metrics
 * object (duet_cal_metrics_t: "op_rows", "ape_median", "ape_p95", "ape_mean", "alone_rows",
 * "alone_ape_median", "alone_ape_p95", "shapes", "exact_pick", "pick_within8",
 * "pick_within8_loose", "regret_median", "regret_mean", "regret_p95", and "topk_cover" with one
 * member per k, "1", "4" and "8"); the report and the validation the same noise-floor object; a
 * number that is not finite is null.
 */
#define DUET_CAL_REPORT_SCHEMA "duet-calibration/2" /* /1 had wall_s (seconds) where /2 has wall_us */
#define DUET_CAL_VALIDATION_SCHEMA "duet-validation/1"

/**
 * Write a report as JSON (DUET_CAL_REPORT_SCHEMA), atomically. `files` names the corpora;
 * `base_name` the base profile argument.
 */
duet_status_t duet_cal_report_write_json(const duet_cal_report_t *rep, const char *const *files, int n,
                                         const char *base_name, const char *path);

/**
 * Write what `duet calibrate fit` outputs, as a pair or not at all (a failed profile write removes
 * the report): the report as JSON to `report_path` and the fitted profile (rep->model.fit.hw) to
 * `profile_path`. First the fitted constants' sources become "fit: <files>, <date>, +-<stderr>
 * <unit>" (duet_cal_fit_set_sources; `date` NULL: today, UTC), each mode's known error with rows
 * (rep->model.mode_err) replaces the profile's, its source "fit: k-fold held-out, <files>, <date>,
 * p90 of N op rows", and the profile is named `name`
 * (NULL: the base's); rep keeps those changes even when a write fails. `files` names the corpora
 * (n of them), `base_name` the base profile.
 */
duet_status_t duet_cal_fit_save(duet_cal_report_t *rep, const char *const *files, int n, const char *base_name,
                                const char *name, const char *date, const char *profile_path, const char *report_path);

/**
 * The per-row predictions as CSV (`--rows FILE`; the columns are in docs/calibration.md; times in
 * us): open the handle, hand duet_cal_rows_csv_row to duet_cal_report_run (params.rows) or
 * duet_cal_validate_rows as the row callback with the handle as its argument, then close (which
 * writes the file atomically) or, when the run failed, abort (which writes nothing).
 */
typedef struct duet_cal_rows_csv duet_cal_rows_csv_t;
/** A handle for `path`, the header held in memory. @return DUET_ERR_NO_MEMORY. */
duet_status_t duet_cal_rows_csv_open(const char *path, duet_cal_rows_csv_t **csv_p);
/** One measured row's line (a duet_cal_row_fn; `arg` is the handle). A failed write is reported by close. */
void duet_cal_rows_csv_row(void *arg, const duet_cal_row_pred_t *r);
/**
 * Write the rows to the file (atomically, as every file duet writes) and release the handle.
 * @return the writer's error (DUET_ERR_IO, or DUET_ERR_NOT_FOUND for a folder that does not exist),
 * nothing written. NULL: no-op.
 */
duet_status_t duet_cal_rows_csv_close(duet_cal_rows_csv_t *csv);
/** Release the handle without writing anything (a run that failed). NULL: no-op. */
void duet_cal_rows_csv_abort(duet_cal_rows_csv_t *csv);

/** What `duet validate` reports: a profile's accuracy and the reference rules' on one corpus set. */
typedef struct duet_cal_validation {
    duet_cal_metrics_t model; /* policy fluid on the profile as given */
    duet_cal_metrics_t seed;  /* policy frozen with seed_link_gbs fitted on these corpora */
    duet_cal_fit_t seed_fit;  /* that one-constant fit */
    duet_cal_noise_t noise;   /* what the measurements allow any model */
    int64_t rows_total, rows_failed;
    int32_t shapes;
} duet_cal_validation_t;

/**
 * Predict every measured row of the corpora with `hw` and compute the metrics; then the same for
 * the reference rules after fitting seed_link_gbs (in sample; progress may be NULL).
 */
duet_status_t duet_cal_validate(const duet_corpus_t *corpora, const char *const *names, int n, const duet_hw_t *hw,
                                duet_cal_progress_fn progress, void *progress_arg, duet_cal_validation_t *v_p);

/**
 * duet_cal_validate, and each measured row's prediction handed to `rows` (may be NULL) in row
 * order (fold -1, held_out_ms NaN), for residual analysis (`duet validate --rows`).
 */
duet_status_t duet_cal_validate_rows(const duet_corpus_t *corpora, const char *const *names, int n, const duet_hw_t *hw,
                                     duet_cal_progress_fn progress, void *progress_arg, duet_cal_row_fn rows,
                                     void *rows_arg, duet_cal_validation_t *v_p);

/* ========================================================================================== */
/* Honest evaluation: a held-out test set in two sweeps, bootstrap intervals, the targets     */
/* ========================================================================================== */

/** Bootstrap resamples and seed of duet_cal_eval_compute() (fixed, so a table is reproducible). */
#define DUET_CAL_EVAL_RESAMPLES 2000
#define DUET_CAL_EVAL_SEED 20261203u
/* The noise band of a workload: this quantile of its configurations' sweep-to-sweep spreads. */
#define DUET_CAL_EVAL_BAND_Q 0.9

/** One measured row for the evaluation, flattened (times in ms; NaN: absent). */
typedef struct duet_cal_eval_row {
    int32_t workload;   /* 0..n_workloads-1 */
    int32_t kind;       /* duet_row_kind_t */
    int32_t budget_ok;  /* GEMM alone on at least a quarter of the SMs (the GEMM target's rows) */
    double m1, m2;      /* sweep 1 (the truth scored against) and sweep 2 (NaN: not re-measured) */
    double pred;        /* the model's prediction (NaN: none) */
    double ref_pred;    /* the reference rules' prediction (NaN: outside their options) */
    int32_t mode;       /* duet_mode_t of the row's configuration */
    int32_t is_default; /* 1: the static default configuration (duet_config_default(), fused): the safe choice */
    int32_t rule_pick;  /* 1: the decision rule's pick of its workload (sim/decide.c; duet_cal_evaluate sets it) */
} duet_cal_eval_row_t;

/** A point estimate with its bootstrap 95 % interval (percentiles 2.5 and 97.5). */
typedef struct duet_cal_ci {
    double value, lo, hi;
} duet_cal_ci_t;

/**
 * The evaluation (docs/calibration.md, "Honest evaluation"). APEs are |pred / m1 - 1|. Per
 * workload: its band is the DUET_CAL_EVAL_BAND_Q quantile over its op rows measured in both
 * sweeps of |m1 - m2| / min(m1, m2); the model's pick is its fastest predicted op row (ties: the
 * first row); the pick is right (noise-aware) when m1(pick) <= (1 + band) x the fastest m1; the
 * ceiling scores sweep 2's fastest row the same way (how well a re-measurement picks); regret is
 * m1(pick) / fastest m1 - 1. The reference rules are scored twice: within their own options (their
 * pick against the fastest of the rows they predict: unsplit fused rows), and as the model is, against
 * the fastest row of every mode (ref_all_*). Both use the workload's band and the same workloads.
 * The decision rule's pick (the row marked rule_pick: the static default kept unless a prediction's
 * gain clears the band of the two modes' known errors, duet_decide()) is scored as the model's pick is
 * (rule_*), on the workloads where the static default is measured. A switch is worse than the default
 * when a pick of vendor or concurrent mode measures slower than the static default row by more than
 * the workload's band (worse_switch: the model's fastest prediction; rule_worse_switch: the rule's).
 */
typedef struct duet_cal_eval {
    int32_t workloads, gemm_rows, op_rows, ref_workloads;
    duet_cal_ci_t gemm_ape_median, gemm_ape_p95; /* GEMM alone, budget >= 1/4 */
    duet_cal_ci_t op_ape_median, op_ape_p95;     /* op rows, every mode */
    duet_cal_ci_t pick, ceiling;                 /* noise-aware pick, re-measurement ceiling */
    duet_cal_ci_t exact_pick;                    /* the pick is the fastest m1 row */
    duet_cal_ci_t regret_p95, regret_mean;
    duet_cal_ci_t ref_op_ape_median, ref_op_ape_p95, ref_pick, ref_regret_p95, ref_regret_mean;
    duet_cal_ci_t ref_all_pick, ref_all_regret_p95, ref_all_regret_mean; /* against the best of all modes */
    duet_cal_ci_t worse_switch; /* share of workloads (those with the default measured) */
    duet_cal_ci_t rule_pick, rule_regret_p95, rule_regret_mean, rule_worse_switch; /* the decision rule's pick */
    int32_t worse_switch_n, worse_switch_of;     /* the count behind worse_switch, of so many workloads */
    int32_t rule_workloads, rule_worse_switch_n; /* workloads the rule is scored on; its worse switches */
    int32_t rule_left_n;                         /* workloads where the rule left the static default */
    double rule_err[DUET_MODE_COUNT];            /* the known errors the rule decided with (duet_hw_mode_err) */
    double band_median;                          /* median over workloads of the band */
    int32_t resamples;
    int32_t ref_fitted; /* 1: seed_link_gbs was fitted; 0: nothing to fit (no remote traffic, W = 1) */
    uint64_t seed;      /* the bootstrap's seed */
    double band_q;      /* the band's quantile (DUET_CAL_EVAL_BAND_Q) */
    /* The test set, as duet_cal_evaluate() found it: sweep 1's (its first corpus) provenance and
     * date, and sweep 2's order seed; "" and -1 where not recorded (duet_cal_eval_compute()). */
    duet_corpus_provenance_t prov;
    char date[32];
    int64_t sweep2_order_seed;
} duet_cal_eval_t;

/** How a figure of the target table is judged against its target. */
typedef enum {
    DUET_CAL_TARGET_NONE = 0, /* shown beside the targets, without one of its own */
    DUET_CAL_TARGET_LE,       /* met when value <= threshold */
    DUET_CAL_TARGET_GE        /* met when value >= threshold */
} duet_cal_target_cmp_t;

/**
 * One line of the target table. duet_cal_eval_figures lists them in the table's order; `duet
 * validate` prints them and duet_cal_validation_targets_to_json() writes them from this one list,
 * so the text and the JSON cannot disagree.
 */
typedef struct duet_cal_eval_figure {
    const char *key;             /* JSON member name, e.g. "gemm_ape_median" (unique within its group) */
    const char *label;           /* the text table's line */
    int32_t reference;           /* 1: the reference rules within their own options; 2: against the best of all
                                    modes (their sections of the table); 3: the model's decision rule; 0: the
                                    model's fastest prediction */
    int32_t indent;              /* 1: printed as a sub-line of the figure above */
    size_t offset;               /* offsetof(duet_cal_eval_t, the duet_cal_ci_t it shows) */
    int32_t cmp;                 /* duet_cal_target_cmp_t */
    double threshold;            /* a fraction (0.03 = 3 %); with relative_to_ceiling, an offset from the ceiling */
    int32_t relative_to_ceiling; /* 1: the threshold is the re-measurement ceiling's value + threshold */
} duet_cal_eval_figure_t;

extern const duet_cal_eval_figure_t duet_cal_eval_figures[];
extern const int duet_cal_eval_n_figures;

/** The value and interval figure `f` shows in `e`. */
const duet_cal_ci_t *duet_cal_eval_figure_ci(const duet_cal_eval_t *e, const duet_cal_eval_figure_t *f);
/** The threshold of f's target in `e` (a fraction), or NaN when f has no target. */
double duet_cal_eval_figure_threshold(const duet_cal_eval_t *e, const duet_cal_eval_figure_t *f);
/** 1: f's target is met by its point estimate; 0: not met; -1: no target, or the value is undefined. */
int duet_cal_eval_figure_met(const duet_cal_eval_t *e, const duet_cal_eval_figure_t *f);
/**
 * The last target: better than the reference rules on regret, the model's interval entirely below
 * theirs for the p95 and for the mean. 1 met, 0 not, -1 not available (no workload the reference
 * rules predict).
 */
int duet_cal_eval_better_than_reference(const duet_cal_eval_t *e);
/**
 * Ahead of the reference rules scored against the best of all modes: the model's regret mean
 * interval entirely below theirs (ref_all_regret_mean). 1 met, 0 not, -1 not available.
 */
int duet_cal_eval_better_than_reference_all(const duet_cal_eval_t *e);

/**
 * Evaluate rows[0..n) over n_workloads workloads: point estimates and bootstrap intervals
 * (`resamples` resamples of the workloads with replacement, splitmix64 seeded by `seed`).
 * @return DUET_ERR_INVALID_ARG without rows or with a workload id out of range.
 */
duet_status_t duet_cal_eval_compute(const duet_cal_eval_row_t *rows, size_t n, int32_t n_workloads, int32_t resamples,
                                    uint64_t seed, duet_cal_eval_t *e_p);

/**
 * The evaluation of a profile on a test set measured in two sweeps: `s1` and `s2` (n1 and n2
 * corpora) hold the same grid; rows pair by point (duet_corpus_row_same_point). The model is policy
 * fluid on `hw`; the reference rules are policy frozen with seed_link_gbs fitted on sweep 1's
 * fused rows (duet_cal_validate's). GEMM-alone rows count for the GEMM target when they run on at
 * least a quarter of the SMs.
 */
duet_status_t duet_cal_evaluate(const duet_corpus_t *s1, int n1, const duet_corpus_t *s2, int n2, const duet_hw_t *hw,
                                duet_cal_progress_fn progress, void *progress_arg, duet_cal_eval_t *e_p);

/**
 * A validation as JSON text (DUET_CAL_VALIDATION_SCHEMA, what `duet validate --json` prints),
 * malloc'd, ending in a newline: the profile's name, the corpora (`files`, n of them), row and
 * shape counts, "model" and "reference_rules" (metrics objects; the latter also carries
 * "seed_link_gbs" and "seed_link_gbs_stderr", or is null without fused op rows),
 * "noise_floor", and "targets": null (duet_cal_validation_targets_to_json() fills it).
 */
duet_status_t duet_cal_validation_to_json(const duet_cal_validation_t *v, const char *const *files, int n,
                                          const char *profile, char **text_p);

/**
 * duet_cal_validation_to_json() with the target table of a test set in two sweeps: "targets"
 * holds every figure of duet_cal_eval_figures from `e` (value, interval, target, met), the
 * bootstrap's settings, the noise band, the test set's provenance with the sweep-2 files
 * (`files2`, n2 of them) and the verdict of duet_cal_eval_better_than_reference()
 * (docs/calibration.md lists the members). `e` NULL: "targets" is null.
 */
duet_status_t duet_cal_validation_targets_to_json(const duet_cal_validation_t *v, const duet_cal_eval_t *e,
                                                  const char *const *files, int n, const char *const *files2, int n2,
                                                  const char *profile, char **text_p);

/* ========================================================================================== */
/* Choices made on data: nested cross-validation                                              */
/* ========================================================================================== */

/*
 * Which constants a calibration fits and where they start are choices made on data; a choice
 * scored on the same data that made it looks better than it is. duet_cal_select_run() makes the
 * choice inside an outer cross-validation, so the outer held-out score is that of the whole
 * procedure, choice included (docs/calibration.md, "Choosing the parameters: nested
 * cross-validation").
 */

#define DUET_CAL_MAX_CANDIDATES 32
/** The most fits one selection may run (duet_cal_select_fit_count()): beyond it, refused. */
#define DUET_CAL_SELECT_MAX_FITS 2000

/** A candidate model: the constants to fit, and start values that replace the base profile's. */
typedef struct duet_cal_candidate {
    char name[32];
    int32_t line; /* its line in the candidates file (1-based) */
    int32_t n_fit;
    int32_t fit[DUET_CAL_MAX_PARAMS]; /* duet_hw_field_t */
    int32_t n_set;
    int32_t set_field[DUET_CAL_MAX_PARAMS]; /* duet_hw_field_t */
    double set_value[DUET_CAL_MAX_PARAMS];  /* in the field's unit */
} duet_cal_candidate_t;

typedef struct duet_cal_candidates {
    int32_t n;
    duet_cal_candidate_t c[DUET_CAL_MAX_CANDIDATES];
} duet_cal_candidates_t;

/**
 * Parse a candidates file's text: one candidate a line, `NAME PARAM,PARAM,... [CONST=VALUE ...]`
 * (`#` starts a comment; blank lines are skipped). NAME: 1 to 31 of [A-Za-z0-9_.-], unique. The
 * list as duet_cal_params_set_fit() takes it. Each CONST=VALUE sets a profile constant of the
 * candidate's start over `base`, within the field's bounds (a count: a whole number); a fitted
 * constant must start positive (it is fitted as its logarithm). `origin` names the text in errors.
 * @return DUET_ERR_PARSE "<origin>:<line>: <why>" (or "<origin>: no candidate").
 */
duet_status_t duet_cal_candidates_parse(const char *text, const char *origin, const duet_hw_t *base,
                                        duet_cal_candidates_t *c_p);
/** Read and parse a candidates file (duet_cal_candidates_parse). @return DUET_ERR_IO, DUET_ERR_PARSE. */
duet_status_t duet_cal_candidates_load(const char *path, const duet_hw_t *base, duet_cal_candidates_t *c_p);
/**
 * The start profile of a candidate: `base` with its CONST=VALUE assignments, whose sources become
 * "start value of candidate '<name>' (calibrate select)".
 */
void duet_cal_candidate_hw(const duet_cal_candidate_t *c, const duet_hw_t *base, duet_hw_t *hw_p);

/**
 * The fits a selection runs: per outer fold, every candidate on every inner fold and the refit of
 * the pick (outer x (inner x candidates + 1)), then the choice on all the data (candidates x inner)
 * and the fit of its pick on every row (1). -1 when a count is below 1.
 */
int64_t duet_cal_select_fit_count(int32_t outer, int32_t inner, int32_t n_candidates);

/**
 * Whether a selection of this size may run: outer and inner in [2, DUET_CAL_MAX_FOLDS], 1 to
 * DUET_CAL_MAX_CANDIDATES candidates, at most DUET_CAL_SELECT_MAX_FITS fits. @return
 * DUET_ERR_INVALID_ARG saying which (the fit count with its terms).
 */
duet_status_t duet_cal_select_check(int32_t outer, int32_t inner, int32_t n_candidates);

/** One outer fold of a selection. */
typedef struct duet_cal_select_fold {
    int32_t shapes;                            /* outer test shapes */
    int32_t picked;                            /* the candidate the inner cross-validation picked */
    double inner_rms[DUET_CAL_MAX_CANDIDATES]; /* each candidate's inner CV rms log error */
    duet_cal_fold_t refit;                     /* the pick refitted on the outer training shapes */
} duet_cal_select_fold_t;

/** What a selection found. */
typedef struct duet_cal_selection {
    int32_t outer, inner, n_candidates;
    int64_t fits, fits_unconverged; /* fits run, and of them those that stopped without converging */
    duet_cal_select_fold_t fold[DUET_CAL_MAX_FOLDS];
    /* The procedure's held-out accuracy: every shape predicted by its outer fold's pick, refitted
     * on the other outer folds. */
    duet_cal_metrics_t nested;
    double nested_rms_log;
    /* The choice on all the data: each candidate's CV rms log error over every shape (not nested:
     * the data that chose also scores), the pick, and the pick fitted on every row. */
    double all_rms[DUET_CAL_MAX_CANDIDATES];
    int32_t picked;
    duet_cal_fit_t fit;
    int64_t rows_total, rows_failed;
    int32_t shapes;
    double wall_s;
} duet_cal_selection_t;

/**
 * Nested cross-validation of the choice among candidates (n of them) on the corpora (n_corpora;
 * `names` may be NULL). Outer folds by shape as duet_cal_report_run's (`outer` of them); in each,
 * an inner `inner`-fold CV on the outer training shapes (the same rule on those shapes) scores each
 * candidate by the rms log error of its inner held-out rows and picks the lowest (ties: the first
 * listed); the pick is refitted on all outer training shapes and predicts the outer test shapes.
 * Then the same inner CV over every shape picks the candidate for the data, fitted on every row.
 * From `p`: policy, row kinds and modes, iterations, tolerances, threads, progress (each fit is a
 * stage; n_stages is duet_cal_select_fit_count()); its parameter list and folds are not used.
 * The result does not depend on the number of threads.
 * @return DUET_ERR_INVALID_ARG for counts out of range (duet_cal_select_check()), too few shapes,
 * unusable corpora; a fit's error, named by candidate and fold.
 */
duet_status_t duet_cal_select_run(const duet_corpus_t *corpora, const char *const *names, int n_corpora,
                                  const duet_hw_t *base, const duet_cal_candidates_t *cands, const duet_cal_params_t *p,
                                  int32_t outer, int32_t inner, duet_cal_selection_t *sel_p);

#define DUET_CAL_SELECTION_SCHEMA "duet-selection/1"

/**
 * A selection as JSON text (DUET_CAL_SELECTION_SCHEMA, what `duet calibrate select --json`
 * prints; docs/calibration.md lists the members), malloc'd, ending in a newline.
 */
duet_status_t duet_cal_selection_to_json(const duet_cal_selection_t *sel, const duet_cal_candidates_t *cands,
                                         const char *const *files, int n, const char *base_name, char **text_p);

#ifdef __cplusplus
}
#endif
#endif /* DUET_CALIBRATE_H */
