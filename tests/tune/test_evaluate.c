/*
 * The tuner replayed on a corpus: the per-shape picks and the summary, checked against values
 * computed here independently (the simulator's ranking of each shape's grid).
 */
#include "tune_util.h"

#define NGRID 8

/* Two shapes on the H200 (132 SMs), each measured on a grid of 8 fused configurations that
 * includes the static default (99 of 132, 256x128x64). The times are made up so that neither the
 * default nor (necessarily) the model's favourite is the best. */
static duet_corpus_t eval_corpus(duet_config_t grid[2][NGRID], double ms[2][NGRID])
{
    static const int32_t gw[4] = {66, 99, 115, 128};
    static const duet_gemm_tile_t tiles[2] = {{256, 128, 64}, {256, 256, 64}};
    duet_corpus_t c = tt_corpus("sm_90", 132, 2);
    duet_workload_t wls[2] = {t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2),
                              t_wl(2048, 8192, 2048, DUET_COLL_ALL_REDUCE, 512, 4096, 2)};
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < NGRID; i++) {
            /* The default (index 2: 99 CTAs, 256x128) is 20 % slower than the best of the shape. */
            double v = i == 2 ? 1.2 : 1.0 + 0.01 * (double)((i * 5 + s * 3) % NGRID);
            duet_corpus_row_t r = tt_row(wls[s], DUET_MODE_FUSED, 132, gw[i / 2], 132 - gw[i / 2], tiles[i % 2], v);
            cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
            grid[s][i] = r.cfg;
            ms[s][i] = v;
        }
    return c;
}

/* The model's favourite of a grid, as the tuner ranks it: lowest simulated makespan, ties to the
 * earlier configuration. */
static int model_top1(const duet_hw_t *hw, const duet_workload_t *wl, const duet_config_t *grid)
{
    duet_sim_ws_t *ws = NULL;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    int best = -1;
    double best_s = INFINITY;
    for (int i = 0; i < NGRID; i++) {
        duet_plan_t plan;
        duet_sim_result_t r;
        cr_assert_eq(duet_plan_build(wl, &grid[i], duet_plan_critical_rank(wl), &plan), DUET_OK);
        cr_assert_eq(duet_sim_run(ws, &duet_sim_policy_fluid, hw, &plan, NULL, &r), DUET_OK);
        if (r.makespan_s < best_s) {
            best_s = r.makespan_s;
            best = i;
        }
    }
    duet_sim_ws_destroy(ws);
    return best;
}

Test(evaluate, with_room_for_the_whole_grid_the_tuner_finds_the_oracle, T_TIMEOUT)
{
    duet_config_t grid[2][NGRID];
    double ms[2][NGRID];
    duet_corpus_t c = eval_corpus(grid, ms);
    duet_hw_t hw = t_hw("h200");
    duet_tune_params_t p = duet_tune_default_params();
    p.top_k = 16;
    duet_tune_eval_t ev;
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(ev.n, 2);
    for (int s = 0; s < 2; s++) {
        double oracle = INFINITY;
        for (int i = 0; i < NGRID; i++)
            oracle = fmin(oracle, ms[s][i]);
        cr_assert_eq(ev.shapes[s].n_configs, NGRID);
        cr_assert_eq(ev.shapes[s].n_cands, NGRID); /* the default is in the grid */
        cr_assert_eq(ev.shapes[s].n_cands_measured, NGRID);
        cr_assert_eq(ev.shapes[s].oracle_ms, oracle);
        cr_assert_eq(ev.shapes[s].tuned_ms, oracle);
        cr_assert_eq(ev.shapes[s].default_ms, 1.2);
        cr_assert_eq(ev.shapes[s].default_cfg.gemm_wgs, 99);
    }
    cr_assert_eq(ev.n_tuned, 2);
    cr_assert_eq(ev.n_with_default, 2);
    cr_assert_eq(ev.median_tuned_over_oracle, 1.0);
    cr_assert_eq(ev.max_tuned_over_oracle, 1.0);
    cr_assert_eq(ev.n_exact, 2);
    cr_assert_eq(ev.n_within_2pct, 2);
    cr_assert_eq(ev.n_tuned_slower_than_default, 0);
    cr_assert(t_rel_eq(ev.median_default_over_oracle, 1.2, 1e-12), "%g", ev.median_default_over_oracle);
    duet_tune_eval_free(&ev);
    duet_corpus_free(&c);
}

Test(evaluate, top_1_plus_the_default_picks_the_better_of_the_two, T_TIMEOUT)
{
    duet_config_t grid[2][NGRID];
    double ms[2][NGRID];
    duet_corpus_t c = eval_corpus(grid, ms);
    duet_hw_t hw = t_hw("h200");
    duet_tune_params_t p = duet_tune_default_params();
    p.top_k = 1;
    duet_tune_eval_t ev;
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(ev.n, 2);
    double ratio[2], oracle[2];
    for (int s = 0; s < 2; s++) {
        int top = model_top1(&hw, &ev.shapes[s].wl, grid[s]);
        double want = fmin(ms[s][top], ms[s][2]);
        oracle[s] = INFINITY;
        for (int i = 0; i < NGRID; i++)
            oracle[s] = fmin(oracle[s], ms[s][i]);
        cr_assert_eq(ev.shapes[s].n_cands, top == 2 ? 1 : 2);
        cr_assert_eq(ev.shapes[s].tuned_ms, want, "shape %d: tuned %g, want %g (model's top %d)", s,
                     ev.shapes[s].tuned_ms, want, top);
        cr_assert_leq(ev.shapes[s].tuned_ms, ev.shapes[s].default_ms);
        ratio[s] = want / oracle[s];
    }
    cr_assert(t_rel_eq(ev.median_tuned_over_oracle, 0.5 * (ratio[0] + ratio[1]), 1e-12));
    cr_assert(t_rel_eq(ev.max_tuned_over_oracle, fmax(ratio[0], ratio[1]), 1e-12));
    cr_assert_eq(ev.n_tuned_slower_than_default, 0);
    cr_assert_eq(ev.n_exact, (size_t)(ratio[0] == 1.0) + (size_t)(ratio[1] == 1.0));
    duet_tune_eval_free(&ev);
    duet_corpus_free(&c);
}

Test(evaluate, a_missing_default_and_a_wrong_profile, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_corpus_t c = tt_corpus("sm_90", 132, 2);
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
    duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, 132, 120, 12, (duet_gemm_tile_t){256, 256, 64}, 0.7);
    duet_corpus_add(&c, &r);
    r = tt_row(wl, DUET_MODE_FUSED, 132, 110, 22, (duet_gemm_tile_t){256, 256, 64}, 0); /* failed */
    duet_corpus_add(&c, &r);
    duet_tune_params_t p = duet_tune_default_params();
    duet_tune_eval_t ev;
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(ev.n, 1);
    cr_assert_eq(ev.shapes[0].n_cands, 3);          /* both grid points and the default */
    cr_assert_eq(ev.shapes[0].n_cands_measured, 1); /* one failed, the default not measured */
    cr_assert_eq(ev.shapes[0].tuned_ms, 0.7);
    cr_assert(isnan(ev.shapes[0].default_ms));
    cr_assert_eq(ev.n_with_default, 0);
    cr_assert(isnan(ev.median_default_over_oracle));
    cr_assert_eq(ev.n_tuned_slower_than_default, 0);
    duet_tune_eval_free(&ev);

    duet_hw_t mi = t_hw("mi300x");
    cr_assert_eq(duet_tune_evaluate(&c, 1, &mi, &p, &ev), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "132 SMs") != NULL, "%s", duet_last_error());
    duet_corpus_free(&c);
}

Test(evaluate, a_k_split_row_is_a_candidate_of_its_shape, T_TIMEOUT)
{
    /* The collector measures K-split points beside the unsplit ones: the replay ranks them as
     * configurations of their own, and finds the split when it is the best. */
    duet_hw_t hw = t_hw("h200");
    duet_corpus_t c = tt_corpus("sm_90", 132, 2);
    duet_workload_t wl = t_wl(512, 8192, 8192, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
    const duet_gemm_tile_t t256 = {256, 256, 64};
    duet_corpus_row_t rows[4] = {tt_row(wl, DUET_MODE_FUSED, 132, 132, 0, t256, 1.0),
                                 tt_row(wl, DUET_MODE_FUSED, 132, 132, 0, t256, 0.8),
                                 tt_row(wl, DUET_MODE_FUSED, 132, 111, 21, t256, 0.9),
                                 tt_row(wl, DUET_MODE_FUSED, 132, 99, 33, (duet_gemm_tile_t){256, 128, 64}, 1.2)};
    rows[1].cfg.split_k = 2;
    rows[2].cfg.split_k = 2;
    for (int i = 0; i < 4; i++)
        cr_assert_eq(duet_corpus_add(&c, &rows[i]), DUET_OK, "%s", duet_last_error());
    duet_tune_params_t p = duet_tune_default_params();
    p.top_k = 16;
    duet_tune_eval_t ev;
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(ev.n, 1);
    cr_assert_eq(ev.shapes[0].n_configs, 4);
    cr_assert_eq(ev.shapes[0].n_cands, 4, "the split and the unsplit point are two candidates");
    cr_assert_eq(ev.shapes[0].n_cands_measured, 4);
    cr_assert_eq(ev.shapes[0].oracle_ms, 0.8);
    cr_assert_eq(ev.shapes[0].oracle_cfg.split_k, 2);
    cr_assert_eq(ev.shapes[0].tuned_ms, 0.8);
    cr_assert_eq(ev.shapes[0].tuned_cfg.split_k, 2);
    cr_assert_eq(ev.shapes[0].tuned_cfg.gemm_wgs, 132);
    cr_assert_eq(ev.shapes[0].default_ms, 1.2);
    cr_assert_eq(ev.n_exact, 1);
    duet_tune_eval_free(&ev);
    duet_corpus_free(&c);
}
