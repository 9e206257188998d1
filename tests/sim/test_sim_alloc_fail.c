/*
 * The simulator's entry points when memory runs out (tests/alloc_fail.h): a JSON request for a
 * sweep, a simulation into a fresh workspace, and a timeline drawn as SVG and written as JSON, each
 * with its 1st, 2nd, ... allocation failing, report DUET_ERR_NO_MEMORY and write nothing.
 */
#include <criterion/criterion.h>

#include "../alloc_fail.h"
#include "../test_util.h"

static char *answer;

static duet_status_t predict(const char *req)
{
    answer = NULL;
    return duet_predict_json(req, &answer);
}

Test(sim_alloc_fail, a_json_request, .timeout = 60)
{
    static const char *const reqs[] = {
        "{\"op\": \"predict\", \"collective\": \"all_gather\", \"m\": 512, \"n\": 512, \"k\": 512, \"mc\": 256, "
        "\"nc\": 256, \"split_step\": 33, \"emit\": \"nccl\"}",
        "{\"op\": \"simulate\", \"collective\": \"all_reduce\", \"m\": 512, \"n\": 512, \"k\": 512, \"mc\": 256, "
        "\"nc\": 256, \"policy\": \"frozen\"}",
    };
    for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
        long runs = 0;
        T_EVERY_ALLOC_FAILS(
            predict(reqs[i]),
            {
                cr_assert(t__st == DUET_OK || answer == NULL);
                duet_json_free(answer);
            },
            &runs);
        cr_assert_gt(runs, 0, "%zu", i);
    }
}

static duet_sim_ws_t *ws;

static duet_status_t simulate(const duet_hw_t *hw, const duet_plan_t *plan, duet_trace_t *tr, duet_sim_result_t *r)
{
    ws = NULL;
    duet_status_t st = duet_sim_ws_create(&ws);
    if (st >= 0)
        st = duet_sim_run(ws, NULL, hw, plan, tr, r);
    duet_sim_ws_destroy(ws);
    return st;
}

Test(sim_alloc_fail, a_simulation_with_its_timeline, .timeout = 60)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(2048, 2048, 2048, DUET_COLL_ALL_GATHER, 1024, 1024, 2);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    duet_plan_t plan;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &plan), DUET_OK);
    duet_sim_result_t r, clean;
    duet_trace_t tr;
    duet_trace_init(&tr, "t");
    cr_assert_eq(simulate(&hw, &plan, &tr, &clean), DUET_OK);
    duet_trace_free(&tr);
    long runs = 0;
    T_EVERY_ALLOC_FAILS((duet_trace_init(&tr, "t"), simulate(&hw, &plan, &tr, &r)), duet_trace_free(&tr), &runs);
    cr_assert_gt(runs, 1);
    cr_assert_eq(r.makespan_s, clean.makespan_s);

    duet_trace_init(&tr, "t");
    cr_assert_eq(simulate(&hw, &plan, &tr, &r), DUET_OK);
    char svg[128], json[128];
    t_tmp_path(svg, sizeof(svg), "t.svg");
    t_tmp_path(json, sizeof(json), "t.json");
    const duet_trace_t *one[] = {&tr};
    T_EVERY_ALLOC_FAILS(
        duet_trace_write_svg(one, 1, "title", svg),
        {
            cr_assert(t__st == DUET_OK || access(svg, F_OK) != 0, "a failed write leaves no file");
            unlink(svg);
        },
        &runs);
    cr_assert_gt(runs, 0);
    T_EVERY_ALLOC_FAILS(
        duet_trace_write_json(&tr, &plan, &hw, json),
        {
            cr_assert(t__st == DUET_OK || access(json, F_OK) != 0, "a failed write leaves no file");
            unlink(json);
        },
        &runs);
    duet_trace_free(&tr);
}
