/*
 * Operand staging (duet_plan_t.stage_k): which plans copy A and B into rows of a multiple of 64
 * elements (model/plan.c, duet__plan_stage_k), how large the copy is, and what the model charges
 * for it.
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

Test(stage, a_k_off_a_multiple_of_8_is_staged_to_the_next_multiple_of_64, T_TIMEOUT)
{
    /* 2833 = 44 * 64 + 17: rows of 45 * 64 = 2880 elements; (1000 + 3000) rows x 2880 x 2 bytes.
     * Staged whatever M and N: rows off 16 bytes have no fast path. */
    duet_plan_t p = stage_plan(1000, 3000, 2833);
    cr_assert_eq(p.stage_k, 2880);
    cr_assert_eq(p.stage_ws_bytes, INT64_C(23040000));
    /* K = 6: one k-tile of 64 per row. */
    p = stage_plan(64, 64, 6);
    cr_assert_eq(p.stage_k, 64);
    cr_assert_eq(p.stage_ws_bytes, 128 * 64 * 2);
}

Test(stage, rows_on_16_bytes_are_staged_where_m_n_reaches_1024_m_plus_n, T_TIMEOUT)
{
    /* K = 904 = 14 * 64 + 8: rows of 1808 bytes, on 16 bytes only. 3520 x 7040 / 10560 = 2346.7
     * >= 1024: staged to 15 * 64 = 960. */
    cr_assert_eq(stage_plan(3520, 7040, 904).stage_k, 960);
    /* At the threshold: 2048 x 2048 = 4194304 = 1024 x 4096: staged. One row fewer: 2047 x 2048
     * = 4192256 < 1024 x 4095 = 4193280: the copy would cost about what the rows lose. */
    cr_assert_eq(stage_plan(2048, 2048, 904).stage_k, 960);
    cr_assert_eq(stage_plan(2047, 2048, 904).stage_k, 0);
    /* Skinny: 512 x 16384 / 16896 = 496.5 < 1024, whatever K (16376 % 16 == 8). */
    cr_assert_eq(stage_plan(512, 16384, 16376).stage_k, 0);
}

Test(stage, rows_on_32_or_64_bytes_are_never_staged, T_TIMEOUT)
{
    /* K = 912 = 14 * 64 + 16: rows of 1824 bytes, on 32 bytes; K = 928 = 14 * 64 + 32: on 64
     * bytes. Neither is staged, however large M and N: in place they ran near the model's time,
     * and 4096x4096x912 staged ran slower. The same M, N with rows on 16 bytes are staged. */
    cr_assert_eq(stage_plan(16384, 16384, 912).stage_k, 0);
    cr_assert_eq(stage_plan(16384, 16384, 928).stage_k, 0);
    cr_assert_eq(stage_plan(16384, 16384, 904).stage_k, 960);
}

Test(stage, aligned_k_vendor_mode_and_empty_gemms_are_not_staged, T_TIMEOUT)
{
    duet_plan_t p = stage_plan(16384, 16384, 2816); /* 44 * 64: rows on 128 bytes */
    cr_assert_eq(p.stage_k, 0);
    cr_assert_eq(p.stage_ws_bytes, 0);
    p = stage_plan(0, 0, 0); /* no GEMM runs */
    cr_assert_eq(p.stage_k, 0);
    cr_assert_eq(p.stage_ws_bytes, 0);
    /* The vendor's GEMM reads the operands in place. */
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(1000, 3000, 2833, DUET_COLL_ALL_GATHER, 1024, 1024, 2);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_VENDOR);
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.stage_k, 0);
}

Test(stage, the_pass_costs_its_bytes_at_the_memory_rate, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    hw.hbm_gbs = 4000;
    duet_plan_t p = stage_plan(1000, 3000, 1001);
    /* Reads 4000 x 1001 and writes 4000 x 1024 elements of 2 bytes: 16,200,000 bytes at 4e12 B/s. */
    cr_assert_float_eq(duet_cost_stage_s(&hw, &p), 16200000.0 / 4e12, 1e-15);
    p = stage_plan(1000, 3000, 1008);
    cr_assert_eq(duet_cost_stage_s(&hw, &p), 0.0);
    /* The GEMM's static estimate carries the pass: the same GEMM with K = 1001 and with K = 1008
     * (rows on 32 bytes: not staged) run 16 K steps of 64 each, so they differ by the
     * pass, within the 0.7 % fewer FLOPs of K = 1001 that the clock term sees (a few ns here
     * against the pass's 4 us). */
    duet_plan_t a = stage_plan(1000, 3000, 1001), b = stage_plan(1000, 3000, 1008);
    double d = duet_cost_gemm_static_s(&hw, &a, 132) - duet_cost_gemm_static_s(&hw, &b, 132);
    cr_assert(fabs(d - 16200000.0 / 4e12) < 0.01 * 16200000.0 / 4e12, "difference %.9g s", d);
}
