/*
 * duet: the usage texts of the GPU commands (bench, run, calibrate collect), compiled into every
 * build: the GPU build prints them for --help beside the commands, the CPU build prints them with a
 * line saying the command needs the GPU build, so the options can be read on a machine without GPUs.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

void cli_usage_bench(FILE *f)
{
    fprintf(
        f,
        "usage: mpirun -np W duet bench [--shapes FILE] [--collective LIST] [--dtype fp16|bf16] [--repeats N]\n"
        "                  [--warmup N] [--warmup-ms MS] [--top K] [--no-grid] [--gemm-only] [--json|--csv]\n"
        "                  [-o FILE] [--svg FILE] [--hw PROFILE]\n"
        "       mpirun -np 1 duet bench --gemm-only --random N [--seed S] [--min-dim D] [--max-dim D]\n"
        "                  [--dtype fp16|bf16|both] [--sm-budgets LIST] [--repeats N] [--warmup N] [--warmup-ms MS]\n"
        "                  [--json|--csv] [-o FILE]\n"
        "\n"
        "Times duet against the vendor libraries (cuBLASLt + NCCL on NVIDIA, hipBLASLt + RCCL on AMD) in the same\n"
        "run, one rank per GPU. Default workloads: the reference design's 15 GEMM shapes x all five collectives\n"
        "at this world size. Prints a table (times in ms), or every figure as JSON or the table as CSV (times in\n"
        "us), and draws a picture of the makespans.\n"
        "\n"
        "options:\n"
        "  --shapes FILE      workloads from a shape file ('MxNxK McxNc COLL[,COLL] [dtype]' per line)\n"
        "  --collective LIST  restrict the default set to these collectives (comma-separated)\n"
        "  --dtype D          fp16 (default) or bf16\n"
        "  --repeats N        timed runs per figure (default 20), after --warmup N (default 5)\n"
        "  --warmup-ms MS     then untimed runs until MS ms of them have run (default 0): every figure then\n"
        "                     comes from the clock the board's power limit settles at, as in a long job, not\n"
        "                     from the first 0.1-0.2 s at boost clock (on H200, 8192^3 takes 1.5 ms at boost,\n"
        "                     1.7 ms settled); 300 is enough there, and adds 0.3 s per figure\n"
        "  --top K            the simulator's K best configurations per mode join the sweep (default 4)\n"
        "  --no-grid          sweep only the simulator's picks, not the coarse grid (fractions x tiles, each also\n"
        "                     with K in two parts where the C tiles leave SMs idle)\n"
        "  --gemm-only        only the GEMMs of the workloads (each shape once): the vendor GEMM against duet's\n"
        "                     GEMM at every tile and K split worth trying; runs on one GPU (mpirun -np 1)\n"
        "  --json             every figure as JSON (schema duet-bench/2; --random: duet-bench-gemm-random/2;\n"
        "                     times in us)\n"
        "  --csv              the table as CSV, one row per workload (--random: per shape, dtype and budget;\n"
        "                     times in us)\n"
        "  -o, --output FILE  write the result (text, --json or --csv) to FILE instead of standard output\n"
        "                     (atomically, when the run ends); the table is still printed on standard output\n"
        "  --svg FILE         makespans relative to the bound, vendor best vs duet best\n"
        "  --hw PROFILE       profile for the simulator's picks (default: the GPU's built-in by its name, h100 on\n"
        "                     an H100, h200 on an H200; an unknown GPU gets its architecture's, with a note)\n"
        "\n"
        "random GEMMs (with --gemm-only):\n"
        "  --random N         N shapes drawn from --seed S (default 1; extents log-uniform in [--min-dim, --max-dim],\n"
        "                     default 512 and 16384, a third ragged, some with a small M or K); each is measured on\n"
        "                     every SM budget: the vendor GEMM planned for that many SMs (its SM-count target) "
        "against\n"
        "                     duet's GEMM on a grid of that many CTAs at every tile and K split worth trying, and at\n"
        "                     the model's pick (the tile and split the simulator predicts fastest). Ratios are vendor\n"
        "                     time / duet time (above 1: duet faster). --dtype both (the default here) measures every\n"
        "                     shape in fp16 and in bf16. --warmup-ms is spent once per shape and budget, before\n"
        "                     the vendor's first figure; the estimated GPU time is printed before the runs\n"
        "  --sm-budgets LIST  SM budgets, comma-separated: a share of the SMs in (0, 1] (1: all) or a count of SMs\n"
        "                     (default 1)\n"
        "\n"
        "examples:\n"
        "  NCCL_NVLS_ENABLE=0 mpirun -np 2 build-gpu/duet bench --repeats 20 --json -o bench/results/h200-w2.json \\\n"
        "      --svg bench/results/h200-w2.svg\n"
        "  mpirun -np 1 build-gpu/duet bench --gemm-only --random 48 --seed 1 --warmup-ms 300 --csv -o random.csv\n");
}

void cli_usage_collect(FILE *f)
{
    fprintf(
        f,
        "usage: mpirun -np W duet calibrate collect -o FILE [--shapes FILE | --random N --seed S] [--collective LIST]\n"
        "                                      [--dtype D] [--repeats N] [--rounds R] [--warmup N] [--warmup-ms MS]\n"
        "                                      [--grid reference|w1|copy] [--order-seed S] [--hw PROFILE]\n"
        "\n"
        "Measures a calibration corpus on this node's GPUs, one rank per GPU. Default shape set: the reference\n"
        "design's 15 GEMM shapes x all five collectives. Per shape: fused mode at gemm_wgs fractions {0.55, 0.65,\n"
        "0.72, 0.75, 0.78, 0.84, 0.88, 0.92, 0.96, 1.0} of the SMs x the tiles 256x256, 128x256, 256x128, 128x128,\n"
        "256x64 (BK 64); concurrent mode at comm_wgs {4, 8, 16, 24, 32, 48}; the GEMM alone per tile; the\n"
        "collective alone on 8, 16, 32, 66 and 132 CTAs; and for K in 2 and in 4 parts, at each tile where the\n"
        "split is worth trying (C tiles x (parts - 1) < 2 x SMs), the GEMM alone and fused at 0.84 and 1.0.\n"
        "\n"
        "Each point: --warmup untimed runs (default 3; one at each later visit), then its timed runs in R\n"
        "interleaved rounds (--rounds, default 3): each round visits every point of the shape once, in an order\n"
        "shuffled per round, and takes ceil(N/R) timed runs of it (N = --repeats, default 8; 3 x 3 = 9 runs by\n"
        "default). The row holds the median, min and max of all of a point's runs, each the slowest rank's, with a "
        "barrier before each.\n"
        "Why rounds: the GPU's clocks drift over tenths of a second (power, temperature), so the runs of a\n"
        "point taken one after the other share one moment's clock, and configurations the model predicts\n"
        "alike measured 15-25 %% apart in no order. Spread over the shape's whole measurement, drift hits\n"
        "every point alike. --rounds 1 measures one point after the other, as before.\n"
        "\n"
        "--grid w1: the one-GPU corpus (run it at W = 1): fused at gemm_wgs fractions {0.5, 0.75, 0.88, 1.0} x the\n"
        "five tiles; concurrent and vendor mode with 8, 16 and 32 CTAs on the collective; the GEMM alone at a\n"
        "quarter, half, three quarters and all of the SMs for every tile (and K in 2 and 4 parts where worth\n"
        "trying); the vendor GEMM alone at those SM targets; the collective alone on 8 to 132 CTAs; for\n"
        "all_gather, all_to_all and broadcast copy mode on 1 and 2 copy streams (2 at W >= 2), beside the GEMM\n"
        "and alone.\n"
        "--grid copy: copy mode's constants only (at W = 1 and 2): the GEMM alone on every SM for every tile,\n"
        "and the copy rows of --grid w1; with --collective all_gather,all_to_all,broadcast every workload has\n"
        "them.\n"
        "--random N --seed S: N workloads drawn as 'duet shapes --random N --seed S' draws them, of the\n"
        "collectives --collective names (default all five).\n"
        "--order-seed S: another shuffled order in every round (a second sweep of the same grid: the spread of\n"
        "two sweeps is the noise band of duet validate's pick metric). --warmup-ms MS: untimed runs of each\n"
        "workload's first point until MS ms have run, so that its points run at the settled clock.\n"
        "The file records the device, the seed, the duet and kernel commits, the grid, the order seed and the\n"
        "warm-up (\"provenance\"), and the expected duration is printed before the measurement starts. --hw:\n"
        "the profile of that estimate (default: the GPU's built-in by its name, as for bench).\n"
        "\n"
        "FILE is a duet-corpus/2 file (times in us; docs/calibration.md). Resumable: points already in FILE are\n"
        "skipped, so re-running after an interruption goes on where it stopped (a duet-corpus/1 file, in ms,\n"
        "is rewritten as /2). A point that fails is recorded as failed with its error and not run in later\n"
        "rounds. FILE is rewritten atomically after every shape. Progress (point-rounds) and ETA on stderr.\n"
        "\n"
        "example:\n"
        "  NCCL_NVLS_ENABLE=0 mpirun -np 2 build-gpu/duet calibrate collect -o tuning_data/h200_world2.json\n"
        "  mpirun -np 1 build-gpu/duet calibrate collect --grid copy --collective all_gather,all_to_all,broadcast \\\n"
        "      --random 48 --seed 1 -o h200_copy_world1.json\n");
}

void cli_usage_run(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np W duet run [workload] [configuration] [--repeats N] [--warmup N] [--warmup-ms MS]\n"
            "                             [--trace FILE] [--svg FILE] [--policy fluid|frozen] [--json] [-o FILE]\n"
            "\n"
            "Runs one operation on this node's GPUs, one rank per GPU: prints its median time (slowest rank) next\n"
            "to the simulator's prediction on the device's profile. --trace records one more run tile by tile\n"
            "(CTA, SM, queue, tile id, start, end from the device clock) in the simulator's timeline format;\n"
            "--svg draws the measured timeline above the predicted one. --mode vendor runs the GEMM in the vendor\n"
            "library (cuBLASLt, hipBLASLt) planned for --gemm-wgs SMs beside duet's comm kernel on --comm-wgs CTAs\n"
            "(no timeline: the vendor's tiles are not recorded).\n"
            "\n"
            "%s\n%s\n"
            "other:\n"
            "  --repeats N           timed runs (default 20) after --warmup N (default 5)\n"
            "  --warmup-ms MS        then untimed runs until MS ms of them have run (default 0): the time at the\n"
            "                        clock the board's power limit settles at, not at boost (see duet bench --help)\n"
            "  --trace FILE          the measured timeline of rank 0 (JSON)\n"
            "  --svg FILE            measured and predicted timelines, one above the other\n"
            "  --json                the result as JSON (schema duet-run/1, times in us)\n"
            "  -o, --output FILE     write the result (text or --json) to FILE instead of standard output\n"
            "\n"
            "examples:\n"
            "  mpirun -np 2 build-gpu/duet run --collective all_gather --gemm 8192x8192x8192 --comm 4096x8192 \\\n"
            "      --gemm-wgs 112 --trace measured.json --svg timelines.svg\n"
            "  mpirun -np 1 build-gpu/duet run --gemm 8192x8192x8192 --mode vendor --gemm-wgs 132 --comm-wgs 0\n"
            "  mpirun -np 2 build-gpu/duet run --collective all_reduce --gemm 4096x4096x4096 --comm 2048x8192 --json\n",
            cli_workload_help, cli_config_help);
}

void cli_gpu_build_note(FILE *f, const char *what, const char *cmd)
{
#ifndef DUET_GPU_BUILD
    fprintf(f,
            "\n%s needs a GPU build (make gpu), run as 'mpirun -np W build-gpu/duet %s ...'; this duet has no GPU "
            "backend.\n",
            what, cmd);
#else
    (void)f;
    (void)what;
    (void)cmd;
#endif
}

int cli_gpu_only(const char *cmd, int argc, char **argv, void (*usage)(FILE *f))
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            char what[64];
            snprintf(what, sizeof(what), "duet %s", cmd);
            cli_gpu_build_note(stdout, what, cmd);
            return CLI_EXIT_OK;
        }
    cli_error(cmd,
              "needs a GPU build (make gpu), run as 'mpirun -np W build-gpu/duet %s ...'; this duet has no GPU backend "
              "('duet %s --help' shows its options)",
              cmd, cmd);
    return CLI_EXIT_USAGE;
}
