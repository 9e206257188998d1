/*
 * The base layer's statistics and its bar chart (base/stats.c, base/plot.c), which duet bench
 * draws its makespans with. Positions are worked out by hand from the chart's geometry: 1100 px
 * wide, the axis from label_w to 1100 - 40 px, rows 20 px apart from y = 84, bars 7 px high.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "base/base.h"

Test(base_stats, median_of_odd_and_even_counts, T_TIMEOUT)
{
    double odd[] = {3.0, 1.0, 2.0};
    cr_assert_eq(duet__median(odd, 3), 2.0);
    /* Sorted in place: the caller's min and max are the ends. */
    cr_assert(odd[0] == 1.0 && odd[2] == 3.0);
    double even[] = {4.0, 1.0, 3.0, 2.0};
    cr_assert_eq(duet__median(even, 4), 2.5);
    double one[] = {7.25};
    cr_assert_eq(duet__median(one, 1), 7.25);
    cr_assert(isnan(duet__median(NULL, 0)));
}

static duet__hbars_t chart_of(const duet__hbar_row_t *rows, size_t n)
{
    duet__hbars_t c = {.title = "t",
                       .legend = {"first", "second"},
                       .colour = {"#111111", "#222222"},
                       .xmax = 2.5,
                       .tick = 0.25,
                       .ref = 1.0,
                       .label_w = 330,
                       .n = n,
                       .rows = rows};
    return c;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
        n++;
    return n;
}

Test(base_plot, bars_scale_to_the_axis, T_TIMEOUT)
{
    char path[256];
    t_tmp_path(path, sizeof(path), "hbars.svg");
    duet__hbar_row_t rows[2] = {{"a 1", {0.5, 2.0}, "0.25x"}, {"b <&> 2", {3.0, INFINITY}, "0.00x"}};
    duet__hbars_t c = chart_of(rows, 2);
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_OK, "%s", duet_last_error());
    char *svg = t_slurp(path);
    cr_assert_not_null(svg);
    /* Two rows: 84 + 2 x 20 + 60 px high. */
    cr_assert(strstr(svg, "width=\"1100\" height=\"184\"") != NULL, "%s", svg);
    /* The axis spans 1100 - 330 - 40 = 730 px for 0 to 2.5: 0.5 is 146 px, 2.0 is 584 px. */
    cr_assert(strstr(svg, "<rect x=\"330.0\" y=\"86.0\" width=\"146.0\" height=\"7.0\" fill=\"#111111\"/>") != NULL);
    cr_assert(strstr(svg, "<rect x=\"330.0\" y=\"94.0\" width=\"584.0\" height=\"7.0\" fill=\"#222222\"/>") != NULL);
    /* Row 1: 3.0 is cut at the axis' end (730 px); the infinite value has no bar. */
    cr_assert(strstr(svg, "<rect x=\"330.0\" y=\"106.0\" width=\"730.0\" height=\"7.0\" fill=\"#111111\"/>") != NULL);
    cr_assert_eq(count(svg, "fill=\"#222222\"/>"), 2); /* the legend's and row 0's */
    /* The note goes 4 px after the longer bar: 330 + 584 + 4, and 330 + 730 + 4 for row 1. */
    cr_assert(strstr(svg, "<text x=\"918.0\" y=\"96.0\" font-size=\"10\" font-family=\"sans-serif\">0.25x</text>") !=
              NULL);
    cr_assert(strstr(svg, "<text x=\"1064.0\" y=\"116.0\"") != NULL);
    /* Grid lines at 0, 0.25, ..., 2.5: eleven, the one at 1.0 (330 + 292 px) in red. */
    cr_assert_eq(count(svg, "<line "), 11);
    cr_assert(strstr(svg, "<line x1=\"622.0\" y1=\"78.0\" x2=\"622.0\" y2=\"124.0\" stroke=\"#d62728\"") != NULL);
    cr_assert_eq(count(svg, "#d62728"), 1);
    /* Labels are XML text. */
    cr_assert(strstr(svg, ">b &lt;&amp;&gt; 2</text>") != NULL);
    free(svg);
}

Test(base_plot, a_bad_axis_writes_nothing, T_TIMEOUT)
{
    char path[256];
    t_tmp_path(path, sizeof(path), "hbars-bad.svg");
    unlink(path);
    duet__hbar_row_t row = {"a", {1.0, 1.0}, ""};
    duet__hbars_t c = chart_of(&row, 1);
    c.tick = 0;
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_ERR_INVALID_ARG);
    c.tick = 0.25;
    c.xmax = NAN;
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_ERR_INVALID_ARG);
    c.xmax = 1e9; /* four billion grid lines */
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_ERR_INVALID_ARG);
    cr_assert_eq(access(path, F_OK), -1, "%s was written", path);
}
