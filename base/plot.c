/*
 * A chart of horizontal bar pairs, one pair per row, on a linear axis (duet bench's makespans
 * relative to a bound). Plain SVG 1.1 written by hand, like the simulator's pictures (sim/svg.c).
 *
 * Layout, left to right: the group names and the row labels (right-aligned against the axis), the
 * plot, the notes in a column of their own. The columns are as wide as their longest text, so no
 * text covers a bar whatever the values. Rows are 12 px apart (two 5 px bars), which keeps the 75
 * workloads of the reference shape set within a 1080 px screen (tests/base/test_plot_layout.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"

#define DUET__HBARS_FONT "font-family=\"sans-serif\""
#define DUET__HBARS_MONO "font-family=\"monospace\""

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
    /* The first tick at or past the longest bar (a bar a rounding error past a tick ends on it);
     * the notes have a column of their own, so the axis needs no room after the bars. */
    c->xmax = fmax(1.0, ceil(vmax / c->tick - 1e-9)) * c->tick;
}

/* Row i starts a group: the first row, or a group name other than the row's before it. */
static int duet__hbars_new_group(const duet__hbars_t *c, size_t i)
{
    return i == 0 || strcmp(c->rows[i].group, c->rows[i - 1].group) != 0;
}

/* The top of row i: the rows before it and a gap before every group after the first. */
static double duet__hbars_row_y(size_t i, size_t groups_before)
{
    return DUET__HBARS_TOP + (double)i * DUET__HBARS_ROW + (double)groups_before * DUET__HBARS_GAP;
}

double duet__hbars_height(const duet__hbars_t *c)
{
    size_t gaps = 0;
    for (size_t i = 1; i < c->n; i++)
        gaps += duet__hbars_new_group(c, i);
    return duet__hbars_row_y(c->n, gaps) + DUET__HBARS_BOTTOM;
}

/* The estimated width in px of the longest of n strings spaced `stride` bytes apart, 10 px monospace. */
static double duet__mono_w(const char *first, size_t stride, size_t n)
{
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(first + i * stride);
        len = l > len ? l : len;
    }
    return (double)len * 10.0 * DUET__HBARS_MONO_EM;
}

duet_status_t duet__svg_hbars_write(const duet__hbars_t *c, const char *path)
{
    const double W = DUET__HBARS_W, top = DUET__HBARS_TOP, bar = DUET__HBARS_BAR;
    /* The columns: group names from x = 20, labels ending 8 px before the axis, notes from 14 px
     * after it to 20 px before the edge. */
    double group_w = c->n > 0 ? duet__mono_w(c->rows[0].group, sizeof(c->rows[0]), c->n) : 0;
    double label_w = c->n > 0 ? duet__mono_w(c->rows[0].label, sizeof(c->rows[0]), c->n) : 0;
    double note_w = c->n > 0 ? duet__mono_w(c->rows[0].note, sizeof(c->rows[0]), c->n) : 0;
    if (c->note_title != NULL)
        note_w = fmax(note_w, duet__mono_w(c->note_title, 0, 1));
    const double left = 20 + group_w + (group_w > 0 ? 14 : 0) + label_w + 8;
    const double note_x = W - 20 - note_w, pw = note_x - 14 - left;
    if (!(c->xmax > 0) || !(c->tick > 0) || c->xmax / c->tick > 1000)
        return duet__error(DUET_ERR_INVALID_ARG, "%s: an axis of 0 to %g with a tick every %g", path, c->xmax, c->tick);
    if (pw < 300)
        return duet__error(DUET_ERR_INVALID_ARG, "%s: the labels leave %.0f px of %.0f for the bars (300 needed)", path,
                           pw, W);
    const double height = duet__hbars_height(c), bottom = height - DUET__HBARS_BOTTOM;
    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__sbuf_printf(&b,
                      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"%.0f\" height=\"%.0f\"><rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                      "<text x=\"20\" y=\"24\" font-size=\"16\" font-weight=\"bold\" " DUET__HBARS_FONT ">",
                      W, height);
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
            px, top - 2, px, bottom, ref ? "#d62728" : "#e0e0e0", ref ? "1.5" : "0.7", px, bottom + 13, x);
        if (c->n > 30)
            duet__sbuf_printf(&b,
                              "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\" " DUET__HBARS_FONT
                              ">%g</text>\n",
                              px, top - 5, x);
    }
    if (c->xlabel != NULL) {
        duet__sbuf_printf(&b,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\" " DUET__HBARS_FONT ">",
                          left + pw / 2, bottom + 30);
        duet__sbuf_xml(&b, c->xlabel);
        duet__sbuf_printf(&b, "</text>\n");
    }
    if (c->note_title != NULL) {
        duet__sbuf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" " DUET__HBARS_MONO ">", note_x, top - 5);
        duet__sbuf_xml(&b, c->note_title);
        duet__sbuf_printf(&b, "</text>\n");
    }
    size_t groups = 0;
    for (size_t i = 0; i < c->n; i++) {
        const duet__hbar_row_t *r = &c->rows[i];
        int first = duet__hbars_new_group(c, i);
        groups += first && i > 0;
        double y = duet__hbars_row_y(i, groups);
        /* A group after the first: a thin rule in the gap above it, and its name beside its first row. */
        if (first && i > 0)
            duet__sbuf_printf(&b,
                              "<line x1=\"20\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#c8c8c8\" "
                              "stroke-width=\"0.6\"/>\n",
                              y - DUET__HBARS_GAP / 2 - 0.5, note_x - 14, y - DUET__HBARS_GAP / 2 - 0.5);
        if (first && r->group[0] != '\0') {
            duet__sbuf_printf(
                &b, "<text x=\"20\" y=\"%.1f\" font-size=\"10\" font-weight=\"bold\" " DUET__HBARS_MONO ">", y + 9.5);
            duet__sbuf_xml(&b, r->group);
            duet__sbuf_printf(&b, "</text>\n");
        }
        duet__sbuf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\" " DUET__HBARS_MONO ">",
                          left - 8, y + 9.5);
        duet__sbuf_xml(&b, r->label);
        duet__sbuf_printf(&b, "</text>\n");
        for (int k = 0; k < 2; k++)
            if (isfinite(r->v[k]))
                duet__sbuf_printf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", left,
                                  y + 1 + k * bar, fmax(0.0, fmin(r->v[k], c->xmax)) / c->xmax * pw, bar, c->colour[k]);
        duet__sbuf_printf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" " DUET__HBARS_MONO ">", note_x, y + 9.5);
        duet__sbuf_xml(&b, r->note);
        duet__sbuf_printf(&b, "</text>\n");
    }
    duet__sbuf_printf(&b, "</svg>\n");
    return duet__sbuf_write(&b, path);
}
