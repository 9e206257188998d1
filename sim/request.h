/*
 * One request, resolved once: what `duet plan|simulate|predict` and duet_predict_json() are asked
 * (the profile, the workload, a configuration given in part, the sweep's options, the policy,
 * --emit, the rows to show). The front ends only fill a duet__request_t from their own syntax
 * (argv, a JSON object); duet__request_resolve() applies every default and every rule between
 * options, so that both answer the same request the same way.
 */
#ifndef DUET_SIM_REQUEST_H
#define DUET_SIM_REQUEST_H

#include "sim/internal.h"

/* What a request asks for. */
enum { DUET__OP_PLAN, DUET__OP_SIMULATE, DUET__OP_PREDICT };

typedef struct duet__request {
    int32_t op;
    /* Messages name what was given as the front end spells it: 1 the command line's flags
     * ("--comm-bytes"), 0 the JSON request's members ("request.comm_bytes"). */
    int cli;
    /* The profile: given whole (hw_given), else loaded from hw_name (a built-in or a file). */
    const char *hw_name;
    int hw_given;
    duet_hw_t hw;
    /* The workload as given; which parts were. */
    duet_workload_t wl;
    int have_gemm, have_comm, have_coll, have_world;
    int64_t comm_bytes; /* nccl-tests' size, bytes; 0: not given */
    /* A configuration given in part: -1 (tile, cm: 0) where not given. */
    int32_t mode, num_wgs, gemm_wgs, comm_wgs, group_m, split_k, stream_k;
    int have_tile;
    duet_gemm_tile_t tile;
    int32_t cm, cn;
    int32_t rank; /* plan and simulate: -1, the busiest rank */
    /* predict: the sweep (modes_given: its modes were named), the decision and --emit. */
    duet_sweep_params_t sp;
    int modes_given, reference_pricing;
    int32_t emit; /* -1: none */
    duet_stack_versions_t ver;
    int64_t top;                         /* rows shown; 0: all */
    int every_point;                     /* the caller needs every point simulated (a curve) */
    int32_t run_gemm_sms, run_comm_ctas; /* the vendor split the caller runs; 0, -1: none */
    /* Resolved: the configuration (plan, simulate) and the stack's limits (--emit). */
    duet_config_t cfg;
    duet_stack_limits_t lim;
    /* After a failed resolve: 1 when the request itself is malformed (a usage error), 0 when it is
     * well formed but its values do not hold (an infeasible configuration). */
    int usage;
} duet__request_t;

/** An empty request of `op` from front end `cli` (see above): nothing given, every default pending. */
void duet__request_init(duet__request_t *r, int32_t op, int cli);
/**
 * Apply the defaults and the rules: load the profile, complete the workload (comm_bytes, world),
 * then for plan and simulate the configuration (the static default of its mode, the split
 * completed, the rank), for predict the sweep (frozen's and --emit's modes, the comm tile, the
 * tiles checked, the two-phase top). @return DUET_OK, or the first rule broken (its text names
 * what was given as the front end spells it; r->usage says which kind).
 */
duet_status_t duet__request_resolve(duet__request_t *r);
/** The two halves of duet__request_resolve(): the profile and the workload, then the rest of op's rules. */
duet_status_t duet__request_resolve_workload(duet__request_t *r);
duet_status_t duet__request_resolve_op(duet__request_t *r);

/** What a predict request answers: the ranked sweep, the decision, --emit's settings. */
typedef struct duet__predicted {
    duet_sweep_result_t res;
    duet_decision_t dec;
    size_t shown; /* rows shown (top) */
    char settings[4096];
} duet__predicted_t;

/** Sweep, decide and write --emit's settings for a resolved predict request. */
duet_status_t duet__request_predict(const duet__request_t *r, duet__predicted_t *p);
/** The predict answer as JSON (schema duet-predict/2). */
struct cJSON *duet__request_predict_cjson(const duet__request_t *r, const duet__predicted_t *p);
void duet__predicted_free(duet__predicted_t *p);

#endif /* DUET_SIM_REQUEST_H */
