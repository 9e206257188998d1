/*
 * A chart of horizontal bar pairs, one pair per row, on a linear axis (duet bench's makespans
 * relative to a bound). Plain SVG 1.1 written by hand, like the simulator's pictures (sim/svg.c).
 */
#include <math.h>
#include <stdio.h>

#include "base/base.h"

#define DUET__HBARS_FONT "font-family=\"sans-serif\""

/* Sizes in px: the whole width, the bar height, the row pitch, the top of the first row. */
#define DUET__HBARS_W 1100.0
#define DUET__HBARS_BAR 7.0
#define DUET__HBARS_ROW 20.0
#define DUET__HBARS_TOP 84.0

double duet__nice_step(double span, int target)
{
    if (!(span > 0) || !isfinite(span) || target < 1)
        return 1.0;
    double raw = span / target, mag = pow(10.0, floor(log10(raw))), f = raw / mag;
    double step = (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * mag;
    return step > 0 && isfinite(step) ? step : 1.0;
}

void duet__hbars_auto_axis(duet__hbars_t *c)
{
    double vmax = c->ref > 0 && isfinite(c->ref) ? c->ref : 0.0;
    for (size_t i = 0; i < c->n; i++)
        for (int k = 0; k < 2; k++)
            if (isfinite(c->rows[i].v[k]))
                vmax = fmax(vmax, c->rows[i].v[k]);
    if (!(vmax > 0))
        vmax = 1.0;
    c->tick = duet__nice_step(vmax, 8);
    /* The first tick at or past the longest bar; a bar exactly on a tick keeps room for its note. */
    c->xmax = ceil(vmax / c->tick * (1 + 1e-9)) * c->tick;
    if (c->xmax - vmax < 0.25 * c->tick)
        c->xmax += c->tick;
}

duet_status_t duet__svg_hbars_write(const duet__hbars_t *c, const char *path)
{
    const double left = c->label_w, top = DUET__HBARS_TOP, row_h = DUET__HBARS_ROW, bar = DUET__HBARS_BAR;
    const double pw = DUET__HBARS_W - left - 40, bottom = top + (double)c->n * row_h;
    if (!(c->xmax > 0) || !(c->tick > 0) || c->xmax / c->tick > 1000)
        return duet__error(DUET_ERR_INVALID_ARG, "%s: an axis of 0 to %g with a tick every %g", path, c->xmax, c->tick);
    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__sbuf_printf(&b,
                      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"%.0f\" height=\"%.0f\"><rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                      "<text x=\"20\" y=\"24\" font-size=\"16\" font-weight=\"bold\" " DUET__HBARS_FONT ">",
                      DUET__HBARS_W, bottom + 60);
    duet__sbuf_xml(&b, c->title);
    duet__sbuf_printf(&b, "</text>\n");
    for (int k = 0; k < 2; k++) {
        duet__sbuf_printf(&b,
                          "<rect x=\"20\" y=\"%d\" width=\"14\" height=\"8\" fill=\"%s\"/><text x=\"40\" y=\"%d\" "
                          "font-size=\"12\" " DUET__HBARS_FONT ">",
                          38 + 14 * k, c->colour[k], 46 + 14 * k);
        duet__sbuf_xml(&b, c->legend[k]);
        duet__sbuf_printf(&b, "</text>\n");
    }
    /* Grid lines at every tick (their count is bounded above), the reference line in red; the
     * numbers under the last row and, for a chart taller than a screen, over the first one too. */
    int ticks = (int)floor(c->xmax / c->tick + 1e-9);
    for (int i = 0; i <= ticks; i++) {
        double x = i * c->tick, px = left + x / c->xmax * pw;
        int ref = fabs(x - c->ref) < 1e-9;
        duet__sbuf_printf(
            &b,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%s\"/>"
            "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\" " DUET__HBARS_FONT ">%g</text>\n",
            px, top - 6, px, bottom, ref ? "#d62728" : "#e0e0e0", ref ? "1.5" : "0.7", px, bottom + 14, x);
        if (c->n > 30)
            duet__sbuf_printf(&b,
                              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\" " DUET__HBARS_FONT
                              ">%g</text>\n",
                              px, top - 9, x);
    }
    if (c->xlabel != NULL) {
        duet__sbuf_printf(&b,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" " DUET__HBARS_FONT ">",
                          left + pw / 2, bottom + 32);
        duet__sbuf_xml(&b, c->xlabel);
        duet__sbuf_printf(&b, "</text>\n");
    }
    for (size_t i = 0; i < c->n; i++) {
        const duet__hbar_row_t *r = &c->rows[i];
        double y = top + (double)i * row_h;
        duet__sbuf_printf(&b,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\" font-family=\"monospace\">",
                          left - 8, y + 12);
        duet__sbuf_xml(&b, r->label);
        duet__sbuf_printf(&b, "</text>\n");
        for (int k = 0; k < 2; k++)
            if (isfinite(r->v[k]))
                duet__sbuf_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", left,
                                  y + 2 + k * (bar + 1), fmin(r->v[k], c->xmax) / c->xmax * pw, bar, c->colour[k]);
        /* The note after the longer bar (at the axis' end when neither is finite). */
        duet__sbuf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" " DUET__HBARS_FONT ">",
                          left + fmin(fmax(r->v[0], r->v[1]), c->xmax) / c->xmax * pw + 4, y + 12);
        duet__sbuf_xml(&b, r->note);
        duet__sbuf_printf(&b, "</text>\n");
    }
    duet__sbuf_printf(&b, "</svg>\n");
    return duet__sbuf_write(&b, path);
}
