/*
 * The origami-style cost model. docs/model.md has the equations with every symbol; this file is
 * those equations, one short formula each, with units in the comments.
 */
#include <math.h>
#include <string.h>

#include "duet/corpus.h"
#include "duet/model.h"
#include "model/internal.h"

#define US 1e-6 /* seconds per microsecond */
#define GB 1e9  /* bytes per GB (decimal, as bandwidths are quoted) */
#define KIB 1024.0
#define MIB (1024.0 * 1024.0)
#define DUET__GEMM_PASS_ACC 32768 /* fp32 accumulators of one pass of duet's GEMM tile (both vendors) */

double duet_cost_peak_flops(const duet_hw_t *hw, int32_t dtype)
{
    double per_cycle = dtype == DUET_DTYPE_FP16 ? hw->mma_flops_fp16 : hw->mma_flops_bf16;
    return per_cycle * hw->clock_ghz * 1e9 * hw->n_sms; /* FLOP/s */
}

/*
 * The SM clock under sustained matrix work. H200 boosts its clock while the board is below its
 * power limit and cool; a long GEMM draws the full power and heats the chip, and the clock falls.
 * With one factor for every GEMM (gemm_sm_contention alone), the fit to h200_world2.json priced
 * the operations of 8192^3 and 16384^3 (1.1 and 8.8 TFLOP) 4-7 % fast and those of 2048^3 (17
 * GFLOP) 8 % slow, held out; the GEMM alone on every SM, 256x256 tiles, measured 6-12 % slower
 * than that fit in 16384^3 and 3-11 % faster in 2048^3, 4096^3 and 512x8192x8192. The collective
 * shows the same clock: measured alone between the points of the 16384^3 shape (the chip stays
 * hot), the same 4 MB collective on 8 or 16 CTAs ran 11-44 % slower than between those of
 * 128x8192x8192, as a CTA that issues its stores one after another runs at the clock. How long the
 * GPU works at full power is the GEMM's matrix work T at the device's peak rate (us): the factor
 * grows from 1 (no GEMM; 0.14 us for 1x8192x8192) to 1 + clock_heat, half-way at T = heat_half_us.
 */
double duet_cost_clock_heat(const duet_hw_t *hw, const duet_plan_t *plan)
{
    const duet_gemm_geom_t *g = &plan->gemm;
    if (g->tiles == 0 || hw->clock_heat <= 0)
        return 1.0;
    double t_us = 2.0 * (double)g->m * g->n * g->k / duet_cost_peak_flops(hw, plan->wl.dtype) / US; /* us */
    /* The board's power is drawn by the SMs that run the GEMM: on fewer of them the clock stays
     * nearer its boost (issue 27: the GEMM alone on 66 SMs measured up to 36 % faster than the
     * 132-SM time scaled). The share is the CTAs that may run GEMM tiles, at most one per tile;
     * heat_sm_exp 0 leaves the factor as it was. */
    double share = 1.0;
    if (hw->heat_sm_exp > 0) {
        double busy = plan->gemm_ctas < g->tiles ? (double)plan->gemm_ctas : (double)g->tiles;
        share = fmin(1.0, busy / (double)hw->n_sms);
        share = pow(share, hw->heat_sm_exp);
    }
    return 1.0 + hw->clock_heat * share * t_us / (t_us + hw->heat_half_us);
}

/*
 * Operand rows a GEMM tile loads from beyond the matrix, per K step, averaged over the tiles (one
 * price serves every tile). duet's tile (backend/gemm_tile.h, gemm_hopper.h) holds at most 32768
 * fp32 accumulators: a larger tile runs as passes of PM = BM / passes rows, and every pass loads
 * its A box and all of B's box, also a pass whose rows all lie beyond M (256x256 at M <= 128: the
 * second pass's box is zero-filled whole). The kernels skip such a pass now (both tiles: nothing
 * of it is loaded, computed or stored), but the profiles' tile_oob_row_ns and tile efficiencies
 * were fitted on kernels that ran it, so the price keeps it until the next fit (256x256 on such an M
 * is priced as if the pass ran). Only the last tile-row (A rows beyond M) and the last tile-column
 * (B rows beyond N) have such rows.
 */
static double duet__oob_rows(const duet_gemm_geom_t *g)
{
    int64_t passes = duet_cdiv((int64_t)g->bm * g->bn, DUET__GEMM_PASS_ACC);
    int64_t pm = g->bm / passes;
    int64_t m_last = g->m - (g->grid_m - 1) * g->bm; /* rows of the last tile-row inside M */
    int64_t n_last = g->n - (g->grid_n - 1) * g->bn;
    double a = 0;
    for (int64_t p = 0; p < passes; p++) {
        int64_t lo = p * pm, beyond = lo + pm - m_last; /* rows of this pass's box beyond M */
        a += (double)(beyond <= 0 ? 0 : duet_min64(pm, beyond));
    }
    double b = (double)passes * (double)(g->bn - n_last); /* every pass of the last column loads all of B's box */
    return a / (double)g->grid_m + b / (double)g->grid_n;
}

/*
 * L2 reuse of the group_m swizzle (\"tile-of-tiles\", as in AMD's origami GEMM model): `active` tiles that run
 * together cover l2_m tile-rows x l2_n tile-columns. Per K step they request
 * active * (rm + rn) * BK elements but only (l2_m * rm + l2_n * rn) * BK are distinct; the rest
 * hit in L2. The block shrinks until its A and B panels over the whole K fit in L2. rm and rn are
 * the rows of A and B a tile's boxes hold: BM and BN for the HBM traffic the model has always
 * priced, or the rows inside the matrix for what the copies really fetch (duet__box_rows).
 */
static double duet__l2_hit_rows(const duet_hw_t *hw, const duet_gemm_geom_t *g, int64_t active, double eb, double rm,
                                double rn)
{
    if (active <= 1 || g->tiles <= 1)
        return 0.0;
    if (active > g->tiles)
        active = g->tiles;
    int64_t l2_m = duet_min64(g->group_m, g->grid_m);
    int64_t l2_n = duet_min64(g->grid_n, duet_cdiv(active, l2_m));
    double k_bytes = (double)g->k_iters * g->bk * eb; /* bytes of one row of A or B over K */
    double cap = hw->l2_mib * MIB;
    while (((double)l2_m * rm + (double)l2_n * rn) * k_bytes > cap && (l2_m > 1 || l2_n > 1)) {
        if (l2_n >= l2_m)
            l2_n = duet_cdiv(l2_n, 2);
        else
            l2_m = duet_cdiv(l2_m, 2);
    }
    double tiles_in_block = (double)duet_min64(active, l2_m * l2_n);
    double unique = (double)l2_m * rm + (double)l2_n * rn;
    double requested = tiles_in_block * (rm + rn);
    double hit = 1.0 - unique / requested;
    return hit > 0 ? hit : 0.0;
}

static double duet__l2_hit(const duet_hw_t *hw, const duet_gemm_geom_t *g, int64_t active, double eb)
{
    return duet__l2_hit_rows(hw, g, active, eb, (double)g->bm, (double)g->bn);
}

/*
 * Operand box rows of 128 bytes one queue tile's copies (TMA) fetch from beyond L2 or zero-fill,
 * over its K range. On H200 the GEMM alone at M = 1 and 16 (132 CTAs, the B stream from HBM and
 * 127-255 zero-filled A rows per box) moves 21-24 thousand such rows a us with 32 or 64 SMs
 * busy and 33-41 thousand with 128, whatever the tile and split, counting a zero-filled row like
 * a fetched one; B's fetched rows alone give 7-14 thousand, and rows served by L2 (the A panel
 * that the tiles of a 128-row GEMM share) run at 36-75 thousand a us, so they do not count. The
 * fetched rows are those inside the matrix that miss L2 (the reuse of duet__l2_hit_rows over the
 * rows inside M and N: at M = 1 a tile's A box holds one row, not 128 shared ones); the
 * zero-filled ones are duet__oob_rows, every pass.
 */
static double duet__box_rows(const duet_hw_t *hw, const duet_gemm_geom_t *g, int64_t active, double eb)
{
    double rm = (double)g->m / (double)g->grid_m, rn = (double)g->n / (double)g->grid_n; /* rows inside, per tile */
    double hit = duet__l2_hit_rows(hw, g, active, eb, rm, rn);
    double row_units = (double)g->bk * eb / 128.0; /* 128-byte rows per box row */
    /* A tile of several passes streams all of its B panel over its K range in every pass; the
     * next pass finds it in L2 only if the panels of the tiles running beside it fit there
     * (one per tile-column and K part, at most one per running tile). */
    int64_t passes = duet_cdiv((int64_t)g->bm * g->bn, DUET__GEMM_PASS_ACC);
    int64_t running = duet_min64(active > 0 ? active : 1, g->tiles);
    double panels = (double)duet_min64(running, g->grid_n * g->split_k);
    double panel_bytes = rn * (double)g->k_iters * g->bk * eb;
    double b_reads = passes > 1 && panels * panel_bytes > hw->l2_mib * MIB ? (double)passes : 1.0;
    return ((1.0 - hit) * (rm + b_reads * rn) + duet__oob_rows(g)) * row_units * (double)g->k_iters;
}

double duet_cost_box_capacity(const duet_hw_t *hw, double busy)
{
    /* On H200 a GEMM on 32 or 64 SMs reaches about half of what one on 128 does (21-24 against
     * 33-41 thousand rows a us), and 32 no less than 64: below some SM count the SMs that run
     * the tiles reach only a part of the chip's copy and L2 paths, box_min_share of them. */
    double share = busy / (double)hw->n_sms;
    share = share < hw->box_min_share ? hw->box_min_share : share > 1.0 ? 1.0 : share;
    return hw->box_rows_per_us * 1e6 * share; /* rows/s */
}

/*
 * The CTAs a GEMM queue keeps busy on average over its span, when `ctas` CTAs drain it in waves:
 * the K steps of all its queue tiles over the K steps of its critical path, each kind of queue
 * tile (whole C tiles, K parts) taking ceil(n / ctas) waves of its own K steps. A queue of whole
 * waves keeps min(tiles, ctas) busy; a last wave of r < ctas tiles leaves ctas - r idle for a
 * wave of K steps, which stream-K fills with K parts (duet_plan_stream_k_choose). CTAs, at most
 * min(tiles, ctas).
 */
static double duet__gemm_mean_busy(const duet_gemm_geom_t *g, int64_t ctas)
{
    if (g->tiles == 0)
        return 0.0;
    if (ctas <= 0)
        ctas = g->tiles;
    const int64_t whole = g->split_k > 1 ? g->split_from : g->tiles, parts = g->tiles - whole;
    const double work = (double)whole * (double)g->k_iters_total + (double)parts * (double)g->k_iters;
    const double span =
        (double)duet_cdiv(whole, ctas) * (double)g->k_iters_total + (double)duet_cdiv(parts, ctas) * (double)g->k_iters;
    return work / span;
}

/* duet_cost_gemm_tile() for a plan whose GEMM keeps `mean_busy` CTAs busy on average
 * (duet__gemm_mean_busy of the plan's real queue, which a stream-K part's priced view lacks). */
static duet_status_t duet__gemm_tile_cost(const duet_hw_t *hw, const duet_plan_t *plan, int64_t active,
                                          double mean_busy, duet_gemm_cost_t *cost_p)
{
    const duet_gemm_geom_t *g = &plan->gemm;
    duet_gemm_cost_t c;
    memset(&c, 0, sizeof(c));
    if (g->tiles == 0) {
        *cost_p = c;
        return DUET_OK;
    }
    double eb = duet_dtype_bytes(plan->wl.dtype);
    int32_t dt = plan->wl.dtype;
    /* Vendor mode prices the vendor library's kernel, whose tile the plan carries
     * (duet_plan_set_gemm_kernel()), at its own efficiency and tile class. */
    int vendor = plan->cfg.mode == DUET_MODE_VENDOR;
    double eff =
        vendor ? (dt == DUET_DTYPE_FP16 ? hw->vendor_gemm_eff_fp16 : hw->vendor_gemm_eff_bf16) *
                     duet_hw_vendor_tile_eff(hw, plan->cfg.tile)
               : (dt == DUET_DTYPE_FP16 ? hw->gemm_eff_fp16 : hw->gemm_eff_bf16) * duet_hw_tile_eff(hw, plan->cfg.tile);
    /* The SMs that run the operation's GEMM: min(tiles, the CTAs that may run its tiles, which in
     * fused mode are all of them: every CTA ends on the GEMM queue). */
    int64_t gemm_sms = plan->gemm_ctas;
    int64_t busy = duet_min64(g->tiles, gemm_sms > 0 ? gemm_sms : g->tiles);
    /* The vendor libraries' fast kernels want 16-byte aligned rows: with K or N not a multiple of 8
     * elements cuBLASLt falls back to kernels several times slower (on H200, 60-230 TFLOP/s where
     * aligned neighbours reach 500-770: the one-GPU corpora of 2026-12-03), about twice as slow
     * with A and B off 16 bytes (K) as with C alone (N). duet stages such operands
     * (duet_plan_t.stage_k) and is priced by its own terms. Those kernels follow the SM-count
     * target (CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET) only in part: on H200 some took the same time
     * at targets of 33 and 132 SMs (704x11008x8817: 1251-1262 us), most 1.05-1.2x longer at 33, a
     * few twice as long. They run as if on busy + (1 - r) * (full - busy) SMs, r =
     * vendor_ragged_sm_resp, full = min(tiles, SMs): r = 0 ignores the target, 1 follows it. The
     * plan runs the kernel on `busy` workers, so each worker's rate carries the ratio. */
    if (vendor && (plan->wl.k % 8 != 0 || plan->wl.n % 8 != 0)) {
        eff *= duet_cost_vendor_ragged(hw, &plan->wl);
        double full = (double)duet_min64(g->tiles, hw->n_sms), b = (double)busy;
        if (b < full)
            eff *= (b + (1.0 - hw->vendor_ragged_sm_resp) * (full - b)) / b;
    }
    double sm_rate =
        (dt == DUET_DTYPE_FP16 ? hw->mma_flops_fp16 : hw->mma_flops_bf16) * hw->clock_ghz * 1e9 * eff; /* FLOP/s */
    double l2_share = hw->l2_gbs * GB / hw->n_sms; /* bytes/s one SM draws from L2 when all read */

    double step_flops = 2.0 * g->bm * g->bn * g->bk;          /* FLOP per K step */
    double step_bytes = (double)(g->bm + g->bn) * g->bk * eb; /* distinct A + B bytes per K step */
    /* duet's tile holds at most DUET__GEMM_PASS_ACC accumulators: a larger tile (256x256) runs as
     * passes over K, each reading its own rows of A and all of B's box again from L2. */
    double passes = vendor ? 1.0 : (double)duet_cdiv((int64_t)g->bm * g->bn, DUET__GEMM_PASS_ACC);
    double step_l2 = (double)(g->bm + passes * g->bn) * g->bk * eb; /* A + B bytes per K step from L2 */
    c.k_iters = g->k_iters;
    c.t_step_mma = step_flops / sm_rate;
    c.t_step_l2 = step_l2 / l2_share;
    /* The vendor library's L2 reuse and copies are its own: its K step is priced by its matrix
     * rate alone, with two terms of the chip. Its clock: the K loop slows under sustained matrix
     * work as duet's does (duet_cost_clock_heat), by its own constants: duet's kernel draws its
     * power differently (fitted on the vendor rows, duet's factor priced its short GEMMs slow).
     * And its ceiling: on H200 the largest aligned cuBLASLt GEMMs ran at 6.4-6.7 TFLOP/s per SM on
     * 33 SMs, 6.0-6.4 on 99 and 5.7-5.9 on all 132 (757-776 TFLOP/s; one-GPU corpora of
     * 2026-12-03): each SM given to it adds less, 1 + vendor_sm_contention * busy / S on the step. */
    c.t_step = vendor ? c.t_step_mma : fmax(c.t_step_mma, c.t_step_l2);
    if (vendor) {
        c.t_step *= 1.0 + hw->vendor_sm_contention * (double)duet_min64(busy, hw->n_sms) / hw->n_sms;
        double t_us = 2.0 * (double)g->m * g->n * g->k / duet_cost_peak_flops(hw, plan->wl.dtype) / US;
        c.t_step *= 1.0 + hw->vendor_clock_heat * t_us / (t_us + hw->vendor_heat_half_us);
    }
    /* Rows of an operand box beyond the matrix are zero-filled by the copy engine (TMA), row by
     * row: on H200 a tile whose boxes run past a small M takes a K step in proportion to those
     * rows, not to its matrix work (1x8192x8192 alone: 0.62 us a step for 128x256 and 1.22 us for
     * 256x128, 127 and 255 rows beyond M, about 5 ns a row, while the in-bound B rows cost little).
     * The fill is part of the load, which the pipelined K loop overlaps with the matrix work of
     * the stage before (STAGES - 1 k-tiles in flight): the step is the max of the two, not their
     * sum. tile_oob_row_ns is the time per row of 128 bytes (BK 64 fp16) per K step. */
    if (!vendor) {
        c.t_step = fmax(c.t_step_mma, c.t_step_l2 + duet__oob_rows(g) * hw->tile_oob_row_ns * 1e-9);
        /* The more SMs run the GEMM, the slower each one's K step: the clocks fall under the
         * board's power limit and the SMs queue at L2 (on H200 duet's 256x256 tile takes 1.30 us a
         * step on 32 SMs and 1.63 us on all 132). A factor 1 + gemm_sm_contention * b / S on the
         * step, b the SMs the GEMM keeps busy on average over its span (duet__gemm_mean_busy). It
         * is one factor for the operation (clocks move over milliseconds), not tile by tile, so
         * every fused split of one shape sees the same factor, and an SM given to the GEMM always
         * adds throughput (b / (1 + c b / S) grows with b, and b with the CTAs). Over waves of
         * n_i tiles the steps' factors sum to waves * (1 + c mean(n_i) / S): the mean prices the
         * operation as factors following each wave would. With the peak, min(tiles, CTAs), a last
         * wave of r < CTAs tiles was priced as a full one: within a row of the H100 random sets
         * (bench/results/gemm-random-h100-seed1796646262.json, sm-budget-h100-seed1796646494.json)
         * the data-parallel candidates measured faster than predicted in proportion to that
         * wave's overcharge (slopes 0.87 and 1.19 of it; 0.03 and 0.36 with the mean:
         * tools/gemm_pick_report.py --waves), and stream-K, which fills the wave with K parts,
         * was picked against that overcharge. */
        const double b_mean = fmin(mean_busy, (double)hw->n_sms);
        c.t_step *= 1.0 + hw->gemm_sm_contention * b_mean / hw->n_sms;
        /* And the clock falls with the operation's sustained matrix work (duet_cost_clock_heat). */
        c.t_step *= duet_cost_clock_heat(hw, plan);
        /* The chip moves only so many operand box rows a us past L2 or into zero fill
         * (duet__box_rows, duet_cost_box_capacity): the SMs that run the GEMM share them, and
         * one's K step takes at least its rows at its share. The share follows the operation's
         * busy SMs, min(tiles, CTAs), not the tiles running at each instant, and it
         * bounds the K loop only: the epilogue (the C store, a K split's partial sums) follows
         * the loop. As a resource of the simulator divided among the running tiles over their
         * whole time, it hid the partial sums of 128x256 in two K parts at M = 128 under the
         * rows' limit (priced 13 % fast). */
        double b = (double)duet_min64(busy, hw->n_sms);
        c.box_rows = duet__box_rows(hw, g, active, eb);
        c.t_step = fmax(c.t_step, c.box_rows / (double)g->k_iters * b / duet_cost_box_capacity(hw, b));
    }
    c.t_prologue = vendor ? 0.0 : passes * hw->tile_prologue_us * US; /* every pass fills the pipeline */
    /* Epilogue, bytes per queue tile: the C tile (once per C tile, so 1/split_k of it per part),
     * issued into L2 at the SM's share, and with a K split the fp32 partial the part stores plus
     * the S partials the summing part reads back (its own included: backend/splitk.h), charged
     * to every part: 4 bm bn (1 + S) bytes at splitk_sm_gbs, one SM streaming them alone. The read
     * is on the C tile's critical path: averaged over the parts (1 + 1 blocks each) the model
     * priced splits of 3 or more parts 20 % too fast against the bench runs' 3531 K-split points,
     * and with 1 + S blocks at 30 GB/s their median error is that of the unsplit points. The
     * part stores its whole block (rows beyond M and N too), but the sum reads only the elements
     * inside C (duet__splitk_finish skips the others; the NVIDIA sum since, by bulk copies,
     * duet__bulk_splitk_finish, copies only the rows inside M, whole): at M = 1 a 128-row block is
     * summed from one row. Counting the whole block there priced the 256-part splits of the GEMM
     * alone at M = 1-128 (two waves on 132 SMs) 18-28 % slow. The corpus is of the plain sum;
     * splitk_sm_gbs will rise when a corpus of the bulk-copy sum is fitted. */
    double S = (double)g->split_k;
    double c_bytes = (double)g->bm * g->bn * eb / S;
    double in_c =
        ((double)g->m / (double)g->grid_m) * ((double)g->n / (double)g->grid_n); /* elements inside C, per tile */
    double part_bytes = S > 1 ? 4.0 * ((double)g->bm * g->bn + S * in_c) : 0.0;
    c.t_epilogue = c_bytes / l2_share + part_bytes / (hw->splitk_sm_gbs * GB);
    /* Where C's rows start off 16 bytes (N % 8 != 0) the tile can neither store C by tensor-memory
     * copies nor 16 bytes at a time: its threads store 2-4 bytes each, bounds-checked, and the
     * store, not L2, sets the epilogue's pace. On H200 the GEMM alone with such an N measured
     * 1.3-2x the time of its aligned neighbours at small K (13760x2286x704: 0.213 ms against 0.113
     * predicted without this term; corpus of the one-GPU grid, 2026-12-03). Charged as the C
     * elements inside the tile at c_ragged_sm_gbs per SM; 0 leaves the aligned pricing. */
    if (!vendor && hw->c_ragged_sm_gbs > 0 && g->n % 8 != 0)
        c.t_epilogue = fmax(c.t_epilogue, in_c * eb / S / (hw->c_ragged_sm_gbs * GB));
    /* The fixed cost is a pass's: every pass drains the matrix pipeline and syncs the CTA around
     * its C staging (a 256x256 tile runs two). At 4096 x 8192 x 512 the GEMM alone in 256x256 (4
     * waves, 8 K steps a pass) measures as long as 128x256 (8 waves); charged once per tile, the
     * model priced it 9 % fast there and picked it over 128x256 (docs/calibration.md). */
    /* The vendor kernel's fixed cost per tile (fill, drain, epilogue sync) is its own constant. */
    c.t_overhead = vendor ? hw->vendor_tile_us * US : passes * hw->tile_overhead_us * US;
    c.t_sm = (double)g->k_iters * c.t_step + c.t_prologue + c.t_epilogue + c.t_overhead;
    c.l2_hit = duet__l2_hit(hw, g, active, eb);
    /* The partials written reach HBM when L2 evicts them; the ones read back are recent. */
    double part_hbm = S > 1 ? 4.0 * g->bm * g->bn : 0.0;
    c.hbm_bytes = (1.0 - c.l2_hit) * step_bytes * (double)g->k_iters + c_bytes + part_hbm;
    /* The vendor's kernels share operands beyond what the group_m swizzle gives (thread-block
     * clusters multicast a panel to several SMs, and the library rasterizes its grid): they move
     * a share of the bytes. On H200 the vendor GEMMs of few columns (N 256-900, M in thousands)
     * ran 1.2-1.4x faster than the model's HBM bound with all of them. */
    if (vendor)
        c.hbm_bytes *= hw->vendor_hbm_share;
    c.flops = 2.0 * g->bm * g->bn * (double)g->k / S;
    *cost_p = c;
    return DUET_OK;
}

duet_status_t duet_cost_gemm_tile(const duet_hw_t *hw, const duet_plan_t *plan, int64_t active,
                                  duet_gemm_cost_t *cost_p)
{
    return duet__gemm_tile_cost(hw, plan, active, duet__gemm_mean_busy(&plan->gemm, plan->gemm_ctas), cost_p);
}

duet_status_t duet_cost_gemm_tile_kind(const duet_hw_t *hw, const duet_plan_t *plan, int64_t active, int part,
                                       duet_gemm_cost_t *cost_p)
{
    const duet_gemm_geom_t *g = &plan->gemm;
    if (g->split_from == 0)
        return duet_cost_gemm_tile(hw, plan, active, cost_p);
    /* The plan's own units (no second derivation): its tiling, and its split for the parts. */
    duet_plan_t v = *plan;
    duet_gemm_geom_init(&v.gemm, g->m, g->n, g->k, plan->cfg.tile, g->group_m, part ? g->split_k : 1);
    v.gemm.tiles = g->tiles;
    return duet__gemm_tile_cost(hw, &v, active, duet__gemm_mean_busy(g, plan->gemm_ctas), cost_p);
}

/* A wave of `active` tiles is bound by the SM or by its share of HBM, whichever is slower. */
static double duet__wave_tile_s(const duet_hw_t *hw, const duet_gemm_cost_t *c, int64_t active)
{
    return fmax(c->t_sm, c->hbm_bytes * (double)active / (hw->hbm_gbs * GB));
}

/* Stream-K: the whole tiles' waves, then the parts' rounds, each as the uniform queue prices them. */
static double duet__gemm_static_stream_k(const duet_hw_t *hw, const duet_plan_t *plan, int64_t ctas)
{
    const duet_gemm_geom_t *g = &plan->gemm;
    const int64_t counts[2] = {g->split_from, g->tiles - g->split_from};
    double t = 0.0;
    for (int part = 0; part < 2; part++) {
        int64_t active = duet_min64(ctas, g->tiles);
        duet_gemm_cost_t c;
        duet_cost_gemm_tile_kind(hw, plan, active, part, &c);
        double t_tile = duet__wave_tile_s(hw, &c, active);
        t += (double)duet_cdiv(counts[part], ctas) * (t_tile + hw->dequeue_gemm_us * US);
    }
    return duet_cost_stage_s(hw, plan) + t + hw->launch_us * US;
}

double duet_cost_gemm_static_s(const duet_hw_t *hw, const duet_plan_t *plan, int64_t ctas)
{
    const duet_gemm_geom_t *g = &plan->gemm;
    if (g->tiles == 0 || ctas <= 0)
        return 0.0;
    if (g->split_from > 0)
        return duet__gemm_static_stream_k(hw, plan, ctas);
    int64_t active = duet_min64(ctas, g->tiles);
    duet_gemm_cost_t c;
    duet_cost_gemm_tile(hw, plan, active, &c);
    double t_tile = duet__wave_tile_s(hw, &c, active);
    double waves = (double)duet_cdiv(g->tiles, ctas);
    return duet_cost_stage_s(hw, plan) + waves * (t_tile + hw->dequeue_gemm_us * US) + hw->launch_us * US;
}

double duet_cost_vendor_ragged(const duet_hw_t *hw, const duet_workload_t *wl)
{
    /* The library picks its kernel by the alignment of every matrix: A and B rows start on
     * 2 K bytes, C rows on 2 N bytes. On H200 K odd ran its GEMMs at 105-135 TFLOP/s, K even off 8
     * at 165-200; N odd (A and B aligned) at 60-80, N even off 8 at 200-230 (one-GPU corpora of
     * 2026-12-03). One kernel runs, so the worst of the two decides. */
    double f = 1.0;
    if (wl->k % 8 != 0)
        f = fmin(f, wl->k % 2 != 0 ? hw->vendor_ragged_eff : hw->vendor_ragged_k4_eff);
    if (wl->n % 8 != 0)
        f = fmin(f, wl->n % 2 != 0 ? hw->vendor_ragged_n_eff : hw->vendor_ragged_n4_eff);
    return f;
}

double duet_cost_vendor_gemm_s(const duet_hw_t *hw, const duet_plan_t *plan)
{
    const duet_gemm_geom_t *g = &plan->gemm;
    int64_t sms = plan->gemm_ctas > 0 ? plan->gemm_ctas : hw->n_sms;
    if (g->tiles == 0)
        return 0.0;
    int64_t active = duet_min64(sms, g->tiles);
    duet_gemm_cost_t c;
    duet_cost_gemm_tile(hw, plan, active, &c);
    /* The library schedules its tiles statically: full waves of `sms` tiles, each bound by the SM
     * or by the wave's share of HBM, whichever is slower; no dequeue. */
    double t_tile = fmax(c.t_sm, c.hbm_bytes * (double)active / (hw->hbm_gbs * GB));
    return (double)duet_cdiv(g->tiles, sms) * t_tile;
}

duet_status_t duet_plan_vendor_choose(const duet_hw_t *hw, duet_plan_t *plan)
{
    if (plan->cfg.mode != DUET_MODE_VENDOR)
        return duet__error(DUET_ERR_INVALID_ARG, "the vendor library's kernel is chosen in vendor mode only");
    if (plan->wl.m <= 0)
        return DUET_OK;
    static const int32_t splits[] = DUET_AUTO_SPLIT_KS;
    int32_t sms = plan->cfg.gemm_wgs > 0 ? plan->cfg.gemm_wgs : hw->n_sms;
    duet_plan_t q = *plan;
    duet_gemm_tile_t best_t = plan->cfg.tile;
    int32_t best_s = 0;
    double best = 0;
    for (int i = 0; i < duet_vendor_tile_count(); i++) {
        duet_gemm_tile_t t = duet_vendor_tile_get(i);
        for (size_t j = 0; j < sizeof(splits) / sizeof(splits[0]); j++) {
            /* A K split only where the C tiles leave SMs idle (the rule of duet's sweep). */
            if (splits[j] > 1 && !duet_split_k_worth_trying_on(&plan->wl, t, splits[j], sms))
                continue;
            duet_gemm_geom_t geo;
            duet_gemm_geom_init(&geo, plan->wl.m, plan->wl.n, plan->wl.k, t, plan->cfg.group_m, splits[j]);
            if (geo.tiles > DUET_MAX_GEMM_TILES)
                continue;
            q.cfg.tile = t;
            q.cfg.split_k = splits[j];
            q.gemm = geo;
            double s = duet_cost_vendor_gemm_s(hw, &q);
            /* Ties keep the first: the larger tile, the fewer parts. */
            if (best_s == 0 || s < best * (1.0 - 1e-9)) {
                best = s;
                best_t = t;
                best_s = splits[j];
            }
        }
    }
    if (best_s == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "vendor GEMM %lldx%lldx%lld: no kernel of the library's tile set",
                           (long long)plan->wl.m, (long long)plan->wl.n, (long long)plan->wl.k);
    return duet_plan_set_gemm_kernel(plan, best_t, best_s);
}

duet_status_t duet_plan_vendor_kernel(const duet_hw_t *hw, const duet_vendor_kernel_t *rec, duet_plan_t *plan)
{
    if (plan->cfg.mode != DUET_MODE_VENDOR || plan->wl.m <= 0)
        return DUET_OK;
    /* The recorded kernel is priced only where the profile says its constants describe recorded
     * kernels (vendor_records): on the H100 training corpus the recorded tiles (32x32 to 192x192,
     * clusters, up to 21 K parts) priced with the constants of the modelled tile set gave a held-out
     * APE of 9.9 % median and 70.8 % p95 on the vendor GEMM alone, the modelled choice 8.2 % and
     * 27.9 % (docs/calibration.md, "The H100 profile"). */
    if (rec == NULL || !rec->valid || !hw->vendor_records)
        return duet_plan_vendor_choose(hw, plan);
    duet_gemm_tile_t t = {rec->tile_m, rec->tile_n, rec->stage_k > 0 ? rec->stage_k : 64};
    /* A split past duet's limit (cuBLASLt chose 21 parts on H100 for a small-M, long-K GEMM) is
     * priced at the limit: the same K work in fewer, longer parts. */
    int32_t s = rec->split_k > DUET_MAX_SPLIT_K ? DUET_MAX_SPLIT_K : rec->split_k > 1 ? rec->split_k : 1;
    /* cuBLASLt splits K into parts of any length (on H100, 704x...x704 in 9 parts), while the plan
     * counts whole K steps, each part at least one. Where the recorded split does not fit steps of
     * the recorded (or assumed) length, the step halves, down to 8 elements, and then the parts
     * shrink: a vendor K step's price is its matrix work (2 BM BN BK FLOP), so the K loop's price
     * follows the part's K elements whatever its step. */
    for (;;) {
        duet_gemm_geom_t g;
        duet_gemm_geom_init(&g, plan->wl.m, plan->wl.n, plan->wl.k, t, plan->cfg.group_m, s);
        if (s == 1 || duet_gemm_parts_nonempty(&g))
            break;
        if (t.bk > 8)
            t.bk /= 2;
        else
            s--;
    }
    return duet_plan_set_gemm_kernel(plan, t, s);
}

double duet_cost_stage_s(const duet_hw_t *hw, const duet_plan_t *plan)
{
    if (plan->stage_k <= 0)
        return 0.0;
    /* The pass reads (M + N) K elements and writes (M + N) stage_k, 2 bytes each; it streams
     * both at the device-memory rate (its launch overlaps the previous command's tail, so no
     * second launch_us is charged). */
    double rows = (double)(plan->wl.m + plan->wl.n);
    double bytes = rows * (double)(plan->wl.k + plan->stage_k) * 2.0;
    return bytes / (hw->hbm_gbs * GB);
}

double duet_cost_push_inflight(const duet_hw_t *hw)
{
    return hw->cta_push_gbs * GB * hw->remote_rtt_us * US; /* bytes = bytes/s x s */
}

/*
 * A copy engine's local copy reaches the device's own copy rate (one H100, --grid copy corpus:
 * 253 MB copied in 183 us, about 2.8 TB/s of reads and writes), where hbm_gbs is the effective rate
 * the SMs' traffic fits to (1671 GB/s on H100); priced at hbm_gbs per byte, every large local
 * copy came out 1.5-1.7x too slow. In hbm_gbs's units a local copy at ce_local_gbs takes all of
 * HBM: alone the engines are bounded by their own rate, beside the GEMM they share HBM with it.
 */
double duet_cost_copy_hbm_weight(const duet_hw_t *hw)
{
    return hw->ce_local_gbs > 0 && hw->hbm_gbs > 0 ? hw->hbm_gbs / (2.0 * hw->ce_local_gbs) : 1.0;
}

double duet_cost_link_capacity(const duet_hw_t *hw, double inflight_bytes, int peers)
{
    if (inflight_bytes <= 0)
        return 0.0;
    int links = hw->fabric == DUET_FABRIC_MESH ? (peers < hw->n_links ? peers : hw->n_links) : 1;
    if (links < 1)
        links = 1;
    double peak = hw->link_gbs * GB * links;                /* bytes/s */
    double half = hw->link_half_inflight_kib * KIB * links; /* bytes in flight for half of peak */
    /* Unbounded bytes in flight (the copy engines keep the link full): the peak itself. */
    return isinf(inflight_bytes) ? peak : peak * inflight_bytes / (inflight_bytes + half);
}

/*
 * A copy of copy mode on one copy engine: its fixed cost, then the block pushed into the peer at
 * the engine's fabric rate or copied locally at its local rate. The copy engines do not run on the
 * SM clock: no clock_heat. The HBM bytes are a comm tile's: what we read and write, and in the
 * symmetric collectives what the peers' copies write into us.
 */
static void duet__copy_cost(const duet_hw_t *hw, const duet_plan_t *plan, const duet_comm_traffic_t *t,
                            duet_comm_cost_t *c)
{
    c->t_push = t->push_bytes / (hw->ce_gbs * GB);
    c->t_local = t->local_write_bytes / (hw->ce_local_gbs * GB);
    c->t_overhead = hw->ce_copy_us * US;
    c->t_alone = c->t_push + c->t_local + c->t_overhead;
    double mirrored = plan->wl.coll == DUET_COLL_BROADCAST ? 0.0 : t->push_bytes;
    c->hbm_bytes = t->local_read_bytes + t->local_write_bytes + mirrored;
}

double duet_cost_comm_beside_gemm(const duet_hw_t *hw, double t_tile, double t_pull, double gemm_running)
{
    if (gemm_running <= 0 || t_pull <= 0)
        return 1.0;
    /* Remote loads queue behind the L2 and fabric traffic of the GEMM tiles running beside them:
     * the pull part of a comm tile stretches by rtt_gemm_stretch per SM's worth of running GEMM
     * CTAs, which caps the comm tile's speed. */
    double stretch = hw->rtt_gemm_stretch * gemm_running / hw->n_sms;
    return t_tile / (t_tile + t_pull * stretch);
}

double duet_cost_gemm_beside_comm(const duet_hw_t *hw, double comm_ctas, double shared_sms)
{
    if (comm_ctas <= 0 || shared_sms <= 0)
        return 1.0;
    /* A GEMM tile on an SM where comm CTAs run gives up their share of its issue slots. */
    return 1.0 / (1.0 + hw->comm_sm_share * comm_ctas / shared_sms);
}

static void duet__comm_cost(const duet_hw_t *hw, const duet_plan_t *plan, const duet_comm_traffic_t *t,
                            duet_comm_cost_t *c)
{
    memset(c, 0, sizeof(*c));
    c->traffic = *t;
    if (plan->cfg.mode == DUET_MODE_COPY) {
        duet__copy_cost(hw, plan, t, c);
        return;
    }
    double pull_window = hw->cta_pull_inflight_kib * KIB;
    c->round_trips = t->pull_bytes > 0 ? (int64_t)ceil(t->pull_bytes / pull_window) : 0;
    c->t_push = t->push_bytes / (hw->cta_push_gbs * GB);
    c->t_pull = (double)c->round_trips * hw->remote_rtt_us * US;
    c->t_local = (t->local_read_bytes + t->local_write_bytes) / (hw->cta_local_gbs * GB);
    c->t_overhead = hw->comm_tile_overhead_us * US;
    /* Remote loads must return before the sum is stored and pushed; stores are posted, so the
     * push and the local copy overlap each other. */
    c->t_alone = c->t_pull + fmax(c->t_push, c->t_local) + c->t_overhead;
    /* A comm CTA issues its loads, stores and address work one after another at the SM clock,
     * which falls under the operation's matrix work (duet_cost_clock_heat); the link's own
     * capacity does not, and the simulator caps the tiles by it separately. */
    /* How much of it, comm_heat_share: on one H200 the collective beside a short GEMM in
     * concurrent mode ran within 10 % of its time alone (1600x6144x2254 + 61 MB broadcast on 8
     * CTAs: 0.661 ms against 0.617 alone; one-GPU corpus of 2026-12-03), where the full factor of
     * the fit (1.55) priced it at 1.12 ms: a comm CTA waits on memory more than on its clock. */
    c->t_alone *= 1.0 + hw->comm_heat_share * (duet_cost_clock_heat(hw, plan) - 1.0);
    /* This rank's HBM also absorbs what the peers push into it and serves what they pull from
     * it; in the symmetric collectives that equals our own push and pull bytes. */
    double mirrored = plan->wl.coll == DUET_COLL_BROADCAST ? 0.0 : t->push_bytes + t->pull_bytes;
    c->hbm_bytes = t->local_read_bytes + t->local_write_bytes + mirrored;
}

duet_status_t duet_cost_comm_tile(const duet_hw_t *hw, const duet_plan_t *plan, duet_comm_cost_t *cost_p)
{
    duet_comm_traffic_t avg;
    memset(&avg, 0, sizeof(avg));
    if (plan->comm_valid_tiles > 0) {
        double n = (double)plan->comm_valid_tiles;
        avg = plan->comm_total;
        avg.push_bytes /= n;
        avg.pull_bytes /= n;
        avg.local_read_bytes /= n;
        avg.local_write_bytes /= n;
    }
    duet__comm_cost(hw, plan, &avg, cost_p);
    return DUET_OK;
}

duet_status_t duet_cost_comm_tile_at(const duet_hw_t *hw, const duet_plan_t *plan, int64_t q, duet_comm_cost_t *cost_p)
{
    if (q < 0 || q >= plan->comm.queue_len)
        return duet__error(DUET_ERR_INVALID_ARG, "comm queue position %lld is outside [0, %lld)", (long long)q,
                           (long long)plan->comm.queue_len);
    duet_comm_traffic_t t;
    duet_plan_comm_tile_traffic(plan, q, &t);
    duet__comm_cost(hw, plan, &t, cost_p);
    return DUET_OK;
}
