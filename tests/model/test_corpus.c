/*
 * Corpora: round trip, validation messages, resume lookup.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/corpus.h"

static duet_corpus_t small_corpus(void)
{
    duet_corpus_t c;
    duet_corpus_init(&c);
    snprintf(c.device, sizeof(c.device), "NVIDIA H200");
    snprintf(c.arch, sizeof(c.arch), "sm_90");
    snprintf(c.driver, sizeof(c.driver), "580.159.04");
    snprintf(c.runtime, sizeof(c.runtime), "CUDA 13.0");
    snprintf(c.date, sizeof(c.date), "2026-11-30T12:00:00Z");
    snprintf(c.duet_version, sizeof(c.duet_version), "%s", DUET_VERSION);
    c.sms = 132;
    c.world = 2;
    c.repeats = 8;
    c.warmup = 2;
    c.n_fracs = 2;
    c.fracs[0] = 0.75;
    c.fracs[1] = 1.0;
    c.n_tiles = 1;
    c.tiles[0] = (duet_gemm_tile_t){256, 128, 64};
    c.n_comm_wgs = 1;
    c.comm_wgs[0] = 16;
    duet_hw_t hw = t_hw("h200");
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.kind = DUET_ROW_OP;
    r.wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    r.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    r.ok = 1;
    r.ms = 0.3125;
    r.min_ms = 0.3;
    r.max_ms = 0.33;
    r.repeats = 8;
    duet_corpus_add(&c, &r);
    r.kind = DUET_ROW_GEMM_ALONE;
    r.ok = 0;
    r.ms = r.min_ms = r.max_ms = 0;
    snprintf(r.error, sizeof(r.error), "launch failed: \"too many resources\"");
    duet_corpus_add(&c, &r);
    return c;
}

Test(corpus, round_trip_and_resume_lookup, T_TIMEOUT)
{
    duet_corpus_t c = small_corpus(), back;
    char path[64];
    t_tmp_path(path, sizeof(path), "corpus.json");
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_load(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.n, 2);
    cr_assert_str_eq(back.device, "NVIDIA H200");
    cr_assert_eq(back.rows[0].ms, 0.3125);
    cr_assert_eq(back.rows[1].ok, 0);
    cr_assert_str_eq(back.rows[1].error, "launch failed: \"too many resources\"");
    cr_assert(duet_corpus_row_same_point(&back.rows[0], &c.rows[0]));
    cr_assert_eq(duet_corpus_find(&back, &c.rows[1]), 1);
    duet_corpus_row_t other = c.rows[0];
    other.cfg.gemm_wgs = 100;
    other.cfg.comm_wgs = 32;
    cr_assert_eq(duet_corpus_find(&back, &other), -1);
    unlink(path);
    duet_corpus_free(&c);
    duet_corpus_free(&back);
}

/* Save the small corpus, corrupt its text with `from` -> `to`, expect a message with `want`. */
static void expect_reject(const char *from, const char *to, const char *want)
{
    duet_corpus_t c = small_corpus(), back;
    char path[64];
    t_tmp_path(path, sizeof(path), "corpus.json");
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK);
    duet_corpus_free(&c);
    FILE *f = fopen(path, "rb");
    char text[8192] = {0};
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    fclose(f);
    char *p = strstr(text, from);
    cr_assert_not_null(p, "fixture lacks '%s'", from);
    char out[8192];
    size_t pre = (size_t)(p - text);
    snprintf(out, sizeof(out), "%.*s%s%s", (int)pre, text, to, p + strlen(from));
    (void)n;
    cr_assert_eq(duet_corpus_parse(out, "c.json", &back), DUET_ERR_PARSE, "'%s' -> '%s' was accepted", from, to);
    cr_assert(strstr(duet_last_error(), want) != NULL, "'%s' lacks '%s'", duet_last_error(), want);
    cr_assert(strstr(duet_last_error(), "c.json") != NULL);
    unlink(path);
}

Test(corpus, rejects_corrupt_and_partial_files, T_TIMEOUT)
{
    expect_reject("\"schema\": \"duet-corpus/2\"", "\"schema\": \"duet-corpus/9\"", "duet-corpus/9");
    expect_reject("\"tile\": \"256x128x64\"", "\"tile\": \"96x64x64\"", "rows[0].tile");
    expect_reject("\"us\": 312.5", "\"us\": -1", "rows[0]");
    expect_reject("\"us\": 312.5", "\"us\": \"fast\"", "rows[0].us");
    /* A /2 file's rows hold us: the /1 keys are not among them. */
    expect_reject("\"us\": 312.5", "\"ms\": 0.3125", "rows[0]: unknown key \"ms\"");
    expect_reject("\"kind\": \"op\"", "\"kind\": \"nap\"", "rows[0].kind");
    expect_reject("\"world\": 2, \"root\"", "\"world\": 4, \"root\"", "world");
    expect_reject("\"gemm_wgs\": 99", "\"gemm_wgs\": 999", "gemm_wgs");
    expect_reject("\"ok\": true", "\"ok\": true, \"colour\": 1", "colour");
    expect_reject("\"error\": \"launch", "\"error\": \"\", \"x\": \"", "rows[1]");
    expect_reject("\n  ]\n}", "", "not valid JSON");
    expect_reject("\"kind\": \"gemm_alone\"", "\"kind\": \"op\"", "same point as rows[0]");
}

/* The saved text of a corpus (at most 8 KiB). */
static void saved_text(const duet_corpus_t *c, char *text, size_t n)
{
    char path[64];
    t_tmp_path(path, sizeof(path), "corpus-text.json");
    cr_assert_eq(duet_corpus_save(c, path), DUET_OK, "%s", duet_last_error());
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    size_t got = fread(text, 1, n - 1, f);
    text[got] = '\0';
    fclose(f);
    unlink(path);
}

Test(corpus, rounds_and_k_split_rows_round_trip, T_TIMEOUT)
{
    duet_corpus_t c = small_corpus(), back;
    cr_assert_eq(c.rounds, 1, "an initialised corpus was measured in one round");
    c.rounds = 3;
    c.repeats = 9;
    c.n_split_ks = 2;
    c.split_ks[0] = 2;
    c.split_ks[1] = 4;
    c.n_split_fracs = 2;
    c.split_fracs[0] = 0.84;
    c.split_fracs[1] = 1.0;
    duet_corpus_row_t split = c.rows[0];
    split.cfg.split_k = 2;
    split.ms = 0.305;
    cr_assert(!duet_corpus_row_same_point(&split, &c.rows[0]), "a K split is another point");
    cr_assert_eq(duet_corpus_add(&c, &split), DUET_OK);
    char text[8192];
    saved_text(&c, text, sizeof(text));
    cr_assert(strstr(text, "\"rounds\": 3") != NULL, "%s", text);
    cr_assert(strstr(text, "\"split_ks\": [2, 4], \"split_fused_fracs\": [0.83999999999999997, 1]") != NULL, "%s",
              text);
    cr_assert(strstr(text, "\"split_k\": 2") != NULL, "%s", text);
    cr_assert_eq(duet_corpus_parse(text, "c.json", &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.rounds, 3);
    cr_assert_eq(back.repeats, 9);
    cr_assert_eq(back.n_split_ks, 2);
    cr_assert_eq(back.split_ks[1], 4);
    cr_assert_eq(back.n_split_fracs, 2);
    cr_assert_eq(back.split_fracs[0], 0.84);
    cr_assert_eq(back.n, 3);
    cr_assert_eq(back.rows[2].cfg.split_k, 2);
    cr_assert_eq(back.rows[0].cfg.split_k, 1);
    /* Resume finds each of the two points, not the other. */
    cr_assert_eq(duet_corpus_find(&back, &split), 2);
    cr_assert_eq(duet_corpus_find(&back, &c.rows[0]), 0);
    duet_corpus_free(&back);
    duet_corpus_free(&c);
}

Test(corpus, files_without_rounds_or_split_grid_load_as_one_round, T_TIMEOUT)
{
    /* One round and no split rows: the keys are left out, so the file is what an older collector
     * wrote, and it loads back as one round with no splits. */
    duet_corpus_t c = small_corpus(), back;
    char text[8192];
    saved_text(&c, text, sizeof(text));
    cr_assert(strstr(text, "rounds") == NULL && strstr(text, "split") == NULL, "%s", text);
    cr_assert(strstr(text, "\"warmup\": 2,\n  \"grid\": {\"fused_fracs\": [0.75, 1], \"tiles\": [\"256x128x64\"], "
                           "\"concurrent_comm_wgs\": [16]},\n  \"rows\": [") != NULL,
              "the header as before: %s", text);
    back.rounds = 7;
    cr_assert_eq(duet_corpus_parse(text, "c.json", &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.rounds, 1);
    cr_assert_eq(back.n_split_ks, 0);
    cr_assert_eq(back.n_split_fracs, 0);
    cr_assert_eq(back.n, 2);
    duet_corpus_free(&back);
    duet_corpus_free(&c);
}

Test(corpus, rejects_bad_rounds_and_split_grids, T_TIMEOUT)
{
    expect_reject("\"warmup\": 2", "\"warmup\": 2, \"rounds\": 0", "corpus.rounds");
    expect_reject("\"warmup\": 2", "\"warmup\": 2, \"rounds\": 1.5", "corpus.rounds");
    expect_reject("\"concurrent_comm_wgs\": [16]", "\"concurrent_comm_wgs\": [16], \"split_ks\": [1]", "grid.split_ks");
    expect_reject("\"concurrent_comm_wgs\": [16]", "\"concurrent_comm_wgs\": [16], \"split_fused_fracs\": [1.5]",
                  "grid.split_fused_fracs");
    expect_reject("\"group_m\": 8", "\"group_m\": 8, \"split_k\": 17", "rows[0].split_k");
}
