/*
 * The simulator's workspace grows by doubling from 64 CTAs (sim/ws.c): every buffer holds the
 * capacity it claims, at the sizes where one element short would first show (2^k + 1 CTAs), and
 * the per-cohort buffers keep their 8 extra slots (the initial placement classes).
 */
#include <criterion/criterion.h>
#include <malloc.h>

#include "../test_util.h"
#include "sim/internal.h"

/* Every buffer holds at least cap_ctas elements (the per-cohort ones cap_ctas + 8). */
static void expect_room(const duet_sim_ws_t *ws, size_t want_cap)
{
    size_t n = ws->cap_ctas;
    cr_assert_eq(n, want_cap);
    cr_assert_geq(malloc_usable_size(ws->cta_busy), n * sizeof(*ws->cta_busy));
    cr_assert_geq(malloc_usable_size(ws->sm_of), n * sizeof(*ws->sm_of));
    cr_assert_geq(malloc_usable_size(ws->ring), n * sizeof(*ws->ring));
    cr_assert_geq(malloc_usable_size(ws->heap), n * sizeof(*ws->heap));
    cr_assert_geq(malloc_usable_size(ws->members), n * sizeof(*ws->members));
    cr_assert_geq(malloc_usable_size(ws->cohorts), (n + 8) * sizeof(*ws->cohorts));
    cr_assert_geq(malloc_usable_size(ws->due), (n + 8) * sizeof(*ws->due));
    cr_assert_geq(malloc_usable_size(ws->mm_var), (n + 8) * sizeof(*ws->mm_var));
    cr_assert_geq(malloc_usable_size(ws->workers), n * sizeof(*ws->workers));
}

Test(ws_growth, capacity_doubles_to_the_next_power_of_two_and_every_buffer_holds_it, T_TIMEOUT)
{
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    expect_room(ws, 512); /* made for 512: 64 -> 128 -> 256 -> 512 */
    cr_assert_eq(duet__sim_ws_reserve(ws, 512), DUET_OK);
    expect_room(ws, 512);
    cr_assert_eq(duet__sim_ws_reserve(ws, 513), DUET_OK);
    expect_room(ws, 1024);
    cr_assert_eq(duet__sim_ws_reserve(ws, 100), DUET_OK);
    expect_room(ws, 1024); /* never shrinks */
    cr_assert_eq(duet__sim_ws_reserve(ws, 1025), DUET_OK);
    expect_room(ws, 2048);
    cr_assert_eq(duet__sim_ws_reserve(ws, 4097), DUET_OK);
    expect_room(ws, 8192); /* 2048 -> 4096 -> 8192 in one call */
    duet_sim_ws_destroy(ws);

    /* A workspace from nothing starts at 64. */
    ws = calloc(1, sizeof(*ws));
    cr_assert_not_null(ws);
    cr_assert_eq(duet__sim_ws_reserve(ws, 1), DUET_OK);
    expect_room(ws, 64);
    cr_assert_eq(duet__sim_ws_reserve(ws, 65), DUET_OK);
    expect_room(ws, 128);
    duet_sim_ws_destroy(ws);
}

/* A run that grows a used workspace answers as a fresh one does: a fused grid of 529 CTAs (above
 * 512) on a 1024-SM variant of h200, after a run of 8, under both policies. */
Test(ws_growth, a_grown_workspace_simulates_as_a_fresh_one, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_hw_set(&hw, DUET_HW_F_n_sms, 1024);
    cr_assert_eq(duet_hw_validate(&hw), DUET_OK, "%s", duet_last_error());
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 8192, 4096, 2);
    duet_config_t big_cfg = duet_config_default(&hw, DUET_MODE_FUSED), small_cfg = big_cfg;
    cr_assert_eq(duet_config_complete_split(&small_cfg, &hw, 8, 6, 2), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_config_complete_split(&big_cfg, &hw, 529, 400, 129), DUET_OK, "%s", duet_last_error());
    duet_plan_t p_small, p_big;
    cr_assert_eq(duet_plan_build(&wl, &small_cfg, 0, &p_small), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_plan_build(&wl, &big_cfg, 0, &p_big), DUET_OK, "%s", duet_last_error());
    const duet_sim_policy_ops_t *pol[] = {&duet_sim_policy_fluid, &duet_sim_policy_frozen};
    for (int i = 0; i < 2; i++) {
        duet_sim_ws_t *used = NULL, *fresh = NULL;
        duet_sim_result_t a, b, s;
        cr_assert_eq(duet_sim_ws_create(&used), DUET_OK);
        cr_assert_eq(duet_sim_run(used, pol[i], &hw, &p_small, NULL, &s), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(used->cap_ctas, 512);
        cr_assert_eq(duet_sim_run(used, pol[i], &hw, &p_big, NULL, &a), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(used->cap_ctas, 1024, "grown for 529 CTAs");
        cr_assert_eq(duet_sim_ws_create(&fresh), DUET_OK);
        cr_assert_eq(duet__sim_ws_reserve(fresh, 4096), DUET_OK);
        cr_assert_eq(duet_sim_run(fresh, pol[i], &hw, &p_big, NULL, &b), DUET_OK);
        cr_assert_eq(a.makespan_s, b.makespan_s, "%s", pol[i]->name);
        cr_assert_eq(a.comm_finish_s, b.comm_finish_s, "%s", pol[i]->name);
        cr_assert_eq(a.gemm_finish_s, b.gemm_finish_s, "%s", pol[i]->name);
        cr_assert_lt(a.makespan_s, s.makespan_s, "%s: the same work on 529 CTAs ends before on 8", pol[i]->name);
        duet_sim_ws_destroy(used);
        duet_sim_ws_destroy(fresh);
    }
}
