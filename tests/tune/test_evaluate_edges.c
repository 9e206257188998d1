/*
 * The replay's edges: a shape with nothing measured is no shape, a replay whose every candidate
 * failed in the corpus falls back and is not counted as tuned, the caller's warning callback and
 * comm tile are used, and bad parameters are refused.
 */
#include "tune_util.h"

static const duet_gemm_tile_t T256 = {256, 256, 64};

/* One shape on the H200: a fused row measured at 0.7 ms and a concurrent row that failed; a second
 * shape whose only row failed; a GEMM-alone row of a third workload. */
static duet_corpus_t edge_corpus(void)
{
    duet_corpus_t c = tt_corpus("sm_90", 132, 2);
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
    duet_workload_t failed = t_wl(2048, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
    duet_workload_t alone = t_wl(1024, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
    duet_corpus_row_t r[4] = {
        tt_row(wl, DUET_MODE_FUSED, 132, 120, 12, T256, 0.7), tt_row(wl, DUET_MODE_CONCURRENT, 132, 110, 22, T256, 0),
        tt_row(failed, DUET_MODE_FUSED, 132, 120, 12, T256, 0), tt_row(alone, DUET_MODE_FUSED, 132, 132, 0, T256, 0.5)};
    r[3].kind = DUET_ROW_GEMM_ALONE;
    for (int i = 0; i < 4; i++)
        cr_assert_eq(duet_corpus_add(&c, &r[i]), DUET_OK, "%d: %s", i, duet_last_error());
    return c;
}

Test(evaluate_edges, a_replay_whose_candidates_all_failed_falls_back_uncounted, T_TIMEOUT)
{
    duet_corpus_t c = edge_corpus();
    duet_hw_t hw = t_hw("h200");
    tt_warnings_t w = {0};
    duet_tune_params_t p = tt_quiet_params(&w);
    /* Concurrent only: the measured fused row is no candidate; the failed concurrent row and the
     * concurrent static default (not in the corpus) are, and both fail. */
    p.modes = 1u << DUET_MODE_CONCURRENT;
    duet_tune_eval_t ev;
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(ev.n, 1, "the all-failed shape and the GEMM-alone row are no shapes");
    const duet_tune_eval_shape_t *s = &ev.shapes[0];
    cr_assert_eq(s->wl.m, 4096);
    cr_assert_eq(s->n_configs, 2);
    cr_assert_eq(s->oracle_ms, 0.7);
    cr_assert_eq(s->n_cands, 2);
    cr_assert_eq(s->n_cands_measured, 0);
    cr_assert(isnan(s->tuned_ms));
    cr_assert_eq(s->tuned_source, DUET_TUNE_SRC_DEFAULT);
    cr_assert(isnan(s->default_ms));
    cr_assert_eq(ev.n_tuned, 0);
    cr_assert(isnan(ev.median_tuned_over_oracle));
    cr_assert(isnan(ev.max_tuned_over_oracle));
    cr_assert_eq(ev.n_within_2pct, 0);
    /* The caller's callback heard why: one failed in the corpus, the other was never measured. */
    cr_assert(strstr(w.text, "failed in the corpus: launch failed: too many resources requested") != NULL, "%s",
              w.text);
    cr_assert(strstr(w.text, "not measured in the corpus") != NULL, "%s", w.text);
    cr_assert(strstr(w.text, "every one of the 2 candidates failed") != NULL, "%s", w.text);
    duet_tune_eval_free(&ev);
    duet_tune_eval_free(&ev); /* freed twice: the second is a no-op */
    duet_tune_eval_free(NULL);
    duet_corpus_free(&c);
}

Test(evaluate_edges, the_callers_swizzle_is_the_static_defaults, T_TIMEOUT)
{
    /* The candidates from the corpus keep their own swizzle (group_m 8); the static default takes the
     * caller's group_m 4, and the corpus's when the caller gives none. */
    duet_corpus_t c = edge_corpus();
    duet_hw_t hw = t_hw("h200");
    duet_tune_params_t p = duet_tune_default_params();
    p.group_m = 4;
    p.cm = 256;
    p.cn = 64;
    duet_tune_eval_t ev;
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(ev.n, 1);
    cr_assert_eq(ev.shapes[0].n_cands, 3, "the two rows and the default");
    cr_assert_eq(ev.shapes[0].n_cands_measured, 1);
    cr_assert_eq(ev.shapes[0].tuned_ms, 0.7);
    cr_assert_eq(ev.shapes[0].tuned_cfg.group_m, 8);
    cr_assert_eq(ev.shapes[0].default_cfg.group_m, 4);
    cr_assert(isnan(ev.shapes[0].default_ms));
    cr_assert_eq(ev.n_with_default, 0);
    duet_tune_eval_free(&ev);

    p.group_m = 0;
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(ev.shapes[0].default_cfg.group_m, 8);
    cr_assert_eq(ev.n_exact, 1);
    duet_tune_eval_free(&ev);

    p.top_k = DUET_TUNE_MAX_TOPK + 1;
    memset(&ev, 0x5a, sizeof(ev));
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "tune: top_k 64 is outside [1, 63]");
    cr_assert_eq(ev.n, (size_t)0x5a5a5a5a5a5a5a5a, "nothing written on failure");
    duet_corpus_free(&c);
}
