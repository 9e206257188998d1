/*
 * A tuning database of the layout before duet-tuning/2 (duet-tuning/1: times in ms under _ms keys)
 * still reads, its times as us; the first store into it rewrites the whole file as /2 (every entry
 * in us), and `duet tune --list` shows it.
 */
#include "../cli_run.h"
#include "tune_util.h"

/* A duet-tuning/1 file of one entry, written as duet 0.1 wrote it (docs/tuning.md's example). */
static void write_v1(const char *path, const char *key)
{
    char text[4096];
    snprintf(
        text, sizeof(text),
        "{\n  \"schema\": \"duet-tuning/1\",\n  \"entries\": {\n    \"%s\": {\n"
        "      \"arch\": \"sm_90\", \"sms\": 132, \"modes\": [\"fused\", \"concurrent\"],\n"
        "      \"collective\": \"all_gather\", \"dtype\": \"bf16\", \"m\": 8192, \"n\": 8192, \"k\": 8192,\n"
        "      \"mc\": 4096, \"nc\": 8192, \"world\": 2, \"root\": 0, \"tiles\": \"%s\",\n"
        "      \"config\": {\"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 118, \"comm_wgs\": 14,\n"
        "                 \"tile\": \"256x256x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"split_k\": 1},\n"
        "      \"measured_ms\": 1.08, \"pred_ms\": 1.25,\n"
        "      \"n_warmup\": 5, \"n_repeat\": 20,\n"
        "      \"candidates\": [\n"
        "        {\"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 118, \"comm_wgs\": 14, \"tile\": "
        "\"256x256x64\",\n"
        "         \"comm_tile\": \"256x64\", \"group_m\": 8, \"source\": \"model\", \"model_rank\": 1,\n"
        "         \"pred_ms\": 1.25, \"ok\": true, \"ms\": 1.08, \"min_ms\": 1.0625, \"max_ms\": 1.5},\n"
        "        {\"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, \"tile\": "
        "\"256x128x64\",\n"
        "         \"comm_tile\": \"256x64\", \"group_m\": 8, \"source\": \"default\", \"model_rank\": 0,\n"
        "         \"pred_ms\": null, \"ok\": false, \"status\": \"DUET_ERR_BACKEND\", \"error\": \"launch failed\"}\n"
        "      ],\n"
        "      \"date\": \"2026-11-30T16:39:21Z\", \"duet\": \"0.1.0\"\n    }\n  }\n}\n",
        key, DUET_TILE_LIST_VERSION);
    cr_assert_eq(t_spill(path, text), 0);
}

/*
 * A test folder (DUET_CACHE) holding the old file of the example's workload (8192^3 GEMM beside a
 * 4096 x 8192 all_gather, W = 2, bf16), whose key goes to `key`; the database warns into w.
 */
static duet_tune_db_t begin_v1(char *dir, char *key, size_t n, tt_warnings_t *w)
{
    duet_tune_db_t db = tt_db_begin(dir, w);
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 4096, 8192, 2);
    cr_assert_eq(duet_tune_key_make(&hw, &wl, NULL, key, n), DUET_OK, "%s", duet_last_error());
    write_v1(db.path, key);
    return db;
}

/* The example's times, read as us: 1.08 ms is 1080 us (the double nearest 1.08, times 1000). */
static void expect_example(const duet_tune_entry_t *e)
{
    cr_assert_eq(e->measured_us, 1.08 * 1e3, "%.17g", e->measured_us);
    cr_assert(fabs(e->measured_us - 1080) < 1e-9, "%.17g", e->measured_us);
    cr_assert_eq(e->pred_us, 1250);
    cr_assert_eq(e->n_cands, 2);
    cr_assert_eq(e->cands[0].us, 1.08 * 1e3);
    cr_assert_eq(e->cands[0].min_us, 1062.5);
    cr_assert_eq(e->cands[0].max_us, 1500);
    cr_assert_eq(e->cands[0].pred_us, 1250);
    cr_assert_eq(e->cands[1].ok, 0);
    cr_assert(isnan(e->cands[1].pred_us));
    cr_assert_eq(e->cfg.gemm_wgs, 118);
}

Test(tune_db_v1, an_old_file_reads_with_its_times_in_us, T_TIMEOUT)
{
    char dir[64], key[DUET_TUNE_KEY_LEN];
    tt_warnings_t w;
    duet_tune_db_t db = begin_v1(dir, key, sizeof(key), &w);
    t_file_t before, after;
    t_file_get(db.path, &before);
    duet_tune_entry_t e;
    cr_assert_eq(duet_tune_db_lookup(&db, key, &e), DUET_OK, "%s", duet_last_error());
    expect_example(&e);
    duet_tune_entry_t *list = NULL;
    size_t n = 0;
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(n, 1);
    expect_example(&list[0]);
    free(list);
    cr_assert_eq(w.n, 0, "%s", w.text);
    t_file_get(db.path, &after);
    cr_assert(t_file_same(&before, &after), "a read changed the old file");

    /* The command line lists it: its text table in ms, the JSON in us. */
    t_cli_t *t = malloc(sizeof(*t));
    t_cli_run(t, NULL, "tune", "--list", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    cr_assert(strstr(t->out, "   1.0800    1.2500  2026-11-30T16:39:21Z") != NULL, "%s", t->out);
    t_cli_run(t, NULL, "tune", "--list", "--json", NULL);
    cr_assert_eq(t->code, 0, "%s", t->err);
    cJSON *o = cJSON_Parse(t->out);
    const cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "entries"), 0);
    cr_assert_eq(t_num(e0, "measured_us"), 1.08 * 1e3);
    cr_assert_null(cJSON_GetObjectItem(e0, "measured_ms"));
    cJSON_Delete(o);
    free(t);
    tt_rmdir(dir);
}

Test(tune_db_v1, a_store_rewrites_an_old_file_as_v2_keeping_its_entries, T_TIMEOUT)
{
    char dir[64], key[DUET_TUNE_KEY_LEN];
    tt_warnings_t w;
    duet_tune_db_t db = begin_v1(dir, key, sizeof(key), &w);
    duet_tune_entry_t mine = tt_entry_for(4096), e;
    cr_assert_eq(duet_tune_db_store(&db, &mine), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(w.n, 0, "%s", w.text);
    /* One file, one unit: duet-tuning/2 throughout, the old entry's times converted. */
    char *text = t_slurp(db.path);
    cr_assert(strstr(text, "\"schema\":\t\"duet-tuning/2\"") != NULL, "%s", text);
    cr_assert(strstr(text, "_ms\"") == NULL && strstr(text, "\"ms\"") == NULL, "a key in ms is left: %s", text);
    cr_assert(strstr(text, "\"min_us\":\t1062.5") != NULL && strstr(text, "\"max_us\":\t1500") != NULL, "%s", text);
    free(text);
    cr_assert_eq(duet_tune_db_lookup(&db, key, &e), DUET_OK, "%s", duet_last_error());
    expect_example(&e);
    cr_assert_eq(duet_tune_db_lookup(&db, mine.key, &e), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(e.measured_us, mine.measured_us);
    cr_assert_eq(e.cands[0].max_us, mine.cands[0].max_us);
    tt_rmdir(dir);
}

/*
 * A /1 entry that also holds a time under its /2 name (a candidate with max_ms and max_us, as a
 * hand edit or another tool may leave it): which one is meant is unknown, so it does not read,
 * before a store and after; and the store that upgrades the file keeps it as it was instead of
 * renaming max_ms onto max_us (a name twice, which made the entry bad and dropped it).
 */
Test(tune_db_v1, an_old_entry_with_a_new_time_name_is_kept_by_a_store, T_TIMEOUT)
{
    char dir[64], key[DUET_TUNE_KEY_LEN];
    tt_warnings_t w;
    duet_tune_db_t db = begin_v1(dir, key, sizeof(key), &w);
    char *text = t_slurp(db.path);
    const char *from = "\"max_ms\": 1.5}";
    char *at = strstr(text, from), edited[8192];
    cr_assert_not_null(at);
    snprintf(edited, sizeof(edited), "%.*s\"max_ms\": 1.5, \"max_us\": 7}%s", (int)(at - text), text,
             at + strlen(from));
    free(text);
    cr_assert_eq(t_spill(db.path, edited), 0);
    duet_tune_entry_t e, mine = tt_entry_for(4096);
    cr_assert_eq(duet_tune_db_lookup(&db, key, &e), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(w.text, "candidates[0].max_us: a duet-tuning/2 member in a duet-tuning/1 entry (whose time is "
                             "max_ms)") != NULL,
              "%s", w.text);
    cr_assert_eq(duet_tune_db_store(&db, &mine), DUET_OK, "%s", duet_last_error());
    cr_assert(strstr(w.text, "dropping") == NULL, "%s", w.text);
    /* Kept: its key and both members are in the rewritten file, the /1 time as it was (1.5, not 1500). */
    text = t_slurp(db.path);
    cr_assert(strstr(text, key) != NULL, "the entry was dropped: %s", text);
    cr_assert(strstr(text, "\"max_ms\":\t1.5") != NULL && strstr(text, "\"max_us\":\t7") != NULL, "%s", text);
    free(text);
    cr_assert_eq(duet_tune_db_lookup(&db, mine.key, &e), DUET_OK, "%s", duet_last_error());
    tt_rmdir(dir);
}

Test(tune_db_v1, an_old_time_out_of_range_is_named_in_ms, T_TIMEOUT)
{
    /* The /1 bound is the /2 bound (1e12 us) in the file's unit: 1e9 ms. */
    static const struct {
        const char *from, *to, *why;
    } cases[] = {
        {"\"measured_ms\": 1.08", "\"measured_ms\": 2e9", ".measured_ms: missing or not a time in (0, 1e+09] ms"},
        {"\"ms\": 1.08", "\"ms\": 2e9", ".candidates[0].ms: a measured candidate needs a time in (0, 1e+09] ms"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char dir[64], key[DUET_TUNE_KEY_LEN];
        tt_warnings_t w;
        duet_tune_db_t db = begin_v1(dir, key, sizeof(key), &w);
        tt_edit(db.path, cases[i].from, cases[i].to);
        duet_tune_entry_t e;
        cr_assert_eq(duet_tune_db_lookup(&db, key, &e), DUET_ERR_NOT_FOUND);
        cr_assert(strstr(w.text, cases[i].why) != NULL, "%s", w.text);
        tt_rmdir(dir);
    }
}

Test(tune_db_v1, members_an_old_entry_does_not_hold_are_kept_as_they_are, T_TIMEOUT)
{
    /* An entry that is not an object, a time that is not a number, a candidate that is not an
     * object: the upgrade renames the /1 keys it finds and scales only numbers, and the store keeps
     * these entries verbatim (this version cannot read them, but they are not bad). */
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    cr_assert_eq(t_spill(db.path, "{\"schema\": \"duet-tuning/1\", \"entries\": {\"odd\": 5, "
                                  "\"old\": {\"measured_ms\": \"x\", \"candidates\": [5, {\"ms\": 2}]}}}\n"),
                 0);
    duet_tune_entry_t a = tt_entry_for(1000), e;
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    char *text = t_slurp(db.path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cr_assert_str_eq(cJSON_GetObjectItem(root, "schema")->valuestring, DUET_TUNE_DB_SCHEMA);
    const cJSON *entries = cJSON_GetObjectItem(root, "entries");
    cr_assert_eq(cJSON_GetObjectItem(entries, "odd")->valuedouble, 5);
    const cJSON *old = cJSON_GetObjectItem(entries, "old");
    cr_assert_null(cJSON_GetObjectItem(old, "measured_ms"));
    cr_assert_str_eq(cJSON_GetObjectItem(old, "measured_us")->valuestring, "x", "renamed, not scaled");
    const cJSON *cands = cJSON_GetObjectItem(old, "candidates");
    cr_assert_eq(cJSON_GetArrayItem(cands, 0)->valuedouble, 5);
    cr_assert_eq(t_num(cJSON_GetArrayItem(cands, 1), "us"), 2000, "2 ms is 2000 us");
    cJSON_Delete(root);
    cr_assert_eq(duet_tune_db_lookup(&db, a.key, &e), DUET_OK, "%s", duet_last_error());
    tt_rmdir(dir);
}

/*
 * A /1 time whose ms value is finite but whose us value is not (1e307 ms is 1e310 us, beyond a
 * double): it does not read, and the store that upgrades the file keeps the entry with the member
 * as it was instead of writing an infinite time, which made the entry bad and dropped it.
 */
Test(tune_db_v1, an_old_time_beyond_a_double_in_us_is_kept_by_a_store, T_TIMEOUT)
{
    char dir[64], key[DUET_TUNE_KEY_LEN];
    tt_warnings_t w;
    duet_tune_db_t db = begin_v1(dir, key, sizeof(key), &w);
    char *text = t_slurp(db.path);
    const char *from = "\"pred_ms\": 1.25, \"ok\"";
    char *at = strstr(text, from), edited[8192];
    cr_assert_not_null(at);
    snprintf(edited, sizeof(edited), "%.*s\"pred_ms\": 1e307, \"ok\"%s", (int)(at - text), text, at + strlen(from));
    free(text);
    cr_assert_eq(t_spill(db.path, edited), 0);
    duet_tune_entry_t e, mine = tt_entry_for(4096);
    cr_assert_eq(duet_tune_db_lookup(&db, key, &e), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(w.text, "candidates[0].pred_ms: 1e+307 ms is beyond the range of a double in us") != NULL, "%s",
              w.text);
    cr_assert_eq(duet_tune_db_store(&db, &mine), DUET_OK, "%s", duet_last_error());
    cr_assert(strstr(w.text, "dropping") == NULL, "%s", w.text);
    text = t_slurp(db.path);
    cr_assert(strstr(text, key) != NULL, "the entry was dropped: %s", text);
    cr_assert(strstr(text, "\"pred_ms\":\t1e+307") != NULL, "%s", text);
    free(text);
    cr_assert_eq(duet_tune_db_lookup(&db, mine.key, &e), DUET_OK, "%s", duet_last_error());
    tt_rmdir(dir);
}
