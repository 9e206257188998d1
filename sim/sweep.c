/*
 * Sweeps: simulate every (mode, tile, split) of a workload and rank them. This is the tuner's
 * inner loop, so it allocates once (the result array and the workspace) and then only runs
 * the simulator.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/internal.h"
#include "sim/internal.h"

duet_sweep_params_t duet_sweep_default_params(void)
{
    duet_sweep_params_t p;
    memset(&p, 0, sizeof(p));
    p.policy = &duet_sim_policy_fluid;
    p.modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT) | (1u << DUET_MODE_COPY);
    p.stream_k = 1;
    return p;
}

const char *duet_sweep_rank_str(const duet_sweep_result_t *res, char *buf, size_t n)
{
    size_t t = res->default_ties;
    /* Out of every configuration the sweep covers (n_configs; a result built by hand may give n). */
    size_t total = res->n_configs > 0 ? res->n_configs : res->n;
    char tied[64] = "";
    if (t > 0)
        snprintf(tied, sizeof(tied), "tied with %zu other%s", t, t == 1 ? "" : "s");
    if (res->default_rank == 1) {
        if (t > 0)
            snprintf(buf, n, "rank 1 of %zu; %s for best", total, tied);
        else
            snprintf(buf, n, "rank 1 of %zu; nothing in the sweep beats it", total);
        return buf;
    }
    /* Below 0.1 % the difference is shown with three decimals, so that it never reads "0.0 % faster". */
    double pct = (res->dflt.makespan_s / res->points[0].makespan_s - 1) * 100;
    snprintf(buf, n, "rank %zu of %zu%s%s; the best is %.*f %% faster", res->default_rank, total, t > 0 ? ", " : "",
             tied, pct < 0.1 ? 3 : 1, pct);
    return buf;
}

void duet_sweep_result_free(duet_sweep_result_t *res)
{
    if (res == NULL)
        return;
    free(res->points);
    res->points = NULL;
    res->n = 0;
}

const duet_sweep_point_t *duet_sweep_best(const duet_sweep_result_t *res, uint32_t modes)
{
    /* The points are ranked: the first of a mode is its fastest. */
    for (size_t i = 0; res != NULL && i < res->n; i++)
        if (modes & (1u << res->points[i].cfg.mode))
            return &res->points[i];
    return NULL;
}

duet_config_t duet__sweep_config_base(const duet_hw_t *hw, const duet_sweep_params_t *p, int32_t mode)
{
    duet_config_t c = duet_config_default(hw, mode);
    if (p->cm > 0)
        c.cm = p->cm;
    if (p->cn > 0)
        c.cn = p->cn;
    if (p->group_m > 0)
        c.group_m = p->group_m;
    return c;
}

/* Fill in the configuration of one sweep point. */
static duet_config_t duet__sweep_config(const duet_hw_t *hw, const duet_sweep_params_t *p, int32_t mode,
                                        duet_gemm_tile_t tile, int32_t split_k, int32_t split)
{
    duet_config_t c = duet__sweep_config_base(hw, p, mode);
    c.tile = tile;
    c.split_k = split_k == DUET_SWEEP_STREAM_K ? 1 : split_k;
    c.stream_k = split_k == DUET_SWEEP_STREAM_K;
    /* Fused: `split` CTAs of the grid start on GEMM. Concurrent and vendor: the two grids (or the
     * GEMM's SM target and the comm grid) partition the SMs. Copy: the GEMM on every SM and `split`
     * copy streams. None can disagree. */
    if (mode == DUET_MODE_FUSED)
        (void)duet_config_complete_split(&c, hw, p->num_wgs > 0 ? p->num_wgs : hw->n_sms, split, -1);
    else if (mode == DUET_MODE_COPY)
        (void)duet_config_complete_split(&c, hw, -1, hw->n_sms, split); /* every SM; `split` copy streams */
    else
        (void)duet_config_complete_split(&c, hw, -1, split, hw->n_sms - split);
    return c;
}

/*
 * The K splits of one (mode, tile): the given list, or the automatic one (duet_sweep_params_t).
 * A split the configuration rules refuse (vendor mode, a part without K steps) is left out.
 * @return the number written to out.
 */
static int duet__sweep_split_ks(const duet_hw_t *hw, const duet_workload_t *wl, const duet_sweep_params_t *p,
                                int32_t mode, duet_gemm_tile_t tile, int32_t *out)
{
    static const int32_t autos[] = DUET_AUTO_SPLIT_KS;
    const int32_t *list = p->n_split_ks > 0 ? p->split_ks : autos;
    int n_list = p->n_split_ks > 0 ? p->n_split_ks : (int)(sizeof(autos) / sizeof(autos[0]));
    if (p->n_split_ks == 0 && duet_sim_policy_is_frozen(p->policy))
        n_list = 1;
    int n = 0;
    for (int i = 0; i < n_list; i++) {
        duet_config_t c = duet__sweep_config(hw, p, mode, tile, list[i], 1);
        if (list[i] > 1 && duet__config_check_shape(&c, wl) < 0)
            continue;
        if (p->n_split_ks == 0 && !duet_split_k_worth_trying(hw, wl, tile, list[i]))
            continue;
        out[n++] = list[i];
    }
    duet_config_t sk = duet__sweep_config(hw, p, mode, tile, DUET_SWEEP_STREAM_K, 1);
    if (p->n_split_ks == 0 && p->stream_k && !duet_sim_policy_is_frozen(p->policy) &&
        duet__config_check_shape(&sk, wl) >= 0)
        out[n++] = DUET_SWEEP_STREAM_K;
    return n;
}

static duet_status_t duet__sim_plan(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_sweep_params_t *p,
                                    const duet_plan_t *plan, duet_sweep_point_t *pt, int64_t *events)
{
    duet_sim_result_t r;
    DUET_CHECK(duet_sim_run(ws, p->policy, hw, plan, NULL, &r));
    pt->cfg = plan->cfg;
    pt->makespan_s = r.makespan_s;
    pt->gemm_finish_s = r.gemm_finish_s;
    pt->comm_finish_s = r.comm_finish_s;
    *events += r.events;
    int64_t budget = p->max_events > 0 ? p->max_events : DUET_SWEEP_MAX_EVENTS;
    if (*events > budget)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "sweep: more than %lld simulation events (%s): sweep fewer configurations (modes, tiles, a "
                           "split step) or use larger tiles",
                           (long long)budget, p->max_events > 0 ? "max_events" : "DUET_SWEEP_MAX_EVENTS");
    return DUET_OK;
}

/*
 * The plan of one (mode, tile, K split) of the sweep. The comm queue's traffic depends on the
 * workload, the comm tile and the rank only, and walking it takes time in proportion to its tiles
 * (up to DUET_MAX_COMM_TILES), so the sweep walks it once: later plans copy the first one and
 * change what the GEMM tile and the mode decide (the configuration, the GEMM queue, the policy).
 */
static duet_status_t duet__sweep_plan(const duet_workload_t *wl, const duet_config_t *cfg, duet_plan_t *first,
                                      int *have_first, duet_plan_t *plan_p)
{
    /* The queues depend on the comm tile, and on whether the collective is tiles or copy mode's
     * whole-block copies (duet_plan_build_queues): a plan of the other kind is not reused. */
    const int copy_differs = (first->cfg.mode == DUET_MODE_COPY) != (cfg->mode == DUET_MODE_COPY);
    if (!*have_first || first->cfg.cm != cfg->cm || first->cfg.cn != cfg->cn || copy_differs) {
        DUET_CHECK(duet_plan_build(wl, cfg, duet_plan_critical_rank(wl), plan_p));
        *first = *plan_p;
        *have_first = 1;
        return DUET_OK;
    }
    duet_plan_t p = *first;
    p.cfg = *cfg;
    duet_gemm_geom_init(&p.gemm, wl->m, wl->n, wl->k, cfg->tile, cfg->group_m, cfg->split_k);
    /* Checks the configuration as duet_plan_build() does and sets the queue policy. */
    DUET_CHECK(duet_plan_set_split(&p, cfg->gemm_wgs, cfg->comm_wgs));
    *plan_p = p;
    return DUET_OK;
}

/*
 * A lower bound on the fluid simulator's makespan of a plan: phase one of the sweep. Each term
 * holds for any schedule the simulator can produce, because a running tile's speed never exceeds 1
 * (sim/fluid.c bounds every cohort by 1 or less), a GEMM tile always pays its dequeue (none for the
 * vendor GEMM), and the link's capacity stays below its peak at any bytes in flight
 * (duet_cost_link_capacity). The run starts after the launch, the barriers and the staging pass
 * (as duet__fluid_start charges them); then:
 *  - work: the CTAs that may run a queue's tiles cannot finish them sooner than the tiles'
 *    seconds over those CTAs, and in a kernel that does not steal one CTA runs ceil(tiles / grid)
 *    of them one after another (pigeonhole), each at least the cheapest tile's seconds (stream-K's
 *    K parts cost less than its whole C tiles);
 *  - link: the comm queue's bytes out of (and into) this GPU at the fabric's peak rate;
 *  - HBM: both queues' HBM bytes at the HBM rate.
 * tests/sim/test_sweep_two_phase.c checks it against the simulation over random workloads.
 */
double duet__sweep_bound(const duet_hw_t *hw, const duet_plan_t *plan)
{
    const double us = 1e-6;
    const int copy = plan->kernel[DUET_KERNEL_COMM].role == DUET_ROLE_COPY;
    double t0 =
        hw->launch_us * us + (plan->comm.queue_len > 0 ? hw->comm_sync_us * us : 0.0) + duet_cost_stage_s(hw, plan);
    t0 += copy && plan->comm.queue_len > 0 ? hw->ce_op_us * us : 0.0; /* copy mode's fork and join */
    /* GEMM: tg the cheapest tile's seconds, wg and hg the queue's seconds and HBM bytes. */
    double tg = 0, wg = 0, hg = 0, tc = 0, hc = 0, bytes = 0;
    int peers = 1;
    const double ng = (double)plan->gemm.tiles, nc = (double)plan->comm.queue_len;
    if (ng > 0) {
        int64_t active = duet_plan_gemm_concurrent(plan);
        int vendor = plan->kernel[DUET_KERNEL_GEMM].role == DUET_ROLE_VENDOR;
        double deq = vendor ? 0.0 : hw->dequeue_gemm_us * us;
        /* Stream-K: the whole C tiles before split_from and the K parts after it, each at its own
         * price (as sim/fluid.c prices them); otherwise every tile is a whole one. */
        const double n_whole = plan->gemm.split_from > 0 ? (double)plan->gemm.split_from : ng;
        duet_gemm_cost_t gc;
        duet_cost_gemm_tile_kind(hw, plan, active, 0, &gc);
        tg = gc.t_sm + deq;
        wg = n_whole * tg;
        hg = n_whole * gc.hbm_bytes;
        if (plan->gemm.split_from > 0) {
            duet_cost_gemm_tile_kind(hw, plan, active, 1, &gc);
            wg += (ng - n_whole) * (gc.t_sm + deq);
            hg += (ng - n_whole) * gc.hbm_bytes;
            tg = fmin(tg, gc.t_sm + deq);
        }
    }
    duet_comm_cost_t cc;
    if (nc > 0 && duet_cost_comm_tile(hw, plan, &cc) >= 0) {
        /* Symmetric collectives carry push + pull both ways (as sim/fluid.c's prices). */
        int sym = plan->wl.coll != DUET_COLL_BROADCAST;
        double out = cc.traffic.push_bytes + (sym ? cc.traffic.pull_bytes : 0);
        double in = cc.traffic.pull_bytes + (sym ? cc.traffic.push_bytes : 0);
        tc = cc.t_alone;
        hc = cc.hbm_bytes * (copy ? duet_cost_copy_hbm_weight(hw) : 1.0); /* as sim/fluid.c's prices */
        bytes = nc * fmax(out, in);
        peers = cc.traffic.push_peers > cc.traffic.pull_peers ? cc.traffic.push_peers : cc.traffic.pull_peers;
        /* Copy mode: the streams address as many peers at once (as sim/fluid.c's prices). */
        if (copy && plan->wl.world > 1)
            peers = plan->comm_grid < plan->wl.world - 1 ? plan->comm_grid : plan->wl.world - 1;
    }
    double b = fmax(ng > 0 ? tg : 0.0, nc > 0 ? tc : 0.0);
    if (plan->steal) {
        /* Every CTA of the grid may end up on either queue. */
        b = fmax(b, (wg + nc * tc) / (double)plan->kernel[DUET_KERNEL_GEMM].grid);
    } else {
        if (ng > 0 && plan->gemm_ctas > 0)
            b = fmax(b, ceil(ng / (double)plan->gemm_ctas) * tg);
        if (nc > 0 && plan->comm_grid > 0)
            b = fmax(b, ceil(nc / (double)plan->comm_grid) * tc);
    }
    double peak = bytes > 0 ? duet_cost_link_capacity(hw, INFINITY, peers > 0 ? peers : 1) : 0.0;
    if (peak > 0)
        b = fmax(b, bytes / peak);
    b = fmax(b, (hg + nc * hc) / (hw->hbm_gbs * 1e9));
    return t0 + b;
}

/*
 * Vendor mode runs the vendor library's GEMM, whose kernel the library's heuristic picks: the sweep
 * prices each split once, at that kernel (duet_plan_vendor_choose()); a user can only choose the
 * split (the GEMM's SM target and the comm grid). Such points are one configuration;
 * duet__sweep_key gives them one key.
 */
static int64_t duet__sweep_key(const duet_config_t *c, int64_t idx)
{
    if (c->mode == DUET_MODE_VENDOR)
        return -1 - ((int64_t)c->gemm_wgs * 65536 + c->comm_wgs);
    return idx;
}

/*
 * Keep the fastest point of each vendor split, so that a ranking lists each configuration a user can
 * set once. The points are ranked, so the first of a split is its best.
 */
static duet_status_t duet__sweep_unique_vendor(duet_sweep_result_t *res, int32_t n_sms)
{
    /* seen[g] holds comm_wgs + 1 of the vendor split kept with gemm_wgs g (the sweep's vendor splits
     * partition the SMs, so one per g; another comm_wgs falls back to a scan). */
    int32_t *seen = calloc((size_t)n_sms + 2, sizeof(*seen));
    if (seen == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "sweep: out of memory");
    size_t kept = 0;
    for (size_t i = 0; i < res->n; i++) {
        const duet_config_t *c = &res->points[i].cfg;
        int dup = 0;
        if (c->mode == DUET_MODE_VENDOR) {
            int32_t g = c->gemm_wgs >= 0 && c->gemm_wgs <= n_sms ? c->gemm_wgs : n_sms + 1;
            if (seen[g] == c->comm_wgs + 1)
                dup = 1;
            else if (seen[g] != 0 || g == n_sms + 1)
                for (size_t j = 0; j < kept && !dup; j++) {
                    const duet_config_t *d = &res->points[j].cfg;
                    dup = d->mode == DUET_MODE_VENDOR && d->gemm_wgs == c->gemm_wgs && d->comm_wgs == c->comm_wgs;
                }
            if (!dup && seen[g] == 0)
                seen[g] = c->comm_wgs + 1;
        }
        if (!dup)
            res->points[kept++] = res->points[i];
    }
    res->n = kept;
    free(seen);
    return DUET_OK;
}

/* One (mode, tile, K split) of the sweep: its plan at the first split, and its split range. */
typedef struct duet__sweep_group {
    duet_plan_t plan;
    int32_t mode, tile, split_k;
} duet__sweep_group_t;

/* One configuration of the sweep: its group, its split and its lower bound. */
typedef struct duet__sweep_cand {
    double lb;
    int32_t group, split;
    int64_t key; /* duet__sweep_key: candidates with one key are one configuration for a user */
} duet__sweep_cand_t;

static int duet__sweep_cand_cmp(const void *x, const void *y)
{
    const duet__sweep_cand_t *a = x, *b = y;
    if (a->lb != b->lb)
        return a->lb < b->lb ? -1 : 1;
    /* Equal bounds: enumeration order, so that the walk does not depend on qsort. */
    if (a->group != b->group)
        return a->group < b->group ? -1 : 1;
    return (a->split > b->split) - (a->split < b->split);
}

static int duet__i64_cmp(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return (a > b) - (a < b);
}

/*
 * The fastest `cap` makespans of distinct configurations (by key) simulated so far, ascending:
 * phase two's bar for "can still be among the first `cap`".
 */
typedef struct duet__sweep_top {
    double ms[DUET_SWEEP_TOP_MAX + 1];
    int64_t key[DUET_SWEEP_TOP_MAX + 1];
    int32_t n, cap;
} duet__sweep_top_t;

static void duet__sweep_top_add(duet__sweep_top_t *t, double ms, int64_t key)
{
    int32_t i = 0;
    while (i < t->n && t->key[i] != key)
        i++;
    if (i < t->n) {
        if (ms >= t->ms[i])
            return;
    } else if (t->n < t->cap) {
        i = t->n++;
    } else if (ms < t->ms[t->n - 1]) {
        i = t->n - 1;
    } else {
        return;
    }
    while (i > 0 && t->ms[i - 1] > ms) {
        t->ms[i] = t->ms[i - 1];
        t->key[i] = t->key[i - 1];
        i--;
    }
    t->ms[i] = ms;
    t->key[i] = key;
}

/* The configuration of candidate c, on the group's plan. */
static duet_status_t duet__sweep_cand_plan(const duet_hw_t *hw, const duet_sweep_params_t *p,
                                           const duet__sweep_group_t *g, int32_t split, duet_gemm_tile_t tile,
                                           duet_plan_t *plan)
{
    duet_config_t cfg = duet__sweep_config(hw, p, g->mode, tile, g->split_k, split);
    *plan = g->plan;
    DUET_CHECK(duet_plan_set_split(plan, cfg.gemm_wgs, cfg.comm_wgs));
    /* The vendor library picks its own kernel for the SM target it is given: the plan of each
     * split carries that kernel, and a user sets only the split. */
    return g->mode == DUET_MODE_VENDOR ? duet_plan_vendor_choose(hw, plan) : DUET_OK;
}

duet_status_t duet_sweep_run(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_workload_t *wl,
                             const duet_sweep_params_t *params, duet_sweep_result_t *res_p)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    DUET_CHECK(duet_workload_validate(wl));
    duet_sweep_params_t p = *params;
    if (p.policy == NULL)
        p.policy = &duet_sim_policy_fluid;
    if (p.modes == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "sweep: no mode selected");
    if (p.modes == 1u << DUET_MODE_COPY && !duet_copy_supports(wl->coll))
        return duet__error(DUET_ERR_INVALID_ARG,
                           "sweep: copy mode moves bytes only: %s needs a reduction (ask for another mode)",
                           duet_collective_name(wl->coll));
    if (p.top < 0 || p.top > DUET_SWEEP_TOP_MAX)
        return duet__error(DUET_ERR_INVALID_ARG, "sweep: top %d is outside [0, %d]", (int)p.top, DUET_SWEEP_TOP_MAX);
    if (duet_sim_policy_is_frozen(p.policy) && (p.modes & ~(1u << DUET_MODE_FUSED)))
        return duet__error(DUET_ERR_UNSUPPORTED, "policy frozen models fused mode only (ask for fused mode alone)");
    /* Tiles: the given list (each once), else every supported tile that fits the profile's shared
     * memory and keeps the GEMM queue within DUET_MAX_GEMM_TILES (a small tile on a large GEMM may
     * not). */
    if (p.n_tiles == 0) {
        duet_status_t refused = DUET_OK;
        for (int i = 0; i < duet_tile_count() && p.n_tiles < DUET_SWEEP_MAX_TILES; i++) {
            duet_gemm_tile_t t = duet_tile_get(i);
            if (duet_gemm_tile_smem_bytes(t, wl->dtype, hw->gemm_stages) > hw->smem_kib * 1024.0)
                continue;
            duet_config_t c = duet__sweep_config(hw, &p, DUET_MODE_FUSED, t, 1, 1);
            duet_status_t st = duet__config_check_shape(&c, wl);
            if (st < 0) {
                refused = st;
                continue;
            }
            p.tiles[p.n_tiles++] = t;
        }
        if (p.n_tiles == 0 && refused < 0)
            return refused; /* its error names the limit */
    }
    if (p.n_tiles < 1 || p.n_tiles > DUET_SWEEP_MAX_TILES)
        return duet__error(DUET_ERR_INVALID_ARG, "sweep: between 1 and %d tiles", DUET_SWEEP_MAX_TILES);
    {
        int n = 0;
        for (int i = 0; i < p.n_tiles; i++) {
            int dup = 0;
            for (int j = 0; j < n && !dup; j++)
                dup =
                    p.tiles[j].bm == p.tiles[i].bm && p.tiles[j].bn == p.tiles[i].bn && p.tiles[j].bk == p.tiles[i].bk;
            if (!dup)
                p.tiles[n++] = p.tiles[i];
        }
        p.n_tiles = n;
    }
    int32_t num_wgs = p.num_wgs > 0 ? p.num_wgs : hw->n_sms;
    int32_t step = p.split_step > 0 ? p.split_step : 1;

    /* Count the groups and the points, allocate once. */
    size_t cap = 0, n_groups = 0;
    int32_t his[DUET_MODE_COUNT], los[DUET_MODE_COUNT];
    for (int32_t mode = 0; mode < DUET_MODE_COUNT; mode++) {
        his[mode] = mode == DUET_MODE_FUSED ? num_wgs : hw->n_sms - 1;
        los[mode] = p.split_min > 0 ? p.split_min : 1;
        if (p.split_max > 0 && p.split_max < his[mode])
            his[mode] = p.split_max;
        /* Vendor mode: only the splits the stack can reach (the collective within its CTA cap). */
        if (mode == DUET_MODE_VENDOR && p.vendor_comm_max > 0 && hw->n_sms - p.vendor_comm_max > los[mode])
            los[mode] = hw->n_sms - p.vendor_comm_max;
        /* Copy mode: the split is the copy streams, 1 up to the critical rank's copies (more add
         * nothing); only for the collectives that move bytes alone. */
        if (mode == DUET_MODE_COPY) {
            int64_t n = duet_copy_count(wl->coll, wl->world, duet_plan_critical_rank(wl), wl->root);
            los[mode] = 1;
            his[mode] = !duet_copy_supports(wl->coll) ? 0
                        : n < 1                       ? 1
                        : n < DUET_MAX_COPY_STREAMS   ? (int32_t)n
                                                      : DUET_MAX_COPY_STREAMS;
        }
        if (!(p.modes & (1u << mode)) || his[mode] < los[mode])
            continue;
        /* Vendor mode: one group, the library's kernel for each split (duet__sweep_cand_plan). */
        int n_tiles = mode == DUET_MODE_VENDOR ? 1 : p.n_tiles;
        for (int ti = 0; ti < n_tiles; ti++) {
            int32_t ks[DUET_SWEEP_MAX_SPLIT_KS] = {1};
            int n_ks = mode == DUET_MODE_VENDOR ? 1 : duet__sweep_split_ks(hw, wl, &p, mode, p.tiles[ti], ks);
            n_groups += (size_t)n_ks;
            cap += (size_t)((his[mode] - los[mode]) / step + 1) * (size_t)n_ks;
        }
    }
    if (cap == 0)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "sweep: nothing to simulate (the split range or the K split list is empty)");
    duet_sweep_result_t res;
    memset(&res, 0, sizeof(res));
    duet__sweep_group_t *groups = malloc(n_groups * sizeof(*groups));
    duet__sweep_cand_t *cand = malloc(cap * sizeof(*cand));
    res.points = malloc(cap * sizeof(*res.points));
    duet_status_t st = DUET_OK;
    if (groups == NULL || cand == NULL || res.points == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "sweep: cannot allocate %zu points", cap);
        goto fail;
    }

    /* Phase one: every configuration's plan (one per group; the split moves along) and lower
     * bound. The queues do not depend on the split. */
    duet_plan_t first;
    int have_first = 0;
    size_t n_cand = 0, ng = 0;
    for (int32_t mode = 0; mode < DUET_MODE_COUNT; mode++) {
        if (!(p.modes & (1u << mode)) || his[mode] < los[mode])
            continue;
        int n_tiles = mode == DUET_MODE_VENDOR ? 1 : p.n_tiles;
        for (int ti = 0; ti < n_tiles; ti++) {
            int32_t ks[DUET_SWEEP_MAX_SPLIT_KS] = {1};
            int n_ks = mode == DUET_MODE_VENDOR ? 1 : duet__sweep_split_ks(hw, wl, &p, mode, p.tiles[ti], ks);
            for (int ki = 0; ki < n_ks; ki++, ng++) {
                duet__sweep_group_t *g = &groups[ng];
                g->mode = mode;
                g->tile = ti;
                g->split_k = ks[ki];
                duet_config_t cfg = duet__sweep_config(hw, &p, mode, p.tiles[ti], ks[ki], los[mode]);
                DUET_CHECK_GOTO(duet__sweep_plan(wl, &cfg, &first, &have_first, &g->plan), st, fail);
                for (int32_t s = los[mode]; s <= his[mode]; s += step) {
                    duet_plan_t plan;
                    DUET_CHECK_GOTO(duet__sweep_cand_plan(hw, &p, g, s, p.tiles[ti], &plan), st, fail);
                    if (plan.cfg.stream_k && plan.gemm.split_k == 1)
                        continue; /* no tail split at this split: the data-parallel point */
                    duet__sweep_cand_t *c = &cand[n_cand];
                    c->group = (int32_t)ng;
                    c->split = s;
                    c->key = duet__sweep_key(&plan.cfg, (int64_t)n_cand);
                    /* The frozen policy is not bounded this way: it simulates everything. */
                    c->lb = duet_sim_policy_is_frozen(p.policy) ? 0.0 : duet__sweep_bound(hw, &plan);
                    n_cand++;
                }
            }
        }
    }

    /* The static default: fused, 3/4 of the SMs on GEMM, the default tile. It is simulated first, as
     * its makespan is a bar of phase two; a candidate that is the same configuration reuses it. */
    {
        duet_config_t d = duet__sweep_config_base(hw, &p, DUET_MODE_FUSED);
        duet_plan_t plan;
        DUET_CHECK_GOTO(duet__sweep_plan(wl, &d, &first, &have_first, &plan), st, fail);
        DUET_CHECK_GOTO(duet__sim_plan(ws, hw, &p, &plan, &res.dflt, &res.events), st, fail);
        res.n_simulated = 1;
    }

    /*
     * Phase two: simulate in order of the lower bound, and only what can matter. With p.top = 0,
     * everything; else a candidate whose bound exceeds (beyond the tie tolerance, twice over) the
     * static default, the top-th fastest distinct configuration simulated so far, and its mode's
     * fastest, can be none of them, so it is skipped: what the result holds and ranks (the first
     * top points, each mode's best, the default's rank and ties) is the full sweep's. The same bar
     * is kept on the upper end of each prediction's interval (makespan x (1 + err_<mode>), the
     * decision's ranking, sim/decide.c): a candidate is skipped only if it can be among the first
     * top by neither figure. A vendor point whose bound exceeds its split's fastest so far cannot
     * become that split's point, whatever top says.
     */
    const int bounded = !duet_sim_policy_is_frozen(p.policy);
    if (bounded)
        qsort(cand, n_cand, sizeof(*cand), duet__sweep_cand_cmp);
    {
        const double slack = 1.0 + 2.0 * DUET_RANK_TIE_REL;
        duet__sweep_top_t top;
        memset(&top, 0, sizeof(top));
        top.cap = p.top + 1; /* one more than shown: whether the last shown row ties the next */
        /* The same, by the interval's upper end. */
        duet__sweep_top_t top_hi;
        memset(&top_hi, 0, sizeof(top_hi));
        top_hi.cap = top.cap;
        double up[DUET_MODE_COUNT]; /* 1 + err_<mode>: the interval's upper end over the makespan */
        for (int m = 0; m < DUET_MODE_COUNT; m++)
            up[m] = 1.0 + duet_hw_mode_err(hw, m);
        double mode_best[DUET_MODE_COUNT];
        for (int m = 0; m < DUET_MODE_COUNT; m++)
            mode_best[m] = INFINITY;
        /* The vendor splits' fastest so far, by gemm_wgs (the sweep's vendor splits partition the SMs). */
        double *split_best = malloc(((size_t)hw->n_sms + 1) * sizeof(*split_best));
        if (split_best == NULL) {
            st = duet__error(DUET_ERR_NO_MEMORY, "sweep: out of memory");
            goto fail;
        }
        for (int32_t i = 0; i <= hw->n_sms; i++)
            split_best[i] = INFINITY;
        for (size_t i = 0; i < n_cand && st >= 0; i++) {
            duet__sweep_cand_t *c = &cand[i];
            const duet__sweep_group_t *g = &groups[c->group];
            if (p.top > 0) {
                double bar = fmax(res.dflt.makespan_s, top.n == top.cap ? top.ms[top.n - 1] : INFINITY);
                double bar_hi = top_hi.n == top_hi.cap ? top_hi.ms[top_hi.n - 1] : INFINITY;
                if (c->lb > bar * slack && c->lb > mode_best[g->mode] * slack && c->lb * up[g->mode] > bar_hi * slack)
                    continue;
            }
            duet_plan_t plan;
            st = duet__sweep_cand_plan(hw, &p, g, c->split, p.tiles[g->tile], &plan);
            if (st < 0)
                break;
            int vsplit = g->mode == DUET_MODE_VENDOR && plan.cfg.gemm_wgs >= 0 && plan.cfg.gemm_wgs <= hw->n_sms &&
                         plan.cfg.gemm_wgs + plan.cfg.comm_wgs == hw->n_sms;
            if (vsplit && bounded && c->lb > split_best[plan.cfg.gemm_wgs] * slack)
                continue;
            duet_sweep_point_t *pt = &res.points[res.n];
            if (duet_config_same(&plan.cfg, &res.dflt.cfg)) {
                *pt = res.dflt; /* simulated once */
            } else {
                /* A run that passes every bar cannot matter: the simulator gives it up there. */
                if (p.top > 0) {
                    double bar = fmax(res.dflt.makespan_s, top.n == top.cap ? top.ms[top.n - 1] : INFINITY);
                    bar = fmax(bar, mode_best[g->mode]);
                    bar = fmax(bar, (top_hi.n == top_hi.cap ? top_hi.ms[top_hi.n - 1] : INFINITY) / up[g->mode]);
                    ws->t_stop = isinf(bar) ? 0.0 : bar * slack;
                }
                st = duet__sim_plan(ws, hw, &p, &plan, pt, &res.events);
                ws->t_stop = 0.0;
                if (st < 0)
                    break;
                res.n_simulated++;
                if (isinf(pt->makespan_s))
                    continue;
            }
            res.n++;
            if (pt->makespan_s < mode_best[g->mode])
                mode_best[g->mode] = pt->makespan_s;
            if (vsplit && pt->makespan_s < split_best[plan.cfg.gemm_wgs])
                split_best[plan.cfg.gemm_wgs] = pt->makespan_s;
            if (p.top > 0) {
                duet__sweep_top_add(&top, pt->makespan_s, c->key);
                duet__sweep_top_add(&top_hi, pt->makespan_s * up[g->mode], c->key);
            }
        }
        free(split_best);
        if (st < 0)
            goto fail;
    }
    /* The distinct configurations the sweep covers, simulated or not. */
    {
        res.n_configs = 0;
        int64_t *vkeys = malloc(n_cand * sizeof(*vkeys));
        size_t nv = 0;
        if (vkeys == NULL) {
            st = duet__error(DUET_ERR_NO_MEMORY, "sweep: out of memory");
            goto fail;
        }
        for (size_t i = 0; i < n_cand; i++) {
            if (cand[i].key >= 0)
                res.n_configs++;
            else
                vkeys[nv++] = cand[i].key;
        }
        qsort(vkeys, nv, sizeof(*vkeys), duet__i64_cmp);
        for (size_t i = 0; i < nv; i++)
            res.n_configs += i == 0 || vkeys[i] != vkeys[i - 1];
        free(vkeys);
    }
    /* Rank: makespan ascending, ties by duet_rank_sort's rule (as validate and the tuner). */
    {
        duet_rank_item_t *key = malloc(res.n * sizeof(*key));
        duet_sweep_point_t *tmp = malloc(res.n * sizeof(*tmp));
        if (key == NULL || tmp == NULL) {
            free(key);
            free(tmp);
            st = duet__error(DUET_ERR_NO_MEMORY, "sweep: cannot rank %zu points", res.n);
            goto fail;
        }
        for (size_t i = 0; i < res.n; i++) {
            key[i].pred = res.points[i].makespan_s;
            key[i].cfg = res.points[i].cfg;
            key[i].idx = i;
        }
        duet_rank_sort(key, res.n);
        memcpy(tmp, res.points, res.n * sizeof(*tmp));
        for (size_t i = 0; i < res.n; i++)
            res.points[i] = tmp[key[i].idx];
        free(key);
        free(tmp);
    }
    DUET_CHECK_GOTO(duet__sweep_unique_vendor(&res, hw->n_sms), st, fail);

    /* Where the default ranks. Ties by duet_rank_sort's tolerance: a point a rounding error faster
     * does not outrank it. Every point within the tolerance of it has been simulated. */
    {
        size_t better = 0, ties = 0;
        for (size_t i = 0; i < res.n; i++) {
            const duet_sweep_point_t *q = &res.points[i];
            if (duet__time_eq(q->makespan_s, res.dflt.makespan_s, DUET_RANK_TIE_REL))
                ties += !duet_config_same(&q->cfg, &res.dflt.cfg); /* the default itself is no other */
            else
                better += q->makespan_s < res.dflt.makespan_s;
        }
        res.default_rank = better + 1;
        res.default_ties = ties;
    }
    free(cand);
    free(groups);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res.wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    *res_p = res;
    return DUET_OK;
fail:
    free(cand);
    free(groups);
    free(res.points);
    return st;
}
