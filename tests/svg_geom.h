/*
 * The geometry of duet's SVG pictures, read back by the tests: every rectangle and every text with
 * its box, so a test can ask whether a label covers a bar or a tile, or another label.
 *
 * A text's box is estimated as the pictures place it (an SVG has no font metrics): 0.62 em a
 * character (DejaVu Sans' digits are 0.636 em, its lower-case letters 0.5-0.6 em, DejaVu Sans
 * Mono 0.602 em), from 0.75 em above the baseline (capitals 0.73 em) to 0.24 em below it
 * (descenders). An XML entity counts as one character. Rotated texts are left out.
 */
#ifndef DUET_TEST_SVG_GEOM_H
#define DUET_TEST_SVG_GEOM_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct t_box {
    double x0, y0, x1, y1;
} t_box_t;

typedef struct t_svg_rect {
    t_box_t box;
    char fill[16];
    int in_group; /* inside a <g> element (the timeline's tiles) */
} t_svg_rect_t;

typedef struct t_svg_text {
    t_box_t box;
    double x, y, size;
    char text[128];
} t_svg_text_t;

typedef struct t_svg {
    t_svg_rect_t *rects;
    size_t n_rects;
    t_svg_text_t *texts;
    size_t n_texts;
} t_svg_t;

/* The value of attribute `name` in the element starting at `el` (up to its '>'), or `dflt`. */
static inline double t_svg_attr(const char *el, const char *name, double dflt)
{
    const char *end = strchr(el, '>');
    char key[32];
    snprintf(key, sizeof(key), " %s=\"", name);
    const char *p = strstr(el, key);
    return p != NULL && end != NULL && p < end ? atof(p + strlen(key)) : dflt;
}

static inline void t_svg_attr_str(const char *el, const char *name, char *buf, size_t n)
{
    const char *end = strchr(el, '>');
    char key[32];
    snprintf(key, sizeof(key), " %s=\"", name);
    const char *p = strstr(el, key);
    buf[0] = '\0';
    if (p == NULL || end == NULL || p > end)
        return;
    p += strlen(key);
    size_t i = 0;
    while (p[i] != '"' && i + 1 < n) {
        buf[i] = p[i];
        i++;
    }
    buf[i] = '\0';
}

/* Read the rectangles and texts of an SVG document (the caller frees with t_svg_free). */
static inline void t_svg_read(const char *svg, t_svg_t *g)
{
    size_t cap_r = 1024, cap_t = 1024;
    memset(g, 0, sizeof(*g));
    g->rects = malloc(cap_r * sizeof(*g->rects));
    g->texts = malloc(cap_t * sizeof(*g->texts));
    int depth = 0;
    for (const char *p = svg; (p = strchr(p, '<')) != NULL; p++) {
        if (strncmp(p, "<g", 2) == 0 && (p[2] == ' ' || p[2] == '>'))
            depth++;
        else if (strncmp(p, "</g>", 4) == 0)
            depth--;
        else if (strncmp(p, "<rect ", 6) == 0) {
            if (g->n_rects == cap_r)
                g->rects = realloc(g->rects, (cap_r *= 2) * sizeof(*g->rects));
            t_svg_rect_t *r = &g->rects[g->n_rects++];
            r->box.x0 = t_svg_attr(p, "x", 0);
            r->box.y0 = t_svg_attr(p, "y", 0);
            r->box.x1 = r->box.x0 + t_svg_attr(p, "width", 0);
            r->box.y1 = r->box.y0 + t_svg_attr(p, "height", 0);
            t_svg_attr_str(p, "fill", r->fill, sizeof(r->fill));
            r->in_group = depth > 0;
        } else if (strncmp(p, "<text ", 6) == 0) {
            const char *gt = strchr(p, '>'), *close = strstr(p, "</text>");
            char transform[8];
            t_svg_attr_str(p, "transform", transform, sizeof(transform));
            if (gt == NULL || close == NULL || transform[0] != '\0')
                continue;
            if (g->n_texts == cap_t)
                g->texts = realloc(g->texts, (cap_t *= 2) * sizeof(*g->texts));
            t_svg_text_t *t = &g->texts[g->n_texts++];
            size_t len = 0, chars = 0;
            for (const char *c = gt + 1; c < close; c++) {
                if (len + 1 < sizeof(t->text))
                    t->text[len++] = *c;
                if (*c == '&')
                    c = strchr(c, ';');
                chars++;
            }
            t->text[len] = '\0';
            char anchor[16];
            t_svg_attr_str(p, "text-anchor", anchor, sizeof(anchor));
            t->x = t_svg_attr(p, "x", 0);
            t->y = t_svg_attr(p, "y", 0);
            t->size = t_svg_attr(p, "font-size", 12);
            double w = (double)chars * t->size * 0.62;
            t->box.x0 = strcmp(anchor, "end") == 0 ? t->x - w : strcmp(anchor, "middle") == 0 ? t->x - w / 2 : t->x;
            t->box.x1 = t->box.x0 + w;
            t->box.y0 = t->y - 0.75 * t->size;
            t->box.y1 = t->y + 0.24 * t->size;
        }
    }
}

static inline void t_svg_free(t_svg_t *g)
{
    free(g->rects);
    free(g->texts);
}

/* Two boxes share some area (touching edges do not count). */
static inline int t_box_overlap(const t_box_t *a, const t_box_t *b)
{
    return a->x0 < b->x1 - 1e-6 && b->x0 < a->x1 - 1e-6 && a->y0 < b->y1 - 1e-6 && b->y0 < a->y1 - 1e-6;
}

/* The first text whose text starts with `prefix`, or NULL. */
static inline const t_svg_text_t *t_svg_find_text(const t_svg_t *g, const char *prefix)
{
    for (size_t i = 0; i < g->n_texts; i++)
        if (strncmp(g->texts[i].text, prefix, strlen(prefix)) == 0)
            return &g->texts[i];
    return NULL;
}

/*
 * The numbers written at height y (within 0.5 px) in x order, as an axis' tick labels: up to n of
 * them into v. @return how many.
 */
static inline size_t t_svg_numbers_at(const t_svg_t *g, double y, double *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < g->n_texts && k < n; i++) {
        char *end;
        double x = strtod(g->texts[i].text, &end);
        if (fabs(g->texts[i].y - y) < 0.5 && end != g->texts[i].text && *end == '\0')
            v[k++] = x;
    }
    return k;
}

/*
 * Ticks are round: at least two, a step of 1, 2, 2.5 or 5 x 10^k, each tick a multiple of it, one
 * step apart, from `lo` up to the first tick at or past `vmax`. @return 1, or 0 with why in msg.
 */
static inline int t_round_ticks(const double *v, size_t n, double lo, double vmax, char *msg, size_t msg_n)
{
    if (n < 2) {
        snprintf(msg, msg_n, "%zu ticks", n);
        return 0;
    }
    double step = v[1] - v[0], mag = pow(10.0, floor(log10(step))), f = step / mag;
    if (!(fabs(f - 1) < 1e-9 || fabs(f - 2) < 1e-9 || fabs(f - 2.5) < 1e-9 || fabs(f - 5) < 1e-9)) {
        snprintf(msg, msg_n, "step %g is not 1, 2, 2.5 or 5 x 10^k", step);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        double k = v[i] / step;
        if (fabs(k - round(k)) > 1e-6 || fabs(v[i] - (v[0] + (double)i * step)) > 1e-6 * step) {
            snprintf(msg, msg_n, "tick %zu (%g) is off the steps of %g from %g", i, v[i], step, v[0]);
            return 0;
        }
    }
    if (fabs(v[0] - lo) > 1e-9 * step || v[n - 1] < vmax || v[n - 2] >= vmax) {
        snprintf(msg, msg_n, "ticks %g..%g do not run from %g to the first tick at or past %g", v[0], v[n - 1], lo,
                 vmax);
        return 0;
    }
    return 1;
}

#endif /* DUET_TEST_SVG_GEOM_H */
