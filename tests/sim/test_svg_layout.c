/*
 * The simulator's pictures read back as geometry (tests/svg_geom.h): on the timeline no label
 * covers a tile or another label (the makespan's value, the CTA names on the left, the CTA groups
 * on the right), the comm kernel's rows are named, and the time axis runs in round steps to the
 * first tick at or past the last event; on the split curve the x axis does the same.
 */
#include <criterion/criterion.h>

#include "../cli_run.h"
#include "../svg_geom.h"
#include "duet/duet.h"

/* No text covers a tile (the rectangles inside the picture's <g>) or another text. */
static void expect_no_cover(const t_svg_t *g)
{
    size_t tiles = 0;
    for (size_t j = 0; j < g->n_rects; j++)
        tiles += g->rects[j].in_group;
    cr_assert(tiles > 0);
    for (size_t i = 0; i < g->n_texts; i++) {
        for (size_t j = 0; j < g->n_rects; j++)
            if (g->rects[j].in_group)
                cr_assert(!t_box_overlap(&g->texts[i].box, &g->rects[j].box),
                          "'%s' (x %g, y %g) covers a tile at %g, %g", g->texts[i].text, g->texts[i].x, g->texts[i].y,
                          g->rects[j].box.x0, g->rects[j].box.y0);
        for (size_t j = i + 1; j < g->n_texts; j++)
            cr_assert(!t_box_overlap(&g->texts[i].box, &g->texts[j].box), "'%s' (%g, %g) and '%s' (%g, %g) overlap",
                      g->texts[i].text, g->texts[i].x, g->texts[i].y, g->texts[j].text, g->texts[j].x, g->texts[j].y);
    }
}

/* The time axis under the panel whose axis title sits at y: round, 0 to the first tick at or past t_us. */
static void expect_round_time_axis(const t_svg_t *g, double title_y, double t_us)
{
    double v[128];
    char msg[160];
    size_t n = t_svg_numbers_at(g, title_y - 16, v, 128);
    cr_assert(t_round_ticks(v, n, 0, t_us, msg, sizeof(msg)), "%s", msg);
}

/*
 * `duet simulate` of all_gather GEMM + comm with `mode` (fused, concurrent), `gemm_wgs` and one more
 * option `opt` `val`, drawn: its picture read back into g, checked to cover no tile with a text.
 * @return the makespan in us (from --json).
 */
static double simulate_svg(const char *gemm, const char *comm, const char *mode, const char *gemm_wgs, const char *opt,
                           const char *val, t_svg_t *g)
{
    static t_cli_t r;
    static char svg[1 << 23];
    char path[64];
    t_tmp_path(path, sizeof(path), "timeline.svg");
    t_cli_run(&r, NULL, "simulate", "--collective", "all_gather", "--gemm", gemm, "--comm", comm, "--mode", mode,
              "--gemm-wgs", gemm_wgs, opt, val, "--svg", path, "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    double makespan_us = cJSON_GetObjectItemCaseSensitive(o, "makespan_us")->valuedouble;
    cJSON_Delete(o);
    t_cli_slurp(path, svg, sizeof(svg));
    unlink(path);
    t_svg_read(svg, g);
    expect_no_cover(g);
    return makespan_us;
}

Test(svg_layout, timeline_of_the_concurrent_kernels, T_TIMEOUT)
{
    t_svg_t g;
    double makespan_us = simulate_svg("4096x4096x4096", "2048x4096", "concurrent", "116", "--comm-wgs", "16", &g);
    /* The makespan's value ends at its line, in the strip above the plot (which starts at y 98). */
    const t_svg_text_t *m = t_svg_find_text(&g, "makespan ");
    cr_assert_not_null(m);
    cr_assert(m->box.y1 <= 98, "the makespan label reaches y %g", m->box.y1);
    /* Both kernels' rows named: the comm kernel's first CTA on the left, its range on the right. */
    cr_assert_not_null(t_svg_find_text(&g, "CTA 116"));
    cr_assert_not_null(t_svg_find_text(&g, "CTA 116-131"));
    cr_assert_not_null(t_svg_find_text(&g, "comm home"));
    const t_svg_text_t *title = t_svg_find_text(&g, "time (us)");
    cr_assert_not_null(title);
    expect_round_time_axis(&g, title->y, makespan_us);
    t_svg_free(&g);
}

Test(svg_layout, timeline_names_a_comm_group_of_two_rows, T_TIMEOUT)
{
    /* make demo's best configuration: fused, 130 CTAs on GEMM, 2 on comm: the comm group is the
     * plot's last 2 rows (8 px), too thin for its two-line label, which moves up into the margin's
     * free room (or down into the axis' band) instead of being left out. */
    t_svg_t g;
    (void)simulate_svg("8192x8192x8192", "4096x8192", "fused", "130", "--tile", "128x256x64", &g);
    cr_assert_not_null(t_svg_find_text(&g, "CTA 130-131"));
    cr_assert_not_null(t_svg_find_text(&g, "comm home"));
    cr_assert_not_null(t_svg_find_text(&g, "CTA 130"));
    t_svg_free(&g);
}

/* A CTA's tiles: `n` tiles of `dt` seconds back to back from 0, from `queue`. */
static void add_tiles(duet_trace_t *t, int cta, int queue, int stolen, int n, double dt)
{
    for (int k = 0; k < n; k++) {
        duet_trace_rec_t rec = {cta, cta, queue, stolen, k, k * dt, (k + 1) * dt};
        cr_assert_eq(duet_trace_add(t, &rec), DUET_OK);
    }
}

Test(svg_layout, timelines_of_many_small_groups_and_a_short_makespan, T_TIMEOUT)
{
    /* Two panels on one time axis: "short" ends at 30 us, "long" at 1000 us (the axis: 0 to 1000 by
     * 100). 132 CTAs (4.09 px rows) whose homes change every 1 to 3 rows: the groups are too thin
     * for a label each, so labels must give way rather than pile up. */
    duet_trace_t a, b;
    duet_trace_init(&a, "short");
    duet_trace_init(&b, "long");
    a.n_ctas = b.n_ctas = 132;
    for (int c = 0; c < 132; c++) {
        int q = (c / (1 + c % 3)) % 2;
        add_tiles(&a, c, q, 0, 3, 10e-6);
        add_tiles(&b, c, q, 0, 10, 100e-6);
    }
    a.makespan_s = 30e-6;
    b.makespan_s = 1000e-6;
    const duet_trace_t *both[2] = {&a, &b};
    char path[64];
    t_tmp_path(path, sizeof(path), "groups.svg");
    cr_assert_eq(duet_trace_write_svg(both, 2, "groups", path), DUET_OK, "%s", duet_last_error());
    char *svg = t_slurp(path);
    cr_assert_not_null(svg);
    t_svg_t g;
    t_svg_read(svg, &g);
    expect_no_cover(&g);
    /* The short panel's makespan (at 80 + 30 x 1000 / 1000 = 110 px) is too near the plot's left
     * edge for a label ending there: it starts there instead, inside the picture. */
    const t_svg_text_t *m = t_svg_find_text(&g, "makespan 30.0 us");
    cr_assert_not_null(m);
    cr_assert(m->box.x0 >= 80, "the label starts at x %g, left of the plot", m->box.x0);
    cr_assert_not_null(t_svg_find_text(&g, "makespan 1000.0 us"));
    /* Each panel names its first CTA and some groups on the right. */
    cr_assert_not_null(t_svg_find_text(&g, "CTA 0"));
    cr_assert_not_null(t_svg_find_text(&g, "GEMM home"));
    cr_assert_not_null(t_svg_find_text(&g, "comm home"));
    for (size_t i = 0; i < g.n_texts; i++)
        if (strcmp(g.texts[i].text, "time (us)") == 0)
            expect_round_time_axis(&g, g.texts[i].y, 1000);
    /* A group's label stays beside its run of rows (within 4 px of it): the plots (fill #f7f7f7)
     * have 132 rows each; a label "CTA a-b" (the second of its two lines, 11 px under the first)
     * names rows a to b of the plot it is beside. */
    double plot_y[2], plot_h[2];
    int plots = 0;
    for (size_t j = 0; j < g.n_rects && plots < 2; j++)
        if (strcmp(g.rects[j].fill, "#f7f7f7") == 0) {
            plot_y[plots] = g.rects[j].box.y0;
            plot_h[plots++] = g.rects[j].box.y1 - g.rects[j].box.y0;
        }
    cr_assert_eq(plots, 2);
    int named = 0;
    for (size_t i = 0; i < g.n_texts; i++) {
        int lo, hi;
        if (sscanf(g.texts[i].text, "CTA %d-%d", &lo, &hi) != 2)
            continue;
        int p = g.texts[i].y > plot_y[1] - 40;
        double rh = plot_h[p] / 132, y0 = plot_y[p] + lo * rh, y1 = plot_y[p] + (hi + 1) * rh;
        double top = g.texts[i].box.y0 - 12.5, bottom = g.texts[i].box.y1;
        cr_assert(top < y1 + 4 && bottom > y0 - 4, "'%s' (y %g to %g) is away from its rows (y %g to %g)",
                  g.texts[i].text, top, bottom, y0, y1);
        named++;
    }
    cr_assert(named >= 4, "%d groups named", named);
    t_svg_free(&g);
    free(svg);
    unlink(path);
    duet_trace_free(&a);
    duet_trace_free(&b);
}

Test(svg_layout, split_curve_axis_ends_on_a_round_tick, T_TIMEOUT)
{
    /* h200 has 132 SMs: the fused splits put 1 to 132 CTAs on the GEMM queue (at 132 the GEMM-home
     * CTAs steal every comm tile); a tick of 10 (132 / 10 -> 1 x 10) ends the axis at 140, the first
     * tick at or past 132. */
    duet_hw_t hw;
    cr_assert_eq(duet_hw_builtin("h200", &hw), DUET_OK);
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 1024, 4096, 2);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.modes = 1u << DUET_MODE_FUSED;
    sp.n_tiles = 1;
    sp.tiles[0] = (duet_gemm_tile_t){128, 128, 64};
    duet_sim_ws_t *ws = NULL;
    duet_sweep_result_t res;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    int32_t xmax = 0;
    for (size_t i = 0; i < res.n; i++)
        xmax = res.points[i].cfg.gemm_wgs > xmax ? res.points[i].cfg.gemm_wgs : xmax;
    cr_assert_eq(xmax, 132);
    char path[64];
    t_tmp_path(path, sizeof(path), "curve.svg");
    cr_assert_eq(duet_sweep_write_svg(&res, "curve", path), DUET_OK, "%s", duet_last_error());
    char *svg = t_slurp(path);
    t_svg_t g;
    t_svg_read(svg, &g);
    /* The x numbers sit 16 px under the plot (from y 90, 640 - 90 - 60 = 490 px high): y 596. */
    double v[64];
    char msg[160];
    size_t n = t_svg_numbers_at(&g, 596, v, 64);
    cr_assert(t_round_ticks(v, n, 0, xmax, msg, sizeof(msg)), "%s", msg);
    cr_assert(fabs(v[n - 1] - 140) < 1e-9, "%g", v[n - 1]);
    /* No two texts overlap (the legend, the notes, the numbers). */
    for (size_t i = 0; i < g.n_texts; i++)
        for (size_t j = i + 1; j < g.n_texts; j++)
            cr_assert(!t_box_overlap(&g.texts[i].box, &g.texts[j].box), "'%s' and '%s' overlap", g.texts[i].text,
                      g.texts[j].text);
    t_svg_free(&g);
    free(svg);
    unlink(path);
    duet_sweep_result_free(&res);
    duet_sim_ws_destroy(ws);
}

/* Occurrences of needle in hay. */
static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle))
        n++;
    return n;
}

/*
 * The split curve of fused mode (one tile, data-parallel and stream-K) and copy mode (the same
 * tile, 1 or 2 copy streams at W = 2): three series, two lines and the copies' diamonds. The
 * stream-K series is drawn thin in its sibling's colour and not listed, so the legend has two
 * entries (fused 256x256x64, copy 256x256x64) and the note on thin lines; copy mode's 2 points
 * share x = 132 and are diamonds (one path each, plus the legend's), not a line.
 */
Test(svg_layout, split_curve_lists_a_tile_once_and_draws_copies_as_points, T_TIMEOUT)
{
    duet_hw_t hw;
    cr_assert_eq(duet_hw_builtin("h200", &hw), DUET_OK);
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 4096, 8192, 2);
    duet_sweep_params_t sp = duet_sweep_default_params();
    sp.modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_COPY);
    sp.n_tiles = 1;
    sp.tiles[0] = (duet_gemm_tile_t){256, 256, 64};
    sp.n_split_ks = 2;
    sp.split_ks[0] = 1;
    sp.split_ks[1] = DUET_SWEEP_STREAM_K;
    sp.top = 0;
    duet_sim_ws_t *ws = NULL;
    duet_sweep_result_t res;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    cr_assert_eq(duet_sweep_run(ws, &hw, &wl, &sp, &res), DUET_OK, "%s", duet_last_error());
    size_t sk = 0, copies = 0;
    for (size_t i = 0; i < res.n; i++) {
        sk += res.points[i].cfg.stream_k != 0;
        copies += res.points[i].cfg.mode == DUET_MODE_COPY;
    }
    cr_assert(sk > 0, "the sweep has stream-K points of the tile");
    cr_assert_eq(copies, 2);
    char path[64];
    t_tmp_path(path, sizeof(path), "curve-sk.svg");
    cr_assert_eq(duet_sweep_write_svg(&res, "curve", path), DUET_OK, "%s", duet_last_error());
    char *svg = t_slurp(path);
    cr_assert_eq(count_of(svg, "<polyline"), 2, "fused and fused with stream-K");
    cr_assert_eq(count_of(svg, "stroke-width=\"0.8\""), 1, "the stream-K line is thin");
    cr_assert_eq(count_of(svg, "<path"), 3, "two copy points and the legend's diamond");
    cr_assert_eq(count_of(svg, ">fused 256x256x64<"), 1);
    cr_assert_eq(count_of(svg, ">copy 256x256x64<"), 1);
    cr_assert_eq(count_of(svg, "/sk<"), 0, "no legend entry of its own");
    cr_assert_eq(count_of(svg, "thin: the same tile with stream-K"), 1);
    free(svg);
    unlink(path);
    duet_sweep_result_free(&res);
    duet_sim_ws_destroy(ws);
}
