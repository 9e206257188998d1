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

/* A fresh folder under /tmp; DUET_CACHE is set to <dir>/tuning.json and the other variables that
 * could redirect the database or the tuner are cleared. */
static inline void tt_tmpdir(char *dir, size_t n)
{
    snprintf(dir, n, "/tmp/duet-tune-test-XXXXXX");
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
    DIR *d = opendir(dir);
    if (d != NULL) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            char *p = malloc(n);
            struct stat sb;
            snprintf(p, n, "%s/%s", dir, e->d_name);
            if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
                tt_rmdir(p);
            else
                unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
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
