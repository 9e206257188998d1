/*
 * duet vendor baselines and GPU utilities for the benchmark and calibration commands.
 *
 * The vendor libraries are what a user runs today: cuBLASLt and NCCL on NVIDIA, hipBLASLt and
 * RCCL on AMD. duet times its own operations next to them, in the same process and run. This
 * header also gives host C code (the CLI) device buffers, random fills, two streams and event
 * timing, so that it needs no GPU headers. Needs a GPU build (make gpu) and MPI.
 */
#ifndef DUET_VENDOR_H
#define DUET_VENDOR_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "duet/status.h"
#include "duet/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct duet_vendor *duet_vendor_h;

#define DUET_VENDOR_MAX_COMMS 4

/** Parameters of the vendor context. Start from duet_vendor_default_params(). */
typedef struct duet_vendor_params {
    /* Extra collective communicators with a CTA cap (NCCL_MAX_CTAS through ncclConfig_t.maxCTAs),
     * for the "GEMM on fewer SMs, collective on the rest" baselines. Slot 0 is always the
     * uncapped communicator; slot i (1..n_capped) is capped at capped_ctas[i-1]. */
    int32_t n_capped;
    int32_t capped_ctas[DUET_VENDOR_MAX_COMMS - 1];
    size_t workspace_bytes; /* GEMM workspace; default 32 MiB */
} duet_vendor_params_t;

duet_vendor_params_t duet_vendor_default_params(void);

/**
 * Create the vendor context over `comm` (collective): a BLASLt handle and workspace on `device`,
 * and the collective communicators (unique id broadcast over MPI). *v_p written only on success.
 */
duet_status_t duet_vendor_create(MPI_Comm comm, int device, const duet_vendor_params_t *params, duet_vendor_h *v_p);
/** Destroy (collective for the communicators). NULL is a no-op. */
void duet_vendor_destroy(duet_vendor_h v);
/** "cuBLASLt 13.0 + NCCL 2.28.3" or the AMD equivalent. */
const char *duet_vendor_describe(duet_vendor_h v);
/** Last error text of the vendor context. */
const char *duet_vendor_last_error(duet_vendor_h v);

/**
 * C[m,n] = A[m,k] * B[n,k]^T of wl through BLASLt on `stream`. sm_target > 0 asks the library to
 * plan for that many SMs (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET; hipBLASLt has no such knob and
 * ignores it). Heuristic results are cached per (shape, dtype, sm_target).
 */
duet_status_t duet_vendor_gemm(duet_vendor_h v, const duet_workload_t *wl, const void *a, const void *b, void *c,
                               int32_t sm_target, void *stream);

/**
 * The collective of wl through NCCL/RCCL on `stream`, on communicator slot `slot` (0: uncapped).
 * Buffers as duet_op_t: src [mc, nc], dst [duet_op_dst_rows(wl), nc].
 */
duet_status_t duet_vendor_coll(duet_vendor_h v, int32_t slot, const duet_workload_t *wl, const void *src, void *dst,
                               void *stream);

/**
 * Vendor mode (DUET_MODE_VENDOR): the GEMM of `op` in BLASLt planned for cfg.gemm_wgs SMs on
 * `stream`, and the collective by duet's comm kernel on cfg.comm_wgs CTAs on a second stream
 * that forks from and joins back into `stream` (collective, like duet_run()). Device-side errors
 * of the comm part are reported by duet_ctx_sync().
 */
struct duet_ctx;
struct duet_op;
duet_status_t duet_vendor_run(duet_vendor_h v, struct duet_ctx *ctx, const struct duet_op *op, void *stream);

/* ------------------------------------------------------------------------------------------ */
/* Device utilities for host C code                                                            */
/* ------------------------------------------------------------------------------------------ */

duet_status_t duet_gpu_malloc(size_t bytes, void **ptr_p);
void duet_gpu_free(void *ptr);
/** Fill n elements of dtype with uniform values in [-1, 1) from `seed` (never zeros). */
duet_status_t duet_gpu_fill_random(void *ptr, size_t n, int32_t dtype, uint64_t seed, void *stream);
/** Device name, architecture ("sm_90", "gfx942"), SM count, driver and runtime versions. */
duet_status_t duet_gpu_describe(int device, char *name, size_t name_n, char *arch, size_t arch_n, int32_t *sms_p,
                                char *driver, size_t driver_n, char *runtime, size_t runtime_n);

/** Two streams: work timed on `main`, with `side` for the second job of a pair. */
typedef struct duet_gpu_streams {
    void *main, *side;
    void *ev[4]; /* start, stop, fork, join */
} duet_gpu_streams_t;

duet_status_t duet_gpu_streams_create(duet_gpu_streams_t *s);
void duet_gpu_streams_destroy(duet_gpu_streams_t *s);

/** Work to time: enqueue on `main` (and on `side`, which starts when main starts). */
typedef duet_status_t (*duet_timed_fn)(void *user, void *main_stream, void *side_stream);

/**
 * Time one run of `fn` with device events: start on main, fork side from it, run, join side
 * back into main, stop; wait; return the elapsed milliseconds.
 */
duet_status_t duet_gpu_time(duet_gpu_streams_t *s, duet_timed_fn fn, void *user, double *ms_p);

#ifdef __cplusplus
}
#endif
#endif /* DUET_VENDOR_H */
