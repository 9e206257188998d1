/*
 * Timelines with hostile numbers: the trace loader checks every value it reads (finite, in range,
 * an integer where it becomes one), and the SVG writers end for any input. Issue 22: a measured
 * timeline with "makespan_us": 1e999 (infinity, to cJSON) made `duet simulate --svg --measured`
 * add an infinite tick step forever, its memory growing.
 */
#include <criterion/criterion.h>
#include <float.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cli_run.h"
#include "../test_util.h"

/* A temporary folder per test (each Criterion test runs in its own process). */
static char dir[64];
static char *tmp_path(const char *name)
{
    static char path[128];
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "/tmp/duet-trace-bounds-XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return path;
}
static void tmp_clean(void)
{
    if (dir[0] == '\0')
        return;
    const char *names[] = {"t.json", "t.svg", "c.svg"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        unlink(tmp_path(names[i]));
    rmdir(dir);
    dir[0] = '\0';
}

TestSuite(trace_bounds, .fini = tmp_clean, .timeout = 20);

/* Write a timeline file: `head` goes before "tiles", `tile` is the one record. */
static duet_status_t read_trace(const char *head, const char *tile, duet_trace_t *t)
{
    const char *path = tmp_path("t.json");
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fprintf(f, "{\"schema\": \"duet-trace/1\", \"label\": \"m\", %s \"tiles\": [%s]}", head, tile);
    fclose(f);
    return duet_trace_read_json(path, t);
}

#define GOOD_TILE                                                                                                      \
    "{\"cta\": 3, \"sm\": 7, \"queue\": \"gemm\", \"tile\": 12, \"start_us\": 1.5, \"end_us\": 4, \"stolen\": true}"

Test(trace_bounds, a_valid_timeline_reads_back)
{
    duet_trace_t t;
    cr_assert_eq(read_trace("\"makespan_us\": 5,", GOOD_TILE, &t), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(t.n, 1);
    cr_assert(t.recs[0].cta == 3 && t.recs[0].sm == 7 && t.recs[0].tile == 12 && t.recs[0].stolen == 1);
    /* Microseconds in the file, seconds in memory (x 1e-6, exact to the last bit or so). */
    cr_assert(t_rel_eq(t.recs[0].start_s, 1.5e-6, 1e-15) && t_rel_eq(t.recs[0].end_s, 4e-6, 1e-15) &&
              t_rel_eq(t.makespan_s, 5e-6, 1e-15));
    cr_assert_eq(t.n_ctas, 4);
    duet_trace_free(&t);
    /* Without makespan_us, the last end. */
    cr_assert_eq(read_trace("", GOOD_TILE, &t), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(t.makespan_s, 4e-6, 1e-15));
    duet_trace_free(&t);
}

/* The input, and every other makespan that is not a time. */
Test(trace_bounds, makespan_must_be_a_finite_time)
{
    const char *bad[] = {"\"makespan_us\": 1e999,", "\"makespan_us\": -1e999,", "\"makespan_us\": -1,",
                         "\"makespan_us\": 1e16,",  "\"makespan_us\": \"5\",",  "\"makespan_us\": null,"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        duet_trace_t t;
        cr_assert_eq(read_trace(bad[i], GOOD_TILE, &t), DUET_ERR_PARSE, "%s", bad[i]);
        cr_assert(strstr(duet_last_error(), "makespan_us") != NULL, "%s", duet_last_error());
    }
}

/* Every numeric field of a record: out of range, not an integer where one is cast to an integer
 * (a double beyond int32 or int64 cast to it is undefined behaviour), or not finite. */
Test(trace_bounds, every_record_field_is_checked_before_it_is_cast)
{
    static const struct {
        const char *tile, *field;
    } bad[] = {
        {"{\"cta\": -1, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 0, \"end_us\": 1}", "cta"},
        {"{\"cta\": 1.5, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 0, \"end_us\": 1}", "cta"},
        {"{\"cta\": 1e7, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 0, \"end_us\": 1}", "cta"},
        {"{\"cta\": 0, \"sm\": 1e30, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 0, \"end_us\": 1}", "sm"},
        {"{\"cta\": 0, \"sm\": -3, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 0, \"end_us\": 1}", "sm"},
        {"{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 1e19, \"start_us\": 0, \"end_us\": 1}", "tile"},
        {"{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", \"tile\": -1, \"start_us\": 0, \"end_us\": 1}", "tile"},
        {"{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0.5, \"start_us\": 0, \"end_us\": 1}", "tile"},
        {"{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": -1, \"end_us\": 1}", "start_us"},
        {"{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": -1e999, \"end_us\": 1}", "start_us"},
        {"{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 0, \"end_us\": 1e999}", "end_us"},
        {"{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 0, \"end_us\": 2e15}", "end_us"},
        {"{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 5, \"end_us\": 4}", "end_us"},
        {"{\"cta\": 0, \"queue\": \"gemm\", \"tile\": 0, \"start_us\": 0, \"end_us\": 1}", "sm"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        duet_trace_t t;
        cr_assert_eq(read_trace("", bad[i].tile, &t), DUET_ERR_PARSE, "%s", bad[i].tile);
        cr_assert(strstr(duet_last_error(), bad[i].field) != NULL, "%s: %s", bad[i].tile, duet_last_error());
    }
    /* The largest values in range still read: CTA and SM 10^6, tile 2^53, times 10^15 us. */
    duet_trace_t t;
    cr_assert_eq(read_trace("\"makespan_us\": 1e15,",
                            "{\"cta\": 1000000, \"sm\": 1000000, \"queue\": \"comm\", \"tile\": 9007199254740992, "
                            "\"start_us\": 0, \"end_us\": 1e15}",
                            &t),
                 DUET_OK, "%s", duet_last_error());
    cr_assert(t.recs[0].cta == 1000000 && t.recs[0].tile == INT64_C(9007199254740992) && t.recs[0].queue == 1);
    duet_trace_free(&t);
}

/* Count the occurrences of `needle` in a file (the SVGs here are a few KB). */
static int count_in_file(const char *path, const char *needle)
{
    static char buf[1 << 20];
    t_cli_slurp(path, buf, sizeof(buf));
    int count = 0;
    for (const char *p = buf; (p = strstr(p, needle)) != NULL; p++)
        count++;
    return count;
}

/*
 * The Gantt chart ends for any timeline the API can hold, read or not: an infinite, NaN, huge or
 * zero makespan. The grid has 1 + floor(span / step) lines, at most 101.
 */
Test(trace_bounds, the_gantt_chart_ends_for_any_makespan)
{
    const double makespans[] = {INFINITY, NAN, 1e300, DBL_MAX, 0, 1e-300, 4e-6};
    for (size_t i = 0; i < sizeof(makespans) / sizeof(makespans[0]); i++) {
        duet_trace_t t;
        duet_trace_init(&t, "m");
        duet_trace_rec_t r = {0, 0, DUET_QUEUE_GEMM, 0, 0, 1e-6, 3e-6};
        cr_assert_eq(duet_trace_add(&t, &r), DUET_OK);
        t.n_ctas = 1;
        t.makespan_s = makespans[i];
        const duet_trace_t *one[1] = {&t};
        cr_assert_eq(duet_trace_write_svg(one, 1, "t", tmp_path("t.svg")), DUET_OK, "%s", duet_last_error());
        int lines = count_in_file(tmp_path("t.svg"), "stroke=\"#ddd\"");
        cr_assert(lines >= 1 && lines <= 101, "makespan %g: %d grid lines", makespans[i], lines);
        duet_trace_free(&t);
    }
    /* 4 us: a step of 0.5 us (about 10 ticks), so 0, 0.5, ..., 4: 9 lines. */
    cr_assert_eq(count_in_file(tmp_path("t.svg"), "stroke=\"#ddd\""), 9);
}

/*
 * The split curve's y axis: two makespans one unit in the last place apart (1e4 s and the next
 * double). The step (2e-10 ms) is below the resolution of 1e7 ms (1.9e-9), so adding it to a
 * running value never moved it: the old loop did not end.
 */
Test(trace_bounds, the_split_curve_ends_when_the_step_is_below_the_resolution)
{
    duet_sweep_point_t pts[2];
    memset(pts, 0, sizeof(pts));
    duet_hw_t hw = t_hw("h200");
    for (int i = 0; i < 2; i++) {
        pts[i].cfg = duet_config_default(&hw, DUET_MODE_FUSED);
        pts[i].cfg.gemm_wgs = 50 + i;
    }
    pts[0].makespan_s = 1e4;
    pts[1].makespan_s = nextafter(1e4, 2e4);
    duet_sweep_result_t res;
    memset(&res, 0, sizeof(res));
    res.points = pts;
    res.n = 2;
    res.dflt = pts[0];
    res.default_rank = 1;
    cr_assert_eq(duet_sweep_write_svg(&res, "t", tmp_path("c.svg")), DUET_OK, "%s", duet_last_error());
    int lines = count_in_file(tmp_path("c.svg"), "stroke=\"#e3e3e3\"");
    cr_assert(lines >= 2 && lines <= 202, "%d grid lines", lines);
    /* Infinite and NaN makespans (no simulation gives them; the writer must still end). */
    pts[1].makespan_s = INFINITY;
    cr_assert_eq(duet_sweep_write_svg(&res, "t", tmp_path("c.svg")), DUET_OK);
    pts[1].makespan_s = NAN;
    cr_assert_eq(duet_sweep_write_svg(&res, "t", tmp_path("c.svg")), DUET_OK);
}

/* A timeline holds at most DUET_TRACE_MAX_RECORDS tiles, added or read. */
Test(trace_bounds, a_timeline_holds_at_most_the_record_limit)
{
    duet_trace_t t;
    duet_trace_init(&t, "big");
    duet_trace_rec_t r = {0, 0, DUET_QUEUE_COMM, 0, 0, 0, 1e-6};
    for (int64_t i = 0; i < DUET_TRACE_MAX_RECORDS; i++) {
        r.tile = i;
        cr_assert_eq(duet_trace_add(&t, &r), DUET_OK);
    }
    cr_assert_eq(duet_trace_add(&t, &r), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "DUET_TRACE_MAX_RECORDS") != NULL, "%s", duet_last_error());
    cr_assert_eq(t.n, (size_t)DUET_TRACE_MAX_RECORDS);
    duet_trace_free(&t);
    /* A simulation whose timeline would pass it fails with that error, not after writing it:
     * 2048 x 2048 comm tiles of 1 x 8 is 2^22 records. */
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 2048, 16384, 2);
    duet_config_t c = duet_config_default(&hw, DUET_MODE_FUSED);
    c.cm = 1;
    c.cn = 8;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &c, 0, &p), DUET_OK, "%s", duet_last_error());
    duet_sim_ws_t *ws;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    duet_sim_result_t res;
    duet_trace_init(&t, "big");
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, &t, &res), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "DUET_TRACE_MAX_RECORDS") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &p, NULL, &res), DUET_OK, "without a timeline it runs");
    duet_trace_free(&t);
    duet_sim_ws_destroy(ws);
}

/*
 * What the writer writes, the reader reads (found by tests/fuzz/fuzz_trace.c): a label with a
 * newline or a quote was written raw, so the file was not JSON; and a time at the 1e15 us bound,
 * through seconds and back, came out a rounding above it.
 */
Test(trace_bounds, every_timeline_read_writes_back_readable)
{
    duet_trace_t t, back;
    duet_trace_init(&t, "a \"quoted\"\nlabel\\\t\x01");
    duet_trace_rec_t r = {2, 3, DUET_QUEUE_GEMM, 0, 7, 0.5e9, 1e9};
    cr_assert_eq(duet_trace_add(&t, &r), DUET_OK);
    t.n_ctas = 3;
    t.makespan_s = 1e9; /* 1e15 us, the bound */
    duet_hw_t hw = t_hw("h200");
    snprintf(hw.name, sizeof(hw.name), "my \"h200\"\n");
    cr_assert_eq(duet_trace_write_json(&t, NULL, &hw, tmp_path("t.json")), DUET_OK);
    for (int round = 0; round < 3; round++) {
        cr_assert_eq(duet_trace_read_json(tmp_path("t.json"), &back), DUET_OK, "round %d: %s", round,
                     duet_last_error());
        cr_assert_str_eq(back.label, t.label);
        cr_assert(back.n == 1 && back.recs[0].tile == 7 && t_rel_eq(back.makespan_s, 1e9, 1e-12));
        cr_assert_eq(duet_trace_write_json(&back, NULL, NULL, tmp_path("t.json")), DUET_OK);
        duet_trace_free(&back);
    }
    duet_trace_free(&t);
}
