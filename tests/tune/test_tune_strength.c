/*
 * The tune layer's exact rules: numbers that read back to the last bit (also after another
 * process's store merges the file), the candidate set's 3 % rule at its boundary and its tie
 * rule, fractions that give CTA counts back, the tuner's tie and evaluation rules, and the
 * replay's summary thresholds.
 */
#include <sys/stat.h>

#include "tune_util.h"

static const duet_gemm_tile_t T256x128 = {256, 128, 64};

/* A stored entry for workload m, measured `ms`, one measured candidate. */
static duet_tune_entry_t entry_us(int64_t m, double us, double pred)
{
    duet_hw_t hw = t_hw("h200");
    duet_tune_entry_t e;
    memset(&e, 0, sizeof(e));
    e.wl = t_wl(m, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
    cr_assert_eq(duet_tune_key_make(&hw, &e.wl, NULL, e.key, sizeof(e.key)), DUET_OK);
    snprintf(e.arch, sizeof(e.arch), "sm_90");
    e.sms = 132;
    e.modes = 3;
    snprintf(e.tiles, sizeof(e.tiles), "%s", DUET_TILE_LIST_VERSION);
    e.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    e.measured_us = us;
    e.pred_us = pred;
    e.n_warmup = 5;
    e.n_repeat = 20;
    snprintf(e.date, sizeof(e.date), "2026-11-30T12:00:00Z");
    snprintf(e.duet_version, sizeof(e.duet_version), "%s", DUET_VERSION);
    e.n_cands = 1;
    e.cands[0].cfg = e.cfg;
    e.cands[0].source = DUET_TUNE_SRC_MODEL;
    e.cands[0].model_rank = 1;
    e.cands[0].pred_us = pred;
    e.cands[0].ok = 1;
    e.cands[0].us = us;
    e.cands[0].min_us = us * (1.0 - 1.0 / 3.0 / 10.0);
    e.cands[0].max_us = us * (1.0 + 1.0 / 7.0 / 10.0);
    return e;
}

/*
 * Times that need all 17 significant digits to read back (1/3 us is 0.33333333333333331 as the
 * nearest double; 0.1 + 0.2 is 0.30000000000000004): stored, looked up, and again after a second
 * entry's store re-read and rewrote the file (the merge), every number is the same double.
 */
Test(tune_strength, times_read_back_to_the_last_bit_also_after_a_merge, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    db.warn = tt_warn;
    db.warn_user = &w;
    const double third = 1.0 / 3.0, pred = 0.1 + 0.2;
    duet_tune_entry_t a = entry_us(4096, third, pred), b = entry_us(2048, 2.0 / 3.0 * 1e-3, 1.0 / 7.0), back;
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    for (int round = 0; round < 2; round++) {
        cr_assert_eq(duet_tune_db_lookup(&db, a.key, &back), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(back.measured_us, third, "round %d: %.17g", round, back.measured_us);
        cr_assert_eq(back.pred_us, pred, "round %d: %.17g", round, back.pred_us);
        cr_assert_eq(back.cands[0].us, third);
        cr_assert_eq(back.cands[0].pred_us, pred);
        cr_assert_eq(back.cands[0].min_us, a.cands[0].min_us, "%.17g", back.cands[0].min_us);
        cr_assert_eq(back.cands[0].max_us, a.cands[0].max_us, "%.17g", back.cands[0].max_us);
        /* The second store re-reads a's numbers from the file and writes them again. */
        if (round == 0)
            cr_assert_eq(duet_tune_db_store(&db, &b), DUET_OK, "%s", duet_last_error());
    }
    cr_assert_eq(duet_tune_db_lookup(&db, b.key, &back), DUET_OK);
    cr_assert_eq(back.measured_us, 2.0 / 3.0 * 1e-3);
    cr_assert_eq(back.pred_us, 1.0 / 7.0);
    cr_assert_eq(w.n, 0, "%s", w.text);
    tt_rmdir(dir);
}

/* One op row of shape s (m = 1024 (s + 1)) on a 100-SM device. */
static void add_row(duet_corpus_t *c, int s, int32_t gemm_wgs, duet_gemm_tile_t tile, double ms)
{
    duet_workload_t wl = t_wl(1024 * (s + 1), 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, c->sms, gemm_wgs, c->sms - gemm_wgs, tile, ms);
    cr_assert_eq(duet_corpus_add(c, &r), DUET_OK, "%s", duet_last_error());
}

/*
 * The 3 % rule at its boundary: 1.1845 ms is exactly 1.03 x 1.15 ms, but 1.15 x 1.03 rounds to a
 * double below 1.1845; the rule must still count it covered (the reference design's
 * `ms <= best_ms * 1.03` on paper). Then c1 (1.1845 on s0, best on s1) covers both shapes and the
 * order is c1 alone; counted out, c0 would have to follow for s0.
 */
Test(tune_strength, a_time_of_exactly_three_percent_over_the_best_is_covered, T_TIMEOUT)
{
    cr_assert_gt(1.1845, 1.15 * (1 + 0.03), "the case needs the rounding it guards against");
    duet_corpus_t c = tt_corpus("sm_90", 100, 2);
    add_row(&c, 0, 75, T256x128, 1.15);
    add_row(&c, 0, 90, T256x128, 1.1845);
    add_row(&c, 1, 75, T256x128, 1.50);
    add_row(&c, 1, 90, T256x128, 1.00);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_OK, "%s", duet_last_error());
    const duet_tune_candset_arch_t *a = &set.archs[0];
    cr_assert_eq(a->n_order, 1, "order of %zu", a->n_order);
    cr_assert(fabs(a->order[0].gemm_frac - 0.90) < 1e-12);
    cr_assert_eq(a->order[0].gain, 2);
    cr_assert_eq(a->coverage[0].share_within_tol, 1.0);
    duet_tune_candset_free(&set);
    duet_corpus_free(&c);
}

/*
 * Greedy ties go to the lowest mean cost relative to each shape's best, not the lowest mean time:
 *        c2 (50)  c0 (75)  c1 (90)
 *   s0   1.0      1.5      1.2
 *   s1   10.0     10.5     13.0
 *   s2   2.0      1.0      1.0
 * c2 covers s0 and s1 first. c0 and c1 then each cover s2: relative means (1.5 + 1.05 + 1) / 3 =
 * 1.183 for c0 and (1.2 + 1.3 + 1) / 3 = 1.167 for c1, so c1 (in mean time c0 would win:
 * 4.33 ms against 5.07). Coverage at k = 1: s2 at 2.0 / 1.0, mean slowdown 4 / 3, written to the
 * file as 1.3333 (four decimals).
 */
Test(tune_strength, ties_go_to_the_lowest_relative_mean_and_the_file_keeps_four_decimals, T_TIMEOUT)
{
    char dir[64], path[128];
    tt_tmpdir(dir, sizeof(dir));
    duet_corpus_t c = tt_corpus("sm_90", 100, 2);
    const double ms[3][3] = {{1.0, 1.5, 1.2}, {10.0, 10.5, 13.0}, {2.0, 1.0, 1.0}};
    const int32_t gw[3] = {50, 75, 90};
    for (int s = 0; s < 3; s++)
        for (int k = 0; k < 3; k++)
            add_row(&c, s, gw[k], T256x128, ms[s][k]);
    duet_tune_candset_t set, back;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_OK, "%s", duet_last_error());
    const duet_tune_candset_arch_t *a = &set.archs[0];
    cr_assert_eq(a->n_order, 2);
    cr_assert(fabs(a->order[0].gemm_frac - 0.50) < 1e-12);
    cr_assert(fabs(a->order[1].gemm_frac - 0.90) < 1e-12, "second: %g", a->order[1].gemm_frac);
    cr_assert(t_rel_eq(a->order[1].mean_rel, 3.5 / 3.0, 1e-12), "%.17g", a->order[1].mean_rel);
    cr_assert(t_rel_eq(a->coverage[0].mean_slowdown, 4.0 / 3.0, 1e-12));
    snprintf(path, sizeof(path), "%s/cands.json", dir);
    cr_assert_eq(duet_tune_candset_save(&set, NULL, 0, path), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_tune_candset_load(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.archs[0].coverage[0].mean_slowdown, 1.3333);
    cr_assert_eq(back.archs[0].order[1].mean_rel, 1.1667);
    duet_tune_candset_free(&back);
    duet_tune_candset_free(&set);
    duet_corpus_free(&c);
    tt_rmdir(dir);
}

/* A configuration measured twice (two corpora of one device) keeps its lower time: c0 at 1.0 is
 * the best of the shape and the order is c0 alone; at 1.2 it would lose to c1's 1.1. */
Test(tune_strength, a_configuration_measured_twice_keeps_its_lower_time, T_TIMEOUT)
{
    duet_corpus_t cs[2] = {tt_corpus("sm_90", 100, 2), tt_corpus("sm_90", 100, 2)};
    add_row(&cs[0], 0, 75, T256x128, 1.2);
    add_row(&cs[0], 0, 90, T256x128, 1.1);
    add_row(&cs[1], 0, 75, T256x128, 1.0);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(cs, 2, 0.03, &set), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(set.archs[0].n_order, 1);
    cr_assert(fabs(set.archs[0].order[0].gemm_frac - 0.75) < 1e-12);
    duet_tune_candset_free(&set);
    duet_corpus_free(&cs[0]);
    duet_corpus_free(&cs[1]);
}

/*
 * Fractions give back the CTA counts they came from: every configuration of a 132-SM corpus, and
 * counts next to the top of a 4096-SM device (the file keeps 6 decimals: 4095 / 4096 = 0.999756).
 */
Test(tune_strength, fractions_give_back_the_cta_counts, T_TIMEOUT)
{
    const int32_t sms[2] = {132, 4096};
    const int32_t counts[2][4] = {{97, 98, 101, 131}, {2049, 4093, 4094, 4095}};
    for (int d = 0; d < 2; d++) {
        duet_corpus_t c = tt_corpus("sm_90", sms[d], 2);
        /* Shape s has its own best configuration, counts[d][s]; the others are 2 x slower there. */
        for (int s = 0; s < 4; s++)
            for (int k = 0; k < 4; k++)
                add_row(&c, s, counts[d][k], T256x128, k == s ? 1.0 : 2.0);
        duet_tune_candset_t set;
        cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(set.archs[0].n_order, 4);
        duet_hw_t hw = t_hw("h200");
        hw.n_sms = sms[d];
        int seen[4] = {0};
        for (size_t i = 0; i < 4; i++) {
            duet_config_t cfg = duet_tune_cand_config(&set.archs[0].order[i], &hw, 0, 0, 0);
            int found = 0;
            for (int k = 0; k < 4; k++)
                if (cfg.gemm_wgs == counts[d][k] && cfg.comm_wgs == sms[d] - counts[d][k] && cfg.num_wgs == sms[d]) {
                    seen[k]++;
                    found = 1;
                }
            cr_assert(found, "%d SMs: gemm_wgs %d comm_wgs %d", sms[d], cfg.gemm_wgs, cfg.comm_wgs);
        }
        for (int k = 0; k < 4; k++)
            cr_assert_eq(seen[k], 1);
        duet_tune_candset_free(&set);
        duet_corpus_free(&c);
    }
    /* A concurrent candidate keeps at least one comm CTA: 0.1 % of 132 SMs rounds to none. */
    duet_tune_cand_t cc = {.mode = DUET_MODE_CONCURRENT, .gemm_frac = 0.9, .comm_frac = 0.001, .tile = T256x128};
    duet_hw_t h = t_hw("h200");
    duet_config_t cfg = duet_tune_cand_config(&cc, &h, 0, 0, 0);
    cr_assert_eq(cfg.gemm_wgs, 119); /* round(0.9 x 132) = round(118.8) */
    cr_assert_eq(cfg.comm_wgs, 1);
    cr_assert_eq(cfg.num_wgs, 120);
}

static duet_status_t flat_bench(void *user, const duet_config_t *cfg, double *med, double *lo, double *hi)
{
    (void)cfg;
    ++*(int *)user;
    *med = *lo = *hi = 1.0;
    return DUET_OK;
}

/* Equal medians go to the earlier candidate: the model's first. */
Test(tune_strength, equal_medians_go_to_the_models_first, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_tune_params_t p = tt_quiet_params(&w);
    p.use_cache = 0;
    p.top_k = 4;
    int calls = 0;
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, flat_bench, NULL, &calls, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_geq(r.n_cands, 4);
    cr_assert_eq(calls, r.n_cands);
    cr_assert_eq(r.winner, 0);
    cr_assert_eq(r.cands[0].model_rank, 1);
    cr_assert_eq(r.measured_us, 1e3, "the benchmark's 1 ms");
    tt_rmdir(dir);
}

/* A tuning restricted to a given space is an evaluation: it neither reads nor writes the
 * database. */
Test(tune_strength, a_space_leaves_the_database_alone, T_TIMEOUT)
{
    char dir[64], db[128];
    tt_tmpdir(dir, sizeof(dir));
    snprintf(db, sizeof(db), "%s/tuning.json", dir);
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_tune_params_t p = tt_quiet_params(&w);
    duet_config_t space[2] = {duet_config_default(&hw, DUET_MODE_FUSED), duet_config_default(&hw, DUET_MODE_FUSED)};
    space[1].gemm_wgs = 110;
    space[1].comm_wgs = 22;
    p.space = space;
    p.n_space = 2;
    tt_bench_t b = {.target = 120};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(r.stored, 0);
    cr_assert_eq(r.cfg.gemm_wgs, 110, "the faster of the two under the fake benchmark");
    struct stat sb;
    cr_assert_neq(stat(db, &sb), 0, "the database was written");
    tt_rmdir(dir);
}

/* The static default follows the allowed modes: concurrent's (an eighth of the SMs on comm) when
 * fused is not allowed. */
Test(tune_strength, the_static_default_of_a_concurrent_only_tuning_is_concurrent, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_tune_params_t p = duet_tune_default_params();
    p.modes = 1u << DUET_MODE_CONCURRENT;
    duet_config_t d = duet_tune_static_default(&hw, &p);
    cr_assert_eq(d.mode, DUET_MODE_CONCURRENT);
    cr_assert_eq(d.comm_wgs, 16); /* 132 / 8 */
    cr_assert_eq(d.gemm_wgs, 116);
    p.modes = (1u << DUET_MODE_CONCURRENT) | (1u << DUET_MODE_FUSED);
    d = duet_tune_static_default(&hw, &p);
    cr_assert_eq(d.mode, DUET_MODE_FUSED);
    cr_assert_eq(d.gemm_wgs, 99); /* 3/4 of 132 */
}

/*
 * The replay's summary on two shapes, each measured at the static default (fused, 99 of 132) and
 * with the GEMM kernel on one CTA (concurrent, 1 + 16: 512 GEMM tiles one after another, which the
 * model ranks far behind). With top_k 1 the tuner benchmarks the default only.
 *   shape 1: default 1.02 ms, the other 1.00 (the oracle): tuned / oracle = 1.02, within 2 %
 *            exactly (1.02 x 1.00 is 1.02 in binary too), not exact;
 *   shape 2: default 1.00, the other 2.00: exact.
 * Median and mean of {1.02, 1.00}: 1.01; max 1.02. The tuned pick is the default on both: never
 * slower than it.
 */
Test(tune_strength, replay_summary_thresholds_and_median, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_corpus_t c = tt_corpus("sm_90", 132, 2);
    const double ms[2][2] = {{1.02, 1.00}, {1.00, 2.00}};
    for (int s = 0; s < 2; s++) {
        duet_workload_t wl = t_wl(4096 * (s + 1), 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
        duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, 132, 99, 33, T256x128, ms[s][0]);
        cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
        r = tt_row(wl, DUET_MODE_CONCURRENT, 17, 1, 16, T256x128, ms[s][1]);
        cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
    }
    duet_tune_params_t p = duet_tune_default_params();
    p.top_k = 1;
    duet_tune_eval_t ev;
    cr_assert_eq(duet_tune_evaluate(&c, 1, &hw, &p, &ev), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(ev.n, 2);
    cr_assert_eq(ev.shapes[0].tuned_cfg.gemm_wgs, 99);
    cr_assert_eq(ev.shapes[0].tuned_ms, 1.02);
    cr_assert_eq(ev.shapes[0].oracle_ms, 1.00);
    cr_assert_eq(ev.n_tuned, 2);
    cr_assert_eq(ev.n_with_default, 2);
    cr_assert_eq(ev.n_within_2pct, 2);
    cr_assert_eq(ev.n_exact, 1);
    cr_assert_eq(ev.n_tuned_slower_than_default, 0);
    cr_assert(t_rel_eq(ev.median_tuned_over_oracle, 1.01, 1e-12), "median %.17g", ev.median_tuned_over_oracle);
    cr_assert(t_rel_eq(ev.mean_tuned_over_oracle, 1.01, 1e-12), "mean %.17g", ev.mean_tuned_over_oracle);
    cr_assert_eq(ev.max_tuned_over_oracle, 1.02);
    cr_assert(t_rel_eq(ev.median_default_over_oracle, 1.01, 1e-12));
    cr_assert_eq(ev.max_default_over_oracle, 1.02);
    duet_tune_eval_free(&ev);
    duet_corpus_free(&c);
}

/*
 * The last-resort grid (the reference design's origami-free fallback): fractions 0.5, 0.625, 0.75,
 * 0.875 and 1 of the SMs on the GEMM at the static default's tile and mode, used when neither the
 * model nor a candidate set gives candidates. Here the model cannot rank: no GEMM tile fits the
 * profile's shared memory, so its sweep has nothing to try (the workload is a collective alone,
 * which needs no tile). On 132 SMs: 66, round(82.5) = 83, 99, round(115.5) = 116 and 132.
 */
Test(tune_strength, without_model_or_set_the_reference_fractions_fill, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    hw.smem_kib = 16;
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_tune_params_t p = tt_quiet_params(&w), rp;
    p.modes = 1u << DUET_MODE_FUSED;
    cr_assert_eq(duet_tune_params_resolve(&p, &rp), DUET_OK);
    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = 0, led = -1;
    cr_assert_eq(duet_tune_candidates(&wl, &hw, &rp, c, &n, &led), DUET_OK, "%s", duet_last_error());
    cr_assert(strstr(w.text, "the model could not rank") != NULL, "%s", w.text);
    const int32_t want[5] = {66, 83, 99, 116, 132};
    cr_assert_eq(n, 5, "the default (99) is among them");
    for (int i = 0; i < 5; i++) {
        cr_assert_eq(c[i].source, DUET_TUNE_SRC_HEURISTIC);
        cr_assert_eq(c[i].cfg.mode, DUET_MODE_FUSED);
        cr_assert_eq(c[i].cfg.gemm_wgs, want[i], "candidate %d: %d", i, c[i].cfg.gemm_wgs);
        cr_assert_eq(c[i].cfg.comm_wgs, 132 - want[i]);
    }
    tt_rmdir(dir);
}
