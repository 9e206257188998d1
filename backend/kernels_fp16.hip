/*
 * The persistent kernels for fp16 (one instance per GEMM tile). The bf16 set lives in its own
 * file so that the two compile in parallel.
 */
#include "backend/kernels.h"

hipError_t duet__launch_persistent_fp16(const duet__kparams_t *p, duet_gemm_tile_t tile, int grid, hipStream_t s)
{
    return duet__launch_persistent<false>(p, tile, grid, s);
}

hipError_t duet__kernels_init_fp16(void)
{
    return duet__kernels_init<false>();
}
