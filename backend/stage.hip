/*
 * Operand staging (duet_plan_t.stage_k): A (M x K) and B (N x K), K contiguous, copied into one
 * workspace with rows of stage_k elements (K rounded up to 64: every row starts on 128 bytes),
 * zero-filled beyond K, so that the GEMM kernels can use their 16-byte copies and tensor-memory
 * loads at full rate (model/plan.c says which K are staged and why). The zeros add nothing to any
 * sum: C is the same as from the operands in place.
 */
#include "backend/ctx.h"

/*
 * One thread per 16-byte chunk of the workspace: rows 0..M-1 are A's, rows M..M+N-1 B's.
 * VEC (K % 8 == 0): the source rows start on 16 bytes, and a chunk lies wholly inside K or
 * wholly beyond it, so it is one 16-byte load or zeros. Otherwise the source rows start
 * anywhere (2 K bytes apart) and the thread reads its 8 elements one by one; neighbouring threads
 * read neighbouring elements of a row, so the reads still coalesce.
 */
template <bool VEC>
__global__ void __launch_bounds__(256)
    duet__stage_kernel(const uint16_t *__restrict__ a, const uint16_t *__restrict__ b, uint4 *__restrict__ ws,
                       int64_t m, int64_t n, int64_t k, int64_t stage_k)
{
    const int64_t chunks = stage_k / 8; /* per row */
    const int64_t total = (m + n) * chunks;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t row = i / chunks, c0 = (i % chunks) * 8;
        const uint16_t *src = row < m ? a + row * k : b + (row - m) * k;
        if constexpr (VEC) {
            ws[i] = c0 < k ? *(const uint4 *)(src + c0) : make_uint4(0, 0, 0, 0);
        } else {
            uint32_t w[4];
            for (int j = 0; j < 4; j++) {
                uint32_t lo = c0 + 2 * j < k ? src[c0 + 2 * j] : 0;
                uint32_t hi = c0 + 2 * j + 1 < k ? src[c0 + 2 * j + 1] : 0;
                w[j] = lo | (hi << 16);
            }
            ws[i] = make_uint4(w[0], w[1], w[2], w[3]);
        }
    }
}

hipError_t duet__stage_launch(const duet_plan_t *plan, const void *a, const void *b, void *ws, int n_sms, hipStream_t s)
{
    const int64_t total = (plan->wl.m + plan->wl.n) * (plan->stage_k / 8);
    /* Enough 256-thread blocks to fill every SM several times over; the loop covers the rest. */
    int64_t blocks = (total + 255) / 256;
    const int64_t cap = (int64_t)(n_sms > 0 ? n_sms : 1) * 16;
    if (blocks > cap)
        blocks = cap;
    /* 16-byte loads need 16-byte aligned bases too (duet_op_t allows any even address). */
    const bool vec = plan->wl.k % 8 == 0 && ((uintptr_t)a | (uintptr_t)b) % 16 == 0;
    if (vec)
        duet__stage_kernel<true><<<(unsigned)blocks, 256, 0, s>>>((const uint16_t *)a, (const uint16_t *)b, (uint4 *)ws,
                                                                  plan->wl.m, plan->wl.n, plan->wl.k, plan->stage_k);
    else
        duet__stage_kernel<false><<<(unsigned)blocks, 256, 0, s>>>(
            (const uint16_t *)a, (const uint16_t *)b, (uint4 *)ws, plan->wl.m, plan->wl.n, plan->wl.k, plan->stage_k);
    return hipGetLastError();
}
