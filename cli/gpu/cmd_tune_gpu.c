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

#include "base/base.h"
#include "cli/gpu/gpu.h"
#include "duet/tune.h"

/* The library reports warnings of rank 0 only. */
static void tune_warn(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "duet: tune: warning: %s\n", duet__q(msg));
}

/* The result of a tuning run as JSON (schema duet-tune/1; times in us, as the result holds them). */
static cJSON *tune_json(const gpu_env_t *e, const duet_tune_result_t *res)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "schema", "duet-tune/1");
    cJSON_AddStringToObject(o, "device", e->gpu->name);
    cJSON_AddNumberToObject(o, "world", e->world);
    cJSON_AddStringToObject(o, "key", res->key);
    cJSON_AddStringToObject(o, "db", res->db_path);
    cJSON_AddBoolToObject(o, "cached", res->cached);
    cJSON_AddBoolToObject(o, "fell_back", res->fell_back);
    cJSON_AddBoolToObject(o, "stored", res->stored);
    cJSON_AddBoolToObject(o, "model_led", res->model_led);
    cli_json_add_config(cJSON_AddObjectToObject(o, "winner"), &res->cfg);
    cli_json_add_num(o, "measured_us", res->measured_us);
    cli_json_add_num(o, "pred_us", res->pred_us);
    cJSON *arr = cJSON_AddArrayToObject(o, "candidates");
    for (int32_t i = 0; i < res->n_cands; i++) {
        const duet_tune_outcome_t *x = &res->cands[i];
        cJSON *q = cJSON_CreateObject();
        cli_json_add_config(q, &x->cfg);
        cJSON_AddBoolToObject(q, "ok", x->ok);
        cli_json_add_num(q, "us", x->us);
        cli_json_add_num(q, "min_us", x->min_us);
        cli_json_add_num(q, "max_us", x->max_us);
        cli_json_add_num(q, "pred_us", x->pred_us);
        cJSON_AddItemToArray(arr, q);
    }
    return o;
}

static void tune_text(FILE *f, const duet_tune_result_t *res)
{
    char tile[32];
    fprintf(f, "%s: %s, %s gemm_wgs %d comm_wgs %d tile %s: %.4f ms measured, %.4f ms predicted\n",
            res->cached      ? "cache hit"
            : res->fell_back ? "every candidate failed; static default"
                             : "tuned",
            res->key, duet_mode_name(res->cfg.mode), res->cfg.gemm_wgs, res->cfg.comm_wgs,
            duet_config_tile_str(&res->cfg, tile, sizeof(tile)), res->measured_us * 1e-3, res->pred_us * 1e-3);
    if (!res->cached && res->n_cands > 0)
        fprintf(f, "  %-10s %4s %4s %-15s %-8s %9s %9s\n", "mode", "GEMM", "comm", "tile", "", "meas ms", "pred ms");
    for (int32_t i = 0; i < res->n_cands && !res->cached; i++) {
        const duet_tune_outcome_t *x = &res->cands[i];
        fprintf(f, "  %-10s %4d %4d %-15s %-8s %9.4f %9.4f\n", duet_mode_name(x->cfg.mode), x->cfg.gemm_wgs,
                x->cfg.comm_wgs, duet_config_tile_str(&x->cfg, tile, sizeof(tile)), x->ok ? "measured" : "FAILED",
                x->us * 1e-3, x->pred_us * 1e-3);
    }
}

int cmd_tune_gpu(cli_common_t *c, const duet_tune_params_t *params, const char *hw_arg, int json, const char *out_path,
                 int *argc, char ***argv)
{
    gpu_env_t e;
    duet_measure_params_t mp = duet_measure_default_params();
    mp.ctx.heap_bytes = (size_t)2 << 30;
    mp.ctx.hw = hw_arg;
    int rc = gpu_env_init(&e, "tune", argc, argv, &mp);
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
    p.warn = tune_warn;
    duet_tune_result_t *res = calloc(1, sizeof(*res));
    duet_status_t st = res ? duet_measure_tune(e.m, &wl, NULL, &p, res) : DUET_ERR_NO_MEMORY;
    if (st < 0) {
        rc = cli_fail("tune", st);
    } else {
        /* Every rank measured every candidate: each names its own failures. */
        for (int32_t i = 0; i < res->n_cands && !res->cached; i++)
            if (!res->cands[i].ok)
                fprintf(stderr, "duet: tune: candidate %s gemm_wgs %d comm_wgs %d failed: %s\n",
                        duet_mode_name(res->cands[i].cfg.mode), res->cands[i].cfg.gemm_wgs, res->cands[i].cfg.comm_wgs,
                        duet__q(res->cands[i].error));
    }
    if (st >= 0 && e.rank == 0) {
        cli_out_t out;
        if ((rc = cli_out_open(&out, "tune", out_path)) == CLI_EXIT_OK) {
            if (json)
                rc = cli_out_json(&out, "tune", tune_json(&e, res));
            else
                tune_text(out.f, res);
            rc = cli_out_close(&out, "tune", rc);
        }
    }
    free(res);
    gpu_env_fini(&e);
    return rc;
}
