/*
 * Pictures: the Gantt chart of one or more timelines, and the split curve of a sweep. Plain
 * SVG 1.1 written by hand, so it opens in any browser and converts with rsvg-convert.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "sim/internal.h"

#define COL_GEMM "#4c78a8"
#define COL_GEMM_STOLEN "#1b3a5c"
#define COL_COMM "#f58518"
#define COL_COMM_STOLEN "#8c4400"
#define COL_MAKESPAN "#d62728"
#define FONT "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""

/* Axis ticks are at from + i * step for i = 0 .. duet__ticks(from, to, step), at most 100 of them
 * whatever the numbers: a loop that adds the step to a running value would not end where the step
 * is below the value's resolution, or where the span is infinite. */
#define DUET__MAX_TICKS 100
static int duet__ticks(double from, double to, double step)
{
    double n = floor((to - from) / step);
    return n >= 0 && n <= DUET__MAX_TICKS ? (int)n : n > DUET__MAX_TICKS ? DUET__MAX_TICKS : 0;
}

/* A text's width in px at `size` px, estimated (an SVG writer has no font metrics): 0.62 em a
 * character, a little over DejaVu Sans' digits (0.636 em is the widest of them, most letters are
 * narrower), so a text placed by it clears what it must not cover. */
static double duet__text_w(const char *s, double size)
{
    return (double)strlen(s) * size * 0.62;
}

static void duet__svg_head(duet__sbuf_t *b, double w, double h, const char *title)
{
    duet__sbuf_printf(
        b,
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
        "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"white\"/>\n"
        "<text x=\"%.0f\" y=\"24\" font-size=\"16\" font-weight=\"bold\" %s>",
        w, h, w, h, w, h, 20.0, FONT);
    duet__sbuf_xml(b, title ? title : "");
    duet__sbuf_printf(b, "</text>\n");
}

static void duet__legend_box(duet__sbuf_t *b, double x, double y, const char *fill, const char *label)
{
    duet__sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>", x, y, fill);
    duet__sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" %s>%s</text>\n", x + 18, y + 9.5, FONT, label);
}

/*
 * The queue each CTA row starts on (its home): the queue of its first tile, or the other one when
 * that tile was stolen; -1 for a CTA that ran no tile. NULL when out of memory (then no groups).
 */
static signed char *duet__svg_homes(const duet_trace_t *t, int rows)
{
    signed char *home = malloc((size_t)rows);
    if (home == NULL)
        return NULL;
    memset(home, -1, (size_t)rows);
    for (size_t j = 0; j < t->n; j++) {
        const duet_trace_rec_t *r = &t->recs[j];
        if (r->cta >= 0 && r->cta < rows && home[r->cta] < 0)
            home[r->cta] = (signed char)(r->stolen ? 1 - r->queue : r->queue);
    }
    return home;
}

/*
 * Label each run of CTAs with the same home in the right margin: a bar in the queue's colour
 * beside the run, and its name and CTA range (two 10 px lines, 22 px) centred on it where there is
 * room. A label moves down below the one before it, and up to end by `limit` (under the plot, in
 * the axis' band: the axis' numbers end left of the margin), but not so far that it leaves its run
 * (it must reach within 4 px of it); one that fits none of these is left out and its bar still
 * shows the run.
 */
static void duet__svg_groups(duet__sbuf_t *b, const signed char *home, int rows, double x, double py, double rh,
                             double limit)
{
    double free_y = py; /* labels are drawn from free_y down */
    for (int r = 0; home != NULL && r < rows;) {
        int e = r;
        while (e < rows && home[e] == home[r])
            e++;
        const char *col = home[r] == DUET_QUEUE_GEMM ? COL_GEMM : home[r] == DUET_QUEUE_COMM ? COL_COMM : "#bbb";
        const char *name = home[r] == DUET_QUEUE_GEMM ? "GEMM" : home[r] == DUET_QUEUE_COMM ? "comm" : "idle";
        double y0 = py + r * rh, y1 = py + e * rh;
        duet__sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"4\" height=\"%.1f\" fill=\"%s\"/>", x, y0 + 0.5,
                          fmax(0.5, y1 - y0 - 1.0), col);
        double ly = fmin(fmax((y0 + y1) / 2 - 11, free_y), limit - 22);
        if (ly >= free_y && ly < y1 + 4 && ly + 22 > y0 - 4) {
            duet__sbuf_printf(b,
                              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" %s>%s home</text>"
                              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#555\" %s>CTA %d-%d</text>\n",
                              x + 8, ly + 9, FONT, name, x + 8, ly + 20, FONT, r, e - 1);
            free_y = ly + 22;
        }
        r = e;
    }
}

duet_status_t duet_trace_write_svg(const duet_trace_t *const *traces, int n, const char *title, const char *path)
{
    if (n < 1)
        return duet__error(DUET_ERR_INVALID_ARG, "%s: no timeline to draw", path);
    /* The right margin holds the labels of the CTA groups (which queue each CTA starts on). */
    const double W = 1200, left = 80, right = 120, top = 64, axis_h = 44, panel_gap = 40;
    double tmax = 0;
    for (int i = 0; i < n; i++) {
        tmax = fmax(tmax, traces[i]->makespan_s);
        for (size_t j = 0; j < traces[i]->n; j++)
            tmax = fmax(tmax, traces[i]->recs[j].end_s);
    }
    if (!(tmax > 0))
        tmax = 1e-6;
    /* The time axis ends at the first round tick at or past the last event. */
    double tmax_us = tmax * 1e6, step = duet__nice_step(tmax_us, 10);
    double tend_us = fmax(1.0, ceil(tmax_us / step - 1e-9)) * step;
    double plot_w = W - left - right;
    double xs = plot_w / tend_us; /* px per us */

    /* Row height: readable for a few CTAs, still fitting ~300 rows per panel. */
    double row_h[8], panel_y[8], y = top;
    if (n > 8)
        n = 8;
    for (int i = 0; i < n; i++) {
        int rows = traces[i]->n_ctas > 0 ? traces[i]->n_ctas : 1;
        row_h[i] = fmin(14.0, fmax(1.5, 540.0 / rows));
        /* Above each plot: its heading, and under it a strip of its own for the makespan's value. */
        panel_y[i] = y + 34;
        y = panel_y[i] + rows * row_h[i] + axis_h + panel_gap;
    }
    double H = y - panel_gap + 10;

    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__svg_head(&b, W, H, title);
    duet__legend_box(&b, left, 36, COL_GEMM, "GEMM tile");
    duet__legend_box(&b, left + 110, 36, COL_COMM, "comm tile");
    duet__legend_box(&b, left + 220, 36, COL_GEMM_STOLEN, "GEMM tile, stolen");
    duet__legend_box(&b, left + 370, 36, COL_COMM_STOLEN, "comm tile, stolen");
    duet__sbuf_printf(&b, "<line x1=\"%.1f\" y1=\"36\" x2=\"%.1f\" y2=\"46\" stroke=\"%s\" stroke-width=\"2\"/>",
                      left + 520, left + 520, COL_MAKESPAN);
    duet__sbuf_printf(&b, "<text x=\"%.1f\" y=\"45.5\" font-size=\"12\" %s>makespan</text>\n", left + 526, FONT);

    for (int i = 0; i < n; i++) {
        const duet_trace_t *t = traces[i];
        int rows = t->n_ctas > 0 ? t->n_ctas : 1;
        double py = panel_y[i], ph = rows * row_h[i];
        duet__sbuf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\" font-weight=\"bold\" %s>", left, py - 20,
                          FONT);
        duet__sbuf_xml(&b, t->label[0] ? t->label : "timeline");
        duet__sbuf_printf(&b, ": makespan %.1f us, %d CTAs, %zu tiles</text>\n", t->makespan_s * 1e6, t->n_ctas, t->n);
        duet__sbuf_printf(
            &b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f7f7f7\" stroke=\"#bbb\"/>\n", left,
            py, plot_w, ph);
        /* Vertical grid and the time axis. */
        int nx = duet__ticks(0, tend_us * 1.0001, step);
        for (int ti = 0; ti <= nx; ti++) {
            double x = ti * step, px = left + x * xs;
            duet__sbuf_printf(
                &b,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\" stroke-width=\"0.5\"/>"
                "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" %s>%g</text>\n",
                px, py, px, py + ph + 4, px, py + ph + 16, FONT, x);
        }
        duet__sbuf_printf(&b,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" %s>time (us)</text>\n",
                          left + plot_w / 2, py + ph + 32, FONT);
        /* CTA labels on the left: the first CTA of each group, and about 12 more at regular
         * steps where no group's first label sits within two label heights (20 px); none closer
         * than a label's height (11 px) below the one before it, where groups come that thick. */
        int every = rows <= 12 ? 1 : (rows + 11) / 12;
        double last_y = -INFINITY;
        signed char *home = duet__svg_homes(t, rows);
        for (int r = 0; r < rows; r++) {
            int first = r == 0 || (home != NULL && home[r] != home[r - 1]);
            int near = 0;
            for (int q = r - 1; home != NULL && !first && q >= 0 && (r - q) * row_h[i] < 20; q--)
                near |= q == 0 || home[q] != home[q - 1];
            for (int q = r + 1; home != NULL && !first && q < rows && (q - r) * row_h[i] < 20; q++)
                near |= home[q] != home[q - 1];
            double ly = py + (r + 0.5) * row_h[i] + 3.5;
            if ((first || (r % every == 0 && !near)) && ly >= last_y + 11) {
                duet__sbuf_printf(&b,
                                  "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\" %s>CTA %d</text>\n",
                                  left - 6, ly, FONT, r);
                last_y = ly;
            }
        }
        duet__svg_groups(&b, home, rows, left + plot_w + 8, py, row_h[i], py + ph + axis_h - 10);
        free(home);
        duet__sbuf_printf(&b, "<g shape-rendering=\"crispEdges\">\n");
        for (size_t j = 0; j < t->n; j++) {
            const duet_trace_rec_t *r = &t->recs[j];
            if (r->cta < 0 || r->cta >= rows)
                continue;
            const char *fill = r->queue == DUET_QUEUE_GEMM ? (r->stolen ? COL_GEMM_STOLEN : COL_GEMM)
                                                           : (r->stolen ? COL_COMM_STOLEN : COL_COMM);
            /* A hairline gap between consecutive tiles, where the tile is wide enough to afford it. */
            double x0 = left + r->start_s * 1e6 * xs, w = (r->end_s - r->start_s) * 1e6 * xs;
            w = w > 3 ? w - 1.0 : fmax(0.6, w);
            duet__sbuf_printf(&b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n", x0,
                              py + r->cta * row_h[i] + (row_h[i] > 3 ? 0.5 : 0), w,
                              row_h[i] > 3 ? row_h[i] - 1.0 : row_h[i], fill);
        }
        duet__sbuf_printf(&b, "</g>\n");
        /* The makespan's value sits in the strip above the plot, ending at its line (or starting
         * there when it would run past the plot's left edge), so it covers no tile and no heading. */
        char ms[48];
        snprintf(ms, sizeof(ms), "makespan %.1f us", t->makespan_s * 1e6);
        double mx = left + t->makespan_s * 1e6 * xs, mw = duet__text_w(ms, 11);
        int at_end = mx - 3 - mw >= left;
        duet__sbuf_printf(&b,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"%s\" fill=\"%s\" %s>%s</text>\n",
                          mx, py - 2, mx, py + ph + 2, COL_MAKESPAN, at_end ? mx - 3 : mx + 3, py - 5,
                          at_end ? "end" : "start", COL_MAKESPAN, FONT, ms);
    }
    duet__sbuf_printf(&b, "</svg>\n");
    return duet__sbuf_write(&b, path);
}

/* ------------------------------------------------------------------------------------------ */
/* The split curve                                                                             */
/* ------------------------------------------------------------------------------------------ */

static const char *const duet__palette[] = {"#4c78a8", "#f58518", "#54a24b", "#e45756",
                                            "#72b7b2", "#b279a2", "#9d755d", "#eeca3b"};

/* A diamond of 5 px half-width centred at (x, y), in the plot's clip or not (the legend). */
static void duet__diamond(duet__sbuf_t *b, double x, double y, const char *col, int clip)
{
    duet__sbuf_printf(b,
                      "<path%s d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\" fill=\"%s\" fill-opacity=\"0.7\" stroke=\"%s\" "
                      "stroke-width=\"1\"/>\n",
                      clip ? " clip-path=\"url(#plot)\"" : "", x, y - 5, col, col);
}

static int duet__point_order(const void *a, const void *b)
{
    const duet_sweep_point_t *x = a, *y = b;
    if (x->cfg.mode != y->cfg.mode)
        return x->cfg.mode - y->cfg.mode;
    /* Vendor mode is one curve: one point per split, at the library's kernel for it (the sweep). */
    if (x->cfg.mode == DUET_MODE_VENDOR)
        return x->cfg.gemm_wgs - y->cfg.gemm_wgs;
    int tx = x->cfg.tile.bm * 100000 + x->cfg.tile.bn, ty = y->cfg.tile.bm * 100000 + y->cfg.tile.bn;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    if (x->cfg.split_k != y->cfg.split_k)
        return x->cfg.split_k - y->cfg.split_k;
    if (x->cfg.stream_k != y->cfg.stream_k)
        return x->cfg.stream_k - y->cfg.stream_k;
    /* Copy mode's points share the x (the GEMM on every SM): ordered by copy streams. */
    if (x->cfg.gemm_wgs != y->cfg.gemm_wgs)
        return x->cfg.gemm_wgs - y->cfg.gemm_wgs;
    return x->cfg.comm_wgs - y->cfg.comm_wgs;
}

/* One series of the curve: the points of one mode, tile, K split and stream-K (vendor: one); with
 * any_stream_k, a series or its stream-K sibling. */
static int duet__same_series(const duet_sweep_point_t *a, const duet_sweep_point_t *b, int any_stream_k)
{
    if (a->cfg.mode != b->cfg.mode)
        return 0;
    return a->cfg.mode == DUET_MODE_VENDOR ||
           (a->cfg.tile.bm == b->cfg.tile.bm && a->cfg.tile.bn == b->cfg.tile.bn && a->cfg.split_k == b->cfg.split_k &&
            (any_stream_k || a->cfg.stream_k == b->cfg.stream_k));
}

duet_status_t duet_sweep_write_svg(const duet_sweep_result_t *res, const char *title, const char *path)
{
    if (res->n == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "%s: the sweep has no points to draw", path);
    duet_sweep_point_t *pts = malloc(res->n * sizeof(*pts));
    if (pts == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot sort the sweep", path);
    memcpy(pts, res->points, res->n * sizeof(*pts));
    qsort(pts, res->n, sizeof(*pts), duet__point_order);

    const double W = 1100, H = 640, left = 80, right = 230, top = 90, bottom = 60;
    double pw = W - left - right, ph = H - top - bottom;
    double xmax = 1, ymin = INFINITY, ymax = 0;
    for (size_t i = 0; i < res->n; i++) {
        xmax = fmax(xmax, pts[i].cfg.gemm_wgs);
        ymin = fmin(ymin, pts[i].makespan_s * 1e3);
        ymax = fmax(ymax, pts[i].makespan_s * 1e3);
    }
    ymin = fmin(ymin, res->dflt.makespan_s * 1e3);
    ymax = fmax(ymax, res->dflt.makespan_s * 1e3);
    /* Starved splits (a handful of CTAs on one job) can be 100x slower than the best and would
     * flatten the interesting part: show up to 3x the best and clip the rest at the top. */
    int clipped = ymax > 3.0 * ymin;
    if (clipped)
        ymax = fmax(3.0 * ymin, res->dflt.makespan_s * 1e3 * 1.05);
    double ystep = duet__nice_step(ymax - ymin > 0 ? ymax - ymin : ymax * 0.1 + 1e-9, 6);
    double y0 = floor(ymin / ystep) * ystep, y1 = ceil(ymax / ystep) * ystep;
    if (y1 <= y0)
        y1 = y0 + ystep;
    /* The x axis ends at the first round tick at or past the largest split. */
    double xstep = duet__nice_step(xmax, 10);
    xmax = fmax(1.0, ceil(xmax / xstep - 1e-9)) * xstep;
#define PX(x) (left + (x) / xmax * pw)
#define PY(y) (top + ph - ((y)-y0) / (y1 - y0) * ph)

    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__svg_head(&b, W, H, title);
    duet__sbuf_printf(&b,
                      "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#fafafa\" stroke=\"#bbb\"/>\n",
                      left, top, pw, ph);
    int nx = duet__ticks(0, xmax * 1.0001, xstep), ny = duet__ticks(y0, y1 + ystep * 1e-6, ystep);
    for (int i = 0; i <= nx; i++) {
        double x = i * xstep;
        duet__sbuf_printf(&b,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\" %s>%g</text>\n",
                          PX(x), top, PX(x), top + ph, PX(x), top + ph + 16, FONT, x);
    }
    for (int i = 0; i <= ny; i++) {
        double y = y0 + i * ystep;
        duet__sbuf_printf(&b,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#e3e3e3\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" %s>%.4g</text>\n",
                          left, PY(y), left + pw, PY(y), left - 6, PY(y) + 4, FONT, y);
    }
    duet__sbuf_printf(
        &b,
        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" %s>gemm_wgs (CTAs on the GEMM "
        "queue; concurrent: GEMM grid, the rest run comm)</text>\n",
        left + pw / 2, H - 18, FONT);
    duet__sbuf_printf(
        &b,
        "<text x=\"18\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 18 %.1f)\" "
        "%s>predicted makespan (ms)</text>\n",
        top + ph / 2, top + ph / 2, FONT);

    /* The summary under the title, then one polyline per (mode, tile), clipped to the plot. The
     * circle is the fastest prediction, not the advice: the verdict (sim/decide.c) keeps the safe
     * choice unless the gain clears the band of the known errors, which the picture cannot show. */
    const duet_sweep_point_t *best = &res->points[0];
    char tile[32];
    char split[48];
    duet__sbuf_printf(&b,
                      "<text x=\"20\" y=\"48\" font-size=\"13\" %s>fastest prediction: %s, CTAs %s, tile %s: "
                      "%.4g ms (circle); duet predict's verdict weighs it with the known error</text>\n",
                      FONT, duet_mode_name(best->cfg.mode), duet_config_split_str(&best->cfg, split, sizeof(split)),
                      duet_config_tile_str(&best->cfg, tile, sizeof(tile)), best->makespan_s * 1e3);
    char rank[128];
    duet__sbuf_printf(&b,
                      "<text x=\"20\" y=\"68\" font-size=\"13\" fill=\"%s\" %s>static default (square): fused, "
                      "gemm_wgs %d, tile %dx%dx%d: %.4g ms, %s</text>\n",
                      COL_MAKESPAN, FONT, res->dflt.cfg.gemm_wgs, res->dflt.cfg.tile.bm, res->dflt.cfg.tile.bn,
                      res->dflt.cfg.tile.bk, res->dflt.makespan_s * 1e3, duet_sweep_rank_str(res, rank, sizeof(rank)));
    duet__sbuf_printf(&b,
                      "<clipPath id=\"plot\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/></clipPath>\n",
                      left, top, pw, ph);
    /* One series per (mode, tile, K split, stream-K); the legend lists as many as fit beside the
     * plot. Copy mode runs the GEMM on every SM, so its points share one x: drawn as diamonds (one
     * per number of copy streams), not a line. */
    int series = 0, unlisted = 0, any_sk = 0;
    double ly = top + 8;
    for (size_t i = 0; i < res->n;) {
        size_t j = i;
        while (j < res->n && duet__same_series(&pts[j], &pts[i], 0))
            j++;
        /* A stream-K series follows its data-parallel sibling (duet__point_order): the same colour,
         * a thinner line and no legend entry of its own, so the legend stays one entry per tile. */
        const int sk = pts[i].cfg.stream_k != 0;
        const int sibling = sk && i > 0 && duet__same_series(&pts[i - 1], &pts[i], 1);
        if (sibling)
            series--;
        any_sk |= sk;
        const char *col = duet__palette[series % 8];
        const char *dash = pts[i].cfg.mode == DUET_MODE_CONCURRENT ? " stroke-dasharray=\"6 3\""
                           : pts[i].cfg.mode == DUET_MODE_VENDOR   ? " stroke-dasharray=\"2 2\""
                                                                   : "";
        const int copy = pts[i].cfg.mode == DUET_MODE_COPY;
        if (copy) {
            for (size_t k = i; k < j; k++)
                duet__diamond(&b, PX(pts[k].cfg.gemm_wgs), PY(pts[k].makespan_s * 1e3), col, 1);
        } else {
            duet__sbuf_printf(&b,
                              "<polyline clip-path=\"url(#plot)\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\"%s "
                              "points=\"",
                              col, sk ? "0.8" : "1.6", dash);
            for (size_t k = i; k < j; k++)
                duet__sbuf_printf(&b, "%.1f,%.1f ", PX(pts[k].cfg.gemm_wgs), PY(pts[k].makespan_s * 1e3));
            duet__sbuf_printf(&b, "\"/>\n");
        }
        if (sibling) {
            /* drawn in its sibling's colour, listed under it */
        } else if (ly + 18 <= top + ph) {
            if (copy)
                duet__diamond(&b, left + pw + 29, ly, col, 0);
            else
                duet__sbuf_printf(
                    &b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>",
                    left + pw + 14, ly, left + pw + 44, ly, col, dash);
            duet__sbuf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" %s>%s %s</text>\n", left + pw + 50,
                              ly + 4, FONT, duet_mode_name(pts[i].cfg.mode),
                              pts[i].cfg.mode == DUET_MODE_VENDOR
                                  ? "(library's GEMM)"
                                  : duet_config_tile_str(&pts[i].cfg, tile, sizeof(tile)));
            ly += 18;
        } else {
            unlisted++;
        }
        series++;
        i = j;
    }
    if (any_sk) {
        duet__sbuf_printf(
            &b,
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#555\" %s>thin: the same tile with stream-K</text>\n",
            left + pw + 14, ly + 4, FONT);
        ly += 16;
    }
    if (unlisted > 0) {
        duet__sbuf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" %s>(%d more curves)</text>\n",
                          left + pw + 14, ly + 4, FONT, unlisted);
        ly += 18;
    }
    /* The clipping is said under the legend, where the line under the title has no room for it. */
    if (clipped)
        duet__sbuf_printf(&b,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#555\" %s>curves clipped at the "
                          "axis' top</text><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#555\" %s>(%.4g "
                          "ms, past 3x the best)</text>\n",
                          left + pw + 14, ly + 8, FONT, left + pw + 14, ly + 22, FONT, y1);
    /* Mark the best configuration (circle) and the static default (square). */
    duet__sbuf_printf(&b,
                      "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"6\" fill=\"none\" stroke=\"black\" stroke-width=\"2\"/>\n",
                      PX(best->cfg.gemm_wgs), PY(best->makespan_s * 1e3));
    duet__sbuf_printf(
        &b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n",
        PX(res->dflt.cfg.gemm_wgs) - 5, PY(res->dflt.makespan_s * 1e3) - 5, COL_MAKESPAN);
    duet__sbuf_printf(&b, "</svg>\n");
#undef PX
#undef PY
    free(pts);
    return duet__sbuf_write(&b, path);
}
