/*
 * The command-line tool as a user meets it: exit codes (0 ok, 1 failed, 2 bad usage or input),
 * one-line "duet: <what>: <why>" messages, no partial output files, stdin profiles.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli_run.h"
#include "../test_util.h"

#define AG "--collective", "all_gather", "--comm", "2048x4096"
#define GEMM "--gemm", "4096x4096x4096"

Test(cli, help_and_version, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "--help", NULL);
    cr_assert_eq(r.code, 0);
    cr_assert(strstr(r.out, "predict") && strstr(r.out, "exit status"));
    t_cli_run(&r, NULL, "--version", NULL);
    cr_assert_eq(r.code, 0);
    cr_assert(strstr(r.out, DUET_VERSION) != NULL);
    const char *cmds[] = {"hw", "plan", "predict", "simulate", "bench-sim"};
    for (int i = 0; i < 5; i++) {
        t_cli_run(&r, NULL, cmds[i], "--help", NULL);
        cr_assert_eq(r.code, 0, "%s --help", cmds[i]);
        cr_assert(strstr(r.out, "usage: duet") != NULL);
        if (i < 4)
            cr_assert(strstr(r.out, "example") != NULL, "%s --help has examples", cmds[i]);
    }
    t_cli_run(&r, NULL, NULL);
    cr_assert_eq(r.code, 2);
    t_cli_run(&r, NULL, "fly", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "unknown command 'fly'") != NULL);
}

Test(cli, plan_prints_counts_and_json, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "plan", AG, "--gemm", "8192x8192x8192", "--world", "2", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.out, "2048 tiles (32 x 64)") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "512 tiles") != NULL);
    t_cli_run(&r, NULL, "plan", AG, GEMM, "--json", NULL);
    cr_assert_eq(r.code, 0);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o, "plan --json is JSON");
    cr_assert_eq(t_num(cJSON_GetObjectItem(o, "comm"), "queue_tiles"), 512);
    cr_assert_eq(t_num(cJSON_GetObjectItem(o, "gemm"), "tiles"), 512);
    cr_assert_eq(t_num(cJSON_GetObjectItem(o, "comm"), "remote_bytes"), 2048.0 * 4096 * 2);
    cJSON_Delete(o);
}

Test(cli, bad_input_exits_2_with_one_line, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "plan", "--gemm", "4096x4096", NULL);
    t_cli_expect_error(&r, 2, "plan", "--gemm");
    t_cli_run(&r, NULL, "plan", "--gemm", "-4x4x4", NULL);
    t_cli_expect_error(&r, 2, "plan", "--gemm");
    t_cli_run(&r, NULL, "plan", "--collective", "all_gather", GEMM, NULL);
    t_cli_expect_error(&r, 2, "plan", "--comm");
    t_cli_run(&r, NULL, "plan", "--collective", "allgather", "--comm", "8x8", NULL);
    t_cli_expect_error(&r, 2, "plan", "all_gather");
    t_cli_run(&r, NULL, "plan", AG, GEMM, "--tile", "300x128x64", NULL);
    t_cli_expect_error(&r, 2, "plan", "not supported");
    t_cli_run(&r, NULL, "plan", AG, GEMM, "--gemm-wgs", "500", NULL);
    t_cli_expect_error(&r, 2, "plan", "gemm_wgs 500");
    t_cli_run(&r, NULL, "plan", AG, GEMM, "--num-wgs", "200", NULL);
    t_cli_expect_error(&r, 2, "plan", "one persistent CTA per SM");
    t_cli_run(&r, NULL, "plan", "--collective", "reduce_scatter", "--comm", "1001x64", "--world", "2", NULL);
    t_cli_expect_error(&r, 2, "plan", "1001 % 2");
    t_cli_run(&r, NULL, "plan", AG, GEMM, "--world", "zero", NULL);
    t_cli_expect_error(&r, 2, "plan", "--world");
    t_cli_run(&r, NULL, "plan", AG, GEMM, "--frobnicate", NULL);
    t_cli_expect_error(&r, 2, "plan", "--frobnicate");
    t_cli_run(&r, NULL, "plan", AG, GEMM, "--hw", "tpu9", NULL);
    t_cli_expect_error(&r, 2, "plan", "tpu9");
    t_cli_run(&r, NULL, "plan", AG, GEMM, "stray", NULL);
    t_cli_expect_error(&r, 2, "plan", "stray");
    t_cli_run(&r, NULL, "plan", NULL);
    t_cli_expect_error(&r, 2, "plan", "--gemm");
    t_cli_run(&r, NULL, "predict", AG, GEMM, "--splits", "every", NULL);
    t_cli_expect_error(&r, 2, "predict", "--splits");
    t_cli_run(&r, NULL, "predict", AG, GEMM, "--policy", "frozen", "--mode", "concurrent", NULL);
    t_cli_expect_error(&r, 2, "predict", "fused");
    t_cli_run(&r, NULL, "predict", AG, GEMM, "--tiles", "256x256x64,7x7", NULL);
    t_cli_expect_error(&r, 2, "predict", "7x7");
    t_cli_run(&r, NULL, "predict", AG, "--hw", "mi300x", GEMM, "--tiles", "256x256x64", "--comm-tile", "256x60", NULL);
    t_cli_expect_error(&r, 2, "predict", "multiple of 8");
    t_cli_run(&r, NULL, "simulate", AG, GEMM, "--policy", "psychic", NULL);
    t_cli_expect_error(&r, 2, "simulate", "psychic");
    t_cli_run(&r, NULL, "simulate", AG, GEMM, "--measured", "x.json", NULL);
    t_cli_expect_error(&r, 2, "simulate", "--svg");
    t_cli_run(&r, NULL, "bench-sim", "--repeat", "0", NULL);
    t_cli_expect_error(&r, 2, "bench-sim", "--repeat");
}

Test(cli, hw_show_round_trips_through_stdin, T_TIMEOUT)
{
    static t_cli_t r, back;
    t_cli_run(&r, NULL, "hw", "show", "h200", "--json", NULL);
    cr_assert_eq(r.code, 0);
    t_cli_run(&back, r.out, "hw", "show", "-", "--json", NULL);
    cr_assert_eq(back.code, 0, "%s", back.err);
    cr_assert_str_eq(back.out, r.out, "the same profile comes back");
    t_cli_run(&back, r.out, "hw", "show", "-", NULL);
    cr_assert_eq(back.code, 0);
    cr_assert(strstr(back.out, "link_half_inflight_kib") != NULL);
    /* A broken profile on stdin: exit 2, the key and <stdin> named. */
    char *bad = strdup(r.out);
    char *p = strstr(bad, "\"hbm_gbs\"");
    memcpy(p, "\"hbm_GBs\"", 9);
    t_cli_run(&back, bad, "hw", "show", "-", NULL);
    t_cli_expect_error(&back, 2, "hw show", "hbm_GBs");
    cr_assert(strstr(back.err, "<stdin>") != NULL);
    t_cli_run(&back, "not json", "hw", "show", "-", NULL);
    t_cli_expect_error(&back, 2, "hw show", "line 1");
    free(bad);
    t_cli_run(&back, NULL, "hw", "show", NULL);
    t_cli_expect_error(&back, 2, "hw show", "missing profile");
    t_cli_run(&back, NULL, "hw", "list", "extra", NULL);
    t_cli_expect_error(&back, 2, "hw list", "extra");
    t_cli_run(&back, NULL, "hw", "paint", NULL);
    t_cli_expect_error(&back, 2, "hw", "paint");
}

/* hw list: every built-in, h100 among them, and what each is fitted to (the sources of its
 * constants: the H200's fit names its one-GPU training corpus; MI300X's datasheet profile none). */
Test(cli, hw_list_says_what_each_builtin_is_fitted_to, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "hw", "list", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    const char *h100 = strstr(r.out, "\nh100 "), *h200 = strstr(r.out, "\nh200 "), *mi = strstr(r.out, "\nmi300x ");
    cr_assert(h100 != NULL && h200 != NULL && mi != NULL, "%s", r.out);
    cr_assert(strstr(h100, "NVIDIA H100 80GB HBM3") == h100 + 10, "%s", r.out);
    const char *eol = strchr(mi + 1, '\n');
    cr_assert(strstr(mi, "not fitted") != NULL && strstr(mi, "not fitted") < eol, "%s", r.out);
    eol = strchr(h200 + 1, '\n');
    const char *fit = strstr(h200, "most to tuning_data/h200_world1-train-s1.json (kernels ");
    cr_assert(fit != NULL && fit < eol, "%s", r.out);
    t_cli_run(&r, NULL, "hw", "list", "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\"fit\":\tnull") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "\"fit\":\t\"tuning_data/h200_world1-train-s1.json (kernels ") != NULL, "%s", r.out);
}

/* hw for-device: the built-in of a device by the name its driver prints, a note where it is not
 * the device's own. */
Test(cli, hw_for_device_names_the_builtin_and_its_fallbacks, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "hw", "for-device", "NVIDIA H100 80GB HBM3", "sm_90", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_str_eq(r.out, "h100\n");
    cr_assert_str_eq(r.err, "");
    t_cli_run(&r, NULL, "hw", "for-device", "NVIDIA H200", NULL);
    cr_assert_str_eq(r.out, "h200\n");
    cr_assert_str_eq(r.err, "");
    t_cli_run(&r, NULL, "hw", "for-device", "AMD Instinct MI355X", "gfx950", NULL);
    cr_assert_str_eq(r.out, "mi350x\n");
    cr_assert(strstr(r.err, "duet: hw for-device: note: no built-in profile of AMD Instinct MI355X: using mi350x "
                            "(AMD Instinct MI350X), the nearest") == r.err,
              "%s", r.err);
    t_cli_run(&r, NULL, "hw", "for-device", "NVIDIA GH200 480GB", "sm_90", NULL);
    cr_assert_str_eq(r.out, "h200\n");
    cr_assert(strstr(r.err, "note: unknown device NVIDIA GH200 480GB (sm_90): using h200 (NVIDIA H200)") != NULL, "%s",
              r.err);
    t_cli_run(&r, NULL, "hw", "for-device", NULL);
    t_cli_expect_error(&r, 2, "hw for-device", "give the device's name");
}

Test(cli, writes_into_a_missing_folder_exit_2_and_leave_no_file, T_TIMEOUT)
{
    static t_cli_t r;
    /* A folder that does not exist is the user's input: exit 2, the path named, nothing written. */
    const char *path = "/nonexistent-dir/duet/curve.svg";
    t_cli_run(&r, NULL, "predict", AG, GEMM, "--tiles", "256x128x64", "--splits", "step:16", "--svg", path, NULL);
    t_cli_expect_error(&r, 2, "predict", "/nonexistent-dir");
    struct stat sb;
    cr_assert_neq(stat(path, &sb), 0);
    t_cli_run(&r, NULL, "hw", "show", "h200", "--json", "-o", "/nonexistent-dir/h.json", NULL);
    t_cli_expect_error(&r, 2, "hw show", "-o: /nonexistent-dir: no such folder");
    /* Writing into a folder we own works, and leaves no temporary behind. */
    char dir[96];
    cr_assert_lt(snprintf(dir, sizeof(dir), "%s/cli-XXXXXX", t_tmpdir()), (int)sizeof(dir));
    cr_assert_not_null(mkdtemp(dir));
    char svg[128], trace[128];
    snprintf(svg, sizeof(svg), "%s/t.svg", dir);
    snprintf(trace, sizeof(trace), "%s/t.json", dir);
    t_cli_run(&r, NULL, "simulate", AG, GEMM, "--svg", svg, "--trace", trace, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(stat(svg, &sb), 0);
    cr_assert_eq(stat(trace, &sb), 0);
    t_cli_run(&r, NULL, "simulate", AG, GEMM, "--measured", trace, "--svg", svg, NULL);
    cr_assert_eq(r.code, 0, "a measured timeline is drawn above: %s", r.err);
    unlink(svg);
    unlink(trace);
    cr_assert_eq(rmdir(dir), 0, "no temporary files left behind");
}

Test(cli, a_profile_that_cannot_run_the_tile_exits_2, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "hw", "show", "h200", "--json", NULL);
    cr_assert_eq(r.code, 0);
    /* The same H200 with 64 KiB of shared memory cannot hold three stages of a 256x256x64 tile. */
    char *p = strstr(r.out, "\"smem_kib\"");
    cr_assert_not_null(p);
    p = strstr(p, "\"value\":");
    cr_assert_not_null(p);
    char path[64];
    t_tmp_path(path, sizeof(path), "small.json");
    FILE *f = fopen(path, "wb");
    fwrite(r.out, 1, (size_t)(p - r.out), f);
    fputs("\"value\": 64", f);
    fputs(strchr(p, ','), f);
    fclose(f);
    t_cli_run(&r, NULL, "simulate", AG, GEMM, "--hw", path, "--tile", "256x256x64", NULL);
    t_cli_expect_error(&r, 2, "simulate", "shared memory");
    t_cli_run(&r, NULL, "predict", AG, GEMM, "--hw", path, "--tiles", "256x256x64", NULL);
    t_cli_expect_error(&r, 2, "predict", "shared memory");
    unlink(path);
}

Test(cli, predict_json_is_ranked, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "predict", AG, GEMM, "--splits", "step:8", "--top", "0", "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o);
    const cJSON *arr = cJSON_GetObjectItem(o, "ranked");
    double prev = 0;
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        double ms = t_num(e, "hi_us");                   /* ranked by the upper end of each prediction's interval */
        cr_assert(ms >= prev * (1 - DUET_RANK_TIE_REL)); /* ties may come in either order */
        prev = ms;
        n++;
    }
    cr_assert_eq(n, (int)t_num(o, "n_configs"));
    cr_assert(t_num(cJSON_GetObjectItem(o, "static_default"), "rank") >= 1);
    cJSON_Delete(o);
}

Test(cli, split_k_flag_in_plan_simulate_and_predict, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "plan", AG, "--gemm", "512x8192x8192", "--tile", "256x256x64", "--split-k", "4", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.out, "256 tiles (2 x 32 C tiles, each in 4 K parts), 32 K steps each") != NULL, "%s", r.out);
    t_cli_run(&r, NULL, "simulate", AG, "--gemm", "512x8192x8192", "--tile", "256x256x64", "--split-k", "4", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.out, "tile 256x256x64/k4") != NULL, "%s", r.out);
    /* Out of range, and a split that leaves a part without K steps (K = 128: 2 steps). */
    t_cli_run(&r, NULL, "plan", AG, GEMM, "--split-k", "0", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "--split-k") != NULL, "%s", r.err);
    t_cli_run(&r, NULL, "plan", AG, "--gemm", "4096x4096x128", "--split-k", "3", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "too few for 3 parts") != NULL, "%s", r.err);
    /* predict: the list restricts the sweep, and the JSON names each point's split. */
    t_cli_run(&r, NULL, "predict", AG, "--gemm", "512x8192x8192", "--tiles", "256x256x64", "--mode", "fused",
              "--split-k", "1,4", "--splits", "step:33", "--top", "0", "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o);
    int count[5] = {0};
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "ranked"))
    {
        int k = (int)t_num(e, "split_k");
        cr_assert(k == 1 || k == 4, "split_k %d", k);
        count[k]++;
    }
    cr_assert(count[1] == 4 && count[4] == 4, "%d %d", count[1], count[4]);
    cJSON_Delete(o);
    t_cli_run(&r, NULL, "predict", AG, GEMM, "--split-k", "1,x", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "--split-k: 'x'") != NULL, "%s", r.err);
}
