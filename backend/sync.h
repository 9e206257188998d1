/*
 * Device side of an operation's cross-rank protocol: the entry barrier (every rank has entered,
 * so its src is final and its dst may be written), the exit barrier (every rank has finished its
 * remote accesses), bounded waits and the error record.
 *
 * Protocol for operation `epoch` on rank r (flags: backend/internal.h):
 *   enter:  CTA 0 of the kernel that carries the collective, as it starts: fence (system scope);
 *           store epoch into ARRIVE[r] of every rank's heap (release).
 *   before the first comm tile of a CTA: wait until ARRIVE[p] >= epoch for every p (local
 *           polls, acquire), or until the bound expires.
 *   leave:  every CTA fences (system scope) and counts itself done; the last one stores epoch
 *           into DEPART[r] of every rank's heap and waits until DEPART[p] >= epoch for every p.
 * Rank p writes r's dst only after r's ARRIVE, and r's kernel ends only after p's DEPART, which p
 * sends after its last remote store: so when r's stream work ends, r's dst is complete, and no
 * peer still reads r's src.
 */
#ifndef DUET_BACKEND_SYNC_H
#define DUET_BACKEND_SYNC_H

#include "backend/internal.h"

/** This rank's address `local` in rank `peer`'s heap, as mapped in this process. */
template <typename T> __device__ static inline T *duet__peer_ptr(const duet__kparams_t &p, T *local, int peer)
{
    const char *lp = (const char *)local;
    return (T *)(p.bases[peer] + (lp - p.bases[p.rank]));
}

/** Record the first error of the operation (host-mapped) and make every CTA skip remote work. */
__device__ static inline void duet__record_error(const duet__kparams_t &p, int32_t status, int32_t peer, int32_t phase,
                                                 uint64_t waited_ns)
{
    if (atomicCAS(&p.ctl->err_claim, 0u, 1u) == 0u) {
        volatile duet__dev_err_t *e = p.err;
        /* Keep an earlier operation's error until the host has collected it. */
        if (e->status == 0) {
            e->peer = peer;
            e->phase = phase;
            e->epoch = p.epoch;
            e->waited_ns = waited_ns;
            __threadfence_system();
            e->status = status;
            __threadfence_system();
        }
    }
    atomicExch(&p.ctl->abort, 1u);
}

/**
 * Tell every rank that this one has entered the operation. One thread calls it, once per operation
 * and rank: thread 0 of CTA 0 of the kernel that carries the collective (kernels.h). (A
 * compare-and-swap on a control word guarded it while every CTA could call it; that put an L2
 * round trip in front of the signal.)
 */
__device__ static inline void duet__signal_arrival(const duet__kparams_t &p)
{
    __threadfence_system();
    for (int q = 0; q < p.world; q++)
        duet_dev_store_release_sys(duet__peer_ptr(p, p.flags + DUET__FLAG_ARRIVE + p.rank, q), p.epoch);
}

/**
 * Wait until flag word base + q >= epoch for every rank q (one thread). @return 1 when all are
 * there; 0 when the operation was aborted or the bound expired (then the error is recorded,
 * naming the first rank still missing).
 */
__device__ static inline int duet__wait_all(const duet__kparams_t &p, int base, int32_t phase)
{
    const uint64_t t0 = duet_dev_time_ns();
    for (;;) {
        int missing = -1;
        for (int q = 0; q < p.world; q++) {
            uint32_t v = duet_dev_load_acquire_sys(p.flags + base + q);
            if ((int32_t)(v - p.epoch) < 0) { /* wrap-safe v < epoch */
                missing = q;
                break;
            }
        }
        if (missing < 0)
            return 1;
        if (duet_dev_load_acquire_gpu(&p.ctl->abort))
            return 0;
        uint64_t waited = duet_dev_time_ns() - t0;
        if (waited > p.timeout_ns) {
            duet__record_error(p, DUET_ERR_TIMEOUT, missing, phase, waited);
            return 0;
        }
        duet_dev_pause();
    }
}

/**
 * Entry barrier for one CTA (all threads call it). @return 1: every rank has entered. CTA 0 of
 * the kernel that carries the collective signals this rank's arrival when it starts
 * (kernels.h), so a CTA here only waits: a signal of its own would put an atomic round trip on
 * the L2 (about 0.7 us) in front of its first comm tile.
 */
__device__ static inline int duet__cta_wait_entry(const duet__kparams_t &p)
{
    __shared__ int s_ok;
    if (threadIdx.x == 0)
        s_ok = duet__wait_all(p, DUET__FLAG_ARRIVE, DUET__PHASE_ENTRY);
    duet_dev_sync();
    int ok = s_ok;
    duet_dev_sync();
    return ok;
}

/** End of a CTA of the comm-bearing kernel (all threads call it): the last one runs the exit barrier. */
__device__ static inline void duet__cta_finish(const duet__kparams_t &p)
{
    /* Order this CTA's remote stores before the count that the last CTA observes. */
    __threadfence_system();
    duet_dev_sync();
    if (threadIdx.x != 0)
        return;
    unsigned old = atomicAdd(&p.ctl->done, 1u);
    if (old != gridDim.x - 1)
        return;
    __threadfence_system();
    /* A rank with no comm tile still counts as entered: CTA 0 signalled its arrival at the start. */
    /* After a failed wait this rank does not claim to be done: its peers then time out too,
     * instead of trusting outputs this rank never completed. */
    if (duet_dev_load_acquire_gpu(&p.ctl->abort))
        return;
    for (int q = 0; q < p.world; q++)
        duet_dev_store_release_sys(duet__peer_ptr(p, p.flags + DUET__FLAG_DEPART + p.rank, q), p.epoch);
    duet__wait_all(p, DUET__FLAG_DEPART, DUET__PHASE_EXIT);
}

#endif /* DUET_BACKEND_SYNC_H */
