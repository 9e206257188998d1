/*
 * Fuzz the candidate-set loader: duet_tune_candset_load(). Every configuration of a set it accepts
 * must map to a device (duet_tune_cand_config()), and the set must save and load back.
 */
#include <string.h>

#include "duet/duet.h"
#include "duet/tune.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char in[512], out[512];
    fz_write("candset.json", data, size, in, sizeof(in));
    duet_tune_candset_t set, back;
    if (duet_tune_candset_load(in, &set) == DUET_OK) {
        duet_hw_t hw;
        FZ_ASSERT(duet_hw_builtin("h200", &hw) == DUET_OK);
        for (size_t a = 0; a < set.n_archs; a++) {
            FZ_ASSERT(duet_tune_candset_find(&set, set.archs[a].arch) != NULL);
            for (size_t i = 0; i < set.archs[a].n_order; i++) {
                duet_config_t c = duet_tune_cand_config(&set.archs[a].order[i], &hw, 0, 0, 0);
                FZ_ASSERT(c.gemm_wgs >= 0 && c.comm_wgs >= 0 && c.gemm_wgs <= hw.n_sms);
            }
        }
        FZ_ASSERT(duet_tune_candset_save(&set, NULL, 0, fz_path("back.json", out, sizeof(out))) == DUET_OK);
        FZ_ASSERT(duet_tune_candset_load(out, &back) == DUET_OK);
        FZ_ASSERT(back.n_archs == set.n_archs);
        for (size_t a = 0; a < set.n_archs; a++)
            FZ_ASSERT(back.archs[a].n_order == set.archs[a].n_order);
        duet_tune_candset_free(&back);
        duet_tune_candset_free(&set);
    }
    fz_clean();
    return 0;
}
