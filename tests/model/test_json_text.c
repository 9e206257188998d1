/*
 * Text that comes from users and files: the escaping of every echoed string (one line whatever it
 * holds, cut with a mark when very long), the one JSON parse every loader goes through (a key
 * given twice is an error naming it, in profiles, corpora, candidate sets and traces alike), and
 * the number text of the writers (exact, and never "inf").
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "base/base.h"
#include "duet/corpus.h"
#include "duet/tune.h"

static void expect_escape(const char *in, const char *want)
{
    char out[256];
    duet__text_escape(out, sizeof(out), in, 200);
    cr_assert_str_eq(out, want, "escape of '%s'", in);
    /* Escaping escaped text changes nothing: a sink may escape a whole message again. */
    char again[256];
    duet__text_escape(again, sizeof(again), out, 200);
    cr_assert_str_eq(again, out);
}

Test(text, control_characters_and_broken_utf8_are_escaped, T_TIMEOUT)
{
    expect_escape("plain text, 'quoted' and \\ kept", "plain text, 'quoted' and \\ kept");
    expect_escape("two\nlines", "two\\nlines");
    expect_escape("tab\there\r", "tab\\there\\r");
    expect_escape("\x1b[31mred", "\\x1b[31mred");
    expect_escape("nul\x01 and del\x7f", "nul\\x01 and del\\x7f");
    /* UTF-8 text is kept: é (2 bytes), € (3), an emoji (4). */
    expect_escape("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    /* Not text: a lone byte, a C1 control (U+0085 NEL), an overlong '/', a surrogate, a cut sequence. */
    expect_escape("\xff", "\\xff");
    expect_escape("\xc2\x85", "\\xc2\\x85");
    expect_escape("\xc0\xaf", "\\xc0\\xaf");
    expect_escape("\xed\xa0\x80", "\\xed\\xa0\\x80");
    expect_escape("end\xe2\x82", "end\\xe2\\x82");
    expect_escape("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
}

Test(text, a_long_string_is_cut_with_a_mark, T_TIMEOUT)
{
    char in[1001], out[512], want[512];
    memset(in, 'a', 1000);
    in[1000] = '\0';
    duet__text_escape(out, sizeof(out), in, 200);
    snprintf(want, sizeof(want), "%.200s...(800 more bytes)", in);
    cr_assert_str_eq(out, want);
    /* Cut by the output's room: 64 bytes hold 64 - 1 - 32 (room kept for the mark) = 31 of them. */
    char small[64];
    duet__text_escape(small, sizeof(small), in, 1000);
    snprintf(want, sizeof(want), "%.31s...(969 more bytes)", in);
    cr_assert_str_eq(small, want);
    /* An escape is never split by the cut: of 40 newlines (80 bytes escaped) 64 bytes hold 31 bytes of
     * text before the mark's room, so 15 "\n" (30 bytes); 25 newlines are not shown. */
    char nl[41], tiny[64], want_nl[64] = "";
    memset(nl, '\n', 40);
    nl[40] = '\0';
    duet__text_escape(tiny, sizeof(tiny), nl, 200);
    for (int i = 0; i < 15; i++)
        strcat(want_nl, "\\n");
    strcat(want_nl, "...(25 more bytes)");
    cr_assert_str_eq(tiny, want_nl);
    /* Exactly what fits is not cut. */
    char fits[200];
    memset(fits, 'b', 199);
    fits[199] = '\0';
    char out2[200];
    duet__text_escape(out2, sizeof(out2), fits, 1000);
    cr_assert_str_eq(out2, fits);
}

Test(text, q_has_four_buffers_and_errors_are_one_line, T_TIMEOUT)
{
    const char *a = duet__q("a\nb"), *b = duet__q("c"), *c = duet__q("d\te"), *d = duet__q(NULL);
    cr_assert_str_eq(a, "a\\nb");
    cr_assert_str_eq(b, "c");
    cr_assert_str_eq(c, "d\\te");
    cr_assert_str_eq(d, "(null)");
    /* The library's error text is one line whatever a path or a key in it holds. */
    duet__error(DUET_ERR_IO, "%s: cannot open", "dir/evil\nduet: fake second line");
    cr_assert_str_eq(duet_last_error(), "dir/evil\\nduet: fake second line: cannot open");
    duet__error_prefix("load\r");
    cr_assert_str_eq(duet_last_error(), "load\\r: dir/evil\\nduet: fake second line: cannot open");
}

static void expect_dup(const char *text, const char *want)
{
    cJSON *root = duet__json_parse(text, (size_t)-1, "f.json", 1);
    cr_assert_null(root, "accepted: %s", text);
    cr_assert_str_eq(duet_last_error(), want);
}

Test(json, a_key_given_twice_anywhere_is_an_error_naming_it, T_TIMEOUT)
{
    expect_dup("{\"a\": 1, \"a\": 2}", "f.json: duplicate key \"a\"");
    expect_dup("{\"x\": {\"y\": [1, {\"k\": 1, \"j\": 2, \"k\": 3}]}}", "f.json: x.y[1]: duplicate key \"k\"");
    expect_dup("[{}, {\"a\": {\"b\": 1, \"b\": 2}}]", "f.json: [1].a: duplicate key \"b\"");
    /* An object of more than 16 members is checked through a sorted copy: the first and last members. */
    char big[512] = "{\"k00\": 0";
    for (int i = 1; i < 20; i++)
        snprintf(big + strlen(big), sizeof(big) - strlen(big), ", \"k%02d\": %d", i == 19 ? 0 : i, i);
    strcat(big, "}");
    expect_dup(big, "f.json: duplicate key \"k00\"");
    /* The key is escaped in the message. */
    expect_dup("{\"a\\nb\": 1, \"a\\nb\": 2}", "f.json: duplicate key \"a\\nb\"");
    /* Without the check (a loader that drops one bad entry instead), it parses; the check finds it then. */
    cJSON *root = duet__json_parse("{\"e\": {\"k\": 1, \"k\": 2}}", (size_t)-1, "f.json", 0);
    cr_assert_not_null(root);
    cr_assert_eq(duet__json_check_keys(root, "f.json", "", 0), DUET_OK, "the top level has no duplicate");
    cr_assert_eq(duet__json_check_keys(root, "f.json", "top", 1), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "f.json: top.e: duplicate key \"k\"");
    cJSON_Delete(root);
    /* Same names in different objects are not duplicates. */
    root = duet__json_parse("{\"a\": {\"v\": 1}, \"b\": {\"v\": 1}, \"c\": [{\"v\": 1}, {\"v\": 2}]}", (size_t)-1,
                            "f.json", 1);
    cr_assert_not_null(root, "%s", duet_last_error());
    cJSON_Delete(root);
}

Test(json, text_after_the_value_and_nul_bytes_are_errors_with_the_line, T_TIMEOUT)
{
    cr_assert_null(duet__json_parse("{}\n\n x", (size_t)-1, "f.json", 1));
    cr_assert_str_eq(duet_last_error(), "f.json: line 3: not valid JSON");
    cr_assert_null(duet__json_parse("{\n\"a\": 1,\n}", (size_t)-1, "f.json", 1));
    cr_assert_str_eq(duet_last_error(), "f.json: line 3: not valid JSON");
    const char with_nul[] = "{\"a\": 1}\n\0{\"b\": 2}";
    cr_assert_null(duet__json_parse(with_nul, sizeof(with_nul) - 1, "f.json", 1));
    cr_assert_str_eq(duet_last_error(), "f.json: line 2: a NUL byte: not JSON text");
    cJSON *ok = duet__json_parse("  {\"a\": [1, 2]}  \n", (size_t)-1, "f.json", 1);
    cr_assert_not_null(ok);
    cJSON_Delete(ok);
}

Test(json, numbers_are_written_exactly_and_never_as_inf, T_TIMEOUT)
{
    char buf[40];
    cr_assert_eq(duet__json_num_text(buf, sizeof(buf), 0.1), 0);
    cr_assert_str_eq(buf, "0.1");
    /* 1/3 needs 16 digits: 0.3333333333333333 is within half a step (2.8e-17) of the double. */
    cr_assert_eq(duet__json_num_text(buf, sizeof(buf), 1.0 / 3.0), 0);
    cr_assert_str_eq(buf, "0.3333333333333333");
    /* 0.1 + 0.2 = 0.30000000000000004: 17 digits. */
    cr_assert_eq(duet__json_num_text(buf, sizeof(buf), 0.1 + 0.2), 0);
    cr_assert_str_eq(buf, "0.30000000000000004");
    cr_assert_eq(duet__json_num_text(buf, sizeof(buf), -0.0), 0);
    cr_assert_str_eq(buf, "-0");
    cr_assert_eq(duet__json_num_text(buf, sizeof(buf), INFINITY), -1);
    cr_assert_str_eq(buf, "null");
    cr_assert_eq(duet__json_num_text(buf, sizeof(buf), -INFINITY), -1);
    cr_assert_eq(duet__json_num_text(buf, sizeof(buf), NAN), -1);
}

/* A file's text, with `insert` put in before the first `at` (after it when `after`). */
static char *inject(const char *path, const char *at, const char *insert, int after)
{
    char *text = t_slurp(path);
    cr_assert_not_null(text, "%s", path);
    char *p = strstr(text, at);
    cr_assert_not_null(p, "'%s' is not in %s", at, path);
    char *out = t_splice(text, (size_t)(p - text) + (after ? strlen(at) : 0), 0, insert);
    free(text);
    return out;
}

static void put_text(const char *path, const char *text)
{
    cr_assert_eq(t_spill(path, text), 0, "%s", path);
}

Test(json, every_loader_rejects_a_key_given_twice, T_TIMEOUT)
{
    char path[128], want[256];
    /* A profile: at the top and inside a constant. */
    duet_hw_t hw;
    char *text = inject("tuning_data/h200.json", "\"device\"", "\"device\": \"x\", ", 0);
    cr_assert_eq(duet_hw_from_json(text, "prof", &hw), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "prof: duplicate key \"device\"");
    free(text);
    text = inject("tuning_data/h200.json", "\"unit\"", "\"unit\": \"x\", ", 0);
    cr_assert_eq(duet_hw_from_json(text, "prof", &hw), DUET_ERR_PARSE);
    snprintf(want, sizeof(want), "prof: constants.%s: duplicate key \"unit\"", duet_hw_field_info(0)->key);
    cr_assert_str_eq(duet_last_error(), want);
    free(text);
    /* A corpus: inside its first row. */
    text = inject("tuning_data/h200_world2.json", "\"kind\": ", "\"kind\": \"op\", ", 0);
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_parse(text, "corpus.json", &c), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "corpus.json: rows[0]: duplicate key \"kind\"");
    free(text);
    /* A candidate set: inside the first configuration of its order. */
    t_tmp_path(path, sizeof(path), "cands.json");
    text = inject("tuning_data/candidate_set.json", "\"gemm_frac\":", "\"gemm_frac\": 2, ", 0);
    put_text(path, text);
    free(text);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_load(path, &set), DUET_ERR_PARSE);
    snprintf(want, sizeof(want), "%s: archs.sm_90.order[0]: duplicate key \"gemm_frac\"", path);
    cr_assert_str_eq(duet_last_error(), want);
    /* A trace: inside its first tile. */
    char tpath[128];
    t_tmp_path(tpath, sizeof(tpath), "trace.json");
    put_text(tpath, "{\"schema\": \"duet-trace/1\", \"tiles\": [{\"cta\": 0, \"sm\": 0, \"queue\": \"gemm\", "
                    "\"tile\": 0, \"start_us\": 0, \"end_us\": 1, \"stolen\": false, \"end_us\": 2}]}");
    duet_trace_t t;
    cr_assert_eq(duet_trace_read_json(tpath, &t), DUET_ERR_PARSE);
    snprintf(want, sizeof(want), "%s: tiles[0]: duplicate key \"end_us\"", tpath);
    cr_assert_str_eq(duet_last_error(), want);
}
