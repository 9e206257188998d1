/*
 * heat_sm_exp: the clock's slow-down under the GEMM's matrix work scales with the share of SMs
 * running the GEMM, 1 + clock_heat x share^heat_sm_exp x T / (T + heat_half_us), by hand.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

TestSuite(cost_heat_sms, T_TIMEOUT);

static duet_plan_t gemm_plan(const duet_hw_t *hw, int64_t m, int32_t ctas)
{
    duet_workload_t wl = t_wl(m, m, m, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_FUSED);
    cfg.tile = (duet_gemm_tile_t){256, 128, 64};
    cfg.num_wgs = cfg.gemm_wgs = ctas;
    cfg.comm_wgs = 0;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

Test(cost_heat_sms, the_factor_scales_with_the_busy_share)
{
    duet_hw_t hw = t_hw("h200");
    hw.clock_heat = 0.4;
    hw.heat_half_us = 50;
    /* 8192^3 in 256x128 tiles: 32 x 64 = 2048 tiles, more than any grid. */
    double t_us = 2.0 * 8192.0 * 8192.0 * 8192.0 / duet_cost_peak_flops(&hw, DUET_DTYPE_BF16) * 1e6;
    double grow = t_us / (t_us + 50);
    duet_plan_t quarter = gemm_plan(&hw, 8192, 33), all = gemm_plan(&hw, 8192, 132);
    /* heat_sm_exp 0: as before, whatever the SMs. */
    hw.heat_sm_exp = 0;
    cr_assert(t_rel_eq(duet_cost_clock_heat(&hw, &quarter), 1 + 0.4 * grow, 1e-12));
    cr_assert(t_rel_eq(duet_cost_clock_heat(&hw, &all), 1 + 0.4 * grow, 1e-12));
    /* heat_sm_exp 1: a quarter of the SMs heats a quarter as much; all of them as before. */
    hw.heat_sm_exp = 1;
    cr_assert(t_rel_eq(duet_cost_clock_heat(&hw, &quarter), 1 + 0.4 * 0.25 * grow, 1e-12), "%.17g",
              duet_cost_clock_heat(&hw, &quarter));
    cr_assert(t_rel_eq(duet_cost_clock_heat(&hw, &all), 1 + 0.4 * grow, 1e-12));
    /* heat_sm_exp 2: the square of the share. */
    hw.heat_sm_exp = 2;
    cr_assert(t_rel_eq(duet_cost_clock_heat(&hw, &quarter), 1 + 0.4 * 0.0625 * grow, 1e-12));
    /* 512^3: 2 x 4 = 8 tiles on 132 CTAs: only 8 SMs ever run the GEMM. */
    hw.heat_sm_exp = 1;
    duet_plan_t small = gemm_plan(&hw, 512, 132);
    double ts = 2.0 * 512.0 * 512.0 * 512.0 / duet_cost_peak_flops(&hw, DUET_DTYPE_BF16) * 1e6;
    cr_assert(t_rel_eq(duet_cost_clock_heat(&hw, &small), 1 + 0.4 * (8.0 / 132.0) * ts / (ts + 50), 1e-12));
}
