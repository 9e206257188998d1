/*
 * duet baselines: what a user runs today, timed beside duet in the same process and run. The
 * GEMM in the vendor's BLASLt library and the collective in its collective library: cuBLASLt and
 * NCCL on NVIDIA, hipBLASLt and RCCL on AMD. Also vendor mode (DUET_MODE_VENDOR): the library's
 * GEMM beside duet's comm kernel.
 *
 * Needs a GPU build (make gpu), MPI, and the two libraries at link time (-lcublasLt -lnccl, or
 * -lhipblaslt -lrccl).
 */
#ifndef DUET_BASELINE_H
#define DUET_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "duet/corpus.h"
#include "duet/status.h"
#include "duet/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct duet_baseline *duet_baseline_h;

#define DUET_BASELINE_MAX_COMMS 4

/** Parameters of the baseline context. Start from duet_baseline_default_params(). */
typedef struct duet_baseline_params {
    /* Extra collective communicators with a CTA cap (NCCL_MAX_CTAS through ncclConfig_t.maxCTAs),
     * for the "GEMM on fewer SMs, collective on the rest" baselines. Slot 0 is always the
     * uncapped communicator; slot i (1..n_capped) is capped at capped_ctas[i-1]. */
    int32_t n_capped;
    int32_t capped_ctas[DUET_BASELINE_MAX_COMMS - 1];
    size_t workspace_bytes; /* GEMM workspace; default 32 MiB */
} duet_baseline_params_t;

duet_baseline_params_t duet_baseline_default_params(void);

/**
 * Create the baseline context over `comm` (collective): a BLASLt handle and workspace on
 * `device`, and the collective communicators (unique id broadcast over MPI). *b_p is written
 * only on success.
 */
duet_status_t duet_baseline_create(MPI_Comm comm, int device, const duet_baseline_params_t *params,
                                   duet_baseline_h *b_p);
/** Destroy (collective for the communicators). NULL is a no-op. */
void duet_baseline_destroy(duet_baseline_h b);
/** "cuBLASLt 13.0 + NCCL 2.28.3" or the AMD equivalent; "" for NULL. */
const char *duet_baseline_describe(duet_baseline_h b);
/** Last error text of the baseline context. */
const char *duet_baseline_last_error(duet_baseline_h b);

/**
 * C[m,n] = A[m,k] * B[n,k]^T of wl through BLASLt on `stream`. sm_target > 0 asks the library to
 * plan for that many SMs (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET; hipBLASLt has no such knob and
 * ignores it). Heuristic results are cached per (shape, dtype, sm_target).
 */
duet_status_t duet_baseline_gemm(duet_baseline_h b, const duet_workload_t *wl, const void *a, const void *bm, void *c,
                                 int32_t sm_target, void *stream);

/**
 * The kernel the library chose for the last GEMM duet_baseline_gemm() ran (also inside
 * duet_vendor_run()): on NVIDIA cuBLASLt's algorithm, tile, stages, split-K, swizzle and cluster
 * shape; on AMD nothing is recorded yet (valid 0: hipBLASLt names its solution only through its
 * C++ extension API). @return DUET_ERR_INVALID_ARG when no GEMM ran on this context.
 */
duet_status_t duet_baseline_last_kernel(duet_baseline_h b, duet_vendor_kernel_t *kernel_p);

/**
 * The collective of wl through NCCL/RCCL on `stream`, on communicator slot `slot` (0: uncapped).
 * Buffers as duet_op_t: src [mc, nc], dst [duet_op_dst_rows(wl), nc], in plain device memory.
 */
duet_status_t duet_baseline_coll(duet_baseline_h b, int32_t slot, const duet_workload_t *wl, const void *src, void *dst,
                                 void *stream);

/**
 * The communicator slot of the zero-CTA policy (ncclConfig_t.CTAPolicy = NCCL_CTA_POLICY_ZERO) for
 * duet_baseline_coll() and the measurer's baseline jobs: all_gather (ncclAllGather) and all_to_all
 * (ncclAlltoAll) between buffers the context allocates with ncclMemAlloc and registers as symmetric
 * windows (the caller's src and dst are not used: the figure is the time, not the data), which is
 * what lets the library run them on the copy engines. Only where duet_baseline_has_zero_cta().
 */
#define DUET_BASELINE_SLOT_ZERO_CTA 100
/**
 * 1 where the context has the zero-CTA communicator: the library was compiled against and loaded
 * at NCCL (or RCCL) 2.28 or later on every rank; 0 otherwise (and for NULL).
 */
int duet_baseline_has_zero_cta(duet_baseline_h b);
/** 1 for the collectives the zero-CTA slot runs (all_gather, all_to_all), else 0. */
int duet_baseline_zero_cta_runs(int32_t coll);

/** The kinds of node duet_baseline_coll_path() counts, the indices of its `nodes`. */
enum {
    DUET_BASELINE_NODE_KERNEL = 0, /* kernel nodes: the collective runs on SMs */
    DUET_BASELINE_NODE_COPY = 1,   /* memcpy nodes: copies, which the copy engines run between GPUs */
    DUET_BASELINE_NODE_OTHER = 2,  /* every other node (memory operations, events, empty nodes) */
    DUET_BASELINE_NODE_KINDS = 3
};
/**
 * Which path the library takes for `wl`'s collective on the zero-CTA communicator (`slot`
 * DUET_BASELINE_SLOT_ZERO_CTA; the other communicators run SM kernels, and are refused with
 * DUET_ERR_UNSUPPORTED): the collective is captured into a graph on a side stream, never launched,
 * and the graph's nodes counted by kind (DUET_BASELINE_NODE_*), child graphs included. No kernel
 * node and at least one copy means the copy-engine path; a kernel node means the library fell back
 * to SM kernels. Collective: every rank calls it. The CUDA driver may still run a copy within one
 * GPU (W = 1, or the local block) on SMs; the count says what the library asked for.
 */
duet_status_t duet_baseline_coll_path(duet_baseline_h b, int32_t slot, const duet_workload_t *wl,
                                      int32_t nodes[DUET_BASELINE_NODE_KINDS]);
/**
 * Vendor mode (DUET_MODE_VENDOR): the GEMM of `op` in BLASLt planned for cfg.gemm_wgs SMs on
 * `stream`, and the collective by duet's comm kernel on cfg.comm_wgs CTAs on a second stream
 * that forks from and joins back into `stream` (collective, like duet_run()). Device-side errors
 * of the comm part are reported by duet_ctx_sync(). The name is the mode's (duet_run() runs the
 * other two modes and refuses this one).
 */
struct duet_ctx;
struct duet_op;
duet_status_t duet_vendor_run(duet_baseline_h b, struct duet_ctx *ctx, const struct duet_op *op, void *stream);

#ifdef __cplusplus
}
#endif
#endif /* DUET_BASELINE_H */
