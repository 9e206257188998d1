/*
 * Shared by the libFuzzer harnesses of tests/fuzz/ (docs/testing.md): a private temporary folder
 * for the loaders that take a path, and the input as a NUL-terminated string.
 *
 * Harnesses write only inside that folder (under /dev/shm where it exists, so the atomic writers'
 * fsync is cheap), empty it after every input and remove it at exit.
 */
#ifndef DUET_FUZZ_UTIL_H
#define DUET_FUZZ_UTIL_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fz_dir[256];

/* Remove every file in the folder (the harnesses make no subfolders). */
static inline void fz_clean(void)
{
    DIR *d = opendir(fz_dir);
    if (d == NULL)
        return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(p, sizeof(p), "%s/%s", fz_dir, e->d_name);
        unlink(p);
    }
    closedir(d);
}

static inline void fz_remove_dir(void)
{
    fz_clean();
    rmdir(fz_dir);
}

/* The folder, made on first use. */
static inline const char *fz_tmpdir(void)
{
    if (fz_dir[0] == '\0') {
        struct stat sb;
        const char *base = stat("/dev/shm", &sb) == 0 && S_ISDIR(sb.st_mode) && access("/dev/shm", W_OK) == 0
                               ? "/dev/shm"
                               : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        snprintf(fz_dir, sizeof(fz_dir), "%s/duet-fuzz-XXXXXX", base);
        if (mkdtemp(fz_dir) == NULL)
            abort();
        atexit(fz_remove_dir);
    }
    return fz_dir;
}

/* <folder>/<name> in a static buffer (one at a time per call site: copy it if two are needed). */
static inline const char *fz_path(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", fz_tmpdir(), name);
    return buf;
}

/* Write the input to <folder>/<name>; the path is returned in buf. */
static inline const char *fz_write(const char *name, const uint8_t *data, size_t size, char *buf, size_t n)
{
    fz_path(name, buf, n);
    FILE *f = fopen(buf, "wb");
    if (f == NULL)
        abort();
    if (size > 0 && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    return buf;
}

/* The input as a NUL-terminated string (malloc'd; free it). An embedded NUL ends it early. */
static inline char *fz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s == NULL)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* An invariant of the code under test failed: crash so libFuzzer keeps the input (the temporary
 * folder goes first: abort() runs no atexit handler). */
#define FZ_ASSERT(cond)                                                                                                \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "%s:%d: invariant failed: %s (%s)\n", __FILE__, __LINE__, #cond, duet_last_error());       \
            fz_remove_dir();                                                                                           \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

#endif /* DUET_FUZZ_UTIL_H */
