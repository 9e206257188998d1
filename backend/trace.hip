/*
 * Measured timelines: with tracing on, every tile of an operation records its CTA, SM, queue,
 * tile id and device wall-clock start and end (backend/kernels.h, duet__trace_tile). Reading
 * the records back gives a duet_trace_t in the simulator's format, so `duet simulate --measured`
 * draws measured and predicted schedules one above the other.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/ctx.h"

duet_status_t duet_ctx_trace_enable(duet_ctx_h ctx, size_t max_tiles)
{
    duet_status_t st = DUET_OK;
    if (ctx == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_trace_enable: ctx is NULL");
    if (max_tiles > (1u << 26))
        return duet__ctx_fail(ctx,
                              duet__error(DUET_ERR_INVALID_ARG, "trace of %zu tiles: at most %u", max_tiles, 1u << 26));
    HIP_CHECK(hipSetDevice(ctx->device), st, out);
    /* Wait for operations that may still write the old buffer. */
    HIP_CHECK(hipDeviceSynchronize(), st, out);
    if (ctx->trace_dev != NULL) {
        HIP_CHECK(hipFree(ctx->trace_dev), st, out);
        ctx->trace_dev = NULL;
        ctx->trace_cap = 0;
    }
    if (max_tiles > 0) {
        HIP_CHECK(hipMalloc((void **)&ctx->trace_dev, max_tiles * sizeof(duet__trace_rec_t)), st, out);
        ctx->trace_cap = max_tiles;
    }
out:
    return st < 0 ? duet__ctx_fail(ctx, st) : st;
}

duet_status_t duet_ctx_trace_read(duet_ctx_h ctx, void *stream, duet_trace_t *trace)
{
    duet_status_t st = DUET_OK;
    duet__trace_rec_t *recs = NULL;
    unsigned long long n = 0;
    if (ctx == NULL || ctx->trace_dev == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_trace_read: tracing is not enabled on this context");
    DUET_CHECK(duet_ctx_sync(ctx, stream));
    HIP_CHECK(hipMemcpy(&n, &ctx->ctl[ctx->epoch & 1u].trace_n, sizeof(n), hipMemcpyDeviceToHost), st, out);
    if (n > ctx->trace_cap)
        n = ctx->trace_cap;
    recs = (duet__trace_rec_t *)malloc((n ? n : 1) * sizeof(*recs));
    if (recs == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "cannot read %llu trace records", n);
        goto out;
    }
    HIP_CHECK(hipMemcpy(recs, ctx->trace_dev, n * sizeof(*recs), hipMemcpyDeviceToHost), st, out);
    {
        /* Times from the first tile's start: the device clock's origin means nothing. */
        uint64_t origin = UINT64_MAX;
        int32_t max_cta = -1;
        for (unsigned long long i = 0; i < n; i++) {
            origin = recs[i].t0_ns < origin ? recs[i].t0_ns : origin;
            max_cta = recs[i].cta > max_cta ? recs[i].cta : max_cta;
        }
        double makespan = 0;
        for (unsigned long long i = 0; i < n; i++) {
            duet_trace_rec_t r = {recs[i].cta,
                                  recs[i].sm,
                                  recs[i].queue,
                                  recs[i].stolen,
                                  recs[i].tile,
                                  (double)(recs[i].t0_ns - origin) * 1e-9,
                                  (double)(recs[i].t1_ns - origin) * 1e-9};
            makespan = r.end_s > makespan ? r.end_s : makespan;
            DUET_CHECK_GOTO(duet_trace_add(trace, &r), st, out);
        }
        trace->n_ctas = max_cta + 1;
        trace->makespan_s = makespan;
    }
out:
    free(recs);
    return st < 0 ? duet__ctx_fail(ctx, st) : st;
}
