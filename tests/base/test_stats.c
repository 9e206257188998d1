/*
 * The base layer's statistics (base/stats.c): quantiles, the median and the mean on samples whose
 * answers are worked out by hand, and the quantile against GSL's, which the calibration read its
 * percentiles from before they moved here (the fit's printed numbers must not move).
 */
#include <criterion/criterion.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#include "../test_util.h"
#include "base/base.h"

Test(stats, quantiles_interpolate_between_neighbours, T_TIMEOUT)
{
    double v[] = {4.0, 1.0, 3.0, 2.0};
    /* Sorted 1 2 3 4; q = 0.5 sits at position 1.5, halfway between 2 and 3. */
    cr_assert_eq(duet__quantile(v, 4, 0.5), 2.5);
    cr_assert_eq(v[0], 1.0, "sorted in place");
    cr_assert_eq(v[3], 4.0);
    /* q = 0.95 sits at position 2.85: 0.15 of 3 plus 0.85 of 4. */
    cr_assert(t_rel_eq(duet__quantile_sorted(v, 4, 0.95), 3.85, 1e-15), "%.17g", duet__quantile_sorted(v, 4, 0.95));
    cr_assert_eq(duet__quantile_sorted(v, 4, 0.0), 1.0);
    cr_assert_eq(duet__quantile_sorted(v, 4, 1.0), 4.0);
    /* Out of [0, 1]: the ends, never a read past them. */
    cr_assert_eq(duet__quantile_sorted(v, 4, -0.5), 1.0);
    cr_assert_eq(duet__quantile_sorted(v, 4, 1.5), 4.0);
    double one = 7.25;
    cr_assert_eq(duet__quantile(&one, 1, 0.95), 7.25);
    cr_assert(isnan(duet__quantile(NULL, 0, 0.5)));
}

Test(stats, median_and_mean, T_TIMEOUT)
{
    double odd[] = {5.0, 1.0, 3.0};
    cr_assert_eq(duet__median(odd, 3), 3.0);
    double even[] = {4.0, 1.0, 3.0, 2.0};
    cr_assert_eq(duet__median(even, 4), 2.5, "the mean of the two middle samples");
    cr_assert(isnan(duet__median(NULL, 0)));
    double m[] = {1.0, 2.0, 3.0, 4.0};
    cr_assert_eq(duet__mean(m, 4), 2.5);
    /* Summed in order: (0.1 + 0.2) + 0.3 rounds to 0.6000000000000001, a third of it to
     * 0.20000000000000004 (the same sum in any other order can differ in the last bit). */
    double tenths[] = {0.1, 0.2, 0.3};
    cr_assert_eq(duet__mean(tenths, 3), 0.20000000000000004);
    cr_assert(isnan(duet__mean(NULL, 0)));
}

Test(stats, quantile_equals_gsl_bit_for_bit, T_TIMEOUT)
{
    /* Samples of every size up to 64 from a fixed linear congruential sequence, at the quantiles
     * the calibration reads (0.5, 0.95) and others: the same double as GSL's. */
    static const double qs[] = {0.0, 0.1, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0};
    uint64_t x = 12345;
    double a[64], b[64];
    for (size_t n = 1; n <= 64; n++) {
        for (size_t i = 0; i < n; i++) {
            x = x * 6364136223846793005u + 1442695040888963407u;
            a[i] = b[i] = (double)(x >> 11) / 9007199254740992.0 * 3.0 - 1.0;
        }
        gsl_sort(b, 1, n);
        for (size_t k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
            double want = gsl_stats_quantile_from_sorted_data(b, 1, n, qs[k]);
            double got = duet__quantile(a, n, qs[k]);
            cr_assert(memcmp(&got, &want, sizeof(got)) == 0, "n %zu q %g: %.17g, GSL %.17g", n, qs[k], got, want);
        }
    }
}
