/*
 * Where the database lives and how a writer gets its lock: the home folder when no variable names
 * one, paths too long, a relative path, a file where a folder should be, a lock held by someone
 * else (DUET_ERR_BUSY after the timeout, never a hang) and a lock file that cannot be opened.
 */
#include <pwd.h>
#include <sys/file.h>

#include "tune_util.h"

Test(db_lock_paths, without_variables_the_database_goes_under_the_passwd_home, T_TIMEOUT)
{
    unsetenv("DUET_CACHE");
    unsetenv("XDG_CACHE_HOME");
    struct passwd *pw = getpwuid(getuid());
    cr_assert_not_null(pw);
    char want[1024];
    snprintf(want, sizeof(want), "%s/.cache/duet/tuning.json", pw->pw_dir);
    duet_tune_db_t db;
    /* HOME empty and HOME unset alike: the passwd entry's home. */
    setenv("HOME", "", 1);
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(db.path, want);
    unsetenv("HOME");
    cr_assert_eq(duet_tune_db_open("", &db), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(db.path, want, "an empty path is no path");
    cr_assert_eq(db.lock_timeout_ms, 60000);
}

Test(db_lock_paths, a_path_without_room_for_the_lock_name_is_refused, T_TIMEOUT)
{
    /* The handle holds 1024 characters and keeps 32 for "<path>.lock" and its temporaries: 992 is too
     * long, 991 fits. */
    char path[1024];
    memset(path, 'a', sizeof(path));
    path[0] = '/';
    path[992] = '\0';
    duet_tune_db_t db;
    memset(&db, 0x5a, sizeof(db));
    cr_assert_eq(duet_tune_db_open(path, &db), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "tuning database: path longer than 992 characters");
    cr_assert_eq(db.lock_timeout_ms, 0x5a5a5a5a, "the handle is written only on success");
    setenv("DUET_CACHE", path, 1);
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_ERR_INVALID_ARG);
    path[991] = '\0';
    cr_assert_eq(duet_tune_db_open(path, &db), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(strlen(db.path), 991);
    unsetenv("DUET_CACHE");
}

Test(db_lock_paths, a_relative_path_is_in_the_current_folder, T_TIMEOUT)
{
    char dir[64], path[128];
    tt_tmpdir(dir, sizeof(dir));
    cr_assert_eq(chdir(dir), 0);
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open("tuning.json", &db), DUET_OK);
    duet_tune_entry_t a = tt_entry_for(1000), e;
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_tune_db_lookup(&db, a.key, &e), DUET_OK, "%s", duet_last_error());
    snprintf(path, sizeof(path), "%s/tuning.json", dir);
    cr_assert_eq(access(path, R_OK), 0);
    cr_assert_eq(chdir("/"), 0);
    tt_rmdir(dir);
}

Test(db_lock_paths, a_file_where_the_folder_should_be, T_TIMEOUT)
{
    char dir[64], file[128], path[192];
    tt_tmpdir(dir, sizeof(dir));
    snprintf(file, sizeof(file), "%s/file", dir);
    cr_assert_eq(t_spill(file, "not a folder\n"), 0);
    snprintf(path, sizeof(path), "%s/tuning.json", file);
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(path, &db), DUET_OK);
    duet_tune_entry_t a = tt_entry_for(1000);
    /* mkdir of an existing file says EEXIST, which is not an error for a folder: the check after it
     * is what refuses. */
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_ERR_IO);
    char want[400];
    snprintf(want, sizeof(want), "%s: %s is not a folder", path, file);
    cr_assert_str_eq(duet_last_error(), want);
    /* Clear cannot look at it either: "Not a directory" is not "nothing there". */
    cr_assert_eq(duet_tune_db_clear(&db), DUET_ERR_IO);
    cr_assert(strstr(duet_last_error(), strerror(ENOTDIR)) != NULL, "%s", duet_last_error());
    char *text = t_slurp(file);
    cr_assert_str_eq(text, "not a folder\n");
    free(text);
    tt_rmdir(dir);
}

/* Hold the database's lock as another writer would: flock on "<path>.lock" through its own open file. */
static int hold_lock(const char *db_path)
{
    char lock[1100];
    snprintf(lock, sizeof(lock), "%s.lock", db_path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(flock(fd, LOCK_EX | LOCK_NB), 0);
    return fd;
}

Test(db_lock_paths, a_held_lock_is_busy_after_the_timeout, T_TIMEOUT)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    duet_tune_entry_t a = tt_entry_for(1000), b = tt_entry_for(2000), e;
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    t_file_t before, after;
    t_file_get(db.path, &before);
    int fd = hold_lock(db.path);
    /* The wait doubles from 0.5 ms to 16 ms: 0.5 + 1 + 2 + 4 + 8 + 16 = 31.5 ms waited is the first
     * total at or past a 30 ms limit. */
    db.lock_timeout_ms = 30;
    cr_assert_eq(duet_tune_db_store(&db, &b), DUET_ERR_BUSY);
    char want[1200];
    snprintf(want, sizeof(want), "%s.lock: still locked by another process after 31 ms", db.path);
    cr_assert_str_eq(duet_last_error(), want);
    cr_assert_eq(duet_tune_db_clear(&db), DUET_ERR_BUSY);
    t_file_get(db.path, &after);
    cr_assert(t_file_same(&before, &after), "neither the store nor the clear touched the file");
    /* Reads take no lock. */
    cr_assert_eq(duet_tune_db_lookup(&db, a.key, &e), DUET_OK, "%s", duet_last_error());
    /* Released, the same store goes through. */
    flock(fd, LOCK_UN);
    close(fd);
    cr_assert_eq(duet_tune_db_store(&db, &b), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_tune_db_lookup(&db, b.key, &e), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(w.n, 0, "%s", w.text);
    tt_rmdir(dir);
}

Test(db_lock_paths, a_lock_file_that_cannot_be_opened_fails_the_store, T_TIMEOUT)
{
    char dir[64], lock[1100];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    snprintf(lock, sizeof(lock), "%s.lock", db.path);
    cr_assert_eq(mkdir(lock, 0755), 0);
    duet_tune_entry_t a = tt_entry_for(1000);
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_ERR_IO);
    char want[1200];
    snprintf(want, sizeof(want), "%s: cannot open the lock file: %s", lock, strerror(EISDIR));
    cr_assert_str_eq(duet_last_error(), want);
    cr_assert_eq(access(db.path, F_OK), -1, "nothing written");
    tt_rmdir(dir);
}

Test(db_lock_paths, an_entry_without_a_key_is_refused, T_TIMEOUT)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    duet_tune_entry_t a = tt_entry_for(1000);
    a.key[0] = '\0';
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "tuning database: an entry needs a key");
    cr_assert_eq(access(db.path, F_OK), -1, "nothing written");
    tt_rmdir(dir);
}
