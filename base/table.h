/*
 * A result as a table (base/table.c): columns described once (key, header, unit, format) and rows
 * of cells, rendered by one function as text for people, CSV or JSON. Internal to duet: the CLI's
 * commands build their results with it instead of writing each one three times.
 *
 * Text: every column's format is one printf conversion with the literal text around it, e.g.
 * " %9.4f" (a space, then the value) or "   %8.1f%%"; the header is written over the value's whole
 * width, aligned as the value is ('-' flag: left), as "HEADER UNIT" when the column has a unit.
 * CSV: a header record of the keys, then one record per row (base/csv.c's quoting). JSON: an array
 * of one object per row, a member per column under its key (a number that is not finite: null).
 * A column may appear in the text only (e.g. "8192x8192x8192" where the data has m, n and k) or in
 * the data only (CSV and JSON), or be left out of CSV or of JSON, so that each form keeps the content
 * and the order of members that people and scripts read (a value may then be two columns, one per form).
 */
#ifndef DUET_BASE_TABLE_H
#define DUET_BASE_TABLE_H

#include <stdio.h>

#include "duet/status.h"

struct cJSON;

/* What a column's cells hold: the text format's conversion takes a char *, a long long or a double. */
typedef enum duet__cell_kind { DUET__CELL_STR, DUET__CELL_INT, DUET__CELL_NUM } duet__cell_kind_t;

enum {
    DUET__COL_TEXT = 1u << 0,       /* in the text only */
    DUET__COL_DATA = 1u << 1,       /* in CSV and JSON only */
    DUET__COL_NULL_EMPTY = 1u << 2, /* JSON: null for an empty string */
    DUET__COL_DASH_EMPTY = 1u << 3, /* text: "-" for an empty string */
    DUET__COL_NO_CSV = 1u << 4,     /* left out of CSV (with DUET__COL_DATA: in JSON only) */
    DUET__COL_NO_JSON = 1u << 5,    /* left out of JSON (with DUET__COL_DATA: in CSV only) */
    DUET__COL_BOOL = 1u << 6,       /* an integer column that JSON writes as false (0) or true */
    DUET__COL_OMIT_ZERO = 1u << 7,  /* JSON: no member for an integer 0 (a member written only when set) */
};

typedef struct duet__col {
    const char *key;    /* CSV header and JSON member */
    const char *header; /* text header (NULL: the key) */
    const char *unit;   /* text unit after the header ("ms"), NULL for none */
    const char *fmt;    /* text: literal text, one printf conversion of the cell's kind, literal text */
    duet__cell_kind_t kind;
    double text_scale;   /* text shows value * text_scale (0: 1), e.g. 1e-3 for a time in us shown in ms */
    unsigned flags;      /* DUET__COL_* */
    const char *csv_fmt; /* CSV: one printf conversion of a number ("%.3f"); NULL: base/csv.c's form */
} duet__col_t;

typedef struct duet__cell {
    char *s;
    long long i;
    double v;
} duet__cell_t;

typedef struct duet__table {
    const duet__col_t *cols;
    int n_cols;
    duet__cell_t *cells; /* row-major, n_rows * n_cols when every row is complete */
    size_t n_cells, cap;
    duet_status_t st; /* the first failure of an append (out of memory), reported by the renderers */
} duet__table_t;

typedef enum duet__table_format { DUET__TABLE_TEXT, DUET__TABLE_CSV, DUET__TABLE_JSON } duet__table_format_t;

void duet__table_init(duet__table_t *t, const duet__col_t *cols, int n_cols);
void duet__table_free(duet__table_t *t);
/* Append the next cell of the current row (columns in order; a row ends after its last column). */
void duet__table_str(duet__table_t *t, const char *s);
void duet__table_strf(duet__table_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void duet__table_int(duet__table_t *t, long long v);
void duet__table_num(duet__table_t *t, double v);
/** Rows complete so far. */
size_t duet__table_rows(const duet__table_t *t);

/** The header line and the rows as text, each line ending in "\n" (no header for an empty table). */
duet_status_t duet__table_text(const duet__table_t *t, FILE *f);
/** The table as CSV: a header record of the keys, then the rows. */
duet_status_t duet__table_csv(const duet__table_t *t, FILE *f);
/** The rows as a JSON array of objects (NULL when out of memory). */
struct cJSON *duet__table_cjson(const duet__table_t *t);
/**
 * The rows as member `member` of object o (after its members so far), and the table freed.
 * @return 1, or 0 when out of memory (o is left without the member; nothing leaks).
 */
int duet__table_cjson_take(duet__table_t *t, struct cJSON *o, const char *member);
/**
 * The one renderer: text or CSV as above, or JSON as the document {"schema": SCHEMA, MEMBER: rows}
 * followed by a newline (cJSON's layout).
 */
duet_status_t duet__table_write(const duet__table_t *t, FILE *f, duet__table_format_t format, const char *schema,
                                const char *member);
/** The text's header line alone, whether or not there are rows. */
duet_status_t duet__table_text_head(const duet__table_t *t, FILE *f);
/** Rows first to first + n - 1 as text (those that exist), without the header. */
duet_status_t duet__table_text_rows(const duet__table_t *t, FILE *f, size_t first, size_t n);

#endif /* DUET_BASE_TABLE_H */
