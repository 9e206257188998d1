/*
 * Shape sets: the reference design's 15 shapes, and shape files for other sets.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

/* The reference design's collect_corpus.py SHAPES: M, N, K, comm_m multiplier, comm_n. */
static const duet_seed_shape_t duet__seed_shapes[] = {
    {1, 8192, 8192, 1, 4096, "decode/tiny-M"},    {16, 8192, 8192, 1, 4096, "decode/tiny-M"},
    {128, 8192, 8192, 1, 4096, "decode/tiny-M"},  {512, 8192, 8192, 1, 4096, "small/mid"},
    {2048, 2048, 2048, 1, 2048, "small/mid"},     {4096, 4096, 4096, 1, 2048, "small/mid"},
    {8192, 8192, 8192, 1, 4096, "large square"},  {16384, 16384, 16384, 1, 4096, "large square"},
    {4096, 512, 8192, 1, 2048, "skew (small N)"}, {4096, 8192, 512, 1, 2048, "skew (small K)"},
    {2048, 2048, 16384, 1, 2048, "skew (big K)"}, {16384, 2048, 2048, 1, 4096, "tall"},
    {4096, 16384, 2048, 1, 4096, "wide"},         {4096, 4096, 4096, 4, 8192, "comm-heavy"},
    {8192, 8192, 8192, 4, 16384, "comm-heavy"},
};
#define DUET__NSEED ((int)(sizeof(duet__seed_shapes) / sizeof(duet__seed_shapes[0])))

int duet_seed_shape_count(void)
{
    return DUET__NSEED;
}

duet_seed_shape_t duet_seed_shape(int i)
{
    duet_seed_shape_t none = {0, 0, 0, 0, 0, ""};
    return i >= 0 && i < DUET__NSEED ? duet__seed_shapes[i] : none;
}

void duet_workloads_free(duet_workloads_t *w)
{
    if (w == NULL)
        return;
    free(w->w);
    w->w = NULL;
    w->n = 0;
}

static duet_status_t duet__wls_push(duet_workloads_t *w, size_t *cap, const duet_workload_t *x)
{
    if (w->n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        duet_workload_t *p = realloc(w->w, c * sizeof(*p));
        if (p == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "cannot grow a shape set to %zu workloads", c);
        w->w = p;
        *cap = c;
    }
    w->w[w->n++] = *x;
    return DUET_OK;
}

duet_status_t duet_workloads_seed(int32_t world, uint32_t colls, int32_t dtype, duet_workloads_t *out_p)
{
    if (colls == 0)
        colls = ((1u << DUET_COLL_COUNT) - 1) & ~1u;
    duet_workloads_t w = {NULL, 0};
    size_t cap = 0;
    duet_status_t st = DUET_OK;
    for (int i = 0; i < DUET__NSEED; i++) {
        for (int32_t c = 1; c < DUET_COLL_COUNT; c++) {
            if (!(colls & (1u << c)))
                continue;
            const duet_seed_shape_t *s = &duet__seed_shapes[i];
            duet_workload_t x = duet_workload_empty();
            x.m = s->m;
            x.n = s->n;
            x.k = s->k;
            x.mc = 256 * (int64_t)world * s->comm_mult;
            x.nc = s->nc;
            x.coll = c;
            x.world = world;
            x.dtype = dtype;
            if ((st = duet_workload_validate(&x)) < 0 || (st = duet__wls_push(&w, &cap, &x)) < 0) {
                duet_workloads_free(&w);
                return st;
            }
        }
    }
    *out_p = w;
    return DUET_OK;
}

duet_status_t duet_workloads_load(const char *path, int32_t world, int32_t dtype, duet_workloads_t *out_p)
{
    char *text = NULL;
    DUET_CHECK(duet__read_file(path, &text, NULL));
    duet_workloads_t w = {NULL, 0};
    size_t cap = 0;
    duet_status_t st = DUET_OK;
    long line = 0;
    /* Line by line (blank lines count, so the numbers in errors are the editor's), then the
     * fields of a line split at white space, in place: no field is cut at a buffer's length. */
    for (char *next = text; *next != '\0';) {
        char *ln = next;
        next += strcspn(next, "\n");
        if (*next != '\0')
            *next++ = '\0';
        line++;
        char *hash = strchr(ln, '#');
        if (hash)
            *hash = '\0';
        char *field[4] = {NULL, NULL, NULL, NULL};
        int n = 0;
        for (char *s1 = NULL, *f = strtok_r(ln, " \t\r\v\f", &s1); f; f = strtok_r(NULL, " \t\r\v\f", &s1)) {
            if (n == 4) {
                n = -1;
                break;
            }
            field[n++] = f;
        }
        if (n == 0)
            continue; /* blank or comment */
        if (n < 3) {
            st = duet__error(DUET_ERR_PARSE, "%s: line %ld: want 'MxNxK McxNc COLL[,COLL...] [dtype]'", path, line);
            goto fail;
        }
        char *gemm = field[0], *comm = field[1], *colls = field[2], *dt = field[3] ? field[3] : "";
        duet_workload_t x = duet_workload_empty();
        x.world = world;
        x.dtype = dtype;
        /* Extents up to 2^40 parse (duet_workload_validate() names the real limit); beyond, the
         * numbers would not fit their type. */
        int64_t g[3], cc[2] = {0, 0};
        if (duet_dims_parse(gemm, 3, INT64_C(1) << 40, g) < 0) {
            st = duet__error(DUET_ERR_PARSE, "%s: line %ld: '%s' is not MxNxK", path, line, gemm);
            goto fail;
        }
        if (strcmp(comm, "-") != 0 && duet_dims_parse(comm, 2, INT64_C(1) << 40, cc) < 0) {
            st = duet__error(DUET_ERR_PARSE, "%s: line %ld: '%s' is not McxNc or -", path, line, comm);
            goto fail;
        }
        if (dt[0] && duet_dtype_parse(dt, &x.dtype) < 0) {
            st = duet__error(DUET_ERR_PARSE, "%s: line %ld: %s", path, line, duet_last_error());
            goto fail;
        }
        x.m = g[0];
        x.n = g[1];
        x.k = g[2];
        for (char *s2 = NULL, *c = strtok_r(colls, ",", &s2); c; c = strtok_r(NULL, ",", &s2)) {
            duet_workload_t y = x;
            if (duet_collective_parse(c, &y.coll) < 0) {
                st = duet__error(DUET_ERR_PARSE, "%s: line %ld: %s", path, line, duet_last_error());
                goto fail;
            }
            if (y.coll != DUET_COLL_NONE) {
                y.mc = cc[0];
                y.nc = cc[1];
            }
            if (duet_workload_validate(&y) < 0) {
                st = duet__error(DUET_ERR_PARSE, "%s: line %ld: %s", path, line, duet_last_error());
                goto fail;
            }
            DUET_CHECK_GOTO(duet__wls_push(&w, &cap, &y), st, fail);
        }
    }
    if (w.n == 0) {
        st = duet__error(DUET_ERR_PARSE, "%s: no workloads in the file", path);
        goto fail;
    }
    free(text);
    *out_p = w;
    return DUET_OK;
fail:
    free(text);
    duet_workloads_free(&w);
    return st;
}
