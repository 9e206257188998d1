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
    fprintf(f, "usage: duet hw list [--json]\n"
               "       duet hw show NAME|FILE|- [--json] [-o FILE]\n"
               "\n"
               "A hardware profile holds every constant duet's cost model uses, each with its unit and where it\n"
               "comes from (datasheet, measurement, fit). Built-ins: h200, mi300x, mi350x. A profile file is the\n"
               "JSON that 'hw show --json' prints; edit a copy, or let 'duet calibrate fit' write one.\n"
               "\n"
               "options:\n"
               "  --json      print JSON (the profile file format) instead of a table\n"
               "  -o FILE     write the JSON to FILE (atomically: a failed write leaves no partial file)\n"
               "  -h, --help  this text\n"
               "\n"
               "examples:\n"
               "  duet hw list\n"
               "  duet hw show h200\n"
               "  duet hw show mi300x --json -o my-mi300x.json     # start a custom profile\n"
               "  duet hw show h200 --json | duet hw show -        # check a profile read from stdin\n");
}

static int cmd_hw_list(int json)
{
    if (json) {
        printf("[");
        for (int i = 0; i < duet_hw_builtin_count(); i++) {
            duet_hw_t hw;
            if (duet_hw_builtin(duet_hw_builtin_name(i), &hw) < 0)
                return cli_fail("hw list", DUET_ERR_INTERNAL);
            printf("%s{\"name\": \"%s\", \"device\": \"%s\", \"arch\": \"%s\", \"sms\": %d}", i ? ", " : "", hw.name,
                   hw.device, hw.arch, hw.n_sms);
        }
        printf("]\n");
        return CLI_EXIT_OK;
    }
    printf("%-8s %-22s %-8s %5s %9s %9s %s\n", "name", "device", "arch", "SMs", "bf16 TF/s", "HBM GB/s", "fabric");
    for (int i = 0; i < duet_hw_builtin_count(); i++) {
        duet_hw_t hw;
        duet_status_t st = duet_hw_builtin(duet_hw_builtin_name(i), &hw);
        if (st < 0)
            return cli_fail("hw list", st);
        char fabric[64];
        if (hw.fabric == DUET_FABRIC_MESH)
            snprintf(fabric, sizeof(fabric), "mesh, %d links x %.4g GB/s", hw.n_links, hw.link_gbs);
        else
            snprintf(fabric, sizeof(fabric), "switch, %.4g GB/s", hw.link_gbs);
        printf("%-8s %-22s %-8s %5d %9.0f %9.0f %s\n", hw.name, hw.device, hw.arch, hw.n_sms,
               duet_cost_peak_flops(&hw, DUET_DTYPE_BF16) / 1e12, hw.hbm_gbs, fabric);
    }
    return CLI_EXIT_OK;
}

static void cmd_hw_table(const duet_hw_t *hw)
{
    printf("profile %s: %s (%s), %s fabric\n\n", hw->name, hw->device, hw->arch,
           hw->fabric == DUET_FABRIC_MESH ? "mesh" : "switch");
    printf("%-24s %12s %-14s %s\n", "constant", "value", "unit", "source");
    for (int f = 0; f < DUET_HW_NFIELDS; f++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(f);
        printf("%-24s %12.6g %-14s %s\n", fi->key, duet_hw_get(hw, f), fi->unit,
               hw->source[f][0] ? hw->source[f] : "-");
    }
}

int cmd_hw(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"json", no_argument, NULL, OPT_JSON}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *sub = argc >= 2 ? argv[1] : NULL;
    if (sub == NULL)
        return cli_usage_error("hw", "missing 'list' or 'show'");
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0) {
        cmd_hw_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(sub, "list") != 0 && strcmp(sub, "show") != 0)
        return cli_usage_error("hw", "unknown subcommand '%s' (list, show)", sub);

    char what[16];
    snprintf(what, sizeof(what), "hw %s", sub);
    int json = 0;
    const char *out = NULL;
    optind = 1;
    opterr = 0;
    int opt;
    /* argv + 1: getopt sees the subcommand as argv[0]. */
    while ((opt = getopt_long(argc - 1, argv + 1, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            cmd_hw_usage(stdout);
            return CLI_EXIT_OK;
        case OPT_JSON:
            json = 1;
            break;
        case 'o':
            out = optarg;
            break;
        default:
            return cli_getopt_error(what, argv + 1, opt);
        }
    }
    int nargs = argc - 1 - optind;
    char **args = argv + 1 + optind;
    if (strcmp(sub, "list") == 0) {
        if (nargs != 0)
            return cli_usage_error(what, "takes no arguments, got '%s'", args[0]);
        if (out != NULL)
            return cli_usage_error(what, "-o applies to 'hw show'");
        return cmd_hw_list(json);
    }
    if (nargs != 1)
        return cli_usage_error(what,
                               nargs == 0 ? "missing profile (a built-in name, a JSON file, or -)"
                                          : "takes one profile, got %d arguments",
                               nargs);
    duet_hw_t hw;
    duet_status_t st = duet_hw_load(args[0], &hw);
    if (st == DUET_ERR_NOT_FOUND && duet_last_error()[0] == '\0') {
        cli_error(what, "'%s' is neither a built-in profile (h200, mi300x, mi350x) nor a readable file", args[0]);
        return CLI_EXIT_USAGE;
    }
    if (st < 0)
        return cli_fail(what, st);
    if (out != NULL) {
        st = duet_hw_save(&hw, out);
        return st < 0 ? cli_fail(what, st) : CLI_EXIT_OK;
    }
    if (json) {
        char *text = NULL;
        st = duet_hw_to_json(&hw, &text);
        if (st < 0)
            return cli_fail(what, st);
        fputs(text, stdout);
        free(text);
        return CLI_EXIT_OK;
    }
    cmd_hw_table(&hw);
    return CLI_EXIT_OK;
}
