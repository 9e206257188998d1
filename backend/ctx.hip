/*
 * Context: device selection, the symmetric heap and its IPC mappings, collective allocation,
 * error collection and recovery.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ------------------------------------------------------------------------------------------ */
/* Collectives over the bootstrap                                                              */
/* ------------------------------------------------------------------------------------------ */

duet_status_t duet__ctx_allgather(duet_ctx_h ctx, const void *mine, void *all, size_t bytes)
{
    int rc = ctx->boot.allgather(ctx->boot.user, mine, all, bytes);
    if (rc != 0)
        return duet__error(DUET_ERR_MPI, "rank %d: the bootstrap's allgather of %zu bytes failed (%d%s%s)", ctx->rank,
                           bytes, rc, rc < 0 ? ": " : "", rc < 0 ? strerror(-rc) : "");
    return DUET_OK;
}

duet_status_t duet__ctx_barrier(duet_ctx_h ctx)
{
    if (ctx->boot.barrier == NULL) {
        /* An allgather of one byte: nobody returns before every rank has contributed. */
        char one = 1, *all = (char *)malloc((size_t)ctx->world);
        if (all == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "barrier of %d ranks", ctx->world);
        duet_status_t st = duet__ctx_allgather(ctx, &one, all, 1);
        free(all);
        return st;
    }
    int rc = ctx->boot.barrier(ctx->boot.user);
    if (rc != 0)
        return duet__error(DUET_ERR_MPI, "rank %d: the bootstrap's barrier failed (%d%s%s)", ctx->rank, rc,
                           rc < 0 ? ": " : "", rc < 0 ? strerror(-rc) : "");
    return DUET_OK;
}

duet_status_t duet__ctx_agree(duet_ctx_h ctx, duet_status_t st)
{
    int32_t mine = (int32_t)st, worst = 0, all[DUET_OP_MAX_WORLD];
    int who = -1;
    char why[DUET__ERRBUF_LEN];
    /* Keep this rank's own message: the allgather may overwrite the thread's last error. */
    snprintf(why, sizeof(why), "%s", st < 0 ? duet_last_error() : "");
    if (duet__ctx_allgather(ctx, &mine, all, sizeof(mine)) < 0)
        return DUET_ERR_MPI;
    for (int p = 0; p < ctx->world; p++)
        if (all[p] < worst) {
            worst = all[p];
            who = p;
        }
    if (mine < 0)
        return duet__error((duet_status_t)mine, "%s", why);
    if (worst < 0)
        return duet__error((duet_status_t)worst, "rank %d failed (%s); see its message", who,
                           duet_status_name((duet_status_t)worst));
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Architectures                                                                               */
/* ------------------------------------------------------------------------------------------ */

/* The architectures the build compiled device code for (backend/backend.mk passes them). */
#ifndef DUET_BUILT_ARCHS
#define DUET_BUILT_ARCHS ""
#endif

const char *duet_backend_archs(void)
{
    return DUET_BUILT_ARCHS;
}

/* The length of an architecture name up to its first ':' (AMD target features) or the end. */
static size_t duet__arch_len(const char *a, size_t n)
{
    size_t i = 0;
    while (i < n && a[i] != ':')
        i++;
    return i;
}

/* An NVIDIA name sm_XY or sm_XYa: the compute capability 10 * X + Y, and whether it is 'a'. */
static int duet__sm_parse(const char *a, size_t n, int *cc, int *exact)
{
    if (n < 5 || strncmp(a, "sm_", 3) != 0)
        return 0;
    int v = 0;
    size_t i = 3;
    for (; i < n && a[i] >= '0' && a[i] <= '9'; i++)
        v = 10 * v + (a[i] - '0');
    *exact = i < n && (a[i] == 'a' || a[i] == 'f');
    *cc = v;
    return i > 3;
}

int duet__arch_match(const char *built, const char *arch)
{
    size_t alen = duet__arch_len(arch, strlen(arch));
    for (const char *p = built; *p != '\0';) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        int bcc = 0, bexact = 0, dcc = 0, dexact = 0;
        if (duet__sm_parse(p, n, &bcc, &bexact) && duet__sm_parse(arch, alen, &dcc, &dexact)) {
            /* Cubins run on the same major version at an equal or higher minor; the
             * architecture-specific ones (sm_90a) on their own version only. */
            if (bexact ? dcc == bcc : (dcc / 10 == bcc / 10 && dcc >= bcc))
                return 1;
        } else if (duet__arch_len(p, n) == alen && strncmp(p, arch, alen) == 0) {
            return 1;
        }
        p += n;
    }
    return 0;
}

/* Refuse a device this build has no code object for, before any kernel fails to launch. */
static duet_status_t duet__ctx_check_arch(duet_ctx_h ctx)
{
    duet_status_t st = DUET_OK;
    hipDeviceProp_t prop;
    char arch[64];
    HIP_CHECK(hipGetDeviceProperties(&prop, ctx->device), st, out);
#if defined(DUET_GPU_AMD)
    snprintf(arch, sizeof(arch), "%s", prop.gcnArchName);
    arch[duet__arch_len(arch, strlen(arch))] = '\0';
    if (DUET_BUILT_ARCHS[0] != '\0' && !duet__arch_match(DUET_BUILT_ARCHS, arch))
        st = duet__error(DUET_ERR_UNSUPPORTED, "built for %s; this GPU is %s: rebuild with AMD_ARCHS=%s",
                         DUET_BUILT_ARCHS, arch, arch);
#else
    /* The wgmma and TMA tiles are Hopper's: there is no CUDA_ARCHS to rebuild with. */
    snprintf(arch, sizeof(arch), "sm_%d%d", prop.major, prop.minor);
    if (DUET_BUILT_ARCHS[0] != '\0' && !duet__arch_match(DUET_BUILT_ARCHS, arch))
        st = duet__error(DUET_ERR_UNSUPPORTED,
                         "built for %s; this GPU is %s: duet's NVIDIA kernels run on Hopper (sm_90) only",
                         DUET_BUILT_ARCHS, arch);
#endif
out:
    return st;
}

/* The built-in profile of this device (duet_hw_builtin_for_device), with its SM count and shared memory. */
static duet_status_t duet__ctx_profile(duet_ctx_h ctx, const char *name)
{
    duet_status_t st = DUET_OK;
    hipDeviceProp_t prop;
    int sms = 0, smem = 0;
    HIP_CHECK(hipGetDeviceProperties(&prop, ctx->device), st, out);
    HIP_CHECK(hipDeviceGetAttribute(&sms, hipDevAttrSmCount, ctx->device), st, out);
    HIP_CHECK(hipDeviceGetAttribute(&smem, hipDevAttrSmemOptin, ctx->device), st, out);
    if (name == NULL) {
        /* By the device's name, not its architecture alone: an H100 and an H200 are both sm_90. */
        char arch[64];
#if defined(DUET_GPU_AMD)
        snprintf(arch, sizeof(arch), "%.63s", prop.gcnArchName);
#else
        snprintf(arch, sizeof(arch), "sm_%d%d", prop.major, prop.minor);
#endif
        name = duet_hw_builtin_for_device(prop.name, arch, NULL);
    }
    DUET_CHECK_GOTO(duet_hw_load(name, &ctx->hw), st, out);
    /* Validation must judge the device we run on, not the profile's nominal chip. */
    ctx->hw.n_sms = sms;
    ctx->hw.smem_kib = smem / 1024.0;
    snprintf(ctx->hw.device, sizeof(ctx->hw.device), "%.95s", prop.name);
out:
    return st;
}

/* A host name as the ranks exchange it (bytes; longer names are cut, which only matters if two
 * hosts share their first 63 characters). */
#define DUET__HOST_LEN 64

/*
 * Pick the GPU: node-local rank modulo the device count, unless the caller named one. The ranks
 * of this node are those with our host name; the node-local rank is our place among them.
 */
static duet_status_t duet__ctx_pick_device(duet_ctx_h ctx, int want)
{
    duet_status_t st = DUET_OK;
    char mine[DUET__HOST_LEN], *hosts = NULL;
    int local_rank = 0, local_size = 0, count = 0;
    memset(mine, 0, sizeof(mine));
    if (gethostname(mine, sizeof(mine) - 1) != 0)
        snprintf(mine, sizeof(mine), "unknown");
    hosts = (char *)calloc((size_t)ctx->world, DUET__HOST_LEN);
    if (hosts == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "host names of %d ranks", ctx->world);
        goto out;
    }
    DUET_CHECK_GOTO(duet__ctx_allgather(ctx, mine, hosts, DUET__HOST_LEN), st, out);
    for (int p = 0; p < ctx->world; p++)
        if (memcmp(hosts + (size_t)p * DUET__HOST_LEN, mine, DUET__HOST_LEN) == 0) {
            local_size++;
            local_rank += p < ctx->rank;
        }
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
    if (want >= count) {
        st = duet__error(DUET_ERR_INVALID_ARG, "device %d does not exist (%d visible)", want, count);
        goto out;
    }
    ctx->device = want >= 0 ? want : local_rank % count;
    HIP_CHECK(hipSetDevice(ctx->device), st, out);
    st = duet__ctx_check_arch(ctx);
out:
    free(hosts);
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
    DUET_CHECK_GOTO(duet__ctx_allgather(ctx, &mine, all, sizeof(mine)), st, out);
    {
        int32_t dev = ctx->device, devs[DUET_OP_MAX_WORLD];
        DUET_CHECK_GOTO(duet__ctx_allgather(ctx, &dev, devs, sizeof(dev)), st, out);
        for (int p = 0; p < ctx->world; p++)
            devices[p] = devs[p];
    }
    st = duet__ctx_agree(ctx, duet__ctx_check_peers(ctx, devices));
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
    HIP_CHECK(hipEventCreateWithFlags(&ctx->ev_gate, hipEventDisableTiming), st, out);
    for (int j = 0; j < DUET_MAX_COPY_STREAMS - 1; j++) {
        HIP_CHECK(hipStreamCreateWithFlags(&ctx->s_copy[j], hipStreamNonBlocking), st, out);
        HIP_CHECK(hipEventCreateWithFlags(&ctx->ev_copy[j], hipEventDisableTiming), st, out);
    }
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
    /* Close our mappings of the peers' heaps and registered buffers before any rank frees its own. */
    duet__bufs_release(ctx);
    for (int p = 0; p < DUET_OP_MAX_WORLD; p++)
        if (ctx->opened[p])
            (void)hipIpcCloseMemHandle(ctx->bases[p]);
    if (ctx->boot_owned)
        (void)duet__ctx_barrier(ctx);
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
    if (ctx->ev_gate != NULL)
        (void)hipEventDestroy(ctx->ev_gate);
    for (int j = 0; j < DUET_MAX_COPY_STREAMS - 1; j++) {
        if (ctx->ev_copy[j] != NULL)
            (void)hipEventDestroy(ctx->ev_copy[j]);
        if (ctx->s_copy[j] != NULL)
            (void)hipStreamDestroy(ctx->s_copy[j]);
    }
    if (ctx->s_comm != NULL)
        (void)hipStreamDestroy(ctx->s_comm);
    if (ctx->heap != NULL)
        (void)hipFree(ctx->heap);
    free(ctx->allocs);
    free(ctx->maps);
    if (ctx->boot_owned && ctx->boot.release != NULL)
        ctx->boot.release(ctx->boot.user);
    free(ctx);
}

/* The bootstrap as given, before anything is exchanged over it. */
static duet_status_t duet__boot_check(const duet_bootstrap_t *b)
{
    if (b->allgather == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_create_bootstrap: boot->allgather is NULL");
    if (b->world < 1 || b->rank < 0 || b->rank >= b->world)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_create_bootstrap: rank %d of world %d", b->rank, b->world);
    if (b->world > DUET_OP_MAX_WORLD)
        return duet__error(DUET_ERR_UNSUPPORTED, "%d ranks: at most %d (one node)", b->world, DUET_OP_MAX_WORLD);
    return DUET_OK;
}

duet_status_t duet_ctx_create_bootstrap(const duet_bootstrap_t *boot, const duet_ctx_params_t *params,
                                        duet_ctx_h *ctx_p)
{
    duet_status_t st = DUET_OK;
    duet_ctx_params_t prm = params != NULL ? *params : duet_ctx_default_params();
    duet_ctx_h ctx = NULL;
    if (boot == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_create_bootstrap: boot is NULL");
    /* From here on the bootstrap's user data is ours, whatever happens. */
    if (ctx_p == NULL) {
        st = duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_create: ctx_p is NULL");
        goto release;
    }
    if (prm.heap_bytes <= DUET__HEAP_RESERVED || prm.timeout_ms <= 0) {
        st = duet__error(DUET_ERR_INVALID_ARG, "duet_ctx_create: heap_bytes must exceed %d and timeout_ms be > 0",
                         DUET__HEAP_RESERVED);
        goto release;
    }
    DUET_CHECK_GOTO(duet__boot_check(boot), st, release);
    ctx = (duet_ctx_h)calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "duet_ctx_create: context");
        goto release;
    }
    ctx->boot = *boot;
    ctx->boot_owned = 1;
    ctx->device = -1;
    ctx->timeout_ms = prm.timeout_ms;
    ctx->rank = boot->rank;
    ctx->world = boot->world;
    st = duet__ctx_agree(ctx, duet__ctx_pick_device(ctx, prm.device));
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
        st = duet__ctx_agree(ctx, local);
        if (st < 0)
            goto fail;
    }
    ctx->top = DUET__HEAP_RESERVED;
    ctx->regions[0].base = (uintptr_t)ctx->heap;
    ctx->regions[0].bytes = ctx->heap_size;
    st = duet__ctx_agree(ctx, duet__ctx_map_peers(ctx));
    if (st < 0)
        goto fail;
    {
        duet_status_t local = duet__ctx_profile(ctx, prm.hw);
        if (local == DUET_OK)
            local = duet__ctx_runtime_objects(ctx);
        st = duet__ctx_agree(ctx, local);
        if (st < 0)
            goto fail;
    }
    /* Nobody may signal a peer before every heap is zeroed and mapped. */
    DUET_CHECK_GOTO(duet__ctx_barrier(ctx), st, fail);
    *ctx_p = ctx;
    return DUET_OK;
fail : {
    /* Destroying may call the bootstrap again (its barrier): keep this call's reason. */
    char why[DUET__ERRBUF_LEN];
    snprintf(why, sizeof(why), "%s", duet_last_error());
    duet_ctx_destroy(ctx);
    return duet__error(st, "%s", why);
}
release:
    if (boot->release != NULL)
        boot->release(boot->user);
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
    unsigned long long lo = v, hi = v, all[DUET_OP_MAX_WORLD];
    duet_status_t st = DUET_OK;
    DUET_CHECK_GOTO(duet__ctx_allgather(ctx, &v, all, sizeof(v)), st, out);
    for (int p = 0; p < ctx->world; p++) {
        lo = all[p] < lo ? all[p] : lo;
        hi = all[p] > hi ? all[p] : hi;
    }
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
    {
        uint32_t all[DUET_OP_MAX_WORLD];
        DUET_CHECK_GOTO(duet__ctx_allgather(ctx, &mine, all, sizeof(mine)), st, out);
        for (int p = 0; p < ctx->world; p++)
            top = all[p] > top ? all[p] : top;
    }
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
    DUET_CHECK_GOTO(duet__ctx_barrier(ctx), st, out);
out:
    return duet__ctx_fail(ctx, st);
}
