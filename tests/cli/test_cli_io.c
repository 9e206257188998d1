/*
 * Output paths and error lines as a user meets them through the duet binary: a device, a FIFO,
 * /dev/stdout, a folder and a link as --trace/--svg targets; arguments echoed into one-line
 * errors whatever they hold; ties in `duet predict` worded as ties.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../cli_run.h"
#include "../test_util.h"

/* One GEMM tile (64x64 in a 256x128 tile), no collective: every split runs the same single tile. */
#define ONE_TILE "--gemm", "64x64x64", "--mode", "fused", "--tiles", "256x128x64"

Test(cli_io, a_write_error_on_a_device_exits_1_and_leaves_the_device, T_TIMEOUT)
{
    static t_cli_t r;
    char dev[128], want[256];
    if (!t_char_device(7, dev, sizeof(dev)))
        cr_skip_test("no full device to write to");
    struct stat before, after;
    cr_assert_eq(stat(dev, &before), 0);
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--splits", "step:16", "--trace", dev, NULL);
    snprintf(want, sizeof(want), "duet: predict: %s: write failed: No space left on device\n", dev);
    cr_assert_eq(r.code, 1, "%s", r.err);
    cr_assert_str_eq(r.err, want);
    cr_assert_eq(stat(dev, &after), 0);
    cr_assert(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev && after.st_ino == before.st_ino,
              "the device node was replaced");
    /* The null device takes it. */
    cr_assert(t_char_device(3, dev, sizeof(dev)));
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--splits", "step:16", "--trace", dev, "--svg", dev, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(stat(dev, &after), 0);
    cr_assert(S_ISCHR(after.st_mode));
}

Test(cli_io, a_fifo_gets_the_bytes_and_stays_a_fifo, T_TIMEOUT)
{
    static t_cli_t r;
    char fifo[128], got[128];
    t_tmp_path(fifo, sizeof(fifo), "trace.fifo");
    t_tmp_path(got, sizeof(got), "got.json");
    pid_t pid = t_fifo_reader(fifo, got);
    cr_assert_geq(pid, 0);
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--splits", "step:16", "--trace", fifo, NULL);
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    duet_trace_t t;
    cr_assert_eq(duet_trace_read_json(got, &t), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(t.n, 1, "one GEMM tile in the timeline");
    duet_trace_free(&t);
    struct stat sb;
    cr_assert_eq(lstat(fifo, &sb), 0);
    cr_assert(S_ISFIFO(sb.st_mode), "the FIFO was replaced by a file");
}

Test(cli_io, dev_stdout_writes_into_standard_output_in_order, T_TIMEOUT)
{
    static t_cli_t r;
    /* The test's standard output is a regular file: the trace goes into it after the table, and the
     * file is not renamed over (what was printed before would be lost). */
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--splits", "step:16", "--trace", "/dev/stdout", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    const char *table = strstr(r.out, "static default"), *json = strstr(r.out, "\"schema\": \"duet-trace/1\"");
    cr_assert(table != NULL && json != NULL && table < json, "%s", r.out);
    cr_assert(strncmp(r.out, "GEMM 64x64x64", 13) == 0, "%s", r.out);
}

Test(cli_io, a_folder_is_refused_and_a_link_followed, T_TIMEOUT)
{
    static t_cli_t r;
    char dir[128], want[320], target[128], link[128];
    t_tmp_path(dir, sizeof(dir), "a-folder");
    cr_assert_eq(mkdir(dir, 0755), 0);
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--splits", "step:16", "--svg", dir, NULL);
    snprintf(want, sizeof(want),
             "duet: predict: %s: is a folder; duet writes regular files, character devices (such as /dev/null) and "
             "FIFOs\n",
             dir);
    cr_assert_eq(r.code, 2, "%s", r.err);
    cr_assert_str_eq(r.err, want);
    struct stat sb;
    cr_assert_eq(stat(dir, &sb), 0);
    cr_assert(S_ISDIR(sb.st_mode));
    t_tmp_path(target, sizeof(target), "curve.svg");
    t_tmp_path(link, sizeof(link), "link.svg");
    cr_assert_eq(symlink("curve.svg", link), 0);
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--splits", "step:16", "--svg", link, NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_eq(lstat(link, &sb), 0);
    cr_assert(S_ISLNK(sb.st_mode), "the link was replaced by a file");
    t_file_t f;
    t_file_get(target, &f);
    cr_assert(f.exists && strncmp(f.data, "<?xml", 5) == 0 && strstr(f.data, "<svg") != NULL, "%.60s", f.data);
}

Test(cli_io, an_echoed_argument_never_splits_the_error_line, T_TIMEOUT)
{
    static t_cli_t r;
    t_cli_run(&r, NULL, "predict", "--gemm", "64x64x64", "--top", "1\nduet: forged line", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert_str_eq(r.err, "duet: predict: --top: '1\\nduet: forged line' is not a non-negative integer (see 'duet "
                            "predict --help')\n");
    t_cli_run(&r, NULL, "predict", "--gemm", "64x64x\x1b[2J", NULL);
    cr_assert_str_eq(r.err, "duet: predict: --gemm: '64x64x\\x1b[2J' is not MxNxK (three non-negative integers) "
                            "(see 'duet predict --help')\n");
    /* A very long argument: its first 200 bytes and a mark. */
    static char arg[5001], want[512];
    memset(arg, '7', 5000);
    arg[0] = 'x';
    t_cli_run(&r, NULL, "predict", "--gemm", "64x64x64", "--policy", arg, NULL);
    snprintf(
        want, sizeof(want),
        "duet: predict: --policy: '%.200s...(4800 more bytes)' is not fluid or frozen (see 'duet predict --help')\n",
        arg);
    cr_assert_str_eq(r.err, want);
    /* What the library echoes (a path) is escaped too, and so is what a command outside these files prints. */
    t_cli_run(&r, NULL, "predict", "--gemm", "64x64x64", "--hw", "no/such\nfile.json", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert_str_eq(r.err, "duet: predict: --hw: no/such\\nfile.json: No such file or directory\n");
    t_cli_run(&r, NULL, "fly\naway", NULL);
    cr_assert_str_eq(r.err, "duet: unknown command 'fly\\naway' (see 'duet --help')\n");
    t_cli_run(&r, NULL, "plan", "--gemm", "64x64x64", "--tile", "1\n2", NULL);
    cr_assert_eq(r.code, 2);
    cr_assert(strchr(r.err, '\n') == r.err + strlen(r.err) - 1 && strstr(r.err, "1\\n2") != NULL, "%s", r.err);
}

/* The last line of a text. */
static const char *last_line(const char *out)
{
    size_t n = strlen(out);
    cr_assert(n > 1 && out[n - 1] == '\n');
    const char *p = out + n - 1;
    while (p > out && p[-1] != '\n')
        p--;
    return p;
}

Test(cli_io, predict_words_ties_as_ties, T_TIMEOUT)
{
    static t_cli_t r;
    /* Every gemm_wgs of 1..132 (the H200's SMs) runs the one tile the same way: 132 configurations,
     * all tied; the static default (gemm_wgs 99) is one of them, so it ties with the 131 others. */
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--top", "1", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    const char *l = last_line(r.out),
               *tail = ", rank 1 of 132; tied with 131 others for best (by predicted makespan alone)\n";
    cr_assert(strncmp(l, "static default (fused, gemm_wgs 99 of 132, 256x128x64): ", 56) == 0, "%s", l);
    cr_assert(strlen(l) > strlen(tail) && strcmp(l + strlen(l) - strlen(tail), tail) == 0, "%s", l);
    /* Every 16th (1, 17, ..., 129: 9 configurations) leaves the default out: it ties with all 9. */
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--splits", "step:16", NULL);
    l = last_line(r.out);
    tail = ", rank 1 of 9; tied with 9 others for best (by predicted makespan alone)\n";
    cr_assert(strcmp(l + strlen(l) - strlen(tail), tail) == 0, "%s", l);
    t_cli_run(&r, NULL, "predict", ONE_TILE, "--json", NULL);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o);
    const cJSON *d = cJSON_GetObjectItem(o, "static_default");
    cr_assert_eq(t_num(d, "rank"), 1);
    cr_assert_eq(t_num(d, "tied_with"), 131);
    cJSON_Delete(o);
}

Test(cli_io, predict_rank_counts_only_what_is_faster_beyond_a_tie, T_TIMEOUT)
{
    static t_cli_t r;
    /* A workload with a spread of times: the rank and the tie count must agree with the ranked list
     * (rank = 1 + the points faster by more than DUET_RANK_TIE_REL, ties = the others within it). */
    t_cli_run(&r, NULL, "predict", "--gemm", "4096x4096x4096", "--collective", "all_gather", "--comm", "2048x4096",
              "--splits", "step:4", "--top", "0", "--json", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cJSON *o = cJSON_Parse(r.out);
    cr_assert_not_null(o);
    const cJSON *d = cJSON_GetObjectItem(o, "static_default"), *e;
    double dms = t_num(d, "pred_us");
    int faster = 0, tied = 0;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(o, "ranked"))
    {
        double ms = t_num(e, "pred_us");
        int same_cfg =
            strcmp(cJSON_GetObjectItem(e, "mode")->valuestring, "fused") == 0 &&
            t_num(e, "gemm_wgs") == t_num(d, "gemm_wgs") && t_num(e, "num_wgs") == t_num(d, "num_wgs") &&
            strcmp(cJSON_GetObjectItem(e, "tile")->valuestring, cJSON_GetObjectItem(d, "tile")->valuestring) == 0 &&
            t_num(e, "split_k") == 1;
        if (fabs(ms - dms) <= DUET_RANK_TIE_REL * fmax(fabs(ms), fabs(dms)))
            tied += !same_cfg;
        else
            faster += ms < dms;
    }
    cr_assert_eq(t_num(d, "rank"), faster + 1);
    cr_assert_eq(t_num(d, "tied_with"), tied);
    cJSON_Delete(o);
    /* The text says the same. */
    t_cli_run(&r, NULL, "predict", "--gemm", "4096x4096x4096", "--collective", "all_gather", "--comm", "2048x4096",
              "--splits", "step:4", NULL);
    char want[128];
    snprintf(want, sizeof(want), " us, rank %d of ", faster + 1);
    const char *l = last_line(r.out);
    cr_assert(strstr(l, want) != NULL, "%s", l);
    cr_assert((faster > 0) == (strstr(l, "% faster (by predicted makespan alone)\n") != NULL), "%s", l);
    cr_assert((tied > 0) == (strstr(l, "tied with") != NULL), "%s", l);
}
