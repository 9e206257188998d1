/*
 * duet shapes: draw a random shape set (model/random.c) and write it as a shape file that every
 * command taking --shapes reads (calibrate collect, bench, validate's test sets). The file's
 * header names the seed and the generator, so the set can be drawn again and cited by its seed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/cli.h"

static void cmd_shapes_usage(FILE *f)
{
    fprintf(f, "usage: duet shapes --random N --seed S [--world W] [--max-dim D] -o FILE\n"
               "\n"
               "Draws N random workloads (GEMM and collective) and writes them as a shape file (one per line:\n"
               "MxNxK McxNc collective dtype; the header names the seed). The generator (model/random.c): M, N, K\n"
               "log-uniform in [256, 16384] (--max-dim lowers the top), a third of the extents not multiples of 64,\n"
               "15 %% of the shapes with M <= 1024 and 15 %% with K <= 1024; fp16 and bf16; every collective; the\n"
               "collective's per-rank tensor log-uniform from 256 KiB to 256 MiB, Mc a multiple of W. The same N, S,\n"
               "W and D give the same file on every machine.\n"
               "\n"
               "  --random N     workloads to draw (1 to 100000)\n"
               "  --seed S       the generator's seed (a non-negative integer)\n"
               "  --world W      ranks the set is for (default 1)\n"
               "  --max-dim D    largest M, N, K (default 16384; at least 1024)\n"
               "  -o FILE        the shape file to write (written atomically)\n"
               "\n"
               "example:\n"
               "  duet shapes --random 24 --seed 1 -o train.txt\n");
}

int cmd_shapes(int argc, char **argv)
{
    enum { O_RANDOM = 300, O_SEED, O_WORLD, O_MAXDIM };
    static const struct option longopts[] = {{"random", required_argument, NULL, O_RANDOM},
                                             {"seed", required_argument, NULL, O_SEED},
                                             {"world", required_argument, NULL, O_WORLD},
                                             {"max-dim", required_argument, NULL, O_MAXDIM},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    const char *cmd = "shapes", *out = NULL;
    long long n = 0, seed = -1, world = 1, max_dim = 16384;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cmd_shapes_usage(stdout);
            return CLI_EXIT_OK;
        case 'o':
            out = optarg;
            break;
        case O_RANDOM:
            if (cli_parse_i64(optarg, 1, 100000, &n) != 0)
                return cli_usage_error(cmd, "--random: '%s' is not an integer in [1, 100000]", duet__q(optarg));
            break;
        case O_SEED:
            if (cli_parse_i64(optarg, 0, INT64_MAX, &seed) != 0)
                return cli_usage_error(cmd, "--seed: '%s' is not a non-negative integer", duet__q(optarg));
            break;
        case O_WORLD:
            if (cli_parse_i64(optarg, 1, 4096, &world) != 0)
                return cli_usage_error(cmd, "--world: '%s' is not an integer in [1, 4096]", duet__q(optarg));
            break;
        case O_MAXDIM:
            if (cli_parse_i64(optarg, 1024, 1 << 24, &max_dim) != 0)
                return cli_usage_error(cmd, "--max-dim: '%s' is not an integer in [1024, 2^24]", duet__q(optarg));
            break;
        default:
            return cli_getopt_error(cmd, argv, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", duet__q(argv[optind]));
    if (n == 0 || seed < 0 || out == NULL)
        return cli_usage_error(cmd, "give --random N, --seed S and -o FILE");
    duet_random_params_t p = duet_random_default_params();
    p.seed = (uint64_t)seed;
    p.world = (int32_t)world;
    p.max_dim = max_dim;
    duet_workloads_t w = {NULL, 0};
    duet_status_t st = duet_workloads_random(&p, (size_t)n, &w);
    if (st < 0)
        return cli_fail(cmd, st);
    char desc[256], header[512];
    duet_random_describe(&p, (size_t)n, desc, sizeof(desc));
    char dim[48] = "";
    if (max_dim != 16384)
        snprintf(dim, sizeof(dim), " --max-dim %lld", max_dim);
    snprintf(header, sizeof(header),
             "%s\n"
             "drawn by: duet shapes --random %lld --seed %lld --world %lld%s (model/random.c, duet %s)",
             desc, n, seed, world, dim, DUET_VERSION);
    st = duet_workloads_save(out, &w, header);
    duet_workloads_free(&w);
    if (st < 0)
        return cli_fail(cmd, st);
    printf("%s: %lld workloads (%s) written to %s\n", cmd, n, desc, out);
    return CLI_EXIT_OK;
}
