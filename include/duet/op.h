/*
 * duet: one operation of the backend (a GEMM and an independent collective), and the checks of
 * its arguments that run before anything is launched.
 *
 * Pure C with no HIP or MPI types, so that the checks are unit-tested on a machine without a GPU
 * (tests/model/test_op.c) and the backend's public header can include this one.
 */
#ifndef DUET_OP_H
#define DUET_OP_H

#include <stddef.h>
#include <stdint.h>

#include "duet/model.h"
#include "duet/status.h"
#include "duet/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Most ranks one operation may span. The kernels carry the peers' heap bases in their launch
 * parameters (no device-memory lookup per access), and one node has at most 8 GPUs on every
 * platform duet targets (H200 HGX, MI300X and MI350X OAM boards).
 */
#define DUET_OP_MAX_WORLD 8

/**
 * One operation: C[m,n] = A[m,k] * B[n,k]^T and, independently, the collective of wl.coll on
 * src. All pointers are device pointers of the calling rank.
 *
 * - a, b, c: the GEMM operands (row-major, K contiguous for A and B); needed when wl.m > 0.
 *   They may lie anywhere in device memory. C must not overlap src or dst.
 * - src: this rank's [mc, nc] input; dst: this rank's output (duet_op_dst_rows() x nc). Each
 *   must lie wholly inside the context's symmetric heap or inside one buffer registered with
 *   duet_buf_register(), at the same offset (from the heap base, or from the same registered
 *   buffer's start) on every rank, because peers read src and write dst through their mapping
 *   of this rank's memory. They must not overlap (no in-place collectives). Needed when
 *   wl.coll != DUET_COLL_NONE.
 * - timeout_ms: bound of every device-side wait of this operation, milliseconds; 0 takes the
 *   context's default.
 */
typedef struct duet_op {
    duet_workload_t wl;
    duet_config_t cfg;
    const void *a;
    const void *b;
    void *c;
    const void *src;
    void *dst;
    int64_t timeout_ms;
} duet_op_t;

/** Rows of the collective's output on each rank: W*mc (all_gather), mc/W (reduce_scatter), else mc. */
int64_t duet_op_dst_rows(const duet_workload_t *wl);

/** Bytes of src and of dst on each rank (0 when there is no collective). */
size_t duet_op_src_bytes(const duet_workload_t *wl);
size_t duet_op_dst_bytes(const duet_workload_t *wl);

/**
 * Check an operation before launch, on rank `rank` of `world`, against the profile `hw` the
 * backend runs (its SM count and shared memory are those of the device) and the symmetric heap
 * [heap_base, heap_base + heap_size) of this rank.
 *
 * Checks: the workload (duet_workload_validate) and the configuration (duet_config_validate);
 * wl.world == world, rank in range, world <= DUET_OP_MAX_WORLD; non-NULL, element-aligned
 * pointers for the parts that run; src and dst wholly inside the heap and not overlapping; C not
 * overlapping src or dst; timeout_ms >= 0.
 *
 * @return DUET_OK, DUET_ERR_INVALID_ARG (malformed arguments) or DUET_ERR_INFEASIBLE (a
 * configuration this hardware cannot run), with the reason in duet_last_error().
 */
duet_status_t duet_op_validate(const duet_op_t *op, const duet_hw_t *hw, uintptr_t heap_base, size_t heap_size,
                               int world, int rank);

/** A range of this rank's device memory that peers can address: [base, base + bytes). */
typedef struct duet_op_region {
    uintptr_t base;
    size_t bytes;
} duet_op_region_t;

/**
 * duet_op_validate with src and dst allowed in any of `n_regions` regions: regions[0] is the
 * symmetric heap, the others registered buffers. Each of src and dst must lie wholly inside one
 * region; one that starts inside a region and runs past its end is reported as too small.
 */
duet_status_t duet_op_validate_regions(const duet_op_t *op, const duet_hw_t *hw, const duet_op_region_t *regions,
                                       int n_regions, int world, int rank);

#ifdef __cplusplus
}
#endif
#endif /* DUET_OP_H */
