/*
 * The baselines: the vendor libraries' GEMM (BLASLt) and collectives (NCCL/RCCL), and vendor
 * mode. See include/duet/baseline.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/ctx.h"
#include "baseline/libs.h"
#if !defined(DUET_GPU_AMD)
#include "baseline/cublaslt_ids.h"
#endif
#include "duet/baseline.h"

#define BASELINE_CACHE 32

typedef struct baseline_algo {
    int64_t m, n, k;
    int32_t dtype, sm_target, valid;
    hipblasLtMatmulAlgo_t algo;
} baseline_algo_t;

struct duet_baseline {
    int device;
    int rank, world;
    hipblasLtHandle_t lt;
    void *workspace;
    size_t workspace_bytes;
    ncclComm_t comms[DUET_BASELINE_MAX_COMMS];
    int32_t n_comms;
    baseline_algo_t cache[BASELINE_CACHE];
    int32_t cache_next;
    duet_vendor_kernel_t last; /* the kernel of the last GEMM run (duet_baseline_last_kernel) */
    int have_last;
    char describe[96];
    char err[256];
    hipStream_t side; /* vendor mode: duet's comm kernel runs here */
    hipEvent_t ev_fork, ev_join;
    /* The zero-CTA communicator (DUET_BASELINE_SLOT_ZERO_CTA) and its symmetric buffers, grown to
     * the largest collective asked for (zero_send_bytes and zero_recv_bytes of ncclMemAlloc). */
    int have_zero;
#if DUET_CCL_HAS_ZERO_CTA
    ncclComm_t zero_comm;
    void *zero_send, *zero_recv;
    size_t zero_send_bytes, zero_recv_bytes;
    ncclWindow_t zero_send_win, zero_recv_win;
#endif
};

/* Keep the thread's last error text on the context too (as duet__ctx_fail does), and return st. */
static duet_status_t baseline_keep(duet_baseline_h b, duet_status_t st)
{
    if (b != NULL && st < 0)
        snprintf(b->err, sizeof(b->err), "%s", duet_last_error());
    return st;
}

/* The two library boundaries, in the manner of HIP_CHECK (backend/ctx.h): translate once, then
 * propagate to the cleanup label. */
#define BLAS_CHECK(_call, _st, _label)                                                                                 \
    do {                                                                                                               \
        hipblasStatus_t _s = (_call);                                                                                  \
        if (_s != HIPBLAS_STATUS_SUCCESS) {                                                                            \
            (_st) = duet__error(DUET_ERR_BACKEND, "%s: " DUET_BLASLT_NAME " status %d", #_call, (int)_s);              \
            goto _label;                                                                                               \
        }                                                                                                              \
    } while (0)
#define NCCL_CHECK(_call, _st, _label)                                                                                 \
    do {                                                                                                               \
        ncclResult_t _r = (_call);                                                                                     \
        if (_r != ncclSuccess) {                                                                                       \
            (_st) = duet__error(DUET_ERR_BACKEND, "%s: %s", #_call, ncclGetErrorString(_r));                           \
            goto _label;                                                                                               \
        }                                                                                                              \
    } while (0)

duet_baseline_params_t duet_baseline_default_params(void)
{
    duet_baseline_params_t p;
    memset(&p, 0, sizeof(p));
    p.workspace_bytes = 32u << 20;
    return p;
}

static ncclDataType_t baseline_nccl_type(int32_t dtype)
{
    return dtype == DUET_DTYPE_FP16 ? ncclHalf : ncclBfloat16;
}

#define BASELINE_ZERO_CTA_VERSION 22800 /* ncclGetVersion()'s code of 2.28.0 */

/*
 * The zero-CTA communicator, where the header and the library loaded on every rank have the policy
 * (a rank with an older library makes every rank go without it: the communicator is collective).
 */
static duet_status_t baseline_zero_create(duet_baseline_h b, MPI_Comm comm)
{
    duet_status_t st = DUET_OK;
    int nccl = 0, here = 0, all = 0;
    ncclGetVersion(&nccl);
    here = DUET_CCL_HAS_ZERO_CTA && nccl >= BASELINE_ZERO_CTA_VERSION;
    MPI_CHECK(MPI_Allreduce(&here, &all, 1, MPI_INT, MPI_MIN, comm), st, out);
#if DUET_CCL_HAS_ZERO_CTA
    if (all) {
        ncclUniqueId id;
        if (b->rank == 0)
            NCCL_CHECK(ncclGetUniqueId(&id), st, out);
        MPI_CHECK(MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, comm), st, out);
        ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
        cfg.CTAPolicy = NCCL_CTA_POLICY_ZERO;
        NCCL_CHECK(ncclCommInitRankConfig(&b->zero_comm, b->world, id, b->rank, &cfg), st, out);
        b->have_zero = 1;
    }
#endif
out:
    return st;
}

#if DUET_CCL_HAS_ZERO_CTA
/* Deregister and free the symmetric buffers (collective: the windows are the communicator's). */
static void baseline_zero_release(duet_baseline_h b)
{
    if (b->zero_send_win)
        ncclCommWindowDeregister(b->zero_comm, b->zero_send_win);
    if (b->zero_recv_win)
        ncclCommWindowDeregister(b->zero_comm, b->zero_recv_win);
    if (b->zero_send)
        ncclMemFree(b->zero_send);
    if (b->zero_recv)
        ncclMemFree(b->zero_recv);
    b->zero_send = b->zero_recv = NULL;
    b->zero_send_win = b->zero_recv_win = NULL;
    b->zero_send_bytes = b->zero_recv_bytes = 0;
}

/* Symmetric buffers of at least send and recv bytes: ncclMemAlloc's memory (cuMem), both registered
 * with NCCL_WIN_COLL_SYMMETRIC, as the copy-engine path needs. Every rank asks for the same sizes. */
static duet_status_t baseline_zero_buffers(duet_baseline_h b, size_t send, size_t recv)
{
    duet_status_t st = DUET_OK;
    if (b->zero_send_bytes >= send && b->zero_recv_bytes >= recv)
        return DUET_OK;
    HIP_CHECK(hipDeviceSynchronize(), st, out); /* no collective still reads the old windows */
    baseline_zero_release(b);
    NCCL_CHECK(ncclMemAlloc(&b->zero_send, send), st, out);
    NCCL_CHECK(ncclMemAlloc(&b->zero_recv, recv), st, out);
    NCCL_CHECK(ncclCommWindowRegister(b->zero_comm, b->zero_send, send, &b->zero_send_win, NCCL_WIN_COLL_SYMMETRIC), st,
               out);
    NCCL_CHECK(ncclCommWindowRegister(b->zero_comm, b->zero_recv, recv, &b->zero_recv_win, NCCL_WIN_COLL_SYMMETRIC), st,
               out);
    b->zero_send_bytes = send;
    b->zero_recv_bytes = recv;
out:
    return st;
}
#endif

int duet_baseline_has_zero_cta(duet_baseline_h b)
{
    return b != NULL && b->have_zero;
}

int duet_baseline_zero_cta_runs(int32_t coll)
{
    return coll == DUET_COLL_ALL_GATHER || coll == DUET_COLL_ALL_TO_ALL;
}

/* The collective on the zero-CTA communicator, between its symmetric buffers. */
static duet_status_t baseline_coll_zero(duet_baseline_h b, const duet_workload_t *wl, hipStream_t s)
{
    duet_status_t st = DUET_OK;
    if (!b->have_zero || !duet_baseline_zero_cta_runs(wl->coll))
        return duet__error(DUET_ERR_UNSUPPORTED,
                           "baseline: no zero-CTA %s here (NCCL 2.28 and later: all_gather, "
                           "all_to_all)",
                           duet_collective_name(wl->coll));
#if DUET_CCL_HAS_ZERO_CTA
    {
        const size_t n = (size_t)wl->mc * (size_t)wl->nc, eb = 2, w = (size_t)wl->world;
        const ncclDataType_t t = baseline_nccl_type(wl->dtype);
        const int ag = wl->coll == DUET_COLL_ALL_GATHER;
        DUET_CHECK_GOTO(baseline_zero_buffers(b, n * eb, (ag ? n * w : n) * eb), st, out);
        if (ag)
            NCCL_CHECK(ncclAllGather(b->zero_send, b->zero_recv, n, t, b->zero_comm, s), st, out);
        else /* row block p to peer p: count per peer, n / W, as ncclAlltoAll counts it */
            NCCL_CHECK(ncclAlltoAll(b->zero_send, b->zero_recv, n / w, t, b->zero_comm, s), st, out);
    }
out:
#endif
    return st;
}

/* Add the nodes of graph g (and of its child graphs, at most `depth` deep) to nodes_out[], by kind
 * (DUET_BASELINE_NODE_*). */
static duet_status_t baseline_count_nodes(hipGraph_t g, int depth, int32_t nodes_out[DUET_BASELINE_NODE_KINDS])
{
    enum { MAX_NODES = 4096 }; /* a collective of 8 ranks captures a few dozen */
    hipGraphNode_t *nodes = (hipGraphNode_t *)calloc(MAX_NODES, sizeof(*nodes));
    if (nodes == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "baseline: cannot allocate the graph's node list");
    duet_status_t st = DUET_OK;
    size_t n = MAX_NODES;
    HIP_CHECK(hipGraphGetNodes(g, nodes, &n), st, out);
    for (size_t i = 0; i < n && i < MAX_NODES; i++) {
        hipGraphNodeType t;
        HIP_CHECK(hipGraphNodeGetType(nodes[i], &t), st, out);
        if (t == hipGraphNodeTypeGraph && depth > 0) {
            hipGraph_t child;
            HIP_CHECK(hipGraphChildGraphNodeGetGraph(nodes[i], &child), st, out);
            DUET_CHECK_GOTO(baseline_count_nodes(child, depth - 1, nodes_out), st, out);
        } else {
            nodes_out[t == hipGraphNodeTypeKernel   ? DUET_BASELINE_NODE_KERNEL
                      : t == hipGraphNodeTypeMemcpy ? DUET_BASELINE_NODE_COPY
                                                    : DUET_BASELINE_NODE_OTHER]++;
        }
    }
out:
    free(nodes);
    return st;
}

duet_status_t duet_baseline_coll_path(duet_baseline_h b, int32_t slot, const duet_workload_t *wl,
                                      int32_t nodes[DUET_BASELINE_NODE_KINDS])
{
    if (b == NULL || wl == NULL || nodes == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "baseline: coll_path needs a context, a workload and a result");
    if (slot != DUET_BASELINE_SLOT_ZERO_CTA)
        return duet__error(DUET_ERR_UNSUPPORTED,
                           "baseline: coll_path probes the zero-CTA communicator only (slot %d runs SM kernels)", slot);
    for (int i = 0; i < DUET_BASELINE_NODE_KINDS; i++)
        nodes[i] = 0;
    hipStream_t s = NULL;
    hipGraph_t g = NULL;
    duet_status_t st = DUET_OK, cap = DUET_OK;
    HIP_CHECK(hipSetDevice(b->device), st, out);
    HIP_CHECK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), st, out);
    /* Relaxed: the library may allocate or query while it enqueues. The zero-CTA slot runs between
     * its own symmetric buffers, so none are passed. */
    HIP_CHECK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed), st, out);
    cap = duet_baseline_coll(b, slot, wl, NULL, NULL, s);
    HIP_CHECK(hipStreamEndCapture(s, &g), st, out);
    DUET_CHECK_GOTO(cap, st, out);
    DUET_CHECK_GOTO(baseline_count_nodes(g, 4, nodes), st, out);
out:
    if (g)
        (void)hipGraphDestroy(g);
    if (s)
        (void)hipStreamDestroy(s);
    return st;
}

duet_status_t duet_baseline_create(MPI_Comm comm, int device, const duet_baseline_params_t *params,
                                   duet_baseline_h *b_p)
{
    duet_baseline_params_t p = params ? *params : duet_baseline_default_params();
    if (p.n_capped < 0 || p.n_capped > DUET_BASELINE_MAX_COMMS - 1)
        return duet__error(DUET_ERR_INVALID_ARG, "baseline: at most %d capped communicators",
                           DUET_BASELINE_MAX_COMMS - 1);
    duet_baseline_h b = (duet_baseline_h)calloc(1, sizeof(*b));
    if (b == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "baseline: cannot allocate a context");
    duet_status_t st = DUET_OK;
    b->device = device;
    MPI_CHECK(MPI_Comm_rank(comm, &b->rank), st, fail);
    MPI_CHECK(MPI_Comm_size(comm, &b->world), st, fail);
    b->workspace_bytes = p.workspace_bytes;
    HIP_CHECK(hipSetDevice(device), st, fail);
    HIP_CHECK(hipMalloc(&b->workspace, b->workspace_bytes), st, fail);
    HIP_CHECK(hipStreamCreateWithFlags(&b->side, hipStreamNonBlocking), st, fail);
    HIP_CHECK(hipEventCreateWithFlags(&b->ev_fork, hipEventDisableTiming), st, fail);
    HIP_CHECK(hipEventCreateWithFlags(&b->ev_join, hipEventDisableTiming), st, fail);
    BLAS_CHECK(hipblasLtCreate(&b->lt), st, fail);
    /* One communicator per CTA cap, all from ids made on rank 0 and broadcast over MPI. */
    for (int32_t i = 0; i <= p.n_capped; i++) {
        ncclUniqueId id;
        if (b->rank == 0)
            NCCL_CHECK(ncclGetUniqueId(&id), st, fail);
        MPI_CHECK(MPI_Bcast(&id, (int)sizeof(id), MPI_BYTE, 0, comm), st, fail);
        ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
        if (i > 0)
            cfg.maxCTAs = p.capped_ctas[i - 1];
        NCCL_CHECK(ncclCommInitRankConfig(&b->comms[i], b->world, id, b->rank, &cfg), st, fail);
        b->n_comms++;
    }
    DUET_CHECK_GOTO(baseline_zero_create(b, comm), st, fail);
    {
        int nccl = 0;
        ncclGetVersion(&nccl);
        snprintf(b->describe, sizeof(b->describe), "%s %zu + %s %d.%d.%d", DUET_BLASLT_NAME,
                 (size_t)hipblasLtGetVersion(), DUET_CCL_NAME, nccl / 10000, nccl / 100 % 100, nccl % 100);
    }
    *b_p = b;
    return DUET_OK;
fail:
    duet__error_prefix("baseline");
    duet_baseline_destroy(b);
    return st;
}

void duet_baseline_destroy(duet_baseline_h b)
{
    if (b == NULL)
        return;
    for (int32_t i = 0; i < b->n_comms; i++)
        ncclCommDestroy(b->comms[i]);
#if DUET_CCL_HAS_ZERO_CTA
    if (b->have_zero) {
        baseline_zero_release(b);
        ncclCommDestroy(b->zero_comm);
    }
#endif
    if (b->lt)
        hipblasLtDestroy(b->lt);
    if (b->workspace)
        (void)hipFree(b->workspace);
    if (b->ev_join)
        (void)hipEventDestroy(b->ev_join);
    if (b->ev_fork)
        (void)hipEventDestroy(b->ev_fork);
    if (b->side)
        (void)hipStreamDestroy(b->side);
    free(b);
}

const char *duet_baseline_describe(duet_baseline_h b)
{
    return b ? b->describe : "";
}
const char *duet_baseline_last_error(duet_baseline_h b)
{
    return b ? b->err : "";
}

/*
 * Row-major C[m,n] = A[m,k] * B[n,k]^T is, in the column-major terms of BLASLt, C^T (n x m) =
 * B (n x k, stored as its transpose, k x n with ld k) times A^T (k x m, ld k): op(A) = T on the
 * B buffer, op(B) = N on the A buffer, the "TN" layout these libraries are fastest at.
 */
static duet_status_t baseline_algo(duet_baseline_h b, const duet_workload_t *wl, int32_t sm_target,
                                   hipblasLtMatmulDesc_t desc, hipblasLtMatrixLayout_t la, hipblasLtMatrixLayout_t lb,
                                   hipblasLtMatrixLayout_t lc, hipblasLtMatmulAlgo_t *algo_p)
{
    for (int i = 0; i < BASELINE_CACHE; i++) {
        baseline_algo_t *c = &b->cache[i];
        if (c->valid && c->m == wl->m && c->n == wl->n && c->k == wl->k && c->dtype == wl->dtype &&
            c->sm_target == sm_target) {
            *algo_p = c->algo;
            return DUET_OK;
        }
    }
    duet_status_t st = DUET_OK;
    hipblasLtMatmulPreference_t pref;
    BLAS_CHECK(hipblasLtMatmulPreferenceCreate(&pref), st, out);
    {
        size_t ws = b->workspace_bytes;
        hipblasLtMatmulPreferenceSetAttribute(pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
        hipblasLtMatmulHeuristicResult_t res;
        int got = 0;
        hipblasStatus_t s = hipblasLtMatmulAlgoGetHeuristic(b->lt, desc, la, lb, lc, lc, pref, 1, &res, &got);
        hipblasLtMatmulPreferenceDestroy(pref);
        if (s != HIPBLAS_STATUS_SUCCESS || got < 1) {
            st = duet__error(DUET_ERR_UNSUPPORTED, "baseline: no " DUET_BLASLT_NAME " algorithm for %lldx%lldx%lld",
                             (long long)wl->m, (long long)wl->n, (long long)wl->k);
            goto out;
        }
        baseline_algo_t *c = &b->cache[b->cache_next];
        b->cache_next = (b->cache_next + 1) % BASELINE_CACHE;
        c->m = wl->m;
        c->n = wl->n;
        c->k = wl->k;
        c->dtype = wl->dtype;
        c->sm_target = sm_target;
        c->algo = res.algo;
        c->valid = 1;
        *algo_p = res.algo;
    }
out:
    return st;
}

#if !defined(DUET_GPU_AMD)
/* The numbers an enum id of cublaslt_ids.h stands for; 0, 0 where the id is not in the table
 * (UNDEFINED, AUTO, or an id newer than the header the table was made from). */
static void baseline_lt_decode(const unsigned short (*table)[3], size_t n, unsigned id, int32_t *a_p, int32_t *b_p)
{
    *a_p = *b_p = 0;
    for (size_t i = 0; i < n; i++)
        if (table[i][0] == id) {
            *a_p = table[i][1];
            *b_p = table[i][2];
            return;
        }
}
#endif

/*
 * What the library's algorithm is, in the corpus's terms (duet_vendor_kernel_t). cuBLASLt names
 * tiles and clusters in its column-major view, D = C^T (N rows, M columns: baseline_algo's
 * comment), so its "rows" run along our N and its "columns" along our M.
 */
static void baseline_kernel_of(const hipblasLtMatmulAlgo_t *algo, duet_vendor_kernel_t *k)
{
    memset(k, 0, sizeof(*k));
#if defined(DUET_GPU_AMD)
    (void)algo;
#else
    int32_t id = -1, split = 1;
    uint32_t tile = 0, stages = 0, swizzle = 0;
    uint16_t cluster = 0;
    size_t w = 0;
    /* Each attribute is read on its own: one the library does not report stays at its default. */
    (void)cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof(stages), &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof(split), &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof(swizzle), &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof(cluster),
                                               &w);
    k->valid = 1;
    k->algo = id;
    baseline_lt_decode(duet__lt_tiles, sizeof(duet__lt_tiles) / sizeof(duet__lt_tiles[0]), tile, &k->tile_n,
                       &k->tile_m);
    baseline_lt_decode(duet__lt_stages, sizeof(duet__lt_stages) / sizeof(duet__lt_stages[0]), stages, &k->stage_k,
                       &k->stages);
    baseline_lt_decode(duet__lt_clusters, sizeof(duet__lt_clusters) / sizeof(duet__lt_clusters[0]), cluster,
                       &k->cluster_n, &k->cluster_m);
    k->split_k = split > 0 ? split : 1;
    k->swizzle = (int32_t)swizzle;
#endif
}

duet_status_t duet_baseline_last_kernel(duet_baseline_h b, duet_vendor_kernel_t *kernel_p)
{
    if (b == NULL || !b->have_last)
        return duet__error(DUET_ERR_INVALID_ARG, "baseline: no " DUET_BLASLT_NAME " GEMM has run on this context");
    *kernel_p = b->last;
    return DUET_OK;
}

duet_status_t duet_baseline_gemm(duet_baseline_h b, const duet_workload_t *wl, const void *a, const void *bm, void *c,
                                 int32_t sm_target, void *stream)
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
        hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_TRANSA, &opT, sizeof(opT)) !=
            HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_TRANSB, &opN, sizeof(opN)) !=
            HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatrixLayoutCreate(&la, t, (uint64_t)wl->k, (uint64_t)wl->n, (int64_t)wl->k) !=
            HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatrixLayoutCreate(&lb, t, (uint64_t)wl->k, (uint64_t)wl->m, (int64_t)wl->k) !=
            HIPBLAS_STATUS_SUCCESS ||
        hipblasLtMatrixLayoutCreate(&lc, t, (uint64_t)wl->n, (uint64_t)wl->m, (int64_t)wl->n) !=
            HIPBLAS_STATUS_SUCCESS) {
        st = duet__error(DUET_ERR_BACKEND, "baseline: cannot describe the GEMM to " DUET_BLASLT_NAME);
        goto out;
    }
#if DUET_BLASLT_HAS_SM_TARGET
    if (sm_target > 0 && hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target,
                                                         sizeof(sm_target)) != HIPBLAS_STATUS_SUCCESS) {
        st = duet__error(DUET_ERR_BACKEND, "baseline: cannot set the SM count target %d", sm_target);
        goto out;
    }
#endif
    DUET_CHECK_GOTO(baseline_algo(b, wl, sm_target, desc, la, lb, lc, &algo), st, out);
    baseline_kernel_of(&algo, &b->last);
    b->have_last = 1;
    BLAS_CHECK(hipblasLtMatmul(b->lt, desc, &alpha, bm, la, a, lb, &beta, c, lc, c, lc, &algo, b->workspace,
                               b->workspace_bytes, (hipStream_t)stream),
               st, out);
out:
    if (lc)
        hipblasLtMatrixLayoutDestroy(lc);
    if (lb)
        hipblasLtMatrixLayoutDestroy(lb);
    if (la)
        hipblasLtMatrixLayoutDestroy(la);
    if (desc)
        hipblasLtMatmulDescDestroy(desc);
    return baseline_keep(b, st);
}

duet_status_t duet_baseline_coll(duet_baseline_h b, int32_t slot, const duet_workload_t *wl, const void *src, void *dst,
                                 void *stream)
{
    if (slot == DUET_BASELINE_SLOT_ZERO_CTA)
        return baseline_keep(b, wl->coll == DUET_COLL_NONE ? DUET_OK : baseline_coll_zero(b, wl, (hipStream_t)stream));
    if (slot < 0 || slot >= b->n_comms)
        return baseline_keep(
            b, duet__error(DUET_ERR_INVALID_ARG, "baseline: communicator slot %d of %d", slot, b->n_comms));
    duet_status_t st = DUET_OK;
    ncclComm_t comm = b->comms[slot];
    hipStream_t s = (hipStream_t)stream;
    ncclDataType_t t = baseline_nccl_type(wl->dtype);
    size_t n = (size_t)wl->mc * (size_t)wl->nc, eb = 2;
    switch (wl->coll) {
    case DUET_COLL_NONE:
        break;
    case DUET_COLL_ALL_GATHER:
        NCCL_CHECK(ncclAllGather(src, dst, n, t, comm, s), st, out);
        break;
    case DUET_COLL_ALL_REDUCE:
        NCCL_CHECK(ncclAllReduce(src, dst, n, t, ncclSum, comm, s), st, out);
        break;
    case DUET_COLL_REDUCE_SCATTER:
        NCCL_CHECK(ncclReduceScatter(src, dst, n / (size_t)wl->world, t, ncclSum, comm, s), st, out);
        break;
    case DUET_COLL_ALL_TO_ALL: {
        /* Row block p of src goes to row block `rank` of peer p: grouped point-to-point, which
         * both NCCL and RCCL have (a native all-to-all is not in every version). */
        size_t chunk = n / (size_t)wl->world;
        NCCL_CHECK(ncclGroupStart(), st, out);
        for (int p = 0; p < b->world; p++) {
            NCCL_CHECK(ncclSend((const char *)src + (size_t)p * chunk * eb, chunk, t, p, comm, s), st, group);
            NCCL_CHECK(ncclRecv((char *)dst + (size_t)p * chunk * eb, chunk, t, p, comm, s), st, group);
        }
    group:
        /* The group is closed on failure too, so that the communicator is usable afterwards. */
        if (st < 0)
            ncclGroupEnd();
        else
            NCCL_CHECK(ncclGroupEnd(), st, out);
        break;
    }
    case DUET_COLL_BROADCAST:
        NCCL_CHECK(ncclBroadcast(src, dst, n, t, wl->root, comm, s), st, out);
        break;
    default:
        st = duet__error(DUET_ERR_INVALID_ARG, "baseline: unknown collective %d", (int)wl->coll);
        break;
    }
out:
    return baseline_keep(b, st);
}

duet_status_t duet_vendor_run(duet_baseline_h b, struct duet_ctx *ctx, const struct duet_op *op, void *stream)
{
    duet_status_t st = DUET_OK;
    hipStream_t s = (hipStream_t)stream;
    duet_op_t comm;
    int32_t sm_target;
    if (b == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_vendor_run: no baseline context (duet_baseline_create())");
    if (op->cfg.mode != DUET_MODE_VENDOR) {
        st = duet__error(DUET_ERR_INVALID_ARG, "duet_vendor_run: the operation's mode is %s, not vendor",
                         duet_mode_name(op->cfg.mode));
        goto out;
    }
    DUET_CHECK_GOTO(duet_config_validate(&op->cfg, &op->wl, duet_ctx_hw(ctx)), st, out);
    /* The collective alone, as a fused duet operation whose CTAs all serve the comm queue. */
    comm = *op;
    comm.wl.m = comm.wl.n = comm.wl.k = 0;
    comm.a = comm.b = NULL;
    comm.c = NULL;
    comm.cfg = duet_config_default(duet_ctx_hw(ctx), DUET_MODE_FUSED);
    comm.cfg.num_wgs = comm.cfg.comm_wgs = op->cfg.comm_wgs;
    comm.cfg.gemm_wgs = 0;
    comm.cfg.cm = op->cfg.cm;
    comm.cfg.cn = op->cfg.cn;
    if (op->wl.coll != DUET_COLL_NONE) {
        HIP_CHECK(hipEventRecord(b->ev_fork, s), st, out);
        HIP_CHECK(hipStreamWaitEvent(b->side, b->ev_fork, 0), st, out);
        DUET_CHECK_GOTO(duet_run(ctx, &comm, b->side), st, out);
    }
    /* Every SM is the library's own plan, without a target: the GEMM as duet bench times it alone. */
    sm_target = op->cfg.gemm_wgs >= duet_ctx_hw(ctx)->n_sms ? 0 : op->cfg.gemm_wgs;
    if (op->wl.m > 0)
        DUET_CHECK_GOTO(duet_baseline_gemm(b, &op->wl, op->a, op->b, op->c, sm_target, stream), st, out);
    if (op->wl.coll != DUET_COLL_NONE) {
        HIP_CHECK(hipEventRecord(b->ev_join, b->side), st, out);
        HIP_CHECK(hipStreamWaitEvent(s, b->ev_join, 0), st, out);
    }
out:
    return baseline_keep(b, st);
}
