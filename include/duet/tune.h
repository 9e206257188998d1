/*
 * duet tuner: the tuning database, the tuner core (predict, benchmark the best few plus the
 * static default, agree across ranks, remember the winner), the candidate set derived from
 * measurement corpora, and the evidence helper that replays the tuner on a corpus.
 *
 * Pure C11 + cJSON + POSIX: no GPU and no MPI. The GPU side supplies two callbacks to
 * duet_tune_run(): one that benchmarks a configuration on the real kernels, and one that
 * broadcasts an int32 from rank 0 (MPI_Bcast), so that every rank takes the same path and uses
 * the same configuration. docs/tuning.md documents the files and the environment variables.
 */
#ifndef DUET_TUNE_H
#define DUET_TUNE_H

#include <stddef.h>
#include <stdint.h>

#include "duet/corpus.h"
#include "duet/model.h"
#include "duet/status.h"
#include "duet/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Schema tags of the two files this layer writes. The database is duet-tuning/2, its times in
 * microseconds (measured_us, pred_us; a candidate's us, min_us, max_us, pred_us); duet-tuning/1,
 * the layout before it, held them in milliseconds under _ms keys: it still reads, and the first
 * store into it rewrites the whole file as /2. In memory (duet_tune_entry_t, duet_tune_outcome_t)
 * the times stay milliseconds.
 */
#define DUET_TUNE_DB_SCHEMA "duet-tuning/2"
#define DUET_TUNE_DB_SCHEMA_V1 "duet-tuning/1"
#define DUET_TUNE_CANDSET_SCHEMA "duet-candidates/1"

/** Longest canonical key, path, and candidate list (top k plus the static default). */
#define DUET_TUNE_KEY_LEN 320
#define DUET_TUNE_PATH_LEN 1024
#define DUET_TUNE_MAX_CANDIDATES 64
#define DUET_TUNE_MAX_TOPK (DUET_TUNE_MAX_CANDIDATES - 1)

/** Built-in defaults, each overridable by the environment variable in the comment. */
#define DUET_TUNE_DEFAULT_TOPK 8    /* DUET_TUNE_TOPK */
#define DUET_TUNE_DEFAULT_NWARMUP 5 /* DUET_TUNE_NWARMUP */
#define DUET_TUNE_DEFAULT_NREP 20   /* DUET_TUNE_NREP */
/** A configuration "covers" a shape when its time is within this share of the shape's best. */
#define DUET_TUNE_DEFAULT_TOL 0.03

/** Receives a warning (one line, no newline). NULL in the params prints "duet: warning: ..." on stderr. */
typedef void (*duet_tune_warn_fn)(void *user, const char *msg);

/* ========================================================================================== */
/* Parameters and the key                                                                      */
/* ========================================================================================== */

/** Where a candidate came from. */
typedef enum {
    DUET_TUNE_SRC_MODEL = 0,     /* the simulator's ranking on the profile */
    DUET_TUNE_SRC_CANDSET = 1,   /* the candidate set derived from corpora (per arch) */
    DUET_TUNE_SRC_HEURISTIC = 2, /* a fixed grid of splits, when neither of the above fills k */
    DUET_TUNE_SRC_DEFAULT = 3,   /* the static default, always benchmarked */
    DUET_TUNE_SRC_COUNT
} duet_tune_source_t;

const char *duet_tune_source_name(int32_t src); /* "model", "candidate_set", "heuristic", "default" */

/**
 * What the tuner may do. Start from duet_tune_default_params(); fields marked "auto" take the
 * environment variable when it is set and the built-in default otherwise
 * (duet_tune_params_resolve() applies that rule).
 */
typedef struct duet_tune_params {
    int32_t top_k;       /* configurations taken from the leading ranking; 0 = auto ($DUET_TUNE_TOPK, 8) */
    int32_t n_warmup;    /* untimed runs per candidate; -1 = auto ($DUET_TUNE_NWARMUP, 5). For the bench callback */
    int32_t n_repeat;    /* timed runs per candidate (median); 0 = auto ($DUET_TUNE_NREP, 20). For the callback */
    int32_t force;       /* 1: benchmark even on a cache hit, and overwrite; -1 = auto ($DUET_TUNE_FORCE, 0) */
    int32_t use_cache;   /* 1 (default): look the key up and store the winner; 0: neither */
    int32_t write_cache; /* 1 (default): store the winner; set 0 on every rank but rank 0 */
    uint32_t modes;      /* bit (1 << duet_mode_t) of the modes the tuner may pick; default both */
    int32_t cm, cn;      /* comm tile of every candidate, elements; 0 = the default (256 x 64) */
    int32_t group_m;     /* GEMM swizzle of every candidate; 0 = the default (8) */
    /* 1: `hw` was fitted to this device (duet calibrate fit), so the model's ranking leads and the
     * candidate set only fills; 0 (default): the candidate set of the device's arch leads, when
     * one is available, and the model fills. */
    int32_t calibrated;
    const char *db_path;                     /* NULL: $DUET_CACHE, $XDG_CACHE_HOME/duet/tuning.json, ~/.cache/... */
    const struct duet_tune_candset *candset; /* NULL: load $DUET_TUNE_CANDIDATES when set, else none */
    /* Restrict every candidate except the static default to these configurations (the model
     * ranks them instead of its full sweep). Used by duet_tune_evaluate(); disables the cache. */
    const duet_config_t *space;
    size_t n_space;
    duet_tune_warn_fn warn;
    void *warn_user;
} duet_tune_params_t;

duet_tune_params_t duet_tune_default_params(void);

/**
 * Replace the "auto" fields by the environment's values or the built-in defaults, and check
 * every field. @return DUET_ERR_INVALID_ARG naming the field or the variable (e.g.
 * "DUET_TUNE_TOPK: 'x' is not an integer in [1, 63]").
 */
duet_status_t duet_tune_params_resolve(const duet_tune_params_t *in, duet_tune_params_t *out_p);

/**
 * The device architecture without target-feature suffixes: "gfx942:sramecc+:xnack-" gives
 * "gfx942"; characters other than letters, digits, '_', '.' and '-' become '_' so that the
 * canonical key stays parseable.
 */
void duet_tune_arch_strip(const char *arch, char *out, size_t n);

/**
 * The canonical key of a tuning problem, e.g.
 * "arch=sm_90|sms=132|world=2|modes=fused+concurrent|coll=all_gather|dtype=bf16|gemm=8192x8192x8192|
 *  comm=4096x8192|ctile=256x64|group_m=8|tiles=tiles/1" (one line; "|root=R" follows comm for
 * broadcast). hw->arch and hw->n_sms must be the device's. The same inputs always give the same
 * text. @return DUET_ERR_INVALID_ARG for an invalid workload or a buffer shorter than the key.
 */
duet_status_t duet_tune_key_make(const duet_hw_t *hw, const duet_workload_t *wl, const duet_tune_params_t *params,
                                 char *key, size_t n);

/* ========================================================================================== */
/* The tuning database                                                                         */
/* ========================================================================================== */

/**
 * What happened to one candidate. Times in microseconds, as the database file holds them (so an
 * entry reads back exactly as it was stored); the benchmark callback gives milliseconds, which the
 * tuner multiplies by 1000.
 */
typedef struct duet_tune_outcome {
    duet_config_t cfg;
    int32_t source;     /* duet_tune_source_t */
    int32_t model_rank; /* 1-based rank in the model's ranking; 0 when the model did not rank it */
    double pred_us;     /* simulated makespan; NaN when the model could not price it */
    int32_t ok;         /* 1: measured; 0: the benchmark failed (error says why) */
    int32_t status;     /* the benchmark's duet_status_t when it failed */
    double us;          /* median of the timed runs */
    double min_us, max_us;
    char error[128];
} duet_tune_outcome_t;

/** One database entry: the winner of one key and how it was found. */
typedef struct duet_tune_entry {
    char key[DUET_TUNE_KEY_LEN];
    /* The key's fields, for listing (the key text is authoritative). */
    char arch[32];
    int32_t sms;
    uint32_t modes;
    duet_workload_t wl;
    char tiles[16];     /* DUET_TILE_LIST_VERSION when stored */
    duet_config_t cfg;  /* the winner */
    double measured_us; /* the winner's median on the rank that stored it, us */
    double pred_us;     /* its simulated makespan, us; NaN when unknown */
    int32_t n_warmup, n_repeat;
    char date[32]; /* ISO 8601 UTC */
    char duet_version[16];
    int32_t n_cands;
    duet_tune_outcome_t cands[DUET_TUNE_MAX_CANDIDATES];
} duet_tune_entry_t;

/**
 * A database handle: the resolved path and how warnings are reported. Opening does no I/O.
 * Warnings (a file that is not a database, a malformed or bad entry skipped or dropped) go to `warn`
 * and are counted. tune/db.c's header has the rules for damaged files.
 */
typedef struct duet_tune_db {
    char path[DUET_TUNE_PATH_LEN];
    duet_tune_warn_fn warn;
    void *warn_user;
    int32_t lock_timeout_ms; /* how long a write waits for the lock; default 60000 */
    int32_t n_warnings;
    char last_warning[512];
} duet_tune_db_t;

/**
 * Resolve the database path: `path` when not NULL, else $DUET_CACHE, else
 * $XDG_CACHE_HOME/duet/tuning.json (an absolute XDG_CACHE_HOME only, as the XDG spec says), else
 * $HOME/.cache/duet/tuning.json (the passwd entry's home when HOME is unset).
 */
duet_status_t duet_tune_db_open(const char *path, duet_tune_db_t *db_p);

/**
 * Find the entry of `key`. A missing file or key is DUET_ERR_NOT_FOUND. A file that is not a
 * valid database is left as it is with a warning, and the lookup is a miss; a malformed or bad
 * entry is skipped with a warning (a miss). Reads only: nothing on disk changes.
 */
duet_status_t duet_tune_db_lookup(duet_tune_db_t *db, const char *key, duet_tune_entry_t *entry_p);

/**
 * Store an entry (replacing the one of its key). Creates missing folders, takes an advisory
 * lock (flock on "<path>.lock"), re-reads the file and merges (entries of other keys, including
 * ones this version cannot parse, are kept verbatim; bad ones, such as a number beyond the range of
 * a double or a key given twice, are dropped with a warning each), writes a temporary file in the
 * same folder, fsyncs it and renames it into place (a symbolic link is followed), then fsyncs the
 * folder. Concurrent writers lose nothing.
 * @return DUET_ERR_IO when the location is not writable, DUET_ERR_BUSY when the lock was not
 * obtained within lock_timeout_ms, DUET_ERR_PARSE (nothing written) when the file there is not a
 * tuning database, DUET_ERR_INVALID_ARG when the entry would not read back (a time not finite).
 */
duet_status_t duet_tune_db_store(duet_tune_db_t *db, const duet_tune_entry_t *entry);

/**
 * Every valid entry, sorted by key (malloc'd; free with free()). An absent file gives none; a file
 * that is not a database is DUET_ERR_PARSE with the reason. Reads only: nothing on disk changes.
 */
duet_status_t duet_tune_db_list(duet_tune_db_t *db, duet_tune_entry_t **entries_p, size_t *n_p);

/**
 * Delete the database file under the lock (an absent file is not an error). Only a regular file
 * that is a tuning database (or empty) is deleted; anything else is refused (DUET_ERR_PARSE or
 * DUET_ERR_INVALID_ARG) and left as it is. A symbolic link is followed: the file goes, the link stays.
 */
duet_status_t duet_tune_db_clear(duet_tune_db_t *db);

/** JSON text of entries: an array of the stored objects (duet-tuning/2: times in us), each with its "key" (malloc'd;
 * free()). */
duet_status_t duet_tune_entries_to_json(const duet_tune_entry_t *entries, size_t n, char **text_p);

/* ========================================================================================== */
/* The candidate set                                                                           */
/* ========================================================================================== */

/**
 * A configuration of the candidate set. CTA counts are fractions of the device's SMs, so that a
 * set derived on one SM count transfers to another: gemm_wgs = round(gemm_frac x SMs), and
 * comm_wgs = round(comm_frac x SMs) (fused: num_wgs = round((gemm_frac + comm_frac) x SMs)).
 * The comm tile and group_m are not part of it: the tuner's own are used.
 */
typedef struct duet_tune_cand {
    int32_t mode;
    double gemm_frac, comm_frac;
    duet_gemm_tile_t tile;
    int32_t gain;       /* shapes it newly covered when the greedy ordering took it */
    double mean_rel;    /* mean over the shapes that measured it of ms / the shape's best */
    int32_t shape_best; /* 1: appended as an uncovered shape's own best, not by the greedy step */
} duet_tune_cand_t;

/** One point of a coverage curve: how good the best of the first k configurations is. */
typedef struct duet_tune_coverage {
    int32_t k;
    double share_within_tol; /* shapes whose best-of-top-k is within the tolerance of their best, 0..1 */
    double mean_slowdown;    /* mean of best-of-top-k / best over the shapes with a measured one, >= 1 */
    double max_slowdown;
    int32_t n_measured; /* shapes where at least one of the first k configurations was measured */
} duet_tune_coverage_t;

/** The ordering of one architecture. */
typedef struct duet_tune_candset_arch {
    char arch[32];
    int32_t n_shapes;
    int32_t n_sms, sms[8]; /* SM counts of the corpora (several when devices differ) */
    int32_t n_worlds, worlds[16];
    size_t n_order;
    duet_tune_cand_t *order;        /* greedy order */
    size_t n_coverage;              /* = n_order when derived; 0 when a loaded file's tiles were dropped */
    duet_tune_coverage_t *coverage; /* coverage[i] is for k = i + 1 */
} duet_tune_candset_arch_t;

typedef struct duet_tune_candset {
    double tol;
    char tiles[16]; /* tile-list version of the corpora's tiles */
    size_t n_archs;
    duet_tune_candset_arch_t *archs; /* sorted by arch */
} duet_tune_candset_t;

/**
 * Derive the candidate set of corpora: per arch (stripped), rows = shapes (world, workload and SM
 * count), the op rows that were measured, without a K split; a configuration covers a shape when its ms <=
 * (1 + tol) x the shape's best (with a relative slack of 1e-9 for rounding). Greedy: take the
 * configuration covering the most uncovered shapes, ties to the lowest mean relative cost, then to
 * the lower (mode, gemm_frac, comm_frac, tile); stop when the gain is 0; then append each
 * still-uncovered shape's own best. A configuration measured twice for one shape (two corpora,
 * or two comm tiles) keeps its lower time.
 */
duet_status_t duet_tune_candset_derive(const duet_corpus_t *corpora, size_t n_corpora, double tol,
                                       duet_tune_candset_t *set_p);
void duet_tune_candset_free(duet_tune_candset_t *set);
/** Write the set as JSON atomically; `sources` (may be NULL) name the corpora in the file. */
duet_status_t duet_tune_candset_save(const duet_tune_candset_t *set, const char *const *sources, size_t n_sources,
                                     const char *path);
/** Load and validate a set; entries whose tile this build does not support are dropped. */
duet_status_t duet_tune_candset_load(const char *path, duet_tune_candset_t *set_p);
/** The ordering of an arch (stripped before comparing), or NULL. */
const duet_tune_candset_arch_t *duet_tune_candset_find(const duet_tune_candset_t *set, const char *arch);
/**
 * The configuration of a candidate on a device of `sms` SMs, with the given comm tile and
 * group_m (0 = defaults). Counts are clamped to what the mode allows.
 */
duet_config_t duet_tune_cand_config(const duet_tune_cand_t *c, const duet_hw_t *hw, int32_t cm, int32_t cn,
                                    int32_t group_m);

/* ========================================================================================== */
/* The tuner                                                                                   */
/* ========================================================================================== */

/**
 * Benchmark one configuration: warm up, time n_repeat runs (with cross-rank barriers) and give
 * their median, minimum and maximum in milliseconds. A negative status marks the candidate as
 * failed (skipped and reported); duet_last_error() is taken as the reason. Called for the same
 * candidates in the same order on every rank; a failure must not leave peers waiting.
 */
typedef duet_status_t (*duet_tune_bench_fn)(void *user, const duet_config_t *cfg, double *median_ms_p, double *min_ms_p,
                                            double *max_ms_p);

/**
 * Broadcast one int32 from rank 0: on return *value_inout holds rank 0's value on every rank
 * (MPI_Bcast of one MPI_INT32_T from root 0). The tuner calls it at the same points on every
 * rank: once with the cache verdict (1 hit, 0 miss); then, on a hit, once per field of the
 * cached configuration (10 calls: mode, num_wgs, gemm_wgs, comm_wgs, bm, bn, bk, cm, cn,
 * group_m); on a miss, once with the winner's index (-1: every candidate failed) and, unless it
 * is -1, once per field of the winner's configuration (the same 10 calls). Every rank follows
 * rank 0's values, so all make the same calls. NULL means a single process.
 */
typedef duet_status_t (*duet_tune_agree_fn)(void *user, int32_t *value_inout);

/** What duet_tune_run() decided. Times in microseconds. */
typedef struct duet_tune_result {
    duet_config_t cfg;  /* the configuration to run: the same on every rank */
    double measured_us; /* its median on this rank (from the database on a hit); NaN when unknown */
    double pred_us;     /* its simulated makespan; NaN when unknown */
    int32_t cached;     /* 1: taken from the database, nothing was benchmarked */
    int32_t fell_back;  /* 1: every candidate failed; cfg is the static default */
    int32_t stored;     /* 1: the winner was written to the database */
    int32_t winner;     /* index of cfg in cands; -1 on a hit, a fall-back, or a winner of rank 0 not in this
                         * rank's list */
    int32_t model_led;  /* 1: the model's ranking led the list; 0: the candidate set did */
    int32_t top_k, n_warmup, n_repeat, force; /* the resolved parameters */
    char key[DUET_TUNE_KEY_LEN];
    char db_path[DUET_TUNE_PATH_LEN];
    int32_t n_cands; /* candidates benchmarked (on a hit: those of the cached entry) */
    duet_tune_outcome_t cands[DUET_TUNE_MAX_CANDIDATES];
    int32_t n_warnings;
    char warnings[1024]; /* the warnings, one per line (truncated when long) */
} duet_tune_result_t;

/**
 * Tune one workload on this device:
 *  1. resolve the parameters; build the key; look it up (unless force, use_cache 0 or a space);
 *     agree on rank 0's verdict. A hit returns the cached configuration and never benchmarks.
 *  2. On a miss, build the candidate list (duet_tune_candidates()), benchmark each candidate,
 *     skip and report failures, take the lowest median (ties: the earlier candidate), and agree
 *     on rank 0's winner. If every candidate failed, the static default is returned with
 *     fell_back = 1 and nothing is stored.
 *  3. Store the winner (use_cache and write_cache). An unreadable or unwritable database only
 *     warns: the winner is still returned.
 * @return DUET_OK (check fell_back), DUET_ERR_INVALID_ARG for bad inputs, or the agree
 * callback's error. *res_p is written only on success.
 */
duet_status_t duet_tune_run(const duet_workload_t *wl, const duet_hw_t *hw, const duet_tune_params_t *params,
                            duet_tune_bench_fn bench, duet_tune_agree_fn agree, void *user, duet_tune_result_t *res_p);

/**
 * The candidate list of a miss, without benchmarking. Rule (docs/tuning.md): the leading list
 * is the model's ranking (the simulator's sweep on `hw`, fluid policy, the allowed modes, every
 * tile that fits, or the `space` when given) when params->calibrated is 1 or no candidate set
 * covers the device's arch; otherwise the candidate set's order. Take its first top_k distinct
 * valid configurations; fill the remaining slots from the other list, then from a heuristic grid
 * (fused gemm fractions 0.5, 0.625, 0.75, 0.875, 1 at the default tile); finally add the static
 * default (duet_config_default(), fused with 3/4 of the SMs, or concurrent when fused is not
 * allowed) when it is not already there. Every candidate carries its predicted time. The "auto"
 * fields of `params` are resolved as by duet_tune_params_resolve(). Writes at most
 * DUET_TUNE_MAX_CANDIDATES outcomes (ok = 0); *model_led_p says which list led.
 */
duet_status_t duet_tune_candidates(const duet_workload_t *wl, const duet_hw_t *hw, const duet_tune_params_t *params,
                                   duet_tune_outcome_t *cands, int32_t *n_p, int32_t *model_led_p);

/** The static default the tuner always benchmarks (see duet_tune_candidates()). */
duet_config_t duet_tune_static_default(const duet_hw_t *hw, const duet_tune_params_t *params);

/* ========================================================================================== */
/* Evidence: the tuner replayed on a corpus                                                    */
/* ========================================================================================== */

/** One shape of a corpus: the oracle, the static default and what the tuner would have picked. */
typedef struct duet_tune_eval_shape {
    size_t corpus; /* index of the corpus it comes from */
    duet_workload_t wl;
    int32_t n_configs;        /* configurations of the shape in the corpus (measured or failed) */
    int32_t n_cands;          /* candidates the tuner would have benchmarked */
    int32_t n_cands_measured; /* of those, how many the corpus measured */
    duet_config_t oracle_cfg, default_cfg, tuned_cfg;
    double oracle_ms;     /* the best measured time of the shape */
    double default_ms;    /* the static default's time; NaN when the corpus lacks it */
    double tuned_ms;      /* the tuner's pick; NaN when no candidate was measured */
    int32_t tuned_source; /* duet_tune_source_t of the pick */
} duet_tune_eval_shape_t;

typedef struct duet_tune_eval {
    size_t n; /* shapes with at least one measured op row */
    duet_tune_eval_shape_t *shapes;
    size_t n_tuned;        /* shapes where the tuner measured something */
    size_t n_with_default; /* shapes where the corpus measured the static default */
    double median_tuned_over_oracle, max_tuned_over_oracle, mean_tuned_over_oracle;
    double median_default_over_oracle, max_default_over_oracle;
    size_t n_within_2pct;               /* tuned <= 1.02 x oracle */
    size_t n_exact;                     /* tuned is the oracle's configuration */
    size_t n_tuned_slower_than_default; /* 0 by construction when the default is measured */
} duet_tune_eval_t;

/**
 * For each shape of the corpora (op rows grouped by workload, per corpus), replay the tuner with
 * `params` (top k by the model on `hw`, restricted to the configurations the corpus holds for the
 * shape, plus the static default) and read each candidate's time from the corpus instead of
 * benchmarking (a configuration the corpus lacks or failed counts as a failed candidate). The
 * cache is not used. Every corpus must have been measured on hw->n_sms SMs.
 */
duet_status_t duet_tune_evaluate(const duet_corpus_t *corpora, size_t n_corpora, const duet_hw_t *hw,
                                 const duet_tune_params_t *params, duet_tune_eval_t *ev_p);
void duet_tune_eval_free(duet_tune_eval_t *ev);

#ifdef __cplusplus
}
#endif
#endif /* DUET_TUNE_H */
