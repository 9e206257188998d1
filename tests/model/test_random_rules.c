/*
 * A random shape set's parameters: every rule of the check on each side, with its message, and the
 * one-line description naming each member that differs from the defaults (and nothing past the
 * buffer it is given).
 */
#include <criterion/criterion.h>

#include "../test_util.h"

TestSuite(random_rules, T_TIMEOUT);

Test(random_rules, every_rule_on_each_side)
{
    static const struct {
        int field; /* which member is changed */
        double value;
        const char *why;
    } cases[] = {
        {0, 0, "random shapes: extents [0, 16384] are not a range in [1, 2^24]"},
        {1, 128, "random shapes: extents [256, 128] are not a range in [1, 2^24]"},
        {1, 16777217, "random shapes: extents [256, 16777217] are not a range in [1, 2^24]"},
        {2, 255, "random shapes: the small extent's bound 255 is outside [256, 16384]"},
        {2, 16385, "random shapes: the small extent's bound 16385 is outside [256, 16384]"},
        {3, -0.1, "random shapes: shares must be in [0, 1] and skinny + small K at most 1"},
        {3, 1.5, "random shapes: shares must be in [0, 1] and skinny + small K at most 1"},
        {4, -0.1, "random shapes: shares must be in [0, 1] and skinny + small K at most 1"},
        {5, -0.1, "random shapes: shares must be in [0, 1] and skinny + small K at most 1"},
        {5, 0.9, "random shapes: shares must be in [0, 1] and skinny + small K at most 1"},
        {6, 0, "random shapes: no element type or collective to draw from"},
        {6, 1u << 30, "random shapes: no element type or collective to draw from"},
        {7, 0, "random shapes: no element type or collective to draw from"},
        {7, 1u << 30, "random shapes: no element type or collective to draw from"},
        {8, 0, "random shapes: world 0 is not in [1, 4096]"},
        {8, 4097, "random shapes: world 4097 is not in [1, 4096]"},
        {9, 512, "random shapes: comm sizes [512, 2.68435e+08] bytes are not a range in [1 KiB, 64 GiB]"},
        {10, 1024, "random shapes: comm sizes [262144, 1024] bytes are not a range in [1 KiB, 64 GiB]"},
        {10, 0x1p37, "random shapes: comm sizes [262144, 1.37439e+11] bytes are not a range in [1 KiB, 64 GiB]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_random_params_t p = duet_random_default_params();
        double v = cases[i].value;
        switch (cases[i].field) {
        case 0:
            p.min_dim = (int64_t)v;
            break;
        case 1:
            p.max_dim = (int64_t)v;
            break;
        case 2:
            p.skinny_max = (int64_t)v;
            break;
        case 3:
            p.ragged = v;
            break;
        case 4:
            p.skinny = v;
            break;
        case 5:
            p.small_k = v;
            break;
        case 6:
            p.dtypes = (uint32_t)v;
            break;
        case 7:
            p.colls = (uint32_t)v;
            break;
        case 8:
            p.world = (int32_t)v;
            break;
        case 9:
            p.min_comm_bytes = v;
            break;
        default:
            p.max_comm_bytes = v;
            break;
        }
        duet_workloads_t w = {NULL, 7};
        cr_assert_eq(duet_workloads_random(&p, 1, &w), DUET_ERR_INVALID_ARG, "%zu", i);
        cr_assert_str_eq(duet_last_error(), cases[i].why, "%zu", i);
        cr_assert_eq(w.n, 7, "nothing written");
    }
    duet_random_params_t p = duet_random_default_params();
    duet_workloads_t w;
    cr_assert_eq(duet_workloads_random(&p, 1000001, &w), DUET_ERR_INVALID_ARG);
    cr_assert_str_eq(duet_last_error(), "random shapes: 1000001 workloads asked for; 1 to 1000000");
}

Test(random_rules, the_description_names_what_differs_from_the_defaults)
{
    duet_random_params_t p = duet_random_default_params();
    char buf[512];
    duet_random_describe(&p, 24, buf, sizeof(buf));
    cr_assert_str_eq(buf, "random n=24 seed=1 world=1");
    p.seed = 7;
    p.world = 4;
    p.min_dim = 16;
    p.max_dim = 8192;
    p.ragged = 0.5;
    p.skinny = 0.25;
    p.small_k = 0.125;
    p.skinny_max = 64;
    p.dtypes = 1;
    p.colls = 2;
    p.min_comm_bytes = 4096;
    p.max_comm_bytes = 1e6;
    duet_random_describe(&p, 10, buf, sizeof(buf));
    cr_assert_str_eq(buf, "random n=10 seed=7 world=4 min_dim=16 max_dim=8192 ragged=0.5 skinny=0.25 small_k=0.125 "
                          "skinny_max=64 dtypes=0x1 colls=0x2 min_comm_bytes=4096 max_comm_bytes=1e+06");
    /* A buffer of 24 bytes holds the first 23 characters, and nothing is added past them. */
    char small[24 + 8];
    memset(small, '#', sizeof(small));
    duet_random_describe(&p, 10, small, 24);
    cr_assert_eq(strlen(small), 23);
    cr_assert(strncmp(small, "random n=10 seed=7 worl", 23) == 0, "%s", small);
    cr_assert_eq(small[24], '#');
}
