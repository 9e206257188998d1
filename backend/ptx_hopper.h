/*
 * Inline PTX wrappers of the Hopper (sm_90a) instructions the wgmma GEMM tile uses (gemm_hopper.h)
 * and the K split's bulk sum (splitk.h): mbarriers, TMA and bulk copies, proxy fences, the wgmma
 * group fences and waits, and the shared-memory matrix descriptor. One function per instruction,
 * with no policy of its own: the pipeline that orders them is gemm_hopper.h's. The wgmma.mma_async
 * instructions themselves are generated into wgmma.h (tools/gen_wgmma.py).
 */
#ifndef DUET_BACKEND_PTX_HOPPER_H
#define DUET_BACKEND_PTX_HOPPER_H

#include <stdint.h>

#include "backend/gpu.h"

#if defined(DUET_GPU_NVIDIA)

__device__ static inline uint32_t duet__smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ static inline void duet__mbar_init(uint64_t *bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(duet__smem_addr(bar)), "r"(count) : "memory");
}

__device__ static inline void duet__mbar_arrive(uint64_t *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(duet__smem_addr(bar)) : "memory");
}

/* Arrive once and announce `bytes` of asynchronous (TMA) transactions for the current phase. */
__device__ static inline void duet__mbar_expect_tx(uint64_t *bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(duet__smem_addr(bar)), "r"(bytes)
                 : "memory");
}

/* Wait for the completion of the phase with parity `parity`. These waits only depend on this
 * CTA's own copies and threads, so they are not bounded (a hang here is a bug, not a peer). */
__device__ static inline void duet__mbar_wait(uint64_t *bar, uint32_t parity)
{
    const uint32_t a = duet__smem_addr(bar);
    uint32_t done;
    do {
        asm volatile("{\n.reg .pred p;\n"
                     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                     "selp.u32 %0, 1, 0, p;\n}"
                     : "=r"(done)
                     : "r"(a), "r"(parity)
                     : "memory");
    } while (!done);
}

/* TMA: box (c0 = k, c1 = row) of a 2-D tensor map into shared memory, completing on `bar`.
 * Elements outside the tensor arrive as zeros and still count towards the box's bytes. */
__device__ static inline void duet__tma_load_2d(void *dst, const void *tmap, int32_t c0, int32_t c1, uint64_t *bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];" ::"r"(duet__smem_addr(dst)),
                 "l"(tmap), "r"(c0), "r"(c1), "r"(duet__smem_addr(bar))
                 : "memory");
}

/* Bulk copy of `bytes` (a multiple of 16, both addresses 16-byte aligned) from global memory into
 * shared memory, completing on `bar`. */
__device__ static inline void duet__bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     duet__smem_addr(dst)),
                 "l"(src), "r"(bytes), "r"(duet__smem_addr(bar))
                 : "memory");
}

/* TMA store: box (c0 = column, c1 = row) of C's tensor map from shared memory, in this thread's
 * current bulk group. Elements outside C are not written. */
__device__ static inline void duet__tma_store_2d(const void *tmap, const void *src, int32_t c0, int32_t c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(tmap),
                 "r"(duet__smem_addr(src)), "r"(c0), "r"(c1)
                 : "memory");
}

__device__ static inline void duet__bulk_commit(void)
{
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

/* This thread's bulk groups have read their shared-memory sources (they may still be writing). */
__device__ static inline void duet__bulk_wait_read(void)
{
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

/* This thread's bulk groups are complete: their writes are done. */
__device__ static inline void duet__bulk_wait(void)
{
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

/* Order this thread's earlier generic-proxy shared-memory accesses before later TMA writes. */
__device__ static inline void duet__fence_proxy_async(void)
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ static inline void duet__wgmma_fence(void)
{
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

__device__ static inline void duet__wgmma_commit(void)
{
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

template <int N> __device__ static inline void duet__wgmma_wait(void)
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/* Keep the compiler from moving accumulator reads or writes across an asynchronous wgmma. */
template <int R> __device__ static inline void duet__fence_regs(float (&d)[R])
{
#pragma unroll
    for (int i = 0; i < R; i++)
        asm volatile("" : "+f"(d[i])::"memory");
}

/*
 * Shared-memory matrix descriptor of a K-major operand with the 128-byte swizzle, as TMA wrote
 * it: rows of 128 bytes, 8-row (1024-byte) swizzle atoms one after the other, so the stride
 * between 8-row groups is 1024 bytes; the leading offset is unused for this layout (1 by
 * convention). A k16 step inside the 128-byte row moves the start address by 32 bytes; the
 * hardware applies the swizzle on the address bits, so the atoms must be 1024-byte aligned.
 */
__device__ static inline uint64_t duet__wg_desc(uint32_t saddr)
{
    return (uint64_t)((saddr & 0x3FFFF) >> 4) | (1ull << 16) | ((uint64_t)(1024 >> 4) << 32) | (1ull << 62);
}

/* Make this thread's mbarrier initialisations visible to the other proxies (the TMA unit) of the
 * cluster, before any copy completes on them. */
__device__ static inline void duet__fence_mbar_init(void)
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* Order this thread's earlier generic-proxy accesses to any state space (global memory included)
 * before its later async-proxy (bulk copy) accesses. */
__device__ static inline void duet__fence_proxy_async_all(void)
{
    asm volatile("fence.proxy.async;" ::: "memory");
}

#endif /* DUET_GPU_NVIDIA */
#endif /* DUET_BACKEND_PTX_HOPPER_H */
