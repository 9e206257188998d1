/*
 * duet backend: runs a plan's GEMM and collective on the GPUs of one node (HIP source; CUDA on
 * NVIDIA through backend/gpu.h), one MPI rank per GPU.
 *
 * Life cycle (every call marked "collective" must be made by every rank of the communicator, in
 * the same order):
 *
 *   duet_ctx_create(comm, &params, &ctx);        collective: device, symmetric heap, IPC mappings
 *   duet_ctx_alloc(ctx, bytes, &src);            collective: same offset on every rank
 *   duet_run(ctx, &op, stream);                  collective, asynchronous on `stream`
 *   duet_ctx_sync(ctx, stream);                  waits, and reports device-side errors (timeouts)
 *   duet_ctx_destroy(ctx);                       collective
 *
 * Completion: when the stream work of duet_run() has ended on every rank, C and the collective's
 * output are complete and visible on every rank. Inside the operation the ranks synchronise on
 * flags in the symmetric heap (an entry barrier before the first remote access, an exit barrier
 * after the last), with no host round trip.
 *
 * Timeouts: every device-side wait is bounded by op.timeout_ms (or params.timeout_ms). When one
 * expires, the kernel records the error, the rank it waited for and the phase in host-mapped
 * memory, skips its remaining remote work and exits. duet_ctx_sync() then returns
 * DUET_ERR_TIMEOUT, and duet_ctx_last_error() names the peer, e.g.
 * "op 7 (all_gather): timed out after 2.00 s waiting for rank 1 to enter the operation".
 * From then on the context refuses new operations (DUET_ERR_BUSY) until every rank has called
 * duet_ctx_resync(), which realigns the ranks' operation counters.
 */
#ifndef DUET_BACKEND_H
#define DUET_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "duet/model.h"
#include "duet/op.h"
#include "duet/sim.h"
#include "duet/status.h"
#include "duet/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct duet_ctx *duet_ctx_h;

/** Parameters of a context. Start from duet_ctx_default_params(). */
typedef struct duet_ctx_params {
    size_t heap_bytes;  /* symmetric heap per rank, bytes (rounded up to 2 MiB); default 1 GiB */
    int64_t timeout_ms; /* default bound of every device-side wait, ms; default 5000 */
    int32_t device;     /* GPU ordinal; -1 (default): node-local rank % device count */
    const char *hw;     /* profile for validation (built-in name or JSON path); NULL: by device
                         * architecture (h200 on NVIDIA, mi300x/mi350x on AMD). Its SM count and
                         * shared memory are replaced by the device's. */
} duet_ctx_params_t;

duet_ctx_params_t duet_ctx_default_params(void);

/**
 * Create a context over `comm` (collective). All ranks must be on one node and their GPUs must
 * reach each other (peer access); otherwise every rank returns DUET_ERR_UNSUPPORTED.
 * `params` may be NULL (defaults). *ctx_p is written only on success.
 */
duet_status_t duet_ctx_create(MPI_Comm comm, const duet_ctx_params_t *params, duet_ctx_h *ctx_p);

/**
 * Destroy a context (collective): waits for the device, closes every peer mapping, then frees the
 * heap and all other resources. NULL is a no-op.
 */
void duet_ctx_destroy(duet_ctx_h ctx);

/** Rank and world size of the context's communicator, and the GPU it drives. */
int duet_ctx_rank(duet_ctx_h ctx);
int duet_ctx_world(duet_ctx_h ctx);
int duet_ctx_device(duet_ctx_h ctx);
/** The profile operations are validated against (device SM count and shared memory). */
const duet_hw_t *duet_ctx_hw(duet_ctx_h ctx);
/** This rank's heap: its base device address and size in bytes. */
void *duet_ctx_heap_base(duet_ctx_h ctx);
size_t duet_ctx_heap_size(duet_ctx_h ctx);
/** Bytes of the heap in use (reserved control area included). */
size_t duet_ctx_heap_used(duet_ctx_h ctx);

/** The explanation of the last error a call on this context returned ("" if none). */
const char *duet_ctx_last_error(duet_ctx_h ctx);

/**
 * Allocate `bytes` of the symmetric heap (collective: every rank asks for the same size in the
 * same order, which the call checks). Alignment is DUET_HEAP_ALIGN bytes. *ptr_p is written only
 * on success. DUET_ERR_OUT_OF_HEAP leaves the heap unchanged.
 */
#define DUET_HEAP_ALIGN 256
duet_status_t duet_ctx_alloc(duet_ctx_h ctx, size_t bytes, void **ptr_p);

/**
 * Release an allocation (collective). Space is reclaimed in stack order: freeing the most recent
 * live allocation returns it, together with any already-freed allocations directly below it; an
 * allocation freed out of order is reclaimed once everything above it is freed.
 */
duet_status_t duet_ctx_free(duet_ctx_h ctx, void *ptr);

/**
 * Enqueue one operation on `stream` (a hipStream_t / cudaStream_t; NULL is the default stream)
 * (collective). Arguments are checked first (duet_op_validate()); on error nothing is launched.
 * Operations of one context run in the order they are issued, whatever streams they are given.
 * Returns once the work is enqueued; device-side errors are reported by duet_ctx_sync().
 */
duet_status_t duet_run(duet_ctx_h ctx, const duet_op_t *op, void *stream);

/** Named forms of duet_run(); op->wl.coll must be the named collective. */
duet_status_t duet_gemm_all_gather(duet_ctx_h ctx, const duet_op_t *op, void *stream);
duet_status_t duet_gemm_all_reduce(duet_ctx_h ctx, const duet_op_t *op, void *stream);
duet_status_t duet_gemm_reduce_scatter(duet_ctx_h ctx, const duet_op_t *op, void *stream);
duet_status_t duet_gemm_all_to_all(duet_ctx_h ctx, const duet_op_t *op, void *stream);
duet_status_t duet_gemm_broadcast(duet_ctx_h ctx, const duet_op_t *op, void *stream);

/**
 * Wait for `stream` and report the first device-side error of the operations since the last
 * call: DUET_ERR_TIMEOUT (the message names the peer and the phase) or DUET_ERR_BACKEND (a GPU
 * runtime error). Local: needs no other rank.
 */
duet_status_t duet_ctx_sync(duet_ctx_h ctx, void *stream);

/**
 * Recover after a failed operation (collective): waits for the device, agrees with every rank on
 * the operation counter (the highest any rank reached), clears the error state and the control
 * block. The heap's contents and allocations are kept; the outputs of the failed operation are
 * undefined.
 */
duet_status_t duet_ctx_resync(duet_ctx_h ctx);

/**
 * Measured timelines: record every tile of the following operations (CTA, SM, queue, tile id,
 * device wall-clock start and end) into a buffer of `max_tiles` records; 0 turns tracing off.
 * Tracing adds one barrier and two clock reads per tile. Local (no other rank involved).
 */
duet_status_t duet_ctx_trace_enable(duet_ctx_h ctx, size_t max_tiles);

/**
 * Wait for `stream`, then append the tiles of the last operation to `trace` (duet_trace_init()
 * first), times in seconds from its first tile's start, in the simulator's format (duet/sim.h).
 */
duet_status_t duet_ctx_trace_read(duet_ctx_h ctx, void *stream, duet_trace_t *trace);

#ifdef __cplusplus
}
#endif
#endif /* DUET_BACKEND_H */
