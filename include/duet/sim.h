/*
 * duet simulator layer: a discrete-event simulation of the persistent CTAs that drain the GEMM
 * and comm queues of a plan, the sweeps that rank configurations with it, and the timeline
 * outputs (JSON trace, SVG Gantt chart, SVG split curve). Pure C11, no GPU.
 *
 * Two policies price the tiles (docs/simulator.md):
 *  - "fluid" (default): link, HBM and SM resources are shared among the running tiles with
 *    max-min fairness, re-solved whenever a tile starts or ends;
 *  - "frozen": the reference design's scheduler, bit for bit (comm duration frozen at dequeue
 *    as max(active, sat) * Lc), driven by duet's adaptation of the reference's pricing rules
 *    (not the reference's makespans: no 1.44 fused factor, spreading over min(num_wgs, tiles));
 *  - "frozen-reference": the same scheduler with the reference's pricing unchanged; only the
 *    full-chip GEMM time (duet's closed form for origami) differs from the reference.
 * duet_frozen_ref_predict() is the reference's predict_split end to end; given origami's GEMM
 * times it reproduces the reference's outputs (tests/data/seed-golden-predict.json).
 */
#ifndef DUET_SIM_H
#define DUET_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "duet/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================================================== */
/* Timelines                                                                                   */
/* ========================================================================================== */

/** One tile as it ran: who ran it, where, and when (seconds from the start of the operation). */
typedef struct duet_trace_rec {
    int32_t cta;    /* fused: 0..num_wgs-1; concurrent: GEMM kernel 0..gemm_wgs-1, then the comm kernel */
    int32_t sm;     /* SM (CU) the CTA ran on */
    int32_t queue;  /* duet_queue_t the tile came from */
    int32_t stolen; /* 1 if that is not the CTA's home queue */
    int64_t tile;   /* GEMM tile id, or comm queue position */
    double start_s, end_s;
} duet_trace_rec_t;

/** A timeline: predicted by the simulator or measured on a GPU. */
typedef struct duet_trace {
    duet_trace_rec_t *recs;
    size_t n, cap;
    int32_t n_ctas;
    double makespan_s; /* seconds here; the JSON file holds makespan_us */
    char label[64];    /* "predicted", "measured", ... */
} duet_trace_t;

/*
 * Tiles one timeline may hold. Writing a timeline as JSON and drawing it as SVG take far longer per
 * tile than simulating it (about 125 B of JSON and 72 B of SVG, 4.6 us together, per tile), so a
 * plan within the tile limits can still be too large to trace: duet_trace_add() and
 * duet_trace_read_json() refuse more than this many (DUET_ERR_INVALID_ARG, DUET_ERR_PARSE).
 */
#define DUET_TRACE_MAX_RECORDS (INT64_C(1) << 20)

void duet_trace_init(duet_trace_t *t, const char *label);
void duet_trace_free(duet_trace_t *t);
/** Append a record (the trace grows; tracing is off the simulator's fast path). */
duet_status_t duet_trace_add(duet_trace_t *t, const duet_trace_rec_t *r);
/**
 * Write a timeline as JSON: {"schema": "duet-trace/1", "label", "makespan_us", "n_ctas",
 * "plan": {...}, "tiles": [{"cta", "sm", "queue", "tile", "start_us", "end_us", "stolen"}]}.
 * `plan` and `hw` may be NULL. Written atomically. A time that is not finite or not in [0, 1e15] us,
 * or a tile that ends before it starts, is refused (DUET_ERR_INVALID_ARG) and nothing is written.
 */
duet_status_t duet_trace_write_json(const duet_trace_t *t, const duet_plan_t *plan, const duet_hw_t *hw,
                                    const char *path);
/** Read a timeline written by duet_trace_write_json() (or measured by the backend). */
duet_status_t duet_trace_read_json(const char *path, duet_trace_t *t_p);
/**
 * Write timelines in the Chrome trace event format (Perfetto, chrome://tracing): timeline i is
 * process i + 1 named by its label, each CTA a thread ("CTA n"), each tile a complete event ("X",
 * ts and dur in us) named "GEMM <tile>" or "comm <tile>" with args queue, tile, sm and stolen.
 * Written atomically.
 */
duet_status_t duet_trace_write_chrome(const duet_trace_t *const *traces, int n, const char *path);
/**
 * Draw timelines as an SVG Gantt chart, one above the other on a common time axis (us): one
 * row per CTA, GEMM and comm tiles in two colours, stolen tiles outlined, makespan marked.
 */
duet_status_t duet_trace_write_svg(const duet_trace_t *const *traces, int n, const char *title, const char *path);

/* ========================================================================================== */
/* The simulator                                                                               */
/* ========================================================================================== */

/** Workspace: every buffer the simulator needs, allocated once and reused across runs. */
typedef struct duet_sim_ws duet_sim_ws_t;

duet_status_t duet_sim_ws_create(duet_sim_ws_t **ws_p);
void duet_sim_ws_destroy(duet_sim_ws_t *ws);

/** What one simulation reports. Times in seconds from the start of the operation. */
typedef struct duet_sim_result {
    double makespan_s;    /* the operation ends: every tile done, plus launch */
    double gemm_finish_s; /* the last GEMM tile ends (0 without GEMM) */
    double comm_finish_s; /* the last comm tile ends (0 without a collective) */
    double gemm_busy_s;   /* CTA-seconds spent running GEMM tiles */
    double comm_busy_s;   /* CTA-seconds spent running comm tiles */
    int64_t stolen_gemm;  /* GEMM tiles run by comm-home CTAs */
    int64_t stolen_comm;  /* comm tiles run by GEMM-home CTAs */
    int64_t events;       /* simulation events processed */
    int32_t n_ctas;
    const double *cta_busy_s; /* per CTA busy time; owned by the workspace, valid until its next run */
} duet_sim_result_t;

/**
 * A worker (CTA) as a policy starts it. The policies take it from the plan's launch geometry
 * (duet_plan_t.kernel); tests/sim/test_geometry.c holds it against the backend's launch.
 */
typedef struct duet_sim_worker {
    int32_t cta;    /* its number in timelines */
    int32_t kernel; /* duet_kernel_t of the kernel it belongs to */
    int32_t home;   /* duet_queue_t it dequeues from first */
    int32_t steal;  /* 1: it moves on to the other queue when its home queue is drained */
    int32_t sm;     /* the SM it starts on; -1 while it waits for one (concurrent mode) */
} duet_sim_worker_t;

/** A pricing policy: a name, a run function and its workers (const ops table, convention 5). */
typedef struct duet_sim_policy_ops {
    const char *name;
    const char *description;
    duet_status_t (*run)(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_plan_t *plan, duet_trace_t *trace,
                         duet_sim_result_t *res_p);
    /* The workers a run of the plan starts with, by CTA number, into ws->workers; *n_p of them. */
    duet_status_t (*workers)(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_plan_t *plan, int32_t *n_p);
} duet_sim_policy_ops_t;

extern const duet_sim_policy_ops_t duet_sim_policy_fluid;
extern const duet_sim_policy_ops_t duet_sim_policy_frozen;
/** @return the policy of that name ("fluid", "frozen", "frozen-reference"), or NULL. */
const duet_sim_policy_ops_t *duet_sim_policy_find(const char *name);
/** 1 for the reference design's scheduler under either pricing (fused mode only, no K split). */
int duet_sim_policy_is_frozen(const duet_sim_policy_ops_t *policy);

/**
 * Simulate one plan on one profile. `trace` may be NULL; when given, one record per tile is
 * appended. Deterministic: the same input gives the same output, bit for bit. The plan's own
 * rules were checked when it was built; here only its fit to the profile (duet_plan_check_hw()).
 * @return DUET_ERR_INFEASIBLE when the profile cannot run the plan (e.g. a tile larger than
 * its shared memory), DUET_ERR_UNSUPPORTED for a mode the policy does not model.
 */
duet_status_t duet_sim_run(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                           const duet_plan_t *plan, duet_trace_t *trace, duet_sim_result_t *res_p);
/**
 * The workers (CTAs) a simulation of the plan starts with, as the policy places them, sorted by
 * CTA number: what the backend's launch (duet_plan_launch()) must match. *workers_p points into
 * the workspace, valid until its next use. Checks and refusals as duet_sim_run().
 */
duet_status_t duet_sim_workers(duet_sim_ws_t *ws, const duet_sim_policy_ops_t *policy, const duet_hw_t *hw,
                               const duet_plan_t *plan, const duet_sim_worker_t **workers_p, int32_t *n_p);

/* ------------------------------------------------------------------------------------------ */
/* The reference design's scheduler                                                            */
/* ------------------------------------------------------------------------------------------ */

/** Inputs of the reference design's schedule_makespan() (its predictor.py). */
typedef struct duet_frozen_params {
    int64_t n_gemm;       /* GEMM tiles */
    double lg;            /* GEMM tile duration */
    int64_t n_comm;       /* comm tiles */
    double lc_unit;       /* comm duration per unit of concurrency */
    int32_t num_wgs;      /* workers */
    int32_t gemm_wgs;     /* workers whose home is GEMM (ids below gemm_wgs) */
    double c_atomic_gemm; /* charge per successful GEMM dequeue */
    double c_atomic_comm; /* charge per successful comm dequeue */
    int32_t comm_sat;     /* concurrency floor of the comm duration */
} duet_frozen_params_t;

/**
 * The reference scheduler on raw inputs (any consistent time unit). Reproduces the reference
 * design's floating-point results exactly. `trace` may be NULL.
 */
duet_status_t duet_sim_frozen_schedule(duet_sim_ws_t *ws, const duet_frozen_params_t *p, duet_trace_t *trace,
                                       duet_sim_result_t *res_p);
/**
 * The reference design's pricing of a plan (its predictor.py), in seconds: GEMM tile
 * = static full-chip time x num_wgs / tiles x (1 + alpha x comm-home fraction x comm
 * intensity), with duet's GEMM cost standing in for origami; comm = tile-granular remote bytes
 * at one effective link bandwidth plus a launch floor, split evenly over the comm tiles;
 * all_reduce gets the saturation floor min(2 x sat_channels, num_wgs).
 */
duet_status_t duet_sim_frozen_params(const duet_hw_t *hw, const duet_plan_t *plan, duet_frozen_params_t *p_p);

/*
 * How policy frozen prices a plan. The scheduler is the reference's in both; the pricing differs:
 *  - DUET (the default, policy "frozen"): duet's adaptations of the reference's rules
 *    (docs/model.md): the full-chip time is spread over min(num_wgs, tiles), and the reference's
 *    fused-kernel factor 1.44 is not applied, since duet's tile cost prices duet's kernel;
 *  - REFERENCE (policy "frozen-reference"): the reference predictor's rules unchanged: the
 *    full-chip time spread over num_wgs whatever the tile count, times DUET_REF_FUSED_GEMM_MULT.
 *    Only the full-chip GEMM time itself differs from the reference's (duet's closed form stands
 *    in for origami, which the reference called).
 */
typedef enum duet_frozen_pricing {
    DUET_FROZEN_PRICING_DUET = 0,
    DUET_FROZEN_PRICING_REFERENCE = 1,
} duet_frozen_pricing_t;

/* The reference predictor's FUSED_GEMM_MULT (predictor.py): its fused Triton kernel's
 * GEMM tile over calibrated origami. A property of that kernel, not of a device, so not a profile
 * constant; used only by DUET_FROZEN_PRICING_REFERENCE. */
#define DUET_REF_FUSED_GEMM_MULT 1.44

/** duet_sim_frozen_params() with the pricing named. */
duet_status_t duet_sim_frozen_params_priced(const duet_hw_t *hw, const duet_plan_t *plan, duet_frozen_pricing_t pricing,
                                            duet_frozen_params_t *p_p);

/** Policy frozen with DUET_FROZEN_PRICING_REFERENCE ("frozen-reference"). */
extern const duet_sim_policy_ops_t duet_sim_policy_frozen_reference;

/**
 * The reference predictor's GEMM tile duration (its Lg, predictor.py), in the unit of
 * `t_full`: t_full x spread / n_gemm x mult x (1 + alpha x f_comm x max(0, I)), f_comm =
 * (num_wgs - gemm_wgs) / num_wgs (0 when negative), I = comm_full / t_full. The reference's
 * spread is num_wgs; duet's pricing passes min(num_wgs, n_gemm) and mult 1. Evaluated in the
 * reference's order of operations, so its floating-point results are reproduced.
 */
double duet_frozen_ref_lg(double t_full, int64_t n_gemm, double spread, int32_t num_wgs, int32_t gemm_wgs,
                          double comm_full, double mult, double alpha);

/* ------------------------------------------------------------------------------------------ */
/* The reference predictor end to end (its predict_split)                                      */
/* ------------------------------------------------------------------------------------------ */

#define DUET_FROZEN_REF_MAX_TILES 8
#define DUET_FROZEN_REF_MAX_CANDIDATES 1024

/**
 * The inputs of the reference's predict_split (predictor.py), times in ms as the
 * reference computed them. Start from duet_frozen_ref_default_params(), which holds the
 * reference's constants; the caller sets the workload, num_wgs, the tiles and each tile's
 * full-chip GEMM time (the reference asked origami for it and multiplied by its
 * ORIGAMI_GEMM_CAL; duet_frozen_ref_gemm_full() gives duet's stand-in).
 */
typedef struct duet_frozen_ref_params {
    int64_t gemm_m, gemm_n, gemm_k; /* GEMM; gemm_m 0 for none */
    int64_t comm_m, comm_n;         /* collective's tensor per rank */
    int32_t coll, world;
    int32_t num_wgs;      /* workers (the reference: one per CU) */
    int32_t n_candidates; /* 0: the reference's range(max(16, num_wgs // 8), num_wgs + 1, 8) */
    int32_t candidates[DUET_FROZEN_REF_MAX_CANDIDATES];
    int32_t cb_m, cb_n;  /* comm tile, default 256 x 64 */
    int32_t dtype_bytes; /* default 2 */
    int32_t n_tiles;     /* GEMM tiles to try (the reference's mt_candidates, in its order) */
    duet_gemm_tile_t tiles[DUET_FROZEN_REF_MAX_TILES];
    double gemm_full_ms[DUET_FROZEN_REF_MAX_TILES]; /* full-chip GEMM time of each tile on num_wgs CUs, ms */
    duet_gemm_tile_t prefer;                        /* mt_prefer, default 256x256x64 */
    double margin; /* mt_margin: a tile other than `prefer` must win by more than this (0.20) */
    double c_atomic_gemm_ms, c_atomic_comm_ms; /* per-dequeue charges (0.99e-3, 2.36e-3) */
    int32_t comm_sat;                          /* COMM_SAT_CHANNELS (64); all_reduce's floor is twice it */
    double fused_mult;                         /* FUSED_GEMM_MULT (1.44) */
    double alpha;                              /* GEMM_INTERFERENCE_ALPHA (0.40) */
    double link_gbs;                           /* XGMI_BW_GBPS (120) */
    double launch_us;                          /* COMM_LAUNCH_US (5) */
} duet_frozen_ref_params_t;

/** One point of the reference's curve: [gemm_wgs, T_gemm, T_comm, makespan] (ms). */
typedef struct duet_frozen_ref_point {
    int32_t gemm_wgs;
    double t_gemm_ms, t_comm_ms, makespan_ms;
} duet_frozen_ref_point_t;

/** What predict_split returns, for the chosen tile. */
typedef struct duet_frozen_ref_result {
    int32_t gemm_wgs;
    int32_t tile_index; /* into params.tiles */
    duet_gemm_tile_t tile;
    double pred_ms, t_gemm_ms, t_comm_ms, lg_ms, lc_ms;
    int64_t n_gemm, n_comm;
    int32_t n_curve;
    duet_frozen_ref_point_t curve[DUET_FROZEN_REF_MAX_CANDIDATES];
} duet_frozen_ref_result_t;

duet_frozen_ref_params_t duet_frozen_ref_default_params(void);

/**
 * The reference's predict_split: for each tile the best split over the candidates (strict <, so
 * the first candidate wins a tie) with its scheduler (duet_sim_frozen_schedule), then the tile of
 * the smallest makespan unless `prefer` was tried and the winner is not more than `margin`
 * faster. Reproduces the reference's 60 golden cases (tests/data/seed-golden-predict.json) to
 * 1e-9 relative. @return DUET_ERR_INVALID_ARG for inputs the reference could not price (no tile,
 * a non-positive or non-finite full-chip time, a candidate outside 1..num_wgs).
 */
duet_status_t duet_frozen_ref_predict(duet_sim_ws_t *ws, const duet_frozen_ref_params_t *p,
                                      duet_frozen_ref_result_t *res_p);

/**
 * duet's stand-in for the reference's origami call: the full-chip time (ms) of the workload's
 * GEMM in `tile` on `num_wgs` CTAs, duet's closed-form static GEMM time without the launch (as
 * policy frozen uses it).
 */
duet_status_t duet_frozen_ref_gemm_full(const duet_hw_t *hw, const duet_workload_t *wl, duet_gemm_tile_t tile,
                                        int32_t num_wgs, double *ms_p);

/* ========================================================================================== */
/* Sweeps                                                                                      */
/* ========================================================================================== */

#define DUET_SWEEP_MAX_TILES 16
#define DUET_SWEEP_MAX_SPLIT_KS 8
/* A value of the sweep's K splits: split_k 1 with stream_k 1 (duet_plan_stream_k_choose). */
#define DUET_SWEEP_STREAM_K (-1)
/*
 * Simulation events one sweep may process (docs/simulator.md, "Speed"). Each plan is bounded
 * (DUET_MAX_GEMM_TILES, DUET_MAX_COMM_TILES), but a sweep simulates thousands of them: near the
 * limits that would be minutes. A sweep that passes this many events (or its parameters'
 * max_events) stops with DUET_ERR_INVALID_ARG naming the limit, about 1.7e7 events: what that
 * costs in seconds is the limit over the fluid policy's events per second on the machine at hand,
 * which `duet bench-sim` measures (per sweep and per policy; docs/simulator.md, "Speed", records a
 * run). The reference shape set's heaviest sweep takes 3.2e6.
 */
#define DUET_SWEEP_MAX_EVENTS (INT64_C(1) << 24)

/** What to sweep. Start from duet_sweep_default_params(). */
typedef struct duet_sweep_params {
    const duet_sim_policy_ops_t *policy; /* default fluid */
    uint32_t modes;                      /* bit (1 << duet_mode_t); default fused, concurrent and copy */
    int32_t n_tiles;                     /* GEMM tiles to try; default every supported tile that fits */
    duet_gemm_tile_t tiles[DUET_SWEEP_MAX_TILES];
    int32_t split_min, split_max, split_step; /* gemm_wgs values; 0 = defaults (1..SMs, step 1) */
    int32_t num_wgs;                          /* fused grid; 0 = one per SM */
    int32_t cm, cn, group_m;                  /* 0 = defaults */
    /* GEMM K splits to try. 0 = automatic: for each tile those of DUET_AUTO_SPLIT_KS that
     * duet_split_k_worth_trying() accepts, then (stream_k 1) stream-K (DUET_SWEEP_STREAM_K) at
     * every split where its plan splits a tail; policy frozen (the reference rules) tries 1 only. */
    int32_t n_split_ks;
    int32_t split_ks[DUET_SWEEP_MAX_SPLIT_KS];
    int32_t stream_k;   /* 1 (default): the automatic K splits include stream-K; 0: they do not */
    int64_t max_events; /* the sweep's event budget; 0 = DUET_SWEEP_MAX_EVENTS */
    /* 0 (the default): simulate and rank every configuration. K in 1..DUET_SWEEP_TOP_MAX: the
     * two-phase sweep (docs/simulator.md, "Speed"): a lower bound for every configuration, and the
     * simulation only for those that can be among the K fastest, among the K first by the upper end
     * of their interval (duet_decide_interval()), the fastest of their mode, or as fast as the static
     * default. The result then holds those only, ranked; its first K points (and the next, for
     * ties) by either figure, each mode's fastest and the default's rank are the full sweep's.
     * The frozen policy always simulates everything. */
    int32_t top;
    /* Vendor mode: the most CTAs the collective may run on (the stack's cap, duet_stack_limits_t.max_ctas):
     * its splits start at gemm_wgs = SMs - this. 0 = no cap. */
    int32_t vendor_comm_max;
} duet_sweep_params_t;

/** The largest duet_sweep_params_t.top. */
#define DUET_SWEEP_TOP_MAX 1000

duet_sweep_params_t duet_sweep_default_params(void);

/** One simulated configuration. */
typedef struct duet_sweep_point {
    duet_config_t cfg;
    double makespan_s, gemm_finish_s, comm_finish_s;
} duet_sweep_point_t;

typedef struct duet_sweep_result {
    duet_sweep_point_t *points; /* ranked: makespan ascending, ties by duet_rank_sort(); vendor mode keeps
                                   the fastest stand-in tile of each split only (the library picks its kernel).
                                   With params.top = 0 every configuration; else those phase two simulated */
    size_t n;
    size_t n_configs;        /* distinct configurations the sweep covers (= n with params.top = 0) */
    duet_sweep_point_t dflt; /* the static default (fused, 3/4 of the SMs on GEMM) */
    size_t default_rank;     /* 1-based rank the default would take among the points (1 + those faster
                                by more than DUET_RANK_TIE_REL) */
    size_t default_ties;     /* other configurations within DUET_RANK_TIE_REL of the default */
    int64_t events;          /* simulation events over the whole sweep */
    double wall_s;           /* CPU wall time of the sweep */
    size_t n_simulated;      /* simulations run, the static default's included; none is run twice (a vendor
                                stand-in tile that cannot be its split's fastest is not run) */
} duet_sweep_result_t;

/** Simulate every configuration of the sweep and rank them. Free with duet_sweep_result_free(). */
duet_status_t duet_sweep_run(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_workload_t *wl,
                             const duet_sweep_params_t *params, duet_sweep_result_t *res_p);
void duet_sweep_result_free(duet_sweep_result_t *res);
/**
 * Where the static default ranks, ties worded as ties (within DUET_RANK_TIE_REL), into `buf` (n bytes,
 * 96 are enough): "rank 1 of 8; tied with 3 others for best", "rank 4 of 8, tied with 1 other; the best
 * is 2.5 % faster", "rank 1 of 8; nothing in the sweep beats it". The one wording of `duet predict` and
 * the sweep's SVG. @return buf.
 */
const char *duet_sweep_rank_str(const duet_sweep_result_t *res, char *buf, size_t n);
/** The fastest point whose mode is in the bitmask `modes` (1 << duet_mode_t), or NULL. */
const duet_sweep_point_t *duet_sweep_best(const duet_sweep_result_t *res, uint32_t modes);
/** 1 if point i ties (within DUET_RANK_TIE_REL) the point before or after it. */
int duet_sweep_tied(const duet_sweep_result_t *res, size_t i);
/** Point i's competition rank, 1-based: tied points share the rank of the first of them (1, 1, 3). */
size_t duet_sweep_rank(const duet_sweep_result_t *res, size_t i);
/** The GEMM's TFLOP/s (2 m n k FLOPs) when it takes gemm_s seconds; 0 without a GEMM. */
double duet_gemm_tflops(const duet_workload_t *wl, double gemm_s);
/** Draw predicted makespan against gemm_wgs, one line per (mode, tile), as SVG. */
duet_status_t duet_sweep_write_svg(const duet_sweep_result_t *res, const char *title, const char *path);

/* ========================================================================================== */
/* Deciding within the model's known error (sim/decide.c)                                      */
/* ========================================================================================== */

/*
 * A prediction p of mode m stands for the interval [p / (1 + e), p (1 + e)], e = duet_hw_mode_err(hw, m),
 * the profile's held-out error of one prediction against the others of its workload (err_<mode>).
 * `duet predict` ranks by the interval's upper end and leaves the safe choice (duet's static default,
 * or the vendor split the user already runs) only for a configuration whose predicted gain over it
 * exceeds the band of the two predictions (duet_decide_band(); docs/model.md, "Deciding within the
 * known error").
 */

/** A prediction's interval, seconds. */
typedef struct duet_interval {
    double lo_s, hi_s;
} duet_interval_t;

/** The interval of a sweep point's makespan on `hw`. */
duet_interval_t duet_decide_interval(const duet_hw_t *hw, const duet_sweep_point_t *p);

/**
 * The band of comparing a prediction of mode a with one of mode b, a fraction: exp(sqrt(ln(1 + e_a)^2 +
 * ln(1 + e_b)^2)) - 1. A gain (the ratio of the two predictions, less 1) within it is not told apart
 * from no gain.
 */
double duet_decide_band(const duet_hw_t *hw, int32_t mode_a, int32_t mode_b);

/** What the safe choice is. */
typedef enum {
    DUET_SAFE_DEFAULT = 0, /* duet's static default (duet_sweep_result_t.dflt) */
    DUET_SAFE_VENDOR = 1   /* the vendor split the user runs (duet_decide_vendor_point()) */
} duet_safe_kind_t;

/** A decision over a sweep. Free with duet_decision_free(). */
typedef struct duet_decision {
    size_t n;      /* the sweep's points */
    size_t *order; /* indices into the sweep's points, ranked by the interval's upper end (ties by duet_rank_sort()) */
    size_t *rank;  /* rank[j]: the competition rank of order[j], tied figures (DUET_RANK_TIE_REL) sharing it */
    int32_t safe_kind;       /* duet_safe_kind_t */
    duet_sweep_point_t safe; /* the safe choice */
    int32_t moved;           /* 1: the pick leaves the safe choice for alt */
    int32_t has_alt;         /* 1: some point of the sweep is not the safe choice */
    /* The alternative weighed: when moved, the best-ranked point whose gain clears the band; else the
     * best-ranked point that is not the safe choice. */
    duet_sweep_point_t alt;
    double gain;             /* safe / alt - 1 (predicted makespans): alt's predicted speed-up */
    double gain_lo, gain_hi; /* its interval: (1 + gain) / (1 + band) - 1 and (1 + gain) (1 + band) - 1 */
    double band;             /* duet_decide_band() of the two modes */
} duet_decision_t;

/**
 * Rank the sweep's points by the upper end of their interval, and decide: the pick is the
 * best-ranked point whose gain over `safe` clears the band (gain_lo > 0), else `safe` itself.
 * @return DUET_ERR_NO_MEMORY, DUET_ERR_INVALID_ARG for an empty sweep or a safe choice without a time.
 */
duet_status_t duet_decide(const duet_hw_t *hw, const duet_sweep_result_t *res, const duet_sweep_point_t *safe,
                          int32_t safe_kind, duet_decision_t *d_p);
/** 1 if the j-th ranked point ties (same rank) the one before or after it. */
int duet_decision_tied(const duet_decision_t *d, size_t j);
/** The point the decision picks: alt when moved, else the safe choice. */
const duet_sweep_point_t *duet_decision_pick(const duet_decision_t *d);
void duet_decision_free(duet_decision_t *d);

/**
 * Price the vendor split a user runs: the vendor GEMM with an SM target of `gemm_sms` beside duet's
 * comm kernel on `comm_ctas` CTAs (-1: the SMs the GEMM leaves), as the sweep prices vendor mode (the
 * fastest stand-in tile among sp's tiles, or every tile that fits; sp's comm tile and group_m).
 * @return DUET_ERR_INVALID_ARG naming why when no tile can run that split.
 */
duet_status_t duet_decide_vendor_point(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_workload_t *wl,
                                       const duet_sweep_params_t *sp, int32_t gemm_sms, int32_t comm_ctas,
                                       duet_sweep_point_t *pt_p);

/* ========================================================================================== */
/* JSON in, JSON out (sim/api_json.c)                                                          */
/* ========================================================================================== */

/**
 * Answer a request given as JSON text with JSON text, for callers in other languages (the Python
 * package python/duet; docs/python.md has the request's members). "op" picks the answer: "predict"
 * (the default: a sweep, schema duet-predict/2, as `duet predict --json`), "simulate"
 * (duet-simulate/1), "plan" (duet-plan/1) or "hw" (the profile, duet-hw/1). "hw" is a built-in
 * name, a file path or a profile object (default "h200"); the workload is "collective", "dtype",
 * "m", "n", "k", "mc", "nc" or "comm_bytes", "world", "root"; simulate and plan take "config"
 * (members as the configuration codec; what is missing follows the static default) and "rank";
 * predict takes "modes", "tiles", "split_ks", "split_step", "num_wgs", "comm_tile", "group_m",
 * "reference_pricing" (with policy frozen; adds "reference_predict_split"), "top" (> 0: the two-phase sweep,
 * duet_sweep_params_t.top, unless "running_vendor" is given), "policy", "emit" (with "nccl_version",
 * "rccl_version", "hipblaslt_version"), "running_vendor" ({"gemm_sms", "comm_ctas"}: the vendor split
 * the caller runs, the decision's safe choice) and "max_events" (the sweep's event budget, 1 to
 * DUET_SWEEP_MAX_EVENTS, which is also the default: a sweep past it fails naming it, so no request runs
 * for more than a few seconds). Times are in us. *response_json_p is written only on success; free it
 * with duet_json_free(). On failure duet_last_error() says why.
 */
duet_status_t duet_predict_json(const char *request_json, char **response_json_p);
/** Free a response of duet_predict_json(). NULL is a no-op. */
void duet_json_free(char *json);

#ifdef __cplusplus
}
#endif
#endif /* DUET_SIM_H */
