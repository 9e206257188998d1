/*
 * duet backend: runs a plan's GEMM and collective on the GPUs of one node (HIP source; CUDA on
 * NVIDIA through backend/gpu.h), one process (rank) per GPU, or several sharing one.
 *
 * Life cycle (every call marked "collective" must be made by every rank of the process group, in
 * the same order):
 *
 *   duet_ctx_create_bootstrap(&boot, &params, &ctx);  collective: device, symmetric heap, IPC
 *     (or duet_ctx_create(comm, &params, &ctx): the same over an MPI communicator)
 *   duet_ctx_alloc(ctx, bytes, &src);            collective: same offset on every rank
 *   duet_buf_register(ctx, ptr, bytes, &buf);    collective: a buffer the caller allocated
 *   duet_run(ctx, &op, stream);                  collective, asynchronous on `stream`
 *   duet_ctx_sync(ctx, stream);                  waits, and reports device-side errors (timeouts)
 *   duet_buf_deregister(ctx, buf);               collective
 *   duet_ctx_destroy(ctx);                       collective
 *
 * The process group: the context needs an allgather of bytes and a barrier over the caller's
 * ranks, and nothing else, only while it is created, allocates, registers, recovers and is
 * destroyed (never inside duet_run). A launcher hands them over as callbacks (duet_bootstrap_t):
 * MPI is one provider (duet_bootstrap_mpi, which duet_ctx_create uses), a directory shared by the
 * ranks of the node another (duet_bootstrap_file: torchrun or any launcher that sets the rank and
 * the world size), and a framework can pass its own (a torch.distributed or NCCL group's
 * all_gather and barrier).
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
 *
 * Graphs: duet_run() cannot be captured into a CUDA/HIP graph; called on a capturing stream it
 * returns DUET_ERR_UNSUPPORTED and enqueues nothing (see duet_run()).
 *
 * Define DUET_BACKEND_NO_MPI before including this header to leave out the MPI entry points
 * (duet_ctx_create, duet_bootstrap_mpi) and <mpi.h>.
 */
#ifndef DUET_BACKEND_H
#define DUET_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#ifndef DUET_BACKEND_NO_MPI
#include <mpi.h>
#endif

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
    const char *hw;     /* profile for validation (built-in name or JSON path); NULL: the device's
                         * built-in by its name (duet_hw_builtin_for_device: h100 on an H100, h200
                         * on an H200, mi300x/mi350x by gfx arch). Its SM count and
                         * shared memory are replaced by the device's. */
} duet_ctx_params_t;

duet_ctx_params_t duet_ctx_default_params(void);

/**
 * The caller's process group, as the context uses it (the out-of-band channel of UCC's
 * ucc_oob_coll_t, or what NCCL builds from its unique id). Every rank passes its own rank in
 * [0, world) and the same world. The callbacks are called from the thread that calls the
 * context's collective functions, in the same order on every rank, and return 0 on success
 * (a negative errno value, e.g. -ETIMEDOUT, is named in the context's error message):
 *
 *   allgather(user, mine, all, bytes): every rank contributes `bytes` bytes at `mine`; on return
 *     `all` holds world * bytes bytes, rank r's at all + r * bytes. Collective.
 *   barrier(user): returns once every rank has called it. Collective. May be NULL: the context
 *     then synchronises through allgather.
 *   release(user): called once when the context no longer needs the callbacks (when
 *     duet_ctx_destroy ends, or when duet_ctx_create_bootstrap fails). May be NULL.
 *
 * All ranks must be processes of one node (the heaps are shared through IPC): the context checks
 * this itself (by host name) and picks the GPU by the rank among the ranks of the node.
 */
typedef struct duet_bootstrap {
    int rank;
    int world;
    int (*allgather)(void *user, const void *mine, void *all, size_t bytes);
    int (*barrier)(void *user);
    void (*release)(void *user);
    void *user;
} duet_bootstrap_t;

/**
 * Create a context over a process group given by callbacks (collective). The context keeps a
 * copy of `*boot` and owns boot->user from the call on: it calls boot->release once, when it is
 * destroyed or when this call fails. All ranks must be on one node and their GPUs must reach each
 * other (peer access); otherwise every rank returns DUET_ERR_UNSUPPORTED. A GPU whose
 * architecture has no code object in this build gets DUET_ERR_UNSUPPORTED, naming the
 * architectures built and the one to rebuild for (duet_backend_archs()).
 * `params` may be NULL (defaults). *ctx_p is written only on success.
 */
duet_status_t duet_ctx_create_bootstrap(const duet_bootstrap_t *boot, const duet_ctx_params_t *params,
                                        duet_ctx_h *ctx_p);

/**
 * A process group over files in `dir`, a directory every rank of the node can read and write,
 * which no other group uses at the same time (a fresh one per job: e.g. mktemp -d, or a path
 * holding the launcher's job id). Rank and world come from the launcher (torchrun: RANK and
 * WORLD_SIZE). Each collective writes one file per rank and waits, polling every 1 ms, until the
 * world's files are there, at most timeout_ms (then the callback fails: a rank that never came).
 * Each rank removes its files once every rank has read them; the directory itself is left.
 * Files are created exclusively, never through a symbolic link, and a reader takes only files of
 * its own job (the ranks agree on 64 random bits each in the first collective): files a dead job
 * left in the directory are passed over.
 * Several bootstraps may share a directory when every rank makes them in the same order.
 * *boot_p is written only on success; pass it to duet_ctx_create_bootstrap.
 */
duet_status_t duet_bootstrap_file(const char *dir, int rank, int world, int64_t timeout_ms, duet_bootstrap_t *boot_p);

/** The GPU architectures this build holds code objects for, e.g. "gfx90a gfx942" or "sm_90a". */
const char *duet_backend_archs(void);

#ifndef DUET_BACKEND_NO_MPI
/**
 * The MPI provider: a process group over a duplicate of `comm` (freed by release). Collective
 * over `comm`. *boot_p is written only on success.
 */
duet_status_t duet_bootstrap_mpi(MPI_Comm comm, duet_bootstrap_t *boot_p);

/**
 * Create a context over `comm` (collective): duet_ctx_create_bootstrap with duet_bootstrap_mpi.
 * `params` may be NULL (defaults). *ctx_p is written only on success.
 */
duet_status_t duet_ctx_create(MPI_Comm comm, const duet_ctx_params_t *params, duet_ctx_h *ctx_p);
#endif

/**
 * Destroy a context (collective): waits for the device, closes every peer mapping, then frees the
 * heap and all other resources. NULL is a no-op.
 */
void duet_ctx_destroy(duet_ctx_h ctx);

/** Rank and world size of the context's process group, and the GPU it drives. */
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
 * A buffer the caller allocated (hipMalloc / cudaMalloc, or a framework's allocator on top of
 * them), registered with the context so that peers can address it (as NCCL's ncclCommRegister).
 */
typedef struct duet_buf *duet_buf_h;

/**
 * Register [ptr, ptr + bytes) of device memory of the context's GPU (collective: every rank
 * registers its own buffer of the same size, in the same order). The context exports the
 * allocation that holds it through IPC (hipIpcGetMemHandle) and maps every peer's; the buffer may
 * start anywhere inside its allocation (a caching allocator's block). It can then hold an
 * operation's src or dst (op.h), at the same offset from the registered start on every rank, as
 * heap buffers are at the same offset from the heap base. Errors (every rank returns one when any
 * rank fails): DUET_ERR_INVALID_ARG for a NULL or unaligned pointer (DUET_HEAP_ALIGN bytes), zero
 * bytes, host or managed memory, memory of another GPU, a range past the end of its allocation,
 * a buffer inside the symmetric heap, or ranks registering different sizes; DUET_ERR_BACKEND when
 * the runtime cannot export or map it (e.g. memory from a stream-ordered pool). *buf_p is written
 * only on success. The memory must stay allocated until duet_buf_deregister().
 */
duet_status_t duet_buf_register(duet_ctx_h ctx, void *ptr, size_t bytes, duet_buf_h *buf_p);

/**
 * Deregister a buffer (collective, in the same order on every rank): waits for the context's
 * operations, then closes the peers' mappings. NULL is a no-op. duet_ctx_destroy() deregisters
 * whatever is still registered.
 */
duet_status_t duet_buf_deregister(duet_ctx_h ctx, duet_buf_h buf);

/**
 * Enqueue one operation on `stream` (a hipStream_t / cudaStream_t; NULL is the default stream)
 * (collective). Arguments are checked first (duet_op_validate(), and src and dst each wholly in
 * the heap or in one registered buffer); on error nothing is launched. Operations of one context
 * run in the order they are issued, whatever streams they are given. Returns once the work is
 * enqueued; device-side errors are reported by duet_ctx_sync().
 *
 * Not capturable: on a stream that is capturing a graph it returns DUET_ERR_UNSUPPORTED and
 * enqueues nothing. Each operation's epoch (the flag value its cross-rank barriers wait for) and
 * its control block (the queue counters, zeroed by the operation before it) are chosen on the host
 * when it is enqueued and written into the kernels' parameters; a replayed graph would run them
 * again with the same epoch, whose flags are already set, so its barriers would not wait, and
 * with queue counters already exhausted, so it would do no work.
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
