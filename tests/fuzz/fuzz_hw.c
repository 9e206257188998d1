/*
 * Fuzz the hardware-profile loader (JSON): duet_hw_from_json(). A profile it accepts must
 * validate and survive a round trip through duet_hw_to_json() unchanged.
 */
#include <string.h>

#include "duet/duet.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_text(data, size);
    duet_hw_t hw, back;
    if (duet_hw_from_json(text, "fuzz.json", &hw) == DUET_OK) {
        FZ_ASSERT(duet_hw_validate(&hw) == DUET_OK);
        char *json = NULL;
        FZ_ASSERT(duet_hw_to_json(&hw, &json) == DUET_OK);
        FZ_ASSERT(duet_hw_from_json(json, "round-trip.json", &back) == DUET_OK);
        char *again = NULL;
        FZ_ASSERT(duet_hw_to_json(&back, &again) == DUET_OK);
        FZ_ASSERT(strcmp(json, again) == 0);
        free(again);
        free(json);
    }
    free(text);
    return 0;
}
