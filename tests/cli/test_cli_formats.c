/*
 * One output contract for every command (issue 26): --json is an object with a "schema" string
 * "duet-<what>/<N>" and every time in microseconds (no key ends in _ms or _s, none is "ms"); --csv
 * is RFC 4180 with a header record; --json and --csv together exit 2 with one line; -o FILE holds
 * exactly what standard output would have, and -o into a folder that does not exist exits 2 and
 * leaves nothing. The GPU commands (bench, run, calibrate collect, tune on the GPUs) cannot run
 * here; their writers are checked by reading their sources for the old keys.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "../tune/tune_util.h"
#include "base/base.h"
#include "duet/corpus.h"

#define AG "--collective", "all_gather", "--comm", "512x1024"
#define GEMM "--gemm", "1024x1024x1024"
#define TEST_S1 "tuning_data/h200_world1-test-s1.json"

/* ------------------------------------------------------------------------------------------ */
/* JSON                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Whether a key names a time in ms or s: "ms", or a suffix "_ms" or "_s". */
static int time_key_not_us(const char *k)
{
    size_t n = strlen(k);
    return strcmp(k, "ms") == 0 || (n >= 3 && strcmp(k + n - 3, "_ms") == 0) ||
           (n >= 2 && strcmp(k + n - 2, "_s") == 0);
}

/* Walk the tree: every key of every object, at any depth; `where` names the document. */
static void walk_keys(const cJSON *item, const char *where, const char *path)
{
    char sub[512];
    int i = 0;
    for (const cJSON *c = item->child; c != NULL; c = c->next, i++) {
        if (cJSON_IsObject(item)) {
            cr_assert(!time_key_not_us(c->string), "%s: %s.%s is a time not in us", where, path, c->string);
            snprintf(sub, sizeof(sub), "%s.%s", path, c->string);
        } else {
            snprintf(sub, sizeof(sub), "%s[%d]", path, i);
        }
        walk_keys(c, where, sub);
    }
}

/* A JSON document with a "schema" string "duet-<want>/<N>" (N a positive integer) and no time key in
 * ms or s. @return the parsed document (the caller deletes it). */
static cJSON *expect_document(const char *text, const char *want, const char *where)
{
    cJSON *o = cJSON_Parse(text);
    cr_assert_not_null(o, "%s: not JSON: %.300s", where, text);
    cr_assert(cJSON_IsObject(o), "%s: not an object", where);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "schema");
    cr_assert(cJSON_IsString(s), "%s: no schema string", where);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "duet-%s/", want);
    cr_assert(strncmp(s->valuestring, prefix, strlen(prefix)) == 0, "%s: schema %s, want %s<N>", where, s->valuestring,
              prefix);
    const char *n = s->valuestring + strlen(prefix);
    cr_assert(n[0] >= '1' && n[0] <= '9' && strspn(n, "0123456789") == strlen(n), "%s: schema %s", where,
              s->valuestring);
    walk_keys(o, where, "");
    return o;
}

/* Run a command that prints JSON (its arguments after the expected schema and a name) and check it. */
#define JSON_CASE(want, where, ...)                                                                                    \
    do {                                                                                                               \
        static t_cli_t r_;                                                                                             \
        t_cli_run(&r_, NULL, __VA_ARGS__, NULL);                                                                       \
        cr_assert_eq(r_.code, 0, "%s: exit %d: %s", where, r_.code, r_.err);                                           \
        cJSON_Delete(expect_document(r_.out, want, where));                                                            \
    } while (0)

/* A database of two entries in a folder of this test (DUET_CACHE, dir: 64 bytes), stored by the library. */
static void make_database(char *dir)
{
    tt_tmpdir(dir, 64);
    duet_tune_db_t db;
    cr_assert_eq(duet_tune_db_open(NULL, &db), DUET_OK);
    for (int m = 1024; m <= 2048; m += 1024) {
        duet_tune_entry_t e = tt_entry_for(m);
        cr_assert_eq(duet_tune_db_store(&db, &e), DUET_OK, "%s", duet_last_error());
    }
}

Test(cli_formats, every_json_has_a_schema_and_times_in_us, .timeout = 120)
{
    JSON_CASE("hw-list", "hw list", "hw", "list", "--json");
    JSON_CASE("hw", "hw show", "hw", "show", "mi300x", "--json");
    JSON_CASE("plan", "plan", "plan", AG, GEMM, "--json");
    JSON_CASE("predict", "predict", "predict", AG, GEMM, "--splits", "step:16", "--json");
    JSON_CASE("predict", "predict --reference-pricing", "predict", AG, GEMM, "--policy", "frozen",
              "--reference-pricing", "--splits", "step:16", "--json");
    JSON_CASE("simulate", "simulate", "simulate", AG, GEMM, "--json");
    JSON_CASE("bench-sim", "bench-sim", "bench-sim", "--repeat", "1", "--json");
    JSON_CASE("validation", "validate", "validate", "--hw", "h200", "--corpus", TEST_S1, "--quiet", "--json");
    JSON_CASE("candidates", "derive-candidates", "derive-candidates", "--corpus", TEST_S1, "--json");
    JSON_CASE("tune-evaluate", "tune --evaluate", "tune", "--evaluate", "--corpus", TEST_S1, "--hw", "h200", "--json");
    JSON_CASE("shapes", "shapes", "shapes", "--random", "4", "--seed", "3", "--json");
    char dir[64];
    make_database(dir);
    JSON_CASE("tune-list", "tune --list", "tune", "--list", "--json");
    /* The database file itself (duet-tuning/2). */
    char db_path[512];
    snprintf(db_path, sizeof(db_path), "%s/tuning.json", dir);
    char *text = t_slurp(db_path);
    cJSON_Delete(expect_document(text, "tuning", "the tuning database"));
    free(text);
    tt_rmdir(dir);
}

Test(cli_formats, written_files_have_a_schema_and_times_in_us, .timeout = 120)
{
    static t_cli_t r;
    char prof[128], rep[128], corpus[128], trace[128];
    t_tmp_path(prof, sizeof(prof), "fitted.json");
    t_tmp_path(rep, sizeof(rep), "report.json");
    t_tmp_path(corpus, sizeof(corpus), "corpus2.json");
    t_tmp_path(trace, sizeof(trace), "trace.json");
    /* The fit report (duet-calibration/2: wall_us where /1 had wall_s) and the fitted profile. */
    t_cli_run(&r, NULL, "calibrate", "fit", "--corpus", TEST_S1, "--hw", "h200", "-o", prof, "--report", rep,
              "--params", "gemm_eff_bf16", "--folds", "0", "--max-iter", "3", "--accept-unconverged", "--quiet",
              "--threads", "1", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    char *text = t_slurp(rep);
    cJSON *o = expect_document(text, "calibration", "calibrate fit --report");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(o, "schema")->valuestring, "duet-calibration/2");
    cr_assert_gt(t_num(o, "wall_us"), 0);
    cJSON_Delete(o);
    free(text);
    text = t_slurp(prof);
    cJSON_Delete(expect_document(text, "hw", "the fitted profile"));
    free(text);
    /* A corpus as collect writes it (duet_corpus_save: duet-corpus/2). */
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_load(TEST_S1, &c), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_corpus_save(&c, corpus), DUET_OK, "%s", duet_last_error());
    duet_corpus_free(&c);
    text = t_slurp(corpus);
    cJSON_Delete(expect_document(text, "corpus", "a saved corpus"));
    free(text);
    /* A timeline. */
    t_cli_run(&r, NULL, "simulate", AG, GEMM, "--trace", trace, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    text = t_slurp(trace);
    cJSON_Delete(expect_document(text, "trace", "simulate --trace"));
    free(text);
    unlink(prof);
    unlink(rep);
    unlink(corpus);
    unlink(trace);
}

/*
 * The GPU commands' writers cannot run here (no GPU, no MPI in this test binary; their row types
 * come from a header that includes mpi.h). Their sources are read instead: no JSON key they add
 * names a time in ms or s, and each document names its schema.
 */
Test(cli_formats, gpu_writers_name_no_time_key_in_ms, T_TIMEOUT)
{
    static const char *const files[] = {"cli/gpu/bench_report.c", "cli/gpu/bench_random.c", "cli/gpu/cmd_run.c",
                                        "cli/gpu/cmd_tune_gpu.c", "cli/gpu/cmd_collect.c"};
    static const char *const adders[] = {"ToObject(", "cli_json_add_num(", "duet__num("};
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char *text = t_slurp(files[f]);
        cr_assert_not_null(text, "%s", files[f]);
        for (size_t a = 0; a < sizeof(adders) / sizeof(adders[0]); a++)
            for (const char *p = strstr(text, adders[a]); p != NULL; p = strstr(p + 1, adders[a])) {
                /* The key is the first string literal of the call. */
                const char *q = strchr(p, '"'), *end = q ? strchr(q + 1, '"') : NULL, *close = strchr(p, ';');
                if (q == NULL || end == NULL || (close != NULL && close < q))
                    continue;
                char key[96];
                snprintf(key, sizeof(key), "%.*s", (int)(end - q - 1), q + 1);
                cr_assert(!time_key_not_us(key), "%s: JSON key \"%s\" is a time not in us", files[f], key);
            }
        free(text);
    }
    char *text = t_slurp("cli/gpu/bench_report.c");
    cr_assert(strstr(text, "\"duet-bench/2\"") != NULL);
    free(text);
    text = t_slurp("cli/gpu/bench_random.c");
    cr_assert(strstr(text, "\"duet-bench-gemm-random/2\"") != NULL);
    free(text);
    text = t_slurp("cli/gpu/cmd_run.c");
    cr_assert(strstr(text, "\"duet-run/1\"") != NULL);
    free(text);
    text = t_slurp("cli/gpu/cmd_tune_gpu.c");
    cr_assert(strstr(text, "\"duet-tune/1\"") != NULL);
    free(text);
}

/* ------------------------------------------------------------------------------------------ */
/* CSV                                                                                         */
/* ------------------------------------------------------------------------------------------ */

#define CSV_MAX_FIELDS 64
#define CSV_MAX_RECORDS 256

/* A CSV document read by RFC 4180's rules: records of fields, quotes undone. */
typedef struct csv_doc {
    int n;                                    /* records */
    int fields[CSV_MAX_RECORDS];              /* fields per record */
    char *f[CSV_MAX_RECORDS][CSV_MAX_FIELDS]; /* each malloc'd */
} csv_doc_t;

/* Parse `text` (records end in "\n" or "\r\n"; a quoted field may hold commas, quotes doubled and
 * line breaks). Asserts it is well formed. */
static void csv_parse(const char *text, csv_doc_t *d)
{
    memset(d, 0, sizeof(*d));
    const char *p = text;
    while (*p != '\0') {
        cr_assert_lt(d->n, CSV_MAX_RECORDS);
        int nf = 0;
        for (;;) {
            char buf[4096];
            size_t len = 0;
            if (*p == '"') {
                for (p++;; p++) {
                    cr_assert(*p != '\0', "an unterminated quoted field");
                    if (*p == '"' && p[1] == '"') {
                        buf[len++] = '"';
                        p++;
                    } else if (*p == '"') {
                        p++;
                        break;
                    } else {
                        buf[len++] = *p;
                    }
                    cr_assert_lt(len, sizeof(buf) - 1);
                }
                cr_assert(*p == ',' || *p == '\n' || *p == '\r' || *p == '\0', "text after a closing quote");
            } else {
                for (; *p != ',' && *p != '\n' && *p != '\r' && *p != '\0'; p++) {
                    cr_assert(*p != '"', "a quote inside an unquoted field");
                    buf[len++] = *p;
                    cr_assert_lt(len, sizeof(buf) - 1);
                }
            }
            buf[len] = '\0';
            cr_assert_lt(nf, CSV_MAX_FIELDS);
            d->f[d->n][nf++] = strdup(buf);
            if (*p == ',') {
                p++;
                continue;
            }
            break;
        }
        if (*p == '\r')
            p++;
        cr_assert(*p == '\n' || *p == '\0', "a record not ended by a line break");
        if (*p == '\n')
            p++;
        d->fields[d->n++] = nf;
    }
}

static void csv_free(csv_doc_t *d)
{
    for (int i = 0; i < d->n; i++)
        for (int j = 0; j < d->fields[i]; j++)
            free(d->f[i][j]);
}

/* Every record has as many fields as the header; no header name is a time in ms or s. */
static void expect_table(const csv_doc_t *d, const char *where)
{
    cr_assert_geq(d->n, 2, "%s: a header and at least one record", where);
    for (int j = 0; j < d->fields[0]; j++)
        cr_assert(!time_key_not_us(d->f[0][j]), "%s: column %s is a time not in us", where, d->f[0][j]);
    for (int i = 1; i < d->n; i++)
        cr_assert_eq(d->fields[i], d->fields[0], "%s: record %d has %d fields, the header %d", where, i, d->fields[i],
                     d->fields[0]);
}

/* The field of column `name` in record i. */
static const char *csv_get(const csv_doc_t *d, int i, const char *name)
{
    for (int j = 0; j < d->fields[0]; j++)
        if (strcmp(d->f[0][j], name) == 0)
            return d->f[i][j];
    cr_assert_fail("no column %s", name);
    return NULL;
}

Test(cli_formats, the_csv_writer_quotes_as_rfc_4180_says, T_TIMEOUT)
{
    static const char *const fields[] = {"plain", "a, comma", "say \"hi\"", "two\nlines", "cr\rhere",
                                         " lead", "trail ",   "",           "x"};
    enum { N = sizeof(fields) / sizeof(fields[0]) };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    duet__csv_t c;
    duet__csv_init(&c, f);
    duet__csv_names(&c, fields, N);
    duet__csv_printf(&c, "%d,%d", 1, 2);
    duet__csv_num(&c, 0.1);
    duet__csv_num(&c, NAN);
    duet__csv_num_fmt(&c, "%.3f", 2.0 / 3.0);
    duet__csv_num_fmt(&c, "%.3f", INFINITY);
    duet__csv_str(&c, NULL);
    duet__csv_end(&c);
    fclose(f);
    cr_assert_eq(c.err, 0);
    /* By hand: a field with a comma, a quote, CR or LF, or a space at an end is quoted, its quotes
     * doubled; the others are written as they are. */
    cr_assert_str_eq(buf, "plain,\"a, comma\",\"say \"\"hi\"\"\",\"two\nlines\",\"cr\rhere\",\" lead\",\"trail \",,x\n"
                          "\"1,2\",0.1,,0.667,,\n");
    csv_doc_t d;
    csv_parse(buf, &d);
    cr_assert_eq(d.n, 2);
    cr_assert_eq(d.fields[0], N);
    for (int j = 0; j < N; j++)
        cr_assert_str_eq(d.f[0][j], fields[j], "field %d reads back as written", j);
    cr_assert_eq(d.fields[1], 6);
    cr_assert_str_eq(d.f[1][0], "1,2");
    csv_free(&d);
    free(buf);
}

Test(cli_formats, validate_csv_is_the_table_with_its_labels_quoted, .timeout = 60)
{
    static t_cli_t r, j;
    t_cli_run(&r, NULL, "validate", "--hw", "h200", "--corpus", TEST_S1, "--quiet", "--csv", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    csv_doc_t d;
    csv_parse(r.out, &d);
    expect_table(&d, "validate --csv");
    /* key, metric, and the three columns of the text table; sixteen metrics. */
    cr_assert_eq(d.fields[0], 5);
    cr_assert_str_eq(d.f[0][0], "key");
    cr_assert_str_eq(d.f[0][2], "duet");
    cr_assert_str_eq(d.f[0][3], "reference_rules");
    cr_assert_str_eq(d.f[0][4], "noise_floor");
    cr_assert_eq(d.n, 17);
    /* A label with a comma in it was quoted and reads back whole. */
    int found = 0;
    for (int i = 1; i < d.n; i++)
        found |= strcmp(d.f[i][1], "pick within 8 CTAs (same mode, tile)") == 0;
    cr_assert(found, "the quoted label round-trips");
    cr_assert(strstr(r.out, "\"makespan error, median\"") != NULL, "%s", r.out);
    /* The values are the JSON's, as fractions: at W = 1 the reference rules are not fitted (empty). */
    t_cli_run(&j, NULL, "validate", "--hw", "h200", "--corpus", TEST_S1, "--quiet", "--json", NULL);
    cJSON *o = cJSON_Parse(j.out);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(o, "model");
    for (int i = 1; i < d.n; i++) {
        const char *key = d.f[i][0];
        const cJSON *v =
            strncmp(key, "topk_cover.", 11) == 0
                ? cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(model, "topk_cover"), key + 11)
                : cJSON_GetObjectItemCaseSensitive(model, key);
        cr_assert(cJSON_IsNumber(v), "%s is in the JSON", key);
        cr_assert_eq(strtod(d.f[i][2], NULL), v->valuedouble, "%s: %s against %.17g", key, d.f[i][2], v->valuedouble);
        cr_assert_str_eq(d.f[i][3], "", "%s: no reference rules at W = 1", key);
    }
    cJSON_Delete(o);
    csv_free(&d);
}

Test(cli_formats, bench_sim_csv_has_its_four_sweeps_in_us, .timeout = 60)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "bench-sim", "--repeat", "1", "--csv", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    csv_doc_t d;
    csv_parse(r.out, &d);
    expect_table(&d, "bench-sim --csv");
    cr_assert_eq(d.n, 5, "a header and four sweeps");
    cr_assert_eq(d.fields[0], 10);
    static const char *const names[] = {"frozen-a", "frozen-b", "frozen-c", "fluid"};
    for (int i = 1; i < 5; i++) {
        cr_assert_str_eq(csv_get(&d, i, "case"), names[i - 1]);
        double med = strtod(csv_get(&d, i, "median_us"), NULL), ev = strtod(csv_get(&d, i, "events"), NULL);
        double configs = strtod(csv_get(&d, i, "configs"), NULL);
        cr_assert_gt(med, 0);
        /* One run: median, fastest and slowest are the same time. */
        cr_assert_str_eq(csv_get(&d, i, "min_us"), csv_get(&d, i, "median_us"));
        /* The rates are the sweep's own figures (the CSV rounds them: events/s to 1, us/config to 1e-4). */
        cr_assert(fabs(strtod(csv_get(&d, i, "events_per_second"), NULL) - ev / (med * 1e-6)) <=
                      0.5 + 1e-6 * ev / (med * 1e-6),
                  "sweep %d", i);
        cr_assert(fabs(strtod(csv_get(&d, i, "us_per_config"), NULL) - med / configs) <= 1e-4 + 1e-6 * med / configs);
    }
    csv_free(&d);
}

Test(cli_formats, every_table_command_has_csv, .timeout = 60)
{
    static t_cli_t r;
    csv_doc_t d;
#define CSV_CASE(name, cols, ...)                                                                                      \
    do {                                                                                                               \
        t_cli_run(&r, NULL, __VA_ARGS__, "--csv", NULL);                                                               \
        cr_assert_eq(r.code, 0, "%s: %s", name, r.err);                                                                \
        csv_parse(r.out, &d);                                                                                          \
        expect_table(&d, name);                                                                                        \
        cr_assert_eq(d.fields[0], cols, "%s: %d columns", name, d.fields[0]);                                          \
        csv_free(&d);                                                                                                  \
    } while (0)
    CSV_CASE("hw list", 11, "hw", "list");
    CSV_CASE("hw show", 4, "hw", "show", "h200");
    CSV_CASE("predict", 17, "predict", AG, GEMM, "--splits", "step:16"); /* the 15 of a row, lo_us and hi_us */
    CSV_CASE("derive-candidates", 12, "derive-candidates", "--corpus", TEST_S1);
    CSV_CASE("tune --evaluate", 23, "tune", "--evaluate", "--corpus", TEST_S1, "--hw", "h200");
    CSV_CASE("shapes", 9, "shapes", "--random", "5", "--seed", "2");
    char dir[64];
    make_database(dir);
    CSV_CASE("tune --list", 20, "tune", "--list");
    tt_rmdir(dir);
#undef CSV_CASE
    /* hw show: a source with a comma in it is one field. */
    t_cli_run(&r, NULL, "hw", "show", "h200", "--csv", NULL);
    csv_parse(r.out, &d);
    duet_hw_t hw = t_hw("h200");
    cr_assert_str_eq(d.f[1][0], "n_sms");
    cr_assert_str_eq(d.f[1][3], hw.source[DUET_HW_F_n_sms]);
    cr_assert(strchr(hw.source[DUET_HW_F_n_sms], ',') != NULL, "the fixture has a comma: %s",
              hw.source[DUET_HW_F_n_sms]);
    csv_free(&d);
}

/* ------------------------------------------------------------------------------------------ */
/* --json with --csv, -o                                                                       */
/* ------------------------------------------------------------------------------------------ */

Test(cli_formats, json_and_csv_together_exit_2_with_one_line, .timeout = 60)
{
    static t_cli_t r;
#define BOTH(cmd, ...)                                                                                                 \
    do {                                                                                                               \
        t_cli_run(&r, NULL, __VA_ARGS__, "--json", "--csv", NULL);                                                     \
        t_cli_expect_error(&r, 2, cmd, "--json and --csv: choose one");                                                \
        cr_assert_str_eq(r.out, "", "%s: nothing on standard output", cmd);                                            \
    } while (0)
    BOTH("predict", "predict", AG, GEMM);
    BOTH("hw list", "hw", "list");
    BOTH("hw show", "hw", "show", "h200");
    BOTH("bench-sim", "bench-sim", "--repeat", "1");
    BOTH("validate", "validate", "--hw", "h200", "--corpus", TEST_S1, "--quiet");
    BOTH("derive-candidates", "derive-candidates", "--corpus", TEST_S1);
    BOTH("tune", "tune", "--evaluate", "--corpus", TEST_S1);
    BOTH("tune", "tune", "--list");
    BOTH("shapes", "shapes", "--random", "3", "--seed", "1");
#undef BOTH
}

Test(cli_formats, o_into_a_missing_folder_exits_2_and_leaves_nothing, .timeout = 60)
{
    static t_cli_t r;
    char missing[256], file[320];
    t_tmp_path(missing, sizeof(missing), "no-such-folder");
    snprintf(file, sizeof(file), "%s/out.txt", missing);
#define MISSING(cmd, ...)                                                                                              \
    do {                                                                                                               \
        t_cli_run(&r, NULL, __VA_ARGS__, "-o", file, NULL);                                                            \
        t_cli_expect_error(&r, 2, cmd, "-o: ");                                                                        \
        cr_assert(strstr(r.err, "no such folder") != NULL, "%s", r.err);                                               \
        cr_assert_eq(access(missing, F_OK), -1, "%s: created something", cmd);                                         \
        cr_assert_str_eq(r.out, "");                                                                                   \
    } while (0)
    MISSING("predict", "predict", AG, GEMM);
    MISSING("plan", "plan", AG, GEMM, "--json");
    MISSING("simulate", "simulate", AG, GEMM);
    MISSING("hw list", "hw", "list", "--csv");
    MISSING("hw show", "hw", "show", "h200", "--json");
    MISSING("bench-sim", "bench-sim", "--repeat", "1");
    MISSING("validate", "validate", "--hw", "h200", "--corpus", TEST_S1, "--quiet", "--csv");
    MISSING("derive-candidates", "derive-candidates", "--corpus", TEST_S1, "--json");
    MISSING("tune", "tune", "--evaluate", "--corpus", TEST_S1);
    MISSING("shapes", "shapes", "--random", "3", "--seed", "1");
    MISSING("shapes", "shapes", "--random", "3", "--seed", "1", "--csv");
#undef MISSING
}

Test(cli_formats, o_holds_what_standard_output_would, .timeout = 60)
{
    static t_cli_t r, f;
    char path[256];
    t_tmp_path(path, sizeof(path), "o-out.txt");
#define SAME(name, ...)                                                                                                \
    do {                                                                                                               \
        t_cli_run(&r, NULL, __VA_ARGS__, NULL);                                                                        \
        cr_assert_eq(r.code, 0, "%s: %s", name, r.err);                                                                \
        t_cli_run(&f, NULL, __VA_ARGS__, "-o", path, NULL);                                                            \
        cr_assert_eq(f.code, 0, "%s: %s", name, f.err);                                                                \
        cr_assert_str_eq(f.out, "", "%s: -o prints nothing", name);                                                    \
        char *got = t_slurp(path);                                                                                     \
        cr_assert_str_eq(got, r.out, "%s: the file differs from standard output", name);                               \
        free(got);                                                                                                     \
        unlink(path);                                                                                                  \
    } while (0)
    SAME("hw list", "hw", "list");
    SAME("hw list --csv", "hw", "list", "--csv");
    SAME("hw show --json", "hw", "show", "mi350x", "--json");
    SAME("plan", "plan", AG, GEMM);
    SAME("simulate --json", "simulate", AG, GEMM, "--json");
    SAME("validate --csv", "validate", "--hw", "h200", "--corpus", TEST_S1, "--quiet", "--csv");
    SAME("derive-candidates", "derive-candidates", "--corpus", TEST_S1);
    SAME("tune --evaluate --csv", "tune", "--evaluate", "--corpus", TEST_S1, "--hw", "h200", "--csv");
    SAME("shapes", "shapes", "--random", "6", "--seed", "9");
    SAME("shapes --json", "shapes", "--random", "6", "--seed", "9", "--json");
#undef SAME
}
