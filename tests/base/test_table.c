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
    {"name", NULL, NULL, "%-6s", DUET__CELL_STR, 0, 0, NULL},
    {"n", "count", NULL, " %5lld", DUET__CELL_INT, 0, 0, NULL},
    {"time_us", "time", "ms", " %8.3f", DUET__CELL_NUM, 1e-3, 0, NULL},
    {"share", "within", NULL, " %5.1f%%", DUET__CELL_NUM, 100, 0, NULL},
    {"note", NULL, NULL, "  %s", DUET__CELL_STR, 0, DUET__COL_TEXT | DUET__COL_DASH_EMPTY, NULL},
    {"fit", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA | DUET__COL_NULL_EMPTY, NULL},
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

/*
 * Columns of one form each and a value shown twice: the rank first in CSV and last in JSON, a flag
 * CSV writes as 0/1 and JSON as a boolean, a member JSON writes only when set, a time CSV rounds.
 */
static const duet__col_t form_cols[] = {
    {"rank", NULL, NULL, "%4lld", DUET__CELL_INT, 0, DUET__COL_NO_JSON, NULL},
    {"steal", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_JSON, NULL},
    {"t_us", "t", "us", " %7.2f", DUET__CELL_NUM, 0, 0, "%.3f"},
    {"steal", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_CSV | DUET__COL_BOOL, NULL},
    {"stream_k", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_CSV | DUET__COL_OMIT_ZERO, NULL},
    {"rank", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
};

static void fill_forms(duet__table_t *t)
{
    duet__table_init(t, form_cols, (int)(sizeof(form_cols) / sizeof(form_cols[0])));
    const long long rank[2] = {1, 12}, steal[2] = {1, 0}, stream_k[2] = {0, 1};
    const double t_us[2] = {12.3456, NAN};
    for (int r = 0; r < 2; r++) {
        duet__table_int(t, rank[r]);
        duet__table_int(t, steal[r]);
        duet__table_num(t, t_us[r]);
        duet__table_int(t, steal[r]);
        duet__table_int(t, stream_k[r]);
        duet__table_int(t, rank[r]);
    }
}

Test(table, columns_of_one_form_keep_each_forms_members_and_order, T_TIMEOUT)
{
    duet__table_t t;
    fill_forms(&t);
    /* Text: "%4lld" under "rank", " %7.2f" under "t us" (right in 7); the data columns are not shown. */
    char *s = render(&t, DUET__TABLE_TEXT);
    cr_assert_str_eq(s, "rank    t us\n"
                        "   1   12.35\n"
                        "  12     nan\n");
    free(s);
    /* CSV: rank and steal as integers, the time by "%.3f" (printf's "nan" for NaN); no JSON-only columns. */
    s = render(&t, DUET__TABLE_CSV);
    cr_assert_str_eq(s, "rank,steal,t_us\n"
                        "1,1,12.346\n"
                        "12,0,nan\n");
    free(s);
    /* JSON: the time unrounded, steal as a boolean, stream_k only where 1, the rank last. */
    s = render(&t, DUET__TABLE_JSON);
    cr_assert_str_eq(s, "{\n"
                        "\t\"schema\":\t\"duet-test/1\",\n"
                        "\t\"rows\":\t[{\n"
                        "\t\t\t\"t_us\":\t12.3456,\n"
                        "\t\t\t\"steal\":\ttrue,\n"
                        "\t\t\t\"rank\":\t1\n"
                        "\t\t}, {\n"
                        "\t\t\t\"t_us\":\tnull,\n"
                        "\t\t\t\"steal\":\tfalse,\n"
                        "\t\t\t\"stream_k\":\t1,\n"
                        "\t\t\t\"rank\":\t12\n"
                        "\t\t}]\n"
                        "}\n");
    free(s);
    duet__table_free(&t);
}

/* The text in parts: the header alone (also over no rows), then ranges of rows without it. */
Test(table, text_in_parts_writes_the_header_and_ranges_of_rows_alone, T_TIMEOUT)
{
    duet__table_t t;
    duet__table_init(&t, cols, (int)(sizeof(cols) / sizeof(cols[0])));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    /* An empty table: the header (as in the text of two rows above), no rows. */
    cr_assert_eq(duet__table_text_head(&t, f), DUET_OK);
    cr_assert_eq(duet__table_text_rows(&t, f, 0, 5), DUET_OK);
    duet__table_free(&t);
    fill(&t);
    /* The second row, then the first, then a range past the end (nothing), then one that runs past it. */
    cr_assert_eq(duet__table_text_rows(&t, f, 1, 1), DUET_OK);
    cr_assert_eq(duet__table_text_rows(&t, f, 0, 1), DUET_OK);
    cr_assert_eq(duet__table_text_rows(&t, f, 2, 1), DUET_OK);
    cr_assert_eq(duet__table_text_rows(&t, f, 1, (size_t)-1), DUET_OK);
    fclose(f);
    const char *want = "name   count  time ms within  note\n"
                       "say \"hi\"    -3      nan 100.0%  best\n"
                       "a,b       12    1.500  25.0%  -\n"
                       "say \"hi\"    -3      nan 100.0%  best\n";
    cr_assert_str_eq(buf, want);
    free(buf);
    duet__table_free(&t);
}
