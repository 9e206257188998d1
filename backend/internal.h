/*
 * Internal declarations of the backend (not installed): the kernels' launch parameters, the
 * device control block, the host-mapped error record, the context, and the check macros.
 *
 * The structs below are shared by host and device code, so they hold fixed-width integers and
 * raw pointers only.
 */
#ifndef DUET_BACKEND_INTERNAL_H
#define DUET_BACKEND_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "backend/gpu.h"
#include "duet/op.h"
#include "duet/plan_map.h"
#include "duet/types.h"

/* ------------------------------------------------------------------------------------------ */
/* Symmetric-heap control area                                                                 */
/* ------------------------------------------------------------------------------------------ */

/*
 * The first DUET__HEAP_RESERVED bytes of every rank's heap hold the cross-rank flags, as
 * 32-bit words. Rank p writes the operation counter (epoch) of the operation it is in into word
 * ARRIVE + p of every rank's heap when it enters, and into DEPART + p when it has finished all
 * its remote accesses. Each rank therefore polls only its own memory. Epochs only grow, so the
 * flags are never reset: a wait is for "word >= epoch".
 */
#define DUET__FLAG_ARRIVE 0
#define DUET__FLAG_DEPART 64 /* words: the two arrays sit on different 256-byte lines */
#define DUET__HEAP_RESERVED 4096

/**
 * Device-local control block of an operation. A context has two, used by operations of odd and
 * even epoch: CTA 0 of an operation's kernels zeroes the other one for the next operation (which
 * starts only after this one has ended, run.hip), so no memset (one more launch on the stream)
 * sits in front of every operation.
 */
typedef struct duet__ctl {
    unsigned long long queue[DUET_QUEUE_COUNT]; /* next position of each queue (dequeue counters) */
    uint32_t done;                              /* CTAs of the comm-bearing kernel that have finished */
    uint32_t abort;                             /* 1: a wait expired; remaining remote work is skipped */
    uint32_t err_claim;                         /* 1: a CTA owns the error record */
    unsigned long long trace_n;                 /* tiles recorded in the trace buffer (duet_ctx_trace_enable) */
} duet__ctl_t;

/** One tile as it ran on the device, for measured timelines (device wall clock, ns). */
typedef struct duet__trace_rec {
    int32_t cta, sm, queue, stolen;
    int64_t tile;
    uint64_t t0_ns, t1_ns;
} duet__trace_rec_t;

/** Phases of a bounded wait, for the error message. */
enum { DUET__PHASE_ENTRY = 1, DUET__PHASE_EXIT = 2 };

/** The first device-side error since the last duet_ctx_sync(); host-mapped (pinned) memory. */
typedef struct duet__dev_err {
    int32_t status;     /* 0, or a duet_status_t (DUET_ERR_TIMEOUT); written last */
    int32_t peer;       /* the rank waited for */
    int32_t phase;      /* DUET__PHASE_* */
    uint32_t epoch;     /* the operation */
    uint64_t waited_ns; /* how long the wait lasted */
} duet__dev_err_t;

/* ------------------------------------------------------------------------------------------ */
/* Kernel launch parameters                                                                    */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet__kparams {
    /* GEMM: C[m,n] = A[m,k] * B[n,k]^T, tiles in the plan's (swizzled) order. */
    duet_gemm_geom_t gemm;
    const uint16_t *a;
    const uint16_t *b;
    uint16_t *c;
    int32_t ab_vec;  /* 1: K % 8 == 0 and A, B 16-byte aligned: 16-byte asynchronous copies */
    int32_t ab_vec4; /* 1: K even and A, B 4-byte aligned: the mma.sync tile's 4-byte asynchronous copies */
    int32_t c_vec;   /* 1: N even and C 4-byte aligned: C stored as element pairs */
    int32_t c_vec16; /* 1: N % 8 == 0 and C 16-byte aligned: the wgmma tile stores 16 bytes at a time */
    int32_t tma;     /* 1: tma_a and tma_b describe A and B (NVIDIA sm_90: the wgmma tile runs) */
    int32_t c_tma;   /* 1: tma_c describes C too (tma and c_vec16): the wgmma epilogue stores C by TMA */
    /* K split (gemm.split_k > 1): fp32 partials, tiles_mn x split_k blocks of bm x bn, and one
     * arrival counter per C tile and pass (zero between operations: the last part resets it). */
    float *sk_ws;
    uint32_t *sk_cnt;
    /* Collective: the plan's comm queue. */
    duet_comm_geom_t comm;
    const uint16_t *src; /* this rank's address; peers' through bases[] */
    uint16_t *dst;
    int32_t comm_vec; /* 1: nc % 8 == 0 and src, dst 16-byte aligned: 16-byte accesses */
    int32_t dtype;
    int32_t has_comm; /* the workload has a collective: run the entry and exit barriers */
    /* This kernel's launch geometry, the plan's (duet_plan_launch()): its role, its CTAs' home
     * queues and stealing, and the number of its CTA 0 in timelines. The device code reads these
     * and never the configuration. */
    duet_kernel_geom_t geom;
    int32_t rank, world;
    uint32_t epoch;      /* operation counter, the same on every rank */
    uint64_t timeout_ns; /* bound of every wait */
    /* Where each rank's heap is mapped in this process (bases[rank] is the local heap). */
    char *bases[DUET_OP_MAX_WORLD];
    /* Where each rank's src and dst are mapped in this process (src_at[rank] == src): in the heap,
     * bases[q] plus src's offset in it; in a registered buffer, the mapping of rank q's buffer plus
     * the same offset in it (duet_buf_register). */
    const char *src_at[DUET_OP_MAX_WORLD];
    char *dst_at[DUET_OP_MAX_WORLD];
    uint32_t *flags;       /* this rank's flag words (local address, start of the heap) */
    duet__ctl_t *ctl;      /* device-local: this operation's control block (zeroed) */
    duet__ctl_t *ctl_next; /* the next operation's, which CTA 0 zeroes */
    duet__dev_err_t *err;  /* device address of the host-mapped error record */
    /* Measured timeline: NULL, or a buffer of trace_cap records (duet_ctx_trace_enable). */
    duet__trace_rec_t *trace;
    uint32_t trace_cap;
#if defined(DUET_GPU_NVIDIA)
    /* TMA descriptors of A and B for the tile being launched (boxes of 64 x tile rows, 128-byte
     * swizzle); they must live in kernel-parameter (or global) memory, 64-byte aligned. */
    CUtensorMap tma_a;
    CUtensorMap tma_b;
    /* C's (boxes of 64 columns x pass rows, 128-byte swizzle), for the epilogue's stores. */
    CUtensorMap tma_c;
#endif
} duet__kparams_t;

/* Kernel launchers, one set per element type (backend/kernels_*.hip, backend/comm_kernel.hip). */
hipError_t duet__launch_persistent_fp16(const duet__kparams_t *p, duet_gemm_tile_t tile, int grid, hipStream_t s);
hipError_t duet__launch_persistent_bf16(const duet__kparams_t *p, duet_gemm_tile_t tile, int grid, hipStream_t s);
hipError_t duet__launch_comm(const duet__kparams_t *p, int grid, hipStream_t s);
/**
 * Copy mode's barriers (backend/sync.h's protocol without a comm kernel), one CTA on stream s:
 * phase DUET__PHASE_ENTRY signals this rank's arrival and waits for every rank's (before the
 * copies are enqueued behind it); DUET__PHASE_EXIT, after the copies, signals this rank's
 * departure and waits for every rank's. Each zeroes the next operation's control block.
 */
hipError_t duet__launch_copy_gate(const duet__kparams_t *p, int phase, hipStream_t s);
/** Raise the dynamic shared-memory limit of every persistent kernel (once per device). */
hipError_t duet__kernels_init_fp16(void);
hipError_t duet__kernels_init_bf16(void);
/**
 * Fill kp->tma_a / tma_b for a tile whose passes are `pass_rows` x `bn` and set kp->tma, when the
 * operands allow it (kp->ab_vec) and the device has TMA (NVIDIA sm_90); otherwise kp->tma = 0 and
 * the mma.sync / MFMA tile runs. Where C allows it too (kp->c_vec16), also kp->tma_c and
 * kp->c_tma = 1. Host code (backend/tma.hip).
 */
void duet__tma_prepare(duet__kparams_t *kp, int pass_rows, int bn);
/** Dynamic shared memory of the persistent kernel for a tile, bytes (0: not a tile we build). */
size_t duet__gemm_smem_bytes(duet_gemm_tile_t tile);

#endif /* DUET_BACKEND_INTERNAL_H */
