/*
 * The launch geometry the backend uses equals the simulator's.
 *
 * The plan decides which kernels run, their grids, which CTA starts on which queue, whether it
 * steals and how timelines number the CTAs (duet_plan_t.kernel). The backend enqueues exactly
 * duet_plan_launch() (backend/run.hip; the kernels read the geometry it hands them); the
 * simulator places its workers from the plan (duet_sim_workers()). If either side derived any of
 * it again from the configuration, and differently, these tests fail.
 */
#include "sim_util.h"

T_SIM_SUITE(geometry);

/* Counts of the comparisons made, so that a sweep which silently checks nothing fails. */
typedef struct {
    long plans, workers, refused;
} g_count_t;

/*
 * Every worker of the policy's simulation belongs to exactly one launched kernel, at its place:
 * the same CTA number, the same kernel, the same home queue and the same stealing.
 */
static void check_plan(const duet_hw_t *hw, const duet_plan_t *plan, const duet_sim_policy_ops_t *policy, g_count_t *n)
{
    duet_launch_t l;
    duet_plan_launch(plan, &l);
    const duet_sim_worker_t *w;
    int32_t nw;
    cr_assert_eq(duet_sim_workers(ws, policy, hw, plan, &w, &nw), DUET_OK, "%s", duet_last_error());
    char what[200];
    snprintf(what, sizeof(what), "%s: mode %s, coll %s, m %lld, W %d, rank %d, num %d gemm %d comm %d, split_k %d",
             policy->name, duet_mode_name(plan->cfg.mode), duet_collective_name(plan->wl.coll), (long long)plan->wl.m,
             (int)plan->wl.world, (int)plan->rank, (int)plan->cfg.num_wgs, (int)plan->cfg.gemm_wgs,
             (int)plan->cfg.comm_wgs, (int)plan->cfg.split_k);
    int32_t launched = 0;
    for (int32_t i = 0; i < l.n; i++) {
        const duet_launch_kernel_t *k = &l.k[i];
        cr_assert_gt(k->geom.grid, 0, "%s: a launch of no CTAs", what);
        for (int32_t b = 0; b < k->geom.grid; b++) {
            int32_t cta = k->geom.cta_base + b;
            cr_assert(cta >= 0 && cta < nw, "%s: CTA %d of kernel %d is not among the %d simulated", what, (int)cta,
                      (int)k->kernel, (int)nw);
            cr_assert_eq(w[cta].cta, cta, "%s", what);
            cr_assert_eq(w[cta].kernel, k->kernel, "%s: CTA %d", what, (int)cta);
            cr_assert_eq(w[cta].home, duet_kernel_home(&k->geom, b), "%s: CTA %d starts on another queue", what,
                         (int)cta);
            cr_assert_eq(w[cta].steal, k->geom.steal, "%s: CTA %d steals differently", what, (int)cta);
        }
        launched += k->geom.grid;
    }
    cr_assert_eq(launched, nw, "%s: the backend launches %d CTAs, the simulator runs %d", what, (int)launched, (int)nw);
    n->plans++;
    n->workers += nw;
}

/* One configuration of the sweep, on every rank; a configuration the rules refuse is skipped. */
static void check_config(const duet_hw_t *hw, const duet_workload_t *wl, duet_config_t cfg, g_count_t *n)
{
    if (duet_config_validate(&cfg, wl, hw) < 0) {
        n->refused++;
        return;
    }
    for (int32_t rank = 0; rank < wl->world; rank++) {
        duet_plan_t plan;
        cr_assert_eq(duet_plan_build(wl, &cfg, rank, &plan), DUET_OK, "%s", duet_last_error());
        check_plan(hw, &plan, &duet_sim_policy_fluid, n);
        /* The reference scheduler models fused mode; its workers take from the other queue
         * whenever theirs is empty, which is the plan's stealing where the plan has a GEMM (a
         * collective alone has one queue with work, so nothing is stolen either way). */
        if (cfg.mode == DUET_MODE_FUSED && plan.gemm.tiles > 0)
            check_plan(hw, &plan, &duet_sim_policy_frozen, n);
    }
}

Test(geometry, the_backends_launch_is_the_simulators_for_every_mode_and_a_sweep_of_configurations, .timeout = 60)
{
    const char *hws[] = {"h200", "mi300x"};
    const int32_t worlds[] = {1, 2, 3, 8};
    const duet_gemm_tile_t tiles[] = {{256, 128, 64}, {64, 64, 64}};
    const int32_t split_ks[] = {1, 2, 4, 16}; /* 16 parts of K = 512 (8 steps): refused */
    g_count_t n = {0, 0, 0};
    for (size_t h = 0; h < sizeof(hws) / sizeof(hws[0]); h++) {
        duet_hw_t hw = t_hw(hws[h]);
        const int32_t S = hw.n_sms;
        for (int gemm = 0; gemm < 2; gemm++)
            for (int32_t coll = DUET_COLL_NONE; coll < DUET_COLL_COUNT; coll++)
                for (size_t wi = 0; wi < sizeof(worlds) / sizeof(worlds[0]); wi++) {
                    int32_t W = worlds[wi];
                    if ((!gemm && coll == DUET_COLL_NONE) || (coll == DUET_COLL_NONE && W > 1))
                        continue;
                    duet_workload_t wl = coll == DUET_COLL_NONE ? t_wl(1000, 3000, 512, coll, 0, 0, W)
                                                                : t_wl(1000, 3000, 512, coll, 512 * W, 4096, W);
                    if (!gemm)
                        wl.m = wl.n = wl.k = 0;
                    wl.root = W - 1;
                    for (size_t ti = 0; ti < sizeof(tiles) / sizeof(tiles[0]); ti++)
                        for (size_t ki = 0; ki < sizeof(split_ks) / sizeof(split_ks[0]); ki++) {
                            duet_config_t base = duet_config_default(&hw, DUET_MODE_FUSED);
                            base.tile = tiles[ti];
                            base.split_k = split_ks[ki];
                            /* Fused: grids of every SM and of fewer; no CTA, a few, the default and
                             * every CTA on GEMM. */
                            const int32_t nums[] = {S, 64};
                            for (size_t ni = 0; ni < 2; ni++) {
                                const int32_t gs[] = {0, 1, nums[ni] * 3 / 4, nums[ni]};
                                for (size_t gi = 0; gi < 4; gi++) {
                                    duet_config_t c = base;
                                    cr_assert_eq(duet_config_complete_split(&c, &hw, nums[ni], gs[gi], -1), DUET_OK);
                                    check_config(&hw, &wl, c, &n);
                                }
                            }
                            /* Concurrent and vendor: splits of the SMs, and a comm grid larger than
                             * the idle SMs hold, whose last CTAs wait for an SM. */
                            for (int32_t mode = DUET_MODE_CONCURRENT; mode <= DUET_MODE_VENDOR; mode++) {
                                const int32_t split[][2] = {{1, S - 1}, {S / 2, S / 2}, {S - 16, 16}, {S, 4 * S}};
                                for (size_t si = 0; si < 4; si++) {
                                    duet_config_t c = base;
                                    c.mode = mode;
                                    cr_assert_eq(duet_config_complete_split(&c, &hw, -1, split[si][0], split[si][1]),
                                                 DUET_OK);
                                    check_config(&hw, &wl, c, &n);
                                }
                            }
                        }
                }
    }
    /* Per profile 141 (workload, rank) pairs x 2 tiles x 4 K splits x 16 splits, less what the
     * rules refuse (16 parts of 8 K steps), and the frozen policy's
     * fused plans with a GEMM: 29376 plans and 6.2 million workers when this was written. */
    cr_assert_gt(n.plans, 20000, "%ld plans checked", n.plans);
    cr_assert_gt(n.workers, 4000000, "%ld workers checked", n.workers);
    cr_assert_gt(n.refused, 0, "the sweep reached the configuration rules' refusals");
}

/* One launch entry, as the backend would enqueue it. */
static void expect_launch(const duet_launch_kernel_t *k, int32_t kernel, int32_t role, int32_t grid, int32_t base,
                          int32_t gemm_home, int32_t steal, int32_t side)
{
    cr_assert_eq(k->kernel, kernel);
    cr_assert_eq(k->geom.role, role);
    cr_assert_eq(k->geom.grid, grid);
    cr_assert_eq(k->geom.cta_base, base);
    cr_assert_eq(k->geom.gemm_home, gemm_home);
    cr_assert_eq(k->geom.steal, steal);
    cr_assert_eq(k->side_stream, side);
}

/* The plan of a split on one rank, and its launches, of which there must be `n`. */
static duet_launch_t launch_of(const duet_hw_t *hw, duet_workload_t wl, int32_t mode, const int32_t split[3],
                               int32_t rank, int32_t n, duet_plan_t *plan_p)
{
    duet_config_t cfg = duet_config_default(hw, mode);
    cr_assert_eq(duet_config_complete_split(&cfg, hw, split[0], split[1], split[2]), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_plan_build(&wl, &cfg, rank, plan_p), DUET_OK, "%s", duet_last_error());
    duet_launch_t l;
    duet_plan_launch(plan_p, &l);
    cr_assert_eq(l.n, n, "%d launches", (int)l.n);
    return l;
}

/* The launches of docs/backend.md ("An operation"), worked out by hand on h200's 132 SMs. */
Test(geometry, launches_of_each_mode_worked_out_by_hand)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t ag = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    duet_plan_t p;
    /* Counts given (num_wgs, gemm_wgs, comm_wgs), -1 for the default's. */
    const int32_t dflt[3] = {-1, -1, -1}, c116[3] = {-1, 116, 16}, c121[3] = {-1, 121, 11}, f100[3] = {100, 75, -1},
                  c120[3] = {-1, 120, 12};

    /* Fused, the static default: one kernel of 132 CTAs, 0-98 on GEMM, 99-131 on comm, stealing. */
    duet_launch_t l = launch_of(&hw, ag, DUET_MODE_FUSED, dflt, 0, 1, &p);
    expect_launch(&l.k[0], DUET_KERNEL_GEMM, DUET_ROLE_FUSED, 132, 0, 99, 1, 0);
    cr_assert(p.n_ctas == 132 && p.gemm_ctas == 132 && p.comm_grid == 132);

    /* Concurrent 116 + 16: the GEMM kernel on the caller's stream, the comm kernel on the second,
     * its CTAs numbered 116-131. */
    l = launch_of(&hw, ag, DUET_MODE_CONCURRENT, c116, 0, 2, &p);
    expect_launch(&l.k[0], DUET_KERNEL_GEMM, DUET_ROLE_GEMM, 116, 0, 116, 0, 0);
    expect_launch(&l.k[1], DUET_KERNEL_COMM, DUET_ROLE_COMM, 16, 116, 0, 0, 1);
    cr_assert(p.n_ctas == 132 && p.gemm_ctas == 116 && p.comm_grid == 16);

    /* Vendor 121 + 11: the vendor GEMM planned for 121 SMs, the comm kernel beside it. */
    l = launch_of(&hw, ag, DUET_MODE_VENDOR, c121, 0, 2, &p);
    expect_launch(&l.k[0], DUET_KERNEL_GEMM, DUET_ROLE_VENDOR, 121, 0, 121, 0, 0);
    expect_launch(&l.k[1], DUET_KERNEL_COMM, DUET_ROLE_COMM, 11, 121, 0, 0, 1);

    /* A collective alone, fused 100 with 75 "on GEMM": the comm kernel alone, all 100 CTAs on the
     * comm queue, nothing to steal; concurrent: the comm kernel of comm_wgs CTAs, numbered from 0. */
    duet_workload_t c = t_wl(0, 0, 0, DUET_COLL_ALL_REDUCE, 2048, 4096, 2);
    l = launch_of(&hw, c, DUET_MODE_FUSED, f100, 0, 1, &p);
    expect_launch(&l.k[0], DUET_KERNEL_COMM, DUET_ROLE_COMM, 100, 0, 0, 0, 0);
    cr_assert(p.n_ctas == 100 && p.gemm_ctas == 0 && p.comm_grid == 100 && p.gemm_home_ctas == 0);
    l = launch_of(&hw, c, DUET_MODE_CONCURRENT, c116, 0, 1, &p);
    expect_launch(&l.k[0], DUET_KERNEL_COMM, DUET_ROLE_COMM, 16, 0, 0, 0, 0);

    /* A GEMM alone, concurrent: the GEMM kernel alone, 120 CTAs. */
    duet_workload_t g = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    l = launch_of(&hw, g, DUET_MODE_CONCURRENT, c120, 0, 1, &p);
    expect_launch(&l.k[0], DUET_KERNEL_GEMM, DUET_ROLE_GEMM, 120, 0, 120, 0, 0);
    cr_assert(p.n_ctas == 120 && p.comm_grid == 0);

    /* A broadcast's non-root rank has no comm tiles, but its comm kernel runs: it carries the
     * barriers. */
    duet_workload_t bc = t_wl(4096, 4096, 4096, DUET_COLL_BROADCAST, 2048, 4096, 4);
    bc.root = 3;
    l = launch_of(&hw, bc, DUET_MODE_CONCURRENT, c116, 1, 2, &p);
    cr_assert_eq(p.comm.queue_len, 0);
    expect_launch(&l.k[1], DUET_KERNEL_COMM, DUET_ROLE_COMM, 16, 116, 0, 0, 1);
}

/* The K split's workspace: 1000 x 3000 in 128 x 128 tiles is 8 x 24 = 192 C tiles; in two parts,
 * 192 x 2 fp32 blocks of 128 x 128 (25165824 bytes) and two counters per C tile. */
Test(geometry, split_k_workspace_worked_out_by_hand)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(1000, 3000, 512, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.tile = (duet_gemm_tile_t){128, 128, 64};
    cfg.split_k = 2;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.splitk_ws_bytes, INT64_C(25165824));
    cr_assert_eq(p.splitk_counters, 384);
    cfg.split_k = 1;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK);
    cr_assert(p.splitk_ws_bytes == 0 && p.splitk_counters == 0, "no split, no workspace");
}

/* The static default's rules complete a split, and given counts that disagree are refused. */
Test(geometry, split_completion_follows_the_static_default)
{
    duet_hw_t hw = t_hw("h200");
    duet_config_t c = duet_config_default(&hw, DUET_MODE_FUSED);
    cr_assert(c.num_wgs == 132 && c.gemm_wgs == 99 && c.comm_wgs == 33, "3/4 of 132 is 99");
    cr_assert_eq(duet_config_complete_split(&c, &hw, 100, -1, -1), DUET_OK);
    cr_assert(c.num_wgs == 100 && c.gemm_wgs == 75 && c.comm_wgs == 25, "3/4 of 100 is 75");
    cr_assert_eq(duet_config_complete_split(&c, &hw, 100, -1, 30), DUET_OK);
    cr_assert(c.gemm_wgs == 70 && c.comm_wgs == 30);
    duet_config_t before = c;
    cr_assert_eq(duet_config_complete_split(&c, &hw, 100, 70, 20), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "disagrees") != NULL, "%s", duet_last_error());
    cr_assert(duet_config_same(&c, &before), "unchanged on error");
    duet_config_t k = duet_config_default(&hw, DUET_MODE_CONCURRENT);
    cr_assert(k.comm_wgs == 16 && k.gemm_wgs == 116 && k.num_wgs == 132, "132 / 8 = 16");
    cr_assert_eq(duet_config_complete_split(&k, &hw, 7, -1, 40), DUET_OK);
    cr_assert(k.comm_wgs == 40 && k.gemm_wgs == 92 && k.num_wgs == 132, "num_wgs is not read");
    cr_assert_eq(duet_config_complete_split(&k, &hw, -1, -1, 132), DUET_OK);
    cr_assert_eq(k.gemm_wgs, 1, "at least one SM for the GEMM");
}
