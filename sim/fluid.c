/*
 * Policy "fluid": shared resources divided among the running tiles with max-min fairness.
 *
 * Every running tile is a flow with a full speed (1 = the tile's uncontended time from the cost
 * model) and a demand on three shared resources of the GPU per unit of speed: link out, link
 * in and HBM (bytes/s). Speeds are the max-min fair allocation (progressive filling, as in
 * SimGrid's network model): all unconstrained tiles speed up together until a resource
 * saturates or a tile reaches its own bound (1, or less for a GEMM tile on an SM shared with
 * comm CTAs); the tiles of that bottleneck are frozen and the rest go on. The allocation is
 * re-solved whenever a tile starts or ends. The solver (sim/maxmin.c) knows only variables,
 * capacities and bounds; this file turns tiles, links, HBM and shared SMs into them.
 *
 * The link's capacity depends on the bytes in flight on it (docs/model.md): few CTAs cannot
 * fill it, which is what makes the push bandwidth saturate at 16-32 CTAs on H200.
 *
 * CTAs move in cohorts (sim/internal.h): CTAs that start together on one queue run identical
 * tiles at identical speeds, so they stay in lockstep until a queue cannot serve them all; then
 * the cohort splits. One event then stands for a whole wave of tiles, which is what makes a
 * sweep of thousands of configurations take milliseconds. Events at one instant are handled in
 * the order they were scheduled (duet__event_before), so runs are deterministic.
 *
 * The CTAs, their kernels, home queues and stealing are the plan's (duet_plan_t.kernel): the
 * same launch the backend makes (tests/sim/test_geometry.c).
 *
 * Copy mode: the comm queue's entries are copies and its workers the plan's copy streams, which
 * hold no SM. A copy is a flow like a comm tile (link out and in, HBM) at full speed at one copy
 * engine's rate; more running copies than the profile's copy engines share them; the link's
 * capacity is its peak (an engine keeps it full); and while copies run the GEMM's tiles slow by
 * ce_gemm_stretch (the copies' traffic in the memory system beyond the HBM bytes the solver shares).
 */
#include <math.h>
#include <string.h>

#include "base/base.h"
#include "sim/internal.h"

enum { ST_DEQ = 0, ST_RUN = 1, ST_PENDING = 2, ST_DONE = 3 };
enum { R_OUT = 0, R_IN = 1, R_HBM = 2, R_COUNT = 3 };

#define US 1e-6
/* The comm drain (backend/kernels.h) claims its next queue position while the current tile runs,
 * unless fewer than this many grids' worth of tiles remain after the current one. */
#define DUET__COMM_PREFETCH_GRIDS 2

/* Per-run constants: tile prices and resource demands. */
typedef struct duet__fluid {
    const duet_hw_t *hw;
    const duet_plan_t *plan;
    duet_sim_ws_t *ws;
    duet_trace_t *trace;
    double t_tile[DUET_QUEUE_COUNT]; /* seconds at full speed (GEMM: a whole C tile's, or a K part's) */
    /* Stream-K (plan gemm.split_from > 0): GEMM positions from part_from on are K parts, priced
     * apart (duet_cost_gemm_tile_kind); part_from is past the queue's end otherwise. */
    int64_t part_from;
    double t_part;
    double use_part[R_COUNT];
    double t_pull_comm;                    /* seconds of a comm tile's t_tile spent on remote-load round trips */
    double use[DUET_QUEUE_COUNT][R_COUNT]; /* bytes/s per tile at full speed */
    double inflight_out, inflight_in;      /* bytes in flight per running comm tile */
    int peers_out, peers_in;
    double dequeue[DUET_QUEUE_COUNT]; /* seconds per dequeue */
    int64_t comm_grid;                /* CTAs of the kernel that drains the comm queue */
    int64_t next[DUET_QUEUE_COUNT], len[DUET_QUEUE_COUNT];
    int32_t ncoh;
    uint64_t seq;
    double now;
    int64_t events;
    /* concurrent-mode residency */
    int32_t shared_sms;   /* SMs holding a GEMM CTA and comm CTAs */
    int32_t shared_sms0;  /* ... at launch: the co-resident comm CTAs are spread over these */
    int32_t freed_slots;  /* comm CTA slots opened by exited GEMM CTAs, not yet used */
    int32_t next_free_sm; /* for the trace: the next freed SM a pending CTA lands on */
    int32_t gemm_ctas;    /* GEMM-kernel CTAs, for the SM numbering of pending comm CTAs */
    int copy;             /* copy mode: the comm queue is the copy engines' (DUET_ROLE_COPY) */
    /* results */
    double g_fin, c_fin, g_busy, c_busy;
    int64_t stolen[DUET_QUEUE_COUNT];
} duet__fluid_t;

static duet__cohort_t *duet__new_cohort(duet__fluid_t *F, int32_t off, int32_t k, int32_t home, int32_t kernel,
                                        int32_t shared, int32_t state)
{
    duet__cohort_t *c = &F->ws->cohorts[F->ncoh++];
    memset(c, 0, sizeof(*c));
    c->off = off;
    c->k = k;
    c->home = home;
    c->queue = home;
    c->kernel = kernel;
    c->steal = F->plan->kernel[kernel].steal;
    c->shared = shared;
    c->state = state;
    return c;
}

/*
 * The order of events, and the one place that defines it: by time; events at one instant (times
 * within DUET__SIM_PRECISION, duet__time_eq) in the order they were scheduled. Every scheduled
 * event takes a new sequence number (duet__issue, duet__dequeue_done), so the order is total.
 */
static int duet__same_instant(double a, double b)
{
    return duet__time_eq(a, b, DUET__SIM_PRECISION);
}

static int duet__event_before(const duet__cohort_t *a, const duet__cohort_t *b)
{
    if (!duet__same_instant(a->t_event, b->t_event))
        return a->t_event < b->t_event;
    return a->seq < b->seq;
}

/*
 * A cohort asks its current queue for one tile per member at time `now`. The answer is known
 * now (the tile ids are claimed in processing order); the members are busy for one dequeue.
 * If the queue can serve only some members, the cohort splits: the first ones got tiles, the
 * rest found the queue empty after the same dequeue cost.
 */
static void duet__issue(duet__fluid_t *F, int32_t ci, int hidden)
{
    duet__cohort_t *c = &F->ws->cohorts[ci];
    int32_t q = c->queue;
    double deq = hidden ? 0.0 : F->dequeue[q];
    int64_t avail = F->len[q] - F->next[q];
    int32_t got = avail >= c->k ? c->k : (int32_t)(avail > 0 ? avail : 0);
    if (got > 0 && got < c->k) {
        duet__cohort_t *rest = duet__new_cohort(F, c->off + got, c->k - got, c->home, c->kernel, c->shared, ST_DEQ);
        c = &F->ws->cohorts[ci]; /* the array does not move, but keep the pointer honest */
        rest->queue = q;
        rest->switched = c->switched;
        rest->claimed = 0;
        rest->t_event = F->now + deq;
        rest->seq = F->seq++;
        c->k = got;
    }
    c->state = ST_DEQ;
    c->claimed = got > 0;
    if (got > 0) {
        c->tile0 = F->next[q];
        F->next[q] += got;
    }
    c->t_event = F->now + deq;
    c->seq = F->seq++;
    /* Stream-K: a claim that runs from whole C tiles into K parts splits where the parts begin,
     * so that each cohort runs tiles of one price. */
    if (q == DUET_QUEUE_GEMM && got > 0 && c->tile0 < F->part_from && c->tile0 + got > F->part_from) {
        int32_t whole = (int32_t)(F->part_from - c->tile0);
        duet__cohort_t *parts = duet__new_cohort(F, c->off + whole, got - whole, c->home, c->kernel, c->shared, ST_DEQ);
        c = &F->ws->cohorts[ci];
        parts->queue = q;
        parts->switched = c->switched;
        parts->claimed = 1;
        parts->tile0 = F->part_from;
        parts->t_event = c->t_event;
        parts->seq = F->seq++;
        c->k = whole;
    }
}

/* Comm CTAs waiting for an SM (concurrent mode) start on the slots exited GEMM CTAs freed. */
static void duet__start_pending(duet__fluid_t *F)
{
    for (int32_t i = 0; i < F->ncoh && F->freed_slots > 0; i++) {
        duet__cohort_t *c = &F->ws->cohorts[i];
        if (c->state != ST_PENDING)
            continue;
        int32_t n = c->k <= F->freed_slots ? c->k : F->freed_slots;
        int32_t ci = i;
        if (n < c->k) {
            duet__cohort_t *rest = duet__new_cohort(F, c->off + n, c->k - n, c->home, c->kernel, 0, ST_PENDING);
            (void)rest;
            F->ws->cohorts[ci].k = n;
        }
        F->freed_slots -= n;
        c = &F->ws->cohorts[ci];
        for (int32_t j = 0; j < n; j++) {
            int32_t cta = F->ws->members[c->off + j];
            F->ws->sm_of[cta] = F->next_free_sm;
            F->next_free_sm = F->next_free_sm + 1 < F->gemm_ctas ? F->next_free_sm + 1 : 0;
        }
        duet__issue(F, ci, 0);
    }
}

/* The dequeue of cohort ci returned at F->now. */
static duet_status_t duet__dequeue_done(duet__fluid_t *F, int32_t ci)
{
    duet__cohort_t *c = &F->ws->cohorts[ci];
    if (c->claimed) {
        c->state = ST_RUN;
        c->rem = c->queue == DUET_QUEUE_GEMM && c->tile0 >= F->part_from ? F->t_part : F->t_tile[c->queue];
        c->t_start = F->now;
        c->seq = F->seq++;
        return DUET_OK;
    }
    /* The queue was empty: steal from the other one once, or leave. */
    if (c->steal && !c->switched) {
        c->switched = 1;
        c->queue = 1 - c->queue;
        duet__issue(F, ci, 0);
        return DUET_OK;
    }
    c->state = ST_DONE;
    if (c->kernel == DUET_KERNEL_GEMM && F->plan->kernel[DUET_KERNEL_COMM].grid > 0) {
        /* GEMM CTAs leave their SMs: room for the comm kernel's CTAs still waiting for one. */
        int32_t per_sm = F->hw->comm_ctas_per_sm - (c->shared ? F->hw->comm_coresident : 0);
        F->freed_slots += c->k * per_sm;
        if (c->shared)
            F->shared_sms -= c->k;
        duet__start_pending(F);
    }
    return DUET_OK;
}

/* The tiles of cohort ci ended at F->now: account for them, then dequeue again. */
static duet_status_t duet__tile_done(duet__fluid_t *F, int32_t ci)
{
    duet__cohort_t *c = &F->ws->cohorts[ci];
    int32_t q = c->queue;
    double dur = F->now - c->t_start;
    int stolen = q != c->home;
    if (q == DUET_QUEUE_GEMM) {
        F->g_busy += dur * c->k;
        F->g_fin = F->now;
    } else {
        F->c_busy += dur * c->k;
        F->c_fin = F->now;
    }
    F->stolen[q] += stolen ? c->k : 0;
    for (int32_t j = 0; j < c->k; j++) {
        int32_t cta = F->ws->members[c->off + j];
        F->ws->cta_busy[cta] += dur;
        if (F->trace != NULL) {
            duet_trace_rec_t r = {cta, F->ws->sm_of[cta], q, stolen, c->tile0 + j, c->t_start, F->now};
            DUET_CHECK(duet_trace_add(F->trace, &r));
        }
    }
    /* A comm CTA claimed its next position during the tile when the queue still held more than
     * DUET__COMM_PREFETCH_GRIDS grids' worth of tiles past it: that atomic's round trip was
     * spent beside the tile, and the next tile starts at once. Near the end of the queue (and
     * on the GEMM queue, which does not prefetch) the dequeue follows the tile. */
    int hidden = q == DUET_QUEUE_COMM && c->tile0 + DUET__COMM_PREFETCH_GRIDS * F->comm_grid < F->len[q];
    duet__issue(F, ci, hidden);
    return DUET_OK;
}

/*
 * The speeds of the running cohorts: the max-min fair allocation (sim/maxmin.h) of the link out,
 * the link in and HBM, each cohort a variable of k tiles bounded by what slows its tiles beside
 * the others (remote loads behind GEMM traffic, SM issue slots shared with comm CTAs).
 */
static void duet__solve(duet__fluid_t *F)
{
    duet_sim_ws_t *ws = F->ws;
    double f_out = 0, f_in = 0, comm_on_shared = 0, gemm_running = 0, comm_running = 0;
    for (int32_t i = 0; i < F->ncoh; i++) {
        duet__cohort_t *c = &ws->cohorts[i];
        if (c->state == ST_RUN && c->queue == DUET_QUEUE_COMM) {
            f_out += c->k * F->inflight_out;
            f_in += c->k * F->inflight_in;
            comm_on_shared += c->shared ? c->k : 0;
            comm_running += c->k;
        } else if (c->state == ST_RUN) {
            gemm_running += c->k;
        }
    }
    double comm_bound = 1.0, gemm_bound = 1.0;
    if (F->copy) {
        /* Copies: more running than the profile's copy engines share them, and while any runs the
         * GEMM's tiles slow by ce_gemm_stretch. Their bytes in flight count as unbounded (an
         * engine keeps the link full), so the link gives its peak. */
        comm_bound = comm_running > F->hw->ce_engines ? F->hw->ce_engines / comm_running : 1.0;
        gemm_bound = comm_running > 0 ? 1.0 / (1.0 + F->hw->ce_gemm_stretch) : 1.0;
    } else {
        /* The comm tiles' speed beside the running GEMM tiles (their remote loads wait behind the
         * GEMM's traffic; model/cost.c prices it). */
        comm_bound = duet_cost_comm_beside_gemm(F->hw, F->t_tile[DUET_QUEUE_COMM], F->t_pull_comm, gemm_running);
    }
    duet__maxmin_t mm;
    mm.n_cons = R_COUNT;
    mm.cap[R_OUT] = duet_cost_link_capacity(F->hw, f_out, F->peers_out);
    mm.cap[R_IN] = duet_cost_link_capacity(F->hw, f_in, F->peers_in);
    mm.cap[R_HBM] = F->hw->hbm_gbs * 1e9;
    /* A GEMM tile on an SM where comm CTAs run gives up their share of its issue slots
     * (model/cost.c). The co-resident comm CTAs were spread evenly over the SMs shared at launch,
     * and stay there when a GEMM CTA exits: each remaining GEMM tile still has comm_on_shared /
     * shared_sms0 beside it (dividing by the SMs still shared would crowd the exited SMs' comm CTAs
     * onto them). */
    double shared_bound = F->shared_sms > 0 ? duet_cost_gemm_beside_comm(F->hw, comm_on_shared, F->shared_sms0) : 1.0;

    mm.var = ws->mm_var;
    mm.n_var = 0;
    for (int32_t i = 0; i < F->ncoh; i++) {
        const duet__cohort_t *c = &ws->cohorts[i];
        if (c->state != ST_RUN)
            continue;
        duet__maxmin_var_t *v = &mm.var[mm.n_var++];
        v->weight = c->k;
        v->bound = c->queue == DUET_QUEUE_COMM ? comm_bound : c->shared ? shared_bound : gemm_bound;
        v->use = c->queue == DUET_QUEUE_GEMM && c->tile0 >= F->part_from ? F->use_part : F->use[c->queue];
    }
    duet__maxmin_solve(&mm);
    for (int32_t i = 0, n = 0; i < F->ncoh; i++) {
        duet__cohort_t *c = &ws->cohorts[i];
        if (c->state != ST_RUN)
            continue;
        c->speed = mm.var[n++].value;
        c->t_event = F->now + c->rem / c->speed;
    }
}

/*
 * Place the plan's CTAs on the SMs and create the initial cohorts. The kernel with the GEMM tile
 * holds one CTA per SM (its shared memory), on the first SMs. The block scheduler spreads the comm
 * kernel breadth-first over the idle SMs, up to comm_ctas_per_sm each, then beside the GEMM
 * kernel's CTAs, up to comm_coresident each; the rest wait for an SM. Only a kernel without CTAs
 * on the comm queue (concurrent, vendor) runs beside the comm kernel, so the CTAs that share
 * their SMs are GEMM-home ones.
 */
static void duet__launch(duet__fluid_t *F)
{
    const duet_plan_t *p = F->plan;
    const duet_hw_t *hw = F->hw;
    duet_sim_ws_t *ws = F->ws;
    const duet_kernel_geom_t *kg = &p->kernel[DUET_KERNEL_GEMM], *kc = &p->kernel[DUET_KERNEL_COMM];
    int32_t g = kg->grid, h = kg->gemm_home, m = kc->grid, base = kc->cta_base;
    if (kc->role == DUET_ROLE_COPY) {
        /* Copy mode: the GEMM kernel on its SMs, the copy streams on none (SM -1). */
        for (int32_t cta = 0; cta < p->n_ctas; cta++) {
            ws->members[cta] = cta;
            ws->sm_of[cta] = cta < g ? cta : -1;
        }
        F->gemm_ctas = g > 0 ? g : 1;
        if (g > 0)
            duet__new_cohort(F, 0, g, DUET_QUEUE_GEMM, DUET_KERNEL_GEMM, 0, ST_DEQ);
        if (m > 0)
            duet__new_cohort(F, base, m, DUET_QUEUE_COMM, DUET_KERNEL_COMM, 0, ST_DEQ);
        return;
    }
    int32_t idle = hw->n_sms - g;
    int32_t on_idle = m < idle * hw->comm_ctas_per_sm ? m : idle * hw->comm_ctas_per_sm;
    int32_t slots_shared = g * hw->comm_coresident;
    int32_t on_shared = m - on_idle < slots_shared ? m - on_idle : slots_shared;
    int32_t pending = m - on_idle - on_shared;
    F->shared_sms = hw->comm_coresident > 0 ? (int32_t)duet_cdiv(on_shared, hw->comm_coresident) : 0;
    F->shared_sms0 = F->shared_sms;
    F->gemm_ctas = g > 0 ? g : 1;
    int32_t g_excl = h - F->shared_sms;
    for (int32_t cta = 0; cta < p->n_ctas; cta++)
        ws->members[cta] = cta;
    for (int32_t i = 0; i < g; i++)
        ws->sm_of[i] = i;
    for (int32_t j = 0; j < on_idle; j++)
        ws->sm_of[base + j] = g + j % (idle > 0 ? idle : 1);
    for (int32_t j = 0; j < on_shared; j++)
        ws->sm_of[base + on_idle + j] = g_excl + j % (F->shared_sms > 0 ? F->shared_sms : 1);
    for (int32_t j = 0; j < pending; j++)
        ws->sm_of[base + on_idle + on_shared + j] = -1;
    if (g_excl > 0)
        duet__new_cohort(F, 0, g_excl, DUET_QUEUE_GEMM, DUET_KERNEL_GEMM, 0, ST_DEQ);
    if (F->shared_sms > 0)
        duet__new_cohort(F, g_excl, F->shared_sms, DUET_QUEUE_GEMM, DUET_KERNEL_GEMM, 1, ST_DEQ);
    if (g - h > 0)
        duet__new_cohort(F, h, g - h, DUET_QUEUE_COMM, DUET_KERNEL_GEMM, 0, ST_DEQ);
    if (on_idle > 0)
        duet__new_cohort(F, base, on_idle, DUET_QUEUE_COMM, DUET_KERNEL_COMM, 0, ST_DEQ);
    if (on_shared > 0)
        duet__new_cohort(F, base + on_idle, on_shared, DUET_QUEUE_COMM, DUET_KERNEL_COMM, 1, ST_DEQ);
    if (pending > 0)
        duet__new_cohort(F, base + on_idle + on_shared, pending, DUET_QUEUE_COMM, DUET_KERNEL_COMM, 0, ST_PENDING);
    F->next_free_sm = 0;
}

/* Prices and resource demands of the two kinds of tile. */
static void duet__prices(duet__fluid_t *F)
{
    const duet_hw_t *hw = F->hw;
    const duet_plan_t *p = F->plan;
    memset(F->use, 0, sizeof(F->use));
    memset(F->use_part, 0, sizeof(F->use_part));
    F->part_from = p->gemm.split_from > 0 ? p->gemm.split_from : INT64_MAX;
    if (p->gemm.tiles > 0) {
        duet_gemm_cost_t gc;
        int64_t active = duet_plan_gemm_concurrent(p);
        duet_cost_gemm_tile_kind(hw, p, active, 0, &gc);
        F->t_tile[DUET_QUEUE_GEMM] = gc.t_sm;
        F->use[DUET_QUEUE_GEMM][R_HBM] = gc.hbm_bytes / gc.t_sm;
        if (p->gemm.split_from > 0) {
            duet_cost_gemm_tile_kind(hw, p, active, 1, &gc);
            F->t_part = gc.t_sm;
            F->use_part[R_HBM] = gc.hbm_bytes / gc.t_sm;
        }
    }
    if (p->comm.queue_len > 0) {
        duet_comm_cost_t cc;
        duet_cost_comm_tile(hw, p, &cc);
        double t = cc.t_alone;
        F->t_tile[DUET_QUEUE_COMM] = t;
        F->t_pull_comm = cc.t_pull;
        /* Symmetric collectives: what peers push into us and pull from us mirrors our own
         * traffic, so both directions carry push + pull. Broadcast: the root only sends. */
        int sym = p->wl.coll != DUET_COLL_BROADCAST;
        double out = cc.traffic.push_bytes + (sym ? cc.traffic.pull_bytes : 0);
        double in = cc.traffic.pull_bytes + (sym ? cc.traffic.push_bytes : 0);
        F->use[DUET_QUEUE_COMM][R_OUT] = out / t;
        F->use[DUET_QUEUE_COMM][R_IN] = in / t;
        /* A copy engine's HBM bytes weigh less than the SMs' (duet_cost_copy_hbm_weight). */
        const double hbm_scale = F->copy ? duet_cost_copy_hbm_weight(hw) : 1.0;
        F->use[DUET_QUEUE_COMM][R_HBM] = cc.hbm_bytes / t * hbm_scale;
        double f_push = F->copy ? INFINITY : duet_cost_push_inflight(hw), f_pull = hw->cta_pull_inflight_kib * 1024.0;
        F->inflight_out = (cc.traffic.push_bytes > 0 ? f_push : 0) + (sym && cc.traffic.pull_bytes > 0 ? f_pull : 0);
        F->inflight_in = (cc.traffic.pull_bytes > 0 ? f_pull : 0) + (sym && cc.traffic.push_bytes > 0 ? f_push : 0);
        int peers = cc.traffic.push_peers > cc.traffic.pull_peers ? cc.traffic.push_peers : cc.traffic.pull_peers;
        /* Copy mode: each copy has one peer; the streams address as many at once. */
        if (F->copy && p->wl.world > 1)
            peers = p->comm_grid < p->wl.world - 1 ? p->comm_grid : p->wl.world - 1;
        F->peers_out = F->peers_in = peers > 0 ? peers : 1;
    }
    /* The vendor GEMM schedules its tiles statically: no dequeue. */
    F->dequeue[DUET_QUEUE_GEMM] = p->kernel[DUET_KERNEL_GEMM].role == DUET_ROLE_VENDOR ? 0.0 : hw->dequeue_gemm_us * US;
    /* The copies are assigned to their streams when enqueued: no dequeue either. */
    F->dequeue[DUET_QUEUE_COMM] = F->copy ? 0.0 : hw->dequeue_comm_us * US;
    F->len[DUET_QUEUE_GEMM] = p->gemm.tiles;
    F->len[DUET_QUEUE_COMM] = p->comm.queue_len;
    F->comm_grid = p->comm_grid;
}

/* A run's constants and its CTAs at launch, before the first dequeue. */
static duet_status_t duet__fluid_start(duet__fluid_t *F, duet_sim_ws_t *ws, const duet_hw_t *hw,
                                       const duet_plan_t *plan, duet_trace_t *trace)
{
    DUET_CHECK(duet__sim_ws_reserve(ws, (size_t)plan->n_ctas));
    memset(F, 0, sizeof(*F));
    F->hw = hw;
    F->plan = plan;
    F->ws = ws;
    F->trace = trace;
    F->copy = plan->kernel[DUET_KERNEL_COMM].role == DUET_ROLE_COPY;
    memset(ws->cta_busy, 0, (size_t)plan->n_ctas * sizeof(double));
    duet__prices(F);
    /* The kernel starts after the launch latency. An operation with a collective also pays the
     * barriers that make its ranks enter together and its outputs visible everywhere at the end
     * (device-side flags across the fabric); the time is the same wherever it falls, so it is
     * charged up front with the launch. A GEMM alone has none. */
    F->now = hw->launch_us * US + (plan->comm.queue_len > 0 ? hw->comm_sync_us * US : 0.0);
    /* The operand staging pass (duet_plan_t.stage_k) runs before the kernels on the GEMM's
     * stream; concurrent mode's comm kernel could start beside it, but the pass is short (a
     * copy of the operands at the HBM rate) and is charged to the whole operation here. */
    F->now += duet_cost_stage_s(hw, plan);
    /* Copy mode's fork and join of its copy streams, charged up front as the barriers are. */
    F->now += F->copy && plan->comm.queue_len > 0 ? hw->ce_op_us * US : 0.0;
    duet__launch(F);
    return DUET_OK;
}

static duet_status_t duet__fluid_run(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_plan_t *plan,
                                     duet_trace_t *trace, duet_sim_result_t *res_p)
{
    duet__fluid_t F;
    DUET_CHECK(duet__fluid_start(&F, ws, hw, plan, trace));
    for (int32_t i = 0; i < F.ncoh; i++)
        if (ws->cohorts[i].state == ST_DEQ)
            duet__issue(&F, i, 0);

    for (;;) {
        /* The next event; none left: every CTA has exited. */
        int32_t first = -1;
        for (int32_t i = 0; i < F.ncoh; i++) {
            const duet__cohort_t *c = &ws->cohorts[i];
            if ((c->state == ST_DEQ || c->state == ST_RUN) && (first < 0 || duet__event_before(c, &ws->cohorts[first])))
                first = i;
        }
        if (first < 0)
            break;
        double tn = ws->cohorts[first].t_event;
        if (ws->t_stop > 0 && tn > ws->t_stop) {
            /* Past the caller's bar: the makespan is later still (sim/internal.h, t_stop). */
            F.now = INFINITY;
            break;
        }
        double dt = tn - F.now;
        F.now = tn;
        /* Advance the running tiles and gather every cohort whose event is at this instant. */
        int32_t ndue = 0;
        for (int32_t i = 0; i < F.ncoh; i++) {
            duet__cohort_t *c = &ws->cohorts[i];
            if (c->state == ST_RUN)
                c->rem -= c->speed * dt;
            if ((c->state == ST_DEQ || c->state == ST_RUN) && duet__same_instant(c->t_event, tn)) {
                if (c->state == ST_RUN)
                    c->rem = 0; /* the tile ended; what is left is rounding */
                ws->due[ndue++] = i;
            }
        }
        /* Handle them in event order (by insertion: few events share an instant). */
        for (int32_t a = 1; a < ndue; a++) {
            int32_t x = ws->due[a], b = a;
            while (b > 0 && duet__event_before(&ws->cohorts[x], &ws->cohorts[ws->due[b - 1]])) {
                ws->due[b] = ws->due[b - 1];
                b--;
            }
            ws->due[b] = x;
        }
        for (int32_t a = 0; a < ndue; a++) {
            int32_t i = ws->due[a];
            F.events++;
            duet_status_t st = ws->cohorts[i].state == ST_RUN ? duet__tile_done(&F, i) : duet__dequeue_done(&F, i);
            if (st < 0)
                return st;
        }
        duet__solve(&F);
    }

    duet_sim_result_t r;
    memset(&r, 0, sizeof(r));
    r.makespan_s = F.now;
    r.gemm_finish_s = F.g_fin;
    r.comm_finish_s = F.c_fin;
    r.gemm_busy_s = F.g_busy;
    r.comm_busy_s = F.c_busy;
    r.stolen_gemm = F.stolen[DUET_QUEUE_GEMM];
    r.stolen_comm = F.stolen[DUET_QUEUE_COMM];
    r.events = F.events;
    r.n_ctas = plan->n_ctas;
    r.cta_busy_s = ws->cta_busy;
    if (trace != NULL) {
        trace->n_ctas = plan->n_ctas;
        trace->makespan_s = r.makespan_s;
    }
    *res_p = r;
    return DUET_OK;
}

/*
 * The CTAs as the run starts them: the launch's cohorts, member by member. The count is of the
 * members, so a CTA placed in two cohorts shows as one worker too many, and one in none keeps
 * cta -1.
 */
static duet_status_t duet__fluid_workers(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_plan_t *plan, int32_t *n_p)
{
    duet__fluid_t F;
    DUET_CHECK(duet__fluid_start(&F, ws, hw, plan, NULL));
    const duet_sim_worker_t none = {-1, -1, -1, -1, -1};
    for (int32_t cta = 0; cta < plan->n_ctas; cta++)
        ws->workers[cta] = none;
    int32_t n = 0;
    for (int32_t i = 0; i < F.ncoh; i++) {
        const duet__cohort_t *c = &ws->cohorts[i];
        for (int32_t j = 0; j < c->k; j++, n++) {
            int32_t cta = ws->members[c->off + j];
            duet_sim_worker_t w = {cta, c->kernel, c->home, c->steal, ws->sm_of[cta]};
            ws->workers[cta] = w;
        }
    }
    *n_p = n;
    return DUET_OK;
}

const duet_sim_policy_ops_t duet_sim_policy_fluid = {
    "fluid",
    "link, HBM and SM shares divided among running tiles by max-min fairness, re-solved at every start and end",
    duet__fluid_run,
    duet__fluid_workers,
};
