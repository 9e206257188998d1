/*
 * GPU tests of the backend (make test-gpu; one MPI rank per GPU, or several ranks sharing one).
 *
 *   duet-gpu-tests [--quick] [--verbose] [--timeout-ms N] [--seed N] [--skip-timeouts]
 *                  [--skip-vendor] [--check-all] [--only SECTIONS] [--plant | --canary | --perf]
 *
 * Every operation runs on fresh random inputs (the seed of each case is derived from the run's
 * base seed, printed at the start and in every failure; --seed N repeats a run) and is checked
 * element by element:
 *   - C against a double-precision reference computed on the GPU without tensor cores, within a
 *     per-element bound derived from the arithmetic (harness.h, duet_test_gemm_bound), for every
 *     element of outputs up to 2048 x 2048 and a strided sample beyond (--check-all: every
 *     element); every element must be finite (NaN is the poison an unwritten element keeps);
 *   - the collective's output against a host reference built from every rank's input (bit-exact
 *     copies; sums in the kernel's order, within 1 ulp);
 *   - guard bands before and after C and dst, filled with a pattern and checked after the
 *     operation, and the whole of A, B and src (with a guard tail each) unchanged.
 * Cases: both modes x five collectives (broadcast from every root) x fp16/bf16 x six shapes;
 * fused and concurrent bytes identical; every GEMM tile; the K split in fp16 and bf16; GEMM-only
 * and collective-only operations, and a shape beyond 2048 x 2048; the vendor mode (the vendor
 * library's GEMM beside duet's comm kernel); argument checks that write nothing; heap rules;
 * operations back to back; for every collective, every rank in turn skipping an operation (the
 * others must time out naming it, then recover); a context over the file bootstrap, buffers the
 * test allocated registered beside heap buffers, graph capture refused (tests/gpu/test_launch.hip).
 * Any world size W (the comm shapes follow W).
 *
 * --quick: a reduced set (for the compute-sanitizer passes and the quick runs at W = 1..4).
 * --skip-timeouts, --skip-vendor: leave those sections out (the sanitizer passes do: under
 *   them a kernel's start can lag by more than the timeout test's short bound, and the vendor
 *   library's kernels are not ours to check).
 * --only SECTIONS: only these sections, comma-separated (e.g. split_k,stream_k): racecheck takes
 *   minutes per wgmma kernel, so a run within its time limit covers the kernels a change touched.
 * --plant: the checks themselves under test: a wrong element, a NaN, writes before and past C and
 *   past dst, changed sources, each planted after a correct operation on the last rank; each must
 *   be caught by its check and by no other. Exit status 0 when every plant was caught.
 * --canary: a kernel with a planted out-of-bounds write and a planted shared-memory race, which
 *   compute-sanitizer's memcheck and racecheck must report.
 * --perf: rough speeds (not a benchmark: duet bench is).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "backend/gpu.h"
#include "duet/backend.h"
#include "tests/gpu/check.h"
#include "tests/gpu/harness.h"
#include "tests/gpu/test_launch.h"

/* The vendor mode needs the baseline libraries (cuBLASLt on NVIDIA; hipBLASLt, which Debian's
 * ROCm does not ship, on AMD), linked into the test binary on NVIDIA only (backend/backend.mk). */
#ifndef DUET_TEST_VENDOR
#if defined(DUET_GPU_NVIDIA)
#define DUET_TEST_VENDOR 1
#else
#define DUET_TEST_VENDOR 0
#endif
#endif
#if DUET_TEST_VENDOR
#include "duet/baseline.h"
#endif

typedef struct shape {
    const char *name;
    int64_t m, n, k;
    int64_t mc, nc;  /* comm rows: rounded down to a multiple of W (at least W), or per rank */
    int mc_per_rank; /* 1: mc rows per rank, W * mc in all (keeps a multiple of every tile) */
    int small_grid;  /* 1: few CTAs, so that every CTA dequeues many tiles and steals */
    int quick;       /* 1: part of the --quick set */
    int matrix;      /* 1: part of the collective x mode x dtype matrix */
} shape_t;

enum {
    SI_RAGGED,
    SI_SMALL_M,
    SI_ALIGNED,
    SI_ODD_K,
    SI_LARGE,
    SI_ODD_N,
    SI_BIG,
    SI_EVEN_K,
    SI_SK200,
    SI_SK266,
    SI_SK10,
    SI_ROW16
};
static const shape_t SHAPES[] = {
    /* K % 64 != 0; the all_to_all chunks (600 / W rows) straddle 256-row comm tiles */
    {"ragged", 300, 520, 200, 600, 136, 0, 0, 1, 1},
    /* M <= 16; nc % 8 != 0: the element comm path */
    {"small-m", 8, 384, 72, 12, 100, 0, 0, 1, 1},
    /* multiples of every tile */
    {"aligned", 512, 512, 256, 512, 512, 1, 1, 0, 1},
    /* K % 8 != 0: element GEMM loads; N odd */
    {"odd-k", 130, 71, 101, 6, 24, 0, 1, 1, 1},
    /* the largest shape checked in full (2048 x 2048 outputs), 16 MiB of src per rank */
    {"large", 2048, 2048, 1024, 4096, 2048, 0, 0, 0, 1},
    /* K % 8 == 0, N % 8 != 0: the wgmma tile with C stored by its threads, not TMA; N = 258 is 3
     * tile columns of 128 or 2 of 256, the last with 2 columns */
    {"odd-n", 300, 258, 320, 256, 72, 0, 1, 1, 1},
    /* beyond 2048 x 2048 outputs: checked on the strided sample; M ragged */
    {"big", 3000, 3072, 512, 1024, 256, 0, 0, 0, 0},
    /* K even, K % 8 != 0 (230 = 3 steps of 64 and 38): the mma.sync tile's 4-byte copies; N even,
     * N % 8 != 0: C stored in 32-bit pairs; M <= 128: the second pass of 256x256 lies beyond M */
    {"even-k", 100, 138, 230, 64, 64, 0, 0, 0, 0},
    /* Stream-K: in 128x256 tiles 10 x 20 = 200 C tiles (1270 = 9 x 128 + 118 rows, 5100 = 19 x
     * 256 + 236 columns), 2 past a multiple of 33, 66 and 99 CTAs; K = 1096: 17 steps of 64 and
     * one of 8 */
    {"sk-200", 1270, 5100, 1096, 512, 256, 0, 0, 0, 0},
    /* 14 x 19 = 266 C tiles in 128x256 (1790 = 13 x 128 + 126, 4800 = 18 x 256 + 192), 2 past a
     * multiple of 132 (and of 33 and 66) */
    {"sk-266", 1790, 4800, 1096, 512, 256, 0, 0, 0, 0},
    /* Stream-K small enough for racecheck (minutes per wgmma kernel launch at sk-200's size):
     * 2 x 5 = 10 C tiles of 128x256 on 4 GEMM CTAs, 2 past 2 waves; K = 1024 is 16 steps of 64,
     * so the plan splits the 2-tile tail in 2 parts (8 + 6 fix-up steps < 16) */
    {"sk-10", 256, 1280, 1024, 256, 64, 0, 0, 0, 0},
    /* K % 16 == 8 (264 = 4 steps of 64 and 8): rows of 528 bytes, on 16 bytes only; 2048 x 2048
     * is the smallest square the plan stages for that (M N >= 1024 (M + N)): rows of 320 */
    {"row16", 2048, 2048, 264, 256, 64, 0, 0, 1, 0},
};
#define NSHAPES ((int)(sizeof(SHAPES) / sizeof(SHAPES[0])))

/* Guard band before C and dst, elements (8 KiB: a negative index, a row before the start). */
#define GUARD_FRONT 4096
/* Guard band after C, dst, A, B and src: at least one comm or GEMM tile's height (256 rows) of
 * the widest row plus this, elements: a tile that ignores the M edge writes within it. */
#define GUARD_TAIL 4096

/* Failure kinds of one operation (run_one), so that --plant can tell which check fired. */
enum {
    F_STATUS = 1,     /* the operation or its sync returned an error */
    F_GEMM = 2,       /* an element of C outside its bound, or not finite */
    F_COLL = 4,       /* an element of dst differs from the reference */
    F_C_GUARD = 8,    /* something written before or past C */
    F_DST_GUARD = 16, /* something written before or past dst */
    F_SOURCES = 32,   /* A, B or src (or their tails) changed */
};

/* Device buffers, sized for the largest shape at this W, and the host copies of the references. */
typedef struct bufs {
    uint16_t *a, *b, *a0, *b0; /* device, outside the heap; a0, b0: pristine copies */
    size_t ab_cap;             /* elements of each, a guard tail included */
    uint16_t *c_alloc, *c;     /* c = c_alloc + GUARD_FRONT */
    size_t c_cap;              /* elements from c to the end of the allocation */
    uint16_t *src, *src0;      /* src on the heap; src0 its pristine copy outside it */
    size_t src_cap;
    uint16_t *dst_alloc, *dst; /* heap; dst = dst_alloc + GUARD_FRONT */
    size_t dst_cap;            /* elements from dst to the end of the allocation */
    uint16_t *src_bad;         /* device memory outside the heap */
    double *d_ref, *d_p;       /* the GEMM reference on the device */
    double *h_ref, *h_p;       /* and on the host */
    uint16_t *h_c;             /* host copy of C for the check */
    hipStream_t stream;
} bufs_t;

typedef struct result {
    uint16_t *c, *dst; /* host copies of the outputs */
    size_t c_n, dst_n;
} result_t;

/* One operation to run and check. */
typedef struct tcase {
    duet_workload_t wl;
    duet_config_t cfg;
    uint64_t seed;      /* A, B and every rank's src derive from it */
    int64_t timeout_ms; /* 0: the context's */
    int vendor;         /* run through duet_vendor_run() */
    int plant;          /* --plant: what to plant after the operation (PLANT_*), on the last rank */
    char label[224];
} tcase_t;

static uint64_t g_base_seed;
static uint64_t g_case_ctr;
static int g_check_all;
#if DUET_TEST_VENDOR
static duet_baseline_h g_vendor;
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A fresh seed for the next case. */
static uint64_t next_seed(void)
{
    return duet_test_case_seed(g_base_seed, g_case_ctr++, 0);
}

/* The seeds of one case's parts: A, B, and rank p's src. */
static uint64_t seed_a(uint64_t seed)
{
    return duet_test_mix(seed, 101);
}
static uint64_t seed_b(uint64_t seed)
{
    return duet_test_mix(seed, 102);
}
static uint64_t seed_src(uint64_t seed, int p)
{
    return duet_test_mix(seed, 200 + (uint64_t)p);
}

/* Comm rows of a shape at world size W: divisible by W, as reduce_scatter and all_to_all need. */
static int64_t shape_mc(const shape_t *s, int world)
{
    if (s->mc_per_rank)
        return s->mc * world;
    int64_t mc = s->mc / world * world;
    return mc < world ? world : mc;
}

static duet_workload_t make_wl(const shape_t *s, int coll, int dtype, int world, int root, int gemm)
{
    duet_workload_t wl = duet_workload_empty();
    if (gemm) {
        wl.m = s->m;
        wl.n = s->n;
        wl.k = s->k;
    }
    wl.coll = coll;
    if (coll != DUET_COLL_NONE) {
        wl.mc = shape_mc(s, world);
        wl.nc = s->nc;
    }
    wl.dtype = dtype;
    wl.world = world;
    wl.root = root;
    return wl;
}

/*
 * The device as the tests size their grids: the context's, with the SMs divided among the ranks
 * that share this rank's GPU (tools/gpu.sh quick runs W = 2, 3 and 4 with ranks sharing GPUs). Two
 * grids of every SM cannot both be resident on one GPU, and a persistent kernel that waits for a
 * rank whose kernel cannot start times out.
 */
static duet_hw_t g_test_hw;
static const duet_hw_t *test_hw(void)
{
    return &g_test_hw;
}

/* Fill g_test_hw; @return the ranks on this rank's GPU (1 with a GPU per rank). */
static int test_hw_init(duet_ctx_h ctx)
{
    int dev = -1, world = 1, share = 0, devs[DUET_OP_MAX_WORLD];
    CHECK_HIP(hipGetDevice(&dev));
    MPI_Comm_size(MPI_COMM_WORLD, &world); /* <= DUET_OP_MAX_WORLD: the context exists */
    MPI_Allgather(&dev, 1, MPI_INT, devs, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < world; r++)
        share += devs[r] == dev;
    g_test_hw = *duet_ctx_hw(ctx);
    g_test_hw.n_sms /= share;
    return share;
}

static duet_config_t make_cfg(const duet_hw_t *hw, int mode, const shape_t *s)
{
    duet_config_t cfg = duet_config_default(hw, mode);
    if (s->small_grid) {
        if (mode == DUET_MODE_FUSED) {
            cfg.num_wgs = 12;
            cfg.gemm_wgs = 8;
            cfg.comm_wgs = 4;
        } else if (mode == DUET_MODE_COPY) {
            cfg.num_wgs = cfg.gemm_wgs = 6; /* copy streams: the default, 1 */
        } else {
            cfg.gemm_wgs = 6;
            cfg.comm_wgs = 3;
            cfg.num_wgs = 9;
        }
        cfg.cm = 64; /* more, smaller comm tiles */
        cfg.cn = 64;
    }
    return cfg;
}

static void tcase_init(tcase_t *tc, const duet_workload_t *wl, const duet_config_t *cfg, uint64_t seed)
{
    memset(tc, 0, sizeof(*tc));
    tc->wl = *wl;
    tc->cfg = *cfg;
    tc->seed = seed;
}

/* ------------------------------------------------------------------------------------------ */
/* References                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/*
 * Expected collective output of `rank`, regenerated from every rank's seed (only the parts it
 * needs). The last one is kept: the fused and the concurrent run of a case share it.
 */
static const uint16_t *coll_ref(const duet_workload_t *wl, int rank, uint64_t seed)
{
    static struct {
        duet_workload_t wl;
        int rank;
        uint64_t seed;
        uint16_t *out;
        int valid;
    } memo;
    if (memo.valid && memo.rank == rank && memo.seed == seed && memo.wl.coll == wl->coll && memo.wl.mc == wl->mc &&
        memo.wl.nc == wl->nc && memo.wl.dtype == wl->dtype && memo.wl.world == wl->world && memo.wl.root == wl->root)
        return memo.out;
    const int W = wl->world, dt = wl->dtype;
    const int64_t mc = wl->mc, nc = wl->nc, chunk = mc / W;
    const size_t n = (size_t)(mc * nc), cn = (size_t)(chunk * nc);
    free(memo.out);
    memo.valid = 0;
    memo.out = (uint16_t *)malloc(duet_op_dst_bytes(wl) + 2);
    uint16_t *out = memo.out;
    switch (wl->coll) {
    case DUET_COLL_ALL_GATHER:
        for (int p = 0; p < W; p++)
            duet_test_fill(out + (size_t)p * n, n, dt, seed_src(seed, p));
        break;
    case DUET_COLL_BROADCAST:
        duet_test_fill(out, n, dt, seed_src(seed, wl->root));
        break;
    case DUET_COLL_ALL_TO_ALL:
        /* Block p of my output is block `rank` of rank p's input. */
        for (int p = 0; p < W; p++)
            duet_test_fill_range(out + (size_t)p * cn, (size_t)rank * cn, cn, dt, seed_src(seed, p));
        break;
    case DUET_COLL_ALL_REDUCE:
    case DUET_COLL_REDUCE_SCATTER: {
        const size_t len = wl->coll == DUET_COLL_ALL_REDUCE ? n : cn;
        const size_t first = wl->coll == DUET_COLL_ALL_REDUCE ? 0 : (size_t)rank * cn;
        float *acc = (float *)calloc(len, sizeof(float));
        uint16_t *part = (uint16_t *)malloc(len * sizeof(uint16_t));
        /* The kernel's order: rank 0, 1, ... added in fp32, then rounded once. */
        for (int p = 0; p < W; p++) {
            duet_test_fill_range(part, first, len, dt, seed_src(seed, p));
            for (size_t i = 0; i < len; i++)
                acc[i] += duet_to_f32(part[i], dt);
        }
        for (size_t i = 0; i < len; i++)
            out[i] = duet_from_f32(acc[i], dt);
        free(part);
        free(acc);
        break;
    }
    default:
        break;
    }
    memo.wl = *wl;
    memo.rank = rank;
    memo.seed = seed;
    memo.valid = 1;
    return out;
}

/*
 * A and B of a case into a0 and b0 (with their guard tails), and the GEMM reference into h_ref
 * and h_p. Kept while the next case has the same seed and shape (the runs of one case).
 */
static void prepare_gemm(bufs_t *bf, const duet_workload_t *wl, uint64_t seed)
{
    static struct {
        uint64_t seed;
        int64_t m, n, k;
        int dtype, valid;
    } key;
    if (wl->m == 0 ||
        (key.valid && key.seed == seed && key.m == wl->m && key.n == wl->n && key.k == wl->k && key.dtype == wl->dtype))
        return;
    uint16_t *h = (uint16_t *)malloc(bf->ab_cap * sizeof(uint16_t));
    const size_t na = (size_t)(wl->m * wl->k), nb = (size_t)(wl->n * wl->k);
    duet_test_fill(h, na, wl->dtype, seed_a(seed));
    for (size_t i = na; i < bf->ab_cap; i++)
        h[i] = duet_test_canary(i);
    CHECK_HIP(hipMemcpy(bf->a0, h, bf->ab_cap * 2, hipMemcpyHostToDevice));
    duet_test_fill(h, nb, wl->dtype, seed_b(seed));
    for (size_t i = nb; i < bf->ab_cap; i++)
        h[i] = duet_test_canary(i);
    CHECK_HIP(hipMemcpy(bf->b0, h, bf->ab_cap * 2, hipMemcpyHostToDevice));
    /* A copy from pageable memory may return before it has landed: wait before the stream reads it. */
    CHECK_HIP(hipDeviceSynchronize());
    free(h);
    duet_test_dev_gemm_ref(bf->a0, bf->b0, wl->m, wl->n, wl->k, wl->dtype, bf->d_ref, bf->d_p, bf->stream);
    const size_t cn = (size_t)(wl->m * wl->n);
    CHECK_HIP(hipMemcpyAsync(bf->h_ref, bf->d_ref, cn * sizeof(double), hipMemcpyDeviceToHost, bf->stream));
    CHECK_HIP(hipMemcpyAsync(bf->h_p, bf->d_p, cn * sizeof(double), hipMemcpyDeviceToHost, bf->stream));
    CHECK_HIP(hipStreamSynchronize(bf->stream));
    key.seed = seed;
    key.m = wl->m;
    key.n = wl->n;
    key.k = wl->k;
    key.dtype = wl->dtype;
    key.valid = 1;
}

/* This rank's src of a case into src0 (with its guard tail); kept for the runs of one case. */
static void prepare_src(bufs_t *bf, const duet_workload_t *wl, uint64_t seed, int rank)
{
    static struct {
        uint64_t seed;
        int64_t mc, nc;
        int dtype, valid;
    } key;
    if (key.valid && key.seed == seed && key.mc == wl->mc && key.nc == wl->nc && key.dtype == wl->dtype)
        return;
    const size_t n = (size_t)(wl->mc * wl->nc);
    uint16_t *h = (uint16_t *)malloc(bf->src_cap * sizeof(uint16_t));
    duet_test_fill(h, n, wl->dtype, seed_src(seed, rank));
    for (size_t i = n; i < bf->src_cap; i++)
        h[i] = duet_test_canary(i);
    CHECK_HIP(hipMemcpy(bf->src0, h, bf->src_cap * 2, hipMemcpyHostToDevice));
    /* A copy from pageable memory may return before it has landed: wait before the stream reads it. */
    CHECK_HIP(hipDeviceSynchronize());
    free(h);
    key.seed = seed;
    key.mc = wl->mc;
    key.nc = wl->nc;
    key.dtype = wl->dtype;
    key.valid = 1;
}

/* ------------------------------------------------------------------------------------------ */
/* One operation, checked                                                                      */
/* ------------------------------------------------------------------------------------------ */

enum {
    PLANT_NONE,
    PLANT_C_ELEM,          /* one element of C just outside its bound */
    PLANT_C_NAN,           /* one element of C left as the NaN poison */
    PLANT_C_PAST,          /* the element right after C */
    PLANT_C_FAR,           /* an element a whole 255-row tile band past C's last row */
    PLANT_C_BEFORE,        /* the element right before C */
    PLANT_C_UNSAMPLED_NAN, /* beyond 2048 x 2048: NaN in an element the sample skips */
    PLANT_DST_ELEM,        /* one element of dst off by one ulp */
    PLANT_DST_PAST,        /* the element right after dst */
    PLANT_DST_BEFORE,      /* the element right before dst */
    PLANT_SRC,             /* one element of src changed */
    PLANT_SRC_TAIL,        /* the element right after the used part of src */
    PLANT_A,               /* one element of A changed */
    PLANT_B_TAIL,          /* the element right after the used part of B */
    PLANT_COUNT
};
static const char *const PLANT_NAMES[PLANT_COUNT] = {"none",
                                                     "wrong C element",
                                                     "NaN in C",
                                                     "write right past C",
                                                     "write a tile band past C",
                                                     "write right before C",
                                                     "NaN in an unsampled C element",
                                                     "dst element off by 1 ulp",
                                                     "write right past dst",
                                                     "write right before dst",
                                                     "src changed",
                                                     "src tail changed",
                                                     "A changed",
                                                     "B tail changed"};

static uint16_t peek(const uint16_t *p)
{
    uint16_t v = 0;
    CHECK_HIP(hipMemcpy(&v, p, 2, hipMemcpyDeviceToHost));
    return v;
}

/* A copy from pageable host memory may return before it has landed, and the checks run on a
 * non-blocking stream that the legacy stream does not order: wait for the device. */
static void poke(uint16_t *p, uint16_t v)
{
    CHECK_HIP(hipMemcpy(p, &v, 2, hipMemcpyHostToDevice));
    CHECK_HIP(hipDeviceSynchronize());
}

/* Plant a fault after the operation (--plant). */
static void plant(bufs_t *bf, const tcase_t *tc)
{
    const duet_workload_t *wl = &tc->wl;
    const size_t c_n = (size_t)(wl->m * wl->n), src_n = (size_t)(wl->mc * wl->nc);
    const size_t dst_n = duet_op_dst_bytes(wl) / 2;
    switch (tc->plant) {
    case PLANT_C_ELEM: {
        /* The last element (a ragged corner), moved to the nearest 16-bit value outside its bound. */
        const size_t i = c_n - 1;
        const double want = bf->h_ref[i], bound = duet_test_gemm_bound(want, bf->h_p[i], wl->k, wl->dtype);
        double d = bound;
        uint16_t v = 0;
        do {
            d *= 1.25;
            v = duet_from_f32((float)(want + d), wl->dtype);
        } while (!(fabs((double)duet_to_f32(v, wl->dtype) - want) > bound));
        poke(bf->c + i, v);
        break;
    }
    case PLANT_C_NAN:
        poke(bf->c + (size_t)(wl->m / 2 * wl->n + wl->n / 2), 0xffffu);
        break;
    case PLANT_C_PAST:
        poke(bf->c + c_n, (uint16_t)~duet_test_canary(GUARD_FRONT + c_n));
        break;
    case PLANT_C_FAR: {
        const size_t i = c_n + (size_t)(255 * wl->n);
        poke(bf->c + i, (uint16_t)~duet_test_canary(GUARD_FRONT + i));
        break;
    }
    case PLANT_C_BEFORE:
        poke(bf->c - 1, (uint16_t)~duet_test_canary(GUARD_FRONT - 1));
        break;
    case PLANT_C_UNSAMPLED_NAN: {
        /* Row 6, column 6 of a shape beyond 2048 x 2048: neither is on the sample's lines. */
        poke(bf->c + (size_t)(6 * wl->n + 6), 0xffffu);
        break;
    }
    case PLANT_DST_ELEM: {
        const size_t i = dst_n / 2 + 1;
        poke(bf->dst + i, (uint16_t)(peek(bf->dst + i) ^ 1u));
        break;
    }
    case PLANT_DST_PAST:
        poke(bf->dst + dst_n, (uint16_t)~duet_test_canary(GUARD_FRONT + dst_n));
        break;
    case PLANT_DST_BEFORE:
        poke(bf->dst - 1, (uint16_t)~duet_test_canary(GUARD_FRONT - 1));
        break;
    case PLANT_SRC:
        poke(bf->src + src_n / 3, (uint16_t)(peek(bf->src + src_n / 3) ^ 1u));
        break;
    case PLANT_SRC_TAIL:
        poke(bf->src + src_n, (uint16_t)~duet_test_canary(src_n));
        break;
    case PLANT_A:
        poke(bf->a + (size_t)(wl->m * wl->k) - 1, (uint16_t)(peek(bf->a + (size_t)(wl->m * wl->k) - 1) ^ 0x8000u));
        break;
    case PLANT_B_TAIL:
        poke(bf->b + (size_t)(wl->n * wl->k), 0);
        break;
    default:
        break;
    }
}

/* Check C against the reference; note the first bad element. @return 1 when every checked
 * element is within its bound and every element is finite. */
static int check_gemm(const duet_test *t, const bufs_t *bf, const tcase_t *tc, const uint16_t *c)
{
    const duet_workload_t *wl = &tc->wl;
    const int64_t m = wl->m, n = wl->n;
    int64_t bad = 0, first = -1, checked = 0;
    double f_got = 0, f_want = 0, f_bound = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const size_t e = (size_t)(i * n + j);
            const double got = duet_to_f32(c[e], wl->dtype);
            double want = NAN, bound = NAN;
            int ok;
            if (duet_test_sampled(i, j, m, n, g_check_all)) {
                want = bf->h_ref[e];
                bound = duet_test_gemm_bound(want, bf->h_p[e], wl->k, wl->dtype);
                ok = fabs(got - want) <= bound; /* false for NaN */
                checked++;
            } else {
                ok = isfinite(got);
            }
            if (!ok && bad++ == 0) {
                first = (int64_t)e;
                f_got = got;
                f_want = want;
                f_bound = bound;
            }
        }
    if (bad)
        duet_test_note(
            t,
            "%s: C: %lld of %lld elements wrong (%lld compared with the reference), first at row %lld col %lld: "
            "got %.9g (0x%04x), want %.9g, bound %.3g (seed 0x%llx)",
            tc->label, (long long)bad, (long long)(m * n), (long long)checked, (long long)(first / n),
            (long long)(first % n), f_got, c[first], f_want, f_bound, (unsigned long long)tc->seed);
    return bad == 0;
}

/* Check dst against the collective's reference; note the first bad element. */
static int check_coll(const duet_test *t, const tcase_t *tc, const uint16_t *dst, size_t dst_n)
{
    const duet_workload_t *wl = &tc->wl;
    const uint16_t *ref = coll_ref(wl, t->rank, tc->seed);
    const int sums = wl->coll == DUET_COLL_ALL_REDUCE || wl->coll == DUET_COLL_REDUCE_SCATTER;
    size_t exact = 0, bad = 0, first = 0;
    for (size_t i = 0; i < dst_n; i++) {
        int u = duet_test_ulps(dst[i], ref[i]);
        if (u == 0)
            exact++;
        else if (!(sums && u <= 1) && bad++ == 0)
            first = i;
    }
    if (bad) {
        duet_test_note(t,
                       "%s: dst: %zu of %zu elements wrong, first at row %lld col %lld: got %.9g (0x%04x), want %.9g "
                       "(0x%04x) (seed 0x%llx)",
                       tc->label, bad, dst_n, (long long)(first / (size_t)wl->nc), (long long)(first % (size_t)wl->nc),
                       (double)duet_to_f32(dst[first], wl->dtype), dst[first],
                       (double)duet_to_f32(ref[first], wl->dtype), ref[first], (unsigned long long)tc->seed);
        return 0;
    }
    if (exact != dst_n)
        duet_test_note(t, "%s: %zu of %zu sums differ from the host's by 1 ulp", tc->label, dst_n - exact, dst_n);
    return 1;
}

/* Check a guard band; note where it was overwritten. `what`: "C" or "dst". */
static int check_guard(const duet_test *t, const tcase_t *tc, const uint16_t *alloc, size_t used, size_t cap,
                       const char *what, hipStream_t s)
{
    uint16_t got = 0;
    int64_t i = duet_test_dev_guard_check(alloc, GUARD_FRONT, GUARD_FRONT + used, GUARD_FRONT + cap, s, &got);
    if (i < 0)
        return 1;
    if (i < GUARD_FRONT)
        duet_test_note(t, "%s: written %lld elements before %s: 0x%04x (seed 0x%llx)", tc->label,
                       (long long)(GUARD_FRONT - i), what, got, (unsigned long long)tc->seed);
    else
        duet_test_note(t, "%s: written past %s (%zu elements) at element %lld after its end: 0x%04x (seed 0x%llx)",
                       tc->label, what, used, (long long)(i - GUARD_FRONT - (int64_t)used), got,
                       (unsigned long long)tc->seed);
    return 0;
}

/* A source and its tail unchanged against its pristine copy. */
static int check_same(const duet_test *t, const tcase_t *tc, const uint16_t *p, const uint16_t *p0, size_t n,
                      size_t used, const char *what, hipStream_t s)
{
    int64_t i = duet_test_dev_first_diff(p, p0, n, s);
    if (i < 0)
        return 1;
    duet_test_note(t, "%s: %s changed at element %lld%s: 0x%04x, was 0x%04x (seed 0x%llx)", tc->label, what,
                   (long long)i, (size_t)i >= used ? " (its guard tail)" : "", peek(p + i), peek(p0 + i),
                   (unsigned long long)tc->seed);
    return 0;
}

/*
 * One operation on every rank: sources restored from their pristine copies, outputs poisoned
 * (NaN) inside guard bands, run, sync, check everything. Fills `res` with the host copies of C and
 * dst. @return 0 when this rank's part is correct, else the F_* of every check that failed.
 */
static int run_one(duet_test *t, duet_ctx_h ctx, bufs_t *bf, const tcase_t *tc, result_t *res)
{
    const duet_workload_t *wl = &tc->wl;
    const size_t c_n = (size_t)(wl->m * wl->n), src_n = (size_t)(wl->mc * wl->nc);
    const size_t dst_n = duet_op_dst_bytes(wl) / 2;
    memset(res, 0, sizeof(*res));
    prepare_gemm(bf, wl, tc->seed);
    if (src_n)
        prepare_src(bf, wl, tc->seed, t->rank);
    CHECK_HIP(hipMemcpyAsync(bf->a, bf->a0, bf->ab_cap * 2, hipMemcpyDeviceToDevice, bf->stream));
    CHECK_HIP(hipMemcpyAsync(bf->b, bf->b0, bf->ab_cap * 2, hipMemcpyDeviceToDevice, bf->stream));
    CHECK_HIP(hipMemcpyAsync(bf->src, bf->src0, bf->src_cap * 2, hipMemcpyDeviceToDevice, bf->stream));
    duet_test_dev_guard_fill(bf->c_alloc, GUARD_FRONT, GUARD_FRONT + c_n, GUARD_FRONT + bf->c_cap, bf->stream);
    duet_test_dev_guard_fill(bf->dst_alloc, GUARD_FRONT, GUARD_FRONT + dst_n, GUARD_FRONT + bf->dst_cap, bf->stream);
    CHECK_HIP(hipStreamSynchronize(bf->stream));

    duet_op_t op;
    memset(&op, 0, sizeof(op));
    op.wl = *wl;
    op.cfg = tc->cfg;
    op.a = bf->a;
    op.b = bf->b;
    op.c = bf->c;
    op.src = bf->src;
    op.dst = bf->dst;
    op.timeout_ms = tc->timeout_ms;
    duet_status_t st = DUET_ERR_UNSUPPORTED;
    if (!tc->vendor)
        st = duet_run(ctx, &op, bf->stream);
#if DUET_TEST_VENDOR
    else
        st = duet_vendor_run(g_vendor, ctx, &op, bf->stream);
#endif
    if (st == DUET_OK)
        st = duet_ctx_sync(ctx, bf->stream);
    if (st != DUET_OK) {
        duet_test_note(t, "%s: %s: %s", tc->label, duet_status_name(st), duet_ctx_last_error(ctx));
        return F_STATUS;
    }
    if (tc->plant != PLANT_NONE && t->rank == t->world - 1)
        plant(bf, tc);

    res->c_n = c_n;
    res->dst_n = dst_n;
    res->c = (uint16_t *)malloc((c_n + 1) * 2);
    res->dst = (uint16_t *)malloc((dst_n + 1) * 2);
    if (c_n)
        CHECK_HIP(hipMemcpy(res->c, bf->c, c_n * 2, hipMemcpyDeviceToHost));
    if (dst_n)
        CHECK_HIP(hipMemcpy(res->dst, bf->dst, dst_n * 2, hipMemcpyDeviceToHost));

    int fail = 0;
    if (c_n && !check_gemm(t, bf, tc, res->c))
        fail |= F_GEMM;
    if (dst_n && !check_coll(t, tc, res->dst, dst_n))
        fail |= F_COLL;
    if (!check_guard(t, tc, bf->c_alloc, c_n, bf->c_cap, "C", bf->stream))
        fail |= F_C_GUARD;
    if (!check_guard(t, tc, bf->dst_alloc, dst_n, bf->dst_cap, "dst", bf->stream))
        fail |= F_DST_GUARD;
    if (!check_same(t, tc, bf->a, bf->a0, bf->ab_cap, c_n ? (size_t)(wl->m * wl->k) : 0, "A", bf->stream) ||
        !check_same(t, tc, bf->b, bf->b0, bf->ab_cap, c_n ? (size_t)(wl->n * wl->k) : 0, "B", bf->stream) ||
        !check_same(t, tc, bf->src, bf->src0, bf->src_cap, src_n, "src", bf->stream))
        fail |= F_SOURCES;
    return fail;
}

static void result_free(result_t *r)
{
    free(r->c);
    free(r->dst);
    memset(r, 0, sizeof(*r));
}

static int same_bytes(const result_t *x, const result_t *y)
{
    return x->c != NULL && y->c != NULL && x->c_n == y->c_n && x->dst_n == y->dst_n &&
           memcmp(x->c, y->c, x->c_n * 2) == 0 && memcmp(x->dst, y->dst, x->dst_n * 2) == 0;
}

/* Run a case and count it as one check (its label, with the seed). */
static int run_check(duet_test *t, duet_ctx_h ctx, bufs_t *bf, const tcase_t *tc, result_t *res)
{
    result_t tmp;
    int fail = run_one(t, ctx, bf, tc, res ? res : &tmp);
    duet_test_check(t, fail == 0, "%s", tc->label);
    if (res == NULL)
        result_free(&tmp);
    return fail == 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The cases                                                                                   */
/* ------------------------------------------------------------------------------------------ */

/* The GPU's double reference against the host's loop, on small shapes of both dtypes. */
static void test_reference(duet_test *t, bufs_t *bf)
{
    const int shapes[3] = {SI_RAGGED, SI_ODD_K, SI_SMALL_M};
    for (int i = 0; i < 3; i++)
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            const shape_t *s = &SHAPES[shapes[i]];
            duet_workload_t wl = make_wl(s, DUET_COLL_NONE, dtype, t->world, 0, 1);
            const uint64_t seed = next_seed();
            prepare_gemm(bf, &wl, seed);
            const size_t na = (size_t)(s->m * s->k), nb = (size_t)(s->n * s->k), cn = (size_t)(s->m * s->n);
            uint16_t *a = (uint16_t *)malloc(na * 2), *b = (uint16_t *)malloc(nb * 2);
            double *ref = (double *)malloc(cn * sizeof(double)), *p = (double *)malloc(cn * sizeof(double));
            duet_test_fill(a, na, dtype, seed_a(seed));
            duet_test_fill(b, nb, dtype, seed_b(seed));
            duet_test_gemm_ref(a, b, ref, p, s->m, s->n, s->k, dtype);
            double worst = 0;
            int ok = 1;
            for (size_t e = 0; e < cn; e++) {
                /* Both add the exact products in the same order in double; allow the order's
                 * rounding anyway. */
                const double tol = 2.0 * duet_test_gamma((double)s->k, 0x1p-53) * p[e];
                const double d = fabs(bf->h_ref[e] - ref[e]), dp = fabs(bf->h_p[e] - p[e]);
                worst = d > worst ? d : worst;
                ok = ok && d <= tol && dp <= tol;
            }
            if (!ok)
                duet_test_note(t, "reference %s %s: largest difference %.3g (seed 0x%llx)", s->name,
                               duet_dtype_name(dtype), worst, (unsigned long long)seed);
            duet_test_check(t, ok, "W=%d the GPU's double GEMM reference equals the host's: %s %s (%lldx%lldx%lld)",
                            t->world, s->name, duet_dtype_name(dtype), (long long)s->m, (long long)s->n,
                            (long long)s->k);
            free(p);
            free(ref);
            free(b);
            free(a);
        }
}

/* The matrix: every collective (and root) x dtype x shape, fused then concurrent on the same
 * inputs, whose bytes must then agree. */
static void test_matrix(duet_test *t, duet_ctx_h ctx, bufs_t *bf, int quick)
{
    const duet_hw_t *hw = test_hw();
    for (int si = 0; si < NSHAPES; si++) {
        const shape_t *s = &SHAPES[si];
        if (!s->matrix || (quick && !s->quick))
            continue;
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            /* The quick set keeps fp16 on one shape only. */
            if (quick && dtype == DUET_DTYPE_FP16 && si != SI_RAGGED)
                continue;
            for (int coll = DUET_COLL_ALL_GATHER; coll < DUET_COLL_COUNT; coll++) {
                int roots = coll == DUET_COLL_BROADCAST ? t->world : 1;
                for (int root = 0; root < roots; root++) {
                    duet_workload_t wl = make_wl(s, coll, dtype, t->world, root, 1);
                    const uint64_t seed = next_seed();
                    result_t res[2];
                    for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
                        duet_config_t cfg = make_cfg(hw, mode, s);
                        tcase_t tc;
                        tcase_init(&tc, &wl, &cfg, seed);
                        char rs[24] = "";
                        if (coll == DUET_COLL_BROADCAST)
                            snprintf(rs, sizeof(rs), " root %d", root);
                        snprintf(tc.label, sizeof(tc.label),
                                 "W=%d %s %s %s%s shape %s (%lldx%lldx%lld, comm %lldx%lld)", t->world,
                                 duet_mode_name(mode), duet_dtype_name(dtype), duet_collective_name(coll), rs, s->name,
                                 (long long)wl.m, (long long)wl.n, (long long)wl.k, (long long)wl.mc, (long long)wl.nc);
                        run_check(t, ctx, bf, &tc, &res[mode]);
                    }
                    duet_test_check(t, same_bytes(&res[0], &res[1]), "W=%d fused == concurrent bytes: %s %s %s root %d",
                                    t->world, duet_dtype_name(dtype), duet_collective_name(coll), s->name, root);
                    result_free(&res[0]);
                    result_free(&res[1]);
                }
            }
        }
    }
}

/* Every GEMM tile, both modes, on the ragged shape (with all_reduce), the M <= 16 shape, the
 * shape whose C rows are not 16-byte multiples and the one whose K is even but not a multiple of 8. */
static void test_tiles(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = test_hw();
    const int shapes[4] = {SI_RAGGED, SI_SMALL_M, SI_ODD_N, SI_EVEN_K};
    for (int i = 0; i < 4; i++) {
        const shape_t *s = &SHAPES[shapes[i]];
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            for (int ti = 0; ti < duet_tile_count(); ti++) {
                duet_gemm_tile_t tile = duet_tile_get(ti);
                duet_workload_t wl = make_wl(s, DUET_COLL_ALL_REDUCE, dtype, t->world, 0, 1);
                const uint64_t seed = next_seed();
                result_t res[2];
                for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
                    duet_config_t cfg = make_cfg(hw, mode, s);
                    cfg.tile = tile;
                    tcase_t tc;
                    tcase_init(&tc, &wl, &cfg, seed);
                    snprintf(tc.label, sizeof(tc.label), "W=%d tile %dx%dx%d %s %s shape %s", t->world, tile.bm,
                             tile.bn, tile.bk, duet_mode_name(mode), duet_dtype_name(dtype), s->name);
                    run_check(t, ctx, bf, &tc, &res[mode]);
                }
                duet_test_check(t, same_bytes(&res[0], &res[1]), "W=%d tile %dx%d fused == concurrent bytes (%s %s)",
                                t->world, tile.bm, tile.bn, duet_dtype_name(dtype), s->name);
                result_free(&res[0]);
                result_free(&res[1]);
            }
        }
    }
}

/*
 * The K split, in fp16 and bf16: parts of a C tile summed by the last one to finish, or (wgmma
 * tile, split_k up to its SK_OWN_MAX) by the last part, from its own block in shared memory.
 * Shapes: ragged (K = 200, 4 steps of 64, last one partial), small-m (M = 8: rows beyond M are
 * neither stored nor copied), odd-k (K % 8 != 0: the mma.sync tile), aligned, large (every CTA
 * busy, parts of one C tile side by side; 16 parts: beyond SK_OWN_MAX of 256x256 and 256x128, so
 * the sum of every block from global memory), big (beyond 2048 x 2048, 3 parts of 3, 3 and 2
 * steps), odd-n (N even, N % 8 != 0: the sum stores C in 32-bit pairs) and even-k (the mma.sync
 * tile's 4-byte copies); tiles: 256x128, 256x256 (two passes, two counters per C tile) and 64x64. Each split
 * runs twice per mode: fused and concurrent schedule the parts differently, and all four results
 * must have the same bytes.
 */
static void test_split_k(duet_test *t, duet_ctx_h ctx, bufs_t *bf, int quick)
{
    const duet_hw_t *hw = test_hw();
    static const struct {
        int si, split_k, quick;
    } cases[] = {{SI_RAGGED, 2, 1},  {SI_RAGGED, 4, 0}, {SI_SMALL_M, 2, 1}, {SI_ODD_K, 2, 1}, {SI_ALIGNED, 2, 0},
                 {SI_ALIGNED, 4, 0}, {SI_LARGE, 2, 0},  {SI_LARGE, 3, 0},   {SI_LARGE, 8, 0}, {SI_LARGE, 16, 0},
                 {SI_BIG, 3, 0},     {SI_ODD_N, 2, 1},  {SI_EVEN_K, 2, 1}};
    static const duet_gemm_tile_t tiles[] = {{256, 128, 64}, {256, 256, 64}, {64, 64, 64}};
    for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        if (quick && !cases[ci].quick)
            continue;
        const shape_t *s = &SHAPES[cases[ci].si];
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            for (size_t ti = 0; ti < sizeof(tiles) / sizeof(tiles[0]); ti++) {
                if (quick && ti != 0)
                    continue;
                /* The collective runs beside the split GEMM; on the large shapes reduce_scatter,
                 * whose host reference needs one W-th of all_reduce's. */
                const int coll = s->m * s->n > (1 << 20) ? DUET_COLL_REDUCE_SCATTER : DUET_COLL_ALL_REDUCE;
                duet_workload_t wl = make_wl(s, coll, dtype, t->world, 0, 1);
                const uint64_t seed = next_seed();
                result_t res[4];
                for (int run = 0; run < 4; run++) {
                    const int mode = run / 2 == 0 ? DUET_MODE_FUSED : DUET_MODE_CONCURRENT;
                    duet_config_t cfg = make_cfg(hw, mode, s);
                    cfg.tile = tiles[ti];
                    cfg.split_k = cases[ci].split_k;
                    tcase_t tc;
                    tcase_init(&tc, &wl, &cfg, seed);
                    snprintf(tc.label, sizeof(tc.label), "W=%d split_k %d tile %dx%d %s %s shape %s run %d", t->world,
                             cfg.split_k, cfg.tile.bm, cfg.tile.bn, duet_mode_name(mode), duet_dtype_name(dtype),
                             s->name, run % 2);
                    run_check(t, ctx, bf, &tc, &res[run]);
                }
                int same = same_bytes(&res[0], &res[1]) && same_bytes(&res[0], &res[2]) && same_bytes(&res[0], &res[3]);
                duet_test_check(t, same, "W=%d split_k %d tile %dx%d %s shape %s: the same bytes in all four runs",
                                t->world, cases[ci].split_k, tiles[ti].bm, tiles[ti].bn, duet_dtype_name(dtype),
                                s->name);
                for (int run = 0; run < 4; run++)
                    result_free(&res[run]);
            }
        }
    }
    /* A split that leaves a part without K steps is refused before anything runs. */
    duet_workload_t wl = make_wl(&SHAPES[SI_RAGGED], DUET_COLL_ALL_REDUCE, DUET_DTYPE_BF16, t->world, 0, 1);
    duet_config_t cfg = make_cfg(hw, DUET_MODE_FUSED, &SHAPES[SI_RAGGED]);
    cfg.split_k = 3; /* K = 200: 4 steps, 2 per part, the third part has none */
    duet_op_t op;
    memset(&op, 0, sizeof(op));
    op.wl = wl;
    op.cfg = cfg;
    op.a = bf->a;
    op.b = bf->b;
    op.c = bf->c;
    op.src = bf->src;
    op.dst = bf->dst;
    duet_status_t st = duet_run(ctx, &op, bf->stream);
    duet_test_check(t, st == DUET_ERR_INVALID_ARG && strstr(duet_ctx_last_error(ctx), "split_k 3") != NULL,
                    "split_k 3 on K = 200 is refused: %s (%s)", duet_status_name(st), duet_ctx_last_error(ctx));
}

/*
 * Stream-K (stream_k 1): on the budgets of 33, 66, 99 and 132 CTAs (those the device has), the
 * plan runs the full waves whole and splits the last wave's C tiles in K parts, summed through
 * the workspace. Shapes sk-200 and sk-266 leave a tail of 2 C tiles of 128x256 at each budget
 * (the plan's rule: tests/sim/test_stream_k.c), and the other tiles other tails; ragged M, N and
 * K (the last K step partial). Each (budget, tile, dtype) runs fused (gemm_wgs = the budget,
 * beside a collective) and concurrent (the GEMM grid = the budget), which plan the same GEMM
 * queue and schedule it differently: C is checked against the reference per element in both,
 * and the two must have the same bytes (the parts are summed in part order).
 */
static void test_stream_k(duet_test *t, duet_ctx_h ctx, bufs_t *bf, int quick)
{
    const duet_hw_t *hw = test_hw();
    static const int budgets[] = {33, 66, 99, 132};
    static const duet_gemm_tile_t tiles[] = {{128, 256, 64}, {256, 128, 64}, {256, 256, 64}, {64, 64, 64}};
    int tails = 0;
    for (size_t bi = 0; bi < sizeof(budgets) / sizeof(budgets[0]); bi++) {
        const int b = budgets[bi];
        if (b > hw->n_sms)
            continue;
        const shape_t *s = &SHAPES[b == 132 ? SI_SK266 : SI_SK200];
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            for (size_t ti = 0; ti < sizeof(tiles) / sizeof(tiles[0]); ti++) {
                if (quick && ti != 0)
                    continue;
                duet_workload_t wl = make_wl(s, DUET_COLL_ALL_REDUCE, dtype, t->world, 0, 1);
                const uint64_t seed = next_seed();
                result_t res[2];
                int split = 0;
                for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
                    duet_config_t cfg = duet_config_default(hw, mode);
                    cfg.tile = tiles[ti];
                    cfg.stream_k = 1;
                    if (mode == DUET_MODE_FUSED)
                        (void)duet_config_complete_split(&cfg, hw, hw->n_sms, b, -1);
                    else
                        (void)duet_config_complete_split(&cfg, hw, -1, b, hw->n_sms - b > 0 ? hw->n_sms - b : 1);
                    duet_plan_t plan;
                    if (duet_plan_build(&wl, &cfg, t->rank, &plan) == DUET_OK)
                        split = plan.gemm.split_from > 0;
                    tcase_t tc;
                    tcase_init(&tc, &wl, &cfg, seed);
                    snprintf(tc.label, sizeof(tc.label), "W=%d stream-K budget %d tile %dx%d %s %s shape %s (%s)",
                             t->world, b, cfg.tile.bm, cfg.tile.bn, duet_mode_name(mode), duet_dtype_name(dtype),
                             s->name, split ? "tail split" : "no tail split");
                    run_check(t, ctx, bf, &tc, &res[mode]);
                }
                tails += split;
                duet_test_check(t, same_bytes(&res[0], &res[1]),
                                "W=%d stream-K budget %d tile %dx%d %s shape %s: fused == concurrent bytes", t->world,
                                b, tiles[ti].bm, tiles[ti].bn, duet_dtype_name(dtype), s->name);
                result_free(&res[0]);
                result_free(&res[1]);
            }
        }
    }
    /* 128x256 splits its 2-tile tail at every budget (both dtypes). */
    duet_test_check(t, tails >= 2 * (hw->n_sms >= 132 ? 4 : 1), "W=%d stream-K: %d runs with a tail split", t->world,
                    tails);
}

/*
 * Stream-K at the smallest size that splits a tail: fp16, tile 128x256, 4 GEMM CTAs (fused: 4 of 8
 * CTAs, the others on the all_reduce; concurrent: 4 GEMM CTAs beside 4 comm CTAs), both modes
 * bit-identical. Its own section so that compute-sanitizer's racecheck can give a verdict on the
 * stream-K fix-up (partials through the workspace, the last part's flag wait) within minutes.
 */
static void test_stream_k_small(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = test_hw();
    const shape_t *s = &SHAPES[SI_SK10];
    duet_workload_t wl = make_wl(s, DUET_COLL_ALL_REDUCE, DUET_DTYPE_FP16, t->world, 0, 1);
    const uint64_t seed = next_seed();
    result_t res[2];
    int splits = 0;
    for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
        duet_config_t cfg = duet_config_default(hw, mode);
        cfg.tile = (duet_gemm_tile_t){128, 256, 64};
        cfg.stream_k = 1;
        (void)duet_config_complete_split(&cfg, hw, mode == DUET_MODE_FUSED ? 8 : -1, 4, 4);
        duet_plan_t plan;
        if (duet_plan_build(&wl, &cfg, t->rank, &plan) == DUET_OK)
            splits += plan.gemm.split_from > 0;
        tcase_t tc;
        tcase_init(&tc, &wl, &cfg, seed);
        snprintf(tc.label, sizeof(tc.label), "W=%d stream-K small: 4 GEMM CTAs, %s fp16 shape %s", t->world,
                 duet_mode_name(mode), s->name);
        run_check(t, ctx, bf, &tc, &res[mode]);
    }
    duet_test_check(t, splits == 2, "W=%d stream-K small: %d of 2 runs with a tail split", t->world, splits);
    duet_test_check(t, same_bytes(&res[0], &res[1]), "W=%d stream-K small: fused == concurrent bytes", t->world);
    result_free(&res[0]);
    result_free(&res[1]);
}

/*
 * Operand staging of a K that is a multiple of 8 (model/plan.c, duet__plan_stage_k): shape row16
 * is staged into rows of 320 elements with the staging kernel's 16-byte loads, both dtypes, fused
 * and concurrent (the pass runs before either's GEMM kernel), bit-identical. (K % 8 != 0 is
 * staged element by element: shapes odd-k and even-k.)
 */
static void test_staging(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = test_hw();
    const shape_t *s = &SHAPES[SI_ROW16];
    for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
        duet_workload_t wl = make_wl(s, DUET_COLL_ALL_GATHER, dtype, t->world, 0, 1);
        const uint64_t seed = next_seed();
        result_t res[2];
        for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
            duet_config_t cfg = make_cfg(hw, mode, s);
            duet_plan_t plan;
            const int built = duet_plan_build(&wl, &cfg, t->rank, &plan) == DUET_OK;
            duet_test_check(t, built && plan.stage_k == 320, "W=%d staging %s %s: stage_k %lld (expected 320)",
                            t->world, duet_mode_name(mode), duet_dtype_name(dtype),
                            built ? (long long)plan.stage_k : -1LL);
            tcase_t tc;
            tcase_init(&tc, &wl, &cfg, seed);
            snprintf(tc.label, sizeof(tc.label), "W=%d staged rows %s %s shape %s", t->world, duet_mode_name(mode),
                     duet_dtype_name(dtype), s->name);
            run_check(t, ctx, bf, &tc, &res[mode]);
        }
        duet_test_check(t, same_bytes(&res[0], &res[1]), "W=%d staging %s: fused == concurrent bytes", t->world,
                        duet_dtype_name(dtype));
        result_free(&res[0]);
        result_free(&res[1]);
    }
}

/* GEMM-only and collective-only operations, and the shape beyond 2048 x 2048 (sampled). */
static void test_partial_ops(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = test_hw();
    for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
        duet_config_t cfg = make_cfg(hw, mode, &SHAPES[SI_RAGGED]);
        duet_workload_t wl = make_wl(&SHAPES[SI_RAGGED], DUET_COLL_NONE, DUET_DTYPE_BF16, t->world, 0, 1);
        tcase_t tc;
        tcase_init(&tc, &wl, &cfg, next_seed());
        snprintf(tc.label, sizeof(tc.label), "W=%d GEMM only, %s", t->world, duet_mode_name(mode));
        run_check(t, ctx, bf, &tc, NULL);
        wl = make_wl(&SHAPES[SI_RAGGED], DUET_COLL_ALL_GATHER, DUET_DTYPE_BF16, t->world, 0, 0);
        tcase_init(&tc, &wl, &cfg, next_seed());
        snprintf(tc.label, sizeof(tc.label), "W=%d all_gather only, %s", t->world, duet_mode_name(mode));
        run_check(t, ctx, bf, &tc, NULL);
    }
    const shape_t *s = &SHAPES[SI_BIG];
    for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
        const uint64_t seed = next_seed();
        result_t res[2];
        for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
            duet_config_t cfg = make_cfg(hw, mode, s);
            duet_workload_t wl = make_wl(s, DUET_COLL_REDUCE_SCATTER, dtype, t->world, 0, 1);
            tcase_t tc;
            tcase_init(&tc, &wl, &cfg, seed);
            snprintf(tc.label, sizeof(tc.label), "W=%d %s %s reduce_scatter shape %s (%lldx%lldx%lld, C sampled)",
                     t->world, duet_mode_name(mode), duet_dtype_name(dtype), s->name, (long long)s->m, (long long)s->n,
                     (long long)s->k);
            run_check(t, ctx, bf, &tc, &res[mode]);
        }
        duet_test_check(t, same_bytes(&res[0], &res[1]), "W=%d fused == concurrent bytes: %s %s", t->world,
                        duet_dtype_name(dtype), s->name);
        result_free(&res[0]);
        result_free(&res[1]);
    }
}

/*
 * The vendor mode: the vendor library's GEMM on the caller's stream beside duet's comm kernel on
 * a second stream (duet_vendor_run), checked like the rest. The baseline context is made over
 * MPI_COMM_SELF: vendor mode uses its BLASLt handle and streams only, and NCCL refuses a
 * communicator whose ranks share a GPU (as W = 2..4 on one GPU do).
 */
static void test_vendor(duet_test *t, duet_ctx_h ctx, bufs_t *bf, int quick)
{
#if DUET_TEST_VENDOR
    int dev = 0;
    CHECK_HIP(hipGetDevice(&dev));
    duet_status_t st = g_vendor ? DUET_OK : duet_baseline_create(MPI_COMM_SELF, dev, NULL, &g_vendor);
    if (st != DUET_OK)
        duet_test_note(t, "duet_baseline_create: %s: %s", duet_status_name(st), duet_last_error());
    duet_test_check(t, st == DUET_OK, "W=%d vendor context (%s)", t->world,
                    g_vendor ? duet_baseline_describe(g_vendor) : "none");
    int all = 0, ok = st == DUET_OK;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all)
        return;
    const duet_hw_t *hw = test_hw();
    const int shapes[4] = {SI_RAGGED, SI_ODD_N, SI_SMALL_M, SI_LARGE};
    for (int i = 0; i < 4; i++) {
        const shape_t *s = &SHAPES[shapes[i]];
        if (quick && !s->quick)
            continue;
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            for (int coll = DUET_COLL_NONE; coll < DUET_COLL_COUNT; coll++) {
                if (quick && coll != DUET_COLL_NONE && coll != DUET_COLL_ALL_REDUCE && coll != DUET_COLL_ALL_TO_ALL)
                    continue;
                const int root = coll == DUET_COLL_BROADCAST ? t->world - 1 : 0;
                duet_workload_t wl = make_wl(s, coll, dtype, t->world, root, 1);
                duet_config_t cfg = duet_config_default(hw, DUET_MODE_VENDOR);
                cfg.comm_wgs = 4;
                cfg.gemm_wgs = hw->n_sms - cfg.comm_wgs;
                cfg.num_wgs = hw->n_sms;
                tcase_t tc;
                tcase_init(&tc, &wl, &cfg, next_seed());
                tc.vendor = 1;
                snprintf(tc.label, sizeof(tc.label), "W=%d vendor %s %s shape %s (%lldx%lldx%lld, comm %lldx%lld)",
                         t->world, duet_dtype_name(dtype),
                         coll == DUET_COLL_NONE ? "GEMM only" : duet_collective_name(coll), s->name, (long long)wl.m,
                         (long long)wl.n, (long long)wl.k, (long long)wl.mc, (long long)wl.nc);
                run_check(t, ctx, bf, &tc, NULL);
            }
        }
    }
    if (!quick) { /* beyond 2048 x 2048, on the sample */
        duet_workload_t wl = make_wl(&SHAPES[SI_BIG], DUET_COLL_NONE, DUET_DTYPE_BF16, t->world, 0, 1);
        duet_config_t cfg = duet_config_default(hw, DUET_MODE_VENDOR);
        tcase_t tc;
        tcase_init(&tc, &wl, &cfg, next_seed());
        tc.vendor = 1;
        snprintf(tc.label, sizeof(tc.label), "W=%d vendor bf16 GEMM only shape big (C sampled)", t->world);
        run_check(t, ctx, bf, &tc, NULL);
    }
#else
    (void)ctx;
    (void)bf;
    (void)quick;
    if (t->rank == 0)
        printf("SKIP W=%d vendor mode: the vendor libraries are not linked into this build (DUET_TEST_VENDOR=0)\n",
               t->world);
#endif
}

/* Bad arguments are refused before any launch: C and dst (all canary) stay untouched. */
static void test_validation(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = duet_ctx_hw(ctx);
    const shape_t *s = &SHAPES[SI_RAGGED];
    struct {
        const char *what;
        duet_status_t want;
    } cases[] = {
        {"src outside the heap", DUET_ERR_INVALID_ARG},
        {"dst runs past the heap end", DUET_ERR_INVALID_ARG},
        {"NULL b", DUET_ERR_INVALID_ARG},
        {"num_wgs above the SM count", DUET_ERR_INFEASIBLE},
        {"reduce_scatter mc not divisible by W", DUET_ERR_INVALID_ARG},
        {"world mismatch", DUET_ERR_INVALID_ARG},
        {"named wrapper of another collective", DUET_ERR_INVALID_ARG},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_op_t op;
        memset(&op, 0, sizeof(op));
        op.wl = make_wl(s, DUET_COLL_ALL_GATHER, DUET_DTYPE_BF16, t->world, 0, 1);
        op.cfg = duet_config_default(hw, DUET_MODE_FUSED);
        op.a = bf->a;
        op.b = bf->b;
        op.c = bf->c;
        op.src = bf->src;
        op.dst = bf->dst;
        int named = 0;
        switch (i) {
        case 0:
            op.src = bf->src_bad;
            break;
        case 1:
            op.dst = (char *)duet_ctx_heap_base(ctx) + duet_ctx_heap_size(ctx) - 64;
            break;
        case 2:
            op.b = NULL;
            break;
        case 3:
            op.cfg.num_wgs = hw->n_sms + 1;
            op.cfg.comm_wgs = op.cfg.num_wgs - op.cfg.gemm_wgs;
            break;
        case 4:
            op.wl.coll = DUET_COLL_REDUCE_SCATTER;
            op.wl.mc = 2 * t->world + 1;
            break;
        case 5:
            op.wl.world = t->world + 1;
            break;
        case 6:
            named = 1;
            break;
        }
        if (i == 4 && t->world == 1) { /* every mc divides by 1: use a bad root instead */
            op.wl.coll = DUET_COLL_BROADCAST;
            op.wl.root = 1;
        }
        /* Canary over the whole of both allocations: nothing may be written anywhere. */
        duet_test_dev_guard_fill(bf->c_alloc, 0, 0, GUARD_FRONT + bf->c_cap, bf->stream);
        duet_test_dev_guard_fill(bf->dst_alloc, 0, 0, GUARD_FRONT + bf->dst_cap, bf->stream);
        CHECK_HIP(hipStreamSynchronize(bf->stream));
        duet_status_t st = named ? duet_gemm_all_reduce(ctx, &op, bf->stream) : duet_run(ctx, &op, bf->stream);
        CHECK_HIP(hipStreamSynchronize(bf->stream));
        uint16_t got = 0;
        int64_t wc = duet_test_dev_guard_check(bf->c_alloc, 0, 0, GUARD_FRONT + bf->c_cap, bf->stream, &got);
        int64_t wd = duet_test_dev_guard_check(bf->dst_alloc, 0, 0, GUARD_FRONT + bf->dst_cap, bf->stream, &got);
        int ok = st == cases[i].want && wc < 0 && wd < 0 && duet_ctx_last_error(ctx)[0];
        if (!ok)
            duet_test_note(t, "validation '%s': got %s (%s); C written at %lld, dst at %lld", cases[i].what,
                           duet_status_name(st), duet_ctx_last_error(ctx), (long long)wc, (long long)wd);
        duet_test_check(t, ok, "W=%d refused before launch, nothing written: %s -> %s", t->world, cases[i].what,
                        duet_status_name(cases[i].want));
    }
}

/* Collective allocation: out-of-heap fails cleanly, release is in stack order. */
static void test_heap(duet_test *t, duet_ctx_h ctx)
{
    size_t used0 = duet_ctx_heap_used(ctx), free0 = duet_ctx_heap_size(ctx) - used0;
    void *x = NULL, *y = NULL, *z = NULL;
    duet_status_t st = duet_ctx_alloc(ctx, free0 + 1, &z);
    duet_test_check(t, st == DUET_ERR_OUT_OF_HEAP && z == NULL && duet_ctx_heap_used(ctx) == used0,
                    "W=%d alloc beyond the heap -> DUET_ERR_OUT_OF_HEAP, heap unchanged", t->world);
    int ok = duet_ctx_alloc(ctx, 1000, &x) == DUET_OK && duet_ctx_alloc(ctx, 3000, &y) == DUET_OK &&
             (uintptr_t)x % DUET_HEAP_ALIGN == 0 && (uintptr_t)y % DUET_HEAP_ALIGN == 0 &&
             (char *)y >= (char *)x + 1000;
    duet_test_check(t, ok, "W=%d two aligned allocations", t->world);
    /* Out of order: x is released only once y is. */
    ok = duet_ctx_free(ctx, x) == DUET_OK && duet_ctx_heap_used(ctx) > used0;
    ok = ok && duet_ctx_free(ctx, y) == DUET_OK && duet_ctx_heap_used(ctx) == used0;
    ok = ok && duet_ctx_free(ctx, x) == DUET_ERR_INVALID_ARG;
    duet_test_check(t, ok, "W=%d release in stack order reclaims everything", t->world);
    st = duet_ctx_alloc(ctx, free0, &z);
    ok = st == DUET_OK && duet_ctx_free(ctx, z) == DUET_OK && duet_ctx_heap_used(ctx) == used0;
    duet_test_check(t, ok, "W=%d the whole free heap can be allocated again", t->world);
}

/*
 * For every collective, every rank in turn skips one operation (a GEMM with the collective, on
 * the ragged shape, the modes alternating, broadcast from root 0 so that both the root and a
 * non-root skip). Every other rank must get DUET_ERR_TIMEOUT within the bound (plus slack for the
 * launch and the polling) with a message naming the collective and the skipping rank as the one
 * it waited for, and refuse the next operation with DUET_ERR_BUSY; after duet_ctx_resync() on
 * every rank, an operation of that collective must be correct again. The bound is short
 * (`short_ms`), so that the 5 W cases take seconds.
 */
/*
 * One timeout case: rank `skipper` does not enter a `mode` operation on `coll`; every other rank
 * times out naming it, is busy after, and every rank resyncs.
 */
static void timeout_case(duet_test *t, duet_ctx_h ctx, bufs_t *bf, int64_t short_ms, int coll, int mode, int skipper)
{
    const duet_hw_t *hw = test_hw();
    const shape_t *s = &SHAPES[SI_RAGGED];
    int ok = 1;
    MPI_Barrier(MPI_COMM_WORLD); /* every rank starts the case together */
    if (t->rank != skipper) {
        duet_op_t op;
        memset(&op, 0, sizeof(op));
        op.wl = make_wl(s, coll, DUET_DTYPE_BF16, t->world, 0, 1);
        op.cfg = make_cfg(hw, mode, s);
        op.a = bf->a;
        op.b = bf->b;
        op.c = bf->c;
        op.src = bf->src;
        op.dst = bf->dst;
        op.timeout_ms = short_ms;
        char want_peer[64], want_coll[48];
        snprintf(want_peer, sizeof(want_peer), "waiting for rank %d to enter the operation", skipper);
        snprintf(want_coll, sizeof(want_coll), "(%s)", duet_collective_name(coll));
        double t0 = now_s();
        duet_status_t st = duet_run(ctx, &op, bf->stream);
        if (st == DUET_OK)
            st = duet_ctx_sync(ctx, bf->stream);
        const double dt = now_s() - t0;
        const char *msg = duet_ctx_last_error(ctx);
        ok = st == DUET_ERR_TIMEOUT && strstr(msg, want_peer) != NULL && strstr(msg, want_coll) != NULL &&
             dt < (double)short_ms * 1e-3 + 2.0;
        if (!ok || t->verbose)
            duet_test_note(t, "%s %s, rank %d skips: %s after %.2f s: %s", duet_collective_name(coll),
                           duet_mode_name(mode), skipper, duet_status_name(st), dt, msg);
        st = duet_run(ctx, &op, bf->stream);
        if (st != DUET_ERR_BUSY) {
            duet_test_note(t, "after the timeout: %s, not DUET_ERR_BUSY", duet_status_name(st));
            ok = 0;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the skipper waits here instead of entering */
    duet_test_check(t, ok,
                    "W=%d %s %s: rank %d skips the operation; every other rank times out naming it, then is busy",
                    t->world, duet_collective_name(coll), duet_mode_name(mode), skipper);
    duet_status_t st = duet_ctx_resync(ctx);
    if (st != DUET_OK)
        duet_test_note(t, "duet_ctx_resync: %s: %s", duet_status_name(st), duet_ctx_last_error(ctx));
    duet_test_check(t, st == DUET_OK, "W=%d duet_ctx_resync after rank %d skipped %s", t->world, skipper,
                    duet_collective_name(coll));
}

/*
 * Copy mode: every collective it runs (all_gather, all_to_all, broadcast from every root) x dtype x
 * matrix shape, on one copy stream and on two, each bit for bit the bytes of concurrent mode on
 * the same inputs (the same GEMM kernel; the collective only moves bytes). Then, at W >= 2, a
 * rank skips a copy-mode all_gather: the others' entry gate times out naming it.
 */
static void test_copy(duet_test *t, duet_ctx_h ctx, bufs_t *bf, int quick, int64_t short_ms)
{
    const duet_hw_t *hw = test_hw();
    static const int colls[3] = {DUET_COLL_ALL_GATHER, DUET_COLL_ALL_TO_ALL, DUET_COLL_BROADCAST};
    for (int si = 0; si < NSHAPES; si++) {
        const shape_t *s = &SHAPES[si];
        if (!s->matrix || (quick && !s->quick))
            continue;
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++)
            for (int ci = 0; ci < 3; ci++) {
                const int coll = colls[ci], roots = coll == DUET_COLL_BROADCAST ? t->world : 1;
                for (int root = 0; root < roots; root++) {
                    duet_workload_t wl = make_wl(s, coll, dtype, t->world, root, 1);
                    const uint64_t seed = next_seed();
                    result_t res[3];
                    for (int v = 0; v < 3; v++) {
                        duet_config_t cfg = make_cfg(hw, v == 0 ? DUET_MODE_CONCURRENT : DUET_MODE_COPY, s);
                        if (v > 0)
                            cfg.comm_wgs = v; /* copy streams */
                        tcase_t tc;
                        tcase_init(&tc, &wl, &cfg, seed);
                        snprintf(tc.label, sizeof(tc.label),
                                 "W=%d %s%s %s %s root %d shape %s (%lldx%lldx%lld, comm %lldx%lld)", t->world,
                                 duet_mode_name(cfg.mode), v == 2 ? " (2 streams)" : "", duet_dtype_name(dtype),
                                 duet_collective_name(coll), root, s->name, (long long)wl.m, (long long)wl.n,
                                 (long long)wl.k, (long long)wl.mc, (long long)wl.nc);
                        run_check(t, ctx, bf, &tc, &res[v]);
                    }
                    duet_test_check(t, same_bytes(&res[0], &res[1]) && same_bytes(&res[0], &res[2]),
                                    "W=%d copy == concurrent bytes: %s %s %s root %d", t->world, duet_dtype_name(dtype),
                                    duet_collective_name(coll), s->name, root);
                    for (int v = 0; v < 3; v++)
                        result_free(&res[v]);
                }
            }
    }
    if (t->world >= 2 && short_ms > 0)
        timeout_case(t, ctx, bf, short_ms, DUET_COLL_ALL_GATHER, DUET_MODE_COPY, t->world - 1);
}

static void test_timeouts(duet_test *t, duet_ctx_h ctx, bufs_t *bf, int64_t short_ms)
{
    if (t->world < 2)
        return;
    const duet_hw_t *hw = test_hw();
    const shape_t *s = &SHAPES[SI_RAGGED];
    for (int coll = DUET_COLL_ALL_GATHER; coll < DUET_COLL_COUNT; coll++) {
        for (int skipper = 0; skipper < t->world; skipper++) {
            const int mode = (coll + skipper) % 2 == 0 ? DUET_MODE_FUSED : DUET_MODE_CONCURRENT;
            timeout_case(t, ctx, bf, short_ms, coll, mode, skipper);
        }
        duet_workload_t wl = make_wl(s, coll, DUET_DTYPE_BF16, t->world, t->world - 1, 1);
        duet_config_t cfg = make_cfg(hw, DUET_MODE_FUSED, s);
        tcase_t tc;
        tcase_init(&tc, &wl, &cfg, next_seed());
        snprintf(tc.label, sizeof(tc.label), "W=%d %s correct after the timeouts and resyncs", t->world,
                 duet_collective_name(coll));
        run_check(t, ctx, bf, &tc, NULL);
    }
}

/*
 * Forty operations back to back on one stream with no host synchronisation between them,
 * cycling through the collectives and both modes: the epochs, the per-op control block and the
 * ordering of consecutive operations must hold without the host. The last one is checked.
 */
static void test_back_to_back(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = test_hw();
    const shape_t *s = &SHAPES[SI_ALIGNED];
    const int n = 40;
    duet_status_t st = DUET_OK;
    /* The first n - 1 run on whatever the buffers hold; run_one() then runs and checks the last. */
    for (int i = 0; i < n - 1 && st == DUET_OK; i++) {
        const int coll = DUET_COLL_ALL_GATHER + i % 5, mode = (i / 5) % 2;
        duet_op_t op;
        memset(&op, 0, sizeof(op));
        op.wl = make_wl(s, coll, DUET_DTYPE_BF16, t->world, i % t->world, 1);
        op.cfg = make_cfg(hw, mode, s);
        op.a = bf->a;
        op.b = bf->b;
        op.c = bf->c;
        op.src = bf->src;
        op.dst = bf->dst;
        st = duet_run(ctx, &op, bf->stream);
    }
    if (st == DUET_OK)
        st = duet_ctx_sync(ctx, bf->stream);
    if (st != DUET_OK)
        duet_test_note(t, "back to back: %s: %s", duet_status_name(st), duet_ctx_last_error(ctx));
    duet_test_check(t, st == DUET_OK, "W=%d %d operations back to back without host synchronisation", t->world, n - 1);
    duet_workload_t wl = make_wl(s, DUET_COLL_ALL_REDUCE, DUET_DTYPE_BF16, t->world, 0, 1);
    duet_config_t cfg = make_cfg(hw, DUET_MODE_FUSED, s);
    tcase_t tc;
    tcase_init(&tc, &wl, &cfg, next_seed());
    snprintf(tc.label, sizeof(tc.label), "W=%d all_reduce correct after the back-to-back run", t->world);
    run_check(t, ctx, bf, &tc, NULL);
}

/*
 * --plant: the checks under test. Each case is a correct operation after which the last rank
 * plants one fault; the union over the ranks of the checks that failed must be exactly the one
 * that guards against it (a check that misses it, or one that fires on a correct part, fails).
 */
static void run_plants(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = test_hw();
    static const struct {
        int plant, si, coll, want;
    } cases[] = {
        {PLANT_NONE, SI_RAGGED, DUET_COLL_ALL_GATHER, 0},
        {PLANT_C_ELEM, SI_RAGGED, DUET_COLL_ALL_GATHER, F_GEMM},
        {PLANT_C_ELEM, SI_LARGE, DUET_COLL_ALL_REDUCE, F_GEMM},
        {PLANT_C_ELEM, SI_BIG, DUET_COLL_NONE, F_GEMM},
        {PLANT_C_NAN, SI_ODD_N, DUET_COLL_ALL_GATHER, F_GEMM},
        {PLANT_C_UNSAMPLED_NAN, SI_BIG, DUET_COLL_NONE, F_GEMM},
        {PLANT_C_PAST, SI_RAGGED, DUET_COLL_ALL_GATHER, F_C_GUARD},
        {PLANT_C_FAR, SI_ODD_N, DUET_COLL_ALL_GATHER, F_C_GUARD},
        {PLANT_C_BEFORE, SI_SMALL_M, DUET_COLL_ALL_GATHER, F_C_GUARD},
        {PLANT_DST_ELEM, SI_RAGGED, DUET_COLL_ALL_GATHER, F_COLL},
        {PLANT_DST_ELEM, SI_RAGGED, DUET_COLL_ALL_TO_ALL, F_COLL},
        {PLANT_DST_PAST, SI_RAGGED, DUET_COLL_REDUCE_SCATTER, F_DST_GUARD},
        {PLANT_DST_BEFORE, SI_ODD_K, DUET_COLL_BROADCAST, F_DST_GUARD},
        {PLANT_SRC, SI_RAGGED, DUET_COLL_ALL_REDUCE, F_SOURCES},
        {PLANT_SRC_TAIL, SI_SMALL_M, DUET_COLL_ALL_GATHER, F_SOURCES},
        {PLANT_A, SI_ODD_K, DUET_COLL_ALL_GATHER, F_SOURCES},
        {PLANT_B_TAIL, SI_RAGGED, DUET_COLL_NONE, F_SOURCES},
        {PLANT_NONE, SI_BIG, DUET_COLL_NONE, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const shape_t *s = &SHAPES[cases[i].si];
        duet_workload_t wl = make_wl(s, cases[i].coll, DUET_DTYPE_BF16, t->world, 0, 1);
        duet_config_t cfg = make_cfg(hw, (int)(i % 2), s);
        tcase_t tc;
        tcase_init(&tc, &wl, &cfg, next_seed());
        tc.plant = cases[i].plant;
        snprintf(tc.label, sizeof(tc.label), "W=%d planted %s (shape %s, %s)", t->world, PLANT_NAMES[cases[i].plant],
                 s->name, cases[i].coll == DUET_COLL_NONE ? "GEMM only" : duet_collective_name(cases[i].coll));
        result_t res;
        int fail = run_one(t, ctx, bf, &tc, &res), all = 0;
        result_free(&res);
        MPI_Allreduce(&fail, &all, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
        duet_test_check(t, all == cases[i].want, "%s: %s (failed checks 0x%x, want 0x%x)", tc.label,
                        cases[i].want ? "caught by its check alone" : "nothing caught", all, cases[i].want);
    }
}

/* Planted bugs, run only with --canary, to show that the sanitizer passes are live. The shared
 * array is volatile and its values depend on the input, so the compiler cannot fold the race. */
__global__ void canary_kernel(uint32_t *p)
{
    __shared__ volatile uint32_t s[64];
    s[threadIdx.x] = p[threadIdx.x % 8] + threadIdx.x;
    /* racecheck: each warp reads the slots the other warp wrote, with no barrier between. */
    p[8 + threadIdx.x % 8] = s[(threadIdx.x + 32) % 64];
    if (threadIdx.x == 0)
        p[64] = 1; /* memcheck: one word past a 256-byte allocation */
}

static int run_canary(void)
{
    uint32_t *p = NULL;
    CHECK_HIP(hipMalloc((void **)&p, 256));
    CHECK_HIP(hipMemset(p, 0, 256));
    canary_kernel<<<1, 64>>>(p);
    hipError_t e = hipDeviceSynchronize();
    printf("canary kernel ran: %s\n", hipGetErrorString(e));
    (void)hipFree(p);
    return 0;
}

/* Rough speed figures (not a benchmark: duet bench is): one GEMM and one all_gather, alone. */
static void run_perf(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = test_hw();
    const int64_t M = 4096, reps = 20;
    uint16_t *a = NULL, *b = NULL, *c = NULL;
    CHECK_HIP(hipMalloc((void **)&a, (size_t)(M * M * 2)));
    CHECK_HIP(hipMalloc((void **)&b, (size_t)(M * M * 2)));
    CHECK_HIP(hipMalloc((void **)&c, (size_t)(M * M * 2)));
    CHECK_HIP(hipMemset(a, 0x3c, (size_t)(M * M * 2))); /* 1.0625-ish values, not zeros */
    CHECK_HIP(hipMemset(b, 0x3b, (size_t)(M * M * 2)));
    CHECK_HIP(hipDeviceSynchronize());
    /* what: 0 GEMM with the default tile (fp16, bf16), 1 all_gather, 2 all_reduce, 3 + i: GEMM
     * with tile i of duet_tile_get() (bf16). */
    for (int what = 0; what < 3 + duet_tile_count(); what++) {
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            if (what >= 3 && dtype == DUET_DTYPE_FP16)
                continue;
            duet_op_t op;
            memset(&op, 0, sizeof(op));
            op.wl = duet_workload_empty();
            op.wl.dtype = dtype;
            op.wl.world = t->world;
            if (what == 0 || what >= 3) {
                op.wl.m = op.wl.n = op.wl.k = M;
            } else {
                op.wl.coll = what == 1 ? DUET_COLL_ALL_GATHER : DUET_COLL_ALL_REDUCE;
                op.wl.mc = 4096;
                op.wl.nc = 2048;
            }
            op.cfg = duet_config_default(hw, DUET_MODE_FUSED);
            if (what >= 3)
                op.cfg.tile = duet_tile_get(what - 3);
            op.cfg.gemm_wgs = what == 1 || what == 2 ? 0 : op.cfg.num_wgs;
            op.cfg.comm_wgs = op.cfg.num_wgs - op.cfg.gemm_wgs;
            op.a = a;
            op.b = b;
            op.c = c;
            op.src = bf->src;
            op.dst = bf->dst;
            duet_status_t st = DUET_OK;
            double t0 = 0;
            for (int i = 0; i < reps + 3 && st == DUET_OK; i++) {
                if (i == 3) {
                    st = duet_ctx_sync(ctx, bf->stream);
                    MPI_Barrier(MPI_COMM_WORLD);
                    t0 = now_s();
                }
                st = duet_run(ctx, &op, bf->stream);
            }
            if (st == DUET_OK)
                st = duet_ctx_sync(ctx, bf->stream);
            double ms = (now_s() - t0) / reps * 1e3;
            if (t->rank == 0 && (what == 0 || what >= 3))
                printf("perf: GEMM %lldx%lldx%lld %s, tile %dx%d, %d CTAs: %.3f ms, %.0f TFLOP/s (%s)\n", (long long)M,
                       (long long)M, (long long)M, duet_dtype_name(dtype), op.cfg.tile.bm, op.cfg.tile.bn,
                       op.cfg.num_wgs, ms, 2.0 * M * M * M / (ms * 1e-3) / 1e12, duet_status_name(st));
            else if (t->rank == 0)
                printf("perf: %s of 4096x2048 %s per rank (16 MiB), %d CTAs: %.3f ms, %.0f GB/s remote traffic per "
                       "rank (%s)\n",
                       duet_collective_name(op.wl.coll), duet_dtype_name(dtype), op.cfg.num_wgs, ms,
                       (what == 1 ? 16.0 : 2.0 * 16.0 / t->world) * (t->world - 1) * 1048576.0 / (ms * 1e-3) / 1e9,
                       duet_status_name(st));
        }
    }
    CHECK_HIP(hipFree(c));
    CHECK_HIP(hipFree(b));
    CHECK_HIP(hipFree(a));
}

/* ------------------------------------------------------------------------------------------ */
/* Buffers and main                                                                            */
/* ------------------------------------------------------------------------------------------ */

/* Sizes of every buffer for the shapes at world size W (elements). */
static void bufs_size(bufs_t *bf, int world, size_t *dst_max_p)
{
    size_t ab = 0, c = 0, src = 0, dst = 0, nc_max = 0;
    for (int i = 0; i < NSHAPES; i++) {
        const shape_t *s = &SHAPES[i];
        const size_t a = (size_t)(s->m * s->k), b = (size_t)(s->n * s->k);
        const size_t cc = (size_t)((s->m + 256) * s->n), sr = (size_t)(shape_mc(s, world) * s->nc);
        ab = a > ab ? a : ab;
        ab = b > ab ? b : ab;
        c = cc > c ? cc : c;
        src = sr > src ? sr : src;
        dst = sr * (size_t)world > dst ? sr * (size_t)world : dst; /* all_gather is the largest output */
        nc_max = (size_t)s->nc > nc_max ? (size_t)s->nc : nc_max;
    }
    bf->ab_cap = ab + GUARD_TAIL;
    bf->c_cap = c + GUARD_TAIL;
    bf->src_cap = src + GUARD_TAIL;
    bf->dst_cap = dst + 256 * nc_max + GUARD_TAIL;
    *dst_max_p = dst;
}

static void bufs_alloc(bufs_t *bf, duet_ctx_h ctx, duet_test *t)
{
    size_t c_max = 0;
    for (int i = 0; i < NSHAPES; i++)
        c_max = (size_t)(SHAPES[i].m * SHAPES[i].n) > c_max ? (size_t)(SHAPES[i].m * SHAPES[i].n) : c_max;
    CHECK_HIP(hipMalloc((void **)&bf->a, bf->ab_cap * 2));
    CHECK_HIP(hipMalloc((void **)&bf->b, bf->ab_cap * 2));
    CHECK_HIP(hipMalloc((void **)&bf->a0, bf->ab_cap * 2));
    CHECK_HIP(hipMalloc((void **)&bf->b0, bf->ab_cap * 2));
    CHECK_HIP(hipMalloc((void **)&bf->c_alloc, (GUARD_FRONT + bf->c_cap) * 2));
    bf->c = bf->c_alloc + GUARD_FRONT;
    CHECK_HIP(hipMalloc((void **)&bf->src0, bf->src_cap * 2));
    CHECK_HIP(hipMalloc((void **)&bf->src_bad, bf->src_cap * 2));
    CHECK_HIP(hipMalloc((void **)&bf->d_ref, c_max * sizeof(double)));
    CHECK_HIP(hipMalloc((void **)&bf->d_p, c_max * sizeof(double)));
    bf->h_ref = (double *)malloc(c_max * sizeof(double));
    bf->h_p = (double *)malloc(c_max * sizeof(double));
    CHECK_HIP(hipStreamCreateWithFlags(&bf->stream, hipStreamNonBlocking));
    /* Pristine copies start as all guard pattern, so that a check before the first case's inputs
     * compares like with like. */
    duet_test_dev_guard_fill(bf->a0, 0, 0, bf->ab_cap, bf->stream);
    duet_test_dev_guard_fill(bf->b0, 0, 0, bf->ab_cap, bf->stream);
    duet_test_dev_guard_fill(bf->src0, 0, 0, bf->src_cap, bf->stream);
    CHECK_HIP(hipStreamSynchronize(bf->stream));
    void *p = NULL;
    duet_status_t st = duet_ctx_alloc(ctx, bf->src_cap * 2, &p);
    bf->src = (uint16_t *)p;
    if (st == DUET_OK)
        st = duet_ctx_alloc(ctx, (GUARD_FRONT + bf->dst_cap) * 2, &p);
    bf->dst_alloc = (uint16_t *)p;
    bf->dst = bf->dst_alloc + GUARD_FRONT;
    if (st != DUET_OK)
        duet_test_note(t, "symmetric allocation: %s: %s", duet_status_name(st), duet_ctx_last_error(ctx));
    duet_test_check(t, st == DUET_OK, "W=%d symmetric allocation of src and dst with guard bands", t->world);
    if (st != DUET_OK)
        MPI_Abort(MPI_COMM_WORLD, 1);
}

static void bufs_free(bufs_t *bf)
{
    free(bf->h_p);
    free(bf->h_ref);
    CHECK_HIP(hipStreamDestroy(bf->stream));
    CHECK_HIP(hipFree(bf->d_p));
    CHECK_HIP(hipFree(bf->d_ref));
    CHECK_HIP(hipFree(bf->src_bad));
    CHECK_HIP(hipFree(bf->src0));
    CHECK_HIP(hipFree(bf->c_alloc));
    CHECK_HIP(hipFree(bf->b0));
    CHECK_HIP(hipFree(bf->a0));
    CHECK_HIP(hipFree(bf->b));
    CHECK_HIP(hipFree(bf->a));
}

/* --only: the sections to run, comma-separated (NULL: all). A tool as slow as racecheck (minutes
 * per wgmma kernel) can then be given the kernels a change touched within its time limit. */
static const char *g_only = NULL;
static const char *const g_sections[] = {"heap",     "validation",     "reference",    "matrix",      "split_k",
                                         "stream_k", "stream_k_small", "staging",      "vendor",      "copy",
                                         "timeouts", "launch",         "back to back", "partial ops", "tiles"};

/* Whether `name` is an item of the comma-separated `list`. */
static int list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p != NULL; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
    return 0;
}

/* The first item of --only's list that names no section, or NULL. */
static const char *only_unknown(const char *list)
{
    static char item[64];
    for (const char *p = list; p != NULL; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        size_t n = strchr(p, ',') ? (size_t)(strchr(p, ',') - p) : strlen(p);
        snprintf(item, sizeof(item), "%.*s", (int)(n < 63 ? n : 63), p);
        int known = 0;
        for (size_t i = 0; i < sizeof(g_sections) / sizeof(g_sections[0]); i++)
            known |= strcmp(item, g_sections[i]) == 0;
        if (!known)
            return item;
    }
    return NULL;
}

/* Run one section (unless --only leaves it out) and, verbose, say how long it took (rank 0). */
#define SECTION(_t, _name, _call)                                                                                      \
    do {                                                                                                               \
        if (g_only != NULL && !list_has(g_only, (_name)))                                                              \
            break;                                                                                                     \
        double _t0 = now_s();                                                                                          \
        _call;                                                                                                         \
        if ((_t)->rank == 0 && (_t)->verbose)                                                                          \
            printf("-- %s: %.1f s\n", (_name), now_s() - _t0);                                                         \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    duet_test t;
    memset(&t, 0, sizeof(t));
    MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t.world);
    int quick = 0, perf = 0, plants = 0, skip_timeouts = 0, skip_vendor = 0, have_seed = 0;
    int64_t timeout_ms = 5000;
    unsigned long long seed = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            t.verbose = 1;
        else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc)
            timeout_ms = atoll(argv[++i]);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
            have_seed = 1;
        } else if (strcmp(argv[i], "--skip-timeouts") == 0)
            skip_timeouts = 1;
        else if (strcmp(argv[i], "--skip-vendor") == 0)
            skip_vendor = 1;
        else if (strcmp(argv[i], "--check-all") == 0)
            g_check_all = 1;
        else if (strcmp(argv[i], "--perf") == 0)
            perf = 1;
        else if (strcmp(argv[i], "--plant") == 0)
            plants = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            g_only = argv[++i];
            const char *bad = only_unknown(g_only);
            if (bad != NULL) {
                if (t.rank == 0)
                    fprintf(stderr,
                            "duet-gpu-tests: --only: no section '%s' (heap, validation, reference, matrix, "
                            "split_k, stream_k, vendor, copy, timeouts, launch, back to back, partial ops, tiles)\n",
                            bad);
                MPI_Finalize();
                return 2;
            }
        } else if (strcmp(argv[i], "--canary") == 0) {
            int rc = run_canary();
            MPI_Finalize();
            return rc;
        } else {
            if (t.rank == 0)
                fprintf(stderr, "duet-gpu-tests: unknown option '%s'\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    /* A fresh base seed per run unless one is given; every rank uses rank 0's. */
    if (!have_seed)
        seed = (unsigned long long)time(NULL) * 2654435761ull ^ (unsigned long long)(now_s() * 1e9);
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    g_base_seed = seed;

    bufs_t bf;
    memset(&bf, 0, sizeof(bf));
    size_t dst_max = 0;
    bufs_size(&bf, t.world, &dst_max);
    duet_ctx_params_t prm = duet_ctx_default_params();
    /* src and dst with their guards, and room for the heap test's allocations. */
    prm.heap_bytes = (bf.src_cap + GUARD_FRONT + bf.dst_cap) * 2 + ((size_t)16 << 20);
    prm.timeout_ms = timeout_ms;
    duet_ctx_h ctx = NULL;
    duet_status_t st = duet_ctx_create(MPI_COMM_WORLD, &prm, &ctx);
    duet_test_check(&t, st == DUET_OK, "W=%d duet_ctx_create", t.world);
    if (st != DUET_OK) {
        duet_test_note(&t, "duet_ctx_create: %s: %s", duet_status_name(st), duet_last_error());
        if (t.rank == 0)
            printf("%d passed, %d failed\n", t.passed, t.failed);
        MPI_Finalize();
        return 1;
    }
    const int share = test_hw_init(ctx);
    if (t.rank == 0)
        printf("duet GPU tests: %d rank(s), device %s, %d SMs%s, %s, seed 0x%llx (--seed 0x%llx repeats it)\n", t.world,
               duet_ctx_hw(ctx)->device, duet_ctx_hw(ctx)->n_sms, share > 1 ? " shared by the ranks on it" : "",
               plants  ? "planted faults"
               : quick ? "quick set"
                       : "full set",
               seed, seed);
    duet_test_dev_init();
    bufs_alloc(&bf, ctx, &t);

    double t0 = now_s();
    if (perf) {
        run_perf(&t, ctx, &bf);
        goto done;
    }
    if (plants) {
        SECTION(&t, "plants", run_plants(&t, ctx, &bf));
        goto done;
    }
    SECTION(&t, "heap", test_heap(&t, ctx));
    SECTION(&t, "validation", test_validation(&t, ctx, &bf));
    SECTION(&t, "reference", test_reference(&t, &bf));
    SECTION(&t, "matrix", test_matrix(&t, ctx, &bf, quick));
    SECTION(&t, "split_k", test_split_k(&t, ctx, &bf, quick));
    SECTION(&t, "stream_k", test_stream_k(&t, ctx, &bf, quick));
    SECTION(&t, "stream_k_small", test_stream_k_small(&t, ctx, &bf));
    SECTION(&t, "staging", test_staging(&t, ctx, &bf));
    if (!skip_vendor)
        SECTION(&t, "vendor", test_vendor(&t, ctx, &bf, quick));
    SECTION(&t, "copy", test_copy(&t, ctx, &bf, quick, skip_timeouts ? 0 : timeout_ms < 400 ? timeout_ms : 400));
    if (!skip_timeouts)
        SECTION(&t, "timeouts", test_timeouts(&t, ctx, &bf, timeout_ms < 400 ? timeout_ms : 400));
    SECTION(&t, "launch", duet_test_launch(&t, seed));
    if (!quick) {
        SECTION(&t, "back to back", test_back_to_back(&t, ctx, &bf));
        SECTION(&t, "partial ops", test_partial_ops(&t, ctx, &bf));
        SECTION(&t, "tiles", test_tiles(&t, ctx, &bf));
    }
done:
    if (t.rank == 0)
        printf("W=%d: %.1f s\n", t.world, now_s() - t0);
#if DUET_TEST_VENDOR
    duet_baseline_destroy(g_vendor);
#endif
    bufs_free(&bf);
    duet_test_dev_fini();
    duet_ctx_destroy(ctx);
    duet_ctx_destroy(NULL); /* a no-op */
    if (t.rank == 0)
        printf("%d passed, %d failed\n", t.passed, t.failed);
    MPI_Finalize();
    return t.failed ? 1 : 0;
}
