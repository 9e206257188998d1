/*
 * Workload and configuration rules: defaults, and every rejection.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../test_util.h"

Test(names, parse_and_print_round_trip, T_TIMEOUT)
{
    for (int32_t c = 0; c < DUET_COLL_COUNT; c++) {
        int32_t back = -1;
        cr_assert_eq(duet_collective_parse(duet_collective_name(c), &back), DUET_OK);
        cr_assert_eq(back, c);
    }
    int32_t x;
    cr_assert_eq(duet_collective_parse("allgather", &x), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "all_gather") != NULL, "lists the accepted names");
    cr_assert_eq(duet_dtype_parse("fp32", &x), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_mode_parse("both", &x), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_mode_parse("concurrent", &x), DUET_OK);
    cr_assert_eq(x, DUET_MODE_CONCURRENT);
}

Test(tiles, list_and_parse, T_TIMEOUT)
{
    cr_assert_eq(duet_tile_count(), 8);
    duet_gemm_tile_t t;
    cr_assert_eq(duet_tile_parse("256x128x64", &t), DUET_OK);
    cr_assert(t.bm == 256 && t.bn == 128 && t.bk == 64);
    cr_assert_eq(duet_tile_parse("128x256", &t), DUET_OK);
    cr_assert(t.bm == 128 && t.bn == 256 && t.bk == 64);
    cr_assert_eq(duet_tile_parse("300x128", &t), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "256x256x64") != NULL, "lists the supported tiles");
    cr_assert_eq(duet_tile_parse("256x128x32", &t), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_tile_parse("256x", &t), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_tile_parse("256x128x64x1", &t), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_tile_parse("abc", &t), DUET_ERR_INVALID_ARG);
    /* 256x256x64 fp16 needs 64 KiB per stage: three stages on H200 = 192 KiB. */
    duet_gemm_tile_t big = {256, 256, 64};
    cr_assert_eq(duet_gemm_tile_smem_bytes(big, DUET_DTYPE_FP16, 3), 196608.0);
}

Test(tiles, config_tile_str_names_the_split_and_the_vendor, T_TIMEOUT)
{
    duet_hw_t hw;
    cr_assert_eq(duet_hw_builtin("h200", &hw), DUET_OK);
    char buf[32];
    duet_config_t c = duet_config_default(&hw, DUET_MODE_FUSED);
    c.tile = (duet_gemm_tile_t){128, 256, 64};
    cr_assert_str_eq(duet_config_tile_str(&c, buf, sizeof(buf)), "128x256x64");
    c.split_k = 2;
    cr_assert_str_eq(duet_config_tile_str(&c, buf, sizeof(buf)), "128x256x64/k2");
    /* Vendor mode's GEMM runs at the library's own tile: the configuration's tile means nothing. */
    c = duet_config_default(&hw, DUET_MODE_VENDOR);
    cr_assert_str_eq(duet_config_tile_str(&c, buf, sizeof(buf)), "vendor");
}

Test(workload, valid_workloads_pass, T_TIMEOUT)
{
    duet_workload_t ok[] = {
        t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 2048, 4096, 2),
        t_wl(1, 8192, 8192, DUET_COLL_REDUCE_SCATTER, 512, 4096, 8),
        t_wl(0, 0, 0, DUET_COLL_ALL_REDUCE, 1000, 333, 3),
        t_wl(100, 200, 300, DUET_COLL_NONE, 0, 0, 1),
        t_wl(64, 64, 64, DUET_COLL_BROADCAST, 64, 64, 4),
    };
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        cr_assert_eq(duet_workload_validate(&ok[i]), DUET_OK, "case %zu: %s", i, duet_last_error());
}

typedef struct bad_wl {
    duet_workload_t wl;
    const char *must_mention;
} bad_wl_t;

Test(workload, every_rule_rejects_with_a_reason, T_TIMEOUT)
{
    bad_wl_t bad[] = {
        {t_wl(-1, 8, 8, DUET_COLL_NONE, 0, 0, 1), "negative"},
        {t_wl(0, 8, 8, DUET_COLL_ALL_GATHER, 8, 8, 2), "all be positive"},
        {t_wl(8, 8, 8, DUET_COLL_REDUCE_SCATTER, 1000, 64, 3), "1000 % 3"},
        {t_wl(8, 8, 8, DUET_COLL_ALL_TO_ALL, 10, 64, 4), "10 % 4"},
        {t_wl(8, 8, 8, DUET_COLL_ALL_GATHER, 8, 8, 0), "world 0"},
        {t_wl(8, 8, 8, DUET_COLL_NONE, 8, 8, 1), "without a collective"},
        {t_wl(0, 0, 0, DUET_COLL_NONE, 0, 0, 1), "neither"},
        {t_wl(8, 8, 8, DUET_COLL_ALL_GATHER, 0, 8, 2), "both extents"},
        {t_wl(1 << 25, 8, 8, DUET_COLL_NONE, 0, 0, 1), "above"},
    };
    bad[4].wl.world = 0;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(duet_workload_validate(&bad[i].wl), DUET_ERR_INVALID_ARG, "case %zu passed", i);
        cr_assert(strstr(duet_last_error(), bad[i].must_mention) != NULL, "case %zu: '%s' lacks '%s'", i,
                  duet_last_error(), bad[i].must_mention);
    }
    duet_workload_t bc = t_wl(8, 8, 8, DUET_COLL_BROADCAST, 8, 8, 2);
    bc.root = 2;
    cr_assert_eq(duet_workload_validate(&bc), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "root 2") != NULL);
    duet_workload_t dt = t_wl(8, 8, 8, DUET_COLL_NONE, 0, 0, 1);
    dt.dtype = 7;
    cr_assert_eq(duet_workload_validate(&dt), DUET_ERR_INVALID_ARG);
}

Test(config, defaults_follow_the_reference_design, T_TIMEOUT)
{
    duet_hw_t h = t_hw("h200"), a = t_hw("mi300x");
    duet_config_t f = duet_config_default(&h, DUET_MODE_FUSED);
    cr_assert(f.num_wgs == 132 && f.gemm_wgs == 99 && f.comm_wgs == 33);
    cr_assert(f.tile.bm == 256 && f.tile.bn == 128 && f.tile.bk == 64);
    cr_assert(f.cm == 256 && f.cn == 64 && f.group_m == 8);
    duet_config_t c = duet_config_default(&h, DUET_MODE_CONCURRENT);
    cr_assert(c.comm_wgs == 16 && c.gemm_wgs == 116);
    duet_config_t m = duet_config_default(&a, DUET_MODE_FUSED);
    cr_assert(m.num_wgs == 304 && m.gemm_wgs == 228, "the seed's 228 of 304");
    duet_config_t mc = duet_config_default(&a, DUET_MODE_CONCURRENT);
    cr_assert(mc.comm_wgs == 38 && mc.gemm_wgs == 266, "the seed's 38 and 266");
}

Test(config, rejections_say_why, T_TIMEOUT)
{
    duet_hw_t h = t_hw("h200");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_config_t base = duet_config_default(&h, DUET_MODE_FUSED);
    cr_assert_eq(duet_config_validate(&base, &wl, &h), DUET_OK);

    duet_config_t c = base;
    c.gemm_wgs = 140;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "gemm_wgs 140") != NULL);
    c = base;
    c.num_wgs = 200;
    c.gemm_wgs = 150;
    c.comm_wgs = 50;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INFEASIBLE);
    cr_assert(strstr(duet_last_error(), "one persistent CTA per SM") != NULL);
    c = base;
    c.comm_wgs = 5;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INVALID_ARG);
    c = base;
    c.tile.bm = 96;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INVALID_ARG);
    c = base;
    c.cn = 60;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "multiple of 8") != NULL);
    c = base;
    c.group_m = 0;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INVALID_ARG);
    c = base;
    c.mode = 5;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INVALID_ARG);

    /* K split: in [1, 16], not in vendor mode, and every part needs a K step (4096 = 64 steps). */
    c = base;
    cr_assert_eq(c.split_k, 1);
    c.split_k = 17;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "split_k 17 is outside [1, 16]") != NULL, "%s", duet_last_error());
    c.split_k = 16;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_OK);
    duet_workload_t short_k = t_wl(4096, 4096, 200, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    c.split_k = 3; /* 200 = 4 steps: 2 + 2 + nothing */
    cr_assert_eq(duet_config_validate(&c, &short_k, &h), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "too few for 3 parts") != NULL, "%s", duet_last_error());
    c.split_k = 4;
    cr_assert_eq(duet_config_validate(&c, &short_k, &h), DUET_OK);
    /* Vendor mode's tile and K split are the library's kernel: a split it chose is valid, and a
     * tile any library could report, but not one that makes no grid. */
    c = duet_config_default(&h, DUET_MODE_VENDOR);
    c.split_k = 2;
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_OK, "%s", duet_last_error());
    c.tile = (duet_gemm_tile_t){192, 128, 32};
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_OK, "%s", duet_last_error());
    c.tile = (duet_gemm_tile_t){100, 128, 64};
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "vendor kernel") != NULL, "%s", duet_last_error());

    duet_config_t cc = duet_config_default(&h, DUET_MODE_CONCURRENT);
    cc.comm_wgs = 0;
    cr_assert_eq(duet_config_validate(&cc, &wl, &h), DUET_ERR_INVALID_ARG);
    cc = duet_config_default(&h, DUET_MODE_CONCURRENT);
    cc.comm_wgs = 132 * 4 + 1;
    cr_assert_eq(duet_config_validate(&cc, &wl, &h), DUET_ERR_INFEASIBLE);
}

Test(config, a_tile_larger_than_shared_memory_is_infeasible, T_TIMEOUT)
{
    duet_hw_t a = t_hw("mi300x");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t c = duet_config_default(&a, DUET_MODE_FUSED);
    c.tile = (duet_gemm_tile_t){256, 256, 64};
    cr_assert_eq(duet_config_validate(&c, &wl, &a), DUET_OK, "one 64 KiB stage fits the 64 KiB LDS");
    a.gemm_stages = 2;
    cr_assert_eq(duet_config_validate(&c, &wl, &a), DUET_ERR_INFEASIBLE);
    cr_assert(strstr(duet_last_error(), "128 KiB") != NULL, "%s", duet_last_error());
}

Test(shapes, seed_set_and_shape_files, T_TIMEOUT)
{
    cr_assert_eq(duet_seed_shape_count(), 15);
    duet_workloads_t w;
    cr_assert_eq(duet_workloads_seed(2, 0, DUET_DTYPE_FP16, &w), DUET_OK);
    cr_assert_eq(w.n, 75, "15 shapes x 5 collectives");
    cr_assert(w.w[0].m == 1 && w.w[0].mc == 512 && w.w[0].nc == 4096 && w.w[0].coll == DUET_COLL_ALL_GATHER);
    cr_assert(w.w[74].m == 8192 && w.w[74].mc == 2048 && w.w[74].nc == 16384 && w.w[74].coll == DUET_COLL_BROADCAST);
    duet_workloads_free(&w);
    cr_assert_eq(duet_workloads_seed(8, 1u << DUET_COLL_ALL_REDUCE, DUET_DTYPE_BF16, &w), DUET_OK);
    cr_assert(w.n == 15 && w.w[13].mc == 8192, "256 x 8 x 4 rows at W = 8");
    duet_workloads_free(&w);

    char path[64];
    t_tmp_path(path, sizeof(path), "shapes.txt");
    FILE *f = fopen(path, "w");
    fputs("# a comment\n\n8192x8192x8192 4096x8192 all_gather,all_reduce bf16\n1x8192x8192 - none\n", f);
    fclose(f);
    cr_assert_eq(duet_workloads_load(path, 2, DUET_DTYPE_FP16, &w), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(w.n, 3);
    cr_assert(w.w[1].coll == DUET_COLL_ALL_REDUCE && w.w[1].dtype == DUET_DTYPE_BF16 && w.w[1].mc == 4096);
    cr_assert(w.w[2].coll == DUET_COLL_NONE && w.w[2].mc == 0 && w.w[2].dtype == DUET_DTYPE_FP16);
    duet_workloads_free(&w);
    f = fopen(path, "w");
    fputs("8192x8192x8192 4096x8192 all_gather\n4096x4096 512x512 all_reduce\n", f);
    fclose(f);
    cr_assert_eq(duet_workloads_load(path, 2, DUET_DTYPE_FP16, &w), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "line 2") != NULL, "%s", duet_last_error());
    f = fopen(path, "w");
    fputs("64x64x64 1001x64 reduce_scatter\n", f);
    fclose(f);
    cr_assert_eq(duet_workloads_load(path, 2, DUET_DTYPE_FP16, &w), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "1001 % 2") != NULL, "%s", duet_last_error());
    unlink(path);
}

/*
 * The K split's boundaries, worked out by hand with 64-deep tiles. A split is valid when every
 * part owns a K step: (split - 1) x ceil(steps / split) < steps. And it is worth trying only while
 * it adds fewer queue tiles than two waves of the device: tiles_mn x (split - 1) < 2 x SMs.
 */
Test(config, the_k_split_boundaries, T_TIMEOUT)
{
    duet_hw_t h = t_hw("h200");
    duet_config_t c = duet_config_default(&h, DUET_MODE_FUSED);
    const struct {
        int64_t k;
        int32_t split;
        int ok;
    } parts[] = {
        {192, 3, 1},   /* 3 steps: 1 + 1 + 1 */
        {256, 3, 0},   /* 4 steps: 2 + 2 + 0 */
        {320, 3, 1},   /* 5 steps: 2 + 2 + 1 */
        {320, 4, 0},   /* 5 steps: 2 + 2 + 1 + 0 */
        {320, 5, 1},   /* 5 steps: 1 each */
        {320, 6, 0},   /* 5 steps for 6 parts */
        {1024, 16, 1}, /* 16 steps: 1 each */
        {960, 16, 0},  /* 15 steps for 16 parts */
    };
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
        duet_workload_t wl = t_wl(4096, 4096, parts[i].k, DUET_COLL_NONE, 0, 0, 1);
        c.split_k = parts[i].split;
        cr_assert_eq(duet_config_validate(&c, &wl, &h) == DUET_OK, parts[i].ok, "K %lld split %d: %s",
                     (long long)parts[i].k, (int)parts[i].split, duet_last_error());
    }
    /* K = 65 is ceil(65 / 64) = 2 steps: split 2 is 1 + 1, valid; split 3 is not. */
    duet_workload_t odd = t_wl(4096, 4096, 65, DUET_COLL_NONE, 0, 0, 1);
    c.split_k = 2;
    cr_assert_eq(duet_config_validate(&c, &odd, &h), DUET_OK, "%s", duet_last_error());
    c.split_k = 3;
    cr_assert_eq(duet_config_validate(&c, &odd, &h), DUET_ERR_INVALID_ARG);

    /* Worth trying on 132 SMs, 256 x 128 tiles: M = N = 1024 is 4 x 8 = 32 C tiles; 32 x (s - 1) <
     * 264 holds up to s = 9 (256 < 264), not at s = 10 (288). A 2112 x 1024 GEMM is 9 x 8 = 72 tiles:
     * 72 x 3 = 216 < 264 at s = 4, 72 x 4 = 288 at s = 5. Exactly at the bound: 132 tiles (11 x 12,
     * M = 2816, N = 1536) at s = 3 is 264, not below it. */
    duet_gemm_tile_t t = {256, 128, 64};
    duet_workload_t w32 = t_wl(1024, 1024, 8192, DUET_COLL_NONE, 0, 0, 1);
    cr_assert_eq(duet_split_k_worth_trying_on(&w32, t, 9, 132), 1);
    cr_assert_eq(duet_split_k_worth_trying_on(&w32, t, 10, 132), 0);
    duet_workload_t w72 = t_wl(2112, 1024, 8192, DUET_COLL_NONE, 0, 0, 1);
    cr_assert_eq(duet_split_k_worth_trying_on(&w72, t, 4, 132), 1);
    cr_assert_eq(duet_split_k_worth_trying_on(&w72, t, 5, 132), 0);
    duet_workload_t w132 = t_wl(2816, 1536, 8192, DUET_COLL_NONE, 0, 0, 1);
    cr_assert_eq(duet_split_k_worth_trying_on(&w132, t, 2, 132), 1, "132 < 264");
    cr_assert_eq(duet_split_k_worth_trying_on(&w132, t, 3, 132), 0, "264 is not below 264");
    /* No split is always worth trying; a split with an empty part never is; out of range never. */
    cr_assert_eq(duet_split_k_worth_trying_on(&w132, t, 1, 132), 1);
    duet_workload_t short_k = t_wl(64, 64, 256, DUET_COLL_NONE, 0, 0, 1);
    cr_assert_eq(duet_split_k_worth_trying_on(&short_k, t, 3, 132), 0, "4 steps in 3 parts leave one empty");
    cr_assert_eq(duet_split_k_worth_trying_on(&short_k, t, 17, 132), 0);
    cr_assert_eq(duet_split_k_worth_trying_on(&short_k, t, 0, 132), 0);
}
