/*
 * Option handling shared by the subcommands: workload and configuration flags, strict number
 * parsing, and error reporting in one format ("duet: <what>: <why>").
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "model/internal.h"

const char cli_workload_help[] =
    "workload:\n"
    "  --hw NAME|FILE        hardware profile: h100, h200, mi300x, mi350x, a JSON file, or - for stdin\n"
    "                        (default h200; in the GPU build the GPU's own: h100 on an H100, h200 on an H200)\n"
    "  --gemm MxNxK          GEMM C[M,N] = A[M,K] * B[N,K]^T (omit for no GEMM)\n"
    "  --collective C        all_gather, all_reduce, reduce_scatter, all_to_all, broadcast (omit for none)\n"
    "  --comm McxNc          per-rank tensor of the collective, elements (this or --comm-bytes with --collective)\n"
    "  --comm-bytes S        the collective's size in bytes as nccl-tests counts it (64M = 64 MiB; all_gather:\n"
    "                        the gathered output, reduce_scatter: its input, others: the per-rank buffer);\n"
    "                        rows of 8192 elements where they divide\n"
    "  --world W             ranks (GPUs) taking part (default 2 with a collective, else 1)\n"
    "  --dtype fp16|bf16     element type (default bf16)\n"
    "  --root R              broadcast root (default 0)\n";

const char cli_config_help[] =
    "configuration (defaults: the reference design's static split for the profile):\n"
    "  --mode M              fused (one persistent kernel, two queues; default), concurrent (two kernels),\n"
    "                        vendor (the vendor GEMM planned for gemm_wgs SMs beside duet's comm kernel) or\n"
    "                        copy (the GEMM on every SM, the collective on the copy engines)\n"
    "  --num-wgs N           fused grid size in CTAs (default: one per SM)\n"
    "  --gemm-wgs N          fused: CTAs that start on GEMM (default 3/4 of num-wgs); concurrent: GEMM grid\n"
    "  --comm-wgs N          concurrent: comm grid (default SMs/8); fused: num-wgs - gemm-wgs; copy: copy\n"
    "                        streams (default 1)\n"
    "  --tile BMxBNxBK       GEMM tile (default 256x128x64)\n"
    "  --comm-tile CMxCN     comm tile, elements (default 256x64)\n"
    "  --group-m G           GEMM tile swizzle height in tile rows (default 8)\n"
    "  --split-k S           split each GEMM tile's K range in S parts that run as separate tiles and are\n"
    "                        summed in fp32 by the last one (1-16; default 1: more tiles than SMs rarely\n"
    "                        need it, a handful of long tiles on many SMs do)\n"
    "  --stream-k            stream-K: the full waves of C tiles run whole, the last wave's C tiles in K\n"
    "                        parts that fill the GEMM's CTAs (the plan picks the parts; needs split-k 1)\n";

/* Longest message text shown, bytes; what a user's arguments make longer is cut with a mark. */
#define CLI_MESSAGE_MAX 2048

/*
 * Print "duet: <cmd>: <message><tail>" as one line: the message is escaped whole (a newline in an
 * argument or a path becomes \n), so no input can split it, and cut with a mark when very long.
 */
static void cli__message(const char *cmd, const char *tail, const char *fmt, va_list ap)
{
    char small[512], line[CLI_MESSAGE_MAX + 64];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof(small), fmt, ap);
    char *msg = small;
    if (n >= (int)sizeof(small) && (msg = malloc((size_t)n + 1)) != NULL)
        vsnprintf(msg, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    duet__text_escape(line, sizeof(line), msg ? msg : small, CLI_MESSAGE_MAX);
    if (msg != small)
        free(msg);
    fprintf(stderr, "duet: %s: %s%s\n", cmd, line, tail);
}

void cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli__message(cmd, "", fmt, ap);
    va_end(ap);
}

int cli_fail(const char *cmd, duet_status_t st)
{
    const char *why = duet_last_error();
    cli_error(cmd, "%s", why[0] ? why : duet_status_string(st));
    switch (st) {
    case DUET_ERR_INVALID_ARG:
    case DUET_ERR_PARSE:
    case DUET_ERR_NOT_FOUND:
    case DUET_ERR_INFEASIBLE:
    case DUET_ERR_UNSUPPORTED:
        return CLI_EXIT_USAGE;
    default:
        return CLI_EXIT_FAILED;
    }
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    char tail[64];
    snprintf(tail, sizeof(tail), " (see 'duet %s --help')", cmd);
    va_list ap;
    va_start(ap, fmt);
    cli__message(cmd, tail, fmt, ap);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_getopt_error(const char *cmd, char **argv, int opt)
{
    (void)opt;
    /* getopt_long is silenced (opterr = 0); name the offending word ourselves. */
    const char *word = optind > 0 ? argv[optind - 1] : "?";
    if (optopt != 0 && optopt < 256)
        return cli_usage_error(cmd, "unknown option or missing value: -%c", optopt);
    return cli_usage_error(cmd, "unknown option or missing value: %s", duet__q(word));
}

int cli_parse_i64(const char *s, long long lo, long long hi, long long *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_double(const char *s, double lo, double hi, double *out)
{
    if (s == NULL || *s == '\0')
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_dims(const char *s, int n, long long *out)
{
    if (s == NULL)
        return -1;
    const char *p = s;
    for (int i = 0; i < n; i++) {
        if (*p < '0' || *p > '9')
            return -1; /* no signs, no spaces */
        char *end = NULL;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (errno != 0 || end == p || v < 0 || v > (1LL << 40))
            return -1;
        out[i] = v;
        p = end;
        if (i + 1 < n) {
            if (*p != 'x' && *p != 'X')
                return -1;
            p++;
        }
    }
    return *p == '\0' ? 0 : -1;
}

int cli_parse_collectives(const char *cmd, const char *arg, uint32_t *mask_p)
{
    char buf[256];
    uint32_t mask = 0;
    snprintf(buf, sizeof(buf), "%s", arg);
    for (char *s = NULL, *t = strtok_r(buf, ",", &s); t; t = strtok_r(NULL, ",", &s)) {
        int32_t c;
        if (duet_collective_parse(t, &c) < 0 || c == DUET_COLL_NONE)
            return cli_usage_error(cmd, "--collective: '%s' is not a collective", duet__q(t));
        mask |= 1u << c;
    }
    if (mask == 0)
        return cli_usage_error(cmd, "--collective: empty list");
    *mask_p = mask;
    return CLI_EXIT_OK;
}

void cli_json_add_config(cJSON *o, const duet_config_t *c)
{
    /* The configuration codec of the model layer; a member cJSON cannot allocate is left out, as
     * for the commands' other members. */
    (void)duet__config_to_cjson(o, c);
}

void cli_json_add_num(cJSON *o, const char *key, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(o, key, v);
    else
        cJSON_AddNullToObject(o, key);
}

const char *cli_bytes(double b, char *buf, size_t n)
{
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
    int u = 0;
    while (fabs(b) >= 1000.0 && u < 4) {
        b /= 1000.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, n, "%.0f B", b);
    else
        snprintf(buf, n, "%.3g %s", b, units[u]);
    return buf;
}

const char *cli_device_profile(const char *cmd, const char *device, const char *arch)
{
    duet_hw_match_t how;
    const char *name = duet_hw_builtin_for_device(device, arch, &how);
    duet_hw_t hw;
    if (how == DUET_HW_MATCH_EXACT || duet_hw_builtin(name, &hw) < 0)
        return name;
    if (how == DUET_HW_MATCH_FAMILY)
        fprintf(stderr,
                "duet: %s: note: no built-in profile of %s: using %s (%s), the nearest; give --hw, or fit a profile "
                "of this device (docs/calibration.md)\n",
                cmd, device, name, hw.device);
    else
        fprintf(stderr,
                "duet: %s: note: unknown device %s (%s): using %s (%s), the built-in of its kind; give --hw, or fit "
                "a profile of this device (docs/calibration.md)\n",
                cmd, device && device[0] ? device : "(no name)", arch && arch[0] ? arch : "no architecture", name,
                hw.device);
    return name;
}

#ifndef DUET_GPU_BUILD
const char *cli_default_hw(const char *cmd)
{
    (void)cmd;
    return "h200";
}
#endif

void cli_common_init(cli_common_t *c)
{
    memset(c, 0, sizeof(*c));
    c->hw_arg = NULL;
    c->wl = duet_workload_empty();
    c->num_wgs = c->gemm_wgs = c->comm_wgs = c->group_m = c->split_k = -1;
}

static int cli__int_flag(const char *cmd, const char *flag, const char *arg, long long lo, long long hi, int *out)
{
    long long v;
    if (cli_parse_i64(arg, lo, hi, &v) != 0) {
        cli_usage_error(cmd, "%s: '%s' is not an integer in [%lld, %lld]", flag, duet__q(arg), lo, hi);
        return -1;
    }
    *out = (int)v;
    return 1;
}

/* --gemm, --comm, --comm-bytes: the workload's sizes. @return 1, or -1 on a bad value (reported). */
static int cli__size_option(cli_common_t *c, const char *cmd, int opt, const char *arg)
{
    long long d[3];
    if (opt == OPT_GEMM) {
        if (cli_parse_dims(arg, 3, d) != 0) {
            cli_usage_error(cmd, "--gemm: '%s' is not MxNxK (three non-negative integers)", duet__q(arg));
            return -1;
        }
        c->wl.m = d[0];
        c->wl.n = d[1];
        c->wl.k = d[2];
        c->have_gemm = 1;
        return 1;
    }
    if (opt == OPT_COMM) {
        if (cli_parse_dims(arg, 2, d) != 0) {
            cli_usage_error(cmd, "--comm: '%s' is not McxNc (two non-negative integers)", duet__q(arg));
            return -1;
        }
        c->wl.mc = d[0];
        c->wl.nc = d[1];
        c->have_comm = 1;
        return 1;
    }
    int64_t v;
    if (duet_bytes_parse(arg, &v) < 0 || v <= 0) {
        cli_usage_error(cmd, "--comm-bytes: '%s' is not a positive size (digits, then K, M or G)", duet__q(arg));
        return -1;
    }
    c->comm_bytes = v;
    return 1;
}

/* A flag whose value one of the library's name parsers reads ("--collective: unknown ..."). */
static int cli__named(const char *cmd, const char *flag, duet_status_t st)
{
    if (st >= 0)
        return 1;
    cli_usage_error(cmd, "%s: %s", flag, duet_last_error());
    return -1;
}

/* The workload flags. @return 1 if handled, 0 if not ours, -1 on a bad value (reported). */
static int cli__workload_option(cli_common_t *c, const char *cmd, int opt, const char *arg)
{
    int v;
    switch (opt) {
    case OPT_HW:
        c->hw_arg = arg;
        c->hw_given = 1;
        return 1;
    case OPT_GEMM:
    case OPT_COMM:
    case OPT_COMM_BYTES:
        return cli__size_option(c, cmd, opt, arg);
    case OPT_COLLECTIVE:
        c->have_coll = 1;
        return cli__named(cmd, "--collective", duet_collective_parse(arg, &c->wl.coll));
    case OPT_WORLD:
        if (cli__int_flag(cmd, "--world", arg, 1, 1024, &v) < 0)
            return -1;
        c->wl.world = v;
        c->have_world = 1;
        return 1;
    case OPT_DTYPE:
        return cli__named(cmd, "--dtype", duet_dtype_parse(arg, &c->wl.dtype));
    case OPT_ROOT:
        if (cli__int_flag(cmd, "--root", arg, 0, 1023, &v) < 0)
            return -1;
        c->wl.root = v;
        return 1;
    default:
        return 0;
    }
}

/* The configuration flags. @return 1 if handled, 0 if not ours, -1 on a bad value (reported). */
static int cli__config_option(cli_common_t *c, const char *cmd, int opt, const char *arg)
{
    long long d[2];
    int32_t m;
    duet_gemm_tile_t t;
    switch (opt) {
    case OPT_MODE:
        c->mode_arg = arg;
        return cli__named(cmd, "--mode", duet_mode_parse(arg, &m));
    case OPT_NUM_WGS:
        return cli__int_flag(cmd, "--num-wgs", arg, 1, 1 << 20, &c->num_wgs);
    case OPT_GEMM_WGS:
        return cli__int_flag(cmd, "--gemm-wgs", arg, 0, 1 << 20, &c->gemm_wgs);
    case OPT_COMM_WGS:
        return cli__int_flag(cmd, "--comm-wgs", arg, 0, 1 << 20, &c->comm_wgs);
    case OPT_GROUP_M:
        return cli__int_flag(cmd, "--group-m", arg, 1, 64, &c->group_m);
    case OPT_SPLIT_K:
        return cli__int_flag(cmd, "--split-k", arg, 1, DUET_MAX_SPLIT_K, &c->split_k);
    case OPT_STREAM_K:
        c->stream_k = 1;
        return 1;
    case OPT_TILE:
        c->tile_arg = arg;
        return cli__named(cmd, "--tile", duet_tile_parse(arg, &t));
    case OPT_COMM_TILE:
        if (cli_parse_dims(arg, 2, d) != 0 || d[0] < 1 || d[1] < 1 || d[0] > 1 << 20 || d[1] > 1 << 20) {
            cli_usage_error(cmd, "--comm-tile: '%s' is not CMxCN (two positive integers)", duet__q(arg));
            return -1;
        }
        c->comm_tile_arg = arg;
        return 1;
    default:
        return 0;
    }
}

int cli_common_option(cli_common_t *c, const char *cmd, int opt, const char *arg)
{
    if (opt == OPT_JSON || opt == OPT_CSV) {
        *(opt == OPT_JSON ? &c->json : &c->csv) = 1;
        return 1;
    }
    int h = cli__workload_option(c, cmd, opt, arg);
    return h != 0 ? h : cli__config_option(c, cmd, opt, arg);
}

int cli_common_take(cli_common_t *c, const char *cmd, int opt, const char *arg)
{
    int h = cli_common_option(c, cmd, opt, arg);
    return h > 0 ? CLI_EXIT_OK : h < 0 ? CLI_EXIT_USAGE : CLI_OPT_UNKNOWN;
}

int cli_getopt(const char *cmd, int argc, char **argv, const struct option *longopts, cli_option_fn fn, void *o,
               int *help)
{
    int rc, opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        if (opt == 'h') {
            *help = 1;
            return CLI_EXIT_OK;
        }
        int seen = opt == '?' || opt == ':'; /* getopt's own refusal, optopt set */
        rc = seen ? CLI_OPT_UNKNOWN : fn(o, cmd, opt, optarg);
        if (rc == CLI_OPT_UNKNOWN && !seen && opt < 256)
            optopt = opt; /* a short option the command does not take (-o): named as getopt would */
        if (rc == CLI_OPT_UNKNOWN)
            return cli_getopt_error(cmd, argv, opt);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    return CLI_EXIT_OK;
}

int cli_no_operands(const char *cmd, int argc, char **argv)
{
    if (optind < argc)
        return cli_usage_error(cmd, "unexpected argument '%s'", duet__q(argv[optind]));
    return CLI_EXIT_OK;
}

int cli_request_fail(const char *cmd, const duet__request_t *r, duet_status_t st)
{
    if (!r->usage)
        return cli_fail(cmd, st);
    char why[CLI_MESSAGE_MAX];
    snprintf(why, sizeof(why), "%s", duet_last_error());
    return cli_usage_error(cmd, "%s", why);
}

int cli_common_workload(cli_common_t *c, const char *cmd)
{
    duet__request_t *r = &c->r;
    duet__request_init(r, DUET__OP_SIMULATE, 1);
    r->hw_name = c->hw_arg != NULL ? c->hw_arg : cli_default_hw(cmd);
    r->wl = c->wl;
    r->have_gemm = c->have_gemm;
    r->have_comm = c->have_comm;
    r->have_coll = c->have_coll;
    r->have_world = c->have_world;
    r->comm_bytes = c->comm_bytes;
    r->num_wgs = c->num_wgs;
    r->gemm_wgs = c->gemm_wgs;
    r->comm_wgs = c->comm_wgs;
    r->group_m = c->group_m;
    r->split_k = c->split_k;
    r->stream_k = c->stream_k;
    r->have_tile = c->tile_arg != NULL && duet_tile_parse(c->tile_arg, &r->tile) >= 0; /* checked when read */
    long long d[2];
    if (c->comm_tile_arg != NULL && cli_parse_dims(c->comm_tile_arg, 2, d) == 0) {
        r->cm = (int32_t)d[0];
        r->cn = (int32_t)d[1];
    }
    duet_status_t st = duet__request_resolve_workload(r);
    if (st < 0)
        return cli_request_fail(cmd, r, st);
    c->hw_arg = r->hw_name;
    c->hw = r->hw;
    c->wl = r->wl;
    c->have_comm = r->have_comm;
    return CLI_EXIT_OK;
}

int cli_common_config(cli_common_t *c, const char *cmd, int32_t mode)
{
    c->r.mode = mode;
    duet_status_t st = duet__request_resolve_op(&c->r);
    if (st < 0)
        return cli_request_fail(cmd, &c->r, st);
    c->cfg = c->r.cfg;
    return CLI_EXIT_OK;
}

int cli_parse_trace_format(const char *cmd, const char *arg, int *chrome)
{
    if (strcmp(arg, "duet") == 0 || strcmp(arg, "chrome") == 0) {
        *chrome = arg[0] == 'c';
        return CLI_EXIT_OK;
    }
    return cli_usage_error(cmd, "--trace-format: '%s' is not duet or chrome", duet__q(arg));
}

duet_status_t cli_write_trace(const duet_trace_t *t, const duet_plan_t *plan, const duet_hw_t *hw, int chrome,
                              const char *path)
{
    if (!chrome)
        return duet_trace_write_json(t, plan, hw, path);
    const duet_trace_t *list[1] = {t};
    return duet_trace_write_chrome(list, 1, path);
}

int cli_out_formats(const char *cmd, int json, int csv)
{
    if (json && csv)
        return cli_usage_error(cmd, "--json and --csv: choose one");
    return CLI_EXIT_OK;
}

int cli_out_option(cli_outopt_t *o, int opt, const char *arg)
{
    switch (opt) {
    case OPT_JSON:
        o->json = 1;
        return 1;
    case OPT_CSV:
        o->csv = 1;
        return 1;
    case 'o':
        o->path = arg;
        return 1;
    default:
        return 0;
    }
}

int cli_out_validate(const char *cmd, const cli_outopt_t *o)
{
    int rc = cli_out_formats(cmd, o->json, o->csv);
    return rc != CLI_EXIT_OK ? rc : cli_out_check(cmd, "-o", o->path);
}

int cli_out_check(const char *cmd, const char *opt, const char *path)
{
    if (path == NULL || strcmp(path, "-") == 0)
        return CLI_EXIT_OK;
    if (path[0] == '\0')
        return cli_usage_error(cmd, "%s: an empty file name", opt);
    /* The folder the file goes in: what precedes the last '/', "/" for a file at the root. */
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        return CLI_EXIT_OK;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (dir == NULL) {
        cli_error(cmd, "out of memory");
        return CLI_EXIT_FAILED;
    }
    memcpy(dir, path, n);
    dir[n] = '\0';
    struct stat sb;
    int rc = CLI_EXIT_OK;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        cli_error(cmd, "%s: %s: no such folder", opt, duet__q(dir));
        rc = CLI_EXIT_USAGE;
    }
    free(dir);
    return rc;
}

int cli_out_open(cli_out_t *o, const char *cmd, const char *path)
{
    memset(o, 0, sizeof(*o));
    int rc = cli_out_check(cmd, "-o", path);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (path != NULL && strcmp(path, "-") == 0)
        path = NULL; /* -o -: standard output */
    o->path = path;
    if (path == NULL) {
        o->f = stdout;
        return CLI_EXIT_OK;
    }
    o->f = open_memstream(&o->buf, &o->len);
    if (o->f == NULL) {
        cli_error(cmd, "cannot hold the result in memory");
        return CLI_EXIT_FAILED;
    }
    return CLI_EXIT_OK;
}

int cli_out_close(cli_out_t *o, const char *cmd, int rc)
{
    if (o->f == NULL)
        return rc;
    if (o->path == NULL) {
        /* Standard output: a write error (a full disk behind a redirection) fails the command. */
        if ((fflush(o->f) != 0 || ferror(o->f)) && rc == CLI_EXIT_OK) {
            cli_error(cmd, "write error on standard output");
            rc = CLI_EXIT_FAILED;
        }
        return rc;
    }
    if (fclose(o->f) != 0 && rc == CLI_EXIT_OK) {
        cli_error(cmd, "out of memory while writing the result");
        rc = CLI_EXIT_FAILED;
    }
    if (rc == CLI_EXIT_OK) {
        duet_status_t st = duet__write_file_atomic(o->path, o->buf ? o->buf : "", o->len);
        if (st < 0)
            rc = cli_fail(cmd, st);
    }
    free(o->buf);
    o->buf = NULL;
    return rc;
}

int cli_out_json(cli_out_t *o, const char *cmd, cJSON *doc)
{
    char *text = doc != NULL ? cJSON_Print(doc) : NULL;
    cJSON_Delete(doc);
    if (text == NULL) {
        cli_error(cmd, "out of memory while writing JSON");
        return CLI_EXIT_FAILED;
    }
    fprintf(o->f, "%s\n", text);
    cJSON_free(text);
    return CLI_EXIT_OK;
}

int cli_out_table(cli_out_t *o, const char *cmd, duet__table_t *t, int json, int csv, const char *schema,
                  const char *member)
{
    duet_status_t st = duet__table_write(t, o->f,
                                         json  ? DUET__TABLE_JSON
                                         : csv ? DUET__TABLE_CSV
                                               : DUET__TABLE_TEXT,
                                         schema, member);
    duet__table_free(t);
    return st < 0 ? cli_fail(cmd, st) : CLI_EXIT_OK;
}

void cli_out_csv(cli_out_t *o, duet__csv_t *csv)
{
    duet__csv_init(csv, o->f);
}
