/*
 * Helpers shared by the Criterion tests.
 */
#ifndef DUET_TEST_UTIL_H
#define DUET_TEST_UTIL_H

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "duet/duet.h"

/* Every test has a timeout (seconds), so a hang fails instead of stalling CI. */
#define T_TIMEOUT .timeout = 20

/* rm -rf of a folder the tests made (a link is removed, never followed). */
static inline void t_rmtree(const char *dir)
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
                t_rmtree(p);
            else
                unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/*
 * A private folder for this test's files, made on first use inside the suite's folder
 * ($DUET_TEST_TMP). tests/cli/tmp_hooks.c makes that folder before the first test and removes it,
 * with everything in it, after the last: a test that fails half-way or times out leaves nothing
 * behind either. Each test runs in its own process, so each gets its own folder.
 */
static inline const char *t_tmpdir(void)
{
    static char dir[128];
    if (dir[0] == '\0') {
        const char *root = getenv("DUET_TEST_TMP");
        snprintf(dir, sizeof(dir), "%s/t-XXXXXX", root != NULL && root[0] == '/' ? root : "/tmp");
        if (mkdtemp(dir) == NULL) {
            fprintf(stderr, "%s: %s\n", dir, strerror(errno));
            abort();
        }
    }
    return dir;
}

/* "<this test's folder>/<name>" in buf. */
static inline char *t_tmp_path(char *buf, size_t n, const char *name)
{
    if (snprintf(buf, n, "%s/%s", t_tmpdir(), name) >= (int)n)
        abort(); /* a test's buffer too small for its path */
    return buf;
}

/* This host as the careful writer's temporaries name it (base/fileio.c's header): letters, digits
 * and '_', at most 32 characters. */
static inline void t_host_part(char *out, size_t n)
{
    char h[256] = "";
    gethostname(h, sizeof(h) - 1);
    if (h[0] == '\0')
        snprintf(h, sizeof(h), "host");
    size_t j = 0;
    for (size_t i = 0; h[i] && j + 1 < n && j < 32; i++) {
        char c = h[i];
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out[j++] = keep ? c : '_';
    }
    out[j] = '\0';
}

/* A file as found (lstat, not followed) and its first 64 KiB: to show that something left it alone. */
typedef struct t_file {
    int exists;
    struct stat st;
    size_t len;
    char data[1 << 16];
} t_file_t;

static inline void t_file_get(const char *path, t_file_t *f)
{
    memset(f, 0, sizeof(*f));
    f->exists = lstat(path, &f->st) == 0;
    FILE *fp = f->exists && S_ISREG(f->st.st_mode) ? fopen(path, "rb") : NULL;
    if (fp != NULL) {
        f->len = fread(f->data, 1, sizeof(f->data) - 1, fp);
        fclose(fp);
    }
}

/* A whole file as a malloc'd NUL-terminated string, or NULL when it cannot be read. */
static inline char *t_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    char *text = malloc(cap);
    while (text != NULL && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *grown = realloc(text, cap *= 2);
            if (grown == NULL)
                free(text);
            text = grown;
        }
    }
    fclose(f);
    if (text != NULL)
        text[len] = '\0';
    return text;
}

/* Write text to a file (replacing it). @return 0, or -1 when it cannot be written. */
static inline int t_spill(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int bad = fputs(text, f) < 0;
    return fclose(f) != 0 || bad ? -1 : 0;
}

/* text with `cut` bytes at offset `at` replaced by `insert`, malloc'd. */
static inline char *t_splice(const char *text, size_t at, size_t cut, const char *insert)
{
    size_t len = strlen(text) + strlen(insert) + 1;
    char *out = malloc(len);
    if (out != NULL)
        snprintf(out, len, "%.*s%s%s", (int)at, text, insert, text + at + cut);
    return out;
}

/*
 * Make the FIFO `fifo` and fork a reader that copies what comes through it into the file `out`
 * and exits 0. It gives up after 10 s, should no writer ever open the FIFO: it must not outlive
 * its test. @return its pid (waitpid for it after the write), or -1.
 */
static inline pid_t t_fifo_reader(const char *fifo, const char *out)
{
    if (mkfifo(fifo, 0600) != 0)
        return -1;
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    alarm(10);
    char buf[4096];
    int in = open(fifo, O_RDONLY), fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ssize_t k;
    while (in >= 0 && (k = read(in, buf, sizeof(buf))) > 0)
        if (write(fd, buf, (size_t)k) != k)
            _exit(2);
    _exit(in >= 0 && fd >= 0 ? 0 : 1);
}

/* Same inode, type, size and bytes. */
static inline int t_file_same(const t_file_t *a, const t_file_t *b)
{
    return a->exists == b->exists && a->st.st_ino == b->st.st_ino && a->st.st_dev == b->st.st_dev &&
           a->st.st_mode == b->st.st_mode && a->st.st_size == b->st.st_size && a->len == b->len &&
           memcmp(a->data, b->data, a->len) == 0;
}

/*
 * A character device to write to: /dev/null (minor 3) or /dev/full (minor 7). As root, a private
 * node of the same device made in this test's folder, so that a writer that wrongly replaced its
 * target would replace that node, never the system's /dev/null; otherwise the one in /dev, which a
 * user other than root cannot replace. @return 0 when there is none to use (the test then skips).
 */
static inline int t_char_device(unsigned minor, char *out, size_t n)
{
    if (geteuid() == 0) {
        if (snprintf(out, n, "%s/dev-1-%u", t_tmpdir(), minor) >= (int)n)
            abort();
        struct stat sb;
        return (lstat(out, &sb) == 0 || mknod(out, S_IFCHR | 0666, makedev(1, minor)) == 0) && access(out, W_OK) == 0;
    }
    snprintf(out, n, "/dev/%s", minor == 7 ? "full" : "null");
    return access(out, W_OK) == 0;
}

/* |got - want| <= rel * |want| (or <= rel when want is 0). */
static inline int t_rel_eq(double got, double want, double rel)
{
    double scale = fabs(want) > 0 ? fabs(want) : 1.0;
    return fabs(got - want) <= rel * scale;
}

/* A JSON file of tests/data, parsed; NULL if missing or not JSON. The tests run from the
 * repository root. */
static inline cJSON *t_load_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
    fclose(f);
    if (buf == NULL)
        return NULL;
    buf[got] = '\0';
    cJSON *root = cJSON_Parse(buf);
    free(buf);
    return root;
}

/* The golden file of the reference simulator (tests/data/README.md), parsed; NULL if missing. */
static inline cJSON *t_load_golden(void)
{
    return t_load_json("tests/data/seed-golden.json");
}

static inline double t_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return v ? v->valuedouble : NAN;
}

/* A workload in one line. */
static inline duet_workload_t t_wl(int64_t m, int64_t n, int64_t k, int32_t coll, int64_t mc, int64_t nc, int32_t world)
{
    duet_workload_t wl = duet_workload_empty();
    wl.m = m;
    wl.n = n;
    wl.k = k;
    wl.coll = coll;
    wl.mc = mc;
    wl.nc = nc;
    wl.world = world;
    return wl;
}

static inline duet_hw_t t_hw(const char *name)
{
    duet_hw_t hw;
    if (duet_hw_builtin(name, &hw) != DUET_OK)
        abort();
    return hw;
}

/*
 * The uncalibrated H200 profile (datasheet values, 2026-11 measurements of the raw hardware and
 * estimates; tuning_data/h200_start.json, where the calibration starts). The built-in h200 is the
 * calibrated profile; tests that work the model's equations by hand with round datasheet numbers
 * (19.9 GB/s per pushing CTA, 6 us launch, ...) use this one, so they keep testing the equations.
 */
static inline duet_hw_t t_hw_h200_start(void)
{
    duet_hw_t hw;
    if (duet_hw_load("tuning_data/h200_start.json", &hw) != DUET_OK) {
        fprintf(stderr, "tuning_data/h200_start.json: %s\n", duet_last_error());
        abort();
    }
    return hw;
}

#endif /* DUET_TEST_UTIL_H */
