/*
 * duet: the value types shared by every layer and by the GPU kernels.
 *
 * Plain C with fixed-width integers only, so that the backend's HIP/CUDA code can include this
 * header and pass these structs to kernels by value.
 */
#ifndef DUET_TYPES_H
#define DUET_TYPES_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The collective that runs beside the GEMM. NONE means a GEMM-only workload. */
typedef enum {
    DUET_COLL_NONE = 0,
    DUET_COLL_ALL_GATHER = 1,
    DUET_COLL_ALL_REDUCE = 2,
    DUET_COLL_REDUCE_SCATTER = 3,
    DUET_COLL_ALL_TO_ALL = 4,
    DUET_COLL_BROADCAST = 5,
    DUET_COLL_COUNT
} duet_collective_t;

/** Element type of A, B, C and of the collective's tensors. Accumulation is always fp32. */
typedef enum { DUET_DTYPE_FP16 = 0, DUET_DTYPE_BF16 = 1, DUET_DTYPE_COUNT } duet_dtype_t;

/**
 * How the two jobs share the GPU.
 * FUSED: one persistent grid of num_wgs CTAs and two device-wide queues; a CTA drains its home
 *        queue, then steals from the other one.
 * CONCURRENT: two persistent kernels on two streams (gemm_wgs and comm_wgs CTAs), no stealing;
 *        the hardware block scheduler places them.
 * VENDOR: the GEMM runs in the vendor library (cuBLASLt / hipBLASLt) planned for gemm_wgs SMs
 *        while duet's comm kernel runs on comm_wgs CTAs on a second stream: the fallback where
 *        the vendor GEMM beats duet's tile. The backend's duet_run() does not execute it; the
 *        baseline module does (include/duet/baseline.h, duet_vendor_run()).
 * COPY: duet's GEMM kernel on gemm_wgs SMs (every SM by default) while the collective's data
 *        moves as whole-block copies on the copy engines (no SM), spread over comm_wgs copy
 *        streams. It moves bytes only: all_gather, all_to_all and broadcast (and a GEMM alone);
 *        the configuration rules refuse reduce_scatter and all_reduce.
 */
typedef enum {
    DUET_MODE_FUSED = 0,
    DUET_MODE_CONCURRENT = 1,
    DUET_MODE_VENDOR = 2,
    DUET_MODE_COPY = 3,
    DUET_MODE_COUNT
} duet_mode_t;

/** The two work queues. The numbering is also the index of the queue counters on the device. */
typedef enum { DUET_QUEUE_GEMM = 0, DUET_QUEUE_COMM = 1, DUET_QUEUE_COUNT } duet_queue_t;

/**
 * The kernels of an operation, as its plan lays them out (duet_plan_t.kernel): the kernel that
 * runs the GEMM (duet's persistent kernel with the GEMM tile, or in vendor mode the vendor
 * library's GEMM) and duet's comm kernel, which has no GEMM tile. Either may be absent.
 */
typedef enum { DUET_KERNEL_GEMM = 0, DUET_KERNEL_COMM = 1, DUET_KERNEL_COUNT } duet_kernel_t;

/** What the CTAs of one kernel do (duet_kernel_geom_t.role). */
typedef enum {
    DUET_ROLE_FUSED = 0,  /* duet's GEMM-tile kernel draining both queues: home queue, then the other */
    DUET_ROLE_GEMM = 1,   /* duet's GEMM-tile kernel draining the GEMM queue only */
    DUET_ROLE_COMM = 2,   /* duet's comm kernel draining the comm queue only */
    DUET_ROLE_VENDOR = 3, /* the vendor library's GEMM: its own static schedule, no queue */
    DUET_ROLE_COPY = 4,   /* the copy engines: grid is the copy streams (no CTA, no SM); copy i on stream i % grid */
} duet_role_t;

/**
 * The launch geometry of one kernel of a plan: decided once by the plan (duet_plan_build()), read
 * by the simulator and, copied into the kernel's parameters, by the device code.
 */
typedef struct duet_kernel_geom {
    int32_t role;      /* duet_role_t */
    int32_t grid;      /* CTAs launched; 0: the kernel does not run. Vendor: the SMs its GEMM is planned for */
    int32_t cta_base;  /* the number of the kernel's CTA 0 in timelines and in the simulator */
    int32_t gemm_home; /* CTAs [0, gemm_home) of the kernel start on the GEMM queue, the others on the comm queue */
    int32_t steal;     /* 1: a CTA whose home queue is drained moves on to the other queue, then exits */
} duet_kernel_geom_t;

/**
 * The workload: C[m,n] = A[m,k] * B[n,k]^T and, independently, a collective on a per-rank
 * tensor src[mc,nc] over `world` ranks. m = n = k = 0 means "no GEMM"; coll = NONE means "no
 * collective" (then mc = nc = 0).
 */
typedef struct duet_workload {
    int64_t m, n, k; /* GEMM extents, elements */
    int64_t mc, nc;  /* collective's per-rank source tensor, elements */
    int32_t dtype;   /* duet_dtype_t */
    int32_t coll;    /* duet_collective_t */
    int32_t world;   /* ranks taking part, >= 1 */
    int32_t root;    /* broadcast root rank, 0 <= root < world */
} duet_workload_t;

/** A GEMM tile: BM x BN outputs per CTA, BK elements of K per pipeline step. */
typedef struct duet_gemm_tile {
    int32_t bm, bn, bk;
} duet_gemm_tile_t;

/**
 * One configuration of the two jobs on one GPU. See duet_config_default() for the defaults and
 * duet_config_validate() for the rules.
 */
typedef struct duet_config {
    int32_t mode;          /* duet_mode_t */
    int32_t num_wgs;       /* fused: grid size (CTAs); concurrent: ignored */
    int32_t gemm_wgs;      /* fused: CTAs whose home is the GEMM queue; concurrent: GEMM grid */
    int32_t comm_wgs;      /* concurrent: comm kernel grid; fused: num_wgs - gemm_wgs; copy: copy streams */
    duet_gemm_tile_t tile; /* GEMM tile */
    int32_t cm, cn;        /* comm tile, elements (rows x columns) */
    int32_t group_m;       /* GEMM tile swizzle: tiles walk group_m tile-rows before moving on */
    int32_t split_k;       /* GEMM K split: each C tile's K range in split_k parts, summed in fp32
                            * by the part that finishes last (1 = none; 0 is read as 1) */
    int32_t stream_k;      /* 1: stream-K: the plan runs the GEMM's full waves data-parallel and
                            * shares the last wave's K steps among the CTAs of the GEMM's budget
                            * as K parts (duet_plan_stream_k_choose); needs split_k 1. 0: off */
} duet_config_t;

#ifdef __cplusplus
}
#endif
#endif /* DUET_TYPES_H */
