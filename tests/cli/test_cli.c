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

#include "../test_util.h"

typedef struct cli_run {
    int code;
    char out[1 << 20];
    char err[1 << 14];
} cli_run_t;

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = '\0';
    if (f)
        fclose(f);
}

/* Run build/duet (or $DUET_BIN) with the NULL-terminated arguments; stdin from `input`. */
static void run(cli_run_t *r, const char *input, ...)
{
    const char *bin = getenv("DUET_BIN") ? getenv("DUET_BIN") : "build/duet";
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)bin;
    va_list ap;
    va_start(ap, input);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 63;)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    char in[64], out[64], err[64];
    snprintf(in, sizeof(in), "/tmp/duet-cli-%d.in", (int)getpid());
    snprintf(out, sizeof(out), "/tmp/duet-cli-%d.out", (int)getpid());
    snprintf(err, sizeof(err), "/tmp/duet-cli-%d.err", (int)getpid());
    FILE *f = fopen(in, "wb");
    if (input)
        fputs(input, f);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        int fi = open(in, O_RDONLY), fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644),
            fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(bin, argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    slurp(out, r->out, sizeof(r->out));
    slurp(err, r->err, sizeof(r->err));
    unlink(in);
    unlink(out);
    unlink(err);
}

/* One line on stderr, starting "duet: <cmd>: ", mentioning `what`. */
static void expect_error(const cli_run_t *r, int code, const char *cmd, const char *what)
{
    cr_assert_eq(r->code, code, "exit %d (want %d); stderr: %s", r->code, code, r->err);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "duet: %s: ", cmd);
    cr_assert(strncmp(r->err, prefix, strlen(prefix)) == 0, "stderr '%s' lacks '%s'", r->err, prefix);
    cr_assert(strstr(r->err, what) != NULL, "stderr '%s' lacks '%s'", r->err, what);
    const char *nl = strchr(r->err, '\n');
    cr_assert(nl != NULL && nl[1] == '\0', "one line: '%s'", r->err);
    cr_assert(strstr(r->err, "Sanitizer") == NULL && strstr(r->err, "runtime error") == NULL);
}

#define AG "--collective", "all_gather", "--comm", "2048x4096"
#define GEMM "--gemm", "4096x4096x4096"

Test(cli, help_and_version, T_TIMEOUT)
{
    static cli_run_t r;
    run(&r, NULL, "--help", NULL);
    cr_assert_eq(r.code, 0);
    cr_assert(strstr(r.out, "predict") && strstr(r.out, "exit status"));
    run(&r, NULL, "--version", NULL);
    cr_assert_eq(r.code, 0);
    cr_assert(strstr(r.out, DUET_VERSION) != NULL);
    const char *cmds[] = {"hw", "plan", "predict", "simulate", "bench-sim"};
    for (int i = 0; i < 5; i++) {
        run(&r, NULL, cmds[i], "--help", NULL);
        cr_assert_eq(r.code, 0, "%s --help", cmds[i]);
        cr_assert(strstr(r.out, "usage: duet") != NULL);
        if (i < 4)
            cr_assert(strstr(r.out, "example") != NULL, "%s --help has examples", cmds[i]);
    }
    run(&r, NULL, NULL);
    cr_assert_eq(r.code, 2);
    run(&r, NULL, "fly", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strstr(r.err, "unknown command 'fly'") != NULL);
}

Test(cli, plan_prints_counts_and_json, T_TIMEOUT)
{
    static cli_run_t r;
    run(&r, NULL, "plan", AG, "--gemm", "8192x8192x8192", "--world", "2", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.out, "2048 tiles (32 x 64)") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "512 tiles") != NULL);
    run(&r, NULL, "plan", AG, GEMM, "--json", NULL);
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
    static cli_run_t r;
    run(&r, NULL, "plan", "--gemm", "4096x4096", NULL);
    expect_error(&r, 2, "plan", "--gemm");
    run(&r, NULL, "plan", "--gemm", "-4x4x4", NULL);
    expect_error(&r, 2, "plan", "--gemm");
    run(&r, NULL, "plan", "--collective", "all_gather", GEMM, NULL);
    expect_error(&r, 2, "plan", "--comm");
    run(&r, NULL, "plan", "--collective", "allgather", "--comm", "8x8", NULL);
    expect_error(&r, 2, "plan", "all_gather");
    run(&r, NULL, "plan", AG, GEMM, "--tile", "300x128x64", NULL);
    expect_error(&r, 2, "plan", "not supported");
    run(&r, NULL, "plan", AG, GEMM, "--gemm-wgs", "500", NULL);
    expect_error(&r, 2, "plan", "gemm_wgs 500");
    run(&r, NULL, "plan", AG, GEMM, "--num-wgs", "200", NULL);
    expect_error(&r, 2, "plan", "one persistent CTA per SM");
    run(&r, NULL, "plan", "--collective", "reduce_scatter", "--comm", "1001x64", "--world", "2", NULL);
    expect_error(&r, 2, "plan", "1001 % 2");
    run(&r, NULL, "plan", AG, GEMM, "--world", "zero", NULL);
    expect_error(&r, 2, "plan", "--world");
    run(&r, NULL, "plan", AG, GEMM, "--frobnicate", NULL);
    expect_error(&r, 2, "plan", "--frobnicate");
    run(&r, NULL, "plan", AG, GEMM, "--hw", "tpu9", NULL);
    expect_error(&r, 2, "plan", "tpu9");
    run(&r, NULL, "plan", AG, GEMM, "stray", NULL);
    expect_error(&r, 2, "plan", "stray");
    run(&r, NULL, "plan", NULL);
    expect_error(&r, 2, "plan", "--gemm");
    run(&r, NULL, "predict", AG, GEMM, "--splits", "every", NULL);
    expect_error(&r, 2, "predict", "--splits");
    run(&r, NULL, "predict", AG, GEMM, "--policy", "frozen", "--mode", "concurrent", NULL);
    expect_error(&r, 2, "predict", "fused");
    run(&r, NULL, "predict", AG, GEMM, "--tiles", "256x256x64,7x7", NULL);
    expect_error(&r, 2, "predict", "7x7");
    run(&r, NULL, "predict", AG, "--hw", "mi300x", GEMM, "--tiles", "256x256x64", "--comm-tile", "256x60", NULL);
    expect_error(&r, 2, "predict", "multiple of 8");
    run(&r, NULL, "simulate", AG, GEMM, "--policy", "psychic", NULL);
    expect_error(&r, 2, "simulate", "psychic");
    run(&r, NULL, "simulate", AG, GEMM, "--measured", "x.json", NULL);
    expect_error(&r, 2, "simulate", "--svg");
    run(&r, NULL, "bench-sim", "--repeat", "0", NULL);
    expect_error(&r, 2, "bench-sim", "--repeat");
}

Test(cli, hw_show_round_trips_through_stdin, T_TIMEOUT)
{
    static cli_run_t r, back;
    run(&r, NULL, "hw", "show", "h200", "--json", NULL);
    cr_assert_eq(r.code, 0);
    run(&back, r.out, "hw", "show", "-", "--json", NULL);
    cr_assert_eq(back.code, 0, "%s", back.err);
    cr_assert_str_eq(back.out, r.out, "the same profile comes back");
    run(&back, r.out, "hw", "show", "-", NULL);
    cr_assert_eq(back.code, 0);
    cr_assert(strstr(back.out, "link_half_inflight_kib") != NULL);
    /* A broken profile on stdin: exit 2, the key and <stdin> named. */
    char *bad = strdup(r.out);
    char *p = strstr(bad, "\"hbm_gbs\"");
    memcpy(p, "\"hbm_GBs\"", 9);
    run(&back, bad, "hw", "show", "-", NULL);
    expect_error(&back, 2, "hw show", "hbm_GBs");
    cr_assert(strstr(back.err, "<stdin>") != NULL);
    run(&back, "not json", "hw", "show", "-", NULL);
    expect_error(&back, 2, "hw show", "line 1");
    free(bad);
    run(&back, NULL, "hw", "show", NULL);
    expect_error(&back, 2, "hw show", "missing profile");
    run(&back, NULL, "hw", "list", "extra", NULL);
    expect_error(&back, 2, "hw list", "extra");
    run(&back, NULL, "hw", "paint", NULL);
    expect_error(&back, 2, "hw", "paint");
}

Test(cli, failed_writes_exit_1_and_leave_no_file, T_TIMEOUT)
{
    static cli_run_t r;
    const char *path = "/nonexistent-dir/duet/curve.svg";
    run(&r, NULL, "predict", AG, GEMM, "--tiles", "256x128x64", "--splits", "step:16", "--svg", path, NULL);
    expect_error(&r, 1, "predict", "/nonexistent-dir");
    struct stat sb;
    cr_assert_neq(stat(path, &sb), 0);
    run(&r, NULL, "hw", "show", "h200", "-o", "/nonexistent-dir/h.json", NULL);
    expect_error(&r, 1, "hw show", "/nonexistent-dir/h.json");
    /* Writing into a folder we own works, and leaves no temporary behind. */
    char dir[] = "/tmp/duet-cli-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char svg[128], trace[128];
    snprintf(svg, sizeof(svg), "%s/t.svg", dir);
    snprintf(trace, sizeof(trace), "%s/t.json", dir);
    run(&r, NULL, "simulate", AG, GEMM, "--svg", svg, "--trace", trace, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(stat(svg, &sb), 0);
    cr_assert_eq(stat(trace, &sb), 0);
    run(&r, NULL, "simulate", AG, GEMM, "--measured", trace, "--svg", svg, NULL);
    cr_assert_eq(r.code, 0, "a measured timeline is drawn above: %s", r.err);
    unlink(svg);
    unlink(trace);
    cr_assert_eq(rmdir(dir), 0, "no temporary files left behind");
}

Test(cli, a_profile_that_cannot_run_the_tile_exits_2, T_TIMEOUT)
{
    static cli_run_t r;
    run(&r, NULL, "hw", "show", "h200", "--json", NULL);
    cr_assert_eq(r.code, 0);
    /* The same H200 with 64 KiB of shared memory cannot hold three stages of a 256x256x64 tile. */
    char *p = strstr(r.out, "\"smem_kib\"");
    cr_assert_not_null(p);
    p = strstr(p, "\"value\":");
    cr_assert_not_null(p);
    char path[64];
    snprintf(path, sizeof(path), "/tmp/duet-small-%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    fwrite(r.out, 1, (size_t)(p - r.out), f);
    fputs("\"value\": 64", f);
    fputs(strchr(p, ','), f);
    fclose(f);
    run(&r, NULL, "simulate", AG, GEMM, "--hw", path, "--tile", "256x256x64", NULL);
    expect_error(&r, 2, "simulate", "shared memory");
    run(&r, NULL, "predict", AG, GEMM, "--hw", path, "--tiles", "256x256x64", NULL);
    expect_error(&r, 2, "predict", "shared memory");
    unlink(path);
}

Test(cli, predict_json_is_ranked, T_TIMEOUT)
{
    static cli_run_t r;
    run(&r, NULL, "predict", AG, GEMM, "--splits", "step:8", "--top", "0", "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o);
    const cJSON *arr = cJSON_GetObjectItem(o, "ranked");
    double prev = 0;
    int n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        double ms = t_num(e, "pred_ms");
        cr_assert(ms >= prev);
        prev = ms;
        n++;
    }
    cr_assert_eq(n, (int)t_num(o, "n_configs"));
    cr_assert(t_num(cJSON_GetObjectItem(o, "static_default"), "rank") >= 1);
    cJSON_Delete(o);
}
