/*
 * The tuner core: candidates from the model (and the candidate set), benchmarks through a
 * callback, agreement across ranks through a broadcast callback, and the database.
 * Nothing here knows about GPUs or MPI.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/internal.h"

/* ------------------------------------------------------------------------------------------ */
/* Warnings                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Where warnings go: the caller's callback (or stderr), and the result's text when there is one. */
typedef struct duet__tune_sink {
    duet_tune_warn_fn fn;
    void *user;
    duet_tune_result_t *res;
} duet__tune_sink_t;

static void duet__tune_sink_cb(void *user, const char *msg)
{
    duet__tune_sink_t *s = user;
    if (s->res != NULL) {
        size_t used = strlen(s->res->warnings), room = sizeof(s->res->warnings) - used;
        if (room > 1)
            snprintf(s->res->warnings + used, room, "%s\n", msg);
        s->res->n_warnings++;
    }
    if (s->fn)
        s->fn(s->user, msg);
    else
        fprintf(stderr, "duet: warning: %s\n", msg);
}

static void duet__tune_warnf(duet__tune_sink_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void duet__tune_warnf(duet__tune_sink_t *s, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    duet__tune_sink_cb(s, msg);
}

/* ------------------------------------------------------------------------------------------ */
/* The candidate list                                                                          */
/* ------------------------------------------------------------------------------------------ */

duet_config_t duet_tune_static_default(const duet_hw_t *hw, const duet_tune_params_t *params)
{
    /* Fused is the reference design's default; a mode set without fused gets concurrent's. */
    int32_t mode = params->modes & (1u << DUET_MODE_FUSED) ? DUET_MODE_FUSED : DUET_MODE_CONCURRENT;
    duet_config_t c = duet_config_default(hw, mode);
    if (params->cm > 0)
        c.cm = params->cm;
    if (params->cn > 0)
        c.cn = params->cn;
    if (params->group_m > 0)
        c.group_m = params->group_m;
    return c;
}

typedef struct duet__tune_builder {
    const duet_workload_t *wl;
    const duet_hw_t *hw;
    const duet_tune_params_t *p;
    duet_sim_ws_t *ws;
    duet_tune_outcome_t *cands;
    int32_t n;
} duet__tune_builder_t;

static int duet__tune_in_space(const duet_tune_params_t *p, const duet_config_t *cfg)
{
    for (size_t i = 0; i < p->n_space; i++)
        if (duet_config_same(&p->space[i], cfg))
            return 1;
    return 0;
}

/* Append a candidate unless it is a duplicate, not allowed, or invalid. @return 1 if appended. */
static int duet__tune_add(duet__tune_builder_t *b, const duet_config_t *cfg, int32_t source, int32_t rank,
                          double pred_ms)
{
    if (b->n >= DUET_TUNE_MAX_CANDIDATES)
        return 0;
    for (int32_t i = 0; i < b->n; i++)
        if (duet_config_same(&b->cands[i].cfg, cfg))
            return 0;
    if (source != DUET_TUNE_SRC_DEFAULT) {
        if (!(b->p->modes & (1u << cfg->mode)))
            return 0;
        if (b->p->n_space > 0 && !duet__tune_in_space(b->p, cfg))
            return 0;
        if (duet_config_validate(cfg, b->wl, b->hw) < 0)
            return 0;
    }
    duet_tune_outcome_t *o = &b->cands[b->n];
    memset(o, 0, sizeof(*o));
    o->cfg = *cfg;
    o->source = source;
    o->model_rank = rank;
    /* The model prices in ms; an outcome holds us. */
    if (!isfinite(pred_ms) && b->ws != NULL && duet__tune_predict(b->ws, b->hw, b->wl, cfg, &pred_ms) < 0)
        pred_ms = NAN;
    o->pred_us = pred_ms * 1e3;
    o->us = o->min_us = o->max_us = NAN;
    b->n++;
    return 1;
}

/*
 * The model's ranking: the full sweep, or the given space priced one by one. The caller frees
 * *list_p. A failure is returned (and becomes a warning): the list then stays empty.
 */
static duet_status_t duet__tune_model_rank(duet__tune_builder_t *b, duet_rank_item_t **list_p, size_t *n_p)
{
    const duet_tune_params_t *p = b->p;
    duet_rank_item_t *list = NULL;
    size_t n = 0;
    if (p->n_space > 0) {
        list = malloc(p->n_space * sizeof(*list));
        if (list == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "tune: cannot rank %zu configurations", p->n_space);
        for (size_t i = 0; i < p->n_space; i++) {
            double ms;
            if (!(p->modes & (1u << p->space[i].mode)) ||
                duet__tune_predict(b->ws, b->hw, b->wl, &p->space[i], &ms) < 0)
                continue; /* a configuration the model cannot run is not ranked */
            list[n].cfg = p->space[i];
            list[n].pred = ms;
            list[n].idx = i;
            n++;
        }
        duet_rank_sort(list, n); /* ties as validate and the fit report break them */
    } else {
        duet_sweep_params_t sp = duet_sweep_default_params();
        sp.policy = &duet_sim_policy_fluid;
        sp.modes = p->modes;
        sp.cm = p->cm;
        sp.cn = p->cn;
        sp.group_m = p->group_m;
        duet_sweep_result_t sr;
        DUET_CHECK(duet_sweep_run(b->ws, b->hw, b->wl, &sp, &sr));
        list = malloc((sr.n ? sr.n : 1) * sizeof(*list));
        if (list == NULL) {
            duet_sweep_result_free(&sr);
            return duet__error(DUET_ERR_NO_MEMORY, "tune: cannot rank %zu configurations", sr.n);
        }
        for (size_t i = 0; i < sr.n; i++) {
            list[n].cfg = sr.points[i].cfg;
            list[n].pred = sr.points[i].makespan_s * 1e3;
            list[n].idx = i;
            n++;
        }
        duet_sweep_result_free(&sr);
    }
    *list_p = list;
    *n_p = n;
    return DUET_OK;
}

/* Splits of the last-resort grid (the reference design's origami-free fallback). */
static const double duet__tune_heuristic_fracs[] = {0.5, 0.625, 0.75, 0.875, 1.0};
#define DUET__TUNE_NHEUR (sizeof(duet__tune_heuristic_fracs) / sizeof(duet__tune_heuristic_fracs[0]))

static duet_config_t duet__tune_heuristic(const duet_hw_t *hw, const duet_tune_params_t *p, size_t i)
{
    duet_config_t c = duet_tune_static_default(hw, p);
    int32_t sms = hw->n_sms;
    double f = duet__tune_heuristic_fracs[i];
    if (c.mode == DUET_MODE_FUSED) {
        long g = lround(f * c.num_wgs);
        c.gemm_wgs = (int32_t)(g < 1 ? 1 : g > c.num_wgs ? c.num_wgs : g);
        c.comm_wgs = c.num_wgs - c.gemm_wgs;
    } else {
        /* Concurrent: the same fractions of the SMs for the GEMM kernel, the rest (>= 1) for comm. */
        long g = lround(f * sms);
        c.gemm_wgs = (int32_t)(g < 1 ? 1 : g > sms - 1 ? (sms > 1 ? sms - 1 : 1) : g);
        c.comm_wgs = sms - c.gemm_wgs > 0 ? sms - c.gemm_wgs : 1;
        c.num_wgs = c.gemm_wgs + c.comm_wgs;
    }
    return c;
}

static duet_status_t duet__tune_candidates(const duet_workload_t *wl, const duet_hw_t *hw, const duet_tune_params_t *p,
                                           duet__tune_sink_t *sink, duet_tune_outcome_t *cands, int32_t *n_p,
                                           int32_t *model_led_p)
{
    duet__tune_builder_t b = {wl, hw, p, NULL, cands, 0};
    duet_rank_item_t *model = NULL;
    size_t n_model = 0;
    duet_tune_candset_t loaded;
    int have_loaded = 0;
    const duet_tune_candset_t *set = p->candset;
    duet_status_t st = duet_sim_ws_create(&b.ws);
    if (st < 0)
        return st;

    /* The candidate set: the caller's, else the file named by $DUET_TUNE_CANDIDATES. */
    const char *env = getenv("DUET_TUNE_CANDIDATES");
    if (set == NULL && env != NULL && env[0] != '\0') {
        if (duet_tune_candset_load(env, &loaded) == DUET_OK) {
            set = &loaded;
            have_loaded = 1;
        } else {
            duet__tune_warnf(sink, "DUET_TUNE_CANDIDATES: %s; going on without a candidate set", duet_last_error());
        }
    }
    const duet_tune_candset_arch_t *arch = set ? duet_tune_candset_find(set, hw->arch) : NULL;
    if (arch != NULL && arch->n_order == 0)
        arch = NULL;

    if (duet__tune_model_rank(&b, &model, &n_model) < 0) {
        duet__tune_warnf(sink, "the model could not rank configurations (%s); using the candidate set and defaults",
                         duet_last_error());
        free(model);
        model = NULL;
        n_model = 0;
    }

    /* The rule (docs/tuning.md): a calibrated profile's ranking leads; without one, measured
     * evidence (the candidate set of this arch) leads. Either way the other fills. */
    int model_led = p->calibrated || arch == NULL;
    for (int pass = 0; pass < 2; pass++) {
        int use_model = (pass == 0) == model_led;
        if (use_model) {
            for (size_t i = 0; i < n_model && b.n < p->top_k; i++)
                duet__tune_add(&b, &model[i].cfg, DUET_TUNE_SRC_MODEL, (int32_t)(i + 1), model[i].pred);
        } else if (arch != NULL) {
            for (size_t i = 0; i < arch->n_order && b.n < p->top_k; i++) {
                duet_config_t c = duet_tune_cand_config(&arch->order[i], hw, p->cm, p->cn, p->group_m);
                duet__tune_add(&b, &c, DUET_TUNE_SRC_CANDSET, 0, NAN);
            }
        }
    }
    for (size_t i = 0; i < DUET__TUNE_NHEUR && b.n < p->top_k; i++) {
        duet_config_t c = duet__tune_heuristic(hw, p, i);
        duet__tune_add(&b, &c, DUET_TUNE_SRC_HEURISTIC, 0, NAN);
    }
    /* The monotonicity guard: the untuned default is always measured, so the winner is never
     * slower than it (on this rank's timings). */
    duet_config_t d = duet_tune_static_default(hw, p);
    duet__tune_add(&b, &d, DUET_TUNE_SRC_DEFAULT, 0, NAN);
    for (int32_t i = 0; i < b.n; i++) {
        /* Give the model's rank to candidates from elsewhere that the model also ranked. */
        for (size_t j = 0; cands[i].model_rank == 0 && j < n_model; j++)
            if (duet_config_same(&model[j].cfg, &cands[i].cfg))
                cands[i].model_rank = (int32_t)(j + 1);
    }

    *n_p = b.n;
    *model_led_p = model_led;
    free(model);
    if (have_loaded)
        duet_tune_candset_free(&loaded);
    duet_sim_ws_destroy(b.ws);
    return DUET_OK;
}

duet_status_t duet_tune_candidates(const duet_workload_t *wl, const duet_hw_t *hw, const duet_tune_params_t *params,
                                   duet_tune_outcome_t *cands, int32_t *n_p, int32_t *model_led_p)
{
    duet_tune_params_t p;
    DUET_CHECK(duet_tune_params_resolve(params, &p)); /* a no-op on resolved parameters */
    DUET_CHECK(duet_workload_validate(wl));
    duet__tune_sink_t sink = {p.warn, p.warn_user, NULL};
    return duet__tune_candidates(wl, hw, &p, &sink, cands, n_p, model_led_p);
}

/* ------------------------------------------------------------------------------------------ */
/* The run                                                                                     */
/* ------------------------------------------------------------------------------------------ */

static void duet__tune_cfg_text(const duet_config_t *c, char *buf, size_t n)
{
    char tile[32];
    snprintf(buf, n, "%s gemm_wgs %d comm_wgs %d tile %s", duet_mode_name(c->mode), (int)c->gemm_wgs, (int)c->comm_wgs,
             duet_config_tile_str(c, tile, sizeof(tile)));
}

/* Benchmark every candidate; failures are recorded, not fatal. @return the index of the lowest median or -1. */
static int32_t duet__tune_bench_all(duet_tune_result_t *r, duet_tune_bench_fn bench, void *user,
                                    duet__tune_sink_t *sink)
{
    int32_t best = -1;
    double best_ms = INFINITY;
    for (int32_t i = 0; i < r->n_cands; i++) {
        duet_tune_outcome_t *c = &r->cands[i];
        double med = NAN, lo = NAN, hi = NAN;
        duet_clear_error();
        duet_status_t st = bench(user, &c->cfg, &med, &lo, &hi);
        if (st >= 0 && (!isfinite(med) || !(med > 0)))
            st = duet__error(DUET_ERR_INTERNAL, "the benchmark returned %g ms", med);
        if (st < 0) {
            const char *why = duet_last_error();
            c->ok = 0;
            c->status = st;
            snprintf(c->error, sizeof(c->error), "%s", why[0] ? why : duet_status_string(st));
            char cfg[96];
            duet__tune_cfg_text(&c->cfg, cfg, sizeof(cfg));
            duet__tune_warnf(sink, "candidate %d (%s) failed and is skipped: %s", (int)i, cfg, c->error);
            continue;
        }
        c->ok = 1;
        /* The benchmark's ms as us; the pick compares the benchmark's own numbers. */
        c->us = med * 1e3;
        c->min_us = (isfinite(lo) ? lo : med) * 1e3;
        c->max_us = (isfinite(hi) ? hi : med) * 1e3;
        if (best < 0 || med < best_ms) {
            best = i;
            best_ms = med;
        }
    }
    return best;
}

/* The cached configuration of rank 0, field by field (an int32 broadcast is all agree offers). */
static duet_status_t duet__tune_agree_config(duet_tune_agree_fn agree, void *user, duet_config_t *c)
{
    int32_t *fields[] = {&c->mode,    &c->num_wgs, &c->gemm_wgs, &c->comm_wgs, &c->tile.bm, &c->tile.bn,
                         &c->tile.bk, &c->cm,      &c->cn,       &c->group_m,  &c->split_k};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        DUET_CHECK(agree(user, fields[i]));
    return DUET_OK;
}

static void duet__tune_entry_fill(duet_tune_entry_t *e, const duet_tune_result_t *r, const duet_hw_t *hw,
                                  const duet_workload_t *wl, const duet_tune_params_t *p)
{
    memset(e, 0, sizeof(*e));
    snprintf(e->key, sizeof(e->key), "%s", r->key);
    duet_tune_arch_strip(hw->arch, e->arch, sizeof(e->arch));
    e->sms = hw->n_sms;
    e->modes = p->modes;
    e->wl = *wl;
    snprintf(e->tiles, sizeof(e->tiles), "%s", DUET_TILE_LIST_VERSION);
    e->cfg = r->cfg;
    e->measured_us = r->measured_us;
    e->pred_us = r->pred_us;
    e->n_warmup = p->n_warmup;
    e->n_repeat = p->n_repeat;
    duet__tune_utc_now(e->date, sizeof(e->date));
    snprintf(e->duet_version, sizeof(e->duet_version), "%s", DUET_VERSION);
    e->n_cands = r->n_cands;
    memcpy(e->cands, r->cands, (size_t)r->n_cands * sizeof(e->cands[0]));
}

duet_status_t duet_tune_run(const duet_workload_t *wl, const duet_hw_t *hw, const duet_tune_params_t *params,
                            duet_tune_bench_fn bench, duet_tune_agree_fn agree, void *user, duet_tune_result_t *res_p)
{
    duet_tune_params_t p;
    DUET_CHECK(duet_tune_params_resolve(params, &p));
    if (wl == NULL || hw == NULL || bench == NULL || res_p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "tune: workload, profile, benchmark and result are required");
    DUET_CHECK(duet_workload_validate(wl));
    DUET_CHECK(duet_hw_validate(hw));

    duet_status_t st = DUET_OK;
    /* Heap, not stack: the result and an entry hold 64 candidates each (about 15 KiB apiece). */
    duet_tune_result_t *r = calloc(1, sizeof(*r));
    duet_tune_entry_t *e = malloc(sizeof(*e));
    duet__tune_sink_t sink = {p.warn, p.warn_user, r};
    duet_tune_db_t db;
    int use_cache = p.use_cache && p.n_space == 0; /* a space is an evaluation: its winner does not answer the key */
    int32_t verdict = 0;
    int local_hit = 0;
    if (r == NULL || e == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "tune: cannot allocate the result");
        goto out;
    }
    r->winner = -1;
    r->measured_us = r->pred_us = NAN;
    r->top_k = p.top_k;
    r->n_warmup = p.n_warmup;
    r->n_repeat = p.n_repeat;
    r->force = p.force;
    DUET_CHECK_GOTO(duet_tune_key_make(hw, wl, &p, r->key, sizeof(r->key)), st, out);

    if (use_cache) {
        if (duet_tune_db_open(p.db_path, &db) < 0) {
            duet__tune_warnf(&sink, "tuning database: %s; tuning without it", duet_last_error());
            use_cache = 0;
        } else {
            db.warn = duet__tune_sink_cb;
            db.warn_user = &sink;
            snprintf(r->db_path, sizeof(r->db_path), "%s", db.path);
        }
    }

    /* 1. The cache. Every rank follows rank 0's verdict, so that no rank benchmarks (with
     * barriers) while another has returned. */
    if (use_cache && !p.force) {
        duet_status_t lst = duet_tune_db_lookup(&db, r->key, e);
        if (lst == DUET_OK) {
            if (duet_config_validate(&e->cfg, wl, hw) == DUET_OK)
                local_hit = 1;
            else
                duet__tune_warnf(&sink, "%s: the cached configuration no longer fits (%s); tuning again", db.path,
                                 duet_last_error());
        } else if (lst != DUET_ERR_NOT_FOUND) {
            duet__tune_warnf(&sink, "tuning database: %s; tuning as on a miss", duet_last_error());
        }
    }
    verdict = local_hit;
    if (agree != NULL)
        DUET_CHECK_GOTO(agree(user, &verdict), st, out);
    if (verdict) {
        duet_config_t cfg;
        memset(&cfg, 0, sizeof(cfg));
        if (local_hit)
            cfg = e->cfg;
        if (agree != NULL)
            DUET_CHECK_GOTO(duet__tune_agree_config(agree, user, &cfg), st, out);
        if (duet_config_validate(&cfg, wl, hw) < 0) {
            st = duet__error(DUET_ERR_INTERNAL, "tune: rank 0's cached configuration does not fit this rank: %s",
                             duet_last_error());
            goto out;
        }
        r->cfg = cfg;
        r->cached = 1;
        if (local_hit && duet_config_same(&cfg, &e->cfg)) {
            r->measured_us = e->measured_us;
            r->pred_us = e->pred_us;
            r->n_cands = e->n_cands;
            memcpy(r->cands, e->cands, (size_t)e->n_cands * sizeof(r->cands[0]));
        }
        goto done;
    }

    /* 2. A miss: candidates, benchmarks, agreement on rank 0's winner. */
    DUET_CHECK_GOTO(duet__tune_candidates(wl, hw, &p, &sink, r->cands, &r->n_cands, &r->model_led), st, out);
    int32_t winner = duet__tune_bench_all(r, bench, user, &sink);
    if (agree != NULL) {
        /* Rank 0's index, then its configuration itself: should the ranks have built different
         * lists (a candidate-set file missing on one node), they still run the same thing. */
        DUET_CHECK_GOTO(agree(user, &winner), st, out);
        if (winner < -1) {
            st = duet__error(DUET_ERR_INTERNAL, "tune: rank 0 sent winner index %d", (int)winner);
            goto out;
        }
        if (winner >= 0) {
            duet_config_t cfg;
            memset(&cfg, 0, sizeof(cfg));
            if (winner < r->n_cands)
                cfg = r->cands[winner].cfg;
            DUET_CHECK_GOTO(duet__tune_agree_config(agree, user, &cfg), st, out);
            if (winner >= r->n_cands || !duet_config_same(&cfg, &r->cands[winner].cfg)) {
                duet__tune_warnf(&sink, "rank 0 built a different candidate list; using its winner");
                winner = -2; /* rank 0's configuration, found below if this rank has it */
                for (int32_t i = 0; i < r->n_cands; i++)
                    if (duet_config_same(&cfg, &r->cands[i].cfg))
                        winner = i;
                if (duet_config_validate(&cfg, wl, hw) < 0) {
                    st = duet__error(DUET_ERR_INTERNAL, "tune: rank 0's winner does not fit this rank: %s",
                                     duet_last_error());
                    goto out;
                }
                r->cfg = cfg;
            }
        }
    }
    if (winner == -1) {
        r->fell_back = 1;
        r->cfg = duet_tune_static_default(hw, &p);
        duet__tune_warnf(&sink, "every one of the %d candidates failed; using the static default", (int)r->n_cands);
        goto done;
    }
    if (winner == -2) /* rank 0's winner is not in this rank's list: nothing measured here */
        goto done;
    r->winner = winner;
    r->cfg = r->cands[winner].cfg;
    r->pred_us = r->cands[winner].pred_us;
    r->measured_us = r->cands[winner].ok ? r->cands[winner].us : NAN;

    /* 3. Remember it. A failure to write costs the next run a re-tune, not this one its answer. */
    if (use_cache && p.write_cache && isfinite(r->measured_us)) {
        duet__tune_entry_fill(e, r, hw, wl, &p);
        if (duet_tune_db_store(&db, e) == DUET_OK)
            r->stored = 1;
        else
            duet__tune_warnf(&sink, "cannot store the winner: %s", duet_last_error());
    }
done:
    memcpy(res_p, r, sizeof(*r));
out:
    free(e);
    free(r);
    return st;
}
