/*
 * The files `duet calibrate fit` and `duet validate` write besides their JSON: the fitted profile
 * with its report, as a pair, and the per-row predictions as CSV (docs/calibration.md, "Per-row
 * residuals").
 */
#include <errno.h>
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
    if (name != NULL)
        snprintf(fit->hw.name, sizeof(fit->hw.name), "%s", name);
    DUET_CHECK(duet_cal_report_write_json(rep, files, n, base_name, report_path));
    duet_status_t st = duet_hw_save(&fit->hw, profile_path);
    if (st < 0)
        unlink(report_path); /* outputs come as a pair or not at all */
    return st;
}

struct duet_cal_rows_csv {
    FILE *f;
    int err;
    char path[];
};

/*
 * Columns: the row's corpus and index, shape id and fold, what ran, the workload and
 * configuration (the tile with "/kS" for a K split in S parts), the measured median, fastest and
 * slowest run (ms), and the predictions (ms): by the fitted profile and, for a fit with folds, by
 * the fold's fit that did not see the row's shape.
 */
static const char duet__rows_csv_header[] =
    "corpus,index,shape,fold,kind,collective,dtype,m,n,k,mc,nc,world,mode,num_wgs,"
    "gemm_wgs,comm_wgs,tile,comm_tile,group_m,ms,min_ms,max_ms,pred_ms,held_out_ms\n";

duet_status_t duet_cal_rows_csv_open(const char *path, duet_cal_rows_csv_t **csv_p)
{
    duet_cal_rows_csv_t *csv = malloc(sizeof(*csv) + strlen(path) + 1);
    if (csv == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "cannot allocate to write '%s'", path);
    strcpy(csv->path, path);
    csv->err = 0;
    csv->f = fopen(path, "w");
    if (csv->f == NULL) {
        duet_status_t st = duet__error(DUET_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
        free(csv);
        return st;
    }
    fputs(duet__rows_csv_header, csv->f);
    *csv_p = csv;
    return DUET_OK;
}

void duet_cal_rows_csv_row(void *arg, const duet_cal_row_pred_t *r)
{
    duet_cal_rows_csv_t *csv = arg;
    const duet_corpus_row_t *w = r->row;
    char tile[48];
    if (fprintf(csv->f,
                "%d,%lld,%d,%d,%s,%s,%s,%lld,%lld,%lld,%lld,%lld,%d,%s,%d,%d,%d,%s,%dx%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                (int)r->corpus, (long long)r->index, (int)r->shape, (int)r->fold, duet_row_kind_name(w->kind),
                duet_collective_name(w->wl.coll), duet_dtype_name(w->wl.dtype), (long long)w->wl.m, (long long)w->wl.n,
                (long long)w->wl.k, (long long)w->wl.mc, (long long)w->wl.nc, (int)w->wl.world,
                duet_mode_name(w->cfg.mode), (int)w->cfg.num_wgs, (int)w->cfg.gemm_wgs, (int)w->cfg.comm_wgs,
                duet_config_tile_str(&w->cfg, tile, sizeof(tile)), (int)w->cfg.cm, (int)w->cfg.cn, (int)w->cfg.group_m,
                w->ms, w->min_ms, w->max_ms, r->fitted_ms, r->held_out_ms) < 0)
        csv->err = 1;
}

duet_status_t duet_cal_rows_csv_close(duet_cal_rows_csv_t *csv)
{
    if (csv == NULL)
        return DUET_OK;
    int bad = csv->err | (fclose(csv->f) != 0);
    duet_status_t st = bad ? duet__error(DUET_ERR_IO, "error while writing '%s'", csv->path) : DUET_OK;
    free(csv);
    return st;
}
