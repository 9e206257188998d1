/*
 * Random shape sets: workloads nobody chose, named by a seed.
 *
 * Claims about speed or accuracy are made on shapes drawn here rather than on a fixed list, so
 * that a change tuned to one list shows up as what it is. The generator is splitmix64 (Steele,
 * Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014): 64 bits of
 * state, every output a bijective mix of it, the same stream on every platform. Extents are drawn
 * log-uniformly because GEMM cost and its quirks (wave quantisation, small K, skinny M) spread
 * over orders of magnitude, not over a linear range.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

void duet_rng_seed(duet_rng_t *r, uint64_t seed)
{
    r->state = seed;
}

uint64_t duet_rng_next(duet_rng_t *r)
{
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

int64_t duet_rng_int(duet_rng_t *r, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0 means the whole 2^64 range */
    if (span == 0)
        return (int64_t)duet_rng_next(r);
    /* Reject the top partial copy of [0, span) so that every value is equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % span;
    uint64_t x;
    do
        x = duet_rng_next(r);
    while (x >= limit);
    return lo + (int64_t)(x % span);
}

double duet_rng_unit(duet_rng_t *r)
{
    return (double)(duet_rng_next(r) >> 11) * 0x1.0p-53;
}

duet_random_params_t duet_random_default_params(void)
{
    duet_random_params_t p;
    memset(&p, 0, sizeof(p));
    p.seed = 1;
    p.min_dim = 256;
    p.max_dim = 16384;
    p.ragged = 1.0 / 3.0;
    p.skinny = 0.15;
    p.small_k = 0.15;
    p.skinny_max = 1024;
    p.dtypes = (1u << DUET_DTYPE_FP16) | (1u << DUET_DTYPE_BF16);
    p.colls = ((1u << DUET_COLL_COUNT) - 1) & ~1u;
    p.min_comm_bytes = 256.0 * 1024;
    p.max_comm_bytes = 256.0 * 1024 * 1024;
    p.world = 1;
    return p;
}

/* A log-uniform value in [lo, hi]. */
static double duet__rng_log(duet_rng_t *r, double lo, double hi)
{
    return lo * exp(duet_rng_unit(r) * log(hi / lo));
}

/*
 * One extent in [lo, hi]: log-uniform, then either a multiple of 64 or, with probability
 * `ragged`, a value that is not one (moved by 1..63 within the range). A range that holds no
 * multiple of 64 (or nothing else) gives what it can.
 */
static int64_t duet__rng_dim(duet_rng_t *r, int64_t lo, int64_t hi, double ragged)
{
    int64_t v = (int64_t)llround(duet__rng_log(r, (double)lo, (double)hi));
    v = v < lo ? lo : v > hi ? hi : v;
    int want_ragged = duet_rng_unit(r) < ragged;
    if (want_ragged) {
        if (v % 64 == 0) {
            int64_t off = duet_rng_int(r, 1, 63);
            v = v + off <= hi ? v + off : v - off;
        }
    } else {
        int64_t m = (v + 32) / 64 * 64;
        if (m > hi)
            m -= 64;
        if (m < lo)
            m += 64;
        if (m >= lo && m <= hi)
            v = m;
    }
    return v < lo ? lo : v > hi ? hi : v;
}

/* The i-th set bit of mask (i counted from 0), or -1. */
static int32_t duet__mask_pick(uint32_t mask, int64_t i)
{
    for (int32_t b = 0; b < 32; b++)
        if (mask & (1u << b)) {
            if (i == 0)
                return b;
            i--;
        }
    return -1;
}

static int duet__popcount(uint32_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

static duet_status_t duet__random_check(const duet_random_params_t *p)
{
    if (p->min_dim < 1 || p->max_dim < p->min_dim || p->max_dim > (INT64_C(1) << 24))
        return duet__error(DUET_ERR_INVALID_ARG, "random shapes: extents [%lld, %lld] are not a range in [1, 2^24]",
                           (long long)p->min_dim, (long long)p->max_dim);
    if (p->skinny_max < p->min_dim || p->skinny_max > p->max_dim)
        return duet__error(DUET_ERR_INVALID_ARG, "random shapes: the small extent's bound %lld is outside [%lld, %lld]",
                           (long long)p->skinny_max, (long long)p->min_dim, (long long)p->max_dim);
    if (!(p->ragged >= 0 && p->ragged <= 1 && p->skinny >= 0 && p->small_k >= 0 && p->skinny + p->small_k <= 1))
        return duet__error(DUET_ERR_INVALID_ARG,
                           "random shapes: shares must be in [0, 1] and skinny + small K at most 1");
    uint32_t dt_all = (1u << DUET_DTYPE_COUNT) - 1, coll_all = (1u << DUET_COLL_COUNT) - 1;
    if (p->dtypes == 0 || (p->dtypes & ~dt_all) || p->colls == 0 || (p->colls & ~coll_all))
        return duet__error(DUET_ERR_INVALID_ARG, "random shapes: no element type or collective to draw from");
    if (p->world < 1 || p->world > 4096)
        return duet__error(DUET_ERR_INVALID_ARG, "random shapes: world %d is not in [1, 4096]", (int)p->world);
    if (!(p->min_comm_bytes >= 1024 && p->max_comm_bytes >= p->min_comm_bytes && p->max_comm_bytes <= 0x1p36))
        return duet__error(DUET_ERR_INVALID_ARG,
                           "random shapes: comm sizes [%g, %g] bytes are not a range in [1 KiB, 64 GiB]",
                           p->min_comm_bytes, p->max_comm_bytes);
    return DUET_OK;
}

/* One workload: the draws happen in a fixed order, so a set is reproducible from its seed. */
static void duet__random_one(const duet_random_params_t *p, duet_rng_t *r, duet_workload_t *x)
{
    static const int64_t ncs[] = {1024, 2048, 4096, 8192, 16384};
    *x = duet_workload_empty();
    x->world = p->world;
    x->dtype = duet__mask_pick(p->dtypes, duet_rng_int(r, 0, duet__popcount(p->dtypes) - 1));
    x->coll = duet__mask_pick(p->colls, duet_rng_int(r, 0, duet__popcount(p->colls) - 1));
    double kind = duet_rng_unit(r);
    int64_t small_hi = p->skinny_max;
    x->m = duet__rng_dim(r, p->min_dim, kind < p->skinny ? small_hi : p->max_dim, p->ragged);
    x->n = duet__rng_dim(r, p->min_dim, p->max_dim, p->ragged);
    x->k = duet__rng_dim(r, p->min_dim, kind >= p->skinny && kind < p->skinny + p->small_k ? small_hi : p->max_dim,
                         p->ragged);
    if (x->coll == DUET_COLL_NONE)
        return;
    double eb = duet_dtype_bytes(x->dtype);
    double bytes = duet__rng_log(r, p->min_comm_bytes, p->max_comm_bytes);
    x->nc = ncs[duet_rng_int(r, 0, (int64_t)(sizeof(ncs) / sizeof(ncs[0])) - 1)];
    int64_t rows = (int64_t)llround(bytes / (eb * (double)x->nc));
    rows = rows / x->world * x->world; /* reduce_scatter and all_to_all split the rows evenly */
    x->mc = rows < x->world ? x->world : rows;
    /* A broadcast's root stays 0: shape files do not carry it, and a set must read back as drawn. */
}

duet_status_t duet_workloads_random(const duet_random_params_t *p, size_t n, duet_workloads_t *out_p)
{
    DUET_CHECK(duet__random_check(p));
    if (n == 0 || n > 1000000)
        return duet__error(DUET_ERR_INVALID_ARG, "random shapes: %zu workloads asked for; 1 to 1000000", n);
    duet_workloads_t w = {calloc(n, sizeof(duet_workload_t)), n};
    if (w.w == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "cannot allocate %zu random workloads", n);
    duet_rng_t r;
    duet_rng_seed(&r, p->seed);
    for (size_t i = 0; i < n; i++) {
        duet__random_one(p, &r, &w.w[i]);
        duet_status_t st = duet_workload_validate(&w.w[i]);
        if (st < 0) {
            duet_workloads_free(&w);
            duet__error_prefix("random shapes");
            return st;
        }
    }
    *out_p = w;
    return DUET_OK;
}

void duet_random_describe(const duet_random_params_t *p, size_t n, char *buf, size_t len)
{
    duet_random_params_t d = duet_random_default_params();
    int k = snprintf(buf, len, "random n=%zu seed=%llu world=%d", n, (unsigned long long)p->seed, (int)p->world);
    /* Only what differs from the defaults, so that the usual case stays short. */
#define DUET__DESCRIBE(cond, ...)                                                                                      \
    if ((cond) && k >= 0 && (size_t)k < len)                                                                           \
    k += snprintf(buf + k, len - (size_t)k, __VA_ARGS__)
    DUET__DESCRIBE(p->min_dim != d.min_dim, " min_dim=%lld", (long long)p->min_dim);
    DUET__DESCRIBE(p->max_dim != d.max_dim, " max_dim=%lld", (long long)p->max_dim);
    DUET__DESCRIBE(p->ragged != d.ragged, " ragged=%g", p->ragged);
    DUET__DESCRIBE(p->skinny != d.skinny, " skinny=%g", p->skinny);
    DUET__DESCRIBE(p->small_k != d.small_k, " small_k=%g", p->small_k);
    DUET__DESCRIBE(p->skinny_max != d.skinny_max, " skinny_max=%lld", (long long)p->skinny_max);
    DUET__DESCRIBE(p->dtypes != d.dtypes, " dtypes=0x%x", p->dtypes);
    DUET__DESCRIBE(p->colls != d.colls, " colls=0x%x", p->colls);
    DUET__DESCRIBE(p->min_comm_bytes != d.min_comm_bytes, " min_comm_bytes=%g", p->min_comm_bytes);
    DUET__DESCRIBE(p->max_comm_bytes != d.max_comm_bytes, " max_comm_bytes=%g", p->max_comm_bytes);
#undef DUET__DESCRIBE
}

duet_status_t duet_workloads_save(const char *path, const duet_workloads_t *w, const char *header)
{
    duet__sbuf_t b;
    duet__sbuf_init(&b);
    /* Each header line becomes a comment line. */
    for (const char *h = header; h && *h;) {
        size_t len = strcspn(h, "\n");
        duet__sbuf_printf(&b, "# %.*s\n", (int)len, h);
        h += len + (h[len] == '\n');
    }
    duet__sbuf_printf(&b, "# MxNxK McxNc collective dtype\n");
    for (size_t i = 0; i < w->n; i++) {
        const duet_workload_t *x = &w->w[i];
        if (x->coll == DUET_COLL_NONE)
            duet__sbuf_printf(&b, "%lldx%lldx%lld - none %s\n", (long long)x->m, (long long)x->n, (long long)x->k,
                              duet_dtype_name(x->dtype));
        else
            duet__sbuf_printf(&b, "%lldx%lldx%lld %lldx%lld %s %s\n", (long long)x->m, (long long)x->n, (long long)x->k,
                              (long long)x->mc, (long long)x->nc, duet_collective_name(x->coll),
                              duet_dtype_name(x->dtype));
    }
    return duet__sbuf_write(&b, path);
}
