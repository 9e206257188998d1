/*
 * duet_predict_json(): requests as JSON text, answers as JSON text, held against the library
 * called directly and against numbers worked out by hand.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "base/base.h"

static cJSON *ask(const char *request)
{
    char *out = NULL;
    cr_assert_eq(duet_predict_json(request, &out), DUET_OK, "%s", duet_last_error());
    cJSON *o = cJSON_Parse(out);
    cr_assert_not_null(o, "%s", out);
    duet_json_free(out);
    return o;
}

Test(api_json, simulate_answers_what_the_simulator_says, T_TIMEOUT)
{
    cJSON *o = ask("{\"op\": \"simulate\", \"collective\": \"all_reduce\", \"m\": 4096, \"n\": 4096, \"k\": 4096, "
                   "\"mc\": 2048, \"nc\": 4096, \"config\": {\"mode\": \"concurrent\", \"gemm_wgs\": 112, "
                   "\"comm_wgs\": 20}}");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "schema")->valuestring, "duet-simulate/1");
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_REDUCE, 2048, 4096, 2);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_CONCURRENT);
    cr_assert_eq(duet_config_complete_split(&cfg, &hw, -1, 112, 20), DUET_OK);
    duet_plan_t plan;
    cr_assert_eq(duet_plan_build(&wl, &cfg, duet_plan_critical_rank(&wl), &plan), DUET_OK);
    duet_sim_ws_t *ws = NULL;
    duet_sim_result_t r;
    cr_assert_eq(duet_sim_ws_create(&ws), DUET_OK);
    cr_assert_eq(duet_sim_run(ws, NULL, &hw, &plan, NULL, &r), DUET_OK);
    cr_assert_eq(t_num(o, "makespan_us"), r.makespan_s * 1e6);
    cr_assert_eq(t_num(o, "comm_finish_us"), r.comm_finish_s * 1e6);
    /* all_reduce of 2048 x 4096 bf16 = 16777216 bytes over 2 ranks: busbw = algbw x 2 (2 - 1) / 2. */
    cr_assert_eq(t_num(o, "comm_bytes"), 16777216.0);
    cr_assert(fabs(t_num(o, "busbw_gbs") - 16777216.0 / r.comm_finish_s / 1e9) < 1e-9);
    const cJSON *c = cJSON_GetObjectItem(o, "config");
    cr_assert(t_num(c, "gemm_wgs") == 112 && t_num(c, "comm_wgs") == 20);
    duet_sim_ws_destroy(ws);
    cJSON_Delete(o);
}

Test(api_json, plan_and_hw, T_TIMEOUT)
{
    /* 4096 x 4096 in 256 x 128 tiles (the default): 16 x 32 = 512 tiles of 4096 / 64 = 64 K steps. */
    cJSON *o = ask("{\"op\": \"plan\", \"m\": 4096, \"n\": 4096, \"k\": 4096}");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "schema")->valuestring, "duet-plan/1");
    const cJSON *g = cJSON_GetObjectItem(o, "gemm");
    cr_assert(t_num(g, "tiles") == 512 && t_num(g, "k_iters") == 64);
    cr_assert_eq(t_num(g, "flops"), 2.0 * 4096 * 4096 * 4096);
    cJSON_Delete(o);
    o = ask("{\"op\": \"hw\", \"hw\": \"mi300x\"}");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "schema")->valuestring, "duet-hw/1");
    cr_assert_eq(t_num(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "constants"), "n_sms"), "value"), 304,
                 "MI300X: 304 CUs");
    cJSON_Delete(o);
}

Test(api_json, predict_with_emit, .timeout = 60)
{
    cJSON *o = ask("{\"collective\": \"all_gather\", \"m\": 8192, \"n\": 8192, \"k\": 8192, \"comm_bytes\": 134217728, "
                   "\"split_step\": 8, \"top\": 0, \"emit\": \"env\"}");
    cr_assert_str_eq(cJSON_GetObjectItem(o, "schema")->valuestring, "duet-predict/2");
    cr_assert(t_num(o, "mc") == 4096 && t_num(o, "nc") == 8192, "128 MiB gathered over 2 ranks");
    const cJSON *row;
    double prev = 0;
    size_t i = 0;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(o, "ranked"))
    {
        /* Ranked by the upper end of each prediction's interval. */
        double us = t_num(row, "hi_us");
        cr_assert(us >= prev * (1 - DUET_RANK_TIE_REL));
        cr_assert(t_num(row, "rank") <= (double)(++i));
        prev = us;
    }
    cr_assert_eq((double)i, t_num(o, "n_configs"));
    const cJSON *e = cJSON_GetObjectItem(o, "emit"), *vb = cJSON_GetObjectItem(e, "vendor_best");
    char want[64];
    snprintf(want, sizeof(want), "NCCL_MAX_CTAS=%d", (int)t_num(vb, "comm_wgs"));
    /* The env settings: a comment naming the libraries, NCCL_MIN_CTAS, then NCCL_MAX_CTAS. */
    cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "settings"), 2)->valuestring, want);
    cJSON_Delete(o);
}

Test(api_json, bad_requests_say_why_and_write_nothing, T_TIMEOUT)
{
    char *out = (char *)"untouched";
    static const struct {
        const char *req;
        duet_status_t st;
        const char *why;
    } cases[] = {
        {"{", DUET_ERR_PARSE, "request"},
        {"[1]", DUET_ERR_PARSE, "must be a JSON object"},
        {"{\"op\": \"fly\", \"m\": 64, \"n\": 64, \"k\": 64}", DUET_ERR_INVALID_ARG, "'fly' is not hw, plan"},
        {"{\"collective\": \"all_gather\", \"mc\": 8, \"nc\": 8, \"comm_bytes\": 128}", DUET_ERR_INVALID_ARG,
         "not both"},
        {"{\"m\": 64, \"n\": 64, \"k\": 64, \"emit\": \"mpi\"}", DUET_ERR_INVALID_ARG, "'mpi' is not nccl"},
        {"{\"m\": 64, \"n\": 64, \"k\": -1}", DUET_ERR_PARSE, "request.k"},
        {"{\"op\": \"simulate\", \"m\": 64, \"n\": 64, \"k\": 64, \"config\": {\"tile\": \"7x7\"}}",
         DUET_ERR_INVALID_ARG, "7x7"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(duet_predict_json(cases[i].req, &out), cases[i].st, "%s: %s", cases[i].req, duet_last_error());
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%s: %s", cases[i].req, duet_last_error());
        cr_assert_str_eq(out, "untouched");
    }
    cr_assert_eq(duet_predict_json(NULL, &out), DUET_ERR_INVALID_ARG);
    duet_json_free(NULL);
}

/* A misspelt member is refused, as the command line refuses an unknown option: "wrld" answered for
 * world 2 and "dtyp" for bf16 before; the nearest known name is suggested where one is close. */
Test(api_json, unknown_members_are_refused_with_the_nearest_name, T_TIMEOUT)
{
    char *out = (char *)"untouched";
    static const struct {
        const char *req, *why;
    } cases[] = {
        {"{\"op\": \"plan\", \"collective\": \"all_gather\", \"m\": 64, \"n\": 64, \"k\": 64, \"mc\": 8, \"nc\": 8, "
         "\"wrld\": 8}",
         "request: unknown member \"wrld\" (did you mean \"world\"?)"},
        {"{\"op\": \"plan\", \"m\": 64, \"n\": 64, \"k\": 64, \"dtyp\": \"fp16\"}",
         "request: unknown member \"dtyp\" (did you mean \"dtype\"?)"},
        /* A swap of two neighbours is one edit. */
        {"{\"m\": 64, \"n\": 64, \"k\": 64, \"polciy\": \"frozen\"}",
         "request: unknown member \"polciy\" (did you mean \"policy\"?)"},
        {"{\"op\": \"simulate\", \"m\": 64, \"n\": 64, \"k\": 64, \"config\": {\"gemm_wg\": 100}}",
         "request.config: unknown member \"gemm_wg\" (did you mean \"gemm_wgs\"?)"},
        /* Nothing within two edits: the known names are listed instead. */
        {"{\"m\": 64, \"n\": 64, \"k\": 64, \"colour\": \"red\"}",
         "request: unknown member \"colour\" (known: op, hw,"},
        {"{\"op\": \"simulate\", \"m\": 64, \"n\": 64, \"k\": 64, \"config\": {\"speed\": 1}}",
         "request.config: unknown member \"speed\" (known: mode, num_wgs, gemm_wgs, comm_wgs, tile, comm_tile, "
         "group_m, split_k)"},
        /* A one-letter name is no near miss of another one-letter name. */
        {"{\"m\": 64, \"n\": 64, \"k\": 64, \"q\": 1}", "unknown member \"q\" (known:"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(duet_predict_json(cases[i].req, &out), DUET_ERR_INVALID_ARG, "%s: %s", cases[i].req,
                     duet_last_error());
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%s: %s", cases[i].req, duet_last_error());
        cr_assert_str_eq(out, "untouched");
    }
}

Test(api_json, edit_distance, T_TIMEOUT)
{
    cr_assert_eq(duet__edit_distance("world", "world"), 0);
    cr_assert_eq(duet__edit_distance("wrld", "world"), 1, "one deletion");
    cr_assert_eq(duet__edit_distance("worlds", "world"), 1, "one insertion");
    cr_assert_eq(duet__edit_distance("wurld", "world"), 1, "one substitution");
    cr_assert_eq(duet__edit_distance("wolrd", "world"), 1, "one swap of neighbours");
    cr_assert_eq(duet__edit_distance("", "top"), 3);
    cr_assert_eq(duet__edit_distance("kitten", "sitting"), 3, "k->s, e->i, +g");
    cr_assert_eq(duet__edit_distance("ab", "ba"), 1);
}
