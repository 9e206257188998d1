/*
 * One request, resolved once (sim/request.h): every default and every rule between the options of
 * `duet plan|simulate|predict` and of duet_predict_json(), in one place.
 */
#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "sim/request.h"

void duet__request_init(duet__request_t *r, int32_t op, int cli)
{
    memset(r, 0, sizeof(*r));
    r->op = op;
    r->cli = cli;
    r->wl = duet_workload_empty();
    r->mode = r->num_wgs = r->gemm_wgs = r->comm_wgs = r->group_m = r->split_k = r->rank = -1;
    r->sp = duet_sweep_default_params();
    r->emit = -1;
    r->ver = duet_stack_versions_default();
    r->top = 10;
    r->run_comm_ctas = -1;
}

/* A rule of the request broken: a usage error, its text as the front end spells what was given. */
static duet_status_t duet__req_rule(duet__request_t *r, const char *cli_fmt, const char *json_fmt, ...)
    __attribute__((format(printf, 2, 4)));
static duet_status_t duet__req_rule(duet__request_t *r, const char *cli_fmt, const char *json_fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, json_fmt);
    vsnprintf(text, sizeof(text), r->cli ? cli_fmt : json_fmt, ap);
    va_end(ap);
    r->usage = 1;
    return duet__error(DUET_ERR_INVALID_ARG, "%s", text);
}

/* A library call's failure, its text after what was given ("--comm-bytes: ..."), a usage error. */
static duet_status_t duet__req_named(duet__request_t *r, duet_status_t st, const char *cli_name, const char *json_name)
{
    if (st >= 0)
        return st;
    char why[512];
    snprintf(why, sizeof(why), "%s", duet_last_error());
    return duet__req_rule(r, "%s: %s", "%s: %s", r->cli ? cli_name : json_name, why);
}

/* The profile, unless it was given whole. */
static duet_status_t duet__req_hw(duet__request_t *r)
{
    if (r->hw_given)
        return DUET_OK;
    duet_status_t st = duet_hw_load(r->hw_name != NULL ? r->hw_name : "h200", &r->hw);
    if (st < 0 && r->cli) {
        char why[512];
        snprintf(why, sizeof(why), "%s", duet_last_error());
        return duet__error(st, "--hw: %s", why);
    }
    return st;
}

/* The workload: the collective's size from comm_bytes, world 2 with a collective, then checked. */
static duet_status_t duet__req_workload(duet__request_t *r)
{
    duet_workload_t *wl = &r->wl;
    if (r->comm_bytes > 0) {
        if (r->have_comm)
            return duet__req_rule(r, "--comm and --comm-bytes: give one",
                                  "request: give mc and nc, or comm_bytes, not both");
        if (!r->have_coll)
            return duet__req_rule(r, "--comm-bytes needs --collective", "request.comm_bytes needs a collective");
        if (!r->have_world)
            wl->world = 2;
        DUET_CHECK(
            duet__req_named(r, duet_workload_set_comm_bytes(wl, r->comm_bytes), "--comm-bytes", "request.comm_bytes"));
        r->have_comm = 1;
    }
    if (r->have_coll && !r->have_comm)
        return duet__req_rule(r, "--collective %s needs --comm McxNc or --comm-bytes S",
                              "request: collective %s needs mc and nc, or comm_bytes", duet_collective_name(wl->coll));
    if (r->have_comm && !r->have_coll)
        return duet__req_rule(r, "--comm needs --collective", "request: mc and nc need a collective");
    if (!r->have_gemm && !r->have_coll)
        return duet__req_rule(r, "give --gemm MxNxK, --collective C --comm McxNc, or both",
                              "request: give m, n and k, a collective with mc and nc, or both");
    if (r->have_coll && !r->have_world)
        wl->world = 2;
    return duet_workload_validate(wl);
}

/* Plan and simulate: the static default of the mode with what was given, and the rank. */
static duet_status_t duet__req_config(duet__request_t *r)
{
    duet_config_t cfg = duet_config_default(&r->hw, r->mode >= 0 ? r->mode : DUET_MODE_FUSED);
    /* The CTA counts not given follow the static default's rules. */
    DUET_CHECK(duet__req_named(r, duet_config_complete_split(&cfg, &r->hw, r->num_wgs, r->gemm_wgs, r->comm_wgs),
                               "--num-wgs, --gemm-wgs, --comm-wgs", "request.config"));
    if (r->have_tile)
        cfg.tile = r->tile;
    if (r->cm > 0) {
        cfg.cm = r->cm;
        cfg.cn = r->cn;
    }
    if (r->group_m >= 0)
        cfg.group_m = r->group_m;
    if (r->split_k >= 0)
        cfg.split_k = r->split_k;
    if (r->stream_k)
        cfg.stream_k = 1;
    DUET_CHECK(duet_config_validate(&cfg, &r->wl, &r->hw));
    r->cfg = cfg;
    if (r->rank < 0)
        r->rank = duet_plan_critical_rank(&r->wl);
    if (r->rank < r->wl.world)
        return DUET_OK;
    duet__req_rule(r, "--rank %d is outside [0, world = %d)", "request.rank: %d is not an integer in [0, %d]", r->rank,
                   r->cli ? r->wl.world : r->wl.world - 1);
    /* As the request's other bounds are: a value out of its range is malformed. */
    char why[512];
    snprintf(why, sizeof(why), "%s", duet_last_error());
    return r->cli ? DUET_ERR_INVALID_ARG : duet__error(DUET_ERR_PARSE, "%s", why);
}

/* Predict: the policy's and --emit's modes. */
static duet_status_t duet__req_policy(duet__request_t *r)
{
    duet_sweep_params_t *sp = &r->sp;
    if (r->reference_pricing) {
        if (!duet_sim_policy_is_frozen(sp->policy))
            return duet__req_rule(r, "--reference-pricing needs --policy frozen",
                                  "request.reference_pricing needs policy frozen");
        sp->policy = &duet_sim_policy_frozen_reference;
    }
    if (duet_sim_policy_is_frozen(sp->policy) && !r->modes_given)
        sp->modes = 1u << DUET_MODE_FUSED; /* the reference design modelled fused mode only */
    if (r->emit >= 0 && sp->policy == &duet_sim_policy_frozen)
        return duet__req_rule(r, "--emit needs policy fluid (frozen models fused mode only)",
                              "request.emit needs policy fluid (frozen models fused mode only)");
    if (duet__predict_emit_setup(r->emit, &r->hw, &r->ver, sp, &r->lim) < 0)
        return duet__req_rule(r, "%s", "%s", duet_last_error());
    return DUET_OK;
}

/* Predict: the sweep's grid, comm tile and swizzle, the tiles checked, the decision's safe choice. */
static duet_status_t duet__req_sweep(duet__request_t *r)
{
    duet_sweep_params_t *sp = &r->sp;
    const duet_hw_t *hw = &r->hw;
    if (r->num_wgs > 0) {
        if (r->num_wgs > hw->n_sms)
            return duet__req_rule(r, "--num-wgs %d exceeds the %d SMs of %s",
                                  "request.num_wgs: %d exceeds the %d SMs of %s", r->num_wgs, hw->n_sms, hw->name);
        sp->num_wgs = r->num_wgs;
    }
    if (r->cm > 0) {
        sp->cm = r->cm;
        sp->cn = r->cn;
    }
    if (r->group_m > 0)
        sp->group_m = r->group_m;
    /* Refuse tiles the profile cannot hold, naming the first one, rather than skipping them. */
    for (int i = 0; i < sp->n_tiles; i++) {
        duet_config_t probe = duet_config_default(hw, DUET_MODE_FUSED);
        probe.tile = sp->tiles[i];
        if (sp->cm > 0)
            probe.cm = sp->cm;
        if (sp->cn > 0)
            probe.cn = sp->cn;
        DUET_CHECK(duet_config_validate(&probe, &r->wl, hw));
    }
    if (r->run_gemm_sms > hw->n_sms)
        return duet__req_rule(r, "--running-vendor: %d SMs exceeds the %d SMs of %s",
                              "request.running_vendor.gemm_sms: %d exceeds the %d SMs of %s", r->run_gemm_sms,
                              hw->n_sms, hw->name);
    /* The two-phase sweep when only the first rows are shown; a curve needs every point, and the
     * vendor split the caller runs may be slower than the static default, so that the pick may be
     * any configuration faster than it. */
    sp->top =
        r->top > 0 && r->top <= DUET_SWEEP_TOP_MAX && !r->every_point && r->run_gemm_sms == 0 ? (int32_t)r->top : 0;
    return DUET_OK;
}

duet_status_t duet__request_resolve_workload(duet__request_t *r)
{
    r->usage = 0;
    DUET_CHECK(duet__req_hw(r));
    return duet__req_workload(r);
}

duet_status_t duet__request_resolve_op(duet__request_t *r)
{
    r->usage = 0;
    if (r->op != DUET__OP_PREDICT)
        return duet__req_config(r);
    DUET_CHECK(duet__req_policy(r));
    return duet__req_sweep(r);
}

duet_status_t duet__request_resolve(duet__request_t *r)
{
    DUET_CHECK(duet__request_resolve_workload(r));
    return duet__request_resolve_op(r);
}

duet_status_t duet__request_predict(const duet__request_t *r, duet__predicted_t *p)
{
    memset(p, 0, sizeof(*p));
    duet_sim_ws_t *ws = NULL;
    DUET_CHECK(duet_sim_ws_create(&ws));
    duet_status_t st = duet_sweep_run(ws, &r->hw, &r->wl, &r->sp, &p->res);
    if (st >= 0) {
        st = duet__predict_decide(ws, &r->hw, &r->wl, &r->sp, &p->res, r->run_gemm_sms, r->run_comm_ctas, &p->dec);
        if (st < 0)
            duet_sweep_result_free(&p->res);
    }
    duet_sim_ws_destroy(ws);
    if (st < 0)
        return st;
    p->shown = r->top == 0 || (size_t)r->top > p->res.n ? p->res.n : (size_t)r->top;
    st = duet__predict_emit_text(r->emit, &r->hw, &r->ver, &r->wl, &p->res, p->settings, sizeof(p->settings));
    if (st < 0)
        duet__predicted_free(p);
    return st;
}

cJSON *duet__request_predict_cjson(const duet__request_t *r, const duet__predicted_t *p)
{
    return duet__predict_cjson(&r->hw, &r->wl, &r->sp, &p->res, &p->dec, p->shown, r->emit,
                               r->emit >= 0 ? &r->lim : NULL, p->settings);
}

void duet__predicted_free(duet__predicted_t *p)
{
    duet_decision_free(&p->dec);
    duet_sweep_result_free(&p->res);
    memset(p, 0, sizeof(*p));
}
