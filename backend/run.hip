/*
 * duet_run(): check an operation, turn its plan into launch parameters, and enqueue the fused
 * kernel or the two concurrent kernels.
 */
#include <string.h>

#include "backend/ctx.h"

static int duet__aligned(const void *p, uintptr_t a)
{
    return ((uintptr_t)p % a) == 0;
}

/* Launch parameters common to every kernel of the operation. */
static void duet__kparams_fill(duet_ctx_h ctx, const duet_op_t *op, const duet_plan_t *plan, duet__kparams_t *kp)
{
    const duet_workload_t *wl = &op->wl;
    memset(kp, 0, sizeof(*kp));
    kp->gemm = plan->gemm;
    kp->a = (const uint16_t *)op->a;
    kp->b = (const uint16_t *)op->b;
    kp->c = (uint16_t *)op->c;
    /* 16-byte copies need every row of A and B to start on 16 bytes: K % 8 == 0 and aligned bases. */
    kp->ab_vec = wl->k % 8 == 0 && duet__aligned(op->a, 16) && duet__aligned(op->b, 16);
    /* Otherwise, with K even, every row starts on 4 bytes: pairs of elements can be copied. */
    kp->ab_vec4 = wl->k % 2 == 0 && duet__aligned(op->a, 4) && duet__aligned(op->b, 4);
    kp->c_vec = wl->n % 2 == 0 && duet__aligned(op->c, 4);
    kp->c_vec16 = wl->n % 8 == 0 && duet__aligned(op->c, 16);
    kp->comm = plan->comm;
    kp->src = (const uint16_t *)op->src;
    kp->dst = (uint16_t *)op->dst;
    /* Every rank's heap base is 2 MiB aligned and offsets are symmetric, so our alignment is theirs. */
    kp->comm_vec = wl->nc % 8 == 0 && duet__aligned(op->src, 16) && duet__aligned(op->dst, 16);
    kp->dtype = wl->dtype;
    kp->has_comm = wl->coll != DUET_COLL_NONE;
    kp->rank = ctx->rank;
    kp->world = ctx->world;
    kp->epoch = ctx->epoch + 1;
    int64_t ms = op->timeout_ms > 0 ? op->timeout_ms : ctx->timeout_ms;
    kp->timeout_ns = (uint64_t)ms * 1000000ull;
    for (int p = 0; p < ctx->world; p++)
        kp->bases[p] = ctx->bases[p];
    kp->flags = (uint32_t *)ctx->heap;
    kp->ctl = &ctx->ctl[kp->epoch & 1u];
    kp->ctl_next = &ctx->ctl[(kp->epoch + 1u) & 1u];
    kp->trace = ctx->trace_dev;
    kp->trace_cap = (uint32_t)ctx->trace_cap;
    kp->err = ctx->err_dev;
    kp->sk_ws = ctx->sk_ws;
    kp->sk_cnt = ctx->sk_cnt;
}

/*
 * The K split's workspace for a plan (duet_plan_t.splitk_ws_bytes and splitk_counters: the fp32
 * partial sums and the arrival counters). Grown, never shrunk; growing waits for the device, since
 * an operation in flight may still use the old one.
 */
static duet_status_t duet__splitk_reserve(duet_ctx_h ctx, const duet_plan_t *plan)
{
    duet_status_t st = DUET_OK;
    const duet_gemm_geom_t *g = &plan->gemm;
    if (plan->splitk_ws_bytes == 0)
        return DUET_OK;
    size_t ws = (size_t)plan->splitk_ws_bytes;
    size_t cnt = (size_t)plan->splitk_counters;
    if (ws <= ctx->sk_ws_bytes && cnt <= ctx->sk_cnt_n)
        return DUET_OK;
    HIP_CHECK(hipDeviceSynchronize(), st, out);
    if (ws > ctx->sk_ws_bytes) {
        if (ctx->sk_ws != NULL)
            HIP_CHECK(hipFree(ctx->sk_ws), st, out);
        ctx->sk_ws = NULL;
        ctx->sk_ws_bytes = 0;
        if (hipMalloc((void **)&ctx->sk_ws, ws) != hipSuccess) {
            (void)hipGetLastError();
            ctx->sk_ws = NULL;
            st = duet__error(DUET_ERR_NO_MEMORY,
                             "split_k %d: cannot allocate %.1f MiB of device memory for the partial sums",
                             (int)g->split_k, (double)ws / (1024.0 * 1024.0));
            goto out;
        }
        ctx->sk_ws_bytes = ws;
    }
    if (cnt > ctx->sk_cnt_n) {
        if (ctx->sk_cnt != NULL)
            HIP_CHECK(hipFree(ctx->sk_cnt), st, out);
        ctx->sk_cnt = NULL;
        ctx->sk_cnt_n = 0;
        HIP_CHECK(hipMalloc((void **)&ctx->sk_cnt, cnt * sizeof(uint32_t)), st, out);
        HIP_CHECK(hipMemset(ctx->sk_cnt, 0, cnt * sizeof(uint32_t)), st, out);
        HIP_CHECK(hipDeviceSynchronize(), st, out);
        ctx->sk_cnt_n = cnt;
    }
out:
    return st;
}

static hipError_t duet__launch_gemm_kernel(const duet__kparams_t *kp, duet_gemm_tile_t tile, int grid, hipStream_t s)
{
    return kp->dtype == DUET_DTYPE_BF16 ? duet__launch_persistent_bf16(kp, tile, grid, s)
                                        : duet__launch_persistent_fp16(kp, tile, grid, s);
}

/*
 * Enqueue the plan's kernels (duet_plan_launch(): which kernels, their grids and geometry, and
 * their streams). Any failure here leaves the ranks' epochs possibly split: the caller marks the
 * context failed.
 *
 * Each operation costs as few stream commands as it can, since the smallest ones last 25-50 us
 * and every command adds to that: the kernels zero their control block themselves (internal.h),
 * a collective without a GEMM runs in the comm kernel alone, and concurrent mode runs its GEMM
 * kernel on the caller's stream and only its comm kernel on a second one (one fork, one join).
 */
static duet_status_t duet__enqueue(duet_ctx_h ctx, const duet_plan_t *plan, duet__kparams_t *kp, hipStream_t s)
{
    duet_status_t st = DUET_OK;
    duet_launch_t launch;
    int side = 0;
    duet_plan_launch(plan, &launch);
    /* Operations of one context run in issue order whatever their streams: they share the
     * control blocks and the flag epochs. On the stream of the previous operation that order
     * holds already. */
    if (ctx->any_op && (void *)s != ctx->last_stream)
        HIP_CHECK(hipStreamWaitEvent(s, ctx->ev_last, 0), st, out);
    if (launch.n == 0) {
        /* No kernel runs (an empty GEMM without a collective): zero the next block here. */
        HIP_CHECK(hipMemsetAsync(kp->ctl_next, 0, sizeof(duet__ctl_t), s), st, out);
    }
    for (int32_t i = 0; i < launch.n; i++)
        side |= launch.k[i].side_stream;
    if (side) {
        /* The second stream starts where the caller's stands, before either kernel. */
        HIP_CHECK(hipEventRecord(ctx->ev_fork, s), st, out);
        HIP_CHECK(hipStreamWaitEvent(ctx->s_comm, ctx->ev_fork, 0), st, out);
    }
    for (int32_t i = 0; i < launch.n; i++) {
        const duet_launch_kernel_t *l = &launch.k[i];
        hipStream_t ks = l->side_stream ? ctx->s_comm : s;
        kp->geom = l->geom;
        if (l->kernel == DUET_KERNEL_GEMM)
            HIP_CHECK(duet__launch_gemm_kernel(kp, plan->cfg.tile, l->geom.grid, ks), st, out);
        else
            HIP_CHECK(duet__launch_comm(kp, l->geom.grid, ks), st, out);
    }
    if (side) {
        HIP_CHECK(hipEventRecord(ctx->ev_comm, ctx->s_comm), st, out);
        HIP_CHECK(hipStreamWaitEvent(s, ctx->ev_comm, 0), st, out);
    }
    HIP_CHECK(hipEventRecord(ctx->ev_last, s), st, out);
    ctx->last_stream = (void *)s;
    ctx->any_op = 1;
out:
    return st;
}

duet_status_t duet_run(duet_ctx_h ctx, const duet_op_t *op, void *stream)
{
    duet_status_t st = DUET_OK;
    duet_plan_t plan;
    duet__kparams_t kp;
    if (ctx == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_run: ctx is NULL");
    if (ctx->failed) {
        st = duet__error(DUET_ERR_BUSY,
                         "an earlier operation of this context failed (%s); call duet_ctx_resync() "
                         "on every rank first",
                         ctx->errbuf);
        goto out;
    }
    /* An earlier operation's device-side error that nobody has collected yet. */
    DUET_CHECK_GOTO(duet__ctx_collect(ctx), st, out);
    DUET_CHECK_GOTO(duet_op_validate(op, &ctx->hw, (uintptr_t)ctx->heap, ctx->heap_size, ctx->world, ctx->rank), st,
                    out);
    DUET_CHECK_GOTO(duet_plan_build_queues(&op->wl, &op->cfg, ctx->rank, &plan), st, out);
    if (duet__gemm_smem_bytes(op->cfg.tile) > (size_t)(ctx->hw.smem_kib * 1024.0)) {
        st = duet__error(
            DUET_ERR_INFEASIBLE, "GEMM tile %dx%dx%d needs %zu bytes of shared memory; the device has %.0f KiB",
            op->cfg.tile.bm, op->cfg.tile.bn, op->cfg.tile.bk, duet__gemm_smem_bytes(op->cfg.tile), ctx->hw.smem_kib);
        goto out;
    }
    HIP_CHECK(hipSetDevice(ctx->device), st, out);
    DUET_CHECK_GOTO(duet__splitk_reserve(ctx, &plan), st, out);
    duet__kparams_fill(ctx, op, &plan, &kp);
    st = duet__enqueue(ctx, &plan, &kp, (hipStream_t)stream);
    /* The epoch advances even after a failed launch: part of the operation may have signalled. */
    ctx->epoch++;
    ctx->op_coll[ctx->epoch % DUET__OP_HISTORY] = op->wl.coll;
    if (st < 0)
        ctx->failed = 1;
out:
    return duet__ctx_fail(ctx, st);
}

static duet_status_t duet__run_named(duet_ctx_h ctx, const duet_op_t *op, void *stream, int32_t coll)
{
    if (op != NULL && op->wl.coll != coll)
        return duet__ctx_fail(ctx, duet__error(DUET_ERR_INVALID_ARG, "duet_gemm_%s called with op.wl.coll = %s",
                                               duet_collective_name(coll), duet_collective_name(op->wl.coll)));
    return duet_run(ctx, op, stream);
}

duet_status_t duet_gemm_all_gather(duet_ctx_h ctx, const duet_op_t *op, void *stream)
{
    return duet__run_named(ctx, op, stream, DUET_COLL_ALL_GATHER);
}
duet_status_t duet_gemm_all_reduce(duet_ctx_h ctx, const duet_op_t *op, void *stream)
{
    return duet__run_named(ctx, op, stream, DUET_COLL_ALL_REDUCE);
}
duet_status_t duet_gemm_reduce_scatter(duet_ctx_h ctx, const duet_op_t *op, void *stream)
{
    return duet__run_named(ctx, op, stream, DUET_COLL_REDUCE_SCATTER);
}
duet_status_t duet_gemm_all_to_all(duet_ctx_h ctx, const duet_op_t *op, void *stream)
{
    return duet__run_named(ctx, op, stream, DUET_COLL_ALL_TO_ALL);
}
duet_status_t duet_gemm_broadcast(duet_ctx_h ctx, const duet_op_t *op, void *stream)
{
    return duet__run_named(ctx, op, stream, DUET_COLL_BROADCAST);
}
