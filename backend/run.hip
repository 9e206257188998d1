/*
 * duet_run(): check an operation, turn its plan into launch parameters, and enqueue the fused
 * kernel, the two concurrent kernels, or copy mode's GEMM kernel and copies.
 */
#include <string.h>

#include "backend/ctx.h"

static int duet__aligned(const void *p, uintptr_t a)
{
    return ((uintptr_t)p % a) == 0;
}

/*
 * Where rank q's counterpart of our `p` is mapped here: the same offset in rank q's heap, or in
 * rank q's buffer of the same registration. duet_op_validate_regions() has found p inside one
 * region already.
 */
static char *duet__peer_addr(duet_ctx_h ctx, const void *p, int q)
{
    const char *c = (const char *)p;
    for (int i = 0; i < ctx->nbufs; i++) {
        duet_buf_h b = ctx->bufs[i];
        if (c >= b->ptr && c < b->ptr + b->bytes)
            return b->at[q] + (c - b->ptr);
    }
    return ctx->bases[q] + (c - ctx->heap);
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
    if (plan->stage_k > 0) {
        /* The GEMM reads the staged copies (duet_plan_t.stage_k): rows of stage_k elements, A's
         * then B's, zeros beyond K. */
        kp->a = (const uint16_t *)ctx->stage_ws;
        kp->b = (const uint16_t *)ctx->stage_ws + wl->m * plan->stage_k;
        kp->gemm.k = plan->stage_k;
    }
    /* 16-byte copies need every row of A and B to start on 16 bytes: K % 8 == 0 and aligned bases. */
    kp->ab_vec = kp->gemm.k % 8 == 0 && duet__aligned(kp->a, 16) && duet__aligned(kp->b, 16);
    /* Otherwise, with K even, every row starts on 4 bytes: pairs of elements can be copied (staged
     * operands never need it; operands in place with bases off 16 bytes may). */
    kp->ab_vec4 = kp->gemm.k % 2 == 0 && duet__aligned(kp->a, 4) && duet__aligned(kp->b, 4);
    kp->c_vec = wl->n % 2 == 0 && duet__aligned(op->c, 4);
    kp->c_vec16 = wl->n % 8 == 0 && duet__aligned(op->c, 16);
    kp->comm = plan->comm;
    kp->src = (const uint16_t *)op->src;
    kp->dst = (uint16_t *)op->dst;
    /* Every rank's heap base is 2 MiB aligned, every registered buffer DUET_HEAP_ALIGN aligned, and
     * offsets are symmetric, so our alignment is theirs. */
    kp->comm_vec = wl->nc % 8 == 0 && duet__aligned(op->src, 16) && duet__aligned(op->dst, 16);
    kp->has_comm = wl->coll != DUET_COLL_NONE;
    if (kp->has_comm)
        for (int q = 0; q < ctx->world; q++) {
            kp->src_at[q] = duet__peer_addr(ctx, op->src, q);
            kp->dst_at[q] = duet__peer_addr(ctx, op->dst, q);
        }
    kp->dtype = wl->dtype;
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
 * Grow the device workspace *ws (of *have bytes) to at least `want` bytes: freed and allocated
 * again, after the device is idle, since an operation in flight may still use the old one. Never
 * shrunk. `what` names it in the error.
 */
static duet_status_t duet__ws_grow(void **ws, size_t *have, size_t want, const char *what)
{
    duet_status_t st = DUET_OK;
    if (want <= *have)
        return DUET_OK;
    HIP_CHECK(hipDeviceSynchronize(), st, out);
    if (*ws != NULL)
        HIP_CHECK(hipFree(*ws), st, out);
    *ws = NULL;
    *have = 0;
    if (hipMalloc(ws, want) != hipSuccess) {
        (void)hipGetLastError();
        *ws = NULL;
        st = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate %.1f MiB of device memory", what,
                         (double)want / (1024.0 * 1024.0));
        goto out;
    }
    *have = want;
out:
    return st;
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
    char what[64];
    snprintf(what, sizeof(what), "split_k %d: the partial sums", (int)g->split_k);
    DUET_CHECK_GOTO(duet__ws_grow((void **)&ctx->sk_ws, &ctx->sk_ws_bytes, ws, what), st, out);
    if (cnt > ctx->sk_cnt_n) {
        HIP_CHECK(hipDeviceSynchronize(), st, out);
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
 * Copy mode's collective on stream g (the caller's, or s_comm beside the GEMM): the entry gate,
 * the plan's copies (duet_copy_get()) between this rank's src and the ranks' IPC-mapped outputs
 * over its copy streams, copy q on stream q % grid (stream 0 is g itself), then, once every copy
 * stream has ended, the exit gate. The copies go to the copy engines: no SM moves the data.
 */
static duet_status_t duet__enqueue_copies(duet_ctx_h ctx, const duet_op_t *op, const duet_plan_t *plan,
                                          const duet__kparams_t *kp, hipStream_t g)
{
    duet_status_t st = DUET_OK;
    const int32_t lanes = plan->kernel[DUET_KERNEL_COMM].grid;
    const int64_t n = plan->comm.queue_len;
    const size_t eb = (size_t)duet_dtype_bytes(op->wl.dtype);
    const int32_t used = n < lanes ? (int32_t)n : lanes; /* copy streams that get a copy */
    HIP_CHECK(duet__launch_copy_gate(kp, DUET__PHASE_ENTRY, g), st, out);
    if (used > 1) {
        HIP_CHECK(hipEventRecord(ctx->ev_gate, g), st, out);
        for (int32_t j = 1; j < used; j++)
            HIP_CHECK(hipStreamWaitEvent(ctx->s_copy[j - 1], ctx->ev_gate, 0), st, out);
    }
    for (int64_t q = 0; q < n; q++) {
        duet_copy_t c;
        duet_copy_get(&plan->comm, q, &c);
        const int32_t j = (int32_t)(q % lanes);
        char *dst = (char *)kp->dst_at[c.peer] + (size_t)c.dst_off * eb;
        const char *src = (const char *)op->src + (size_t)c.src_off * eb;
        HIP_CHECK(hipMemcpyAsync(dst, src, (size_t)c.elems * eb, hipMemcpyDefault, j == 0 ? g : ctx->s_copy[j - 1]), st,
                  out);
    }
    for (int32_t j = 1; j < used; j++) {
        HIP_CHECK(hipEventRecord(ctx->ev_copy[j - 1], ctx->s_copy[j - 1]), st, out);
        HIP_CHECK(hipStreamWaitEvent(g, ctx->ev_copy[j - 1], 0), st, out);
    }
    HIP_CHECK(duet__launch_copy_gate(kp, DUET__PHASE_EXIT, g), st, out);
out:
    return st;
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
static duet_status_t duet__enqueue(duet_ctx_h ctx, const duet_op_t *op, const duet_plan_t *plan, duet__kparams_t *kp,
                                   hipStream_t s)
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
    /* The operand staging pass, on the GEMM's stream before its kernel (after the fork, so that
     * concurrent mode's comm kernel need not wait for it). */
    if (plan->stage_k > 0)
        HIP_CHECK(duet__stage_launch(plan, op->a, op->b, ctx->stage_ws, (int)ctx->hw.n_sms, s), st, out);
    for (int32_t i = 0; i < launch.n; i++) {
        const duet_launch_kernel_t *l = &launch.k[i];
        hipStream_t ks = l->side_stream ? ctx->s_comm : s;
        kp->geom = l->geom;
        if (l->kernel == DUET_KERNEL_GEMM)
            HIP_CHECK(duet__launch_gemm_kernel(kp, plan->cfg.tile, l->geom.grid, ks), st, out);
        else if (l->geom.role == DUET_ROLE_COPY)
            DUET_CHECK_GOTO(duet__enqueue_copies(ctx, op, plan, kp, ks), st, out);
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

/*
 * Refuse a stream that is capturing a graph (include/duet/backend.h says why an operation cannot
 * be replayed), before anything is enqueued: the capture stays valid and the caller can end it.
 */
static duet_status_t duet__not_capturing(duet_ctx_h ctx, void *stream)
{
    duet_status_t st = DUET_OK;
    hipStreamCaptureStatus cs = hipStreamCaptureStatusNone;
    HIP_CHECK(hipSetDevice(ctx->device), st, out);
    HIP_CHECK(hipStreamIsCapturing((hipStream_t)stream, &cs), st, out);
    if (cs != hipStreamCaptureStatusNone)
        st = duet__error(DUET_ERR_UNSUPPORTED,
                         "duet_run: the stream is capturing a graph; an operation cannot be captured, because its "
                         "epoch (the flag value its cross-rank barriers wait for) and its control block are set on "
                         "the host at enqueue time, and a replay would reuse them and skip its barriers");
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
    DUET_CHECK_GOTO(duet__not_capturing(ctx, stream), st, out);
    DUET_CHECK_GOTO(duet_op_validate_regions(op, &ctx->hw, ctx->regions, 1 + ctx->nbufs, ctx->world, ctx->rank), st,
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
    DUET_CHECK_GOTO(duet__ws_grow(&ctx->stage_ws, &ctx->stage_ws_bytes, (size_t)plan.stage_ws_bytes,
                                  "operand staging (K not a multiple of 8)"),
                    st, out);
    duet__kparams_fill(ctx, op, &plan, &kp);
    st = duet__enqueue(ctx, op, &plan, &kp, (hipStream_t)stream);
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
