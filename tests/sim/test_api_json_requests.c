/*
 * duet_predict_json()'s request members one by one: each wrong value refused with the member named
 * and nothing written, and the values each member takes reaching the answer (sizes and counts
 * worked out by hand).
 */
#include <criterion/criterion.h>

#include "../test_util.h"

#define AG "\"collective\": \"all_gather\", \"m\": 512, \"n\": 512, \"k\": 512, \"mc\": 256, \"nc\": 256"
#define SIM "\"op\": \"simulate\", " AG
#define PRED "\"op\": \"predict\", \"max_events\": 200000, " AG

static cJSON *ask(const char *request)
{
    char *out = NULL;
    cr_assert_eq(duet_predict_json(request, &out), DUET_OK, "%s: %s", request, duet_last_error());
    cJSON *o = cJSON_Parse(out);
    cr_assert_not_null(o, "%s", out);
    duet_json_free(out);
    return o;
}

Test(api_json_requests, every_member_refuses_a_wrong_value_by_name, .timeout = 60)
{
    static const struct {
        const char *req;
        duet_status_t st;
        const char *why;
    } cases[] = {
        {"{\"op\": 1}", DUET_ERR_PARSE, "request.op: must be a string"},
        {"{\"hw\": 5}", DUET_ERR_PARSE, "request.hw: must be a profile name or a profile object"},
        {"{\"hw\": {\"schema\": \"duet-hw/1\"}}", DUET_ERR_PARSE, "request.hw"},
        {"{\"collective\": 7}", DUET_ERR_PARSE, "request.collective: must be a string"},
        {"{\"collective\": \"gossip\"}", DUET_ERR_INVALID_ARG, "'gossip'"},
        {"{\"dtype\": \"fp12\", \"m\": 64, \"n\": 64, \"k\": 64}", DUET_ERR_INVALID_ARG, "'fp12'"},
        {"{\"m\": -1}", DUET_ERR_PARSE, "request.m: -1 is not an integer in [0, 1099511627776]"},
        {"{\"n\": 1.5}", DUET_ERR_PARSE, "request.n: 1.5 is not an integer"},
        {"{\"mc\": \"x\"}", DUET_ERR_PARSE, "request.mc: must be a number"},
        {"{\"nc\": 2e12}", DUET_ERR_PARSE, "request.nc: 2e+12 is not an integer"},
        {"{\"world\": 0}", DUET_ERR_PARSE, "request.world: 0 is not an integer in [1, 1024]"},
        {"{\"root\": 1024}", DUET_ERR_PARSE, "request.root: 1024 is not an integer in [0, 1023]"},
        {"{\"comm_bytes\": -5}", DUET_ERR_PARSE, "request.comm_bytes: -5 is not an integer"},
        {"{" SIM ", \"config\": 3}", DUET_ERR_PARSE, "request.config: must be an object"},
        {"{" SIM ", \"config\": {\"mode\": \"warp\"}}", DUET_ERR_INVALID_ARG, "'warp'"},
        {"{" SIM ", \"config\": {\"mode\": 1}}", DUET_ERR_PARSE, "request.mode: must be a string"},
        {"{" SIM ", \"config\": {\"num_wgs\": 0}}", DUET_ERR_PARSE, "request.num_wgs: 0 is not an integer in [1, "},
        {"{" SIM ", \"config\": {\"gemm_wgs\": \"a\"}}", DUET_ERR_PARSE, "request.gemm_wgs: must be a number"},
        {"{" SIM ", \"config\": {\"comm_wgs\": -1}}", DUET_ERR_PARSE, "request.comm_wgs: -1 is not an integer"},
        {"{" SIM ", \"config\": {\"tile\": 5}}", DUET_ERR_PARSE, "request.tile: must be a string"},
        {"{" SIM ", \"config\": {\"comm_tile\": \"abc\"}}", DUET_ERR_PARSE,
         "request.config.comm_tile: 'abc' is not CMxCN"},
        {"{" SIM ", \"config\": {\"group_m\": 65}}", DUET_ERR_PARSE,
         "request.group_m: 65 is not an integer in [1, 64]"},
        {"{" SIM ", \"config\": {\"split_k\": 17}}", DUET_ERR_PARSE,
         "request.split_k: 17 is not an integer in [1, 16]"},
        {"{" SIM ", \"config\": {\"mode\": \"fused\", \"num_wgs\": 200}}", DUET_ERR_INFEASIBLE,
         "num_wgs 200 > 132 SMs of h200"},
        {"{" SIM ", \"rank\": 2}", DUET_ERR_PARSE, "request.rank: 2 is not an integer in [0, 1]"},
        {"{" SIM ", \"policy\": \"warp\"}", DUET_ERR_INVALID_ARG, "request.policy: 'warp' is not fluid or frozen"},
        {"{" SIM ", \"policy\": 2}", DUET_ERR_PARSE, "request.policy: must be a string"},
        {"{" PRED ", \"num_wgs\": 0}", DUET_ERR_PARSE, "request.num_wgs: 0 is not an integer in [1, "},
        {"{" PRED ", \"num_wgs\": 200}", DUET_ERR_INVALID_ARG, "request.num_wgs: 200 exceeds the 132 SMs of h200"},
        {"{" PRED ", \"comm_tile\": 256}", DUET_ERR_PARSE, "request.comm_tile: must be a string"},
        {"{" PRED ", \"comm_tile\": \"0x64\"}", DUET_ERR_PARSE,
         "request.comm_tile: '0x64' is not CMxCN (two positive integers)"},
        {"{" PRED ", \"group_m\": 0}", DUET_ERR_PARSE, "request.group_m: 0 is not an integer in [1, 64]"},
        {"{" PRED ", \"reference_pricing\": 1}", DUET_ERR_PARSE, "request.reference_pricing: must be true or false"},
        {"{" PRED ", \"reference_pricing\": true}", DUET_ERR_INVALID_ARG,
         "request.reference_pricing needs policy frozen"},
        {"{" PRED ", \"modes\": \"fused\"}", DUET_ERR_PARSE, "request.modes: must be a list of mode names"},
        {"{" PRED ", \"modes\": []}", DUET_ERR_PARSE, "request.modes: must be a list of mode names"},
        {"{" PRED ", \"modes\": [3]}", DUET_ERR_PARSE, "request.modes: must be a list of mode names"},
        {"{" PRED ", \"modes\": [\"warp\"]}", DUET_ERR_INVALID_ARG, "'warp'"},
        {"{" PRED ", \"tiles\": \"256x128x64\"}", DUET_ERR_PARSE, "request.tiles: must be a list of 1 to 16 tiles"},
        {"{" PRED ", \"tiles\": []}", DUET_ERR_PARSE, "request.tiles: must be a list of 1 to 16 tiles"},
        {"{" PRED ", \"tiles\": [\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\",\"a\","
         "\"a\",\"a\",\"a\"]}",
         DUET_ERR_PARSE, "request.tiles: must be a list of 1 to 16 tiles"},
        {"{" PRED ", \"tiles\": [5]}", DUET_ERR_PARSE, "request.tiles: must be a list of tiles such as \"256x128x64\""},
        {"{" PRED ", \"tiles\": [\"7x7\"]}", DUET_ERR_INVALID_ARG, "7x7"},
        {"{" PRED ", \"split_ks\": 2}", DUET_ERR_PARSE, "request.split_ks: must be a list of 1 to 8 integers"},
        {"{" PRED ", \"split_ks\": []}", DUET_ERR_PARSE, "request.split_ks: must be a list of 1 to 8 integers"},
        {"{" PRED ", \"split_ks\": [1,1,1,1,1,1,1,1,1]}", DUET_ERR_PARSE,
         "request.split_ks: must be a list of 1 to 8 integers"},
        {"{" PRED ", \"split_ks\": [0]}", DUET_ERR_PARSE, "request.split_ks: integers in [1, 16]"},
        {"{" PRED ", \"split_ks\": [17]}", DUET_ERR_PARSE, "request.split_ks: integers in [1, 16]"},
        {"{" PRED ", \"split_ks\": [1.5]}", DUET_ERR_PARSE, "request.split_ks: integers in [1, 16]"},
        {"{" PRED ", \"split_ks\": [\"2\"]}", DUET_ERR_PARSE, "request.split_ks: integers in [1, 16]"},
        {"{" PRED ", \"split_step\": 0}", DUET_ERR_PARSE, "request.split_step: 0 is not an integer in [1, 4096]"},
        {"{" PRED ", \"top\": -1}", DUET_ERR_PARSE, "request.top: -1 is not an integer"},
        {"{\"op\": \"predict\", " AG ", \"max_events\": 0}", DUET_ERR_PARSE,
         "request.max_events: 0 is not an integer in [1, 16777216]"},
        {"{" PRED ", \"policy\": \"warp\"}", DUET_ERR_INVALID_ARG, "request.policy: 'warp' is not fluid or frozen"},
        {"{" PRED ", \"emit\": 3}", DUET_ERR_PARSE, "request.emit: must be a string"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *out = (char *)"untouched";
        cr_assert_eq(duet_predict_json(cases[i].req, &out), cases[i].st, "%s: %s", cases[i].req, duet_last_error());
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%s: %s", cases[i].req, duet_last_error());
        cr_assert_str_eq(out, "untouched");
    }
    char *in = (char *)"{}";
    cr_assert_eq(duet_predict_json(in, NULL), DUET_ERR_INVALID_ARG);
}

Test(api_json_requests, the_workload_members_reach_the_answer, T_TIMEOUT)
{
    /* comm_bytes instead of mc x nc: nccl-tests' size of an all_gather is its gathered output, 128 MiB
     * over 4 ranks, so each rank's source is 32 MiB of fp16, 2^24 elements, in rows of 8192: 2048 x
     * 8192. The answer reports the size back. */
    cJSON *o = ask("{\"op\": \"plan\", \"collective\": \"all_gather\", \"dtype\": \"fp16\", \"m\": 4096, "
                   "\"n\": 4096, \"k\": 4096, \"world\": 4, \"root\": 3, \"comm_bytes\": 134217728}");
    const cJSON *w = cJSON_GetObjectItem(o, "workload");
    cr_assert_not_null(w);
    cr_assert_str_eq(cJSON_GetObjectItem(w, "dtype")->valuestring, "fp16");
    cr_assert_eq(t_num(w, "world"), 4);
    cr_assert_eq(t_num(w, "root"), 3);
    cr_assert_eq(t_num(w, "comm_bytes"), 134217728.0);
    cr_assert(t_num(w, "mc") == 2048 && t_num(w, "nc") == 8192, "%g x %g", t_num(w, "mc"), t_num(w, "nc"));
    cJSON_Delete(o);

    /* A profile object: h200's own JSON answers as "h200". */
    duet_hw_t hw = t_hw("h200");
    char *text = NULL;
    cr_assert_eq(duet_hw_to_json(&hw, &text), DUET_OK);
    size_t n = strlen(text) + 64;
    char *req = malloc(n);
    snprintf(req, n, "{\"op\": \"hw\", \"hw\": %s}", text);
    o = ask(req);
    cr_assert_str_eq(cJSON_GetObjectItem(o, "name")->valuestring, "h200");
    cJSON_Delete(o);
    free(req);
    free(text);
}

Test(api_json_requests, config_members_reach_the_simulated_configuration, T_TIMEOUT)
{
    cJSON *o = ask("{" SIM ", \"rank\": 1, \"policy\": \"frozen\", \"config\": {\"mode\": \"fused\", \"num_wgs\": 100, "
                   "\"gemm_wgs\": 60, \"tile\": \"128x128x64\", \"comm_tile\": \"128x64\", \"group_m\": 4, "
                   "\"split_k\": 2}}");
    const cJSON *c = cJSON_GetObjectItem(o, "config");
    cr_assert_not_null(c);
    cr_assert_str_eq(cJSON_GetObjectItem(c, "mode")->valuestring, "fused");
    /* fused: comm_wgs = num_wgs - gemm_wgs = 40 */
    cr_assert(t_num(c, "num_wgs") == 100 && t_num(c, "gemm_wgs") == 60 && t_num(c, "comm_wgs") == 40);
    cr_assert_str_eq(cJSON_GetObjectItem(c, "tile")->valuestring, "128x128x64");
    cr_assert_str_eq(cJSON_GetObjectItem(c, "comm_tile")->valuestring, "128x64");
    cr_assert_eq(t_num(c, "group_m"), 4);
    cr_assert_eq(t_num(c, "split_k"), 2);
    cr_assert_str_eq(cJSON_GetObjectItem(o, "policy")->valuestring, "frozen");
    cJSON_Delete(o);
}

Test(api_json_requests, sweep_members_shape_the_ranking, .timeout = 60)
{
    /* One mode, one tile, one K split, CTA counts stepped by 33: concurrent splits gemm_wgs + comm_wgs
     * over 132 SMs; every row is concurrent with that tile. */
    cJSON *o = ask("{" PRED ", \"modes\": [\"concurrent\"], \"tiles\": [\"128x128x64\"], \"split_ks\": [1], "
                   "\"split_step\": 33, \"top\": 0, \"policy\": \"fluid\"}");
    const cJSON *r = cJSON_GetObjectItem(o, "ranked"), *e;
    cr_assert(cJSON_IsArray(r) && cJSON_GetArraySize(r) > 0);
    cr_assert_eq((double)cJSON_GetArraySize(r), t_num(o, "n_configs"), "top 0 shows every row");
    cJSON_ArrayForEach(e, r)
    {
        cr_assert_str_eq(cJSON_GetObjectItem(e, "mode")->valuestring, "concurrent");
        cr_assert_str_eq(cJSON_GetObjectItem(e, "tile")->valuestring, "128x128x64");
    }
    cJSON_Delete(o);
    /* top larger than the rows: every row; top 1: one. */
    o = ask("{" PRED ", \"modes\": [\"concurrent\"], \"tiles\": [\"128x128x64\"], \"split_step\": 33, \"top\": 1000}");
    cr_assert_eq((double)cJSON_GetArraySize(cJSON_GetObjectItem(o, "ranked")), t_num(o, "n_configs"));
    cJSON_Delete(o);
    o = ask("{" PRED ", \"modes\": [\"concurrent\"], \"tiles\": [\"128x128x64\"], \"split_step\": 33, \"top\": 1}");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(o, "ranked")), 1);
    cJSON_Delete(o);
    /* emit with only vendor asked for: fused and concurrent are swept too, so duet's best is there to
     * compare with. */
    o = ask("{" PRED ", \"modes\": [\"vendor\"], \"split_step\": 33, \"emit\": \"nccl\"}");
    const cJSON *em = cJSON_GetObjectItem(o, "emit");
    cr_assert_not_null(em);
    cr_assert_str_eq(cJSON_GetObjectItem(em, "stack")->valuestring, "nccl");
    cr_assert_not_null(cJSON_GetObjectItem(em, "vendor_best"));
    cr_assert_not_null(cJSON_GetObjectItem(em, "duet_best"));
    cJSON_Delete(o);
}
