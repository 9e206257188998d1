/*
 * Internal state of the simulator layer (not installed).
 */
#ifndef DUET_SIM_INTERNAL_H
#define DUET_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "duet/sim.h"

/* A worker of the reference scheduler: when it is next free, and what it last ran. */
typedef struct duet__frozen_ent {
    double t;
    int32_t w;
    int32_t last; /* 0 none, 1 GEMM, 2 comm */
} duet__frozen_ent_t;

/*
 * A cohort of the fluid engine: CTAs that are in the same state at the same instant and run
 * identical tiles in lockstep (they started together on the same queue). The simulator moves
 * whole cohorts; a cohort splits when a queue cannot serve all of its members.
 */
typedef struct duet__cohort {
    int32_t off, k;       /* members: ws->members[off .. off + k) */
    int32_t state;        /* duet__cohort_state_t */
    int32_t queue;        /* queue being dequeued from or whose tile is running */
    int32_t home;         /* home queue of the members */
    int32_t kernel;       /* concurrent: 0 GEMM kernel, 1 comm kernel; fused: 0 */
    int32_t shared;       /* concurrent: members share their SMs with the other kernel */
    int32_t steal;        /* the members move on to the other queue when their home queue is drained */
    int32_t claimed;      /* DEQ: 1 if the dequeue returned tiles */
    int32_t switched;     /* the members moved on to their non-home queue */
    int64_t tile0;        /* first tile (or queue position) of the current claim */
    double t_event;       /* DEQ: when the dequeue returns; RUN: when the tile ends at current speed */
    double rem;           /* RUN: work left, seconds at full speed */
    double speed;         /* RUN: fraction of full speed granted by the resource solver */
    double t_start;       /* RUN: when the current tile started */
    uint64_t seq;         /* orders simultaneous events deterministically */
} duet__cohort_t;

struct duet_sim_ws {
    size_t cap_ctas;
    double *cta_busy;             /* per CTA busy seconds */
    int32_t *sm_of;               /* per CTA: SM it runs on */
    /* reference scheduler */
    duet__frozen_ent_t *ring;     /* workers whose last task had the constant GEMM duration */
    duet__frozen_ent_t *heap;     /* workers running comm tasks (variable duration) */
    /* fluid engine */
    int32_t *members;             /* CTA ids, partitioned into cohort slices */
    duet__cohort_t *cohorts;
    int32_t *due;                 /* cohorts whose event is at the current instant */
    duet_sim_worker_t *workers;   /* duet_sim_workers()'s answer */
};

/** Make room for `n_ctas` CTAs (grows the buffers; called before a run, never inside one). */
duet_status_t duet__sim_ws_reserve(duet_sim_ws_t *ws, size_t n_ctas);

/** Compute comparisons of simulated times go through this tolerance (seconds). */
#define DUET__SIM_EPS_S 1e-15

#endif /* DUET_SIM_INTERNAL_H */
