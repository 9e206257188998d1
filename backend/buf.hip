/*
 * Registration of buffers the caller allocated (duet_buf_register): every rank exports the
 * allocation that holds its buffer through IPC, the ranks exchange the handles over the
 * bootstrap, and each maps its peers' allocations, so that an operation's src or dst may live in
 * a framework's tensor instead of the symmetric heap.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/ctx.h"

/*
 * What each rank contributes to a registration: its verdict on its own buffer, and, when that is
 * good, the IPC handle of the allocation that holds it, the allocation's base in its process and
 * the buffer's offset from it.
 */
typedef struct duet__reg_msg {
    hipIpcMemHandle_t handle;
    uint64_t alloc_base; /* in the sender's process: the key of its mapping */
    uint64_t offset;     /* of the buffer from the allocation's base, bytes */
    uint64_t bytes;
    int32_t status; /* 0, or this rank's duet_status_t */
    int32_t pad;
} duet__reg_msg_t;

#if defined(DUET_GPU_NVIDIA)
/* cuMemGetAddressRange through the runtime's driver entry point (libcuda is not linked). */
typedef CUresult (*duet__range_fn)(CUdeviceptr *, size_t *, CUdeviceptr);

static hipError_t duet__alloc_range(const void *p, char **base_p, size_t *size_p)
{
    static duet__range_fn fn;
    if (fn == NULL) {
        void *f = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
            q != cudaDriverEntryPointSuccess)
            return cudaErrorNotSupported;
        fn = (duet__range_fn)f;
    }
    CUdeviceptr base = 0;
    size_t size = 0;
    if (fn(&base, &size, (CUdeviceptr)(uintptr_t)p) != CUDA_SUCCESS)
        return cudaErrorInvalidValue;
    *base_p = (char *)(uintptr_t)base;
    *size_p = size;
    return cudaSuccess;
}
#else
static hipError_t duet__alloc_range(const void *p, char **base_p, size_t *size_p)
{
    hipDeviceptr_t base = NULL;
    size_t size = 0;
    hipError_t e = hipMemGetAddressRange(&base, &size, (hipDeviceptr_t)p);
    if (e == hipSuccess) {
        *base_p = (char *)base;
        *size_p = size;
    }
    return e;
}
#endif

/* This rank's checks of its own buffer, and its part of the exchange (msg->status says how). */
static duet_status_t duet__reg_local(duet_ctx_h ctx, void *ptr, size_t bytes, duet__reg_msg_t *msg)
{
    duet_status_t st = DUET_OK;
    int is_device = 0, dev = -1;
    char *base = NULL, *p = (char *)ptr;
    size_t size = 0;
    memset(msg, 0, sizeof(*msg));
    msg->bytes = bytes;
    if (ptr == NULL || bytes == 0) {
        st = duet__error(DUET_ERR_INVALID_ARG, "duet_buf_register(%p, %zu bytes): a NULL pointer or zero bytes", ptr,
                         bytes);
        goto out;
    }
    if ((uintptr_t)ptr % DUET_HEAP_ALIGN != 0) {
        /* Peers use our offsets into their own buffers: equal alignment keeps the kernels' vector
         * accesses legal on every rank, as the heap's 2 MiB bases do. */
        st = duet__error(DUET_ERR_INVALID_ARG, "duet_buf_register(%p): not aligned to %d bytes", ptr, DUET_HEAP_ALIGN);
        goto out;
    }
    if (ctx->nbufs == DUET__MAX_BUFS) {
        st = duet__error(DUET_ERR_UNSUPPORTED, "duet_buf_register: %d buffers are registered already (the most)",
                         DUET__MAX_BUFS);
        goto out;
    }
    if (p < ctx->heap + ctx->heap_size && p + bytes > ctx->heap) {
        st = duet__error(DUET_ERR_INVALID_ARG,
                         "duet_buf_register(%p, %zu bytes): inside the symmetric heap, which peers address already",
                         ptr, bytes);
        goto out;
    }
    HIP_CHECK(hipSetDevice(ctx->device), st, out);
    duet_gpu_ptr_device(ptr, &is_device, &dev);
    if (!is_device) {
        st = duet__error(DUET_ERR_INVALID_ARG,
                         "duet_buf_register(%p): not device memory (host, managed or unknown to the runtime): peers "
                         "map it through IPC, which needs memory from hipMalloc/cudaMalloc",
                         ptr);
        goto out;
    }
    if (dev != ctx->device) {
        st = duet__error(DUET_ERR_INVALID_ARG, "duet_buf_register(%p): memory of GPU %d, but the context drives GPU %d",
                         ptr, dev, ctx->device);
        goto out;
    }
    if (duet__alloc_range(ptr, &base, &size) != hipSuccess) {
        (void)hipGetLastError();
        st = duet__error(DUET_ERR_BACKEND, "duet_buf_register(%p): the runtime does not know its allocation", ptr);
        goto out;
    }
    if (p < base || (size_t)(p - base) > size || bytes > size - (size_t)(p - base)) {
        st = duet__error(DUET_ERR_INVALID_ARG,
                         "duet_buf_register(%p, %zu bytes): runs past the end of its allocation [%p, +%zu bytes)", ptr,
                         bytes, (void *)base, size);
        goto out;
    }
    {
        hipError_t e = hipIpcGetMemHandle(&msg->handle, base);
        if (e != hipSuccess) {
            (void)hipGetLastError();
            st = duet__error(DUET_ERR_BACKEND,
                             "duet_buf_register(%p): its allocation cannot be exported through IPC (%s); memory "
                             "from a stream-ordered pool (cudaMallocAsync) or a virtual-memory mapping cannot be",
                             ptr, hipGetErrorString(e));
            goto out;
        }
    }
    msg->alloc_base = (uint64_t)(uintptr_t)base;
    msg->offset = (uint64_t)(p - base);
out:
    msg->status = (int32_t)st;
    return st;
}

/* Our mapping of peer q's allocation (opened now, or shared with an earlier registration). */
static duet_status_t duet__map_open(duet_ctx_h ctx, int q, const duet__reg_msg_t *m, int *slot_p)
{
    duet_status_t st = DUET_OK;
    int free_slot = -1;
    void *base = NULL;
    for (int i = 0; i < ctx->nmaps; i++) {
        duet__ipc_map_t *e = &ctx->maps[i];
        if (e->refs > 0 && e->peer == q && e->peer_base == m->alloc_base) {
            e->refs++;
            *slot_p = i;
            return DUET_OK;
        }
        if (e->refs == 0 && free_slot < 0)
            free_slot = i;
    }
    if (free_slot < 0) {
        duet__ipc_map_t *grown =
            (duet__ipc_map_t *)realloc(ctx->maps, (size_t)(ctx->nmaps + 8) * sizeof(duet__ipc_map_t));
        if (grown == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "IPC mapping table of %d entries", ctx->nmaps + 8);
        memset(grown + ctx->nmaps, 0, 8 * sizeof(duet__ipc_map_t));
        ctx->maps = grown;
        free_slot = ctx->nmaps;
        ctx->nmaps += 8;
    }
    HIP_CHECK(hipIpcOpenMemHandle(&base, m->handle, hipIpcMemLazyEnablePeerAccess), st, out);
    ctx->maps[free_slot].peer = q;
    ctx->maps[free_slot].peer_base = m->alloc_base;
    ctx->maps[free_slot].base = (char *)base;
    ctx->maps[free_slot].refs = 1;
    *slot_p = free_slot;
out:
    return st;
}

static void duet__map_close(duet_ctx_h ctx, int slot)
{
    duet__ipc_map_t *e = &ctx->maps[slot];
    if (--e->refs == 0) {
        (void)hipIpcCloseMemHandle(e->base);
        e->base = NULL;
    }
}

/* Close every mapping of a buffer's peers and free it (not collective). */
static void duet__buf_drop(duet_ctx_h ctx, duet_buf_h buf)
{
    for (int q = 0; q < DUET_OP_MAX_WORLD; q++)
        if (buf->map[q] >= 0)
            duet__map_close(ctx, buf->map[q]);
    free(buf);
}

/* The regions duet_run() accepts src and dst in: the heap, then the buffers in order. */
static void duet__regions_update(duet_ctx_h ctx)
{
    for (int i = 0; i < ctx->nbufs; i++) {
        ctx->regions[1 + i].base = (uintptr_t)ctx->bufs[i]->ptr;
        ctx->regions[1 + i].bytes = ctx->bufs[i]->bytes;
    }
}

duet_status_t duet_buf_register(duet_ctx_h ctx, void *ptr, size_t bytes, duet_buf_h *buf_p)
{
    duet_status_t st = DUET_OK;
    duet__reg_msg_t mine, all[DUET_OP_MAX_WORLD];
    duet_buf_h buf = NULL;
    if (ctx == NULL || buf_p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_buf_register: ctx and buf_p must not be NULL");
    /* Every rank takes part in the exchange even when its own buffer is bad, so that no rank
     * waits for it: the verdicts travel with the handles. */
    (void)duet__reg_local(ctx, ptr, bytes, &mine);
    {
        char why[DUET__ERRBUF_LEN];
        snprintf(why, sizeof(why), "%s", mine.status < 0 ? duet_last_error() : "");
        DUET_CHECK_GOTO(duet__ctx_allgather(ctx, &mine, all, sizeof(mine)), st, out);
        if (mine.status < 0) {
            st = duet__error((duet_status_t)mine.status, "%s", why);
            goto out;
        }
    }
    for (int q = 0; q < ctx->world; q++) {
        if (all[q].status < 0) {
            st = duet__error((duet_status_t)all[q].status,
                             "duet_buf_register: rank %d's buffer was refused (%s); see its message", q,
                             duet_status_name((duet_status_t)all[q].status));
            goto out;
        }
    }
    for (int q = 0; q < ctx->world; q++) {
        if (all[q].bytes != all[0].bytes) {
            st = duet__error(DUET_ERR_INVALID_ARG,
                             "duet_buf_register is collective over buffers of one size: rank 0 registers %llu bytes, "
                             "rank %d %llu",
                             (unsigned long long)all[0].bytes, q, (unsigned long long)all[q].bytes);
            goto out;
        }
    }
    {
        duet_status_t local = DUET_OK;
        buf = (duet_buf_h)calloc(1, sizeof(*buf));
        if (buf == NULL)
            local = duet__error(DUET_ERR_NO_MEMORY, "duet_buf_register");
        if (buf != NULL) {
            buf->ptr = (char *)ptr;
            buf->bytes = bytes;
            for (int q = 0; q < DUET_OP_MAX_WORLD; q++)
                buf->map[q] = -1;
            for (int q = 0; q < ctx->world && local == DUET_OK; q++) {
                if (q == ctx->rank) {
                    buf->at[q] = (char *)ptr;
                    continue;
                }
                local = duet__map_open(ctx, q, &all[q], &buf->map[q]);
                if (local == DUET_OK)
                    buf->at[q] = ctx->maps[buf->map[q]].base + all[q].offset;
            }
        }
        st = duet__ctx_agree(ctx, local);
        if (st < 0)
            goto out;
    }
    ctx->bufs[ctx->nbufs++] = buf;
    duet__regions_update(ctx);
    *buf_p = buf;
    buf = NULL;
out:
    if (buf != NULL)
        duet__buf_drop(ctx, buf);
    return duet__ctx_fail(ctx, st);
}

duet_status_t duet_buf_deregister(duet_ctx_h ctx, duet_buf_h buf)
{
    duet_status_t st = DUET_OK, local = DUET_OK;
    int i = 0;
    if (buf == NULL)
        return DUET_OK;
    if (ctx == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_buf_deregister: ctx is NULL");
    while (i < ctx->nbufs && ctx->bufs[i] != buf)
        i++;
    if (i == ctx->nbufs)
        local = duet__error(DUET_ERR_INVALID_ARG, "duet_buf_deregister(%p): not a buffer of this context", (void *)buf);
    /* The ranks' operations may still read or write the buffer through our mappings. */
    if (local == DUET_OK && hipSetDevice(ctx->device) == hipSuccess && hipDeviceSynchronize() != hipSuccess)
        local = duet__error(DUET_ERR_BACKEND, "duet_buf_deregister: the device failed: %s",
                            hipGetErrorString(hipGetLastError()));
    st = duet__ctx_agree(ctx, local);
    if (local < 0)
        goto out;
    /* Whatever the others said, this rank's buffer is ours to drop. */
    duet__buf_drop(ctx, buf);
    for (; i + 1 < ctx->nbufs; i++)
        ctx->bufs[i] = ctx->bufs[i + 1];
    ctx->nbufs--;
    duet__regions_update(ctx);
    /* No rank returns (and frees its memory) while another still has it mapped. */
    if (st == DUET_OK)
        st = duet__ctx_barrier(ctx);
out:
    return duet__ctx_fail(ctx, st);
}

void duet__bufs_release(duet_ctx_h ctx)
{
    while (ctx->nbufs > 0)
        duet__buf_drop(ctx, ctx->bufs[--ctx->nbufs]);
}
