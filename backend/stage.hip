/*
 * Operand staging (duet_plan_t.stage_k): A (M x K) and B (N x K), K contiguous, copied into one
 * workspace with rows of stage_k elements (K rounded up to 64: every row starts on 128 bytes),
 * zero-filled beyond K, so that the GEMM kernels can use their 16-byte copies and tensor-memory
 * loads at full rate (model/plan.c says which K are staged and why). The zeros add nothing to any
 * sum: C is the same as from the operands in place.
 */
#include "backend/ctx.h"

/* Threads that copy one row together (a warp on NVIDIA, half a wavefront on AMD). */
#define DUET__STAGE_GROUP 32

/*
 * Rows 0..M-1 of the workspace are A's, rows M..M+N-1 B's. A group of DUET__STAGE_GROUP threads
 * copies a row at a time, its 16-byte chunks to the threads in turn: 32 neighbouring chunks (512
 * bytes) a step, so the loads and stores coalesce and no thread divides (a 64-bit division per
 * chunk, as a flat index would need, costs about as much as the copy's memory time on large
 * operands). VEC (K % 8 == 0, bases on 16 bytes): a chunk lies wholly inside K or wholly beyond
 * it, one 16-byte load or zeros. Otherwise the source rows start anywhere (2 K bytes apart) and
 * each thread reads its 8 elements one by one; neighbouring threads read neighbouring elements.
 */
template <bool VEC>
__global__ void __launch_bounds__(256)
    duet__stage_kernel(const uint16_t *__restrict__ a, const uint16_t *__restrict__ b, uint4 *__restrict__ ws,
                       int64_t m, int64_t n, int64_t k, int64_t stage_k)
{
    constexpr int G = DUET__STAGE_GROUP;
    const int64_t chunks = stage_k / 8; /* per row */
    const int64_t groups = (int64_t)gridDim.x * (blockDim.x / G);
    const int lane = (int)(threadIdx.x % G);
    for (int64_t row = (int64_t)blockIdx.x * (blockDim.x / G) + threadIdx.x / G; row < m + n; row += groups) {
        const uint16_t *src = row < m ? a + row * k : b + (row - m) * k;
        uint4 *dst = ws + row * chunks;
        for (int64_t c = lane; c < chunks; c += G) {
            const int64_t c0 = c * 8;
            if constexpr (VEC) {
                dst[c] = c0 < k ? *(const uint4 *)(src + c0) : make_uint4(0, 0, 0, 0);
            } else {
                uint32_t w[4];
                for (int j = 0; j < 4; j++) {
                    uint32_t lo = c0 + 2 * j < k ? src[c0 + 2 * j] : 0;
                    uint32_t hi = c0 + 2 * j + 1 < k ? src[c0 + 2 * j + 1] : 0;
                    w[j] = lo | (hi << 16);
                }
                dst[c] = make_uint4(w[0], w[1], w[2], w[3]);
            }
        }
    }
}

hipError_t duet__stage_launch(const duet_plan_t *plan, const void *a, const void *b, void *ws, int n_sms, hipStream_t s)
{
    /* A block's 256 threads copy 8 rows at a time; enough blocks to fill every SM several times
     * over, the loop covers the rest. */
    int64_t blocks = (plan->wl.m + plan->wl.n + 256 / DUET__STAGE_GROUP - 1) / (256 / DUET__STAGE_GROUP);
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
