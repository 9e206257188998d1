/*
 * The max-min solver (sim/maxmin.c) on small systems solved by hand: bounds, weights, two
 * constraints saturating in turn, and a constraint without capacity, whose users crawl at
 * DUET__SIM_PRECISION instead of stalling at 0.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "sim/internal.h"
#include "sim/maxmin.h"

TestSuite(maxmin, .timeout = 20);

static duet__maxmin_var_t var(double weight, double bound, const double *use)
{
    duet__maxmin_var_t v = {weight, bound, use, 0};
    return v;
}

Test(maxmin, a_constraint_without_capacity_leaves_a_crawl_not_a_stall)
{
    static const double use[1] = {1};
    duet__maxmin_var_t v[1] = {var(1, 10, use)};
    duet__maxmin_t s = {1, {0}, v, 1};
    duet__maxmin_solve(&s);
    /* Capacity 0 over demand 1: level 0, raised to the crawl. */
    cr_assert_eq(v[0].value, DUET__SIM_PRECISION);
}

Test(maxmin, a_bound_freezes_first_and_the_rest_goes_to_the_others)
{
    static const double use[1] = {1};
    duet__maxmin_var_t v[2] = {var(1, 2, use), var(1, 100, use)};
    duet__maxmin_t s = {1, {10}, v, 2};
    duet__maxmin_solve(&s);
    /* Capacity 10 over demand 2 would give 5 each; flow 0's bound 2 comes first: it takes 2 and
     * the 8 left go to flow 1, below its bound 100. */
    cr_assert_eq(v[0].value, 2);
    cr_assert_eq(v[1].value, 8);
}

Test(maxmin, weights_count_flows)
{
    static const double one[1] = {1}, two[1] = {2};
    duet__maxmin_var_t v[2] = {var(3, INFINITY, one), var(1, INFINITY, two)};
    duet__maxmin_t s = {1, {12}, v, 2};
    duet__maxmin_solve(&s);
    /* Three flows using 1 and one flow using 2 per unit: demand 5, so 12 / 5 = 2.4 each. */
    cr_assert(fabs(v[0].value - 2.4) < 1e-15, "%.17g", v[0].value);
    cr_assert(fabs(v[1].value - 2.4) < 1e-15, "%.17g", v[1].value);
}

Test(maxmin, two_constraints_saturate_in_turn)
{
    static const double a[2] = {1, 0}, ab[2] = {1, 1}, b[2] = {0, 1};
    duet__maxmin_var_t v[3] = {var(1, INFINITY, a), var(1, INFINITY, ab), var(1, INFINITY, b)};
    duet__maxmin_t s = {2, {6, 4}, v, 3};
    duet__maxmin_solve(&s);
    /* Demands 2 and 2: constraint 1 saturates first at 4 / 2 = 2, freezing flows 1 and 2 at 2;
     * constraint 0 has 6 - 2 = 4 left, all for flow 0. */
    cr_assert_eq(v[1].value, 2);
    cr_assert_eq(v[2].value, 2);
    cr_assert_eq(v[0].value, 4);
    cr_assert_eq(s.cap[1], 0);
    cr_assert_eq(s.cap[0], 0);
}
