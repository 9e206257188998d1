/*
 * The model layer when memory runs out (tests/alloc_fail.h): a corpus saved and loaded, a random
 * shape set drawn, saved and loaded, a profile written as JSON and read back; each with its 1st,
 * 2nd, ... allocation failing reports DUET_ERR_NO_MEMORY, and the run with memory reads back what
 * was written.
 */
#include <criterion/criterion.h>

#include "../alloc_fail.h"
#include "../test_util.h"
#include "duet/corpus.h"

Test(model_alloc_fail, corpus_save_and_load, T_TIMEOUT)
{
    duet_corpus_t c, back;
    duet_corpus_init(&c);
    snprintf(c.device, sizeof(c.device), "dev");
    snprintf(c.arch, sizeof(c.arch), "sm_90");
    snprintf(c.date, sizeof(c.date), "2026-12-01T00:00:00Z");
    c.sms = 132;
    c.world = 2;
    c.repeats = 4;
    duet_hw_t hw = t_hw("h200");
    for (int i = 0; i < 40; i++) {
        duet_corpus_row_t r;
        memset(&r, 0, sizeof(r));
        r.kind = DUET_ROW_OP;
        r.wl = t_wl(256 * (i + 1), 1024, 1024, DUET_COLL_ALL_GATHER, 512, 1024, 2);
        r.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
        r.ok = 1;
        r.repeats = 4;
        r.ms = r.min_ms = r.max_ms = 0.5 + i;
        cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK, "%s", duet_last_error());
    }
    char path[128];
    t_tmp_path(path, sizeof(path), "c.json");
    long runs = 0;
    T_EVERY_ALLOC_FAILS(duet_corpus_save(&c, path), (void)0, &runs);
    cr_assert_gt(runs, 0);
    T_EVERY_ALLOC_FAILS(duet_corpus_load(path, &back), if (t__st == DUET_OK) duet_corpus_free(&back), &runs);
    cr_assert_gt(runs, 0);
    cr_assert_eq(duet_corpus_load(path, &back), DUET_OK);
    cr_assert_eq(back.n, 40);
    cr_assert_eq(back.rows[39].ms, 39.5);
    duet_corpus_free(&back);
    duet_corpus_free(&c);
}

Test(model_alloc_fail, random_shapes_and_profiles, T_TIMEOUT)
{
    duet_random_params_t p = duet_random_default_params();
    p.world = 2;
    duet_workloads_t w, back;
    long runs = 0;
    T_EVERY_ALLOC_FAILS(duet_workloads_random(&p, 50, &w), if (t__st == DUET_OK) duet_workloads_free(&w), &runs);
    cr_assert_gt(runs, 0);
    cr_assert_eq(duet_workloads_random(&p, 50, &w), DUET_OK);
    char path[128];
    t_tmp_path(path, sizeof(path), "shapes.txt");
    T_EVERY_ALLOC_FAILS(duet_workloads_save(path, &w, "drawn\nby a test"), (void)0, &runs);
    cr_assert_gt(runs, 0);
    T_EVERY_ALLOC_FAILS(duet_workloads_load(path, 2, -1, &back), if (t__st == DUET_OK) duet_workloads_free(&back),
                        &runs);
    cr_assert_eq(duet_workloads_load(path, 2, -1, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.n, 50);
    cr_assert(duet_workload_same(&back.w[49], &w.w[49]));
    duet_workloads_free(&back);
    duet_workloads_free(&w);

    duet_hw_t hw = t_hw("mi300x"), hb;
    char *text = NULL;
    T_EVERY_ALLOC_FAILS(duet_hw_to_json(&hw, &text), if (t__st == DUET_OK) free(text), &runs);
    cr_assert_eq(duet_hw_to_json(&hw, &text), DUET_OK);
    T_EVERY_ALLOC_FAILS(duet_hw_from_json(text, "p", &hb), (void)0, &runs);
    cr_assert_str_eq(hb.name, "mi300x");
    free(text);
}
