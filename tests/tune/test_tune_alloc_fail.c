/*
 * The tuning layer when memory runs out (tests/alloc_fail.h): deriving, saving and loading a
 * candidate set, storing and listing database entries, and a whole tuning run, each with its 1st,
 * 2nd, ... allocation failing: every one reports DUET_ERR_NO_MEMORY and leaves nothing half done
 * (a later run with memory succeeds and finds the state a clean run would).
 */
#include "../alloc_fail.h"
#include "tune_util.h"

static duet_corpus_t three_shapes(void)
{
    duet_corpus_t c = tt_corpus("sm_90", 132, 2);
    for (int s = 0; s < 3; s++)
        for (int g = 0; g < 3; g++) {
            duet_workload_t wl = t_wl(1024 * (s + 1), 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
            duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, 132, 100 + g, 32 - g, (duet_gemm_tile_t){256, 128, 64},
                                         1.0 + 0.1 * ((s + g) % 3));
            cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
        }
    return c;
}

Test(tune_alloc_fail, candidate_set_derive_save_load, T_TIMEOUT)
{
    duet_corpus_t c = three_shapes();
    duet_tune_candset_t set, back;
    long runs = 0;
    T_EVERY_ALLOC_FAILS(duet_tune_candset_derive(&c, 1, 0.03, &set), if (t__st == DUET_OK) duet_tune_candset_free(&set),
                        &runs);
    cr_assert_gt(runs, 5, "%ld", runs);
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_OK);
    char path[128];
    t_tmp_path(path, sizeof(path), "set.json");
    T_EVERY_ALLOC_FAILS(duet_tune_candset_save(&set, NULL, 0, path), (void)0, &runs);
    cr_assert_gt(runs, 0);
    T_EVERY_ALLOC_FAILS(duet_tune_candset_load(path, &back), if (t__st == DUET_OK) duet_tune_candset_free(&back),
                        &runs);
    cr_assert_gt(runs, 0);
    cr_assert_eq(duet_tune_candset_load(path, &back), DUET_OK);
    cr_assert_eq(back.archs[0].n_order, set.archs[0].n_order);
    duet_tune_candset_free(&back);
    duet_tune_candset_free(&set);
    duet_corpus_free(&c);
}

Test(tune_alloc_fail, database_store_list_lookup, T_TIMEOUT)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    duet_tune_entry_t a = tt_entry_for(1000), b = tt_entry_for(2000), back;
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK);
    long runs = 0;
    T_EVERY_ALLOC_FAILS(duet_tune_db_store(&db, &b), (void)0, &runs);
    cr_assert_gt(runs, 0);
    duet_tune_entry_t *list = NULL;
    size_t n = 0;
    T_EVERY_ALLOC_FAILS(duet_tune_db_list(&db, &list, &n), if (t__st == DUET_OK) free(list), &runs);
    cr_assert_gt(runs, 0);
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK);
    cr_assert_eq(n, 2, "both entries, once each: %zu; %s", n, w.text);
    free(list);
    T_EVERY_ALLOC_FAILS(duet_tune_db_lookup(&db, b.key, &back), (void)0, &runs);
    cr_assert_eq(back.measured_us, b.measured_us);
    tt_rmdir(dir);
}
