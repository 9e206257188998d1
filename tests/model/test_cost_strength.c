/*
 * The cost model's less travelled terms, worked by hand on the start profile
 * (tuning_data/h200_start.json: 21 GB/s per pushing CTA, 60 GB/s local, 1.08 us round trip, 8 KiB
 * pull window, 0.2 us per comm tile, 1 us prologue and 0.3 us overhead per GEMM pass): the comm
 * tiles of reduce_scatter, all_to_all and broadcast, the HBM bytes every collective puts on this
 * rank, the passes of a 256x256 tile, the L2 block's shrinking, and the link's ramp on a mesh.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

#define B_TILE (256.0 * 64 * 2) /* bytes of one 256 x 64 bf16 comm tile */

static duet_plan_t comm_plan(const duet_hw_t *hw, int32_t coll, int64_t mc, int64_t nc, int32_t world, int32_t rank)
{
    duet_workload_t wl = t_wl(0, 0, 0, coll, mc, nc, world);
    wl.root = 1;
    duet_config_t cfg = duet_config_default(hw, DUET_MODE_FUSED);
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, rank, &p), DUET_OK, "%s", duet_last_error());
    return p;
}

/*
 * reduce_scatter, W = 4, 4096 x 4096: this rank's 1024 output rows are 4 x 64 tiles. Each tile
 * pulls its rows from the 3 peers (3 x 32 KiB through an 8 KiB window: 12 round trips of 1.08 us),
 * reads its own, stores the sum: t = 12.96 us + 2 x 32 KiB / 60 GB/s + 0.2 us. HBM on this rank:
 * its read and write, and the peers' pulls of our rows (by symmetry equal to ours): 5 x 32 KiB.
 */
Test(cost_strength, reduce_scatter_tile_by_hand, T_TIMEOUT)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_plan_t p = comm_plan(&hw, DUET_COLL_REDUCE_SCATTER, 4096, 4096, 4, 0);
    cr_assert_eq(p.comm.queue_len, 256);
    duet_comm_cost_t c;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &c), DUET_OK);
    cr_assert_eq(c.traffic.pull_bytes, 3 * B_TILE);
    cr_assert_eq(c.traffic.push_bytes, 0.0);
    cr_assert_eq(c.traffic.local_read_bytes, B_TILE);
    cr_assert_eq(c.traffic.local_write_bytes, B_TILE);
    cr_assert_eq(c.traffic.pull_peers, 3);
    cr_assert_eq(c.round_trips, 12);
    cr_assert(t_rel_eq(c.t_pull, 12 * 1.08e-6, 1e-12));
    cr_assert_eq(c.t_push, 0.0);
    cr_assert(t_rel_eq(c.t_local, 2 * B_TILE / 60e9, 1e-12));
    cr_assert(t_rel_eq(c.t_alone, 12 * 1.08e-6 + 2 * B_TILE / 60e9 + 0.2e-6, 1e-12), "%.9g s", c.t_alone);
    cr_assert_eq(c.hbm_bytes, 5 * B_TILE);
    /* A window that does not divide the pull: 98304 B / 7680 B = 12.8 windows are 13 round trips. */
    hw.cta_pull_inflight_kib = 7.5;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &c), DUET_OK);
    cr_assert_eq(c.round_trips, 13);
    cr_assert(t_rel_eq(c.t_alone, 13 * 1.08e-6 + 2 * B_TILE / 60e9 + 0.2e-6, 1e-12), "%.9g s", c.t_alone);
}

/*
 * all_to_all, W = 4, 4096 x 4096 on rank 0: chunks of 1024 rows; of the 16 x 64 tiles the 4 x 64 of
 * rows 0-1023 stay home (read + local write), the other 768 go to one peer each (read + push).
 * The average tile: push 0.75 B, local write 0.25 B, read B; its time is the larger of the push
 * (0.75 x 32 KiB / 21 GB/s = 1.170 us) and the local copy (1.25 x 32 KiB / 60 GB/s = 0.683 us),
 * plus 0.2 us. HBM: read, local write and the peers' pushes into us (by symmetry, our push).
 */
Test(cost_strength, all_to_all_tiles_by_hand, T_TIMEOUT)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_plan_t p = comm_plan(&hw, DUET_COLL_ALL_TO_ALL, 4096, 4096, 4, 0);
    cr_assert_eq(p.comm.queue_len, 1024);
    cr_assert_eq(p.comm_total.push_bytes, 768 * B_TILE);
    cr_assert_eq(p.comm_total.local_write_bytes, 256 * B_TILE);
    duet_comm_cost_t c;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &c), DUET_OK);
    cr_assert_eq(c.traffic.push_bytes, 0.75 * B_TILE);
    cr_assert_eq(c.traffic.local_write_bytes, 0.25 * B_TILE);
    cr_assert_eq(c.traffic.push_peers, 1);
    cr_assert_eq(c.round_trips, 0);
    cr_assert(t_rel_eq(c.t_push, 0.75 * B_TILE / 21e9, 1e-12));
    cr_assert(t_rel_eq(c.t_local, 1.25 * B_TILE / 60e9, 1e-12));
    cr_assert(t_rel_eq(c.t_alone, 0.75 * B_TILE / 21e9 + 0.2e-6, 1e-12), "%.9g s", c.t_alone);
    cr_assert_eq(c.hbm_bytes, 2 * B_TILE);
    /* A tile of the own chunk is a local copy; one of another chunk a push. */
    cr_assert_eq(duet_cost_comm_tile_at(&hw, &p, 0, &c), DUET_OK);
    cr_assert(c.traffic.push_bytes == 0 && c.traffic.local_write_bytes == B_TILE);
    cr_assert(t_rel_eq(c.t_alone, 2 * B_TILE / 60e9 + 0.2e-6, 1e-12), "%.9g s", c.t_alone);
    cr_assert_eq(duet_cost_comm_tile_at(&hw, &p, 300, &c), DUET_OK);
    cr_assert(c.traffic.push_bytes == B_TILE && c.traffic.local_write_bytes == 0 && c.traffic.push_peers == 1);
    cr_assert(t_rel_eq(c.t_alone, B_TILE / 21e9 + 0.2e-6, 1e-12), "%.9g s", c.t_alone);
    cr_assert_eq(c.hbm_bytes, 2 * B_TILE);
}

/*
 * broadcast, W = 4, root 1, 2048 x 4096: the root's 8 x 64 tiles each read the tile, store it to
 * the root's own output and push it to the 3 peers: 3 x 32 KiB / 21 GB/s = 4.681 us against a
 * 1.092 us local copy, plus 0.2 us. Nothing comes back: the root's HBM carries its read and its
 * write only. A non-root rank has no tiles.
 */
Test(cost_strength, broadcast_root_tile_by_hand, T_TIMEOUT)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_plan_t p = comm_plan(&hw, DUET_COLL_BROADCAST, 2048, 4096, 4, 1);
    cr_assert_eq(p.comm.queue_len, 512);
    duet_comm_cost_t c;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &c), DUET_OK);
    cr_assert_eq(c.traffic.push_bytes, 3 * B_TILE);
    cr_assert_eq(c.traffic.local_read_bytes, B_TILE);
    cr_assert_eq(c.traffic.local_write_bytes, B_TILE);
    cr_assert_eq(c.traffic.push_peers, 3);
    cr_assert(t_rel_eq(c.t_push, 3 * B_TILE / 21e9, 1e-12));
    cr_assert(t_rel_eq(c.t_local, 2 * B_TILE / 60e9, 1e-12));
    cr_assert(t_rel_eq(c.t_alone, 3 * B_TILE / 21e9 + 0.2e-6, 1e-12), "%.9g s", c.t_alone);
    cr_assert_eq(c.hbm_bytes, 2 * B_TILE);
    /* With a slow local copy the store binds instead: 2 x 32 KiB / 10 GB/s = 6.55 us. */
    hw.cta_local_gbs = 10;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &c), DUET_OK);
    cr_assert(t_rel_eq(c.t_alone, 2 * B_TILE / 10e9 + 0.2e-6, 1e-12), "%.9g s", c.t_alone);
    duet_plan_t q = comm_plan(&hw, DUET_COLL_BROADCAST, 2048, 4096, 4, 0);
    cr_assert_eq(q.comm.queue_len, 0);
}

/*
 * all_reduce, W = 2: an owned tile pulls the peer's partial (32 KiB, 4 round trips), reads its
 * own, stores the sum and pushes it: 4.32 us + max(32 KiB / 21 GB/s, 2 x 32 KiB / 60 GB/s) +
 * 0.2 us. HBM: our read and write, plus what the peer pulls from us and pushes into us, by
 * symmetry equal to our own pull and push: 4 x 32 KiB.
 */
Test(cost_strength, all_reduce_hbm_counts_both_directions, T_TIMEOUT)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_plan_t p = comm_plan(&hw, DUET_COLL_ALL_REDUCE, 2048, 4096, 2, 0);
    duet_comm_cost_t c;
    cr_assert_eq(duet_cost_comm_tile(&hw, &p, &c), DUET_OK);
    cr_assert(c.traffic.pull_bytes == B_TILE && c.traffic.push_bytes == B_TILE);
    cr_assert_eq(c.hbm_bytes, 4 * B_TILE);
    cr_assert(t_rel_eq(c.t_alone, 4 * 1.08e-6 + B_TILE / 21e9 + 0.2e-6, 1e-12));
}

/*
 * A 256x256 tile holds 65536 accumulators, twice what duet's tile keeps (32768): it runs as two
 * passes, each with its own prologue (1 us) and fixed overhead (0.3 us). 128x256 (32768) is one.
 */
Test(cost_strength, a_two_pass_tile_pays_prologue_and_overhead_twice, T_TIMEOUT)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_workload_t wl = t_wl(4096, 4096, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    const struct {
        duet_gemm_tile_t t;
        double passes;
    } cases[] = {{{256, 256, 64}, 2}, {{128, 256, 64}, 1}, {{256, 128, 64}, 1}, {{64, 64, 64}, 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cfg.tile = cases[i].t;
        duet_plan_t p;
        cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK);
        duet_gemm_cost_t c;
        cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 132, &c), DUET_OK);
        cr_assert(t_rel_eq(c.t_prologue, cases[i].passes * 1e-6, 1e-12), "case %zu: %g", i, c.t_prologue);
        cr_assert(t_rel_eq(c.t_overhead, cases[i].passes * 0.3e-6, 1e-12), "case %zu: %g", i, c.t_overhead);
    }
}

/*
 * B rows beyond N in a two-pass tile: 256x256 at N = 100 loads 156 rows beyond N in each of its
 * two passes, 312 rows of 5 ns a K step: 1.560 us + the L2 step (98304 B at 1e6 GB/s / 132 SMs
 * = 13.0 ns) against the 1.1192 us matrix step (2 x 256 x 256 x 64 FLOP at 4096 x 1.83 GHz).
 */
Test(cost_strength, rows_beyond_n_count_in_every_pass, T_TIMEOUT)
{
    duet_hw_t hw = t_hw_h200_start();
    hw.l2_gbs = 1e6;
    hw.gemm_sm_contention = 0;
    hw.clock_heat = 0;
    hw.tile_oob_row_ns = 5.0;
    duet_workload_t wl = t_wl(4096, 100, 4096, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.tile = (duet_gemm_tile_t){256, 256, 64};
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK);
    duet_gemm_cost_t c;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 16, &c), DUET_OK);
    double mma = 2.0 * 256 * 256 * 64 / (4096 * 1.83e9);
    double l2 = (256.0 + 2 * 256) * 64 * 2 / (1e6 * 1e9 / 132);
    cr_assert(t_rel_eq(c.t_step_mma, mma, 1e-12));
    cr_assert(t_rel_eq(c.t_step_l2, l2, 1e-12), "%g", c.t_step_l2);
    cr_assert(t_rel_eq(c.t_step, l2 + 312 * 5e-9, 1e-12), "%g s", c.t_step);
}

/*
 * The L2 block of the running tiles shrinks its longer side first, the tile-columns on a tie.
 * 4096 x 4096 x 11264 (176 steps of 128 B per row: 22528 B a row over K) in 256x128 tiles, 64
 * running, group_m 8: the block starts at 8 tile-rows x 8 tile-columns, (8 x 256 + 8 x 128) rows x
 * 22528 B = 69.2 MB > 60 MiB. On the tie the columns halve: 8 x 4, (2048 + 512) x 22528 B = 57.7 MB
 * fits. 32 tiles of that block request 32 x 384 rows for 2560 distinct: hit 1 - 2560 / 12288.
 */
Test(cost_strength, l2_block_shrinks_columns_first_on_a_tie, T_TIMEOUT)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_workload_t wl = t_wl(4096, 4096, 11264, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    cfg.tile = (duet_gemm_tile_t){256, 128, 64};
    cfg.group_m = 8;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK);
    duet_gemm_cost_t c;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 64, &c), DUET_OK);
    cr_assert(t_rel_eq(c.l2_hit, 1.0 - 2560.0 / 12288.0, 1e-12), "hit %.6f", c.l2_hit);
}

/*
 * The K step's L2 time and the epilogue use one SM's share of L2 with every SM reading
 * (24 TB/s / 132), whatever number of SMs the GEMM runs on: 66 CTAs of a concurrent GEMM store a
 * 256x128 C tile (64 KiB) in 64 KiB / (24 TB/s / 132) = 0.3604 us.
 */
Test(cost_strength, l2_share_is_per_sm_of_the_device, T_TIMEOUT)
{
    duet_hw_t hw = t_hw_h200_start();
    duet_workload_t wl = t_wl(8192, 8192, 8192, DUET_COLL_NONE, 0, 0, 1);
    duet_config_t cfg = duet_config_default(&hw, DUET_MODE_CONCURRENT);
    cfg.gemm_wgs = 66;
    cfg.comm_wgs = 0;
    cfg.num_wgs = 66;
    duet_plan_t p;
    cr_assert_eq(duet_plan_build(&wl, &cfg, 0, &p), DUET_OK, "%s", duet_last_error());
    duet_gemm_cost_t c;
    cr_assert_eq(duet_cost_gemm_tile(&hw, &p, 66, &c), DUET_OK);
    double l2share = 24000e9 / 132;
    cr_assert(t_rel_eq(c.t_epilogue, 256.0 * 128 * 2 / l2share, 1e-12), "%g s", c.t_epilogue);
    cr_assert(t_rel_eq(c.t_step_l2, 384.0 * 64 * 2 / l2share, 1e-12), "%g s", c.t_step_l2);
}

/*
 * A mesh's links: a collective to p peers uses min(p, n_links) links; peak and the bytes in flight
 * for half of it both scale with them. MI300X: 42.86 GB/s and 16 KiB per link. With exactly the
 * half-saturation bytes in flight a link gives half its peak, whatever the number of links.
 */
Test(cost_strength, mesh_links_scale_peak_and_half_window, T_TIMEOUT)
{
    duet_hw_t a = t_hw("mi300x");
    for (int peers = 1; peers <= 9; peers++) {
        int links = peers < 7 ? peers : 7;
        double half = 16 * 1024.0 * links; /* bytes */
        double cap = duet_cost_link_capacity(&a, half, peers);
        cr_assert(t_rel_eq(cap, 0.5 * 42.86e9 * links, 1e-12), "%d peers: %g", peers, cap);
        cr_assert(t_rel_eq(duet_cost_link_capacity(&a, 3 * half, peers), 0.75 * 42.86e9 * links, 1e-12));
    }
    /* No peer (a world of one) still has the one link of the formula, not zero. */
    cr_assert(t_rel_eq(duet_cost_link_capacity(&a, 16 * 1024.0, 0), 0.5 * 42.86e9, 1e-12));
    /* A switch has one port whatever the peers. */
    duet_hw_t h = t_hw_h200_start();
    cr_assert(t_rel_eq(duet_cost_link_capacity(&h, 129 * 1024.0, 7), 0.5 * 380e9, 1e-12));
}
