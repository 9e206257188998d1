/*
 * Fuzz the workload and size strings: the input is up to eight lines, read as
 *   GEMM "MxNxK", comm tensor "McxNc", collective, dtype, mode, GEMM tile, comm tile "CMxCN",
 *   and a last line of numbers "world root gemm_wgs comm_wgs group_m split_k"
 * (duet_dims_parse, duet_tile_parse and the name parsers). Whatever parses is assembled into a
 * workload and a configuration; what the rules accept must plan within the work limits, and a
 * small plan is priced and simulated (so the cost model and both policies see odd shapes).
 */
#include <stdio.h>
#include <string.h>

#include "duet/duet.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static duet_sim_ws_t *fz_ws;

static void fz_ws_free(void)
{
    duet_sim_ws_destroy(fz_ws);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fz_ws == NULL) {
        FZ_ASSERT(duet_sim_ws_create(&fz_ws) == DUET_OK);
        atexit(fz_ws_free);
    }
    char *text = fz_text(data, size), *line[8] = {""};
    int n = 0;
    for (char *s = text, *nl; n < 8 && s != NULL; s = nl ? nl + 1 : NULL, n++) {
        nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        line[n] = s;
    }
    for (int i = n; i < 8; i++)
        line[i] = "";

    duet_hw_t hw;
    FZ_ASSERT(duet_hw_builtin("h200", &hw) == DUET_OK);
    duet_workload_t wl = duet_workload_empty();
    int64_t d[4];
    for (int parts = 1; parts <= 4; parts++)
        (void)duet_dims_parse(line[0], parts, INT64_MAX, d); /* every arity on the same text */
    if (duet_dims_parse(line[0], 3, INT64_C(1) << 40, d) == DUET_OK) {
        wl.m = d[0];
        wl.n = d[1];
        wl.k = d[2];
    }
    if (duet_dims_parse(line[1], 2, INT64_C(1) << 40, d) == DUET_OK) {
        wl.mc = d[0];
        wl.nc = d[1];
    }
    (void)duet_collective_parse(line[2], &wl.coll);
    (void)duet_dtype_parse(line[3], &wl.dtype);
    int32_t mode = DUET_MODE_FUSED;
    (void)duet_mode_parse(line[4], &mode);
    duet_config_t cfg = duet_config_default(&hw, mode);
    (void)duet_tile_parse(line[5], &cfg.tile);
    if (duet_dims_parse(line[6], 2, 1 << 20, d) == DUET_OK) {
        cfg.cm = (int32_t)d[0];
        cfg.cn = (int32_t)d[1];
    }
    int world = 1, root = 0, gw = -1, cw = -1, gm = -1, sk = -1;
    (void)sscanf(line[7], "%4d %4d %5d %5d %2d %2d", &world, &root, &gw, &cw, &gm, &sk);
    wl.world = world;
    wl.root = root;
    if (gw >= 0)
        cfg.gemm_wgs = gw;
    if (cw >= 0)
        cfg.comm_wgs = cw;
    if (mode == DUET_MODE_FUSED)
        cfg.num_wgs = cfg.gemm_wgs + cfg.comm_wgs;
    if (gm >= 0)
        cfg.group_m = gm;
    if (sk >= 0)
        cfg.split_k = sk;

    duet_plan_t p;
    if (duet_workload_validate(&wl) == DUET_OK && duet_config_validate(&cfg, &wl, &hw) == DUET_OK) {
        int32_t rank = duet_plan_critical_rank(&wl);
        FZ_ASSERT(duet_plan_build_queues(&wl, &cfg, rank, &p) == DUET_OK);
        FZ_ASSERT(p.gemm.tiles <= DUET_MAX_GEMM_TILES && p.comm.queue_len <= DUET_MAX_COMM_TILES);
        /* Price and simulate plans small enough to keep the fuzzer fast (about 1 ms at most). */
        if (p.gemm.tiles + p.comm.queue_len <= 4096) {
            FZ_ASSERT(duet_plan_build(&wl, &cfg, rank, &p) == DUET_OK);
            duet_gemm_cost_t gc;
            duet_comm_cost_t cc;
            if (p.gemm.tiles > 0)
                FZ_ASSERT(duet_cost_gemm_tile(&hw, &p, p.gemm.tiles, &gc) == DUET_OK);
            if (p.comm_valid_tiles > 0)
                FZ_ASSERT(duet_cost_comm_tile(&hw, &p, &cc) == DUET_OK);
            duet_sim_result_t r;
            FZ_ASSERT(duet_sim_run(fz_ws, &duet_sim_policy_fluid, &hw, &p, NULL, &r) == DUET_OK);
            FZ_ASSERT(r.makespan_s > 0 && r.makespan_s < 1e300);
            if (cfg.mode == DUET_MODE_FUSED) {
                FZ_ASSERT(duet_sim_run(fz_ws, &duet_sim_policy_frozen, &hw, &p, NULL, &r) == DUET_OK);
                FZ_ASSERT(r.makespan_s > 0 && r.makespan_s < 1e300);
            }
        }
    }
    free(text);
    return 0;
}
