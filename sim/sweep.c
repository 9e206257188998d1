/*
 * Sweeps: simulate every (mode, tile, split) of a workload and rank them. This is the tuner's
 * inner loop, so it allocates once (the result array and the workspace) and then only runs
 * the simulator.
 */
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
    p.modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT);
    p.stream_k = 1;
    return p;
}

const char *duet_sweep_rank_str(const duet_sweep_result_t *res, char *buf, size_t n)
{
    size_t t = res->default_ties;
    char tied[64] = "";
    if (t > 0)
        snprintf(tied, sizeof(tied), "tied with %zu other%s", t, t == 1 ? "" : "s");
    if (res->default_rank == 1) {
        if (t > 0)
            snprintf(buf, n, "rank 1 of %zu; %s for best", res->n, tied);
        else
            snprintf(buf, n, "rank 1 of %zu; nothing in the sweep beats it", res->n);
        return buf;
    }
    /* Below 0.1 % the difference is shown with three decimals, so that it never reads "0.0 % faster". */
    double pct = (res->dflt.makespan_s / res->points[0].makespan_s - 1) * 100;
    snprintf(buf, n, "rank %zu of %zu%s%s; the best is %.*f %% faster", res->default_rank, res->n, t > 0 ? ", " : "",
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

/* Fill in the configuration of one sweep point. */
static duet_config_t duet__sweep_config(const duet_hw_t *hw, const duet_sweep_params_t *p, int32_t mode,
                                        duet_gemm_tile_t tile, int32_t split_k, int32_t split)
{
    duet_config_t c = duet_config_default(hw, mode);
    c.tile = tile;
    c.split_k = split_k == DUET_SWEEP_STREAM_K ? 1 : split_k;
    c.stream_k = split_k == DUET_SWEEP_STREAM_K;
    if (p->cm > 0)
        c.cm = p->cm;
    if (p->cn > 0)
        c.cn = p->cn;
    if (p->group_m > 0)
        c.group_m = p->group_m;
    /* Fused: `split` CTAs of the grid start on GEMM. Concurrent and vendor: the two grids (or the
     * GEMM's SM target and the comm grid) partition the SMs. Neither can disagree. */
    if (mode == DUET_MODE_FUSED)
        (void)duet_config_complete_split(&c, hw, p->num_wgs > 0 ? p->num_wgs : hw->n_sms, split, -1);
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
    if (!*have_first || first->cfg.cm != cfg->cm || first->cfg.cn != cfg->cn) {
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
 * Vendor mode runs the vendor library's GEMM, whose kernel the library's heuristic picks: the sweep
 * prices it with each duet tile as a stand-in, but a user can only choose the split (the GEMM's SM
 * target and the comm grid). Keep the fastest point of each split, so that a ranking lists each
 * configuration a user can set once. The points are ranked, so the first of a split is its best.
 */
static void duet__sweep_unique_vendor(duet_sweep_result_t *res)
{
    size_t kept = 0;
    for (size_t i = 0; i < res->n; i++) {
        const duet_config_t *c = &res->points[i].cfg;
        int dup = 0;
        if (c->mode == DUET_MODE_VENDOR)
            for (size_t j = 0; j < kept && !dup; j++) {
                const duet_config_t *d = &res->points[j].cfg;
                dup = d->mode == DUET_MODE_VENDOR && d->gemm_wgs == c->gemm_wgs && d->comm_wgs == c->comm_wgs;
            }
        if (!dup)
            res->points[kept++] = res->points[i];
    }
    res->n = kept;
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
    if (duet_sim_policy_is_frozen(p.policy) && (p.modes & ~(1u << DUET_MODE_FUSED)))
        return duet__error(DUET_ERR_UNSUPPORTED, "policy frozen models fused mode only (use --mode fused)");
    /* Tiles: the given list, else every supported tile that fits the profile's shared memory and
     * keeps the GEMM queue within DUET_MAX_GEMM_TILES (a small tile on a large GEMM may not). */
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
    int32_t num_wgs = p.num_wgs > 0 ? p.num_wgs : hw->n_sms;
    int32_t step = p.split_step > 0 ? p.split_step : 1;

    /* Count the points, allocate once. */
    size_t cap = 0;
    for (int32_t mode = 0; mode < DUET_MODE_COUNT; mode++) {
        if (!(p.modes & (1u << mode)))
            continue;
        int32_t hi = mode == DUET_MODE_FUSED ? num_wgs : hw->n_sms - 1;
        int32_t lo = p.split_min > 0 ? p.split_min : 1;
        if (p.split_max > 0 && p.split_max < hi)
            hi = p.split_max;
        if (hi >= lo)
            for (int ti = 0; ti < p.n_tiles; ti++) {
                int32_t ks[DUET_SWEEP_MAX_SPLIT_KS];
                cap += (size_t)((hi - lo) / step + 1) * (size_t)duet__sweep_split_ks(hw, wl, &p, mode, p.tiles[ti], ks);
            }
    }
    if (cap == 0)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "sweep: nothing to simulate (the split range or the K split list is empty)");
    duet_sweep_result_t res;
    memset(&res, 0, sizeof(res));
    res.points = malloc(cap * sizeof(*res.points));
    if (res.points == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "sweep: cannot allocate %zu points", cap);

    duet_status_t st = DUET_OK;
    duet_plan_t first;
    int have_first = 0;
    for (int32_t mode = 0; mode < DUET_MODE_COUNT; mode++) {
        if (!(p.modes & (1u << mode)))
            continue;
        int32_t hi = mode == DUET_MODE_FUSED ? num_wgs : hw->n_sms - 1;
        int32_t lo = p.split_min > 0 ? p.split_min : 1;
        if (p.split_max > 0 && p.split_max < hi)
            hi = p.split_max;
        for (int ti = 0; ti < p.n_tiles; ti++) {
            int32_t ks[DUET_SWEEP_MAX_SPLIT_KS];
            int n_ks = duet__sweep_split_ks(hw, wl, &p, mode, p.tiles[ti], ks);
            for (int ki = 0; ki < n_ks; ki++) {
                /* The queues do not depend on the split: one plan per (tile, K split), the split
                 * moves along. */
                duet_config_t cfg = duet__sweep_config(hw, &p, mode, p.tiles[ti], ks[ki], lo);
                duet_plan_t plan;
                DUET_CHECK_GOTO(duet__sweep_plan(wl, &cfg, &first, &have_first, &plan), st, fail);
                for (int32_t s = lo; s <= hi; s += step) {
                    cfg = duet__sweep_config(hw, &p, mode, p.tiles[ti], ks[ki], s);
                    DUET_CHECK_GOTO(duet_plan_set_split(&plan, cfg.gemm_wgs, cfg.comm_wgs), st, fail);
                    if (cfg.stream_k && plan.gemm.split_k == 1)
                        continue; /* no tail split at this split: the data-parallel point */
                    DUET_CHECK_GOTO(duet__sim_plan(ws, hw, &p, &plan, &res.points[res.n], &res.events), st, fail);
                    res.n++;
                }
            }
        }
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
    res.n_simulated = res.n;
    duet__sweep_unique_vendor(&res);

    /* The static default: fused, 3/4 of the SMs on GEMM, the default tile. */
    {
        duet_config_t d = duet_config_default(hw, DUET_MODE_FUSED);
        if (p.cm > 0)
            d.cm = p.cm;
        if (p.cn > 0)
            d.cn = p.cn;
        if (p.group_m > 0)
            d.group_m = p.group_m;
        duet_plan_t plan;
        DUET_CHECK_GOTO(duet__sweep_plan(wl, &d, &first, &have_first, &plan), st, fail);
        DUET_CHECK_GOTO(duet__sim_plan(ws, hw, &p, &plan, &res.dflt, &res.events), st, fail);
        /* Ties by duet_rank_sort's tolerance: a point a rounding error faster does not outrank it. */
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
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res.wall_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    *res_p = res;
    return DUET_OK;
fail:
    free(res.points);
    return st;
}
