/*
 * duet tune WORKLOAD under mpirun: the tuner (tune/) with real benchmarks. Every rank runs the
 * same candidates in the same order; rank 0's verdicts (cache hit, winner) are broadcast so all
 * ranks use one configuration; only rank 0 writes the database.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/gpu/gpu.h"
#include "duet/tune.h"

typedef struct tune_ctx {
    gpu_env_t *e;
    const duet_workload_t *wl;
    const gpu_bufs_t *b;
    int warmup, repeat;
} tune_ctx_t;

/* Benchmark one candidate on every rank; a failure anywhere fails it everywhere (gpu_measure). */
static duet_status_t tune_bench(void *user, const duet_config_t *cfg, double *med_p, double *min_p, double *max_p)
{
    tune_ctx_t *t = user;
    gpu_duet_job_t j;
    gpu_duet_job_init(&j, t->e, t->wl, cfg, t->b);
    gpu_stat_t s;
    gpu_measure(t->e, gpu_run_duet, &j, t->warmup, t->repeat, &s);
    if (!s.ok) {
        fprintf(stderr, "duet: tune: candidate %s gemm_wgs %d comm_wgs %d failed: %s\n", duet_mode_name(cfg->mode),
                cfg->gemm_wgs, cfg->comm_wgs, s.error);
        return DUET_ERR_BACKEND;
    }
    *med_p = s.med;
    *min_p = s.min;
    *max_p = s.max;
    return DUET_OK;
}

/* Rank 0's value to every rank. */
static duet_status_t tune_agree(void *user, int32_t *value)
{
    tune_ctx_t *t = user;
    return MPI_Bcast(value, 1, MPI_INT32_T, 0, t->e->comm) == MPI_SUCCESS ? DUET_OK : DUET_ERR_MPI;
}

static void tune_warn(void *user, const char *msg)
{
    tune_ctx_t *t = user;
    if (t->e->rank == 0)
        fprintf(stderr, "duet: tune: warning: %s\n", msg);
}

int cmd_tune_gpu(cli_common_t *c, const duet_tune_params_t *params, const char *hw_arg, int json, int *argc,
                 char ***argv)
{
    gpu_env_t e;
    gpu_env_params_t ep = {0};
    ep.heap_bytes = (size_t)2 << 30;
    ep.hw = hw_arg;
    int rc = gpu_env_init(&e, "tune", argc, argv, &ep);
    if (rc != CLI_EXIT_OK)
        return rc;
    duet_workload_t wl = c->wl;
    if (c->have_world && wl.world != e.world) {
        rc = cli_usage_error("tune", "--world %d but mpirun started %d ranks", wl.world, e.world);
        gpu_env_fini(&e);
        return rc;
    }
    wl.world = e.world;
    duet_tune_params_t p = *params;
    p.write_cache = e.rank == 0;
    gpu_bufs_t b;
    tune_ctx_t t = {&e, &wl, &b, 5, 20};
    p.warn = tune_warn;
    p.warn_user = &t;
    duet_tune_params_t r;
    duet_status_t st = duet_tune_params_resolve(&p, &r);
    if (st < 0 || (st = duet_workload_validate(&wl)) < 0) {
        rc = cli_fail("tune", st);
        gpu_env_fini(&e);
        return rc;
    }
    t.warmup = r.n_warmup;
    t.repeat = r.n_repeat;
    if ((st = gpu_bufs_alloc(&e, &wl, 42, &b)) < 0) {
        rc = cli_fail("tune", st);
        gpu_env_fini(&e);
        return rc;
    }
    duet_tune_result_t *res = calloc(1, sizeof(*res));
    st = res ? duet_tune_run(&wl, &e.hw, &r, tune_bench, tune_agree, &t, res) : DUET_ERR_NO_MEMORY;
    if (st < 0) {
        rc = cli_fail("tune", st);
    } else if (e.rank == 0) {
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "device", e.device);
            cJSON_AddNumberToObject(o, "world", e.world);
            cJSON_AddStringToObject(o, "key", res->key);
            cJSON_AddStringToObject(o, "db", res->db_path);
            cJSON_AddBoolToObject(o, "cached", res->cached);
            cJSON_AddBoolToObject(o, "fell_back", res->fell_back);
            cJSON_AddBoolToObject(o, "stored", res->stored);
            cJSON_AddBoolToObject(o, "model_led", res->model_led);
            cli_json_add_config(cJSON_AddObjectToObject(o, "winner"), &res->cfg);
            cli_json_add_num(o, "measured_ms", res->measured_ms);
            cli_json_add_num(o, "pred_ms", res->pred_ms);
            cJSON *arr = cJSON_AddArrayToObject(o, "candidates");
            for (int32_t i = 0; i < res->n_cands; i++) {
                const duet_tune_outcome_t *x = &res->cands[i];
                cJSON *q = cJSON_CreateObject();
                cli_json_add_config(q, &x->cfg);
                cJSON_AddBoolToObject(q, "ok", x->ok);
                cli_json_add_num(q, "ms", x->ms);
                cli_json_add_num(q, "min_ms", x->min_ms);
                cli_json_add_num(q, "max_ms", x->max_ms);
                cli_json_add_num(q, "pred_ms", x->pred_ms);
                cJSON_AddItemToArray(arr, q);
            }
            char *text = cJSON_Print(o);
            cJSON_Delete(o);
            if (text) {
                puts(text);
                cJSON_free(text);
            }
        } else {
            char tile[32];
            printf("%s: %s, %s gemm_wgs %d comm_wgs %d tile %s: %.4f ms measured, %.4f ms predicted\n",
                   res->cached ? "cache hit" : res->fell_back ? "every candidate failed; static default" : "tuned",
                   res->key, duet_mode_name(res->cfg.mode), res->cfg.gemm_wgs, res->cfg.comm_wgs,
                   duet_config_tile_str(&res->cfg, tile, sizeof(tile)), res->measured_ms, res->pred_ms);
            for (int32_t i = 0; i < res->n_cands && !res->cached; i++) {
                const duet_tune_outcome_t *x = &res->cands[i];
                printf("  %-10s %4d %4d %-15s %s %.4f ms (pred %.4f)\n", duet_mode_name(x->cfg.mode),
                       x->cfg.gemm_wgs, x->cfg.comm_wgs, duet_config_tile_str(&x->cfg, tile, sizeof(tile)),
                       x->ok ? "measured" : "FAILED  ", x->ms, x->pred_ms);
            }
        }
    }
    free(res);
    gpu_bufs_free(&e, &b);
    gpu_env_fini(&e);
    return rc;
}
