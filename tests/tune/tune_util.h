/*
 * Helpers of the tuner tests: a private temporary folder per test (the user's real cache is never
 * touched: DUET_CACHE points inside it), a fake benchmark, and hand-built corpora.
 */
#ifndef DUET_TEST_TUNE_UTIL_H
#define DUET_TEST_TUNE_UTIL_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/corpus.h"
#include "duet/tune.h"

/* A fresh folder in the test's own temporary folder; DUET_CACHE is set to <dir>/tuning.json and the other variables
 * that could redirect the database or the tuner are cleared. */
static inline void tt_tmpdir(char *dir, size_t n)
{
    cr_assert_lt(snprintf(dir, n, "%s/tune-XXXXXX", t_tmpdir()), (int)n);
    cr_assert_not_null(mkdtemp(dir));
    char db[512];
    snprintf(db, sizeof(db), "%s/tuning.json", dir);
    setenv("DUET_CACHE", db, 1);
    unsetenv("DUET_TUNE_TOPK");
    unsetenv("DUET_TUNE_NREP");
    unsetenv("DUET_TUNE_NWARMUP");
    unsetenv("DUET_TUNE_FORCE");
    unsetenv("DUET_TUNE_CANDIDATES");
}

/* rm -rf of a test folder (it holds only files and folders the test made). */
static inline void tt_rmdir(const char *dir)
{
    t_rmtree(dir);
}

/* Replace the first `from` in the file at `path` by `to` (a hand edit of a stored file). */
static inline void tt_edit(const char *path, const char *from, const char *to)
{
    char *text = t_slurp(path);
    cr_assert_not_null(text);
    char *p = strstr(text, from);
    cr_assert_not_null(p, "no '%s' in %s", from, text);
    char *out = t_splice(text, (size_t)(p - text), strlen(from), to);
    cr_assert_eq(t_spill(path, out), 0);
    free(out);
    free(text);
}

/* Collects warnings instead of printing them. */
typedef struct tt_warnings {
    int n;
    char text[4096];
} tt_warnings_t;

static inline void tt_warn(void *user, const char *msg)
{
    tt_warnings_t *w = user;
    size_t used = strlen(w->text);
    snprintf(w->text + used, sizeof(w->text) - used, "%s\n", msg);
    w->n++;
}

/* Default tuner parameters whose warnings go to `w` instead of stderr. */
/* A fresh test folder (dir, 64 bytes) with DUET_CACHE in it, and the database there, warning into w. */
static inline duet_tune_db_t tt_db_begin(char *dir, tt_warnings_t *w)
{
    tt_tmpdir(dir, 64);
    memset(w, 0, sizeof(*w));
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    db.warn = tt_warn;
    db.warn_user = w;
    return db;
}

static inline duet_tune_params_t tt_quiet_params(tt_warnings_t *w)
{
    duet_tune_params_t p = duet_tune_default_params();
    p.warn = tt_warn;
    p.warn_user = w;
    return p;
}

/*
 * The fake benchmark: a smooth, known function of the configuration (fastest at gemm_wgs =
 * target in fused mode with the 256x256x64 tile), so that the winner is predictable; counts
 * its calls; fails the configurations the test marks as failing.
 */
typedef struct tt_bench {
    int calls;
    int32_t target;    /* the fastest fused gemm_wgs */
    int fail_all;      /* every call fails */
    int fail_gemm_wgs; /* fail configurations with this gemm_wgs (0: none) */
} tt_bench_t;

static inline double tt_bench_ms(const tt_bench_t *b, const duet_config_t *cfg)
{
    double ms = 1.0 + fabs((double)(cfg->gemm_wgs - b->target)) / 100.0;
    if (cfg->mode == DUET_MODE_CONCURRENT)
        ms += 0.5;
    if (cfg->tile.bm != 256 || cfg->tile.bn != 256)
        ms += 0.05;
    return ms;
}

static inline duet_status_t tt_bench_fn(void *user, const duet_config_t *cfg, double *med, double *lo, double *hi)
{
    tt_bench_t *b = user;
    b->calls++;
    /* What a launch failure looks like to the tuner: a status (its text is the reason). */
    if (b->fail_all || (b->fail_gemm_wgs > 0 && cfg->gemm_wgs == b->fail_gemm_wgs))
        return DUET_ERR_BACKEND;
    *med = tt_bench_ms(b, cfg);
    *lo = *med * 0.99;
    *hi = *med * 1.01;
    return DUET_OK;
}

/* An entry for workload m (the key differs by m), with one measured and one failed candidate. */
static inline duet_tune_entry_t tt_entry_for(int64_t m)
{
    duet_hw_t hw = t_hw("h200");
    duet_tune_entry_t e;
    memset(&e, 0, sizeof(e));
    e.wl = t_wl(m, 4096, 4096, DUET_COLL_ALL_GATHER, 1024, 2048, 2);
    /* No cr_assert here: forked writers call this, and only the test process may report. A failure
     * leaves the key empty, which the store refuses. */
    if (duet_tune_key_make(&hw, &e.wl, NULL, e.key, sizeof(e.key)) != DUET_OK)
        e.key[0] = '\0';
    snprintf(e.arch, sizeof(e.arch), "sm_90");
    e.sms = 132;
    e.modes = 3;
    snprintf(e.tiles, sizeof(e.tiles), "%s", DUET_TILE_LIST_VERSION);
    e.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    e.cfg.gemm_wgs = 117;
    e.cfg.comm_wgs = 15;
    e.measured_us = 500 + (double)m / 100;
    e.pred_us = 450;
    e.n_warmup = 5;
    e.n_repeat = 20;
    snprintf(e.date, sizeof(e.date), "2026-11-30T12:00:00Z");
    snprintf(e.duet_version, sizeof(e.duet_version), "%s", DUET_VERSION);
    e.n_cands = 2;
    e.cands[0].cfg = e.cfg;
    e.cands[0].source = DUET_TUNE_SRC_MODEL;
    e.cands[0].model_rank = 1;
    e.cands[0].pred_us = 450;
    e.cands[0].ok = 1;
    e.cands[0].us = e.measured_us;
    e.cands[0].min_us = e.measured_us - 10; /* integers: any printing of the file keeps them exact */
    e.cands[0].max_us = e.measured_us + 15;
    e.cands[1].cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    e.cands[1].source = DUET_TUNE_SRC_DEFAULT;
    e.cands[1].pred_us = NAN;
    e.cands[1].ok = 0;
    e.cands[1].status = DUET_ERR_TIMEOUT;
    snprintf(e.cands[1].error, sizeof(e.cands[1].error), "device wait timed out after 5000 ms");
    return e;
}

/* A fresh database holding tt_entry_for(1000), edited by hand (`from` -> `to`): its listing drops the entry
 * with a warning that holds `why`. */
static inline void tt_expect_edit_drops(const char *from, const char *to, const char *why)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    duet_tune_entry_t a = tt_entry_for(1000);
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    tt_edit(db.path, from, to);
    duet_tune_entry_t *list = NULL;
    size_t n = 9;
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK, "%s: %s", to, duet_last_error());
    cr_assert_eq(n, 0, "%s", to);
    free(list);
    cr_assert(strstr(w.text, why) != NULL, "%s: %s", to, w.text);
    tt_rmdir(dir);
}

/* One op row. */
static inline duet_corpus_row_t tt_row(duet_workload_t wl, int32_t mode, int32_t num_wgs, int32_t gemm_wgs,
                                       int32_t comm_wgs, duet_gemm_tile_t tile, double ms)
{
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.kind = DUET_ROW_OP;
    r.wl = wl;
    r.cfg.mode = mode;
    r.cfg.num_wgs = num_wgs;
    r.cfg.gemm_wgs = gemm_wgs;
    r.cfg.comm_wgs = comm_wgs;
    r.cfg.tile = tile;
    r.cfg.cm = 256;
    r.cfg.cn = 64;
    r.cfg.group_m = 8;
    r.repeats = 8;
    if (ms > 0) {
        r.ok = 1;
        r.ms = ms;
        r.min_ms = ms * 0.99;
        r.max_ms = ms * 1.01;
    } else {
        r.ok = 0;
        snprintf(r.error, sizeof(r.error), "launch failed: too many resources requested");
    }
    return r;
}

/* An empty corpus of a device. */
static inline duet_corpus_t tt_corpus(const char *arch, int32_t sms, int32_t world)
{
    duet_corpus_t c;
    duet_corpus_init(&c);
    snprintf(c.device, sizeof(c.device), "test device");
    snprintf(c.arch, sizeof(c.arch), "%s", arch);
    snprintf(c.driver, sizeof(c.driver), "test");
    snprintf(c.runtime, sizeof(c.runtime), "test");
    snprintf(c.date, sizeof(c.date), "2026-11-30T12:00:00Z");
    snprintf(c.duet_version, sizeof(c.duet_version), "%s", DUET_VERSION);
    c.sms = sms;
    c.world = world;
    c.repeats = 8;
    c.warmup = 2;
    return c;
}

#endif /* DUET_TEST_TUNE_UTIL_H */
