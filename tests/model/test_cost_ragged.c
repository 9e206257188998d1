/*
 * The two ragged-shape terms of the cost model: duet's C store where rows start off 16 bytes
 * (c_ragged_sm_gbs) and the vendor GEMM's slow kernels where K or N is off a multiple of 8
 * (vendor_ragged_eff). Values derived by hand from the formulas in model/cost.c.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

static duet_plan_t ragged_plan(const duet_hw_t *hw, int64_t m, int64_t n, int64_t k, int32_t mode)
{
    duet_workload_t wl = t_wl(m, n, k, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(hw, mode);
    cfg.tile = (duet_gemm_tile_t){128, 256, 64};
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

Test(cost_ragged, a_ragged_n_stores_c_at_the_slow_rate, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    hw.c_ragged_sm_gbs = 4;
    /* 256 x 1001 in 128x256 tiles: 2 x 4 tiles; each holds (256 / 2) x (1001 / 4) = 32032 elements
     * of C on average, 64064 bytes, at 4 GB/s: 16.016 us, far above the aligned store's time. */
    duet_plan_t p = ragged_plan(&hw, 256, 1001, 512, DUET_MODE_FUSED);
    duet_gemm_cost_t c;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 132, &c), DUET_OK);
    cr_assert(t_rel_eq(c.t_epilogue, 64064.0 / 4e9, 1e-12), "%g", c.t_epilogue);
    /* 0 turns the term off: the aligned pricing, as N = 1000 (a multiple of 8) has it. */
    duet_gemm_cost_t off;
    hw.c_ragged_sm_gbs = 0;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 132, &off), DUET_OK);
    cr_assert(off.t_epilogue < 1e-6, "%g", off.t_epilogue);
    /* An aligned N never pays it. */
    hw.c_ragged_sm_gbs = 4;
    duet_plan_t q = ragged_plan(&hw, 256, 1000, 512, DUET_MODE_FUSED);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &q, 132, &c), DUET_OK);
    cr_assert(c.t_epilogue < 1e-6, "%g", c.t_epilogue);
}

Test(cost_ragged, the_vendor_gemm_slows_by_its_alignment_class, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    hw.vendor_ragged_eff = 0.25;   /* K odd */
    hw.vendor_ragged_k4_eff = 0.5; /* K even, off 8 */
    hw.vendor_ragged_n_eff = 0.2;  /* N odd */
    hw.vendor_ragged_n4_eff = 0.8; /* N even, off 8 */
    hw.vendor_ragged_sm_resp = 0;
    duet_gemm_cost_t a, k, n, k4, n4, kn;
    duet_plan_t pa = ragged_plan(&hw, 4096, 4096, 4096, DUET_MODE_VENDOR);
    duet_plan_t pk = ragged_plan(&hw, 4096, 4096, 4095, DUET_MODE_VENDOR);
    duet_plan_t pn = ragged_plan(&hw, 4096, 4095, 4096, DUET_MODE_VENDOR);
    duet_plan_t pk4 = ragged_plan(&hw, 4096, 4096, 4094, DUET_MODE_VENDOR);
    duet_plan_t pn4 = ragged_plan(&hw, 4096, 4092, 4096, DUET_MODE_VENDOR);
    duet_plan_t pkn = ragged_plan(&hw, 4096, 4092, 4095, DUET_MODE_VENDOR);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pa, 132, &a), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pk, 132, &k), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pn, 132, &n), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pk4, 132, &k4), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pn4, 132, &n4), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &pkn, 132, &kn), DUET_OK);
    /* A K step's matrix time is inversely proportional to the efficiency; the fallback kernels
     * ignore the SM target here (vendor_ragged_sm_resp 0: tests/model/test_cost_clock_share.c), so
     * each of the default target's workers (gemm_ctas of the 512 tiles) stands for 132 / gemm_ctas
     * SMs and its step is shorter by that much. */
    double w = (double)pk.gemm_ctas / 132.0;
    cr_assert(pk.gemm_ctas > 0 && pk.gemm_ctas < 132, "%d", (int)pk.gemm_ctas);
    cr_assert(t_rel_eq(k.t_step_mma, 4 * w * a.t_step_mma, 1e-12), "%g vs %g", k.t_step_mma, a.t_step_mma);
    cr_assert(t_rel_eq(n.t_step_mma, 5 * w * a.t_step_mma, 1e-12), "%g vs %g", n.t_step_mma, a.t_step_mma);
    cr_assert(t_rel_eq(k4.t_step_mma, 2 * w * a.t_step_mma, 1e-12), "%g vs %g", k4.t_step_mma, a.t_step_mma);
    cr_assert(t_rel_eq(n4.t_step_mma, 1.25 * w * a.t_step_mma, 1e-12), "%g vs %g", n4.t_step_mma, a.t_step_mma);
    /* K odd and N even off 8: one kernel runs, the worse class decides (0.25, not 0.25 x 0.8). */
    cr_assert(t_rel_eq(kn.t_step_mma, 4 * w * a.t_step_mma, 1e-12), "%g vs %g", kn.t_step_mma, a.t_step_mma);
    /* duet's own tile is not the vendor's: no factor. */
    duet_plan_t dk = ragged_plan(&hw, 4096, 4096, 4095, DUET_MODE_FUSED);
    duet_plan_t da = ragged_plan(&hw, 4096, 4096, 4096, DUET_MODE_FUSED);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &dk, 132, &k), DUET_OK);
    cr_assert_eq(duet_cost_gemm_tile(&hw, &da, 132, &a), DUET_OK);
    cr_assert_eq(k.t_step_mma, a.t_step_mma);
}
