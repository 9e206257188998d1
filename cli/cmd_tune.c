/*
 * duet tune: the tuning database (--list, --clear) and the tuner replayed on measurement corpora
 * (--evaluate). Tuning a workload for real benchmarks it on the GPUs, which needs the GPU build.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "cli/cli.h"
#include "duet/tune.h"
#include "sim/internal.h"
#include "tune/internal.h"
#ifdef DUET_GPU_BUILD
#include "cli/gpu/gpu.h"
#endif

enum {
    OPT_LIST = OPT_FIRST_PRIVATE,
    OPT_CLEAR,
    OPT_EVALUATE,
    OPT_CORPUS,
    OPT_DB,
    OPT_TOP,
    OPT_CANDIDATES,
    OPT_LEAD,
    OPT_FORCE,
};

#define CMD_TUNE_MAX_CORPORA 64

static void cmd_tune_usage(FILE *f)
{
    fprintf(f,
            "usage: duet tune [workload] [--mode fused|concurrent|both] [--top K] [--force] [--json] [-o FILE]\n"
            "                 (GPU build, mpirun)\n"
            "       duet tune --list [--json|--csv] [-o FILE] [--db FILE]\n"
            "       duet tune --clear [--db FILE]\n"
            "       duet tune --evaluate --corpus FILE [FILE...] [--hw PROFILE] [--top K] [--candidates FILE]\n"
            "                 [--lead model|candidates] [--mode M] [--json|--csv] [-o FILE]\n"
            "\n"
            "Tuning a workload predicts the best configurations with the simulator, benchmarks the top K plus the\n"
            "static default on the GPUs (every rank, the winner chosen on rank 0 and broadcast), and stores the\n"
            "winner in the tuning database; a later run with the same key reuses it without benchmarking. That needs\n"
            "the GPU build (make gpu) and mpirun. This command also manages the database and replays the tuner on\n"
            "measurement corpora without a GPU. docs/tuning.md documents the files and the environment.\n"
            "\n"
            "%s\n"
            "database (JSON at $DUET_CACHE, else $XDG_CACHE_HOME/duet/tuning.json, else ~/.cache/duet/tuning.json):\n"
            "  --list                print the stored winners, one line per key\n"
            "  --clear               delete the database (refused for a file that is not one)\n"
            "  --db FILE             use this database file instead\n"
            "evaluate (what the tuner would have picked on a corpus, read from its measurements):\n"
            "  --evaluate            replay the tuner on every shape of the corpora\n"
            "  --corpus FILE         a corpus file, duet-corpus/2 or /1 (repeat the flag or list more files after it)\n"
            "  --hw NAME|FILE        the profile the model ranks with (default: the built-in of the corpus's arch)\n"
            "  --candidates FILE     a candidate set (duet derive-candidates), used as the tuner would use it\n"
            "  --lead model|candidates  which list leads (default model: a calibrated profile's ranking leads)\n"
            "tuning:\n"
            "  --top K               configurations taken from the leading list (default $DUET_TUNE_TOPK or 8)\n"
            "  --mode M              fused, concurrent or both (default both)\n"
            "  --force               benchmark even when the database has the key\n"
            "output:\n"
            "  --json                the result as JSON (times in us): the tuning (schema duet-tune/1), the list\n"
            "                        (duet-tune-list/1: the database's entries) or the evaluation\n"
            "                        (duet-tune-evaluate/1)\n"
            "  --csv                 the table of --list or --evaluate as CSV (times in us)\n"
            "  -o, --output FILE     write the result (text, --json or --csv) to FILE instead of standard output\n"
            "  -h, --help            this text\n"
            "\n"
            "examples:\n"
            "  duet tune --list\n"
            "  duet tune --list --csv -o winners.csv\n"
            "  DUET_CACHE=/tmp/t.json duet tune --clear\n"
            "  duet tune --evaluate --corpus tuning_data/h200_world2.json --hw h200\n"
            "  mpirun -np 2 duet tune --collective all_gather --gemm 8192x8192x8192 --comm 4096x8192   (GPU build)\n",
            cli_workload_help);
}

static void cmd_tune_cfg_text(const duet_config_t *c, char *buf, size_t n)
{
    char tile[32];
    duet_config_tile_str(c, tile, sizeof(tile));
    if (c->mode == DUET_MODE_FUSED)
        snprintf(buf, n, "fused %d/%d %s", (int)c->gemm_wgs, (int)c->num_wgs, tile);
    else
        snprintf(buf, n, "concurrent %d+%d %s", (int)c->gemm_wgs, (int)c->comm_wgs, tile);
}

/* A configuration in CSV and JSON: mode, num_wgs, gemm_wgs, comm_wgs and tile, each key after
 * PREFIX (cmd_tune_cfg_cells() fills them). */
/* clang-format off */
#define CMD_TUNE_CFG_COLS(PREFIX)                                                             \
    {PREFIX "mode", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},               \
    {PREFIX "num_wgs", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},          \
    {PREFIX "gemm_wgs", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},         \
    {PREFIX "comm_wgs", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},         \
    {PREFIX "tile", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL}

/* A workload's dimensions in a table: m, n, k, mc and nc in CSV and JSON, "MxNxK" and "MCxNC" in the
 * text (cmd_tune_dims_cells() fills them). */
#define CMD_TUNE_DIMS_COLS                                                                    \
    {"m", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},                       \
    {"n", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},                       \
    {"k", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},                       \
    {"mc", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},                      \
    {"nc", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},                      \
    {"gemm", NULL, NULL, " %-18s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},                  \
    {"comm", NULL, NULL, " %-12s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL}
/* clang-format on */

/* `tune --list`'s table (text and CSV; its JSON is the database's entries). The text joins a
 * workload's dimensions and the winner's configuration into one column each. */
static const duet__col_t cmd_tune_list_cols[] = {
    {"key", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},
    {"arch", NULL, NULL, "%-8s", DUET__CELL_STR, 0, 0, NULL},
    {"sms", "SMs", NULL, " %5lld", DUET__CELL_INT, 0, 0, NULL},
    {"world", "W", NULL, " %3lld", DUET__CELL_INT, 0, 0, NULL},
    {"modes", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},
    {"modes", NULL, NULL, " %-16s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
    {"collective", NULL, NULL, " %-14s", DUET__CELL_STR, 0, 0, NULL},
    {"dtype", NULL, NULL, " %5s", DUET__CELL_STR, 0, 0, NULL},
    CMD_TUNE_DIMS_COLS,
    CMD_TUNE_CFG_COLS(""),
    {"winner", NULL, NULL, " %-30s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
    {"measured_us", "meas", "ms", " %9.4f", DUET__CELL_NUM, 1e-3, 0, NULL},
    {"pred_us", "pred", "ms", " %9.4f", DUET__CELL_NUM, 1e-3, 0, NULL},
    {"date", NULL, NULL, "  %s", DUET__CELL_STR, 0, 0, NULL},
};

/* A workload's dimensions as the text shows them: "MxNxK" and "MCxNC". */
static void cmd_tune_dims_text(const duet_workload_t *wl, char *gemm, size_t ng, char *comm, size_t nc)
{
    snprintf(gemm, ng, "%lldx%lldx%lld", (long long)wl->m, (long long)wl->n, (long long)wl->k);
    snprintf(comm, nc, "%lldx%lld", (long long)wl->mc, (long long)wl->nc);
}

/* A workload's cells of CMD_TUNE_DIMS_COLS. */
static void cmd_tune_dims_cells(duet__table_t *t, const duet_workload_t *wl)
{
    char gemm[64], comm[48];
    cmd_tune_dims_text(wl, gemm, sizeof(gemm), comm, sizeof(comm));
    const long long dims[] = {wl->m, wl->n, wl->k, wl->mc, wl->nc};
    for (int i = 0; i < 5; i++)
        duet__table_int(t, dims[i]);
    duet__table_str(t, gemm);
    duet__table_str(t, comm);
}

/* A configuration's cells of CMD_TUNE_CFG_COLS. */
static void cmd_tune_cfg_cells(duet__table_t *t, const duet_config_t *c)
{
    char tile[32];
    duet__table_str(t, duet_mode_name(c->mode));
    duet__table_int(t, c->num_wgs);
    duet__table_int(t, c->gemm_wgs);
    duet__table_int(t, c->comm_wgs);
    duet__table_str(t, duet_config_tile_str(c, tile, sizeof(tile)));
}

/* One database entry's row of `tune --list`. */
static void cmd_tune_list_row(duet__table_t *t, const duet_tune_entry_t *e)
{
    char cfg[64];
    cmd_tune_cfg_text(&e->cfg, cfg, sizeof(cfg));
    duet__table_str(t, e->key);
    duet__table_str(t, e->arch);
    duet__table_int(t, e->sms);
    duet__table_int(t, e->wl.world);
    duet__table_str(t, duet__tune_modes_name(e->modes));
    duet__table_str(t, e->modes == 3 ? "fused+concurrent" : e->modes == 1 ? "fused" : "concurrent");
    duet__table_str(t, duet_collective_name(e->wl.coll));
    duet__table_str(t, duet_dtype_name(e->wl.dtype));
    cmd_tune_dims_cells(t, &e->wl);
    cmd_tune_cfg_cells(t, &e->cfg);
    duet__table_str(t, cfg);
    duet__table_num(t, e->measured_us);
    duet__table_num(t, e->pred_us);
    duet__table_str(t, e->date);
}

/* `tune --list --json`: the database's entries (duet-tune-list/1). */
static int cmd_tune_list_json(cli_out_t *out, const char *db_path, const duet_tune_entry_t *e, size_t n)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "duet-tune-list/1");
    cJSON_AddStringToObject(o, "db", db_path);
    cJSON *arr = duet__tune_entries_cjson(e, n);
    if (arr == NULL) {
        cJSON_Delete(o);
        o = NULL; /* reported as out of memory */
    } else {
        cJSON_AddItemToObject(o, "entries", arr);
    }
    return cli_out_json(out, "tune", o);
}

static int cmd_tune_list(cli_out_t *out, const char *db_path, int json, int csv)
{
    duet_tune_db_t db;
    duet_status_t st = duet_tune_db_open(db_path, &db);
    if (st < 0)
        return cli_fail("tune", st);
    duet_tune_entry_t *e = NULL;
    size_t n = 0;
    st = duet_tune_db_list(&db, &e, &n);
    if (st < 0)
        return cli_fail("tune", st);
    int rc;
    if (json) {
        rc = cmd_tune_list_json(out, db.path, e, n);
    } else {
        duet__table_t t;
        duet__table_init(&t, cmd_tune_list_cols, (int)(sizeof(cmd_tune_list_cols) / sizeof(cmd_tune_list_cols[0])));
        for (size_t i = 0; i < n; i++)
            cmd_tune_list_row(&t, &e[i]);
        if (!csv)
            fprintf(out->f, "%s: %zu entr%s\n%s", db.path, n, n == 1 ? "y" : "ies", n > 0 ? "\n" : "");
        rc = cli_out_table(out, "tune", &t, 0, csv, NULL, NULL);
    }
    free(e);
    return rc;
}

static int cmd_tune_clear(const char *db_path)
{
    duet_tune_db_t db;
    duet_status_t st = duet_tune_db_open(db_path, &db);
    if (st == DUET_OK)
        st = duet_tune_db_clear(&db);
    if (st < 0)
        return cli_fail("tune", st);
    printf("cleared %s\n", db.path);
    return CLI_EXIT_OK;
}

static cJSON *cmd_tune_cfg_json(const duet_config_t *c, double ms)
{
    cJSON *o = cJSON_CreateObject();
    cli_json_add_config(o, c);
    cli_json_add_num(o, "us", ms * 1e3);
    return o;
}

/* The table of `tune --evaluate` (text and CSV; times in ms in the text, in us in CSV). */
static const duet__col_t cmd_tune_eval_cols[] = {
    {"corpus", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"#", NULL, NULL, "%4lld", DUET__CELL_INT, 0, DUET__COL_TEXT, NULL},
    {"collective", NULL, NULL, "  %-14s", DUET__CELL_STR, 0, 0, NULL},
    {"dtype", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},
    CMD_TUNE_DIMS_COLS,
    {"world", "W", NULL, " %3lld", DUET__CELL_INT, 0, 0, NULL},
    {"n_configs", "cfgs", NULL, " %4lld", DUET__CELL_INT, 0, 0, NULL},
    {"n_cands", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"n_cands_measured", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"meas", NULL, NULL, " %5s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL}, /* "measured/candidates" */
    {"oracle_ms", "oracle", "ms", " %9.4f", DUET__CELL_NUM, 0, DUET__COL_TEXT, NULL},
    {"oracle_us", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA, NULL},
    {"default_ms", "dflt", "ms", " %9.4f", DUET__CELL_NUM, 0, DUET__COL_TEXT, NULL},
    {"default_us", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA, NULL},
    {"tuned_ms", "tuned", "ms", " %9.4f", DUET__CELL_NUM, 0, DUET__COL_TEXT, NULL},
    {"tuned_us", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA, NULL},
    {"tuned_over_oracle", "t/o", NULL, " %7.3f", DUET__CELL_NUM, 0, 0, NULL},
    {"default_over_oracle", "d/o", NULL, " %7.3f", DUET__CELL_NUM, 0, 0, NULL},
    CMD_TUNE_CFG_COLS("tuned_"),
    {"tuned_source", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA, NULL},
    {"tuned_pick", "tuned pick", NULL, "  %s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
};

/* One shape's row of `tune --evaluate` (row i, counted from 1 in the text). */
static void cmd_tune_eval_row(duet__table_t *t, size_t i, const duet_tune_eval_shape_t *s)
{
    char cfg[64];
    cmd_tune_cfg_text(&s->tuned_cfg, cfg, sizeof(cfg));
    duet__table_int(t, (long long)s->corpus);
    duet__table_int(t, (long long)i + 1);
    duet__table_str(t, duet_collective_name(s->wl.coll));
    duet__table_str(t, duet_dtype_name(s->wl.dtype));
    cmd_tune_dims_cells(t, &s->wl);
    duet__table_int(t, s->wl.world);
    duet__table_int(t, s->n_configs);
    duet__table_int(t, s->n_cands);
    duet__table_int(t, s->n_cands_measured);
    duet__table_strf(t, "%2d/%-2d", (int)s->n_cands_measured, (int)s->n_cands);
    const double ms[] = {s->oracle_ms, s->default_ms, s->tuned_ms};
    for (int k = 0; k < 3; k++) {
        duet__table_num(t, ms[k]);
        duet__table_num(t, ms[k] * 1e3);
    }
    duet__table_num(t, s->tuned_ms / s->oracle_ms);
    duet__table_num(t, s->default_ms / s->oracle_ms);
    cmd_tune_cfg_cells(t, &s->tuned_cfg);
    duet__table_str(t, duet_tune_source_name(s->tuned_source));
    duet__table_strf(t, "%s (%s)", cfg, duet_tune_source_name(s->tuned_source));
}

/* `tune --evaluate --json`: every shape's oracle, default and pick, and the summary (duet-tune-evaluate/1). */
static int cmd_tune_eval_json(cli_out_t *out, const duet_tune_eval_t *ev, const duet_tune_params_t *p,
                              const duet_hw_t *hw, size_t n_corpora)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "duet-tune-evaluate/1");
    cJSON_AddStringToObject(o, "hw", hw->name);
    cJSON_AddNumberToObject(o, "top_k", p->top_k);
    cJSON_AddNumberToObject(o, "corpora", (double)n_corpora);
    cJSON *arr = cJSON_AddArrayToObject(o, "shapes");
    for (size_t i = 0; i < ev->n; i++) {
        const duet_tune_eval_shape_t *s = &ev->shapes[i];
        cJSON *so = cJSON_CreateObject();
        cJSON_AddNumberToObject(so, "corpus", (double)s->corpus);
        duet__workload_cjson(so, &s->wl);
        cJSON_AddNumberToObject(so, "n_configs", s->n_configs);
        cJSON_AddNumberToObject(so, "n_cands", s->n_cands);
        cJSON_AddNumberToObject(so, "n_cands_measured", s->n_cands_measured);
        cJSON_AddItemToObject(so, "oracle", cmd_tune_cfg_json(&s->oracle_cfg, s->oracle_ms));
        cJSON_AddItemToObject(so, "default", cmd_tune_cfg_json(&s->default_cfg, s->default_ms));
        cJSON *t = cmd_tune_cfg_json(&s->tuned_cfg, s->tuned_ms);
        cJSON_AddStringToObject(t, "source", duet_tune_source_name(s->tuned_source));
        cJSON_AddItemToObject(so, "tuned", t);
        cJSON_AddItemToArray(arr, so);
    }
    cJSON *sum = cJSON_AddObjectToObject(o, "summary");
    cJSON_AddNumberToObject(sum, "n_shapes", (double)ev->n);
    cJSON_AddNumberToObject(sum, "n_tuned", (double)ev->n_tuned);
    cJSON_AddNumberToObject(sum, "n_with_default", (double)ev->n_with_default);
    cli_json_add_num(sum, "median_tuned_over_oracle", ev->median_tuned_over_oracle);
    cli_json_add_num(sum, "max_tuned_over_oracle", ev->max_tuned_over_oracle);
    cli_json_add_num(sum, "mean_tuned_over_oracle", ev->mean_tuned_over_oracle);
    cli_json_add_num(sum, "median_default_over_oracle", ev->median_default_over_oracle);
    cli_json_add_num(sum, "max_default_over_oracle", ev->max_default_over_oracle);
    cJSON_AddNumberToObject(sum, "n_within_2pct", (double)ev->n_within_2pct);
    cJSON_AddNumberToObject(sum, "n_exact", (double)ev->n_exact);
    cJSON_AddNumberToObject(sum, "n_tuned_slower_than_default", (double)ev->n_tuned_slower_than_default);
    return cli_out_json(out, "tune", o);
}

/* `tune --evaluate`'s summary, after the text's table. */
static void cmd_tune_eval_summary(FILE *f, const duet_tune_eval_t *ev)
{
    fprintf(f, "\nsummary over %zu shapes (%zu with a measured pick, %zu with the static default measured):\n", ev->n,
            ev->n_tuned, ev->n_with_default);
    fprintf(f, "  tuned / oracle:    median %.4f, max %.4f, mean %.4f; within 2 %%: %zu; the oracle's time: %zu\n",
            ev->median_tuned_over_oracle, ev->max_tuned_over_oracle, ev->mean_tuned_over_oracle, ev->n_within_2pct,
            ev->n_exact);
    fprintf(f, "  default / oracle:  median %.4f, max %.4f\n", ev->median_default_over_oracle,
            ev->max_default_over_oracle);
    fprintf(f, "  tuned slower than the static default: %zu\n", ev->n_tuned_slower_than_default);
}

/* `tune --evaluate` as CSV, or as text: a line per shape (the header also over none), then the summary. */
static int cmd_tune_eval_table(FILE *f, const duet_tune_eval_t *ev, const duet_tune_params_t *p, const duet_hw_t *hw,
                               size_t n_corpora, int csv)
{
    duet__table_t t;
    duet__table_init(&t, cmd_tune_eval_cols, (int)(sizeof(cmd_tune_eval_cols) / sizeof(cmd_tune_eval_cols[0])));
    for (size_t i = 0; i < ev->n; i++)
        cmd_tune_eval_row(&t, i, &ev->shapes[i]);
    duet_status_t st;
    if (csv) {
        st = duet__table_csv(&t, f);
    } else {
        fprintf(f,
                "tuner replayed on %zu shape%s of %zu corpus%s with profile %s: top %d by the model over each shape's "
                "measured grid, plus the static default; times are the corpus's medians\n\n",
                ev->n, ev->n == 1 ? "" : "s", n_corpora, n_corpora == 1 ? "" : "es", hw->name, (int)p->top_k);
        st = duet__table_text_head(&t, f);
        if (st == DUET_OK)
            st = duet__table_text_rows(&t, f, 0, ev->n);
        if (st == DUET_OK)
            cmd_tune_eval_summary(f, ev);
    }
    duet__table_free(&t);
    return st < 0 ? cli_fail("tune", st) : CLI_EXIT_OK;
}

static int cmd_tune_eval_print(cli_out_t *out, const duet_tune_eval_t *ev, const duet_tune_params_t *p,
                               const duet_hw_t *hw, size_t n_corpora, int json, int csv)
{
    if (json)
        return cmd_tune_eval_json(out, ev, p, hw, n_corpora);
    return cmd_tune_eval_table(out->f, ev, p, hw, n_corpora, csv);
}

/* The built-in profile of a corpus's device (duet_hw_builtin_for_device()), for --evaluate without
 * --hw; NULL when that profile is of another architecture than the corpus's. */
static const char *cmd_tune_builtin_for(const duet_corpus_t *c)
{
    const char *name = duet_hw_builtin_for_device(c->device, c->arch, NULL);
    duet_hw_t hw;
    char a[32], b[32];
    if (duet_hw_builtin(name, &hw) != DUET_OK)
        return NULL;
    duet_tune_arch_strip(c->arch, a, sizeof(a));
    duet_tune_arch_strip(hw.arch, b, sizeof(b));
    return strcmp(a, b) == 0 ? name : NULL;
}

/* --evaluate's profile: --hw, else the built-in of the first corpus's device. @return an exit code. */
static int cmd_tune_eval_hw(const char *hw_arg, const duet_corpus_t *first, const char *first_file, duet_hw_t *hw)
{
    if (hw_arg == NULL) {
        hw_arg = cmd_tune_builtin_for(first);
        if (hw_arg == NULL)
            return cli_usage_error("tune", "no built-in profile for arch '%s' of %s: give --hw", duet__q(first->arch),
                                   duet__q(first_file));
    }
    duet_status_t st = duet_hw_load(hw_arg, hw);
    if (st < 0) {
        cli_error("tune", "--hw: %s", duet_last_error()[0] ? duet_last_error() : "not a profile name or file");
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* Replay the tuner on the loaded corpora and print what it picked. @return an exit code. */
static int cmd_tune_eval_run(cli_out_t *out, const duet_corpus_t *corpora, size_t n, const duet_hw_t *hw,
                             const duet_tune_params_t *p, int json, int csv)
{
    duet_tune_params_t rp;
    duet_tune_eval_t ev;
    duet_status_t st = duet_tune_params_resolve(p, &rp);
    if (st == DUET_OK)
        st = duet_tune_evaluate(corpora, n, hw, &rp, &ev);
    if (st < 0)
        return cli_fail("tune", st);
    int rc = cmd_tune_eval_print(out, &ev, &rp, hw, n, json, csv);
    duet_tune_eval_free(&ev);
    return rc;
}

static int cmd_tune_evaluate(cli_out_t *out, const char *const *files, size_t n_files, const char *hw_arg,
                             const char *cands_path, duet_tune_params_t *p, int json, int csv)
{
    if (n_files == 0)
        return cli_usage_error("tune", "--evaluate needs at least one --corpus FILE");
    duet_corpus_t *corpora = calloc(n_files, sizeof(*corpora));
    duet_tune_candset_t set;
    int have_set = 0, rc = CLI_EXIT_OK;
    size_t loaded = 0;
    duet_hw_t hw;
    duet_status_t st;
    if (corpora == NULL) {
        cli_error("tune", "out of memory");
        return CLI_EXIT_FAILED;
    }
    for (; loaded < n_files; loaded++) {
        st = duet_corpus_load(files[loaded], &corpora[loaded]);
        if (st < 0) {
            rc = cli_fail("tune", st);
            goto out;
        }
    }
    if ((rc = cmd_tune_eval_hw(hw_arg, &corpora[0], files[0], &hw)) != CLI_EXIT_OK)
        goto out;
    if (cands_path != NULL) {
        st = duet_tune_candset_load(cands_path, &set);
        if (st < 0) {
            rc = cli_fail("tune", st);
            goto out;
        }
        have_set = 1;
        p->candset = &set;
    }
    rc = cmd_tune_eval_run(out, corpora, n_files, &hw, p, json, csv);
out:
    if (have_set)
        duet_tune_candset_free(&set);
    for (size_t i = 0; i < loaded; i++)
        duet_corpus_free(&corpora[i]);
    free(corpora);
    return rc;
}

/* What duet tune's flags ask for. */
typedef struct cmd_tune_opts {
    cli_common_t c;
    duet_tune_params_t p;
    const char *db_path, *cands_path, *hw_arg, *out_path;
    const char *files[CMD_TUNE_MAX_CORPORA];
    size_t n_files;
    int list, clear, evaluate, workload, help;
} cmd_tune_opts_t;

/* One more corpus file (--corpus, or a file after the options). @return an exit code. */
static int cmd_tune_add_file(cmd_tune_opts_t *o, const char *path)
{
    if (o->n_files >= CMD_TUNE_MAX_CORPORA)
        return cli_usage_error("tune", "--corpus: at most %d files", CMD_TUNE_MAX_CORPORA);
    o->files[o->n_files++] = path;
    return CLI_EXIT_OK;
}

/* --top, --lead and --mode: the tuning parameters. */
static int cmd_tune_param_option(cmd_tune_opts_t *o, int opt, const char *arg)
{
    long long v;
    int32_t m;
    switch (opt) {
    case OPT_TOP:
        if (cli_parse_i64(arg, 1, DUET_TUNE_MAX_TOPK, &v) != 0)
            return cli_usage_error("tune", "--top: '%s' is not an integer in [1, %d]", duet__q(arg),
                                   DUET_TUNE_MAX_TOPK);
        o->p.top_k = (int32_t)v;
        return CLI_EXIT_OK;
    case OPT_LEAD:
        if (strcmp(arg, "model") == 0)
            o->p.calibrated = 1;
        else if (strcmp(arg, "candidates") == 0)
            o->p.calibrated = 0;
        else
            return cli_usage_error("tune", "--lead: '%s' is not model or candidates", duet__q(arg));
        return CLI_EXIT_OK;
    case OPT_MODE:
        if (strcmp(arg, "both") == 0)
            o->p.modes = (1u << DUET_MODE_FUSED) | (1u << DUET_MODE_CONCURRENT);
        else if (duet_mode_parse(arg, &m) == DUET_OK)
            o->p.modes = 1u << m;
        else
            return cli_usage_error("tune", "--mode: '%s' is not fused, concurrent or both", duet__q(arg));
        return CLI_EXIT_OK;
    default:
        return CLI_OPT_UNKNOWN;
    }
}

/* One option of duet tune: its own, then the workload's (which mark a workload as given). */
static int cmd_tune_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    cmd_tune_opts_t *o = arg0;
    switch (opt) {
    case 'o':
        o->out_path = arg;
        return CLI_EXIT_OK;
    case OPT_LIST:
    case OPT_CLEAR:
    case OPT_EVALUATE:
        *(opt == OPT_LIST ? &o->list : opt == OPT_CLEAR ? &o->clear : &o->evaluate) = 1;
        return CLI_EXIT_OK;
    case OPT_CORPUS:
        return cmd_tune_add_file(o, arg);
    case OPT_DB:
    case OPT_CANDIDATES:
    case OPT_HW:
        *(opt == OPT_DB ? &o->db_path : opt == OPT_CANDIDATES ? &o->cands_path : &o->hw_arg) = arg;
        return CLI_EXIT_OK;
    case OPT_FORCE:
        o->p.force = 1;
        return CLI_EXIT_OK;
    default:
        break;
    }
    int rc = cmd_tune_param_option(o, opt, arg);
    if (rc != CLI_OPT_UNKNOWN)
        return rc;
    rc = cli_common_take(&o->c, cmd, opt, arg);
    if (rc == CLI_EXIT_OK)
        o->workload |= opt != OPT_JSON && opt != OPT_CSV;
    return rc;
}

/* Parse argv, then the rules between the flags. @return an exit code (CLI_EXIT_OK to go on). */
static int cmd_tune_parse(cmd_tune_opts_t *o, int argc, char **argv)
{
    static const struct option longopts[] = {CLI_WORKLOAD_LONGOPTS,
                                             {"mode", required_argument, NULL, OPT_MODE},
                                             {"list", no_argument, NULL, OPT_LIST},
                                             {"clear", no_argument, NULL, OPT_CLEAR},
                                             {"evaluate", no_argument, NULL, OPT_EVALUATE},
                                             {"corpus", required_argument, NULL, OPT_CORPUS},
                                             {"db", required_argument, NULL, OPT_DB},
                                             {"top", required_argument, NULL, OPT_TOP},
                                             {"candidates", required_argument, NULL, OPT_CANDIDATES},
                                             {"lead", required_argument, NULL, OPT_LEAD},
                                             {"force", no_argument, NULL, OPT_FORCE},
                                             {"json", no_argument, NULL, OPT_JSON},
                                             {"csv", no_argument, NULL, OPT_CSV},
                                             {"output", required_argument, NULL, 'o'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int rc = cli_getopt("tune", argc, argv, longopts, cmd_tune_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help)
        return rc;
    /* Files after the options are more corpora (--corpus a.json b.json). */
    for (; optind < argc; optind++) {
        if (!o->evaluate)
            return cli_usage_error("tune", "unexpected argument '%s'", duet__q(argv[optind]));
        if ((rc = cmd_tune_add_file(o, argv[optind])) != CLI_EXIT_OK)
            return rc;
    }
    if (o->list + o->clear + o->evaluate > 1)
        return cli_usage_error("tune", "give only one of --list, --clear and --evaluate");
    if ((o->list || o->clear) && (o->workload || o->n_files || o->cands_path))
        return cli_usage_error("tune", "--list and --clear take no workload, corpus or candidate set");
    if (o->evaluate && o->workload)
        return cli_usage_error("tune", "--evaluate takes the shapes of its corpora, not a workload");
    if ((rc = cli_out_formats("tune", o->c.json, o->c.csv)) != CLI_EXIT_OK)
        return rc;
    if (o->clear && (o->c.json || o->c.csv || o->out_path))
        return cli_usage_error("tune", "--clear prints one line: no --json, --csv or -o");
    return CLI_EXIT_OK;
}

/* Tune a workload: benchmark it on the GPUs (GPU build), else say it needs that build. */
static int cmd_tune_workload(cmd_tune_opts_t *o, int *argc, char ***argv)
{
    if (!o->workload && o->hw_arg == NULL)
        return cli_usage_error("tune", "nothing to do: give a workload (GPU build), --list, --clear or --evaluate");
    if (o->c.csv)
        return cli_usage_error("tune", "--csv: tuning a workload prints text or --json");
#ifdef DUET_GPU_BUILD
    /* The workload is checked against --hw, else h200: the context of each rank takes the
     * profile of its own GPU (no rank describes GPU 0 here). */
    int rc;
    o->c.hw_arg = o->hw_arg ? o->hw_arg : "h200";
    if ((rc = cli_common_workload(&o->c, "tune")) != CLI_EXIT_OK ||
        (rc = cli_out_check("tune", "-o", o->out_path)) != CLI_EXIT_OK)
        return rc;
    o->p.db_path = o->db_path;
    duet_tune_candset_t set;
    int have_set = 0;
    if (o->cands_path != NULL) {
        duet_status_t st = duet_tune_candset_load(o->cands_path, &set);
        if (st < 0)
            return cli_fail("tune", st);
        have_set = 1;
        o->p.candset = &set;
    }
    rc = cmd_tune_gpu(&o->c, &o->p, o->hw_arg, o->c.json, o->out_path, argc, argv);
    if (have_set)
        duet_tune_candset_free(&set);
    return rc;
#else
    (void)argc;
    (void)argv;
    /* No fake tuning: without the backend nothing can be benchmarked. */
    cli_error("tune", "tuning a workload benchmarks it on the GPUs and needs a GPU build: make gpu (then run it under "
                      "mpirun); this duet was built without the GPU backend");
    return CLI_EXIT_USAGE;
#endif
}

int cmd_tune(int argc, char **argv)
{
    cmd_tune_opts_t o;
    memset(&o, 0, sizeof(o));
    cli_common_init(&o.c);
    o.p = duet_tune_default_params();
    o.p.calibrated = 1; /* --lead model */
    int rc = cmd_tune_parse(&o, argc, argv);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help) {
            cmd_tune_usage(stdout);
            cli_gpu_build_note(stdout, "Tuning a workload", "tune");
        }
        return rc;
    }
    if (o.clear)
        return cmd_tune_clear(o.db_path);
    if (o.list || o.evaluate) {
        cli_out_t out;
        if ((rc = cli_out_open(&out, "tune", o.out_path)) != CLI_EXIT_OK)
            return rc;
        rc = o.list ? cmd_tune_list(&out, o.db_path, o.c.json, o.c.csv)
                    : cmd_tune_evaluate(&out, o.files, o.n_files, o.hw_arg, o.cands_path, &o.p, o.c.json, o.c.csv);
        return cli_out_close(&out, "tune", rc);
    }
    return cmd_tune_workload(&o, &argc, &argv);
}
