/*
 * duet_predict_json()'s bound on a sweep's work: "max_events", the caller's event budget (1 to
 * DUET_SWEEP_MAX_EVENTS, which is the default). fuzz_predict_json found sweeps that the sanitizers
 * slow past libFuzzer's 10 s (a GEMM-only 1024x1025x4096 and a 1023x1024x4096 + all_reduce at every
 * split, K splits 2 and 2, all three modes: 0.10 and 0.24 s at -O2, 11 s under ASan and UBSan), so
 * the harness needed a smaller budget; a caller in another language can set one the same way.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

/* The fuzzer's timeout input, cleaned of its stray bytes: 1023x1024x4096, all_reduce of 4 MiB. */
#define SLOW_SWEEP                                                                                                     \
    "\"op\": \"predict\", \"collective\": \"all_reduce\", \"m\": 1023, \"n\": 1024, \"k\": 4096, "                     \
    "\"comm_bytes\": 4194204, \"top\": 0, \"emit\": \"nccl\", \"policy\": \"fluid\""

Test(api_json_budget, a_sweep_past_the_callers_budget_fails_naming_it, T_TIMEOUT)
{
    char sentinel = 0, *out = &sentinel;
    duet_status_t st = duet_predict_json("{" SLOW_SWEEP ", \"max_events\": 1000}", &out);
    cr_assert_eq(st, DUET_ERR_INVALID_ARG);
    cr_assert(out == &sentinel, "the answer is written on success only");
    cr_assert(strstr(duet_last_error(), "more than 1000 simulation events (max_events)") != NULL, "%s",
              duet_last_error());
}

Test(api_json_budget, the_budget_is_one_to_the_librarys_own, T_TIMEOUT)
{
    char *out = NULL;
    cr_assert_eq(duet_predict_json("{" SLOW_SWEEP ", \"max_events\": 0}", &out), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "request.max_events") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_predict_json("{" SLOW_SWEEP ", \"max_events\": 16777217}", &out), DUET_ERR_PARSE);
    cr_assert_eq(duet_predict_json("{" SLOW_SWEEP ", \"max_events\": 1.5}", &out), DUET_ERR_PARSE);
    cr_assert_null(out);
}

Test(api_json_budget, within_the_budget_the_answer_is_the_same, T_TIMEOUT)
{
    /* The whole sweep without a budget, and again with one just large enough: the same ranking. */
    char *all = NULL, *bounded = NULL, req[512];
    cr_assert_eq(duet_predict_json("{" SLOW_SWEEP "}", &all), DUET_OK, "%s", duet_last_error());
    cJSON *a = cJSON_Parse(all);
    double events = cJSON_GetObjectItem(a, "events")->valuedouble;
    cr_assert(events > 1000 && events < 16777216, "%g", events);
    snprintf(req, sizeof(req), "{" SLOW_SWEEP ", \"max_events\": %.0f}", events);
    cr_assert_eq(duet_predict_json(req, &bounded), DUET_OK, "%s", duet_last_error());
    cJSON *b = cJSON_Parse(bounded);
    cr_assert(cJSON_Compare(cJSON_GetObjectItem(a, "ranked"), cJSON_GetObjectItem(b, "ranked"), 1));
    /* One event fewer and the sweep stops. */
    snprintf(req, sizeof(req), "{" SLOW_SWEEP ", \"max_events\": %.0f}", events - 1);
    char *none = NULL;
    cr_assert_eq(duet_predict_json(req, &none), DUET_ERR_INVALID_ARG);
    cJSON_Delete(a);
    cJSON_Delete(b);
    duet_json_free(all);
    duet_json_free(bounded);
}
