/*
 * Helpers of the simulator tests: a suite with a simulator workspace, and a plan of one
 * configuration.
 */
#ifndef DUET_TEST_SIM_UTIL_H
#define DUET_TEST_SIM_UTIL_H

#include <criterion/criterion.h>

#include "../test_util.h"

/* A suite whose tests share `ws`, created before and destroyed after each test. */
#define T_SIM_SUITE(suite)                                                                                             \
    static duet_sim_ws_t *ws;                                                                                          \
    static void t_sim_setup(void)                                                                                      \
    {                                                                                                                  \
        cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);                                                                \
    }                                                                                                                  \
    static void t_sim_teardown(void)                                                                                   \
    {                                                                                                                  \
        duet_sim_ws_destroy(ws);                                                                                       \
    }                                                                                                                  \
    TestSuite(suite, .init = t_sim_setup, .fini = t_sim_teardown, T_TIMEOUT)

/* The plan of `wl` on its critical rank: fused with gemm_wgs of the default grid (comm_wgs
 * ignored), or concurrent/vendor with the two grids given. */
static inline duet_plan_t t_sim_plan(const duet_hw_t *hw, duet_workload_t wl, int32_t mode, int32_t gemm_wgs,
                                     int32_t comm_wgs)
{
    duet_config_t cfg = duet_config_default(hw, mode);
    cfg.gemm_wgs = gemm_wgs;
    if (mode == DUET_MODE_FUSED) {
        cfg.comm_wgs = cfg.num_wgs - gemm_wgs;
    } else {
        cfg.comm_wgs = comm_wgs;
        cfg.num_wgs = gemm_wgs + comm_wgs;
    }
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, duet_plan_critical_rank(&wl), &p), DUET_OK, "%s", duet_last_error());
    return p;
}

#endif /* DUET_TEST_SIM_UTIL_H */
