/*
 * Reports: the fit on every row, k-fold cross-validation grouped by shape, and the same for the
 * reference design's rules. Also `validate`: a profile's accuracy on corpora beside the reference
 * rules'. Their JSON is calibrate/json.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

/* The reference design's rules as a fit: policy frozen on unsplit fused op rows, with its one effective
 * link bandwidth (predictor.py's XGMI_BW_GBPS) as the only constant, as its author
 * tuned it by regret sweeps over the corpus. */
static duet_cal_params_t duet__seed_params(const duet_cal_params_t *p)
{
    duet_cal_params_t q = duet_cal_default_params();
    q.policy = &duet_sim_policy_frozen;
    q.n_fit = 1;
    q.fit[0] = DUET_HW_F_seed_link_gbs;
    q.kinds = 1u << DUET_ROW_OP;
    q.modes = 1u << DUET_MODE_FUSED;
    q.folds = p->folds;
    q.max_iter = p->max_iter;
    q.xtol = p->xtol;
    q.gtol = p->gtol;
    q.fd_step = p->fd_step;
    q.central = p->central;
    q.presearch = p->presearch;
    q.threads = p->threads;
    q.progress = p->progress;
    q.progress_arg = p->progress_arg;
    return q;
}

/* Whether the set has a row the reference rules predict and fit: a measured fused op row, unsplit. */
/* 1 if the reference rules can be fitted: fused op rows they predict that move remote bytes (at
 * W = 1 the collective's traffic is local, and seed_link_gbs, their one constant, moves nothing). */
static int duet__have_seed_rows(const duet__cal_set_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->row[i]->kind == DUET_ROW_OP && duet__cal_row_usable(s, i, &duet_sim_policy_frozen) &&
            s->plan[i].remote_bytes_tiles > 0)
            return 1;
    return 0;
}

/*
 * A report is 2 (k + 1) independent fits (calibrate/fits.c runs them in parallel): duet's model
 * and the reference rules, each on every row and on the k training sets of the cross-validation.
 * The tasks of one model: the fit on every row, then one per fold, which trains on the other folds
 * and writes the held-out predictions of its own fold's rows.
 */
static duet_status_t duet__model_tasks(duet__fits_t *fits, const duet__cal_set_t *s, const duet_hw_t *base,
                                       const duet_cal_params_t *p, const char *label, int32_t k, double t0,
                                       double *held)
{
    for (int32_t f = -1; f < k; f++) {
        duet__task_t *t = f < 0 ? duet__fits_add(fits, s, base, p, t0, "%s: fit on every row", label)
                                : duet__fits_add(fits, s, base, p, t0, "%s: fold %d/%d", label, (int)f + 1, (int)k);
        if (t == NULL)
            return duet__error(DUET_ERR_INTERNAL, "report: more fits than counted");
        if (f < 0)
            continue;
        uint8_t *train = t->own = malloc(2 * (s->n ? s->n : 1)), *test = train + (s->n ? s->n : 1);
        if (train == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "report: cannot allocate for %zu rows", s->n);
        for (size_t i = 0; i < s->n; i++) {
            train[i] = s->fold[s->shape[i]] != f; /* train on the other folds */
            test[i] = s->fold[s->shape[i]] == f;
        }
        t->train = train;
        t->test = test;
        t->held = held;
    }
    return DUET_OK;
}

/* Metrics of one model from its finished tasks (first = the fit on every row). */
static duet_status_t duet__model_assemble(const duet__cal_set_t *s, duet_sim_ws_t *ws, const duet_hw_t *base,
                                          const duet_cal_params_t *p, const duet__task_t *tasks, int32_t k,
                                          const double *held, double *pred, duet_cal_model_report_t *mr)
{
    const duet_sim_policy_ops_t *policy = p->policy ? p->policy : &duet_sim_policy_fluid;
    memset(mr, 0, sizeof(*mr));
    DUET_CHECK(duet__cal_predict_all(ws, policy, base, s, pred));
    DUET_CHECK(duet__cal_metrics(s, pred, NULL, &mr->start));
    mr->fit = tasks[0].fit;
    DUET_CHECK(duet__cal_predict_all(ws, policy, &mr->fit.hw, s, pred));
    DUET_CHECK(duet__cal_metrics(s, pred, NULL, &mr->in_sample));
    mr->folds = k;
    for (int32_t f = 0; f < k; f++)
        mr->fold[f] = tasks[1 + f].out;
    for (int m = 0; m < DUET_MODE_COUNT; m++)
        mr->mode_err[m] = NAN;
    if (k > 0) {
        DUET_CHECK(duet__cal_metrics(s, held, NULL, &mr->held_out));
        DUET_CHECK(duet__cal_mode_errors(s, held, mr->mode_err, mr->mode_err_rows));
    }
    return DUET_OK;
}

duet_status_t duet_cal_fit_run(const duet_corpus_t *corpora, const char *const *names, int n, const duet_hw_t *base,
                               const duet_cal_params_t *p, duet_cal_fit_t *fit_p)
{
    DUET_CHECK(duet_cal_init());
    duet__cal_set_t s;
    DUET_CHECK(duet__cal_set_from_corpora(corpora, names, n, &s));
    duet_status_t st = duet__cal_set_check(&s, base, p->policy ? p->policy : &duet_sim_policy_fluid);
    if (st >= 0) {
        duet__cal_stage_t stage = {"fit", 0, 1, duet__cal_now()};
        st = duet__cal_fit_set(&s, NULL, base, p, &stage, fit_p);
    }
    duet__cal_set_free(&s);
    return st;
}

/* Refuse corpora with nothing measured, naming the file and, for all-failed ones, why. */
duet_status_t duet__cal_set_check_measured(const duet__cal_set_t *s)
{
    char name[256];
    for (int f = 0; s->corpora != NULL && f < s->n_corpora; f++) {
        const duet_corpus_t *c = &s->corpora[f];
        size_t ok = 0;
        for (size_t j = 0; j < c->n; j++)
            ok += c->rows[j].ok != 0;
        if (c->n == 0)
            return duet__error(DUET_ERR_INVALID_ARG, "%s: the corpus has no rows (nothing was measured)",
                               duet__cal_set_name(s, f, name, sizeof(name)));
        if (ok == 0)
            return duet__error(DUET_ERR_INVALID_ARG,
                               "%s: all %zu rows are failed measurements (the first says: %s); nothing to fit",
                               duet__cal_set_name(s, f, name, sizeof(name)), c->n, c->rows[0].error);
    }
    return DUET_OK;
}

duet_status_t duet_cal_report_run(const duet_corpus_t *corpora, const char *const *names, int n, const duet_hw_t *base,
                                  const duet_cal_params_t *p, duet_cal_report_t *rep_p)
{
    DUET_CHECK(duet_cal_init());
    const double t0 = duet__cal_now();
    duet__cal_set_t s;
    duet_sim_ws_t *ws = NULL;
    duet__fits_t fits;
    memset(&fits, 0, sizeof(fits));
    DUET_CHECK(duet__cal_set_from_corpora(corpora, names, n, &s));
    duet_status_t st = DUET_OK;
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    double *pred = malloc((s.n ? s.n : 1) * sizeof(*pred));
    double *held = malloc((s.n ? s.n : 1) * sizeof(*held));
    double *held_seed = malloc((s.n ? s.n : 1) * sizeof(*held_seed));
    if (rep == NULL || pred == NULL || held == NULL || held_seed == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "report: cannot allocate for %zu rows", s.n);
        goto cleanup;
    }
    DUET_CHECK_GOTO(duet__cal_set_check_measured(&s), st, cleanup);
    if (p->folds > DUET_CAL_MAX_FOLDS || p->folds < 0) {
        st = duet__error(DUET_ERR_INVALID_ARG, "cross-validation: between 0 and %d folds (got %d)", DUET_CAL_MAX_FOLDS,
                         (int)p->folds);
        goto cleanup;
    }
    DUET_CHECK_GOTO(duet__cal_set_folds(&s, p->folds), st, cleanup);
    duet_cal_params_t sp = duet__seed_params(p);
    DUET_CHECK_GOTO(duet__cal_set_check(&s, base, p->policy ? p->policy : &duet_sim_policy_fluid), st, cleanup);
    DUET_CHECK_GOTO(duet_sim_ws_create(&ws), st, cleanup);
    for (size_t i = 0; i < s.n; i++)
        held[i] = held_seed[i] = NAN;

    /* The reference rules need fused op rows; a corpus of concurrent rows only has none. */
    int have_fused = duet__have_seed_rows(&s);
    int32_t k = p->folds >= 2 ? p->folds : 0;
    DUET_CHECK_GOTO(duet__fits_init(&fits, (have_fused ? 2 : 1) * (k + 1), p->progress, p->progress_arg), st, cleanup);
    DUET_CHECK_GOTO(duet__model_tasks(&fits, &s, base, p, "duet", k, t0, held), st, cleanup);
    if (have_fused)
        DUET_CHECK_GOTO(duet__model_tasks(&fits, &s, base, &sp, "reference rules", k, t0, held_seed), st, cleanup);
    DUET_CHECK_GOTO(duet__fits_run(&fits, p->threads), st, cleanup);

    DUET_CHECK_GOTO(duet__model_assemble(&s, ws, base, p, &fits.tasks[0], k, held, pred, &rep->model), st, cleanup);
    /* pred holds the fit on every row now: hand each measured row's predictions to the caller. */
    for (size_t i = 0; p->rows != NULL && i < s.n; i++) {
        if (!s.row[i]->ok)
            continue;
        duet_cal_row_pred_t r = {s.row[i], s.file[i], s.line[i], s.shape[i], -1, pred[i], NAN};
        if (k > 0) {
            r.fold = s.fold[s.shape[i]];
            r.held_out_ms = held[i];
        }
        p->rows(p->rows_arg, &r);
    }
    if (have_fused)
        DUET_CHECK_GOTO(duet__model_assemble(&s, ws, base, &sp, &fits.tasks[k + 1], k, held_seed, pred, &rep->seed), st,
                        cleanup);
    else
        rep->seed.fit.n_params = 0; /* marks "not available" */
    DUET_CHECK_GOTO(duet__cal_noise(&s, &rep->noise), st, cleanup);
    rep->rows_total = (int64_t)s.n;
    rep->rows_failed = s.rows_failed;
    rep->shapes = s.n_shapes;
    rep->wall_s = duet__cal_now() - t0;
    *rep_p = *rep;
cleanup:
    duet__fits_free(&fits);
    duet_sim_ws_destroy(ws);
    free(held_seed);
    free(held);
    free(pred);
    free(rep);
    duet__cal_set_free(&s);
    return st;
}

duet_status_t duet__cal_ref_predict(duet_sim_ws_t *ws, const duet__cal_set_t *s, const duet_hw_t *hw,
                                    duet_cal_progress_fn progress, void *progress_arg, double *pred,
                                    duet_cal_fit_t *fit_p, int *have_p)
{
    duet_cal_params_t base = duet_cal_default_params();
    base.progress = progress;
    base.progress_arg = progress_arg;
    duet_cal_params_t sp = duet__seed_params(&base);
    *have_p = duet__have_seed_rows(s);
    if (!*have_p) {
        /* Nothing to fit (no remote traffic): the rules as the profile gives them, its calibrated
         * GEMM constants included. */
        memset(fit_p, 0, sizeof(*fit_p));
        fit_p->hw = *hw;
        snprintf(fit_p->stop_reason, sizeof(fit_p->stop_reason), "not fitted: no fused row moves remote bytes");
        return duet__cal_predict_all(ws, &duet_sim_policy_frozen, hw, s, pred);
    }
    duet__cal_stage_t stage = {"reference rules: fit seed_link_gbs", 0, 1, duet__cal_now()};
    DUET_CHECK(duet__cal_fit_set(s, NULL, hw, &sp, &stage, fit_p));
    return duet__cal_predict_all(ws, &duet_sim_policy_frozen, &fit_p->hw, s, pred);
}

duet_status_t duet_cal_validate(const duet_corpus_t *corpora, const char *const *names, int n, const duet_hw_t *hw,
                                duet_cal_progress_fn progress, void *progress_arg, duet_cal_validation_t *v_p)
{
    return duet_cal_validate_rows(corpora, names, n, hw, progress, progress_arg, NULL, NULL, v_p);
}

duet_status_t duet_cal_validate_rows(const duet_corpus_t *corpora, const char *const *names, int n, const duet_hw_t *hw,
                                     duet_cal_progress_fn progress, void *progress_arg, duet_cal_row_fn rows,
                                     void *rows_arg, duet_cal_validation_t *v_p)
{
    DUET_CHECK(duet_cal_init());
    duet__cal_set_t s;
    duet_sim_ws_t *ws = NULL;
    DUET_CHECK(duet__cal_set_from_corpora(corpora, names, n, &s));
    duet_status_t st = DUET_OK;
    duet_cal_validation_t v;
    memset(&v, 0, sizeof(v));
    double *pred = malloc((s.n ? s.n : 1) * sizeof(*pred));
    if (pred == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "validate: cannot allocate for %zu rows", s.n);
        goto cleanup;
    }
    DUET_CHECK_GOTO(duet__cal_set_check_measured(&s), st, cleanup);
    DUET_CHECK_GOTO(duet__cal_set_check(&s, hw, &duet_sim_policy_fluid), st, cleanup);
    DUET_CHECK_GOTO(duet_sim_ws_create(&ws), st, cleanup);
    DUET_CHECK_GOTO(duet__cal_predict_all(ws, &duet_sim_policy_fluid, hw, &s, pred), st, cleanup);
    DUET_CHECK_GOTO(duet__cal_metrics(&s, pred, NULL, &v.model), st, cleanup);
    for (size_t i = 0; rows != NULL && i < s.n; i++) {
        if (!s.row[i]->ok)
            continue;
        duet_cal_row_pred_t r = {s.row[i], s.file[i], s.line[i], s.shape[i], -1, pred[i], NAN};
        rows(rows_arg, &r);
    }

    int have_fused;
    DUET_CHECK_GOTO(duet__cal_ref_predict(ws, &s, hw, progress, progress_arg, pred, &v.seed_fit, &have_fused), st,
                    cleanup);
    if (have_fused)
        DUET_CHECK_GOTO(duet__cal_metrics(&s, pred, NULL, &v.seed), st, cleanup);
    DUET_CHECK_GOTO(duet__cal_noise(&s, &v.noise), st, cleanup);
    v.rows_total = (int64_t)s.n;
    v.rows_failed = s.rows_failed;
    v.shapes = s.n_shapes;
    *v_p = v;
cleanup:
    duet_sim_ws_destroy(ws);
    free(pred);
    duet__cal_set_free(&s);
    return st;
}
