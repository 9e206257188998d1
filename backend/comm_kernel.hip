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

/*
 * Copy mode's gate: the copy engines cannot take part in the flag protocol, so one CTA does it for
 * them, in stream order around the copies. The entry gate's wait is bounded as every wait is; when
 * it fails the error is recorded and the exit gate does not signal departure, so the peers time
 * out too and the operation reports the failure (a copy the host has queued still runs: the copy
 * engines cannot skip it the way a comm CTA skips its remote work after an abort).
 */
__global__ void __launch_bounds__(DUET_THREADS)
    duet__copy_gate_kernel(const __grid_constant__ duet__kparams_t p, int phase)
{
    if (threadIdx.x < (int)(sizeof(duet__ctl_t) / sizeof(uint32_t)))
        ((uint32_t *)p.ctl_next)[threadIdx.x] = 0u;
    if (threadIdx.x != 0)
        return;
    if (phase == DUET__PHASE_ENTRY) {
        duet__signal_arrival(p);
        (void)duet__wait_all(p, DUET__FLAG_ARRIVE, DUET__PHASE_ENTRY);
        return;
    }
    /* The copies before this kernel on its stream have completed; order their writes before the
     * departure the peers observe. An aborted operation does not claim to be done. */
    __threadfence_system();
    if (duet_dev_load_acquire_gpu(&p.ctl->abort))
        return;
    for (int q = 0; q < p.world; q++)
        duet_dev_store_release_sys(duet__peer_ptr(p, p.flags + DUET__FLAG_DEPART + p.rank, q), p.epoch);
    (void)duet__wait_all(p, DUET__FLAG_DEPART, DUET__PHASE_EXIT);
}

hipError_t duet__launch_copy_gate(const duet__kparams_t *p, int phase, hipStream_t s)
{
    duet__copy_gate_kernel<<<1, DUET_THREADS, 0, s>>>(*p, phase);
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
