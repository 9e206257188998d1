/*
 * Growable text buffer used by the JSON and SVG writers.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

void duet__sbuf_init(duet__sbuf_t *b)
{
    memset(b, 0, sizeof(*b));
}

void duet__sbuf_free(duet__sbuf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

static int duet__sbuf_reserve(duet__sbuf_t *b, size_t extra)
{
    if (b->failed)
        return -1;
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (d == NULL) {
        b->failed = 1;
        return -1;
    }
    b->data = d;
    b->cap = cap;
    return 0;
}

void duet__sbuf_printf(duet__sbuf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || duet__sbuf_reserve(b, (size_t)n) < 0) {
        b->failed = 1;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void duet__sbuf_xml(duet__sbuf_t *b, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<':
            duet__sbuf_printf(b, "&lt;");
            break;
        case '>':
            duet__sbuf_printf(b, "&gt;");
            break;
        case '&':
            duet__sbuf_printf(b, "&amp;");
            break;
        case '"':
            duet__sbuf_printf(b, "&quot;");
            break;
        default:
            duet__sbuf_printf(b, "%c", *s);
        }
    }
}

duet_status_t duet__sbuf_write(duet__sbuf_t *b, const char *path)
{
    duet_status_t st;
    if (b->failed)
        st = duet__error(DUET_ERR_NO_MEMORY, "%s: out of memory while formatting", path);
    else
        st = duet__write_file_atomic(path, b->data ? b->data : "", b->len);
    duet__sbuf_free(b);
    return st;
}
