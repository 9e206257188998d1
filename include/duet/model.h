/*
 * duet model layer: hardware profiles, workload and configuration rules, the plan, and the
 * origami-style cost model. Pure C11: no GPU, MPI or GSL. cJSON is used for profile files.
 */
#ifndef DUET_MODEL_H
#define DUET_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "duet/plan_map.h"
#include "duet/status.h"
#include "duet/types.h"
#include "duet/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ========================================================================================== */
/* Names                                                                                       */
/* ========================================================================================== */

const char *duet_collective_name(int32_t coll); /* "all_gather", ..., "none" */
const char *duet_dtype_name(int32_t dtype);     /* "fp16", "bf16" */
const char *duet_mode_name(int32_t mode);       /* "fused", "concurrent" */
/** Parse a name into an enum value. @return DUET_ERR_INVALID_ARG (with the accepted names). */
duet_status_t duet_collective_parse(const char *s, int32_t *coll_p);
duet_status_t duet_dtype_parse(const char *s, int32_t *dtype_p);
duet_status_t duet_mode_parse(const char *s, int32_t *mode_p);

/* ========================================================================================== */
/* Hardware profile                                                                            */
/* ========================================================================================== */

/** How the GPUs of a node are linked. */
typedef enum {
    DUET_FABRIC_SWITCH = 0, /* every GPU has one port into a switch (NVLink + NVSwitch) */
    DUET_FABRIC_MESH = 1,   /* point-to-point links to each peer (xGMI on MI300X/MI350X) */
} duet_fabric_t;

/*
 * Every numeric constant of a profile: X(member, type, unit, min, max, meaning).
 * type is INT or DBL. min/max are the sanity bounds that loading enforces ("absurd" values are
 * rejected). The units are those of the struct member and of the JSON file.
 */
#define DUET_HW_FIELDS(X)                                                                                              \
    /* the chip */                                                                                                     \
    X(n_sms, INT, "SMs", 1, 4096, "streaming multiprocessors (NVIDIA) or compute units (AMD)")                         \
    X(clock_ghz, DBL, "GHz", 0.1, 10, "SM clock under sustained matrix load")                                          \
    X(mma_flops_fp16, DBL, "FLOP/cycle/SM", 1, 1e6, "dense fp16 matrix-unit rate of one SM")                           \
    X(mma_flops_bf16, DBL, "FLOP/cycle/SM", 1, 1e6, "dense bf16 matrix-unit rate of one SM")                           \
    /* Above 1 where the SMs run faster than clock_ghz (short GEMMs, few busy SMs: the boost clock);                   \
     * the clock terms (clock_heat) then price the slow-down under load. The one-GPU H200 fit of                       \
     * 2026-12-03 ran into a bound of 1.5 with the vendor GEMM's rates.                                                \
     */                                                                                                                \
    X(gemm_eff_fp16, DBL, "1", 0.01, 2.5, "fraction of the fp16 matrix rate duet's GEMM tile sustains in its K loop")  \
    X(gemm_eff_bf16, DBL, "1", 0.01, 2.5, "fraction of the bf16 matrix rate duet's GEMM tile sustains in its K loop")  \
    /* Per-tile factors on gemm_eff: each tile's code differs (register pressure, spills, the                          \
     * shape of its matrix instructions), so one efficiency for all tiles misranks them. Relative                      \
     * to the 256x256x64 tile, which gemm_eff_* describes (its factor stays 1).                                        \
     */                                                                                                                \
    X(tile_eff_256x256, DBL, "1", 0.05, 4,                                                                             \
      "K-loop rate of the 256x256x64 tile relative to gemm_eff (the reference: 1)")                                    \
    X(tile_eff_128x256, DBL, "1", 0.05, 4, "K-loop rate of the 128x256x64 tile relative to gemm_eff")                  \
    X(tile_eff_256x128, DBL, "1", 0.05, 4, "K-loop rate of the 256x128x64 tile relative to gemm_eff")                  \
    X(tile_eff_128x128, DBL, "1", 0.05, 4, "K-loop rate of the 128x128x64 tile relative to gemm_eff")                  \
    X(tile_eff_256x64, DBL, "1", 0.05, 4, "K-loop rate of the 256x64x64 tile relative to gemm_eff")                    \
    X(tile_eff_64x128, DBL, "1", 0.05, 4, "K-loop rate of the 64x128x64 tile relative to gemm_eff")                    \
    X(tile_eff_64x256, DBL, "1", 0.05, 4, "K-loop rate of the 64x256x64 tile relative to gemm_eff")                    \
    X(tile_eff_64x64, DBL, "1", 0.05, 4, "K-loop rate of the 64x64x64 tile relative to gemm_eff")                      \
    X(vendor_gemm_eff_fp16, DBL, "1", 0.01, 2.5,                                                                       \
      "the vendor GEMM's (cuBLASLt/hipBLASLt) fp16 efficiency, as gemm_eff")                                           \
    X(vendor_gemm_eff_bf16, DBL, "1", 0.01, 2.5, "the vendor GEMM's bf16 efficiency, as gemm_eff")                     \
    /* The vendor library's kernels by tile class (docs/model.md, "The vendor GEMM"): relative to its                  \
     * tiles of 32768 elements and more (128x256, 256x128), which vendor_gemm_eff_* describes.                         \
     */                                                                                                                \
    X(vendor_tile_eff_mid, DBL, "1", 0.05, 4, "K-loop rate of the vendor's tiles of 16384 elements (128x128, 64x256)") \
    X(vendor_tile_eff_small, DBL, "1", 0.05, 4,                                                                        \
      "K-loop rate of the vendor's tiles below 16384 elements (128x64, ...)")                                          \
    X(vendor_tile_us, DBL, "us", 0, 1000, "fixed cost per tile of the vendor GEMM (pipeline fill, drain, epilogue)")   \
    X(vendor_clock_heat, DBL, "1", 0, 100, "growth of the vendor GEMM's K step with its sustained matrix work")        \
    X(vendor_heat_half_us, DBL, "us", 0.01, 1e6,                                                                       \
      "the matrix work, in us at the peak rate, for half of vendor_clock_heat")                                        \
    X(vendor_hbm_share, DBL, "1", 0.01, 1,                                                                             \
      "share of the HBM bytes of duet's L2 model that the vendor GEMM's kernels move (clusters, rasterization)")       \
    X(vendor_sm_contention, DBL, "1", 0, 100,                                                                          \
      "relative growth of the vendor GEMM's K step with every SM running it (the chip's ceiling)")                     \
    X(smem_kib, DBL, "KiB", 8, 4096, "shared memory (LDS) one CTA may use")                                            \
    X(gemm_stages, INT, "stages", 1, 16, "shared-memory pipeline depth of the GEMM tile")                              \
    X(l2_mib, DBL, "MiB", 0.5, 4096, "last-level on-chip cache that GEMM tiles share")                                 \
    X(l2_gbs, DBL, "GB/s", 10, 1e6, "aggregate L2-to-SM bandwidth with every SM reading")                              \
    X(hbm_gbs, DBL, "GB/s", 10, 1e6, "device-memory bandwidth, bytes read plus written")                               \
    X(tile_prologue_us, DBL, "us", 0, 1000, "GEMM tile pipeline fill before the first matrix step")                    \
    X(gemm_sm_contention, DBL, "1", 0, 100, "relative growth of a GEMM tile's K step with every SM running the GEMM")  \
    X(clock_heat, DBL, "1", 0, 100, "growth of K steps and comm tiles with the operation's sustained matrix work")     \
    X(heat_half_us, DBL, "us", 0.01, 1e6, "the matrix work, in us at the peak rate, for half of clock_heat")           \
    X(heat_sm_exp, DBL, "1", 0, 8, "clock_heat scales as (share of SMs running the GEMM)^heat_sm_exp; 0: not at all")  \
    X(comm_heat_share, DBL, "1", 0, 1, "share of clock_heat's growth that a comm tile's time takes; 1: all of it")     \
    X(tile_oob_row_ns, DBL, "ns", 0, 1000, "extra K-step time per operand row a GEMM tile loads from beyond M or N")   \
    X(box_rows_per_us, DBL, "rows/us", 1, 1e8, "128-byte operand box rows the chip fetches past L2 or zero-fills")     \
    X(box_min_share, DBL, "1", 0.01, 1, "share of box_rows_per_us a GEMM on few SMs still reaches")                    \
    X(splitk_sm_gbs, DBL, "GB/s", 1, 1e5, "one SM's rate for a K split's fp32 partial sums (stored, and read back)")   \
    X(vendor_ragged_eff, DBL, "1", 0.01, 1,                                                                            \
      "factor on the vendor GEMM's efficiency where K is odd (A and B rows on 2 bytes: its fallback kernels)")         \
    X(vendor_ragged_k4_eff, DBL, "1", 0.01, 1,                                                                         \
      "factor on the vendor GEMM's efficiency where K is even but not a multiple of 8 (rows on 4 bytes)")              \
    X(vendor_ragged_n_eff, DBL, "1", 0.01, 1,                                                                          \
      "factor on the vendor GEMM's efficiency where N is odd (C rows on 2 bytes: its fallback kernels)")               \
    X(vendor_ragged_n4_eff, DBL, "1", 0.01, 1,                                                                         \
      "factor on the vendor GEMM's efficiency where N is even but not a multiple of 8 (C rows on 4 bytes)")            \
    X(vendor_ragged_sm_resp, DBL, "1", 0, 1,                                                                           \
      "share of the SMs left out by the SM-count target that the vendor's fallback kernels give up; 0: none")          \
    X(vendor_records, INT, "0/1", 0, 1,                                                                                \
      "1: a corpus row's recorded vendor kernel is priced; 0: the model's choice of the library's kernel, as offline") \
    X(c_ragged_sm_gbs, DBL, "GB/s", 0, 1e5,                                                                            \
      "one SM's rate storing C rows that start off 16 bytes (N % 8 != 0); 0: as aligned")                              \
    X(tile_overhead_us, DBL, "us", 0, 1000, "fixed cost per pass of a GEMM tile (pipeline drain, epilogue sync)")      \
    X(dequeue_gemm_us, DBL, "us", 0, 1000, "one dequeue (device-wide atomic) on the GEMM queue")                       \
    X(dequeue_comm_us, DBL, "us", 0, 1000, "one dequeue (device-wide atomic) on the comm queue")                       \
    X(launch_us, DBL, "us", 0, 10000, "kernel launch and completion, per operation")                                   \
    X(comm_sync_us, DBL, "us", 0, 10000, "entry and exit barriers across the ranks, per operation with a collective")  \
    /* the fabric */                                                                                                   \
    X(n_links, INT, "links", 1, 64, "peer links per GPU (mesh); 1 for a switch port")                                  \
    X(link_gbs, DBL, "GB/s", 0.1, 1e5,                                                                                 \
      "peak payload bandwidth per direction of one link (mesh) or of the switch port")                                 \
    X(link_half_inflight_kib, DBL, "KiB", 0.01, 1e6, "bytes in flight on a link at which it delivers half its peak")   \
    X(cta_push_gbs, DBL, "GB/s", 0.01, 1e4, "remote-store rate of one CTA on an idle link")                            \
    X(remote_rtt_us, DBL, "us", 0.01, 1000, "round trip of a remote load")                                             \
    X(rtt_gemm_stretch, DBL, "1", 0, 100,                                                                              \
      "relative growth of the remote-load round trip with every SM running a GEMM tile")                               \
    X(cta_pull_inflight_kib, DBL, "KiB", 0.1, 1e5, "bytes of remote loads one CTA keeps in flight")                    \
    X(cta_local_gbs, DBL, "GB/s", 0.01, 1e5, "local copy rate (read + write) of one comm CTA")                         \
    X(comm_tile_overhead_us, DBL, "us", 0, 1000, "fixed cost per comm tile (address translation, masks)")              \
    /* the copy engines (copy mode: the collective's blocks copied with no SM) */                                      \
    X(ce_engines, INT, "engines", 1, 64, "copy engines that run copies at once (more copy streams share them)")        \
    X(ce_gbs, DBL, "GB/s", 0.1, 1e5, "one copy engine's rate into a peer's memory over the fabric, per direction")     \
    X(ce_local_gbs, DBL, "GB/s", 0.1, 1e6, "one copy engine's rate copying within the GPU, bytes copied")              \
    X(ce_copy_us, DBL, "us", 0, 10000, "fixed cost per copy (enqueue, engine start, completion)")                      \
    X(ce_op_us, DBL, "us", 0, 10000, "fixed cost per copy-mode operation (the copy streams' fork and join)")           \
    X(ce_gemm_stretch, DBL, "1", 0, 100, "relative growth of a GEMM tile's time while the copy engines run")           \
    /* residency of the two kernels in concurrent mode */                                                              \
    X(comm_ctas_per_sm, INT, "CTAs", 1, 64, "comm-kernel CTAs one SM holds when no GEMM CTA is there")                 \
    X(comm_coresident, INT, "CTAs", 0, 64, "comm-kernel CTAs that fit on an SM beside one GEMM CTA")                   \
    X(comm_sm_share, DBL, "1", 0, 1, "share of an SM's issue slots a running comm CTA takes from a co-resident GEMM")  \
    /* the reference design's rules (policy frozen) */                                                                 \
    X(seed_link_gbs, DBL, "GB/s", 0.1, 1e5, "seed: one effective link bandwidth for every collective")                 \
    X(seed_launch_us, DBL, "us", 0, 10000, "seed: per-collective launch floor")                                        \
    X(seed_alpha, DBL, "1", 0, 100, "seed: GEMM slow-down per unit of comm-home fraction x comm intensity")            \
    X(seed_sat_channels, INT, "CTAs", 1, 4096, "seed: CTAs at which comm saturates; all_reduce floor is twice this")   \
    X(seed_dequeue_gemm_us, DBL, "us", 0, 1000, "seed: charge per GEMM dequeue")                                       \
    X(seed_dequeue_comm_us, DBL, "us", 0, 1000, "seed: charge per comm dequeue")                                       \
    /* the model's known error (docs/model.md, "Deciding within the known error"): how far one                         \
     * prediction of a mode may be off against the other predictions of the same workload, held out                    \
     * (k-fold, by workload) on the training corpus: exp(q) - 1, q the 90th percentile of                              \
     * |log(pred / meas) - m|, m the workload's median log error. The workload-wide part m moves                       \
     * every configuration of a workload together and cannot change which is faster: it is left out.                   \
     */                                                                                                                \
    X(err_fused, DBL, "1", 0, 10, "held-out error of a fused-mode prediction against its workload's others")           \
    X(err_concurrent, DBL, "1", 0, 10, "held-out error of a concurrent-mode prediction, as err_fused")                 \
    X(err_vendor, DBL, "1", 0, 10, "held-out error of a vendor-mode prediction, as err_fused")                         \
    X(err_copy, DBL, "1", 0, 10, "held-out error of a copy-mode prediction, as err_fused")

typedef enum {
#define DUET__HW_ENUM(member, type, unit, lo, hi, help) DUET_HW_F_##member,
    DUET_HW_FIELDS(DUET__HW_ENUM)
#undef DUET__HW_ENUM
        DUET_HW_NFIELDS
} duet_hw_field_t;

#define DUET_HW_SOURCE_LEN 160

/** A hardware profile: every constant the cost model uses, each with its source. */
typedef struct duet_hw {
    char name[48];   /* "h200", or the name in the file */
    char device[96]; /* marketing name, e.g. "NVIDIA H200" */
    char arch[32];   /* "sm_90", "gfx942", "gfx950" */
    int32_t fabric;  /* duet_fabric_t */
#define DUET__HW_MEMBER_INT int
#define DUET__HW_MEMBER_DBL double
#define DUET__HW_MEMBER(member, type, unit, lo, hi, help) DUET__HW_MEMBER_##type member;
    DUET_HW_FIELDS(DUET__HW_MEMBER)
#undef DUET__HW_MEMBER
    /** Where each constant comes from (datasheet, measurement, fit), indexed by duet_hw_field_t. */
    char source[DUET_HW_NFIELDS][DUET_HW_SOURCE_LEN];
} duet_hw_t;

/** Static description of one profile field (for printing and for the JSON schema). */
typedef struct duet_hw_field_info {
    const char *key;
    int is_int;
    const char *unit;
    double min, max;
    const char *help;
    size_t offset;
} duet_hw_field_info_t;

const duet_hw_field_info_t *duet_hw_field_info(int field);
/** @return the value of a field as a double. */
double duet_hw_get(const duet_hw_t *hw, int field);
/** Set a field (ints are rounded) without checking bounds. */
void duet_hw_set(duet_hw_t *hw, int field, double value);

/**
 * The factor on gemm_eff_* for a GEMM tile (tile_eff_<BM>x<BN>; every supported tile has BK 64).
 * @return 1 for a tile without a factor of its own.
 */
double duet_hw_tile_eff(const duet_hw_t *hw, duet_gemm_tile_t tile);

/**
 * The profile's known error of a prediction of `mode` (err_fused, err_concurrent, err_vendor or err_copy), a
 * fraction: the prediction p stands for [p / (1 + e), p (1 + e)]. 0 for an unknown mode.
 */
double duet_hw_mode_err(const duet_hw_t *hw, int32_t mode);

/** Number of built-in profiles, and their names ("h100", "h200", "mi300x", "mi350x"). */
int duet_hw_builtin_count(void);
const char *duet_hw_builtin_name(int i);
/** Copy a built-in profile. @return DUET_ERR_NOT_FOUND for an unknown name. */
duet_status_t duet_hw_builtin(const char *name, duet_hw_t *hw_p);

/** How duet_hw_builtin_for_device() found a device's profile. */
typedef enum duet_hw_match {
    DUET_HW_MATCH_EXACT,  /* the device the profile describes, in one of its drivers' spellings */
    DUET_HW_MATCH_FAMILY, /* another member of its family ("NVIDIA H100 PCIe"): the nearest built-in */
    DUET_HW_MATCH_ARCH    /* an unknown device: the built-in of its architecture (or vendor) */
} duet_hw_match_t;

/**
 * The built-in profile of a device, by the name its driver prints: "NVIDIA H100 80GB HBM3" ->
 * "h100", "NVIDIA H200" -> "h200", "AMD Instinct MI300X" -> "mi300x", "AMD Instinct MI350X" and
 * "AMD Instinct MI355X" -> "mi350x". The name's words decide (case and punctuation aside), whole:
 * "NVIDIA GH200 480GB" is not an H200. An unknown device gets the built-in of `arch` ("gfx950"
 * mi350x, other "gfx..." mi300x; NULL or "" when unknown), else of its vendor (AMD mi300x, else
 * h200). Never NULL; *match_p (NULL: not wanted) says which of the three it was.
 */
const char *duet_hw_builtin_for_device(const char *device, const char *arch, duet_hw_match_t *match_p);

/**
 * Whether two device names name one device: the same words (case and punctuation aside), or two
 * spellings of one built-in's device ("NVIDIA H100" and "NVIDIA H100 80GB HBM3"). Another member
 * of a family is another device ("NVIDIA H100 PCIe" is not "NVIDIA H100"). An empty name (not
 * recorded) matches any. @return 1 or 0.
 */
int duet_hw_device_match(const char *a, const char *b);

/** Check every bound of a profile. @return DUET_ERR_INVALID_ARG naming the first bad field. */
duet_status_t duet_hw_validate(const duet_hw_t *hw);

/** The JSON schema tag profiles carry. */
#define DUET_HW_SCHEMA "duet-hw/1"

/**
 * Parse a profile from JSON text. `origin` names the text in error messages (a file name or
 * "<stdin>"). Unknown keys, missing keys, wrong types, wrong units and out-of-bounds values are
 * rejected with a message naming the key and the origin; *hw_p is written only on success.
 */
duet_status_t duet_hw_from_json(const char *text, const char *origin, duet_hw_t *hw_p);
/** Serialise a profile to JSON (malloc'd string the caller frees). */
duet_status_t duet_hw_to_json(const duet_hw_t *hw, char **text_p);
/**
 * Resolve a profile argument as the CLI gives it: a built-in name, a JSON file path, or "-" for
 * standard input.
 */
duet_status_t duet_hw_load(const char *name_or_path, duet_hw_t *hw_p);
/**
 * Write a profile to a file atomically (temporary file in the same folder, then rename), so a
 * failure never leaves a partial file behind.
 */
duet_status_t duet_hw_save(const duet_hw_t *hw, const char *path);

/* ========================================================================================== */
/* Workload and configuration                                                                  */
/* ========================================================================================== */

/** The GEMM tiles duet's kernels implement, in the order the tuner tries them. */
#define DUET_TILE_LIST_VERSION "tiles/1"
int duet_tile_count(void);
duet_gemm_tile_t duet_tile_get(int i);
/** @return 1 if the tile is one of duet_tile_get(). */
int duet_tile_supported(duet_gemm_tile_t t);
/**
 * The vendor library's GEMM tiles (vendor mode, docs/model.md "The vendor GEMM"): the CTA tiles of
 * C that cuBLASLt's Hopper kernels use (128x256, 256x128, 128x128, 64x256, 128x64, 64x128, 64x64;
 * BK 64), among which the model picks the library's choice where no record says which ran.
 */
int duet_vendor_tile_count(void);
duet_gemm_tile_t duet_vendor_tile_get(int i);
/**
 * @return 1 if vendor mode accepts the tile as the library's kernel: one of duet_vendor_tile_get(),
 * or any tile a library reports (BM and BN multiples of 8 in [8, 1024], BK in [8, 1024]).
 */
int duet_vendor_tile_plausible(duet_gemm_tile_t t);
/** Parse "256x128x64" (or "256x128", BK defaulting to 64). */
duet_status_t duet_tile_parse(const char *s, duet_gemm_tile_t *tile_p);
/**
 * Parse a size string: `n` (1 to 4) decimal integers separated by 'x', each at most `max`, e.g.
 * "8192x8192x8192" (n = 3) or "256x64" (n = 2). Digits and 'x' only (no signs, spaces or 'X'), and
 * the whole string. Unlike sscanf's %d, a number too large for its type is an error, not undefined
 * behaviour. out_p receives n values, only on success. @return DUET_ERR_INVALID_ARG otherwise.
 */
duet_status_t duet_dims_parse(const char *s, int n, int64_t max, int64_t *out_p);

/*
 * Bounds on the work one plan asks for (docs/model.md, "Limits"). The extents alone (each at most
 * 2^24 elements) do not bound it: 16777216x16777216 in 1x8 comm tiles is 3.5e13 tiles, days of
 * simulation. The simulator and the plan's traffic walk take time in proportion to the tiles, so
 * the configuration rules (duet_config_validate(), duet_plan_build(), corpus and database loading)
 * refuse a plan with more tiles than these, naming the limit. A plan at both limits builds and
 * simulates in under half a second (measured: docs/model.md).
 */
/** GEMM queue tiles: C tiles x K parts (grid_m * grid_n * split_k). */
#define DUET_MAX_GEMM_TILES (INT64_C(1) << 22)
/** Comm queue tiles of the busiest rank (duet_comm_geom_t.per_rank). */
#define DUET_MAX_COMM_TILES (INT64_C(1) << 22)

/** A workload with no GEMM and no collective, world 1. */
duet_workload_t duet_workload_empty(void);
/**
 * Check a workload: extents non-negative and consistent (all of m, n, k zero or all positive),
 * a known dtype and collective, world >= 1, root in range, and the divisibility each collective
 * needs (reduce_scatter and all_to_all split mc rows evenly over the ranks).
 */
duet_status_t duet_workload_validate(const duet_workload_t *wl);

/**
 * The static default configuration of the reference design, adapted to the profile:
 * fused: num_wgs = SM count, gemm_wgs = 3/4 of it; concurrent: comm_wgs = max(1, SMs / 8),
 * gemm_wgs = SMs - comm_wgs (duet_config_complete_split() with no count given). Tile
 * 256x128x64 (or the largest supported tile that fits the profile's shared memory), comm tile
 * 256x64, group_m 8.
 */
duet_config_t duet_config_default(const duet_hw_t *hw, int32_t mode);
/**
 * Complete the split of a configuration from the CTA counts given (-1: not given), by the static
 * default's rules. Fused: num_wgs as given, else one per SM; gemm_wgs as given, else num_wgs -
 * comm_wgs, else 3/4 of num_wgs (rounded down); comm_wgs = num_wgs - gemm_wgs. Concurrent and
 * vendor (num_wgs is not read): comm_wgs as given, else max(1, SMs / 8); gemm_wgs as given, else
 * the SMs left beside comm_wgs (at least 1); num_wgs = gemm_wgs + comm_wgs. Copy: gemm_wgs as
 * given, else every SM; comm_wgs (copy streams) as given, else 1; num_wgs = gemm_wgs. Only the split
 * changes; duet_config_validate() checks the result.
 * @return DUET_ERR_INVALID_ARG when the fused counts given disagree (comm_wgs != num_wgs -
 * gemm_wgs); cfg is unchanged then.
 */
duet_status_t duet_config_complete_split(duet_config_t *cfg, const duet_hw_t *hw, int32_t num_wgs, int32_t gemm_wgs,
                                         int32_t comm_wgs);
/**
 * Check a configuration against a workload and a profile: CTA counts in range for the mode, a
 * supported tile that fits the shared memory, a comm tile of 16-byte rows, group_m in [1, 64].
 * @return DUET_ERR_INVALID_ARG for a malformed configuration, DUET_ERR_INFEASIBLE for one the
 * hardware cannot run (e.g. a tile larger than shared memory).
 */
duet_status_t duet_config_validate(const duet_config_t *cfg, const duet_workload_t *wl, const duet_hw_t *hw);

/**
 * Whether a K split is worth trying for a tile: 1 for split_k 1; otherwise only if the
 * configuration rules allow it (duet_config_validate(): every part has a K step) and the C
 * tiles leave SMs without work: C tiles x (split_k - 1) < 2 x SMs. Beyond that a split only adds
 * partial-sum traffic. The sweep's and the benchmark's automatic K splits follow it.
 */
int duet_split_k_worth_trying(const duet_hw_t *hw, const duet_workload_t *wl, duet_gemm_tile_t tile, int32_t split_k);
/**
 * The same rule for a GEMM that runs on `sms` SMs (an SM budget below the profile's SM count):
 * C tiles x (split_k - 1) < 2 x sms. duet_split_k_worth_trying() is this at hw->n_sms.
 */
int duet_split_k_worth_trying_on(const duet_workload_t *wl, duet_gemm_tile_t tile, int32_t split_k, int32_t sms);

/** The K splits the sweep and the benchmark try when none are given: 1, 2, 3, 4, 6, 8. */
#define DUET_AUTO_SPLIT_KS                                                                                             \
    {                                                                                                                  \
        1, 2, 3, 4, 6, 8                                                                                               \
    }

/** @return 1 if two configurations run the same way (split_k 0 and 1 are the same), else 0. */
int duet_config_same(const duet_config_t *a, const duet_config_t *b);

/**
 * Two predicted times closer than this (relative) are one tie: the floating-point resolution of
 * the simulator's event arithmetic, far below any difference the model means (1e-9 of 1 ms is
 * 1 fs).
 */
#define DUET_RANK_TIE_REL 1e-9

/** One configuration to rank by its predicted time. */
typedef struct duet_rank_item {
    double pred;       /* predicted time, any unit (the same for every item) */
    duet_config_t cfg; /* the configuration predicted */
    size_t idx;        /* the caller's index (the last key, so the order is total) */
} duet_rank_item_t;

/**
 * Sort items by predicted time, fastest first. Items whose times are tied (within
 * DUET_RANK_TIE_REL of the fastest of them) come with the most CTAs on the collective first
 * (comm_wgs, in either mode), then in a fixed order of their configurations, and only then by
 * idx: the order does not depend on the order of the input. The reason is in model/rank.c.
 */
void duet_rank_sort(duet_rank_item_t *items, size_t n);

/**
 * The GEMM tile of a configuration for people: "256x128x64", or "256x128x64/k2" with a K split;
 * "vendor" in vendor mode, whose GEMM runs at the vendor library's own tile.
 * @return buf.
 */
const char *duet_config_tile_str(const duet_config_t *cfg, char *buf, size_t n);

/**
 * The CTA split of a configuration for people, true to what runs: fused "128+4 steal" (CTAs that
 * start on the GEMM and on the comm queue; every CTA steals, so a comm home of 0 still runs comm
 * tiles), concurrent "100|32" (the two grids), vendor "121 SM|11" (the vendor GEMM's SM target and
 * the comm grid, which caps the collective's CTAs), copy "132|2 CE" (the GEMM grid and the copy
 * streams, which take no SM). @return buf.
 */
const char *duet_config_split_str(const duet_config_t *cfg, char *buf, size_t n);

/* ------------------------------------------------------------------------------------------ */
/* A vendor-mode configuration as the settings of a software stack (model/emit.c)               */
/* ------------------------------------------------------------------------------------------ */

/** The stacks `duet predict --emit` writes settings for. */
typedef enum {
    DUET_STACK_NCCL = 0, /* NCCL communicator config + cuBLASLt SM count target (C); NVIDIA */
    DUET_STACK_RCCL,     /* RCCL communicator config + hipBLASLt CU count target (C); AMD */
    DUET_STACK_TORCH,    /* PyTorch: ProcessGroupNCCL options + torch._C._set_sm_carveout_experimental */
    DUET_STACK_TE,       /* Transformer Engine: NVTE_EXT_MARGIN_SM + NCCL env; NVIDIA */
    DUET_STACK_ENV,      /* environment variables only */
    DUET_STACK_COUNT
} duet_stack_t;

const char *duet_stack_name(int32_t stack); /* "nccl", "rccl", "torch", "te", "env" */
duet_status_t duet_stack_parse(const char *s, int32_t *stack_p);

/** A library version as major * 10000 + minor * 100 + patch: 2.27.3 is 22703, 1.4 is 10400. */
typedef struct duet_stack_versions {
    int32_t nccl;      /* NCCL (nccl, torch, te and env on NVIDIA); default 2.27 */
    int32_t rccl;      /* RCCL, in its own NCCL-like numbering (ROCm 6.2 ships 2.20.5); default 2.20.5 */
    int32_t hipblaslt; /* hipBLASLt; default 1.4, the first with a CU count target */
} duet_stack_versions_t;

duet_stack_versions_t duet_stack_versions_default(void);
/** Parse "2.21", "2.18.6" or "1.4" into major * 10000 + minor * 100 + patch. */
duet_status_t duet_version_parse(const char *s, int32_t *v_p);
/** "2.27", "2.18.6" (the patch only when it is not 0). @return buf. */
const char *duet_version_str(int32_t v, char *buf, size_t n);

/**
 * What a stack can set at the versions named, on the GPUs of a profile (model/emit.c keeps the
 * facts with their sources): the collective's CTA cap, whether the GEMM's SM or CU count can be set,
 * and which collectives Transformer Engine's bulk overlap runs.
 */
typedef struct duet_stack_limits {
    int32_t max_ctas;    /* NCCL/RCCL clamp minCTAs/maxCTAs (and NCCL_MIN_CTAS/NCCL_MAX_CTAS) to this */
    int32_t gemm_target; /* 1: the GEMM can be planned for fewer SMs/CUs than the chip has */
    uint32_t bulk_colls; /* te: 1 << duet_collective_t that userbuffers' bulk overlap runs; else 0 */
    char libs[64];       /* the libraries and versions assumed: "NCCL 2.27 + cuBLASLt" */
    char no_target[200]; /* with gemm_target 0: why, one sentence */
} duet_stack_limits_t;

/**
 * The limits of `stack` at versions v (NULL: the defaults) on hw's GPUs.
 * @return DUET_ERR_INVALID_ARG for a stack that does not run on these GPUs (NCCL and Transformer
 * Engine on AMD, RCCL on NVIDIA) or versions without the knobs (NCCL or RCCL before 2.17, which
 * have no minCTAs/maxCTAs), naming the reason.
 */
duet_status_t duet_stack_limits(int32_t stack, const duet_hw_t *hw, const duet_stack_versions_t *v,
                                duet_stack_limits_t *lim_p);
/**
 * The settings that make `stack` run a vendor-mode configuration (cfg->mode DUET_MODE_VENDOR) at
 * versions v (NULL: the defaults): the GEMM planned for cfg->gemm_wgs of hw->n_sms SMs, the collective
 * on cfg->comm_wgs CTAs. One setting or code line per line, comments starting with "#". `coll` is the
 * workload's collective (Transformer Engine's bulk overlap is offered only for those it runs; -1:
 * not offered). Only settings that take effect are written.
 * @return DUET_ERR_INVALID_ARG for another mode, a split the stack cannot reach (comm_wgs above its
 * CTA cap, or a GEMM target where the library has none), or a buffer too small (the text is then cut).
 */
duet_status_t duet_emit_settings_at(int32_t stack, const duet_hw_t *hw, const duet_stack_versions_t *v, int32_t coll,
                                    const duet_config_t *cfg, char *buf, size_t n);
/** duet_emit_settings_at() at the default versions, without the bulk-overlap alternative. */
duet_status_t duet_emit_settings(int32_t stack, const duet_hw_t *hw, const duet_config_t *cfg, char *buf, size_t n);
/**
 * Of duet's collectives, those `stack` runs on the copy engines at versions v (NULL: the defaults)
 * on hw's GPUs, as 1 << duet_collective_t: all_gather and all_to_all with NCCL or RCCL 2.28 and later
 * (their zero-CTA policy, model/emit_copy.c has the sources); 0 before 2.28, for Transformer Engine
 * and for a stack these GPUs do not run.
 */
uint32_t duet_stack_copy_colls(int32_t stack, const duet_hw_t *hw, const duet_stack_versions_t *v);
/**
 * The settings that make `stack` run copy mode's counterpart (cfg->mode DUET_MODE_COPY) at versions
 * v (NULL: the defaults): the collective `coll` on the copy engines through the library's zero-CTA
 * policy with both buffers in symmetric windows, the GEMM on every SM, then the conditions under
 * which the library runs its SM kernels instead (silently) and how to tell which path ran. Where
 * the library has no copy-engine path for `coll` at these versions, one comment line says why.
 * Lines as duet_emit_settings_at() writes them.
 * @return DUET_ERR_INVALID_ARG for another mode, a stack these GPUs do not run or versions without
 * the stack's settings (as duet_stack_limits()), or a buffer too small (the text is then cut).
 */
duet_status_t duet_emit_copy_settings_at(int32_t stack, const duet_hw_t *hw, const duet_stack_versions_t *v,
                                         int32_t coll, const duet_config_t *cfg, char *buf, size_t n);

/* ------------------------------------------------------------------------------------------ */
/* Sizes and bandwidths as nccl-tests reports them (its performance notes, "Performance reported by NCCL tests") */
/* ------------------------------------------------------------------------------------------ */

/**
 * nccl-tests' size S of the workload's collective, bytes: all_gather the gathered output (W x the
 * per-rank source), reduce_scatter its input (the source), all_reduce, all_to_all and broadcast
 * the source. 0 without a collective.
 */
double duet_coll_bytes(const duet_workload_t *wl);
/** busbw / algbw: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast 1. */
double duet_coll_busbw_factor(int32_t coll, int32_t world);
/** algbw = S / t and busbw = algbw x factor, GB/s (1e9 bytes); 0 for t <= 0. Outputs may be NULL. */
void duet_coll_bandwidth(const duet_workload_t *wl, double time_s, double *algbw_gbs_p, double *busbw_gbs_p);
/** Parse a size in bytes: digits, optionally K, M or G (1024-based, as nccl-tests), optionally "B"/"iB". */
duet_status_t duet_bytes_parse(const char *s, int64_t *bytes_p);
/**
 * Set the collective's source shape from nccl-tests' size S in bytes (duet_coll_bytes() gives it
 * back): rows of 8192 elements where they divide, else the widest power of two that does.
 * wl->coll, world and dtype must be set. Written only on success.
 */
duet_status_t duet_workload_set_comm_bytes(duet_workload_t *wl, int64_t bytes);

/** Shared memory the GEMM tile needs, bytes (pipeline stages of A and B tiles). */
double duet_gemm_tile_smem_bytes(duet_gemm_tile_t t, int32_t dtype, int stages);

/* ========================================================================================== */
/* Shape sets                                                                                  */
/* ========================================================================================== */

/**
 * The reference design's 15 GEMM shapes (its collect_corpus.py SHAPES), each with the comm tensor it
 * pairs with at world W: mc = 256 * W * comm_mult rows, nc columns.
 */
typedef struct duet_seed_shape {
    int64_t m, n, k;
    int32_t comm_mult;
    int64_t nc;
    const char *category;
} duet_seed_shape_t;

int duet_seed_shape_count(void);
duet_seed_shape_t duet_seed_shape(int i);

/** A list of workloads (a shape set), owned by the caller (free with duet_workloads_free). */
typedef struct duet_workloads {
    duet_workload_t *w;
    size_t n;
} duet_workloads_t;

/**
 * The reference shape set at world W: the 15 shapes x the given collectives (a bitmask of
 * 1 << duet_collective_t; 0 means all five), in dtype.
 */
duet_status_t duet_workloads_seed(int32_t world, uint32_t colls, int32_t dtype, duet_workloads_t *out_p);
/**
 * Read a shape file: one workload set per line, "MxNxK McxNc COLL[,COLL...] [fp16|bf16]", '#'
 * starts a comment; "McxNc" may be "-" for a GEMM-only line and "MxNxK" "0x0x0" for comm only.
 * Every workload is validated at world W; an error names the file and the line.
 */
duet_status_t duet_workloads_load(const char *path, int32_t world, int32_t dtype, duet_workloads_t *out_p);
void duet_workloads_free(duet_workloads_t *w);

/**
 * A small deterministic random number generator (splitmix64): the same seed gives the same
 * stream on every platform, so a random shape set is named by its seed alone.
 */
typedef struct duet_rng {
    uint64_t state;
} duet_rng_t;

void duet_rng_seed(duet_rng_t *r, uint64_t seed);
uint64_t duet_rng_next(duet_rng_t *r);
/** A uniform integer in [lo, hi] (lo <= hi), without modulo bias. */
int64_t duet_rng_int(duet_rng_t *r, int64_t lo, int64_t hi);
/** A uniform double in [0, 1) with 53 random bits. */
double duet_rng_unit(duet_rng_t *r);

/**
 * What a random shape set is drawn from. Extents are log-uniform in [min_dim, max_dim]; a share
 * `ragged` of them is any integer that is not a multiple of 64, the rest multiples of 64. A share
 * `skinny` of the shapes has a small M (log-uniform in [min_dim, skinny_max]) and a share
 * `small_k` a small K (likewise), the other extents drawn as usual. The collective's per-rank
 * source is log-uniform in [min_comm_bytes, max_comm_bytes] bytes, with Nc one of 1024, 2048,
 * 4096, 8192, 16384 columns and Mc rounded to a multiple of the world size; a broadcast's root is 0.
 */
typedef struct duet_random_params {
    uint64_t seed;
    int64_t min_dim, max_dim; /* elements; defaults 256 and 16384 */
    double ragged;            /* share of extents not a multiple of 64; default 1/3 */
    double skinny;            /* share of shapes with a small M; default 0.15 */
    double small_k;           /* share of shapes with a small K; default 0.15 */
    int64_t skinny_max;       /* the largest "small" M or K, elements; default 1024 */
    uint32_t dtypes;          /* bitmask of 1 << duet_dtype_t; default both */
    uint32_t colls;           /* bitmask of 1 << duet_collective_t; default the five collectives */
    double min_comm_bytes;    /* per-rank source, bytes; default 256 KiB */
    double max_comm_bytes;    /* default 256 MiB */
    int32_t world;            /* default 1 */
} duet_random_params_t;

duet_random_params_t duet_random_default_params(void);
/**
 * Draw `n` workloads (each valid at p->world) from p. Deterministic: the same parameters give
 * the same set. @return DUET_ERR_INVALID_ARG for parameters that cannot produce a valid workload.
 */
duet_status_t duet_workloads_random(const duet_random_params_t *p, size_t n, duet_workloads_t *out_p);
/**
 * The set in one line, for the provenance of what was measured on it: "random n=24 seed=1
 * world=1", plus every parameter that is not its default (e.g. " max_dim=8192").
 */
void duet_random_describe(const duet_random_params_t *p, size_t n, char *buf, size_t len);
/**
 * Write a shape set as a shape file that duet_workloads_load() reads back (one workload per
 * line; `header` lines, if any, become comments). Written by the careful writer.
 */
duet_status_t duet_workloads_save(const char *path, const duet_workloads_t *w, const char *header);

/* ========================================================================================== */
/* The plan                                                                                    */
/* ========================================================================================== */

/** Traffic of one comm tile, bytes, as seen by the rank that runs it. */
typedef struct duet_comm_traffic {
    double push_bytes;        /* remote stores, all peers together */
    double pull_bytes;        /* remote loads, all peers together */
    double local_read_bytes;  /* local HBM reads */
    double local_write_bytes; /* local HBM writes */
    int32_t push_peers;       /* peers written to */
    int32_t pull_peers;       /* peers read from */
} duet_comm_traffic_t;

/**
 * The plan: what the executors (simulator and kernels) run for one workload and one
 * configuration on one rank. Built by duet_plan_build(); it owns no memory.
 */
typedef struct duet_plan {
    duet_workload_t wl;
    duet_config_t cfg;
    int32_t rank;          /* the rank this plan is for */
    duet_gemm_geom_t gemm; /* GEMM queue: tile ids 0..gemm.tiles-1 in dequeue order */
    duet_comm_geom_t comm; /* comm queue: positions 0..comm.queue_len-1 */
    double gemm_flops;     /* 2 m n k */
    /* Whole-queue traffic of this rank. */
    duet_comm_traffic_t comm_total;
    /* Tile-granular remote bytes: every tile counted at its full cm x cn size, as the reference
     * design prices it; equals remote payload when the tensor is a multiple of the tile. */
    double remote_bytes_tiles;
    double remote_bytes;       /* exact remote payload (push + pull), bytes */
    double bytes_per_peer_out; /* payload this rank sends to each peer (max over peers), bytes */
    double bytes_per_peer_in;  /* payload this rank receives from each peer, bytes */
    int64_t comm_valid_tiles;  /* queue slots that move data */
    /*
     * Launch geometry and queue policy, decided here once (model/plan.c, duet__plan_policy); the
     * simulator, the cost model and the backend read these fields and nothing else to know which
     * kernels run, on how many CTAs, which CTA starts on which queue and whether it steals.
     * kernel[DUET_KERNEL_GEMM] runs the GEMM (fused: both queues), kernel[DUET_KERNEL_COMM] is
     * the comm kernel; a kernel with grid 0 does not run. duet_plan_launch() gives the order and
     * the streams the backend launches them on.
     */
    duet_kernel_geom_t kernel[DUET_KERNEL_COUNT];
    int32_t n_ctas;    /* CTAs of the operation: the grids together (timeline rows) */
    int32_t gemm_ctas; /* CTAs that may run GEMM tiles: GEMM-home ones, and every CTA of a stealing kernel */
    int32_t comm_grid; /* grid of the kernel whose CTAs drain the comm queue (0: none) */
    /* Totals of the kernels' policy. */
    int32_t gemm_home_ctas; /* CTAs whose home queue is GEMM */
    int32_t comm_home_ctas; /* CTAs whose home queue is comm */
    int32_t steal;          /* 1: some CTA steals from the other queue when its own is empty */
    /* The K split's workspace (split_k > 1; else 0): the fp32 partial sums, split_k blocks of bm
     * x bn per C tile that runs in parts (duet_gemm_split_tiles: every one for a K split, the tail
     * ones for stream-K), and two arrival counters per such C tile (a 256x256 tile sums its two
     * 128-row passes separately: backend/splitk.h). */
    int64_t splitk_ws_bytes;
    int64_t splitk_counters;
    /* Operand staging: the GEMM kernels' 16-byte copies and tensor-memory loads need every row of
     * A and B to start on 16 bytes, which a K that is not a multiple of 8 elements does not give
     * (the kernels would fall back to 2-byte element loads, 4-9x slower on H200), and the
     * tensor-memory loads run slower on rows that start on 16 bytes only (K % 16 == 8). For a
     * K off 8, and for such rows where the copy is cheap against the GEMM (model/plan.c says
     * when), A and B are first copied into a workspace with rows of stage_k elements (K
     * rounded up to 64: rows on 128 bytes), zero-filled beyond K so that no sum changes, and the
     * GEMM kernel reads the copies: one pass over both operands before it, on its stream.
     * stage_k 0: the kernels read A and B in place. stage_ws_bytes: (M + N) stage_k elements. */
    int64_t stage_k;
    int64_t stage_ws_bytes;
} duet_plan_t;

/** One kernel launch of an operation, as the backend enqueues it. */
typedef struct duet_launch_kernel {
    int32_t kernel;          /* duet_kernel_t */
    int32_t side_stream;     /* 1: on the context's second stream, forked from the caller's and joined back */
    duet_kernel_geom_t geom; /* the kernel's geometry, which its parameters carry to the device */
} duet_launch_kernel_t;

/** The kernel launches of an operation, in the order the backend enqueues them. */
typedef struct duet_launch {
    int32_t n; /* 0 (nothing runs), 1 or 2 */
    duet_launch_kernel_t k[DUET_KERNEL_COUNT];
} duet_launch_t;

/**
 * Build the plan of (workload, configuration) for one rank. The configuration must be valid for
 * the workload (the function re-checks the workload and the parts of the configuration that do
 * not depend on a profile). The critical rank for an asymmetric collective is the broadcast
 * root: duet_plan_critical_rank() gives it.
 */
duet_status_t duet_plan_build(const duet_workload_t *wl, const duet_config_t *cfg, int32_t rank, duet_plan_t *plan_p);
/**
 * The part of duet_plan_build() that the kernels need: the same checks, the two queues'
 * geometry and the queue policy, in constant time. The traffic totals (comm_total, remote_bytes,
 * remote_bytes_tiles, bytes_per_peer_in/out, comm_valid_tiles), which only the model reads and
 * which take a walk over the comm queue (tens of microseconds for a 64 MB collective, on the
 * host, while the GPU waits for the launch), are left zero.
 */
duet_status_t duet_plan_build_queues(const duet_workload_t *wl, const duet_config_t *cfg, int32_t rank,
                                     duet_plan_t *plan_p);
/**
 * Change only the split of a built plan: gemm_wgs and comm_wgs (and, in fused mode, num_wgs
 * stays). The queues and their traffic do not depend on the split, so a sweep builds one plan
 * per tile and moves the split along it. Checks the same rules as duet_plan_build().
 */
duet_status_t duet_plan_set_split(duet_plan_t *plan, int32_t gemm_wgs, int32_t comm_wgs);
/**
 * Set the GEMM kernel of a vendor-mode plan: the library's tile and K parts, which decide the
 * plan's GEMM queue (the simulator runs that geometry on the plan's gemm_wgs SMs). The comm
 * queue and the split are kept. @return DUET_ERR_INVALID_ARG for another mode or a tile or K
 * split the configuration rules refuse (the plan is unchanged then).
 */
duet_status_t duet_plan_set_gemm_kernel(duet_plan_t *plan, duet_gemm_tile_t tile, int32_t split_k);
/**
 * The vendor library's kernel for a vendor-mode plan where no record says which ran (predict,
 * corpora without kernel records): the tile of duet_vendor_tile_get() and the K split of
 * DUET_AUTO_SPLIT_KS worth trying on the plan's gemm_wgs SMs that the model prices fastest in
 * closed form (duet_cost_vendor_gemm_s()), as the library's heuristic nearly always finds its
 * fastest kernel; then duet_plan_set_gemm_kernel(). A plan without a GEMM is left as it is.
 */
duet_status_t duet_plan_vendor_choose(const duet_hw_t *hw, duet_plan_t *plan);
struct duet_vendor_kernel; /* include/duet/corpus.h */
/**
 * The vendor library's kernel of a plan: in vendor mode, the recorded one where `rec` is valid
 * (its tile_m x tile_n x stage_k, BK 64 where stage_k is 0, and its split_k), else the modelled
 * choice (duet_plan_vendor_choose()); in other modes nothing changes. rec may be NULL.
 */
duet_status_t duet_plan_vendor_kernel(const duet_hw_t *hw, const struct duet_vendor_kernel *rec, duet_plan_t *plan);
/**
 * Stream-K's geometry (configuration stream_k 1) for GEMM tiling `g` (split_k 1) on `budget`
 * CTAs: the C tiles from *split_from_p on (in dequeue order) run as *parts_p K parts each, the
 * ones before whole. The rule: the full waves run data-parallel; the last partial wave (r =
 * tiles_mn mod budget C tiles) is split into the number of parts s (at most DUET_MAX_SPLIT_K,
 * each with K steps) that gives the busiest CTA the fewest K steps, counting rounds of parts over
 * the budget, ceil(r s / budget), each one part's K steps plus a fixed charge for its fp32
 * partial sum: the block written and read back, ceil(4 bm bn / ((bm + bn) bk)) K steps of operand
 * bytes. Ties go to fewer parts. *parts_p 1 (and *split_from_p 0): no split beats the whole tail
 * wave, and the GEMM runs data-parallel.
 */
void duet_plan_stream_k_choose(const duet_gemm_geom_t *g, int32_t budget, int64_t *split_from_p, int32_t *parts_p);
/**
 * The backend's launches for a plan (backend/run.hip enqueues exactly these): the kernels whose
 * grid is not 0, the GEMM's first on the caller's stream, the comm kernel on a second stream when
 * both run. Pure host code, so the CPU tests compare it with the simulator's workers
 * (tests/sim/test_geometry.c). Vendor mode's GEMM entry is the vendor library's
 * (duet_vendor_run()), which duet_run() does not execute.
 */
void duet_plan_launch(const duet_plan_t *plan, duet_launch_t *launch_p);
/**
 * Check that a built plan fits a profile: its GEMM tile's shared memory and its CTA counts
 * against the SMs (the part of duet_config_validate() that needs the profile; the plan's own
 * rules were checked when it was built). Executors given a plan and a profile call this, not
 * the configuration rules again. @return DUET_ERR_INFEASIBLE where it does not fit.
 */
duet_status_t duet_plan_check_hw(const duet_plan_t *plan, const duet_hw_t *hw);
/** The rank whose comm queue is longest (broadcast: the root; otherwise rank 0). */
int32_t duet_plan_critical_rank(const duet_workload_t *wl);
/**
 * The GEMM tiles that run at once, which decide the L2 reuse of the group_m swizzle
 * (duet_cost_gemm_tile()'s `active`): the GEMM-home CTAs, or where there are none, the CTAs that
 * steal GEMM tiles (gemm_ctas). The simulator, the sweep's bound and the plan's report all price
 * a GEMM tile with this count.
 */
int64_t duet_plan_gemm_concurrent(const duet_plan_t *plan);
/** Traffic of the comm tile at queue position q. */
void duet_plan_comm_tile_traffic(const duet_plan_t *plan, int64_t q, duet_comm_traffic_t *t_p);

/* ========================================================================================== */
/* Cost model                                                                                  */
/* ========================================================================================== */

/**
 * Cost of one GEMM tile on one SM (origami-style; docs/model.md has the equations).
 * All times in seconds, bytes in bytes.
 */
typedef struct duet_gemm_cost {
    double t_step_mma; /* matrix-unit time of one K step */
    double t_step_l2;  /* L2-to-SM time of one K step at this SM's share of L2 bandwidth */
    double t_step;     /* max of the two: the SM-bound step */
    double t_prologue; /* pipeline fill */
    double t_epilogue; /* C tile store issue */
    double t_overhead; /* fixed per tile */
    double t_sm;       /* SM-bound tile time: k_iters * t_step + prologue + epilogue + overhead */
    double hbm_bytes;  /* bytes the tile moves to and from HBM after L2 reuse */
    double box_rows;   /* operand box rows of 128 B the tile's copies fetch past L2 or zero-fill (0: vendor) */
    double l2_hit;     /* fraction of A/B loads served by L2 */
    double flops;      /* 2 bm bn k */
    int64_t k_iters;
} duet_gemm_cost_t;

/**
 * Price one GEMM tile of the plan when `active` GEMM tiles run at once (they decide the L2 reuse
 * of the group_m swizzle).
 */
duet_status_t duet_cost_gemm_tile(const duet_hw_t *hw, const duet_plan_t *plan, int64_t active,
                                  duet_gemm_cost_t *cost_p);
/**
 * Price one GEMM queue tile of a given kind: part 0 a whole C tile, part 1 a K part. With
 * stream-K (gemm.split_from > 0) the queue holds both, each priced as duet_cost_gemm_tile()
 * prices the tile of a plan whose queue is all of that kind (no split, or the uniform split into
 * gemm.split_k parts), over the real queue's length; otherwise this is duet_cost_gemm_tile().
 */
duet_status_t duet_cost_gemm_tile_kind(const duet_hw_t *hw, const duet_plan_t *plan, int64_t active, int part,
                                       duet_gemm_cost_t *cost_p);

/**
 * Cost of one comm tile when it runs alone on an idle fabric. Seconds and bytes. In copy mode the
 * comm queue's entries are copies (duet_copy_get()): t_push is the pushed block at ce_gbs, t_local
 * the local block at ce_local_gbs, t_overhead ce_copy_us, t_alone their sum; no round trips.
 */
typedef struct duet_comm_cost {
    duet_comm_traffic_t traffic;
    int64_t round_trips; /* remote-load round trips (pull bytes / in-flight bytes per CTA) */
    double t_push;       /* push bytes at one CTA's store rate */
    double t_pull;       /* round trips x RTT */
    double t_local;      /* local bytes at one CTA's copy rate */
    double t_overhead;
    double t_alone;   /* max(t_push, t_pull, t_local) + t_overhead */
    double hbm_bytes; /* this rank's HBM traffic the tile causes (incl. the symmetric writes peers make) */
} duet_comm_cost_t;

/** Price the average comm tile of the plan (total traffic / valid tiles). */
duet_status_t duet_cost_comm_tile(const duet_hw_t *hw, const duet_plan_t *plan, duet_comm_cost_t *cost_p);
/** Price the comm tile at queue position q. */
duet_status_t duet_cost_comm_tile_at(const duet_hw_t *hw, const duet_plan_t *plan, int64_t q, duet_comm_cost_t *cost_p);

/**
 * Delivered link capacity (bytes/s, one direction, this GPU's egress or ingress) when
 * `inflight` bytes are outstanding on it and `peers` peers are addressed:
 * C = B * f / (f + f_half), B = link_gbs (switch) or link_gbs * min(peers, n_links) (mesh);
 * C = B for inflight INFINITY (the copy engines, which keep the link full).
 */
double duet_cost_link_capacity(const duet_hw_t *hw, double inflight_bytes, int peers);
/**
 * The weight of one HBM byte a copy engine moves, in the units of the solver's HBM capacity
 * (hbm_gbs, an effective rate fitted to the SMs' traffic): hbm_gbs / (2 ce_local_gbs), so that a
 * local copy at ce_local_gbs (its bytes read and written) takes all of HBM. 1 without copy rates.
 */
double duet_cost_copy_hbm_weight(const duet_hw_t *hw);
/**
 * Interference: the cap on a comm tile's speed (a fraction of its speed alone, in (0, 1]) while
 * `gemm_running` GEMM tiles run beside it. Its remote loads queue behind their L2 and fabric
 * traffic: the pull part t_pull of its time alone t_tile (seconds) stretches by rtt_gemm_stretch
 * per SM's worth of running GEMM tiles, t_tile / (t_tile + t_pull x rtt_gemm_stretch x
 * gemm_running / n_sms). 1 with no GEMM tile running or no pull.
 */
double duet_cost_comm_beside_gemm(const duet_hw_t *hw, double t_tile, double t_pull, double gemm_running);
/**
 * Interference: the cap on the speed of a GEMM tile on an SM shared with comm CTAs (a fraction of
 * its speed alone): it gives up their share of its issue slots, 1 / (1 + comm_sm_share x comm_ctas
 * / shared_sms), with `comm_ctas` running comm CTAs spread evenly over `shared_sms` SMs. 1 with
 * none.
 */
double duet_cost_gemm_beside_comm(const duet_hw_t *hw, double comm_ctas, double shared_sms);
/**
 * The chip's capacity for operand box rows (rows/s of 128 B fetched past L2 or zero-filled by the
 * copy engines) while `busy` SMs run the operation's GEMM: box_rows_per_us x max(box_min_share,
 * min(1, busy / n_sms)). Each of those SMs gets an even share; a GEMM tile's K step takes at least
 * its rows at that share (docs/model.md).
 */
double duet_cost_box_capacity(const duet_hw_t *hw, double busy);
/** Bytes one pushing CTA keeps in flight: cta_push_gbs x remote_rtt_us. */
double duet_cost_push_inflight(const duet_hw_t *hw);

/**
 * The static (origami) full-chip GEMM estimate: waves x tile time, where a wave is `ctas` tiles
 * running together and a tile costs max(SM-bound time, its share of HBM time), plus the launch.
 * The simulator refines this (work stealing and partial waves); this is the closed form used
 * for sanity checks and by the seed rules.
 */
double duet_cost_gemm_static_s(const duet_hw_t *hw, const duet_plan_t *plan, int64_t ctas);
/**
 * The vendor GEMM of a vendor-mode plan in closed form, without the launch: ceil(tiles / gemm_wgs)
 * waves, each the slower of a tile's time on its SM and the wave's HBM bytes at hbm_gbs
 * (seconds). What duet_plan_vendor_choose() ranks the library's kernels by.
 */
double duet_cost_vendor_gemm_s(const duet_hw_t *hw, const duet_plan_t *plan);
/**
 * The factor on the vendor GEMM's efficiency for its operands' alignment: 1 where K and N are
 * multiples of 8 (every row on 16 bytes: its fast kernels), else the smallest of the factors of
 * the dimensions that are not: vendor_ragged_eff (K odd), vendor_ragged_k4_eff (K even),
 * vendor_ragged_n_eff (N odd), vendor_ragged_n4_eff (N even).
 */
double duet_cost_vendor_ragged(const duet_hw_t *hw, const duet_workload_t *wl);
/** The vendor tile-class factor on vendor_gemm_eff_*: 1, vendor_tile_eff_mid or vendor_tile_eff_small. */
double duet_hw_vendor_tile_eff(const duet_hw_t *hw, duet_gemm_tile_t tile);
/**
 * Seconds of the operand staging pass (duet_plan_t.stage_k; 0 without one): A and B read once
 * and written back with rows of stage_k elements, at the device-memory bandwidth hbm_gbs.
 */
double duet_cost_stage_s(const duet_hw_t *hw, const duet_plan_t *plan);

/** Matrix-unit peak of the chip for a dtype, FLOP/s. */
double duet_cost_peak_flops(const duet_hw_t *hw, int32_t dtype);

/**
 * The clock's slow-down under the operation's sustained matrix work: 1 + clock_heat * T / (T +
 * heat_half_us), T being the plan's GEMM (2 m n k FLOP) at the device's peak rate, in us. GEMM K
 * steps (duet's tile) and comm tiles take this factor; 1 for a plan without a GEMM.
 */
double duet_cost_clock_heat(const duet_hw_t *hw, const duet_plan_t *plan);

#ifdef __cplusplus
}
#endif
#endif /* DUET_MODEL_H */
