/*
 * duet-corpus/2 holds its times in us (us, min_us, max_us; provenance.warmup_us) where
 * duet-corpus/1 held ms: both load to the same rows, each refuses the other's keys, and the
 * committed /1 corpora give the same validation after a round through /2.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "duet/corpus.h"

/* A one-row corpus in either layout: the header, provenance and row of `v` (1 or 2), the time
 * members given in `times` ("\"ms\": 0.3125, ..." ). */
static void corpus_text(char *out, size_t n, int v, const char *warm, const char *times)
{
    snprintf(out, n,
             "{\"schema\": \"duet-corpus/%d\", \"device\": \"d\", \"arch\": \"sm_90\", \"sms\": 132, \"world\": 2, "
             "\"driver\": \"\", \"runtime\": \"\", \"date\": \"\", \"duet\": \"0.2.0\", \"repeats\": 8, "
             "\"warmup\": 2, \"provenance\": {\"seed\": 7, %s}, "
             "\"grid\": {\"fused_fracs\": [0.75], \"tiles\": [\"256x128x64\"], \"concurrent_comm_wgs\": [16]}, "
             "\"rows\": [{\"kind\": \"op\", \"collective\": \"all_gather\", \"dtype\": \"bf16\", \"m\": 4096, "
             "\"n\": 4096, \"k\": 4096, \"mc\": 512, \"nc\": 2048, \"world\": 2, \"root\": 0, \"mode\": \"fused\", "
             "\"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": "
             "\"256x64\", \"group_m\": 8, \"ok\": true, \"repeats\": 8, %s}]}",
             v, warm, times);
}

Test(corpus_v2, both_layouts_load_to_the_same_rows, T_TIMEOUT)
{
    char t1[4096], t2[4096];
    /* The same measurement: 0.3125 ms is 312.5 us, 0.3 ms 300 us, 0.33 ms 330 us, 200 ms 200000 us. */
    corpus_text(t1, sizeof(t1), 1, "\"warmup_ms\": 200", "\"ms\": 0.3125, \"min_ms\": 0.3, \"max_ms\": 0.33");
    corpus_text(t2, sizeof(t2), 2, "\"warmup_us\": 200000", "\"us\": 312.5, \"min_us\": 300, \"max_us\": 330");
    duet_corpus_t a, b;
    cr_assert_eq(duet_corpus_parse(t1, "v1.json", &a), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_parse(t2, "v2.json", &b), DUET_OK, "%s", duet_last_error());
    /* In memory the times are ms, the same doubles from either file. */
    cr_assert_eq(a.rows[0].ms, 0.3125);
    cr_assert_eq(b.rows[0].ms, 0.3125);
    cr_assert_eq(a.rows[0].min_ms, 0.3);
    cr_assert_eq(b.rows[0].min_ms, 0.3);
    cr_assert_eq(a.rows[0].max_ms, 0.33);
    cr_assert_eq(b.rows[0].max_ms, 0.33);
    cr_assert_eq(a.prov.warmup_ms, 200);
    cr_assert_eq(b.prov.warmup_ms, 200);
    cr_assert(duet_corpus_row_same_point(&a.rows[0], &b.rows[0]));
    /* Saved, either is /2, the same bytes. */
    char pa[128], pb[128];
    t_tmp_path(pa, sizeof(pa), "a.json");
    t_tmp_path(pb, sizeof(pb), "b.json");
    cr_assert_eq(duet_corpus_save(&a, pa), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_save(&b, pb), DUET_OK, "%s", duet_last_error());
    char *sa = t_slurp(pa), *sb = t_slurp(pb);
    cr_assert_str_eq(sa, sb);
    cr_assert(strstr(sa, "\"schema\": \"duet-corpus/2\"") != NULL, "%s", sa);
    cr_assert(strstr(sa, "\"us\": 312.5, \"min_us\": 300, \"max_us\": 330") != NULL, "%s", sa);
    cr_assert(strstr(sa, "\"warmup_us\": 200000") != NULL, "%s", sa);
    free(sa);
    free(sb);
    unlink(pa);
    unlink(pb);
    duet_corpus_free(&a);
    duet_corpus_free(&b);
}

Test(corpus_v2, each_layout_refuses_the_other_ones_keys, T_TIMEOUT)
{
    char t[4096];
    duet_corpus_t c;
    corpus_text(t, sizeof(t), 2, "\"warmup_us\": 0", "\"ms\": 0.3125, \"min_ms\": 0.3, \"max_ms\": 0.33");
    cr_assert_eq(duet_corpus_parse(t, "c.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "c.json: rows[0]: unknown key \"ms\"") != NULL, "%s", duet_last_error());
    corpus_text(t, sizeof(t), 1, "\"warmup_ms\": 0", "\"us\": 312.5, \"min_us\": 300, \"max_us\": 330");
    cr_assert_eq(duet_corpus_parse(t, "c.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "c.json: rows[0]: unknown key \"us\"") != NULL, "%s", duet_last_error());
    corpus_text(t, sizeof(t), 2, "\"warmup_ms\": 200", "\"us\": 312.5, \"min_us\": 300, \"max_us\": 330");
    cr_assert_eq(duet_corpus_parse(t, "c.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "provenance: unknown key \"warmup_ms\"") != NULL, "%s", duet_last_error());
    /* The order check names the layout's own keys. */
    corpus_text(t, sizeof(t), 2, "\"warmup_us\": 0", "\"us\": 312.5, \"min_us\": 400, \"max_us\": 330");
    cr_assert_eq(duet_corpus_parse(t, "c.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "need 0 < min_us <= us <= max_us (got 400, 312.5, 330)") != NULL, "%s",
              duet_last_error());
    corpus_text(t, sizeof(t), 3, "\"warmup_us\": 0", "\"us\": 312.5, \"min_us\": 300, \"max_us\": 330");
    cr_assert_eq(duet_corpus_parse(t, "c.json", &c), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "schema \"duet-corpus/3\" is not \"duet-corpus/2\"") != NULL, "%s",
              duet_last_error());
}

/*
 * A committed corpus (duet-corpus/1) and the same corpus saved as duet-corpus/2 give the same
 * validation, byte for byte, in text and as CSV: the fit and the metrics see the same ms.
 */
Test(corpus_v2, a_committed_corpus_validates_the_same_through_v2, .timeout = 60)
{
    static t_cli_t r1, r2;
    const char *v1 = "tuning_data/h200_world1-test-s1.json";
    char v2[128];
    t_tmp_path(v2, sizeof(v2), "test-s1-v2.json");
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_load(v1, &c), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_save(&c, v2), DUET_OK, "%s", duet_last_error());
    duet_corpus_free(&c);
    char *text = t_slurp(v1);
    cr_assert(strstr(text, "\"schema\": \"duet-corpus/1\"") != NULL, "the committed file is /1");
    free(text);
    const char *fmts[] = {NULL, "--csv"};
    for (int i = 0; i < 2; i++) {
        t_cli_run(&r1, NULL, "validate", "--hw", "h200", "--corpus", v1, "--quiet", fmts[i], NULL);
        t_cli_run(&r2, NULL, "validate", "--hw", "h200", "--corpus", v2, "--quiet", fmts[i], NULL);
        cr_assert_eq(r1.code, 0, "%s", r1.err);
        cr_assert_eq(r2.code, 0, "%s", r2.err);
        cr_assert_str_eq(r1.out, r2.out);
    }
    unlink(v2);
}

/*
 * Any time, not only a measured one: ms -> us -> ms may move a double by one unit in the last place
 * (a double in ms is not always a double in us divided by 1000), never more, and after one save and
 * load the corpus is a fixed point. 3000 times spread over 1e-6 .. 1e6 ms (splitmix64, seed 26).
 */
Test(corpus_v2, any_time_moves_at_most_one_ulp_then_stays, .timeout = 60)
{
    duet_corpus_t c;
    duet_corpus_init(&c);
    snprintf(c.device, sizeof(c.device), "d");
    snprintf(c.arch, sizeof(c.arch), "sm_90");
    c.sms = 132;
    c.world = 1;
    c.repeats = 1;
    duet_hw_t hw = t_hw("h200");
    uint64_t s = 26;
    int moved = 0;
    for (int i = 0; i < 3000; i++) {
        duet_corpus_row_t r;
        memset(&r, 0, sizeof(r));
        r.kind = DUET_ROW_GEMM_ALONE;
        r.wl = t_wl(64 + i, 64, 64, DUET_COLL_NONE, 0, 0, 1);
        r.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
        r.cfg.gemm_wgs = r.cfg.num_wgs;
        r.cfg.comm_wgs = 0;
        r.ok = 1;
        r.repeats = 1;
        s += UINT64_C(0x9e3779b97f4a7c15);
        uint64_t z = s;
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        z ^= z >> 31;
        r.ms = r.min_ms = r.max_ms = pow(10.0, -6.0 + 12.0 * (double)(z >> 11) / 9007199254740992.0);
        cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
    }
    char p1[128], p2[128];
    t_tmp_path(p1, sizeof(p1), "any1.json");
    t_tmp_path(p2, sizeof(p2), "any2.json");
    duet_corpus_t a, b;
    cr_assert_eq(duet_corpus_save(&c, p1), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_load(p1, &a), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_save(&a, p2), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_load(p2, &b), DUET_OK, "%s", duet_last_error());
    for (size_t i = 0; i < c.n; i++) {
        double x = c.rows[i].ms, y = a.rows[i].ms;
        cr_assert(y == x || y == nextafter(x, INFINITY) || y == nextafter(x, -INFINITY), "row %zu: %.17g -> %.17g", i,
                  x, y);
        moved += y != x;
        cr_assert_eq(b.rows[i].ms, y, "row %zu: not a fixed point", i);
    }
    char *t1 = t_slurp(p1), *t2 = t_slurp(p2);
    cr_assert_str_eq(t1, t2, "the second save wrote the same bytes");
    /* About 2 % of arbitrary doubles have no double in us that divides back to them. */
    cr_assert_lt(moved, 300, "%d of 3000 moved", moved);
    free(t1);
    free(t2);
    unlink(p1);
    unlink(p2);
    duet_corpus_free(&a);
    duet_corpus_free(&b);
    duet_corpus_free(&c);
}
