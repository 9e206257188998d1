/*
 * Timelines: one record per tile, written and read as JSON ("duet-trace/1"). The simulator
 * writes predicted timelines; the backend writes measured ones in the same format, so the two
 * can be drawn one above the other.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "sim/internal.h"

#define DUET_TRACE_SCHEMA "duet-trace/1"

void duet_trace_init(duet_trace_t *t, const char *label)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->label, sizeof(t->label), "%s", label ? label : "");
}

void duet_trace_free(duet_trace_t *t)
{
    if (t == NULL)
        return;
    free(t->recs);
    t->recs = NULL;
    t->n = t->cap = 0;
}

duet_status_t duet_trace_add(duet_trace_t *t, const duet_trace_rec_t *r)
{
    if (t->n >= (size_t)DUET_TRACE_MAX_RECORDS)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "a timeline holds at most %lld tiles (DUET_TRACE_MAX_RECORDS): simulate a smaller workload "
                           "or larger tiles to draw or write it",
                           (long long)DUET_TRACE_MAX_RECORDS);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        duet_trace_rec_t *p = realloc(t->recs, cap * sizeof(*p));
        if (p == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "cannot grow a trace to %zu records", cap);
        t->recs = p;
        t->cap = cap;
    }
    t->recs[t->n++] = *r;
    return DUET_OK;
}

/*
 * The values a timeline may hold. CTA and SM ids are those of one device (at most a million);
 * tile ids are queue positions (below 2^53, where a double still holds every integer); times are
 * microseconds from the start of the operation, up to 1e15 us (about 32 years), which no
 * simulated or measured operation reaches and which keeps every coordinate of the SVG finite.
 */
#define DUET__TRACE_MAX_ID 1e6
#define DUET__TRACE_MAX_TILE 9007199254740992.0 /* 2^53 */
#define DUET__TRACE_MAX_US 1e15
/* What the reader accepts: the writer prints seconds x 1e6, which can pass a bound of exactly
 * 1e15 us by the rounding of the two conversions; 1e-9 of slack absorbs that for any number of
 * round trips a file will see. */
#define DUET__TRACE_READ_MAX_US (DUET__TRACE_MAX_US * (1 + 1e-9))

/*
 * A time the writer may print: seconds x 1e6 must be a finite number of microseconds in [0,
 * DUET__TRACE_READ_MAX_US], or "%.6f" would print "inf", "nan" or a number the reader rejects.
 * The reader's own bound, so that whatever is written reads back.
 */
static duet_status_t duet__trace_time_ok(const duet_trace_t *t, const char *what, size_t i, double s)
{
    double us = s * 1e6;
    if (!(us >= 0 && us <= DUET__TRACE_READ_MAX_US)) {
        if (i == (size_t)-1)
            return duet__error(DUET_ERR_INVALID_ARG, "timeline '%s': %s %g us is not a time in [0, %g] us",
                               duet__q(t->label), what, us, DUET__TRACE_MAX_US);
        return duet__error(DUET_ERR_INVALID_ARG, "timeline '%s': tiles[%zu].%s %g us is not a time in [0, %g] us",
                           duet__q(t->label), i, what, us, DUET__TRACE_MAX_US);
    }
    return DUET_OK;
}

duet_status_t duet_trace_write_json(const duet_trace_t *t, const duet_plan_t *plan, const duet_hw_t *hw,
                                    const char *path)
{
    /* Every time is checked before anything is written: an invalid timeline writes no file. */
    DUET_CHECK(duet__trace_time_ok(t, "makespan_us", (size_t)-1, t->makespan_s));
    for (size_t i = 0; i < t->n; i++) {
        DUET_CHECK(duet__trace_time_ok(t, "start_us", i, t->recs[i].start_s));
        DUET_CHECK(duet__trace_time_ok(t, "end_us", i, t->recs[i].end_s));
        if (t->recs[i].end_s < t->recs[i].start_s)
            return duet__error(DUET_ERR_INVALID_ARG, "timeline '%s': tiles[%zu] ends (%g us) before it starts (%g us)",
                               duet__q(t->label), i, t->recs[i].end_s * 1e6, t->recs[i].start_s * 1e6);
    }
    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__sbuf_printf(&b, "{\n  \"schema\": \"%s\",\n  \"label\": ", DUET_TRACE_SCHEMA);
    duet__json_str(&b, t->label);
    duet__sbuf_printf(&b, ",\n  \"makespan_us\": %.6f,\n  \"n_ctas\": %d,\n", t->makespan_s * 1e6, t->n_ctas);
    if (hw != NULL) {
        duet__sbuf_printf(&b, "  \"hw\": ");
        duet__json_str(&b, hw->name);
        duet__sbuf_printf(&b, ",\n");
    }
    if (plan != NULL) {
        const duet_workload_t *w = &plan->wl;
        const duet_config_t *c = &plan->cfg;
        duet__sbuf_printf(
            &b,
            "  \"plan\": {\"m\": %lld, \"n\": %lld, \"k\": %lld, \"dtype\": \"%s\", \"collective\": \"%s\", "
            "\"mc\": %lld, \"nc\": %lld, \"world\": %d, \"rank\": %d, \"mode\": \"%s\", \"num_wgs\": %d, "
            "\"gemm_wgs\": %d, \"comm_wgs\": %d, \"tile\": \"%dx%dx%d\", \"comm_tile\": \"%dx%d\", "
            "\"group_m\": %d, \"split_k\": %d},\n",
            (long long)w->m, (long long)w->n, (long long)w->k, duet_dtype_name(w->dtype), duet_collective_name(w->coll),
            (long long)w->mc, (long long)w->nc, w->world, plan->rank, duet_mode_name(c->mode), c->num_wgs, c->gemm_wgs,
            c->comm_wgs, c->tile.bm, c->tile.bn, c->tile.bk, c->cm, c->cn, c->group_m, c->split_k > 1 ? c->split_k : 1);
    }
    duet__sbuf_printf(&b, "  \"tiles\": [");
    for (size_t i = 0; i < t->n; i++) {
        const duet_trace_rec_t *r = &t->recs[i];
        duet__sbuf_printf(&b,
                          "%s\n    {\"cta\": %d, \"sm\": %d, \"queue\": \"%s\", \"tile\": %lld, \"start_us\": %.6f, "
                          "\"end_us\": %.6f, \"stolen\": %s}",
                          i ? "," : "", r->cta, r->sm, r->queue == DUET_QUEUE_GEMM ? "gemm" : "comm",
                          (long long)r->tile, r->start_s * 1e6, r->end_s * 1e6, r->stolen ? "true" : "false");
    }
    duet__sbuf_printf(&b, "\n  ]\n}\n");
    return duet__sbuf_write(&b, path);
}

/* tiles[i].key: a number in [lo, hi]; an integer if `integral`. Checked before any cast. */
static duet_status_t duet__trace_num(const cJSON *o, const char *key, const char *path, size_t i, double lo, double hi,
                                     int integral, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v))
        return duet__error(DUET_ERR_PARSE, "%s: tiles[%zu].%s: missing or not a number", path, i, key);
    double d = v->valuedouble;
    if (!(d >= lo && d <= hi) || (integral && d != floor(d)))
        return duet__error(DUET_ERR_PARSE, "%s: tiles[%zu].%s: %g is not %s in [%g, %g]", path, i, key, d,
                           integral ? "an integer" : "a number", lo, hi);
    *out = d;
    return DUET_OK;
}

duet_status_t duet_trace_read_json(const char *path, duet_trace_t *t_p)
{
    char *text = NULL;
    DUET_CHECK(duet__read_file(path, &text, NULL));
    cJSON *root = duet__json_parse(text, (size_t)-1, path, 1);
    free(text);
    if (root == NULL)
        return duet__last_status(); /* malformed, or out of memory */
    duet_trace_t t;
    duet_trace_init(&t, "");
    duet_status_t st = DUET_OK;
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    const cJSON *tiles = cJSON_GetObjectItemCaseSensitive(root, "tiles");
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(root, "label");
    const cJSON *mk = cJSON_GetObjectItemCaseSensitive(root, "makespan_us");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, DUET_TRACE_SCHEMA) != 0) {
        st = duet__error(DUET_ERR_PARSE, "%s: schema is not \"%s\"", path, DUET_TRACE_SCHEMA);
        goto out;
    }
    if (!cJSON_IsArray(tiles)) {
        st = duet__error(DUET_ERR_PARSE, "%s: \"tiles\" must be an array", path);
        goto out;
    }
    if (mk != NULL && (!cJSON_IsNumber(mk) || !(mk->valuedouble >= 0 && mk->valuedouble <= DUET__TRACE_READ_MAX_US))) {
        st = duet__error(DUET_ERR_PARSE, "%s: makespan_us: not a number in [0, %g]", path, DUET__TRACE_MAX_US);
        goto out;
    }
    if (cJSON_GetArraySize(tiles) > DUET_TRACE_MAX_RECORDS) {
        st = duet__error(DUET_ERR_PARSE, "%s: more than %lld tiles (DUET_TRACE_MAX_RECORDS)", path,
                         (long long)DUET_TRACE_MAX_RECORDS);
        goto out;
    }
    if (cJSON_IsString(label))
        snprintf(t.label, sizeof(t.label), "%s", label->valuestring);
    size_t i = 0;
    const cJSON *e;
    double max_end = 0;
    int32_t max_cta = -1;
    cJSON_ArrayForEach(e, tiles)
    {
        double cta = 0, sm = 0, tile = 0, s = 0, en = 0;
        DUET_CHECK_GOTO(duet__trace_num(e, "cta", path, i, 0, DUET__TRACE_MAX_ID, 1, &cta), st, fail);
        DUET_CHECK_GOTO(duet__trace_num(e, "sm", path, i, 0, DUET__TRACE_MAX_ID, 1, &sm), st, fail);
        DUET_CHECK_GOTO(duet__trace_num(e, "tile", path, i, 0, DUET__TRACE_MAX_TILE, 1, &tile), st, fail);
        DUET_CHECK_GOTO(duet__trace_num(e, "start_us", path, i, 0, DUET__TRACE_READ_MAX_US, 0, &s), st, fail);
        DUET_CHECK_GOTO(duet__trace_num(e, "end_us", path, i, 0, DUET__TRACE_READ_MAX_US, 0, &en), st, fail);
        const cJSON *q = cJSON_GetObjectItemCaseSensitive(e, "queue");
        const cJSON *stl = cJSON_GetObjectItemCaseSensitive(e, "stolen");
        if (!cJSON_IsString(q) || (strcmp(q->valuestring, "gemm") != 0 && strcmp(q->valuestring, "comm") != 0)) {
            st = duet__error(DUET_ERR_PARSE, "%s: tiles[%zu].queue must be \"gemm\" or \"comm\"", path, i);
            goto fail;
        }
        if (en < s) {
            st = duet__error(DUET_ERR_PARSE, "%s: tiles[%zu]: end_us %g is before start_us %g", path, i, en, s);
            goto fail;
        }
        duet_trace_rec_t r = {(int32_t)cta,      (int32_t)sm,   strcmp(q->valuestring, "gemm") == 0 ? 0 : 1,
                              cJSON_IsTrue(stl), (int64_t)tile, s * 1e-6,
                              en * 1e-6};
        DUET_CHECK_GOTO(duet_trace_add(&t, &r), st, fail);
        if (r.end_s > max_end)
            max_end = r.end_s;
        if (r.cta > max_cta)
            max_cta = r.cta;
        i++;
    }
    t.n_ctas = max_cta + 1;
    t.makespan_s = cJSON_IsNumber(mk) ? mk->valuedouble * 1e-6 : max_end;
    *t_p = t;
    goto out;
fail:
    duet_trace_free(&t);
out:
    cJSON_Delete(root);
    return st;
}
