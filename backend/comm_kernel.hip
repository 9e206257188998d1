/*
 * The comm kernel of concurrent mode: the persistent loop without the GEMM tile, so its CTAs
 * need no shared-memory stages. The element type is a run-time argument here (only reductions
 * convert, and their batched loops branch on it once per tile: comm_tile.h), so one instance
 * serves fp16 and bf16.
 */
#include "backend/kernels.h"

template <bool TRACE>
__global__ void __launch_bounds__(DUET_THREADS) duet__comm_kernel(const __grid_constant__ duet__kparams_t p)
{
    duet__cta_run<false, 0, 0, TRACE>(p, nullptr);
}

hipError_t duet__launch_comm(const duet__kparams_t *p, int grid, hipStream_t s)
{
    if (p->trace != NULL)
        duet__comm_kernel<true><<<grid, DUET_THREADS, 0, s>>>(*p);
    else
        duet__comm_kernel<false><<<grid, DUET_THREADS, 0, s>>>(*p);
    return hipGetLastError();
}

size_t duet__gemm_smem_bytes(duet_gemm_tile_t t)
{
#define DUET__SMEM_CASE(_bm, _bn)                                                                                      \
    if (t.bm == _bm && t.bn == _bn && t.bk == 64)                                                                      \
        return (size_t)duet__tile_smem<_bm, _bn>::BYTES;
    DUET__FOR_EACH_TILE(DUET__SMEM_CASE)
#undef DUET__SMEM_CASE
    return 0;
}
