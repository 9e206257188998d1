/*
 * Summary statistics of samples: sorting, quantiles, the median and the mean. One implementation
 * of each, for every layer: the calibration's error percentiles, the tuner's evaluation and the
 * command line's timings all read them from here.
 */
#include <math.h>
#include <stdlib.h>

#include "base/base.h"

static int duet__double_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void duet__sort_doubles(double *v, size_t n)
{
    if (n > 1)
        qsort(v, n, sizeof(*v), duet__double_cmp);
}

double duet__quantile_sorted(const double *v, size_t n, double q)
{
    if (n == 0)
        return NAN;
    q = q < 0 ? 0 : q > 1 ? 1 : q;
    /* The quantile sits at position q (n - 1) of the sorted samples; between two samples it is
     * their average weighted by the distance to each, written as (1 - t) a + t b so that results
     * equal those the calibration had when it read its percentiles from GSL. */
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    if (lo >= n - 1)
        return v[n - 1];
    double t = pos - (double)lo;
    return (1 - t) * v[lo] + t * v[lo + 1];
}

double duet__quantile(double *v, size_t n, double q)
{
    duet__sort_doubles(v, n);
    return duet__quantile_sorted(v, n, q);
}

double duet__median(double *v, size_t n)
{
    if (n == 0)
        return NAN;
    duet__sort_doubles(v, n);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double duet__mean(const double *v, size_t n)
{
    if (n == 0)
        return NAN;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    return sum / (double)n;
}
