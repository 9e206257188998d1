/*
 * Policy "frozen": the reference design's scheduler (iris.concurrent predictor.py
 * schedule_makespan, in predictor.py), reproduced bit for bit (its 41 golden cases,
 * tests/data/seed-golden.json), priced by the reference's rules in one of two ways:
 *  - policy "frozen" (DUET_FROZEN_PRICING_DUET, the default): duet's adaptation, which spreads the
 *    full-chip GEMM time over min(num_wgs, tiles) and leaves out the reference's fused-kernel
 *    factor 1.44 (docs/model.md, last section). Its makespans are not the reference's;
 *  - policy "frozen-reference" (DUET_FROZEN_PRICING_REFERENCE): the reference's pricing unchanged
 *    (the 1.44 factor, the interference term, spreading over num_wgs). Only the full-chip GEMM
 *    time differs: duet's closed form stands in for origami.
 * The reference's predict_split around this (its candidate range, strict-< split pick, and the
 * 20 % tile margin gate) is sim/frozen_ref.c; given the reference's own full-chip GEMM times it
 * reproduces the reference's 60 golden predictions (tests/data/seed-golden-predict.json).
 *
 * Semantics: every worker (CTA) starts free at t = 0; the earliest free worker (ties: lowest
 * id) takes a tile from its home queue (GEMM if id < gemm_wgs), else from the other queue. A
 * GEMM tile lasts lg + c_atomic_gemm; a comm tile lasts max(active, sat) * lc_unit +
 * c_atomic_comm, frozen at dequeue with `active` counting the comm tiles running at that
 * instant, the new one included. A worker whose comm tile ends leaves the active count when it
 * is next picked.
 *
 * Speed: the reference kept every worker in one binary heap. Here GEMM durations are all
 * equal, so workers coming back from a GEMM tile return in the order they left: they sit in a
 * FIFO ring (O(1)), and only workers running comm tiles (whose durations vary) sit in a small
 * heap. The next worker is the smaller (time, id) of the ring's head and the heap's top, which
 * is exactly the reference's heap order, so the floating-point results are identical.
 */
#include <math.h>
#include <string.h>

#include "base/base.h"
#include "sim/internal.h"

#define LAST_NONE 0
#define LAST_GEMM 1
#define LAST_COMM 2

static inline int duet__ent_less(const duet__frozen_ent_t *a, const duet__frozen_ent_t *b)
{
    return a->t < b->t || (a->t == b->t && a->w < b->w);
}

static void duet__heap_push(duet__frozen_ent_t *h, int32_t *n, duet__frozen_ent_t e)
{
    int32_t i = (*n)++;
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (!duet__ent_less(&e, &h[p]))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static duet__frozen_ent_t duet__heap_pop(duet__frozen_ent_t *h, int32_t *n)
{
    duet__frozen_ent_t top = h[0];
    duet__frozen_ent_t last = h[--(*n)];
    int32_t i = 0, size = *n;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= size)
            break;
        if (c + 1 < size && duet__ent_less(&h[c + 1], &h[c]))
            c++;
        if (!duet__ent_less(&h[c], &last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (size > 0)
        h[i] = last;
    return top;
}

duet_status_t duet_sim_frozen_schedule(duet_sim_ws_t *ws, const duet_frozen_params_t *p, duet_trace_t *trace,
                                       duet_sim_result_t *res_p)
{
    if (p->num_wgs < 1 || p->gemm_wgs < 0 || p->gemm_wgs > p->num_wgs || p->n_gemm < 0 || p->n_comm < 0 ||
        !(p->lg >= 0) || !(p->lc_unit >= 0) || !(p->c_atomic_gemm >= 0) || !(p->c_atomic_comm >= 0) || p->comm_sat < 1)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "frozen schedule: need num_wgs >= 1, 0 <= gemm_wgs <= num_wgs, non-negative counts and "
                           "durations, comm_sat >= 1");
    DUET_CHECK(duet__sim_ws_reserve(ws, (size_t)p->num_wgs));
    const int32_t n = p->num_wgs;
    duet__frozen_ent_t *ring = ws->ring, *heap = ws->heap;
    int32_t head = 0, count = n, hn = 0;
    for (int32_t w = 0; w < n; w++) {
        ring[w].t = 0.0;
        ring[w].w = w;
        ring[w].last = LAST_NONE;
    }
    memset(ws->cta_busy, 0, (size_t)n * sizeof(double));

    int64_t g_left = p->n_gemm, c_left = p->n_comm, events = 0, stolen_g = 0, stolen_c = 0;
    int64_t active = 0;
    double makespan = 0.0, g_fin = 0.0, c_fin = 0.0, g_busy = 0.0, c_busy = 0.0;
    const double sat = (double)p->comm_sat;
    duet_status_t st = DUET_OK;

    while (g_left > 0 || c_left > 0) {
        duet__frozen_ent_t cur;
        if (hn > 0 && (count == 0 || duet__ent_less(&heap[0], &ring[head]))) {
            cur = duet__heap_pop(heap, &hn);
        } else {
            cur = ring[head];
            head = head + 1 == n ? 0 : head + 1;
            count--;
        }
        events++;
        if (cur.last == LAST_COMM)
            active--;
        int home_gemm = cur.w < p->gemm_wgs;
        int take_gemm = home_gemm ? g_left > 0 : c_left == 0;
        double nt;
        int64_t tile;
        if (take_gemm) {
            tile = p->n_gemm - g_left;
            g_left--;
            nt = cur.t + p->lg + p->c_atomic_gemm;
            stolen_g += !home_gemm;
            g_busy += nt - cur.t;
            if (nt > g_fin)
                g_fin = nt;
            /* Back into the ring, which stays sorted: pops come in time order and every GEMM
             * task adds the same duration. Equal times after rounding are re-ordered by id. */
            int32_t pos = head + count;
            if (pos >= n)
                pos -= n;
            count++;
            for (;;) {
                int32_t prev = pos == 0 ? n - 1 : pos - 1;
                if (pos == head || ring[prev].t != nt || ring[prev].w < cur.w)
                    break;
                ring[pos] = ring[prev];
                pos = prev;
            }
            ring[pos].t = nt;
            ring[pos].w = cur.w;
            ring[pos].last = LAST_GEMM;
        } else {
            tile = p->n_comm - c_left;
            c_left--;
            active++;
            double conc = active > p->comm_sat ? (double)active : sat;
            nt = cur.t + conc * p->lc_unit + p->c_atomic_comm;
            stolen_c += home_gemm;
            c_busy += nt - cur.t;
            if (nt > c_fin)
                c_fin = nt;
            duet__frozen_ent_t e = {nt, cur.w, LAST_COMM};
            duet__heap_push(heap, &hn, e);
        }
        ws->cta_busy[cur.w] += nt - cur.t;
        if (nt > makespan)
            makespan = nt;
        if (trace != NULL) {
            duet_trace_rec_t r = {
                cur.w, cur.w, take_gemm ? DUET_QUEUE_GEMM : DUET_QUEUE_COMM, take_gemm ? !home_gemm : home_gemm, tile,
                cur.t, nt};
            if ((st = duet_trace_add(trace, &r)) < 0)
                return st;
        }
    }
    if (trace != NULL) {
        trace->n_ctas = n;
        trace->makespan_s = makespan;
    }
    duet_sim_result_t r;
    memset(&r, 0, sizeof(r));
    r.makespan_s = makespan;
    r.gemm_finish_s = g_fin;
    r.comm_finish_s = c_fin;
    r.gemm_busy_s = g_busy;
    r.comm_busy_s = c_busy;
    r.stolen_gemm = stolen_g;
    r.stolen_comm = stolen_c;
    r.events = events;
    r.n_ctas = n;
    r.cta_busy_s = ws->cta_busy;
    *res_p = r;
    return DUET_OK;
}

duet_status_t duet_sim_frozen_params_priced(const duet_hw_t *hw, const duet_plan_t *plan, duet_frozen_pricing_t pricing,
                                            duet_frozen_params_t *p_p)
{
    if (plan->cfg.mode != DUET_MODE_FUSED)
        return duet__error(DUET_ERR_UNSUPPORTED,
                           "policy frozen models fused mode only, as the reference design did (use policy fluid)");
    if (pricing != DUET_FROZEN_PRICING_DUET && pricing != DUET_FROZEN_PRICING_REFERENCE)
        return duet__error(DUET_ERR_INVALID_ARG, "frozen pricing %d is not DUET or REFERENCE", (int)pricing);
    duet_frozen_params_t p;
    memset(&p, 0, sizeof(p));
    const double us = 1e-6;
    /* The workers are the plan's CTAs (fused mode: one kernel of num_wgs), and gemm_wgs is the
     * reference's input, the configuration's split, which with a GEMM is the plan's GEMM-home
     * count. A collective alone runs duet's comm kernel with every CTA on the comm queue; the
     * reference kept the split, which with the GEMM queue empty moves no time, only which comm
     * tiles count as stolen (the reference tables of tests/sim/test_frozen_pricing.c). */
    int32_t nw = plan->n_ctas;
    p.num_wgs = nw;
    p.gemm_wgs = plan->cfg.gemm_wgs;
    p.n_gemm = plan->gemm.tiles;
    p.n_comm = plan->comm.queue_len;
    p.c_atomic_gemm = hw->seed_dequeue_gemm_us * us;
    p.c_atomic_comm = hw->seed_dequeue_comm_us * us;
    /* Comm: tile-granular remote bytes at one effective bandwidth, plus the launch floor. */
    double comm_full = 0.0;
    if (p.n_comm > 0) {
        comm_full = plan->remote_bytes_tiles / (hw->seed_link_gbs * 1e9) + hw->seed_launch_us * us;
        p.lc_unit = comm_full / (double)p.n_comm;
    }
    /* GEMM: the whole-chip time on num_wgs CTAs spread over the tiles ("CU-seconds" per tile),
     * slowed by comm-home CTAs in proportion to the comm intensity. Origami priced a GEMM of
     * fewer tiles than CUs as if one tile had the whole chip, which the reference's spreading
     * over num_wgs compensated; duet's stand-in already prices one wave per SM, so duet's pricing
     * spreads fewer tiles than CTAs over the tiles, not over the CTAs, and leaves out the
     * reference's fused-kernel factor (duet's tile cost prices duet's kernel). The reference
     * pricing keeps both as the reference had them. */
    if (p.n_gemm > 0) {
        double t_full = duet_cost_gemm_static_s(hw, plan, nw) - hw->launch_us * us;
        int ref = pricing == DUET_FROZEN_PRICING_REFERENCE;
        double spread = ref || p.n_gemm >= nw ? (double)nw : (double)p.n_gemm;
        p.lg = duet_frozen_ref_lg(t_full, p.n_gemm, spread, nw, plan->cfg.gemm_wgs, comm_full,
                                  ref ? DUET_REF_FUSED_GEMM_MULT : 1.0, hw->seed_alpha);
    }
    int32_t sat = 1;
    if (plan->wl.coll == DUET_COLL_ALL_REDUCE) {
        sat = 2 * hw->seed_sat_channels;
        if (sat > nw)
            sat = nw;
    }
    p.comm_sat = sat > 1 ? sat : 1;
    *p_p = p;
    return DUET_OK;
}

duet_status_t duet_sim_frozen_params(const duet_hw_t *hw, const duet_plan_t *plan, duet_frozen_params_t *p_p)
{
    return duet_sim_frozen_params_priced(hw, plan, DUET_FROZEN_PRICING_DUET, p_p);
}

static duet_status_t duet__frozen_run_priced(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_plan_t *plan,
                                             duet_frozen_pricing_t pricing, duet_trace_t *trace,
                                             duet_sim_result_t *res_p)
{
    duet_frozen_params_t p;
    DUET_CHECK(duet_sim_frozen_params_priced(hw, plan, pricing, &p));
    return duet_sim_frozen_schedule(ws, &p, trace, res_p);
}

static duet_status_t duet__frozen_run(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_plan_t *plan,
                                      duet_trace_t *trace, duet_sim_result_t *res_p)
{
    return duet__frozen_run_priced(ws, hw, plan, DUET_FROZEN_PRICING_DUET, trace, res_p);
}

static duet_status_t duet__frozen_ref_run(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_plan_t *plan,
                                          duet_trace_t *trace, duet_sim_result_t *res_p)
{
    return duet__frozen_run_priced(ws, hw, plan, DUET_FROZEN_PRICING_REFERENCE, trace, res_p);
}

/*
 * The reference's workers: num_wgs of them, one per SM, ids below gemm_wgs on the GEMM queue first.
 * A worker whose home queue is empty takes from the other one (the reference's rule), so each
 * steals. The reference knows one grid: the plan's kernel that has the CTAs. Pricing does not
 * move workers, so both pricings share this.
 */
static duet_status_t duet__frozen_workers(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_plan_t *plan, int32_t *n_p)
{
    duet_frozen_params_t p;
    DUET_CHECK(duet_sim_frozen_params(hw, plan, &p));
    DUET_CHECK(duet__sim_ws_reserve(ws, (size_t)p.num_wgs));
    int32_t kernel = plan->kernel[DUET_KERNEL_GEMM].grid > 0 ? DUET_KERNEL_GEMM : DUET_KERNEL_COMM;
    for (int32_t w = 0; w < p.num_wgs; w++) {
        duet_sim_worker_t x = {w, kernel, w < p.gemm_wgs ? DUET_QUEUE_GEMM : DUET_QUEUE_COMM, 1, w};
        ws->workers[w] = x;
    }
    *n_p = p.num_wgs;
    return DUET_OK;
}

const duet_sim_policy_ops_t duet_sim_policy_frozen = {
    "frozen",
    "the reference design's scheduler, bit for bit, with duet's adaptation of its pricing (fused mode only)",
    duet__frozen_run,
    duet__frozen_workers,
};

const duet_sim_policy_ops_t duet_sim_policy_frozen_reference = {
    "frozen-reference",
    "the reference design's scheduler and pricing unchanged, duet's GEMM time standing in for origami (fused only)",
    duet__frozen_ref_run,
    duet__frozen_workers,
};
