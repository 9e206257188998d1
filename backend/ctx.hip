/*
 * Context: device selection, the symmetric heap and its IPC mappings, collective allocation,
 * error collection and recovery.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/ctx.h"

/* Heap sizes are rounded to this, so every rank's heap base and size are equally aligned. */
#define DUET__HEAP_GRANULE ((size_t)2 << 20)

duet_ctx_params_t duet_ctx_default_params(void)
{
    duet_ctx_params_t p;
    memset(&p, 0, sizeof(p));
    p.heap_bytes = (size_t)1 << 30;
    p.timeout_ms = 5000;
    p.device = -1;
    p.hw = NULL;
    return p;
}

duet_status_t duet__ctx_fail(duet_ctx_h ctx, duet_status_t st)
{
    if (ctx != NULL && st < 0)
        snprintf(ctx->errbuf, sizeof(ctx->errbuf), "%s", duet_last_error());
    return st;
}

duet_status_t duet__ctx_agree(MPI_Comm comm, duet_status_t st)
{
    int mine = (int)st, worst = 0;
    if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return duet__error(DUET_ERR_MPI, "MPI_Allreduce of the ranks' status failed");
    if (worst < 0 && mine == 0)
        return duet__error((duet_status_t)worst, "another rank failed (%s); see its message",
                           duet_status_name((duet_status_t)worst));
    return (duet_status_t)worst;
}

/* The built-in profile of this device's architecture, with its SM count and shared memory. */
static duet_status_t duet__ctx_profile(duet_ctx_h ctx, const char *name)
{
    duet_status_t st = DUET_OK;
    hipDeviceProp_t prop;
    int sms = 0, smem = 0;
    HIP_CHECK(hipGetDeviceProperties(&prop, ctx->device), st, out);
    HIP_CHECK(hipDeviceGetAttribute(&sms, hipDevAttrSmCount, ctx->device), st, out);
    HIP_CHECK(hipDeviceGetAttribute(&smem, hipDevAttrSmemOptin, ctx->device), st, out);
    if (name == NULL) {
#if defined(DUET_GPU_AMD)
        name = strncmp(prop.gcnArchName, "gfx950", 6) == 0 ? "mi350x" : "mi300x";
#else
        name = "h200";
#endif
    }
    DUET_CHECK_GOTO(duet_hw_load(name, &ctx->hw), st, out);
    /* Validation must judge the device we run on, not the profile's nominal chip. */
    ctx->hw.n_sms = sms;
    ctx->hw.smem_kib = smem / 1024.0;
    snprintf(ctx->hw.device, sizeof(ctx->hw.device), "%.95s", prop.name);
out:
    return st;
}

/* Pick the GPU: node-local rank modulo the device count, unless the caller named one. */
static duet_status_t duet__ctx_pick_device(duet_ctx_h ctx, int want)
{
    duet_status_t st = DUET_OK;
    MPI_Comm local = MPI_COMM_NULL;
    int local_rank = 0, local_size = 0, count = 0;
    MPI_CHECK(MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &local), st, out);
    MPI_CHECK(MPI_Comm_rank(local, &local_rank), st, out);
    MPI_CHECK(MPI_Comm_size(local, &local_size), st, out);
    if (local_size != ctx->world) {
        st = duet__error(DUET_ERR_UNSUPPORTED,
                         "the %d ranks span several nodes (%d on this one): the symmetric heap needs one node (IPC)",
                         ctx->world, local_size);
        goto out;
    }
    HIP_CHECK(hipGetDeviceCount(&count), st, out);
    if (count < 1) {
        st = duet__error(DUET_ERR_UNSUPPORTED, "no GPU is visible to rank %d", ctx->rank);
        goto out;
    }
    ctx->device = want >= 0 ? want : local_rank % count;
    if (ctx->device >= count) {
        st = duet__error(DUET_ERR_INVALID_ARG, "device %d does not exist (%d visible)", ctx->device, count);
        goto out;
    }
    HIP_CHECK(hipSetDevice(ctx->device), st, out);
out:
    if (local != MPI_COMM_NULL)
        MPI_Comm_free(&local);
    return st;
}

/* Check that every peer's GPU is reachable from ours (an error, not a crash later). */
static duet_status_t duet__ctx_check_peers(duet_ctx_h ctx, const int *devices)
{
    duet_status_t st = DUET_OK;
    for (int p = 0; p < ctx->world; p++) {
        if (p == ctx->rank || devices[p] == ctx->device)
            continue; /* two processes on one GPU reach each other's memory through IPC */
        int ok = 0;
        HIP_CHECK(hipDeviceCanAccessPeer(&ok, ctx->device, devices[p]), st, out);
        if (!ok) {
            st = duet__error(DUET_ERR_UNSUPPORTED, "rank %d's GPU %d cannot access rank %d's GPU %d (no peer access)",
                             ctx->rank, ctx->device, p, devices[p]);
            goto out;
        }
    }
out:
    return st;
}

/* Export our heap, exchange the handles, and map every peer's heap. */
static duet_status_t duet__ctx_map_peers(duet_ctx_h ctx)
{
    duet_status_t st = DUET_OK;
    hipIpcMemHandle_t mine, *all = NULL;
    int devices[DUET_OP_MAX_WORLD];
    all = (hipIpcMemHandle_t *)calloc((size_t)ctx->world, sizeof(*all));
    if (all == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "IPC handle table of %d ranks", ctx->world);
        goto out;
    }
    HIP_CHECK(hipIpcGetMemHandle(&mine, ctx->heap), st, out);
    MPI_CHECK(MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, ctx->comm), st, out);
    MPI_CHECK(MPI_Allgather(&ctx->device, 1, MPI_INT, devices, 1, MPI_INT, ctx->comm), st, out);
    st = duet__ctx_agree(ctx->comm, duet__ctx_check_peers(ctx, devices));
    if (st < 0)
        goto out;
    for (int p = 0; p < ctx->world; p++) {
        if (p == ctx->rank) {
            ctx->bases[p] = ctx->heap;
            continue;
        }
        void *base = NULL;
        HIP_CHECK(hipIpcOpenMemHandle(&base, all[p], hipIpcMemLazyEnablePeerAccess), st, out);
        ctx->bases[p] = (char *)base;
        ctx->opened[p] = 1;
    }
out:
    free(all);
    return st;
}

/* Streams, events, the control block and the host-mapped error record. */
static duet_status_t duet__ctx_runtime_objects(duet_ctx_h ctx)
{
    duet_status_t st = DUET_OK;
    void *err = NULL;
    HIP_CHECK(hipStreamCreateWithFlags(&ctx->s_comm, hipStreamNonBlocking), st, out);
    HIP_CHECK(hipEventCreateWithFlags(&ctx->ev_fork, hipEventDisableTiming), st, out);
    HIP_CHECK(hipEventCreateWithFlags(&ctx->ev_comm, hipEventDisableTiming), st, out);
    HIP_CHECK(hipEventCreateWithFlags(&ctx->ev_last, hipEventDisableTiming), st, out);
    HIP_CHECK(hipMalloc((void **)&ctx->ctl, 2 * sizeof(duet__ctl_t)), st, out);
    HIP_CHECK(hipMemset(ctx->ctl, 0, 2 * sizeof(duet__ctl_t)), st, out);
    HIP_CHECK(hipHostMalloc(&err, sizeof(duet__dev_err_t), hipHostMallocMapped), st, out);
    ctx->err_host = (duet__dev_err_t *)err;
    memset(ctx->err_host, 0, sizeof(*ctx->err_host));
    HIP_CHECK(hipHostGetDevicePointer((void **)&ctx->err_dev, err, 0), st, out);
    HIP_CHECK(duet__kernels_init_fp16(), st, out);
    HIP_CHECK(duet__kernels_init_bf16(), st, out);
out:
    return st;
}

void duet_ctx_destroy(duet_ctx_h ctx)
{
    /* Teardown is best effort: it has no caller to report to, and must release what it can. */
    if (ctx == NULL)
        return;
    if (ctx->device >= 0) {
        (void)hipSetDevice(ctx->device);
        (void)hipDeviceSynchronize();
    }
    /* Close our mappings of the peers' heaps before any rank frees its own. */
    for (int p = 0; p < DUET_OP_MAX_WORLD; p++)
        if (ctx->opened[p])
            (void)hipIpcCloseMemHandle(ctx->bases[p]);
    if (ctx->comm != MPI_COMM_NULL)
        MPI_Barrier(ctx->comm);
    if (ctx->err_host != NULL)
        (void)hipHostFree(ctx->err_host);
    if (ctx->ctl != NULL)
        (void)hipFree(ctx->ctl);
    if (ctx->trace_dev != NULL)
        (void)hipFree(ctx->trace_dev);
    if (ctx->sk_ws != NULL)
        (void)hipFree(ctx->sk_ws);
    if (ctx->sk_cnt != NULL)
        (void)hipFree(ctx->sk_cnt);
    if (ctx->stage_ws != NULL)
        (void)hipFree(ctx->stage_ws);
    if (ctx->ev_last != NULL)
        (void)hipEventDestroy(ctx->ev_last);
    if (ctx->ev_comm != NULL)
        (void)hipEventDestroy(ctx->ev_comm);
    if (ctx->ev_fork != NULL)
        (void)hipEventDestroy(ctx->ev_fork);
    if (ctx->s_comm != NULL)
        (void)hipStreamDestroy(ctx->s_comm);
    if (ctx->heap != NULL)
        (void)hipFree(ctx->heap);
    free(ctx->allocs);
    if (ctx->comm != MPI_COMM_NULL)
        MPI_Comm_free(&ctx->comm);
    free(ctx);
}

duet_status_t duet_ctx_create(MPI_Comm comm, const duet_ctx_params_t *params, duet_ctx_h *ctx_p)
{
    duet_status_t st = DUET_OK;
    duet_ctx_params_t prm = params != NULL ? *params : duet_ctx_default_params();
    duet_ctx_h ctx = NULL;
    if (ctx_p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_create: ctx_p is NULL");
    if (prm.heap_bytes <= DUET__HEAP_RESERVED || prm.timeout_ms <= 0)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_create: heap_bytes must exceed %d and timeout_ms be > 0",
                           DUET__HEAP_RESERVED);

    ctx = (duet_ctx_h)calloc(1, sizeof(*ctx));
    if (ctx == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "duet_ctx_create: context");
    ctx->comm = MPI_COMM_NULL;
    ctx->device = -1;
    ctx->timeout_ms = prm.timeout_ms;
    MPI_CHECK(MPI_Comm_dup(comm, &ctx->comm), st, fail);
    MPI_CHECK(MPI_Comm_rank(ctx->comm, &ctx->rank), st, fail);
    MPI_CHECK(MPI_Comm_size(ctx->comm, &ctx->world), st, fail);
    if (ctx->world > DUET_OP_MAX_WORLD) {
        st = duet__error(DUET_ERR_UNSUPPORTED, "%d ranks: at most %d (one node)", ctx->world, DUET_OP_MAX_WORLD);
        goto fail;
    }
    st = duet__ctx_agree(ctx->comm, duet__ctx_pick_device(ctx, prm.device));
    if (st < 0)
        goto fail;

    /* The heap: same rounded size everywhere, zeroed so that every flag starts at epoch 0. */
    ctx->heap_size = (prm.heap_bytes + DUET__HEAP_GRANULE - 1) / DUET__HEAP_GRANULE * DUET__HEAP_GRANULE;
    {
        duet_status_t local = DUET_OK;
        hipError_t e = hipMalloc((void **)&ctx->heap, ctx->heap_size);
        if (e == hipSuccess)
            e = hipMemset(ctx->heap, 0, ctx->heap_size);
        if (e == hipSuccess)
            e = hipDeviceSynchronize();
        if (e != hipSuccess)
            local = duet__error(DUET_ERR_BACKEND, "symmetric heap of %zu bytes on device %d: %s", ctx->heap_size,
                                ctx->device, hipGetErrorString(e));
        st = duet__ctx_agree(ctx->comm, local);
        if (st < 0)
            goto fail;
    }
    ctx->top = DUET__HEAP_RESERVED;
    st = duet__ctx_agree(ctx->comm, duet__ctx_map_peers(ctx));
    if (st < 0)
        goto fail;
    {
        duet_status_t local = duet__ctx_profile(ctx, prm.hw);
        if (local == DUET_OK)
            local = duet__ctx_runtime_objects(ctx);
        st = duet__ctx_agree(ctx->comm, local);
        if (st < 0)
            goto fail;
    }
    /* Nobody may signal a peer before every heap is zeroed and mapped. */
    MPI_CHECK(MPI_Barrier(ctx->comm), st, fail);
    *ctx_p = ctx;
    return DUET_OK;
fail:
    duet_ctx_destroy(ctx);
    return st;
}

int duet_ctx_rank(duet_ctx_h ctx)
{
    return ctx->rank;
}
int duet_ctx_world(duet_ctx_h ctx)
{
    return ctx->world;
}
int duet_ctx_device(duet_ctx_h ctx)
{
    return ctx->device;
}
const duet_hw_t *duet_ctx_hw(duet_ctx_h ctx)
{
    return &ctx->hw;
}
void *duet_ctx_heap_base(duet_ctx_h ctx)
{
    return ctx->heap;
}
size_t duet_ctx_heap_size(duet_ctx_h ctx)
{
    return ctx->heap_size;
}
size_t duet_ctx_heap_used(duet_ctx_h ctx)
{
    return ctx->top;
}
const char *duet_ctx_last_error(duet_ctx_h ctx)
{
    return ctx != NULL ? ctx->errbuf : "";
}

/* ------------------------------------------------------------------------------------------ */
/* Collective allocation                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* Every rank must make the same request: compare the sizes (an order mismatch shows as one). */
static duet_status_t duet__ctx_same_request(duet_ctx_h ctx, unsigned long long v, const char *what)
{
    unsigned long long lo = 0, hi = 0;
    duet_status_t st = DUET_OK;
    MPI_CHECK(MPI_Allreduce(&v, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, ctx->comm), st, out);
    MPI_CHECK(MPI_Allreduce(&v, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, ctx->comm), st, out);
    if (lo != hi)
        st = duet__error(DUET_ERR_INVALID_ARG, "%s is collective: the ranks asked for different values (%llu .. %llu)",
                         what, lo, hi);
out:
    return st;
}

duet_status_t duet_ctx_alloc(duet_ctx_h ctx, size_t bytes, void **ptr_p)
{
    duet_status_t st = DUET_OK;
    if (ctx == NULL || ptr_p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_alloc: ctx and ptr_p must not be NULL");
    DUET_CHECK_GOTO(duet__ctx_same_request(ctx, bytes, "duet_ctx_alloc"), st, out);
    {
        size_t rounded = (bytes + DUET_HEAP_ALIGN - 1) / DUET_HEAP_ALIGN * DUET_HEAP_ALIGN;
        if (bytes == 0 || rounded < bytes || rounded > ctx->heap_size - ctx->top) {
            st = duet__error(bytes == 0 ? DUET_ERR_INVALID_ARG : DUET_ERR_OUT_OF_HEAP,
                             "duet_ctx_alloc(%zu bytes): %zu of %zu heap bytes are free", bytes,
                             ctx->heap_size - ctx->top, ctx->heap_size);
            goto out;
        }
        if (ctx->nallocs == ctx->cap_allocs) {
            int cap = ctx->cap_allocs ? 2 * ctx->cap_allocs : 16;
            duet__alloc_t *grown = (duet__alloc_t *)realloc(ctx->allocs, (size_t)cap * sizeof(*grown));
            if (grown == NULL) {
                st = duet__error(DUET_ERR_NO_MEMORY, "allocation table of %d entries", cap);
                goto out;
            }
            ctx->allocs = grown;
            ctx->cap_allocs = cap;
        }
        duet__alloc_t *a = &ctx->allocs[ctx->nallocs++];
        a->offset = ctx->top;
        a->bytes = rounded;
        a->live = 1;
        ctx->top += rounded;
        *ptr_p = ctx->heap + a->offset;
    }
out:
    return duet__ctx_fail(ctx, st);
}

duet_status_t duet_ctx_free(duet_ctx_h ctx, void *ptr)
{
    duet_status_t st = DUET_OK;
    if (ctx == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_free: ctx is NULL");
    if (ptr == NULL)
        return DUET_OK;
    {
        size_t off = (size_t)((char *)ptr - ctx->heap);
        DUET_CHECK_GOTO(duet__ctx_same_request(ctx, off, "duet_ctx_free"), st, out);
        int i = ctx->nallocs - 1;
        while (i >= 0 && !(ctx->allocs[i].offset == off && ctx->allocs[i].live))
            i--;
        if (i < 0) {
            st = duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_free(%p): not a live allocation of this heap", ptr);
            goto out;
        }
        ctx->allocs[i].live = 0;
        /* Stack order: pop every released allocation at the top. */
        while (ctx->nallocs > 0 && !ctx->allocs[ctx->nallocs - 1].live) {
            ctx->top = ctx->allocs[ctx->nallocs - 1].offset;
            ctx->nallocs--;
        }
    }
out:
    return duet__ctx_fail(ctx, st);
}

/* ------------------------------------------------------------------------------------------ */
/* Device-side errors                                                                          */
/* ------------------------------------------------------------------------------------------ */

/*
 * Read (without waiting) the error record the kernels fill. The device writes `status` last
 * after a system-scope fence, so a non-zero status means the other fields are complete.
 */
duet_status_t duet__ctx_collect(duet_ctx_h ctx)
{
    volatile duet__dev_err_t *e = ctx->err_host;
    int32_t status = e->status;
    if (status == 0)
        return DUET_OK;
    uint32_t epoch = e->epoch;
    const char *what = e->phase == DUET__PHASE_ENTRY ? "enter the operation" : "finish its part of the operation";
    duet_status_t st =
        duet__error((duet_status_t)status, "op %u (%s): rank %d timed out after %.2f s waiting for rank %d to %s",
                    epoch, duet_collective_name(ctx->op_coll[epoch % DUET__OP_HISTORY]), ctx->rank,
                    (double)e->waited_ns * 1e-9, (int)e->peer, what);
    memset((void *)e, 0, sizeof(*e));
    ctx->failed = 1;
    return st;
}

/*
 * The rank to name when a wait at the exit barrier expired. The device names the first rank
 * whose DEPART is missing, but a rank that timed out waiting at the entry sends no DEPART either
 * (sync.h), so with three or more ranks the one named may itself be waiting for the rank at
 * fault: a broadcast's root, say, named by a non-root while the root waits for a rank that
 * skipped the operation. A rank whose ARRIVE is missing too never entered: name it instead. The
 * record is the host's to change here, as the device writes it only while its status is 0. Runs
 * in duet_ctx_sync() only, after the stream has finished, so that the blocking copy of the W
 * flag words (bytes) waits for nothing of the caller's that duet_run() would.
 */
static duet_status_t duet__ctx_blame_unentered(duet_ctx_h ctx)
{
    volatile duet__dev_err_t *e = ctx->err_host;
    uint32_t arrive[DUET_OP_MAX_WORLD];
    duet_status_t st = DUET_OK;
    if (e->status == 0 || e->phase != DUET__PHASE_EXIT)
        return DUET_OK;
    HIP_CHECK(hipMemcpy(arrive, ctx->heap + DUET__FLAG_ARRIVE * sizeof(uint32_t), (size_t)ctx->world * sizeof(uint32_t),
                        hipMemcpyDeviceToHost),
              st, out);
    for (int q = 0; q < ctx->world; q++)
        if ((int32_t)(arrive[q] - e->epoch) < 0) { /* wrap-safe arrive < epoch, as the device compares */
            e->peer = q;
            e->phase = DUET__PHASE_ENTRY;
            break;
        }
out:
    return st;
}

duet_status_t duet_ctx_sync(duet_ctx_h ctx, void *stream)
{
    duet_status_t st = DUET_OK;
    if (ctx == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_sync: ctx is NULL");
    HIP_CHECK(hipSetDevice(ctx->device), st, out);
    HIP_CHECK(hipStreamSynchronize((hipStream_t)stream), st, out);
    DUET_CHECK_GOTO(duet__ctx_blame_unentered(ctx), st, out);
    st = duet__ctx_collect(ctx);
out:
    return duet__ctx_fail(ctx, st);
}

duet_status_t duet_ctx_resync(duet_ctx_h ctx)
{
    duet_status_t st = DUET_OK;
    unsigned mine, top = 0;
    if (ctx == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_resync: ctx is NULL");
    HIP_CHECK(hipSetDevice(ctx->device), st, out);
    HIP_CHECK(hipDeviceSynchronize(), st, out);
    /* Every flag any rank wrote is <= the highest epoch reached, so continuing above it is safe. */
    mine = ctx->epoch;
    MPI_CHECK(MPI_Allreduce(&mine, &top, 1, MPI_UNSIGNED, MPI_MAX, ctx->comm), st, out);
    ctx->epoch = top;
    memset((void *)ctx->err_host, 0, sizeof(*ctx->err_host));
    HIP_CHECK(hipMemset(ctx->ctl, 0, 2 * sizeof(duet__ctl_t)), st, out);
    ctx->any_op = 0;
    /* GEMM tiles never wait, so a failed operation still completes its K-split sums and resets
     * their counters; zero them anyway, as a resync promises a clean state. */
    if (ctx->sk_cnt != NULL)
        HIP_CHECK(hipMemset(ctx->sk_cnt, 0, ctx->sk_cnt_n * sizeof(uint32_t)), st, out);
    HIP_CHECK(hipDeviceSynchronize(), st, out);
    ctx->failed = 0;
    MPI_CHECK(MPI_Barrier(ctx->comm), st, out);
out:
    return duet__ctx_fail(ctx, st);
}
