/*
 * duet bench-plot: the GPU bench's picture drawn again on the CPU from a bench file, here the
 * committed 2 x H200 bench (bench/results/bench-h200-w2.json: 15 shapes x 5 collectives). Every
 * workload keeps its row, the figures are the file's, and a file that is not a bench is refused
 * with one line and nothing written.
 */
#include <criterion/criterion.h>

#include "../cli_run.h"
#include "../svg_geom.h"

#define BENCH_FILE "bench/results/bench-h200-w2.json"

Test(cli_bench_plot, draws_every_workload_of_the_committed_bench, T_TIMEOUT)
{
    static t_cli_t r;
    static char svg[1 << 20];
    char path[64];
    t_tmp_path(path, sizeof(path), "bench.svg");
    t_cli_run(&r, NULL, "bench-plot", BENCH_FILE, "--svg", path, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.out, "75 workloads drawn") != NULL, "%s", r.out);
    t_cli_slurp(path, svg, sizeof(svg));
    t_svg_t g;
    t_svg_read(svg, &g);
    /* 15 shapes named once each, 75 collective rows, 150 bars (no figure of this file is missing). */
    size_t shapes = 0, rows = 0, bars = 0;
    for (size_t i = 0; i < g.n_texts; i++) {
        shapes += strstr(g.texts[i].text, ", comm ") != NULL;
        rows += strcmp(g.texts[i].text, "all_gather") == 0 || strcmp(g.texts[i].text, "all_reduce") == 0 ||
                strcmp(g.texts[i].text, "reduce_scatter") == 0 || strcmp(g.texts[i].text, "all_to_all") == 0 ||
                strcmp(g.texts[i].text, "broadcast") == 0;
    }
    for (size_t i = 0; i < g.n_rects; i++)
        bars += fabs(g.rects[i].box.y1 - g.rects[i].box.y0 - 5) < 1e-9;
    cr_assert(shapes == 15 && rows == 75 && bars == 150, "%zu %zu %zu", shapes, rows, bars);
    /* The first workload, 1x8192x8192 + all_gather 512x4096: the file's vendor_over_bound
     * 1.62032 over duet_over_bound 1.23044 is 1.3169 (its speedup_over_vendor): "1.32x". */
    cr_assert_not_null(t_svg_find_text(&g, "1x8192x8192, comm 512x4096"));
    cr_assert(strstr(svg, ">1.32x</text>") != NULL);
    /* The title and legend name the file's device, world and vendor libraries. */
    cr_assert(strstr(svg, "NVIDIA H200 x2: makespan") != NULL);
    cr_assert(strstr(svg, "cuBLASLt 130100 + NCCL 2.28.3") != NULL);
    /* The largest ratio of the file, 1.80007 (16x8192x8192 all_gather, vendor), ends the axis at
     * 2 (ticks of 0.2); 1078 px would still fit a 1080 px screen, this file takes 1062. */
    cr_assert(strstr(svg, "height=\"1062\"") != NULL);
    double v[64];
    char msg[128];
    size_t n = t_svg_numbers_at(&g, 1033, v, 64);
    cr_assert(t_round_ticks(v, n, 0, 1.80007, msg, sizeof(msg)), "%s", msg);
    cr_assert(fabs(v[n - 1] - 2.0) < 1e-12);
    t_svg_free(&g);
    unlink(path);
}

Test(cli_bench_plot, refuses_what_is_not_a_bench, T_TIMEOUT)
{
    static t_cli_t r;
    char path[64], in[64];
    t_tmp_path(path, sizeof(path), "not.svg");
    t_tmp_path(in, sizeof(in), "not-bench.json");
    unlink(path);
    /* A trace file is JSON of another schema. */
    t_cli_run(&r, NULL, "bench-plot", "tests/fuzz/corpus/fuzz_trace/predicted_fused.json", "--svg", path, NULL);
    t_cli_expect_error(&r, 2, "bench-plot", "schema");
    /* A --gemm-only bench has no collective to draw. */
    cr_assert_eq(t_spill(in, "{\"schema\": \"duet-bench/1\", \"gemm_only\": true, \"workloads\": []}"), 0);
    t_cli_run(&r, NULL, "bench-plot", in, "--svg", path, NULL);
    t_cli_expect_error(&r, 2, "bench-plot", "--gemm-only");
    /* A workload without its derived figures. */
    cr_assert_eq(
        t_spill(in,
                "{\"schema\": \"duet-bench/1\", \"device\": \"d\", \"vendor\": \"v\", \"world\": 2, "
                "\"workloads\": [{\"collective\": \"all_gather\", \"dtype\": \"fp16\", \"m\": 1, \"n\": 2, \"k\": 3, "
                "\"mc\": 4, \"nc\": 5, \"world\": 2}]}"),
        0);
    t_cli_run(&r, NULL, "bench-plot", in, "--svg", path, NULL);
    t_cli_expect_error(&r, 2, "bench-plot", "workloads[0].derived: missing");
    /* Usage: no file, no --svg. */
    t_cli_run(&r, NULL, "bench-plot", "--svg", path, NULL);
    t_cli_expect_error(&r, 2, "bench-plot", "bench file");
    t_cli_run(&r, NULL, "bench-plot", BENCH_FILE, NULL);
    t_cli_expect_error(&r, 2, "bench-plot", "--svg");
    cr_assert_eq(access(path, F_OK), -1, "%s was written", path);
    unlink(in);
}
