/*
 * The tuner's parameters: each rule met by one value just outside it, the environment's overrides
 * (strict integers), the arch's stripping and the key's refusals.
 */
#include "tune_util.h"

Test(tune_params_rules, every_rule, T_TIMEOUT)
{
    const duet_tune_params_t d = duet_tune_default_params();
    duet_tune_params_t out;
    static const char *const why[] = {
        "tune: top_k 65 is outside [1, 63]",
        "tune: n_warmup -2 is outside [0, 1000000]",
        "tune: n_repeat 1000001 is outside [1, 1000000]",
        "tune: force, use_cache, write_cache and calibrated are 0 or 1",
        "tune: force, use_cache, write_cache and calibrated are 0 or 1",
        "tune: force, use_cache, write_cache and calibrated are 0 or 1",
        "tune: modes 0x0 is not a non-empty set of fused and concurrent",
        "tune: modes 0x4 is not a non-empty set of fused and concurrent",
        "tune: cm, cn and group_m must not be negative",
        "tune: n_space 3 with no space",
    };
    duet_tune_params_t p[sizeof(why) / sizeof(why[0])];
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        p[i] = d;
    p[0].top_k = 65;
    p[1].n_warmup = -2;
    p[2].n_repeat = 1000001;
    p[3].force = 2;
    p[4].use_cache = -1;
    p[5].calibrated = 3;
    p[6].modes = 0;
    p[7].modes = 1u << DUET_MODE_VENDOR;
    p[8].group_m = -1;
    p[9].n_space = 3;
    p[9].space = NULL;
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        cr_assert_eq(duet_tune_params_resolve(&p[i], &out), DUET_ERR_INVALID_ARG, "%zu", i);
        cr_assert(strstr(duet_last_error(), why[i]) != NULL, "%zu: %s", i, duet_last_error());
    }
    /* NULL: the defaults, with nothing in the environment. */
    unsetenv("DUET_TUNE_TOPK");
    cr_assert_eq(duet_tune_params_resolve(NULL, &out), DUET_OK);
    cr_assert_eq(out.top_k, 8);
    cr_assert_eq(out.force, 0);
}

Test(tune_params_rules, the_environment_is_read_strictly, T_TIMEOUT)
{
    duet_tune_params_t p = duet_tune_default_params(), out;
    p.top_k = 0; /* 0 / -1: from the environment, else the default */
    p.n_warmup = -1;
    p.n_repeat = 0;
    p.force = -1;
    setenv("DUET_TUNE_TOPK", "3", 1);
    setenv("DUET_TUNE_NWARMUP", "0", 1);
    setenv("DUET_TUNE_NREP", "7", 1);
    setenv("DUET_TUNE_FORCE", "1", 1);
    cr_assert_eq(duet_tune_params_resolve(&p, &out), DUET_OK, "%s", duet_last_error());
    cr_assert(out.top_k == 3 && out.n_warmup == 0 && out.n_repeat == 7 && out.force == 1);
    static const struct {
        const char *var, *value, *why;
    } bad[] = {
        {"DUET_TUNE_TOPK", "65", "DUET_TUNE_TOPK: '65' is not an integer in [1, 63]"},
        {"DUET_TUNE_TOPK", "3x", "DUET_TUNE_TOPK: '3x' is not an integer"},
        {"DUET_TUNE_NWARMUP", "-1", "DUET_TUNE_NWARMUP: '-1' is not an integer in [0, 1000000]"},
        {"DUET_TUNE_NREP", "0", "DUET_TUNE_NREP: '0' is not an integer in [1, 1000000]"},
        {"DUET_TUNE_FORCE", "yes", "DUET_TUNE_FORCE: 'yes' is not an integer in [0, 1]"},
        {"DUET_TUNE_FORCE", "99999999999999999999", "DUET_TUNE_FORCE: '99999999999999999999' is not an integer"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *keep = getenv(bad[i].var);
        char saved[64];
        snprintf(saved, sizeof(saved), "%s", keep ? keep : "");
        setenv(bad[i].var, bad[i].value, 1);
        cr_assert_eq(duet_tune_params_resolve(&p, &out), DUET_ERR_INVALID_ARG, "%s=%s", bad[i].var, bad[i].value);
        cr_assert(strstr(duet_last_error(), bad[i].why) != NULL, "%s", duet_last_error());
        setenv(bad[i].var, saved, 1);
    }
    /* Empty counts as unset: the defaults. */
    setenv("DUET_TUNE_TOPK", "", 1);
    setenv("DUET_TUNE_NWARMUP", "", 1);
    setenv("DUET_TUNE_NREP", "", 1);
    setenv("DUET_TUNE_FORCE", "", 1);
    cr_assert_eq(duet_tune_params_resolve(&p, &out), DUET_OK);
    cr_assert(out.top_k == 8 && out.n_warmup == 5 && out.n_repeat == 20 && out.force == 0);
}

Test(tune_params_rules, arch_strip_and_key_refusals, T_TIMEOUT)
{
    char out[8];
    duet_tune_arch_strip("gfx942:sramecc+:xnack-", out, sizeof(out));
    cr_assert_str_eq(out, "gfx942", "the target features after ':' go");
    duet_tune_arch_strip("sm 90/a", out, sizeof(out));
    cr_assert_str_eq(out, "sm_90_a", "anything but [A-Za-z0-9_.-] becomes '_'");
    duet_tune_arch_strip("abcdefghijkl", out, sizeof(out));
    cr_assert_str_eq(out, "abcdefg", "cut to the buffer");
    duet_tune_arch_strip(NULL, out, sizeof(out));
    cr_assert_str_eq(out, "");
    duet_tune_arch_strip("x", out, 0); /* nothing written, no crash */

    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(1024, 1024, 1024, DUET_COLL_ALL_GATHER, 512, 1024, 2);
    duet_tune_params_t p = duet_tune_default_params();
    char key[DUET_TUNE_KEY_LEN];
    p.modes = 0;
    cr_assert_eq(duet_tune_key_make(&hw, &wl, &p, key, sizeof(key)), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "tune key: empty mode set") != NULL, "%s", duet_last_error());
    p.modes = 1u << DUET_MODE_FUSED;
    duet_hw_t noarch = hw;
    noarch.arch[0] = ':';
    noarch.arch[1] = '\0';
    cr_assert_eq(duet_tune_key_make(&noarch, &wl, &p, key, sizeof(key)), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "tune key: the profile names no device arch") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_tune_key_make(&hw, &wl, &p, key, 8), DUET_ERR_INVALID_ARG, "a key longer than its buffer");
    cr_assert_eq(duet_tune_key_make(&hw, &wl, &p, key, sizeof(key)), DUET_OK);
    cr_assert(strstr(key, "fused") != NULL && strstr(key, "sm_90") != NULL, "%s", key);
    cr_assert_str_eq(duet_tune_source_name(-1), "unknown");
    cr_assert_str_eq(duet_tune_source_name(DUET_TUNE_SRC_COUNT), "unknown");
}
