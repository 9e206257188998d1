/*
 * Status strings and the per-thread last-error text.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "duet/status.h"

const char *duet_status_string(duet_status_t status)
{
    switch (status) {
#define DUET__STATUS_STR(name, value, msg)                                                                             \
    case DUET_##name:                                                                                                  \
        return msg;
        DUET_STATUS_MAP(DUET__STATUS_STR)
#undef DUET__STATUS_STR
    }
    return "unknown status";
}

const char *duet_status_name(duet_status_t status)
{
    switch (status) {
#define DUET__STATUS_NAME(name, value, msg)                                                                            \
    case DUET_##name:                                                                                                  \
        return "DUET_" #name;
        DUET_STATUS_MAP(DUET__STATUS_NAME)
#undef DUET__STATUS_NAME
    }
    return "DUET_UNKNOWN";
}

/* One buffer per thread: library calls on different threads never see each other's errors. */
static _Thread_local char duet__errbuf[DUET__ERRBUF_LEN];
static _Thread_local duet_status_t duet__errstatus;

duet_status_t duet__last_status(void)
{
    return duet__errstatus;
}

const char *duet_last_error(void)
{
    return duet__errbuf;
}

void duet_clear_error(void)
{
    duet__errbuf[0] = '\0';
    duet__errstatus = DUET_OK;
}

duet_status_t duet__error(duet_status_t status, const char *fmt, ...)
{
    /* Format into a scratch buffer: callers often pass duet_last_error() itself as an argument
     * to add context to it. The text is escaped on the way in, so that a path or a key with a
     * newline in it cannot split the one-line message (escaping twice changes nothing). */
    char tmp[DUET__ERRBUF_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    duet__text_escape(duet__errbuf, sizeof(duet__errbuf), tmp, sizeof(tmp));
    duet__errstatus = status;
    return status;
}

duet_status_t duet__error_prefix(const char *prefix)
{
    char tmp[2 * DUET__ERRBUF_LEN];
    snprintf(tmp, sizeof(tmp), "%s: %s", prefix, duet__errbuf);
    duet__text_escape(duet__errbuf, sizeof(duet__errbuf), tmp, sizeof(tmp));
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Escaping user text for one-line messages                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * Length of the well-formed UTF-8 sequence at s (at most `left` bytes), or 0: overlong forms,
 * surrogates, code points past U+10FFFF and the C1 controls U+0080..U+009F (which some terminals
 * obey as escape sequences) do not count as text.
 */
static size_t duet__utf8_len(const unsigned char *s, size_t left)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1fu;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0fu;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07u;
    } else {
        return 0;
    }
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3fu);
    }
    static const uint32_t min_cp[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp <= 0x9f)
        return 0;
    return n;
}

/* The escaped form of the text at s: its length in bytes of output, and in *adv the input bytes it covers. */
static size_t duet__escape_one(const char *s, size_t left, char esc[8], size_t *adv)
{
    unsigned char c = (unsigned char)s[0];
    *adv = 1;
    if (c >= 0x20 && c < 0x7f) {
        esc[0] = (char)c;
        return 1;
    }
    if (c == '\n' || c == '\t' || c == '\r') {
        esc[0] = '\\';
        esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        return 2;
    }
    size_t n = c >= 0x80 ? duet__utf8_len((const unsigned char *)s, left) : 0;
    if (n > 0) {
        memcpy(esc, s, n);
        *adv = n;
        return n;
    }
    snprintf(esc, 8, "\\x%02x", c);
    return 4;
}

int duet__text_plain(const char *s)
{
    size_t len = strlen(s), adv = 1;
    char esc[8];
    for (size_t i = 0; i < len; i += adv)
        if (duet__escape_one(s + i, len - i, esc, &adv) != adv)
            return 0;
    return 1;
}

char *duet__text_escape(char *out, size_t n, const char *s, size_t max_in)
{
    if (n == 0)
        return out;
    size_t len = strnlen(s, max_in + 1), cap = n - 1, need = 0;
    char esc[8];
    /* First the whole text's escaped length: when it fits, nothing is cut and no room is kept for a mark. */
    for (size_t i = 0, adv; i < len && i < max_in; i += adv)
        need += duet__escape_one(s + i, len - i, esc, &adv);
    int cut = len > max_in || need > cap;
    /* Room for "...(N more bytes)" with N up to 20 digits. */
    size_t reserve = cut ? (cap > 48 ? 32 : cap) : 0, o = 0, i = 0;
    while (i < len && i < max_in) {
        size_t adv, k = duet__escape_one(s + i, len - i, esc, &adv);
        if (o + k > cap - reserve)
            break;
        memcpy(out + o, esc, k);
        o += k;
        i += adv;
    }
    out[o] = '\0';
    if (cut && reserve > 0) {
        snprintf(out + o, n - o, "...(%zu more bytes)", strlen(s + i));
    }
    return out;
}

/* Four buffers used in turn, per thread: duet__q() can appear up to four times in one call. */
#define DUET__Q_SLOTS 4
#define DUET__Q_MAX_IN 200
static _Thread_local char duet__qbuf[DUET__Q_SLOTS][4 * DUET__Q_MAX_IN + 32];
static _Thread_local unsigned duet__qnext;

const char *duet__q(const char *s)
{
    char *out = duet__qbuf[duet__qnext++ % DUET__Q_SLOTS];
    return duet__text_escape(out, sizeof(duet__qbuf[0]), s ? s : "(null)", DUET__Q_MAX_IN);
}
