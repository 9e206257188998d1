/*
 * Internal helpers of the model layer (not installed). Names start with duet__.
 */
#ifndef DUET_MODEL_INTERNAL_H
#define DUET_MODEL_INTERNAL_H

#include <stddef.h>

#include "duet/status.h"

#define DUET__ERRBUF_LEN 512

/** Record the explanation of an error on this thread and return `status` (log once, here). */
duet_status_t duet__error(duet_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Prefix the current error text with "prefix: " (used when a caller adds context). */
duet_status_t duet__error_prefix(const char *prefix);

/** Propagate an error status: if (call) < 0, return it. */
#define DUET_CHECK(_call)                                                                                              \
    do {                                                                                                               \
        duet_status_t _st = (_call);                                                                                   \
        if (_st < 0)                                                                                                   \
            return _st;                                                                                                \
    } while (0)

/** Propagate an error status to a cleanup label. */
#define DUET_CHECK_GOTO(_call, _status, _label)                                                                        \
    do {                                                                                                               \
        (_status) = (_call);                                                                                           \
        if ((_status) < 0)                                                                                             \
            goto _label;                                                                                               \
    } while (0)

/** A system call at a foreign boundary: record errno's text once and return DUET_ERR_IO. */
#define SYS_CHECK(_call, _what)                                                                                        \
    do {                                                                                                               \
        if ((_call) < 0)                                                                                               \
            return duet__error(DUET_ERR_IO, "%s: %s", (_what), strerror(errno));                                       \
    } while (0)

/** Read a whole file (or standard input for "-") into a malloc'd NUL-terminated buffer. */
duet_status_t duet__read_file(const char *path, char **text_p, size_t *len_p);
/**
 * Write `len` bytes to `path` atomically: a temporary file beside it, fsync, rename. On any
 * failure the temporary is removed and `path` is untouched. "-" writes to standard output.
 */
duet_status_t duet__write_file_atomic(const char *path, const char *data, size_t len);

/** Configuration checks that need no profile (mode, tile, comm tile, CTA counts). */
struct duet_config;
struct duet_workload;
duet_status_t duet__config_check_shape(const struct duet_config *cfg, const struct duet_workload *wl);

/** Relative-epsilon comparison for simulated and modelled times (convention 6). */
int duet__time_eq(double a, double b, double rel_eps);

/*
 * A growable text buffer for writers of JSON and SVG. Appends never fail silently: the first
 * allocation failure sticks in `failed` and duet__sbuf_finish() reports it.
 */
typedef struct duet__sbuf {
    char *data;
    size_t len, cap;
    int failed;
} duet__sbuf_t;

void duet__sbuf_init(duet__sbuf_t *b);
void duet__sbuf_printf(duet__sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Write the buffer to `path` atomically and release it. */
duet_status_t duet__sbuf_write(duet__sbuf_t *b, const char *path);
void duet__sbuf_free(duet__sbuf_t *b);
/** Append `s` with the XML special characters escaped. */
void duet__sbuf_xml(duet__sbuf_t *b, const char *s);

#endif /* DUET_MODEL_INTERNAL_H */
