/*
 * Fuzz the timeline loader (a measured trace, duet-trace/1): duet_trace_read_json(). A timeline
 * it accepts must draw (bounded for any value: issue 22's 1e999 makespan looped forever) and
 * survive a JSON round trip with the same records.
 */
#include <math.h>
#include <string.h>

#include "duet/duet.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char in[512], svg[512], out[512];
    fz_write("trace.json", data, size, in, sizeof(in));
    duet_trace_t t, back;
    if (duet_trace_read_json(in, &t) == DUET_OK) {
        FZ_ASSERT(isfinite(t.makespan_s) && t.makespan_s >= 0 && t.n_ctas >= 0);
        const duet_trace_t *one[1] = {&t};
        FZ_ASSERT(duet_trace_write_svg(one, 1, "fuzz", fz_path("trace.svg", svg, sizeof(svg))) == DUET_OK);
        FZ_ASSERT(duet_trace_write_json(&t, NULL, NULL, fz_path("back.json", out, sizeof(out))) == DUET_OK);
        FZ_ASSERT(duet_trace_read_json(out, &back) == DUET_OK);
        FZ_ASSERT(back.n == t.n);
        for (size_t i = 0; i < t.n; i++)
            FZ_ASSERT(back.recs[i].cta == t.recs[i].cta && back.recs[i].sm == t.recs[i].sm &&
                      back.recs[i].tile == t.recs[i].tile && back.recs[i].queue == t.recs[i].queue &&
                      back.recs[i].stolen == t.recs[i].stolen);
        duet_trace_free(&back);
        duet_trace_free(&t);
    }
    fz_clean();
    return 0;
}
