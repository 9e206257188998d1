/*
 * A corpus's provenance (the optional "provenance" object): round trip, refusals, and the kernel
 * check that calibrate fit and validate warn on.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../calibrate/synth.h"
#include "../test_util.h"
#include "duet/corpus.h"

TestSuite(corpus_provenance, T_TIMEOUT);

static duet_corpus_t one_row_corpus(void)
{
    duet_corpus_t c = t_corpus_header(132, 1);
    duet_hw_t hw = t_hw("h200");
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.kind = DUET_ROW_GEMM_ALONE;
    r.wl = t_wl(1024, 1024, 1024, DUET_COLL_NONE, 0, 0, 1);
    r.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    r.cfg.num_wgs = r.cfg.gemm_wgs = 33;
    r.cfg.comm_wgs = 0;
    r.ok = 1;
    r.ms = r.min_ms = r.max_ms = 0.125;
    r.repeats = 6;
    cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK, "%s", duet_last_error());
    return c;
}

Test(corpus_provenance, every_field_reads_back)
{
    duet_corpus_t c = one_row_corpus(), back;
    duet_corpus_provenance_t *p = &c.prov;
    snprintf(p->duet_commit, sizeof(p->duet_commit), "abc1234+dirty");
    snprintf(p->kernel_commit, sizeof(p->kernel_commit), "def5678");
    snprintf(p->kernel_hash, sizeof(p->kernel_hash), "0123456789ab");
    snprintf(p->shapes, sizeof(p->shapes), "random n=64 seed=1 world=1");
    snprintf(p->clocks, sizeof(p->clocks), "driver default (not locked), settled by 200 ms of warm-up per workload");
    snprintf(p->grid, sizeof(p->grid), "w1");
    p->seed = 1;
    p->order_seed = 2;
    p->warmup_ms = 200;
    char path[512];
    t_tmp_path(path, sizeof(path), "prov.json");
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_load(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(memcmp(&back.prov, &c.prov, sizeof(c.prov)), 0);
    duet_corpus_free(&back);
    duet_corpus_free(&c);
}

Test(corpus_provenance, a_corpus_without_it_saves_back_without_it)
{
    duet_corpus_t c = one_row_corpus(), back;
    char path[512];
    t_tmp_path(path, sizeof(path), "plain.json");
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK);
    cr_assert_eq(duet_corpus_load(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.prov.seed, -1);
    cr_assert_eq(back.prov.order_seed, -1);
    cr_assert_eq(back.prov.warmup_ms, -1);
    cr_assert_str_empty(back.prov.kernel_commit);
    FILE *f = fopen(path, "rb");
    char text[8192];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_assert_null(strstr(text, "provenance"));
    duet_corpus_free(&back);
    duet_corpus_free(&c);
}

Test(corpus_provenance, bad_members_are_refused_naming_them)
{
    duet_corpus_t c = one_row_corpus(), back;
    char path[512];
    t_tmp_path(path, sizeof(path), "bad.json");
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK);
    FILE *f = fopen(path, "rb");
    static char text[16384], bad[16384];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    const char *cases[][2] = {
        {"\"provenance\": {\"kernel_comit\": \"x\"},", "unknown key \"kernel_comit\""},
        {"\"provenance\": {\"warmup_us\": -5},", "warmup_us: must be a number of us"},
        {"\"provenance\": {\"seed\": 1.5},", "seed"},
        {"\"provenance\": [],", "must be an object"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        /* Insert the member right after the opening brace. */
        snprintf(bad, sizeof(bad), "{%s%s", cases[i][0], text + 1);
        cr_assert_eq(duet_corpus_parse(bad, "bad.json", &back), DUET_ERR_PARSE, "case %zu", i);
        cr_assert(strstr(duet_last_error(), cases[i][1]) != NULL, "case %zu: %s", i, duet_last_error());
    }
    duet_corpus_free(&c);
}

Test(corpus_provenance, the_kernel_check_prefers_the_hash_then_the_commit)
{
    duet_corpus_t c = one_row_corpus();
    duet_build_info_t b = {"1111111", "aaaaaaaaaaaa", "2222222"};
    char why[256];
    /* Nothing recorded: unknown. */
    cr_assert_eq(duet_corpus_kernel_check(&c, &b, why, sizeof(why)), -1);
    cr_assert(strstr(why, "records no kernel commit") != NULL, "%s", why);
    /* Same hash, other commit (a commit that left the kernels alone): the same kernels. */
    snprintf(c.prov.kernel_commit, sizeof(c.prov.kernel_commit), "3333333");
    snprintf(c.prov.kernel_hash, sizeof(c.prov.kernel_hash), "aaaaaaaaaaaa");
    cr_assert_eq(duet_corpus_kernel_check(&c, &b, why, sizeof(why)), 1);
    /* Another hash: stale, and the message names both sides. */
    snprintf(c.prov.kernel_hash, sizeof(c.prov.kernel_hash), "bbbbbbbbbbbb");
    cr_assert_eq(duet_corpus_kernel_check(&c, &b, why, sizeof(why)), 0);
    cr_assert(strstr(why, "3333333") && strstr(why, "bbbbbbbbbbbb") && strstr(why, "1111111") &&
                  strstr(why, "aaaaaaaaaaaa"),
              "%s", why);
    /* No hash on one side: the commits decide. */
    duet_build_info_t nohash = {"3333333", "unknown", "2222222"};
    cr_assert_eq(duet_corpus_kernel_check(&c, &nohash, why, sizeof(why)), 1);
    nohash.kernel_commit = "4444444";
    cr_assert_eq(duet_corpus_kernel_check(&c, &nohash, why, sizeof(why)), 0);
    duet_corpus_free(&c);
}

/* This build knows its kernels (make writes build/gen/duet_build_info.h). */
Test(corpus_provenance, the_build_knows_its_kernel_hash)
{
    duet_build_info_t b = duet_build_info();
    cr_assert_eq(strlen(b.kernel_hash), 12, "%s", b.kernel_hash);
    cr_assert_str_neq(b.kernel_commit, "");
}

/* A row's configuration is checked against what ran: the vendor GEMM alone (no comm kernel,
 * comm_wgs 0) of a workload with a collective loads; the same configuration on an op row does not. */
Test(corpus_provenance, a_row_is_checked_against_its_part)
{
    duet_corpus_t c = t_corpus_header(132, 1), back;
    duet_hw_t hw = t_hw("h200");
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.kind = DUET_ROW_GEMM_ALONE;
    r.wl = t_wl(1024, 1024, 1024, DUET_COLL_ALL_GATHER, 512, 2048, 1);
    r.cfg = duet_config_default(&hw, DUET_MODE_VENDOR);
    r.cfg.gemm_wgs = r.cfg.num_wgs = 66;
    r.cfg.comm_wgs = 0;
    r.ok = 1;
    r.ms = r.min_ms = r.max_ms = 0.5;
    r.repeats = 3;
    cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
    char path[512];
    t_tmp_path(path, sizeof(path), "part.json");
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK);
    cr_assert_eq(duet_corpus_load(path, &back), DUET_OK, "%s", duet_last_error());
    duet_corpus_free(&back);
    c.rows[0].kind = DUET_ROW_OP;
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK);
    cr_assert_eq(duet_corpus_load(path, &back), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "comm_wgs") != NULL, "%s", duet_last_error());
    duet_corpus_free(&c);
}
