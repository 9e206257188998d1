/*
 * The tuner core with a fake benchmark: misses, hits, failures, the static default, the
 * database's troubles, agreement across ranks, many tuners at once, the candidate set.
 */
#include <glob.h>
#include <sys/wait.h>

#include "tune_util.h"

static duet_workload_t small_wl(int64_t m)
{
    return t_wl(m, 2048, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
}

static int find_cfg(const duet_tune_outcome_t *c, int32_t n, const duet_config_t *cfg)
{
    int found = -1;
    for (int32_t i = 0; i < n; i++)
        if (memcmp(&c[i].cfg, cfg, sizeof(*cfg)) == 0) {
            cr_assert_eq(found, -1, "configuration listed twice");
            found = i;
        }
    return found;
}

Test(tuner, a_miss_benchmarks_the_top_k_and_the_default_and_stores_the_fastest, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = small_wl(2048);
    duet_tune_params_t p = tt_quiet_params(&w);
    tt_bench_t b = {.target = 120};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(r.cached, 0);
    cr_assert_eq(r.fell_back, 0);
    cr_assert_eq(r.stored, 1);
    cr_assert_eq(r.model_led, 1);
    cr_assert_eq(r.top_k, 8);
    cr_assert_eq(r.n_warmup, 5);
    cr_assert_eq(r.n_repeat, 20);
    /* The model's top 8, in its order, then the static default (unless it was among them). */
    duet_config_t d = duet_tune_static_default(&hw, &p);
    int di = find_cfg(r.cands, r.n_cands, &d);
    cr_assert_geq(di, 0, "the static default was not benchmarked");
    cr_assert_eq(r.n_cands, di < 8 ? 8 : 9);
    for (int i = 0; i < 8; i++) {
        cr_assert_eq(r.cands[i].source, DUET_TUNE_SRC_MODEL);
        cr_assert_eq(r.cands[i].model_rank, i + 1);
        cr_assert(isfinite(r.cands[i].pred_us));
        if (i > 0)
            cr_assert_leq(r.cands[i - 1].pred_us, r.cands[i].pred_us * (1 + DUET_RANK_TIE_REL));
    }
    if (di == 8)
        cr_assert_eq(r.cands[8].source, DUET_TUNE_SRC_DEFAULT);
    cr_assert(isfinite(r.cands[di].pred_us), "the default is priced too");
    cr_assert_eq(b.calls, r.n_cands);
    /* The winner is the lowest median, and never slower than the default. */
    int best = 0;
    for (int i = 0; i < r.n_cands; i++) {
        cr_assert_eq(r.cands[i].ok, 1);
        cr_assert_eq(r.cands[i].us, tt_bench_ms(&b, &r.cands[i].cfg) * 1e3, "the benchmark's ms as us");
        if (r.cands[i].us < r.cands[best].us)
            best = i;
    }
    cr_assert_eq(r.winner, best);
    cr_assert(memcmp(&r.cfg, &r.cands[best].cfg, sizeof(r.cfg)) == 0);
    cr_assert_eq(r.measured_us, r.cands[best].us);
    cr_assert_eq(r.pred_us, r.cands[best].pred_us);
    cr_assert_leq(r.measured_us, r.cands[di].us);
    /* Stored under the key, with every candidate. */
    duet_tune_db_t db;
    duet_tune_entry_t e;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_str_eq(db.path, r.db_path);
    cr_assert_eq(duet_tune_db_lookup(&db, r.key, &e), DUET_OK);
    cr_assert(memcmp(&e.cfg, &r.cfg, sizeof(r.cfg)) == 0);
    cr_assert_eq(e.measured_us, r.measured_us);
    cr_assert_eq(e.n_cands, r.n_cands);
    cr_assert_eq(e.n_repeat, 20);
    cr_assert_eq(w.n, 0, "%s", w.text);
    tt_rmdir(dir);
}

Test(tuner, a_cache_hit_never_benchmarks_and_force_does, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = small_wl(1024);
    duet_tune_params_t p = tt_quiet_params(&w);
    tt_bench_t b = {.target = 100};
    duet_tune_result_t r1, r2;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r1), DUET_OK);
    cr_assert_eq(r1.stored, 1);

    tt_bench_t b2 = {.target = 10, .fail_all = 1};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b2, &r2), DUET_OK);
    cr_assert_eq(b2.calls, 0, "a hit benchmarked %d candidates", b2.calls);
    cr_assert_eq(r2.cached, 1);
    cr_assert(memcmp(&r2.cfg, &r1.cfg, sizeof(r1.cfg)) == 0);
    cr_assert_eq(r2.measured_us, r1.measured_us);
    cr_assert_eq(r2.n_cands, r1.n_cands);
    cr_assert_str_eq(r2.key, r1.key);

    /* Another mode set is another key: a miss. */
    duet_tune_params_t q = p;
    q.modes = 1u << DUET_MODE_FUSED;
    tt_bench_t b3 = {.target = 100};
    cr_assert_eq(duet_tune_run(&wl, &hw, &q, tt_bench_fn, NULL, &b3, &r2), DUET_OK);
    cr_assert_eq(r2.cached, 0);
    cr_assert_gt(b3.calls, 0);
    for (int i = 0; i < r2.n_cands; i++)
        cr_assert_eq(r2.cands[i].cfg.mode, DUET_MODE_FUSED);

    /* force (or DUET_TUNE_FORCE=1) benchmarks and overwrites. */
    setenv("DUET_TUNE_FORCE", "1", 1);
    tt_bench_t b4 = {.target = 60};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b4, &r2), DUET_OK);
    cr_assert_eq(r2.cached, 0);
    cr_assert_eq(r2.force, 1);
    cr_assert_eq(b4.calls, r2.n_cands);
    unsetenv("DUET_TUNE_FORCE");
    tt_bench_t b5 = {.fail_all = 1};
    duet_tune_result_t r3;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b5, &r3), DUET_OK);
    cr_assert_eq(b5.calls, 0);
    cr_assert(memcmp(&r3.cfg, &r2.cfg, sizeof(r2.cfg)) == 0, "the forced run's winner was not stored");

    /* use_cache = 0 neither reads nor writes. */
    q = p;
    q.use_cache = 0;
    tt_bench_t b6 = {.target = 100};
    cr_assert_eq(duet_tune_run(&wl, &hw, &q, tt_bench_fn, NULL, &b6, &r3), DUET_OK);
    cr_assert_eq(r3.cached, 0);
    cr_assert_eq(r3.stored, 0);
    cr_assert_gt(b6.calls, 0);
    tt_rmdir(dir);
}

Test(tuner, all_candidates_failing_return_the_static_default_and_say_so, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("mi300x");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_REDUCE, 1024, 2048, 8);
    duet_tune_params_t p = tt_quiet_params(&w);
    p.top_k = 4;
    tt_bench_t b = {.fail_all = 1};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r), DUET_OK);
    cr_assert_eq(r.fell_back, 1);
    cr_assert_eq(r.winner, -1);
    duet_config_t d = duet_tune_static_default(&hw, &p);
    cr_assert(memcmp(&r.cfg, &d, sizeof(d)) == 0);
    cr_assert_eq(d.mode, DUET_MODE_FUSED);
    cr_assert_eq(d.gemm_wgs, 228); /* 3/4 of 304 CUs */
    cr_assert(isnan(r.measured_us));
    cr_assert_eq(r.stored, 0);
    cr_assert_eq(b.calls, r.n_cands);
    cr_assert_eq(r.n_cands, 5);
    for (int i = 0; i < r.n_cands; i++) {
        cr_assert_eq(r.cands[i].ok, 0);
        cr_assert_eq(r.cands[i].status, DUET_ERR_BACKEND);
        cr_assert_str_eq(r.cands[i].error, "GPU runtime error");
    }
    cr_assert(strstr(r.warnings, "every one of the 5 candidates failed") != NULL, "%s", r.warnings);
    cr_assert_eq(r.n_warnings, 6); /* five skipped candidates and the fall-back */
    cr_assert_eq(w.n, 6);
    duet_tune_db_t db;
    duet_tune_entry_t e;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_eq(duet_tune_db_lookup(&db, r.key, &e), DUET_ERR_NOT_FOUND, "a failure was cached");
    tt_rmdir(dir);
}

Test(tuner, a_failing_candidate_is_skipped_and_reported, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = small_wl(4096);
    duet_tune_params_t p = tt_quiet_params(&w), rp;
    cr_assert_eq(duet_tune_params_resolve(&p, &rp), DUET_OK);
    duet_tune_outcome_t cands[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = 0, led = 0;
    cr_assert_eq(duet_tune_candidates(&wl, &hw, &rp, cands, &n, &led), DUET_OK);
    /* Make the fake benchmark love the model's favourite, then make it fail to launch. */
    tt_bench_t b = {.target = cands[0].cfg.gemm_wgs, .fail_gemm_wgs = cands[0].cfg.gemm_wgs};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r), DUET_OK);
    cr_assert_eq(r.n_cands, n);
    cr_assert_eq(r.cands[0].ok, 0);
    cr_assert_eq(r.cands[0].status, DUET_ERR_BACKEND);
    cr_assert_eq(r.fell_back, 0);
    cr_assert_neq(r.winner, 0);
    cr_assert_eq(r.cands[r.winner].ok, 1);
    cr_assert_neq(r.cfg.gemm_wgs, b.fail_gemm_wgs);
    for (int i = 0; i < r.n_cands; i++)
        if (r.cands[i].ok)
            cr_assert_leq(r.measured_us, r.cands[i].us);
    cr_assert(strstr(r.warnings, "candidate 0 (") != NULL && strstr(r.warnings, "failed and is skipped") != NULL, "%s",
              r.warnings);
    cr_assert_eq(r.stored, 1);
    tt_rmdir(dir);
}

Test(tuner, the_static_default_is_always_a_candidate, T_TIMEOUT)
{
    duet_hw_t hws[2] = {t_hw("h200"), t_hw("mi350x")};
    duet_workload_t wls[3] = {t_wl(1, 8192, 8192, DUET_COLL_ALL_GATHER, 512, 4096, 2),
                              t_wl(4096, 4096, 4096, DUET_COLL_REDUCE_SCATTER, 2048, 2048, 8),
                              t_wl(2048, 2048, 2048, DUET_COLL_NONE, 0, 0, 1)};
    uint32_t modes[3] = {3u, 1u << DUET_MODE_FUSED, 1u << DUET_MODE_CONCURRENT};
    int32_t ks[3] = {1, 2, 8};
    for (int h = 0; h < 2; h++)
        for (int wi = 0; wi < 3; wi++)
            for (int m = 0; m < 3; m++)
                for (int ki = 0; ki < 3; ki++) {
                    if (wls[wi].coll == DUET_COLL_NONE && m != 0)
                        continue;
                    duet_tune_params_t p = duet_tune_default_params(), rp;
                    p.top_k = ks[ki];
                    p.modes = modes[m];
                    cr_assert_eq(duet_tune_params_resolve(&p, &rp), DUET_OK);
                    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
                    int32_t n = 0, led = 0;
                    cr_assert_eq(duet_tune_candidates(&wls[wi], &hws[h], &rp, c, &n, &led), DUET_OK, "%s",
                                 duet_last_error());
                    duet_config_t d = duet_tune_static_default(&hws[h], &rp);
                    cr_assert_geq(find_cfg(c, n, &d), 0, "default missing: hw %d wl %d modes %u k %d", h, wi, modes[m],
                                  ks[ki]);
                    cr_assert(n == ks[ki] || n == ks[ki] + 1, "n %d for k %d", n, ks[ki]);
                    cr_assert_eq(d.mode, modes[m] & 1u ? DUET_MODE_FUSED : DUET_MODE_CONCURRENT);
                    for (int i = 0; i < n; i++)
                        if (c[i].source != DUET_TUNE_SRC_DEFAULT)
                            cr_assert(modes[m] & (1u << c[i].cfg.mode), "a candidate outside the mode set");
                }
    /* Also when a space (the evaluation's corpus grid) leaves the default out. */
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = small_wl(2048);
    duet_config_t space[2];
    space[0] = duet_config_default(&hw, DUET_MODE_FUSED);
    space[0].gemm_wgs = 66;
    space[0].comm_wgs = 66;
    space[1] = space[0];
    space[1].gemm_wgs = 120;
    space[1].comm_wgs = 12;
    duet_tune_params_t p = duet_tune_default_params(), rp;
    p.space = space;
    p.n_space = 2;
    cr_assert_eq(duet_tune_params_resolve(&p, &rp), DUET_OK);
    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = 0, led = 0;
    cr_assert_eq(duet_tune_candidates(&wl, &hw, &rp, c, &n, &led), DUET_OK);
    cr_assert_eq(n, 3);
    cr_assert_eq(c[2].source, DUET_TUNE_SRC_DEFAULT);
    cr_assert_geq(find_cfg(c, n, &space[0]), 0);
    cr_assert_geq(find_cfg(c, n, &space[1]), 0);
}

static int count_glob(const char *pattern)
{
    glob_t g;
    int n = glob(pattern, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    globfree(&g);
    return n;
}

Test(tuner, a_corrupt_database_is_left_alone_and_tuning_goes_on, T_TIMEOUT)
{
    char dir[64], pat[128];
    tt_tmpdir(dir, sizeof(dir));
    FILE *f = fopen(getenv("DUET_CACHE"), "wb");
    fputs("\x01\x02 this is not JSON", f);
    fclose(f);
    t_file_t before, after;
    t_file_get(getenv("DUET_CACHE"), &before);
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = small_wl(2048);
    duet_tune_params_t p = tt_quiet_params(&w);
    tt_bench_t b = {.target = 110};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r), DUET_OK);
    cr_assert_eq(r.cached, 0);
    cr_assert_eq(r.stored, 0, "the file is not a database: the store refuses to replace it");
    cr_assert_gt(b.calls, 0);
    cr_assert_geq(r.winner, 0, "the winner is still returned");
    /* One warning from the lookup, one from the refused store; each names the reason. */
    cr_assert_eq(r.n_warnings, 2, "%s", r.warnings);
    cr_assert(strstr(r.warnings, "line 1: not valid JSON; left as it is") != NULL, "%s", r.warnings);
    cr_assert(strstr(r.warnings, "cannot store the winner") != NULL && strstr(r.warnings, "not replacing it") != NULL,
              "%s", r.warnings);
    t_file_get(getenv("DUET_CACHE"), &after);
    cr_assert(t_file_same(&before, &after), "the file was changed");
    snprintf(pat, sizeof(pat), "%s/tuning.json.corrupt-*", dir);
    cr_assert_eq(count_glob(pat), 0);
    /* Once the user removes it, the next run stores, and the one after hits. */
    cr_assert_eq(unlink(getenv("DUET_CACHE")), 0);
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r), DUET_OK);
    cr_assert_eq(r.stored, 1);
    tt_bench_t b2 = {.fail_all = 1};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b2, &r), DUET_OK);
    cr_assert_eq(r.cached, 1);
    cr_assert_eq(b2.calls, 0);
    tt_rmdir(dir);
}

Test(tuner, an_unwritable_database_still_returns_the_winner, T_TIMEOUT)
{
    char dir[64], path[256];
    tt_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/file", dir);
    FILE *f = fopen(path, "wb");
    fclose(f);
    snprintf(path, sizeof(path), "%s/file/duet/tuning.json", dir);
    setenv("DUET_CACHE", path, 1);
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = small_wl(2048);
    duet_tune_params_t p = tt_quiet_params(&w);
    tt_bench_t b = {.target = 110};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r), DUET_OK);
    cr_assert_eq(r.fell_back, 0);
    cr_assert_eq(r.stored, 0);
    cr_assert_geq(r.winner, 0);
    cr_assert_eq(r.measured_us, tt_bench_ms(&b, &r.cfg) * 1e3);
    cr_assert(strstr(r.warnings, "cannot store the winner") != NULL, "%s", r.warnings);
    cr_assert_geq(r.n_warnings, 1);
    cr_assert_eq(w.n, r.n_warnings);
    tt_rmdir(dir);
}

Test(tuner, eight_processes_tuning_different_keys_at_once_keep_every_entry, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    enum { NPROC = 8 };
    pid_t pids[NPROC];
    duet_hw_t hw = t_hw("h200");
    for (int i = 0; i < NPROC; i++) {
        pids[i] = fork();
        cr_assert_geq(pids[i], 0);
        if (pids[i] == 0) {
            tt_warnings_t w = {0};
            duet_workload_t wl = small_wl(256 * (i + 1));
            duet_tune_params_t p = tt_quiet_params(&w);
            p.top_k = 2; /* the database is what is under test; keep each tuner short */
            tt_bench_t b = {.target = 100 + i};
            duet_tune_result_t r;
            _exit(duet_tune_run(&wl, &hw, &p, tt_bench_fn, NULL, &b, &r) == DUET_OK && r.stored && w.n == 0 ? 0 : 1);
        }
    }
    for (int i = 0; i < NPROC; i++) {
        int status = 0;
        waitpid(pids[i], &status, 0);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tuner %d failed", i);
    }
    duet_tune_db_t db;
    duet_tune_entry_t *list = NULL;
    size_t n = 0;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK);
    cr_assert_eq(n, NPROC, "%zu of %d entries survived", n, NPROC);
    free(list);
    for (int i = 0; i < NPROC; i++) {
        /* Each process's own winner is there under its own key. */
        duet_workload_t wl = small_wl(256 * (i + 1));
        duet_tune_params_t p = duet_tune_default_params();
        char key[DUET_TUNE_KEY_LEN];
        duet_tune_entry_t e;
        cr_assert_eq(duet_tune_key_make(&hw, &wl, &p, key, sizeof(key)), DUET_OK);
        cr_assert_eq(duet_tune_db_lookup(&db, key, &e), DUET_OK, "entry of tuner %d lost", i);
        tt_bench_t b = {.target = 100 + i};
        cr_assert_eq(e.measured_us, tt_bench_ms(&b, &e.cfg) * 1e3);
    }
    tt_rmdir(dir);
}

/* ------------------------------------------------------------------------------------------ */
/* Agreement: this process plays a rank other than 0; "rank 0" is a script of broadcast values. */
/* ------------------------------------------------------------------------------------------ */

typedef struct tt_rank {
    tt_bench_t bench; /* first: the benchmark callback casts the shared user pointer to it */
    int n_script, pos;
    int32_t script[16];
    int32_t sent[16]; /* what this rank offered at each call */
    duet_status_t fail_with;
} tt_rank_t;

static duet_status_t tt_agree(void *user, int32_t *value)
{
    tt_rank_t *r = user;
    if (r->fail_with < 0)
        return r->fail_with;
    cr_assert_lt(r->pos, r->n_script, "more agreement calls than rank 0 made");
    r->sent[r->pos] = *value;
    *value = r->script[r->pos++];
    return DUET_OK;
}

Test(tuner, every_rank_uses_rank_0s_winner_and_verdict, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = small_wl(2048);
    duet_tune_params_t p = tt_quiet_params(&w);
    p.write_cache = 0; /* as every rank but 0 would */
    duet_tune_result_t r;

    /* A miss everywhere; rank 0 measured candidate 2 fastest, this rank something else. */
    duet_tune_params_t rp;
    cr_assert_eq(duet_tune_params_resolve(&p, &rp), DUET_OK);
    duet_tune_outcome_t cands[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = 0, led = 0;
    cr_assert_eq(duet_tune_candidates(&wl, &hw, &rp, cands, &n, &led), DUET_OK);
    /* Rank 0's pick is any candidate but this rank's own favourite. */
    tt_bench_t probe = {.target = 110};
    int mine = 0;
    for (int i = 1; i < n; i++)
        if (tt_bench_ms(&probe, &cands[i].cfg) < tt_bench_ms(&probe, &cands[mine].cfg))
            mine = i;
    int32_t pick = (int32_t)((mine + 1) % n);
    const duet_config_t *c2 = &cands[pick].cfg;
    tt_rank_t k = {.bench = {.target = 110},
                   .n_script = 13,
                   .script = {0, pick, c2->mode, c2->num_wgs, c2->gemm_wgs, c2->comm_wgs, c2->tile.bm, c2->tile.bn,
                              c2->tile.bk, c2->cm, c2->cn, c2->group_m, c2->split_k}};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, tt_agree, &k, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(k.pos, 13);
    cr_assert_eq(k.sent[0], 0, "this rank's verdict was a miss");
    cr_assert_eq(k.sent[1], mine, "this rank offered its own winner");
    cr_assert_eq(k.sent[4], c2->gemm_wgs, "then rank 0's pick, field by field");
    cr_assert_eq(r.winner, pick);
    cr_assert(memcmp(&r.cfg, c2, sizeof(r.cfg)) == 0);
    cr_assert_eq(r.measured_us, r.cands[pick].us);
    cr_assert_eq(r.stored, 0);
    cr_assert_eq(k.bench.calls, r.n_cands);
    cr_assert_eq(w.n, 0, "%s", w.text);

    /* Rank 0 has a hit this rank does not see: no benchmark, rank 0's configuration. */
    duet_config_t c0 = duet_config_default(&hw, DUET_MODE_CONCURRENT);
    c0.gemm_wgs = 120;
    c0.comm_wgs = 12;
    c0.num_wgs = 132;
    c0.tile = (duet_gemm_tile_t){128, 256, 64};
    tt_rank_t h = {.n_script = 12,
                   .script = {1, c0.mode, c0.num_wgs, c0.gemm_wgs, c0.comm_wgs, c0.tile.bm, c0.tile.bn, c0.tile.bk,
                              c0.cm, c0.cn, c0.group_m, c0.split_k}};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, tt_agree, &h, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(h.pos, 12);
    cr_assert_eq(h.bench.calls, 0);
    cr_assert_eq(r.cached, 1);
    cr_assert(memcmp(&r.cfg, &c0, sizeof(c0)) == 0);
    cr_assert(isnan(r.measured_us));

    /* Rank 0 found every candidate failing: everyone falls back. */
    tt_rank_t f = {.bench = {.target = 110}, .n_script = 2, .script = {0, -1}};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, tt_agree, &f, &r), DUET_OK);
    cr_assert_eq(r.fell_back, 1);
    duet_config_t d = duet_tune_static_default(&hw, &p);
    cr_assert(memcmp(&r.cfg, &d, sizeof(d)) == 0);

    /* A broadcast failure is the run's failure, and the result is not written. */
    tt_rank_t e = {.fail_with = DUET_ERR_MPI};
    memset(&r, 0xab, sizeof(r));
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, tt_agree, &e, &r), DUET_ERR_MPI);
    cr_assert_eq(r.n_cands, (int32_t)0xabababab);
    /* Rank 0 built another list (index 40, a configuration this rank lacks): its winner is used,
     * with a warning, and nothing measured here is claimed for it. */
    duet_config_t x = duet_config_default(&hw, DUET_MODE_FUSED);
    x.gemm_wgs = 7;
    x.comm_wgs = 125;
    tt_rank_t o = {.bench = {.target = 110},
                   .n_script = 13,
                   .script = {0, 40, x.mode, x.num_wgs, x.gemm_wgs, x.comm_wgs, x.tile.bm, x.tile.bn, x.tile.bk, x.cm,
                              x.cn, x.group_m, x.split_k}};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, tt_agree, &o, &r), DUET_OK, "%s", duet_last_error());
    cr_assert(memcmp(&r.cfg, &x, sizeof(x)) == 0);
    cr_assert_eq(r.winner, -1);
    cr_assert_eq(r.fell_back, 0);
    cr_assert(isnan(r.measured_us));
    cr_assert(strstr(r.warnings, "different candidate list") != NULL, "%s", r.warnings);
    /* A nonsense index is an error. */
    tt_rank_t z = {.bench = {.target = 110}, .n_script = 2, .script = {0, -7}};
    cr_assert_eq(duet_tune_run(&wl, &hw, &p, tt_bench_fn, tt_agree, &z, &r), DUET_ERR_INTERNAL);
    tt_rmdir(dir);
}

/* ------------------------------------------------------------------------------------------ */
/* The candidate set in the tuner                                                              */
/* ------------------------------------------------------------------------------------------ */

Test(tuner, the_candidate_set_leads_without_a_calibrated_profile, T_TIMEOUT)
{
    char dir[64], path[128];
    tt_tmpdir(dir, sizeof(dir));
    duet_tune_cand_t order[3] = {{DUET_MODE_FUSED, 0.9, 0.1, {256, 256, 64}, 5, 1.01, 0},
                                 {DUET_MODE_FUSED, 0.6, 0.4, {128, 128, 64}, 3, 1.05, 0},
                                 {DUET_MODE_CONCURRENT, 0.875, 0.125, {256, 128, 64}, 1, 1.1, 0}};
    duet_tune_candset_arch_t arch;
    memset(&arch, 0, sizeof(arch));
    snprintf(arch.arch, sizeof(arch.arch), "sm_90");
    arch.n_order = 3;
    arch.order = order;
    duet_tune_candset_t set = {0.03, DUET_TILE_LIST_VERSION, 1, &arch};
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = small_wl(2048);
    duet_tune_params_t p = duet_tune_default_params(), rp;
    p.top_k = 5;
    p.candset = &set;
    cr_assert_eq(duet_tune_params_resolve(&p, &rp), DUET_OK);
    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = 0, led = -1;
    cr_assert_eq(duet_tune_candidates(&wl, &hw, &rp, c, &n, &led), DUET_OK);
    cr_assert_eq(led, 0);
    /* The set's order first, mapped to 132 SMs: round(0.9 x 132) = 119, round(0.6 x 132) = 79. */
    cr_assert_eq(c[0].source, DUET_TUNE_SRC_CANDSET);
    cr_assert_eq(c[0].cfg.mode, DUET_MODE_FUSED);
    cr_assert_eq(c[0].cfg.num_wgs, 132);
    cr_assert_eq(c[0].cfg.gemm_wgs, 119);
    cr_assert_eq(c[0].cfg.comm_wgs, 13);
    cr_assert_eq(c[0].cfg.tile.bn, 256);
    cr_assert_eq(c[1].cfg.gemm_wgs, 79);
    cr_assert_eq(c[2].cfg.mode, DUET_MODE_CONCURRENT);
    cr_assert_eq(c[2].cfg.gemm_wgs, 116); /* round(0.875 x 132) = 115.5 -> 116 */
    cr_assert_eq(c[2].cfg.comm_wgs, 17);  /* round(0.125 x 132) = 16.5 -> 17 */
    cr_assert(isfinite(c[0].pred_us) && isfinite(c[2].pred_us), "set candidates are priced too");
    /* Then the model fills to k, then the default. */
    cr_assert_eq(c[3].source, DUET_TUNE_SRC_MODEL);
    cr_assert_eq(c[4].source, DUET_TUNE_SRC_MODEL);
    cr_assert_eq(n, 6);
    cr_assert_eq(c[5].source, DUET_TUNE_SRC_DEFAULT);

    /* A calibrated profile: the model leads and fills k by itself. */
    rp.calibrated = 1;
    cr_assert_eq(duet_tune_candidates(&wl, &hw, &rp, c, &n, &led), DUET_OK);
    cr_assert_eq(led, 1);
    for (int i = 0; i < 5; i++)
        cr_assert_eq(c[i].source, DUET_TUNE_SRC_MODEL);

    /* Another arch: the set does not apply and the model leads. */
    duet_hw_t mi = t_hw("mi300x");
    rp.calibrated = 0;
    cr_assert_eq(duet_tune_candidates(&wl, &mi, &rp, c, &n, &led), DUET_OK);
    cr_assert_eq(led, 1);

    /* The same set from a file named by DUET_TUNE_CANDIDATES. */
    snprintf(path, sizeof(path), "%s/cands.json", dir);
    cr_assert_eq(duet_tune_candset_save(&set, NULL, 0, path), DUET_OK, "%s", duet_last_error());
    setenv("DUET_TUNE_CANDIDATES", path, 1);
    rp.candset = NULL;
    cr_assert_eq(duet_tune_candidates(&wl, &hw, &rp, c, &n, &led), DUET_OK);
    cr_assert_eq(led, 0);
    cr_assert_eq(c[0].source, DUET_TUNE_SRC_CANDSET);
    cr_assert_eq(c[0].cfg.gemm_wgs, 119);
    tt_rmdir(dir);
}

Test(tuner, when_the_model_cannot_rank_the_candidate_set_fills, T_TIMEOUT)
{
    /* A one-SM device in concurrent mode leaves the sweep no split to try, so the model's ranking
     * fails; the candidate set (and the heuristics) must still give candidates. */
    duet_tune_cand_t order[2] = {{DUET_MODE_CONCURRENT, 0.875, 0.125, {256, 128, 64}, 2, 1.0, 0},
                                 {DUET_MODE_CONCURRENT, 0.5, 0.5, {256, 256, 64}, 1, 1.1, 0}};
    duet_tune_candset_arch_t arch;
    memset(&arch, 0, sizeof(arch));
    snprintf(arch.arch, sizeof(arch.arch), "sm_90");
    arch.n_order = 2;
    arch.order = order;
    duet_tune_candset_t set = {0.03, DUET_TILE_LIST_VERSION, 1, &arch};
    duet_hw_t hw = t_hw("h200");
    hw.n_sms = 1;
    duet_workload_t wl = small_wl(512);
    tt_warnings_t w = {0};
    duet_tune_params_t p = tt_quiet_params(&w), rp;
    p.modes = 1u << DUET_MODE_CONCURRENT;
    p.calibrated = 1;
    p.top_k = 4;
    p.candset = &set;
    cr_assert_eq(duet_tune_params_resolve(&p, &rp), DUET_OK);
    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = 0, led = -1;
    cr_assert_eq(duet_tune_candidates(&wl, &hw, &rp, c, &n, &led), DUET_OK);
    cr_assert(strstr(w.text, "the model could not rank") != NULL, "%s", w.text);
    cr_assert_eq(n, 2);
    cr_assert_eq(c[0].source, DUET_TUNE_SRC_CANDSET);
    cr_assert_eq(c[1].source, DUET_TUNE_SRC_CANDSET);
    cr_assert_eq(c[0].cfg.gemm_wgs, 1);
    cr_assert_eq(c[0].cfg.comm_wgs, 1);
    cr_assert_eq(c[1].cfg.tile.bn, 256);
    /* The static default (concurrent, 1 + 1 CTAs, 256x128x64) is the set's first entry here. */
    duet_config_t d = duet_tune_static_default(&hw, &rp);
    cr_assert_eq(find_cfg(c, n, &d), 0);
}
