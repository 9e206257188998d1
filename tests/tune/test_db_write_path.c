/*
 * The database's write path goes through the careful writer (a temporary renamed over the file):
 * a reader that opened the database before a store goes on reading the whole old file, never a
 * file truncated or half rewritten under it.
 */
#include <fcntl.h>
#include <unistd.h>

#include "tune_util.h"

/* All of what fd reads from offset 0 (at most n - 1 bytes), NUL-terminated. */
static size_t read_all(int fd, char *buf, size_t n)
{
    size_t got = 0;
    ssize_t r;
    while (got + 1 < n && (r = pread(fd, buf + got, n - 1 - got, (off_t)got)) > 0)
        got += (size_t)r;
    buf[got] = '\0';
    return got;
}

Test(db_write_path, a_reader_keeps_the_old_file_across_a_store, .timeout = 20)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    duet_tune_entry_t e1 = tt_entry_for(1000), e2 = tt_entry_for(2000);
    cr_assert_eq(duet_tune_db_store(&db, &e1), DUET_OK, "%s", duet_last_error());
    char *before = t_slurp(db.path);
    cr_assert_not_null(before);
    struct stat st0, st1;
    cr_assert_eq(stat(db.path, &st0), 0);
    int fd = open(db.path, O_RDONLY);
    cr_assert_geq(fd, 0);
    /* Another process's store while the reader holds the file open. */
    cr_assert_eq(duet_tune_db_store(&db, &e2), DUET_OK, "%s", duet_last_error());
    static char seen[1 << 16];
    size_t n = read_all(fd, seen, sizeof(seen));
    close(fd);
    cr_assert_eq(n, strlen(before), "the reader saw %zu bytes of the old file's %zu", n, strlen(before));
    cr_assert_str_eq(seen, before, "the reader's file changed under it");
    /* The path names a new file that holds both entries. */
    cr_assert_eq(stat(db.path, &st1), 0);
    cr_assert(st1.st_ino != st0.st_ino, "the database was rewritten in place");
    char *after = t_slurp(db.path);
    cr_assert(strstr(after, e1.key) != NULL && strstr(after, e2.key) != NULL);
    free(after);
    free(before);
    tt_rmdir(dir);
}
