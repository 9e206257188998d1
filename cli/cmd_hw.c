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

static const char *const cmd_hw_list_cols[] = {"name",   "device", "arch",     "sms", "bf16_tflops",     "hbm_gbs",
                                               "fabric", "links",  "link_gbs", "fit", "fitted_constants"};

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

/* `hw list --json`: the built-ins (duet-hw-list/1). */
static int cmd_hw_list_json(cli_out_t *out, const cmd_hw_row_t *rows, int n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "duet-hw-list/1");
    cJSON *arr = cJSON_AddArrayToObject(o, "profiles");
    for (int i = 0; i < n; i++) {
        const duet_hw_t *hw = &rows[i].hw;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "name", hw->name);
        cJSON_AddStringToObject(e, "device", hw->device);
        cJSON_AddStringToObject(e, "arch", hw->arch);
        cJSON_AddNumberToObject(e, "sms", hw->n_sms);
        cJSON_AddNumberToObject(e, "bf16_tflops", rows[i].bf16_tflops);
        cJSON_AddNumberToObject(e, "hbm_gbs", hw->hbm_gbs);
        cJSON_AddStringToObject(e, "fabric", hw->fabric == DUET_FABRIC_MESH ? "mesh" : "switch");
        cJSON_AddNumberToObject(e, "links", hw->n_links);
        cJSON_AddNumberToObject(e, "link_gbs", hw->link_gbs);
        if (rows[i].fit[0])
            cJSON_AddStringToObject(e, "fit", rows[i].fit);
        else
            cJSON_AddNullToObject(e, "fit");
        cJSON_AddNumberToObject(e, "fitted_constants", rows[i].fitted);
        cJSON_AddItemToArray(arr, e);
    }
    return cli_out_json(out, "hw list", o);
}

/* `hw list --csv`: one built-in per row. */
static int cmd_hw_list_csv(cli_out_t *out, const cmd_hw_row_t *rows, int n)
{
    duet__csv_t c;
    cli_out_csv(out, &c);
    duet__csv_names(&c, cmd_hw_list_cols, sizeof(cmd_hw_list_cols) / sizeof(cmd_hw_list_cols[0]));
    for (int i = 0; i < n; i++) {
        const duet_hw_t *hw = &rows[i].hw;
        duet__csv_str(&c, hw->name);
        duet__csv_str(&c, hw->device);
        duet__csv_str(&c, hw->arch);
        duet__csv_printf(&c, "%d", hw->n_sms);
        duet__csv_num(&c, rows[i].bf16_tflops);
        duet__csv_num(&c, hw->hbm_gbs);
        duet__csv_str(&c, hw->fabric == DUET_FABRIC_MESH ? "mesh" : "switch");
        duet__csv_printf(&c, "%d", hw->n_links);
        duet__csv_num(&c, hw->link_gbs);
        duet__csv_str(&c, rows[i].fit);
        duet__csv_printf(&c, "%d", rows[i].fitted);
        duet__csv_end(&c);
    }
    return CLI_EXIT_OK;
}

/* `hw list`: the table for people. */
static int cmd_hw_list_text(cli_out_t *out, const cmd_hw_row_t *rows, int n)
{
    fprintf(out->f, "%-8s %-22s %-8s %5s %9s %9s %-28s %s\n", "name", "device", "arch", "SMs", "bf16 TF/s", "HBM GB/s",
            "fabric", "fitted");
    for (int i = 0; i < n; i++) {
        const duet_hw_t *hw = &rows[i].hw;
        char fit[192] = "not fitted";
        if (rows[i].fitted > 0)
            snprintf(fit, sizeof(fit), "%d constants; most to %s", rows[i].fitted, rows[i].fit);
        fprintf(out->f, "%-8s %-22s %-8s %5d %9.0f %9.0f %-28s %s\n", hw->name, hw->device, hw->arch, hw->n_sms,
                rows[i].bf16_tflops, hw->hbm_gbs, rows[i].fabric, fit);
    }
    return CLI_EXIT_OK;
}

static int cmd_hw_list(cli_out_t *out, int json, int csv)
{
    cmd_hw_row_t rows[16];
    int n = duet_hw_builtin_count() < 16 ? duet_hw_builtin_count() : 16;
    for (int i = 0; i < n; i++) {
        cmd_hw_row_t *r = &rows[i];
        duet_status_t st = duet_hw_builtin(duet_hw_builtin_name(i), &r->hw);
        if (st < 0)
            return cli_fail("hw list", st);
        r->bf16_tflops = duet_cost_peak_flops(&r->hw, DUET_DTYPE_BF16) / 1e12;
        if (r->hw.fabric == DUET_FABRIC_MESH)
            snprintf(r->fabric, sizeof(r->fabric), "mesh, %d links x %.4g GB/s", r->hw.n_links, r->hw.link_gbs);
        else
            snprintf(r->fabric, sizeof(r->fabric), "switch, %.4g GB/s", r->hw.link_gbs);
        cmd_hw_fit_summary(r);
    }
    return json ? cmd_hw_list_json(out, rows, n) : csv ? cmd_hw_list_csv(out, rows, n) : cmd_hw_list_text(out, rows, n);
}

static const char *const cmd_hw_show_cols[] = {"constant", "value", "unit", "source"};

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
    if (csv) {
        duet__csv_t c;
        cli_out_csv(out, &c);
        duet__csv_names(&c, cmd_hw_show_cols, sizeof(cmd_hw_show_cols) / sizeof(cmd_hw_show_cols[0]));
        for (int f = 0; f < DUET_HW_NFIELDS; f++) {
            const duet_hw_field_info_t *fi = duet_hw_field_info(f);
            duet__csv_str(&c, fi->key);
            duet__csv_num(&c, duet_hw_get(hw, f));
            duet__csv_str(&c, fi->unit);
            duet__csv_str(&c, hw->source[f]);
            duet__csv_end(&c);
        }
        return CLI_EXIT_OK;
    }
    FILE *f = out->f;
    fprintf(f, "profile %s: %s (%s), %s fabric\n\n", hw->name, hw->device, hw->arch,
            hw->fabric == DUET_FABRIC_MESH ? "mesh" : "switch");
    fprintf(f, "%-24s %12s %-14s %s\n", "constant", "value", "unit", "source");
    for (int i = 0; i < DUET_HW_NFIELDS; i++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(i);
        fprintf(f, "%-24s %12.6g %-14s %s\n", fi->key, duet_hw_get(hw, i), fi->unit,
                hw->source[i][0] ? hw->source[i] : "-");
    }
    return CLI_EXIT_OK;
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
