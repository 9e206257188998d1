/*
 * Concurrent mode's placement of the comm kernel's CTAs (docs/simulator.md, "Placement in
 * concurrent mode"): breadth-first on idle SMs up to comm_ctas_per_sm each, then beside GEMM CTAs
 * up to comm_coresident each, the rest waiting for a GEMM CTA to exit; a GEMM tile on an SM with
 * running comm CTAs slowed by comm_sm_share per comm CTA on its SM. Worked by hand from the trace.
 */
#include "sim_util.h"

T_SIM_SUITE(coresident);

#define US 1e-6

/*
 * 10 GEMM CTAs and 528 comm CTAs on 132 SMs, 4 comm CTAs per SM, 2 beside a GEMM CTA:
 *   122 idle SMs take 488 comm CTAs (ids 10..497, SMs 10 + j % 122);
 *   the 10 GEMM SMs take 20 more beside their GEMM CTA (ids 498..517, SMs j % 10);
 *   20 wait (ids 518..537).
 * The GEMM is 768 x 640 x 4096 in 256x128 tiles: 3 x 5 = 15 tiles, so the 10 GEMM CTAs run one
 * wave of 10 tiles, then 5 of them a second tile while the other 5 find the queue empty and exit.
 * An exiting GEMM CTA frees its SM for comm_ctas_per_sm - comm_coresident = 2 more comm CTAs: the
 * first 5 exits start 10 of the waiting CTAs, the last 5 the other 10.
 * Each GEMM tile beside 2 running comm CTAs runs at 1 / (1 + 0.1 x 2): 1.2 x its time alone. The
 * all_gather (64 x 64 tiles of 32 KiB) is link-bound for far longer than the GEMM, and its
 * dequeues are hidden behind its tiles, so its CTAs run without a gap meanwhile.
 * Times: the launch and the barriers (6 + 4.3 us) and each dequeue (0.5 us) of the start profile.
 */
static void run_case(int32_t coresident, double slow, int32_t on_shared, int32_t first_batch)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.comm_ctas_per_sm = 4;
    hw.comm_coresident = coresident;
    hw.comm_sm_share = 0.1;
    duet_workload_t wl = t_wl(768, 640, 4096, DUET_COLL_ALL_GATHER, 16384, 4096, 2);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_CONCURRENT);
    cfg.tile = (duet_gemm_tile_t){256, 128, 64};
    cfg.gemm_wgs = 10;
    cfg.comm_wgs = 528;
    cfg.num_wgs = 538;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.gemm.tiles, 15);
    duet_gemm_cost_t gc;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 10, &gc), DUET_OK);
    double t_sm = gc.t_sm;

    duet_trace_t t;
    duet_trace_init(&t, "x");
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, &t, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(r.n_ctas, 538);

    const int32_t g = 10, on_idle = 488;
    const int32_t pending = 528 - on_idle - on_shared;
    double t0 = (6 + 4.3) * US;
    double t1 = t0 + 0.5 * US + slow * t_sm; /* the first wave of GEMM tiles ends */
    double t2 = t1 + 0.5 * US + slow * t_sm; /* the second */
    double first[538];
    for (int i = 0; i < 538; i++)
        first[i] = INFINITY;
    int gemm_recs = 0;
    for (size_t i = 0; i < t.n; i++) {
        const duet_trace_rec_t *x = &t.recs[i];
        if (x->start_s < first[x->cta])
            first[x->cta] = x->start_s;
        if (x->queue == DUET_QUEUE_GEMM) {
            gemm_recs++;
            cr_assert(x->cta < g && x->sm == x->cta, "GEMM CTA %d on SM %d", x->cta, x->sm);
            double start = x->tile < 10 ? t0 + 0.5 * US : t1 + 0.5 * US;
            cr_assert(t_rel_eq(x->start_s, start, 1e-9), "GEMM tile %lld starts at %.6f us", (long long)x->tile,
                      x->start_s / US);
            cr_assert(t_rel_eq(x->end_s - x->start_s, slow * t_sm, 1e-9), "GEMM tile %lld: %.6f us, want %.6f",
                      (long long)x->tile, (x->end_s - x->start_s) / US, slow * t_sm / US);
            continue;
        }
        cr_assert(x->cta >= g);
        int32_t j = x->cta - g;
        if (j < on_idle)
            cr_assert_eq(x->sm, g + j % 122, "comm CTA %d on idle SM %d", x->cta, x->sm);
        else if (j < on_idle + on_shared)
            cr_assert_eq(x->sm, (j - on_idle) % ((on_shared + coresident - 1) / coresident),
                         "comm CTA %d beside GEMM CTA on SM %d", x->cta, x->sm);
        else
            cr_assert(x->sm >= 0 && x->sm < g, "waiting comm CTA %d started on freed SM %d", x->cta, x->sm);
    }
    cr_assert_eq(gemm_recs, 15);
    /* Every placed comm CTA starts its first tile after the first dequeue. */
    for (int32_t j = 0; j < on_idle + on_shared; j++)
        cr_assert(t_rel_eq(first[g + j], t0 + 0.5 * US, 1e-9), "comm CTA %d at %.6f us", g + j, first[g + j] / US);
    /* The waiting ones: a first batch when the first 5 GEMM CTAs exit (after their failing
     * dequeue), the rest when the last 5 do; each then pays its own first dequeue. */
    int early = 0, late = 0;
    for (int32_t j = on_idle + on_shared; j < 528; j++) {
        double s = first[g + j];
        if (t_rel_eq(s, t1 + 1.0 * US, 1e-9))
            early++;
        else if (t_rel_eq(s, t2 + 1.0 * US, 1e-9))
            late++;
        else
            cr_assert_fail("waiting comm CTA %d starts at %.6f us (t1 %.6f, t2 %.6f)", g + j, s / US, t1 / US, t2 / US);
    }
    cr_assert_eq(early, first_batch, "%d of the waiting CTAs started at the first exits", early);
    cr_assert_eq(late, pending - first_batch);
    duet_trace_free(&t);
}

Test(coresident, two_beside_each_gemm_cta)
{
    /* 20 beside the GEMM CTAs, 20 waiting; the first 5 exits free 5 x (4 - 2) = 10 slots. */
    run_case(2, 1.2, 20, 10);
}

Test(coresident, one_beside_each_gemm_cta)
{
    /* 10 beside (one per GEMM SM, 1.1 x), 30 waiting; the first 5 exits free 5 x 3 = 15 slots,
     * the last 5 another 15. */
    run_case(1, 1.1, 10, 15);
}
