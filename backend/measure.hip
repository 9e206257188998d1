/*
 * The measurer (include/duet/measure.h): a context, the device's description, two streams and
 * optionally the baseline context; buffers per workload; the timed, barrier-synchronised
 * measurement loop; the GPU tuner. Host code only: it runs the kernels through duet_run() and
 * duet_vendor_run().
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/ctx.h"
#include "duet/measure.h"

struct duet_measure {
    MPI_Comm comm; /* the caller's: every run starts after a barrier on it */
    int rank, world;
    duet_ctx_h ctx;
    int own_ctx; /* 1: created here, destroyed here */
    duet_baseline_h base;
    duet_gpu_streams_t streams;
    duet_gpu_info_t gpu;
};

duet_measure_params_t duet_measure_default_params(void)
{
    duet_measure_params_t p;
    memset(&p, 0, sizeof(p));
    p.ctx = duet_ctx_default_params();
    p.base = duet_baseline_default_params();
    return p;
}

duet_status_t duet_measure_create(MPI_Comm comm, const duet_measure_params_t *params, duet_measure_h *m_p)
{
    duet_measure_params_t p = params ? *params : duet_measure_default_params();
    duet_status_t st = DUET_OK;
    duet_measure_h m = (duet_measure_h)calloc(1, sizeof(*m));
    if (m == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "measure: cannot allocate a measurer");
    m->comm = comm;
    MPI_CHECK(MPI_Comm_rank(comm, &m->rank), st, fail);
    MPI_CHECK(MPI_Comm_size(comm, &m->world), st, fail);
    if (p.use_ctx != NULL) {
        m->ctx = p.use_ctx;
    } else {
        DUET_CHECK_GOTO(duet_ctx_create(comm, &p.ctx, &m->ctx), st, fail);
        m->own_ctx = 1;
    }
    if (duet_ctx_world(m->ctx) != m->world) {
        st = duet__error(DUET_ERR_INVALID_ARG, "measure: the context has %d ranks, the communicator %d",
                         duet_ctx_world(m->ctx), m->world);
        goto fail;
    }
    /* Describing the device and making streams can fail on one rank only: agree before the
     * baseline's communicators, whose creation is collective. */
    st = duet_gpu_describe(duet_ctx_device(m->ctx), &m->gpu);
    if (st >= 0)
        st = duet_gpu_streams_create(&m->streams);
    DUET_CHECK_GOTO(duet__mpi_agree(comm, st), st, fail);
    if (p.baseline)
        DUET_CHECK_GOTO(duet_baseline_create(comm, duet_ctx_device(m->ctx), &p.base, &m->base), st, fail);
    *m_p = m;
    return DUET_OK;
fail:
    duet_measure_destroy(m);
    return st;
}

void duet_measure_destroy(duet_measure_h m)
{
    if (m == NULL)
        return;
    duet_baseline_destroy(m->base);
    duet_gpu_streams_destroy(&m->streams);
    if (m->own_ctx)
        duet_ctx_destroy(m->ctx);
    free(m);
}

duet_ctx_h duet_measure_ctx(duet_measure_h m)
{
    return m->ctx;
}
duet_baseline_h duet_measure_baseline(duet_measure_h m)
{
    return m->base;
}
const duet_hw_t *duet_measure_hw(duet_measure_h m)
{
    return duet_ctx_hw(m->ctx);
}
const duet_gpu_info_t *duet_measure_gpu(duet_measure_h m)
{
    return &m->gpu;
}
int duet_measure_rank(duet_measure_h m)
{
    return m->rank;
}
int duet_measure_world(duet_measure_h m)
{
    return m->world;
}
duet_gpu_streams_t *duet_measure_streams(duet_measure_h m)
{
    return &m->streams;
}

/* ------------------------------------------------------------------------------------------ */
/* Buffers                                                                                     */
/* ------------------------------------------------------------------------------------------ */

duet_status_t duet_measure_bufs_alloc(duet_measure_h m, const duet_workload_t *wl, uint64_t seed,
                                      duet_measure_bufs_t *b_p)
{
    duet_measure_bufs_t b;
    memset(&b, 0, sizeof(b));
    duet_status_t st = DUET_OK;
    const size_t eb = 2; /* bytes per element, fp16 and bf16 */
    void *stream = m->streams.main;
    if (wl->m > 0) {
        DUET_CHECK_GOTO(duet_gpu_malloc((size_t)wl->m * (size_t)wl->k * eb, &b.a), st, fail);
        DUET_CHECK_GOTO(duet_gpu_malloc((size_t)wl->n * (size_t)wl->k * eb, &b.b), st, fail);
        DUET_CHECK_GOTO(duet_gpu_malloc((size_t)wl->m * (size_t)wl->n * eb, &b.c), st, fail);
        DUET_CHECK_GOTO(duet_gpu_fill_random(b.a, (size_t)wl->m * (size_t)wl->k, wl->dtype, seed * 3 + 1, stream), st,
                        fail);
        DUET_CHECK_GOTO(duet_gpu_fill_random(b.b, (size_t)wl->n * (size_t)wl->k, wl->dtype, seed * 3 + 2, stream), st,
                        fail);
    }
    if (wl->coll != DUET_COLL_NONE) {
        b.src_bytes = duet_op_src_bytes(wl);
        b.dst_bytes = duet_op_dst_bytes(wl);
        /* The heap allocation is collective; every rank asks for the same sizes in order. */
        DUET_CHECK_GOTO(duet_ctx_alloc(m->ctx, b.src_bytes, &b.src), st, fail);
        DUET_CHECK_GOTO(duet_ctx_alloc(m->ctx, b.dst_bytes, &b.dst), st, fail);
        if (m->base != NULL)
            DUET_CHECK_GOTO(duet_gpu_malloc(b.dst_bytes, &b.base_dst), st, fail);
        DUET_CHECK_GOTO(duet_gpu_fill_random(b.src, b.src_bytes / eb, wl->dtype,
                                             seed * 3 + 1000003u * (uint64_t)(m->rank + 1), stream),
                        st, fail);
    }
    *b_p = b;
    return DUET_OK;
fail:
    duet_measure_bufs_free(m, &b);
    return st;
}

void duet_measure_bufs_free(duet_measure_h m, duet_measure_bufs_t *b)
{
    /* Heap allocations go back in reverse order (the heap reclaims in stack order). */
    if (b->dst)
        duet_ctx_free(m->ctx, b->dst);
    if (b->src)
        duet_ctx_free(m->ctx, b->src);
    duet_gpu_free(b->base_dst);
    duet_gpu_free(b->c);
    duet_gpu_free(b->b);
    duet_gpu_free(b->a);
    memset(b, 0, sizeof(*b));
}

/* ------------------------------------------------------------------------------------------ */
/* Jobs                                                                                        */
/* ------------------------------------------------------------------------------------------ */

duet_measure_runs_t duet_measure_default_runs(void)
{
    duet_measure_runs_t r;
    memset(&r, 0, sizeof(r));
    r.warmup = 5;
    r.repeats = 20;
    r.warmup_ms = 0;
    return r;
}

duet_measure_job_t duet_measure_job(int32_t what, const duet_workload_t *wl, const duet_config_t *cfg)
{
    duet_measure_job_t j;
    memset(&j, 0, sizeof(j));
    j.what = what;
    j.wl = *wl;
    if (cfg != NULL)
        j.cfg = *cfg;
    return j;
}

duet_workload_t duet_measure_gemm_part(const duet_workload_t *wl)
{
    duet_workload_t g = *wl;
    g.coll = DUET_COLL_NONE;
    g.mc = g.nc = 0;
    return g;
}

duet_workload_t duet_measure_comm_part(const duet_workload_t *wl)
{
    duet_workload_t c = *wl;
    c.m = c.n = c.k = 0;
    return c;
}

/* A job bound to a measurer and buffers: what duet_gpu_time() runs. */
typedef struct measure_task {
    duet_measure_h m;
    const duet_measure_job_t *job;
    duet_op_t op; /* duet's kinds: the operation on the job's part of the workload */
    const duet_measure_bufs_t *b;
} measure_task_t;

static duet_status_t measure_task_run(void *user, void *main_stream, void *side_stream)
{
    measure_task_t *t = (measure_task_t *)user;
    const duet_measure_job_t *j = t->job;
    duet_baseline_h base = t->m->base;
    const duet_measure_bufs_t *b = t->b;
    switch (j->what) {
    case DUET_MEASURE_OP:
    case DUET_MEASURE_GEMM_ALONE:
    case DUET_MEASURE_COMM_ALONE:
        /* Vendor mode's GEMM is the library's: duet_run() refuses it, duet_vendor_run() runs it
         * with duet's comm kernel forked beside it. */
        if (t->op.cfg.mode == DUET_MODE_VENDOR)
            return duet_vendor_run(base, t->m->ctx, &t->op, main_stream);
        return duet_run(t->m->ctx, &t->op, main_stream);
    case DUET_MEASURE_BASE_GEMM:
        return duet_baseline_gemm(base, &j->wl, b->a, b->b, b->c, j->sm_target, main_stream);
    case DUET_MEASURE_BASE_COLL:
        return duet_baseline_coll(base, j->slot, &j->wl, b->src, b->base_dst, main_stream);
    case DUET_MEASURE_BASE_SEQUENTIAL:
        DUET_CHECK(duet_baseline_gemm(base, &j->wl, b->a, b->b, b->c, j->sm_target, main_stream));
        return duet_baseline_coll(base, j->slot, &j->wl, b->src, b->base_dst, main_stream);
    default: /* DUET_MEASURE_BASE_STREAMS: the GEMM on main, the collective on side */
        DUET_CHECK(duet_baseline_gemm(base, &j->wl, b->a, b->b, b->c, j->sm_target, main_stream));
        return duet_baseline_coll(base, j->slot, &j->wl, b->src, b->base_dst, side_stream);
    }
}

/* Bind a job: check what it needs, and build duet's operation on the job's part. */
static duet_status_t measure_task_init(duet_measure_h m, const duet_measure_job_t *j, const duet_measure_bufs_t *b,
                                       measure_task_t *t)
{
    memset(t, 0, sizeof(*t));
    if (j->what < 0 || j->what >= DUET_MEASURE_WHAT_COUNT)
        return duet__error(DUET_ERR_INVALID_ARG, "measure: unknown job kind %d", (int)j->what);
    int duet_kind = j->what <= DUET_MEASURE_COMM_ALONE;
    if ((!duet_kind || j->cfg.mode == DUET_MODE_VENDOR) && m->base == NULL)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "measure: %s needs the baseline context (duet_measure_params_t.baseline)",
                           duet_kind ? "vendor mode" : "a baseline job");
    t->m = m;
    t->job = j;
    t->b = b;
    if (!duet_kind)
        return DUET_OK;
    const duet_workload_t wl = j->what == DUET_MEASURE_GEMM_ALONE   ? duet_measure_gemm_part(&j->wl)
                               : j->what == DUET_MEASURE_COMM_ALONE ? duet_measure_comm_part(&j->wl)
                                                                    : j->wl;
    t->op.wl = wl;
    t->op.cfg = j->cfg;
    if (wl.m > 0) {
        t->op.a = b->a;
        t->op.b = b->b;
        t->op.c = b->c;
    }
    if (wl.coll != DUET_COLL_NONE) {
        t->op.src = b->src;
        t->op.dst = b->dst;
    }
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The measurement loop                                                                        */
/* ------------------------------------------------------------------------------------------ */

duet_status_t duet_measure_fn(duet_measure_h m, duet_timed_fn fn, void *user, const duet_measure_runs_t *runs,
                              double *samples, int32_t *n_inout)
{
    duet_status_t st = DUET_OK;
    double warm_ms = 0;
    for (int32_t i = 0, timed = 0; timed < runs->repeats; i++) {
        /* Every rank sees the same slowest time, so every rank leaves the warm-up at the same run. */
        int warming = i < runs->warmup || (warm_ms < runs->warmup_ms && i < DUET_MEASURE_WARMUP_MAX_RUNS);
        double ms = 0, slowest = 0;
        MPI_CHECK(MPI_Barrier(m->comm), st, out);
        st = duet_gpu_time(&m->streams, fn, user, &ms);
        /* Device-side errors of duet operations (timeouts) surface here. */
        if (st >= 0)
            st = duet_ctx_sync(m->ctx, m->streams.main);
        if (st >= 0)
            st = duet_ctx_sync(m->ctx, m->streams.side);
        duet_status_t agreed = duet__mpi_agree(m->comm, st);
        if (agreed < 0) {
            /* Every rank stops. The context is resynchronised for the next measurement, and the
             * reason kept: this rank's own, or the failing rank's status. */
            char why[DUET__ERRBUF_LEN];
            snprintf(why, sizeof(why), "%s", st < 0 ? duet_last_error() : "failed on another rank");
            duet_ctx_resync(m->ctx);
            st = duet__error(st < 0 ? st : agreed, "%s", why);
            goto out;
        }
        MPI_CHECK(MPI_Allreduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, m->comm), st, out);
        if (warming) {
            warm_ms += slowest;
        } else {
            samples[(*n_inout)++] = slowest;
            timed++;
        }
    }
out:
    return st;
}

duet_status_t duet_measure_samples(duet_measure_h m, const duet_measure_job_t *job, const duet_measure_bufs_t *bufs,
                                   const duet_measure_runs_t *runs, double *samples, int32_t *n_inout)
{
    measure_task_t t;
    DUET_CHECK(measure_task_init(m, job, bufs, &t));
    return duet_measure_fn(m, measure_task_run, &t, runs, samples, n_inout);
}

void duet_measure_summarise(double *samples, int32_t n, duet_measure_stat_t *st)
{
    memset(st, 0, sizeof(*st));
    if (n < 1) {
        snprintf(st->error, sizeof(st->error), "no timed run");
        return;
    }
    st->med_ms = duet__median(samples, (size_t)n); /* sorts samples */
    st->ok = 1;
    st->n = n;
    st->min_ms = samples[0];
    st->max_ms = samples[n - 1];
}

duet_status_t duet_measure_run(duet_measure_h m, const duet_measure_job_t *job, const duet_measure_bufs_t *bufs,
                               const duet_measure_runs_t *runs, duet_measure_stat_t *st_p)
{
    duet_status_t st = DUET_OK;
    int32_t n = 0;
    double *s = NULL;
    memset(st_p, 0, sizeof(*st_p));
    if (runs->repeats < 1 || runs->warmup < 0) {
        st = duet__error(DUET_ERR_INVALID_ARG, "measure: %d warm-up and %d timed runs", (int)runs->warmup,
                         (int)runs->repeats);
        goto out;
    }
    s = (double *)calloc((size_t)runs->repeats, sizeof(double));
    if (s == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "out of memory");
        goto out;
    }
    DUET_CHECK_GOTO(duet_measure_samples(m, job, bufs, runs, s, &n), st, out);
    duet_measure_summarise(s, n, st_p);
out:
    if (st < 0)
        snprintf(st_p->error, sizeof(st_p->error), "%s", duet_last_error());
    free(s);
    return st;
}

duet_status_t duet_measure_trace(duet_measure_h m, const duet_measure_job_t *job, const duet_measure_bufs_t *bufs,
                                 size_t max_tiles, duet_trace_t *trace)
{
    duet_status_t st = DUET_OK;
    measure_task_t t;
    if (job->what > DUET_MEASURE_COMM_ALONE || job->cfg.mode == DUET_MODE_VENDOR)
        return duet__error(DUET_ERR_INVALID_ARG, "measure: only duet's own tiles are recorded, not the libraries' "
                                                 "(vendor mode, the baselines)");
    DUET_CHECK(measure_task_init(m, job, bufs, &t));
    DUET_CHECK(duet_ctx_trace_enable(m->ctx, max_tiles));
    MPI_CHECK(MPI_Barrier(m->comm), st, out);
    DUET_CHECK_GOTO(duet_run(m->ctx, &t.op, m->streams.main), st, out);
    DUET_CHECK_GOTO(duet_ctx_trace_read(m->ctx, m->streams.main, trace), st, out);
out:
    duet_ctx_trace_enable(m->ctx, 0);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* The GPU tuner                                                                               */
/* ------------------------------------------------------------------------------------------ */

typedef struct measure_tune {
    duet_measure_h m;
    const duet_workload_t *wl;
    const duet_measure_bufs_t *b;
    duet_measure_runs_t runs;
    duet_tune_warn_fn warn; /* the caller's (NULL: the tuner's default) */
    void *warn_user;
} measure_tune_t;

/* Benchmark one candidate on every rank; a failure anywhere fails it everywhere. */
static duet_status_t measure_tune_bench(void *user, const duet_config_t *cfg, double *med_p, double *min_p,
                                        double *max_p)
{
    measure_tune_t *t = (measure_tune_t *)user;
    duet_measure_job_t j = duet_measure_job(DUET_MEASURE_OP, t->wl, cfg);
    duet_measure_stat_t s;
    DUET_CHECK(duet_measure_run(t->m, &j, t->b, &t->runs, &s));
    *med_p = s.med_ms;
    *min_p = s.min_ms;
    *max_p = s.max_ms;
    return DUET_OK;
}

/* Rank 0's value to every rank. */
static duet_status_t measure_tune_agree(void *user, int32_t *value)
{
    measure_tune_t *t = (measure_tune_t *)user;
    duet_status_t st = DUET_OK;
    MPI_CHECK(MPI_Bcast(value, 1, MPI_INT32_T, 0, t->m->comm), st, out);
out:
    return st;
}

/* Warnings come from rank 0 only: every rank sees the same ones. */
static void measure_tune_warn(void *user, const char *msg)
{
    measure_tune_t *t = (measure_tune_t *)user;
    if (t->m->rank != 0)
        return;
    if (t->warn != NULL)
        t->warn(t->warn_user, msg);
    else
        fprintf(stderr, "duet: warning: %s\n", msg);
}

duet_status_t duet_measure_tune(duet_measure_h m, const duet_workload_t *wl, const duet_measure_bufs_t *bufs,
                                const duet_tune_params_t *params, duet_tune_result_t *res_p)
{
    duet_status_t st = DUET_OK;
    duet_measure_bufs_t own;
    memset(&own, 0, sizeof(own));
    duet_tune_params_t p = *params, r;
    measure_tune_t t;
    memset(&t, 0, sizeof(t));
    t.m = m;
    t.wl = wl;
    t.warn = params->warn;
    t.warn_user = params->warn_user;
    p.warn = measure_tune_warn;
    p.warn_user = &t;
    /* One database writer: rank 0. */
    p.write_cache = params->write_cache && m->rank == 0;
    if (wl->world != m->world)
        return duet__error(DUET_ERR_INVALID_ARG, "tune: the workload is for world %d, the measurer has %d ranks",
                           (int)wl->world, m->world);
    DUET_CHECK(duet_tune_params_resolve(&p, &r));
    DUET_CHECK(duet_workload_validate(wl));
    t.runs = duet_measure_default_runs();
    t.runs.warmup = r.n_warmup;
    t.runs.repeats = r.n_repeat;
    if (bufs == NULL) {
        DUET_CHECK(duet_measure_bufs_alloc(m, wl, 42, &own));
        bufs = &own;
    }
    t.b = bufs;
    st = duet_tune_run(wl, duet_ctx_hw(m->ctx), &r, measure_tune_bench, measure_tune_agree, &t, res_p);
    duet_measure_bufs_free(m, &own);
    return st;
}
