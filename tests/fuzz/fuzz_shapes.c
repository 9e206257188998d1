/*
 * Fuzz the shape-file loader: duet_workloads_load(). The first byte picks the world size (1 to
 * 8) and the default dtype; every workload it accepts must be valid and plan under the default
 * configuration of the h200 profile or be refused with an error, never crash.
 */
#include <string.h>

#include "duet/duet.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int32_t world = 1 + data[0] % 8, dtype = (data[0] >> 3) & 1;
    char in[512];
    fz_write("shapes.txt", data + 1, size - 1, in, sizeof(in));
    duet_workloads_t w;
    if (duet_workloads_load(in, world, dtype, &w) == DUET_OK) {
        duet_hw_t hw;
        FZ_ASSERT(duet_hw_builtin("h200", &hw) == DUET_OK);
        FZ_ASSERT(w.n > 0);
        for (size_t i = 0; i < w.n; i++) {
            FZ_ASSERT(duet_workload_validate(&w.w[i]) == DUET_OK);
            duet_config_t c = duet_config_default(&hw, DUET_MODE_FUSED);
            duet_plan_t p;
            if (duet_plan_build_queues(&w.w[i], &c, duet_plan_critical_rank(&w.w[i]), &p) == DUET_OK)
                FZ_ASSERT(p.gemm.tiles <= DUET_MAX_GEMM_TILES && p.comm.queue_len <= DUET_MAX_COMM_TILES);
        }
        duet_workloads_free(&w);
    }
    fz_clean();
    return 0;
}
