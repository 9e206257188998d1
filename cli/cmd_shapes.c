/*
 * duet shapes: draw a random shape set (model/random.c) and write it as a shape file that every
 * command taking --shapes reads (calibrate collect, bench, validate's test sets). The file's
 * header names the seed and the generator, so the set can be drawn again and cited by its seed.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/cli.h"

static void cmd_shapes_usage(FILE *f)
{
    fprintf(f, "usage: duet shapes --random N --seed S [--world W] [--max-dim D] [--json|--csv] [-o FILE]\n"
               "\n"
               "Draws N random workloads (GEMM and collective) and writes them as a shape file (one per line:\n"
               "MxNxK McxNc collective dtype; the header names the seed). The generator (model/random.c): M, N, K\n"
               "log-uniform in [256, 16384] (--max-dim lowers the top), a third of the extents not multiples of 64,\n"
               "15 %% of the shapes with M <= 1024 and 15 %% with K <= 1024; fp16 and bf16; every collective; the\n"
               "collective's per-rank tensor log-uniform from 256 KiB to 256 MiB, Mc a multiple of W. The same N, S,\n"
               "W and D give the same file on every machine.\n"
               "\n"
               "  --random N         workloads to draw (1 to 100000)\n"
               "  --seed S           the generator's seed (a non-negative integer)\n"
               "  --world W          ranks the set is for (default 1)\n"
               "  --max-dim D        largest M, N, K (default 16384; at least 1024)\n"
               "  --json             the workloads as JSON (schema duet-shapes/1) instead of a shape file\n"
               "  --csv              the workloads as CSV, one per row (m, n, k, mc, nc, collective, dtype, world,\n"
               "                     comm_bytes)\n"
               "  -o, --output FILE  write the result (the shape file, --json or --csv) to FILE instead of standard\n"
               "                     output (atomically)\n"
               "  -h, --help         this text\n"
               "\n"
               "examples:\n"
               "  duet shapes --random 24 --seed 1 -o train.txt\n"
               "  duet shapes --random 24 --seed 1 --csv\n");
}

/*
 * The workloads as CSV rows and as the JSON document's "workloads" (the text form is the shape file,
 * written by model/random.c). JSON keeps the workload codec's members in its order
 * (model/workload_json.c: collective, dtype, m, n, k, mc, nc, world, root), then comm_bytes; CSV
 * leads with the sizes and has no root. Every column is data: there is no text table.
 */
#define SHAPES_COL(key, kind, fmt, flags)                                                                              \
    {                                                                                                                  \
        key, NULL, NULL, fmt, kind, 0, DUET__COL_DATA | (flags), NULL                                                  \
    }
static const duet__col_t cmd_shapes_cols[] = {
    SHAPES_COL("collective", DUET__CELL_STR, "%s", DUET__COL_NO_CSV),
    SHAPES_COL("dtype", DUET__CELL_STR, "%s", DUET__COL_NO_CSV),
    SHAPES_COL("m", DUET__CELL_INT, "%lld", 0),
    SHAPES_COL("n", DUET__CELL_INT, "%lld", 0),
    SHAPES_COL("k", DUET__CELL_INT, "%lld", 0),
    SHAPES_COL("mc", DUET__CELL_INT, "%lld", 0),
    SHAPES_COL("nc", DUET__CELL_INT, "%lld", 0),
    SHAPES_COL("collective", DUET__CELL_STR, "%s", DUET__COL_NO_JSON),
    SHAPES_COL("dtype", DUET__CELL_STR, "%s", DUET__COL_NO_JSON),
    SHAPES_COL("world", DUET__CELL_INT, "%lld", 0),
    SHAPES_COL("root", DUET__CELL_INT, "%lld", DUET__COL_NO_CSV),
    /* Bytes of the per-rank tensor, a whole number. */
    {"comm_bytes", NULL, NULL, "%.0f", DUET__CELL_NUM, 0, DUET__COL_DATA, "%.0f"},
};

static void cmd_shapes_rows(duet__table_t *t, const duet_workloads_t *w)
{
    duet__table_init(t, cmd_shapes_cols, (int)(sizeof(cmd_shapes_cols) / sizeof(cmd_shapes_cols[0])));
    for (size_t i = 0; i < w->n; i++) {
        const duet_workload_t *x = &w->w[i];
        duet__table_str(t, duet_collective_name(x->coll));
        duet__table_str(t, duet_dtype_name(x->dtype));
        duet__table_int(t, x->m);
        duet__table_int(t, x->n);
        duet__table_int(t, x->k);
        duet__table_int(t, x->mc);
        duet__table_int(t, x->nc);
        duet__table_str(t, duet_collective_name(x->coll));
        duet__table_str(t, duet_dtype_name(x->dtype));
        duet__table_int(t, x->world);
        duet__table_int(t, x->root);
        duet__table_num(t, duet_coll_bytes(x));
    }
}

/* The draw as JSON or CSV on out. @return an exit code. */
static int cmd_shapes_table(cli_out_t *out, const duet_workloads_t *w, int json, const duet_random_params_t *p,
                            const char *desc)
{
    duet__table_t t;
    cmd_shapes_rows(&t, w);
    if (!json)
        return cli_out_table(out, "shapes", &t, 0, 1, NULL, NULL);
    cJSON *o = cJSON_CreateObject();
    char seed[32];
    snprintf(seed, sizeof(seed), "%llu", (unsigned long long)p->seed);
    cJSON_AddStringToObject(o, "schema", "duet-shapes/1");
    cJSON_AddStringToObject(o, "description", desc);
    cJSON_AddStringToObject(o, "seed", seed); /* a string: a double does not hold every 64-bit seed */
    cJSON_AddNumberToObject(o, "world", p->world);
    cJSON_AddNumberToObject(o, "max_dim", (double)p->max_dim);
    if (!duet__table_cjson_take(&t, o, "workloads")) {
        cJSON_Delete(o);
        o = NULL; /* out of memory: cli_out_json says so */
    }
    return cli_out_json(out, "shapes", o);
}

enum { O_RANDOM = 300, O_SEED, O_WORLD, O_MAXDIM };

/* duet shapes' flags. */
typedef struct cmd_shapes_opts {
    long long n, seed, world, max_dim;
    cli_outopt_t oo;
    int help;
} cmd_shapes_opts_t;

static int cmd_shapes_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cmd_shapes_opts_t *o = arg0;
    switch (opt) {
    case O_RANDOM:
        if (cli_parse_i64(arg, 1, 100000, &o->n) != 0)
            return cli_usage_error(cmd, "--random: '%s' is not an integer in [1, 100000]", duet__q(arg));
        return CLI_EXIT_OK;
    case O_SEED:
        if (cli_parse_i64(arg, 0, INT64_MAX, &o->seed) != 0)
            return cli_usage_error(cmd, "--seed: '%s' is not a non-negative integer", duet__q(arg));
        return CLI_EXIT_OK;
    case O_WORLD:
        if (cli_parse_i64(arg, 1, 4096, &o->world) != 0)
            return cli_usage_error(cmd, "--world: '%s' is not an integer in [1, 4096]", duet__q(arg));
        return CLI_EXIT_OK;
    case O_MAXDIM:
        if (cli_parse_i64(arg, 1024, 1 << 24, &o->max_dim) != 0)
            return cli_usage_error(cmd, "--max-dim: '%s' is not an integer in [1024, 2^24]", duet__q(arg));
        return CLI_EXIT_OK;
    default:
        return cli_out_option(&o->oo, opt, arg) ? CLI_EXIT_OK : CLI_OPT_UNKNOWN;
    }
}

/* Parse argv. @return an exit code (CLI_EXIT_OK to go on). */
static int cmd_shapes_parse(cmd_shapes_opts_t *o, const char *cmd, int argc, char **argv)
{
    static const struct option longopts[] = {{"random", required_argument, NULL, O_RANDOM},
                                             {"seed", required_argument, NULL, O_SEED},
                                             {"world", required_argument, NULL, O_WORLD},
                                             {"max-dim", required_argument, NULL, O_MAXDIM},
                                             CLI_OUTPUT_LONGOPTS,
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int rc = cli_getopt(cmd, argc, argv, longopts, cmd_shapes_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help || (rc = cli_no_operands(cmd, argc, argv)) != CLI_EXIT_OK)
        return rc;
    if (o->n == 0 || o->seed < 0)
        return cli_usage_error(cmd, "give --random N and --seed S");
    return cli_out_validate(cmd, &o->oo);
}

/* The draw as a shape file, its header naming how to draw it again. @return an exit code. */
static int cmd_shapes_file(const cmd_shapes_opts_t *o, const char *cmd, const duet_workloads_t *w, const char *desc)
{
    char dim[48] = "", header[512];
    if (o->max_dim != 16384)
        snprintf(dim, sizeof(dim), " --max-dim %lld", o->max_dim);
    snprintf(header, sizeof(header),
             "%s\n"
             "drawn by: duet shapes --random %lld --seed %lld --world %lld%s (model/random.c, duet %s)",
             desc, o->n, o->seed, o->world, dim, DUET_VERSION);
    /* The shape file (model/random.c's writer, atomic; "-" is standard output). */
    duet_status_t st = duet_workloads_save(o->oo.path != NULL ? o->oo.path : "-", w, header);
    return st < 0 ? cli_fail(cmd, st) : CLI_EXIT_OK;
}

int cmd_shapes(int argc, char **argv)
{
    const char *cmd = "shapes";
    cmd_shapes_opts_t o = {0, -1, 1, 16384, {0, 0, NULL}, 0};
    int rc = cmd_shapes_parse(&o, cmd, argc, argv);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cmd_shapes_usage(stdout);
        return rc;
    }
    duet_random_params_t p = duet_random_default_params();
    p.seed = (uint64_t)o.seed;
    p.world = (int32_t)o.world;
    p.max_dim = o.max_dim;
    duet_workloads_t w = {NULL, 0};
    duet_status_t st = duet_workloads_random(&p, (size_t)o.n, &w);
    if (st < 0)
        return cli_fail(cmd, st);
    char desc[256];
    duet_random_describe(&p, (size_t)o.n, desc, sizeof(desc));
    if (o.oo.json || o.oo.csv) {
        cli_out_t out;
        if ((rc = cli_out_open(&out, cmd, o.oo.path)) == CLI_EXIT_OK)
            rc = cli_out_close(&out, cmd, cmd_shapes_table(&out, &w, o.oo.json, &p, desc));
    } else {
        rc = cmd_shapes_file(&o, cmd, &w, desc);
    }
    duet_workloads_free(&w);
    return rc;
}
