/*
 * A result as a table: one description of its columns, one renderer for text, CSV and JSON
 * (base/table.h says what each form looks like).
 */
#include "base/table.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

void duet__table_init(duet__table_t *t, const duet__col_t *cols, int n_cols)
{
    memset(t, 0, sizeof(*t));
    t->cols = cols;
    t->n_cols = n_cols;
}

void duet__table_free(duet__table_t *t)
{
    for (size_t i = 0; i < t->n_cells; i++)
        free(t->cells[i].s);
    free(t->cells);
    memset(t, 0, sizeof(*t));
}

/* The next cell, or NULL once an append has failed (the failure sticks in t->st). */
static duet__cell_t *duet__table_next(duet__table_t *t)
{
    if (t->st < 0 || t->n_cols <= 0)
        return NULL;
    if (t->n_cells == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16 * (size_t)t->n_cols;
        duet__cell_t *c = realloc(t->cells, cap * sizeof(*c));
        if (c == NULL) {
            t->st = duet__error(DUET_ERR_NO_MEMORY, "table: cannot allocate %zu cells", cap);
            return NULL;
        }
        t->cells = c;
        t->cap = cap;
    }
    duet__cell_t *c = &t->cells[t->n_cells++];
    memset(c, 0, sizeof(*c));
    return c;
}

void duet__table_str(duet__table_t *t, const char *s)
{
    duet__cell_t *c = duet__table_next(t);
    if (c == NULL)
        return;
    c->s = strdup(s != NULL ? s : "");
    if (c->s == NULL)
        t->st = duet__error(DUET_ERR_NO_MEMORY, "table: cannot copy a cell");
}

void duet__table_strf(duet__table_t *t, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    duet__table_str(t, buf);
}

void duet__table_int(duet__table_t *t, long long v)
{
    duet__cell_t *c = duet__table_next(t);
    if (c != NULL)
        c->i = v;
}

void duet__table_num(duet__table_t *t, double v)
{
    duet__cell_t *c = duet__table_next(t);
    if (c != NULL)
        c->v = v;
}

size_t duet__table_rows(const duet__table_t *t)
{
    return t->n_cols > 0 ? t->n_cells / (size_t)t->n_cols : 0;
}

/* A column's text format split around its one conversion: prefix, the conversion, suffix. */
typedef struct duet__fmt_parts {
    size_t pre_len;  /* literal text before the '%' */
    size_t conv_len; /* the conversion, '%' to its letter */
    int width, left;
    int suffix_width; /* the literal text after it as printed ("%%" is one character) */
} duet__fmt_parts_t;

static void duet__fmt_split(const char *fmt, duet__fmt_parts_t *p)
{
    memset(p, 0, sizeof(*p));
    const char *s = fmt;
    while (*s != '\0' && !(s[0] == '%' && s[1] != '%'))
        s += s[0] == '%' ? 2 : 1; /* "%%" before the conversion is literal */
    p->pre_len = (size_t)(s - fmt);
    const char *c = s + (*s == '%');
    for (; *c != '\0' && strchr("-+ #0", *c) != NULL; c++)
        p->left |= *c == '-';
    for (; isdigit((unsigned char)*c); c++)
        p->width = p->width * 10 + (*c - '0');
    while (*c != '\0' && !isalpha((unsigned char)*c))
        c++; /* precision */
    while (*c == 'l' || *c == 'h' || *c == 'z')
        c++; /* length */
    c += *c != '\0';
    p->conv_len = (size_t)(c - s);
    for (; *c != '\0'; c++) {
        p->suffix_width++;
        c += c[0] == '%' && c[1] == '%';
    }
}

/* Whether a column is in the text, in CSV or in JSON. */
enum { DUET__FORM_TEXT, DUET__FORM_CSV, DUET__FORM_JSON };

static int duet__col_in(const duet__col_t *col, int form)
{
    static const unsigned out[] = {DUET__COL_DATA, DUET__COL_TEXT | DUET__COL_NO_CSV,
                                   DUET__COL_TEXT | DUET__COL_NO_JSON};
    return !(col->flags & out[form]);
}

static void duet__table_text_header(const duet__table_t *t, FILE *f)
{
    for (int j = 0; j < t->n_cols; j++) {
        const duet__col_t *col = &t->cols[j];
        if (!duet__col_in(col, DUET__FORM_TEXT))
            continue;
        duet__fmt_parts_t p;
        duet__fmt_split(col->fmt, &p);
        char head[128];
        snprintf(head, sizeof(head), "%s%s%s", col->header ? col->header : col->key, col->unit ? " " : "",
                 col->unit ? col->unit : "");
        /* The header's width is the value's with the literal text after it, aligned as the value is. */
        fprintf(f, "%.*s%*s", (int)p.pre_len, col->fmt, (p.left ? -1 : 1) * (p.width + p.suffix_width), head);
    }
    fputc('\n', f);
}

static void duet__table_text_cell(const duet__col_t *col, const duet__cell_t *c, FILE *f)
{
    double scale = col->text_scale != 0 ? col->text_scale : 1;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (col->kind == DUET__CELL_STR)
        fprintf(f, col->fmt, c->s[0] == '\0' && (col->flags & DUET__COL_DASH_EMPTY) ? "-" : c->s);
    else if (col->kind == DUET__CELL_INT)
        fprintf(f, col->fmt, c->i);
    else
        fprintf(f, col->fmt, c->v * scale);
#pragma GCC diagnostic pop
}

duet_status_t duet__table_text(const duet__table_t *t, FILE *f)
{
    if (t->st < 0)
        return t->st;
    size_t rows = duet__table_rows(t);
    if (rows > 0)
        duet__table_text_header(t, f);
    for (size_t r = 0; r < rows; r++) {
        for (int j = 0; j < t->n_cols; j++)
            if (duet__col_in(&t->cols[j], DUET__FORM_TEXT))
                duet__table_text_cell(&t->cols[j], &t->cells[r * (size_t)t->n_cols + (size_t)j], f);
        fputc('\n', f);
    }
    return DUET_OK;
}

/* A number in CSV through the column's own conversion (a NaN as printf writes it). */
static void duet__table_csv_fmt(duet__csv_t *c, const char *fmt, double v)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    duet__csv_printf(c, fmt, v);
#pragma GCC diagnostic pop
}

duet_status_t duet__table_csv(const duet__table_t *t, FILE *f)
{
    if (t->st < 0)
        return t->st;
    duet__csv_t c;
    duet__csv_init(&c, f);
    for (int j = 0; j < t->n_cols; j++)
        if (duet__col_in(&t->cols[j], DUET__FORM_CSV))
            duet__csv_str(&c, t->cols[j].key);
    duet__csv_end(&c);
    size_t rows = duet__table_rows(t);
    for (size_t r = 0; r < rows; r++) {
        for (int j = 0; j < t->n_cols; j++) {
            const duet__col_t *col = &t->cols[j];
            const duet__cell_t *cell = &t->cells[r * (size_t)t->n_cols + (size_t)j];
            if (!duet__col_in(col, DUET__FORM_CSV))
                continue;
            if (col->kind == DUET__CELL_STR)
                duet__csv_str(&c, cell->s);
            else if (col->kind == DUET__CELL_INT)
                duet__csv_printf(&c, "%lld", cell->i);
            else if (col->csv_fmt != NULL)
                duet__table_csv_fmt(&c, col->csv_fmt, cell->v);
            else
                duet__csv_num(&c, cell->v);
        }
        duet__csv_end(&c);
    }
    return DUET_OK;
}

static void duet__table_cjson_cell(cJSON *o, const duet__col_t *col, const duet__cell_t *c)
{
    if (col->kind == DUET__CELL_STR) {
        if (c->s[0] == '\0' && (col->flags & DUET__COL_NULL_EMPTY))
            cJSON_AddNullToObject(o, col->key);
        else
            cJSON_AddStringToObject(o, col->key, c->s);
    } else if (col->kind == DUET__CELL_INT) {
        if (c->i == 0 && (col->flags & DUET__COL_OMIT_ZERO))
            return;
        if (col->flags & DUET__COL_BOOL)
            cJSON_AddBoolToObject(o, col->key, c->i != 0);
        else
            cJSON_AddNumberToObject(o, col->key, (double)c->i);
    } else if (isfinite(c->v)) {
        cJSON_AddNumberToObject(o, col->key, c->v);
    } else {
        cJSON_AddNullToObject(o, col->key); /* JSON has no NaN */
    }
}

cJSON *duet__table_cjson(const duet__table_t *t)
{
    if (t->st < 0)
        return NULL;
    cJSON *arr = cJSON_CreateArray();
    size_t rows = duet__table_rows(t);
    for (size_t r = 0; arr != NULL && r < rows; r++) {
        cJSON *o = cJSON_CreateObject();
        if (o == NULL || !cJSON_AddItemToArray(arr, o)) {
            cJSON_Delete(o);
            cJSON_Delete(arr);
            return NULL;
        }
        for (int j = 0; j < t->n_cols; j++)
            if (duet__col_in(&t->cols[j], DUET__FORM_JSON))
                duet__table_cjson_cell(o, &t->cols[j], &t->cells[r * (size_t)t->n_cols + (size_t)j]);
    }
    return arr;
}

int duet__table_cjson_take(duet__table_t *t, cJSON *o, const char *member)
{
    cJSON *rows = duet__table_cjson(t);
    duet__table_free(t);
    if (rows == NULL || !cJSON_AddItemToObject(o, member, rows)) {
        cJSON_Delete(rows);
        return 0;
    }
    return 1;
}

duet_status_t duet__table_write(const duet__table_t *t, FILE *f, duet__table_format_t format, const char *schema,
                                const char *member)
{
    if (format == DUET__TABLE_TEXT)
        return duet__table_text(t, f);
    if (format == DUET__TABLE_CSV)
        return duet__table_csv(t, f);
    if (t->st < 0)
        return t->st;
    cJSON *doc = cJSON_CreateObject(), *rows = duet__table_cjson(t);
    char *text = NULL;
    if (doc != NULL && rows != NULL) {
        cJSON_AddStringToObject(doc, "schema", schema);
        cJSON_AddItemToObject(doc, member, rows);
        rows = NULL;
        text = cJSON_Print(doc);
    }
    cJSON_Delete(rows);
    cJSON_Delete(doc);
    if (text == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "table: cannot write JSON");
    fprintf(f, "%s\n", text);
    cJSON_free(text);
    return DUET_OK;
}

/* The text in parts: the header alone, a range of rows alone (for prose between a table's rows, or
 * a header that stands over no rows). */
duet_status_t duet__table_text_head(const duet__table_t *t, FILE *f)
{
    if (t->st < 0)
        return t->st;
    duet__table_text_header(t, f);
    return DUET_OK;
}

duet_status_t duet__table_text_rows(const duet__table_t *t, FILE *f, size_t first, size_t n)
{
    if (t->st < 0)
        return t->st;
    size_t rows = duet__table_rows(t), end = first + n < first || first + n > rows ? rows : first + n;
    for (size_t r = first; r < end; r++) {
        for (int j = 0; j < t->n_cols; j++)
            if (duet__col_in(&t->cols[j], DUET__FORM_TEXT))
                duet__table_text_cell(&t->cols[j], &t->cells[r * (size_t)t->n_cols + (size_t)j], f);
        fputc('\n', f);
    }
    return DUET_OK;
}
