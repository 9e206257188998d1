/*
 * The candidate set's derivation is bounded: its table of (shape, configuration) times is refused
 * past 2^20 cells, before it is allocated (a corpus of distinct shapes and configurations would
 * otherwise ask for shapes x configurations x 8 bytes).
 */
#include "tune_util.h"

/* 1025 op rows, each its own shape (M = 1024 + i) and its own configuration (gemm_wgs = 1 + i on a
 * 4096-SM device): the 1025th row makes 1025 x 1025 = 1050625 cells, past 2^20 = 1048576. */
Test(candset_derive_bounds, a_table_past_two_to_the_20_cells_is_refused, T_TIMEOUT)
{
    duet_corpus_t c = tt_corpus("sm_90", 4096, 2);
    for (int i = 0; i < 1025; i++) {
        duet_workload_t wl = t_wl(1024 + i, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
        duet_corpus_row_t r = tt_row(wl, DUET_MODE_FUSED, 4096, 1 + i, 4095 - i, (duet_gemm_tile_t){256, 128, 64}, 1.0);
        cr_assert_eq(duet_corpus_add(&c, &r), DUET_OK);
    }
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_derive(&c, 1, 0.03, &set), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "1025 shapes x 1025 configurations, more than 1048576") != NULL, "%s",
              duet_last_error());
    duet_corpus_free(&c);
}
