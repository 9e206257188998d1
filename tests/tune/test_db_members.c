/*
 * The members of a database entry that test_db_entry_rules.c leaves out: each rule met by one edit
 * of a stored entry (the entry is left out with a warning naming the member), the members a reader
 * is lenient about (an unknown source or status, a missing rank or error text), and files that are
 * not a database or hold nothing.
 */
#include "tune_util.h"

/* The listing of the database at db: no entry, and a warning holding `why`. */
static void expect_dropped(duet_tune_db_t *db, const tt_warnings_t *w, const char *what, const char *why)
{
    duet_tune_entry_t *list = NULL;
    size_t n = 9;
    cr_assert_eq(duet_tune_db_list(db, &list, &n), DUET_OK, "%s: %s", what, duet_last_error());
    cr_assert_eq(n, 0, "%s", what);
    free(list);
    cr_assert(strstr(w->text, why) != NULL, "%s: %s", what, w->text);
}

Test(db_members, the_rules_of_the_workload_the_winner_and_a_candidate, .timeout = 60)
{
    /* One tab more indents a candidate's members than the winner's configuration (tt_entry_for's
     * file: the entry at 3 tabs, its config at 4, a candidate's members at 5). */
    static const struct {
        const char *from, *to, *why;
    } cases[] = {
        {"\"arch\":\t\"sm_90\"", "\"arch\":\t\"sm_90_with_a_name_of_thirty_two_chars\"",
         ".arch: missing, not a string, or longer than 31"},
        {"\"modes\":\t[\"fused\"", "\"modes\":\t[3", ".modes: fused or concurrent"},
        {"\"collective\":\t\"all_gather\"", "\"collective\":\t3", ".collective: must be a string"},
        {"\"dtype\":\t\"bf16\"", "\"dtype\":\t\"int7\"", ".dtype: unknown dtype 'int7'"},
        {"\"k\":\t4096", "\"k\":\t-1", ".k: -1 is not an integer in [0, 1099511627776]"},
        {"\"mc\":\t1024", "\"mc\":\t1.5", ".mc: 1.5 is not an integer"},
        {"\"nc\":\t2048", "\"nc\":\t\"x\"", ".nc: must be a number"},
        {"\t\t\t\t\"tile\":\t\"256x128x64\"", "\t\t\t\t\"tile\":\t\"7x7x7\"", ".config.tile:"},
        {"\"measured_us\":\t510", "\"measured_us\":\t2e12", ".measured_us: missing or not a time in (0, 1e+12] us"},
        {"\t\t\t\t\t\"tile\":\t\"256x128x64\"", "\t\t\t\t\t\"tile\":\t\"7x7x7\"", ".candidates[0].tile:"},
        {"\"us\":\t510", "\"us\":\t2e12", ".candidates[0].us: a measured candidate needs a time in (0, 1e+12] us"},
        /* A number beyond a double's range inside an array has no member name: "[]" stands for it. */
        {"\"modes\":\t[\"fused\"", "\"modes\":\t[1e999, \"fused\"", ".[]: a number beyond the range of a double"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        tt_expect_edit_drops(cases[i].from, cases[i].to, cases[i].why);
}

/* Make the candidates of the entry `key` in the file at `path` n copies of its first one. */
static void copy_first_candidate(const char *path, const char *key, int n)
{
    char *text = t_slurp(path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "entries"), key);
    cJSON *first = cJSON_Duplicate(cJSON_GetArrayItem(cJSON_GetObjectItem(e, "candidates"), 0), 1);
    cJSON *more = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(more, cJSON_Duplicate(first, 1));
    cJSON_ReplaceItemInObject(e, "candidates", more);
    cJSON_Delete(first);
    text = cJSON_Print(root);
    cJSON_Delete(root);
    cr_assert_eq(t_spill(path, text), 0);
    free(text);
}

Test(db_members, more_than_64_candidates_cost_the_entry, T_TIMEOUT)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    duet_tune_entry_t a = tt_entry_for(1000), back;
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    /* One more than an entry holds. */
    copy_first_candidate(db.path, a.key, DUET_TUNE_MAX_CANDIDATES + 1);
    expect_dropped(&db, &w, "65 candidates", ".candidates: missing or more than 64");
    /* 64 is the limit, not past it. */
    copy_first_candidate(db.path, a.key, DUET_TUNE_MAX_CANDIDATES);
    cr_assert_eq(duet_tune_db_lookup(&db, a.key, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.n_cands, DUET_TUNE_MAX_CANDIDATES);
    cr_assert_eq(back.cands[63].us, 510);
    tt_rmdir(dir);
}

Test(db_members, a_reader_is_lenient_about_source_rank_status_and_error_text, T_TIMEOUT)
{
    static const struct {
        const char *from, *to;
    } cases[] = {
        {"\"source\":\t\"model\"", "\"source\":\t5"},
        {"\"source\":\t\"model\"", "\"source\":\t\"oracle\""},
        {"\"model_rank\":\t1,", ""},
        {"\"status\":\t\"DUET_ERR_TIMEOUT\"", "\"status\":\t5"},
        {"\"status\":\t\"DUET_ERR_TIMEOUT\"", "\"status\":\t\"DUET_ERR_NO_SUCH\""},
        {"\"error\":\t\"device wait timed out after 5000 ms\"", "\"error\":\t5"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char dir[64];
        tt_warnings_t w;
        duet_tune_db_t db = tt_db_begin(dir, &w);
        duet_tune_entry_t a = tt_entry_for(1000), e;
        cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
        tt_edit(db.path, cases[i].from, cases[i].to);
        cr_assert_eq(duet_tune_db_lookup(&db, a.key, &e), DUET_OK, "%zu: %s", i, duet_last_error());
        cr_assert_eq(w.n, 0, "%zu: %s", i, w.text);
        /* What was not edited reads as stored; what was reads as the reader's default. */
        cr_assert_eq(e.cands[0].source, DUET_TUNE_SRC_MODEL, "%zu: an unknown source is the model's", i);
        cr_assert_eq(e.cands[0].model_rank, i == 2 ? 0 : 1, "%zu: no rank is rank 0", i);
        cr_assert_eq(e.cands[1].status, i == 3 || i == 4 ? DUET_ERR_INTERNAL : DUET_ERR_TIMEOUT, "%zu", i);
        cr_assert_str_eq(e.cands[1].error, i == 5 ? "unknown error" : "device wait timed out after 5000 ms", "%zu", i);
        tt_rmdir(dir);
    }
}

Test(db_members, an_entry_that_is_not_an_object_or_whose_key_is_not_text, T_TIMEOUT)
{
    char dir[64], text[1024], key[400];
    memset(key, 'k', sizeof(key) - 1);
    key[sizeof(key) - 1] = '\0';
    static const struct {
        const char *entry, *why;
    } cases[] = {
        {"\"k1\": 5", "entries[\"k1\"]: not an object"},
        {"\"%s\": {}", "key longer than 319"},
        {"\"k\\u0001\": {}", "the key holds a control character"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        tt_warnings_t w;
        duet_tune_db_t db = tt_db_begin(dir, &w);
        char entry[512];
        snprintf(entry, sizeof(entry), cases[i].entry, key);
        snprintf(text, sizeof(text), "{\"schema\": \"duet-tuning/2\", \"entries\": {%s}}\n", entry);
        cr_assert_eq(t_spill(db.path, text), 0);
        expect_dropped(&db, &w, cases[i].entry, cases[i].why);
        tt_rmdir(dir);
    }
}

Test(db_members, a_file_of_white_space_holds_nothing, T_TIMEOUT)
{
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    cr_assert_eq(t_spill(db.path, " \n\t\r\n"), 0);
    duet_tune_entry_t a = tt_entry_for(1000), e, *list = NULL;
    size_t n = 9;
    cr_assert_eq(duet_tune_db_lookup(&db, a.key, &e), DUET_ERR_NOT_FOUND);
    cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(n, 0);
    cr_assert_null(list);
    /* Nothing to lose: a store writes the database over it. */
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_tune_db_lookup(&db, a.key, &e), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(w.n, 0, "%s", w.text);
    tt_rmdir(dir);
}

Test(db_members, a_file_without_the_schema_and_entries_is_not_a_database, T_TIMEOUT)
{
    static const char *const texts[] = {
        "[1, 2]\n",
        "{\"schema\": 2, \"entries\": {}}\n",
        "{\"schema\": \"duet-tuning/1\", \"entries\": []}\n",
        "{\"schema\": \"duet-tuning/3\", \"entries\": {}}\n",
    };
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        char dir[64];
        tt_warnings_t w;
        duet_tune_db_t db = tt_db_begin(dir, &w);
        cr_assert_eq(t_spill(db.path, texts[i]), 0);
        duet_tune_entry_t *list = NULL, a = tt_entry_for(1000);
        size_t n = 0;
        cr_assert_eq(duet_tune_db_list(&db, &list, &n), DUET_ERR_PARSE, "%s", texts[i]);
        cr_assert(strstr(duet_last_error(), "not a tuning database (schema \"duet-tuning/2\"") != NULL, "%s",
                  duet_last_error());
        cr_assert_eq(duet_tune_db_store(&db, &a), DUET_ERR_PARSE, "%s", texts[i]);
        cr_assert(strstr(duet_last_error(), "not replacing it: fix or remove the file") != NULL, "%s",
                  duet_last_error());
        char *after = t_slurp(db.path);
        cr_assert_str_eq(after, texts[i], "the file is left as it is");
        free(after);
        tt_rmdir(dir);
    }
}

Test(db_members, a_store_drops_every_bad_entry_past_the_first_eight, T_TIMEOUT)
{
    /* Nine entries with a number beyond a double's range: the store's list of entries to drop grows
     * past its first 8 slots. One entry this version cannot read, but not bad, is kept verbatim. */
    char dir[64];
    tt_warnings_t w;
    duet_tune_db_t db = tt_db_begin(dir, &w);
    char text[2048] = "{\"schema\": \"duet-tuning/2\", \"entries\": {\"future\": {\"v\": 3}";
    for (int i = 0; i < 9; i++) {
        size_t used = strlen(text);
        snprintf(text + used, sizeof(text) - used, ", \"bad%d\": {\"us\": 1e999}", i);
    }
    strcat(text, "}}\n");
    cr_assert_eq(t_spill(db.path, text), 0);
    duet_tune_entry_t a = tt_entry_for(1000), e;
    cr_assert_eq(duet_tune_db_store(&db, &a), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(w.n, 9, "%s", w.text);
    for (int i = 0; i < 9; i++) {
        char want[64];
        snprintf(want, sizeof(want), "entries[\"bad%d\"].us: a number beyond the range", i);
        cr_assert(strstr(w.text, want) != NULL, "%s", w.text);
    }
    cr_assert(strstr(w.text, "dropping the entry, keeping the others") != NULL, "%s", w.text);
    char *after = t_slurp(db.path);
    cJSON *root = cJSON_Parse(after);
    free(after);
    const cJSON *entries = cJSON_GetObjectItem(root, "entries");
    cr_assert_eq(cJSON_GetArraySize(entries), 2, "the stored entry and the future one");
    cr_assert_eq(t_num(cJSON_GetObjectItem(entries, "future"), "v"), 3);
    cJSON_Delete(root);
    cr_assert_eq(duet_tune_db_lookup(&db, a.key, &e), DUET_OK, "%s", duet_last_error());
    tt_rmdir(dir);
}

Test(db_members, entries_as_json_are_an_array_of_keyed_entries, T_TIMEOUT)
{
    char *text = NULL;
    cr_assert_eq(duet_tune_entries_to_json(NULL, 0, &text), DUET_OK, "%s", duet_last_error());
    cJSON *o = cJSON_Parse(text);
    cr_assert(cJSON_IsArray(o) && cJSON_GetArraySize(o) == 0, "%s", text);
    cJSON_Delete(o);
    free(text);

    duet_tune_entry_t e[2] = {tt_entry_for(1000), tt_entry_for(2000)};
    cr_assert_eq(duet_tune_entries_to_json(e, 2, &text), DUET_OK, "%s", duet_last_error());
    o = cJSON_Parse(text);
    cr_assert_eq(cJSON_GetArraySize(o), 2, "%s", text);
    for (int i = 0; i < 2; i++) {
        const cJSON *x = cJSON_GetArrayItem(o, i);
        cr_assert_str_eq(cJSON_GetObjectItem(x, "key")->valuestring, e[i].key);
        /* tt_entry_for(m): 500 + m / 100 us; the failed candidate carries its status's name. */
        cr_assert_eq(t_num(x, "measured_us"), 500 + (i + 1) * 10);
        cr_assert_eq(t_num(x, "m"), (i + 1) * 1000);
        const cJSON *c1 = cJSON_GetArrayItem(cJSON_GetObjectItem(x, "candidates"), 1);
        cr_assert_str_eq(cJSON_GetObjectItem(c1, "status")->valuestring, "DUET_ERR_TIMEOUT");
        cr_assert(cJSON_IsNull(cJSON_GetObjectItem(c1, "pred_us")), "NaN is written as null");
    }
    cJSON_Delete(o);
    free(text);
}
