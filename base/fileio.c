/*
 * Whole-file reads, and the one writer of every file duet writes (profiles, corpora, candidate
 * sets, traces, SVG pictures, reports, the tuning database): duet__write_file_atomic(). What it
 * does depends on what the path names when the write starts:
 *
 * - Nothing, or a regular file: replaced atomically. The bytes go to a new temporary file in the
 *   target's own folder, created exclusively (O_CREAT | O_EXCL: a file or symbolic link planted at
 *   that name is never opened or followed) under a name with 64 random bits, then fsync, rename
 *   over the target and fsync of the folder. A replaced file keeps its permission bits; a new one
 *   is created 0644 less the umask. Readers see the old file or the new one, never a mix; on any
 *   failure the target is untouched and the temporary file removed.
 * - A symbolic link: followed (at most 40 links), and the file it ends at is replaced as above, so
 *   the link stays a link (a symlinked tuning database stays symlinked). A dangling link creates the
 *   file it names.
 * - A character device or a FIFO (/dev/null, a terminal, a named pipe): written through in place,
 *   by design, as a shell redirection does; an error writing it (ENOSPC from /dev/full) is
 *   reported. A FIFO blocks until a reader opens it, as `echo > fifo` does. A path that names an
 *   open descriptor (/dev/stdout, /dev/fd/N, /proc/self/fd/N: a link in /proc) is written through
 *   too, whatever it leads to; when it is this process's standard output or error, through that
 *   stream, so that `-o /dev/stdout > file` puts the bytes in the file in order with the rest of
 *   the output (a regular file reached through another descriptor is appended to).
 * - Anything else (a folder, a socket, a block device): refused with DUET_ERR_INVALID_ARG.
 *
 * The rule for temporary files. A temporary is named ".<name>.duet-tmp-<pid>-<host>-<16 hex>"
 * beside the target <name> (the name cut to 184 bytes so that the whole fits NAME_MAX; <host> is
 * this host's name reduced to letters, digits and '_', at most 32). A writer killed before its
 * rename (kill -9, a crash, a power cut) leaves its temporary behind; every later write to the
 * same target first removes that target's temporaries whose <host> is this host and whose <pid>
 * is no longer alive here. A temporary of another host (a folder shared over NFS), of a live pid
 * (another writer at work, or rarely a reused pid), or of this process is left alone.
 * The checks of what the path names are not atomic with the write: a path swapped between them
 * by someone with write access to the folder gets the behaviour of what it was a moment before.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"

/* Profiles and corpora are small; refuse anything absurdly large instead of exhausting memory.
 * A variable, not a constant, only so that a test can lower it (base.h). */
size_t duet__max_input_bytes = (size_t)512 << 20;

/*
 * What a reader refuses is the caller's input, and the command line says so with exit status 2
 * wherever it happens: a folder, or more than duet__max_input_bytes. A regular file's size is
 * checked before a byte is read; a pipe or a device is read up to the limit and refused there.
 */
duet_status_t duet__read_file(const char *path, char **text_p, size_t *len_p)
{
    const int is_stdin = strcmp(path, "-") == 0;
    const size_t max = duet__max_input_bytes;
    int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return duet__error(errno == ENOENT ? DUET_ERR_NOT_FOUND : DUET_ERR_IO, "%s: %s", path, strerror(errno));
    size_t cap = (size_t)1 << 16, len = 0;
    char *buf = NULL;
    duet_status_t status = DUET_OK;
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        status = duet__error(DUET_ERR_IO, "%s: %s", path, strerror(errno));
        goto out_close;
    }
    if (S_ISDIR(sb.st_mode)) {
        status = duet__error(DUET_ERR_INVALID_ARG, "%s: is a folder, not a file", path);
        goto out_close;
    }
    if (S_ISREG(sb.st_mode)) {
        if ((uint64_t)sb.st_size > (uint64_t)max) {
            status = duet__error(DUET_ERR_INVALID_ARG, "%s: %lld bytes, larger than the %zu MiB duet reads", path,
                                 (long long)sb.st_size, max >> 20);
            goto out_close;
        }
        if (sb.st_size > 0) /* one read, unless the file grows meanwhile (/proc's files say 0) */
            cap = (size_t)sb.st_size + 1;
    }
    buf = malloc(cap);
    if (buf == NULL) {
        status = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a read buffer", path);
        goto out_close;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (len > max)
                break; /* refused below */
            size_t grown_cap = cap * 2 > max + 2 ? max + 2 : cap * 2;
            char *grown = realloc(buf, grown_cap);
            if (grown == NULL) {
                status = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot grow the read buffer", path);
                goto out_free;
            }
            buf = grown;
            cap = grown_cap;
        }
        /* Up to one byte more than the limit is read: that is how a pipe shows that it is over. */
        ssize_t got = read(fd, buf + len, cap - 1 - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            status = duet__error(errno == EISDIR ? DUET_ERR_INVALID_ARG : DUET_ERR_IO, "%s: read error: %s", path,
                                 strerror(errno));
            goto out_free;
        }
        if (got == 0)
            break;
        len += (size_t)got;
    }
    if (len > max) {
        status = duet__error(DUET_ERR_INVALID_ARG, "%s: larger than the %zu MiB duet reads", path, max >> 20);
        goto out_free;
    }
    buf[len] = '\0';
    *text_p = buf;
    if (len_p)
        *len_p = len;
    buf = NULL;
out_free:
    free(buf);
out_close:
    if (!is_stdin)
        close(fd);
    return status;
}

/* ------------------------------------------------------------------------------------------ */
/* Writing                                                                                     */
/* ------------------------------------------------------------------------------------------ */

#define DUET__MAX_LINKS 40
#define DUET__PROC_SUPER_MAGIC 0x9fa0 /* linux/magic.h: the file system of /proc */
#define DUET__TMP_TAG ".duet-tmp-"
#define DUET__TMP_NAME_CUT 184 /* 255 - len(".<name>.duet-tmp-<10 digits>-<32>-<16>") */
#define DUET__TMP_HOST_LEN 32

/* Write all of data to fd, retrying short writes and EINTR. @return 0 or -1 with errno set. */
static int duet__write_all(int fd, const char *data, size_t len)
{
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* The folder part of a path ("." for a bare name, "/" for a name in the root), malloc'd. */
static char *duet__dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static const char *duet__base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Whether the link at `path` lives in /proc (its folder is on procfs): a descriptor's magic link. */
static int duet__in_proc(const char *path)
{
    char *dir = duet__dir_of(path);
    struct statfs fs;
    int in = dir != NULL && statfs(dir, &fs) == 0 && fs.f_type == DUET__PROC_SUPER_MAGIC;
    free(dir);
    return in;
}

/* What a path names once its symbolic links are followed. */
typedef struct duet__target {
    char *path;     /* the last link's target (malloc'd): the name to replace */
    int exists;     /* 0: nothing there yet (the file will be created) */
    int descriptor; /* reached through a link in /proc: an open descriptor */
    struct stat st; /* what is there, when it exists */
} duet__target_t;

static duet_status_t duet__target_resolve(const char *path, duet__target_t *t)
{
    memset(t, 0, sizeof(*t));
    char *cur = strdup(path);
    if (cur == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a path", path);
    for (int hop = 0;; hop++) {
        struct stat ls;
        if (lstat(cur, &ls) != 0) {
            if (errno != ENOENT) {
                int e = errno;
                free(cur);
                return duet__error(e == ENOTDIR ? DUET_ERR_NOT_FOUND : DUET_ERR_IO, "%s: %s", path, strerror(e));
            }
            break; /* nothing there: a new file (a missing folder is reported when creating it) */
        }
        if (!S_ISLNK(ls.st_mode)) {
            t->exists = 1;
            t->st = ls;
            break;
        }
        if (hop == DUET__MAX_LINKS) {
            free(cur);
            return duet__error(DUET_ERR_INVALID_ARG, "%s: more than %d symbolic links in a row", path, DUET__MAX_LINKS);
        }
        if (duet__in_proc(cur)) {
            /* Its text is not always a path ("pipe:[1234]"): open the link itself, which the kernel follows. */
            if (stat(cur, &t->st) != 0) {
                int e = errno;
                free(cur);
                return duet__error(DUET_ERR_IO, "%s: %s", path, strerror(e));
            }
            t->exists = t->descriptor = 1;
            break;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof(link) - 1);
        if (n < 0 || (size_t)n >= sizeof(link) - 1) {
            int e = n < 0 ? errno : ENAMETOOLONG;
            free(cur);
            return duet__error(DUET_ERR_IO, "%s: cannot read the symbolic link: %s", path, strerror(e));
        }
        link[n] = '\0';
        char *next = NULL;
        if (link[0] == '/' || strchr(cur, '/') == NULL) {
            next = strdup(link);
        } else {
            size_t dlen = (size_t)(strrchr(cur, '/') - cur);
            next = malloc(dlen + 1 + (size_t)n + 1);
            if (next != NULL)
                snprintf(next, dlen + 1 + (size_t)n + 1, "%.*s/%s", (int)dlen, cur, link);
        }
        free(cur);
        if (next == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a path", path);
        cur = next;
    }
    t->path = cur;
    return DUET_OK;
}

/* Write through a device, a FIFO or a descriptor, in place. */
static duet_status_t duet__write_through(const char *shown, const duet__target_t *t, const char *data, size_t len)
{
    /* This process's own standard output or error: through the stream, in order with what it printed. */
    FILE *streams[2] = {stdout, stderr};
    for (int i = 0; i < 2; i++) {
        struct stat so;
        if (fstat(fileno(streams[i]), &so) == 0 && so.st_dev == t->st.st_dev && so.st_ino == t->st.st_ino &&
            so.st_rdev == t->st.st_rdev) {
            if (fwrite(data, 1, len, streams[i]) != len || fflush(streams[i]) != 0)
                return duet__error(DUET_ERR_IO, "%s: write failed: %s", shown, strerror(errno));
            return DUET_OK;
        }
    }
    int flags = O_WRONLY | O_NOCTTY | O_CLOEXEC | (S_ISREG(t->st.st_mode) ? O_APPEND : 0);
    int fd = open(t->descriptor ? shown : t->path, flags);
    if (fd < 0)
        return duet__error(DUET_ERR_IO, "%s: cannot open for writing: %s", shown, strerror(errno));
    if (duet__write_all(fd, data, len) != 0) {
        int e = errno;
        close(fd);
        return duet__error(DUET_ERR_IO, "%s: write failed: %s", shown, strerror(e));
    }
    if (close(fd) != 0)
        return duet__error(DUET_ERR_IO, "%s: write failed: %s", shown, strerror(errno));
    return DUET_OK;
}

/* This host's name as it appears in temporary names: letters, digits and '_', at most 32. */
static void duet__tmp_host(char *out, size_t n)
{
    char h[256] = "";
    if (gethostname(h, sizeof(h) - 1) != 0 || h[0] == '\0')
        snprintf(h, sizeof(h), "host");
    size_t j = 0;
    for (size_t i = 0; h[i] != '\0' && j + 1 < n && j < DUET__TMP_HOST_LEN; i++) {
        char c = h[i];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[j++] = keep ? c : '_';
    }
    out[j] = '\0';
}

/* ".<name cut to fit>.duet-tmp-": what every temporary of this target starts with. */
static void duet__tmp_prefix(const char *base, char *out, size_t n)
{
    size_t blen = strlen(base);
    if (blen > DUET__TMP_NAME_CUT)
        blen = DUET__TMP_NAME_CUT;
    snprintf(out, n, ".%.*s%s", (int)blen, base, DUET__TMP_TAG);
}

/*
 * Remove this target's temporaries left by dead writers of this host (the rule in the header).
 * Best effort: a folder that cannot be listed, or a name that cannot be removed, is left as it is.
 */
static void duet__tmp_sweep(const char *dir, const char *prefix, const char *host)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    size_t plen = strlen(prefix), hlen = strlen(host);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        if (strncmp(s, prefix, plen) != 0)
            continue;
        s += plen;
        char *end = NULL;
        errno = 0;
        long pid = strtol(s, &end, 10);
        if (errno != 0 || end == s || *s < '1' || *s > '9' || pid <= 0 || pid > INT_MAX || *end != '-')
            continue;
        s = end + 1;
        if (strncmp(s, host, hlen) != 0 || s[hlen] != '-')
            continue;
        s += hlen + 1;
        if (strspn(s, "0123456789abcdef") != 16 || s[16] != '\0')
            continue;
        if ((pid_t)pid == getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue; /* alive (EPERM: another user's live process) */
        (void)unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* 64 random bits for a temporary name; the clock and a counter where the kernel has no getrandom. */
static uint64_t duet__tmp_random(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
        return r;
    static _Thread_local uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    r = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ ++counter;
    r ^= r >> 33;
    r *= 0xff51afd7ed558ccdull;
    r ^= r >> 33;
    return r;
}

/* Make a rename durable: without this a crash right after it may bring the old file back. */
static void duet__fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd); /* some file systems refuse fsync on folders; the rename stands anyway */
        close(fd);
    }
}

int duet__fault_countdown;

/* A fault point of the writers (base.h, duet__fault_countdown): 1 when this one is to fail. */
static int duet__fault(void)
{
    if (duet__fault_countdown > 0 && --duet__fault_countdown == 0) {
        errno = EIO;
        return 1;
    }
    if (duet__fault_countdown < 0 && ++duet__fault_countdown == 0)
        raise(SIGKILL); /* what a reader sees after a kill -9 here */
    return 0;
}

/* A free temporary name for t->path in dir (the rule in the header), written into tmp (n bytes). */
static void duet__tmp_name(const char *dir, const char *prefix, const char *host, char *tmp, size_t n)
{
    snprintf(tmp, n, "%s/%s%ld-%s-%016llx", dir, prefix, (long)getpid(), host, (unsigned long long)duet__tmp_random());
}

/* One file on its way to its target: written in full to a temporary beside it, not yet renamed. */
typedef struct duet__staged {
    char *dir, *tmp; /* the target's folder and the temporary (malloc'd) */
    char *old;       /* a second name of the file replaced (two-file writes), or NULL */
} duet__staged_t;

static void duet__staged_free(duet__staged_t *sg)
{
    free(sg->dir);
    free(sg->tmp);
    free(sg->old);
    memset(sg, 0, sizeof(*sg));
}

/* The bytes into a new temporary beside the regular file t->path: create, write, fsync, close. On
 * failure nothing is left and sg is freed. */
static duet_status_t duet__stage(const char *shown, const duet__target_t *t, const char *data, size_t len,
                                 duet__staged_t *sg)
{
    char host[DUET__TMP_HOST_LEN + 1], prefix[DUET__TMP_NAME_CUT + 16];
    duet_status_t status = DUET_OK;
    int fd = -1;
    memset(sg, 0, sizeof(*sg));
    sg->dir = duet__dir_of(t->path);
    size_t n = (sg->dir ? strlen(sg->dir) : 0) + NAME_MAX + 2;
    sg->tmp = malloc(n);
    if (sg->dir == NULL || sg->tmp == NULL) {
        duet__staged_free(sg);
        return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a path", shown);
    }
    duet__tmp_host(host, sizeof(host));
    duet__tmp_prefix(duet__base_of(t->path), prefix, sizeof(prefix));
    duet__tmp_sweep(sg->dir, prefix, host);
    for (int attempt = 0; fd < 0; attempt++) {
        duet__tmp_name(sg->dir, prefix, host, sg->tmp, n);
        fd = duet__fault() ? -1 : open(sg->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && (errno != EEXIST || attempt == 99)) {
            /* A folder that does not exist is the caller's input (a mistyped -o path), not a failure
             * of the machine: DUET_ERR_NOT_FOUND, which the command line reports with exit status 2. */
            status = duet__error(errno == ENOENT || errno == ENOTDIR ? DUET_ERR_NOT_FOUND : DUET_ERR_IO,
                                 "%s: cannot create a file in %s: %s", shown, sg->dir, strerror(errno));
            duet__staged_free(sg);
            return status;
        }
    }
    /* The replaced file's permissions carry over (a private database stays private); set-id bits do not. */
    if (t->exists && fchmod(fd, t->st.st_mode & 0777) != 0) {
        status = duet__error(DUET_ERR_IO, "%s: cannot set the permissions: %s", shown, strerror(errno));
        goto fail_close;
    }
    if (duet__fault() || duet__write_all(fd, data, len) != 0) {
        status = duet__error(DUET_ERR_IO, "%s: write failed: %s", shown, strerror(errno));
        goto fail_close;
    }
    if (fsync(fd) != 0) {
        status = duet__error(DUET_ERR_IO, "%s: fsync failed: %s", shown, strerror(errno));
        goto fail_close;
    }
    int closed = close(fd);
    fd = -1;
    if (closed != 0) {
        status = duet__error(DUET_ERR_IO, "%s: close failed: %s", shown, strerror(errno));
        goto fail_close;
    }
    return DUET_OK;
fail_close:
    if (fd >= 0)
        close(fd);
    unlink(sg->tmp);
    duet__staged_free(sg);
    return status;
}

/* Rename the staged temporary over its target. On failure the temporary is removed. */
static duet_status_t duet__commit(const char *shown, const duet__target_t *t, duet__staged_t *sg)
{
    if (duet__fault() || rename(sg->tmp, t->path) != 0) {
        duet_status_t st = duet__error(DUET_ERR_IO, "%s: cannot rename into place: %s", shown, strerror(errno));
        unlink(sg->tmp);
        return st;
    }
    return DUET_OK;
}

/* Replace the regular file t->path (or create it): temporary, fsync, rename, fsync of the folder. */
static duet_status_t duet__replace(const char *shown, const duet__target_t *t, const char *data, size_t len)
{
    duet__staged_t sg;
    DUET_CHECK(duet__stage(shown, t, data, len, &sg));
    duet_status_t status = duet__commit(shown, t, &sg);
    if (status >= 0)
        duet__fsync_dir(sg.dir);
    duet__staged_free(&sg);
    return status;
}

/*
 * Two files as a pair (base.h). Both are staged in full first; the replaced files get a second
 * name (a hard link under a temporary name) so that a failed second rename can put the first
 * target back; then the two renames, back to back; then the second names go.
 */
duet_status_t duet__write_pair_atomic(const char *const path[2], const char *const data[2], const size_t len[2])
{
    duet__target_t t[2];
    duet__staged_t sg[2];
    duet_status_t status = DUET_OK;
    int resolved = 0, staged = 0, renamed = 0;
    memset(sg, 0, sizeof(sg));
    for (; resolved < 2; resolved++) {
        if (strcmp(path[resolved], "-") == 0 || path[resolved][0] == '\0') {
            status = duet__error(DUET_ERR_INVALID_ARG, "'%s': a pair of outputs needs two file names",
                                 duet__q(path[resolved]));
            goto out;
        }
        DUET_CHECK_GOTO(duet__target_resolve(path[resolved], &t[resolved]), status, out);
    }
    /* Anything but a regular file (or a new one) cannot be replaced atomically: written as it is, one after the other.
     */
    int plain = 1;
    for (int i = 0; i < 2; i++)
        plain &= !t[i].exists || (S_ISREG(t[i].st.st_mode) && !t[i].descriptor);
    if (!plain) {
        for (int i = 0; i < 2 && status >= 0; i++)
            status = duet__write_file_atomic(path[i], data[i], len[i]);
        goto out;
    }
    for (; staged < 2; staged++)
        DUET_CHECK_GOTO(duet__stage(path[staged], &t[staged], data[staged], len[staged], &sg[staged]), status, out);
    for (int i = 0; i < 2; i++) {
        if (!t[i].exists)
            continue;
        char host[DUET__TMP_HOST_LEN + 1], prefix[DUET__TMP_NAME_CUT + 16];
        size_t n = strlen(sg[i].dir) + NAME_MAX + 2;
        if ((sg[i].old = malloc(n)) == NULL) {
            status = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a path", path[i]);
            goto out;
        }
        duet__tmp_host(host, sizeof(host));
        duet__tmp_prefix(duet__base_of(t[i].path), prefix, sizeof(prefix));
        int linked = -1;
        for (int attempt = 0; linked != 0 && attempt < 100; attempt++) {
            duet__tmp_name(sg[i].dir, prefix, host, sg[i].old, n);
            linked = duet__fault() ? -1 : link(t[i].path, sg[i].old);
            if (linked != 0 && errno != EEXIST)
                break;
        }
        if (linked != 0) {
            status = duet__error(DUET_ERR_IO, "%s: cannot keep the file it replaces until the pair is written: %s",
                                 path[i], strerror(errno));
            free(sg[i].old);
            sg[i].old = NULL;
            goto out;
        }
    }
    for (; renamed < 2; renamed++)
        DUET_CHECK_GOTO(duet__commit(path[renamed], &t[renamed], &sg[renamed]), status, out);
    for (int i = 0; i < 2; i++)
        duet__fsync_dir(sg[i].dir);
out:
    /* A failed second rename puts the first target back as it was (or removes the new file). */
    if (status < 0 && renamed == 1) {
        if (sg[0].old != NULL ? rename(sg[0].old, t[0].path) == 0 : unlink(t[0].path) == 0) {
            free(sg[0].old);
            sg[0].old = NULL;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (status < 0 && i >= renamed && i < staged)
            unlink(sg[i].tmp);
        if (sg[i].old != NULL)
            unlink(sg[i].old);
        duet__staged_free(&sg[i]);
    }
    for (int i = 0; i < resolved; i++)
        free(t[i].path);
    return status;
}

duet_status_t duet__write_file_atomic(const char *path, const char *data, size_t len)
{
    if (strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
            return duet__error(DUET_ERR_IO, "<stdout>: write failed: %s", strerror(errno));
        return DUET_OK;
    }
    if (path[0] == '\0')
        return duet__error(DUET_ERR_INVALID_ARG, "an empty file name");
    duet__target_t t;
    DUET_CHECK(duet__target_resolve(path, &t));
    duet_status_t status;
    mode_t m = t.st.st_mode;
    if (!t.exists || (S_ISREG(m) && !t.descriptor))
        status = duet__replace(path, &t, data, len);
    else if (S_ISCHR(m) || S_ISFIFO(m) || (t.descriptor && !S_ISDIR(m)))
        status = duet__write_through(path, &t, data, len);
    else
        status =
            duet__error(DUET_ERR_INVALID_ARG,
                        "%s: is %s; duet writes regular files, character devices (such as /dev/null) and FIFOs", path,
                        S_ISDIR(m)    ? "a folder"
                        : S_ISSOCK(m) ? "a socket"
                        : S_ISBLK(m)  ? "a block device"
                                      : "not a file");
    free(t.path);
    return status;
}

int duet__time_eq(double a, double b, double rel_eps)
{
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= rel_eps * (scale > 0 ? scale : 1.0);
}
