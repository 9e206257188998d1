/*
 * Operand staging (duet_plan_t.stage_k): which plans copy A and B into rows of a multiple of 8
 * elements, how large the copy is, and what the model charges for it.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"

static duet_plan_t stage_plan(int64_t m, int64_t n, int64_t k)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(m, n, k, DUET_COLL_ALL_GATHER, 1024, 1024, 2);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

Test(stage, a_k_off_a_multiple_of_8_is_staged_to_the_next_multiple, T_TIMEOUT)
{
    /* 2833 = 354 * 8 + 1: rows of 2840 elements; (1000 + 3000) rows x 2840 x 2 bytes. */
    duet_plan_t p = stage_plan(1000, 3000, 2833);
    cr_assert_eq(p.stage_k, 2840);
    cr_assert_eq(p.stage_ws_bytes, INT64_C(22720000));
    /* K = 6: one chunk of 8 per row. */
    p = stage_plan(64, 64, 6);
    cr_assert_eq(p.stage_k, 8);
    cr_assert_eq(p.stage_ws_bytes, 128 * 8 * 2);
}

Test(stage, aligned_k_and_empty_gemms_are_not_staged, T_TIMEOUT)
{
    duet_plan_t p = stage_plan(1000, 3000, 2832); /* a multiple of 8, not of 64 */
    cr_assert_eq(p.stage_k, 0);
    cr_assert_eq(p.stage_ws_bytes, 0);
    p = stage_plan(0, 0, 0); /* no GEMM runs */
    cr_assert_eq(p.stage_k, 0);
    cr_assert_eq(p.stage_ws_bytes, 0);
}

Test(stage, the_pass_costs_its_bytes_at_the_memory_rate, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    hw.hbm_gbs = 4000;
    duet_plan_t p = stage_plan(1000, 3000, 1001);
    /* Reads 4000 x 1001 and writes 4000 x 1008 elements of 2 bytes: 16,072,000 bytes at 4e12 B/s. */
    cr_assert_float_eq(duet_cost_stage_s(&hw, &p), 16072000.0 / 4e12, 1e-15);
    p = stage_plan(1000, 3000, 1008);
    cr_assert_eq(duet_cost_stage_s(&hw, &p), 0.0);
    /* The GEMM's static estimate carries the pass: the same GEMM with K = 1001 and with K = 1008
     * run 16 K steps of 64 each, so they differ by the pass, within the 0.7 % fewer FLOPs of
     * K = 1001 that the clock term sees (a few ns here against the pass's 4 us). */
    duet_plan_t a = stage_plan(1000, 3000, 1001), b = stage_plan(1000, 3000, 1008);
    double d = duet_cost_gemm_static_s(&hw, &a, 132) - duet_cost_gemm_static_s(&hw, &b, 132);
    cr_assert(fabs(d - 16072000.0 / 4e12) < 0.01 * 16072000.0 / 4e12, "difference %.9g s", d);
}
