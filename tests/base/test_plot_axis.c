/*
 * Round axes for the bar chart (1-2-5 steps ending just past the longest bar, worked out by hand
 * below), its axis title, and the timeline's labels: the makespan above the plot, the CTA groups named.
 */
#include <criterion/criterion.h>

#include "../cli_run.h"
#include "base/base.h"

Test(plot_axis, nice_steps_are_one_two_five, T_TIMEOUT)
{
    /* 1.8 / 8 = 0.225 -> 2 x 0.1; 286.4 / 10 = 28.6 -> 2 x 10; 7 / 10 = 0.7 -> 5 x 0.1; 0.013 / 8 -> 2 x 0.001. */
    cr_assert(fabs(duet__nice_step(1.8, 8) - 0.2) < 1e-12);
    cr_assert(fabs(duet__nice_step(286.4, 10) - 20) < 1e-12);
    cr_assert(fabs(duet__nice_step(7, 10) - 0.5) < 1e-12);
    cr_assert(fabs(duet__nice_step(0.013, 8) - 0.002) < 1e-15);
    cr_assert_eq(duet__nice_step(0, 8), 1.0);
    cr_assert_eq(duet__nice_step(INFINITY, 8), 1.0);
}

Test(plot_axis, the_axis_ends_past_the_longest_bar, T_TIMEOUT)
{
    duet__hbar_row_t rows[2] = {{.label = "a", .v = {1.8, 1.2}}, {.label = "b", .v = {NAN, 0.9}}};
    duet__hbars_t c = {
        .title = "t", .legend = {"x", "y"}, .colour = {"#111111", "#222222"}, .ref = 1.0, .n = 2, .rows = rows};
    /* Longest 1.8: tick 0.2; 1.8 is on a tick, and the notes have a column of their own: 1.8. */
    duet__hbars_auto_axis(&c);
    cr_assert(fabs(c.tick - 0.2) < 1e-12 && fabs(c.xmax - 1.8) < 1e-12, "%g %g", c.tick, c.xmax);
    /* 1.80007 (the largest ratio of bench/results/bench-h200-w2.json) is past 1.8: 2.0. */
    rows[0].v[0] = 1.80007;
    duet__hbars_auto_axis(&c);
    cr_assert(fabs(c.tick - 0.2) < 1e-12 && fabs(c.xmax - 2.0) < 1e-12, "%g %g", c.tick, c.xmax);
    /* Longest 1.3: tick 0.2 (1.3 / 8 = 0.1625 -> 2 x 0.1), the first tick at or past it 1.4. */
    rows[0].v[0] = 1.3;
    duet__hbars_auto_axis(&c);
    cr_assert(fabs(c.tick - 0.2) < 1e-12 && fabs(c.xmax - 1.4) < 1e-12, "%g %g", c.tick, c.xmax);
    /* The title is drawn when given. */
    char path[64];
    t_tmp_path(path, sizeof(path), "bars.svg");
    c.xlabel = "makespan / bound";
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_OK, "%s", duet_last_error());
    static char svg[1 << 16];
    t_cli_slurp(path, svg, sizeof(svg));
    cr_assert(strstr(svg, ">makespan / bound</text>") != NULL);
    cr_assert(strstr(svg, ">1.4</text>") != NULL && strstr(svg, ">1.40</text>") == NULL, "ticks as %%g");
    unlink(path);
}

Test(plot_axis, timeline_labels_cover_no_tile, T_TIMEOUT)
{
    static t_cli_t r;
    char path[64];
    static char svg[1 << 22];
    t_tmp_path(path, sizeof(path), "tl.svg");
    t_cli_run(&r, NULL, "simulate", "--collective", "all_gather", "--gemm", "4096x4096x4096", "--comm", "2048x4096",
              "--mode", "concurrent", "--gemm-wgs", "116", "--comm-wgs", "16", "--svg", path, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    t_cli_slurp(path, svg, sizeof(svg));
    /* The plot's first row starts at y = 64 + 34 = 98: the makespan's value sits above it (y 93). */
    const char *m = strstr(svg, ">makespan "); /* the panel's heading reads "predicted: makespan ..." */
    cr_assert_not_null(m, "%.3000s", svg);
    const char *open = m;
    while (open > svg && strncmp(open, "<text", 5) != 0)
        open--;
    double y = atof(strstr(open, "y=\"") + 3);
    cr_assert(y < 98.0, "the makespan label at y %g is inside the plot", y);
    /* The two kernels' CTAs named in the margin: 116 on the GEMM queue, 16 on the comm queue. */
    cr_assert(strstr(svg, ">GEMM home</text>") && strstr(svg, ">CTA 0-115</text>"));
    cr_assert(strstr(svg, ">comm home</text>") && strstr(svg, ">CTA 116-131</text>"));
    unlink(path);
}
