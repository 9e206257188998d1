/*
 * Internal state of the simulator layer (not installed).
 */
#ifndef DUET_SIM_INTERNAL_H
#define DUET_SIM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "base/table.h"
#include "duet/sim.h"
#include "sim/maxmin.h"

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
    int32_t off, k;   /* members: ws->members[off .. off + k) */
    int32_t state;    /* duet__cohort_state_t */
    int32_t queue;    /* queue being dequeued from or whose tile is running */
    int32_t home;     /* home queue of the members */
    int32_t kernel;   /* concurrent: 0 GEMM kernel, 1 comm kernel; fused: 0 */
    int32_t shared;   /* concurrent: members share their SMs with the other kernel */
    int32_t steal;    /* the members move on to the other queue when their home queue is drained */
    int32_t claimed;  /* DEQ: 1 if the dequeue returned tiles */
    int32_t switched; /* the members moved on to their non-home queue */
    int64_t tile0;    /* first tile (or queue position) of the current claim */
    double t_event;   /* DEQ: when the dequeue returns; RUN: when the tile ends at current speed */
    double rem;       /* RUN: work left, seconds at full speed */
    double speed;     /* RUN: fraction of full speed granted by the resource solver */
    double t_start;   /* RUN: when the current tile started */
    uint64_t seq;     /* orders simultaneous events deterministically */
} duet__cohort_t;

struct duet_sim_ws {
    size_t cap_ctas;
    double *cta_busy; /* per CTA busy seconds */
    int32_t *sm_of;   /* per CTA: SM it runs on */
    /* reference scheduler */
    duet__frozen_ent_t *ring; /* workers whose last task had the constant GEMM duration */
    duet__frozen_ent_t *heap; /* workers running comm tasks (variable duration) */
    /* fluid engine */
    int32_t *members; /* CTA ids, partitioned into cohort slices */
    duet__cohort_t *cohorts;
    int32_t *due;               /* cohorts whose event is at the current instant */
    duet__maxmin_var_t *mm_var; /* the solver's variables: one per running cohort */
    duet_sim_worker_t *workers; /* duet_sim_workers()'s answer */
    /* The fluid engine gives up on a run once simulated time passes t_stop seconds (0: never) and
     * answers makespan +inf: the two-phase sweep's "cannot matter any more" (sim/sweep.c). Only
     * the sweep sets it, around its own runs. */
    double t_stop;
};

/** Make room for `n_ctas` CTAs (grows the buffers; called before a run, never inside one). */
duet_status_t duet__sim_ws_reserve(duet_sim_ws_t *ws, size_t n_ctas);

/*
 * The one numerical precision of the fluid engine: 1e-12, relative (dimensionless).
 *  - Simulated times within 1e-12 of each other, relative to the larger (duet__time_eq), are one
 *    instant: their events are handled together, in the order they were scheduled, and a tile
 *    whose end falls within it has ended. At 1 ms that is 1 fs, some 5000 times the spacing of
 *    doubles there (2.2e-16 x 1 ms), so ends that the arithmetic put a few roundings apart meet,
 *    and some 3e5 times below the shortest duration a profile prices (a dequeue, 0.3 ns on h200).
 *  - A speed (a fraction of a tile's full speed) the max-min solver grants is at least 1e-12: a
 *    tile left without capacity (the rounding residue of a saturated resource) crawls instead of
 *    stalling; at that speed a 1 us tile would take 1e6 s, so any other event, which re-solves
 *    the speeds, comes first.
 */
#define DUET__SIM_PRECISION 1e-12

/* A lower bound on policy fluid's makespan of `plan` (sim/sweep.c): the two-phase sweep's phase one. */
double duet__sweep_bound(const duet_hw_t *hw, const duet_plan_t *plan);

/* The JSON builders of sim/api_json.c, shared by the CLI's --json and duet_predict_json(). */
struct cJSON;
/* A mode's default configuration with the sweep's comm tile and group_m (p->cm, cn, group_m where set):
 * what every point of a sweep, its static default and a running vendor split start from. */
duet_config_t duet__sweep_config_base(const duet_hw_t *hw, const duet_sweep_params_t *p, int32_t mode);
/**
 * Add a workload's members to o: collective, dtype, m, n, k, mc, nc, world, root, comm_bytes (the
 * collective's size as nccl-tests counts it) and busbw_factor; every JSON result that names a
 * workload writes it so.
 */
void duet__workload_cjson(struct cJSON *o, const duet_workload_t *wl);
/* The predict answer (duet-predict/2): the ranked rows in the decision's order (dec->order), each
 * with its interval, and the decision. */
struct cJSON *duet__predict_cjson(const duet_hw_t *hw, const duet_workload_t *wl, const duet_sweep_params_t *sp,
                                  const duet_sweep_result_t *res, const duet_decision_t *dec, size_t shown,
                                  int32_t emit, const duet_stack_limits_t *lim, const char *settings);
/*
 * A sweep point as a table row (sim/point_table.c): `duet predict`'s ranked rows as text and CSV, and
 * the points of duet-predict/2 (its configuration, "ctas", "steal", the times and rates, "lo_us",
 * "hi_us" and "err"; "rank" and "tied" in a ranked table only). A row's rank and tie are ignored by
 * an unranked table's JSON.
 */
void duet__point_table_init(duet__table_t *t, int ranked);
void duet__point_table_row(duet__table_t *t, const duet_hw_t *hw, const duet_workload_t *wl,
                           const duet_sweep_point_t *p, size_t rank, int tied);
/* A sweep point with its interval as one JSON object (an unranked table's row). */
struct cJSON *duet__point_iv_cjson(const duet_hw_t *hw, const duet_workload_t *wl, const duet_sweep_point_t *p);
/*
 * The decision of `duet predict` and of the JSON API: the safe choice is the sweep's static default,
 * or with running_gemm_sms > 0 the vendor split the user runs (running_comm_ctas -1: the SMs left),
 * priced by duet_decide_vendor_point(); then duet_decide().
 */
duet_status_t duet__predict_decide(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_workload_t *wl,
                                   const duet_sweep_params_t *sp, const duet_sweep_result_t *res,
                                   int32_t running_gemm_sms, int32_t running_comm_ctas, duet_decision_t *dec_p);
struct cJSON *duet__simulate_cjson(const duet_hw_t *hw, const duet_workload_t *wl, const duet_config_t *cfg,
                                   const duet_sim_policy_ops_t *policy, const duet_sim_result_t *r);
struct cJSON *duet__plan_cjson(const duet_hw_t *hw, const duet_plan_t *p);
/**
 * --emit's sweep (emit >= 0): the stack's limits at versions v into *lim_p, and sp's modes and vendor
 * cap set to sweep duet's modes beside the vendor splits the stack can reach (none where its GEMM has
 * no SM target). emit < 0: nothing.
 */
duet_status_t duet__predict_emit_setup(int32_t emit, const duet_hw_t *hw, const duet_stack_versions_t *v,
                                       duet_sweep_params_t *sp, duet_stack_limits_t *lim_p);
/** The --emit settings of the sweep's best vendor point into buf ("" when emit < 0 or none). */
duet_status_t duet__predict_emit_text(int32_t emit, const duet_hw_t *hw, const duet_stack_versions_t *v,
                                      const duet_workload_t *wl, const duet_sweep_result_t *res, char *buf, size_t n);

#endif /* DUET_SIM_INTERNAL_H */
