/*
 * TMA tensor maps for the Hopper GEMM tile (backend/gemm_hopper.h). The descriptors are encoded
 * on the host for every launch (about a microsecond each) because they hold A's and B's
 * addresses and shapes (and C's, for the epilogue's stores). cuTensorMapEncodeTiled is a driver API function: it is
 * looked up through the runtime, so the backend links libcudart only, like every other CUDA program we ship.
 */
#include <stddef.h>
#include <string.h>

#include "backend/internal.h"

#if defined(DUET_GPU_NVIDIA)
typedef CUresult (*duet__encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                    const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                    CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

/* NULL until the first lookup; a lookup that fails is retried (it costs microseconds). */
static duet__encode_fn duet__encode;

static duet__encode_fn duet__encode_lookup(void)
{
    if (duet__encode == NULL) {
        void *fn = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) ==
                cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            duet__encode = (duet__encode_fn)fn;
    }
    return duet__encode;
}

/*
 * A row-major matrix X[rows][k] of fp16/bf16: boxes of 64 elements of a row (128 bytes, the
 * swizzle span) by box_rows rows. Loads: out-of-range elements of a box read as zeros, which is
 * how the tile handles M, N and K edges; stores (C, k = N): they are not written.
 */
static int duet__tma_encode(CUtensorMap *map, const void *x, int64_t rows, int64_t k, int box_rows, int32_t dtype)
{
    duet__encode_fn enc = duet__encode_lookup();
    if (enc == NULL)
        return -1;
    cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows};
    cuuint64_t strides[1] = {(cuuint64_t)k * 2}; /* bytes between rows; a multiple of 16 */
    cuuint32_t box[2] = {64, (cuuint32_t)box_rows};
    cuuint32_t estr[2] = {1, 1};
    CUtensorMapDataType t =
        dtype == DUET_DTYPE_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    CUresult r = enc(map, t, 2, (void *)x, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? 0 : -1;
}

void duet__tma_prepare(duet__kparams_t *kp, int pass_rows, int bn)
{
    kp->tma = 0;
    kp->c_tma = 0;
    /* TMA wants 16-byte aligned bases and row strides (K % 8 == 0): exactly ab_vec. */
    if (!kp->ab_vec || kp->gemm.tiles <= 0 || kp->gemm.m <= 0 || kp->gemm.n <= 0 || kp->gemm.k <= 0)
        return;
    if (duet__tma_encode(&kp->tma_a, kp->a, kp->gemm.m, kp->gemm.k, pass_rows, kp->dtype) != 0 ||
        duet__tma_encode(&kp->tma_b, kp->b, kp->gemm.n, kp->gemm.k, bn, kp->dtype) != 0)
        return;
    kp->tma = 1;
    /* The same for C (N % 8 == 0, 16-byte aligned: c_vec16); else the epilogue's own stores. */
    if (kp->c_vec16 && duet__tma_encode(&kp->tma_c, kp->c, kp->gemm.m, kp->gemm.n, pass_rows, kp->dtype) == 0)
        kp->c_tma = 1;
}
#else
void duet__tma_prepare(duet__kparams_t *kp, int pass_rows, int bn)
{
    (void)pass_rows, (void)bn;
    kp->tma = 0;
    kp->c_tma = 0;
}
#endif
