/*
 * Size strings ("8192x8192x8192", "256x64", GEMM tiles) and shape files: strict parsing without
 * sscanf, whose %d and %lld are undefined behaviour for a number too large for the type.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/corpus.h"

Test(size_strings, dims_parse_takes_digits_and_x_only, T_TIMEOUT)
{
    int64_t d[4] = {-1, -1, -1, -1};
    cr_assert_eq(duet_dims_parse("8192x4096x1", 3, INT64_C(1) << 40, d), DUET_OK);
    cr_assert(d[0] == 8192 && d[1] == 4096 && d[2] == 1 && d[3] == -1);
    cr_assert_eq(duet_dims_parse("0x0", 2, 10, d), DUET_OK);
    cr_assert(d[0] == 0 && d[1] == 0);
    /* Each number at most max, exactly. */
    cr_assert_eq(duet_dims_parse("10x10", 2, 10, d), DUET_OK);
    cr_assert_eq(duet_dims_parse("10x11", 2, 10, d), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_dims_parse("9223372036854775807", 1, INT64_MAX, d), DUET_OK);
    cr_assert_eq(d[0], INT64_MAX);
    d[0] = 7;
    cr_assert_eq(duet_dims_parse("9223372036854775808", 1, INT64_MAX, d), DUET_ERR_INVALID_ARG);
    cr_assert_eq(d[0], 7, "outputs written only on success");
    static const char *const bad[] = {"",     "x",   "1x",    "x1",    "1x2x",
                                      "1xx2", "1X2", "+1x2",  " 1x2",  "1x2 ",
                                      "1x-2", "1,2", "1x2x3", "1.5x2", "99999999999999999999x1"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(duet_dims_parse(bad[i], 2, INT64_MAX, d), DUET_ERR_INVALID_ARG, "'%s'", bad[i]);
    cr_assert_eq(duet_dims_parse(NULL, 2, 10, d), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_dims_parse("1x2x3x4x5", 5, 10, d), DUET_ERR_INVALID_ARG, "at most 4 numbers");
}

Test(size_strings, tiles_parse_strictly, T_TIMEOUT)
{
    duet_gemm_tile_t t;
    cr_assert_eq(duet_tile_parse("256x128", &t), DUET_OK);
    cr_assert(t.bm == 256 && t.bn == 128 && t.bk == 64);
    cr_assert_eq(duet_tile_parse("64x256x64", &t), DUET_OK);
    cr_assert(t.bm == 64 && t.bn == 256 && t.bk == 64);
    /* 2^32 + 256 wrapped to 256 through %d on some C libraries; now it is too large. */
    static const char *const bad[] = {"4294967552x128", "256x128x", "256x128x64x1",
                                      "256 x128",       "+256x128", "256x128x32"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(duet_tile_parse(bad[i], &t), DUET_ERR_INVALID_ARG, "'%s'", bad[i]);
}

/* Write a shapes file and load it at world 2. */
static duet_status_t load_shapes(const char *text, duet_workloads_t *w)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/duet-shapes-%d.txt", (int)getpid());
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    duet_status_t st = duet_workloads_load(path, 2, DUET_DTYPE_BF16, w);
    unlink(path);
    return st;
}

Test(size_strings, shape_files_parse_strictly_and_count_every_line, T_TIMEOUT)
{
    duet_workloads_t w;
    /* A field of any length (this list of collectives is 170 characters; fields were cut at 159). */
    cr_assert_eq(load_shapes("# comment\n\n4096x4096x4096 2048x8192 "
                             "all_gather,all_reduce,reduce_scatter,all_to_all,broadcast,all_gather,all_reduce,"
                             "reduce_scatter,all_to_all,broadcast,all_gather,all_reduce,reduce_scatter fp16\n"
                             "\t1x8192x8192\t-\tnone\r\n",
                             &w),
                 DUET_OK, "%s", duet_last_error());
    cr_assert_eq(w.n, 14);
    cr_assert(w.w[12].coll == DUET_COLL_REDUCE_SCATTER && w.w[12].mc == 2048 && w.w[12].dtype == DUET_DTYPE_FP16);
    cr_assert(w.w[13].m == 1 && w.w[13].coll == DUET_COLL_NONE && w.w[13].mc == 0 && w.w[13].dtype == DUET_DTYPE_BF16);
    duet_workloads_free(&w);
    /* Errors name the line, blank lines counted. */
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"\n\n99999999999999999999x1x1 - none\n", "line 3: '99999999999999999999x1x1' is not MxNxK"},
        {"1x1x1 - none\n\n\n1x1x1 2000000000000x8 all_gather\n", "line 4: '2000000000000x8' is not McxNc or -"},
        {"1x1x1 - none fp16 extra\n", "line 1: want"},
        {"1x1x1 -\n", "line 1: want"},
        {"1x1x1 3x8 reduce_scatter\n", "line 1: reduce_scatter splits the 3 rows"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_assert_eq(load_shapes(bad[i].text, &w), DUET_ERR_PARSE, "%s", bad[i].text);
        cr_assert(strstr(duet_last_error(), bad[i].want) != NULL, "%s: %s", bad[i].text, duet_last_error());
    }
    /* 2^40 parses and the workload rules refuse it with their own reason. */
    cr_assert_eq(load_shapes("1099511627776x1x1 - none\n", &w), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "above 16777216") != NULL, "%s", duet_last_error());
}
