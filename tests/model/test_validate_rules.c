/*
 * Each rule of the workload and configuration checks, and of the random shape set's parameters,
 * met by one value just outside it (and the names of values outside their enumerations).
 */
#include <criterion/criterion.h>

#include "../test_util.h"

Test(validate_rules, every_workload_rule, T_TIMEOUT)
{
    const duet_workload_t ok = t_wl(64, 64, 64, DUET_COLL_ALL_GATHER, 64, 64, 2);
    cr_assert_eq(duet_workload_validate(&ok), DUET_OK);
    static const char *const why[] = {
        "dtype 7 is not fp16 or bf16",
        "collective -2 is unknown",
        "GEMM extents must not be negative (got 64x-1x64)",
        "GEMM 64x64x0: M, N and K must all be positive",
        "GEMM extents above 16777216 are not supported",
        "world 0 is outside [1, 1024]",
        "world 1025 is outside [1, 1024]",
        "a comm tensor 64x64 was given without a collective",
        "the workload has neither a GEMM nor a collective",
        "comm tensor 0x64: both extents must be positive",
        "comm extents above 16777216 are not supported",
        "broadcast root 2 is outside [0, 2)",
        "broadcast root -1 is outside [0, 2)",
    };
    duet_workload_t w[sizeof(why) / sizeof(why[0])];
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
        w[i] = ok;
    w[0].dtype = 7;
    w[1].coll = -2;
    w[2].n = -1;
    w[3].k = 0;
    w[4].m = (INT64_C(1) << 24) + 1;
    w[5].world = 0;
    w[6].world = 1025;
    w[7].coll = DUET_COLL_NONE;
    w[8] = t_wl(0, 0, 0, DUET_COLL_NONE, 0, 0, 1);
    w[9].mc = 0;
    w[10].nc = (INT64_C(1) << 24) + 1;
    w[11].coll = DUET_COLL_BROADCAST;
    w[11].root = 2;
    w[12].coll = DUET_COLL_BROADCAST;
    w[12].root = -1;
    for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
        cr_assert_eq(duet_workload_validate(&w[i]), DUET_ERR_INVALID_ARG, "%zu", i);
        cr_assert(strstr(duet_last_error(), why[i]) != NULL, "%zu: %s", i, duet_last_error());
    }
}

Test(validate_rules, every_configuration_rule, T_TIMEOUT)
{
    duet_hw_t h = t_hw("h200");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    duet_config_t f = duet_config_default(&h, DUET_MODE_FUSED), c = duet_config_default(&h, DUET_MODE_CONCURRENT);
    cr_assert_eq(duet_config_validate(&f, &wl, &h), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_config_validate(&c, &wl, &h), DUET_OK, "%s", duet_last_error());
    struct {
        duet_config_t cfg;
        duet_status_t st;
        const char *why;
    } cases[12];
    size_t n = 0;
#define CASE(base, field, value, status, text)                                                                         \
    do {                                                                                                               \
        cases[n].cfg = (base);                                                                                         \
        cases[n].cfg.field = (value);                                                                                  \
        cases[n].st = (status);                                                                                        \
        cases[n].why = (text);                                                                                         \
        n++;                                                                                                           \
    } while (0)
    CASE(f, mode, -1, DUET_ERR_INVALID_ARG, "mode -1 is not fused, concurrent, vendor or copy");
    CASE(f, group_m, 65, DUET_ERR_INVALID_ARG, "group_m 65 is outside [1, 64]");
    CASE(f, split_k, -1, DUET_ERR_INVALID_ARG, "split_k -1 is outside [1, 16]");
    CASE(f, num_wgs, 0, DUET_ERR_INVALID_ARG, "fused mode needs num_wgs >= 1 (got 0)");
    CASE(f, gemm_wgs, 133, DUET_ERR_INVALID_ARG, "gemm_wgs 133 is outside [0, num_wgs = 132]");
    CASE(f, comm_wgs, 5, DUET_ERR_INVALID_ARG, "fused mode: comm_wgs 5 must equal num_wgs - gemm_wgs");
    CASE(c, comm_wgs, -3, DUET_ERR_INVALID_ARG, "CTA counts must not be negative");
    CASE(c, gemm_wgs, 0, DUET_ERR_INVALID_ARG, "concurrent mode: the GEMM kernel needs gemm_wgs >= 1");
    CASE(c, gemm_wgs, 133, DUET_ERR_INFEASIBLE, "133");
    CASE(f, cm, 0, DUET_ERR_INVALID_ARG, "comm tile");
    CASE(f, cn, 4, DUET_ERR_INVALID_ARG, "comm tile");
#undef CASE
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(duet_config_validate(&cases[i].cfg, &wl, &h), cases[i].st, "%zu: %s", i, duet_last_error());
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%zu: %s", i, duet_last_error());
    }
}

Test(validate_rules, names_outside_their_enumerations, T_TIMEOUT)
{
    cr_assert_str_eq(duet_collective_name(-2), "unknown");
    cr_assert_str_eq(duet_collective_name(DUET_COLL_COUNT), "unknown");
    cr_assert_str_eq(duet_dtype_name(DUET_DTYPE_COUNT), "unknown");
    cr_assert_str_eq(duet_dtype_name(-1), "unknown");
    cr_assert_str_eq(duet_mode_name(DUET_MODE_COUNT), "unknown");
    cr_assert_str_eq(duet_mode_name(-1), "unknown");
    int32_t v = 99;
    cr_assert_eq(duet_mode_parse(NULL, &v), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "unknown mode '' (one of: fused, concurrent, vendor, copy)") != NULL, "%s",
              duet_last_error());
    cr_assert_eq(v, 99, "left alone");
    duet_gemm_tile_t t;
    cr_assert_eq(duet_tile_parse(NULL, &t), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "missing GEMM tile") != NULL, "%s", duet_last_error());
    int64_t d[4];
    cr_assert_lt(duet_dims_parse("1x2", 0, 10, d), 0, "n < 1");
    cr_assert_lt(duet_dims_parse("1x2x3x4x5", 5, 10, d), 0, "n > 4");
    cr_assert_lt(duet_dims_parse(NULL, 2, 10, d), 0);
}

Test(validate_rules, random_shape_parameters, T_TIMEOUT)
{
    const duet_random_params_t d = duet_random_default_params();
    duet_workloads_t w;
    static const char *const why[] = {
        "extents [0, 16384] are not a range in [1, 2^24]",
        "extents [256, 255] are not a range in [1, 2^24]",
        "extents [256, 16777217] are not a range",
        "the small extent's bound 100 is outside [256, 16384]",
        "the small extent's bound 20000 is outside [256, 16384]",
        "shares must be in [0, 1] and skinny + small K at most 1",
        "shares must be in [0, 1] and skinny + small K at most 1",
        "no element type or collective to draw from",
        "no element type or collective to draw from",
        "world 0 is not in [1, 4096]",
        "comm sizes [512, 2.68435e+08] bytes are not a range in [1 KiB, 64 GiB]",
        "comm sizes [262144, 1e+11] bytes are not a range",
    };
    duet_random_params_t p[sizeof(why) / sizeof(why[0])];
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        p[i] = d;
    p[0].min_dim = 0;
    p[1].max_dim = 255;
    p[2].max_dim = (INT64_C(1) << 24) + 1;
    p[3].skinny_max = 100;
    p[4].skinny_max = 20000;
    p[5].ragged = 1.5;
    p[6].skinny = 0.6;
    p[6].small_k = 0.6;
    p[7].dtypes = 0;
    p[8].colls = 1u << 30;
    p[9].world = 0;
    p[10].min_comm_bytes = 512;
    p[11].max_comm_bytes = 1e11;
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        cr_assert_eq(duet_workloads_random(&p[i], 4, &w), DUET_ERR_INVALID_ARG, "%zu", i);
        cr_assert(strstr(duet_last_error(), why[i]) != NULL, "%zu: %s", i, duet_last_error());
    }
    cr_assert_eq(duet_workloads_random(&d, 0, &w), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "0 workloads asked for; 1 to 1000000") != NULL, "%s", duet_last_error());

    /* The description names the seed, the world and every parameter that is not its default. */
    char buf[512];
    duet_random_describe(&d, 24, buf, sizeof(buf));
    cr_assert_str_eq(buf, "random n=24 seed=1 world=1", "the default seed is 1 (model.h)");
    duet_random_params_t q = d;
    q.seed = 7;
    q.world = 4;
    q.min_dim = 128;
    q.max_dim = 8192;
    q.ragged = 0.5;
    q.skinny = 0.25;
    q.small_k = 0.125;
    q.skinny_max = 512;
    q.dtypes = 1;
    q.colls = 3;
    q.min_comm_bytes = 4096;
    q.max_comm_bytes = 65536;
    duet_random_describe(&q, 5, buf, sizeof(buf));
    cr_assert_str_eq(buf, "random n=5 seed=7 world=4 min_dim=128 max_dim=8192 ragged=0.5 skinny=0.25 small_k=0.125 "
                          "skinny_max=512 dtypes=0x1 colls=0x3 min_comm_bytes=4096 max_comm_bytes=65536");
    /* A buffer too short for it all is cut, never overrun. */
    char small[30];
    duet_random_describe(&q, 5, small, sizeof(small));
    cr_assert_eq(strlen(small), sizeof(small) - 1);
    cr_assert(strncmp(small, "random n=5 seed=7 world=4 min", sizeof(small) - 1) == 0, "%s", small);
}
