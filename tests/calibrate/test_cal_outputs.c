/*
 * The files of the calibration commands, from the library (calibrate/outputs.c): the fitted
 * profile and its report come as a pair or not at all, and --rows writes one CSV line per row.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../test_util.h"
#include "base/base.h"
#include "duet/calibrate.h"

/* A report whose fit moved one constant, link_gbs, to 325 +- 4.44 GB/s. */
static duet_cal_report_t *one_param_report(void)
{
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    rep->model.fit.hw = t_hw("h200");
    rep->model.fit.n_params = 1;
    duet_cal_param_result_t *r = &rep->model.fit.params[0];
    r->field = DUET_HW_F_link_gbs;
    r->fitted = 1;
    r->start = 380;
    r->value = 325;
    r->stderr_abs = 4.44;
    r->stderr_rel = 4.44 / 325;
    r->corr_field = -1;
    duet_hw_set(&rep->model.fit.hw, DUET_HW_F_link_gbs, 325);
    return rep;
}

Test(cal_outputs, fit_save_writes_the_pair_with_sources_and_name, T_TIMEOUT)
{
    duet_cal_report_t *rep = one_param_report();
    char prof[96], report[96];
    t_tmp_path(prof, sizeof(prof), "fitted.json");
    t_tmp_path(report, sizeof(report), "report.json");
    const char *files[] = {"tuning_data/a.json"};
    cr_assert_eq(duet_cal_fit_save(rep, files, 1, "h200", "h200-fit", "2026-12-01", prof, report), DUET_OK, "%s",
                 duet_last_error());
    duet_hw_t hw;
    cr_assert_eq(duet_hw_load(prof, &hw), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(hw.name, "h200-fit");
    cr_assert_eq(duet_hw_get(&hw, DUET_HW_F_link_gbs), 325);
    cr_assert_str_eq(hw.source[DUET_HW_F_link_gbs], "fit: tuning_data/a.json, 2026-12-01, +-4.44 GB/s");
    char *text = t_slurp(report);
    cr_assert(text != NULL && strstr(text, "\"duet-calibration/2\"") != NULL);
    free(text);
    free(rep);
}

Test(cal_outputs, fit_save_leaves_neither_when_the_profile_cannot_be_written, T_TIMEOUT)
{
    duet_cal_report_t *rep = one_param_report();
    char report[96];
    t_tmp_path(report, sizeof(report), "report.json");
    const char *files[] = {"a.json"};
    cr_assert_lt(duet_cal_fit_save(rep, files, 1, "h200", NULL, NULL, "/nonexistent-dir/fitted.json", report), 0);
    cr_assert_eq(access(report, F_OK), -1, "the report of a failed pair is removed");
    /* No date: today's, as YYYY-MM-DD (10 characters) after the file. */
    const char *src = rep->model.fit.hw.source[DUET_HW_F_link_gbs];
    cr_assert(strncmp(src, "fit: a.json, 20", 15) == 0 && src[17] == '-' && src[20] == '-' && src[23] == ',', "%s",
              src);
    cr_assert_str_eq(rep->model.fit.hw.name, "h200", "the base's name without one given");
    free(rep);
}

Test(cal_outputs, rows_csv, T_TIMEOUT)
{
    duet_cal_rows_csv_t *csv = NULL;
    /* The rows are held until the close, which writes them atomically: a folder that does not exist
     * fails there (DUET_ERR_NOT_FOUND, the path named) and leaves nothing; an abort writes nothing. */
    cr_assert_eq(duet_cal_rows_csv_open("/nonexistent-dir/rows.csv", &csv), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_cal_rows_csv_close(csv), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(duet_last_error(), "/nonexistent-dir/rows.csv") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_cal_rows_csv_close(NULL), DUET_OK);
    duet_cal_rows_csv_abort(NULL);

    char path[96];
    t_tmp_path(path, sizeof(path), "rows.csv");
    cr_assert_eq(duet_cal_rows_csv_open(path, &csv), DUET_OK, "%s", duet_last_error());
    duet_hw_t hw = t_hw("h200");
    duet_corpus_row_t row;
    memset(&row, 0, sizeof(row));
    row.kind = DUET_ROW_OP;
    row.wl = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 512, 2048, 2);
    row.wl.dtype = DUET_DTYPE_FP16;
    row.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    row.cfg.split_k = 2;
    row.ok = 1;
    row.ms = 0.3125;
    row.min_ms = 0.3;
    row.max_ms = 0.33;
    duet_cal_row_pred_t r = {&row, 1, 17, 4, 2, 0.3, NAN};
    duet_cal_rows_csv_row(csv, &r);
    cr_assert_eq(duet_cal_rows_csv_close(csv), DUET_OK);
    char *text = t_slurp(path);
    char want[512];
    /* Times in us: 0.3125 ms is 312.5 us; the missing held-out prediction an empty field. */
    snprintf(want, sizeof(want),
             "corpus,index,shape,fold,kind,collective,dtype,m,n,k,mc,nc,world,mode,num_wgs,gemm_wgs,comm_wgs,tile,"
             "comm_tile,group_m,us,min_us,max_us,pred_us,held_out_us\n"
             "1,17,4,2,op,all_gather,fp16,4096,4096,4096,512,2048,2,fused,%d,%d,%d,%dx%dx%d/k2,%dx%d,%d,312.5,300,330,"
             "300,\n",
             (int)row.cfg.num_wgs, (int)row.cfg.gemm_wgs, (int)row.cfg.comm_wgs, (int)row.cfg.tile.bm,
             (int)row.cfg.tile.bn, (int)row.cfg.tile.bk, (int)row.cfg.cm, (int)row.cfg.cn, (int)row.cfg.group_m);
    cr_assert_str_eq(text, want);
    free(text);
    /* A run that failed: the abort writes nothing, and the file written before stays as it was. */
    cr_assert_eq(duet_cal_rows_csv_open(path, &csv), DUET_OK, "%s", duet_last_error());
    duet_cal_rows_csv_row(csv, &r);
    duet_cal_rows_csv_row(csv, &r);
    duet_cal_rows_csv_abort(csv);
    text = t_slurp(path);
    cr_assert_str_eq(text, want);
    free(text);
}

/* The fitted profile and report as a pair, against failures and kills at every step. */

static void put(const char *path, const char *text)
{
    cr_assert_eq(t_spill(path, text), 0, "%s", path);
}

static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static int holds(const char *path, const char *text)
{
    char *got = t_slurp(path);
    int same = got != NULL && strcmp(got, text) == 0;
    free(got);
    return same;
}

static int is_new_pair_part(const char *path, const char *marker)
{
    char *got = t_slurp(path);
    int yes = got != NULL && strstr(got, marker) != NULL;
    free(got);
    return yes;
}

Test(cal_outputs, a_failed_profile_write_keeps_the_previous_report, T_TIMEOUT)
{
    duet_cal_report_t *rep = one_param_report();
    char report[96];
    t_tmp_path(report, sizeof(report), "report.json");
    put(report, "the previous report\n");
    const char *files[] = {"a.json"};
    cr_assert_lt(duet_cal_fit_save(rep, files, 1, "h200", NULL, NULL, "/nonexistent-dir/fitted.json", report), 0);
    cr_assert(holds(report, "the previous report\n"), "the previous pair's report is kept, not removed");
    free(rep);
}

/*
 * The writer's steps over an existing pair, each a fault point: create and write the profile's
 * temporary (2), the report's (2), a second name for each replaced file (2), two renames (2): 8.
 * A failure at any of them leaves the previous pair and nothing else; with none, the new pair.
 */
Test(cal_outputs, a_failure_at_any_step_leaves_the_previous_pair, T_TIMEOUT)
{
    duet_cal_report_t *rep = one_param_report();
    char prof[96], report[96];
    t_tmp_path(prof, sizeof(prof), "fitted.json");
    t_tmp_path(report, sizeof(report), "report.json");
    const char *files[] = {"a.json"};
    for (int step = 1; step <= 9; step++) {
        put(prof, "the previous profile\n");
        put(report, "the previous report\n");
        duet__fault_countdown = step;
        duet_status_t st = duet_cal_fit_save(rep, files, 1, "h200", "new-fit", "2026-12-01", prof, report);
        duet__fault_countdown = 0;
        if (step <= 8) {
            cr_assert_eq(st, DUET_ERR_IO, "step %d: %s", step, duet_last_error());
            cr_assert(holds(prof, "the previous profile\n") && holds(report, "the previous report\n"), "step %d", step);
        } else {
            cr_assert_eq(st, DUET_OK, "%s", duet_last_error());
            cr_assert(is_new_pair_part(prof, "\"new-fit\"") && is_new_pair_part(report, "duet-calibration/2"));
        }
        cr_assert_eq(files_in(t_tmpdir()), 2, "step %d: no temporary or second name left", step);
    }
    free(rep);
}

/* Without a previous pair there is nothing to keep: 6 steps, and a failure leaves neither file. */
Test(cal_outputs, a_failure_at_any_step_of_a_new_pair_leaves_neither, T_TIMEOUT)
{
    duet_cal_report_t *rep = one_param_report();
    char prof[96], report[96];
    t_tmp_path(prof, sizeof(prof), "fitted.json");
    t_tmp_path(report, sizeof(report), "report.json");
    const char *files[] = {"a.json"};
    for (int step = 1; step <= 6; step++) {
        duet__fault_countdown = step;
        cr_assert_eq(duet_cal_fit_save(rep, files, 1, "h200", NULL, "2026-12-01", prof, report), DUET_ERR_IO, "step %d",
                     step);
        duet__fault_countdown = 0;
        cr_assert_eq(files_in(t_tmpdir()), 0, "step %d", step);
    }
    cr_assert_eq(duet_cal_fit_save(rep, files, 1, "h200", NULL, "2026-12-01", prof, report), DUET_OK);
    cr_assert_eq(files_in(t_tmpdir()), 2);
    free(rep);
}

/*
 * A kill -9 at each step: before the first rename a reader finds the previous pair (the dead
 * writer's temporaries beside it, removed by the next write); only between the two renames, the
 * new profile beside the previous report. The next write leaves the new pair and nothing else.
 */
Test(cal_outputs, what_a_reader_sees_after_a_kill_at_each_step, .timeout = 60)
{
    duet_cal_report_t *rep = one_param_report();
    char prof[96], report[96];
    t_tmp_path(prof, sizeof(prof), "fitted.json");
    t_tmp_path(report, sizeof(report), "report.json");
    const char *files[] = {"a.json"};
    for (int step = 1; step <= 8; step++) {
        put(prof, "the previous profile\n");
        put(report, "the previous report\n");
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0) {
            duet__fault_countdown = -step;
            duet_cal_fit_save(rep, files, 1, "h200", "new-fit", "2026-12-01", prof, report);
            _exit(0);
        }
        int ws = 0;
        cr_assert_eq(waitpid(pid, &ws, 0), pid);
        cr_assert(WIFSIGNALED(ws) && WTERMSIG(ws) == SIGKILL, "step %d: killed there", step);
        if (step < 8)
            cr_assert(holds(prof, "the previous profile\n"), "step %d", step);
        else
            cr_assert(is_new_pair_part(prof, "\"new-fit\""), "killed between the renames: the profile is new");
        cr_assert(holds(report, "the previous report\n"), "step %d", step);
        cr_assert_eq(duet_cal_fit_save(rep, files, 1, "h200", "new-fit", "2026-12-01", prof, report), DUET_OK);
        cr_assert(is_new_pair_part(prof, "\"new-fit\"") && is_new_pair_part(report, "duet-calibration/2"));
        cr_assert_eq(files_in(t_tmpdir()), 2, "step %d: the dead writer's files are gone", step);
    }
    free(rep);
}
