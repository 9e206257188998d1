/*
 * duet calibrate collect: measure a corpus (docs/calibration.md) on the GPUs of this node. The
 * library defines the grid of points and measures a workload's points in interleaved rounds
 * (duet_collect_points(), duet_collect_workload(), include/duet/measure.h); this file parses the
 * options, resumes, reports progress and writes the corpus. Resumable: points already in the
 * output file are skipped. Failed points are recorded with their error. The file is rewritten
 * atomically after every workload, so an interruption loses at most one workload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "cli/gpu/gpu.h"
#include "duet/corpus.h"

static void collect_meta(const gpu_env_t *e, int runs, int warm, int rounds, duet_corpus_t *c)
{
    snprintf(c->device, sizeof(c->device), "%s", e->gpu->name);
    snprintf(c->arch, sizeof(c->arch), "%s", e->gpu->arch);
    snprintf(c->driver, sizeof(c->driver), "%s", e->gpu->driver);
    snprintf(c->runtime, sizeof(c->runtime), "%s", e->gpu->runtime);
    snprintf(c->duet_version, sizeof(c->duet_version), "%s", DUET_VERSION);
    time_t now = time(NULL);
    strftime(c->date, sizeof(c->date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    c->sms = e->gpu->sms;
    c->world = e->world;
    c->repeats = runs;
    c->warmup = warm;
    c->rounds = rounds;
    duet_collect_grid(c);
}

/*
 * Resume: rank 0 reads what is there and checks it was measured here. @return 0, or 1 when the
 * file cannot be resumed here (reported).
 */
static int collect_resume(const gpu_env_t *e, const char *out, int per_point, int n_rounds, duet_corpus_t *corpus)
{
    const char *cmd = "calibrate collect";
    FILE *f = fopen(out, "rb");
    if (f == NULL)
        return 0;
    fclose(f);
    duet_status_t st = duet_corpus_load(out, corpus);
    if (st < 0) {
        cli_fail(cmd, st);
        return 1;
    }
    if (strcmp(corpus->arch, e->gpu->arch) != 0 || corpus->sms != e->gpu->sms || corpus->world != e->world) {
        cli_error(cmd, "%s was measured on %s (%d SMs) at world %d, this is %s (%d SMs) at world %d", out, corpus->arch,
                  corpus->sms, corpus->world, e->gpu->arch, e->gpu->sms, e->world);
        return 1;
    }
    fprintf(stderr, "duet: %s: resuming %s: %zu points already measured\n", cmd, out, corpus->n);
    if (corpus->n > 0 && (corpus->repeats != per_point || corpus->rounds != n_rounds))
        fprintf(stderr,
                "duet: %s: warning: its points have %d timed runs in %d round(s), new ones get %d in %d "
                "(each row keeps its own count; the header will say %d in %d)\n",
                cmd, corpus->repeats, corpus->rounds, per_point, n_rounds, per_point, n_rounds);
    return 0;
}

/* Progress counts point-rounds: a point visited in each round, measured or not. */
typedef struct collect_progress {
    const gpu_env_t *e;
    size_t base, np, total; /* point-rounds before this workload, its points, all point-rounds */
    double t0;
} collect_progress_t;

static void collect_progress(void *user, const duet_corpus_row_t *r, int32_t round, size_t q)
{
    const collect_progress_t *pr = user;
    char what[96], tile[48];
    snprintf(what, sizeof(what), "r%d %lldx%lldx%lld %s %s %d %s", (int)round + 1, (long long)r->wl.m,
             (long long)r->wl.n, (long long)r->wl.k, duet_collective_name(r->wl.coll), duet_row_kind_name(r->kind),
             r->cfg.gemm_wgs, duet_config_tile_str(&r->cfg, tile, sizeof(tile)));
    gpu_progress(pr->e, what, pr->base + (size_t)round * pr->np + q, pr->total, pr->t0);
}

/* The workspace of one workload's points. */
typedef struct collect_ws {
    duet_corpus_row_t pts[DUET_COLLECT_MAX_POINTS];
    int32_t state[DUET_COLLECT_MAX_POINTS];
    size_t order[DUET_COLLECT_MAX_POINTS];
} collect_ws_t;

/*
 * Measure every workload's missing points, appending their rows to the corpus (rank 0), which
 * is saved after each workload. @return an exit code.
 */
static int collect_all(gpu_env_t *e, const duet_collect_params_t *cp, const duet_workloads_t *wls, const char *out,
                       duet_corpus_t *corpus, collect_ws_t *w)
{
    const char *cmd = "calibrate collect";
    const duet_hw_t *hw = e->hw;
    const int32_t sms = e->gpu->sms;
    size_t measured = 0, failed = 0;
    collect_progress_t pr = {e, 0, 0, 0, gpu_now()};
    for (size_t i = 0; i < wls->n; i++)
        pr.total += duet_collect_points(hw, sms, &wls->w[i], w->pts, DUET_COLLECT_MAX_POINTS) * (size_t)cp->rounds;
    for (size_t i = 0; i < wls->n; i++, pr.base += pr.np * (size_t)cp->rounds) {
        size_t np = pr.np = duet_collect_points(hw, sms, &wls->w[i], w->pts, DUET_COLLECT_MAX_POINTS);
        /* Which points are still missing: rank 0 decides, every rank follows. */
        int todo = 0;
        for (size_t p = 0; p < np; p++)
            w->state[p] =
                e->rank == 0 && duet_corpus_find(corpus, &w->pts[p]) < 0 ? DUET_COLLECT_RUN : DUET_COLLECT_SKIP;
        MPI_Bcast(w->state, (int)np, MPI_INT32_T, 0, e->comm);
        for (size_t p = 0; p < np; p++)
            todo += w->state[p] == DUET_COLLECT_RUN;
        if (todo == 0)
            continue;
        duet_measure_bufs_t b;
        duet_status_t st = duet_measure_bufs_alloc(e->m, &wls->w[i], 7 + i, &b);
        if (st >= 0)
            st = duet_collect_workload(e->m, cp, &b, w->pts, w->state, np, collect_progress, &pr);
        duet_measure_bufs_free(e->m, &b);
        if (st < 0)
            return cli_fail(cmd, st);
        /* Rows in the order of the first round (the order of the collector before rounds). */
        duet_collect_order(&wls->w[i], 0, w->order, np);
        for (size_t q = 0; q < np; q++) {
            size_t p = w->order[q];
            if (w->state[p] == DUET_COLLECT_SKIP)
                continue;
            failed += !w->pts[p].ok;
            measured++;
            if (e->rank == 0 && (st = duet_corpus_add(corpus, &w->pts[p])) < 0)
                return cli_fail(cmd, st);
        }
        if (e->rank == 0 && (st = duet_corpus_save(corpus, out)) < 0)
            return cli_fail(cmd, st);
    }
    gpu_progress(e, "done", pr.total, pr.total, pr.t0);
    if (e->rank == 0)
        printf("%s: %zu points measured (%zu failed), %zu rows in %s\n", cmd, measured, failed, corpus->n, out);
    return CLI_EXIT_OK;
}

int cmd_collect(int argc, char **argv)
{
    enum { O_SHAPES = 300, O_COLL, O_DTYPE, O_REP, O_ROUNDS, O_WARM, O_HW };
    static const struct option longopts[] = {{"shapes", required_argument, NULL, O_SHAPES},
                                             {"collective", required_argument, NULL, O_COLL},
                                             {"dtype", required_argument, NULL, O_DTYPE},
                                             {"repeats", required_argument, NULL, O_REP},
                                             {"rounds", required_argument, NULL, O_ROUNDS},
                                             {"warmup", required_argument, NULL, O_WARM},
                                             {"hw", required_argument, NULL, O_HW},
                                             {"help", no_argument, NULL, 'h'},
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
            cli_usage_collect(stdout);
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
    duet_collect_params_t cp = duet_collect_default_params();
    cp.warmup = (int32_t)warm;
    cp.repeats = (int32_t)reps;
    cp.rounds = (int32_t)rounds;
    const int per_point = (int)duet_collect_runs_per_point(&cp);

    gpu_env_t e;
    duet_measure_params_t mp = duet_measure_default_params();
    mp.ctx.heap_bytes = (size_t)2 << 30;
    mp.ctx.hw = hw;
    int rc = gpu_env_init(&e, "calibrate collect", &argc, &argv, &mp);
    if (rc != CLI_EXIT_OK)
        return rc;
    const char *cmd = "calibrate collect";
    duet_corpus_t corpus;
    duet_corpus_init(&corpus);
    duet_workloads_t wls = {NULL, 0};
    collect_ws_t *w = calloc(1, sizeof(*w));
    duet_status_t st = DUET_OK;
    int bad = 0, any_bad = 0;
    if (w == NULL) {
        rc = cli_fail(cmd, duet__error(DUET_ERR_NO_MEMORY, "cannot allocate the points of a workload"));
        goto out;
    }
    if (e.rank == 0)
        bad = collect_resume(&e, out, per_point, (int)rounds, &corpus);
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, e.comm);
    if (any_bad) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    collect_meta(&e, per_point, (int)warm, (int)rounds, &corpus);
    st = shapes ? duet_workloads_load(shapes, e.world, dtype, &wls) : duet_workloads_seed(e.world, colls, dtype, &wls);
    if (st < 0) {
        rc = cli_fail(cmd, st);
        goto out;
    }
    rc = collect_all(&e, &cp, &wls, out, &corpus, w);
out:
    free(w);
    duet_workloads_free(&wls);
    duet_corpus_free(&corpus);
    gpu_env_fini(&e);
    return rc;
}
