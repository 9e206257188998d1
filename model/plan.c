/*
 * The plan: (workload, configuration, rank) -> the two queues and their traffic.
 *
 * The simulator prices a plan and the backend executes it; both walk the queues with the
 * functions of include/duet/plan_map.h, so the tile a CTA dequeues is the same on both sides.
 */
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

int64_t duet_plan_gemm_concurrent(const duet_plan_t *plan)
{
    return plan->gemm_home_ctas > 0 ? plan->gemm_home_ctas : plan->gemm_ctas;
}

int32_t duet_plan_critical_rank(const duet_workload_t *wl)
{
    return wl->coll == DUET_COLL_BROADCAST ? wl->root : 0;
}

/*
 * Rows of a comm tile that stay on this rank (all_to_all): source rows [row0, row0 + rows) map
 * to destination rank row / chunk; the rows of chunk `rank` are a local copy.
 */
static int64_t duet__a2a_local_rows(const duet_comm_geom_t *g, const duet_comm_rect_t *r)
{
    int64_t lo = (int64_t)g->rank * g->chunk, hi = lo + g->chunk;
    int64_t a = r->row0 > lo ? r->row0 : lo;
    int64_t b = r->row0 + r->rows < hi ? r->row0 + r->rows : hi;
    return b > a ? b - a : 0;
}

/* Distinct peers (other than this rank) that the rows of an all_to_all tile go to. */
static int32_t duet__a2a_remote_peers(const duet_comm_geom_t *g, const duet_comm_rect_t *r)
{
    int64_t first = r->row0 / g->chunk, last = (r->row0 + r->rows - 1) / g->chunk;
    int32_t n = (int32_t)(last - first + 1);
    if (g->rank >= first && g->rank <= last)
        n--;
    return n;
}

/*
 * Traffic of one tile of `rows x cols` elements of `eb` bytes each. With rows/cols set to the
 * full tile this gives the tile-granular bytes the reference design prices.
 */
static void duet__tile_traffic(const duet_comm_geom_t *g, const duet_comm_rect_t *r, double eb, duet_comm_traffic_t *t)
{
    memset(t, 0, sizeof(*t));
    if (!r->valid)
        return;
    double b = (double)r->rows * r->cols * eb;
    int32_t peers = g->world - 1;
    switch (g->coll) {
    case DUET_COLL_ALL_GATHER:
        /* Read the local tile once, store it to our own output and push it to every peer. */
        t->local_read_bytes = b;
        t->local_write_bytes = b;
        t->push_bytes = b * peers;
        t->push_peers = peers;
        break;
    case DUET_COLL_ALL_REDUCE:
        /* Owner: pull the W-1 partials, add ours, store the sum and push it to every peer. */
        t->local_read_bytes = b;
        t->pull_bytes = b * peers;
        t->pull_peers = peers;
        t->local_write_bytes = b;
        t->push_bytes = b * peers;
        t->push_peers = peers;
        break;
    case DUET_COLL_REDUCE_SCATTER:
        /* Pull our rows from every peer, add ours, store. */
        t->local_read_bytes = b;
        t->pull_bytes = b * peers;
        t->pull_peers = peers;
        t->local_write_bytes = b;
        break;
    case DUET_COLL_ALL_TO_ALL: {
        double local = (double)duet__a2a_local_rows(g, r) * r->cols * eb;
        t->local_read_bytes = b;
        t->local_write_bytes = local;
        t->push_bytes = b - local;
        t->push_peers = duet__a2a_remote_peers(g, r);
        break;
    }
    case DUET_COLL_BROADCAST:
        /* Only the root has tiles: its own output plus one push per peer. */
        t->local_read_bytes = b;
        t->local_write_bytes = b;
        t->push_bytes = b * peers;
        t->push_peers = peers;
        break;
    default:
        break;
    }
}

/*
 * The traffic of copy q of a copy-mode plan: a remote copy reads the block here and writes it
 * into the peer (a push); the local copy reads and writes it here.
 */
static void duet__copy_traffic(const duet_comm_geom_t *g, int64_t q, double eb, duet_comm_traffic_t *t)
{
    memset(t, 0, sizeof(*t));
    duet_copy_t c;
    duet_copy_get(g, q, &c);
    double b = (double)c.elems * eb;
    t->local_read_bytes = b;
    if (c.peer == g->rank) {
        t->local_write_bytes = b;
    } else {
        t->push_bytes = b;
        t->push_peers = 1;
    }
}

void duet_plan_comm_tile_traffic(const duet_plan_t *plan, int64_t q, duet_comm_traffic_t *t_p)
{
    if (plan->cfg.mode == DUET_MODE_COPY) {
        duet__copy_traffic(&plan->comm, q, duet_dtype_bytes(plan->wl.dtype), t_p);
        return;
    }
    duet_comm_rect_t r;
    duet_comm_tile(&plan->comm, q, &r);
    duet__tile_traffic(&plan->comm, &r, duet_dtype_bytes(plan->wl.dtype), t_p);
}

static void duet__traffic_add(duet_comm_traffic_t *sum, const duet_comm_traffic_t *t)
{
    sum->push_bytes += t->push_bytes;
    sum->pull_bytes += t->pull_bytes;
    sum->local_read_bytes += t->local_read_bytes;
    sum->local_write_bytes += t->local_write_bytes;
    if (t->push_peers > sum->push_peers)
        sum->push_peers = t->push_peers;
    if (t->pull_peers > sum->pull_peers)
        sum->pull_peers = t->pull_peers;
}

/*
 * The launch geometry and the queue policy: which kernels run, on how many CTAs, which CTA starts
 * on which queue, whether it steals, and how timelines number the CTAs. This is the one place
 * that decides them; the simulator, the cost model and the backend read the result.
 *
 * - fused, with a GEMM: one persistent kernel of num_wgs CTAs with the GEMM tile; CTAs below
 *   gemm_wgs start on the GEMM queue, the others on the comm queue, and each drains its home
 *   queue, then the other one. Without a collective its comm queue is empty.
 * - concurrent: a GEMM kernel of gemm_wgs CTAs (the GEMM queue only) and a comm kernel of
 *   comm_wgs CTAs (the comm queue only), numbered after the GEMM kernel's.
 * - vendor: the vendor library's GEMM planned for gemm_wgs SMs (the simulator runs it as one
 *   worker per SM on the GEMM queue, with no dequeue cost) beside the comm kernel, as concurrent.
 * - copy: duet's GEMM kernel on gemm_wgs SMs, as concurrent, and the copy engines in place of the
 *   comm kernel: comm_wgs copy streams (role COPY, no CTA and no SM), copy q on stream q % comm_wgs.
 *   A collective alone is the copies alone.
 * - a collective without a GEMM, in any other mode: the comm kernel alone (num_wgs CTAs fused,
 *   comm_wgs otherwise), every CTA on the comm queue: the fused kernel's CTAs and queue without
 *   the GEMM tile's shared memory.
 * A kernel runs when its queue is in the workload: the comm kernel for any collective, also on a
 * rank whose comm queue is empty (a broadcast's non-root ranks), since it carries the barriers.
 */
void duet_plan_stream_k_choose(const duet_gemm_geom_t *g, int32_t budget, int64_t *split_from_p, int32_t *parts_p)
{
    int64_t best_from = 0, best_steps = 0;
    int32_t best_parts = 1;
    const int64_t T = g->tiles_mn, KI = g->k_iters_total, B = budget;
    if (T > 0 && KI > 0 && B >= 2 && T % B != 0) {
        const int64_t W = T / B, r = T % B;
        /* A part's fixed cost in K steps: its fp32 block (4 bm bn bytes) written and read back,
         * against the (bm + bn) bk 2-byte operand elements one K step loads. */
        const int64_t fix = duet_cdiv(4 * (int64_t)g->bm * g->bn, ((int64_t)g->bm + g->bn) * g->bk);
        /* Data-parallel: W + 1 waves of whole tiles. Splitting the last full wave too never
         * helps with equal parts: its B tiles in s parts add s rounds of ceil(KI / s) >= KI
         * steps, more than the whole wave they replace. */
        best_steps = (W + 1) * KI;
        for (int32_t s = 2; s <= DUET_MAX_SPLIT_K && s <= KI; s++) {
            const int64_t per = duet_cdiv(KI, s);
            if ((int64_t)(s - 1) * per >= KI)
                continue; /* the last part would have no K step */
            const int64_t steps = W * KI + duet_cdiv(r * s, B) * (per + fix);
            if (steps < best_steps) {
                best_steps = steps;
                best_parts = s;
                best_from = T - r;
            }
        }
    }
    *split_from_p = best_parts > 1 ? best_from : 0;
    *parts_p = best_parts;
}

/*
 * Operand staging (duet_plan_t.stage_k): the staged rows are K rounded up to a whole k-tile of
 * DUET_STAGE_ROW_ALIGN elements, so that every row starts on 128 bytes.
 *
 * A K that is not a multiple of 8 is always staged (rows off 16 bytes have no fast path). A K
 * whose rows start on 16 bytes only (K % 16 == 8) is staged where the copy is cheap against the
 * GEMM: the wgmma tile's TMA loads of such rows ran the K loop 1.2-1.6x slower than of rows on 128
 * bytes (one H100: every such aligned GEMM of the random sets, e.g. 3520x7040x904 and
 * 4160x12928x6008 at 0.69 and 0.62 of cuBLASLt, 1.5 and 1.25x the model's time). The pass moves
 * about 4 K (M + N) bytes against the GEMM's 2 M N K flops, so it pays where M N / (M + N)
 * exceeds about 2 F / (p B): F the matrix rate, B the memory bandwidth, p the share of the GEMM's
 * time the rows cost. On H100 (700 TFLOP/s at the settled clock, 3.0 TB/s) with p = 0.45 that is
 * about 1000, on H200 (4.3 TB/s) 720: DUET_STAGE_MIN_MN. Side by side on one H100 the staged
 * GEMMs ran 1.13-1.37x faster where M N / (M + N) was 1024-3150 and 0.96-0.98x at 1135-1212 with
 * N = 1344 (docs/performance.md). Rows on 32 bytes (K % 32 == 16) are not staged: 4096x4096x912
 * ran 0.88x as fast staged, its rows in place at 0.93 of cuBLASLt; rows on 64 bytes ran at the
 * model's time.
 */
#define DUET_STAGE_ROW_ALIGN 64
#define DUET_STAGE_MIN_MN 1024
static int64_t duet__plan_stage_k(const duet_workload_t *wl, const duet_gemm_geom_t *g)
{
    const int64_t k = wl->k, m = wl->m, n = wl->n;
    if (g->tiles <= 0)
        return 0;
    const int off16 = k % 8 != 0; /* rows off 16 bytes */
    const int on16 = k % 16 == 8 && (double)m * (double)n >= (double)DUET_STAGE_MIN_MN * (double)(m + n);
    return off16 || on16 ? duet_cdiv(k, DUET_STAGE_ROW_ALIGN) * DUET_STAGE_ROW_ALIGN : 0;
}

/*
 * The GEMM queue's geometry: the configuration's tiling and K split, and with stream-K the tail
 * split for the GEMM's budget: the CTAs whose GEMM work starts at once (fused with a collective:
 * the GEMM-home ones; the comm CTAs reach the GEMM queue only after the collective), else every
 * CTA that may run GEMM tiles.
 */
static void duet__plan_gemm_geom(duet_plan_t *p)
{
    const duet_config_t *cfg = &p->cfg;
    duet_gemm_geom_init(&p->gemm, p->wl.m, p->wl.n, p->wl.k, cfg->tile, cfg->group_m, cfg->split_k);
    if (!cfg->stream_k || p->gemm.tiles == 0 || p->gemm.split_k != 1)
        return;
    const duet_kernel_geom_t *kg = &p->kernel[DUET_KERNEL_GEMM];
    int32_t budget = p->gemm_ctas;
    if (cfg->mode == DUET_MODE_FUSED && p->wl.coll != DUET_COLL_NONE && kg->gemm_home > 0)
        budget = kg->gemm_home;
    int64_t from;
    int32_t parts;
    duet_plan_stream_k_choose(&p->gemm, budget, &from, &parts);
    duet_gemm_geom_split_tail(&p->gemm, from, parts);
}

static void duet__plan_policy(duet_plan_t *p)
{
    const duet_config_t *cfg = &p->cfg;
    const int has_gemm = p->gemm.tiles > 0, has_comm = p->wl.coll != DUET_COLL_NONE;
    duet_kernel_geom_t *kg = &p->kernel[DUET_KERNEL_GEMM], *kc = &p->kernel[DUET_KERNEL_COMM];
    memset(p->kernel, 0, sizeof(p->kernel));
    kg->role = cfg->mode == DUET_MODE_FUSED    ? DUET_ROLE_FUSED
               : cfg->mode == DUET_MODE_VENDOR ? DUET_ROLE_VENDOR
                                               : DUET_ROLE_GEMM;
    kc->role = cfg->mode == DUET_MODE_COPY ? DUET_ROLE_COPY : DUET_ROLE_COMM;
    if (cfg->mode == DUET_MODE_FUSED) {
        if (has_gemm) {
            kg->grid = cfg->num_wgs;
            kg->gemm_home = cfg->gemm_wgs;
            kg->steal = 1;
        } else if (has_comm) {
            kc->grid = cfg->num_wgs;
        }
    } else {
        if (has_gemm) {
            kg->grid = cfg->gemm_wgs;
            kg->gemm_home = cfg->gemm_wgs;
        }
        if (has_comm)
            kc->grid = cfg->comm_wgs;
    }
    kc->cta_base = kg->grid;
    p->n_ctas = kg->grid + kc->grid;
    p->gemm_home_ctas = kg->gemm_home + kc->gemm_home;
    p->comm_home_ctas = p->n_ctas - p->gemm_home_ctas;
    p->steal = kg->steal || kc->steal;
    p->gemm_ctas = (kg->steal ? kg->grid : kg->gemm_home) + (kc->steal ? kc->grid : kc->gemm_home);
    p->comm_grid = kc->grid > 0 ? kc->grid : kg->steal ? kg->grid : 0;
    /* The GEMM queue (stream-K's tail depends on the CTAs just decided), then the K split's
     * partial sums and arrival counters (backend/splitk.h). */
    duet__plan_gemm_geom(p);
    const duet_gemm_geom_t *g = &p->gemm;
    const int64_t split_tiles = duet_gemm_split_tiles(g);
    p->splitk_ws_bytes = split_tiles * g->split_k * g->bm * g->bn * (int64_t)sizeof(float);
    p->splitk_counters = split_tiles * 2;
    p->stage_k = cfg->mode != DUET_MODE_VENDOR ? duet__plan_stage_k(&p->wl, g) : 0;
    p->stage_ws_bytes = p->stage_k > 0 ? (p->wl.m + p->wl.n) * p->stage_k * (int64_t)sizeof(uint16_t) : 0;
}

void duet_plan_launch(const duet_plan_t *plan, duet_launch_t *launch_p)
{
    duet_launch_t l;
    memset(&l, 0, sizeof(l));
    const duet_kernel_geom_t *kg = &plan->kernel[DUET_KERNEL_GEMM], *kc = &plan->kernel[DUET_KERNEL_COMM];
    if (kg->grid > 0) {
        l.k[l.n].kernel = DUET_KERNEL_GEMM;
        l.k[l.n++].geom = *kg;
    }
    if (kc->grid > 0) {
        /* Beside a GEMM kernel, the comm kernel runs on a second stream (one fork, one join). */
        l.k[l.n].kernel = DUET_KERNEL_COMM;
        l.k[l.n].side_stream = kg->grid > 0;
        l.k[l.n++].geom = *kc;
    }
    *launch_p = l;
}

duet_status_t duet_plan_set_split(duet_plan_t *plan, int32_t gemm_wgs, int32_t comm_wgs)
{
    duet_config_t cfg = plan->cfg;
    cfg.gemm_wgs = gemm_wgs;
    cfg.comm_wgs = comm_wgs;
    if (cfg.mode == DUET_MODE_COPY)
        cfg.num_wgs = gemm_wgs; /* the copy streams take no SM */
    else if (cfg.mode != DUET_MODE_FUSED)
        cfg.num_wgs = gemm_wgs + comm_wgs;
    DUET_CHECK(duet__config_check_shape(&cfg, &plan->wl));
    plan->cfg = cfg;
    duet__plan_policy(plan);
    return DUET_OK;
}

duet_status_t duet_plan_set_gemm_kernel(duet_plan_t *plan, duet_gemm_tile_t tile, int32_t split_k)
{
    if (plan->cfg.mode != DUET_MODE_VENDOR)
        return duet__error(DUET_ERR_INVALID_ARG, "the GEMM kernel is the vendor library's in vendor mode only");
    duet_config_t cfg = plan->cfg;
    cfg.tile = tile;
    cfg.split_k = split_k;
    DUET_CHECK(duet__config_check_shape(&cfg, &plan->wl));
    plan->cfg = cfg;
    duet_gemm_geom_init(&plan->gemm, plan->wl.m, plan->wl.n, plan->wl.k, tile, cfg.group_m, split_k);
    duet__plan_policy(plan);
    return DUET_OK;
}

duet_status_t duet_plan_build_queues(const duet_workload_t *wl, const duet_config_t *cfg, int32_t rank,
                                     duet_plan_t *plan_p)
{
    DUET_CHECK(duet_workload_validate(wl));
    DUET_CHECK(duet__config_check_shape(cfg, wl));
    if (rank < 0 || rank >= wl->world)
        return duet__error(DUET_ERR_INVALID_ARG, "rank %d is outside [0, %d)", (int)rank, (int)wl->world);

    duet_plan_t p;
    memset(&p, 0, sizeof(p));
    p.wl = *wl;
    p.cfg = *cfg;
    p.rank = rank;
    duet_gemm_geom_init(&p.gemm, wl->m, wl->n, wl->k, cfg->tile, cfg->group_m, cfg->split_k);
    p.gemm_flops = 2.0 * (double)wl->m * (double)wl->n * (double)wl->k;
    if (cfg->mode == DUET_MODE_COPY)
        duet_copy_geom_init(&p.comm, wl->coll, wl->world, rank, wl->root, wl->mc, wl->nc);
    else
        duet_comm_geom_init(&p.comm, wl->coll, wl->world, rank, wl->root, wl->mc, wl->nc, cfg->cm, cfg->cn);
    duet__plan_policy(&p);
    *plan_p = p;
    return DUET_OK;
}

duet_status_t duet_plan_build(const duet_workload_t *wl, const duet_config_t *cfg, int32_t rank, duet_plan_t *plan_p)
{
    duet_plan_t p;
    DUET_CHECK(duet_plan_build_queues(wl, cfg, rank, &p));
    /* Walk this rank's comm queue once: exact traffic, and the tile-granular remote bytes. */
    double eb = duet_dtype_bytes(wl->dtype);
    for (int64_t q = 0; q < p.comm.queue_len && cfg->mode == DUET_MODE_COPY; q++) {
        /* Copy mode: whole blocks, no tiles; the tile-granular bytes are the exact ones. */
        duet_comm_traffic_t t;
        duet__copy_traffic(&p.comm, q, eb, &t);
        duet__traffic_add(&p.comm_total, &t);
        p.comm_valid_tiles++;
        p.remote_bytes_tiles += t.push_bytes;
    }
    for (int64_t q = 0; q < p.comm.queue_len && cfg->mode != DUET_MODE_COPY; q++) {
        duet_comm_rect_t r;
        duet_comm_tile(&p.comm, q, &r);
        if (!r.valid)
            continue;
        p.comm_valid_tiles++;
        duet_comm_traffic_t t;
        duet__tile_traffic(&p.comm, &r, eb, &t);
        duet__traffic_add(&p.comm_total, &t);
        /* Tile-granular: the same tile at its full cm x cn size; all_to_all keeps the share of
         * its rows that leave the rank. */
        double full = (double)cfg->cm * cfg->cn * eb;
        double exact = (double)r.rows * r.cols * eb;
        p.remote_bytes_tiles += (t.push_bytes + t.pull_bytes) * (full / exact);
    }
    p.remote_bytes = p.comm_total.push_bytes + p.comm_total.pull_bytes;
    int32_t peers = wl->world - 1;
    if (peers > 0 && wl->coll != DUET_COLL_NONE) {
        if (wl->coll == DUET_COLL_BROADCAST) {
            /* The root sends the whole tensor to each peer; a non-root receives it from the root. */
            double tensor = (double)wl->mc * wl->nc * eb;
            p.bytes_per_peer_out = rank == wl->root ? tensor : 0;
            p.bytes_per_peer_in = rank == wl->root ? 0 : tensor;
        } else {
            /* Symmetric collectives: what we push to a peer plus what it pulls from us (equal, by
             * symmetry, to what we pull from it) leaves on each link; the same amount arrives. */
            p.bytes_per_peer_out = p.remote_bytes / peers;
            p.bytes_per_peer_in = p.bytes_per_peer_out;
        }
    }
    *plan_p = p;
    return DUET_OK;
}
