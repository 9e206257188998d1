/*
 * The persistent kernels. A CTA repeatedly dequeues a position of a queue with one device-wide
 * atomic and runs that tile, in the plan's order (include/duet/plan_map.h). Which queue a CTA
 * drains first and whether it moves on to the other are the plan's (kparams.geom, read through
 * duet_kernel_home() and duet_kernel_queues()):
 *
 * - fused (role FUSED): one grid of num_wgs CTAs; CTA ids below gemm_wgs start on the GEMM
 *   queue, the others on the comm queue; a CTA drains its home queue, then the other one, then
 *   exits. The counters only grow, so an exhausted queue stays exhausted.
 * - concurrent: a GEMM kernel (role GEMM, grid gemm_wgs) and a comm kernel (role COMM, grid
 *   comm_wgs) on two streams, each draining its own queue.
 * - a collective alone: the comm kernel (role COMM), every CTA on the comm queue.
 *
 * The kernel that carries the collective also runs its entry and exit barriers (sync.h): CTA 0
 * signals arrival at once, a CTA waits for every rank's arrival before its first comm tile only
 * (GEMM tiles never wait), and the last CTA to finish runs the exit barrier.
 */
#ifndef DUET_BACKEND_KERNELS_H
#define DUET_BACKEND_KERNELS_H

#include "backend/comm_tile.h"
#include "backend/gemm_tile.h"
#include "backend/sync.h"

/*
 * Measured timelines. What a record needs (start time, queue, stolen, tile id) waits in shared
 * memory, not in registers: a value live across the GEMM tile costs the tile registers and
 * spills even with tracing off (seen: 256x128 spills grew from 192 to 488 bytes when the start
 * time and the tile id stayed in registers).
 */
__shared__ uint64_t duet__trace_t0;
__shared__ long long duet__trace_idx;
__shared__ int duet__trace_q, duet__trace_stolen;

__device__ static __forceinline__ void duet__trace_begin(int q, int home, long long idx)
{
    if (threadIdx.x == 0) {
        duet__trace_idx = idx;
        duet__trace_q = q;
        duet__trace_stolen = q != home;
        duet__trace_t0 = duet_dev_time_ns();
    }
}

/*
 * Record one tile: every thread has finished it (barrier), then thread 0 takes a slot. Tiles
 * past the buffer's capacity are counted, not kept.
 */
__device__ static __forceinline__ void duet__trace_end(const duet__kparams_t &p)
{
    duet_dev_sync();
    if (threadIdx.x != 0)
        return;
    uint64_t t1 = duet_dev_time_ns();
    unsigned long long slot = atomicAdd(&p.ctl->trace_n, 1ull);
    if (slot < p.trace_cap) {
        duet__trace_rec_t r = {p.geom.cta_base + (int32_t)blockIdx.x,
                               duet_dev_smid(),
                               duet__trace_q,
                               duet__trace_stolen,
                               (int64_t)duet__trace_idx,
                               duet__trace_t0,
                               t1};
        p.trace[slot] = r;
    }
}

/*
 * Drain the comm queue from position `idx`, which the caller dequeued. Before its first comm tile
 * a CTA waits for every rank's arrival (entry barrier); after a failed wait its remaining comm
 * tiles are dequeued and dropped. Once the wait succeeded every rank is in the operation, and the
 * only later wait is the exit barrier after the last tile, so no per-tile check follows.
 *
 * The next position is dequeued while the current tile runs: thread 0 issues the atomic before
 * the tile and reads its result after, so its round trip (about 1 us against 5-8 us for a 32 KB
 * tile) no longer sits between tiles. Not near the end of the queue (fewer than two tiles per
 * CTA of the grid left): there a claimed tile waits behind the running one while other CTAs
 * find the queue empty, which lengthened 64 MB collectives on 132 CTAs by 3-4 % when every tile
 * was claimed early (except in a comm kernel with at most one tile per CTA, below). The wgmma
 * GEMM tile's producer claims early too (duet__wg_producer).
 *
 * Not inlined, so that the comm code's registers do not add to the GEMM tile's in the fused
 * kernel. @return the new `entered` state (0 not yet waited, 1 every rank entered, -1 the wait
 * failed).
 */
template <bool TRACE, int BV>
__device__ static __noinline__ int duet__comm_drain(const duet__kparams_t &p, long long idx, long long len, int home,
                                                    int entered)
{
    __shared__ long long s_next;
    while (idx < len) {
        unsigned long long next = 0;
        /* The same in every thread. A comm kernel whose queue fits in one wave of its CTAs claims
         * early too: there the second claim finds the queue empty (unless some CTA started late),
         * and its round trip would otherwise sit between the last tile and the exit barrier. */
        const bool early =
            idx + 2 * (long long)gridDim.x < len || (p.geom.role == DUET_ROLE_COMM && len <= (long long)gridDim.x);
        if (threadIdx.x == 0 && early)
            next = atomicAdd(&p.ctl->queue[DUET_QUEUE_COMM], 1ull);
        if constexpr (TRACE)
            duet__trace_begin(DUET_QUEUE_COMM, home, idx);
        if (entered == 0)
            entered = duet__cta_wait_entry(p) ? 1 : -1;
        if (entered > 0)
            duet__comm_tile<BV>(p, idx);
        if constexpr (TRACE)
            duet__trace_end(p);
        if (threadIdx.x == 0)
            s_next = (long long)(early ? next : atomicAdd(&p.ctl->queue[DUET_QUEUE_COMM], 1ull));
        duet_dev_sync();
        idx = s_next;
        duet_dev_sync();
    }
    return entered;
}

/* The queue a CTA drains first, and how many it drains (the other one after it): the plan's. */
__device__ static inline int duet__cta_home(const duet__kparams_t &p)
{
    return duet_kernel_home(&p.geom, (int32_t)blockIdx.x);
}

__device__ static inline int duet__cta_nqueues(const duet__kparams_t &p)
{
    return duet_kernel_queues(&p.geom);
}

/* BM == 0: a kernel without the GEMM tile (the concurrent comm kernel). */
/* TRACE: the instantiation that records a measured timeline. A separate kernel, because even
 * guarded trace hooks change the GEMM tile's register allocation (more spills) when inlined. */
template <bool BF16, int BM, int BN, bool TRACE>
__device__ static void duet__cta_run(const duet__kparams_t &p, uint16_t *smem)
{
    __shared__ long long s_idx;
    const bool comm_role = p.geom.role != DUET_ROLE_GEMM && p.has_comm;
    /* Zero the next operation's control block (internal.h): its last user, the operation before
     * this one, has ended, and the next one starts after this kernel. Every kernel of the
     * operation does it; the writes are the same. */
    static_assert(sizeof(duet__ctl_t) % sizeof(uint32_t) == 0 && sizeof(duet__ctl_t) / sizeof(uint32_t) <= DUET_THREADS,
                  "the control block is zeroed one word per thread");
    if (blockIdx.x == 0 && threadIdx.x < (int)(sizeof(duet__ctl_t) / sizeof(uint32_t)))
        ((uint32_t *)p.ctl_next)[threadIdx.x] = 0u;
    if (comm_role && blockIdx.x == 0 && threadIdx.x == 0)
        duet__signal_arrival(p);

    const int home = duet__cta_home(p), nqueues = duet__cta_nqueues(p);
    int entered = 0; /* comm: 0 not yet waited, 1 every rank entered, -1 the wait failed */

    for (int i = 0; i < nqueues; i++) {
        const int q = i == 0 ? home : 1 - home;
        const long long len =
            q == DUET_QUEUE_GEMM ? (long long)p.gemm.tiles : (p.has_comm ? (long long)p.comm.queue_len : 0);
#if defined(DUET_GPU_NVIDIA)
        if constexpr (BM > 0)
            if (q == DUET_QUEUE_GEMM && p.tma) {
                /* The producer claims this queue's tiles (duet__persistent_kernel): from now on
                 * in a comm-home CTA. */
                if (threadIdx.x == 0 && home != DUET_QUEUE_GEMM)
                    duet__mbar_arrive(&duet__wg_go);
                if (len > 0)
                    duet__wg_consume<BF16, BM, BN>(
                        p, (uint8_t *)smem, len,
                        [&](long long idx) {
                            if constexpr (TRACE)
                                duet__trace_begin(q, home, idx);
                        },
                        [&]() {
                            if constexpr (TRACE)
                                duet__trace_end(p);
                        });
                continue;
            }
#endif
        if (len <= 0)
            continue;
        for (;;) {
            if (threadIdx.x == 0)
                s_idx = (long long)atomicAdd(&p.ctl->queue[q], 1ull);
            duet_dev_sync();
            const long long idx = s_idx;
            duet_dev_sync();
            if (idx >= len)
                break;
            if (q != DUET_QUEUE_GEMM) {
                entered = duet__comm_drain<TRACE, DUET__COMM_BATCH(BM)>(p, idx, len, home, entered);
                break;
            }
            if constexpr (TRACE)
                duet__trace_begin(q, home, idx);
            if constexpr (BM > 0)
                duet__gemm_tile<BF16, BM, BN>(p, idx, smem);
            if constexpr (TRACE)
                duet__trace_end(p);
        }
    }
#if defined(DUET_GPU_NVIDIA)
    /* The epilogue's last TMA stores of C read this CTA's shared memory and write C: both must be
     * done before the CTA ends. */
    if constexpr (BM > 0)
        if (threadIdx.x == 0 && p.c_tma)
            duet__bulk_wait();
#endif
    if (comm_role)
        duet__cta_finish(p);
}

/* Threads of a persistent kernel with the GEMM tile: the tile threads, and on NVIDIA the
 * producer warpgroup of the wgmma tile. */
#define DUET__KERNEL_THREADS (DUET_THREADS + DUET_PRODUCER_THREADS)

/*
 * NVIDIA: the producer warpgroup (threads DUET_THREADS..) gives its registers to the consumers:
 * 384 threads start with 168 registers each (65536 / 384, rounded down to 8), and 128 x 24 +
 * 256 x 240 is the same total, so the two GEMM warpgroups keep nearly the 255 they had as a
 * 256-thread CTA (ptxas: the 128x256 tile's 128 accumulators per thread). One producer thread
 * loads; the others exit. Without TMA (kparams.tma == 0, the mma.sync tile) the producer has
 * nothing to do.
 */
template <bool BF16, int BM, int BN, bool TRACE>
__global__ void __launch_bounds__(DUET__KERNEL_THREADS, 1)
    duet__persistent_kernel(const __grid_constant__ duet__kparams_t p)
{
    extern __shared__ uint4 duet__smem_dyn[];
#if defined(DUET_GPU_NVIDIA)
    /* The wgmma tile's barriers, once per CTA, before either side uses them. */
    duet__wg_cta_init<BM, BN>();
    __syncthreads();
    if (threadIdx.x >= DUET_THREADS) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;" ::: "memory");
        /* The GEMM queue is this CTA's home, or it drains it after the comm queue. */
        const int home = duet__cta_home(p);
        if (threadIdx.x == DUET_THREADS && p.tma && (home == DUET_QUEUE_GEMM || duet__cta_nqueues(p) == 2))
            duet__wg_producer<BM, BN>(p, (uint8_t *)duet__smem_dyn, &p.ctl->queue[DUET_QUEUE_GEMM],
                                      home != DUET_QUEUE_GEMM);
        return;
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 240;" ::: "memory");
#endif
    duet__cta_run<BF16, BM, BN, TRACE>(p, (uint16_t *)duet__smem_dyn);
}

/*
 * Launch and set-up of the persistent kernels of one element type, for every tile of
 * duet_tile_get(). Instantiated once per element type (kernels_fp16.hip, kernels_bf16.hip).
 */
#define DUET__FOR_EACH_TILE(X)                                                                                         \
    X(256, 256) X(128, 256) X(256, 128) X(128, 128) X(256, 64) X(64, 128) X(64, 256) X(64, 64)

template <bool BF16>
static hipError_t duet__launch_persistent(const duet__kparams_t *p, duet_gemm_tile_t t, int grid, hipStream_t s)
{
#define DUET__LAUNCH_CASE(_bm, _bn)                                                                                    \
    if (t.bm == _bm && t.bn == _bn && t.bk == 64) {                                                                    \
        duet__kparams_t q = *p;                                                                                        \
        duet__tma_prepare(&q, duet__gemm_cfg<_bm, _bn>::PM, _bn);                                                      \
        if (q.trace != NULL)                                                                                           \
            duet__persistent_kernel<BF16, _bm, _bn, true>                                                              \
                <<<grid, DUET__KERNEL_THREADS, duet__tile_smem<_bm, _bn>::BYTES, s>>>(q);                              \
        else                                                                                                           \
            duet__persistent_kernel<BF16, _bm, _bn, false>                                                             \
                <<<grid, DUET__KERNEL_THREADS, duet__tile_smem<_bm, _bn>::BYTES, s>>>(q);                              \
        return hipGetLastError();                                                                                      \
    }
    DUET__FOR_EACH_TILE(DUET__LAUNCH_CASE)
#undef DUET__LAUNCH_CASE
    return hipErrorInvalidValue;
}

template <bool BF16> static hipError_t duet__kernels_init(void)
{
    hipError_t e = hipSuccess;
#define DUET__INIT_CASE(_bm, _bn)                                                                                      \
    if (e == hipSuccess)                                                                                               \
        e = hipFuncSetAttribute((const void *)duet__persistent_kernel<BF16, _bm, _bn, false>,                          \
                                hipFuncAttributeMaxDynamicSharedMemorySize, duet__tile_smem<_bm, _bn>::BYTES);         \
    if (e == hipSuccess)                                                                                               \
        e = hipFuncSetAttribute((const void *)duet__persistent_kernel<BF16, _bm, _bn, true>,                           \
                                hipFuncAttributeMaxDynamicSharedMemorySize, duet__tile_smem<_bm, _bn>::BYTES);
    DUET__FOR_EACH_TILE(DUET__INIT_CASE)
#undef DUET__INIT_CASE
    return e;
}

#endif /* DUET_BACKEND_KERNELS_H */
