/*
 * The tuning database's configurations go through the model's configuration codec
 * (model/config_json.c): a database written before the codec (the fuzzer's seed, written by the
 * tuner on an H200) lists every entry with no warning, and each configuration, written again,
 * is the same JSON as in the file, members in the same order.
 */
#include "model/internal.h"
#include "tune_util.h"

/* `built`'s members printed as in `orig` (same values; with `whole`, the same object text too). */
static void same_members(const cJSON *orig, cJSON *built, int whole, const char *what)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, built)
    {
        char *a = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(orig, it->string));
        char *b = cJSON_PrintUnformatted(it);
        cr_assert(a != NULL && strcmp(a, b) == 0, "%s.%s: %s in the file, %s written", what, it->string, a, b);
        free(a);
        free(b);
    }
    if (whole) {
        char *a = cJSON_PrintUnformatted(orig), *b = cJSON_PrintUnformatted(built);
        cr_assert_str_eq(a, b, "%s", what);
        free(a);
        free(b);
    }
}

Test(tune_db_format, a_database_from_before_the_codec_reads_and_writes_the_same, T_TIMEOUT)
{
    char dir[64];
    tt_tmpdir(dir, sizeof(dir));
    char *text = t_slurp("tests/fuzz/corpus/fuzz_tune_db/two_entries.json");
    cr_assert_not_null(text);
    char path[128];
    snprintf(path, sizeof(path), "%s/tuning.json", dir);
    cr_assert_eq(t_spill(path, text), 0);

    tt_warnings_t w;
    memset(&w, 0, sizeof(w));
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(path, &db), DUET_OK);
    db.warn = tt_warn;
    db.warn_user = &w;
    duet_tune_entry_t *e = NULL;
    size_t n = 0;
    cr_assert_eq(duet_tune_db_list(&db, &e, &n), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(n, 2);
    cr_assert_eq(w.n, 0, "%s", w.text);

    /* Values read off the file by hand: the first key (sorted) is the world-1 bf16 GEMM. */
    cr_assert_eq(e[0].wl.world, 1);
    cr_assert_eq(e[0].cfg.mode, DUET_MODE_FUSED);
    cr_assert_eq(e[0].cfg.num_wgs, 132);
    cr_assert_eq(e[0].cfg.gemm_wgs, 99);
    cr_assert_eq(e[0].cfg.comm_wgs, 33);
    cr_assert(e[0].cfg.tile.bm == 256 && e[0].cfg.tile.bn == 128 && e[0].cfg.tile.bk == 64);
    cr_assert(e[0].cfg.cm == 256 && e[0].cfg.cn == 64 && e[0].cfg.group_m == 8 && e[0].cfg.split_k == 1);
    cr_assert_eq(e[0].n_cands, 3);
    cr_assert_eq(e[0].cands[0].cfg.mode, DUET_MODE_CONCURRENT);
    cr_assert(e[0].cands[0].cfg.gemm_wgs == 128 && e[0].cands[0].cfg.comm_wgs == 4);
    cr_assert(e[0].cands[0].cfg.tile.bm == 128 && e[0].cands[0].cfg.tile.bn == 256);

    cJSON *root = cJSON_Parse(text);
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    for (size_t i = 0; i < n; i++) {
        const cJSON *orig = cJSON_GetObjectItemCaseSensitive(entries, e[i].key);
        cr_assert_not_null(orig, "%s", e[i].key);
        cJSON *built = cJSON_CreateObject();
        cr_assert_eq(duet__config_to_cjson(built, &e[i].cfg), DUET_OK);
        same_members(cJSON_GetObjectItemCaseSensitive(orig, "config"), built, 1, "config");
        cJSON_Delete(built);
        const cJSON *cands = cJSON_GetObjectItemCaseSensitive(orig, "candidates");
        cr_assert_eq(cJSON_GetArraySize(cands), e[i].n_cands);
        for (int32_t k = 0; k < e[i].n_cands; k++) {
            built = cJSON_CreateObject();
            cr_assert_eq(duet__config_to_cjson(built, &e[i].cands[k].cfg), DUET_OK);
            same_members(cJSON_GetArrayItem(cands, k), built, 0, "candidate");
            cJSON_Delete(built);
        }
    }
    cJSON_Delete(root);
    free(e);
    free(text);
    tt_rmdir(dir);
}
