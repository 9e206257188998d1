/*
 * The noise floor of a corpus: how well a perfect model could score against these measurements.
 *
 * A row holds the median, fastest and slowest of n timed runs. When the measured best of a shape
 * and its runner-up lie within each other's run-to-run spread, no model can be sure to pick the
 * one that happened to measure fastest. Two numbers say how often that is the case:
 *
 * 1. Directly from the rows (no assumption): the share of shapes whose runner-up's median lies
 *    within the best's own spread (runner-up ms <= best max_ms), and the gap between the two.
 * 2. A second measurement, simulated: each row's median is redrawn as ms * exp(sigma * z), z
 *    standard normal, with sigma the relative standard error of a median of n runs estimated
 *    from the row's range: sigma_run = (max - min) / (d2(n) * ms) (d2(n) is the expected range of n
 *    standard normal samples), sigma = 1.2533 * sigma_run / sqrt(n) (the median's efficiency
 *    against the mean). Two independent redraws A and B stand for two measurements of the same
 *    corpus; a perfect model that ranks by A is scored against B with the same metrics as a model
 *    (duet__cal_metrics). Averaged over `DUET_CAL_NOISE_PAIRS` pairs, this is the score a second
 *    measurement would give the first one.
 *
 * Both read only the spread inside one point's timed runs. Drift between points (clocks and
 * temperature that change over the minutes of a sweep) is not in it, so the real floor is lower
 * than this: the simulated pick rate is an upper bound for any model on this corpus. (A corpus
 * collected in interleaved rounds spreads each point's runs over its shape's measurement, so slow
 * drift is in the spread there, and the bound is closer.)
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

/* Expected range of n standard normal samples, n = 2..25 (ASTM E2587 table of d2). */
static const double duet__d2[] = {0,     0,     1.128, 1.693, 2.059, 2.326, 2.534, 2.704, 2.847,
                                  2.970, 3.078, 3.173, 3.258, 3.336, 3.407, 3.472, 3.532, 3.588,
                                  3.640, 3.689, 3.735, 3.778, 3.819, 3.858, 3.895, 3.931};
#define DUET__D2_MAX 25

/* Relative standard error of a row's median (0 when the row has no spread to read it from). */
static double duet__median_rel_se(const duet_corpus_row_t *r)
{
    if (r->repeats < 2 || !(r->ms > 0) || !(r->max_ms >= r->min_ms))
        return 0.0;
    /* Beyond the table the range grows slowly; its last entry overstates sigma a little there. */
    double d2 = duet__d2[r->repeats <= DUET__D2_MAX ? r->repeats : DUET__D2_MAX];
    double sigma_run = (r->max_ms - r->min_ms) / (d2 * r->ms); /* relative, one timed run */
    return 1.2533 * sigma_run / sqrt((double)r->repeats);
}

/* splitmix64: a small, fixed, portable generator, so the floor is the same on every machine. */
static uint64_t duet__mix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A standard normal deviate (Box-Muller on two uniforms in (0, 1]). */
static double duet__normal(uint64_t *state)
{
    double u1 = ((double)(duet__mix(state) >> 11) + 1.0) / 9007199254740992.0; /* (0, 1] */
    double u2 = (double)(duet__mix(state) >> 11) / 9007199254740992.0;         /* [0, 1) */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* Per shape: best and runner-up by median; counts the shapes whose runner-up is in the best's spread. */
static void duet__spread_stats(const duet__cal_set_t *s, duet_cal_noise_t *nz, double *gap)
{
    int32_t ns = s->n_shapes;
    int32_t in_spread = 0, within1 = 0, shapes = 0;
    for (int32_t k = 0; k < ns; k++) {
        const duet_corpus_row_t *best = NULL, *second = NULL;
        for (size_t i = 0; i < s->n; i++) {
            const duet_corpus_row_t *r = s->row[i];
            if (s->shape[i] != k || r->kind != DUET_ROW_OP || !r->ok)
                continue;
            if (best == NULL || r->ms < best->ms) {
                second = best;
                best = r;
            } else if (second == NULL || r->ms < second->ms) {
                second = r;
            }
        }
        if (second == NULL)
            continue;
        gap[shapes++] = second->ms / best->ms - 1.0;
        in_spread += second->ms <= best->max_ms;
        within1 += second->ms <= best->ms * 1.01;
    }
    nz->shapes = shapes;
    nz->runner_up_in_spread = shapes ? (double)in_spread / shapes : NAN;
    nz->runner_up_within_1pct = shapes ? (double)within1 / shapes : NAN;
    nz->gap_median = duet__quantile(gap, (size_t)shapes, 0.5);
}

duet_status_t duet__cal_noise(const duet__cal_set_t *s, duet_cal_noise_t *nz_p)
{
    duet_status_t st = DUET_OK;
    duet_cal_noise_t nz;
    memset(&nz, 0, sizeof(nz));
    size_t n = s->n ? s->n : 1;
    duet_corpus_row_t *copy = malloc(n * sizeof(*copy));
    const duet_corpus_row_t **ptr = malloc(n * sizeof(*ptr));
    double *pred = malloc(n * sizeof(*pred));
    double *se = malloc(n * sizeof(*se));
    double *spread = malloc(n * sizeof(*spread));
    double *gap = malloc((size_t)(s->n_shapes ? s->n_shapes : 1) * sizeof(*gap));
    if (copy == NULL || ptr == NULL || pred == NULL || se == NULL || spread == NULL || gap == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "noise floor: cannot allocate for %zu rows", s->n);
        goto cleanup;
    }
    duet__spread_stats(s, &nz, gap);
    size_t n_spread = 0;
    for (size_t i = 0; i < s->n; i++) {
        copy[i] = *s->row[i];
        ptr[i] = &copy[i];
        se[i] = duet__median_rel_se(s->row[i]);
        if (s->row[i]->ok && s->row[i]->kind == DUET_ROW_OP)
            spread[n_spread++] = (s->row[i]->max_ms - s->row[i]->min_ms) / s->row[i]->ms;
    }
    nz.row_spread_median = duet__quantile(spread, n_spread, 0.5);

    /* The same shapes and row order, with copied rows whose medians the replicas overwrite. */
    duet__cal_set_t view = *s;
    view.row = ptr;
    uint64_t state = 0x64756574u; /* "duet": fixed, so every run prints the same floor */
    duet_cal_metrics_t sum;
    memset(&sum, 0, sizeof(sum));
    for (int32_t pair = 0; pair < DUET_CAL_NOISE_PAIRS; pair++) {
        for (size_t i = 0; i < s->n; i++) {
            const duet_corpus_row_t *r = s->row[i];
            if (!r->ok) {
                pred[i] = NAN;
                continue;
            }
            pred[i] = r->ms * exp(se[i] * duet__normal(&state));    /* measurement A: the "model" */
            copy[i].ms = r->ms * exp(se[i] * duet__normal(&state)); /* measurement B: the truth */
        }
        duet_cal_metrics_t m;
        DUET_CHECK_GOTO(duet__cal_metrics(&view, pred, NULL, &m), st, cleanup);
        sum.op_rows = m.op_rows;
        sum.shapes = m.shapes;
        sum.alone_rows = m.alone_rows;
        sum.ape_median += m.ape_median;
        sum.ape_p95 += m.ape_p95;
        sum.ape_mean += m.ape_mean;
        sum.alone_ape_median += m.alone_ape_median;
        sum.alone_ape_p95 += m.alone_ape_p95;
        sum.exact_pick += m.exact_pick;
        sum.pick_within8 += m.pick_within8;
        sum.pick_within8_loose += m.pick_within8_loose;
        sum.regret_median += m.regret_median;
        sum.regret_mean += m.regret_mean;
        sum.regret_p95 += m.regret_p95;
        for (int t = 0; t < DUET_CAL_TOPK_N; t++)
            sum.topk_cover[t] += m.topk_cover[t];
    }
    double w = 1.0 / DUET_CAL_NOISE_PAIRS;
    nz.remeasure = sum;
    nz.remeasure.ape_median *= w;
    nz.remeasure.ape_p95 *= w;
    nz.remeasure.ape_mean *= w;
    nz.remeasure.alone_ape_median *= w;
    nz.remeasure.alone_ape_p95 *= w;
    nz.remeasure.exact_pick *= w;
    nz.remeasure.pick_within8 *= w;
    nz.remeasure.pick_within8_loose *= w;
    nz.remeasure.regret_median *= w;
    nz.remeasure.regret_mean *= w;
    nz.remeasure.regret_p95 *= w;
    for (int t = 0; t < DUET_CAL_TOPK_N; t++)
        nz.remeasure.topk_cover[t] *= w;
    nz.pairs = DUET_CAL_NOISE_PAIRS;
    *nz_p = nz;
cleanup:
    free(gap);
    free(spread);
    free(se);
    free(pred);
    free(ptr);
    free(copy);
    return st;
}

duet_status_t duet_cal_noise_compute(const duet_corpus_row_t *rows, size_t n, duet_cal_noise_t *nz_p)
{
    DUET_CHECK(duet_cal_init());
    if (rows == NULL || n == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "noise floor: no rows");
    duet__cal_set_t s;
    DUET_CHECK(duet__cal_set_from_array(rows, n, &s));
    duet_status_t st = duet__cal_noise(&s, nz_p);
    duet__cal_set_free(&s);
    return st;
}
