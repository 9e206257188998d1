/*
 * duet shapes: a random shape set written as a shape file that reads back as the generator's
 * draw, the same bytes for the same seed, its JSON and CSV forms, and bad input refused with exit
 * status 2.
 */
#include <cjson/cJSON.h>

#include "../cli_run.h"
#include "duet/corpus.h"
#include "model/internal.h"

TestSuite(cli_shapes, T_TIMEOUT);

Test(cli_shapes, the_file_reads_back_as_the_draw_and_repeats_by_seed)
{
    static t_cli_t r;
    char a[512], b[512], c[512];
    t_tmp_path(a, sizeof(a), "a.txt");
    t_tmp_path(b, sizeof(b), "b.txt");
    t_tmp_path(c, sizeof(c), "c.txt");
    t_cli_run(&r, NULL, "shapes", "--random", "12", "--seed", "7", "-o", a, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    t_cli_run(&r, NULL, "shapes", "--random", "12", "--seed", "7", "-o", b, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    t_cli_run(&r, NULL, "shapes", "--random", "12", "--seed", "8", "-o", c, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    static char ta[1 << 14], tb[1 << 14], tc[1 << 14];
    t_cli_slurp(a, ta, sizeof(ta));
    t_cli_slurp(b, tb, sizeof(tb));
    t_cli_slurp(c, tc, sizeof(tc));
    cr_assert_str_eq(ta, tb);
    cr_assert_str_neq(ta, tc);
    cr_assert(strstr(ta, "# random n=12 seed=7 world=1\n") == ta, "%s", ta);

    duet_random_params_t p = duet_random_default_params();
    p.seed = 7;
    duet_workloads_t want, got;
    cr_assert_eq(duet_workloads_random(&p, 12, &want), DUET_OK);
    cr_assert_eq(duet_workloads_load(a, 1, DUET_DTYPE_FP16, &got), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(got.n, 12);
    for (size_t i = 0; i < 12; i++)
        cr_assert(duet_workload_same(&want.w[i], &got.w[i]), "workload %zu", i);
    duet_workloads_free(&want);
    duet_workloads_free(&got);
}

Test(cli_shapes, bad_input_is_refused_with_status_2)
{
    static t_cli_t r;
    char a[512];
    t_tmp_path(a, sizeof(a), "a.txt");
    t_cli_run(&r, NULL, "shapes", "--random", "0", "--seed", "1", "-o", a, NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "duet: shapes: --random") == r.err, "%s", r.err);
    t_cli_run(&r, NULL, "shapes", "--random", "3", "-o", a, NULL);
    cr_assert_eq(r.code, 2);
    t_cli_run(&r, NULL, "shapes", "--random", "3", "--seed", "-1", "-o", a, NULL);
    cr_assert_eq(r.code, 2);
    cr_assert_eq(access(a, F_OK), -1, "nothing written on bad input");
}

/*
 * --json's rows are the workload codec's objects (model/workload_json.c, its members in its order)
 * with comm_bytes after them; --csv has the sizes first, no root, one row per workload.
 */
Test(cli_shapes, json_rows_are_the_workload_codecs_and_csv_leads_with_the_sizes)
{
    duet_random_params_t p = duet_random_default_params();
    p.seed = 11;
    p.world = 4;
    duet_workloads_t want;
    cr_assert_eq(duet_workloads_random(&p, 6, &want), DUET_OK);
    static t_cli_t r;
    t_cli_run(&r, NULL, "shapes", "--random", "6", "--seed", "11", "--world", "4", "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cJSON *doc = cJSON_Parse(r.out);
    const cJSON *rows = cJSON_GetObjectItemCaseSensitive(doc, "workloads");
    cr_assert_eq(cJSON_GetArraySize(rows), 6);
    for (int i = 0; i < 6; i++) {
        cJSON *e = cJSON_CreateObject();
        cr_assert_eq(duet__workload_to_cjson(e, &want.w[i]), DUET_OK);
        cJSON_AddNumberToObject(e, "comm_bytes", duet_coll_bytes(&want.w[i]));
        char *a = cJSON_PrintUnformatted(e), *b = cJSON_PrintUnformatted(cJSON_GetArrayItem(rows, i));
        cr_assert_str_eq(b, a, "workload %d", i);
        cJSON_free(a);
        cJSON_free(b);
        cJSON_Delete(e);
    }
    cJSON_Delete(doc);

    t_cli_run(&r, NULL, "shapes", "--random", "6", "--seed", "11", "--world", "4", "--csv", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    const duet_workload_t *x = &want.w[0];
    char head[512];
    snprintf(head, sizeof(head),
             "m,n,k,mc,nc,collective,dtype,world,comm_bytes\n%lld,%lld,%lld,%lld,%lld,%s,%s,4,%.0f\n", (long long)x->m,
             (long long)x->n, (long long)x->k, (long long)x->mc, (long long)x->nc, duet_collective_name(x->coll),
             duet_dtype_name(x->dtype), duet_coll_bytes(x));
    cr_assert(strncmp(r.out, head, strlen(head)) == 0, "%s", r.out);
    duet_workloads_free(&want);
}
