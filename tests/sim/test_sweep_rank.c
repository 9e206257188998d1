/*
 * Where the static default ranks, in words: one function (duet_sweep_rank_str) serves both
 * `duet predict`'s summary line and the sweep's SVG legend, so the two cannot disagree on ties
 * (the SVG once said "rank 1 of 132" where predict said "tied with 131 others for best").
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "duet/duet.h"

TestSuite(sweep_rank, .timeout = 20);

/* A result of n points whose best takes best_ms, the default dflt_ms, ranked and tied as given. */
static duet_sweep_result_t result(duet_sweep_point_t *pts, size_t n, double best_ms, double dflt_ms, size_t rank,
                                  size_t ties)
{
    memset(pts, 0, n * sizeof(*pts));
    pts[0].makespan_s = best_ms * 1e-3;
    duet_sweep_result_t r;
    memset(&r, 0, sizeof(r));
    r.points = pts;
    r.n = n;
    r.dflt.makespan_s = dflt_ms * 1e-3;
    r.default_rank = rank;
    r.default_ties = ties;
    return r;
}

Test(sweep_rank, ties_for_best_are_worded_as_ties)
{
    duet_sweep_point_t pts[8];
    char buf[128];
    duet_sweep_result_t r = result(pts, 8, 1.0, 1.0, 1, 3);
    cr_assert_str_eq(duet_sweep_rank_str(&r, buf, sizeof(buf)), "rank 1 of 8; tied with 3 others for best");
    r.default_ties = 1;
    cr_assert_str_eq(duet_sweep_rank_str(&r, buf, sizeof(buf)), "rank 1 of 8; tied with 1 other for best");
    r.default_ties = 0;
    cr_assert_str_eq(duet_sweep_rank_str(&r, buf, sizeof(buf)), "rank 1 of 8; nothing in the sweep beats it");
}

Test(sweep_rank, a_slower_default_says_by_how_much)
{
    duet_sweep_point_t pts[8];
    char buf[128];
    /* 1.025 ms against 1 ms: the best is 2.5 % faster. */
    duet_sweep_result_t r = result(pts, 8, 1.0, 1.025, 4, 1);
    cr_assert_str_eq(duet_sweep_rank_str(&r, buf, sizeof(buf)),
                     "rank 4 of 8, tied with 1 other; the best is 2.5 % faster");
    /* 1.0005 ms against 1 ms: 0.05 %, below 0.1 %, so three decimals. */
    r = result(pts, 8, 1.0, 1.0005, 2, 0);
    cr_assert_str_eq(duet_sweep_rank_str(&r, buf, sizeof(buf)), "rank 2 of 8; the best is 0.050 % faster");
}

Test(sweep_rank, the_svg_legend_and_predict_say_the_same)
{
    static t_cli_t r;
    char svg[256];
    t_tmp_path(svg, sizeof(svg), "sweep.svg");
    /* Every gemm_wgs of 1..132 runs one 256x128 tile of a 64x64x64 GEMM the same way: all 132
     * configurations tie, the static default (gemm_wgs 99) among them. */
    t_cli_run(&r, NULL, "predict", "--gemm", "64x64x64", "--mode", "fused", "--tiles", "256x128x64", "--top", "1",
              "--svg", svg, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    const char *want = "rank 1 of 132; tied with 131 others for best";
    cr_assert(strstr(r.out, want) != NULL, "%s", r.out);
    char text[1 << 16];
    t_cli_slurp(svg, text, sizeof(text));
    cr_assert(strstr(text, want) != NULL, "the SVG legend does not say '%s'", want);
    cr_assert(strstr(text, "rank 1 of 132 ") == NULL && strstr(text, "rank 1 of 132<") == NULL);
    unlink(svg);
}
