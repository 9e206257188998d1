/*
 * A cached winner is checked against the profile and workload it is used with before it is used:
 * an entry whose configuration does not fit (edited, or stored for a larger device under the same
 * key) is tuned again, with a warning, never handed to the backend.
 */
#include "tune_util.h"

Test(tuner_recheck, a_cached_configuration_that_does_not_fit_is_tuned_again, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_tune_params_t p = tt_quiet_params(&w);
    tt_bench_t b = {.target = 120};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(r.stored, 1);

    /* The stored winner becomes a fused grid of 200 CTAs: more than h200's 132 SMs. */
    duet_tune_db_t db;
    duet_tune_entry_t e;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_eq(duet_tune_db_lookup(&db, r.key, &e), DUET_OK);
    e.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    e.cfg.num_wgs = 200;
    e.cfg.gemm_wgs = 150;
    e.cfg.comm_wgs = 50;
    cr_assert_neq(duet_config_validate(&e.cfg, &wl, &hw), DUET_OK, "the edited winner must not fit");
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK, "%s", duet_last_error());

    tt_bench_t b2 = {.target = 120};
    duet_tune_result_t r2;
    w.n = 0;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b2, &r2), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(r2.cached, 0, "the misfit was not used");
    cr_assert_gt(b2.calls, 0, "tuned again");
    cr_assert_eq(duet_config_validate(&r2.cfg, &wl, &hw), DUET_OK);
    cr_assert(memcmp(&r2.cfg, &r.cfg, sizeof(r.cfg)) == 0, "the same benchmark picks the same winner");
    cr_assert(strstr(w.text, "the cached configuration no longer fits") != NULL, "%s", w.text);
    cr_assert(strstr(w.text, "tuning again") != NULL, "%s", w.text);
    /* And the database holds the fitting winner again: the next run is a hit. */
    tt_bench_t b3 = {.fail_all = 1};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b3, &r2), DUET_OK);
    cr_assert_eq(r2.cached, 1);
    cr_assert_eq(b3.calls, 0);
    cr_assert(memcmp(&r2.cfg, &r.cfg, sizeof(r.cfg)) == 0);
    tt_rmdir(dir);
}
