/*
 * The time left of a calibration run (calibrate/eta.c), on progress reports written by hand: the
 * answers follow from each stage's seconds per iteration and the iterations it has left.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../test_util.h"
#include "calibrate/eta.h"

static void report(duet__cal_eta_t *e, int32_t stage, int32_t n, int32_t done, int32_t it, double t)
{
    duet_cal_progress_t p = {.stage = "s",
                             .stage_index = stage,
                             .n_stages = n,
                             .stages_done = done,
                             .iteration = it,
                             .max_iter = 100,
                             .rms_log = 0.1,
                             .elapsed_s = t};
    cr_assert_eq(duet__cal_eta_update(e, &p), DUET_OK);
}

Test(eta, nothing_reported_gives_no_estimate, T_TIMEOUT)
{
    duet__cal_eta_t e;
    duet__cal_eta_init(&e);
    cr_assert(isnan(duet__cal_eta_left_s(&e, 5)));
    duet__cal_eta_free(&e);
    duet__cal_eta_free(&e); /* again: a no-op */
}

Test(eta, cheap_fits_finished_first_do_not_make_it_the_time_elapsed, T_TIMEOUT)
{
    /* Four fits from t = 0: two cheap ones (the reference rules) take 3 iterations in 0.3 s and
     * finish; two dear ones take 1 s per iteration and are at iteration 10 of 100 at t = 10. */
    duet__cal_eta_t e;
    duet__cal_eta_init(&e);
    report(&e, 0, 4, 0, 1, 1.0);
    report(&e, 1, 4, 0, 1, 1.0);
    report(&e, 2, 4, 0, 3, 0.3);
    report(&e, 3, 4, 0, 3, 0.3);
    report(&e, 0, 4, 2, 10, 10.0);
    report(&e, 1, 4, 2, 10, 10.0);
    /* Each dear fit: 10 s over 10 iterations, 90 left: 90 s. Counting finished fits alike would
     * say 10 s / 2 done * 2 left = 10 s. */
    cr_assert(t_rel_eq(duet__cal_eta_left_s(&e, 10.0), 90.0, 1e-12), "%g", duet__cal_eta_left_s(&e, 10.0));
    /* Two seconds on, with no report since: 88 s. */
    cr_assert(t_rel_eq(duet__cal_eta_left_s(&e, 12.0), 88.0, 1e-12));
    duet__cal_eta_free(&e);
}

Test(eta, stages_not_started_wait_for_a_running_one, T_TIMEOUT)
{
    /* Three fits on one thread: the first at iteration 20 of 100 after 10 s (0.5 s each, 50 s
     * planned); two wait. Left: 80 * 0.5 = 40 s, then two rounds of 50 s = 140 s. */
    duet__cal_eta_t e;
    duet__cal_eta_init(&e);
    report(&e, 0, 3, 0, 20, 10.0);
    cr_assert(t_rel_eq(duet__cal_eta_left_s(&e, 10.0), 140.0, 1e-12), "%g", duet__cal_eta_left_s(&e, 10.0));
    /* It finishes after its report at 30 s (iteration 60); the second starts then and is at iteration 10 at 35 s
     * (0.5 s each): 90 * 0.5 = 45 s, then one round of 50 s. */
    report(&e, 0, 3, 0, 60, 30.0);
    report(&e, 1, 3, 1, 10, 35.0);
    cr_assert(t_rel_eq(duet__cal_eta_left_s(&e, 35.0), 95.0, 1e-12), "%g", duet__cal_eta_left_s(&e, 35.0));
    duet__cal_eta_free(&e);
}

Test(eta, the_first_iterations_search_does_not_set_the_rate, T_TIMEOUT)
{
    /* One fit: its first iteration ends at 20 s (19 s of coarse search before it), the 11th at
     * 30 s: 1 s per iteration after the first, 89 left: 89 s (not 30 / 11 * 89). */
    duet__cal_eta_t e;
    duet__cal_eta_init(&e);
    report(&e, 0, 1, 0, 1, 20.0);
    report(&e, 0, 1, 0, 11, 30.0);
    cr_assert(t_rel_eq(duet__cal_eta_left_s(&e, 30.0), 89.0, 1e-12), "%g", duet__cal_eta_left_s(&e, 30.0));
    duet__cal_eta_free(&e);
}
