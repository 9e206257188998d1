/*
 * duet: measurement corpora ("duet-corpus/2"; "duet-corpus/1" still loads). A corpus is what `duet calibrate collect`
 * measures on a GPU node: for each workload of a shape set and each configuration of a grid, the median time of the
 * operation, plus the GEMM alone and the collective alone. Calibration fits profiles to corpora; the tuner derives its
 * candidate set from them. docs/calibration.md documents the format. Pure C (cJSON); no GPU.
 */
#ifndef DUET_CORPUS_H
#define DUET_CORPUS_H

#include <stddef.h>
#include <stdint.h>

#include "duet/model.h"
#include "duet/status.h"
#include "duet/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The corpus file's schema. duet-corpus/2 holds its times in microseconds (a row's us, min_us and
 * max_us; provenance.warmup_us); duet-corpus/1, the layout before it, in milliseconds (ms, min_ms,
 * max_ms, warmup_ms) and is otherwise the same. Both load; a corpus is always saved as /2. In
 * memory (duet_corpus_row_t, duet_corpus_provenance_t) the times stay milliseconds.
 */
#define DUET_CORPUS_SCHEMA "duet-corpus/2"
#define DUET_CORPUS_SCHEMA_V1 "duet-corpus/1"

/** What a row measured. */
typedef enum {
    DUET_ROW_OP = 0,         /* the GEMM and the collective together, under cfg */
    DUET_ROW_GEMM_ALONE = 1, /* only the GEMM of wl, under cfg (all CTAs on GEMM) */
    DUET_ROW_COMM_ALONE = 2, /* only the collective of wl, under cfg */
    DUET_ROW_KIND_COUNT
} duet_row_kind_t;

const char *duet_row_kind_name(int32_t kind); /* "op", "gemm_alone", "comm_alone" */

/**
 * One measured point. `wl` is always the full workload of the shape (GEMM and collective), so
 * rows of one shape group by workload whatever their kind; `kind` says which part ran.
 */
/**
 * The kernel the vendor library chose for a vendor-mode row's GEMM, as the library reports it
 * (cuBLASLt: cublasLtMatmulAlgoConfigGetAttribute of the algorithm its heuristic returned;
 * hipBLASLt: the solution's index). `valid` 0: nothing recorded (corpora before duet 0.3, rows of
 * duet's own kernels). A field the library does not report is 0.
 */
typedef struct duet_vendor_kernel {
    int32_t valid;
    int32_t algo;                 /* the library's algorithm (cuBLASLt CUBLASLT_ALGO_CONFIG_ID; hipBLASLt solution index) */
    int32_t tile_m, tile_n;       /* the CTA tile of C, rows x columns of the row-major C[M,N] */
    int32_t stage_k, stages;      /* the K step of a shared-memory stage (elements) and the stages (0: chosen at run time) */
    int32_t split_k;              /* K parts (1: none) */
    int32_t swizzle;              /* CTA swizzling (cuBLASLt: 0 or 1) */
    int32_t cluster_m, cluster_n; /* thread-block cluster, in CTAs along M and N (0: the library's choice) */
} duet_vendor_kernel_t;

typedef struct duet_corpus_row {
    int32_t kind; /* duet_row_kind_t */
    duet_workload_t wl;
    duet_config_t cfg;
    int32_t ok; /* 1: measured; 0: failed (error says why; ms fields are 0) */
    char error[160];
    double ms;             /* median of `repeats` timed runs, milliseconds */
    double min_ms, max_ms; /* spread of the timed runs */
    int32_t repeats;
    duet_vendor_kernel_t vendor; /* vendor-mode rows measured since duet 0.3: the library's kernel */
} duet_corpus_row_t;

typedef struct duet_corpus duet_corpus_t;

/**
 * Where a corpus's numbers come from, beyond the device (the optional "provenance" object; a
 * corpus without it has every string empty and the numbers -1). Calibration compares
 * kernel_commit / kernel_hash with the build's (duet_corpus_kernel_check()).
 */
typedef struct duet_corpus_provenance {
    char duet_commit[48];   /* the commit of the duet that measured ("+dirty" when modified) */
    char kernel_commit[48]; /* the commit of the backend's last change in that build */
    char kernel_hash[24];   /* hash of that build's backend and baseline sources */
    char shapes[128];       /* where the workloads came from: "random n=24 seed=1 world=1", a file */
    int64_t seed;           /* the shape generator's seed, -1 when not random */
    char clocks[96];        /* the clock regime, e.g. "as the driver runs them; settled by 200 ms of warm-up" */
    double warmup_ms;       /* time-based warm-up before each workload, ms (-1: not recorded) */
    int64_t order_seed;     /* the seed of the measurement order (one sweep), -1 when not recorded */
    char grid[16];          /* the collector's grid: "reference", "w1" */
} duet_corpus_provenance_t;

/** What this build was made from (Makefile: build/gen/duet_build_info.h); "unknown" where not known. */
typedef struct duet_build_info {
    const char *kernel_commit; /* `git log -1 --format=%h -- backend/ baseline/` */
    const char *kernel_hash;   /* sha256 (12 hex digits) of the backend and baseline sources */
    const char *source_commit; /* the tree's commit */
} duet_build_info_t;

duet_build_info_t duet_build_info(void);

/**
 * Whether a corpus measured the kernels this build has: the content hashes when both are known,
 * else the commits. @return 1 the same, 0 different (why says how, e.g. "measured with kernels
 * at 1a2b3c4 (hash ...); this build's backend is at 5d6e7f8 (hash ...)"), -1 unknown (the
 * corpus records neither).
 */
int duet_corpus_kernel_check(const duet_corpus_t *c, const duet_build_info_t *b, char *why, size_t n);

/** A corpus: where it was measured, the grid, and the rows. Owns its row array. */
struct duet_corpus {
    char device[96];  /* "NVIDIA H200" */
    char arch[32];    /* "sm_90", "gfx942" */
    int32_t sms;      /* SMs (CUs) of the device */
    int32_t world;    /* ranks of the measurement */
    char driver[64];  /* driver version */
    char runtime[64]; /* runtime version, e.g. "CUDA 13.0" */
    char date[32];    /* ISO 8601 UTC of the measurement */
    char duet_version[16];
    int32_t repeats, warmup; /* timed runs per point and untimed ones before them */
    /* Interleaved rounds the timed runs were taken in (1, also for files without the key: each
     * point's runs one after the other). */
    int32_t rounds;
    /* The grid the collector swept (informational; rows carry their own configurations). */
    int32_t n_fracs;
    double fracs[32]; /* fused gemm_wgs as fractions of the SMs */
    int32_t n_tiles;
    duet_gemm_tile_t tiles[16];
    int32_t n_comm_wgs;
    int32_t comm_wgs[16]; /* concurrent-mode comm grids */
    int32_t n_split_ks;   /* 0: no K-split rows in the grid (files without the key) */
    int32_t split_ks[16]; /* K splits of the split rows */
    int32_t n_split_fracs;
    double split_fracs[32]; /* fused gemm_wgs fractions of the split op rows */
    duet_corpus_provenance_t prov;
    duet_corpus_row_t *rows;
    size_t n, cap;
};

/** An empty corpus (no rows, rounds 1). */
void duet_corpus_init(duet_corpus_t *c);
/** Release the rows. NULL is a no-op. */
void duet_corpus_free(duet_corpus_t *c);
/** Append a row (copies it). */
duet_status_t duet_corpus_add(duet_corpus_t *c, const duet_corpus_row_t *row);

/**
 * Load and validate a corpus. Every error names the file and the place (e.g.
 * "c.json: rows[17].tile: '96x64x64' is not a supported tile"). *c_p is written only on
 * success. A row that duplicates an earlier one (same kind, workload, configuration) is an error.
 */
duet_status_t duet_corpus_load(const char *path, duet_corpus_t *c_p);
/** Parse from text; `origin` names it in messages. */
duet_status_t duet_corpus_parse(const char *text, const char *origin, duet_corpus_t *c_p);
/** Write a corpus atomically (temporary file and rename). */
duet_status_t duet_corpus_save(const duet_corpus_t *c, const char *path);

/** The part of the row's workload that ran: without the collective (gemm_alone), without the GEMM (comm_alone). */
duet_workload_t duet_corpus_row_part(const duet_corpus_row_t *row);

/** 1 if two rows measure the same thing (kind, workload and configuration). */
int duet_corpus_row_same_point(const duet_corpus_row_t *a, const duet_corpus_row_t *b);
/** Index of the row measuring the same point as `key`, or -1 (used to resume a collection). */
long duet_corpus_find(const duet_corpus_t *c, const duet_corpus_row_t *key);
/** 1 if two workloads are the same shape (every field of duet_workload_t). */
int duet_workload_same(const duet_workload_t *a, const duet_workload_t *b);

#ifdef __cplusplus
}
#endif
#endif /* DUET_CORPUS_H */
