/*
 * The backend context (host side) and the check macros at the backend's foreign boundaries.
 */
#ifndef DUET_BACKEND_CTX_H
#define DUET_BACKEND_CTX_H

#include <mpi.h>

#include "backend/internal.h"
#include "duet/backend.h"

extern "C" {
#include "base/base.h"
}

/*
 * HIP_CHECK / MPI_CHECK: the first place a runtime or MPI error is seen translates it into a
 * duet status and records the text once (duet__error); callers only propagate the status.
 */
#define HIP_CHECK(_call, _st, _label)                                                                                  \
    do {                                                                                                               \
        hipError_t _e = (_call);                                                                                       \
        if (_e != hipSuccess) {                                                                                        \
            (_st) =                                                                                                    \
                duet__error(DUET_ERR_BACKEND, "%s: %s (%s:%d)", #_call, hipGetErrorString(_e), __FILE__, __LINE__);    \
            goto _label;                                                                                               \
        }                                                                                                              \
    } while (0)

#define MPI_CHECK(_call, _st, _label)                                                                                  \
    do {                                                                                                               \
        int _rc = (_call);                                                                                             \
        if (_rc != MPI_SUCCESS) {                                                                                      \
            char _msg[MPI_MAX_ERROR_STRING];                                                                           \
            int _len = 0;                                                                                              \
            MPI_Error_string(_rc, _msg, &_len);                                                                        \
            (_st) = duet__error(DUET_ERR_MPI, "%s: %s (%s:%d)", #_call, _msg, __FILE__, __LINE__);                     \
            goto _label;                                                                                               \
        }                                                                                                              \
    } while (0)

/*
 * MPI's status agreement for the measuring harness (backend/measure.hip), which runs under mpirun
 * and times on its communicator: every rank returns the worst status of any rank. The context
 * itself agrees through its bootstrap (duet__ctx_agree).
 */
extern "C" duet_status_t duet__mpi_agree(MPI_Comm comm, duet_status_t st);

/** One allocation of the symmetric heap (offsets from the heap base, bytes). */
typedef struct duet__alloc {
    size_t offset, bytes;
    int live;
} duet__alloc_t;

/* Operations whose collective is remembered for error messages (a ring indexed by epoch). */
#define DUET__OP_HISTORY 64

/* Buffers registered at once (duet_buf_register): duet_run() searches them for src and dst. */
#define DUET__MAX_BUFS 64

/*
 * One open IPC mapping of a peer's allocation. Registrations of several buffers inside one
 * allocation (a caching allocator's blocks) share it: a process may open an allocation's handle
 * only once, so the mapping is counted and closed with its last registration.
 */
typedef struct duet__ipc_map {
    int peer;
    uint64_t peer_base; /* the allocation's base address in the peer's process: the key */
    char *base;         /* where it is mapped here */
    int refs;
} duet__ipc_map_t;

/** A registered buffer: this rank's [ptr, ptr + bytes) and every rank's as mapped here. */
struct duet_buf {
    char *ptr;
    size_t bytes;
    char *at[DUET_OP_MAX_WORLD]; /* at[rank] == ptr */
    int map[DUET_OP_MAX_WORLD];  /* the entry of ctx->maps behind at[q], or -1 (our own) */
};

struct duet_ctx {
    duet_bootstrap_t boot; /* the caller's process group (released by duet_ctx_destroy) */
    int boot_owned;        /* 1: boot.release is still to be called */
    int rank, world, device;
    duet_hw_t hw;

    /* Symmetric heap: ours, and every rank's as mapped here (bases[rank] == heap). */
    char *heap;
    size_t heap_size;
    char *bases[DUET_OP_MAX_WORLD];
    int opened[DUET_OP_MAX_WORLD]; /* 1: bases[p] is an open IPC mapping to close */

    /* Bump allocator with stack-order release. */
    size_t top;
    duet__alloc_t *allocs;
    int nallocs, cap_allocs;

    duet__ctl_t *ctl;             /* device memory: two blocks, by epoch parity (internal.h) */
    duet__trace_rec_t *trace_dev; /* measured timeline buffer, or NULL (duet_ctx_trace_enable) */
    size_t trace_cap;             /* its records */
    float *sk_ws;                 /* K-split partials (kparams.sk_ws), grown on demand */
    size_t sk_ws_bytes;
    uint32_t *sk_cnt; /* K-split arrival counters, zeroed at allocation */
    size_t sk_cnt_n;
    void *stage_ws; /* operand staging workspace (duet_plan_t.stage_k), grown on demand */
    size_t stage_ws_bytes;
    duet__dev_err_t *err_host; /* pinned, mapped */
    duet__dev_err_t *err_dev;  /* its device address */
    hipStream_t s_comm;        /* concurrent mode's comm kernel; its GEMM runs on the caller's stream */
    hipEvent_t ev_fork, ev_comm, ev_last;
    /* Copy mode (run.hip): copy stream 0 is the collective's stream (s_comm beside a GEMM), streams
     * 1.. are these; ev_gate marks the entry barrier, ev_copy[j] the end of copy stream j + 1. */
    hipStream_t s_copy[DUET_MAX_COPY_STREAMS - 1];
    hipEvent_t ev_gate, ev_copy[DUET_MAX_COPY_STREAMS - 1];
    void *last_stream; /* the stream of the last operation (ev_last is recorded there) */
    int any_op;        /* an operation has been enqueued since creation or resync */

    uint32_t epoch;     /* operations issued (the next one gets epoch + 1) */
    int64_t timeout_ms; /* default bound of device waits */
    int failed;         /* a device-side error was seen: refuse operations until resync */
    int32_t op_coll[DUET__OP_HISTORY];

    /* Registered buffers, in registration order, and the regions src and dst may lie in:
     * regions[0] is the heap, regions[1 + i] is bufs[i]. */
    duet_buf_h bufs[DUET__MAX_BUFS];
    int nbufs;
    duet_op_region_t regions[1 + DUET__MAX_BUFS];
    duet__ipc_map_t *maps; /* open mappings of the peers' allocations (refs > 0), or free slots */
    int nmaps;
    char errbuf[512];
};

/** Keep the thread's last error text in the context too, and return `st`. */
duet_status_t duet__ctx_fail(duet_ctx_h ctx, duet_status_t st);

/** Read the host-mapped error record without waiting; non-zero: the context is marked failed. */
duet_status_t duet__ctx_collect(duet_ctx_h ctx);

/* The context's collectives over its bootstrap. A callback's failure is DUET_ERR_MPI (the
 * process group failed), whoever provides it. */
duet_status_t duet__ctx_allgather(duet_ctx_h ctx, const void *mine, void *all, size_t bytes);
duet_status_t duet__ctx_barrier(duet_ctx_h ctx);

/** Collective agreement on success: every rank returns the worst status of any rank. */
duet_status_t duet__ctx_agree(duet_ctx_h ctx, duet_status_t st);

/** Deregister every buffer still registered (duet_ctx_destroy; best effort, not collective). */
void duet__bufs_release(duet_ctx_h ctx);

/**
 * Whether a build for `built` (space-separated: "gfx90a gfx942:xnack-", "sm_90a") holds code for
 * the device architecture `arch` ("gfx942:sramecc+:xnack-", "sm_90"): 1 or 0. AMD names compare
 * up to their first ':'; an NVIDIA sm_XYa runs on sm_XY only, an sm_XY on sm_XZ with Z >= Y.
 */
extern "C" int duet__arch_match(const char *built, const char *arch);

/* The operand staging pass of a plan with stage_k > 0 (backend/stage.hip): A and B into `ws`
 * ((M + N) x stage_k elements, 16-byte aligned), on `s`. */
hipError_t duet__stage_launch(const duet_plan_t *plan, const void *a, const void *b, void *ws, int n_sms,
                              hipStream_t s);

#endif /* DUET_BACKEND_CTX_H */
