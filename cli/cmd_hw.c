/*
 * duet hw: list the built-in profiles, show one (table or JSON), and write it to a file.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void cmd_hw_usage(FILE *f)
{
    fprintf(f, "usage: duet hw list [--json|--csv] [-o FILE]\n"
               "       duet hw show NAME|FILE|- [--json|--csv] [-o FILE]\n"
               "       duet hw for-device DEVICE [ARCH]\n"
               "\n"
               "A hardware profile holds every constant duet's cost model uses, each with its unit and where it\n"
               "comes from (datasheet, measurement, fit). Built-ins: h100, h200, mi300x, mi350x; 'hw list' says which\n"
               "are fitted, and to which corpora. A profile file is the JSON that 'hw show --json' prints; edit a\n"
               "copy, or let 'duet calibrate fit' write one. 'hw for-device' prints the built-in the GPU commands\n"
               "take for a device by the name its driver prints (nvidia-smi, rocminfo), e.g. 'NVIDIA H100 80GB HBM3'\n"
               "h100; for a device that is not a built-in's own, a note on stderr says which it falls back to.\n"
               "\n"
               "options:\n"
               "  --json             list: the built-ins (schema duet-hw-list/1); show: the profile file (duet-hw/1)\n"
               "  --csv              the table as CSV (list: one profile per row; show: constant, value, unit,\n"
               "                     source)\n"
               "  -o, --output FILE  write the result (text, --json or --csv) to FILE instead of standard output\n"
               "                     (atomically: a failed write leaves no partial file)\n"
               "  -h, --help         this text\n"
               "\n"
               "examples:\n"
               "  duet hw list\n"
               "  duet hw show h200\n"
               "  duet hw show mi300x --json -o my-mi300x.json     # start a custom profile\n"
               "  duet hw show h200 --json | duet hw show -        # check a profile read from stdin\n"
               "  duet hw show h200 --csv -o h200.csv              # the constants for a spreadsheet\n"
               "  duet hw for-device \"$(nvidia-smi -i 0 --query-gpu=name --format=csv,noheader)\"\n");
}

/* One built-in profile's summary: what `hw list` prints in each format. */
typedef struct cmd_hw_row {
    duet_hw_t hw;
    double bf16_tflops;
    char fabric[64];
    int fitted;    /* constants whose source is a fit */
    char fit[128]; /* the fit most of them come from ("CORPUS (kernels K) and 1 more, DATE"), or "" */
} cmd_hw_row_t;

/* The fit of a source "fit: WHAT, +-ERROR...": WHAT, into `out` (empty when it is no fit). */
static void cmd_hw_fit_of(const char *source, char *out, size_t n)
{
    out[0] = '\0';
    if (strncmp(source, "fit: ", 5) != 0)
        return;
    const char *end = strstr(source, ", +-");
    size_t len = end ? (size_t)(end - source - 5) : strlen(source + 5);
    snprintf(out, n, "%.*s", (int)(len < n ? len : n - 1), source + 5);
}

/* How many constants a fit set, and the fit that set most of them (the first of a tie). */
static void cmd_hw_fit_summary(cmd_hw_row_t *r)
{
    int best = 0;
    r->fitted = 0;
    r->fit[0] = '\0';
    for (int f = 0; f < DUET_HW_NFIELDS; f++) {
        char a[128], b[128];
        cmd_hw_fit_of(r->hw.source[f], a, sizeof(a));
        if (a[0] == '\0')
            continue;
        r->fitted++;
        int same = 0;
        for (int g = 0; g < DUET_HW_NFIELDS; g++) {
            cmd_hw_fit_of(r->hw.source[g], b, sizeof(b));
            same += strcmp(a, b) == 0;
        }
        if (same > best) {
            best = same;
            snprintf(r->fit, sizeof(r->fit), "%s", a);
        }
    }
}

/* `hw list`'s columns: the text joins the fabric and the fit into one column each. */
static const duet__col_t cmd_hw_list_cols[] = {
    {"name", NULL, NULL, "%-8s", DUET__CELL_STR, 0, 0, NULL},
    {"device", NULL, NULL, " %-22s", DUET__CELL_STR, 0, 0, NULL},
    {"arch", NULL, NULL, " %-8s", DUET__CELL_STR, 0, 0, NULL},
    {"sms", "SMs", NULL, " %5lld", DUET__CELL_INT, 0, 0, NULL},
    {"bf16_tflops", "bf16", "TF/s", " %9.0f", DUET__CELL_NUM, 0, 0, NULL},
    {"hbm_gbs", "HBM", "GB/s", " %9.0f", DUET__CELL_NUM, 0, 0, NULL},
    {"fabric", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},
    {"links", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"link_gbs", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA, NULL},
    {"fabric", NULL, NULL, " %-28s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
    {"fit", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA | DUET__COL_NULL_EMPTY, NULL},
    {"fitted_constants", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"fitted", NULL, NULL, " %s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
};

/* One built-in's row of `hw list`. */
static void cmd_hw_list_row(duet__table_t *t, const cmd_hw_row_t *r)
{
    const duet_hw_t *hw = &r->hw;
    char fit[192] = "not fitted";
    if (r->fitted > 0)
        snprintf(fit, sizeof(fit), "%d constants; most to %s", r->fitted, r->fit);
    duet__table_str(t, hw->name);
    duet__table_str(t, hw->device);
    duet__table_str(t, hw->arch);
    duet__table_int(t, hw->n_sms);
    duet__table_num(t, r->bf16_tflops);
    duet__table_num(t, hw->hbm_gbs);
    duet__table_str(t, hw->fabric == DUET_FABRIC_MESH ? "mesh" : "switch");
    duet__table_int(t, hw->n_links);
    duet__table_num(t, hw->link_gbs);
    duet__table_str(t, r->fabric);
    duet__table_str(t, r->fit);
    duet__table_int(t, r->fitted);
    duet__table_str(t, fit);
}

static int cmd_hw_list(cli_out_t *out, int json, int csv)
{
    duet__table_t t;
    duet__table_init(&t, cmd_hw_list_cols, (int)(sizeof(cmd_hw_list_cols) / sizeof(cmd_hw_list_cols[0])));
    cmd_hw_row_t rows[16];
    int n = duet_hw_builtin_count() < 16 ? duet_hw_builtin_count() : 16;
    for (int i = 0; i < n; i++) {
        cmd_hw_row_t *r = &rows[i];
        duet_status_t st = duet_hw_builtin(duet_hw_builtin_name(i), &r->hw);
        if (st < 0) {
            duet__table_free(&t);
            return cli_fail("hw list", st);
        }
        r->bf16_tflops = duet_cost_peak_flops(&r->hw, DUET_DTYPE_BF16) / 1e12;
        if (r->hw.fabric == DUET_FABRIC_MESH)
            snprintf(r->fabric, sizeof(r->fabric), "mesh, %d links x %.4g GB/s", r->hw.n_links, r->hw.link_gbs);
        else
            snprintf(r->fabric, sizeof(r->fabric), "switch, %.4g GB/s", r->hw.link_gbs);
        cmd_hw_fit_summary(r);
        cmd_hw_list_row(&t, r);
    }
    return cli_out_table(out, "hw list", &t, json, csv, "duet-hw-list/1", "profiles");
}

/* `hw show`'s table (text and CSV; its JSON is the profile file). */
static const duet__col_t cmd_hw_show_cols[] = {
    {"constant", NULL, NULL, "%-24s", DUET__CELL_STR, 0, 0, NULL},
    {"value", NULL, NULL, " %12.6g", DUET__CELL_NUM, 0, 0, NULL},
    {"unit", NULL, NULL, " %-14s", DUET__CELL_STR, 0, 0, NULL},
    {"source", NULL, NULL, " %s", DUET__CELL_STR, 0, DUET__COL_DASH_EMPTY, NULL},
};

static int cmd_hw_show(cli_out_t *out, const duet_hw_t *hw, int json, int csv)
{
    if (json) {
        char *text = NULL;
        duet_status_t st = duet_hw_to_json(hw, &text);
        if (st < 0)
            return cli_fail("hw show", st);
        fputs(text, out->f);
        free(text);
        return CLI_EXIT_OK;
    }
    duet__table_t t;
    duet__table_init(&t, cmd_hw_show_cols, (int)(sizeof(cmd_hw_show_cols) / sizeof(cmd_hw_show_cols[0])));
    for (int f = 0; f < DUET_HW_NFIELDS; f++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(f);
        duet__table_str(&t, fi->key);
        duet__table_num(&t, duet_hw_get(hw, f));
        duet__table_str(&t, fi->unit);
        duet__table_str(&t, hw->source[f]);
    }
    if (!csv)
        fprintf(out->f, "profile %s: %s (%s), %s fabric\n\n", hw->name, hw->device, hw->arch,
                hw->fabric == DUET_FABRIC_MESH ? "mesh" : "switch");
    return cli_out_table(out, "hw show", &t, 0, csv, NULL, NULL);
}

/* `hw for-device DEVICE [ARCH]`: operands only, the device's name and, optionally, its architecture. */
static int cmd_hw_for_device(int argc, char **argv)
{
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            cmd_hw_usage(stdout);
            return CLI_EXIT_OK;
        }
    if (argc < 3 || argc > 4)
        return cli_usage_error("hw for-device", "give the device's name (and its architecture), e.g. "
                                                "'NVIDIA H100 80GB HBM3' sm_90");
    printf("%s\n", cli_device_profile("hw for-device", argv[2], argc == 4 ? argv[3] : NULL));
    return CLI_EXIT_OK;
}

/* One output option of `hw list` and `hw show`. */
static int cmd_hw_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    (void)cmd;
    return cli_out_option(arg0, opt, arg) ? CLI_EXIT_OK : CLI_OPT_UNKNOWN;
}

/* `hw show`'s operand: the profile, checked when it is to be written as a file. */
static int cmd_hw_show_load(const char *what, int nargs, char **args, const cli_outopt_t *oo, duet_hw_t *hw)
{
    if (nargs != 1)
        return cli_usage_error(what,
                               nargs == 0 ? "missing profile (a built-in name, a JSON file, or -)"
                                          : "takes one profile, got %d arguments",
                               nargs);
    duet_status_t st = duet_hw_load(args[0], hw);
    if (st < 0)
        return cli_fail(what, st);
    /* A profile file is written only when it would load again. */
    if (oo->json && oo->path != NULL && (st = duet_hw_validate(hw)) < 0)
        return cli_fail(what, st);
    return CLI_EXIT_OK;
}

int cmd_hw(int argc, char **argv)
{
    static const struct option longopts[] = {CLI_OUTPUT_LONGOPTS, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *sub = argc >= 2 ? argv[1] : NULL;
    if (sub == NULL)
        return cli_usage_error("hw", "missing 'list', 'show' or 'for-device'");
    int help = strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0;
    if (!help && strcmp(sub, "for-device") == 0)
        return cmd_hw_for_device(argc, argv);
    if (!help && strcmp(sub, "list") != 0 && strcmp(sub, "show") != 0)
        return cli_usage_error("hw", "unknown subcommand '%s' (list, show, for-device)", duet__q(sub));
    char what[16];
    snprintf(what, sizeof(what), "hw %s", sub);
    cli_outopt_t oo = {0, 0, NULL};
    /* argv + 1: getopt sees the subcommand as argv[0]. */
    int rc = help ? CLI_EXIT_OK : cli_getopt(what, argc - 1, argv + 1, longopts, cmd_hw_option, &oo, &help);
    if (rc != CLI_EXIT_OK || help || (rc = cli_out_validate(what, &oo)) != CLI_EXIT_OK) {
        if (help)
            cmd_hw_usage(stdout);
        return rc;
    }
    int nargs = argc - 1 - optind, list = strcmp(sub, "list") == 0;
    duet_hw_t hw;
    if (list && nargs != 0)
        return cli_usage_error(what, "takes no arguments, got '%s'", duet__q(argv[1 + optind]));
    if (!list && (rc = cmd_hw_show_load(what, nargs, argv + 1 + optind, &oo, &hw)) != CLI_EXIT_OK)
        return rc;
    cli_out_t out;
    if ((rc = cli_out_open(&out, what, oo.path)) != CLI_EXIT_OK)
        return rc;
    rc = list ? cmd_hw_list(&out, oo.json, oo.csv) : cmd_hw_show(&out, &hw, oo.json, oo.csv);
    return cli_out_close(&out, what, rc);
}
