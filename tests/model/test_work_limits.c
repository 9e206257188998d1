/*
 * The bounds on work (DUET_MAX_GEMM_TILES, DUET_MAX_COMM_TILES): a plan with more tiles than a
 * run can simulate in seconds is refused with an error naming the limit, at the limit it is
 * accepted, and the reference shape set stays well inside. Tile counts are worked by hand from
 * docs/model.md: GEMM tiles = ceil(M/BM) * ceil(N/BN) * split_k, comm queue = ceil(Mc/CM) *
 * ceil(Nc/CN) (all_reduce: ceil(of that / W) per rank).
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "duet/corpus.h"

static duet_config_t cfg_of(const duet_hw_t *hw, int bm, int bn, int split_k, int cm, int cn)
{
    duet_config_t c = duet_config_default(hw, DUET_MODE_FUSED);
    c.tile.bm = bm;
    c.tile.bn = bn;
    c.tile.bk = 64;
    c.split_k = split_k;
    c.cm = cm;
    c.cn = cn;
    return c;
}

Test(work_limits, the_limits_are_two_to_the_22_tiles, T_TIMEOUT)
{
    cr_assert_eq(DUET_MAX_GEMM_TILES, 4194304);
    cr_assert_eq(DUET_MAX_COMM_TILES, 4194304);
}

/* The case of issue 22: 2^24 x 2^24 elements in 1 x 8 tiles is 2^24 * 2^21 = 2^45 tiles. */
Test(work_limits, the_issue_case_is_refused_naming_the_limit, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 16777216, 16777216, 2);
    duet_config_t c = cfg_of(&hw, 256, 128, 1, 1, 8);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &c, 0, &p), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "35184372088832 tiles") != NULL, "%s", duet_last_error());
    cr_assert(strstr(duet_last_error(), "4194304") != NULL && strstr(duet_last_error(), "DUET_MAX_COMM_TILES"), "%s",
              duet_last_error());
    cr_assert_eq(duet_config_validate(&c, &wl, &hw), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_plan_build_queues(&wl, &c, 0, &p), DUET_ERR_INVALID_ARG);
}

/*
 * Comm queues at the limit pass and one row more fails. all_gather: 2048 rows x 16384 columns in
 * 1 x 8 tiles is 2048 * 2048 = 2^22 tiles; 2049 rows are 4196352. all_reduce: each rank owns
 * ceil(T / W) tiles, and that queue is what one plan runs: T = 8192 * 2048 = 2^24 over 4 ranks is
 * 2^22 each; 8193 rows give T = 16779264, 4194816 per rank.
 */
Test(work_limits, comm_queues_at_the_limit_pass_and_one_row_more_fails, T_TIMEOUT)
{
    static const struct {
        int32_t coll, world;
        int64_t mc, over;
    } cases[] = {{DUET_COLL_ALL_GATHER, 2, 2048, 4196352}, {DUET_COLL_ALL_REDUCE, 4, 8192, 4194816}};
    duet_hw_t hw = t_hw("h200");
    duet_config_t c = cfg_of(&hw, 256, 128, 1, 1, 8);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_plan_t p;
        duet_workload_t wl = t_wl(0, 0, 0, cases[i].coll, cases[i].mc, 16384, cases[i].world);
        cr_assert_eq(duet_plan_build_queues(&wl, &c, cases[i].world - 1, &p), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(p.comm.queue_len, 4194304);
        wl.mc++;
        cr_assert_eq(duet_plan_build_queues(&wl, &c, 0, &p), DUET_ERR_INVALID_ARG);
        char want[64];
        snprintf(want, sizeof(want), "%lld tiles per rank", (long long)cases[i].over);
        cr_assert(strstr(duet_last_error(), want) != NULL, "%s", duet_last_error());
    }
}

Test(work_limits, gemm_tiles_count_the_k_parts, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_plan_t p;
    /* 131072^2 in 64 x 64 tiles: 2048 * 2048 = 2^22 tiles. */
    duet_workload_t wl = t_wl(131072, 131072, 128, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t c = cfg_of(&hw, 64, 64, 1, 256, 64);
    cr_assert_eq(duet_plan_build_queues(&wl, &c, 0, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.gemm.tiles, 4194304);
    /* Two K parts (K = 128 is two steps of 64): 2^23 queue tiles. */
    c.split_k = 2;
    cr_assert_eq(duet_plan_build_queues(&wl, &c, 0, &p), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "8388608 tiles") != NULL && strstr(duet_last_error(), "DUET_MAX_GEMM_TILES"),
              "%s", duet_last_error());
    /* One more row of tiles: 2049 * 2048 = 4196352. */
    c.split_k = 1;
    wl.m = 131073;
    cr_assert_eq(duet_plan_build_queues(&wl, &c, 0, &p), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "4196352 tiles") != NULL, "%s", duet_last_error());
    /* The same GEMM in 256 x 256 tiles: 513 * 512 = 262656 tiles, far inside. */
    c.tile.bm = 256;
    c.tile.bn = 256;
    cr_assert_eq(duet_plan_build_queues(&wl, &c, 0, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.gemm.tiles, 262656);
}

/* Every workload of the reference shape set, every tile, the default comm tile and every K split
 * fits: the largest is 16384^3 in 64 x 64 tiles, 65536 C tiles, 2^20 queue tiles split 16 ways. */
Test(work_limits, the_reference_shape_set_fits, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    int32_t worlds[] = {1, 2, 4, 8};
    for (size_t w = 0; w < 4; w++) {
        duet_workloads_t set;
        cr_assert_eq(duet_workloads_seed(worlds[w], 0, DUET_DTYPE_BF16, &set), DUET_OK);
        for (size_t i = 0; i < set.n; i++)
            for (int t = 0; t < duet_tile_count(); t++) {
                duet_gemm_tile_t tile = duet_tile_get(t);
                duet_config_t c = cfg_of(&hw, tile.bm, tile.bn, 1, 256, 64);
                duet_plan_t p;
                cr_assert_eq(duet_plan_build_queues(&set.w[i], &c, 0, &p), DUET_OK, "%s", duet_last_error());
                c.split_k = DUET_MAX_SPLIT_K;
                duet_status_t st = duet_plan_build_queues(&set.w[i], &c, 0, &p);
                /* A split may be refused for a K too short for 16 parts, never for the limits. */
                cr_assert(st == DUET_OK || strstr(duet_last_error(), "DUET_MAX_") == NULL, "%s", duet_last_error());
            }
        duet_workloads_free(&set);
    }
}

/* A corpus row over the limit (issue 22: one such row made `duet validate` run for days) is refused
 * where the corpus is loaded, naming the row. */
Test(work_limits, a_corpus_row_over_the_limit_is_refused_at_load, T_TIMEOUT)
{
    const char *text = "{\"schema\": \"duet-corpus/1\", \"device\": \"d\", \"arch\": \"sm_90\", \"sms\": 132, "
                       "\"world\": 2, \"driver\": \"\", \"runtime\": \"\", \"date\": \"\", \"duet\": \"0.1.0\", "
                       "\"repeats\": 1, \"warmup\": 0, \"grid\": {\"fused_fracs\": [], \"tiles\": [], "
                       "\"concurrent_comm_wgs\": []}, \"rows\": [{\"kind\": \"comm_alone\", \"collective\": "
                       "\"all_gather\", \"dtype\": \"bf16\", \"m\": 0, \"n\": 0, \"k\": 0, \"mc\": 16777216, "
                       "\"nc\": 16777216, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, "
                       "\"gemm_wgs\": 0, \"comm_wgs\": 132, \"tile\": \"256x128x64\", \"comm_tile\": \"1x8\", "
                       "\"group_m\": 8, \"ok\": true, \"repeats\": 1, \"ms\": 1, \"min_ms\": 1, \"max_ms\": 1}]}";
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_parse(text, "big.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "big.json: rows[0]") != NULL &&
                  strstr(duet_last_error(), "DUET_MAX_COMM_TILES") != NULL,
              "%s", duet_last_error());
}

/* The CLI: one line on stderr naming the limit, exit status 2, at once. */
Test(work_limits, the_cli_refuses_with_exit_2, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "plan", "--collective", "all_gather", "--comm", "16777216x16777216", "--comm-tile", "1x8",
              NULL);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert(strncmp(r.err, "duet: plan: ", 12) == 0 && strstr(r.err, "DUET_MAX_COMM_TILES") != NULL, "%s", r.err);
    cr_assert_eq(strchr(r.err, '\n'), r.err + strlen(r.err) - 1, "one line: %s", r.err);
    t_cli_run(&r, NULL, "simulate", "--gemm", "16777216x16777216x64", NULL);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert(strstr(r.err, "DUET_MAX_GEMM_TILES") != NULL, "%s", r.err);
}
