/*
 * The timeline writer refuses times it cannot print as JSON numbers the reader takes back: an
 * infinite or NaN time would be printed by "%.6f" as "inf" or "nan" (not JSON), a negative one or
 * one past 1e15 us as a number the reader rejects. Such a timeline writes no file at all.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/duet.h"

TestSuite(trace_write, .timeout = 20);

/* One GEMM tile from start_s to end_s (seconds) on CTA 0, makespan `mk` seconds. */
static void one_tile(duet_trace_t *t, double start_s, double end_s, double mk)
{
    duet_trace_init(t, "hostile");
    duet_trace_rec_t r = {0, 0, DUET_QUEUE_GEMM, 0, 0, start_s, end_s};
    cr_assert_eq(duet_trace_add(t, &r), DUET_OK);
    t->n_ctas = 1;
    t->makespan_s = mk;
}

/* Writing `t` fails with DUET_ERR_INVALID_ARG, names `what`, and leaves no file. */
static void refused(duet_trace_t *t, const char *what)
{
    char path[256];
    t_tmp_path(path, sizeof(path), "trace-refused.json");
    unlink(path);
    cr_assert_eq(duet_trace_write_json(t, NULL, NULL, path), DUET_ERR_INVALID_ARG, "%s", what);
    cr_assert(strstr(duet_last_error(), what) != NULL, "error '%s' names %s", duet_last_error(), what);
    struct stat st;
    cr_assert_neq(stat(path, &st), 0, "a refused timeline wrote %s", path);
    duet_trace_free(t);
}

Test(trace_write, an_infinite_end_is_refused)
{
    duet_trace_t t;
    one_tile(&t, 0, INFINITY, 1e-3);
    refused(&t, "end_us");
}

Test(trace_write, a_nan_start_is_refused)
{
    duet_trace_t t;
    one_tile(&t, NAN, 1e-3, 1e-3);
    refused(&t, "start_us");
}

Test(trace_write, a_nan_or_infinite_makespan_is_refused)
{
    duet_trace_t t;
    one_tile(&t, 0, 1e-3, NAN);
    refused(&t, "makespan_us");
    one_tile(&t, 0, 1e-3, -INFINITY);
    refused(&t, "makespan_us");
}

Test(trace_write, a_negative_time_or_an_end_before_the_start_is_refused)
{
    duet_trace_t t;
    one_tile(&t, -1e-6, 1e-3, 1e-3);
    refused(&t, "start_us");
    /* Starts at 2 ms, ends at 1 ms. */
    one_tile(&t, 2e-3, 1e-3, 2e-3);
    refused(&t, "before it starts");
}

Test(trace_write, a_time_past_1e15_us_is_refused)
{
    duet_trace_t t;
    /* 2e9 s = 2e15 us, twice the largest time a timeline holds. */
    one_tile(&t, 0, 2e9, 1e-3);
    refused(&t, "end_us");
    one_tile(&t, 0, 1e-3, 2e9);
    refused(&t, "makespan_us");
}

Test(trace_write, finite_times_in_range_write_and_read_back)
{
    duet_trace_t t, back;
    /* 1.5 us to 2.25 us; makespan 1e9 s = 1e15 us, the largest time a timeline holds. */
    one_tile(&t, 1.5e-6, 2.25e-6, 1e9);
    char path[256];
    t_tmp_path(path, sizeof(path), "trace-ok.json");
    cr_assert_eq(duet_trace_write_json(&t, NULL, NULL, path), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_trace_read_json(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.n, 1);
    cr_assert(fabs(back.recs[0].start_s * 1e6 - 1.5) < 1e-9);
    cr_assert(fabs(back.recs[0].end_s * 1e6 - 2.25) < 1e-9);
    cr_assert(fabs(back.makespan_s - 1e9) < 1e-3);
    unlink(path);
    duet_trace_free(&t);
    duet_trace_free(&back);
}
