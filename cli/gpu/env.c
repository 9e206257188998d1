/*
 * The environment of the GPU commands: MPI, the backend context, the vendor libraries, two
 * streams; buffers per workload; the measurement loop.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/gpu/gpu.h"

double gpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int gpu_env_init(gpu_env_t *e, const char *cmd, int *argc, char ***argv, const gpu_env_params_t *p)
{
    memset(e, 0, sizeof(*e));
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
            cli_error(cmd, "MPI_Init failed (run under mpirun, one rank per GPU)");
            return CLI_EXIT_FAILED;
        }
        e->mpi_inited_here = 1;
    }
    e->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(e->comm, &e->rank);
    MPI_Comm_size(e->comm, &e->world);
    duet_ctx_params_t cp = duet_ctx_default_params();
    if (p->heap_bytes)
        cp.heap_bytes = p->heap_bytes;
    if (p->timeout_ms)
        cp.timeout_ms = p->timeout_ms;
    cp.hw = p->hw;
    duet_status_t st = duet_ctx_create(e->comm, &cp, &e->ctx);
    if (st < 0) {
        cli_error(cmd, "rank %d: %s", e->rank, duet_last_error());
        return CLI_EXIT_FAILED;
    }
    e->hw = *duet_ctx_hw(e->ctx);
    int dev = duet_ctx_device(e->ctx);
    st = duet_gpu_describe(dev, e->device, sizeof(e->device), e->arch, sizeof(e->arch), &e->sms, e->driver,
                           sizeof(e->driver), e->runtime, sizeof(e->runtime));
    if (st >= 0)
        st = duet_gpu_streams_create(&e->streams);
    if (st >= 0 && p->vendor) {
        duet_vendor_params_t vp = duet_vendor_default_params();
        vp.n_capped = p->n_capped;
        memcpy(vp.capped_ctas, p->capped_ctas, sizeof(vp.capped_ctas));
        st = duet_vendor_create(e->comm, dev, &vp, &e->vendor);
    }
    if (st < 0) {
        cli_error(cmd, "rank %d: %s", e->rank, duet_last_error());
        gpu_env_fini(e);
        return CLI_EXIT_FAILED;
    }
    return CLI_EXIT_OK;
}

void gpu_env_fini(gpu_env_t *e)
{
    duet_vendor_destroy(e->vendor);
    e->vendor = NULL;
    duet_gpu_streams_destroy(&e->streams);
    duet_ctx_destroy(e->ctx);
    e->ctx = NULL;
    if (e->mpi_inited_here)
        MPI_Finalize();
    e->mpi_inited_here = 0;
}

duet_workload_t gpu_gemm_part(const duet_workload_t *wl)
{
    duet_workload_t g = *wl;
    g.coll = DUET_COLL_NONE;
    g.mc = g.nc = 0;
    return g;
}

duet_workload_t gpu_comm_part(const duet_workload_t *wl)
{
    duet_workload_t c = *wl;
    c.m = c.n = c.k = 0;
    return c;
}

duet_status_t gpu_bufs_alloc(gpu_env_t *e, const duet_workload_t *wl, uint64_t seed, gpu_bufs_t *b)
{
    memset(b, 0, sizeof(*b));
    duet_status_t st = DUET_OK;
    size_t eb = 2;
    void *stream = e->streams.main;
    if (wl->m > 0) {
        DUET_CHECK_GOTO_CLI(duet_gpu_malloc((size_t)wl->m * (size_t)wl->k * eb, &b->a), st, fail);
        DUET_CHECK_GOTO_CLI(duet_gpu_malloc((size_t)wl->n * (size_t)wl->k * eb, &b->b), st, fail);
        DUET_CHECK_GOTO_CLI(duet_gpu_malloc((size_t)wl->m * (size_t)wl->n * eb, &b->c), st, fail);
        DUET_CHECK_GOTO_CLI(duet_gpu_fill_random(b->a, (size_t)wl->m * (size_t)wl->k, wl->dtype, seed * 3 + 1, stream),
                            st, fail);
        DUET_CHECK_GOTO_CLI(duet_gpu_fill_random(b->b, (size_t)wl->n * (size_t)wl->k, wl->dtype, seed * 3 + 2, stream),
                            st, fail);
    }
    if (wl->coll != DUET_COLL_NONE) {
        b->src_bytes = duet_op_src_bytes(wl);
        b->dst_bytes = duet_op_dst_bytes(wl);
        /* The heap allocation is collective; every rank asks for the same sizes in order. */
        DUET_CHECK_GOTO_CLI(duet_ctx_alloc(e->ctx, b->src_bytes, &b->src), st, fail);
        DUET_CHECK_GOTO_CLI(duet_ctx_alloc(e->ctx, b->dst_bytes, &b->dst), st, fail);
        DUET_CHECK_GOTO_CLI(duet_gpu_malloc(b->dst_bytes, &b->vdst), st, fail);
        DUET_CHECK_GOTO_CLI(duet_gpu_fill_random(b->src, b->src_bytes / eb, wl->dtype,
                                                 seed * 3 + 1000003u * (uint64_t)(e->rank + 1), stream),
                            st, fail);
    }
    return DUET_OK;
fail:
    gpu_bufs_free(e, b);
    return st;
}

void gpu_bufs_free(gpu_env_t *e, gpu_bufs_t *b)
{
    /* Heap allocations go back in reverse order (the heap reclaims in stack order). */
    if (b->dst)
        duet_ctx_free(e->ctx, b->dst);
    if (b->src)
        duet_ctx_free(e->ctx, b->src);
    duet_gpu_free(b->vdst);
    duet_gpu_free(b->c);
    duet_gpu_free(b->b);
    duet_gpu_free(b->a);
    memset(b, 0, sizeof(*b));
}

int gpu_measure_runs(gpu_env_t *e, duet_timed_fn fn, void *user, int warmup, int reps, double *samples, int *n,
                     char *error, size_t error_size)
{
    double warm_ms = 0;
    for (int i = 0, timed = 0; timed < reps; i++) {
        /* Every rank sees the same slowest time, so every rank leaves the warm-up at the same run. */
        int warming = i < warmup || (warm_ms < e->warmup_ms && i < GPU_WARMUP_MAX_RUNS);
        MPI_Barrier(e->comm);
        double ms = 0;
        duet_status_t r = duet_gpu_time(&e->streams, fn, user, &ms);
        /* Device-side errors of duet operations (timeouts) surface here. */
        if (r >= 0)
            r = duet_ctx_sync(e->ctx, e->streams.main);
        if (r >= 0)
            r = duet_ctx_sync(e->ctx, e->streams.side);
        int bad = r < 0, any_bad = 0;
        char why[200];
        if (bad)
            snprintf(why, sizeof(why), "%s",
                     duet_ctx_last_error(e->ctx)[0] ? duet_ctx_last_error(e->ctx) : duet_last_error());
        MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, e->comm);
        if (any_bad) {
            snprintf(error, error_size, "%s", bad ? why : "failed on another rank");
            /* Leave the context usable for the next measurement. */
            duet_ctx_resync(e->ctx);
            return -1;
        }
        double slowest = 0;
        MPI_Allreduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, e->comm);
        if (warming) {
            warm_ms += slowest;
        } else {
            samples[(*n)++] = slowest;
            timed++;
        }
    }
    return 0;
}

void gpu_stat_summarise(double *samples, int n, gpu_stat_t *st)
{
    memset(st, 0, sizeof(*st));
    if (n < 1) {
        snprintf(st->error, sizeof(st->error), "no timed run");
        return;
    }
    st->med = cli_median(samples, (size_t)n); /* sorts samples */
    st->ok = 1;
    st->n = n;
    st->min = samples[0];
    st->max = samples[n - 1];
}

void gpu_measure(gpu_env_t *e, duet_timed_fn fn, void *user, int warmup, int reps, gpu_stat_t *st)
{
    memset(st, 0, sizeof(*st));
    double *s = calloc((size_t)reps, sizeof(double));
    if (s == NULL) {
        snprintf(st->error, sizeof(st->error), "out of memory");
        return;
    }
    int k = 0;
    if (gpu_measure_runs(e, fn, user, warmup, reps, s, &k, st->error, sizeof(st->error)) == 0)
        gpu_stat_summarise(s, k, st);
    free(s);
}

void gpu_duet_job_init(gpu_duet_job_t *j, gpu_env_t *e, const duet_workload_t *wl, const duet_config_t *cfg,
                       const gpu_bufs_t *b)
{
    memset(j, 0, sizeof(*j));
    j->e = e;
    j->op.wl = *wl;
    j->op.cfg = *cfg;
    if (wl->m > 0) {
        j->op.a = b->a;
        j->op.b = b->b;
        j->op.c = b->c;
    }
    if (wl->coll != DUET_COLL_NONE) {
        j->op.src = b->src;
        j->op.dst = b->dst;
    }
}

duet_status_t gpu_run_duet(void *user, void *main_stream, void *side_stream)
{
    (void)side_stream;
    gpu_duet_job_t *j = user;
    /* Vendor mode's GEMM is the vendor library's: duet_run() refuses it, duet_vendor_run() runs it
     * with duet's comm kernel forked beside it. */
    if (j->op.cfg.mode == DUET_MODE_VENDOR)
        return duet_vendor_run(j->e->vendor, j->e->ctx, &j->op, main_stream);
    return duet_run(j->e->ctx, &j->op, main_stream);
}

void gpu_progress(const gpu_env_t *e, const char *what, size_t done, size_t total, double t0)
{
    if (e->rank != 0)
        return;
    double el = gpu_now() - t0;
    double eta = done > 0 ? el / (double)done * (double)(total - done) : 0;
    int width = 30, fill = total ? (int)((double)width * (double)done / (double)total) : width;
    fprintf(stderr, "\r[%.*s%*s] %zu/%zu %-40.40s %4.0fs elapsed, ETA %4.0fs", fill, "##############################",
            width - fill, "", done, total, what, el, eta);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}
