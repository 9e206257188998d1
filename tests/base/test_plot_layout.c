/*
 * The bar chart's layout at the size duet bench draws it: the reference shape set's 15 shapes x 5
 * collectives, 75 rows. Every row stays (its label and its two bars), the picture fits one
 * 1920 x 1080 screen's height, no text covers a bar or another text, and the axis' numbers are round.
 */
#include <criterion/criterion.h>

#include "../svg_geom.h"
#include "../test_util.h"
#include "base/base.h"

static const char *const colls[5] = {"all_gather", "all_reduce", "reduce_scatter", "all_to_all", "broadcast"};

Test(plot_layout, seventy_five_rows_fit_a_screen_and_no_text_covers_a_bar, T_TIMEOUT)
{
    static duet__hbar_row_t rows[75];
    for (int i = 0; i < 75; i++) {
        /* The longest shape name of the reference set (33 characters), and ratios 0.90 to 1.64. */
        snprintf(rows[i].group, sizeof(rows[i].group), "16384x16384x%d, comm 2048x16384", 16370 + i / 5);
        snprintf(rows[i].label, sizeof(rows[i].label), "%s", colls[i % 5]);
        rows[i].v[0] = 0.90 + 0.01 * i;
        rows[i].v[1] = 1.0;
        snprintf(rows[i].note, sizeof(rows[i].note), "%.2fx", rows[i].v[0]);
    }
    duet__hbars_t c = {.title = "75 workloads",
                       .legend = {"vendor", "duet"},
                       .colour = {"#9d9d9d", "#4c78a8"},
                       .ref = 1.0,
                       .xlabel = "makespan / bound",
                       .note_title = "vendor / duet",
                       .n = 75,
                       .rows = rows};
    /* 1.64 / 8 = 0.205: a tick of 2 x 0.1, and the first tick at or past 1.64 is 1.8. */
    duet__hbars_auto_axis(&c);
    cr_assert(fabs(c.tick - 0.2) < 1e-12 && fabs(c.xmax - 1.8) < 1e-12, "%g %g", c.tick, c.xmax);
    /* 78 px of title and legend, 75 rows of 12 px, 14 gaps of 3 px between the 15 groups, 42 px
     * of axis: 1062 px, within a full-HD screen's 1080 (the 20 px row pitch before was 1644 px). */
    cr_assert(fabs(duet__hbars_height(&c) - 1062) < 1e-9, "%g", duet__hbars_height(&c));
    cr_assert(duet__hbars_height(&c) <= 1080);

    char path[256];
    t_tmp_path(path, sizeof(path), "bars75.svg");
    cr_assert_eq(duet__svg_hbars_write(&c, path), DUET_OK, "%s", duet_last_error());
    char *svg = t_slurp(path);
    cr_assert_not_null(svg);
    cr_assert(strstr(svg, "height=\"1062\"") != NULL);
    t_svg_t g;
    t_svg_read(svg, &g);
    /* Every row: 150 bars of 5 px, 75 labels, 15 group names, 75 notes. */
    size_t bars = 0, labels = 0, groups = 0, notes = 0;
    for (size_t i = 0; i < g.n_rects; i++)
        bars += fabs(g.rects[i].box.y1 - g.rects[i].box.y0 - 5) < 1e-9;
    for (size_t i = 0; i < g.n_texts; i++) {
        for (int k = 0; k < 5; k++)
            labels += strcmp(g.texts[i].text, colls[k]) == 0;
        groups += strncmp(g.texts[i].text, "16384x16384x", 12) == 0;
        notes += strchr(g.texts[i].text, 'x') != NULL && g.texts[i].text[1] == '.';
    }
    cr_assert(bars == 150 && labels == 75 && groups == 15 && notes == 75, "%zu %zu %zu %zu", bars, labels, groups,
              notes);
    /* No text on a bar, no text on another text. */
    for (size_t i = 0; i < g.n_texts; i++) {
        for (size_t j = 0; j < g.n_rects; j++)
            if (fabs(g.rects[j].box.y1 - g.rects[j].box.y0 - 5) < 1e-9)
                cr_assert(!t_box_overlap(&g.texts[i].box, &g.rects[j].box), "'%s' covers a bar at y %g",
                          g.texts[i].text, g.rects[j].box.y0);
        for (size_t j = i + 1; j < g.n_texts; j++)
            cr_assert(!t_box_overlap(&g.texts[i].box, &g.texts[j].box), "'%s' and '%s' overlap", g.texts[i].text,
                      g.texts[j].text);
    }
    /* The numbers under the last row (its end 1062 - 42 = 1020, 13 px lower) are round, 0 to 1.8. */
    double v[64];
    char msg[128];
    size_t n = t_svg_numbers_at(&g, 1033, v, 64);
    cr_assert(t_round_ticks(v, n, 0, 1.64, msg, sizeof(msg)), "%s", msg);
    cr_assert(n == 10 && fabs(v[9] - 1.8) < 1e-12, "%zu ticks to %g", n, v[n - 1]);
    t_svg_free(&g);
    free(svg);
    unlink(path);
}

Test(plot_layout, round_ticks_are_checked, T_TIMEOUT)
{
    /* The checker itself: the clocks picture's old ticks (-0.4, 0.3, 1.0, the window cut in fifths)
     * and an axis that stops short of its data fail; 0, 2.5, 5 and 0, 0.2, ..., 2.0 pass. */
    char msg[128];
    double fifths[] = {-0.4, 0.3, 1.0, 1.7, 2.5, 3.2};
    cr_assert(!t_round_ticks(fifths, 6, -0.4, 3.2, msg, sizeof(msg)));
    double quarter[] = {0, 2.5, 5};
    cr_assert(t_round_ticks(quarter, 3, 0, 4.1, msg, sizeof(msg)), "%s", msg);
    cr_assert(!t_round_ticks(quarter, 3, 0, 5.1, msg, sizeof(msg)));
    cr_assert(!t_round_ticks(quarter, 3, 0, 2.4, msg, sizeof(msg)), "the axis runs a whole step past 2.4");
    double fifth[11];
    for (int i = 0; i <= 10; i++)
        fifth[i] = 0.2 * i;
    cr_assert(t_round_ticks(fifth, 11, 0, 1.80007, msg, sizeof(msg)), "%s", msg);
    cr_assert(!t_round_ticks(fifth, 11, 0, 1.5, msg, sizeof(msg)));
}
