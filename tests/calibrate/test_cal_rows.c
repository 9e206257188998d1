/*
 * What a corpus row predicts: the operation itself, the GEMM alone (no collective) or the
 * collective alone (no GEMM), each priced as that workload by the simulator.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "synth.h"

Test(cal_rows, alone_rows_drop_the_other_half_of_the_workload, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.wl = t_wl(4096, 4096, 4096, DUET_COLL_BROADCAST, 1024, 2048, 4);
    r.wl.root = 2;
    r.cfg = t_fused(&hw, 132, 99, (duet_gemm_tile_t){256, 128, 64});
    r.ok = 1;
    r.ms = 1.0;

    r.kind = DUET_ROW_OP;
    duet_workload_t w = duet_cal_row_workload(&r);
    cr_assert(duet_workload_same(&w, &r.wl));

    r.kind = DUET_ROW_GEMM_ALONE;
    w = duet_cal_row_workload(&r);
    cr_assert(w.coll == DUET_COLL_NONE && w.mc == 0 && w.nc == 0 && w.root == 0);
    cr_assert(w.m == 4096 && w.n == 4096 && w.k == 4096 && w.world == 4);

    r.kind = DUET_ROW_COMM_ALONE;
    w = duet_cal_row_workload(&r);
    cr_assert(w.m == 0 && w.n == 0 && w.k == 0);
    cr_assert(w.coll == DUET_COLL_BROADCAST && w.mc == 1024 && w.nc == 2048 && w.root == 2);

    /* The GEMM-alone row's prediction is the GEMM's own simulation (no barriers, no comm). */
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    r.kind = DUET_ROW_GEMM_ALONE;
    double ms;
    cr_assert_eq(duet_cal_row_predict(ws, NULL, &hw, &r, &ms), DUET_OK, "%s", duet_last_error());
    duet_workload_t g = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 4);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&g, &r.cfg, 0, &p), DUET_OK);
    duet_sim_result_t res;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &res), DUET_OK);
    cr_assert_eq(ms, res.makespan_s * 1e3);
    duet_sim_ws_destroy(ws);
}
