/*
 * The two-phase sweep (duet_sweep_params_t.top): a lower bound for every configuration, the
 * simulation only for those that can matter. Over random workloads (model/random.c) on the three
 * built-in profiles, its answer must be the full sweep's: the same first top + 1 points (the same
 * configurations, the same makespans), the same fastest point of each mode, the same rank and ties
 * of the static default, the same count of configurations, the same first rows by the upper end of
 * the interval and the same decision; and the bound must never exceed the simulated makespan.
 */
#include <math.h>

#include "../../sim/internal.h"
#include "sim_util.h"

T_SIM_SUITE(sweep_two_phase);

/* The fastest point of one mode, or NULL. */
static const duet_sweep_point_t *t_best(const duet_sweep_result_t *r, int mode)
{
    return duet_sweep_best(r, 1u << mode);
}

static void t_same_point(const duet_sweep_point_t *a, const duet_sweep_point_t *b, const char *what, size_t i)
{
    cr_assert(duet_config_same(&a->cfg, &b->cfg), "%s %zu: another configuration", what, i);
    cr_assert(a->makespan_s == b->makespan_s, "%s %zu: %.9g us against %.9g us", what, i, a->makespan_s * 1e6,
              b->makespan_s * 1e6);
}

Test(sweep_two_phase, answers_as_the_full_sweep_over_random_workloads, .timeout = 600)
{
    static const char *const profiles[] = {"h200", "mi300x", "mi350x"};
    static const int32_t tops[] = {1, 3, 10, 25};
    duet_random_params_t rp = duet_random_default_params();
    rp.seed = 20261207;
    rp.max_dim = 8192;
    rp.max_comm_bytes = 64.0 * 1024 * 1024;
    rp.world = 2;
    duet_workloads_t set;
    const size_t n = 240;
    cr_assert_eq(duet_workloads_random(&rp, n, &set), DUET_OK, "%s", duet_last_error());
    size_t simulated_two = 0, simulated_full = 0;
    for (size_t w = 0; w < set.n; w++) {
        duet_hw_t hw = t_hw(profiles[w % 3]);
        duet_sweep_params_t sp = duet_sweep_default_params();
        sp.modes = (1u << DUET_MODE_COUNT) - 1;
        /* Every 5th or 7th split keeps the full sweeps of a few hundred workloads quick. */
        sp.split_step = w % 2 ? 5 : 7;
        duet_sweep_result_t full, two;
        cr_assert_eq(duet_sweep_run(ws, &hw, &set.w[w], &sp, &full), DUET_OK, "%s", duet_last_error());
        sp.top = tops[w % 4];
        cr_assert_eq(duet_sweep_run(ws, &hw, &set.w[w], &sp, &two), DUET_OK, "%s", duet_last_error());
        simulated_two += two.n_simulated;
        simulated_full += full.n_simulated;
        cr_assert_eq(two.n_configs, full.n, "workload %zu", w);
        cr_assert_eq(full.n_configs, full.n);
        size_t k = (size_t)sp.top + 1 < full.n ? (size_t)sp.top + 1 : full.n;
        cr_assert_geq(two.n, k);
        for (size_t i = 0; i < k; i++) {
            t_same_point(&two.points[i], &full.points[i], "point", i);
            cr_assert_eq(duet_sweep_rank(&two, i), duet_sweep_rank(&full, i));
            if (i + 1 < k)
                cr_assert_eq(duet_sweep_tied(&two, i), duet_sweep_tied(&full, i));
        }
        for (int m = 0; m < DUET_MODE_COUNT; m++) {
            const duet_sweep_point_t *a = t_best(&two, m), *b = t_best(&full, m);
            cr_assert_eq(a == NULL, b == NULL, "mode %d", m);
            if (a != NULL)
                t_same_point(a, b, "best of mode", (size_t)m);
        }
        t_same_point(&two.dflt, &full.dflt, "default", 0);
        /* The decision (sim/decide.c) ranks by the interval's upper end: the same first top + 1 rows by
         * that figure, and the same pick against the static default. */
        duet_decision_t dt, df;
        cr_assert_eq(duet_decide(&hw, &two, &two.dflt, DUET_SAFE_DEFAULT, &dt), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(duet_decide(&hw, &full, &full.dflt, DUET_SAFE_DEFAULT, &df), DUET_OK, "%s", duet_last_error());
        for (size_t j = 0; j < k; j++) {
            t_same_point(&two.points[dt.order[j]], &full.points[df.order[j]], "row by the upper end", j);
            cr_assert_eq(dt.rank[j], df.rank[j], "workload %zu row %zu", w, j);
        }
        cr_assert_eq(dt.moved, df.moved, "workload %zu", w);
        cr_assert_eq(dt.has_alt, df.has_alt, "workload %zu", w);
        if (dt.has_alt)
            t_same_point(&dt.alt, &df.alt, "alternative", w);
        duet_decision_free(&dt);
        duet_decision_free(&df);
        cr_assert_eq(two.default_rank, full.default_rank, "workload %zu", w);
        cr_assert_eq(two.default_ties, full.default_ties, "workload %zu", w);
        /* The bound, on every 7th point of the full sweep. */
        for (size_t i = w % 7; i < full.n; i += 7) {
            duet_plan_t plan;
            cr_assert_eq(duet_plan_build(&set.w[w], &full.points[i].cfg, duet_plan_critical_rank(&set.w[w]), &plan),
                         DUET_OK);
            double lb = duet__sweep_bound(&hw, &plan);
            cr_assert_leq(lb, full.points[i].makespan_s * (1 + 1e-12),
                          "workload %zu point %zu: bound %.9g us > %.9g us", w, i, lb * 1e6,
                          full.points[i].makespan_s * 1e6);
        }
        duet_sweep_result_free(&full);
        duet_sweep_result_free(&two);
    }
    /* And it simulates less. (How much less depends on the workload: every configuration as fast as the
     * static default is simulated, for the default's rank.) */
    cr_assert_lt(simulated_two, simulated_full, "%zu against %zu", simulated_two, simulated_full);
    duet_workloads_free(&set);
}

/* top = 0 simulates every configuration (vendor stand-in tiles that cannot win aside); a top out of
 * range is refused. */
Test(sweep_two_phase, top_zero_is_the_full_sweep_and_a_bad_top_is_refused)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.n_tiles = 2;
    sp.tiles[0] = (duet_gemm_tile_t){256, 128, 64};
    sp.tiles[1] = (duet_gemm_tile_t){256, 128, 64}; /* the same tile twice: simulated once */
    sp.n_split_ks = 1;
    sp.split_ks[0] = 1;
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    /* Fused 1..132, concurrent 1..131 and copy with 1 or 2 streams; the default (fused 99, this
     * tile) is one of them: 265 runs. */
    cr_assert_eq(res.n, (size_t)(132 + 131 + 2));
    cr_assert_eq(res.n_configs, res.n);
    cr_assert_eq(res.n_simulated, (size_t)(132 + 131 + 2));
    duet_sweep_result_free(&res);
    sp.top = DUET_SWEEP_TOP_MAX + 1;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_ERR_INVALID_ARG);
    sp.top = -1;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_ERR_INVALID_ARG);
}
