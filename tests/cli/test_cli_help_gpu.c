/*
 * The help of every command in the CPU build (the one these tests run): the GPU commands print their
 * usage and a line saying they need the GPU build, exit 0; run without --help they exit 2 with one
 * line. 'duet help TOPIC' prints the same text as 'duet TOPIC --help'. The version is the header's.
 */
#include <criterion/criterion.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "duet/version.h"

/* What the CPU build's note says; cli/usage_gpu.c writes it and the error line of a GPU command. */
#define NEEDS_GPU "needs a GPU build (make gpu)"

Test(cli_help_gpu, gpu_commands_show_usage_and_need_the_gpu_build, T_TIMEOUT)
{
    static t_cli_t r;
    static const struct {
        const char *args[2];
        const char *usage;
    } cmds[] = {{{"bench", NULL}, "usage: mpirun -np W duet bench "},
                {{"run", NULL}, "usage: mpirun -np W duet run "},
                {{"calibrate", "collect"}, "usage: mpirun -np W duet calibrate collect "}};
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        const char *a0 = cmds[i].args[0], *a1 = cmds[i].args[1];
        if (a1 == NULL)
            t_cli_run(&r, NULL, a0, "--help", NULL);
        else
            t_cli_run(&r, NULL, a0, a1, "--help", NULL);
        cr_assert_eq(r.code, 0, "%s --help: %s", a0, r.err);
        cr_assert(strncmp(r.out, cmds[i].usage, strlen(cmds[i].usage)) == 0, "%s", r.out);
        cr_assert(strstr(r.out, "options:") != NULL || strstr(r.out, "other:") != NULL || strstr(r.out, "-o FILE"),
                  "%s --help lists options", a0);
        cr_assert(strstr(r.out, NEEDS_GPU) != NULL, "%s", r.out);
        cr_assert_str_empty(r.err);
        /* -h anywhere after the command is help as well; the options are not parsed. */
        if (a1 == NULL)
            t_cli_run(&r, NULL, a0, "--repeats", "3", "-h", NULL);
        else
            t_cli_run(&r, NULL, a0, a1, "--repeats", "3", "-h", NULL);
        cr_assert_eq(r.code, 0);
        /* Without --help: one line, exit 2, nothing on stdout. */
        if (a1 == NULL)
            t_cli_run(&r, NULL, a0, "--repeats", "3", NULL);
        else
            t_cli_run(&r, NULL, a0, a1, "--repeats", "3", NULL);
        cr_assert_eq(r.code, 2);
        cr_assert_str_empty(r.out);
        cr_assert(strstr(r.err, NEEDS_GPU) != NULL && strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "%s", r.err);
    }
    /* tune works in the CPU build (--list, --evaluate); its help says which part needs the GPU build. */
    t_cli_run(&r, NULL, "tune", "--help", NULL);
    cr_assert_eq(r.code, 0);
    cr_assert(strstr(r.out, "Tuning a workload " NEEDS_GPU) != NULL, "%s", r.out);
}

Test(cli_help_gpu, help_topic_is_the_commands_help, T_TIMEOUT)
{
    static t_cli_t a, b;
    const char *topics[][2] = {
        {"predict", NULL}, {"bench", NULL}, {"calibrate", NULL}, {"calibrate", "collect"}, {"calibrate", "fit"}};
    for (size_t i = 0; i < sizeof(topics) / sizeof(topics[0]); i++) {
        if (topics[i][1] == NULL) {
            t_cli_run(&a, NULL, "help", topics[i][0], NULL);
            t_cli_run(&b, NULL, topics[i][0], "--help", NULL);
        } else {
            t_cli_run(&a, NULL, "help", topics[i][0], topics[i][1], NULL);
            t_cli_run(&b, NULL, topics[i][0], topics[i][1], "--help", NULL);
        }
        cr_assert_eq(a.code, 0, "help %s: %s", topics[i][0], a.err);
        cr_assert_eq(b.code, 0);
        cr_assert(strstr(a.out, "usage:") != NULL);
        cr_assert_str_eq(a.out, b.out, "help %s %s", topics[i][0], topics[i][1] ? topics[i][1] : "");
    }
    t_cli_run(&a, NULL, "help", NULL);
    cr_assert_eq(a.code, 0);
    cr_assert(strstr(a.out, "commands:") != NULL);
    t_cli_run(&a, NULL, "help", "fly", NULL);
    t_cli_expect_error(&a, 2, "help", "unknown command 'fly'");
    t_cli_run(&a, NULL, "help", "calibrate", "collect", "now", NULL);
    cr_assert_eq(a.code, 2);
}

Test(cli_help_gpu, version_is_the_headers, T_TIMEOUT)
{
    static t_cli_t r;
    char want[64];
    snprintf(want, sizeof(want), "duet %d.%d.%d ", DUET_VERSION_MAJOR, DUET_VERSION_MINOR, DUET_VERSION_PATCH);
    cr_assert_str_eq(duet_version(), DUET_VERSION);
    cr_assert(strncmp(DUET_VERSION, want + 5, strlen(DUET_VERSION)) == 0);
    cr_assert_eq(DUET_VERSION_NUMBER, DUET_VERSION_MAJOR * 10000 + DUET_VERSION_MINOR * 100 + DUET_VERSION_PATCH);
    t_cli_run(&r, NULL, "--version", NULL);
    cr_assert_eq(r.code, 0);
    cr_assert(strncmp(r.out, want, strlen(want)) == 0, "'%s' starts with '%s'", r.out, want);
}
