/*
 * Each rule of a corpus file, met by one edit of a two-row corpus (one measured op row, one failed):
 * the file refused, naming what is wrong and where.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "duet/corpus.h"

static const char base_text[] =
    "{\n  \"schema\": \"duet-corpus/2\",\n  \"device\": \"dev\",\n  \"arch\": \"sm_90\",\n  \"sms\": 132,\n"
    "  \"world\": 2,\n  \"driver\": \"d\",\n  \"runtime\": \"r\",\n  \"date\": \"2026-12-01T00:00:00Z\",\n"
    "  \"duet\": \"0.1.0\",\n  \"repeats\": 4,\n  \"warmup\": 1,\n"
    "  \"grid\": {\"fused_fracs\": [0.75], \"tiles\": [\"256x128x64\"], \"concurrent_comm_wgs\": [16]},\n"
    "  \"rows\": [\n"
    "    {\"kind\": \"op\", \"collective\": \"all_gather\", \"dtype\": \"bf16\", \"m\": 1024, \"n\": 1024, \"k\": "
    "1024, "
    "\"mc\": 512, \"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, "
    "\"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true, "
    "\"repeats\": 4, \"us\": 2000, \"min_us\": 1000, \"max_us\": 3000},\n"
    "    {\"kind\": \"op\", \"collective\": \"all_gather\", \"dtype\": \"bf16\", \"m\": 2048, \"n\": 1024, \"k\": "
    "1024, "
    "\"mc\": 512, \"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, "
    "\"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": false, "
    "\"repeats\": 4, \"error\": \"launch failed\"}\n  ]\n}\n";

static duet_status_t load_edit(const char *from, const char *to, duet_corpus_t *c)
{
    const char *p = strstr(base_text, from);
    cr_assert_not_null(p, "no '%s'", from);
    char *text = t_splice(base_text, (size_t)(p - base_text), strlen(from), to);
    char path[128];
    t_tmp_path(path, sizeof(path), "c.json");
    cr_assert_eq(t_spill(path, text), 0);
    free(text);
    return duet_corpus_load(path, c);
}

Test(corpus_rules, every_rule_names_what_is_wrong, T_TIMEOUT)
{
    duet_corpus_t c;
    cr_assert_eq(load_edit("\"dev\"", "\"dev\"", &c), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(c.n, 2);
    cr_assert_eq(c.rows[0].ms, 2.0, "us in the file, ms in memory");
    duet_corpus_free(&c);
    static const struct {
        const char *from, *to, *why;
    } cases[] = {
        {"\"device\": \"dev\"", "\"device\": 5", "device"},
        {"\"arch\": \"sm_90\"", "\"arch\": 5", "arch"},
        {"\"driver\": \"d\"", "\"driver\": 5", "driver"},
        {"\"runtime\": \"r\"", "\"runtime\": 5", "runtime"},
        {"\"date\": \"2026-12-01T00:00:00Z\"", "\"date\": 5", "date"},
        {"\"duet\": \"0.1.0\"", "\"duet\": 5", "duet"},
        {"\"sms\": 132", "\"sms\": 0", "sms: 0 is not an integer in [1, 4096]"},
        {"\"world\": 2,\n", "\"world\": 2000,\n", "world: 2000 is not an integer in [1, 1024]"},
        {"\"repeats\": 4,\n", "\"repeats\": 0,\n", "repeats: 0 is not an integer"},
        {"\"warmup\": 1", "\"warmup\": -1", "warmup: -1 is not an integer"},
        {"\"grid\": {\"fused_fracs\": [0.75], \"tiles\": [\"256x128x64\"], \"concurrent_comm_wgs\": [16]}",
         "\"grid\": 3", "grid: must be an object"},
        {"\"fused_fracs\": [0.75]", "\"fused_fracs\": [1.5]", "fused_fracs"},
        {"\"tiles\": [\"256x128x64\"]", "\"tiles\": [\"7x7\"]", "tiles"},
        {"\"concurrent_comm_wgs\": [16]", "\"concurrent_comm_wgs\": [0.5]", "concurrent_comm_wgs"},
        {"\"collective\": \"all_gather\", \"dtype\": \"bf16\", \"m\": 1024",
         "\"collective\": \"gossip\", \"dtype\": \"bf16\", \"m\": 1024", "collective"},
        {"\"dtype\": \"bf16\", \"m\": 1024", "\"dtype\": \"fp8\", \"m\": 1024", "dtype"},
        {"\"m\": 1024,", "\"m\": -1,", "m: -1 is not an integer"},
        {"\"n\": 1024, \"k\": 1024, \"mc\": 512, \"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", "
         "\"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", "
         "\"group_m\": 8, \"ok\": true",
         "\"n\": 1.5, \"k\": 1024, \"mc\": 512, \"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", "
         "\"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", "
         "\"group_m\": 8, \"ok\": true",
         "n: 1.5 is not an integer"},
        {"\"k\": 1024, \"mc\": 512, \"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, "
         "\"gemm_wgs\": 99, \"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, "
         "\"ok\": true",
         "\"k\": \"x\", \"mc\": 512, \"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, "
         "\"gemm_wgs\": 99, \"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, "
         "\"ok\": true",
         "k: must be a number"},
        {"\"mc\": 512, \"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": "
         "99, "
         "\"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true",
         "\"mc\": -5, \"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": "
         "99, "
         "\"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true",
         "mc: -5 is not an integer"},
        {"\"nc\": 1024, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, "
         "\"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true",
         "\"nc\": 0, \"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, "
         "\"comm_wgs\": 33, \"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true",
         "comm tensor 512x0"},
        {"\"world\": 2, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, "
         "\"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true",
         "\"world\": 0, \"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, "
         "\"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true",
         "world: 0 is not an integer in [1, 1024]"},
        {"\"root\": 0, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, "
         "\"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true",
         "\"root\": 2000, \"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": 99, \"comm_wgs\": 33, "
         "\"tile\": \"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true",
         "root: 2000 is not an integer in [0, 1023]"},
        {"\"ok\": true", "\"ok\": 1", "ok: must be true or false"},
        {"\"ok\": true, \"repeats\": 4", "\"ok\": true, \"repeats\": -4", "repeats: -4 is not an integer"},
        {"\"min_us\": 1000", "\"min_us\": 2500", "min_us"},
        {"\"max_us\": 3000", "\"max_us\": 1e999", "max_us"},
        {"\"min_us\": 1000", "\"min_us\": \"a\"", "min_us: must be a number"},
        {"\"max_us\": 3000", "\"max_us\": \"a\"", "max_us: must be a number"},
        {"\"error\": \"launch failed\"", "\"error\": \"\"", "error"},
        {"\"error\": \"launch failed\"", "\"error\": 5", "error: must be a string"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(load_edit(cases[i].from, cases[i].to, &c), DUET_ERR_PARSE, "%zu: %s", i, duet_last_error());
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%zu: %s", i, duet_last_error());
    }
    cr_assert_str_eq(duet_row_kind_name(-1), "unknown");
    cr_assert_str_eq(duet_row_kind_name(DUET_ROW_KIND_COUNT), "unknown");
}
