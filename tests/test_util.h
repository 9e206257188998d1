/*
 * Helpers shared by the Criterion tests.
 */
#ifndef DUET_TEST_UTIL_H
#define DUET_TEST_UTIL_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duet/duet.h"

/* Every test has a timeout (seconds), so a hang fails instead of stalling CI. */
#define T_TIMEOUT .timeout = 20

/* |got - want| <= rel * |want| (or <= rel when want is 0). */
static inline int t_rel_eq(double got, double want, double rel)
{
    double scale = fabs(want) > 0 ? fabs(want) : 1.0;
    return fabs(got - want) <= rel * scale;
}

/* The golden file of the reference simulator, parsed; NULL if missing. The tests run from the
 * repository root; the reference lives beside the checkout or in tests/data. */
static inline cJSON *t_load_golden(void)
{
    static const char *const paths[] = {"tests/data/seed-golden.json", "../shared/reference/seed-golden.json"};
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        FILE *f = fopen(paths[i], "rb");
        if (f == NULL)
            continue;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *buf = malloc((size_t)n + 1);
        size_t got = fread(buf, 1, (size_t)n, f);
        buf[got] = '\0';
        fclose(f);
        cJSON *root = cJSON_Parse(buf);
        free(buf);
        if (root)
            return root;
    }
    return NULL;
}

static inline double t_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return v ? v->valuedouble : NAN;
}

/* A workload in one line. */
static inline duet_workload_t t_wl(int64_t m, int64_t n, int64_t k, int32_t coll, int64_t mc, int64_t nc, int32_t world)
{
    duet_workload_t wl = duet_workload_empty();
    wl.m = m;
    wl.n = n;
    wl.k = k;
    wl.coll = coll;
    wl.mc = mc;
    wl.nc = nc;
    wl.world = world;
    return wl;
}

static inline duet_hw_t t_hw(const char *name)
{
    duet_hw_t hw;
    if (duet_hw_builtin(name, &hw) != DUET_OK)
        abort();
    return hw;
}

/*
 * The uncalibrated H200 profile (datasheet values, h200.md measurements of the raw hardware and
 * estimates; tuning_data/h200_start.json, where the calibration starts). The built-in h200 is the
 * calibrated profile; tests that work the model's equations by hand with round datasheet numbers
 * (19.9 GB/s per pushing CTA, 6 us launch, ...) use this one, so they keep testing the equations.
 */
static inline duet_hw_t t_hw_h200_start(void)
{
    duet_hw_t hw;
    if (duet_hw_load("tuning_data/h200_start.json", &hw) != DUET_OK) {
        fprintf(stderr, "tuning_data/h200_start.json: %s\n", duet_last_error());
        abort();
    }
    return hw;
}

#endif /* DUET_TEST_UTIL_H */
