/*
 * The time left of a calibration run (calibrate/eta.c), from each stage's own progress as the
 * progress callback reports it. Internal: the CLI's progress line uses it.
 */
#ifndef DUET_CALIBRATE_ETA_H
#define DUET_CALIBRATE_ETA_H

#include "duet/calibrate.h"

/* What the callbacks told of one stage (a fit), in seconds since the run started. */
typedef struct duet__eta_stage {
    int seen;
    double start_s; /* when it began: the last report before a stage finished ahead of its first, or 0 */
    double last_s;  /* its last report */
    double first_s; /* its first report, after its first iteration */
    int32_t first_iteration, iteration, max_iter;
} duet__eta_stage_t;

typedef struct duet__cal_eta {
    int32_t n;
    duet__eta_stage_t *st;
    int32_t done;         /* stages finished, as last reported */
    double done_change_s; /* the last report before that count last changed */
    double last_report_s; /* the latest report of any stage */
} duet__cal_eta_t;

void duet__cal_eta_init(duet__cal_eta_t *e);
void duet__cal_eta_free(duet__cal_eta_t *e);
/** Take one progress report. @return DUET_ERR_NO_MEMORY when the stages cannot be counted (no estimate then). */
duet_status_t duet__cal_eta_update(duet__cal_eta_t *e, const duet_cal_progress_t *p);
/**
 * Seconds left at `now_s`: the running stage furthest from its planned iterations (its own time
 * per iteration times the iterations left to max_iter), plus the stages not yet started, in
 * rounds of as many as are running, each costing the running stages' mean planned time. Stages
 * that finished stop reporting: the running ones are taken as the most recently reported.
 * @return NaN while no running stage has a rate.
 */
double duet__cal_eta_left_s(const duet__cal_eta_t *e, double now_s);

#endif /* DUET_CALIBRATE_ETA_H */
