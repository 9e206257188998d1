/*
 * The result table (base/table.c): one description of the columns rendered as text, CSV and JSON.
 * Every expected string is written out by hand from the column formats.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../test_util.h"
#include "base/table.h"

/* A time in us shown in ms, a name with what CSV and JSON must escape, a text-only and a data-only column. */
static const duet__col_t cols[] = {
    {"name", NULL, NULL, "%-6s", DUET__CELL_STR, 0, 0},
    {"n", "count", NULL, " %5lld", DUET__CELL_INT, 0, 0},
    {"time_us", "time", "ms", " %8.3f", DUET__CELL_NUM, 1e-3, 0},
    {"share", "within", NULL, " %5.1f%%", DUET__CELL_NUM, 100, 0},
    {"note", NULL, NULL, "  %s", DUET__CELL_STR, 0, DUET__COL_TEXT | DUET__COL_DASH_EMPTY},
    {"fit", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA | DUET__COL_NULL_EMPTY},
};

static void fill(duet__table_t *t)
{
    duet__table_init(t, cols, (int)(sizeof(cols) / sizeof(cols[0])));
    duet__table_str(t, "a,b");
    duet__table_int(t, 12);
    duet__table_num(t, 1500);
    duet__table_num(t, 0.25);
    duet__table_str(t, "");
    duet__table_str(t, "");
    duet__table_strf(t, "say \"%s\"", "hi");
    duet__table_int(t, -3);
    duet__table_num(t, NAN);
    duet__table_num(t, 1);
    duet__table_str(t, "best");
    duet__table_str(t, "x\ny");
}

/* Render into a string (malloc'd). */
static char *render(const duet__table_t *t, duet__table_format_t format)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(duet__table_write(t, f, format, "duet-test/1", "rows"), DUET_OK);
    fclose(f);
    return buf;
}

Test(table, text_aligns_headers_with_units_over_the_values, T_TIMEOUT)
{
    duet__table_t t;
    fill(&t);
    cr_assert_eq(duet__table_rows(&t), 2);
    char *s = render(&t, DUET__TABLE_TEXT);
    /* "%-6s" left, " %5lld" right in 5, " %8.3f" right in 8 under "time ms", " %5.1f%%" right in 6
     * (the '%' sign counts), "  %s" unpadded; the data-only column is not shown. */
    const char *want = "name   count  time ms within  note\n"
                       "a,b       12    1.500  25.0%  -\n"
                       "say \"hi\"    -3      nan 100.0%  best\n";
    cr_assert_str_eq(s, want);
    free(s);
    duet__table_free(&t);
}

Test(table, csv_quotes_what_it_must_and_leaves_text_only_columns_out, T_TIMEOUT)
{
    duet__table_t t;
    fill(&t);
    char *s = render(&t, DUET__TABLE_CSV);
    /* Keys as the header; times in the data's unit (us, unscaled); NaN as an empty field. */
    const char *want = "name,n,time_us,share,fit\n"
                       "\"a,b\",12,1500,0.25,\n"
                       "\"say \"\"hi\"\"\",-3,,1,\"x\ny\"\n";
    cr_assert_str_eq(s, want);
    free(s);
    duet__table_free(&t);
}

Test(table, json_escapes_strings_and_writes_null_for_nan_and_empty, T_TIMEOUT)
{
    duet__table_t t;
    fill(&t);
    char *s = render(&t, DUET__TABLE_JSON);
    const char *want = "{\n"
                       "\t\"schema\":\t\"duet-test/1\",\n"
                       "\t\"rows\":\t[{\n"
                       "\t\t\t\"name\":\t\"a,b\",\n"
                       "\t\t\t\"n\":\t12,\n"
                       "\t\t\t\"time_us\":\t1500,\n"
                       "\t\t\t\"share\":\t0.25,\n"
                       "\t\t\t\"fit\":\tnull\n"
                       "\t\t}, {\n"
                       "\t\t\t\"name\":\t\"say \\\"hi\\\"\",\n"
                       "\t\t\t\"n\":\t-3,\n"
                       "\t\t\t\"time_us\":\tnull,\n"
                       "\t\t\t\"share\":\t1,\n"
                       "\t\t\t\"fit\":\t\"x\\ny\"\n"
                       "\t\t}]\n"
                       "}\n";
    cr_assert_str_eq(s, want);
    free(s);
    duet__table_free(&t);
}

Test(table, an_empty_table_has_a_csv_header_and_no_text, T_TIMEOUT)
{
    duet__table_t t;
    duet__table_init(&t, cols, (int)(sizeof(cols) / sizeof(cols[0])));
    char *s = render(&t, DUET__TABLE_TEXT);
    cr_assert_str_eq(s, "");
    free(s);
    s = render(&t, DUET__TABLE_CSV);
    cr_assert_str_eq(s, "name,n,time_us,share,fit\n");
    free(s);
    duet__table_free(&t);
    duet__table_free(&t); /* a freed table frees again as a no-op */
}
