/*
 * duet calibrate collect: measure a corpus (docs/calibration.md) on the GPUs of this node.
 *
 * For each workload of the shape set: fused mode at a grid of gemm_wgs fractions x GEMM tiles,
 * concurrent mode at a grid of comm grids, the GEMM alone for each tile, and the collective
 * alone at several CTA counts. Each point is the median of --repeats timed runs after --warmup,
 * with a barrier before each, of the slowest rank. Resumable: points already in the output file
 * are skipped. Failed points are recorded with their error. The file is rewritten atomically
 * after every workload, so an interruption loses at most one workload.
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

#define NFRACS (int)(sizeof(collect_fracs) / sizeof(collect_fracs[0]))
#define NTILES (int)(sizeof(collect_tiles) / sizeof(collect_tiles[0]))
#define NCOMMW (int)(sizeof(collect_comm_wgs) / sizeof(collect_comm_wgs[0]))
#define NALONE (int)(sizeof(collect_alone_ctas) / sizeof(collect_alone_ctas[0]))

/* splitmix64: a small deterministic generator, the same on every rank. */
static uint64_t collect_mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * Put a workload's points in a random order, seeded by the workload so that every rank (and a
 * resumed run) draws the same one. A fixed order made the first point of a shape measure
 * systematically fast (in 11 of 75 shapes of the first H200 corpus the best point was the first
 * one measured, against about 1.3 expected by chance), and that bias went straight into the picks.
 */
static void collect_shuffle(const duet_workload_t *wl, duet_corpus_row_t *pts, size_t n)
{
    uint64_t x = (uint64_t)wl->m * 1000003u ^ (uint64_t)wl->n * 10007u ^ (uint64_t)wl->k * 101u ^
                 (uint64_t)wl->mc * 7919u ^ (uint64_t)wl->nc * 31u ^ (uint64_t)wl->coll;
    for (size_t i = n; i > 1; i--) {
        size_t j = (size_t)(collect_mix(&x) % i);
        duet_corpus_row_t t = pts[i - 1];
        pts[i - 1] = pts[j];
        pts[j] = t;
    }
}

/* The points of one workload, in measurement order (shuffled: collect_shuffle). */
static size_t collect_points(const gpu_env_t *e, const duet_workload_t *wl, duet_corpus_row_t *pts, size_t cap)
{
    size_t n = 0;
    duet_corpus_row_t r;
    memset(&r, 0, sizeof(r));
    r.wl = *wl;
    for (int t = 0; t < NTILES; t++)
        for (int f = 0; f < NFRACS && n < cap; f++) {
            r.kind = DUET_ROW_OP;
            r.cfg = duet_config_default(&e->hw, DUET_MODE_FUSED);
            r.cfg.tile = collect_tiles[t];
            int32_t g = (int32_t)lround(collect_fracs[f] * e->sms);
            r.cfg.gemm_wgs = g < 1 ? 1 : g > e->sms ? e->sms : g;
            r.cfg.comm_wgs = r.cfg.num_wgs - r.cfg.gemm_wgs;
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
        r.cfg = duet_config_default(&e->hw, DUET_MODE_FUSED);
        r.cfg.tile = collect_tiles[t];
        r.cfg.gemm_wgs = r.cfg.num_wgs;
        r.cfg.comm_wgs = 0;
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
    collect_shuffle(wl, pts, n);
    return n;
}

static void collect_usage(FILE *f)
{
    fprintf(f, "usage: mpirun -np W duet calibrate collect -o FILE [--shapes FILE] [--collective LIST] [--dtype D]\n"
               "                                      [--repeats N] [--warmup N] [--hw PROFILE]\n"
               "\n"
               "Measures a calibration corpus on this node's GPUs, one rank per GPU. Default shape set: the reference\n"
               "design's 15 GEMM shapes x all five collectives. Per shape: fused mode at gemm_wgs fractions {0.55, 0.65,\n"
               "0.72, 0.75, 0.78, 0.84, 0.88, 0.92, 0.96, 1.0} of the SMs x the tiles 256x256, 128x256, 256x128, 128x128,\n"
               "256x64 (BK 64); concurrent mode at comm_wgs {4, 8, 16, 24, 32, 48}; the GEMM alone per tile; the\n"
               "collective alone on 8, 16, 32, 66 and 132 CTAs. Each point: median of N timed runs (default 8) after\n"
               "warm-up (default 3), barriers before each, plus min and max.\n"
               "\n"
               "Resumable: points already in FILE are skipped, so re-running after an interruption goes on where it\n"
               "stopped. A point that fails is recorded as failed with its error. FILE is rewritten atomically after\n"
               "every shape. Progress and ETA on stderr.\n"
               "\n"
               "example:\n"
               "  NCCL_NVLS_ENABLE=0 mpirun -np 2 build-gpu/duet calibrate collect -o tuning_data/h200_world2.json\n");
}

static void collect_meta(const gpu_env_t *e, int reps, int warm, duet_corpus_t *c)
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
    c->repeats = reps;
    c->warmup = warm;
    c->n_fracs = NFRACS;
    memcpy(c->fracs, collect_fracs, sizeof(collect_fracs));
    c->n_tiles = NTILES;
    memcpy(c->tiles, collect_tiles, sizeof(collect_tiles));
    c->n_comm_wgs = NCOMMW;
    memcpy(c->comm_wgs, collect_comm_wgs, sizeof(collect_comm_wgs));
}

int cmd_collect(int argc, char **argv)
{
    enum { O_SHAPES = 300, O_COLL, O_DTYPE, O_REP, O_WARM, O_HW };
    static const struct option longopts[] = {
        {"shapes", required_argument, NULL, O_SHAPES}, {"collective", required_argument, NULL, O_COLL},
        {"dtype", required_argument, NULL, O_DTYPE},   {"repeats", required_argument, NULL, O_REP},
        {"warmup", required_argument, NULL, O_WARM},   {"hw", required_argument, NULL, O_HW},
        {"help", no_argument, NULL, 'h'},              {NULL, 0, NULL, 0}};
    const char *shapes = NULL, *out = NULL, *hw = NULL;
    uint32_t colls = 0;
    int32_t dtype = DUET_DTYPE_FP16;
    long long reps = 8, warm = 3;
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
    duet_corpus_row_t *pts = NULL;
    duet_status_t st = DUET_OK;
    int bad = 0, any_bad = 0;

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
            }
        }
    }
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, e.comm);
    if (any_bad) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    collect_meta(&e, (int)reps, (int)warm, &corpus);
    st = shapes ? duet_workloads_load(shapes, e.world, dtype, &wls) : duet_workloads_seed(e.world, colls, dtype, &wls);
    if (st < 0) {
        rc = cli_fail(cmd, st);
        goto out;
    }
    size_t cap = (size_t)(NTILES * NFRACS + NCOMMW + NTILES + NALONE);
    pts = calloc(cap, sizeof(*pts));
    if (pts == NULL) {
        rc = cli_fail(cmd, DUET_ERR_NO_MEMORY);
        goto out;
    }
    size_t total = 0, done = 0, measured = 0, failed = 0;
    for (size_t i = 0; i < wls.n; i++)
        total += collect_points(&e, &wls.w[i], pts, cap);
    double t0 = gpu_now();
    for (size_t i = 0; i < wls.n; i++) {
        size_t np = collect_points(&e, &wls.w[i], pts, cap);
        /* Which points are still missing: rank 0 decides, every rank follows. */
        int todo = 0;
        for (size_t p = 0; p < np; p++)
            todo += e.rank == 0 && duet_corpus_find(&corpus, &pts[p]) < 0;
        MPI_Bcast(&todo, 1, MPI_INT, 0, e.comm);
        if (todo == 0) {
            done += np;
            continue;
        }
        gpu_bufs_t b;
        if ((st = gpu_bufs_alloc(&e, &wls.w[i], 7 + i, &b)) < 0) {
            rc = cli_fail(cmd, st);
            goto out;
        }
        for (size_t p = 0; p < np; p++, done++) {
            int skip = e.rank == 0 && duet_corpus_find(&corpus, &pts[p]) >= 0;
            MPI_Bcast(&skip, 1, MPI_INT, 0, e.comm);
            if (skip)
                continue;
            duet_corpus_row_t *r = &pts[p];
            char what[96];
            snprintf(what, sizeof(what), "%lldx%lldx%lld %s %s %d", (long long)r->wl.m, (long long)r->wl.n,
                     (long long)r->wl.k, duet_collective_name(r->wl.coll), duet_row_kind_name(r->kind),
                     r->cfg.gemm_wgs);
            gpu_progress(&e, what, done, total, t0);
            duet_workload_t wl = r->kind == DUET_ROW_GEMM_ALONE   ? gpu_gemm_part(&r->wl)
                                 : r->kind == DUET_ROW_COMM_ALONE ? gpu_comm_part(&r->wl)
                                                                  : r->wl;
            gpu_stat_t s;
            memset(&s, 0, sizeof(s));
            if (duet_config_validate(&r->cfg, &wl, &e.hw) < 0) {
                snprintf(s.error, sizeof(s.error), "not run: %s", duet_last_error());
            } else {
                gpu_duet_job_t j;
                gpu_duet_job_init(&j, &e, &wl, &r->cfg, &b);
                gpu_measure(&e, gpu_run_duet, &j, (int)warm, (int)reps, &s);
            }
            r->ok = s.ok;
            r->ms = s.med;
            r->min_ms = s.min;
            r->max_ms = s.max;
            r->repeats = s.ok ? s.n : 0;
            snprintf(r->error, sizeof(r->error), "%.159s", s.ok ? "" : s.error);
            failed += !s.ok;
            measured++;
            if (e.rank == 0 && (st = duet_corpus_add(&corpus, r)) < 0) {
                rc = cli_fail(cmd, st);
                gpu_bufs_free(&e, &b);
                goto out;
            }
        }
        gpu_bufs_free(&e, &b);
        if (e.rank == 0 && (st = duet_corpus_save(&corpus, out)) < 0) {
            rc = cli_fail(cmd, st);
            goto out;
        }
    }
    gpu_progress(&e, "done", total, total, t0);
    if (e.rank == 0)
        printf("%s: %zu points measured (%zu failed), %zu rows in %s\n", cmd, measured, failed, corpus.n, out);
out:
    free(pts);
    duet_workloads_free(&wls);
    duet_corpus_free(&corpus);
    gpu_env_fini(&e);
    return rc;
}
