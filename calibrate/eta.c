/*
 * The time left of a calibration run. Fits of one run differ in cost by orders of magnitude (the
 * reference rules' one constant against duet's dozen) and finish in any order, so counting
 * finished fits alike says little: the cheap ones finish first and the estimate equals the time
 * elapsed. Each running fit's own rate (seconds per iteration) and the iterations it still may
 * take say how long it needs; the fits not yet started wait for a thread.
 */
#include "calibrate/eta.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

void duet__cal_eta_init(duet__cal_eta_t *e)
{
    memset(e, 0, sizeof(*e));
}

void duet__cal_eta_free(duet__cal_eta_t *e)
{
    free(e->st);
    memset(e, 0, sizeof(*e));
}

duet_status_t duet__cal_eta_update(duet__cal_eta_t *e, const duet_cal_progress_t *p)
{
    if (p->stage_index < 0 || p->n_stages <= p->stage_index)
        return DUET_OK; /* not a stage of the run: nothing to learn */
    if (p->n_stages > e->n) {
        duet__eta_stage_t *st = realloc(e->st, (size_t)p->n_stages * sizeof(*st));
        if (st == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "progress: cannot count %d stages", (int)p->n_stages);
        memset(st + e->n, 0, (size_t)(p->n_stages - e->n) * sizeof(*st));
        e->st = st;
        e->n = p->n_stages;
    }
    if (p->stages_done != e->done) {
        /* A stage finished since the last report, and a stage not seen yet took its thread then:
         * that report is the latest time known to be before it. */
        e->done = p->stages_done;
        e->done_change_s = e->last_report_s;
    }
    duet__eta_stage_t *s = &e->st[p->stage_index];
    if (!s->seen) {
        s->seen = 1;
        s->start_s = e->done_change_s;
        s->first_s = p->elapsed_s;
        s->first_iteration = p->iteration;
    }
    s->last_s = p->elapsed_s;
    e->last_report_s = fmax(e->last_report_s, p->elapsed_s);
    s->iteration = p->iteration;
    s->max_iter = p->max_iter;
    return DUET_OK;
}

/* Whether stage i is among the `running` most recently reported stages. */
static int duet__eta_running(const duet__cal_eta_t *e, int32_t i, int32_t running)
{
    int32_t later = 0;
    for (int32_t j = 0; j < e->n; j++)
        if (j != i && e->st[j].seen &&
            (e->st[j].last_s > e->st[i].last_s || (e->st[j].last_s == e->st[i].last_s && j < i)))
            later++;
    return later < running;
}

double duet__cal_eta_left_s(const duet__cal_eta_t *e, double now_s)
{
    int32_t seen = 0;
    for (int32_t i = 0; i < e->n; i++)
        seen += e->st[i].seen;
    int32_t running = seen - e->done, rated = 0;
    double left = 0, planned = 0; /* s */
    for (int32_t i = 0; i < e->n && running > 0; i++) {
        const duet__eta_stage_t *s = &e->st[i];
        double spent = s->last_s - s->start_s;
        if (!s->seen || s->iteration <= 0 || !(spent > 0) || !duet__eta_running(e, i, running))
            continue;
        /* The first iteration also pays the coarse search before the trust region: the rate is
         * taken after it once there is an iteration more. */
        double per_iter = s->iteration > s->first_iteration && s->last_s > s->first_s
                              ? (s->last_s - s->first_s) / (s->iteration - s->first_iteration)
                              : spent / s->iteration;
        int32_t to_go = s->max_iter > s->iteration ? s->max_iter - s->iteration : 0;
        double mine = per_iter * to_go - (now_s - s->last_s);
        left = fmax(left, fmax(mine, 0));
        planned += per_iter * (s->max_iter > s->iteration ? s->max_iter : s->iteration);
        rated++;
    }
    if (rated == 0)
        return NAN;
    int32_t waiting = e->n - seen;
    if (waiting > 0) {
        int32_t rounds = (waiting + running - 1) / running;
        left += rounds * (planned / rated);
    }
    return left;
}
