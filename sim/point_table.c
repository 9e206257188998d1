/*
 * A sweep point as a row of a result table (base/table.h): the one column list of `duet predict`'s
 * ranked rows, as text and CSV in the CLI and as JSON in duet-predict/2 (its "ranked" rows and every
 * single point of the answer: the static default, the decision's points, --emit's bests).
 *
 * Each form keeps its own members and order, so some values are two columns: the rank comes first in
 * the text and CSV and last in JSON; the text and CSV show a vendor row's tile as the library kernel
 * the model expects ("lib 128x128"), JSON the configuration's tile; CSV's times are rounded to the ns
 * under short keys (gemm_us), JSON's are whole under the keys of duet-simulate/1 (gemm_finish_us).
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "sim/internal.h"

/* clang-format off: one column a line, in the order of the rows' cells */
static const duet__col_t duet__point_cols[] = {
    /* the text's rank, "1=" when tied with another row */
    {"rank", NULL, NULL, "%5s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
    {"rank", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_JSON, NULL},
    {"tied", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_JSON, NULL},
    /* the configuration: the members of its JSON codec (model/config_json.c), in its order */
    {"mode", NULL, NULL, "  %-10s", DUET__CELL_STR, 0, 0, NULL},
    {"num_wgs", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"gemm_wgs", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"comm_wgs", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"steal", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_JSON, NULL},
    {"ctas", "CTAs", NULL, " %-12s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
    {"tile", NULL, NULL, " %-15s", DUET__CELL_STR, 0, DUET__COL_NO_JSON, NULL},
    {"tile", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
    {"comm_tile", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
    {"group_m", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
    {"split_k", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA, NULL},
    {"stream_k", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_CSV | DUET__COL_OMIT_ZERO, NULL},
    /* what the configuration is predicted to do, times in us */
    {"ctas", NULL, NULL, "%s", DUET__CELL_STR, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
    {"steal", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_CSV | DUET__COL_BOOL, NULL},
    {"pred_us", "pred", "us", " %9.2f", DUET__CELL_NUM, 0, 0, "%.3f"},
    {"range", NULL, "us", " %19s", DUET__CELL_STR, 0, DUET__COL_TEXT, NULL},
    {"gemm_us", "GEMM", "us", " %9.2f", DUET__CELL_NUM, 0, DUET__COL_NO_JSON, "%.3f"},
    {"gemm_finish_us", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
    {"comm_us", "comm", "us", " %9.2f", DUET__CELL_NUM, 0, DUET__COL_NO_JSON, "%.3f"},
    {"comm_finish_us", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
    {"gemm_tflops", "TFLOP/s", NULL, " %8.1f", DUET__CELL_NUM, 0, 0, "%.2f"},
    {"algbw_gbs", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA, "%.2f"},
    {"busbw_gbs", "busbw", "GB/s", " %10.1f", DUET__CELL_NUM, 0, 0, "%.2f"},
    /* the prediction's interval: the profile's held-out error of the mode */
    {"lo_us", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA, "%.3f"},
    {"hi_us", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA, "%.3f"},
    {"err", NULL, NULL, "%g", DUET__CELL_NUM, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
    /* JSON's rank, last: in "ranked" only */
    {"rank", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_CSV, NULL},
    {"tied", NULL, NULL, "%lld", DUET__CELL_INT, 0, DUET__COL_DATA | DUET__COL_NO_CSV | DUET__COL_BOOL, NULL},
};
/* clang-format on */

enum { DUET__POINT_COLS = (int)(sizeof(duet__point_cols) / sizeof(duet__point_cols[0])) };

void duet__point_table_init(duet__table_t *t, int ranked)
{
    /* A single point leaves out the last two columns, JSON's rank and tie. */
    duet__table_init(t, duet__point_cols, ranked ? DUET__POINT_COLS : DUET__POINT_COLS - 2);
}

/* The tile as the text and CSV show it: a vendor row's is the library kernel the model expects. */
static void duet__point_tile(const duet_config_t *c, char *buf, size_t n)
{
    if (c->mode == DUET_MODE_VENDOR)
        snprintf(buf, n, "lib %dx%d%s%.0d", (int)c->tile.bm, (int)c->tile.bn, c->split_k > 1 ? "/k" : "",
                 c->split_k > 1 ? (int)c->split_k : 0);
    else
        duet_config_tile_str(c, buf, n);
}

/* The configuration's cells, from the text's CTAs to its stream-K flag. */
static void duet__point_config(duet__table_t *t, const duet_config_t *c, const char *split)
{
    char tile[48];
    duet__table_int(t, c->mode == DUET_MODE_FUSED);
    duet__table_str(t, split);
    duet__point_tile(c, tile, sizeof(tile));
    duet__table_str(t, tile);
    duet__table_strf(t, "%dx%dx%d", (int)c->tile.bm, (int)c->tile.bn, (int)c->tile.bk);
    duet__table_strf(t, "%dx%d", (int)c->cm, (int)c->cn);
    duet__table_int(t, c->group_m);
    duet__table_int(t, c->split_k > 1 ? c->split_k : 1); /* split_k 0 means no split, as 1 does */
    duet__table_int(t, c->stream_k != 0);
}

void duet__point_table_row(duet__table_t *t, const duet_hw_t *hw, const duet_workload_t *wl,
                           const duet_sweep_point_t *p, size_t rank, int tied)
{
    const duet_config_t *c = &p->cfg;
    char split[48];
    duet_interval_t iv = duet_decide_interval(hw, p);
    double alg, bus;
    duet_coll_bandwidth(wl, p->comm_finish_s, &alg, &bus);
    duet_config_split_str(c, split, sizeof(split));
    duet__table_strf(t, "%zu%s", rank, tied ? "=" : " ");
    duet__table_int(t, (long long)rank);
    duet__table_int(t, tied);
    duet__table_str(t, duet_mode_name(c->mode));
    duet__table_int(t, c->num_wgs);
    duet__table_int(t, c->gemm_wgs);
    duet__table_int(t, c->comm_wgs);
    duet__point_config(t, c, split);
    duet__table_str(t, split);
    duet__table_int(t, c->mode == DUET_MODE_FUSED);
    duet__table_num(t, p->makespan_s * 1e6);
    duet__table_strf(t, "%.2f-%.2f", iv.lo_s * 1e6, iv.hi_s * 1e6);
    for (int twice = 0; twice < 2; twice++) /* CSV's and JSON's columns of the GEMM's finish */
        duet__table_num(t, p->gemm_finish_s * 1e6);
    for (int twice = 0; twice < 2; twice++)
        duet__table_num(t, p->comm_finish_s * 1e6);
    duet__table_num(t, duet_gemm_tflops(wl, p->gemm_finish_s));
    duet__table_num(t, alg);
    duet__table_num(t, bus);
    duet__table_num(t, iv.lo_s * 1e6);
    duet__table_num(t, iv.hi_s * 1e6);
    duet__table_num(t, duet_hw_mode_err(hw, c->mode));
    if (t->n_cols == DUET__POINT_COLS) {
        duet__table_int(t, (long long)rank);
        duet__table_int(t, tied);
    }
}

cJSON *duet__point_iv_cjson(const duet_hw_t *hw, const duet_workload_t *wl, const duet_sweep_point_t *p)
{
    duet__table_t t;
    duet__point_table_init(&t, 0);
    duet__point_table_row(&t, hw, wl, p, 0, 0);
    cJSON *rows = duet__table_cjson(&t);
    duet__table_free(&t);
    cJSON *o = rows != NULL ? cJSON_DetachItemFromArray(rows, 0) : NULL;
    cJSON_Delete(rows);
    return o;
}
