/*
 * The tuning key, the parameters and the environment, the database path.
 */
#include "tune_util.h"

static void key_of(const duet_hw_t *hw, const duet_workload_t *wl, const duet_tune_params_t *p, char *key)
{
    cr_assert_eq(duet_tune_key_make(hw, wl, p, key, DUET_TUNE_KEY_LEN), DUET_OK, "%s", duet_last_error());
}

Test(tune_key, same_inputs_give_the_same_canonical_key, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 4096, 8192, 2);
    duet_tune_params_t p = duet_tune_default_params();
    char a[DUET_TUNE_KEY_LEN], b[DUET_TUNE_KEY_LEN];
    key_of(&hw, &wl, &p, a);
    key_of(&hw, &wl, &p, b);
    cr_assert_str_eq(a, b);
    cr_assert_str_eq(a, "arch=sm_90|sms=132|world=2|modes=fused+concurrent|coll=all_gather|dtype=bf16|"
                        "gemm=8192x8192x8192|comm=4096x8192|ctile=256x64|group_m=8|tiles=" DUET_TILE_LIST_VERSION);
    /* Parameters that do not change the problem do not change the key. */
    p.top_k = 3;
    p.n_repeat = 7;
    p.force = 1;
    key_of(&hw, &wl, &p, b);
    cr_assert_str_eq(a, b);
    /* The default comm tile spelled out is the same key as "default". */
    p.cm = 256;
    p.cn = 64;
    p.group_m = 8;
    key_of(&hw, &wl, &p, b);
    cr_assert_str_eq(a, b);
    /* NULL params are the defaults. */
    key_of(&hw, &wl, NULL, b);
    cr_assert_str_eq(a, b);
}

Test(tune_key, arch_feature_suffixes_are_stripped, T_TIMEOUT)
{
    char out[32];
    duet_tune_arch_strip("gfx942:sramecc+:xnack-", out, sizeof(out));
    cr_assert_str_eq(out, "gfx942");
    duet_tune_arch_strip("sm_90", out, sizeof(out));
    cr_assert_str_eq(out, "sm_90");
    duet_tune_arch_strip("gfx9|50 x", out, sizeof(out));
    cr_assert_str_eq(out, "gfx9_50_x");

    duet_hw_t hw = t_hw("mi300x"), hw2 = hw;
    snprintf(hw2.arch, sizeof(hw2.arch), "gfx942:sramecc+:xnack-");
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_REDUCE, 2048, 8192, 8);
    char a[DUET_TUNE_KEY_LEN], b[DUET_TUNE_KEY_LEN];
    key_of(&hw, &wl, NULL, a);
    key_of(&hw2, &wl, NULL, b);
    cr_assert_str_eq(a, b);
    cr_assert(strncmp(a, "arch=gfx942|sms=304|world=8|", 28) == 0, "%s", a);
}

Test(tune_key, every_part_of_the_problem_changes_the_key, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 4096, 8192, 2);
    duet_tune_params_t p = duet_tune_default_params();
    char base[DUET_TUNE_KEY_LEN], k[DUET_TUNE_KEY_LEN];
    key_of(&hw, &wl, &p, base);

    duet_tune_params_t q = p;
    q.modes = 1u << DUET_MODE_FUSED;
    key_of(&hw, &wl, &q, k);
    cr_assert_str_neq(base, k);
    cr_assert(strstr(k, "|modes=fused|") != NULL, "%s", k);
    q.modes = 1u << DUET_MODE_CONCURRENT;
    key_of(&hw, &wl, &q, k);
    cr_assert(strstr(k, "|modes=concurrent|") != NULL, "%s", k);

    q = p;
    q.cm = 128;
    key_of(&hw, &wl, &q, k);
    cr_assert_str_neq(base, k);
    q = p;
    q.group_m = 4;
    key_of(&hw, &wl, &q, k);
    cr_assert_str_neq(base, k);

    duet_workload_t w = wl;
    w.coll = DUET_COLL_ALL_REDUCE;
    key_of(&hw, &w, &p, k);
    cr_assert_str_neq(base, k);
    w = wl;
    w.dtype = DUET_DTYPE_FP16;
    key_of(&hw, &w, &p, k);
    cr_assert_str_neq(base, k);
    cr_assert(strstr(k, "|dtype=fp16|") != NULL);
    w = wl;
    w.m = 4096;
    key_of(&hw, &w, &p, k);
    cr_assert_str_neq(base, k);
    w = wl;
    w.k = 4096;
    key_of(&hw, &w, &p, k);
    cr_assert_str_neq(base, k);
    w = wl;
    w.nc = 4096;
    key_of(&hw, &w, &p, k);
    cr_assert_str_neq(base, k);
    w = wl;
    w.mc = 2048;
    key_of(&hw, &w, &p, k);
    cr_assert_str_neq(base, k);
    w = wl;
    w.world = 4;
    key_of(&hw, &w, &p, k);
    cr_assert_str_neq(base, k);
    cr_assert(strstr(k, "|world=4|") != NULL);

    duet_hw_t h2 = hw;
    h2.n_sms = 114; /* an H100 PCIe-sized part of the same arch */
    key_of(&h2, &wl, &p, k);
    cr_assert_str_neq(base, k);

    /* Broadcast keys carry the root; two roots are two keys. */
    w = wl;
    w.coll = DUET_COLL_BROADCAST;
    w.root = 1;
    key_of(&hw, &w, &p, k);
    cr_assert(strstr(k, "|root=1|") != NULL, "%s", k);
    w.root = 0;
    key_of(&hw, &w, &p, base);
    cr_assert_str_neq(base, k);

    /* A buffer too short is an error, not a truncated key. */
    cr_assert_eq(duet_tune_key_make(&hw, &wl, &p, k, 40), DUET_ERR_INVALID_ARG);
    w = wl;
    w.world = 0;
    cr_assert_eq(duet_tune_key_make(&hw, &w, &p, k, sizeof(k)), DUET_ERR_INVALID_ARG);
}

Test(tune_key, parameters_take_the_environment_only_when_auto, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    duet_tune_params_t p = duet_tune_default_params(), r;
    cr_assert_eq(duet_tune_params_resolve(&p, &r), DUET_OK);
    cr_assert_eq(r.top_k, 8);
    cr_assert_eq(r.n_warmup, 5);
    cr_assert_eq(r.n_repeat, 20);
    cr_assert_eq(r.force, 0);

    setenv("DUET_TUNE_TOPK", "3", 1);
    setenv("DUET_TUNE_NWARMUP", "0", 1);
    setenv("DUET_TUNE_NREP", "11", 1);
    setenv("DUET_TUNE_FORCE", "1", 1);
    cr_assert_eq(duet_tune_params_resolve(&p, &r), DUET_OK);
    cr_assert_eq(r.top_k, 3);
    cr_assert_eq(r.n_warmup, 0);
    cr_assert_eq(r.n_repeat, 11);
    cr_assert_eq(r.force, 1);
    /* An explicit value wins over the environment. */
    p.top_k = 5;
    cr_assert_eq(duet_tune_params_resolve(&p, &r), DUET_OK);
    cr_assert_eq(r.top_k, 5);

    setenv("DUET_TUNE_TOPK", "eight", 1);
    p.top_k = 0;
    cr_assert_eq(duet_tune_params_resolve(&p, &r), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "DUET_TUNE_TOPK") != NULL, "%s", duet_last_error());
    setenv("DUET_TUNE_TOPK", "64", 1); /* one slot is the static default's */
    cr_assert_eq(duet_tune_params_resolve(&p, &r), DUET_ERR_INVALID_ARG);
    unsetenv("DUET_TUNE_TOPK");
    p.modes = 0;
    cr_assert_eq(duet_tune_params_resolve(&p, &r), DUET_ERR_INVALID_ARG);
    tt_rmdir(dir);
}

Test(tune_key, database_path_follows_duet_cache_then_xdg_then_home, T_TIMEOUT)
{
    duet_tune_db_t db;
    setenv("DUET_CACHE", "/tmp/somewhere/t.json", 1);
    setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
    setenv("HOME", "/tmp/home", 1);
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_str_eq(db.path, "/tmp/somewhere/t.json");
    cr_assert_eq(duet_tune_db_open("/tmp/given.json", &db), DUET_OK);
    cr_assert_str_eq(db.path, "/tmp/given.json");
    unsetenv("DUET_CACHE");
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_str_eq(db.path, "/tmp/xdg/duet/tuning.json");
    setenv("XDG_CACHE_HOME", "relative/cache", 1); /* invalid per the XDG spec: ignored */
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_str_eq(db.path, "/tmp/home/.cache/duet/tuning.json");
    unsetenv("XDG_CACHE_HOME");
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    cr_assert_str_eq(db.path, "/tmp/home/.cache/duet/tuning.json");
}
