/*
 * Corpus loading is linear in the rows (issue 22: 40,000 rows took 10.6 s, each row searched
 * among the earlier ones). Not a timing test: the loader counts the steps of its duplicate check
 * (table slots visited and rows compared, model/corpus_internal.h), and a linear check takes about
 * one per row where the search took rows^2 / 2.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "duet/corpus.h"
#include "model/corpus_internal.h"

#define HEAD                                                                                                           \
    "{\"schema\": \"duet-corpus/1\", \"device\": \"d\", \"arch\": \"sm_90\", \"sms\": 132, \"world\": 2, "             \
    "\"driver\": \"\", \"runtime\": \"\", \"date\": \"\", \"duet\": \"0.1.0\", \"repeats\": 1, \"warmup\": 0, "        \
    "\"grid\": {\"fused_fracs\": [], \"tiles\": [], \"concurrent_comm_wgs\": []}, \"rows\": ["

/* Row text of GEMM m x 1024 x 1024 (the point's identity) and gemm_wgs g; malloc'd corpus text. */
static char *corpus_text(size_t n, const int64_t *m, const int *g)
{
    size_t cap = sizeof(HEAD) + n * 512 + 8, len = 0;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    len += (size_t)snprintf(s, cap, "%s", HEAD);
    for (size_t i = 0; i < n; i++)
        len +=
            (size_t)snprintf(s + len, cap - len,
                             "%s{\"kind\": \"op\", \"collective\": \"all_gather\", \"dtype\": \"bf16\", \"m\": %lld, "
                             "\"n\": 1024, \"k\": 1024, \"mc\": 512, \"nc\": 1024, \"world\": 2, \"root\": 0, "
                             "\"mode\": \"fused\", \"num_wgs\": 132, \"gemm_wgs\": %d, \"comm_wgs\": %d, \"tile\": "
                             "\"256x128x64\", \"comm_tile\": \"256x64\", \"group_m\": 8, \"ok\": true, \"repeats\": 1, "
                             "\"ms\": 1, \"min_ms\": 1, \"max_ms\": 1}",
                             i ? ", " : "", (long long)m[i], g[i], 132 - g[i]);
    snprintf(s + len, cap - len, "]}");
    return s;
}

/*
 * 10,000 distinct points (100 GEMM sizes x 100 splits). A search of the earlier rows compares
 * 10000 * 9999 / 2 = 5e7 pairs, 5000 per row. The table (at least twice as many slots as rows,
 * linear probing) visits little more than one slot per row: at most 3 per row passes.
 */
Test(corpus_linear, the_duplicate_check_takes_a_bounded_number_of_steps_per_row, T_TIMEOUT)
{
    enum { N = 10000 };
    static int64_t m[N];
    static int g[N];
    for (size_t i = 0; i < N; i++) {
        m[i] = 1 + (int64_t)(i / 100);
        g[i] = 1 + (int)(i % 100);
    }
    char *text = corpus_text(N, m, g);
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_parse(text, "big.json", &c), DUET_OK, "%s", duet_last_error());
    free(text);
    cr_assert_eq(c.n, (size_t)N);
    size_t steps = duet__corpus_dup_steps();
    cr_assert(steps >= N && steps <= 3 * (size_t)N, "%zu steps for %d rows", steps, N);
    duet_corpus_free(&c);
}

/* Duplicates are still found, wherever they are, and named with the row they repeat. */
Test(corpus_linear, a_repeated_point_is_still_refused_naming_both_rows, T_TIMEOUT)
{
    enum { N = 300 };
    static int64_t m[N];
    static int g[N];
    for (size_t i = 0; i < N; i++) {
        m[i] = 100 + (int64_t)i;
        g[i] = 66;
    }
    m[297] = m[3]; /* rows[297] repeats rows[3] */
    char *text = corpus_text(N, m, g);
    duet_corpus_t c;
    cr_assert_eq(duet_corpus_parse(text, "dup.json", &c), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "dup.json: rows[297] measures the same point as rows[3]");
    free(text);
    /* The same GEMM at another split is another point. */
    g[297] = 67;
    text = corpus_text(N, m, g);
    cr_assert_eq(duet_corpus_parse(text, "dup.json", &c), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(c.n, (size_t)N);
    duet_corpus_free(&c);
    free(text);
}
