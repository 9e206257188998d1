/*
 * Fuzz the tuning database's reader and its merge: the input is the database file. Every
 * operation must end with a status (a bad file is moved aside, a bad entry skipped, never a
 * crash); after storing one entry the file must list that entry, and the entries that listed
 * before the store must still list (issue 22: one number like 1e999 made the next store write a
 * file that was no longer JSON, and the next reader moved the whole database aside).
 */
#include <string.h>

#include "duet/duet.h"
#include "duet/tune.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fz_quiet(void *user, const char *msg)
{
    (void)user;
    (void)msg;
}

/* A fixed entry to store: a key no input holds unless it copies it. */
static duet_tune_entry_t fz_entry(void)
{
    duet_tune_entry_t e;
    memset(&e, 0, sizeof(e));
    duet_hw_t hw;
    FZ_ASSERT(duet_hw_builtin("h200", &hw) == DUET_OK);
    e.wl = duet_workload_empty();
    e.wl.m = e.wl.n = e.wl.k = 4096;
    e.wl.coll = DUET_COLL_ALL_GATHER;
    e.wl.mc = 1024;
    e.wl.nc = 4096;
    e.wl.world = 2;
    duet_tune_params_t p = duet_tune_default_params(), rp;
    FZ_ASSERT(duet_tune_params_resolve(&p, &rp) == DUET_OK);
    FZ_ASSERT(duet_tune_key_make(&hw, &e.wl, &rp, e.key, sizeof(e.key)) == DUET_OK);
    snprintf(e.arch, sizeof(e.arch), "%s", hw.arch);
    e.sms = hw.n_sms;
    e.modes = rp.modes;
    snprintf(e.tiles, sizeof(e.tiles), "%s", DUET_TILE_LIST_VERSION);
    e.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    e.measured_us = 1.25;
    e.pred_us = 1.5;
    e.n_warmup = 5;
    e.n_repeat = 20;
    snprintf(e.date, sizeof(e.date), "2026-12-02T00:00:00Z");
    snprintf(e.duet_version, sizeof(e.duet_version), "%s", DUET_VERSION);
    return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[512];
    fz_write("tuning.json", data, size, path, sizeof(path));
    duet_tune_db_t db;
    FZ_ASSERT(duet_tune_db_open(path, &db) == DUET_OK);
    db.warn = fz_quiet;
    db.lock_timeout_ms = 1000;
    duet_tune_entry_t *before = NULL, *after = NULL, e;
    size_t n_before = 0, n_after = 0;
    if (duet_tune_db_list(&db, &before, &n_before) != DUET_OK)
        n_before = 0;
    for (size_t i = 0; i < n_before; i++)
        FZ_ASSERT(duet_tune_db_lookup(&db, before[i].key, &e) == DUET_OK);
    duet_tune_entry_t mine = fz_entry();
    if (duet_tune_db_store(&db, &mine) == DUET_OK) {
        FZ_ASSERT(duet_tune_db_lookup(&db, mine.key, &e) == DUET_OK);
        FZ_ASSERT(e.measured_us == mine.measured_us);
        FZ_ASSERT(duet_tune_db_list(&db, &after, &n_after) == DUET_OK);
        /* Every entry that listed before is still there (the stored key replaced its own). */
        for (size_t i = 0; i < n_before; i++)
            if (strcmp(before[i].key, mine.key) != 0)
                FZ_ASSERT(duet_tune_db_lookup(&db, before[i].key, &e) == DUET_OK);
        free(after);
    }
    free(before);
    fz_clean();
    return 0;
}
