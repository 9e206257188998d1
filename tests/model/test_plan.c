/*
 * The plan: golden tile counts and remote bytes of the reference design, the GEMM swizzle, the
 * comm queue of each collective, bytes per peer.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

/* Build the golden case's workload; the GEMM is irrelevant to the comm queue. */
static duet_status_t golden_plan(const cJSON *c, duet_plan_t *plan)
{
    int32_t coll;
    cr_assert_eq(duet_collective_parse(cJSON_GetObjectItem(c, "collective")->valuestring, &coll), DUET_OK);
    const cJSON *cb = cJSON_GetObjectItem(c, "cb");
    duet_workload_t wl =
        t_wl(256, 256, 256, coll, (int64_t)t_num(c, "comm_m"), (int64_t)t_num(c, "comm_n"), (int32_t)t_num(c, "world"));
    wl.dtype = DUET_DTYPE_FP16;
    duet_hw_t hw = t_hw("mi300x");
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.cm = cJSON_GetArrayItem(cb, 0)->valueint;
    cfg.cn = cJSON_GetArrayItem(cb, 1)->valueint;
    return duet_plan_build(&wl, &cfg, duet_plan_critical_rank(&wl), plan);
}

/* The golden cases with mc not divisible by the world cannot be reduce-scattered or
 * all-to-all'ed exactly; duet refuses them where the reference design silently floored. */
static int needs_divisible(const cJSON *c)
{
    const char *coll = cJSON_GetObjectItem(c, "collective")->valuestring;
    int64_t mc = (int64_t)t_num(c, "comm_m");
    int32_t w = (int32_t)t_num(c, "world");
    return (strcmp(coll, "reduce_scatter") == 0 || strcmp(coll, "all_to_all") == 0) && mc % w != 0;
}

Test(plan, comm_tile_counts_equal_the_reference, T_TIMEOUT)
{
    cJSON *g = t_load_golden();
    cr_assert_not_null(g, "seed-golden.json not found");
    const cJSON *cases = cJSON_GetObjectItem(g, "n_comm_tiles");
    int checked = 0, refused = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        duet_plan_t plan;
        duet_status_t st = golden_plan(c, &plan);
        if (needs_divisible(c)) {
            cr_assert_eq(st, DUET_ERR_INVALID_ARG, "mc %% world != 0 must be refused");
            refused++;
            continue;
        }
        cr_assert_eq(st, DUET_OK, "%s", duet_last_error());
        cr_assert_eq(plan.comm.queue_len, (int64_t)t_num(c, "tiles"), "%s %gx%g W=%g",
                     cJSON_GetObjectItem(c, "collective")->valuestring, t_num(c, "comm_m"), t_num(c, "comm_n"),
                     t_num(c, "world"));
        checked++;
    }
    cr_assert_eq(checked, 28);
    cr_assert_eq(refused, 2);
    cJSON_Delete(g);
}

Test(plan, remote_bytes_equal_the_reference, T_TIMEOUT)
{
    cJSON *g = t_load_golden();
    cr_assert_not_null(g);
    const cJSON *c;
    int checked = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(g, "comm_remote_bytes_per_rank"))
    {
        duet_plan_t plan;
        duet_status_t st = golden_plan(c, &plan);
        if (needs_divisible(c)) {
            cr_assert_eq(st, DUET_ERR_INVALID_ARG);
            continue;
        }
        cr_assert_eq(st, DUET_OK);
        cr_assert_eq(plan.remote_bytes_tiles, t_num(c, "bytes"), "%s %gx%g W=%g: %.0f != %.0f",
                     cJSON_GetObjectItem(c, "collective")->valuestring, t_num(c, "comm_m"), t_num(c, "comm_n"),
                     t_num(c, "world"), plan.remote_bytes_tiles, t_num(c, "bytes"));
        checked++;
    }
    cr_assert_eq(checked, 28);
    cJSON_Delete(g);
}

Test(plan, gemm_swizzle_matches_hand_computed_order, T_TIMEOUT)
{
    duet_gemm_geom_t g;
    duet_gemm_tile_t t = {128, 128, 64};
    duet_gemm_geom_init(&g, 5 * 128, 3 * 128, 640, t, 2, 1);
    cr_assert_eq(g.tiles, 15);
    cr_assert_eq(g.k_iters, 10);
    /* Groups of 2 tile-rows walk down, then right; the last group is 1 row high. */
    const int64_t want[15][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, {2, 0}, {3, 0},
                                 {2, 1}, {3, 1}, {2, 2}, {3, 2}, {4, 0}, {4, 1}, {4, 2}};
    for (int64_t i = 0; i < 15; i++) {
        int64_t m, n;
        duet_gemm_tile_coords(&g, i, &m, &n);
        cr_assert(m == want[i][0] && n == want[i][1], "tile %lld -> (%lld, %lld)", (long long)i, (long long)m,
                  (long long)n);
    }
}

Test(plan, gemm_swizzle_is_a_permutation, T_TIMEOUT)
{
    const int64_t shapes[][3] = {{1, 8192, 8192}, {1000, 777, 64}, {8192, 4096, 512}, {300, 300, 300}};
    for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
        for (int ti = 0; ti < duet_tile_count(); ti++)
            for (int gm = 1; gm <= 9; gm += 4) {
                duet_gemm_geom_t g;
                duet_gemm_geom_init(&g, shapes[s][0], shapes[s][1], shapes[s][2], duet_tile_get(ti), gm, 1);
                char *seen = calloc((size_t)g.tiles, 1);
                for (int64_t i = 0; i < g.tiles; i++) {
                    int64_t m, n;
                    duet_gemm_tile_coords(&g, i, &m, &n);
                    cr_assert(m >= 0 && m < g.grid_m && n >= 0 && n < g.grid_n);
                    cr_assert_eq(seen[m * g.grid_n + n], 0, "tile (%lld, %lld) twice", (long long)m, (long long)n);
                    seen[m * g.grid_n + n] = 1;
                }
                free(seen);
            }
}

Test(plan, all_reduce_owner_blocks_cover_every_tile_once, T_TIMEOUT)
{
    /* 1000 x 333 over 3 ranks: 24 tiles, 8 per rank. 1024 x 2048 over 3: 4 x 32 = 128 tiles,
     * ceil(128 / 3) = 43 per rank, so the last rank's block has 42 real tiles and one pad. */
    const int64_t shapes[][2] = {{1000, 333}, {1024, 2048}};
    for (size_t s = 0; s < 2; s++) {
        int hits[200] = {0};
        int64_t total = 0, pads = 0;
        for (int32_t r = 0; r < 3; r++) {
            duet_comm_geom_t g;
            duet_comm_geom_init(&g, DUET_COLL_ALL_REDUCE, 3, r, 0, shapes[s][0], shapes[s][1], 256, 64);
            total = g.total;
            for (int64_t q = 0; q < g.queue_len; q++) {
                duet_comm_rect_t rect;
                duet_comm_tile(&g, q, &rect);
                if (!rect.valid) {
                    pads++;
                    continue;
                }
                hits[rect.tile]++;
                cr_assert(rect.rows >= 1 && rect.rows <= 256 && rect.cols >= 1 && rect.cols <= 64);
            }
        }
        for (int64_t t = 0; t < total; t++)
            cr_assert_eq(hits[t], 1, "tile %lld", (long long)t);
        cr_assert_eq(pads, s == 0 ? 0 : 1);
    }
}

Test(plan, edge_tiles_are_masked_and_exact_bytes_counted, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 1000, 333, 3);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK);
    /* The payload counts only real elements; the tile-granular figure counts whole tiles. */
    cr_assert_eq(p.remote_bytes, 1000.0 * 333 * 2 * 2);
    cr_assert_eq(p.remote_bytes_tiles, 24.0 * 256 * 64 * 2 * 2);
    cr_assert_eq(p.comm_total.local_read_bytes, 1000.0 * 333 * 2);
    duet_comm_rect_t r;
    duet_comm_tile(&p.comm, 23, &r);
    cr_assert(r.row0 == 768 && r.col0 == 320 && r.rows == 232 && r.cols == 13);
}

Test(plan, all_to_all_rows_straddling_a_chunk_go_to_two_peers, T_TIMEOUT)
{
    /* 12 rows over 4 ranks: chunks of 3 rows; tiles of 4 rows straddle chunk edges. */
    duet_workload_t wl = t_wl(0, 0, 0, DUET_COLL_ALL_TO_ALL, 12, 64, 4);
    duet_config_t cfg = duet_config_default(&(duet_hw_t){.n_sms = 132, .smem_kib = 227, .gemm_stages = 3}, 0);
    cfg.cm = 4;
    cfg.cn = 64;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 1, &p), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(p.comm.queue_len, 3);
    const double row = 64 * 2; /* bytes */
    duet_comm_traffic_t t;
    duet_plan_comm_tile_traffic(&p, 0, &t); /* rows 0-3: rows 0-2 to rank 0, row 3 stays */
    cr_assert(t.local_write_bytes == 1 * row && t.push_bytes == 3 * row && t.push_peers == 1);
    duet_plan_comm_tile_traffic(&p, 1, &t); /* rows 4-7: 4, 5 stay, 6, 7 to rank 2 */
    cr_assert(t.local_write_bytes == 2 * row && t.push_bytes == 2 * row && t.push_peers == 1);
    duet_plan_comm_tile_traffic(&p, 2, &t); /* rows 8-11: 8 to rank 2, 9-11 to rank 3 */
    cr_assert(t.local_write_bytes == 0 && t.push_bytes == 4 * row && t.push_peers == 2);
    cr_assert_eq(p.remote_bytes, 9 * row, "3 of the 12 rows stay home");
}

Test(plan, bytes_per_peer_and_queue_policy, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    duet_plan_t p;
    duet_workload_t ag = t_wl(4096, 4096, 4096, DUET_COLL_ALL_GATHER, 2048, 4096, 4);
    cr_assert_eq(duet_plan_build(&ag, &cfg, 2, &p), DUET_OK);
    double tensor = 2048.0 * 4096 * 2;
    cr_assert_eq(p.bytes_per_peer_out, tensor);
    cr_assert_eq(p.comm_total.push_bytes, 3 * tensor);
    cr_assert(p.gemm_home_ctas == 99 && p.comm_home_ctas == 33 && p.steal == 1);
    cr_assert(p.gemm_flops == 2.0 * 4096 * 4096 * 4096);

    duet_workload_t bc = t_wl(4096, 4096, 4096, DUET_COLL_BROADCAST, 2048, 4096, 4);
    bc.root = 3;
    cr_assert_eq(duet_plan_critical_rank(&bc), 3);
    cr_assert_eq(duet_plan_build(&bc, &cfg, 3, &p), DUET_OK);
    cr_assert(p.comm.queue_len == 512 && p.bytes_per_peer_out == tensor && p.bytes_per_peer_in == 0);
    cr_assert_eq(duet_plan_build(&bc, &cfg, 0, &p), DUET_OK);
    cr_assert(p.comm.queue_len == 0 && p.bytes_per_peer_in == tensor, "a non-root only receives");

    duet_workload_t ar = t_wl(4096, 4096, 4096, DUET_COLL_ALL_REDUCE, 2048, 4096, 2);
    cr_assert_eq(duet_plan_build(&ar, &cfg, 0, &p), DUET_OK);
    cr_assert(p.comm_total.pull_bytes == tensor / 2 && p.comm_total.push_bytes == tensor / 2);
    cr_assert_eq(p.bytes_per_peer_out, tensor, "own half pushed + the peer's pull of our partial");

    duet_config_t cc = duet_config_default(&hw, DUET_MODE_CONCURRENT);
    cr_assert_eq(duet_plan_build(&ar, &cc, 0, &p), DUET_OK);
    cr_assert(p.gemm_home_ctas == 116 && p.comm_home_ctas == 16 && p.steal == 0);
    cr_assert_eq(duet_plan_build(&ar, &cc, 2, &p), DUET_ERR_INVALID_ARG, "rank outside the world");
}

Test(plan, split_k_parts_cover_k_once_beside_their_c_tile, T_TIMEOUT)
{
    /* K = 1000: 16 steps of 64 (the last 40 wide). Split 3: 6 + 6 + 4 steps. */
    duet_gemm_geom_t g;
    duet_gemm_tile_t t = {128, 128, 64};
    duet_gemm_geom_init(&g, 5 * 128, 3 * 128, 1000, t, 2, 3);
    cr_assert_eq(g.tiles_mn, 15);
    cr_assert_eq(g.tiles, 45);
    cr_assert_eq(g.k_iters_total, 16);
    cr_assert_eq(g.k_iters, 6);
    const int64_t want_k[3][2] = {{0, 384}, {384, 768}, {768, 1000}};
    for (int64_t i = 0; i < g.tiles; i++) {
        int64_t mn, m, n, k0, k1, m1, n1;
        int32_t part;
        duet_gemm_tile_split(&g, i, &mn, &part);
        cr_assert_eq(mn, i / 3, "the parts of one C tile are consecutive in the queue");
        cr_assert_eq(part, i % 3);
        duet_gemm_part_krange(&g, part, &k0, &k1);
        cr_assert(k0 == want_k[part][0] && k1 == want_k[part][1], "part %d: [%lld, %lld)", (int)part, (long long)k0,
                  (long long)k1);
        /* Its C tile is the unsplit queue's tile mn. */
        duet_gemm_geom_t u;
        duet_gemm_geom_init(&u, g.m, g.n, g.k, t, 2, 1);
        duet_gemm_tile_coords(&g, i, &m, &n);
        duet_gemm_tile_coords(&u, mn, &m1, &n1);
        cr_assert(m == m1 && n == n1);
    }
    /* split_k 0 reads as 1. */
    duet_gemm_geom_init(&g, 5 * 128, 3 * 128, 1000, t, 2, 0);
    cr_assert_eq(g.split_k, 1);
    cr_assert_eq(g.tiles, 15);
    cr_assert_eq(g.k_iters, 16);
}

/* The kernels' plan (duet_plan_build_queues) is the model's plan without the traffic totals:
 * the same queues and policy for every collective, mode and rank; the same refusals. */
Test(plan, queues_only_plan_is_the_plan_without_traffic, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    for (int32_t coll = DUET_COLL_NONE; coll <= DUET_COLL_BROADCAST; coll++)
        for (int32_t mode = DUET_MODE_FUSED; mode <= DUET_MODE_CONCURRENT; mode++)
            for (int32_t rank = 0; rank < 4; rank++) {
                duet_workload_t wl = coll == DUET_COLL_NONE ? t_wl(1000, 3000, 512, coll, 0, 0, 4)
                                                            : t_wl(1000, 3000, 512, coll, 1000, 3000, 4);
                wl.root = 1;
                duet_config_t cfg = duet_config_default(&hw, mode);
                duet_plan_t full, q;
                cr_assert_eq(duet_plan_build(&wl, &cfg, rank, &full), DUET_OK, "%s", duet_last_error());
                cr_assert_eq(duet_plan_build_queues(&wl, &cfg, rank, &q), DUET_OK, "%s", duet_last_error());
                cr_assert_eq(memcmp(&q.gemm, &full.gemm, sizeof(q.gemm)), 0);
                cr_assert_eq(memcmp(&q.comm, &full.comm, sizeof(q.comm)), 0);
                cr_assert_eq(q.gemm_home_ctas, full.gemm_home_ctas);
                cr_assert_eq(q.comm_home_ctas, full.comm_home_ctas);
                cr_assert_eq(q.steal, full.steal);
                cr_assert_eq(q.remote_bytes, 0.0);
                cr_assert_eq(q.comm_valid_tiles, 0);
                if (coll != DUET_COLL_NONE && !(coll == DUET_COLL_BROADCAST && rank != 1))
                    cr_assert_gt(full.comm_valid_tiles, 0, "coll %d rank %d", coll, rank);
            }
    /* A bad configuration is refused by both, with the same message. */
    duet_workload_t wl = t_wl(1000, 3000, 512, DUET_COLL_ALL_GATHER, 1000, 3000, 4);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.split_k = 64; /* more parts than K steps */
    duet_plan_t p;
    cr_assert_lt(duet_plan_build(&wl, &cfg, 0, &p), 0);
    char msg[256];
    snprintf(msg, sizeof(msg), "%s", duet_last_error());
    cr_assert_lt(duet_plan_build_queues(&wl, &cfg, 0, &p), 0);
    cr_assert_str_eq(duet_last_error(), msg);
}
