/*
 * Vendor rows in calibration: a row's recorded kernel is the one priced, a row without one is
 * priced at the modelled choice under the profile being fitted, and the vendor's collective alone
 * (NCCL, RCCL) is kept out of the fit, which has no constant for it.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "calibrate/internal.h"

static duet_corpus_row_t vendor_row(int32_t kind, int32_t gemm_wgs)
{
    duet_hw_t hw = t_hw("h200");
    hw.vendor_records = 1; /* a profile whose constants describe recorded kernels */
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.kind = kind;
    r.wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 4096, 2);
    r.cfg = duet_config_default(&hw, DUET_MODE_VENDOR);
    cr_assert_eq(duet_config_complete_split(&r.cfg, &hw, -1, gemm_wgs, hw.n_sms - gemm_wgs), DUET_OK);
    r.ok = 1;
    r.ms = 0.5;
    r.min_ms = r.max_ms = 0.5;
    r.repeats = 3;
    return r;
}

/* The simulated time of the row's GEMM with the given kernel, in ms. */
static double gemm_ms(const duet_hw_t *hw, const duet_corpus_row_t *r, duet_gemm_tile_t t, int32_t split_k, int chosen)
{
    duet_workload_t wl = duet_cal_row_workload(r);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &r->cfg, duet_plan_critical_rank(&wl), &p), DUET_OK);
    if (chosen)
        cr_assert_eq(duet_plan_vendor_choose(hw, &p), DUET_OK);
    else
        cr_assert_eq(duet_plan_set_gemm_kernel(&p, t, split_k), DUET_OK);
    duet_sim_ws_t *ws = NULL;
    duet_sim_result_t res;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, hw, &p, NULL, &res), DUET_OK);
    duet_sim_ws_destroy(ws);
    return res.makespan_s * 1e3;
}

Test(vendor_rows, a_recorded_kernel_is_priced_and_else_the_modelled_choice, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    hw.vendor_records = 1; /* a profile whose constants describe recorded kernels */
    duet_corpus_row_t r = vendor_row(DUET_ROW_GEMM_ALONE, 66);
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    double none, big, small;
    cr_assert_eq(duet_cal_row_predict(ws, NULL, &hw, &r, &none), DUET_OK, "%s", duet_last_error());
    r.vendor = (duet_vendor_kernel_t){.valid = 1, .tile_m = 128, .tile_n = 256, .stage_k = 64, .split_k = 1};
    cr_assert_eq(duet_cal_row_predict(ws, NULL, &hw, &r, &big), DUET_OK);
    r.vendor.tile_m = r.vendor.tile_n = 64;
    cr_assert_eq(duet_cal_row_predict(ws, NULL, &hw, &r, &small), DUET_OK);
    duet_sim_ws_destroy(ws);
    cr_assert(t_rel_eq(big, gemm_ms(&hw, &r, (duet_gemm_tile_t){128, 256, 64}, 1, 0), 1e-12), "%g", big);
    cr_assert(t_rel_eq(small, gemm_ms(&hw, &r, (duet_gemm_tile_t){64, 64, 64}, 1, 0), 1e-12), "%g", small);
    cr_assert(!t_rel_eq(big, small, 1e-3), "%g vs %g", big, small);
    cr_assert(t_rel_eq(none, gemm_ms(&hw, &r, r.cfg.tile, 1, 1), 1e-12), "%g", none);
}

Test(vendor_rows, a_set_prices_its_vendor_rows_at_the_librarys_kernel, T_TIMEOUT)
{
    /* The fit's row set builds each plan once; a vendor row's kernel is decided per profile. */
    duet_hw_t hw = t_hw("h200");
    hw.vendor_records = 1; /* a profile whose constants describe recorded kernels */
    duet_corpus_row_t rows[2] = {vendor_row(DUET_ROW_GEMM_ALONE, 66), vendor_row(DUET_ROW_GEMM_ALONE, 132)};
    rows[1].vendor = (duet_vendor_kernel_t){.valid = 1, .tile_m = 64, .tile_n = 64, .stage_k = 64, .split_k = 1};
    duet__cal_set_t s;
    cr_assert_eq(duet__cal_set_from_array(rows, 2, &s), DUET_OK, "%s", duet_last_error());
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    double chosen, recorded;
    cr_assert_eq(duet__cal_predict(ws, &duet_sim_policy_fluid, &hw, &s, 0, &chosen), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet__cal_predict(ws, &duet_sim_policy_fluid, &hw, &s, 1, &recorded), DUET_OK);
    duet_sim_ws_destroy(ws);
    cr_assert(t_rel_eq(chosen, gemm_ms(&hw, &rows[0], rows[0].cfg.tile, 1, 1), 1e-12), "%g", chosen);
    /* ... which is not the corpus's stand-in tile (the row's cfg.tile, duet's default). */
    cr_assert(!t_rel_eq(chosen, gemm_ms(&hw, &rows[0], rows[0].cfg.tile, 1, 0), 1e-6), "%g", chosen);
    cr_assert(t_rel_eq(recorded, gemm_ms(&hw, &rows[1], (duet_gemm_tile_t){64, 64, 64}, 1, 0), 1e-12), "%g", recorded);
    duet__cal_set_free(&s);
}

Test(vendor_rows, the_vendors_collective_alone_is_not_fitted, T_TIMEOUT)
{
    duet_corpus_row_t rows[3] = {vendor_row(DUET_ROW_COMM_ALONE, 124), vendor_row(DUET_ROW_GEMM_ALONE, 132),
                                 vendor_row(DUET_ROW_OP, 124)};
    duet__cal_set_t s;
    cr_assert_eq(duet__cal_set_from_array(rows, 3, &s), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet__cal_row_usable(&s, 0, &duet_sim_policy_fluid), 0);
    cr_assert_eq(duet__cal_row_usable(&s, 1, &duet_sim_policy_fluid), 1);
    cr_assert_eq(duet__cal_row_usable(&s, 2, &duet_sim_policy_fluid), 1);
    duet__cal_set_free(&s);
}

/* vendor_records 0 (the built-ins): a row's recorded kernel is not priced, the modelled choice is,
 * as for a row with no record. */
Test(vendor_rows, a_profile_without_vendor_records_prices_the_modelled_choice, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    cr_assert_eq(hw.vendor_records, 0);
    duet_corpus_row_t r = vendor_row(DUET_ROW_GEMM_ALONE, 66);
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    double none, rec;
    cr_assert_eq(duet_cal_row_predict(ws, NULL, &hw, &r, &none), DUET_OK, "%s", duet_last_error());
    r.vendor = (duet_vendor_kernel_t){.valid = 1, .tile_m = 64, .tile_n = 64, .stage_k = 64, .split_k = 1};
    cr_assert_eq(duet_cal_row_predict(ws, NULL, &hw, &r, &rec), DUET_OK);
    duet_sim_ws_destroy(ws);
    cr_assert_eq(rec, none);
    hw.vendor_records = 1;
    cr_assert(!t_rel_eq(gemm_ms(&hw, &r, (duet_gemm_tile_t){64, 64, 64}, 1, 0), none, 1e-3),
              "the record would have priced otherwise");
}
