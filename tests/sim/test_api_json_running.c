/*
 * duet_predict_json()'s "running_vendor" member: the vendor split a caller runs is the decision's safe
 * choice, priced as the sweep prices that split, and a member that is not such a split is refused by
 * name with nothing written.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

#define PRED                                                                                                           \
    "\"op\": \"predict\", \"max_events\": 2000000, \"split_step\": 8, \"top\": 3, \"collective\": \"all_gather\", "    \
    "\"m\": 4096, \"n\": 4096, \"k\": 4096, \"mc\": 2048, \"nc\": 4096"

Test(api_json_running, the_vendor_split_one_runs_is_the_safe_choice, .timeout = 60)
{
    char *out = NULL;
    cr_assert_eq(duet_predict_json("{" PRED ", \"running_vendor\": {\"gemm_sms\": 120, \"comm_ctas\": 12}}", &out),
                 DUET_OK, "%s", duet_last_error());
    cJSON *o = cJSON_Parse(out);
    duet_json_free(out);
    const cJSON *d = cJSON_GetObjectItem(o, "decision"), *safe = cJSON_GetObjectItem(d, "safe");
    cr_assert_str_eq(cJSON_GetObjectItem(d, "safe_kind")->valuestring, "running_vendor");
    cr_assert_str_eq(cJSON_GetObjectItem(safe, "mode")->valuestring, "vendor");
    cr_assert_eq(t_num(safe, "gemm_wgs"), 120);
    cr_assert_eq(t_num(safe, "comm_wgs"), 12);
    /* Without it, the static default (fused, 3/4 of the 132 SMs on the GEMM) is. */
    cr_assert_eq(duet_predict_json("{" PRED "}", &out), DUET_OK, "%s", duet_last_error());
    cJSON *o2 = cJSON_Parse(out);
    duet_json_free(out);
    d = cJSON_GetObjectItem(o2, "decision");
    safe = cJSON_GetObjectItem(d, "safe");
    cr_assert_str_eq(cJSON_GetObjectItem(d, "safe_kind")->valuestring, "static_default");
    cr_assert_str_eq(cJSON_GetObjectItem(safe, "mode")->valuestring, "fused");
    cr_assert_eq(t_num(safe, "gemm_wgs"), 99);
    cJSON_Delete(o2);
    cJSON_Delete(o);
}

Test(api_json_running, a_running_vendor_that_is_not_a_split_is_refused, T_TIMEOUT)
{
    static const struct {
        const char *member, *why;
    } cases[] = {
        {"5", "request.running_vendor: must be an object with gemm_sms (and comm_ctas)"},
        {"{\"comm_ctas\": 12}", "request.running_vendor: must be an object with gemm_sms (and comm_ctas)"},
        {"{\"gemm_sms\": 0}", "request.running_vendor"},
        {"{\"gemm_sms\": 133}", "request.running_vendor"},
        {"{\"gemm_sms\": 120, \"comm_ctas\": -1}", "request.comm_ctas: -1 is not an integer"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char req[512], *out = (char *)"untouched";
        snprintf(req, sizeof(req), "{" PRED ", \"running_vendor\": %s}", cases[i].member);
        cr_assert_eq(duet_predict_json(req, &out), DUET_ERR_PARSE, "%s", cases[i].member);
        cr_assert(strstr(duet_last_error(), cases[i].why) == duet_last_error(), "%s: %s", cases[i].member,
                  duet_last_error());
        cr_assert_str_eq(out, "untouched", "nothing written");
    }
}
