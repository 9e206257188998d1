/*
 * The terms the one-GPU H200 corpus added to the cost model (docs/model.md): how much of the clock
 * term a comm tile takes (comm_heat_share), the clock term on the vendor GEMM, and the vendor's
 * fallback kernels for K or N off a multiple of 8, which ignore the SM-count target. Values derived
 * by hand from the formulas of docs/model.md, not read back from the code.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

static duet_plan_t clock_plan(const duet_hw_t *hw, int64_t m, int64_t n, int64_t k, int32_t coll, int32_t mode,
                              int32_t gemm_wgs)
{
    duet_workload_t wl = t_wl(m, n, k, coll, coll == DUET_COLL_NONE ? 0 : 4096, coll == DUET_COLL_NONE ? 0 : 4096,
                              coll == DUET_COLL_NONE ? 1 : 2);
    duet_config_t cfg = duet_config_default(hw, mode);
    cfg.tile = (duet_gemm_tile_t){128, 256, 64};
    if (gemm_wgs > 0)
        cfg.gemm_wgs = gemm_wgs;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

/* The clock factor of docs/model.md with heat_sm_exp 0: 1 + clock_heat * T / (T + heat_half_us),
 * T the GEMM's matrix work in us at the device's peak (mma rate x clock x SMs). */
static double heat_by_hand(const duet_hw_t *hw, int64_t m, int64_t n, int64_t k)
{
    double peak = hw->mma_flops_bf16 * hw->clock_ghz * 1e9 * hw->n_sms; /* FLOP/s */
    double t_us = 2.0 * (double)m * n * k / peak * 1e6;
    return 1.0 + hw->clock_heat * t_us / (t_us + hw->heat_half_us);
}

/* The built-in H200 with a clock term of height 0.5, half-way at 100 us, whatever the busy SMs. */
static duet_hw_t hot_hw(void)
{
    duet_hw_t hw = t_hw("h200");
    hw.clock_heat = 0.5;
    hw.heat_half_us = 100;
    hw.heat_sm_exp = 0;
    return hw;
}

Test(cost_clock_share, a_comm_tile_takes_its_share_of_the_clock_term, T_TIMEOUT)
{
    duet_hw_t hw = hot_hw();
    duet_plan_t p = clock_plan(&hw, 4096, 4096, 4096, DUET_COLL_ALL_GATHER, DUET_MODE_FUSED, 0);
    /* 4096^3 in bf16: T = 2 x 4096^3 / peak; the factor lies strictly between 1 and 1.5. */
    double h = heat_by_hand(&hw, 4096, 4096, 4096);
    cr_assert(h > 1.1 && h < 1.5, "%g", h);
    duet_comm_cost_t none, all, part;
    hw.comm_heat_share = 0;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &none), DUET_OK);
    hw.comm_heat_share = 1;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &all), DUET_OK);
    hw.comm_heat_share = 0.4;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &part), DUET_OK);
    cr_assert(t_rel_eq(all.t_alone, none.t_alone * h, 1e-12), "%g vs %g x %g", all.t_alone, none.t_alone, h);
    cr_assert(t_rel_eq(part.t_alone, none.t_alone * (1 + 0.4 * (h - 1)), 1e-12), "%g", part.t_alone);
    /* Share 0 is the tile's own time, as without a clock term at all. */
    duet_comm_cost_t cold;
    hw.clock_heat = 0;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &cold), DUET_OK);
    cr_assert(t_rel_eq(none.t_alone, cold.t_alone, 1e-12), "%g vs %g", none.t_alone, cold.t_alone);
}

Test(cost_clock_share, the_vendor_gemm_slows_with_its_own_clock_and_ceiling, T_TIMEOUT)
{
    duet_hw_t hw = hot_hw();
    hw.vendor_clock_heat = 0.3;
    hw.vendor_heat_half_us = 100;
    hw.vendor_sm_contention = 0.2;
    duet_plan_t p = clock_plan(&hw, 4096, 4096, 4096, DUET_COLL_NONE, DUET_MODE_VENDOR, 66);
    duet_gemm_cost_t c;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 66, &c), DUET_OK);
    /* The vendor's K step is its matrix time (no L2 or box terms) times its own clock factor and
     * its ceiling, not duet's clock_heat: 4096^3 is T = 2 x 4096^3 / (4096 x 1.83e9 x 132) =
     * 138.9 us, 1 + 0.3 x 138.9 / 238.9 = 1.17443; on 66 of 132 SMs 1 + 0.2 x 0.5 = 1.1. */
    cr_assert(t_rel_eq(c.t_step, c.t_step_mma * 1.17443 * 1.1, 1e-5), "%g vs %g", c.t_step, c.t_step_mma);
}

Test(cost_clock_share, the_vendor_fallback_kernels_follow_the_sm_target_in_part, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    hw.vendor_ragged_eff = 0.25;
    hw.vendor_ragged_sm_resp = 0;
    /* 4096 x 4096 in 128x256 tiles: 32 x 16 = 512 tiles, more than the 132 SMs. */
    duet_gemm_cost_t k33, k132, a33, a132, h33;
    duet_plan_t pk33 = clock_plan(&hw, 4096, 4096, 4095, DUET_COLL_NONE, DUET_MODE_VENDOR, 33);
    duet_plan_t pk132 = clock_plan(&hw, 4096, 4096, 4095, DUET_COLL_NONE, DUET_MODE_VENDOR, 132);
    duet_plan_t pa33 = clock_plan(&hw, 4096, 4096, 4096, DUET_COLL_NONE, DUET_MODE_VENDOR, 33);
    duet_plan_t pa132 = clock_plan(&hw, 4096, 4096, 4096, DUET_COLL_NONE, DUET_MODE_VENDOR, 132);
    hw.vendor_sm_contention = 0; /* the ceiling apart: the workers' own rates */
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pk33, 33, &k33), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pk132, 132, &k132), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pa33, 33, &a33), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pa132, 132, &a132), DUET_OK);
    /* Aligned: a worker's K step does not depend on the target (the target sets the workers). */
    cr_assert(t_rel_eq(a33.t_step_mma, a132.t_step_mma, 1e-12), "%g vs %g", a33.t_step_mma, a132.t_step_mma);
    /* Ragged (K = 4095 odd) on all 132 SMs: the factor alone, four times the aligned step. */
    cr_assert(t_rel_eq(k132.t_step_mma, 4 * a132.t_step_mma, 1e-12), "%g", k132.t_step_mma);
    /* Ragged at a target of 33 with vendor_ragged_sm_resp 0: each of the 33 workers stands for
     * 132 / 33 = 4 SMs' worth of the kernel that runs on all of them, a quarter of the step. */
    cr_assert(t_rel_eq(k33.t_step_mma, k132.t_step_mma * 33.0 / 132.0, 1e-12), "%g vs %g", k33.t_step_mma,
              k132.t_step_mma);
    /* With 0.5 the kernel gives up half of the 99 SMs the target leaves out: it runs as if on
     * 33 + 49.5 = 82.5 SMs, each worker's step 33 / 82.5 = 0.4 of the step at 132. */
    hw.vendor_ragged_sm_resp = 0.5;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pk33, 33, &h33), DUET_OK);
    cr_assert(t_rel_eq(h33.t_step_mma, k132.t_step_mma * 0.4, 1e-12), "%g vs %g", h33.t_step_mma, k132.t_step_mma);
}
