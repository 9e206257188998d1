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

/* Where the numbers come from (the corpus's "provenance"). */
static void collect_provenance(const duet_collect_params_t *cp, const char *shapes, duet_corpus_provenance_t *p)
{
    duet_build_info_t bi = duet_build_info();
    snprintf(p->duet_commit, sizeof(p->duet_commit), "%s", bi.source_commit);
    snprintf(p->kernel_commit, sizeof(p->kernel_commit), "%s", bi.kernel_commit);
    snprintf(p->kernel_hash, sizeof(p->kernel_hash), "%s", bi.kernel_hash);
    snprintf(p->shapes, sizeof(p->shapes), "%s", shapes);
    snprintf(p->grid, sizeof(p->grid), "%s", duet_collect_grid_name(cp->grid));
    p->order_seed = (int64_t)cp->order_seed;
    p->warmup_ms = cp->warmup_ms;
    /* duet does not lock clocks: the driver's default boost under its power limit. */
    if (cp->warmup_ms > 0)
        snprintf(p->clocks, sizeof(p->clocks), "driver default (not locked), settled by %g ms of warm-up per workload",
                 cp->warmup_ms);
    else
        snprintf(p->clocks, sizeof(p->clocks), "driver default (not locked), no time-based warm-up");
}

/*
 * The expected duration (s): each point's executions (warm-up and timed) at the profile's
 * predicted time (policy fluid), plus a per-execution overhead (launch, barrier, event reads,
 * about 0.5 ms: the reference grid's 100k executions took 110 s on 2 x H200, about half of it overhead) and the
 * settling warm-up per workload.
 */
static double collect_estimate_s(const gpu_env_t *e, const duet_collect_params_t *cp, const duet_workloads_t *wls,
                                 duet_corpus_row_t *pts)
{
    const double overhead_s = 0.5e-3;
    int32_t per_point = duet_collect_runs_per_point(cp);
    int32_t execs = per_point + cp->warmup + (cp->rounds - 1) * (cp->warmup > 0 ? 1 : 0);
    duet_sim_ws_t *ws = NULL;
    if (duet_sim_ws_create(&ws) < 0)
        return -1;
    double total = 0;
    for (size_t i = 0; i < wls->n; i++) {
        size_t np = duet_collect_points_grid(e->hw, e->gpu->sms, cp->grid, &wls->w[i], pts, DUET_COLLECT_MAX_POINTS);
        total += cp->warmup_ms * 1e-3;
        for (size_t p = 0; p < np; p++) {
            duet_workload_t part = pts[p].kind == DUET_ROW_GEMM_ALONE   ? duet_measure_gemm_part(&pts[p].wl)
                                   : pts[p].kind == DUET_ROW_COMM_ALONE ? duet_measure_comm_part(&pts[p].wl)
                                                                        : pts[p].wl;
            duet_plan_t plan;
            duet_sim_result_t r;
            double t = 0;
            if (duet_plan_build(&part, &pts[p].cfg, duet_plan_critical_rank(&part), &plan) >= 0 &&
                duet_sim_run(ws, &duet_sim_policy_fluid, e->hw, &plan, NULL, &r) >= 0)
                t = r.makespan_s;
            total += execs * (t + overhead_s);
        }
    }
    duet_sim_ws_destroy(ws);
    return total;
}

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
        cli_error(cmd, "%s was measured on %s (%d SMs) at world %d, this is %s (%d SMs) at world %d", duet__q(out),
                  duet__q(corpus->arch), corpus->sms, corpus->world, e->gpu->arch, e->gpu->sms, e->world);
        return 1;
    }
    fprintf(stderr, "duet: %s: resuming %s: %zu points already measured\n", cmd, duet__q(out), corpus->n);
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
        pr.total += duet_collect_points_grid(hw, sms, cp->grid, &wls->w[i], w->pts, DUET_COLLECT_MAX_POINTS) *
                    (size_t)cp->rounds;
    for (size_t i = 0; i < wls->n; i++, pr.base += pr.np * (size_t)cp->rounds) {
        size_t np = pr.np = duet_collect_points_grid(hw, sms, cp->grid, &wls->w[i], w->pts, DUET_COLLECT_MAX_POINTS);
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
        duet_collect_order_seeded(&wls->w[i], 0, cp->order_seed, w->order, np);
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

enum { O_SHAPES = 300, O_COLL, O_DTYPE, O_REP, O_ROUNDS, O_WARM, O_HW, O_RANDOM, O_SEED, O_GRID, O_ORDER, O_WARMMS };

/* calibrate collect's flags. */
typedef struct collect_opts {
    const char *shapes, *out, *hw;
    uint32_t colls;
    int32_t dtype;
    long long reps, warm, rounds, n_random, seed, order_seed, warm_ms;
    int32_t grid;
    int help;
} collect_opts_t;

/* The integer flags: how each point is timed, and the random draw. */
static int collect_count_option(collect_opts_t *o, int opt, const char *arg)
{
    switch (opt) {
    case O_REP:
        if (cli_parse_i64(arg, 1, 100000, &o->reps) != 0)
            return cli_usage_error("calibrate collect", "--repeats: '%s' is not a positive integer", duet__q(arg));
        return CLI_EXIT_OK;
    case O_ROUNDS:
        if (cli_parse_i64(arg, 1, 1000, &o->rounds) != 0)
            return cli_usage_error("calibrate collect", "--rounds: '%s' is not an integer in [1, 1000]", duet__q(arg));
        return CLI_EXIT_OK;
    case O_WARM:
        if (cli_parse_i64(arg, 0, 100000, &o->warm) != 0)
            return cli_usage_error("calibrate collect", "--warmup: '%s' is not a non-negative integer", duet__q(arg));
        return CLI_EXIT_OK;
    case O_RANDOM:
        if (cli_parse_i64(arg, 1, 100000, &o->n_random) != 0)
            return cli_usage_error("calibrate collect", "--random: '%s' is not an integer in [1, 100000]",
                                   duet__q(arg));
        return CLI_EXIT_OK;
    case O_SEED:
        if (cli_parse_i64(arg, 0, INT64_MAX, &o->seed) != 0)
            return cli_usage_error("calibrate collect", "--seed: '%s' is not a non-negative integer", duet__q(arg));
        return CLI_EXIT_OK;
    case O_ORDER:
        if (cli_parse_i64(arg, 0, INT64_MAX, &o->order_seed) != 0)
            return cli_usage_error("calibrate collect", "--order-seed: '%s' is not a non-negative integer",
                                   duet__q(arg));
        return CLI_EXIT_OK;
    case O_WARMMS:
        if (cli_parse_i64(arg, 0, 60000, &o->warm_ms) != 0)
            return cli_usage_error("calibrate collect", "--warmup-ms: '%s' is not an integer in [0, 60000]",
                                   duet__q(arg));
        return CLI_EXIT_OK;
    default:
        return CLI_OPT_UNKNOWN;
    }
}

/* One option of calibrate collect. */
static int collect_option(void *arg0, const char *cmd, int opt, const char *arg)
{
    collect_opts_t *o = arg0;
    switch (opt) {
    case 'o':
        o->out = arg;
        return CLI_EXIT_OK;
    case O_SHAPES:
        o->shapes = arg;
        return CLI_EXIT_OK;
    case O_COLL:
        return cli_parse_collectives("calibrate collect", arg, &o->colls);
    case O_DTYPE:
        if (duet_dtype_parse(arg, &o->dtype) < 0)
            return cli_usage_error("calibrate collect", "--dtype: %s", duet_last_error());
        return CLI_EXIT_OK;
    case O_HW:
        o->hw = arg;
        return CLI_EXIT_OK;
    case O_GRID:
        if ((o->grid = duet_collect_grid_parse(arg)) < 0)
            return cli_usage_error("calibrate collect", "--grid: '%s' is not reference, w1 or copy", duet__q(arg));
        return CLI_EXIT_OK;
    default:
        return collect_count_option(o, opt, arg);
    }
}

/* Parse argv into o (its defaults set here), then the rules between the flags. @return an exit code. */
static int collect_parse(collect_opts_t *o, int argc, char **argv)
{
    static const struct option longopts[] = {{"shapes", required_argument, NULL, O_SHAPES},
                                             {"collective", required_argument, NULL, O_COLL},
                                             {"dtype", required_argument, NULL, O_DTYPE},
                                             {"repeats", required_argument, NULL, O_REP},
                                             {"rounds", required_argument, NULL, O_ROUNDS},
                                             {"warmup", required_argument, NULL, O_WARM},
                                             {"hw", required_argument, NULL, O_HW},
                                             {"random", required_argument, NULL, O_RANDOM},
                                             {"seed", required_argument, NULL, O_SEED},
                                             {"grid", required_argument, NULL, O_GRID},
                                             {"order-seed", required_argument, NULL, O_ORDER},
                                             {"warmup-ms", required_argument, NULL, O_WARMMS},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    memset(o, 0, sizeof(*o));
    o->dtype = DUET_DTYPE_FP16;
    o->reps = 8;
    o->warm = 3;
    o->rounds = 3;
    o->seed = -1;
    o->grid = DUET_COLLECT_GRID_REFERENCE;
    int rc = cli_getopt("calibrate collect", argc, argv, longopts, collect_option, o, &o->help);
    if (rc != CLI_EXIT_OK || o->help || (rc = cli_no_operands("calibrate collect", argc, argv)) != CLI_EXIT_OK)
        return rc;
    if (o->out == NULL)
        return cli_usage_error("calibrate collect", "give the corpus file with -o FILE");
    if ((o->n_random > 0) != (o->seed >= 0) || (o->n_random > 0 && o->shapes != NULL))
        return cli_usage_error("calibrate collect", "--random N and --seed S go together, instead of --shapes");
    return CLI_EXIT_OK;
}

/* The workloads to collect (drawn, read from --shapes, or the seed's set) and what they are, in desc. */
static duet_status_t collect_workloads(const gpu_env_t *e, const collect_opts_t *o, duet_workloads_t *wls, char *desc,
                                       size_t n)
{
    duet_status_t st;
    if (o->n_random > 0) {
        duet_random_params_t rp = duet_random_default_params();
        rp.seed = (uint64_t)o->seed;
        rp.world = e->world;
        if (o->colls != 0)
            rp.colls = o->colls; /* --collective narrows the draw */
        st = duet_workloads_random(&rp, (size_t)o->n_random, wls);
        duet_random_describe(&rp, (size_t)o->n_random, desc, n);
    } else {
        st = o->shapes ? duet_workloads_load(o->shapes, e->world, o->dtype, wls)
                       : duet_workloads_seed(e->world, o->colls, o->dtype, wls);
        snprintf(desc, n, "%s", o->shapes ? o->shapes : "the reference design's shape set");
    }
    return st;
}

/* Rank 0: the run's expected length, by the profile's predictions. */
static void collect_announce(const gpu_env_t *e, const collect_opts_t *o, const duet_collect_params_t *cp,
                             const duet_workloads_t *wls, collect_ws_t *w, int per_point)
{
    if (e->rank != 0)
        return;
    double est = collect_estimate_s(e, cp, wls, w->pts);
    if (est >= 0)
        printf("%s: %zu workloads on %s, grid %s, %d timed runs a point in %d round(s): expected about %.0f s "
               "(%.1f min) by the %s profile's predictions\n",
               "calibrate collect", wls->n, e->gpu->name, duet_collect_grid_name(o->grid), per_point, (int)o->rounds,
               est, est / 60, e->hw->name);
    fflush(stdout);
}

/* Resume or start the corpus, then measure every workload into it. @return an exit code. */
static int collect_main(gpu_env_t *e, const collect_opts_t *o, const duet_collect_params_t *cp, int per_point)
{
    const char *cmd = "calibrate collect";
    duet_corpus_t corpus;
    duet_corpus_init(&corpus);
    duet_workloads_t wls = {NULL, 0};
    collect_ws_t *w = calloc(1, sizeof(*w));
    duet_status_t st = DUET_OK;
    int bad = 0, any_bad = 0, rc = CLI_EXIT_OK;
    if (w == NULL) {
        rc = cli_fail(cmd, duet__error(DUET_ERR_NO_MEMORY, "cannot allocate the points of a workload"));
        goto out;
    }
    if (e->rank == 0)
        bad = collect_resume(e, o->out, per_point, (int)o->rounds, &corpus);
    MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, e->comm);
    if (any_bad) {
        rc = CLI_EXIT_USAGE;
        goto out;
    }
    collect_meta(e, per_point, (int)o->warm, (int)o->rounds, &corpus);
    duet_collect_grid_of(&corpus, o->grid);
    char desc[sizeof(corpus.prov.shapes)];
    if ((st = collect_workloads(e, o, &wls, desc, sizeof(desc))) < 0) {
        rc = cli_fail(cmd, st);
        goto out;
    }
    /* A resumed file keeps the provenance it was started with, except what this run adds. */
    if (corpus.n == 0 || corpus.prov.kernel_hash[0] == '\0')
        collect_provenance(cp, desc, &corpus.prov);
    if (o->n_random > 0)
        corpus.prov.seed = o->seed;
    collect_announce(e, o, cp, &wls, w, per_point);
    rc = collect_all(e, cp, &wls, o->out, &corpus, w);
out:
    free(w);
    duet_workloads_free(&wls);
    duet_corpus_free(&corpus);
    return rc;
}

int cmd_collect(int argc, char **argv)
{
    collect_opts_t o;
    int rc = collect_parse(&o, argc, argv);
    if (rc != CLI_EXIT_OK || o.help) {
        if (o.help)
            cli_usage_collect(stdout);
        return rc;
    }
    duet_collect_params_t cp = duet_collect_default_params();
    cp.warmup = (int32_t)o.warm;
    cp.repeats = (int32_t)o.reps;
    cp.rounds = (int32_t)o.rounds;
    cp.grid = o.grid;
    cp.order_seed = (uint64_t)o.order_seed;
    cp.warmup_ms = (double)o.warm_ms;
    const int per_point = (int)duet_collect_runs_per_point(&cp);

    gpu_env_t e;
    duet_measure_params_t mp = duet_measure_default_params();
    mp.ctx.heap_bytes = (size_t)2 << 30;
    mp.ctx.hw = o.hw;
    mp.baseline = o.grid == DUET_COLLECT_GRID_W1; /* its vendor rows run the vendor library */
    duet_collect_baseline_caps(o.grid, &mp.base); /* and its collective on capped communicators */
    if ((rc = gpu_env_init(&e, "calibrate collect", &argc, &argv, &mp)) != CLI_EXIT_OK)
        return rc;
    rc = collect_main(&e, &o, &cp, per_point);
    gpu_env_fini(&e);
    return rc;
}
