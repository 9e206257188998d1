/*
 * The careful writer's temporaries (base/fileio.c), two rules the first tests leave open: a
 * failed write removes its own temporary, and a temporary of another host is left alone even when
 * that host's name is as long as this one's (only the name tells hosts apart).
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_util.h"
#include "base/base.h"

/* Names in dir that contain `part`. */
static int count_with(const char *dir, const char *part)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strstr(e->d_name, part) != NULL;
    closedir(d);
    return n;
}

Test(fileio_cleanup, a_failed_write_removes_its_temporary, .timeout = 20)
{
    char dir[128], path[192];
    t_tmp_path(dir, sizeof(dir), "failed");
    cr_assert_eq(mkdir(dir, 0755), 0);
    snprintf(path, sizeof(path), "%s/t.json", dir);
    cr_assert_eq(t_spill(path, "the old content\n"), 0);
    size_t big = 1 << 16;
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* A file size limit of 4 KiB below the 64 KiB it writes, SIGXFSZ ignored: write() fails
         * with EFBIG and the writer returns an error instead of being killed. */
        char *data = malloc(big);
        if (data == NULL)
            _exit(3);
        memset(data, 'x', big);
        struct rlimit fs = {4096, 4096};
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &fs);
        _exit(duet__write_file_atomic(path, data, big) == DUET_ERR_IO ? 0 : 2);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the write did not fail with DUET_ERR_IO: 0x%x", status);
    char *text = t_slurp(path);
    cr_assert_str_eq(text, "the old content\n", "the target changed");
    free(text);
    cr_assert_eq(count_with(dir, ".duet-tmp-"), 0, "the failed write left its temporary");
}

Test(fileio_cleanup, another_host_of_the_same_name_length_keeps_its_temporary, .timeout = 20)
{
    char dir[128], path[192], host[40], other[40], mine[320], theirs[320];
    t_tmp_path(dir, sizeof(dir), "hosts");
    cr_assert_eq(mkdir(dir, 0755), 0);
    snprintf(path, sizeof(path), "%s/t.json", dir);
    t_host_part(host, sizeof(host));
    /* Another host's name of the same length: this one's with its first character changed. */
    snprintf(other, sizeof(other), "%s", host);
    other[0] = other[0] == 'a' ? 'b' : 'a';
    pid_t dead = fork();
    cr_assert_geq(dead, 0);
    if (dead == 0)
        _exit(0);
    waitpid(dead, NULL, 0);
    /* The same dead pid on both hosts: here it is dead, there it means nothing. */
    snprintf(mine, sizeof(mine), "%s/.t.json.duet-tmp-%d-%s-0123456789abcdef", dir, (int)dead, host);
    snprintf(theirs, sizeof(theirs), "%s/.t.json.duet-tmp-%d-%s-0123456789abcdef", dir, (int)dead, other);
    cr_assert_eq(t_spill(mine, "partial"), 0);
    cr_assert_eq(t_spill(theirs, "partial"), 0);
    cr_assert_eq(duet__write_file_atomic(path, "done\n", 5), DUET_OK, "%s", duet_last_error());
    struct stat sb;
    cr_assert_neq(stat(mine, &sb), 0, "this host's dead writer's temporary is still there");
    cr_assert_eq(stat(theirs, &sb), 0, "host %s's temporary was removed by host %s", other, host);
}
