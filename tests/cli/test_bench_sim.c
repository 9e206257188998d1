/*
 * duet bench-sim reports what it measured and nothing it did not: per sweep its times, events and
 * events per second, per policy the same over its sweeps, and the reference predictor's times as a
 * figure with their machine, with no verdict or speed-up computed from them.
 */
#include <criterion/criterion.h>

#include "../cli_run.h"
#include "../test_util.h"

/* The value of `key` in object `o`, asserting it is a number. */
static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    cr_assert(cJSON_IsNumber(v), "\"%s\" is a number", key);
    return v->valuedouble;
}

Test(bench_sim, json_reports_measurements_and_the_reference_as_a_figure, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "bench-sim", "--repeat", "1", "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o, "bench-sim --json is JSON");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "schema")->valuestring, "duet-bench-sim/1");
    cr_assert_eq(num(o, "repeat"), 1);
    const cJSON *mach = cJSON_GetObjectItemCaseSensitive(o, "machine");
    cr_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(mach, "cpu")));
    cr_assert_geq(num(mach, "cpus_online"), 1);

    /*
     * Configurations per sweep, by hand: the reference sweep takes gemm_wgs 38, 46, ..., 302,
     * (302 - 38) / 8 + 1 = 34 splits, times 5 tiles, plus the static default: 171. The fluid sweep
     * takes every split of both modes on h200's 132 SMs, 132 fused (1..132) + 131 concurrent
     * (1..131) = 263, times 5 tiles, plus the default: 1316.
     */
    const char *names[] = {"frozen-a", "frozen-b", "frozen-c", "fluid"};
    const double configs[] = {171, 171, 171, 1316};
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(o, "cases");
    cr_assert_eq(cJSON_GetArraySize(cases), 4);
    double frozen_events = 0;
    for (int i = 0; i < 4; i++) {
        const cJSON *c = cJSON_GetArrayItem(cases, i);
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(c, "case")->valuestring, names[i]);
        cr_assert_eq(num(c, "configs"), configs[i], "%s", names[i]);
        double med = num(c, "median_us"), ev = num(c, "events");
        cr_assert(num(c, "min_us") <= med && med <= num(c, "max_us"));
        cr_assert_gt(ev, 0);
        /* Events per second and time per configuration are the sweep's own figures, nothing else. */
        cr_assert_float_eq(num(c, "events_per_second"), ev / (med * 1e-6), 1e-9 * ev / (med * 1e-6));
        cr_assert_float_eq(num(c, "us_per_config"), med / configs[i], 1e-9 * med);
        if (i < 3)
            frozen_events += ev;
        /* No verdict and no ratio against another machine's times. */
        cr_assert_null(cJSON_GetObjectItemCaseSensitive(c, "speedup"));
        cr_assert_null(cJSON_GetObjectItemCaseSensitive(c, "met"));
        cr_assert_null(cJSON_GetObjectItemCaseSensitive(c, "target_us"));
        cr_assert_null(cJSON_GetObjectItemCaseSensitive(c, "seed_us"));
    }
    const cJSON *pol = cJSON_GetObjectItemCaseSensitive(o, "policies");
    cr_assert_eq(cJSON_GetArraySize(pol), 2);
    const cJSON *frozen = cJSON_GetArrayItem(pol, 0);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(frozen, "policy")->valuestring, "frozen");
    cr_assert_eq(num(frozen, "sweeps"), 3);
    cr_assert_eq(num(frozen, "events"), frozen_events);

    /* The reference predictor's times of the three frozen sweeps, as the project recorded them (114,
     * 498 and 1640 ms), in us. */
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(o, "reference");
    cr_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ref, "machine")));
    const cJSON *rc = cJSON_GetObjectItemCaseSensitive(ref, "cases");
    cr_assert_eq(cJSON_GetArraySize(rc), 3);
    const double ref_us[] = {114000, 498000, 1640000};
    for (int i = 0; i < 3; i++)
        cr_assert_eq(num(cJSON_GetArrayItem(rc, i), "us"), ref_us[i]);
    cJSON_Delete(o);
}

Test(bench_sim, text_names_the_reference_machine_and_no_verdict, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "bench-sim", "--repeat", "1", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    /* The per-sweep table's header over its columns, by hand: "case" left in 9, "policy" and "hw" left
     * in 7, "configs" right in 7, the times right in 10, "events" in 10, "events/s" in 11, "us/config"
     * in 10, one space between columns. */
    cr_assert(strstr(r.out, "\n\ncase      policy  hw      configs   ms/sweep     min ms     max ms     events    "
                            "events/s  us/config\nfrozen-a  frozen  mi300x      171 ") != NULL,
              "%s", r.out);
    cr_assert(strstr(r.out, "per policy") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "not measured here") != NULL && strstr(r.out, "build machine") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "MISSED") == NULL && strstr(r.out, ": met") == NULL && strstr(r.out, "speedup") == NULL,
              "%s", r.out);
}
