/*
 * The tuning database: round trip, misses, merging with other processes, corrupt files, many
 * writers at once.
 */
#include <glob.h>
#include <sys/wait.h>

#include "tune_util.h"

static duet_tune_db_t open_db(tt_warnings_t *w)
{
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    db.warn = tt_warn;
    db.warn_user = w;
    return db;
}

Test(tune_db, store_then_lookup_gives_back_every_field, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_tune_db_t db = open_db(&w);
    duet_tune_entry_t e = tt_entry_for(4096), back;
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_tune_db_lookup(&db, e.key, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(back.key, e.key);
    cr_assert_str_eq(back.arch, "sm_90");
    cr_assert_eq(back.sms, 132);
    cr_assert_eq(back.modes, 3u);
    cr_assert(duet_workload_same(&back.wl, &e.wl));
    cr_assert_eq(back.cfg.gemm_wgs, 117);
    cr_assert_eq(back.cfg.comm_wgs, 15);
    cr_assert_eq(back.cfg.tile.bm, e.cfg.tile.bm);
    cr_assert_eq(back.measured_us, e.measured_us);
    cr_assert_eq(back.pred_us, 450);
    cr_assert_eq(back.n_repeat, 20);
    cr_assert_str_eq(back.date, "2026-11-30T12:00:00Z");
    cr_assert_str_eq(back.duet_version, DUET_VERSION);
    cr_assert_eq(back.n_cands, 2);
    cr_assert_eq(back.cands[0].ok, 1);
    cr_assert_eq(back.cands[0].us, e.measured_us);
    cr_assert_eq(back.cands[0].model_rank, 1);
    cr_assert_eq(back.cands[1].ok, 0);
    cr_assert_eq(back.cands[1].source, DUET_TUNE_SRC_DEFAULT);
    cr_assert_eq(back.cands[1].status, DUET_ERR_TIMEOUT);
    cr_assert(isnan(back.cands[1].pred_us));
    cr_assert_str_eq(back.cands[1].error, "device wait timed out after 5000 ms");
    cr_assert_eq(w.n, 0, "%s", w.text);
    /* Storing the same key again replaces, not duplicates. */
    e.measured_us = 250;
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK);
    duet_tune_entry_t *list = NULL;
    size_t n = 0;
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK);
    cr_assert_eq(n, 1);
    cr_assert_eq(list[0].measured_us, 250);
    free(list);
    tt_rmdir(dir);
}

Test(tune_db, misses_and_folders_created_on_store, T_TIMEOUT)
{
    char dir[64], path[256];
    tt_tmpdir(dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/a/b/c/tuning.json", dir);
    tt_warnings_t w = {0};
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(path, &db), DUET_OK);
    db.warn = tt_warn;
    db.warn_user = &w;
    duet_tune_entry_t e = tt_entry_for(2048), back;
    cr_assert_eq(duet_tune_db_lookup(&db, e.key, &back), DUET_ERR_NOT_FOUND); /* no file */
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK, "%s", duet_last_error());
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    duet_tune_entry_t other = tt_entry_for(1024);
    cr_assert_eq(duet_tune_db_lookup(&db, other.key, &back), DUET_ERR_NOT_FOUND); /* no key */
    cr_assert_eq(w.n, 0);
    /* Clear deletes the file; clearing again is fine. */
    cr_assert_eq(duet_tune_db_clear(&db), DUET_OK);
    cr_assert_neq(stat(path, &sb), 0);
    cr_assert_eq(duet_tune_db_clear(&db), DUET_OK);
    cr_assert_eq(duet_tune_db_lookup(&db, e.key, &back), DUET_ERR_NOT_FOUND);
    tt_rmdir(dir);
}

Test(tune_db, store_merges_entries_written_by_another_process, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_tune_db_t db = open_db(&w);
    duet_tune_entry_t a = tt_entry_for(1000), b = tt_entry_for(2000), back;
    /* Our process has read the (empty) database; another one stores meanwhile. */
    cr_assert_eq(duet_tune_db_lookup(&db, b.key, &back), DUET_ERR_NOT_FOUND);
    pid_t pid = fork();
    if (pid == 0) {
        duet_tune_db_t cdb;
        _exit(duet_tune_db_open(NULL, &cdb) == DUET_OK && duet_tune_db_store(&cdb, &a) == DUET_OK ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    cr_assert_eq(duet_tune_db_store(&db, &b), DUET_OK);
    cr_assert_eq(duet_tune_db_lookup(&db, a.key, &back), DUET_OK, "the other process's entry was lost");
    cr_assert_eq(back.measured_us, a.measured_us);
    cr_assert_eq(duet_tune_db_lookup(&db, b.key, &back), DUET_OK);

    /* An entry this version cannot read (a future writer's) is kept verbatim by a merge, and a
     * lookup of it is a miss with a warning. */
    char *text = NULL;
    FILE *f = fopen(db.path, "rb");
    cr_assert_not_null(f);
    char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    char *entries = strstr(buf, "\"entries\":");
    cr_assert_not_null(entries);
    char *brace = strchr(entries, '{');
    size_t pre = (size_t)(brace - buf) + 1;
    size_t total = n + 128;
    text = malloc(total);
    snprintf(text, total, "%.*s\"zzz-future\": {\"format\": 9, \"data\": [1, 2]},%s", (int)pre, buf, buf + pre);
    f = fopen(db.path, "wb");
    fputs(text, f);
    fclose(f);
    free(text);
    cr_assert_eq(duet_tune_db_lookup(&db, "zzz-future", &back), DUET_ERR_NOT_FOUND);
    cr_assert_eq(w.n, 1);
    cr_assert(strstr(w.text, "malformed entry") != NULL, "%s", w.text);
    duet_tune_entry_t c = tt_entry_for(3000);
    cr_assert_eq(duet_tune_db_store(&db, &c), DUET_OK);
    f = fopen(db.path, "rb");
    n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    cr_assert(strstr(buf, "\"zzz-future\"") != NULL && strstr(buf, "\"format\":\t9") != NULL, "%s", buf);
    duet_tune_entry_t *list = NULL;
    size_t m = 0;
    cr_assert_eq(duet_tune_db_list(&db, &list, &m), DUET_OK);
    cr_assert_eq(m, 3); /* a, b, c; the unreadable one is skipped with a warning */
    cr_assert(strcmp(list[0].key, list[1].key) < 0 && strcmp(list[1].key, list[2].key) < 0);
    free(list);
    tt_rmdir(dir);
}

static int count_corrupt(const char *path)
{
    char pat[DUET_TUNE_PATH_LEN + 16];
    glob_t g;
    snprintf(pat, sizeof(pat), "%s.corrupt-*", path);
    int n = glob(pat, 0, NULL, &g) == 0 ? (int)g.gl_pathc : 0;
    globfree(&g);
    return n;
}

/* Every operation on a file that is not a database leaves it as it is and says why. */
static void expect_left_alone(duet_tune_db_t *db, tt_warnings_t *w, const char *why)
{
    t_file_t before, after;
    t_file_get(db->path, &before);
    cr_assert(before.exists);
    duet_tune_entry_t e = tt_entry_for(4096), back, *list = NULL;
    size_t n = 0;
    char lock[DUET_TUNE_PATH_LEN + 8];
    snprintf(lock, sizeof(lock), "%s.lock", db->path);
    unlink(lock); /* a store before made it */
    w->n = 0;
    w->text[0] = '\0';
    /* A lookup warns and misses (the tuner goes on); a listing fails with the reason. */
    cr_assert_eq(duet_tune_db_lookup(db, e.key, &back), DUET_ERR_NOT_FOUND);
    cr_assert_eq(w->n, 1);
    cr_assert(strstr(w->text, why) != NULL && strstr(w->text, "left as it is") != NULL, "%s", w->text);
    cr_assert_eq(duet_tune_db_list(db, &list, &n), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), why) != NULL, "%s", duet_last_error());
    /* Read-only: not even a lock file appears. */
    struct stat sb;
    cr_assert_neq(stat(lock, &sb), 0, "a read made a lock file");
    /* A store refuses to replace it; clear refuses to delete it. */
    cr_assert_eq(duet_tune_db_store(db, &e), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), why) != NULL && strstr(duet_last_error(), "not replacing it") != NULL, "%s",
              duet_last_error());
    cr_assert_eq(duet_tune_db_clear(db), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "not deleting it") != NULL, "%s", duet_last_error());
    t_file_get(db->path, &after);
    cr_assert(t_file_same(&before, &after), "the file was changed");
    cr_assert_eq(count_corrupt(db->path), 0);
}

Test(tune_db, a_file_that_is_not_a_database_is_left_as_it_is, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    tt_warnings_t w = {0};
    duet_tune_db_t db = open_db(&w);
    FILE *f = fopen(db.path, "wb");
    fputs("{\"schema\": \"duet-tuning/1\", \"entr", f); /* a truncated file */
    fclose(f);
    expect_left_alone(&db, &w, "line 1: not valid JSON");
    /* Valid JSON with the wrong schema; a database whose top-level key is given twice. */
    f = fopen(db.path, "wb");
    fputs("[1, 2, 3]\n", f);
    fclose(f);
    expect_left_alone(&db, &w, "not a tuning database");
    f = fopen(db.path, "wb");
    fputs("{\"schema\": \"duet-tuning/1\", \"entries\": {}, \"entries\": {}}\n", f);
    fclose(f);
    expect_left_alone(&db, &w, "duplicate key \"entries\"");
    /* Once the user removes it, the database works again. */
    cr_assert_eq(unlink(db.path), 0);
    duet_tune_entry_t e = tt_entry_for(4096), back;
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_tune_db_lookup(&db, e.key, &back), DUET_OK);
    tt_rmdir(dir);
}

Test(tune_db, an_unwritable_location_fails_the_store_cleanly, T_TIMEOUT)
{
    char dir[64], path[256];
    tt_tmpdir(dir, sizeof(dir));
    /* A regular file where a folder should be: not writable even for root. */
    snprintf(path, sizeof(path), "%s/file", dir);
    FILE *f = fopen(path, "wb");
    fclose(f);
    snprintf(path, sizeof(path), "%s/file/sub/tuning.json", dir);
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(path, &db), DUET_OK);
    duet_tune_entry_t e = tt_entry_for(4096), back;
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_ERR_IO);
    cr_assert(strstr(duet_last_error(), "cannot create the folder") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_tune_db_lookup(&db, e.key, &back), DUET_ERR_IO);
    tt_rmdir(dir);
}

Test(tune_db, many_processes_storing_at_once_lose_nothing, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    enum { NPROC = 8, PER = 4 };
    pid_t pids[NPROC];
    for (int i = 0; i < NPROC; i++) {
        pids[i] = fork();
        cr_assert_geq(pids[i], 0);
        if (pids[i] == 0) {
            duet_tune_db_t db;
            int bad = duet_tune_db_open(NULL, &db) != DUET_OK;
            for (int j = 0; j < PER && !bad; j++) {
                duet_tune_entry_t e = tt_entry_for(64 * (i * PER + j + 1));
                bad = duet_tune_db_store(&db, &e) != DUET_OK;
            }
            _exit(bad);
        }
    }
    for (int i = 0; i < NPROC; i++) {
        int status = 0;
        waitpid(pids[i], &status, 0);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer %d failed", i);
    }
    tt_warnings_t w = {0};
    duet_tune_db_t db = open_db(&w);
    duet_tune_entry_t *list = NULL;
    size_t n = 0;
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK);
    cr_assert_eq(n, NPROC * PER, "%zu of %d entries survived", n, NPROC * PER);
    free(list);
    for (int k = 1; k <= NPROC * PER; k++) {
        duet_tune_entry_t e = tt_entry_for(64 * k), back;
        cr_assert_eq(duet_tune_db_lookup(&db, e.key, &back), DUET_OK, "entry %d lost", k);
        cr_assert_eq(back.measured_us, e.measured_us);
    }
    cr_assert_eq(w.n, 0, "%s", w.text);
    tt_rmdir(dir);
}
