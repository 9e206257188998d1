/*
 * Vendor baselines (BLASLt GEMM, NCCL/RCCL collectives) and GPU utilities for host C code.
 * See include/duet/vendor.h.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duet/backend.h"
#include "duet/op.h"
#include "duet/vendor.h"
#include "vendor/libs.h"

/* The model layer's internal helpers are C; they carry no linkage guards of their own. */
extern "C" {
#include "base/base.h"
}

#define VENDOR_CACHE 32

typedef struct vendor_algo {
    int64_t m, n, k;
    int32_t dtype, sm_target, valid;
    hipblasLtMatmulAlgo_t algo;
} vendor_algo_t;

struct duet_vendor {
    int device;
    int rank, world;
    hipblasLtHandle_t lt;
    void *workspace;
    size_t workspace_bytes;
    ncclComm_t comms[DUET_VENDOR_MAX_COMMS];
    int32_t n_comms;
    vendor_algo_t cache[VENDOR_CACHE];
    int32_t cache_next;
    char describe[96];
    char err[256];
    hipStream_t side;          /* vendor mode: duet's comm kernel runs here */
    hipEvent_t ev_fork, ev_join;
};

/* Record an error on the context and in the thread's last-error text. */
static duet_status_t vendor_fail(duet_vendor_h v, duet_status_t st, const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (v != NULL)
        snprintf(v->err, sizeof(v->err), "%s", buf);
    return duet__error(st, "%s", buf);
}

#define HIP_TRY(_v, _call)                                                                                             \
    do {                                                                                                               \
        hipError_t _e = (_call);                                                                                       \
        if (_e != hipSuccess)                                                                                          \
            return vendor_fail((_v), DUET_ERR_BACKEND, "%s: %s", #_call, hipGetErrorString(_e));                       \
    } while (0)
#define BLAS_TRY(_v, _call)                                                                                            \
    do {                                                                                                               \
        hipblasStatus_t _s = (_call);                                                                                  \
        if (_s != HIPBLAS_STATUS_SUCCESS)                                                                              \
            return vendor_fail((_v), DUET_ERR_BACKEND, "%s: " DUET_BLASLT_NAME " status %d", #_call, (int)_s);         \
    } while (0)
#define NCCL_TRY(_v, _call)                                                                                            \
    do {                                                                                                               \
        ncclResult_t _r = (_call);                                                                                     \
        if (_r != ncclSuccess)                                                                                         \
            return vendor_fail((_v), DUET_ERR_BACKEND, "%s: %s", #_call, ncclGetErrorString(_r));                      \
    } while (0)

duet_vendor_params_t duet_vendor_default_params(void)
{
    duet_vendor_params_t p;
    memset(&p, 0, sizeof(p));
    p.workspace_bytes = 32u << 20;
    return p;
}

static ncclDataType_t vendor_nccl_type(int32_t dtype) { return dtype == DUET_DTYPE_FP16 ? ncclHalf : ncclBfloat16; }

extern "C" duet_status_t duet_vendor_create(MPI_Comm comm, int device, const duet_vendor_params_t *params,
                                            duet_vendor_h *v_p)
{
    duet_vendor_params_t p = params ? *params : duet_vendor_default_params();
    if (p.n_capped < 0 || p.n_capped > DUET_VENDOR_MAX_COMMS - 1)
        return duet__error(DUET_ERR_INVALID_ARG, "vendor: at most %d capped communicators", DUET_VENDOR_MAX_COMMS - 1);
    duet_vendor_h v = (duet_vendor_h)calloc(1, sizeof(*v));
    if (v == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "vendor: cannot allocate a context");
    duet_status_t st = DUET_OK;
    v->device = device;
    MPI_Comm_rank(comm, &v->rank);
    MPI_Comm_size(comm, &v->world);
    v->workspace_bytes = p.workspace_bytes;
    hipError_t e = hipSetDevice(device);
    if (e == hipSuccess)
        e = hipMalloc(&v->workspace, v->workspace_bytes);
    if (e != hipSuccess) {
        st = vendor_fail(v, DUET_ERR_BACKEND, "vendor: device %d: %s", device, hipGetErrorString(e));
        goto fail;
    }
    if (e == hipSuccess)
        e = hipStreamCreateWithFlags(&v->side, hipStreamNonBlocking);
    if (e == hipSuccess)
        e = hipEventCreateWithFlags(&v->ev_fork, hipEventDisableTiming);
    if (e == hipSuccess)
        e = hipEventCreateWithFlags(&v->ev_join, hipEventDisableTiming);
    if (e != hipSuccess) {
        st = vendor_fail(v, DUET_ERR_BACKEND, "vendor: streams and events: %s", hipGetErrorString(e));
        goto fail;
    }
    if (hipblasLtCreate(&v->lt) != HIPBLAS_STATUS_SUCCESS) {
        st = vendor_fail(v, DUET_ERR_BACKEND, "vendor: cannot create a " DUET_BLASLT_NAME " handle");
        goto fail;
    }
    /* One communicator per CTA cap, all from ids made on rank 0 and broadcast over MPI. */
    for (int32_t i = 0; i <= p.n_capped; i++) {
        ncclUniqueId id;
        if (v->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) {
            st = vendor_fail(v, DUET_ERR_BACKEND, "vendor: ncclGetUniqueId failed");
            goto fail;
        }
        if (MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, comm) != MPI_SUCCESS) {
            st = vendor_fail(v, DUET_ERR_MPI, "vendor: MPI_Bcast of the " DUET_CCL_NAME " id failed");
            goto fail;
        }
        ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
        if (i > 0)
            cfg.maxCTAs = p.capped_ctas[i - 1];
        ncclResult_t r = ncclCommInitRankConfig(&v->comms[i], v->world, id, v->rank, &cfg);
        if (r != ncclSuccess) {
            st = vendor_fail(v, DUET_ERR_BACKEND, "vendor: ncclCommInitRankConfig: %s", ncclGetErrorString(r));
            goto fail;
        }
        v->n_comms++;
    }
    {
        int nccl = 0;
        ncclGetVersion(&nccl);
        snprintf(v->describe, sizeof(v->describe), "%s %zu + %s %d.%d.%d", DUET_BLASLT_NAME,
                 (size_t)hipblasLtGetVersion(), DUET_CCL_NAME, nccl / 10000, nccl / 100 % 100, nccl % 100);
    }
    *v_p = v;
    return DUET_OK;
fail:
    duet_vendor_destroy(v);
    return st;
}

extern "C" void duet_vendor_destroy(duet_vendor_h v)
{
    if (v == NULL)
        return;
    for (int32_t i = 0; i < v->n_comms; i++)
        ncclCommDestroy(v->comms[i]);
    if (v->lt)
        hipblasLtDestroy(v->lt);
    if (v->workspace)
        hipFree(v->workspace);
    if (v->ev_join)
        hipEventDestroy(v->ev_join);
    if (v->ev_fork)
        hipEventDestroy(v->ev_fork);
    if (v->side)
        hipStreamDestroy(v->side);
    free(v);
}

extern "C" const char *duet_vendor_describe(duet_vendor_h v) { return v ? v->describe : ""; }
extern "C" const char *duet_vendor_last_error(duet_vendor_h v) { return v ? v->err : ""; }

/*
 * Row-major C[m,n] = A[m,k] * B[n,k]^T is, in the column-major terms of BLASLt, C^T (n x m) =
 * B (n x k, stored as its transpose, k x n with ld k) times A^T (k x m, ld k): op(A) = T on the
 * B buffer, op(B) = N on the A buffer, the "TN" layout these libraries are fastest at.
 */
static duet_status_t vendor_algo(duet_vendor_h v, const duet_workload_t *wl, int32_t sm_target,
                                 hipblasLtMatmulDesc_t desc, hipblasLtMatrixLayout_t la, hipblasLtMatrixLayout_t lb,
                                 hipblasLtMatrixLayout_t lc, hipblasLtMatmulAlgo_t *algo_p)
{
    for (int i = 0; i < VENDOR_CACHE; i++) {
        vendor_algo_t *c = &v->cache[i];
        if (c->valid && c->m == wl->m && c->n == wl->n && c->k == wl->k && c->dtype == wl->dtype &&
            c->sm_target == sm_target) {
            *algo_p = c->algo;
            return DUET_OK;
        }
    }
    hipblasLtMatmulPreference_t pref;
    BLAS_TRY(v, hipblasLtMatmulPreferenceCreate(&pref));
    size_t ws = v->workspace_bytes;
    hipblasLtMatmulPreferenceSetAttribute(pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    hipblasLtMatmulHeuristicResult_t res;
    int got = 0;
    hipblasStatus_t s = hipblasLtMatmulAlgoGetHeuristic(v->lt, desc, la, lb, lc, lc, pref, 1, &res, &got);
    hipblasLtMatmulPreferenceDestroy(pref);
    if (s != HIPBLAS_STATUS_SUCCESS || got < 1)
        return vendor_fail(v, DUET_ERR_UNSUPPORTED, "vendor: no " DUET_BLASLT_NAME " algorithm for %lldx%lldx%lld",
                           (long long)wl->m, (long long)wl->n, (long long)wl->k);
    vendor_algo_t *c = &v->cache[v->cache_next];
    v->cache_next = (v->cache_next + 1) % VENDOR_CACHE;
    c->m = wl->m;
    c->n = wl->n;
    c->k = wl->k;
    c->dtype = wl->dtype;
    c->sm_target = sm_target;
    c->algo = res.algo;
    c->valid = 1;
    *algo_p = res.algo;
    return DUET_OK;
}

extern "C" duet_status_t duet_vendor_gemm(duet_vendor_h v, const duet_workload_t *wl, const void *a, const void *b,
                                          void *c, int32_t sm_target, void *stream)
{
    if (wl->m <= 0)
        return DUET_OK;
    hipDataType t = wl->dtype == DUET_DTYPE_FP16 ? HIP_R_16F : HIP_R_16BF;
    hipblasLtMatmulDesc_t desc = NULL;
    hipblasLtMatrixLayout_t la = NULL, lb = NULL, lc = NULL;
    hipblasLtMatmulAlgo_t algo;
    duet_status_t st = DUET_OK;
    hipblasOperation_t opT = HIPBLAS_OP_T, opN = HIPBLAS_OP_N;
    const float alpha = 1.0f, beta = 0.0f;
    if (hipblasLtMatmulDescCreate(&desc, HIPBLAS_COMPUTE_32F, HIP_R_32F) != HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof(opT)) != HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof(opN)) != HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatrixLayoutCreate(&la, t, (uint64_t)wl->k, (uint64_t)wl->n, (int64_t)wl->k) != HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatrixLayoutCreate(&lb, t, (uint64_t)wl->k, (uint64_t)wl->m, (int64_t)wl->k) != HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatrixLayoutCreate(&lc, t, (uint64_t)wl->n, (uint64_t)wl->m, (int64_t)wl->n) != HIPBLAS_STATUS_SUCCESS) {
        st = vendor_fail(v, DUET_ERR_BACKEND, "vendor: cannot describe the GEMM to " DUET_BLASLT_NAME);
        goto out;
    }
#if DUET_BLASLT_HAS_SM_TARGET
    if (sm_target > 0 &&
        hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, sizeof(sm_target)) !=
            HIPBLAS_STATUS_SUCCESS) {
        st = vendor_fail(v, DUET_ERR_BACKEND, "vendor: cannot set the SM count target %d", sm_target);
        goto out;
    }
#endif
    if ((st = vendor_algo(v, wl, sm_target, desc, la, lb, lc, &algo)) < 0)
        goto out;
    {
        hipblasStatus_t s = hipblasLtMatmul(v->lt, desc, &alpha, b, la, a, lb, &beta, c, lc, c, lc, &algo,
                                            v->workspace, v->workspace_bytes, (hipStream_t)stream);
        if (s != HIPBLAS_STATUS_SUCCESS)
            st = vendor_fail(v, DUET_ERR_BACKEND, "vendor: " DUET_BLASLT_NAME " matmul failed (status %d)", (int)s);
    }
out:
    if (lc)
        hipblasLtMatrixLayoutDestroy(lc);
    if (lb)
        hipblasLtMatrixLayoutDestroy(lb);
    if (la)
        hipblasLtMatrixLayoutDestroy(la);
    if (desc)
        hipblasLtMatmulDescDestroy(desc);
    return st;
}

extern "C" duet_status_t duet_vendor_coll(duet_vendor_h v, int32_t slot, const duet_workload_t *wl, const void *src,
                                          void *dst, void *stream)
{
    if (slot < 0 || slot >= v->n_comms)
        return vendor_fail(v, DUET_ERR_INVALID_ARG, "vendor: communicator slot %d of %d", slot, v->n_comms);
    ncclComm_t comm = v->comms[slot];
    hipStream_t s = (hipStream_t)stream;
    ncclDataType_t t = vendor_nccl_type(wl->dtype);
    size_t n = (size_t)wl->mc * (size_t)wl->nc, eb = 2;
    switch (wl->coll) {
    case DUET_COLL_NONE:
        return DUET_OK;
    case DUET_COLL_ALL_GATHER:
        NCCL_TRY(v, ncclAllGather(src, dst, n, t, comm, s));
        return DUET_OK;
    case DUET_COLL_ALL_REDUCE:
        NCCL_TRY(v, ncclAllReduce(src, dst, n, t, ncclSum, comm, s));
        return DUET_OK;
    case DUET_COLL_REDUCE_SCATTER:
        NCCL_TRY(v, ncclReduceScatter(src, dst, n / (size_t)wl->world, t, ncclSum, comm, s));
        return DUET_OK;
    case DUET_COLL_ALL_TO_ALL: {
        /* Row block p of src goes to row block `rank` of peer p: grouped point-to-point, which
         * both NCCL and RCCL have (a native all-to-all is not in every version). */
        size_t chunk = n / (size_t)wl->world;
        NCCL_TRY(v, ncclGroupStart());
        for (int p = 0; p < v->world; p++) {
            NCCL_TRY(v, ncclSend((const char *)src + (size_t)p * chunk * eb, chunk, t, p, comm, s));
            NCCL_TRY(v, ncclRecv((char *)dst + (size_t)p * chunk * eb, chunk, t, p, comm, s));
        }
        NCCL_TRY(v, ncclGroupEnd());
        return DUET_OK;
    }
    case DUET_COLL_BROADCAST:
        NCCL_TRY(v, ncclBroadcast(src, dst, n, t, wl->root, comm, s));
        return DUET_OK;
    default:
        return vendor_fail(v, DUET_ERR_INVALID_ARG, "vendor: unknown collective %d", (int)wl->coll);
    }
}

extern "C" duet_status_t duet_vendor_run(duet_vendor_h v, struct duet_ctx *ctx, const struct duet_op *op,
                                         void *stream)
{
    if (v == NULL)
        return vendor_fail(v, DUET_ERR_INVALID_ARG, "duet_vendor_run: no vendor context (duet_vendor_create())");
    if (op->cfg.mode != DUET_MODE_VENDOR)
        return vendor_fail(v, DUET_ERR_INVALID_ARG, "duet_vendor_run: the operation's mode is %s, not vendor",
                           duet_mode_name(op->cfg.mode));
    DUET_CHECK(duet_config_validate(&op->cfg, &op->wl, duet_ctx_hw(ctx)));
    hipStream_t s = (hipStream_t)stream;
    /* The collective alone, as a fused duet operation whose CTAs all serve the comm queue. */
    duet_op_t comm = *op;
    comm.wl.m = comm.wl.n = comm.wl.k = 0;
    comm.a = comm.b = NULL;
    comm.c = NULL;
    comm.cfg = duet_config_default(duet_ctx_hw(ctx), DUET_MODE_FUSED);
    comm.cfg.num_wgs = comm.cfg.comm_wgs = op->cfg.comm_wgs;
    comm.cfg.gemm_wgs = 0;
    comm.cfg.cm = op->cfg.cm;
    comm.cfg.cn = op->cfg.cn;
    if (op->wl.coll != DUET_COLL_NONE) {
        HIP_TRY(v, hipEventRecord(v->ev_fork, s));
        HIP_TRY(v, hipStreamWaitEvent(v->side, v->ev_fork, 0));
        DUET_CHECK(duet_run(ctx, &comm, v->side));
    }
    /* Every SM is the library's own plan, without a target: the GEMM as duet bench times it alone. */
    int32_t sm_target = op->cfg.gemm_wgs >= duet_ctx_hw(ctx)->n_sms ? 0 : op->cfg.gemm_wgs;
    if (op->wl.m > 0)
        DUET_CHECK(duet_vendor_gemm(v, &op->wl, op->a, op->b, op->c, sm_target, stream));
    if (op->wl.coll != DUET_COLL_NONE) {
        HIP_TRY(v, hipEventRecord(v->ev_join, v->side));
        HIP_TRY(v, hipStreamWaitEvent(s, v->ev_join, 0));
    }
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Utilities                                                                                   */
/* ------------------------------------------------------------------------------------------ */

extern "C" duet_status_t duet_gpu_malloc(size_t bytes, void **ptr_p)
{
    void *p = NULL;
    hipError_t e = hipMalloc(&p, bytes ? bytes : 1);
    if (e != hipSuccess)
        return duet__error(DUET_ERR_NO_MEMORY, "cannot allocate %zu bytes on the GPU: %s", bytes, hipGetErrorString(e));
    *ptr_p = p;
    return DUET_OK;
}

extern "C" void duet_gpu_free(void *ptr)
{
    if (ptr)
        hipFree(ptr);
}

/* splitmix64: a fast, well-mixed hash of (seed, index); uniform bits without state. */
__device__ static inline uint64_t vendor_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__global__ void vendor_fill_kernel(uint16_t *p, size_t n, int32_t dtype, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        /* 24 random bits -> [-1, 1); exact zeros are replaced so an unwritten output shows. */
        float f = (float)(vendor_mix(seed ^ (i * 0x632be59bd9b4e019ull)) >> 40) * (2.0f / 16777216.0f) - 1.0f;
        if (f == 0.0f)
            f = 0.5f;
        uint16_t bits;
        if (dtype == DUET_DTYPE_FP16) {
            __half h = __float2half(f);
            memcpy(&bits, &h, 2);
        } else {
            /* bf16: round to nearest even on the top 16 bits of the fp32 pattern. */
            uint32_t u;
            memcpy(&u, &f, 4);
            u += 0x7fffu + ((u >> 16) & 1u);
            bits = (uint16_t)(u >> 16);
        }
        p[i] = bits;
    }
}

extern "C" duet_status_t duet_gpu_fill_random(void *ptr, size_t n, int32_t dtype, uint64_t seed, void *stream)
{
    if (n == 0)
        return DUET_OK;
    size_t blocks = (n + 255) / 256;
    if (blocks > 65536)
        blocks = 65536;
    vendor_fill_kernel<<<(unsigned)blocks, 256, 0, (hipStream_t)stream>>>((uint16_t *)ptr, n, dtype, seed);
    hipError_t e = hipGetLastError();
    if (e != hipSuccess)
        return duet__error(DUET_ERR_BACKEND, "random fill: %s", hipGetErrorString(e));
    return DUET_OK;
}

extern "C" duet_status_t duet_gpu_describe(int device, char *name, size_t name_n, char *arch, size_t arch_n,
                                           int32_t *sms_p, char *driver, size_t driver_n, char *runtime,
                                           size_t runtime_n)
{
    hipDeviceProp_t prop;
    hipError_t e = hipGetDeviceProperties(&prop, device);
    if (e != hipSuccess)
        return duet__error(DUET_ERR_BACKEND, "device %d: %s", device, hipGetErrorString(e));
    snprintf(name, name_n, "%s", prop.name);
#if defined(DUET_GPU_AMD)
    snprintf(arch, arch_n, "%s", prop.gcnArchName);
    const char *rt = "HIP";
#else
    snprintf(arch, arch_n, "sm_%d%d", prop.major, prop.minor);
    const char *rt = "CUDA";
#endif
    *sms_p = prop.multiProcessorCount;
    int dv = 0, rv = 0;
    hipDriverGetVersion(&dv);
    hipRuntimeGetVersion(&rv);
    snprintf(driver, driver_n, "%s driver API %d.%d", rt, dv / 1000, dv % 1000 / 10);
    snprintf(runtime, runtime_n, "%s runtime %d.%d", rt, rv / 1000, rv % 1000 / 10);
    return DUET_OK;
}

extern "C" duet_status_t duet_gpu_streams_create(duet_gpu_streams_t *s)
{
    memset(s, 0, sizeof(*s));
    hipStream_t a = NULL, b = NULL;
    hipEvent_t e[4] = {NULL, NULL, NULL, NULL};
    hipError_t err = hipStreamCreateWithFlags(&a, hipStreamNonBlocking);
    if (err == hipSuccess)
        err = hipStreamCreateWithFlags(&b, hipStreamNonBlocking);
    for (int i = 0; i < 2 && err == hipSuccess; i++)
        err = hipEventCreate(&e[i]);
    for (int i = 2; i < 4 && err == hipSuccess; i++)
        err = hipEventCreateWithFlags(&e[i], hipEventDisableTiming);
    if (err != hipSuccess) {
        for (int i = 0; i < 4; i++)
            if (e[i])
                hipEventDestroy(e[i]);
        if (a)
            hipStreamDestroy(a);
        if (b)
            hipStreamDestroy(b);
        return duet__error(DUET_ERR_BACKEND, "cannot create streams and events: %s", hipGetErrorString(err));
    }
    s->main = a;
    s->side = b;
    for (int i = 0; i < 4; i++)
        s->ev[i] = e[i];
    return DUET_OK;
}

extern "C" void duet_gpu_streams_destroy(duet_gpu_streams_t *s)
{
    for (int i = 0; i < 4; i++)
        if (s->ev[i])
            hipEventDestroy((hipEvent_t)s->ev[i]);
    if (s->main)
        hipStreamDestroy((hipStream_t)s->main);
    if (s->side)
        hipStreamDestroy((hipStream_t)s->side);
    memset(s, 0, sizeof(*s));
}

extern "C" duet_status_t duet_gpu_time(duet_gpu_streams_t *s, duet_timed_fn fn, void *user, double *ms_p)
{
    hipStream_t m = (hipStream_t)s->main, side = (hipStream_t)s->side;
    hipEvent_t start = (hipEvent_t)s->ev[0], stop = (hipEvent_t)s->ev[1];
    hipEvent_t fork = (hipEvent_t)s->ev[2], join = (hipEvent_t)s->ev[3];
    HIP_TRY(NULL, hipEventRecord(start, m));
    HIP_TRY(NULL, hipEventRecord(fork, m));
    HIP_TRY(NULL, hipStreamWaitEvent(side, fork, 0));
    DUET_CHECK(fn(user, m, side));
    HIP_TRY(NULL, hipEventRecord(join, side));
    HIP_TRY(NULL, hipStreamWaitEvent(m, join, 0));
    HIP_TRY(NULL, hipEventRecord(stop, m));
    HIP_TRY(NULL, hipEventSynchronize(stop));
    float ms = 0;
    HIP_TRY(NULL, hipEventElapsedTime(&ms, start, stop));
    *ms_p = ms;
    return DUET_OK;
}
