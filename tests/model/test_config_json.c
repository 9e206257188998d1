/*
 * The configuration codec (model/config_json.c): the text it writes, what it reads back, what it
 * refuses, and that the committed corpora, whose rows it reads and writes, save back byte for
 * byte.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/corpus.h"
#include "model/internal.h"

static duet_config_t cfg_fused(void)
{
    duet_config_t c;
    memset(&c, 0, sizeof(c));
    c.mode = DUET_MODE_FUSED;
    c.num_wgs = 132;
    c.gemm_wgs = 99;
    c.comm_wgs = 33;
    c.tile = (duet_gemm_tile_t){256, 128, 64};
    c.cm = 256;
    c.cn = 64;
    c.group_m = 8;
    c.split_k = 1;
    return c;
}

static void text_of(const duet_config_t *c, int split, char *out, size_t n)
{
    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__config_json_text(&b, c, split);
    cr_assert(!b.failed);
    snprintf(out, n, "%s", b.data);
    duet__sbuf_free(&b);
}

Test(config_json, text_members_in_order, T_TIMEOUT)
{
    duet_config_t c = cfg_fused();
    char t[512];
    text_of(&c, DUET__CONFIG_SPLIT_NONE, t, sizeof(t));
    cr_assert_str_eq(t, "\"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, \"tile\": "
                        "\"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8");
    text_of(&c, DUET__CONFIG_SPLIT_IF_SPLIT, t, sizeof(t));
    cr_assert(strstr(t, "split_k") == NULL, "no split, no member: %s", t);
    text_of(&c, DUET__CONFIG_SPLIT_ALWAYS, t, sizeof(t));
    cr_assert(strstr(t, "\"group_m\": 8, \"split_k\": 1") != NULL, "%s", t);
    c.split_k = 0; /* no split, as 1 */
    text_of(&c, DUET__CONFIG_SPLIT_ALWAYS, t, sizeof(t));
    cr_assert(strstr(t, "\"split_k\": 1") != NULL, "%s", t);
    c.split_k = 4;
    text_of(&c, DUET__CONFIG_SPLIT_IF_SPLIT, t, sizeof(t));
    cr_assert(strstr(t, "\"group_m\": 8, \"split_k\": 4") != NULL, "%s", t);
}

Test(config_json, cjson_round_trip, T_TIMEOUT)
{
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    duet_config_t in[3] = {cfg_fused(), cfg_fused(), cfg_fused()};
    in[1].mode = DUET_MODE_CONCURRENT;
    in[1].gemm_wgs = 116;
    in[1].comm_wgs = 16;
    in[1].tile = (duet_gemm_tile_t){128, 256, 64};
    in[1].group_m = 4;
    in[2].split_k = 2;
    in[2].cm = 64;
    for (int i = 0; i < 3; i++) {
        cJSON *o = cJSON_CreateObject();
        cr_assert_eq(duet__config_to_cjson(o, &in[i]), DUET_OK);
        /* Through text, as a file holds it. */
        char *text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        o = cJSON_Parse(text);
        duet_config_t back;
        cr_assert_eq(duet__config_from_json(o, &wl, "t", &back), DUET_OK, "%s: %s", text, duet_last_error());
        cr_assert(duet_config_same(&back, &in[i]), "%s", text);
        cr_assert_eq(back.split_k, in[i].split_k);
        cJSON_Delete(o);
        free(text);
    }
    cr_assert_eq(duet__config_to_cjson(NULL, &in[0]), DUET_ERR_NO_MEMORY);
}

/* The member `key` set to the JSON text `value` (NULL: removed) must be refused, naming where.key. */
static void expect_refused(const char *key, const char *value, const char *want)
{
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    duet_config_t c = cfg_fused(), out;
    memset(&out, 0x5a, sizeof(out));
    duet_config_t before = out;
    cJSON *o = cJSON_CreateObject();
    cr_assert_eq(duet__config_to_cjson(o, &c), DUET_OK);
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    if (value != NULL)
        cJSON_AddItemToObject(o, key, cJSON_Parse(value));
    cr_assert_eq(duet__config_from_json(o, &wl, "db.json: entries[3].config", &out), DUET_ERR_PARSE, "%s = %s accepted",
                 key, value ? value : "(none)");
    cr_assert(strstr(duet_last_error(), want) != NULL, "%s = %s: '%s' lacks '%s'", key, value ? value : "(none)",
              duet_last_error(), want);
    cr_assert(memcmp(&out, &before, sizeof(out)) == 0, "written on failure");
    cJSON_Delete(o);
}

Test(config_json, strict_reading, T_TIMEOUT)
{
    /* Member, its JSON text (NULL: removed), and what the message says. */
    static const char *const cases[][3] = {
        {"mode", "\"fast\"", "db.json: entries[3].config.mode: "},
        {"mode", "1", "config.mode: must be a string"},
        {"num_wgs", NULL, "config.num_wgs: missing"},
        {"gemm_wgs", "99.5", "config.gemm_wgs: 99.5 is not an integer in [0, 1048576]"},
        {"gemm_wgs", "-1", "config.gemm_wgs: -1 is not an integer"},
        {"comm_wgs", "1048577", "config.comm_wgs: 1.04858e+06 is not an integer in [0, 1048576]"},
        {"comm_wgs", "\"33\"", "config.comm_wgs: must be a number"},
        {"group_m", "0", "config.group_m: 0 is not an integer in [1, 64]"},
        {"group_m", "65", "config.group_m: 65 is not an integer in [1, 64]"},
        {"split_k", "0", "config.split_k: 0 is not an integer in [1, 16]"},
        {"split_k", "17", "config.split_k: 17 is not an integer in [1, 16]"},
        {"tile", "\"96x64x64\"", "config.tile: "},
        {"tile", NULL, "config.tile: missing"},
        {"comm_tile", "\"256x\"", "config.comm_tile: '256x' is not CMxCN"},
        {"comm_tile", "\" 256x64\"", "is not CMxCN"},
        {"comm_tile", "\"-256x64\"", "is not CMxCN"},
        {"comm_tile", "\"256x64x1\"", "is not CMxCN"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        expect_refused(cases[i][0], cases[i][1], cases[i][2]);
    /* Well-formed members that do not make a configuration: fused needs comm_wgs = num_wgs - gemm_wgs. */
    expect_refused("comm_wgs", "32", "db.json: entries[3].config: fused mode: comm_wgs 32 must equal");
    /* A comm tile's columns are a multiple of 8 (16-byte vectors). */
    expect_refused("comm_tile", "\"256x60\"", "comm tile 256x60");

    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_ALL_GATHER, 2048, 4096, 2);
    duet_config_t out;
    cr_assert_eq(duet__config_from_json(NULL, &wl, "x.config", &out), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "x.config: must be an object") != NULL, "%s", duet_last_error());
    /* Absent split_k is no split (files from before the K split). */
    cJSON *o = cJSON_CreateObject();
    duet_config_t c = cfg_fused();
    duet__config_to_cjson(o, &c);
    cJSON_DeleteItemFromObjectCaseSensitive(o, "split_k");
    cr_assert_eq(duet__config_from_json(o, &wl, "x", &out), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(out.split_k, 1);
    cJSON_Delete(o);
}

/* Every committed corpus (duet-corpus/1, ms) loads, saves as duet-corpus/2 (us) and loads back with
 * every row the same, bit for bit (the configurations go through the codec both ways, the times
 * through ms -> us -> ms); the /2 file saves back as the same bytes. Five files, 26,400 rows: about
 * two seconds. */
Test(config_json, committed_corpora_save_back_unchanged, .timeout = 120)
{
    static const char *const files[] = {"tuning_data/h200_world2.json", "tuning_data/h200_world2_comm8.json",
                                        "tuning_data/h200_world2_mmasync.json", "tuning_data/h200_world2_wgmma1.json",
                                        "tuning_data/h200_world2_wgmma2.json"};
    int split_rows = 0;
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        duet_corpus_t c, back;
        cr_assert_eq(duet_corpus_load(files[f], &c), DUET_OK, "%s", duet_last_error());
        for (size_t i = 0; i < c.n; i++)
            split_rows += c.rows[i].cfg.split_k > 1;
        char out[96], out2[96];
        t_tmp_path(out, sizeof(out), "corpus-back.json");
        t_tmp_path(out2, sizeof(out2), "corpus-back2.json");
        cr_assert_eq(duet_corpus_save(&c, out), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(duet_corpus_load(out, &back), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(back.n, c.n);
        for (size_t i = 0; i < c.n; i++) {
            const duet_corpus_row_t *x = &c.rows[i], *y = &back.rows[i];
            cr_assert(x->ms == y->ms && x->min_ms == y->min_ms && x->max_ms == y->max_ms, "%s: rows[%zu]: %.17g",
                      files[f], i, y->ms);
            cr_assert(duet_corpus_row_same_point(x, y) && x->ok == y->ok && x->repeats == y->repeats, "%s: rows[%zu]",
                      files[f], i);
        }
        cr_assert(back.prov.warmup_ms == c.prov.warmup_ms);
        cr_assert_eq(duet_corpus_save(&back, out2), DUET_OK, "%s", duet_last_error());
        char *a = t_slurp(out), *b = t_slurp(out2);
        cr_assert(a != NULL && b != NULL);
        cr_assert(strstr(a, "\"schema\": \"duet-corpus/2\"") != NULL && strstr(a, "\"min_us\": ") != NULL);
        cr_assert(strcmp(a, b) == 0, "%s: the /2 file saved back as %zu bytes, not as the %zu it holds", files[f],
                  strlen(b), strlen(a));
        free(a);
        free(b);
        unlink(out);
        unlink(out2);
        duet_corpus_free(&c);
        duet_corpus_free(&back);
    }
    /* h200_world2.json and h200_world2_comm8.json hold 825 K-split rows each. */
    cr_assert_eq(split_rows, 2 * 825);
}
