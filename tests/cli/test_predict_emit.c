/*
 * `duet predict --emit`, the ranking's distinct rows and tie marks, sizes in bytes, CSV, and the
 * Chrome trace of `duet simulate` read back against the simulator's own timeline.
 */
#include <criterion/criterion.h>

#include "../cli_run.h"

#define AG8 "--collective", "all_gather", "--gemm", "8192x8192x8192", "--comm", "4096x8192", "--world", "2"

static cJSON *run_json(t_cli_t *r)
{
    cr_assert_eq(r->code, 0, "%s", r->err);
    cJSON *o = cJSON_Parse(r->out);
    cr_assert_not_null(o, "%s", r->out);
    return o;
}

/*
 * The settings name the best vendor row's own split: its gemm_wgs as the SM target and its comm_wgs
 * as the CTA cap (the lines themselves are held to hand-written text in tests/model/test_units_emit.c).
 */
Test(predict_emit, settings_follow_the_best_vendor_row, .timeout = 60)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "predict", AG8, "--splits", "step:4", "--emit", "nccl", "--top", "0", "--json", NULL);
    cJSON *o = run_json(&r);
    cr_assert_str_eq(cJSON_GetObjectItem(o, "schema")->valuestring, "duet-predict/2");
    const cJSON *e = cJSON_GetObjectItem(o, "emit"), *row, *vfirst = NULL, *dfirst = NULL;
    cr_assert_not_null(e);
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(o, "ranked"))
    {
        const char *mode = cJSON_GetObjectItem(row, "mode")->valuestring;
        if (vfirst == NULL && strcmp(mode, "vendor") == 0)
            vfirst = row;
        if (dfirst == NULL && strcmp(mode, "vendor") != 0)
            dfirst = row;
    }
    cr_assert(vfirst != NULL && dfirst != NULL, "--emit sweeps vendor mode beside duet's");
    const cJSON *vb = cJSON_GetObjectItem(e, "vendor_best"), *db = cJSON_GetObjectItem(e, "duet_best");
    cr_assert_eq(t_num(vb, "gemm_wgs"), t_num(vfirst, "gemm_wgs"));
    cr_assert_eq(t_num(vb, "comm_wgs"), t_num(vfirst, "comm_wgs"));
    cr_assert_eq(t_num(vb, "pred_us"), t_num(vfirst, "pred_us"));
    cr_assert_eq(t_num(db, "pred_us"), t_num(dfirst, "pred_us"));
    cr_assert_eq(t_num(vb, "gemm_wgs") + t_num(vb, "comm_wgs"), 132, "vendor mode partitions the 132 SMs");
    cr_assert(fabs(t_num(e, "duet_speedup") - t_num(vb, "pred_us") / t_num(db, "pred_us")) < 1e-12);
    char maxctas[64], target[64];
    snprintf(maxctas, sizeof(maxctas), "config.maxCTAs = %d;", (int)t_num(vb, "comm_wgs"));
    snprintf(target, sizeof(target), "int32_t sm_target = %d;", (int)t_num(vb, "gemm_wgs"));
    int found = 0;
    const cJSON *l;
    cJSON_ArrayForEach(l, cJSON_GetObjectItem(e, "settings")) found +=
        strcmp(l->valuestring, maxctas) == 0 || strcmp(l->valuestring, target) == 0;
    cr_assert_eq(found, 2, "%s / %s", maxctas, target);
    cJSON_Delete(o);
    /* The text says the same, with the one-line gain. */
    t_cli_run(&r, NULL, "predict", AG8, "--splits", "step:4", "--emit", "nccl", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.out, maxctas) && strstr(r.out, target), "%s", r.out);
    cr_assert(strstr(r.out, "duet's kernels are predicted ") != NULL, "%s", r.out);
    t_cli_run(&r, NULL, "predict", AG8, "--emit", "mpi", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "--emit: 'mpi' is not nccl, rccl, torch, te or env") != NULL, "%s", r.err);
}

/* Vendor mode's GEMM tile is the library's choice: one row per split, whatever the stand-in tiles. */
Test(predict_emit, rankings_hold_distinct_configurations, .timeout = 60)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "predict", AG8, "--mode", "vendor", "--tiles", "256x128x64,128x256x64", "--splits", "step:8",
              "--top", "0", "--json", NULL);
    cJSON *o = run_json(&r);
    /* gemm_wgs 1, 9, ..., 129: 17 splits, each simulated once at the library's modelled kernel
     * (duet's tiles are not the library's) and listed once, and the static default once. */
    cr_assert_eq(t_num(o, "n_simulated"), 17 + 1);
    cr_assert_eq(t_num(o, "n_configs"), 17);
    int seen[133] = {0};
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(o, "ranked"))
    {
        int g = (int)t_num(row, "gemm_wgs");
        cr_assert(g >= 1 && g <= 132 && seen[g]++ == 0, "gemm_wgs %d twice", g);
    }
    cJSON_Delete(o);
}

/* 132 splits of one tile on a GEMM of one tile all tie: every row is rank 1, marked '='. */
Test(predict_emit, ties_share_a_rank_and_are_marked, .timeout = 30)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "predict", "--gemm", "64x64x64", "--mode", "fused", "--tiles", "256x128x64", "--top", "3",
              NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    const char *p = strstr(r.out, "\n   1=  fused ");
    cr_assert_not_null(p, "%s", r.out);
    cr_assert(strstr(p + 1, "\n   1=  fused ") && strstr(strstr(p + 1, "\n   1=  fused ") + 1, "\n   1=  fused "),
              "three rows, all rank 1 and marked: %s", r.out);
    t_cli_run(&r, NULL, "predict", "--gemm", "64x64x64", "--mode", "fused", "--tiles", "256x128x64", "--top", "2",
              "--json", NULL);
    cJSON *o = run_json(&r);
    const cJSON *row;
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(o, "ranked"))
    {
        cr_assert_eq(t_num(row, "rank"), 1);
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(row, "tied")));
        /* A fused row names its home split and its stealing, not a bare comm_wgs. */
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(row, "steal")));
        cr_assert(strstr(cJSON_GetObjectItem(row, "ctas")->valuestring, " steal") != NULL);
    }
    cJSON_Delete(o);
}

/* --comm-bytes 128M of all_gather over 2 ranks is 64 MiB per rank: 4096 x 8192 bf16, as --comm says. */
Test(predict_emit, comm_bytes_and_busbw, .timeout = 60)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "predict", "--collective", "all_gather", "--gemm", "1024x1024x1024", "--comm-bytes", "128M",
              "--splits", "step:32", "--top", "1", "--json", NULL);
    cJSON *o = run_json(&r);
    cr_assert(t_num(o, "mc") == 4096 && t_num(o, "nc") == 8192 && t_num(o, "world") == 2);
    cr_assert_eq(t_num(o, "comm_bytes"), 134217728.0);
    cr_assert_eq(t_num(o, "busbw_factor"), 0.5, "(2 - 1) / 2");
    /* busbw = S / comm time x (n-1)/n, GB/s: computed here from the row's own comm time. */
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "ranked"), 0);
    double want = 134217728.0 / (t_num(row, "comm_finish_us") * 1e-6) / 1e9 * 0.5;
    cr_assert(fabs(t_num(row, "busbw_gbs") - want) < 1e-9 * want, "%.9g vs %.9g", t_num(row, "busbw_gbs"), want);
    cr_assert(fabs(t_num(row, "algbw_gbs") - 2 * want) < 1e-9 * want);
    cJSON_Delete(o);
    t_cli_run(&r, NULL, "predict", "--collective", "all_gather", "--gemm", "1024x1024x1024", "--comm-bytes", "128M",
              "--comm", "4096x8192", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "--comm and --comm-bytes: give one") != NULL, "%s", r.err);
    t_cli_run(&r, NULL, "predict", "--collective", "all_gather", "--world", "3", "--gemm", "1024x1024x1024",
              "--comm-bytes", "100", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "not a whole number of bf16 elements per rank") != NULL, "%s", r.err);
    /* CSV: a header and --top rows, times in us. */
    t_cli_run(&r, NULL, "predict", "--collective", "all_gather", "--gemm", "1024x1024x1024", "--comm-bytes", "128M",
              "--splits", "step:32", "--top", "2", "--csv", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strncmp(r.out, "rank,tied,mode,num_wgs,gemm_wgs,comm_wgs,steal,tile,split_k,pred_us,", 68) == 0, "%s",
              r.out);
    int lines = 0;
    for (const char *p = r.out; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 3);
}

/* -o FILE takes the result that would go to standard output. */
Test(predict_emit, output_file_holds_the_result, .timeout = 30)
{
    static t_cli_t r;
    char path[64], text[1 << 16];
    t_tmp_path(path, sizeof(path), "predict.json");
    t_cli_run(&r, NULL, "predict", "--gemm", "64x64x64", "--mode", "fused", "--tiles", "256x128x64", "--json", "-o",
              path, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "");
    t_cli_slurp(path, text, sizeof(text));
    cJSON *o = cJSON_Parse(text);
    cr_assert_not_null(o);
    cr_assert_str_eq(cJSON_GetObjectItem(o, "schema")->valuestring, "duet-predict/2");
    cJSON_Delete(o);
    /* plan and simulate: the same text as on standard output, or their JSON; a refused run writes nothing. */
    static const char *const cmds[] = {"plan", "simulate"}, *const schemas[] = {"duet-plan/1", "duet-simulate/1"};
    static t_cli_t shown;
    for (int i = 0; i < 2; i++) {
        unlink(path);
        t_cli_run(&shown, NULL, cmds[i], "--gemm", "1024x1024x1024", NULL);
        t_cli_run(&r, NULL, cmds[i], "--gemm", "1024x1024x1024", "-o", path, NULL);
        cr_assert(r.code == 0 && r.out[0] == '\0', "%s", r.err);
        t_cli_slurp(path, text, sizeof(text));
        cr_assert_str_eq(text, shown.out);
        t_cli_run(&r, NULL, cmds[i], "--gemm", "1024x1024x1024", "--json", "--output", path, NULL);
        t_cli_slurp(path, text, sizeof(text));
        o = cJSON_Parse(text);
        cr_assert(o != NULL && strcmp(cJSON_GetObjectItem(o, "schema")->valuestring, schemas[i]) == 0, "%s", text);
        cJSON_Delete(o);
        unlink(path);
        t_cli_run(&r, NULL, cmds[i], "--gemm", "1024x1024x1024", "--tile", "7x7", "-o", path, NULL);
        cr_assert_eq(r.code, 2);
        cr_assert_eq(access(path, F_OK), -1, "%s written by a refused run", path);
    }
}

/*
 * The Chrome trace holds what duet's own timeline holds: one "X" event per tile with its CTA as the
 * thread and its duration in us; the predicted timeline is process 1 and the measured one process 2.
 */
Test(predict_emit, chrome_trace_reads_back_as_the_timeline, .timeout = 60)
{
    static t_cli_t r;
    char duet_path[64], chrome_path[64];
    static char a[1 << 22], b[1 << 22];
    t_tmp_path(duet_path, sizeof(duet_path), "trace.json");
    t_tmp_path(chrome_path, sizeof(chrome_path), "trace.chrome.json");
    const char *wl[] = {"--collective", "all_reduce", "--gemm", "2048x2048x2048", "--comm", "1024x4096"};
    t_cli_run(&r, NULL, "simulate", wl[0], wl[1], wl[2], wl[3], wl[4], wl[5], "--trace", duet_path, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    /* The same simulation again in Chrome's format, with the first timeline as "measured". */
    t_cli_run(&r, NULL, "simulate", wl[0], wl[1], wl[2], wl[3], wl[4], wl[5], "--trace", chrome_path, "--trace-format",
              "chrome", "--measured", duet_path, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    t_cli_slurp(duet_path, a, sizeof(a));
    t_cli_slurp(chrome_path, b, sizeof(b));
    cJSON *d = cJSON_Parse(a), *c = cJSON_Parse(b);
    cr_assert(d != NULL && c != NULL);
    const cJSON *tiles = cJSON_GetObjectItem(d, "tiles"), *ev;
    int n_tiles = cJSON_GetArraySize(tiles), n_ctas = (int)t_num(d, "n_ctas");
    int x[3] = {0}, names[3] = {0}, threads[3] = {0};
    double makespan_us = t_num(d, "makespan_us"), max_end[3] = {0};
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(c, "traceEvents"))
    {
        int pid = (int)t_num(ev, "pid");
        cr_assert(pid == 1 || pid == 2, "pid %d", pid);
        const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
        if (strcmp(ph, "M") == 0) {
            const char *what = cJSON_GetObjectItem(ev, "name")->valuestring;
            names[pid] += strcmp(what, "process_name") == 0;
            threads[pid] += strcmp(what, "thread_name") == 0;
            continue;
        }
        cr_assert_str_eq(ph, "X");
        /* The k-th event of a process is the k-th tile of the timeline (both keep the simulator's order). */
        const cJSON *t = cJSON_GetArrayItem(tiles, x[pid]++);
        cr_assert_not_null(t, "more events than tiles");
        const cJSON *args = cJSON_GetObjectItem(ev, "args");
        cr_assert_eq(t_num(ev, "tid"), t_num(t, "cta"));
        cr_assert_eq(t_num(args, "tile"), t_num(t, "tile"));
        cr_assert_str_eq(cJSON_GetObjectItem(args, "queue")->valuestring, cJSON_GetObjectItem(t, "queue")->valuestring);
        double dur = t_num(t, "end_us") - t_num(t, "start_us");
        cr_assert(fabs(t_num(ev, "dur") - dur) < 2e-4 && fabs(t_num(ev, "ts") - t_num(t, "start_us")) < 2e-4,
                  "%g vs %g", t_num(ev, "dur"), dur);
        max_end[pid] = fmax(max_end[pid], t_num(ev, "ts") + t_num(ev, "dur"));
    }
    for (int pid = 1; pid <= 2; pid++) {
        cr_assert_eq(x[pid], n_tiles, "process %d: %d events for %d tiles", pid, x[pid], n_tiles);
        cr_assert_eq(names[pid], 1);
        cr_assert_eq(threads[pid], n_ctas, "one track per CTA");
        cr_assert(max_end[pid] <= makespan_us + 1e-3, "tiles end by the makespan");
    }
    cJSON_Delete(d);
    cJSON_Delete(c);
    unlink(duet_path);
    unlink(chrome_path);
}
