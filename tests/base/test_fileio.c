/*
 * The one writer of every output file (model/fileio.c): what it does with a regular file, a
 * symbolic link, a FIFO, a character device, a folder or a socket; its temporary files (created
 * exclusively, unpredictable names, a planted link never followed, those of dead writers removed).
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "../test_util.h"
#include "base/base.h"

static void put(const char *path, const char *text)
{
    cr_assert_eq(t_spill(path, text), 0, "%s", path);
}

static void expect_text(const char *path, const char *want)
{
    t_file_t f;
    t_file_get(path, &f);
    cr_assert(f.exists, "%s is missing", path);
    cr_assert_eq(f.len, strlen(want), "%s: %zu bytes, want %zu", path, f.len, strlen(want));
    cr_assert(memcmp(f.data, want, f.len) == 0, "%s: '%.*s'", path, (int)f.len, f.data);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static duet_status_t write_text(const char *path, const char *text)
{
    return duet__write_file_atomic(path, text, strlen(text));
}

/* A pid that was alive a moment ago and is not now (a child, reaped). */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0)
        _exit(0);
    waitpid(pid, NULL, 0);
    return pid;
}

Test(fileio, a_regular_file_is_replaced_with_its_mode_and_nothing_else_left, T_TIMEOUT)
{
    char path[128];
    t_tmp_path(path, sizeof(path), "out.json");
    mode_t um = umask(022);
    cr_assert_eq(write_text(path, "one\n"), DUET_OK, "%s", duet_last_error());
    umask(um);
    expect_text(path, "one\n");
    struct stat a, b;
    cr_assert_eq(stat(path, &a), 0);
    cr_assert_eq(a.st_mode & 07777, 0644);
    cr_assert_eq(chmod(path, 0600), 0);
    cr_assert_eq(write_text(path, "two, longer\n"), DUET_OK, "%s", duet_last_error());
    expect_text(path, "two, longer\n");
    cr_assert_eq(stat(path, &b), 0);
    cr_assert_eq(b.st_mode & 07777, 0600, "the replaced file's permissions carry over");
    cr_assert_neq(a.st_ino, b.st_ino, "replaced by a rename, not written in place");
    cr_assert_eq(count_entries(t_tmpdir()), 1, "a temporary was left behind");
    /* A folder that does not exist: an error naming the path, and nothing written. The folder is the
     * caller's input (a mistyped path), so DUET_ERR_NOT_FOUND, which the command line exits 2 on. */
    char bad[160];
    t_tmp_path(bad, sizeof(bad), "missing/x.json");
    cr_assert_eq(write_text(bad, "x"), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(duet_last_error(), bad) != NULL, "%s", duet_last_error());
    cr_assert_eq(count_entries(t_tmpdir()), 1);
}

Test(fileio, a_symbolic_link_is_followed_and_stays_a_link, T_TIMEOUT)
{
    char dir[128], real[160], link1[160], link2[160], dangling[160], target[160];
    t_tmp_path(dir, sizeof(dir), "real");
    cr_assert_eq(mkdir(dir, 0755), 0);
    t_tmp_path(real, sizeof(real), "real/t.json");
    t_tmp_path(link1, sizeof(link1), "l1.json");
    t_tmp_path(link2, sizeof(link2), "l2.json");
    put(real, "old\n");
    /* l2 -> l1 -> real/t.json, both relative: a chain of links is followed to the end. */
    cr_assert_eq(symlink("real/t.json", link1), 0);
    cr_assert_eq(symlink("l1.json", link2), 0);
    cr_assert_eq(write_text(link2, "new\n"), DUET_OK, "%s", duet_last_error());
    expect_text(real, "new\n");
    char buf[64];
    struct stat sb;
    cr_assert_eq(lstat(link1, &sb), 0);
    cr_assert(S_ISLNK(sb.st_mode));
    cr_assert_eq(lstat(link2, &sb), 0);
    cr_assert(S_ISLNK(sb.st_mode));
    ssize_t n = readlink(link2, buf, sizeof(buf) - 1);
    cr_assert_eq(n, 7);
    cr_assert(memcmp(buf, "l1.json", 7) == 0);
    cr_assert_eq(count_entries(dir), 1, "the temporary is made beside the target, and goes");
    /* A dangling link creates the file it names. */
    t_tmp_path(dangling, sizeof(dangling), "dangling.json");
    t_tmp_path(target, sizeof(target), "real/new.json");
    cr_assert_eq(symlink(target, dangling), 0);
    cr_assert_eq(write_text(dangling, "made\n"), DUET_OK, "%s", duet_last_error());
    expect_text(target, "made\n");
    cr_assert_eq(lstat(dangling, &sb), 0);
    cr_assert(S_ISLNK(sb.st_mode));
    /* A loop of links is an error, not a hang. */
    char a[160], b[160];
    t_tmp_path(a, sizeof(a), "loop-a");
    t_tmp_path(b, sizeof(b), "loop-b");
    cr_assert_eq(symlink("loop-b", a), 0);
    cr_assert_eq(symlink("loop-a", b), 0);
    cr_assert_eq(write_text(a, "x"), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "more than 40 symbolic links") != NULL, "%s", duet_last_error());
}

Test(fileio, a_fifo_is_written_through, T_TIMEOUT)
{
    char fifo[128], got[128];
    t_tmp_path(fifo, sizeof(fifo), "pipe");
    t_tmp_path(got, sizeof(got), "got.txt");
    pid_t pid = t_fifo_reader(fifo, got);
    cr_assert_geq(pid, 0);
    cr_assert_eq(write_text(fifo, "through the pipe\n"), DUET_OK, "%s", duet_last_error());
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    expect_text(got, "through the pipe\n");
    struct stat sb;
    cr_assert_eq(lstat(fifo, &sb), 0);
    cr_assert(S_ISFIFO(sb.st_mode), "the FIFO was replaced");
    cr_assert_eq(count_entries(t_tmpdir()), 2, "no temporary made for a FIFO");
}

Test(fileio, a_character_device_is_written_through_and_its_errors_reported, T_TIMEOUT)
{
    char dev[128], want[192];
    struct stat before, after;
    if (!t_char_device(3, dev, sizeof(dev)))
        cr_skip_test("no null device to write to");
    cr_assert_eq(stat(dev, &before), 0);
    cr_assert_eq(write_text(dev, "nothing\n"), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(stat(dev, &after), 0);
    cr_assert(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev && after.st_ino == before.st_ino);
    if (!t_char_device(7, dev, sizeof(dev)))
        cr_skip_test("no full device to write to");
    cr_assert_eq(stat(dev, &before), 0);
    cr_assert_eq(write_text(dev, "x"), DUET_ERR_IO);
    snprintf(want, sizeof(want), "%s: write failed: No space left on device", dev);
    cr_assert_str_eq(duet_last_error(), want);
    cr_assert_eq(stat(dev, &after), 0);
    cr_assert(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev && after.st_ino == before.st_ino,
              "%s is no longer the device", dev);
}

Test(fileio, a_folder_or_a_socket_is_refused, T_TIMEOUT)
{
    char dir[128], sock[100];
    t_tmp_path(dir, sizeof(dir), "folder");
    cr_assert_eq(mkdir(dir, 0755), 0);
    cr_assert_eq(write_text(dir, "x"), DUET_ERR_INVALID_ARG);
    char want[256];
    snprintf(want, sizeof(want),
             "%s: is a folder; duet writes regular files, character devices (such as /dev/null) and FIFOs", dir);
    cr_assert_str_eq(duet_last_error(), want);
    cr_assert_eq(count_entries(dir), 0);
    t_tmp_path(sock, sizeof(sock), "sock");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s", strerror(errno));
    cr_assert_eq(write_text(sock, "x"), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), ": is a socket;") != NULL, "%s", duet_last_error());
    close(fd);
    struct stat sb;
    cr_assert_eq(lstat(sock, &sb), 0);
    cr_assert(S_ISSOCK(sb.st_mode));
}

/* The names of the files created in `dir` while `path` is written, through inotify. */
static int created_names(const char *dir, const char *path, char names[4][256])
{
    int in = inotify_init1(IN_NONBLOCK);
    cr_assert_geq(in, 0);
    cr_assert_geq(inotify_add_watch(in, dir, IN_CREATE), 0);
    cr_assert_eq(write_text(path, "{}\n"), DUET_OK, "%s", duet_last_error());
    char buf[4096] __attribute__((aligned(8)));
    ssize_t len = read(in, buf, sizeof(buf));
    int n = 0;
    for (ssize_t off = 0; len > 0 && off < len;) {
        const struct inotify_event *ev = (const struct inotify_event *)(buf + off);
        if (ev->len > 0 && n < 4)
            snprintf(names[n++], 256, "%s", ev->name);
        off += (ssize_t)sizeof(*ev) + ev->len;
    }
    close(in);
    return n;
}

Test(fileio, temporaries_have_unpredictable_names_of_the_documented_shape, T_TIMEOUT)
{
    char path[128], names[2][4][256], host[40], prefix[128];
    t_tmp_path(path, sizeof(path), "t.json");
    t_host_part(host, sizeof(host));
    snprintf(prefix, sizeof(prefix), ".t.json.duet-tmp-%d-%s-", (int)getpid(), host);
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(created_names(t_tmpdir(), path, names[k]), 1, "one temporary per write");
        const char *nm = names[k][0];
        cr_assert(strncmp(nm, prefix, strlen(prefix)) == 0, "'%s' does not start with '%s'", nm, prefix);
        const char *hex = nm + strlen(prefix);
        cr_assert(strspn(hex, "0123456789abcdef") == 16 && hex[16] == '\0', "'%s'", nm);
    }
    cr_assert_str_neq(names[0][0], names[1][0], "two writes used the same temporary name");
    cr_assert_eq(count_entries(t_tmpdir()), 1);
}

Test(fileio, a_planted_link_at_a_temporary_name_is_not_followed, T_TIMEOUT)
{
    char dir[128], outside[128], victim[160], path[160], host[40], name[320];
    t_tmp_path(dir, sizeof(dir), "out");
    t_tmp_path(outside, sizeof(outside), "elsewhere");
    cr_assert_eq(mkdir(dir, 0755), 0);
    cr_assert_eq(mkdir(outside, 0755), 0);
    snprintf(victim, sizeof(victim), "%s/precious", outside);
    snprintf(path, sizeof(path), "%s/t.json", dir);
    put(victim, "precious\n");
    t_file_t before, after;
    t_file_get(victim, &before);
    t_host_part(host, sizeof(host));
    /* Links at the name the old writer used ("<path>.tmp.<pid>", opened with O_TRUNC: it emptied
     * the victim), and at names of this writer's shape: this process's own, a dead writer's (whose
     * link goes, not what it points at), another host's. */
    const char *shapes[] = {"%s/t.json.tmp.%d", "%s/.t.json.duet-tmp-%d-%s-00000000deadbeef",
                            "%s/.t.json.duet-tmp-%d-otherhost-0123456789abcdef"};
    snprintf(name, sizeof(name), shapes[0], dir, (int)getpid());
    cr_assert_eq(symlink(victim, name), 0);
    snprintf(name, sizeof(name), shapes[1], dir, (int)getpid(), host);
    cr_assert_eq(symlink(victim, name), 0);
    char dead_link[320];
    snprintf(dead_link, sizeof(dead_link), shapes[1], dir, (int)dead_pid(), host);
    cr_assert_eq(symlink(victim, dead_link), 0);
    snprintf(name, sizeof(name), shapes[2], dir, (int)getpid());
    cr_assert_eq(symlink(victim, name), 0);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(write_text(path, "the output\n"), DUET_OK, "%s", duet_last_error());
    expect_text(path, "the output\n");
    t_file_get(victim, &after);
    cr_assert(t_file_same(&before, &after), "the file outside the target's folder was touched");
    cr_assert_eq(count_entries(outside), 1);
    struct stat sb;
    cr_assert_neq(lstat(dead_link, &sb), 0, "a dead writer's temporary (here a link) is removed");
    cr_assert_eq(count_entries(dir), 4, "the target and the three links that are not a dead writer's");
}

Test(fileio, temporaries_of_dead_writers_are_removed_by_the_next_write, T_TIMEOUT)
{
    char path[128], host[40], name[6][320];
    t_tmp_path(path, sizeof(path), "t.json");
    t_host_part(host, sizeof(host));
    const char *dir = t_tmpdir();
    pid_t dead = dead_pid();
    snprintf(name[0], sizeof(name[0]), "%s/.t.json.duet-tmp-%d-%s-0123456789abcdef", dir, (int)dead, host);
    snprintf(name[1], sizeof(name[1]), "%s/.t.json.duet-tmp-%d-%s-0123456789abcdef", dir, (int)getppid(), host);
    snprintf(name[2], sizeof(name[2]), "%s/.t.json.duet-tmp-%d-%s-0123456789abcdef", dir, (int)getpid(), host);
    snprintf(name[3], sizeof(name[3]), "%s/.t.json.duet-tmp-%d-%sx-0123456789abcdef", dir, (int)dead, host);
    snprintf(name[4], sizeof(name[4]), "%s/.t.json.duet-tmp-%d-%s-0123456789abcde", dir, (int)dead, host);
    snprintf(name[5], sizeof(name[5]), "%s/.u.json.duet-tmp-%d-%s-0123456789abcdef", dir, (int)dead, host);
    for (int i = 0; i < 6; i++)
        put(name[i], "partial");
    cr_assert_eq(write_text(path, "done\n"), DUET_OK, "%s", duet_last_error());
    struct stat sb;
    cr_assert_neq(stat(name[0], &sb), 0, "the dead writer's temporary is still there");
    const char *why[] = {
        "", "a live writer's", "this process's", "another host's", "not of the shape", "another target's"};
    for (int i = 1; i < 6; i++)
        cr_assert_eq(stat(name[i], &sb), 0, "%s temporary was removed", why[i]);
    expect_text(path, "done\n");
}

Test(fileio, a_writer_killed_mid_write_leaves_a_temporary_that_the_next_write_removes, T_TIMEOUT)
{
    char path[128], host[40], prefix[128];
    t_tmp_path(path, sizeof(path), "t.json");
    t_host_part(host, sizeof(host));
    put(path, "the old content\n");
    size_t big = 1 << 16;
    char *data = malloc(big);
    memset(data, 'x', big);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        /* A file size limit below what it writes: the kernel kills it with SIGXFSZ inside write(). */
        struct rlimit fs = {4096, 4096}, core = {0, 0};
        setrlimit(RLIMIT_CORE, &core);
        setrlimit(RLIMIT_FSIZE, &fs);
        signal(SIGXFSZ, SIG_DFL);
        duet__write_file_atomic(path, data, big);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ, "status 0x%x", status);
    expect_text(path, "the old content\n");
    snprintf(prefix, sizeof(prefix), ".t.json.duet-tmp-%d-%s-", (int)pid, host);
    DIR *d = opendir(t_tmpdir());
    struct dirent *e;
    int left = 0;
    while ((e = readdir(d)) != NULL)
        left += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    cr_assert_eq(left, 1, "the killed writer's temporary");
    cr_assert_eq(duet__write_file_atomic(path, data, big), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(count_entries(t_tmpdir()), 1, "the temporary is gone");
    struct stat sb;
    cr_assert_eq(stat(path, &sb), 0);
    cr_assert_eq((size_t)sb.st_size, big);
    free(data);
}

Test(fileio, a_descriptor_path_is_written_through_that_descriptor, T_TIMEOUT)
{
    char path[128], fdpath[64];
    t_tmp_path(path, sizeof(path), "fd.txt");
    put(path, "before|");
    int fd = open(path, O_WRONLY | O_APPEND);
    cr_assert_geq(fd, 0);
    snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fd);
    struct stat a, b;
    cr_assert_eq(stat(path, &a), 0);
    cr_assert_eq(write_text(fdpath, "after\n"), DUET_OK, "%s", duet_last_error());
    close(fd);
    /* Appended in place: the same inode, nothing renamed over it. */
    expect_text(path, "before|after\n");
    cr_assert_eq(stat(path, &b), 0);
    cr_assert_eq(a.st_ino, b.st_ino);
    cr_assert_eq(count_entries(t_tmpdir()), 1);
}
