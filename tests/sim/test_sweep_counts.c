/*
 * Exact counts of the sweep (the splits it tries in each mode) and of the default's rank, and the
 * tie window of the ranking measured from the fastest of a group (DUET_RANK_TIE_REL, 1e-9).
 */
#include "sim_util.h"

T_SIM_SUITE(sweep_counts);

/*
 * Every split, one tile, no K split: fused gemm_wgs 1..132 of 132 CTAs (132 points), concurrent
 * gemm_wgs 1..131 with comm_wgs = 132 - gemm_wgs (131: the comm kernel keeps at least one SM), and
 * copy mode on all 132 SMs with 1 or 2 copy streams (an all_gather at world 2 is two copies a rank).
 * The static default (fused, 99 + 33, 256x128) is among the fused points: its rank counts the
 * points strictly faster than it, not itself.
 */
Test(sweep_counts, every_split_of_both_modes_and_the_defaults_rank)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.n_tiles = 1;
    sp.tiles[0] = (duet_gemm_tile_t){256, 128, 64};
    sp.n_split_ks = 1;
    sp.split_ks[0] = 1;
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, (size_t)(132 + 131 + 2));
    int fused[133] = {0}, conc[133] = {0}, copy[3] = {0};
    size_t faster = 0, same = 0;
    for (size_t i = 0; i < res.n; i++) {
        const duet_config_t *c = &res.points[i].cfg;
        if (c->mode == DUET_MODE_FUSED) {
            cr_assert(c->num_wgs == 132 && c->gemm_wgs + c->comm_wgs == 132);
            fused[c->gemm_wgs]++;
        } else if (c->mode == DUET_MODE_COPY) {
            cr_assert(c->gemm_wgs == 132 && c->num_wgs == 132 && c->comm_wgs >= 1 && c->comm_wgs <= 2);
            copy[c->comm_wgs]++;
        } else {
            cr_assert_eq(c->comm_wgs, 132 - c->gemm_wgs, "concurrent %d + %d", c->gemm_wgs, c->comm_wgs);
            cr_assert_geq(c->comm_wgs, 1);
            conc[c->gemm_wgs]++;
        }
        faster += res.points[i].makespan_s < res.dflt.makespan_s;
        same += duet_config_same(c, &res.dflt.cfg);
    }
    for (int g = 1; g <= 132; g++) {
        cr_assert_eq(fused[g], 1, "fused %d", g);
        cr_assert_eq(conc[g], g < 132, "concurrent %d", g);
    }
    cr_assert(copy[1] == 1 && copy[2] == 1);
    cr_assert_eq(same, 1, "the default is one of the points");
    cr_assert_eq(res.default_rank, faster + 1);
    duet_sweep_result_free(&res);
}

/*
 * Ties are the items within 1e-9 of the fastest of a group, not a chain of neighbours each 1e-9
 * apart: at 1, 1 + 0.8e-9 and 1 + 1.6e-9 the first two tie (the one with more collective CTAs
 * first) and the third, 1.6e-9 from the fastest, comes after them although it has the most.
 */
Test(sweep_counts, a_tie_is_measured_from_the_fastest)
{
    duet_rank_item_t it[3];
    const double pred[3] = {1.0, 1.0 + 0.8e-9, 1.0 + 1.6e-9};
    const int32_t comm[3] = {10, 20, 30};
    for (int i = 0; i < 3; i++) {
        memset(&it[i], 0, sizeof(it[i]));
        it[i].pred = pred[i];
        it[i].cfg.mode = DUET_MODE_FUSED;
        it[i].cfg.num_wgs = 132;
        it[i].cfg.comm_wgs = comm[i];
        it[i].cfg.gemm_wgs = 132 - comm[i];
        it[i].cfg.tile = (duet_gemm_tile_t){256, 128, 64};
        it[i].idx = (size_t)i;
    }
    duet_rank_sort(it, 3);
    cr_assert(it[0].idx == 1 && it[1].idx == 0 && it[2].idx == 2, "order %zu %zu %zu", it[0].idx, it[1].idx, it[2].idx);
}

/* Vendor mode: one point per split, each at the kernel the library is modelled to choose for
 * that SM target (the plan's GEMM geometry), whatever duet tiles the sweep was given. */
Test(sweep_counts, vendor_mode_is_one_point_per_split_at_the_librarys_kernel)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(512, 4096, 8192, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.modes = 1u << DUET_MODE_VENDOR;
    sp.n_tiles = 2;
    sp.tiles[0] = (duet_gemm_tile_t){256, 256, 64};
    sp.tiles[1] = (duet_gemm_tile_t){64, 64, 64};
    duet_sweep_result_t res;
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(res.n, (size_t)131);
    cr_assert_eq(res.n_simulated, (size_t)131 + 1); /* and the static default */
    int seen[133] = {0};
    for (size_t i = 0; i < res.n; i++) {
        const duet_config_t *c = &res.points[i].cfg;
        cr_assert_eq(c->mode, DUET_MODE_VENDOR);
        seen[c->gemm_wgs]++;
        duet_config_t d = duet_config_default(&hw, DUET_MODE_VENDOR);
        cr_assert_eq(duet_config_complete_split(&d, &hw, -1, c->gemm_wgs, c->comm_wgs), DUET_OK);
        duet_plan_t p;
        cr_assert_eq(duet_plan_build(&wl, &d, duet_plan_critical_rank(&wl), &p), DUET_OK);
        cr_assert_eq(duet_plan_vendor_choose(&hw, &p), DUET_OK);
        cr_assert(duet_config_same(c, &p.cfg), "gemm_wgs %d: %dx%d/k%d vs %dx%d/k%d", c->gemm_wgs, c->tile.bm,
                  c->tile.bn, c->split_k, p.cfg.tile.bm, p.cfg.tile.bn, p.cfg.split_k);
    }
    for (int g = 1; g <= 131; g++)
        cr_assert_eq(seen[g], 1, "gemm_wgs %d listed %d times", g, seen[g]);
    duet_sweep_result_free(&res);
}
