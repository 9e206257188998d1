/*
 * duet example: predict the best split of the GPU's SMs between a GEMM and a collective, through the
 * installed library. Build it against an installed duet with pkg-config:
 *
 *     make -C examples                      # examples/Makefile
 *     cc -o predict predict.c $(pkg-config --cflags --libs duet)
 *
 * and run it as ./predict [PROFILE [M N K MC NC WORLD]]: PROFILE is a built-in name (h200, mi300x,
 * ...) or a profile file; the default workload is GEMM 8192x8192x8192 in bf16 beside an all_gather of
 * a 4096x8192 tensor over 2 ranks. It prints the best configuration and its predicted makespan, the
 * static default's, and exits 1 with the library's error text if anything fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <duet/duet.h>

int main(int argc, char **argv)
{
    const char *profile = argc > 1 ? argv[1] : "h200";
    duet_workload_t wl = duet_workload_empty();
    wl.m = wl.n = wl.k = 8192;
    wl.mc = 4096;
    wl.nc = 8192;
    wl.world = 2;
    wl.coll = DUET_COLL_ALL_GATHER;
    wl.dtype = DUET_DTYPE_BF16;
    if (argc == 8) {
        wl.m = atoll(argv[2]);
        wl.n = atoll(argv[3]);
        wl.k = atoll(argv[4]);
        wl.mc = atoll(argv[5]);
        wl.nc = atoll(argv[6]);
        wl.world = atoi(argv[7]);
    } else if (argc > 2) {
        fprintf(stderr, "usage: %s [PROFILE [M N K MC NC WORLD]]\n", argv[0]);
        return 2;
    }

    /* The library the program runs with must be the one its headers describe. */
    printf("duet %s (headers %s)\n", duet_version(), DUET_VERSION);
    if (strcmp(duet_version(), DUET_VERSION) != 0) {
        fprintf(stderr, "predict: library %s, headers %s\n", duet_version(), DUET_VERSION);
        return 1;
    }

    duet_hw_t hw;
    duet_sim_ws_t *ws = NULL;
    duet_sweep_result_t res;
    duet_sweep_params_t params = duet_sweep_default_params();
    duet_status_t st = duet_hw_load(profile, &hw);
    if (st >= 0)
        st = duet_workload_validate(&wl);
    if (st >= 0)
        st = duet_sim_ws_create(&ws);
    if (st >= 0)
        st = duet_sweep_run(ws, &hw, &wl, &params, &res);
    duet_sim_ws_destroy(ws);
    if (st < 0) {
        fprintf(stderr, "predict: %s\n", duet_last_error());
        return 1;
    }

    const duet_sweep_point_t *best = &res.points[0];
    char tile[32];
    printf("%s: GEMM %lldx%lldx%lld %s + %s of %lldx%lld over %d ranks: %zu configurations simulated\n", hw.name,
           (long long)wl.m, (long long)wl.n, (long long)wl.k, duet_dtype_name(wl.dtype), duet_collective_name(wl.coll),
           (long long)wl.mc, (long long)wl.nc, (int)wl.world, res.n);
    printf("best: %s, gemm_wgs %d, comm_wgs %d, tile %s, split_k %d: makespan %.6f ms\n",
           duet_mode_name(best->cfg.mode), (int)best->cfg.gemm_wgs, (int)best->cfg.comm_wgs,
           duet_config_tile_str(&best->cfg, tile, sizeof(tile)), (int)best->cfg.split_k, best->makespan_s * 1e3);
    printf("static default: %s, gemm_wgs %d: makespan %.6f ms\n", duet_mode_name(res.dflt.cfg.mode),
           (int)res.dflt.cfg.gemm_wgs, res.dflt.makespan_s * 1e3);
    duet_sweep_result_free(&res);
    return 0;
}
