/*
 * The tuner's edges: a benchmark that answers nonsense, warnings with no callback or more than the
 * result holds, a candidate set that cannot be loaded or is empty, the inputs it refuses, a
 * database path it cannot use, and agreement with a rank 0 whose answers do not match this rank's
 * (another cached configuration, a winner at another index, one that does not fit, one that failed
 * here, a broadcast failing half-way).
 */
#include "tune_util.h"

#include <criterion/redirect.h>

/* Whether text begins with prefix. */
static int starts(const char *text, const char *prefix)
{
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* What every test here starts from: a private folder (DUET_CACHE in it), the H200, a small
 * all_gather workload and quiet parameters (each test runs in its own process). */
static struct {
    char dir[64];
    tt_warnings_t w;
    duet_hw_t hw;
    duet_workload_t wl;
    duet_tune_params_t p;
} fx;

static void fx_setup(void)
{
    tt_tmpdir(fx.dir, sizeof(fx.dir));
    fx.hw = t_hw("h200");
    fx.wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    fx.p = tt_quiet_params(&fx.w);
}

static void fx_teardown(void)
{
    tt_rmdir(fx.dir);
}

static void fx_setup_stderr(void)
{
    cr_redirect_stderr();
    fx_setup();
}

TestSuite(tuner_edges, .init = fx_setup, .fini = fx_teardown, T_TIMEOUT);

/* A benchmark that answers `med` ms (NaN allowed) with no minimum or maximum. */
static duet_status_t nan_spread_bench(void *user, const duet_config_t *cfg, double *med, double *lo, double *hi)
{
    (void)cfg;
    *med = *(const double *)user;
    *lo = NAN;
    *hi = NAN;
    return DUET_OK;
}

Test(tuner_edges, a_median_that_is_not_a_positive_time_fails_the_candidate)
{
    static const double bad[] = {NAN, 0.0, -1.0, INFINITY};
    static const char *const text[] = {"nan", "0", "-1", "inf"};
    fx.p.top_k = 2;
    for (int i = 0; i < 4; i++) {
        duet_tune_result_t r;
        cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, nan_spread_bench, NULL, (void *)&bad[i], &r), DUET_OK);
        cr_assert_eq(r.fell_back, 1, "%s ms", text[i]);
        cr_assert_eq(r.stored, 0);
        char want[64];
        snprintf(want, sizeof(want), "the benchmark returned %s ms", text[i]);
        cr_assert_str_eq(r.cands[0].error, want);
        cr_assert_eq(r.cands[0].status, DUET_ERR_INTERNAL);
    }
    /* A good median without a spread: the fastest and slowest runs are the median. */
    double ms = 0.25;
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, nan_spread_bench, NULL, &ms, &r), DUET_OK, "%s",
                 duet_last_error());
    cr_assert_eq(r.winner, 0, "equal medians: the first candidate");
    cr_assert_eq(r.cands[0].us, 250);
    cr_assert_eq(r.cands[0].min_us, 250);
    cr_assert_eq(r.cands[0].max_us, 250);
    cr_assert_eq(r.measured_us, 250);
    cr_assert_eq(r.stored, 1);
}

Test(tuner_edges, warnings_past_the_results_room_are_counted_not_written)
{
    fx.p.top_k = 20;
    tt_bench_t b = {.fail_all = 1};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_OK);
    /* One warning per failed candidate and one for the fall-back, each longer than 50 characters:
     * more than the 1024 bytes the result holds, so its text stops full (1023 characters and the NUL)
     * while the count goes on. */
    cr_assert_geq(r.n_cands, 21);
    cr_assert_eq(r.n_warnings, r.n_cands + 1);
    cr_assert_eq(fx.w.n, r.n_warnings, "the callback saw every one");
    cr_assert_eq(strlen(r.warnings), sizeof(r.warnings) - 1);
    cr_assert(starts(r.warnings, "candidate 0 ("), "%s", r.warnings);
    cr_assert(strstr(fx.w.text, "every one of the") != NULL, "%s", fx.w.text);
    cr_assert(strstr(r.warnings, "every one of the") == NULL, "the last warning did not fit");
}

Test(tuner_edges, without_a_callback_warnings_go_to_stderr, .init = fx_setup_stderr)
{
    fx.p.warn = NULL;
    fx.p.warn_user = NULL;
    fx.p.top_k = 1;
    tt_bench_t b = {.fail_all = 1};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_OK);
    cr_assert_eq(r.n_warnings, r.n_cands + 1);
    fflush(stderr);
    FILE *f = cr_get_redirected_stderr();
    char text[4096];
    size_t len = fread(text, 1, sizeof(text) - 1, f);
    text[len] = '\0';
    cr_assert(starts(text, "duet: warning: candidate 0 ("), "%s", text);
    cr_assert(strstr(text, "\nduet: warning: every one of the") != NULL, "%s", text);
}

Test(tuner_edges, an_unloadable_or_empty_candidate_set_leaves_the_model_leading)
{
    char path[128];
    duet_tune_params_t rp;
    fx.p.top_k = 3;
    cr_assert_eq(duet_tune_params_resolve(&fx.p, &rp), DUET_OK);
    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = 0, led = -1;

    /* A variable naming no file: a warning, and the model leads. */
    snprintf(path, sizeof(path), "%s/none.json", fx.dir);
    setenv("DUET_TUNE_CANDIDATES", path, 1);
    cr_assert_eq(duet_tune_candidates(&fx.wl, &fx.hw, &rp, c, &n, &led), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(led, 1);
    cr_assert(strstr(fx.w.text, "DUET_TUNE_CANDIDATES: ") != NULL, "%s", fx.w.text);
    cr_assert(strstr(fx.w.text, "none.json") != NULL, "%s", fx.w.text);
    cr_assert(strstr(fx.w.text, "; going on without a candidate set") != NULL, "%s", fx.w.text);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(c[i].source, DUET_TUNE_SRC_MODEL);

    /* A set of the device's arch with no configuration in it: the model leads, and a set given by
     * the caller wins over the variable (no second warning). */
    duet_tune_candset_arch_t arch;
    memset(&arch, 0, sizeof(arch));
    snprintf(arch.arch, sizeof(arch.arch), "sm_90");
    duet_tune_candset_t set = {0.03, DUET_TILE_LIST_VERSION, 1, &arch};
    rp.candset = &set;
    fx.w.n = 0;
    cr_assert_eq(duet_tune_candidates(&fx.wl, &fx.hw, &rp, c, &n, &led), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(led, 1);
    cr_assert_eq(fx.w.n, 0, "%s", fx.w.text);

    /* A set of concurrent configurations only, for a tuner allowed fused only: none is taken, the
     * model fills the list alone. */
    duet_tune_cand_t order[1] = {{DUET_MODE_CONCURRENT, 0.875, 0.125, {256, 128, 64}, 1, 1.0, 0}};
    arch.n_order = 1;
    arch.order = order;
    rp.modes = 1u << DUET_MODE_FUSED;
    cr_assert_eq(duet_tune_candidates(&fx.wl, &fx.hw, &rp, c, &n, &led), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(led, 0, "the set of the arch leads");
    for (int32_t i = 0; i < n; i++) {
        cr_assert_eq(c[i].cfg.mode, DUET_MODE_FUSED);
        cr_assert_neq(c[i].source, DUET_TUNE_SRC_CANDSET);
    }
    unsetenv("DUET_TUNE_CANDIDATES");
}

Test(tuner_edges, the_inputs_a_run_and_a_candidate_list_refuse)
{
    duet_workload_t bad_wl = fx.wl;
    bad_wl.m = 0;
    tt_bench_t b = {0};
    duet_tune_result_t r;
    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = 0, led = 0;

    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, NULL, NULL, &b, &r), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "tune: workload, profile, benchmark and result are required");
    cr_assert_eq(duet_tune_run(NULL, &fx.hw, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_tune_run(&fx.wl, NULL, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, NULL, &b, NULL), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_tune_run(&bad_wl, &fx.hw, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_ERR_INVALID_ARG);
    duet_hw_t bad_hw = fx.hw;
    bad_hw.n_sms = 0;
    cr_assert_eq(duet_tune_run(&fx.wl, &bad_hw, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_ERR_INVALID_ARG);
    cr_assert_eq(b.calls, 0);

    cr_assert_eq(duet_tune_candidates(&bad_wl, &fx.hw, &fx.p, c, &n, &led), DUET_ERR_INVALID_ARG);
    fx.p.top_k = DUET_TUNE_MAX_TOPK + 1;
    cr_assert_eq(duet_tune_candidates(&fx.wl, &fx.hw, &fx.p, c, &n, &led), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "tune: top_k 64 is outside [1, 63]");
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_ERR_INVALID_ARG);
}

Test(tuner_edges, every_field_of_the_parameters_has_both_bounds)
{
    static const struct {
        int field;
        int32_t value;
        const char *why;
    } cases[] = {
        {0, 64, "tune: top_k 64 is outside [1, 63]"},
        {1, 1000001, "tune: n_warmup 1000001 is outside [0, 1000000]"},
        {2, 1000001, "tune: n_repeat 1000001 is outside [1, 1000000]"},
        {3, 2, "tune: force, use_cache, write_cache and calibrated are 0 or 1"},
        {4, 2, "tune: force, use_cache, write_cache and calibrated are 0 or 1"},
        {5, -1, "tune: cm, cn and group_m must not be negative (0 = default)"},
        {6, -1, "tune: cm, cn and group_m must not be negative (0 = default)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_tune_params_t q = duet_tune_default_params(), r;
        int32_t *f[] = {&q.top_k, &q.n_warmup, &q.n_repeat, &q.write_cache, &q.calibrated, &q.cn, &q.group_m};
        *f[cases[i].field] = cases[i].value;
        cr_assert_eq(duet_tune_params_resolve(&q, &r), DUET_ERR_INVALID_ARG, "%zu", i);
        cr_assert_str_eq(duet_last_error(), cases[i].why);
    }
    /* The limits themselves are allowed. */
    duet_tune_params_t q = duet_tune_default_params(), r;
    q.top_k = DUET_TUNE_MAX_TOPK;
    q.n_warmup = 1000000;
    q.n_repeat = 1000000;
    q.calibrated = 1;
    cr_assert_eq(duet_tune_params_resolve(&q, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(r.top_k, 63);
}

Test(tuner_edges, a_database_path_that_cannot_be_used_only_warns)
{
    char path[1100];
    memset(path, 'd', sizeof(path));
    path[0] = '/';
    path[1000] = '\0';
    setenv("DUET_CACHE", path, 1);
    fx.p.top_k = 2;
    tt_bench_t b = {.target = 110};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(fx.w.text,
                     "tuning database: tuning database: path longer than 992 characters; tuning without it\n");
    cr_assert_eq(r.stored, 0);
    cr_assert_str_eq(r.db_path, "");
    cr_assert_geq(r.winner, 0);
    cr_assert_eq(b.calls, r.n_cands);
}

/* ------------------------------------------------------------------------------------------ */
/* Agreement: this process is a rank other than 0, rank 0 a script of broadcast values.         */
/* ------------------------------------------------------------------------------------------ */

typedef struct edge_rank {
    tt_bench_t bench; /* first: the benchmark callback casts the shared user pointer to it */
    int n_script, pos;
    int32_t script[16];
    int32_t sent[16];
    int fail_at; /* the 1-based call that fails with DUET_ERR_MPI; 0: none */
} edge_rank_t;

static duet_status_t edge_agree(void *user, int32_t *value)
{
    edge_rank_t *r = user;
    if (r->fail_at == r->pos + 1)
        return DUET_ERR_MPI;
    cr_assert_lt(r->pos, r->n_script, "more agreement calls than rank 0 made");
    r->sent[r->pos] = *value;
    *value = r->script[r->pos++];
    return DUET_OK;
}

/* Rank 0's script: `head` values (the verdict, and on a miss the winner's index), then cfg's 11
 * fields in the order the tuner broadcasts them. */
static edge_rank_t edge_script(const int32_t *head, int n_head, const duet_config_t *c)
{
    edge_rank_t r;
    memset(&r, 0, sizeof(r));
    r.bench.target = 110;
    for (int i = 0; i < n_head; i++)
        r.script[r.n_script++] = head[i];
    if (c != NULL) {
        int32_t f[] = {c->mode,    c->num_wgs, c->gemm_wgs, c->comm_wgs, c->tile.bm, c->tile.bn,
                       c->tile.bk, c->cm,      c->cn,       c->group_m,  c->split_k};
        for (int i = 0; i < 11; i++)
            r.script[r.n_script++] = f[i];
    }
    return r;
}

/* This rank's candidate list for p (as duet_tune_run will build it). */
static int32_t edge_cands(const duet_workload_t *wl, const duet_hw_t *hw, const duet_tune_params_t *p,
                          duet_tune_outcome_t *c)
{
    duet_tune_params_t rp;
    cr_assert_eq(duet_tune_params_resolve(p, &rp), DUET_OK);
    int32_t n = 0, led = 0;
    cr_assert_eq(duet_tune_candidates(wl, hw, &rp, c, &n, &led), DUET_OK, "%s", duet_last_error());
    return n;
}

Test(tuner_edges, rank_0s_winner_at_another_index_is_found_in_this_ranks_list)
{
    fx.p.write_cache = 0;
    fx.p.top_k = 4;
    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = edge_cands(&fx.wl, &fx.hw, &fx.p, c);
    cr_assert_geq(n, 3);
    /* Rank 0 sends index 0 but the configuration of this rank's candidate 2. */
    int32_t head[] = {0, 0};
    edge_rank_t k = edge_script(head, 2, &c[2].cfg);
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, edge_agree, &k, &r), DUET_OK, "%s",
                 duet_last_error());
    cr_assert_eq(k.pos, 13);
    cr_assert_eq(r.winner, 2);
    cr_assert(memcmp(&r.cfg, &c[2].cfg, sizeof(r.cfg)) == 0);
    /* Its time is this rank's own measurement of it: the fake benchmark's ms, as us. */
    cr_assert_eq(r.measured_us, tt_bench_ms(&k.bench, &c[2].cfg) * 1e3);
    cr_assert_eq(r.pred_us, c[2].pred_us);
    cr_assert(strstr(r.warnings, "rank 0 built a different candidate list; using its winner") != NULL, "%s",
              r.warnings);
}

Test(tuner_edges, rank_0s_winner_that_failed_here_is_used_and_not_stored)
{
    fx.p.top_k = 4;
    duet_tune_outcome_t c[DUET_TUNE_MAX_CANDIDATES];
    int32_t n = edge_cands(&fx.wl, &fx.hw, &fx.p, c);
    cr_assert_geq(n, 2);
    int32_t head[] = {0, 0};
    edge_rank_t k = edge_script(head, 2, &c[0].cfg);
    k.bench.fail_gemm_wgs = c[0].cfg.gemm_wgs; /* rank 0 measured it; it failed here */
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, edge_agree, &k, &r), DUET_OK, "%s",
                 duet_last_error());
    cr_assert_eq(r.winner, 0);
    cr_assert_eq(r.cands[0].ok, 0);
    cr_assert(isnan(r.measured_us), "nothing measured here is claimed for it");
    cr_assert_eq(r.stored, 0, "a winner without a time is not remembered");
    duet_tune_db_t db;
    duet_tune_entry_t e;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_eq(duet_tune_db_lookup(&db, r.key, &e), DUET_ERR_NOT_FOUND);
}

Test(tuner_edges, rank_0s_configuration_that_does_not_fit_here_is_an_error)
{
    fx.p.write_cache = 0;
    fx.p.top_k = 2;
    /* A fused grid of 200 CTAs: more than this device's 132 SMs. */
    duet_config_t big = duet_config_default(&fx.hw, DUET_MODE_FUSED);
    big.num_wgs = 200;
    big.gemm_wgs = 150;
    big.comm_wgs = 50;
    duet_tune_result_t r;
    memset(&r, 0x5a, sizeof(r));
    int32_t hit[] = {1};
    edge_rank_t h = edge_script(hit, 1, &big);
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, edge_agree, &h, &r), DUET_ERR_INTERNAL);
    cr_assert(starts(duet_last_error(), "tune: rank 0's cached configuration does not fit this rank: "), "%s",
              duet_last_error());
    cr_assert_eq(h.bench.calls, 0);
    int32_t miss[] = {0, 40};
    edge_rank_t m = edge_script(miss, 2, &big);
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, edge_agree, &m, &r), DUET_ERR_INTERNAL);
    cr_assert(starts(duet_last_error(), "tune: rank 0's winner does not fit this rank: "), "%s", duet_last_error());
    cr_assert_eq(r.n_cands, 0x5a5a5a5a, "the result is written only on success");
}

Test(tuner_edges, a_local_hit_gives_way_to_rank_0s_other_configuration)
{
    fx.p.top_k = 2;
    tt_bench_t b = {.target = 110};
    duet_tune_result_t r;
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, NULL, &b, &r), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(r.stored, 1);
    /* This rank now hits; rank 0 hit another configuration. */
    duet_config_t other = duet_config_default(&fx.hw, DUET_MODE_CONCURRENT);
    cr_assert(memcmp(&other, &r.cfg, sizeof(other)) != 0);
    int32_t hit[] = {1};
    edge_rank_t h = edge_script(hit, 1, &other);
    duet_tune_result_t r2;
    cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, edge_agree, &h, &r2), DUET_OK, "%s",
                 duet_last_error());
    cr_assert_eq(h.sent[0], 1, "this rank's verdict was a hit");
    cr_assert_eq(h.sent[3], r.cfg.gemm_wgs, "and it offered its own configuration");
    cr_assert_eq(r2.cached, 1);
    cr_assert(memcmp(&r2.cfg, &other, sizeof(other)) == 0);
    cr_assert(isnan(r2.measured_us), "this rank's cached time is not rank 0's configuration's");
    cr_assert_eq(r2.n_cands, 0);
    cr_assert_eq(h.bench.calls, 0);
}

Test(tuner_edges, a_broadcast_failing_half_way_fails_the_run)
{
    fx.p.write_cache = 0;
    fx.p.top_k = 2;
    duet_config_t d = duet_tune_static_default(&fx.hw, &fx.p);
    /* A hit: the third call is the configuration's second field. A miss: the second call is the
     * winner's index, the fourth its configuration's second field. */
    static const struct {
        int32_t head[2];
        int n_head, fail_at, benched;
    } cases[] = {{{1, 0}, 1, 3, 0}, {{0, 0}, 2, 2, 1}, {{0, 0}, 2, 4, 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        edge_rank_t k = edge_script(cases[i].head, cases[i].n_head, &d);
        k.fail_at = cases[i].fail_at;
        duet_tune_result_t r;
        cr_assert_eq(duet_tune_run(&fx.wl, &fx.hw, &fx.p, tt_bench_fn, edge_agree, &k, &r), DUET_ERR_MPI, "%zu", i);
        cr_assert_eq(k.pos, cases[i].fail_at - 1, "%zu", i);
        cr_assert_eq(k.bench.calls > 0, cases[i].benched, "%zu", i);
    }
}
