/*
 * The base layer's statistics and its bar chart (base/stats.c, base/plot.c), which duet bench
 * draws its makespans with. Positions are worked out by hand from the chart's geometry
 * (base/base.h): 1100 px wide; left of the axis 20 px, the group names, 14 px, the labels at
 * 6.2 px a character (10 px x 0.62 em), 8 px; right of it 14 px, the notes' column, 20 px; rows
 * 12 px apart from y = 78, two bars of 5 px from 1 px into the row, 3 px more above each group
 * after the first, 42 px under the last row.
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
    duet__hbar_row_t rows[2] = {{"a 1", {0.5, 2.0}, "0.25x", ""}, {"b <&> 2", {3.0, INFINITY}, "0.00x", ""}};
    duet__hbars_t c = chart_of(rows, 2);
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_OK, "%s", duet_last_error());
    char *svg = t_slurp(path);
    cr_assert_not_null(svg);
    /* Two rows, one group: 78 + 2 x 12 + 42 = 144 px high. */
    cr_assert(strstr(svg, "width=\"1100\" height=\"144\"") != NULL, "%s", svg);
    /* The longest label, "b <&> 2", is 7 characters: 43.4 px, so the axis starts at 20 + 43.4 + 8 = 71.4.
     * The longest note, 5 characters (31 px), starts at 1100 - 20 - 31 = 1049: the axis ends at 1035,
     * 963.6 px for 0 to 2.5. 0.5 is 192.72 px, 2.0 is 770.88 px. */
    cr_assert(strstr(svg, "<rect x=\"71.4\" y=\"79.0\" width=\"192.7\" height=\"5.0\" fill=\"#111111\"/>") != NULL,
              "%s", svg);
    cr_assert(strstr(svg, "<rect x=\"71.4\" y=\"84.0\" width=\"770.9\" height=\"5.0\" fill=\"#222222\"/>") != NULL);
    /* Row 1 (y = 90): 3.0 is cut at the axis' end (963.6 px); the infinite value has no bar. */
    cr_assert(strstr(svg, "<rect x=\"71.4\" y=\"91.0\" width=\"963.6\" height=\"5.0\" fill=\"#111111\"/>") != NULL);
    cr_assert_eq(count(svg, "fill=\"#222222\"/>"), 2); /* the legend's and row 0's */
    /* The notes in their column, whatever the bars: x 1049, 9.5 px under each row's top. */
    cr_assert(strstr(svg, "<text x=\"1049.0\" y=\"87.5\" font-size=\"10\" font-family=\"monospace\">0.25x</text>") !=
              NULL);
    cr_assert(strstr(svg, "<text x=\"1049.0\" y=\"99.5\"") != NULL);
    /* Grid lines at 0, 0.25, ..., 2.5: eleven from 2 px above the first row to the last row's end
     * (102), the one at 1.0 (71.4 + 385.44 px) in red. */
    cr_assert_eq(count(svg, "<line "), 11);
    cr_assert(strstr(svg, "<line x1=\"456.8\" y1=\"76.0\" x2=\"456.8\" y2=\"102.0\" stroke=\"#d62728\"") != NULL);
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
    duet__hbar_row_t row = {"a", {1.0, 1.0}, "", ""};
    duet__hbars_t c = chart_of(&row, 1);
    c.tick = 0;
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_ERR_INVALID_ARG);
    c.tick = 0.25;
    c.xmax = NAN;
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_ERR_INVALID_ARG);
    c.xmax = 1e9; /* four billion grid lines */
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_ERR_INVALID_ARG);
    /* Labels so long that less than 300 px are left for the bars: 95 + 63 characters take
     * 20 + 390.6 + 14 + 589 + 8 px of the 1100. */
    c.xmax = 2.5;
    memset(row.label, 'x', sizeof(row.label) - 1);
    memset(row.group, 'g', sizeof(row.group) - 1);
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "for the bars") != NULL, "%s", duet_last_error());
    cr_assert_eq(access(path, F_OK), -1, "%s was written", path);
}
