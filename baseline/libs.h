/*
 * The names of the libraries the baselines run on, spelled once. The source uses hipBLASLt and
 * RCCL names (RCCL keeps NCCL's); under nvcc they map to cuBLASLt and NCCL here, the same way
 * backend/gpu.h maps the runtime.
 */
#ifndef DUET_BASELINE_LIBS_H
#define DUET_BASELINE_LIBS_H

#include "backend/gpu.h"

#if defined(DUET_GPU_AMD)
#include <hipblaslt/hipblaslt.h>
#include <rccl/rccl.h>
#define DUET_BLASLT_NAME "hipBLASLt"
#define DUET_CCL_NAME "RCCL"
/* hipBLASLt has no SM-count target (pytorch issue #149280). */
#define DUET_BLASLT_HAS_SM_TARGET 0
#else
#include <cublasLt.h>
#include <nccl.h>
#define DUET_BLASLT_NAME "cuBLASLt"
#define DUET_CCL_NAME "NCCL"
#define DUET_BLASLT_HAS_SM_TARGET 1
#define HIPBLASLT_MATMUL_DESC_SM_COUNT_TARGET CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET

#define hipblasLtHandle_t cublasLtHandle_t
#define hipblasLtCreate cublasLtCreate
#define hipblasLtDestroy cublasLtDestroy
#define hipblasLtMatmulDesc_t cublasLtMatmulDesc_t
#define hipblasLtMatmulDescCreate cublasLtMatmulDescCreate
#define hipblasLtMatmulDescDestroy cublasLtMatmulDescDestroy
#define hipblasLtMatmulDescSetAttribute cublasLtMatmulDescSetAttribute
#define hipblasLtMatrixLayout_t cublasLtMatrixLayout_t
#define hipblasLtMatrixLayoutCreate cublasLtMatrixLayoutCreate
#define hipblasLtMatrixLayoutDestroy cublasLtMatrixLayoutDestroy
#define hipblasLtMatmulPreference_t cublasLtMatmulPreference_t
#define hipblasLtMatmulPreferenceCreate cublasLtMatmulPreferenceCreate
#define hipblasLtMatmulPreferenceDestroy cublasLtMatmulPreferenceDestroy
#define hipblasLtMatmulPreferenceSetAttribute cublasLtMatmulPreferenceSetAttribute
#define hipblasLtMatmulHeuristicResult_t cublasLtMatmulHeuristicResult_t
#define hipblasLtMatmulAlgoGetHeuristic cublasLtMatmulAlgoGetHeuristic
#define hipblasLtMatmulAlgo_t cublasLtMatmulAlgo_t
#define hipblasLtMatmul cublasLtMatmul
#define hipblasLtGetVersion cublasLtGetVersion
#define HIPBLASLT_MATMUL_DESC_TRANSA CUBLASLT_MATMUL_DESC_TRANSA
#define HIPBLASLT_MATMUL_DESC_TRANSB CUBLASLT_MATMUL_DESC_TRANSB
#define HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES
#define hipblasStatus_t cublasStatus_t
#define HIPBLAS_STATUS_SUCCESS CUBLAS_STATUS_SUCCESS
#define hipblasOperation_t cublasOperation_t
#define HIPBLAS_OP_T CUBLAS_OP_T
#define HIPBLAS_OP_N CUBLAS_OP_N
#define hipblasComputeType_t cublasComputeType_t
#define HIPBLAS_COMPUTE_32F CUBLAS_COMPUTE_32F
#define hipDataType cudaDataType_t
#define HIP_R_16F CUDA_R_16F
#define HIP_R_16BF CUDA_R_16BF
#define HIP_R_32F CUDA_R_32F
#endif

/*
 * The zero-CTA policy (ncclConfig_t.CTAPolicy = NCCL_CTA_POLICY_ZERO): NCCL 2.28.3 and RCCL 2.28.3
 * run all_gather and all_to_all on the copy engines where both buffers are in symmetric windows
 * (model/emit_copy.c has the sources). Compiled in only against a header that has it; the
 * library loaded must be 2.28 or later as well (checked when the context is created).
 */
#if defined(NCCL_CTA_POLICY_ZERO) && defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
#define DUET_CCL_HAS_ZERO_CTA 1
#else
#define DUET_CCL_HAS_ZERO_CTA 0
#endif

#endif /* DUET_BASELINE_LIBS_H */
