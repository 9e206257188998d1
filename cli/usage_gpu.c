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
    fprintf(f,
            "usage: mpirun -np W duet bench [--shapes FILE] [--collective LIST] [--dtype fp16|bf16] [--repeats N]\n"
            "                  [--warmup N] [--warmup-ms MS] [--top K] [--no-grid] [--gemm-only] [--json FILE]\n"
            "                  [--svg FILE] [--hw PROFILE]\n"
            "\n"
            "Times duet against the vendor libraries (cuBLASLt + NCCL on NVIDIA, hipBLASLt + RCCL on AMD) in the same\n"
            "run, one rank per GPU. Default workloads: the reference design's 15 GEMM shapes x all five collectives\n"
            "at this world size. Prints a table, writes every figure as JSON and a picture of the makespans.\n"
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
            "  --json FILE        every figure (default bench-<arch>-w<W>.json)\n"
            "  --svg FILE         makespans relative to the bound, vendor best vs duet best\n"
            "  --hw PROFILE       profile for the simulator's picks (default: by architecture)\n"
            "\n"
            "example:\n"
            "  NCCL_NVLS_ENABLE=0 mpirun -np 2 build-gpu/duet bench --repeats 20 --json bench/results/h200-w2.json \\\n"
            "      --svg bench/results/h200-w2.svg\n");
}

void cli_usage_collect(FILE *f)
{
    fprintf(
        f, "usage: mpirun -np W duet calibrate collect -o FILE [--shapes FILE] [--collective LIST] [--dtype D]\n"
           "                                      [--repeats N] [--rounds R] [--warmup N] [--hw PROFILE]\n"
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
           "Resumable: points already in FILE are skipped, so re-running after an interruption goes on where it\n"
           "stopped. A point that fails is recorded as failed with its error and not run in later rounds. FILE is\n"
           "rewritten atomically after every shape. Progress (point-rounds) and ETA on stderr.\n"
           "\n"
           "example:\n"
           "  NCCL_NVLS_ENABLE=0 mpirun -np 2 build-gpu/duet calibrate collect -o tuning_data/h200_world2.json\n");
}

void cli_usage_run(FILE *f)
{
    fprintf(f,
            "usage: mpirun -np W duet run [workload] [configuration] [--repeats N] [--warmup N] [--warmup-ms MS]\n"
            "                             [--trace FILE] [--svg FILE] [--policy fluid|frozen]\n"
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
            "\n"
            "example:\n"
            "  mpirun -np 2 build-gpu/duet run --collective all_gather --gemm 8192x8192x8192 --comm 4096x8192 \\\n"
            "      --gemm-wgs 112 --trace measured.json --svg timelines.svg\n"
            "  mpirun -np 1 build-gpu/duet run --gemm 8192x8192x8192 --mode vendor --gemm-wgs 132 --comm-wgs 0\n",
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
