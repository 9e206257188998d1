/*
 * Bad input files as every command meets them: a file over the 512 MiB that duet reads, and a
 * folder where a file belongs, exit 2 with one line wherever they are given (they exited 1 in
 * some commands and 2 in others), and an oversize file is refused by its size, not read.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/resource.h>

#include "../cli_run.h"
#include "../test_util.h"

/* A sparse file of 600 MiB: its size is there at once, its bytes would take seconds to read. */
static void sparse(char *path, size_t n)
{
    t_tmp_path(path, n, "big.json");
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert(fd >= 0 && ftruncate(fd, (off_t)600 << 20) == 0);
    close(fd);
}

Test(cli_oversize, an_oversize_file_exits_2_in_every_command_that_reads_one, .timeout = 60)
{
    static t_cli_t r;
    char big[128], svg[128];
    sparse(big, sizeof(big));
    t_tmp_path(svg, sizeof(svg), "out.svg");
    /* The commands run with at most 256 MiB of address space beyond their start: a reader that
     * read the 512 MiB before refusing would fail for memory instead (exit 1, another message). */
    struct rlimit lim = {(rlim_t)768 << 20, (rlim_t)768 << 20};
    cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
    t_cli_run(&r, NULL, "plan", "--hw", big, "--gemm", "64x64x64", NULL);
    t_cli_expect_error(&r, 2, "plan", "629145600 bytes, larger than the 512 MiB duet reads");
    t_cli_run(&r, NULL, "tune", "--list", "--db", big, NULL);
    t_cli_expect_error(&r, 2, "tune", "629145600 bytes, larger than the 512 MiB duet reads");
    t_cli_run(&r, NULL, "bench-plot", big, "--svg", svg, NULL);
    t_cli_expect_error(&r, 2, "bench-plot", "629145600 bytes, larger than the 512 MiB duet reads");
    t_cli_run(&r, NULL, "validate", "--corpus", big, "--hw", "h200", NULL);
    t_cli_expect_error(&r, 2, "validate", "629145600 bytes");
    t_cli_run(&r, NULL, "tune", "--evaluate", "--corpus", big, "--hw", "h200", NULL);
    t_cli_expect_error(&r, 2, "tune", "629145600 bytes");
    cr_assert_eq(access(svg, F_OK), -1, "nothing written");
}

Test(cli_oversize, a_folder_as_an_input_file_exits_2_in_every_command, T_TIMEOUT)
{
    static t_cli_t r;
    char dir[128], svg[128];
    t_tmp_path(dir, sizeof(dir), "a-folder");
    cr_assert_eq(mkdir(dir, 0755), 0);
    t_tmp_path(svg, sizeof(svg), "out.svg");
    t_cli_run(&r, NULL, "plan", "--hw", dir, "--gemm", "64x64x64", NULL);
    t_cli_expect_error(&r, 2, "plan", "is a folder, not a file");
    t_cli_run(&r, NULL, "bench-plot", dir, "--svg", svg, NULL);
    t_cli_expect_error(&r, 2, "bench-plot", "is a folder, not a file");
    t_cli_run(&r, NULL, "validate", "--corpus", dir, "--hw", "h200", NULL);
    t_cli_expect_error(&r, 2, "validate", "is a folder, not a file");
    t_cli_run(&r, NULL, "tune", "--list", "--db", dir, NULL);
    t_cli_expect_error(&r, 2, "tune", "not a regular file");
}
