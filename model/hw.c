/*
 * Hardware profiles: the field table, bounds checks and the built-in profiles.
 *
 * Every constant carries its source. "[derived]" marks a value computed from other sources,
 * "estimate" one chosen by reasoning that calibration (duet calibrate fit) is expected to replace.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "duet/model.h"
#include "model/internal.h"

static const duet_hw_field_info_t duet__hw_fields[DUET_HW_NFIELDS] = {
#define DUET__HW_INFO_INT 1
#define DUET__HW_INFO_DBL 0
#define DUET__HW_INFO(member, type, unit, lo, hi, help)                                                                \
    {#member, DUET__HW_INFO_##type, unit, lo, hi, help, offsetof(duet_hw_t, member)},
    DUET_HW_FIELDS(DUET__HW_INFO)
#undef DUET__HW_INFO
};

const duet_hw_field_info_t *duet_hw_field_info(int field)
{
    if (field < 0 || field >= DUET_HW_NFIELDS)
        return NULL;
    return &duet__hw_fields[field];
}

double duet_hw_get(const duet_hw_t *hw, int field)
{
    const duet_hw_field_info_t *fi = &duet__hw_fields[field];
    const char *p = (const char *)hw + fi->offset;
    if (fi->is_int) {
        int v;
        memcpy(&v, p, sizeof(v));
        return (double)v;
    }
    double d;
    memcpy(&d, p, sizeof(d));
    return d;
}

void duet_hw_set(duet_hw_t *hw, int field, double value)
{
    const duet_hw_field_info_t *fi = &duet__hw_fields[field];
    char *p = (char *)hw + fi->offset;
    if (fi->is_int) {
        int v = (int)lround(value);
        memcpy(p, &v, sizeof(v));
    } else {
        memcpy(p, &value, sizeof(value));
    }
}

double duet_hw_vendor_tile_eff(const duet_hw_t *hw, duet_gemm_tile_t t)
{
    /* By the tile's C elements: the vendor's kernels of one size share their instruction shape
     * and pipeline, and a recorded tile outside duet_vendor_tile_get() still has a class. */
    int64_t elems = (int64_t)t.bm * t.bn;
    return elems >= 32768 ? 1.0 : elems >= 16384 ? hw->vendor_tile_eff_mid : hw->vendor_tile_eff_small;
}

double duet_hw_tile_eff(const duet_hw_t *hw, duet_gemm_tile_t t)
{
    /* One constant per supported tile (workload.c's list); all have BK 64. */
    static const struct {
        int32_t bm, bn;
        size_t offset;
    } map[] = {
        {256, 256, offsetof(duet_hw_t, tile_eff_256x256)}, {128, 256, offsetof(duet_hw_t, tile_eff_128x256)},
        {256, 128, offsetof(duet_hw_t, tile_eff_256x128)}, {128, 128, offsetof(duet_hw_t, tile_eff_128x128)},
        {256, 64, offsetof(duet_hw_t, tile_eff_256x64)},   {64, 128, offsetof(duet_hw_t, tile_eff_64x128)},
        {64, 256, offsetof(duet_hw_t, tile_eff_64x256)},   {64, 64, offsetof(duet_hw_t, tile_eff_64x64)},
    };
    if (t.bk != 64)
        return 1.0;
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (map[i].bm == t.bm && map[i].bn == t.bn) {
            double v;
            memcpy(&v, (const char *)hw + map[i].offset, sizeof(v));
            return v;
        }
    return 1.0;
}

double duet_hw_mode_err(const duet_hw_t *hw, int32_t mode)
{
    switch (mode) {
    case DUET_MODE_FUSED:
        return hw->err_fused;
    case DUET_MODE_CONCURRENT:
        return hw->err_concurrent;
    case DUET_MODE_VENDOR:
        return hw->err_vendor;
    case DUET_MODE_COPY:
        return hw->err_copy;
    default:
        return 0.0;
    }
}

duet_status_t duet_hw_validate(const duet_hw_t *hw)
{
    if (hw->fabric != DUET_FABRIC_SWITCH && hw->fabric != DUET_FABRIC_MESH)
        return duet__error(DUET_ERR_INVALID_ARG, "fabric: must be \"switch\" or \"mesh\"");
    /* The names and sources are printed as they are (duet hw show, the tables' headers): text only. */
    const char *const texts[] = {hw->name, hw->device, hw->arch};
    const char *const text_keys[] = {"name", "device", "arch"};
    for (int i = 0; i < 3; i++)
        if (!duet__text_plain(texts[i]))
            return duet__error(DUET_ERR_INVALID_ARG, "%s: '%s' holds a control character or a byte that is not text",
                               text_keys[i], duet__q(texts[i]));
    for (int f = 0; f < DUET_HW_NFIELDS; f++)
        if (!duet__text_plain(hw->source[f]))
            return duet__error(DUET_ERR_INVALID_ARG,
                               "constants.%s.source: '%s' holds a control character or a byte that is not text",
                               duet__hw_fields[f].key, duet__q(hw->source[f]));
    for (int f = 0; f < DUET_HW_NFIELDS; f++) {
        const duet_hw_field_info_t *fi = &duet__hw_fields[f];
        double v = duet_hw_get(hw, f);
        if (!isfinite(v) || v < fi->min || v > fi->max)
            return duet__error(DUET_ERR_INVALID_ARG, "constants.%s: %g %s is outside the plausible range [%g, %g]",
                               fi->key, v, fi->unit, fi->min, fi->max);
    }
    if (hw->fabric == DUET_FABRIC_SWITCH && hw->n_links != 1)
        return duet__error(DUET_ERR_INVALID_ARG, "constants.n_links: a switch fabric has one port (n_links 1), got %d",
                           hw->n_links);
    if (hw->comm_coresident > hw->comm_ctas_per_sm)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "constants.comm_coresident: %d exceeds comm_ctas_per_sm %d (a GEMM CTA cannot add room)",
                           hw->comm_coresident, hw->comm_ctas_per_sm);
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Built-in profiles                                                                           */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet__hw_init {
    int field;
    double value;
    const char *source;
} duet__hw_init_t;

#define F(member) DUET_HW_F_##member

/* Sources for the reference design's rules, common to every built-in profile. */
#define SEED_RULES                                                                                                     \
    {F(seed_link_gbs), 120.0, "iris.concurrent predictor.py XGMI_BW_GBPS (the reference design), tuned on MI300X"},    \
        {F(seed_launch_us), 5.0, "iris.concurrent predictor.py COMM_LAUNCH_US (the reference design)"},                \
        {F(seed_alpha), 0.40, "iris.concurrent predictor.py GEMM_INTERFERENCE_ALPHA (the reference design)"},          \
        {F(seed_sat_channels), 64, "iris.concurrent predictor.py COMM_SAT_CHANNELS (the reference design)"},           \
        {F(seed_dequeue_gemm_us), 0.99, "iris.concurrent predictor.py C_ATOMIC_GEMM_MS (the reference design)"},       \
    {                                                                                                                  \
        F(seed_dequeue_comm_us), 2.36, "iris.concurrent predictor.py C_ATOMIC_COMM_MS (the reference design)"          \
    }

/*
 * The copy engines' fixed costs and their interference with the GEMM, with no SDMA measurement:
 * as estimated for NVIDIA's copy engines (tuning_data/h200.json).
 */
#define CE_FIXED_AMD                                                                                                   \
    {F(ce_copy_us), 5.0, "estimate: as NVIDIA's copy engines (tuning_data/h200.json); no SDMA measurement"},           \
        {F(ce_op_us), 20.0, "estimate: as NVIDIA's copy engines (tuning_data/h200.json); no SDMA measurement"},        \
    {                                                                                                                  \
        F(ce_gemm_stretch), 0.15, "estimate: as NVIDIA's copy engines (tuning_data/h200.json); no SDMA measurement"    \
    }

/*
 * The known error of a device without a corpus of its own (no AMD corpus is committed): the H200's
 * held-out figures (tuning_data/h200.json) stand in. A profile that was never fitted is likely
 * further off than a fitted one, so these are a floor, not an estimate of the device.
 */
#define STANDIN_ERR_NOTE "stand-in: the H200's k-fold held-out figure (tuning_data/h200.json); no corpus on this device"
#define STANDIN_ERR                                                                                                    \
    {F(err_fused), ERR_FUSED_H200, STANDIN_ERR_NOTE}, {F(err_concurrent), ERR_CONCURRENT_H200, STANDIN_ERR_NOTE},      \
        {F(err_vendor), ERR_VENDOR_H200, STANDIN_ERR_NOTE},                                                            \
    {                                                                                                                  \
        F(err_copy), ERR_COPY_H200, STANDIN_ERR_NOTE                                                                   \
    }
#define ERR_FUSED_H200 0.1173
#define ERR_CONCURRENT_H200 0.2425
#define ERR_VENDOR_H200 0.3408
#define ERR_COPY_H200 0.2425

/* Per-tile factors of a device whose tiles have not been measured: every tile at gemm_eff. */
#define NEUTRAL_TILE_NOTE "neutral estimate: no per-tile measurement on this device; duet calibrate fit sets it"
#define NEUTRAL_TILE_EFF                                                                                               \
    {F(tile_eff_256x256), 1.0, "the reference tile: gemm_eff_* is its efficiency"},                                    \
        {F(tile_eff_128x256), 1.0, NEUTRAL_TILE_NOTE}, {F(tile_eff_256x128), 1.0, NEUTRAL_TILE_NOTE},                  \
        {F(tile_eff_128x128), 1.0, NEUTRAL_TILE_NOTE}, {F(tile_eff_256x64), 1.0, NEUTRAL_TILE_NOTE},                   \
        {F(tile_eff_64x128), 1.0, NEUTRAL_TILE_NOTE}, {F(tile_eff_64x256), 1.0, NEUTRAL_TILE_NOTE},                    \
    {                                                                                                                  \
        F(tile_eff_64x64), 1.0, NEUTRAL_TILE_NOTE                                                                      \
    }

/*
 * H200: the profile calibrated on duet's own kernels (tuning_data/h200.json, fitted by
 * tools/gpu.sh fit from tuning_data/h200_start.json, the datasheet values and estimates), so that
 * `--hw h200` predicts what duet's kernels do on the machine. Each constant keeps the source the
 * file gives it. The raw fabric constants measured on two H200s (2026-11: 19.9 GB/s per pushing CTA, the link's
 * saturation curve) describe a streaming store kernel, not duet's comm tile; they stay in
 * h200_start.json and in the simulator test that reproduces that curve.
 */
static const duet__hw_init_t duet__h200[] = {
#include "model/hw_h200.inc"
};

/*
 * H100 (SXM5, 80 GB HBM3): the same chip as the H200 with less and slower memory (50 MB of L2,
 * HBM3 at 3.35 TB/s). tuning_data/h100.json, generated into model/hw_h100.inc the same way as the
 * H200's; until an H100 corpus is fitted (tools/gpu.sh fit with FIT_NAME=h100) it is the start
 * profile tuning_data/h100_w1_start.json: the H100's datasheet and measured values, the H200's
 * fit for the chip's constants, and the 2 x H200 fit for NVLink 4's, each source saying which.
 */
static const duet__hw_init_t duet__h100[] = {
#include "model/hw_h100.inc"
};

/*
 * MI300X and MI350X: datasheet values and published figures, uncalibrated. Their sources name
 * "origami", AMD's analytical GEMM model (as used by hipBLASLt; origami::comm is its collective
 * model), whose hardware tables and empirical constants give most of the per-CU figures, and "the
 * reference design" (docs/architecture.md), whose measurements on MI300X give the dequeue costs.
 */
static const duet__hw_init_t duet__mi300x[] = {
    {F(n_sms), 304, "the MI300X datasheet: 304 CUs (8 XCDs x 38)"},
    {F(clock_ghz), 2.1, "origami: gfx942 engine clock 2100 MHz (rocjitsu descriptor)"},
    {F(mma_flops_fp16), 2048, "origami: 16x16x16 f16 MFMA, 16 cycles per SIMD, 4 SIMDs -> 2048 FLOP/cycle/CU"},
    {F(mma_flops_bf16), 2048, "origami: 16x16x16 bf16 MFMA, 2048 FLOP/cycle/CU (1307 TFLOP/s peak)"},
    {F(gemm_eff_fp16), 0.88,
     "estimate: only the 1307 TFLOP/s datasheet rate is published; set so 8192^3 lands within 25 % of it; "
     "calibrate"},
    {F(gemm_eff_bf16), 0.88,
     "estimate: only the 1307 TFLOP/s datasheet rate is published; set so 8192^3 lands within 25 % of it; "
     "calibrate"},
    NEUTRAL_TILE_EFF,
    {F(vendor_gemm_eff_fp16), 0.88, "estimate: as duet's tile until measured (hipBLASLt)"},
    {F(vendor_gemm_eff_bf16), 0.88, "estimate: as duet's tile until measured (hipBLASLt)"},
    {F(vendor_tile_eff_mid), 1, "no measurement: the vendor's tile classes run at one rate until calibrated"},
    {F(vendor_tile_eff_small), 1, "no measurement: the vendor's tile classes run at one rate until calibrated"},
    {F(vendor_tile_us), 1.71, "estimate: as duet's tile, tile_prologue_us + tile_overhead_us, until calibrated"},
    {F(vendor_clock_heat), 0, "no measurement: the vendor GEMM's clock does not depend on its matrix work"},
    {F(vendor_heat_half_us), 50, "estimate: as heat_half_us; no effect while vendor_clock_heat is 0"},
    {F(vendor_hbm_share), 1, "no measurement: the vendor GEMM moves the bytes of duet's L2 model"},
    {F(vendor_sm_contention), 0, "no measurement: the vendor GEMM's K step does not depend on its SM count"},
    {F(smem_kib), 64, "origami: 64 KiB LDS per CU"},
    {F(gemm_stages), 1, "one LDS buffer: a 256x256x64 fp16 A+B tile fills the 64 KiB LDS"},
    {F(l2_mib), 32, "origami: 4 MiB L2 per XCD x 8 (the 256 MiB MALL is not modelled)"},
    {F(l2_gbs), 17000, "origami: gfx942 c_mem1 = 17 TB/s L2 bandwidth"},
    {F(hbm_gbs), 4730, "origami: measured MI300X HBM read 4.73 TB/s (5.3 TB/s spec)"},
    {F(tile_prologue_us), 1.0, "estimate: about two HBM latencies (391 ns measured, per origami's device table)"},
    {F(gemm_sm_contention), 0, "no measurement: the K step does not depend on how many SMs run the GEMM"},
    {F(clock_heat), 0, "no measurement: the clock does not depend on the operation's matrix work"},
    {F(heat_half_us), 50, "estimate: as fitted on H200 (tuning_data/h200.json); no effect while clock_heat is 0"},
    {F(heat_sm_exp), 0, "no measurement: the clock's slow-down does not depend on how many SMs run the GEMM"},
    {F(comm_heat_share), 1, "no measurement: a comm tile slows with the clock as a GEMM tile does"},
    {F(c_ragged_sm_gbs), 0, "no measurement: C rows off 16 bytes are stored as fast as aligned ones"},
    {F(vendor_ragged_eff), 1, "no measurement: the vendor GEMM is as fast with K off a multiple of 8"},
    {F(vendor_ragged_k4_eff), 1, "no measurement: the vendor GEMM is as fast with K off a multiple of 8"},
    {F(vendor_ragged_n_eff), 1, "no measurement: the vendor GEMM is as fast with N off a multiple of 8"},
    {F(vendor_ragged_n4_eff), 1, "no measurement: the vendor GEMM is as fast with N off a multiple of 8"},
    {F(vendor_ragged_sm_resp), 0, "no measurement: hipBLASLt's kernels are taken to follow its CU-count target alike"},
    {F(vendor_records), 0, "no measurement: hipBLASLt's kernels are not recorded (duet_baseline_last_kernel())"},
    {F(tile_oob_row_ns), 0, "no measurement: the MFMA tile's zero-filled copies are taken as free beyond M and N"},
    {F(box_rows_per_us), 1e7, "no measurement: set not to bind (the MFMA tile has no TMA box; 1.3 PB/s of rows)"},
    {F(box_min_share), 1, "no measurement: every SM count reaches all of box_rows_per_us"},
    {F(splitk_sm_gbs), 56, "estimate: one CU's share of L2, l2_gbs / CUs (no K-split measurement)"},
    {F(tile_overhead_us), 0.71, "origami's empirical constants: TILE_FIXED_OVERHEAD 1500 cycles at 2.1 GHz"},
    {F(dequeue_gemm_us), 0.99,
     "the reference design's measurements: effective GEMM dequeue 0.99 us (304 WGs, p50 3.96 us)"},
    {F(dequeue_comm_us), 2.36, "the reference design's measurements: effective comm dequeue 2.36 us (p50 9.44 us)"},
    {F(launch_us), 4.7, "origami's empirical constants: kernel launch 9900 cycles at 2.1 GHz"},
    {F(comm_sync_us), 2.6, "estimate: entry and exit barrier, each about two xGMI flag round trips of 0.66 us"},
    {F(n_links), 7, "the MI300X datasheet: fully connected 8-GPU mesh, 7 xGMI links per GPU"},
    {F(link_gbs), 42.86, "origami::comm: 49.1 GiB/s wire / 1.23 = 42.86 GB/s payload per link and direction"},
    {F(link_half_inflight_kib), 16,
     "[derived] origami::comm ramp 1-exp(-w/4) is half at 2.8 WGs x 5.9 KB in flight per pushing WG"},
    {F(cta_push_gbs), 9.0, "[derived] origami::comm: one WG drives ~21 % of a 42.86 GB/s link"},
    {F(remote_rtt_us), 0.66, "origami::comm: xGMI remote-load round trip 660 ns"},
    {F(cta_pull_inflight_kib), 7.5, "origami::comm: MSHR 12 x 10 waves x 64 B lines in flight per WG"},
    {F(rtt_gemm_stretch), 0.5,
     "estimate: remote loads queue behind the GEMM's L2 traffic, 1.5x the round trip with every CU busy; calibrate"},
    {F(cta_local_gbs), 150, "origami's published results: ~150 GB/s per CU measured HBM bandwidth"},
    {F(comm_tile_overhead_us), 0.3, "estimate: per-tile pointer translation and masks"},
    {F(ce_engines), 7, "estimate: one SDMA engine per xGMI peer, as AMD's mori all_gather drives 7 peers at once"},
    {F(ce_gbs), 38.5,
     "[derived] mori SDMA all_gather 361 GB/s over 7 links on MI355X (51.6 GB/s each) x 42.86 / 57.4 links"},
    {F(ce_local_gbs), 2365, "[derived] hbm_gbs 4.73 TB/s read + write / 2: bytes copied within the GPU (not measured)"},
    CE_FIXED_AMD,
    {F(comm_ctas_per_sm), 4, "estimate: 4 comm WGs of 256 threads per CU"},
    {F(comm_coresident), 1, "estimate: one comm WG fits beside a GEMM WG"},
    {F(comm_sm_share), 0.10, "estimate: a streaming comm WG takes ~10 % of a co-resident GEMM's issue slots"},
    SEED_RULES,
    STANDIN_ERR,
};

static const duet__hw_init_t duet__mi350x[] = {
    {F(n_sms), 256, "MI350X datasheet: 256 CUs (32 per XCD x 8)"},
    {F(clock_ghz), 2.2, "[derived] 2.3 PFLOP/s dense bf16 (MI350X datasheet) / (256 CUs x 4096 FLOP/cycle)"},
    {F(mma_flops_fp16), 4096, "origami: gfx950 16x16x32 f16 MFMA, 4096 FLOP/cycle/CU"},
    {F(mma_flops_bf16), 4096, "origami: gfx950 16x16x32 bf16 MFMA, 4096 FLOP/cycle/CU"},
    {F(gemm_eff_fp16), 0.68,
     "[derived] origami's published results: best measured bf16 1454-1493 TFLOP/s = 0.65 of peak"},
    {F(gemm_eff_bf16), 0.68,
     "[derived] origami's published results: best measured bf16 1454-1493 TFLOP/s = 0.65 of peak"},
    NEUTRAL_TILE_EFF,
    {F(vendor_gemm_eff_fp16), 0.68,
     "[derived] origami's published results: best measured bf16 1454-1493 TFLOP/s (hipBLASLt)"},
    {F(vendor_gemm_eff_bf16), 0.68,
     "[derived] origami's published results: best measured bf16 1454-1493 TFLOP/s (hipBLASLt)"},
    {F(vendor_tile_eff_mid), 1, "no measurement: the vendor's tile classes run at one rate until calibrated"},
    {F(vendor_tile_eff_small), 1, "no measurement: the vendor's tile classes run at one rate until calibrated"},
    {F(vendor_tile_us), 1.68, "estimate: as duet's tile, tile_prologue_us + tile_overhead_us, until calibrated"},
    {F(vendor_clock_heat), 0, "no measurement: the vendor GEMM's clock does not depend on its matrix work"},
    {F(vendor_heat_half_us), 50, "estimate: as heat_half_us; no effect while vendor_clock_heat is 0"},
    {F(vendor_hbm_share), 1, "no measurement: the vendor GEMM moves the bytes of duet's L2 model"},
    {F(vendor_sm_contention), 0, "no measurement: the vendor GEMM's K step does not depend on its SM count"},
    {F(smem_kib), 160, "MI350X datasheet and origami: 160 KiB LDS per CU"},
    {F(gemm_stages), 2, "two LDS buffers of a 256x256x64 fp16 tile fit in 160 KiB"},
    {F(l2_mib), 32, "origami: 4 MiB L2 per XCD x 8 (rocjitsu; the wiki says 8 MiB per XCD)"},
    {F(l2_gbs), 17000, "origami: gfx950 c_mem1 = 17 TB/s L2 bandwidth"},
    {F(hbm_gbs), 8000, "MI350X datasheet: 8 TB/s HBM3E (not measured)"},
    {F(tile_prologue_us), 1.0, "estimate: about two HBM latencies"},
    {F(gemm_sm_contention), 0, "no measurement: the K step does not depend on how many SMs run the GEMM"},
    {F(clock_heat), 0, "no measurement: the clock does not depend on the operation's matrix work"},
    {F(heat_half_us), 50, "estimate: as fitted on H200 (tuning_data/h200.json); no effect while clock_heat is 0"},
    {F(heat_sm_exp), 0, "no measurement: the clock's slow-down does not depend on how many SMs run the GEMM"},
    {F(comm_heat_share), 1, "no measurement: a comm tile slows with the clock as a GEMM tile does"},
    {F(c_ragged_sm_gbs), 0, "no measurement: C rows off 16 bytes are stored as fast as aligned ones"},
    {F(vendor_ragged_eff), 1, "no measurement: the vendor GEMM is as fast with K off a multiple of 8"},
    {F(vendor_ragged_k4_eff), 1, "no measurement: the vendor GEMM is as fast with K off a multiple of 8"},
    {F(vendor_ragged_n_eff), 1, "no measurement: the vendor GEMM is as fast with N off a multiple of 8"},
    {F(vendor_ragged_n4_eff), 1, "no measurement: the vendor GEMM is as fast with N off a multiple of 8"},
    {F(vendor_ragged_sm_resp), 0, "no measurement: hipBLASLt's kernels are taken to follow its CU-count target alike"},
    {F(vendor_records), 0, "no measurement: hipBLASLt's kernels are not recorded (duet_baseline_last_kernel())"},
    {F(tile_oob_row_ns), 0, "no measurement: the MFMA tile's zero-filled copies are taken as free beyond M and N"},
    {F(box_rows_per_us), 1e7, "no measurement: set not to bind (the MFMA tile has no TMA box; 1.3 PB/s of rows)"},
    {F(box_min_share), 1, "no measurement: every SM count reaches all of box_rows_per_us"},
    {F(splitk_sm_gbs), 66, "estimate: one CU's share of L2, l2_gbs / CUs (no K-split measurement)"},
    {F(tile_overhead_us), 0.68, "origami's empirical constants: TILE_FIXED_OVERHEAD 1500 cycles at 2.2 GHz"},
    {F(dequeue_gemm_us), 0.99, "estimate: as measured on MI300X (the reference design's measurements)"},
    {F(dequeue_comm_us), 2.36, "estimate: as measured on MI300X (the reference design's measurements)"},
    {F(launch_us), 4.5, "origami's empirical constants: kernel launch 9900 cycles at 2.2 GHz"},
    {F(comm_sync_us), 2.6, "estimate: entry and exit barrier, each about two xGMI flag round trips of 0.66 us"},
    {F(n_links), 7, "fully connected 8-GPU mesh, 7 xGMI links per GPU"},
    {F(link_gbs), 57.4, "[derived] origami::comm: MI355X link bandwidth +34 % over MI300X's 42.86 GB/s"},
    {F(link_half_inflight_kib), 16, "estimate: as MI300X"},
    {F(cta_push_gbs), 12.0, "[derived] MI300X per-WG push rate x 1.34"},
    {F(remote_rtt_us), 0.66, "estimate: as MI300X (660 ns)"},
    {F(cta_pull_inflight_kib), 7.5, "estimate: as MI300X"},
    {F(rtt_gemm_stretch), 0.5,
     "estimate: remote loads queue behind the GEMM's L2 traffic, 1.5x the round trip with every CU busy; calibrate"},
    {F(cta_local_gbs), 150, "estimate: as MI300X"},
    {F(comm_tile_overhead_us), 0.3, "estimate: per-tile pointer translation and masks"},
    {F(ce_engines), 7, "estimate: one SDMA engine per xGMI peer, as AMD's mori all_gather drives 7 peers at once"},
    {F(ce_gbs), 51.6, "[derived] AMD's mori: SDMA all_gather 361 GB/s at 0 CUs on MI355X, over 7 links"},
    {F(ce_local_gbs), 4000, "[derived] hbm_gbs 8 TB/s read + write / 2: bytes copied within the GPU (not measured)"},
    CE_FIXED_AMD,
    {F(comm_ctas_per_sm), 4, "estimate: 4 comm WGs of 256 threads per CU"},
    {F(comm_coresident), 1, "estimate: one comm WG fits beside a GEMM WG"},
    {F(comm_sm_share), 0.10, "estimate: a streaming comm WG takes ~10 % of a co-resident GEMM's issue slots"},
    SEED_RULES,
    STANDIN_ERR,
};

#undef F

typedef struct duet__hw_builtin {
    const char *name, *device, *arch;
    int fabric;
    const duet__hw_init_t *init;
    size_t n;
} duet__hw_builtin_t;

static const duet__hw_builtin_t duet__builtins[] = {
    {"h100", "NVIDIA H100 80GB HBM3", "sm_90", DUET_FABRIC_SWITCH, duet__h100,
     sizeof(duet__h100) / sizeof(duet__h100[0])},
    {"h200", "NVIDIA H200", "sm_90", DUET_FABRIC_SWITCH, duet__h200, sizeof(duet__h200) / sizeof(duet__h200[0])},
    {"mi300x", "AMD Instinct MI300X", "gfx942", DUET_FABRIC_MESH, duet__mi300x,
     sizeof(duet__mi300x) / sizeof(duet__mi300x[0])},
    {"mi350x", "AMD Instinct MI350X", "gfx950", DUET_FABRIC_MESH, duet__mi350x,
     sizeof(duet__mi350x) / sizeof(duet__mi350x[0])},
};

#define DUET__NBUILTINS ((int)(sizeof(duet__builtins) / sizeof(duet__builtins[0])))

int duet_hw_builtin_count(void)
{
    return DUET__NBUILTINS;
}

const char *duet_hw_builtin_name(int i)
{
    return i >= 0 && i < DUET__NBUILTINS ? duet__builtins[i].name : NULL;
}

duet_status_t duet_hw_builtin(const char *name, duet_hw_t *hw_p)
{
    for (int i = 0; i < DUET__NBUILTINS; i++) {
        const duet__hw_builtin_t *b = &duet__builtins[i];
        if (strcasecmp(b->name, name) != 0) /* "H200" is h200 */
            continue;
        duet_hw_t hw;
        memset(&hw, 0, sizeof(hw));
        snprintf(hw.name, sizeof(hw.name), "%s", b->name);
        snprintf(hw.device, sizeof(hw.device), "%s", b->device);
        snprintf(hw.arch, sizeof(hw.arch), "%s", b->arch);
        hw.fabric = b->fabric;
        int seen[DUET_HW_NFIELDS] = {0};
        for (size_t j = 0; j < b->n; j++) {
            duet_hw_set(&hw, b->init[j].field, b->init[j].value);
            snprintf(hw.source[b->init[j].field], DUET_HW_SOURCE_LEN, "%s", b->init[j].source);
            seen[b->init[j].field] = 1;
        }
        for (int f = 0; f < DUET_HW_NFIELDS; f++)
            if (!seen[f])
                return duet__error(DUET_ERR_INTERNAL, "built-in profile %s lacks constant %s", name,
                                   duet__hw_fields[f].key);
        *hw_p = hw;
        return DUET_OK;
    }
    char known[192];
    return duet__error(DUET_ERR_NOT_FOUND, "no built-in profile named '%s' (%s)", duet__q(name),
                       duet__hw_builtin_names(name, known, sizeof(known)));
}

const char *duet__hw_builtin_names(const char *name, char *text, size_t n)
{
    const char *names[DUET__NBUILTINS];
    size_t len = 0;
    for (int i = 0; i < DUET__NBUILTINS; i++)
        names[i] = duet__builtins[i].name;
    int near = name != NULL ? duet__nearest_name(name, names, DUET__NBUILTINS) : -1;
    if (near >= 0)
        len += (size_t)snprintf(text, n, "did you mean %s? ", names[near]);
    len += (size_t)snprintf(text + len, n - len, "built-ins:");
    for (int i = 0; i < DUET__NBUILTINS && len < n; i++)
        len += (size_t)snprintf(text + len, n - len, "%s %s", i ? "," : "", names[i]);
    return text;
}

/* ------------------------------------------------------------------------------------------ */
/* The built-in profile of a device                                                            */
/* ------------------------------------------------------------------------------------------ */

/*
 * Devices by the names their drivers print (CUDA's and HIP's device properties, nvidia-smi,
 * rocminfo's Marketing Name). A family is one word of the name ("H100" in "NVIDIA H100 PCIe"),
 * matched whole so that "NVIDIA GH200 480GB" is no H200 and "NVIDIA H20" none either. `names`
 * are the spellings of the very device the profile describes; another member of the family
 * (H100 PCIe: 114 SMs and HBM2e; H200 NVL; MI355X: MI350X's chip at a higher clock and power)
 * gets the profile as the nearest built-in, not as its own.
 */
static const struct {
    const char *family, *profile;
    const char *names[3];
} duet__devices[] = {
    {"H100", "h100", {"NVIDIA H100 80GB HBM3", "NVIDIA H100", NULL}},
    {"H200", "h200", {"NVIDIA H200", NULL, NULL}},
    {"MI300X", "mi300x", {"AMD Instinct MI300X", "AMD Instinct MI300X VF", NULL}},
    {"MI350X", "mi350x", {"AMD Instinct MI350X", NULL, NULL}},
    {"MI355X", "mi350x", {NULL, NULL, NULL}},
};

#define DUET__NDEVICES ((int)(sizeof(duet__devices) / sizeof(duet__devices[0])))

static int duet__is_alnum(char ch)
{
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

static char duet__lower(char ch)
{
    return ch >= 'A' && ch <= 'Z' ? (char)(ch - 'A' + 'a') : ch;
}

/* A name as compared: its words (runs of letters and digits) in lower case, one space apart. */
static void duet__device_norm(const char *name, char *out, size_t n)
{
    size_t o = 0;
    int gap = 0;
    for (const char *p = name ? name : ""; *p != '\0' && o + 2 < n; p++) {
        if (!duet__is_alnum(*p)) {
            gap = o > 0;
            continue;
        }
        if (gap)
            out[o++] = ' ';
        gap = 0;
        out[o++] = duet__lower(*p);
    }
    out[o] = '\0';
}

/* Whether `word` (lower case) is one of the words of a normalised name. */
static int duet__has_word(const char *norm, const char *word)
{
    size_t w = strlen(word);
    for (const char *p = norm; (p = strstr(p, word)) != NULL; p++)
        if ((p == norm || p[-1] == ' ') && (p[w] == '\0' || p[w] == ' '))
            return 1;
    return 0;
}

/* The table's row whose device `norm` is (its names), or -1. */
static int duet__device_row(const char *norm)
{
    char name[128];
    for (int i = 0; i < DUET__NDEVICES; i++)
        for (int j = 0; j < 3 && duet__devices[i].names[j] != NULL; j++) {
            duet__device_norm(duet__devices[i].names[j], name, sizeof(name));
            if (strcmp(norm, name) == 0)
                return i;
        }
    return -1;
}

const char *duet_hw_builtin_for_device(const char *device, const char *arch, duet_hw_match_t *match_p)
{
    char norm[128], fam[16];
    duet__device_norm(device, norm, sizeof(norm));
    duet_hw_match_t how = DUET_HW_MATCH_ARCH;
    const char *name = NULL;
    int row = duet__device_row(norm);
    if (row >= 0) {
        how = DUET_HW_MATCH_EXACT;
        name = duet__devices[row].profile;
    }
    for (int i = 0; name == NULL && i < DUET__NDEVICES; i++) {
        duet__device_norm(duet__devices[i].family, fam, sizeof(fam));
        if (duet__has_word(norm, fam)) {
            how = DUET_HW_MATCH_FAMILY;
            name = duet__devices[i].profile;
        }
    }
    if (name == NULL) {
        /* An unknown device: the built-in of its architecture, else of its vendor. NVIDIA's is the
         * H200's, the profile fitted longest; duet's NVIDIA kernels are Hopper's (sm_90). */
        const char *a = arch ? arch : "";
        if (strncmp(a, "gfx950", 6) == 0)
            name = "mi350x";
        else if (strncmp(a, "gfx", 3) == 0 || duet__has_word(norm, "amd"))
            name = "mi300x";
        else
            name = "h200";
    }
    if (match_p != NULL)
        *match_p = how;
    return name;
}

int duet_hw_device_match(const char *a, const char *b)
{
    char na[128], nb[128];
    duet__device_norm(a, na, sizeof(na));
    duet__device_norm(b, nb, sizeof(nb));
    /* A name not recorded cannot disagree. */
    if (na[0] == '\0' || nb[0] == '\0' || strcmp(na, nb) == 0)
        return 1;
    int ra = duet__device_row(na);
    return ra >= 0 && ra == duet__device_row(nb);
}
