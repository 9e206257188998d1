/*
 * duet: the command-line front end. `duet --help` lists the subcommands; each has --help.
 */
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "cli/cli.h"
#ifdef DUET_GPU_BUILD
#include "cli/gpu/gpu.h"
#endif

/* Commands that need the GPU build: in the CPU build they say so and exit 2. */
#ifdef DUET_GPU_BUILD
#define cmd_bench_gpu cmd_bench
#define cmd_run_gpu cmd_run
#else
static int cmd_bench_gpu(int argc, char **argv)
{
    return cli_gpu_only("bench", argc, argv, cli_usage_bench);
}
static int cmd_run_gpu(int argc, char **argv)
{
    return cli_gpu_only("run", argc, argv, cli_usage_run);
}
#endif

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command_t;

static const cli_command_t cli_commands[] = {
    {"hw", cmd_hw, "list, show and convert hardware profiles"},
    {"plan", cmd_plan, "tile counts, bytes per peer and FLOPs of one workload and configuration"},
    {"predict", cmd_predict, "rank GEMM/comm splits and tiles by simulated makespan (no GPU)"},
    {"simulate", cmd_simulate, "simulate one configuration; write its timeline (JSON, SVG)"},
    {"bench-sim", cmd_bench_sim, "time the simulator on the reference sweeps (events per second)"},
    {"calibrate", cmd_calibrate, "fit a profile to measured corpora (collect: GPU build) and report its accuracy"},
    {"validate", cmd_validate, "accuracy of a profile on measured corpora, beside the reference design's rules"},
    {"tune", cmd_tune, "tuning database (--list, --clear) and the tuner replayed on corpora (--evaluate)"},
    {"derive-candidates", cmd_derive_candidates, "greedy candidate set and coverage curves from corpora"},
    {"shapes", cmd_shapes, "draw a random shape set (seeded) and write it as a shape file"},
    {"bench-plot", cmd_bench_plot, "draw a bench's picture again from its JSON file (no GPU)"},
    {"bench", cmd_bench_gpu, "duet vs cuBLASLt + NCCL side by side on the GPUs (mpirun; GPU build)"},
    {"run", cmd_run_gpu, "run one operation on the GPUs, timed, with its measured timeline (mpirun; GPU build)"},
};
#define CLI_NCOMMANDS (sizeof(cli_commands) / sizeof(cli_commands[0]))

static void cli_main_usage(FILE *f)
{
    fprintf(f, "usage: duet <command> [options]\n"
               "\n"
               "duet predicts, tunes and runs an independent GEMM together with a collective on the GPUs of one\n"
               "node, dividing the GPU's SMs (CUs) between the two. It simulates the split without a GPU.\n"
               "\n"
               "commands:\n");
    for (size_t i = 0; i < CLI_NCOMMANDS; i++)
        fprintf(f, "  %-18s %s\n", cli_commands[i].name, cli_commands[i].summary);
    fprintf(f, "\n"
               "  duet <command> --help   shows a command's options and examples (also: duet help <command>)\n"
               "  duet --version          prints the version\n"
               "\n"
               "examples:\n"
               "  duet hw list\n"
               "  duet plan --collective all_gather --gemm 8192x8192x8192 --comm 2048x4096 --world 2\n"
               "  duet predict --hw h200 --collective all_reduce --gemm 4096x4096x4096 --comm 2048x8192 --top 5\n"
               "\n"
               "exit status: 0 success, 1 the operation failed, 2 bad usage or bad input.\n"
               "errors are printed on stderr as 'duet: <what>: <why>'.\n");
}

/*
 * duet help TOPIC...: the help of a command, e.g. 'duet help predict' or 'duet help calibrate collect',
 * the same text as 'duet TOPIC... --help' (the help of every command, GPU commands included, in every
 * build: the installed CLI's manual).
 */
static int cli_help_topic(int n, char **topic)
{
    if (n > 2) {
        cli_error("help", "give one command, e.g. 'duet help predict' or 'duet help calibrate collect'");
        return CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < CLI_NCOMMANDS; i++)
        if (strcmp(topic[0], cli_commands[i].name) == 0) {
            char *args[4] = {topic[0], n == 2 ? topic[1] : "--help", n == 2 ? "--help" : NULL, NULL};
            return cli_commands[i].run(n + 1, args);
        }
    cli_error("help", "unknown command '%s' (see 'duet --help')", duet__q(topic[0]));
    return CLI_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cli_main_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || (strcmp(cmd, "help") == 0 && argc == 2)) {
        cli_main_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0)
        return cli_help_topic(argc - 2, argv + 2);
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("duet %s (GEMM tiles %s, profile schema %s)\n", duet_version(), DUET_TILE_LIST_VERSION, DUET_HW_SCHEMA);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < CLI_NCOMMANDS; i++)
        if (strcmp(cmd, cli_commands[i].name) == 0)
            return cli_commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "duet: unknown command '%s' (see 'duet --help')\n", duet__q(cmd));
    return CLI_EXIT_USAGE;
}
