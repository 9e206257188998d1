/*
 * Fuzz the candidates file of `duet calibrate select` (duet_cal_candidates_load). Every candidate
 * of a file it accepts has a valid unique name, 1 to DUET_CAL_MAX_PARAMS distinct fitted constants
 * and start values within their fields' bounds, and its start profile validates with every fitted
 * constant positive (what the fit needs: it fits logarithms).
 */
#include <math.h>
#include <string.h>

#include "duet/calibrate.h"
#include "duet/duet.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static duet_hw_t base;
    static int have_base;
    if (!have_base) {
        FZ_ASSERT(duet_hw_builtin("h200", &base) == DUET_OK);
        have_base = 1;
    }
    char in[512];
    fz_write("candidates.txt", data, size, in, sizeof(in));
    static duet_cal_candidates_t set;
    if (duet_cal_candidates_load(in, &base, &set) == DUET_OK) {
        FZ_ASSERT(set.n >= 1 && set.n <= DUET_CAL_MAX_CANDIDATES);
        for (int32_t i = 0; i < set.n; i++) {
            const duet_cal_candidate_t *c = &set.c[i];
            size_t len = strnlen(c->name, sizeof(c->name));
            FZ_ASSERT(len >= 1 && len < sizeof(c->name));
            for (int32_t j = 0; j < i; j++)
                FZ_ASSERT(strcmp(set.c[j].name, c->name) != 0);
            FZ_ASSERT(c->line >= 1);
            FZ_ASSERT(c->n_fit >= 1 && c->n_fit <= DUET_CAL_MAX_PARAMS);
            FZ_ASSERT(c->n_set >= 0 && c->n_set <= DUET_CAL_MAX_PARAMS);
            for (int32_t j = 0; j < c->n_fit; j++) {
                FZ_ASSERT(c->fit[j] >= 0 && c->fit[j] < DUET_HW_NFIELDS);
                for (int32_t k = 0; k < j; k++)
                    FZ_ASSERT(c->fit[k] != c->fit[j]);
            }
            for (int32_t j = 0; j < c->n_set; j++) {
                FZ_ASSERT(c->set_field[j] >= 0 && c->set_field[j] < DUET_HW_NFIELDS);
                const duet_hw_field_info_t *fi = duet_hw_field_info(c->set_field[j]);
                FZ_ASSERT(isfinite(c->set_value[j]) && c->set_value[j] >= fi->min && c->set_value[j] <= fi->max);
            }
            duet_hw_t hw;
            duet_cal_candidate_hw(c, &base, &hw);
            for (int32_t j = 0; j < c->n_fit; j++)
                FZ_ASSERT(duet_hw_get(&hw, c->fit[j]) > 0);
        }
    }
    fz_clean();
    return 0;
}
