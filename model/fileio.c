/*
 * Whole-file reads and atomic writes. Every file duet writes goes through
 * duet__write_file_atomic(), so an interrupted or failed write never leaves a partial file.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/internal.h"

/* Profiles and corpora are small; refuse anything absurdly large instead of exhausting memory. */
#define DUET__MAX_INPUT_BYTES (512u << 20)

duet_status_t duet__read_file(const char *path, char **text_p, size_t *len_p)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL)
        return duet__error(errno == ENOENT ? DUET_ERR_NOT_FOUND : DUET_ERR_IO, "%s: %s", path, strerror(errno));

    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    duet_status_t status = DUET_OK;
    if (buf == NULL) {
        status = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a read buffer", path);
        goto out_close;
    }
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= DUET__MAX_INPUT_BYTES) {
                status = duet__error(DUET_ERR_IO, "%s: larger than %u MiB", path, DUET__MAX_INPUT_BYTES >> 20);
                goto out_free;
            }
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                status = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot grow the read buffer", path);
                goto out_free;
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f)) {
                status = duet__error(DUET_ERR_IO, "%s: read error: %s", path, strerror(errno));
                goto out_free;
            }
            break;
        }
    }
    buf[len] = '\0';
    *text_p = buf;
    if (len_p)
        *len_p = len;
    buf = NULL;
out_free:
    free(buf);
out_close:
    if (f != stdin)
        fclose(f);
    return status;
}

duet_status_t duet__write_file_atomic(const char *path, const char *data, size_t len)
{
    if (strcmp(path, "-") == 0) {
        if (fwrite(data, 1, len, stdout) != len || fflush(stdout) != 0)
            return duet__error(DUET_ERR_IO, "<stdout>: write failed: %s", strerror(errno));
        return DUET_OK;
    }
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (tmp == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a path", path);
    snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());

    duet_status_t status = DUET_OK;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        status = duet__error(DUET_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        goto out_free;
    }
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, data + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0) {
            status = duet__error(DUET_ERR_IO, "%s: write failed: %s", path, strerror(errno));
            goto out_close;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0) {
        status = duet__error(DUET_ERR_IO, "%s: fsync failed: %s", path, strerror(errno));
        goto out_close;
    }
    if (close(fd) != 0) {
        fd = -1;
        status = duet__error(DUET_ERR_IO, "%s: close failed: %s", path, strerror(errno));
        goto out_unlink;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        status = duet__error(DUET_ERR_IO, "%s: cannot rename into place: %s", path, strerror(errno));
        goto out_unlink;
    }
    goto out_free;
out_close:
    close(fd);
out_unlink:
    unlink(tmp);
out_free:
    free(tmp);
    return status;
}

int duet__time_eq(double a, double b, double rel_eps)
{
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= rel_eps * (scale > 0 ? scale : 1.0);
}
