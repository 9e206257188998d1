/*
 * duet calibrate collect's measurement (include/duet/measure.h): the grid of points of one
 * workload, and their timed runs in interleaved rounds.
 *
 * For each workload: fused mode at a grid of gemm_wgs fractions x GEMM tiles, concurrent mode at
 * a grid of comm grids, the GEMM alone for each tile, the collective alone at several CTA counts,
 * and, where a K split is worth trying for a tile, the GEMM alone and two fused points with K in
 * 2 and in 4 parts. Each point's timed runs are taken in rounds over the workload's points (each
 * round in its own shuffled order), after untimed runs; its row holds the median, min and max of
 * all its runs, each the slowest rank's, with a barrier before each.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "duet/measure.h"

static const double collect_fracs[] = {0.55, 0.65, 0.72, 0.75, 0.78, 0.84, 0.88, 0.92, 0.96, 1.0};
static const duet_gemm_tile_t collect_tiles[] = {
    {256, 256, 64}, {128, 256, 64}, {256, 128, 64}, {128, 128, 64}, {256, 64, 64}};
static const int32_t collect_comm_wgs[] = {4, 8, 16, 24, 32, 48};
static const int32_t collect_alone_ctas[] = {8, 16, 32, 66, 132};
/*
 * K-split rows, so that the fit can price the split's partial sums (splitk_sm_gbs): the GEMM
 * alone, and fused at every CTA first on the GEMM (1.0: the measured best of 28 of the 75 shapes
 * of tuning_data/h200_world2.json) and at 0.84 (a sixth of the SMs on the collective from the
 * start), for each tile where duet_split_k_worth_trying() allows the split.
 */
static const int32_t collect_split_ks[] = {2, 4};
static const double collect_split_fracs[] = {0.84, 1.0};

#define NFRACS (int)(sizeof(collect_fracs) / sizeof(collect_fracs[0]))
#define NTILES (int)(sizeof(collect_tiles) / sizeof(collect_tiles[0]))
#define NCOMMW (int)(sizeof(collect_comm_wgs) / sizeof(collect_comm_wgs[0]))
#define NALONE (int)(sizeof(collect_alone_ctas) / sizeof(collect_alone_ctas[0]))
#define NSPLIT (int)(sizeof(collect_split_ks) / sizeof(collect_split_ks[0]))
#define NSFRAC (int)(sizeof(collect_split_fracs) / sizeof(collect_split_fracs[0]))

_Static_assert(DUET_COLLECT_MAX_POINTS >= NTILES * NFRACS + NCOMMW + NTILES + NALONE + NSPLIT * NTILES * (1 + NSFRAC),
               "the reference grid fits DUET_COLLECT_MAX_POINTS");

duet_collect_params_t duet_collect_default_params(void)
{
    duet_collect_params_t p;
    memset(&p, 0, sizeof(p));
    p.warmup = 3;
    p.repeats = 8;
    p.rounds = 3;
    return p;
}

int32_t duet_collect_runs_per_point(const duet_collect_params_t *params)
{
    /* Every point gets the same number of timed runs in every round: at least `repeats` in all. */
    return params->rounds * ((params->repeats + params->rounds - 1) / params->rounds);
}

/*
 * The one-GPU grid (DUET_COLLECT_GRID_W1): fewer fused fractions (the split matters less with the
 * collective's traffic local), and the GEMM alone at SM budgets, which is where its clock and
 * wave quantisation show.
 */
static const double w1_fracs[] = {0.5, 0.75, 0.88, 1.0};
static const int32_t w1_comm_wgs[] = {8, 16, 32};
static const double w1_budgets[] = {0.25, 0.5, 0.75, 1.0};
#define W1_NFRACS (int)(sizeof(w1_fracs) / sizeof(w1_fracs[0]))
#define W1_NCOMMW (int)(sizeof(w1_comm_wgs) / sizeof(w1_comm_wgs[0]))
#define W1_NBUDGET (int)(sizeof(w1_budgets) / sizeof(w1_budgets[0]))
/* Copy mode's rows (all_gather, all_to_all, broadcast): 1 and 2 copy streams, each with the GEMM on
 * every SM and alone (the copies alone price ce_gbs, ce_local_gbs and ce_copy_us; beside the GEMM,
 * ce_gemm_stretch). Two streams only where the critical rank has two copies or more (W >= 2). */
#define W1_NCOPY 2
_Static_assert(NTILES *W1_NFRACS + 3 * W1_NCOMMW + NTILES * W1_NBUDGET * (1 + NSPLIT) + W1_NBUDGET + NALONE +
                       2 * W1_NCOPY <=
                   DUET_COLLECT_MAX_POINTS,
               "the one-GPU grid fits DUET_COLLECT_MAX_POINTS");

void duet_collect_baseline_caps(int32_t grid, duet_baseline_params_t *base)
{
    if (grid != DUET_COLLECT_GRID_W1)
        return;
    _Static_assert(W1_NCOMMW <= DUET_BASELINE_MAX_COMMS - 1, "a capped communicator per vendor comm grid");
    base->n_capped = W1_NCOMMW;
    for (int i = 0; i < W1_NCOMMW; i++)
        base->capped_ctas[i] = w1_comm_wgs[i];
}

/* The baseline communicator slot capped at `ctas` (duet_collect_baseline_caps()); 0 (uncapped)
 * for a cap the grid does not use. */
static int32_t collect_cap_slot(int32_t ctas)
{
    for (int i = 0; i < W1_NCOMMW; i++)
        if (w1_comm_wgs[i] == ctas)
            return i + 1;
    return 0;
}

static const char *const collect_grid_names[DUET_COLLECT_GRID_COUNT] = {"reference", "w1", "copy"};

const char *duet_collect_grid_name(int32_t grid)
{
    return grid > 0 && grid < DUET_COLLECT_GRID_COUNT ? collect_grid_names[grid] : collect_grid_names[0];
}

int32_t duet_collect_grid_parse(const char *name)
{
    for (int32_t g = 0; g < DUET_COLLECT_GRID_COUNT; g++)
        if (strcmp(name, collect_grid_names[g]) == 0)
            return g;
    return -1;
}

void duet_collect_grid_of(duet_corpus_t *c, int32_t grid)
{
    if (grid != DUET_COLLECT_GRID_W1 && grid != DUET_COLLECT_GRID_COPY) {
        duet_collect_grid(c);
        return;
    }
    /* The copy grid has no fused or concurrent points: only its tiles (the GEMM alone) apply. */
    const int w1 = grid == DUET_COLLECT_GRID_W1;
    c->n_fracs = w1 ? W1_NFRACS : 0;
    memcpy(c->fracs, w1_fracs, sizeof(w1_fracs));
    c->n_tiles = NTILES;
    memcpy(c->tiles, collect_tiles, sizeof(collect_tiles));
    c->n_comm_wgs = w1 ? W1_NCOMMW : 0;
    memcpy(c->comm_wgs, w1_comm_wgs, sizeof(w1_comm_wgs));
    /* The K splits are GEMM-alone rows here; the header's split list names fused split rows. */
    c->n_split_ks = 0;
    c->n_split_fracs = 0;
}

void duet_collect_grid(duet_corpus_t *c)
{
    c->n_fracs = NFRACS;
    memcpy(c->fracs, collect_fracs, sizeof(collect_fracs));
    c->n_tiles = NTILES;
    memcpy(c->tiles, collect_tiles, sizeof(collect_tiles));
    c->n_comm_wgs = NCOMMW;
    memcpy(c->comm_wgs, collect_comm_wgs, sizeof(collect_comm_wgs));
    c->n_split_ks = NSPLIT;
    memcpy(c->split_ks, collect_split_ks, sizeof(collect_split_ks));
    c->n_split_fracs = NSFRAC;
    memcpy(c->split_fracs, collect_split_fracs, sizeof(collect_split_fracs));
}

/* splitmix64: a small deterministic generator, the same on every rank. */
static uint64_t collect_mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * A fixed order made the first point of a shape measure systematically fast (in 11 of 75 shapes
 * of the first H200 corpus the best point was the first one measured, against about 1.3 expected
 * by chance), and that bias went straight into the picks. Round 0 is seeded as the collector was
 * before it had rounds.
 */
void duet_collect_order(const duet_workload_t *wl, int32_t round, size_t *order, size_t n)
{
    duet_collect_order_seeded(wl, round, 0, order, n);
}

void duet_collect_order_seeded(const duet_workload_t *wl, int32_t round, uint64_t order_seed, size_t *order, size_t n)
{
    uint64_t x = (uint64_t)wl->m * 1000003u ^ (uint64_t)wl->n * 10007u ^ (uint64_t)wl->k * 101u ^
                 (uint64_t)wl->mc * 7919u ^ (uint64_t)wl->nc * 31u ^ (uint64_t)wl->coll;
    if (order_seed != 0) {
        /* Mixed like the round, through its own draw, so that seed and round never cancel. */
        uint64_t s = order_seed ^ 0x5eed5eed5eed5eedull;
        x ^= collect_mix(&s);
    }
    if (round > 0) {
        /* Mixed, not added: splitmix64 seeds a multiple of its increment apart draw one stream. */
        uint64_t r = (uint64_t)round;
        x ^= collect_mix(&r);
    }
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(collect_mix(&x) % i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

/* Fused mode with gemm_wgs = frac x SMs (at least 1) on the given tile and K split. */
static duet_config_t collect_fused(const duet_hw_t *hw, int32_t sms, duet_gemm_tile_t tile, double frac,
                                   int32_t split_k)
{
    duet_config_t c = duet_config_default(hw, DUET_MODE_FUSED);
    c.tile = tile;
    int32_t g = (int32_t)lround(frac * sms);
    c.gemm_wgs = g < 1 ? 1 : g > sms ? sms : g;
    c.comm_wgs = c.num_wgs - c.gemm_wgs;
    c.split_k = split_k;
    return c;
}

/* The GEMM alone on every SM. */
static duet_config_t collect_gemm_alone(const duet_hw_t *hw, int32_t sms, duet_gemm_tile_t tile, int32_t split_k)
{
    duet_config_t c = collect_fused(hw, sms, tile, 1.0, split_k);
    c.gemm_wgs = c.num_wgs;
    c.comm_wgs = 0;
    return c;
}

/* Append a point when there is room. */
static void collect_add(duet_corpus_row_t *pts, size_t *n, size_t cap, const duet_corpus_row_t *proto, int32_t kind,
                        const duet_config_t *cfg)
{
    if (*n >= cap)
        return;
    pts[*n] = *proto;
    pts[*n].kind = kind;
    pts[*n].cfg = *cfg;
    (*n)++;
}

/* The GEMM alone on `budget` SMs (a fused grid of that many CTAs, all on the GEMM). */
static duet_config_t collect_gemm_budget(const duet_hw_t *hw, int32_t budget, duet_gemm_tile_t tile, int32_t split_k)
{
    duet_config_t c = collect_gemm_alone(hw, budget, tile, split_k);
    c.num_wgs = budget;
    c.gemm_wgs = budget;
    c.comm_wgs = 0;
    return c;
}

/* Concurrent or vendor mode with `comm` CTAs on the collective and the other SMs on the GEMM. */
static duet_config_t collect_two_kernels(const duet_hw_t *hw, int32_t sms, int32_t mode, int32_t comm)
{
    duet_config_t c = duet_config_default(hw, mode);
    c.comm_wgs = comm;
    c.gemm_wgs = sms - comm;
    c.num_wgs = sms;
    return c;
}

/* A row of the workload, to be given its kind and configuration. */
static duet_corpus_row_t collect_proto(const duet_workload_t *wl)
{
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.wl = *wl;
    return r;
}

/* Fused points at every tile x fraction, and the collective alone at every CTA count. */
static void collect_add_fused(const duet_hw_t *hw, int32_t sms, const double *fracs, int nfracs, duet_corpus_row_t *pts,
                              size_t *n, size_t cap, const duet_corpus_row_t *r)
{
    for (int t = 0; t < NTILES; t++)
        for (int f = 0; f < nfracs; f++) {
            duet_config_t c = collect_fused(hw, sms, collect_tiles[t], fracs[f], 1);
            collect_add(pts, n, cap, r, DUET_ROW_OP, &c);
        }
}

static void collect_add_comm_alone(const duet_hw_t *hw, int32_t sms, duet_corpus_row_t *pts, size_t *n, size_t cap,
                                   const duet_corpus_row_t *r)
{
    for (int a = 0; a < NALONE; a++) {
        duet_config_t c = duet_config_default(hw, DUET_MODE_FUSED);
        c.num_wgs = collect_alone_ctas[a] < sms ? collect_alone_ctas[a] : sms;
        c.gemm_wgs = 0;
        c.comm_wgs = c.num_wgs;
        collect_add(pts, n, cap, r, DUET_ROW_COMM_ALONE, &c);
    }
}

/*
 * Copy mode (the collective on the copy engines, the GEMM on every SM) beside the GEMM and alone, on
 * 1 up to W1_NCOPY copy streams, no more than the critical rank's copies. At W = 1 the one copy is
 * local and contends for HBM with the GEMM as the local copy does at W = 2; a W = 2 corpus from two
 * ranks on one GPU (MPS) copies over the loopback, not a link, and says so in its provenance.
 */
static void collect_add_copy(const duet_hw_t *hw, int32_t sms, const duet_workload_t *wl, duet_corpus_row_t *pts,
                             size_t *n, size_t cap, const duet_corpus_row_t *r)
{
    if (!duet_copy_supports(wl->coll))
        return;
    int64_t copies = duet_copy_count(wl->coll, wl->world, duet_plan_critical_rank(wl), wl->root);
    for (int32_t q = 1; q <= W1_NCOPY && q <= copies; q++) {
        duet_config_t c = duet_config_default(hw, DUET_MODE_COPY);
        c.num_wgs = c.gemm_wgs = sms;
        c.comm_wgs = q;
        collect_add(pts, n, cap, r, DUET_ROW_OP, &c);
        collect_add(pts, n, cap, r, DUET_ROW_COMM_ALONE, &c);
    }
}

static size_t collect_points_w1(const duet_hw_t *hw, int32_t sms, const duet_workload_t *wl, duet_corpus_row_t *pts,
                                size_t cap)
{
    size_t n = 0;
    duet_corpus_row_t r = collect_proto(wl);
    duet_config_t c;
    collect_add_fused(hw, sms, w1_fracs, W1_NFRACS, pts, &n, cap, &r);
    for (int i = 0; i < W1_NCOMMW; i++) {
        c = collect_two_kernels(hw, sms, DUET_MODE_CONCURRENT, w1_comm_wgs[i]);
        collect_add(pts, &n, cap, &r, DUET_ROW_OP, &c);
        c = collect_two_kernels(hw, sms, DUET_MODE_VENDOR, w1_comm_wgs[i]);
        collect_add(pts, &n, cap, &r, DUET_ROW_OP, &c);
    }
    for (int b = 0; b < W1_NBUDGET; b++) {
        int32_t budget = (int32_t)lround(w1_budgets[b] * sms);
        budget = budget < 1 ? 1 : budget;
        for (int t = 0; t < NTILES; t++) {
            c = collect_gemm_budget(hw, budget, collect_tiles[t], 1);
            collect_add(pts, &n, cap, &r, DUET_ROW_GEMM_ALONE, &c);
            for (int s = 0; s < NSPLIT; s++) {
                if (!duet_split_k_worth_trying(hw, wl, collect_tiles[t], collect_split_ks[s]))
                    continue;
                c = collect_gemm_budget(hw, budget, collect_tiles[t], collect_split_ks[s]);
                collect_add(pts, &n, cap, &r, DUET_ROW_GEMM_ALONE, &c);
            }
        }
        /* The vendor GEMM planned for that many SMs. Its comm_wgs is unused (no collective runs)
         * but stays 1: a corpus checks a row's configuration against the whole workload, where
         * vendor mode needs a comm kernel. */
        c = duet_config_default(hw, DUET_MODE_VENDOR);
        c.gemm_wgs = budget;
        c.comm_wgs = 1;
        c.num_wgs = budget + 1;
        collect_add(pts, &n, cap, &r, DUET_ROW_GEMM_ALONE, &c);
    }
    collect_add_comm_alone(hw, sms, pts, &n, cap, &r);
    /* The vendor's collective alone at each CTA cap of vendor mode (NCCL maxCTAs, RCCL's
     * equivalent): vendor mode's collective is the library's, and only these rows can price it.
     * NCCL refuses two ranks on one GPU, so at W = 1 there are none. */
    if (wl->world >= 2 && wl->coll != DUET_COLL_NONE)
        for (int i = 0; i < W1_NCOMMW; i++) {
            c = collect_two_kernels(hw, sms, DUET_MODE_VENDOR, w1_comm_wgs[i]);
            collect_add(pts, &n, cap, &r, DUET_ROW_COMM_ALONE, &c);
        }
    collect_add_copy(hw, sms, wl, pts, &n, cap, &r);
    return n;
}

/* The copy grid: the GEMM alone on every SM per tile, then copy mode's rows. */
static size_t collect_points_copy(const duet_hw_t *hw, int32_t sms, const duet_workload_t *wl, duet_corpus_row_t *pts,
                                  size_t cap)
{
    size_t n = 0;
    duet_corpus_row_t r = collect_proto(wl);
    for (int t = 0; t < NTILES; t++) {
        duet_config_t c = collect_gemm_budget(hw, sms, collect_tiles[t], 1);
        collect_add(pts, &n, cap, &r, DUET_ROW_GEMM_ALONE, &c);
    }
    collect_add_copy(hw, sms, wl, pts, &n, cap, &r);
    return n;
}

size_t duet_collect_points_grid(const duet_hw_t *hw, int32_t sms, int32_t grid, const duet_workload_t *wl,
                                duet_corpus_row_t *pts, size_t cap)
{
    if (grid == DUET_COLLECT_GRID_W1)
        return collect_points_w1(hw, sms, wl, pts, cap);
    if (grid == DUET_COLLECT_GRID_COPY)
        return collect_points_copy(hw, sms, wl, pts, cap);
    return duet_collect_points(hw, sms, wl, pts, cap);
}

size_t duet_collect_points(const duet_hw_t *hw, int32_t sms, const duet_workload_t *wl, duet_corpus_row_t *pts,
                           size_t cap)
{
    size_t n = 0;
    duet_corpus_row_t r = collect_proto(wl);
    duet_config_t c;
    collect_add_fused(hw, sms, collect_fracs, NFRACS, pts, &n, cap, &r);
    for (int i = 0; i < NCOMMW; i++) {
        c = collect_two_kernels(hw, sms, DUET_MODE_CONCURRENT, collect_comm_wgs[i]);
        collect_add(pts, &n, cap, &r, DUET_ROW_OP, &c);
    }
    for (int t = 0; t < NTILES; t++) {
        c = collect_gemm_alone(hw, sms, collect_tiles[t], 1);
        collect_add(pts, &n, cap, &r, DUET_ROW_GEMM_ALONE, &c);
    }
    collect_add_comm_alone(hw, sms, pts, &n, cap, &r);
    for (int s = 0; s < NSPLIT; s++)
        for (int t = 0; t < NTILES; t++) {
            if (!duet_split_k_worth_trying(hw, wl, collect_tiles[t], collect_split_ks[s]))
                continue;
            c = collect_gemm_alone(hw, sms, collect_tiles[t], collect_split_ks[s]);
            collect_add(pts, &n, cap, &r, DUET_ROW_GEMM_ALONE, &c);
            for (int f = 0; f < NSFRAC; f++) {
                c = collect_fused(hw, sms, collect_tiles[t], collect_split_fracs[f], collect_split_ks[s]);
                collect_add(pts, &n, cap, &r, DUET_ROW_OP, &c);
            }
        }
    return n;
}

/* The measurement of one workload: per point its runs so far and, when it failed, why. */
typedef struct collect_ws {
    double *runs;              /* n x per_point times (ms) */
    int32_t *n_runs;           /* timed runs so far */
    duet_measure_stat_t *stat; /* the error of a failed point, then the summary */
    size_t *order;
} collect_ws_t;

static void collect_ws_free(collect_ws_t *w)
{
    free(w->order);
    free(w->stat);
    free(w->n_runs);
    free(w->runs);
}

static duet_status_t collect_ws_alloc(size_t n, int32_t per_point, collect_ws_t *w)
{
    memset(w, 0, sizeof(*w));
    w->runs = calloc(n * (size_t)per_point, sizeof(double));
    w->n_runs = calloc(n, sizeof(int32_t));
    w->stat = calloc(n, sizeof(duet_measure_stat_t));
    w->order = calloc(n, sizeof(size_t));
    if (w->runs == NULL || w->n_runs == NULL || w->stat == NULL || w->order == NULL) {
        collect_ws_free(w);
        return duet__error(DUET_ERR_NO_MEMORY, "calibrate collect: cannot allocate the runs of %zu points", n);
    }
    return DUET_OK;
}

/* One round's runs of point p (collective); the round 0 visit warms it up first (warmup runs),
 * later visits with one run. */
static void collect_run(duet_measure_h m, const duet_collect_params_t *prm, const duet_measure_bufs_t *b,
                        duet_corpus_row_t *r, int32_t round, int32_t per_round, int32_t per_point, collect_ws_t *w,
                        size_t p, int32_t *state, int settle)
{
    static const int32_t what[DUET_ROW_KIND_COUNT] = {DUET_MEASURE_OP, DUET_MEASURE_GEMM_ALONE,
                                                      DUET_MEASURE_COMM_ALONE};
    duet_measure_job_t j = duet_measure_job(what[r->kind], &r->wl, &r->cfg);
    duet_workload_t part = r->kind == DUET_ROW_GEMM_ALONE   ? duet_measure_gemm_part(&r->wl)
                           : r->kind == DUET_ROW_COMM_ALONE ? duet_measure_comm_part(&r->wl)
                                                            : r->wl;
    /* Vendor mode's collective alone is the library's, on the communicator capped at comm_wgs. */
    if (r->kind == DUET_ROW_COMM_ALONE && r->cfg.mode == DUET_MODE_VENDOR) {
        j = duet_measure_job(DUET_MEASURE_BASE_COLL, &part, NULL);
        j.slot = collect_cap_slot(r->cfg.comm_wgs);
    }
    if (round == 0 && duet_config_validate(&r->cfg, &part, duet_measure_hw(m)) < 0) {
        snprintf(w->stat[p].error, sizeof(w->stat[p].error), "not run: %s", duet_last_error());
        *state = DUET_COLLECT_FAILED;
        return;
    }
    /* A later visit comes after other configurations ran: one untimed run first, so that the
     * first timed one does not pay for the switch (another kernel, cold instruction cache). */
    duet_measure_runs_t runs = duet_measure_default_runs();
    runs.warmup = round == 0 ? prm->warmup : (prm->warmup > 0 ? 1 : 0);
    if (settle)
        runs.warmup_ms = prm->warmup_ms;
    runs.repeats = per_round;
    if (duet_measure_samples(m, &j, b, &runs, w->runs + p * (size_t)per_point, &w->n_runs[p]) < 0) {
        snprintf(w->stat[p].error, sizeof(w->stat[p].error), "%s", duet_last_error());
        *state = DUET_COLLECT_FAILED;
        return;
    }
    /* The library's kernel for this GEMM, as its heuristic chose it (the same every round: the
     * baseline caches the choice per shape and SM target). The model prices vendor mode with it. */
    if (r->cfg.mode == DUET_MODE_VENDOR && r->kind != DUET_ROW_COMM_ALONE && duet_measure_baseline(m) != NULL &&
        duet_baseline_last_kernel(duet_measure_baseline(m), &r->vendor) < 0)
        memset(&r->vendor, 0, sizeof(r->vendor));
}

/* The row of point p after the last round. */
static void collect_finish(collect_ws_t *w, size_t p, int32_t state, int32_t per_point, duet_corpus_row_t *r)
{
    duet_measure_stat_t *s = &w->stat[p];
    if (state == DUET_COLLECT_RUN) {
        duet_measure_summarise(w->runs + p * (size_t)per_point, w->n_runs[p], s);
    } else {
        s->ok = 0;
        s->med_ms = s->min_ms = s->max_ms = 0;
    }
    r->ok = s->ok;
    r->ms = s->med_ms;
    r->min_ms = s->min_ms;
    r->max_ms = s->max_ms;
    r->repeats = s->ok ? s->n : 0;
    snprintf(r->error, sizeof(r->error), "%.159s", s->ok ? "" : s->error);
}

duet_status_t duet_collect_workload(duet_measure_h m, const duet_collect_params_t *params,
                                    const duet_measure_bufs_t *bufs, duet_corpus_row_t *pts, int32_t *state, size_t n,
                                    duet_collect_progress_fn progress, void *user)
{
    if (params->rounds < 1 || params->repeats < 1 || params->warmup < 0 || !(params->warmup_ms >= 0) ||
        params->warmup_ms > 60000)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "calibrate collect: %d rounds, %d timed and %d warm-up runs, %g ms of warm-up",
                           (int)params->rounds, (int)params->repeats, (int)params->warmup, params->warmup_ms);
    if (n == 0)
        return DUET_OK;
    const int32_t per_point = duet_collect_runs_per_point(params), per_round = per_point / params->rounds;
    collect_ws_t w;
    DUET_CHECK(collect_ws_alloc(n, per_point, &w));
    int settled = params->warmup_ms <= 0;
    for (int32_t round = 0; round < params->rounds; round++) {
        duet_collect_order_seeded(&pts[0].wl, round, params->order_seed, w.order, n);
        for (size_t q = 0; q < n; q++) {
            size_t p = w.order[q];
            if (state[p] != DUET_COLLECT_RUN)
                continue;
            if (progress != NULL)
                progress(user, &pts[p], round, q);
            collect_run(m, params, bufs, &pts[p], round, per_round, per_point, &w, p, &state[p], !settled);
            settled = 1;
        }
    }
    for (size_t p = 0; p < n; p++)
        if (state[p] != DUET_COLLECT_SKIP)
            collect_finish(&w, p, state[p], per_point, &pts[p]);
    collect_ws_free(&w);
    return DUET_OK;
}
