/*
 * duet calibrate collect: measure a corpus (docs/calibration.md) on the GPUs of this node.
 *
 * For each workload of the shape set: fused mode at a grid of gemm_wgs fractions x GEMM tiles,
 * concurrent mode at a grid of comm grids, the GEMM alone for each tile, the collective alone at
 * several CTA counts, and, where a K split is worth trying for a tile, the GEMM alone and two
 * fused points with K in 2 and in 4 parts. Each point's timed runs are taken in --rounds
 * interleaved rounds over the workload's points (each round in its own shuffled order), after
 * --warmup untimed runs; its row holds the median, min and max of all its runs, each the slowest
 * rank's, with a barrier before each. Resumable: points already in the output file are skipped.
 * Failed points are recorded with their error. The file is rewritten atomically after every
 * workload, so an interruption loses at most one workload.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/gpu/gpu.h"
#include "duet/corpus.h"

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
/* Points of one workload at most. */
#define NPOINTS (NTILES * NFRACS + NCOMMW + NTILES + NALONE + NSPLIT * NTILES * (1 + NSFRAC))

/* splitmix64: a small deterministic generator, the same on every rank. */
static uint64_t collect_mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * The order in which round `round` visits a workload's n points: a random permutation of 0..n-1,
 * seeded by the workload and the round, so that every rank (and a resumed run) draws the same
 * one. A fixed order made the first point of a shape measure systematically fast (in 11 of 75
 * shapes of the first H200 corpus the best point was the first one measured, against about 1.3
 * expected by chance), and that bias went straight into the picks. Round 0 is seeded as the
 * collector was before it had rounds.
 */
static void collect_order(const duet_workload_t *wl, int round, size_t *order, size_t n)
{
    uint64_t x = (uint64_t)wl->m * 1000003u ^ (uint64_t)wl->n * 10007u ^ (uint64_t)wl->k * 101u ^
                 (uint64_t)wl->mc * 7919u ^ (uint64_t)wl->nc * 31u ^ (uint64_t)wl->coll;
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
static duet_config_t collect_fused(const gpu_env_t *e, duet_gemm_tile_t tile, double frac, int32_t split_k)
{
    duet_config_t c = duet_config_default(&e->hw, DUET_MODE_FUSED);
    c.tile = tile;
    int32_t g = (int32_t)lround(frac * e->sms);
    c.gemm_wgs = g < 1 ? 1 : g > e->sms ? e->sms : g;
    c.comm_wgs = c.num_wgs - c.gemm_wgs;
    c.split_k = split_k;
    return c;
}

/* The GEMM alone on every SM. */
static duet_config_t collect_gemm_alone(const gpu_env_t *e, duet_gemm_tile_t tile, int32_t split_k)
{
    duet_config_t c = collect_fused(e, tile, 1.0, split_k);
    c.gemm_wgs = c.num_wgs;
    c.comm_wgs = 0;
    return c;
}

/* The points of one workload, in grid order (collect_order() says in which order to measure). */
static size_t collect_points(const gpu_env_t *e, const duet_workload_t *wl, duet_corpus_row_t *pts, size_t cap)
{
    size_t n = 0;
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.wl = *wl;
    for (int t = 0; t < NTILES; t++)
        for (int f = 0; f < NFRACS && n < cap; f++) {
            r.kind = DUET_ROW_OP;
            r.cfg = collect_fused(e, collect_tiles[t], collect_fracs[f], 1);
            pts[n++] = r;
        }
    for (int c = 0; c < NCOMMW && n < cap; c++) {
        r.kind = DUET_ROW_OP;
        r.cfg = duet_config_default(&e->hw, DUET_MODE_CONCURRENT);
        r.cfg.comm_wgs = collect_comm_wgs[c];
        r.cfg.gemm_wgs = e->sms - collect_comm_wgs[c];
        r.cfg.num_wgs = e->sms;
        pts[n++] = r;
    }
    for (int t = 0; t < NTILES && n < cap; t++) {
        r.kind = DUET_ROW_GEMM_ALONE;
        r.cfg = collect_gemm_alone(e, collect_tiles[t], 1);
        pts[n++] = r;
    }
    for (int a = 0; a < NALONE && n < cap; a++) {
        r.kind = DUET_ROW_COMM_ALONE;
        r.cfg = duet_config_default(&e->hw, DUET_MODE_FUSED);
        r.cfg.num_wgs = collect_alone_ctas[a] < e->sms ? collect_alone_ctas[a] : e->sms;
        r.cfg.gemm_wgs = 0;
        r.cfg.comm_wgs = r.cfg.num_wgs;
        pts[n++] = r;
    }
    for (int s = 0; s < NSPLIT; s++)
        for (int t = 0; t < NTILES; t++) {
            if (!duet_split_k_worth_trying(&e->hw, wl, collect_tiles[t], collect_split_ks[s]))
                continue;
            if (n < cap) {
                r.kind = DUET_ROW_GEMM_ALONE;
                r.cfg = collect_gemm_alone(e, collect_tiles[t], collect_split_ks[s]);
                pts[n++] = r;
            }
            for (int f = 0; f < NSFRAC && n < cap; f++) {
                r.kind = DUET_ROW_OP;
                r.cfg = collect_fused(e, collect_tiles[t], collect_split_fracs[f], collect_split_ks[s]);
                pts[n++] = r;
            }
        }
    return n;
}

static void collect_usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np W duet calibrate collect -o FILE [--shapes FILE] [--collective LIST] [--dtype D]\n"
               "                                      [--repeats N] [--rounds R] [--warmup N] [--hw PROFILE]\n"
               "\n"
               "Measures a calibration corpus on this node's GPUs, one rank per GPU. Default shape set: the reference\n"
               "design's 15 GEMM shapes x all five collectives. Per shape: fused mode at gemm_wgs fractions {0.55, 0.65,\n"
               "0.72, 0.75, 0.78, 0.84, 0.88, 0.92, 0.96, 1.0} of the SMs x the tiles 256x256, 128x256, 256x128, 128x128,\n"
               "256x64 (BK 64); concurrent mode at comm_wgs {4, 8, 16, 24, 32, 48}; the GEMM alone per tile; the\n"
               "collective alone on 8, 16, 32, 66 and 132 CTAs; and for K in 2 and in 4 parts, at each tile where the\n"
               "split is worth trying (C tiles x (parts - 1) < 2 x SMs), the GEMM alone and fused at 0.84 and 1.0.\n"
               "\n"
               "Each point: --warmup untimed runs (default 3; one at each later visit), then its timed runs in R\n"
               "interleaved rounds (--rounds, default 3): each round visits every point of the shape once, in an order\n"
               "shuffled per round, and takes ceil(N/R) timed runs of it (N = --repeats, default 8; 3 x 3 = 9 runs by\n"
               "default). The row holds the median, min and max of all of a point's runs, each the slowest rank's, with a barrier before each.\n"
               "Why rounds: the GPU's clocks drift over tenths of a second (power, temperature), so the runs of a\n"
               "point taken one after the other share one moment's clock, and configurations the model predicts\n"
               "alike measured 15-25 %% apart in no order. Spread over the shape's whole measurement, drift hits\n"
               "every point alike. --rounds 1 measures one point after the other, as before.\n"
               "\n"
               "Resumable: points already in FILE are skipped, so re-running after an interruption goes on where it\n"
               "stopped. A point that fails is recorded as failed with its error and not run in later rounds. FILE is\n"
               "rewritten atomically after every shape. Progress (point-rounds) and ETA on stderr.\n"
               "\n"
               "example:\n"
               "  NCCL_NVLS_ENABLE=0 mpirun -np 2 build-gpu/duet calibrate collect -o tuning_data/h200_world2.json\n");
}

static void collect_meta(const gpu_env_t *e, int runs, int warm, int rounds, duet_corpus_t *c)
{
    snprintf(c->device, sizeof(c->device), "%s", e->device);
    snprintf(c->arch, sizeof(c->arch), "%s", e->arch);
    snprintf(c->driver, sizeof(c->driver), "%s", e->driver);
    snprintf(c->runtime, sizeof(c->runtime), "%s", e->runtime);
    snprintf(c->duet_version, sizeof(c->duet_version), "%s", DUET_VERSION);
    time_t now = time(NULL);
    strftime(c->date, sizeof(c->date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    c->sms = e->sms;
    c->world = e->world;
    c->repeats = runs;
    c->warmup = warm;
    c->rounds = rounds;
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

/* A workload's measurement: per point its state, its runs so far and, when it failed, why. */
enum { COLLECT_SKIP = 0, COLLECT_RUN = 1, COLLECT_FAILED = 2 };
typedef struct collect_ws {
    duet_corpus_row_t pts[NPOINTS];
    size_t order[NPOINTS];
    int state[NPOINTS];       /* COLLECT_*: SKIP when the file has the point */
    int n_runs[NPOINTS];      /* timed runs so far */
    gpu_stat_t stat[NPOINTS]; /* error of a failed point, then the summary */
    double *runs;             /* NPOINTS x per_point times (ms) */
} collect_ws_t;

/* One round's runs of point p (collective); the round 0 visit warms it up first (--warmup runs),
 * later visits with one run. */
static void collect_run(gpu_env_t *e, const gpu_bufs_t *b, collect_ws_t *w, size_t p, int round, int warm,
                        int per_round, int per_point)
{
    duet_corpus_row_t *r = &w->pts[p];
    duet_workload_t wl = r->kind == DUET_ROW_GEMM_ALONE   ? gpu_gemm_part(&r->wl)
                         : r->kind == DUET_ROW_COMM_ALONE ? gpu_comm_part(&r->wl)
                                                          : r->wl;
    if (round == 0 && duet_config_validate(&r->cfg, &wl, &e->hw) < 0) {
        snprintf(w->stat[p].error, sizeof(w->stat[p].error), "not run: %s", duet_last_error());
        w->state[p] = COLLECT_FAILED;
        return;
    }
    gpu_duet_job_t j;
    gpu_duet_job_init(&j, e, &wl, &r->cfg, b);
    /* A later visit comes after other configurations ran: one untimed run first, so that the
     * first timed one does not pay for the switch (another kernel, cold instruction cache). */
    if (gpu_measure_runs(e, gpu_run_duet, &j, round == 0 ? warm : (warm > 0 ? 1 : 0), per_round, w->runs + p * (size_t)per_point,
                         &w->n_runs[p], w->stat[p].error, sizeof(w->stat[p].error)) < 0)
        w->state[p] = COLLECT_FAILED;
}

/* The row of point p after the last round. */
static void collect_finish(collect_ws_t *w, size_t p, int per_point)
{
    duet_corpus_row_t *r = &w->pts[p];
    gpu_stat_t *s = &w->stat[p];
    if (w->state[p] == COLLECT_RUN) {
        gpu_stat_summarise(w->runs + p * (size_t)per_point, w->n_runs[p], s);
    } else {
        s->ok = 0;
        s->med = s->min = s->max = 0;
    }
    r->ok = s->ok;
    r->ms = s->med;
    r->min_ms = s->min;
    r->max_ms = s->max;
    r->repeats = s->ok ? s->n : 0;
    snprintf(r->error, sizeof(r->error), "%.159s", s->ok ? "" : s->error);
}

int cmd_collect(int argc, char **argv)
{
    enum { O_SHAPES = 300, O_COLL, O_DTYPE, O_REP, O_ROUNDS, O_WARM, O_HW };
    static const struct option longopts[] = {
        {"shapes", required_argument, NULL, O_SHAPES}, {"collective", required_argument, NULL, O_COLL},
        {"dtype", required_argument, NULL, O_DTYPE},   {"repeats", required_argument, NULL, O_REP},
        {"rounds", required_argument, NULL, O_ROUNDS}, {"warmup", required_argument, NULL, O_WARM},
        {"hw", required_argument, NULL, O_HW},         {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *shapes = NULL, *out = NULL, *hw = NULL;
    uint32_t colls = 0;
    int32_t dtype = DUET_DTYPE_FP16;
    long long reps = 8, warm = 3, rounds = 3;
    int opt;
    optind = 1;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "ho:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'h':
            collect_usage(stdout);
            return CLI_EXIT_OK;
        case 'o':
            out = optarg;
            break;
        case O_SHAPES:
            shapes = optarg;
            break;
        case O_COLL: {
            int rc = cli_parse_collectives("calibrate collect", optarg, &colls);
            if (rc != CLI_EXIT_OK)
                return rc;
            break;
        }
        case O_DTYPE:
            if (duet_dtype_parse(optarg, &dtype) < 0)
                return cli_usage_error("calibrate collect", "--dtype: %s", duet_last_error());
            break;
        case O_REP:
            if (cli_parse_i64(optarg, 1, 100000, &reps) != 0)
                return cli_usage_error("calibrate collect", "--repeats: '%s' is not a positive integer", optarg);
            break;
        case O_ROUNDS:
            if (cli_parse_i64(optarg, 1, 1000, &rounds) != 0)
                return cli_usage_error("calibrate collect", "--rounds: '%s' is not an integer in [1, 1000]", optarg);
            break;
        case O_WARM:
            if (cli_parse_i64(optarg, 0, 100000, &warm) != 0)
                return cli_usage_error("calibrate collect", "--warmup: '%s' is not a non-negative integer", optarg);
            break;
        case O_HW:
            hw = optarg;
            break;
        default:
            return cli_getopt_error("calibrate collect", argv, opt);
        }
    }
    if (optind < argc)
        return cli_usage_error("calibrate collect", "unexpected argument '%s'", argv[optind]);
    if (out == NULL)
        return cli_usage_error("calibrate collect", "give the corpus file with -o FILE");
    /* Every point gets the same number of timed runs in every round: at least --repeats in all. */
    const int n_rounds = (int)rounds, per_round = (int)((reps + rounds - 1) / rounds);
    const int per_point = n_rounds * per_round;

    gpu_env_t e;
    gpu_env_params_t ep = {0};
    ep.heap_bytes = (size_t)2 << 30;
    ep.hw = hw;
    int rc = gpu_env_init(&e, "calibrate collect", &argc, &argv, &ep);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *cmd = "calibrate collect";
    duet_corpus_t corpus;
    duet_corpus_init(&corpus);
    duet_workloads_t wls = {NULL, 0};
    collect_ws_t *w = calloc(1, sizeof(*w));
    duet_status_t st = DUET_OK;
    int bad = 0, any_bad = 0;
    if (w == NULL || (w->runs = calloc((size_t)NPOINTS * (size_t)per_point, sizeof(double))) == NULL) {
        rc = cli_fail(cmd, DUET_ERR_NO_MEMORY);
        goto out;
    }

    /* Resume: rank 0 reads what is there and checks it was measured here. */
    if (e.rank == 0) {
        FILE *f = fopen(out, "rb");
        if (f != NULL) {
            fclose(f);
            st = duet_corpus_load(out, &corpus);
            if (st < 0) {
                cli_fail(cmd, st);
                bad = 1;
            } else if (strcmp(corpus.arch, e.arch) != 0 || corpus.sms != e.sms || corpus.world != e.world) {
                cli_error(cmd, "%s was measured on %s (%d SMs) at world %d, this is %s (%d SMs) at world %d", out,
                          corpus.arch, corpus.sms, corpus.world, e.arch, e.sms, e.world);
                bad = 1;
            } else {
                fprintf(stderr, "duet: %s: resuming %s: %zu points already measured\n", cmd, out, corpus.n);
                if (corpus.n > 0 && (corpus.repeats != per_point || corpus.rounds != n_rounds))
                    fprintf(stderr,
                            "duet: %s: warning: its points have %d timed runs in %d round(s), new ones get %d in %d "
                            "(each row keeps its own count; the header will say %d in %d)\n",
                            cmd, corpus.repeats, corpus.rounds, per_point, n_rounds, per_point, n_rounds);
            }
        }
    }
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, e.comm);
    if (any_bad) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    collect_meta(&e, per_point, (int)warm, n_rounds, &corpus);
    st = shapes ? duet_workloads_load(shapes, e.world, dtype, &wls) : duet_workloads_seed(e.world, colls, dtype, &wls);
    if (st < 0) {
        rc = cli_fail(cmd, st);
        goto out;
    }
    /* Progress counts point-rounds: a point visited in each round, measured or not. */
    size_t total = 0, done = 0, measured = 0, failed = 0;
    for (size_t i = 0; i < wls.n; i++)
        total += collect_points(&e, &wls.w[i], w->pts, NPOINTS) * (size_t)n_rounds;
    double t0 = gpu_now();
    for (size_t i = 0; i < wls.n; i++) {
        size_t np = collect_points(&e, &wls.w[i], w->pts, NPOINTS);
        /* Which points are still missing: rank 0 decides, every rank follows. */
        int todo = 0;
        for (size_t p = 0; p < np; p++)
            w->state[p] = e.rank == 0 && duet_corpus_find(&corpus, &w->pts[p]) < 0 ? COLLECT_RUN : COLLECT_SKIP;
        MPI_Bcast(w->state, (int)np, MPI_INT, 0, e.comm);
        for (size_t p = 0; p < np; p++) {
            todo += w->state[p] == COLLECT_RUN;
            w->n_runs[p] = 0;
            memset(&w->stat[p], 0, sizeof(w->stat[p]));
        }
        if (todo == 0) {
            done += np * (size_t)n_rounds;
            continue;
        }
        gpu_bufs_t b;
        if ((st = gpu_bufs_alloc(&e, &wls.w[i], 7 + i, &b)) < 0) {
            rc = cli_fail(cmd, st);
            goto out;
        }
        for (int round = 0; round < n_rounds; round++) {
            collect_order(&wls.w[i], round, w->order, np);
            for (size_t q = 0; q < np; q++, done++) {
                size_t p = w->order[q];
                if (w->state[p] != COLLECT_RUN)
                    continue;
                const duet_corpus_row_t *r = &w->pts[p];
                char what[96], tile[48];
                snprintf(what, sizeof(what), "r%d %lldx%lldx%lld %s %s %d %s", round + 1, (long long)r->wl.m,
                         (long long)r->wl.n, (long long)r->wl.k, duet_collective_name(r->wl.coll),
                         duet_row_kind_name(r->kind), r->cfg.gemm_wgs,
                         duet_config_tile_str(&r->cfg, tile, sizeof(tile)));
                gpu_progress(&e, what, done, total, t0);
                collect_run(&e, &b, w, p, round, (int)warm, per_round, per_point);
            }
        }
        gpu_bufs_free(&e, &b);
        /* Rows in the order of the first round (the order of the collector before rounds). */
        collect_order(&wls.w[i], 0, w->order, np);
        for (size_t q = 0; q < np; q++) {
            size_t p = w->order[q];
            if (w->state[p] == COLLECT_SKIP)
                continue;
            collect_finish(w, p, per_point);
            failed += !w->pts[p].ok;
            measured++;
            if (e.rank == 0 && (st = duet_corpus_add(&corpus, &w->pts[p])) < 0) {
                rc = cli_fail(cmd, st);
                goto out;
            }
        }
        if (e.rank == 0 && (st = duet_corpus_save(&corpus, out)) < 0) {
            rc = cli_fail(cmd, st);
            goto out;
        }
    }
    gpu_progress(&e, "done", total, total, t0);
    if (e.rank == 0)
        printf("%s: %zu points measured (%zu failed), %zu rows in %s\n", cmd, measured, failed, corpus.n, out);
out:
    if (w != NULL)
        free(w->runs);
    free(w);
    duet_workloads_free(&wls);
    duet_corpus_free(&corpus);
    gpu_env_fini(&e);
    return rc;
}
