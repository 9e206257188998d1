/*
 * Fuzz the CLI's option parsing: the input is an argument vector, one argument per line. It goes
 * through getopt_long with the workload and configuration options every subcommand shares, then
 * cli_common_option(), cli_common_workload() and cli_common_config() (cli/common.c), as `duet plan`
 * parses them, and ends where the plan's queues are built: no heavy work, no files written.
 * --hw takes a built-in profile only here (a path would read a file; "-" standard input).
 */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FZ_MAX_ARGS 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The options of cli/common.c (cmd_plan's own --rank and --help are not what is under test). */
    static const struct option longopts[] = {
        CLI_WORKLOAD_LONGOPTS, CLI_CONFIG_LONGOPTS, {"json", no_argument, NULL, OPT_JSON}, {NULL, 0, NULL, 0}};
    char *text = fz_text(data, size), *argv[FZ_MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "plan";
    for (char *s = text, *nl; s != NULL && argc <= FZ_MAX_ARGS; s = nl ? nl + 1 : NULL) {
        nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        argv[argc++] = s;
    }
    argv[argc] = NULL;

    cli_common_t c;
    cli_common_init(&c);
    optind = 0; /* glibc: 0 re-initialises getopt completely, as a new process would */
    opterr = 0;
    int opt, bad = 0;
    while (!bad && (opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        if (opt == OPT_HW && duet_hw_builtin(optarg, &c.hw) != DUET_OK) {
            bad = 1;
            break;
        }
        int h = cli_common_option(&c, "plan", opt, optarg);
        if (h == 0)
            (void)cli_getopt_error("plan", argv, opt);
        bad = h <= 0;
    }
    int32_t mode = DUET_MODE_FUSED;
    if (c.mode_arg)
        (void)duet_mode_parse(c.mode_arg, &mode);
    if (!bad && cli_common_workload(&c, "plan") == CLI_EXIT_OK && cli_common_config(&c, "plan", mode) == CLI_EXIT_OK) {
        duet_plan_t p;
        FZ_ASSERT(duet_plan_build_queues(&c.wl, &c.cfg, duet_plan_critical_rank(&c.wl), &p) == DUET_OK);
    }
    free(text);
    return 0;
}
