/*
 * One request, two front ends: `duet plan|simulate|predict|hw show ... --json` and
 * duet_predict_json() fill the same request (sim/request.h) and resolve it with the same rules, so
 * for every operation and a sweep of options their answers are the same JSON document (less the
 * wall time a sweep took), and they refuse the same requests.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>

#include "../cli_run.h"

#define AG "\"collective\": \"all_gather\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"mc\": 1024, \"nc\": 4096"
#define AG_ARGS "--collective", "all_gather", "--gemm", "4096x4096x4096", "--comm", "1024x4096"
#define AR "\"collective\": \"all_reduce\", \"m\": 2048, \"n\": 2048, \"k\": 2048, \"comm_bytes\": 16777216"
#define AR_ARGS "--collective", "all_reduce", "--gemm", "2048x2048x2048", "--comm-bytes", "16M"

/* A request and the command line that asks the same (at most 24 words). */
typedef struct t_pair {
    const char *json;
    const char *argv[24];
} t_pair_t;

static const t_pair_t t_pairs[] = {
    /* plan */
    {"{\"op\": \"plan\", " AG "}", {"plan", AG_ARGS, "--json"}},
    {"{\"op\": \"plan\", " AG ", \"rank\": 1, \"config\": {\"mode\": \"concurrent\", \"gemm_wgs\": 100, "
     "\"comm_wgs\": 16, \"tile\": \"128x128x64\"}}",
     {"plan", AG_ARGS, "--rank", "1", "--mode", "concurrent", "--gemm-wgs", "100", "--comm-wgs", "16", "--tile",
      "128x128x64", "--json"}},
    {"{\"op\": \"plan\", " AR ", \"world\": 4, \"config\": {\"mode\": \"vendor\", \"gemm_wgs\": 112}}",
     {"plan", AR_ARGS, "--world", "4", "--mode", "vendor", "--gemm-wgs", "112", "--json"}},
    /* simulate */
    {"{\"op\": \"simulate\", " AR "}", {"simulate", AR_ARGS, "--json"}},
    {"{\"op\": \"simulate\", " AG ", \"policy\": \"frozen\", \"config\": {\"num_wgs\": 120, \"gemm_wgs\": 90}}",
     {"simulate", AG_ARGS, "--policy", "frozen", "--num-wgs", "120", "--gemm-wgs", "90", "--json"}},
    {"{\"op\": \"simulate\", " AG ", \"dtype\": \"fp16\", \"config\": {\"group_m\": 4, \"split_k\": 2, "
     "\"comm_tile\": \"128x64\"}}",
     {"simulate", AG_ARGS, "--dtype", "fp16", "--group-m", "4", "--split-k", "2", "--comm-tile", "128x64", "--json"}},
    {"{\"op\": \"simulate\", " AR ", \"config\": {\"mode\": \"vendor\", \"gemm_wgs\": 120}}",
     {"simulate", AR_ARGS, "--mode", "vendor", "--gemm-wgs", "120", "--json"}},
    /* predict */
    {"{" AG ", \"top\": 5}", {"predict", AG_ARGS, "--top", "5", "--json"}},
    /* frozen models fused mode only: both front ends sweep fused alone when no mode is named. */
    {"{" AG ", \"policy\": \"frozen\", \"split_step\": 4}",
     {"predict", AG_ARGS, "--policy", "frozen", "--splits", "step:4", "--json"}},
    {"{" AG ", \"modes\": [\"fused\"], \"tiles\": [\"256x128x64\", \"128x128x64\"], \"split_step\": 8, \"top\": 0}",
     {"predict", AG_ARGS, "--mode", "fused", "--tiles", "256x128x64,128x128x64", "--splits", "step:8", "--top", "0",
      "--json"}},
    {"{" AR ", \"split_ks\": [1, 2], \"split_step\": 8}",
     {"predict", AR_ARGS, "--split-k", "1,2", "--splits", "step:8", "--json"}},
    {"{" AG ", \"emit\": \"env\", \"split_step\": 8, \"top\": 3}",
     {"predict", AG_ARGS, "--emit", "env", "--splits", "step:8", "--top", "3", "--json"}},
    {"{" AG ", \"running_vendor\": {\"gemm_sms\": 100, \"comm_ctas\": 16}, \"split_step\": 8}",
     {"predict", AG_ARGS, "--running-vendor", "100,16", "--splits", "step:8", "--json"}},
    {"{\"hw\": \"mi300x\", " AR ", \"world\": 8, \"modes\": [\"fused\", \"concurrent\", \"vendor\"], "
     "\"split_step\": 16}",
     {"predict", "--hw", "mi300x", AR_ARGS, "--world", "8", "--mode", "all", "--splits", "step:16", "--json"}},
    /* hw */
    {"{\"op\": \"hw\", \"hw\": \"mi350x\"}", {"hw", "show", "mi350x", "--json"}},
};

/* Run the command line of pair i (padded with NULLs: the first ends the list). */
static void t_run_pair(t_cli_t *r, const t_pair_t *p)
{
    const char *const *a = p->argv;
    t_cli_run(r, NULL, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], a[14],
              a[15], a[16], a[17], a[18], a[19], a[20], a[21], a[22], a[23], NULL);
}

Test(cli_request, every_operation_answers_as_the_json_api, .timeout = 120)
{
    static t_cli_t r;
    for (size_t i = 0; i < sizeof(t_pairs) / sizeof(t_pairs[0]); i++) {
        char *api = NULL;
        cr_assert_eq(duet_predict_json(t_pairs[i].json, &api), DUET_OK, "%s: %s", t_pairs[i].json, duet_last_error());
        t_run_pair(&r, &t_pairs[i]);
        cr_assert_eq(r.code, 0, "%s: %s", t_pairs[i].argv[0], r.err);
        cJSON *a = cJSON_Parse(api), *c = cJSON_Parse(r.out);
        duet_json_free(api);
        cr_assert(a != NULL && c != NULL, "pair %zu: both answers are JSON", i);
        /* The one member that is not the answer: how long the sweep took. */
        cJSON_DeleteItemFromObject(a, "wall_us");
        cJSON_DeleteItemFromObject(c, "wall_us");
        if (!cJSON_Compare(a, c, 1)) {
            char *ta = cJSON_PrintUnformatted(a), *tc = cJSON_PrintUnformatted(c);
            cr_assert_fail("pair %zu (%s) differs:\napi %.600s\ncli %.600s", i, t_pairs[i].json, ta, tc);
        }
        cJSON_Delete(a);
        cJSON_Delete(c);
    }
}

/* Requests that break a rule between options: refused by both, the CLI with one line and exit 2. */
static const t_pair_t t_refused[] = {
    {"{\"collective\": \"all_gather\", \"m\": 64, \"n\": 64, \"k\": 64, \"mc\": 8, \"nc\": 8, \"comm_bytes\": 128}",
     {"predict", "--collective", "all_gather", "--gemm", "64x64x64", "--comm", "8x8", "--comm-bytes", "128"}},
    {"{\"m\": 64, \"n\": 64, \"k\": 64, \"comm_bytes\": 128}",
     {"predict", "--gemm", "64x64x64", "--comm-bytes", "128"}},
    {"{\"collective\": \"all_gather\", \"m\": 64, \"n\": 64, \"k\": 64}",
     {"predict", "--collective", "all_gather", "--gemm", "64x64x64"}},
    {"{" AG ", \"policy\": \"frozen\", \"emit\": \"env\"}",
     {"predict", AG_ARGS, "--policy", "frozen", "--emit", "env"}},
    {"{" AG ", \"tiles\": [\"256x256x256\"]}", {"predict", AG_ARGS, "--tiles", "256x256x256"}},
    {"{\"op\": \"plan\", " AG ", \"config\": {\"mode\": \"fused\", \"num_wgs\": 200}}",
     {"plan", AG_ARGS, "--mode", "fused", "--num-wgs", "200"}},
};

Test(cli_request, both_refuse_the_same_requests, .timeout = 60)
{
    static t_cli_t r;
    for (size_t i = 0; i < sizeof(t_refused) / sizeof(t_refused[0]); i++) {
        char *api = (char *)"untouched";
        cr_assert_lt(duet_predict_json(t_refused[i].json, &api), 0, "%s", t_refused[i].json);
        cr_assert_str_eq(api, "untouched");
        t_run_pair(&r, &t_refused[i]);
        t_cli_expect_error(&r, 2, t_refused[i].argv[0], "");
    }
}
