/*
 * Timelines in the Chrome trace event format (the JSON object form with "traceEvents"), which
 * Perfetto's UI and chrome://tracing open beside an Nsight Systems or rocprof export. Each timeline
 * is one process (pid 1, 2, ... in the order given: "predicted", "measured", ...), each CTA one
 * thread of it, each tile one complete event ("ph": "X") with its queue, tile id, SM and steal as
 * args. Times are microseconds, the format's unit.
 */
#include <string.h>

#include "base/base.h"
#include "sim/internal.h"

duet_status_t duet_trace_write_chrome(const duet_trace_t *const *traces, int n, const char *path)
{
    if (traces == NULL || n < 1)
        return duet__error(DUET_ERR_INVALID_ARG, "chrome trace: no timeline to write");
    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__sbuf_printf(&b, "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"schema\": \"duet-chrome-trace/1\"},\n"
                          " \"traceEvents\": [");
    const char *sep = "\n  ";
    for (int t = 0; t < n; t++) {
        const duet_trace_t *tr = traces[t];
        const int pid = t + 1;
        /* Metadata: the process is the timeline, sorted in the order given; its threads are CTAs. */
        duet__sbuf_printf(&b,
                          "%s{\"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"name\": \"process_name\", \"args\": "
                          "{\"name\": ",
                          sep, pid);
        duet__json_str(&b, tr->label[0] ? tr->label : "timeline");
        duet__sbuf_printf(&b, "}}");
        sep = ",\n  ";
        duet__sbuf_printf(&b,
                          "%s{\"ph\": \"M\", \"pid\": %d, \"tid\": 0, \"name\": \"process_sort_index\", "
                          "\"args\": {\"sort_index\": %d}}",
                          sep, pid, pid);
        for (int32_t cta = 0; cta < tr->n_ctas; cta++)
            duet__sbuf_printf(&b,
                              "%s{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_name\", \"args\": "
                              "{\"name\": \"CTA %d\"}}",
                              sep, pid, cta, cta);
        for (size_t i = 0; i < tr->n; i++) {
            const duet_trace_rec_t *r = &tr->recs[i];
            const int gemm = r->queue == DUET_QUEUE_GEMM;
            duet__sbuf_printf(&b,
                              "%s{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"name\": \"%s %lld\", \"cat\": \"%s\", "
                              "\"ts\": %.4f, \"dur\": %.4f, \"args\": {\"queue\": \"%s\", \"tile\": %lld, \"sm\": %d, "
                              "\"stolen\": %d}}",
                              sep, pid, r->cta, gemm ? "GEMM" : "comm", (long long)r->tile, gemm ? "gemm" : "comm",
                              r->start_s * 1e6, (r->end_s - r->start_s) * 1e6, gemm ? "gemm" : "comm",
                              (long long)r->tile, r->sm, r->stolen);
        }
    }
    duet__sbuf_printf(&b, "\n]}\n");
    return duet__sbuf_write(&b, path);
}
