/*
 * The files `duet calibrate fit` and `duet validate` write besides their JSON: the fitted profile
 * with its report, as a pair, and the per-row predictions as CSV (docs/calibration.md, "Per-row
 * residuals").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calibrate/internal.h"

duet_status_t duet_cal_fit_save(duet_cal_report_t *rep, const char *const *files, int n, const char *base_name,
                                const char *name, const char *date, const char *profile_path, const char *report_path)
{
    duet_cal_fit_t *fit = &rep->model.fit;
    /* The fitted profile: sources name the corpora and the date; the name is the base's unless
     * the caller gives another. */
    duet_cal_fit_set_sources(fit, files, n, date);
    duet__cal_fit_set_mode_errors(&rep->model, files, n, date);
    if (name != NULL)
        snprintf(fit->hw.name, sizeof(fit->hw.name), "%s", name);
    /* Both texts first, then both files as a pair: every failure leaves the previous pair as it
     * was, and a kill can fall only between the two renames (the profile first: what the report
     * describes is in place before the report says so). */
    char *report = NULL, *profile = NULL;
    duet_status_t st = duet_hw_validate(&fit->hw);
    if (st >= 0)
        st = duet__cal_report_text(rep, files, n, base_name, &report);
    if (st >= 0)
        st = duet_hw_to_json(&fit->hw, &profile);
    if (st >= 0) {
        const char *const paths[2] = {profile_path, report_path};
        const char *const texts[2] = {profile, report};
        const size_t lens[2] = {strlen(profile), strlen(report)};
        st = duet__write_pair_atomic(paths, texts, lens);
    }
    free(report);
    free(profile);
    return st;
}

/*
 * The rows go to a memory stream and reach the file at the close, through the careful writer
 * (atomic: the file holds every row or is left as it was); a failed run aborts instead.
 */
struct duet_cal_rows_csv {
    FILE *f;
    char *buf;
    size_t len;
    duet__csv_t csv;
    char path[];
};

/*
 * Columns: the row's corpus and index, shape id and fold, what ran, the workload and
 * configuration (the tile with "/kS" for a K split in S parts), the measured median, fastest and
 * slowest run (us), and the predictions (us): by the fitted profile and, for a fit with folds, by
 * the fold's fit that did not see the row's shape (an empty field where there is none). Until
 * duet 0.2 the times were milliseconds, under ms, min_ms, max_ms, pred_ms and held_out_ms.
 */
static const char *const duet__rows_csv_cols[] = {
    "corpus",    "index",   "shape", "fold",   "kind",   "collective", "dtype",      "m",        "n",
    "k",         "mc",      "nc",    "world",  "mode",   "num_wgs",    "gemm_wgs",   "comm_wgs", "tile",
    "comm_tile", "group_m", "us",    "min_us", "max_us", "pred_us",    "held_out_us"};

duet_status_t duet_cal_rows_csv_open(const char *path, duet_cal_rows_csv_t **csv_p)
{
    duet_cal_rows_csv_t *csv = calloc(1, sizeof(*csv) + strlen(path) + 1);
    if (csv == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "cannot allocate to write '%s'", path);
    strcpy(csv->path, path);
    csv->f = open_memstream(&csv->buf, &csv->len);
    if (csv->f == NULL) {
        free(csv);
        return duet__error(DUET_ERR_NO_MEMORY, "cannot hold the rows of '%s' in memory", path);
    }
    duet__csv_init(&csv->csv, csv->f);
    duet__csv_names(&csv->csv, duet__rows_csv_cols, sizeof(duet__rows_csv_cols) / sizeof(duet__rows_csv_cols[0]));
    *csv_p = csv;
    return DUET_OK;
}

void duet_cal_rows_csv_row(void *arg, const duet_cal_row_pred_t *r)
{
    duet_cal_rows_csv_t *csv = arg;
    duet__csv_t *c = &csv->csv;
    const duet_corpus_row_t *w = r->row;
    char tile[48];
    duet__csv_printf(c, "%d", (int)r->corpus);
    duet__csv_printf(c, "%lld", (long long)r->index);
    duet__csv_printf(c, "%d", (int)r->shape);
    duet__csv_printf(c, "%d", (int)r->fold);
    duet__csv_str(c, duet_row_kind_name(w->kind));
    duet__csv_str(c, duet_collective_name(w->wl.coll));
    duet__csv_str(c, duet_dtype_name(w->wl.dtype));
    duet__csv_printf(c, "%lld", (long long)w->wl.m);
    duet__csv_printf(c, "%lld", (long long)w->wl.n);
    duet__csv_printf(c, "%lld", (long long)w->wl.k);
    duet__csv_printf(c, "%lld", (long long)w->wl.mc);
    duet__csv_printf(c, "%lld", (long long)w->wl.nc);
    duet__csv_printf(c, "%d", (int)w->wl.world);
    duet__csv_str(c, duet_mode_name(w->cfg.mode));
    duet__csv_printf(c, "%d", (int)w->cfg.num_wgs);
    duet__csv_printf(c, "%d", (int)w->cfg.gemm_wgs);
    duet__csv_printf(c, "%d", (int)w->cfg.comm_wgs);
    duet__csv_str(c, duet_config_tile_str(&w->cfg, tile, sizeof(tile)));
    duet__csv_printf(c, "%dx%d", (int)w->cfg.cm, (int)w->cfg.cn);
    duet__csv_printf(c, "%d", (int)w->cfg.group_m);
    /* The corpus rows and the predictions hold ms; the file says us. */
    duet__csv_num_fmt(c, "%.6g", w->ms * 1e3);
    duet__csv_num_fmt(c, "%.6g", w->min_ms * 1e3);
    duet__csv_num_fmt(c, "%.6g", w->max_ms * 1e3);
    duet__csv_num_fmt(c, "%.6g", r->fitted_ms * 1e3);
    duet__csv_num_fmt(c, "%.6g", r->held_out_ms * 1e3);
    duet__csv_end(c);
}

/* Release without writing. */
static void duet__rows_csv_free(duet_cal_rows_csv_t *csv)
{
    if (csv->f != NULL)
        fclose(csv->f);
    free(csv->buf);
    free(csv);
}

duet_status_t duet_cal_rows_csv_close(duet_cal_rows_csv_t *csv)
{
    if (csv == NULL)
        return DUET_OK;
    int bad = csv->csv.err | (fclose(csv->f) != 0);
    csv->f = NULL;
    duet_status_t st = bad ? duet__error(DUET_ERR_NO_MEMORY, "'%s': out of memory while holding the rows", csv->path)
                           : duet__write_file_atomic(csv->path, csv->buf ? csv->buf : "", csv->len);
    duet__rows_csv_free(csv);
    return st;
}

void duet_cal_rows_csv_abort(duet_cal_rows_csv_t *csv)
{
    if (csv != NULL)
        duet__rows_csv_free(csv);
}
