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

/** One allocation of the symmetric heap (offsets from the heap base, bytes). */
typedef struct duet__alloc {
    size_t offset, bytes;
    int live;
} duet__alloc_t;

/* Operations whose collective is remembered for error messages (a ring indexed by epoch). */
#define DUET__OP_HISTORY 64

struct duet_ctx {
    MPI_Comm comm; /* our duplicate of the caller's communicator */
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
    void *last_stream; /* the stream of the last operation (ev_last is recorded there) */
    int any_op;        /* an operation has been enqueued since creation or resync */

    uint32_t epoch;     /* operations issued (the next one gets epoch + 1) */
    int64_t timeout_ms; /* default bound of device waits */
    int failed;         /* a device-side error was seen: refuse operations until resync */
    int32_t op_coll[DUET__OP_HISTORY];
    char errbuf[512];
};

/** Keep the thread's last error text in the context too, and return `st`. */
duet_status_t duet__ctx_fail(duet_ctx_h ctx, duet_status_t st);

/** Read the host-mapped error record without waiting; non-zero: the context is marked failed. */
duet_status_t duet__ctx_collect(duet_ctx_h ctx);

/** Collective agreement on success: every rank returns the worst status of any rank. */
duet_status_t duet__ctx_agree(MPI_Comm comm, duet_status_t st);

/* The operand staging pass of a plan with stage_k > 0 (backend/stage.hip): A and B into `ws`
 * ((M + N) x stage_k elements, 16-byte aligned), on `s`. */
hipError_t duet__stage_launch(const duet_plan_t *plan, const void *a, const void *b, void *ws, int n_sms,
                              hipStream_t s);

#endif /* DUET_BACKEND_CTX_H */
