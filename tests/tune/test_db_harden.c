/*
 * The tuning database against damage: one bad entry (a number beyond the range of a double, a key
 * given twice, a time out of range) costs that entry only, never the file; nothing non-finite is
 * ever written; a symlinked database stays a link; clear deletes only a database; read-only
 * commands change nothing on disk.
 */
#include <sys/wait.h>

#include "../cli_run.h"
#include "tune_util.h"

/* A fresh test folder with the database there, warning into w (tune_util.h). */
static duet_tune_db_t begin(char *dir, tt_warnings_t *w)
{
    return tt_db_begin(dir, w);
}

static void reset(tt_warnings_t *w)
{
    w->n = 0;
    w->text[0] = '\0';
}

static char *slurp(const char *path)
{
    char *text = t_slurp(path);
    cr_assert_not_null(text, "%s", path);
    return text;
}

static void spill(const char *path, const char *text)
{
    cr_assert_eq(t_spill(path, text), 0, "%s", path);
}

/* Replace the first `from` after the entry of `key` with `to`, in the file itself. */
static void edit_entry(const char *path, const char *key, const char *from, const char *to)
{
    char *text = slurp(path), name[DUET_TUNE_KEY_LEN + 8];
    snprintf(name, sizeof(name), "\"%s\":", key);
    char *at = strstr(text, name);
    cr_assert_not_null(at, "no entry %s", key);
    char *p = strstr(at, from);
    cr_assert_not_null(p, "no '%s' in the entry of %s", from, key);
    char *out = t_splice(text, (size_t)(p - text), strlen(from), to);
    spill(path, out);
    free(out);
    free(text);
}

/* The members of the file's "entries", parsed strictly (a key twice is an error): their count. */
static int count_entries_strict(const char *path)
{
    char *text = slurp(path);
    cJSON *root = cJSON_Parse(text);
    cr_assert_not_null(root, "not JSON: %s", text);
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries"), *a, *b;
    int n = 0;
    cJSON_ArrayForEach(a, entries)
    {
        n++;
        for (b = a->next; b != NULL; b = b->next)
            cr_assert_str_neq(a->string, b->string, "a key twice in the written file");
    }
    cr_assert(strstr(text, "inf") == NULL && strstr(text, "nan") == NULL, "%s", text);
    cJSON_Delete(root);
    free(text);
    return n;
}

static void expect_hit(duet_tune_db_t *db, int64_t m)
{
    duet_tune_entry_t e = tt_entry_for(m), back;
    cr_assert_eq(duet_tune_db_lookup(db, e.key, &back), DUET_OK, "entry %lld: %s", (long long)m, duet_last_error());
    cr_assert_eq(back.measured_us, e.measured_us);
    cr_assert_eq(back.cands[0].max_us, e.cands[0].max_us);
}

Test(tune_db_harden, a_number_beyond_the_range_of_a_double_costs_its_entry_only, T_TIMEOUT)
{
    char dir[64], want[512];
    tt_warnings_t w;
    duet_tune_db_t db = begin(dir, &w);
    for (int m = 1000; m <= 3000; m += 1000) {
        duet_tune_entry_t e = tt_entry_for(m);
        cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK, "%s", duet_last_error());
    }
    duet_tune_entry_t e2 = tt_entry_for(2000), e3 = tt_entry_for(3000), back;
    /* Valid JSON: 1e999 is a number; it reads as infinity. One at the top of an entry, one in a candidate. */
    edit_entry(db.path, e2.key, "\"pred_us\":\t450", "\"pred_us\":\t1e999");
    edit_entry(db.path, e3.key, "\"min_us\":\t", "\"min_us\":\t-1e999, \"was\":\t");
    t_file_t before, after;
    t_file_get(db.path, &before);

    /* Read-only: the listing skips the two, says which and why, and changes nothing. */
    duet_tune_entry_t *list = NULL;
    size_t n = 0;
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(n, 1, "%zu: %s", n, w.text);
    cr_assert_eq(list[0].wl.m, 1000);
    free(list);
    cr_assert_eq(w.n, 2, "%s", w.text);
    snprintf(want, sizeof(want), "entries[\"%s\"].pred_us: a number beyond the range of a double", e2.key);
    cr_assert(strstr(w.text, want) != NULL, "%s", w.text);
    snprintf(want, sizeof(want), "entries[\"%s\"].min_us: a number beyond the range of a double", e3.key);
    cr_assert(strstr(w.text, want) != NULL, "%s", w.text);
    reset(&w);
    cr_assert_eq(duet_tune_db_lookup(&db, e2.key, &back), DUET_ERR_NOT_FOUND);
    cr_assert_eq(w.n, 1);
    cr_assert(strstr(w.text, "ignoring a malformed entry") != NULL, "%s", w.text);
    expect_hit(&db, 1000);
    t_file_get(db.path, &after);
    cr_assert(t_file_same(&before, &after), "a read changed the file");

    /* A store drops the two (with a warning each), keeps the good one, and writes JSON again. */
    reset(&w);
    duet_tune_entry_t e4 = tt_entry_for(4000);
    cr_assert_eq(duet_tune_db_store(&db, &e4), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(w.n, 2, "%s", w.text);
    cr_assert(strstr(w.text, "dropping the entry, keeping the others") != NULL, "%s", w.text);
    cr_assert_eq(count_entries_strict(db.path), 2);
    expect_hit(&db, 1000);
    expect_hit(&db, 4000);
    reset(&w);
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK);
    cr_assert_eq(n, 2);
    free(list);
    cr_assert_eq(w.n, 0, "%s", w.text);
    tt_rmdir(dir);
}

Test(tune_db_harden, a_store_never_writes_a_number_that_is_not_finite, T_TIMEOUT)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = begin(dir, &w);
    struct stat sb;
    duet_tune_entry_t e = tt_entry_for(1000), back;
    e.measured_us = INFINITY;
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "would not read back") != NULL &&
                  strstr(duet_last_error(), "measured_us") != NULL,
              "%s", duet_last_error());
    cr_assert_neq(stat(db.path, &sb), 0, "nothing written");
    e = tt_entry_for(1000);
    e.cands[0].us = NAN;
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "candidates[0].us") != NULL, "%s", duet_last_error());
    cr_assert_neq(stat(db.path, &sb), 0, "nothing written");
    /* A prediction the model could not make is null (the documented form), and reads back as NaN. */
    e = tt_entry_for(1000);
    e.pred_us = INFINITY;
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK, "%s", duet_last_error());
    char *text = slurp(db.path);
    cr_assert(strstr(text, "\"pred_us\":\tnull") != NULL, "%s", text);
    free(text);
    cr_assert_eq(count_entries_strict(db.path), 1);
    cr_assert_eq(duet_tune_db_lookup(&db, e.key, &back), DUET_OK);
    cr_assert(isnan(back.pred_us));
    tt_rmdir(dir);
}

Test(tune_db_harden, a_time_out_of_range_is_rejected_on_load_and_kept_verbatim, T_TIMEOUT)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = begin(dir, &w);
    duet_tune_entry_t e1 = tt_entry_for(1000), e2 = tt_entry_for(2000), back;
    cr_assert_eq(duet_tune_db_store(&db, &e1), DUET_OK);
    cr_assert_eq(duet_tune_db_store(&db, &e2), DUET_OK);
    /* 1e300 us is finite but no measurement: the entry is refused; like an entry of a future
     * format it is not bad enough to drop, so a store keeps its text. */
    edit_entry(db.path, e2.key, "\"measured_us\":\t520", "\"measured_us\":\t1e300");
    cr_assert_eq(duet_tune_db_lookup(&db, e2.key, &back), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(w.text, "measured_us: missing or not a time in (0, 1e+12] us") != NULL, "%s", w.text);
    duet_tune_entry_t e3 = tt_entry_for(3000);
    cr_assert_eq(duet_tune_db_store(&db, &e3), DUET_OK);
    char *text = slurp(db.path);
    cr_assert(strstr(text, "\"measured_us\":\t1e+300") != NULL, "%s", text);
    free(text);
    cr_assert_eq(count_entries_strict(db.path), 3);
    tt_rmdir(dir);
}

Test(tune_db_harden, a_key_given_twice_costs_that_entry_only, T_TIMEOUT)
{
    char dir[64], want[512];
    tt_warnings_t w;
    duet_tune_db_t db = begin(dir, &w);
    duet_tune_entry_t e1 = tt_entry_for(1000), e2 = tt_entry_for(2000), back;
    cr_assert_eq(duet_tune_db_store(&db, &e1), DUET_OK);
    cr_assert_eq(duet_tune_db_store(&db, &e2), DUET_OK);
    /* The entry of e2 twice, the second copy with another time: lookup would have returned the first
     * while the listing showed both. */
    char *text = slurp(db.path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    cJSON *copy = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(entries, e2.key), 1);
    cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(copy, "measured_us"), 900);
    cJSON_AddItemToObject(entries, e2.key, copy);
    text = cJSON_Print(root);
    spill(db.path, text);
    cJSON_free(text);
    cJSON_Delete(root);

    duet_tune_entry_t *list = NULL;
    size_t n = 0;
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK);
    cr_assert_eq(n, 1, "neither copy is listed");
    cr_assert_eq(list[0].wl.m, 1000);
    free(list);
    snprintf(want, sizeof(want), "entries: duplicate key \"%s\"", e2.key);
    cr_assert(strstr(w.text, want) != NULL, "%s", w.text);
    cr_assert_eq(w.n, 2, "one warning per copy: %s", w.text);
    reset(&w);
    cr_assert_eq(duet_tune_db_lookup(&db, e2.key, &back), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(w.text, want) != NULL, "%s", w.text);
    expect_hit(&db, 1000);
    /* Storing the key again writes it once, with the stored value. */
    cr_assert_eq(duet_tune_db_store(&db, &e2), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(count_entries_strict(db.path), 2);
    expect_hit(&db, 2000);

    /* A key twice inside an entry: that entry is refused, naming the key. */
    edit_entry(db.path, e1.key, "\"arch\":", "\"n_repeat\":\t3,\n\t\t\t\"arch\":");
    reset(&w);
    cr_assert_eq(duet_tune_db_lookup(&db, e1.key, &back), DUET_ERR_NOT_FOUND);
    snprintf(want, sizeof(want), "entries[\"%s\"]: duplicate key \"n_repeat\"", e1.key);
    cr_assert(strstr(w.text, want) != NULL, "%s", w.text);
    duet_tune_entry_t e3 = tt_entry_for(3000);
    cr_assert_eq(duet_tune_db_store(&db, &e3), DUET_OK);
    cr_assert_eq(count_entries_strict(db.path), 2, "e2 and e3; e1 dropped");
    expect_hit(&db, 2000);
    expect_hit(&db, 3000);
    tt_rmdir(dir);
}

Test(tune_db_harden, a_symlinked_database_stays_a_link, T_TIMEOUT)
{
    char dir[64], real_dir[128], link[128], target[128];
    tt_warnings_t w;
    duet_tune_db_t db = begin(dir, &w), direct;
    snprintf(real_dir, sizeof(real_dir), "%s/real", dir);
    snprintf(link, sizeof(link), "%s/tuning.json", dir);
    snprintf(target, sizeof(target), "%s/real/db.json", dir);
    cr_assert_eq(mkdir(real_dir, 0755), 0);
    cr_assert_eq(symlink("real/db.json", link), 0); /* DUET_CACHE is the link; its target does not exist yet */
    cr_assert_str_eq(db.path, link);
    cr_assert_eq(duet_tune_db_open(target, &direct), DUET_OK);
    struct stat sb;
    for (int m = 1000; m <= 2000; m += 1000) {
        duet_tune_entry_t e = tt_entry_for(m);
        cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(lstat(link, &sb), 0);
        cr_assert(S_ISLNK(sb.st_mode), "the store replaced the link by a file");
    }
    char buf[64];
    ssize_t n = readlink(link, buf, sizeof(buf) - 1);
    cr_assert(n == 12 && memcmp(buf, "real/db.json", 12) == 0);
    expect_hit(&direct, 1000);
    expect_hit(&direct, 2000);
    cr_assert_eq(count_entries_strict(target), 2);
    /* Clear deletes the database the link names, and the link stays; a store makes it again. */
    cr_assert_eq(duet_tune_db_clear(&db), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(lstat(link, &sb), 0);
    cr_assert(S_ISLNK(sb.st_mode));
    cr_assert_neq(stat(target, &sb), 0);
    duet_tune_entry_t e3 = tt_entry_for(3000);
    cr_assert_eq(duet_tune_db_store(&db, &e3), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(lstat(link, &sb), 0);
    cr_assert(S_ISLNK(sb.st_mode));
    expect_hit(&direct, 3000);
    cr_assert_eq(w.n, 0, "%s", w.text);
    tt_rmdir(dir);
}

Test(tune_db_harden, clear_deletes_only_a_database, T_TIMEOUT)
{
    struct stat sb;
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = begin(dir, &w);
    /* A folder and a FIFO are no databases: refused, left. */
    cr_assert_eq(mkdir(db.path, 0755), 0);
    cr_assert_eq(duet_tune_db_clear(&db), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "not a regular file") != NULL, "%s", duet_last_error());
    cr_assert_eq(stat(db.path, &sb), 0);
    cr_assert(S_ISDIR(sb.st_mode));
    cr_assert_eq(rmdir(db.path), 0);
    cr_assert_eq(mkfifo(db.path, 0644), 0);
    cr_assert_eq(duet_tune_db_clear(&db), DUET_ERR_INVALID_ARG);
    duet_tune_entry_t e = tt_entry_for(1000), back;
    cr_assert_eq(duet_tune_db_lookup(&db, e.key, &back), DUET_ERR_NOT_FOUND, "a FIFO is not read (it would block)");
    cr_assert_eq(lstat(db.path, &sb), 0);
    cr_assert(S_ISFIFO(sb.st_mode));
    cr_assert_eq(unlink(db.path), 0);
    /* An empty file holds nothing to lose. */
    spill(db.path, "");
    cr_assert_eq(duet_tune_db_clear(&db), DUET_OK, "%s", duet_last_error());
    cr_assert_neq(stat(db.path, &sb), 0);
    /* A database is deleted even when entries in it are bad. */
    cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK);
    edit_entry(db.path, e.key, "\"pred_us\":\t450", "\"pred_us\":\t1e999");
    cr_assert_eq(duet_tune_db_clear(&db), DUET_OK, "%s", duet_last_error());
    cr_assert_neq(stat(db.path, &sb), 0);
    tt_rmdir(dir);
}

/* The names in a folder, sorted, joined by spaces. */
static void names_in(const char *dir, char *out, size_t n)
{
    struct dirent **list = NULL;
    int k = scandir(dir, &list, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < k; i++) {
        if (strcmp(list[i]->d_name, ".") != 0 && strcmp(list[i]->d_name, "..") != 0)
            snprintf(out + strlen(out), n - strlen(out), "%s%s", out[0] ? " " : "", list[i]->d_name);
        free(list[i]);
    }
    free(list);
}

Test(tune_db_harden, cli_list_and_clear_leave_a_file_that_is_not_a_database_alone, T_TIMEOUT)
{
    char dir[64], path[128], names[512], want[256];
    tt_warnings_t w;
    duet_tune_db_t db = begin(dir, &w);
    snprintf(path, sizeof(path), "%s/notes.txt", dir);
    spill(path, "my notes, not a database\n");
    t_file_t before, after;
    t_file_get(path, &before);
    t_cli_t *t = malloc(sizeof(*t));
    t_cli_run(t, NULL, "tune", "--list", "--db", path, NULL);
    snprintf(want, sizeof(want), "duet: tune: %s: line 1: not valid JSON\n", path);
    cr_assert_eq(t->code, 2, "%s", t->err);
    cr_assert_str_eq(t->err, want);
    t_cli_run(t, NULL, "tune", "--list", "--json", "--db", path, NULL);
    cr_assert_eq(t->code, 2, "%s", t->err);
    t_cli_run(t, NULL, "tune", "--clear", "--db", path, NULL);
    snprintf(want, sizeof(want), "duet: tune: %s: line 1: not valid JSON; not deleting it\n", path);
    cr_assert_eq(t->code, 2, "%s", t->err);
    cr_assert_str_eq(t->err, want);
    cr_assert_str_eq(t->out, "");
    t_file_get(path, &after);
    cr_assert(t_file_same(&before, &after), "bytes or inode changed");
    names_in(dir, names, sizeof(names));
    cr_assert_str_eq(names, "notes.txt", "nothing moved aside, no lock file from a read");

    /* A real database with one bad entry: --list shows the good one, warns about the other, writes nothing. */
    char db_path[128];
    snprintf(db_path, sizeof(db_path), "%s/tuning.json", dir);
    duet_tune_entry_t e1 = tt_entry_for(1000), e2 = tt_entry_for(2000);
    cr_assert_eq(duet_tune_db_store(&db, &e1), DUET_OK);
    cr_assert_eq(duet_tune_db_store(&db, &e2), DUET_OK);
    edit_entry(db_path, e2.key, "\"pred_us\":\t450", "\"pred_us\":\t1e999");
    t_file_get(db_path, &before);
    t_cli_run(t, NULL, "tune", "--list", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    snprintf(want, sizeof(want), "%s: 1 entry\n", db_path);
    cr_assert(strncmp(t->out, want, strlen(want)) == 0, "%s", t->out);
    cr_assert(strncmp(t->err, "duet: warning: ", 15) == 0 && strstr(t->err, "beyond the range of a double") != NULL &&
                  strchr(t->err, '\n') == t->err + strlen(t->err) - 1,
              "one warning line: %s", t->err);
    t_file_get(db_path, &after);
    cr_assert(t_file_same(&before, &after));
    /* Clear deletes a database, bad entry and all. */
    t_cli_run(t, NULL, "tune", "--clear", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    snprintf(want, sizeof(want), "cleared %s\n", db_path);
    cr_assert_str_eq(t->out, want);
    struct stat sb;
    cr_assert_neq(stat(db_path, &sb), 0);
    free(t);
    tt_rmdir(dir);
}
