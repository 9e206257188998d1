/*
 * Accuracy metrics: makespan error, and how well the predicted ranking picks configurations.
 * These are the reference design's metrics (its predictor.py and its evaluation), so that its
 * numbers and duet's compare: exact-pick rate, picks within 8 CTAs, regret of the predicted best,
 * top-k coverage within 3 %, and the median absolute percentage error of the makespan.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

const int duet_cal_topk[DUET_CAL_TOPK_N] = {1, 4, 8};

static int duet__pred_ok(double p)
{
    return isfinite(p) && p > 0;
}

/* The same GEMM tile cut into the same K parts: a K split is another GEMM schedule. */
static int duet__same_tile(const duet_config_t *a, const duet_config_t *b)
{
    int ska = a->split_k > 1 ? a->split_k : 1, skb = b->split_k > 1 ? b->split_k : 1;
    return a->tile.bm == b->tile.bm && a->tile.bn == b->tile.bn && a->tile.bk == b->tile.bk && ska == skb;
}

duet_status_t duet__cal_metrics(const duet__cal_set_t *s, const double *pred, const uint8_t *mask,
                                duet_cal_metrics_t *m_p)
{
    duet_status_t st = DUET_OK;
    duet_cal_metrics_t m;
    memset(&m, 0, sizeof(m));
    size_t n = s->n ? s->n : 1;
    double *ape = malloc(n * sizeof(*ape));
    double *alone = malloc(n * sizeof(*alone));
    size_t *by_shape = malloc(n * sizeof(*by_shape)); /* row indices grouped by shape */
    size_t *start = calloc((size_t)s->n_shapes + 1, sizeof(*start));
    size_t *pos = malloc(((size_t)s->n_shapes + 1) * sizeof(*pos)); /* fill cursor per shape */
    duet_rank_item_t *cand = malloc(n * sizeof(*cand));             /* one shape's predicted rows */
    duet_rank_item_t *meas = malloc(n * sizeof(*meas));             /* one shape's measured rows */
    int32_t ns = s->n_shapes ? s->n_shapes : 1;
    double *regret = malloc((size_t)ns * sizeof(*regret));
    if (ape == NULL || alone == NULL || by_shape == NULL || start == NULL || pos == NULL || cand == NULL ||
        meas == NULL || regret == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "metrics: cannot allocate for %zu rows", s->n);
        goto cleanup;
    }

    /* Makespan error. */
    size_t n_ape = 0, n_alone = 0;
    for (size_t i = 0; i < s->n; i++) {
        const duet_corpus_row_t *r = s->row[i];
        if ((mask != NULL && !mask[i]) || !r->ok || !duet__pred_ok(pred[i]))
            continue;
        double e = fabs(pred[i] / r->ms - 1.0);
        if (r->kind == DUET_ROW_OP)
            ape[n_ape++] = e;
        else
            alone[n_alone++] = e;
    }
    if (n_ape + n_alone == 0) {
        st = duet__error(DUET_ERR_INVALID_ARG, "metrics: no measured row was predicted");
        goto cleanup;
    }
    m.op_rows = (int64_t)n_ape;
    m.ape_mean = duet__mean(ape, n_ape); /* before the quantiles sort ape */
    m.ape_median = duet__quantile(ape, n_ape, 0.5);
    m.ape_p95 = duet__quantile(ape, n_ape, 0.95);
    m.alone_rows = (int64_t)n_alone;
    m.alone_ape_median = duet__quantile(alone, n_alone, 0.5);
    m.alone_ape_p95 = duet__quantile(alone, n_alone, 0.95);

    /* Group the op rows by shape (counting sort keeps row order inside a shape). */
    for (size_t i = 0; i < s->n; i++)
        if (s->row[i]->kind == DUET_ROW_OP && s->row[i]->ok && (mask == NULL || mask[i]))
            start[s->shape[i] + 1]++;
    for (int32_t k = 0; k < s->n_shapes; k++)
        start[k + 1] += start[k];
    memcpy(pos, start, ((size_t)s->n_shapes + 1) * sizeof(*pos));
    for (size_t i = 0; i < s->n; i++)
        if (s->row[i]->kind == DUET_ROW_OP && s->row[i]->ok && (mask == NULL || mask[i]))
            by_shape[pos[s->shape[i]]++] = i;

    /* Picks, per shape. */
    int32_t shapes = 0, exact = 0, within = 0, loose = 0;
    int32_t cover[DUET_CAL_TOPK_N] = {0};
    for (int32_t k = 0; k < s->n_shapes; k++) {
        size_t nc = 0, nm = 0;
        for (size_t j = start[k]; j < start[k + 1]; j++) {
            size_t i = by_shape[j];
            /* The measured best is over every measured op row, predicted or not. */
            meas[nm].pred = s->row[i]->ms;
            meas[nm].cfg = s->row[i]->cfg;
            meas[nm].idx = i;
            nm++;
            if (duet__pred_ok(pred[i])) {
                cand[nc].pred = pred[i];
                cand[nc].cfg = s->row[i]->cfg;
                cand[nc].idx = i;
                nc++;
            }
        }
        if (nc < 2)
            continue;
        /* Equal measured times (the timer's resolution) are broken by the same rule as equal
         * predictions, so that a model that predicts the measurements exactly picks the best. */
        duet_rank_sort(meas, nm);
        size_t best = meas[0].idx;
        /* Ranked as the tuner ranks (ties by duet_rank_sort's rule, not by row order). */
        duet_rank_sort(cand, nc);
        const duet_corpus_row_t *b = s->row[best], *pk = s->row[cand[0].idx];
        shapes++;
        exact += duet_corpus_row_same_point(pk, b);
        int near_g = abs(pk->cfg.gemm_wgs - b->cfg.gemm_wgs) <= DUET_CAL_WITHIN_CTAS;
        int near_c = abs(pk->cfg.comm_wgs - b->cfg.comm_wgs) <= DUET_CAL_WITHIN_CTAS;
        int same_mode = pk->cfg.mode == b->cfg.mode;
        within += same_mode && duet__same_tile(&pk->cfg, &b->cfg) && near_g && near_c;
        loose += same_mode && near_g;
        double rg = pk->ms / b->ms - 1.0;
        regret[shapes - 1] = rg;
        for (int t = 0; t < DUET_CAL_TOPK_N; t++) {
            double top = INFINITY;
            for (size_t j = 0; j < nc && j < (size_t)duet_cal_topk[t]; j++)
                top = fmin(top, s->row[cand[j].idx]->ms);
            cover[t] += top <= b->ms * (1.0 + DUET_CAL_COVER_TOL);
        }
    }
    m.shapes = shapes;
    if (shapes > 0) {
        m.exact_pick = (double)exact / shapes;
        m.pick_within8 = (double)within / shapes;
        m.pick_within8_loose = (double)loose / shapes;
        m.regret_mean = duet__mean(regret, (size_t)shapes); /* before the quantiles sort regret */
        m.regret_median = duet__quantile(regret, (size_t)shapes, 0.5);
        m.regret_p95 = duet__quantile(regret, (size_t)shapes, 0.95);
        for (int t = 0; t < DUET_CAL_TOPK_N; t++)
            m.topk_cover[t] = (double)cover[t] / shapes;
    } else {
        m.exact_pick = m.pick_within8 = m.pick_within8_loose = NAN;
        m.regret_mean = m.regret_median = m.regret_p95 = NAN;
        for (int t = 0; t < DUET_CAL_TOPK_N; t++)
            m.topk_cover[t] = NAN;
    }
    *m_p = m;
cleanup:
    free(regret);
    free(meas);
    free(cand);
    free(pos);
    free(start);
    free(by_shape);
    free(alone);
    free(ape);
    return st;
}

duet_status_t duet_cal_metrics_compute(const duet_corpus_row_t *rows, const double *pred_ms, size_t n,
                                       duet_cal_metrics_t *m_p)
{
    DUET_CHECK(duet_cal_init());
    if (rows == NULL || pred_ms == NULL || n == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "metrics: no rows");
    duet__cal_set_t s;
    DUET_CHECK(duet__cal_set_from_array(rows, n, &s));
    duet_status_t st = duet__cal_metrics(&s, pred_ms, NULL, m_p);
    duet__cal_set_free(&s);
    return st;
}

duet_status_t duet__cal_mode_errors(const duet__cal_set_t *s, const double *pred, double *err, int64_t *n_rows)
{
    size_t n = s->n ? s->n : 1;
    int32_t ns = s->n_shapes ? s->n_shapes : 1;
    double *lr = malloc(n * sizeof(*lr));   /* each usable row's log error, NaN elsewhere */
    double *buf = malloc(n * sizeof(*buf)); /* one shape's log errors, then one mode's distances */
    double *mid = malloc((size_t)ns * sizeof(*mid));
    duet_status_t st = DUET_OK;
    if (lr == NULL || buf == NULL || mid == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "mode errors: cannot allocate for %zu rows", s->n);
        goto cleanup;
    }
    for (size_t i = 0; i < s->n; i++) {
        const duet_corpus_row_t *r = s->row[i];
        int use = r->kind == DUET_ROW_OP && r->ok && r->ms > 0 && duet__pred_ok(pred[i]);
        lr[i] = use ? log(pred[i] / r->ms) : NAN;
    }
    /* The workload-wide part: the median log error of each shape's rows (robust to a few far-off ones). */
    for (int32_t k = 0; k < s->n_shapes; k++) {
        size_t nb = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->shape[i] == k && isfinite(lr[i]))
                buf[nb++] = lr[i];
        mid[k] = duet__median(buf, nb);
    }
    for (int32_t m = 0; m < DUET_MODE_COUNT; m++) {
        size_t nb = 0;
        for (size_t i = 0; i < s->n; i++)
            if (isfinite(lr[i]) && s->row[i]->cfg.mode == m)
                buf[nb++] = fabs(lr[i] - mid[s->shape[i]]);
        n_rows[m] = (int64_t)nb;
        err[m] = nb > 0 ? exp(duet__quantile(buf, nb, DUET_CAL_MODE_ERR_Q)) - 1.0 : NAN;
    }
cleanup:
    free(mid);
    free(buf);
    free(lr);
    return st;
}

duet_status_t duet_cal_mode_errors_compute(const duet_corpus_row_t *rows, const double *pred_ms, size_t n,
                                           double err[DUET_MODE_COUNT], int64_t n_rows[DUET_MODE_COUNT])
{
    DUET_CHECK(duet_cal_init());
    if (rows == NULL || pred_ms == NULL || n == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "mode errors: no rows");
    duet__cal_set_t s;
    DUET_CHECK(duet__cal_set_from_array(rows, n, &s));
    double e[DUET_MODE_COUNT];
    int64_t c[DUET_MODE_COUNT];
    duet_status_t st = duet__cal_mode_errors(&s, pred_ms, e, c);
    duet__cal_set_free(&s);
    if (st >= 0) {
        memcpy(err, e, sizeof(e));
        memcpy(n_rows, c, sizeof(c));
    }
    return st;
}
