/*
 * CSV, the one writer of every table duet gives as CSV (the commands' --csv, calibrate's --rows):
 * RFC 4180 fields separated by commas, one record per line. A field that holds a comma, a double
 * quote, a carriage return or a line feed, or that begins or ends with a space, is written in
 * double quotes with each double quote doubled, so that every reader splits it as one field and
 * reads it back as it was. Records end with "\n" (RFC 4180 names CRLF; every CSV reader in use
 * accepts a bare line feed, and the shell tools that read duet's output expect one).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

void duet__csv_init(duet__csv_t *c, FILE *f)
{
    c->f = f;
    c->fields = 0;
    c->err = 0;
}

/* Whether `s` must be quoted to be read back as one field holding exactly `s`. */
static int duet__csv_needs_quotes(const char *s)
{
    size_t n = strlen(s);
    return strpbrk(s, ",\"\r\n") != NULL || (n > 0 && (s[0] == ' ' || s[n - 1] == ' '));
}

void duet__csv_str(duet__csv_t *c, const char *s)
{
    if (s == NULL)
        s = "";
    int bad = c->fields > 0 && fputc(',', c->f) == EOF;
    if (!duet__csv_needs_quotes(s)) {
        bad |= fputs(s, c->f) == EOF && s[0] != '\0';
    } else {
        bad |= fputc('"', c->f) == EOF;
        for (; *s != '\0'; s++) {
            if (*s == '"')
                bad |= fputc('"', c->f) == EOF;
            bad |= fputc(*s, c->f) == EOF;
        }
        bad |= fputc('"', c->f) == EOF;
    }
    c->fields++;
    c->err |= bad;
}

void duet__csv_printf(duet__csv_t *c, const char *fmt, ...)
{
    char small[128];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    va_end(ap);
    char *text = small;
    if (n >= (int)sizeof(small) && (text = malloc((size_t)n + 1)) != NULL)
        vsnprintf(text, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    if (n < 0 || text == NULL) {
        c->err = 1;
        duet__csv_str(c, ""); /* the record keeps its number of fields */
    } else {
        duet__csv_str(c, text);
    }
    if (text != small)
        free(text);
}

void duet__csv_num(duet__csv_t *c, double v)
{
    char buf[40];
    duet__csv_str(c, duet__json_num_text(buf, sizeof(buf), v) == 0 ? buf : "");
}

void duet__csv_num_fmt(duet__csv_t *c, const char *fmt, double v)
{
    char buf[64];
    if (!isfinite(v) || snprintf(buf, sizeof(buf), fmt, v) < 0)
        buf[0] = '\0';
    duet__csv_str(c, buf);
}

void duet__csv_names(duet__csv_t *c, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        duet__csv_str(c, names[i]);
    duet__csv_end(c);
}

void duet__csv_end(duet__csv_t *c)
{
    c->err |= fputc('\n', c->f) == EOF;
    c->fields = 0;
}
