/*
 * Interference between the two kinds of tile, as model/cost.c prices it (the fluid simulator caps
 * the running tiles' speeds with these), and the count of GEMM tiles that run at once, which the
 * plan gives to every caller of duet_cost_gemm_tile(): values by hand.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

TestSuite(cost_interference, T_TIMEOUT);

Test(cost_interference, a_comm_tile_beside_gemm_tiles_stretches_its_pull_part)
{
    duet_hw_t hw = t_hw("h200");
    hw.rtt_gemm_stretch = 0.5;
    /* 132 SMs, 66 GEMM tiles running: half an SM's worth per SM, stretch 0.5 x 66 / 132 = 0.25.
     * A tile of 10 us with 4 us of pull: 10 / (10 + 4 x 0.25) = 10 / 11. */
    cr_assert(t_rel_eq(duet_cost_comm_beside_gemm(&hw, 10e-6, 4e-6, 66), 10.0 / 11.0, 1e-12));
    /* Every SM running GEMM: stretch 0.5, 10 / 12. */
    cr_assert(t_rel_eq(duet_cost_comm_beside_gemm(&hw, 10e-6, 4e-6, 132), 10.0 / 12.0, 1e-12));
    /* No GEMM tile beside it, or no pull: full speed. */
    cr_assert_eq(duet_cost_comm_beside_gemm(&hw, 10e-6, 4e-6, 0), 1.0);
    cr_assert_eq(duet_cost_comm_beside_gemm(&hw, 10e-6, 0, 132), 1.0);
}

Test(cost_interference, a_gemm_tile_on_a_shared_sm_gives_up_issue_slots)
{
    duet_hw_t hw = t_hw("h200");
    hw.comm_sm_share = 0.1;
    /* 8 comm CTAs over 4 shared SMs: 2 per SM, 1 / (1 + 0.1 x 2) = 1 / 1.2. */
    cr_assert(t_rel_eq(duet_cost_gemm_beside_comm(&hw, 8, 4), 1.0 / 1.2, 1e-12));
    cr_assert_eq(duet_cost_gemm_beside_comm(&hw, 0, 4), 1.0);
    cr_assert_eq(duet_cost_gemm_beside_comm(&hw, 8, 0), 1.0);
}

static duet_plan_t plan_of(duet_mode_t mode, int32_t num_wgs, int32_t gemm_wgs, int32_t comm_wgs)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    duet_config_t cfg = duet_config_default(&hw, mode);
    cfg.num_wgs = num_wgs;
    cfg.gemm_wgs = gemm_wgs;
    cfg.comm_wgs = comm_wgs;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

Test(cost_interference, the_concurrent_gemm_tiles_come_from_the_plan)
{
    /* Fused, 132 CTAs of which 120 start on the GEMM queue: 120 GEMM tiles at once (the 12
     * comm-home CTAs reach the GEMM queue only after the comm queue), not the grid's 132. */
    duet_plan_t p = plan_of(DUET_MODE_FUSED, 132, 120, 12);
    cr_assert_eq(duet_plan_gemm_concurrent(&p), 120);
    /* Concurrent: the GEMM kernel's grid. */
    p = plan_of(DUET_MODE_CONCURRENT, 0, 112, 20);
    cr_assert_eq(duet_plan_gemm_concurrent(&p), 112);
    /* Fused with no GEMM-home CTA: the CTAs that steal GEMM tiles, all 132. */
    p = plan_of(DUET_MODE_FUSED, 132, 0, 132);
    cr_assert_eq(duet_plan_gemm_concurrent(&p), 132);
}
