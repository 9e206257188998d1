/*
 * The persistent kernels for bf16 (one instance per GEMM tile).
 */
#include "backend/kernels.h"

hipError_t duet__launch_persistent_bf16(const duet__kparams_t *p, duet_gemm_tile_t tile, int grid, hipStream_t s)
{
    return duet__launch_persistent<true>(p, tile, grid, s);
}

hipError_t duet__kernels_init_bf16(void)
{
    return duet__kernels_init<true>();
}
