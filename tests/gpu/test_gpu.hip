/*
 * GPU tests of the backend (make test-gpu; one MPI rank per GPU).
 *
 *   duet-gpu-tests [--quick] [--verbose] [--timeout-ms N]
 *
 * Covers: both modes x five collectives (broadcast from every root) x fp16/bf16 x six shapes
 * (one a multiple of the tiles, one ragged in every extent with all_to_all chunks straddling comm
 * tiles, one with M <= 16 and nc not a multiple of 8, one with K not a multiple of 8, one large,
 * one with N not a multiple of 8); GEMM against an fp64 host reference (relative Frobenius error
 * < 1e-2, and where C is wrong when it is not); collectives against a host
 * reference built from every rank's input (bit-exact; sums within 1 ulp, counted separately);
 * fused and concurrent bytes identical; every GEMM tile; argument checks that launch nothing;
 * heap allocation rules; a rank that skips an operation (timeout, then recovery).
 * --quick keeps a reduced set for the compute-sanitizer passes.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "backend/gpu.h"
#include "duet/backend.h"
#include "tests/gpu/harness.h"

#define CHECK_HIP(_call)                                                                                               \
    do {                                                                                                               \
        hipError_t _e = (_call);                                                                                       \
        if (_e != hipSuccess) {                                                                                        \
            fprintf(stderr, "%s failed: %s (%s:%d)\n", #_call, hipGetErrorString(_e), __FILE__, __LINE__);             \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                                              \
        }                                                                                                              \
    } while (0)

typedef struct shape {
    const char *name;
    int64_t m, n, k, mc, nc;
    int small_grid; /* 1: few CTAs, so that every CTA dequeues many tiles and steals */
    int quick;      /* 1: part of the --quick set (sanitizer passes) */
    int sampled;    /* 1: check the GEMM on a sample of ~1/1000 of C (every element is still
                     * checked for poison); the full host reference would take too long */
} shape_t;

static const shape_t SHAPES[] = {
    {"ragged", 300, 520, 200, 600, 136, 0, 1, 0},     /* K % 64 != 0; all_to_all chunk 300 straddles 256-row tiles */
    {"small-m", 8, 384, 72, 14, 100, 0, 1, 0},        /* M <= 16; nc % 8 != 0: element comm path */
    {"aligned", 512, 512, 256, 1024, 512, 1, 0, 0},   /* multiples of every tile */
    {"odd-k", 130, 71, 101, 6, 24, 1, 1, 0},          /* K % 8 != 0: element GEMM loads; N odd */
    {"large", 2048, 2048, 1024, 4096, 2048, 0, 0, 1}, /* 16 MiB per rank, every CTA busy */
    /* K % 8 == 0, N % 8 != 0: the wgmma tile with C stored by its threads, not TMA; N = 258 is
     * 3 tile columns of 128 or 2 of 256, the last with 2 columns */
    {"odd-n", 300, 258, 320, 256, 72, 1, 1, 0},
};
#define NSHAPES ((int)(sizeof(SHAPES) / sizeof(SHAPES[0])))

/* Device and host buffers, sized for the largest shape. */
typedef struct bufs {
    uint16_t *a, *b, *c; /* device; C outside the heap */
    uint16_t *src, *dst; /* symmetric heap */
    uint16_t *src_bad;   /* device memory outside the heap */
    size_t c_max, src_max, dst_max;
    hipStream_t stream;
} bufs_t;

typedef struct result {
    uint16_t *c, *dst; /* host copies of the outputs */
    size_t c_n, dst_n;
} result_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
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
        wl.mc = s->mc;
        wl.nc = s->nc;
    }
    wl.dtype = dtype;
    wl.world = world;
    wl.root = root;
    return wl;
}

/*
 * The device as the tests size their grids: the context's, with the SMs divided among the ranks
 * that share this rank's GPU (tools/h200-onegpu.sh runs W = 2 on one GPU under MPS). Two grids
 * of every SM cannot both be resident on one GPU, and a persistent kernel that waits for a rank
 * whose kernel cannot start times out.
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

/* Expected collective output of `rank` from every rank's input (regenerated from the seeds). */
static void coll_ref(const duet_workload_t *wl, int rank, uint64_t seed, uint16_t *out)
{
    const int W = wl->world, dt = wl->dtype;
    const int64_t mc = wl->mc, nc = wl->nc, chunk = mc / W;
    const size_t n = (size_t)(mc * nc);
    uint16_t *all = (uint16_t *)malloc(n * (size_t)W * sizeof(uint16_t));
    for (int p = 0; p < W; p++)
        duet_test_fill(all + (size_t)p * n, n, dt, seed * 64 + (uint64_t)p);
    switch (wl->coll) {
    case DUET_COLL_ALL_GATHER:
        memcpy(out, all, n * (size_t)W * sizeof(uint16_t));
        break;
    case DUET_COLL_BROADCAST:
        memcpy(out, all + (size_t)wl->root * n, n * sizeof(uint16_t));
        break;
    case DUET_COLL_ALL_TO_ALL:
        /* Block p of my output is block `rank` of rank p's input. */
        for (int p = 0; p < W; p++)
            memcpy(out + (size_t)(p * chunk * nc), all + (size_t)p * n + (size_t)(rank * chunk * nc),
                   (size_t)(chunk * nc) * sizeof(uint16_t));
        break;
    case DUET_COLL_ALL_REDUCE:
    case DUET_COLL_REDUCE_SCATTER: {
        const int64_t rows = wl->coll == DUET_COLL_ALL_REDUCE ? mc : chunk;
        const int64_t row0 = wl->coll == DUET_COLL_ALL_REDUCE ? 0 : rank * chunk;
        for (int64_t i = 0; i < rows * nc; i++) {
            float acc = 0.0f; /* the kernel's order: rank 0, 1, ... in fp32 */
            for (int p = 0; p < W; p++)
                acc += duet_to_f32(all[(size_t)p * n + (size_t)(row0 * nc + i)], dt);
            out[i] = duet_from_f32(acc, dt);
        }
        break;
    }
    default:
        break;
    }
    free(all);
}

typedef struct ref_cache {
    double *c[NSHAPES][2];
} ref_cache_t;

static uint64_t gemm_seed(int si, int dtype)
{
    return 1000 + (uint64_t)si * 10 + (uint64_t)dtype;
}

/* Upload A and B of a shape (deterministic per shape and dtype, the same on every rank). */
static void upload_ab(const shape_t *s, int si, int dtype, bufs_t *bf)
{
    size_t na = (size_t)(s->m * s->k), nb = (size_t)(s->n * s->k);
    uint16_t *h = (uint16_t *)malloc((na + nb) * sizeof(uint16_t));
    duet_test_fill(h, na, dtype, gemm_seed(si, dtype) * 2);
    duet_test_fill(h + na, nb, dtype, gemm_seed(si, dtype) * 2 + 1);
    CHECK_HIP(hipMemcpy(bf->a, h, na * 2, hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy(bf->b, h + na, nb * 2, hipMemcpyHostToDevice));
    CHECK_HIP(hipDeviceSynchronize());
    free(h);
}

static const double *gemm_ref(ref_cache_t *rc, const shape_t *s, int si, int dtype)
{
    if (rc->c[si][dtype] == NULL) {
        size_t na = (size_t)(s->m * s->k), nb = (size_t)(s->n * s->k);
        uint16_t *h = (uint16_t *)malloc((na + nb) * sizeof(uint16_t));
        duet_test_fill(h, na, dtype, gemm_seed(si, dtype) * 2);
        duet_test_fill(h + na, nb, dtype, gemm_seed(si, dtype) * 2 + 1);
        rc->c[si][dtype] = (double *)malloc((size_t)(s->m * s->n) * sizeof(double));
        if (s->sampled)
            duet_test_gemm_ref_sampled(h, h + na, rc->c[si][dtype], s->m, s->n, s->k, dtype);
        else
            duet_test_gemm_ref(h, h + na, rc->c[si][dtype], s->m, s->n, s->k, dtype);
        free(h);
    }
    return rc->c[si][dtype];
}

/* Relative Frobenius error of C against the reference (entries where the reference is NaN are
 * not sampled); NaN in C (unwritten poison) fails. */
static double gemm_error(const uint16_t *c, const double *ref, size_t n, int dtype)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double v = duet_to_f32(c[i], dtype);
        if (v != v)
            return INFINITY;
        if (ref[i] != ref[i])
            continue;
        num += (v - ref[i]) * (v - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1));
}

/* Where C is wrong, for the failure's note: elements further than 5 % of the reference's RMS from
 * it (or NaN), their count and bounding box (rows r0..r1, columns c0..c1 of the n-column C). */
static void gemm_bad_where(char *buf, size_t len, const uint16_t *c, const double *ref, size_t total, int64_t n,
                           int dtype)
{
    double ss = 0;
    size_t cnt = 0, used = 0;
    for (size_t i = 0; i < total; i++)
        if (ref[i] == ref[i]) {
            ss += ref[i] * ref[i];
            used++;
        }
    const double tol = 0.05 * sqrt(ss / (used > 0 ? (double)used : 1.0));
    int64_t r0 = INT64_MAX, r1 = -1, c0 = INT64_MAX, c1 = -1;
    for (size_t i = 0; i < total; i++) {
        double v = duet_to_f32(c[i], dtype);
        if (ref[i] != ref[i] || fabs(v - ref[i]) <= tol)
            continue;
        int64_t r = (int64_t)i / n, col = (int64_t)i % n;
        cnt++;
        r0 = r < r0 ? r : r0;
        r1 = r > r1 ? r : r1;
        c0 = col < c0 ? col : c0;
        c1 = col > c1 ? col : c1;
    }
    if (cnt == 0)
        snprintf(buf, len, "no element off by more than 5 %% of the RMS");
    else
        snprintf(buf, len, "%zu elements off by more than 5 %% of the RMS, rows %lld..%lld, columns %lld..%lld", cnt,
                 (long long)r0, (long long)r1, (long long)c0, (long long)c1);
}

/*
 * One operation on every rank: fresh random src, poisoned outputs, run, sync, check. Fills `res`
 * with the host copies of C and dst. @return 1 if this rank's outputs are correct.
 */
static int run_one(duet_test *t, duet_ctx_h ctx, bufs_t *bf, ref_cache_t *rc, int si, const duet_workload_t *wl,
                   const duet_config_t *cfg, uint64_t seed, result_t *res, const char *label)
{
    const shape_t *s = &SHAPES[si];
    duet_op_t op;
    memset(&op, 0, sizeof(op));
    op.wl = *wl;
    op.cfg = *cfg;
    op.a = bf->a;
    op.b = bf->b;
    op.c = bf->c;
    op.src = bf->src;
    op.dst = bf->dst;
    size_t c_n = (size_t)(wl->m * wl->n), src_n = (size_t)(wl->mc * wl->nc);
    size_t dst_n = duet_op_dst_bytes(wl) / 2;
    uint16_t *h_src = (uint16_t *)malloc((src_n + 1) * sizeof(uint16_t));
    duet_test_fill(h_src, src_n, wl->dtype, seed * 64 + (uint64_t)t->rank);
    if (src_n)
        CHECK_HIP(hipMemcpy(bf->src, h_src, src_n * 2, hipMemcpyHostToDevice));
    CHECK_HIP(hipMemset(bf->c, 0xff, bf->c_max * 2)); /* 0xffff is NaN in fp16 and bf16 */
    CHECK_HIP(hipMemset(bf->dst, 0xff, bf->dst_max * 2));
    /* The copies and fills ran on the legacy stream, which our non-blocking stream does not
     * wait for. */
    CHECK_HIP(hipDeviceSynchronize());
    free(h_src);

    int ok = 1;
    duet_status_t st = duet_run(ctx, &op, bf->stream);
    if (st == DUET_OK)
        st = duet_ctx_sync(ctx, bf->stream);
    if (st != DUET_OK) {
        duet_test_note(t, "%s: %s: %s", label, duet_status_name(st), duet_ctx_last_error(ctx));
        ok = 0;
    }
    res->c_n = c_n;
    res->dst_n = dst_n;
    res->c = (uint16_t *)malloc((c_n + 1) * 2);
    res->dst = (uint16_t *)malloc((dst_n + 1) * 2);
    if (c_n)
        CHECK_HIP(hipMemcpy(res->c, bf->c, c_n * 2, hipMemcpyDeviceToHost));
    if (dst_n)
        CHECK_HIP(hipMemcpy(res->dst, bf->dst, dst_n * 2, hipMemcpyDeviceToHost));
    if (!ok)
        return 0;

    if (c_n) {
        const double *ref = gemm_ref(rc, s, si, wl->dtype);
        double err = gemm_error(res->c, ref, c_n, wl->dtype);
        if (!(err < 1e-2)) {
            char where[160];
            gemm_bad_where(where, sizeof(where), res->c, ref, c_n, wl->n, wl->dtype);
            duet_test_note(t, "%s: GEMM relative error %.3g; %s", label, err, where);
            ok = 0;
        }
    }
    if (dst_n) {
        uint16_t *ref = (uint16_t *)malloc(dst_n * 2);
        coll_ref(wl, t->rank, seed, ref);
        size_t exact = 0, bad = 0, first_bad = 0;
        int sums = wl->coll == DUET_COLL_ALL_REDUCE || wl->coll == DUET_COLL_REDUCE_SCATTER;
        for (size_t i = 0; i < dst_n; i++) {
            int u = duet_test_ulps(res->dst[i], ref[i]);
            if (u == 0)
                exact++;
            else if (!(sums && u <= 1) && bad++ == 0)
                first_bad = i;
        }
        if (bad) {
            duet_test_note(t, "%s: %zu of %zu output elements wrong, first at %zu (got 0x%04x, want 0x%04x)", label,
                           bad, dst_n, first_bad, res->dst[first_bad], ref[first_bad]);
            ok = 0;
        } else if (exact != dst_n) {
            duet_test_note(t, "%s: %zu of %zu sums differ from the host's by 1 ulp", label, dst_n - exact, dst_n);
        }
        free(ref);
    }
    return ok;
}

static void result_free(result_t *r)
{
    free(r->c);
    free(r->dst);
    memset(r, 0, sizeof(*r));
}

static int same_bytes(const result_t *x, const result_t *y)
{
    return x->c_n == y->c_n && x->dst_n == y->dst_n && memcmp(x->c, y->c, x->c_n * 2) == 0 &&
           memcmp(x->dst, y->dst, x->dst_n * 2) == 0;
}

/* The matrix: every collective (and root) x dtype x shape, fused then concurrent. */
static void test_matrix(duet_test *t, duet_ctx_h ctx, bufs_t *bf, ref_cache_t *rc, int quick)
{
    const duet_hw_t *hw = test_hw();
    uint64_t seed = 1;
    for (int si = 0; si < NSHAPES; si++) {
        if (quick && !SHAPES[si].quick)
            continue;
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            if (quick && dtype == DUET_DTYPE_FP16)
                continue;
            upload_ab(&SHAPES[si], si, dtype, bf);
            for (int coll = DUET_COLL_ALL_GATHER; coll < DUET_COLL_COUNT; coll++) {
                int roots = coll == DUET_COLL_BROADCAST ? t->world : 1;
                for (int root = 0; root < roots; root++, seed++) {
                    duet_workload_t wl = make_wl(&SHAPES[si], coll, dtype, t->world, root, 1);
                    result_t res[DUET_MODE_COUNT];
                    for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
                        char label[160];
                        snprintf(label, sizeof(label), "W=%d %s %s %s%s shape %s (%lldx%lldx%lld, comm %lldx%lld)",
                                 t->world, duet_mode_name(mode), duet_dtype_name(dtype), duet_collective_name(coll),
                                 coll == DUET_COLL_BROADCAST ? (root ? " root 1+" : " root 0") : "", SHAPES[si].name,
                                 (long long)wl.m, (long long)wl.n, (long long)wl.k, (long long)wl.mc, (long long)wl.nc);
                        duet_config_t cfg = make_cfg(hw, mode, &SHAPES[si]);
                        int ok = run_one(t, ctx, bf, rc, si, &wl, &cfg, seed, &res[mode], label);
                        duet_test_check(t, ok, "%s", label);
                    }
                    duet_test_check(t, same_bytes(&res[0], &res[1]), "W=%d fused == concurrent bytes: %s %s %s root %d",
                                    t->world, duet_dtype_name(dtype), duet_collective_name(coll), SHAPES[si].name,
                                    root);
                    result_free(&res[0]);
                    result_free(&res[1]);
                }
            }
        }
    }
}

/* Every GEMM tile, both modes, on the ragged shape (with all_reduce), the M <= 16 shape and the
 * shape whose C rows are not 16-byte multiples. */
static void test_tiles(duet_test *t, duet_ctx_h ctx, bufs_t *bf, ref_cache_t *rc)
{
    const duet_hw_t *hw = test_hw();
    const int shapes[3] = {0, 1, 5};
    for (int i = 0; i < 3; i++) {
        int si = shapes[i];
        for (int dtype = 0; dtype < DUET_DTYPE_COUNT; dtype++) {
            upload_ab(&SHAPES[si], si, dtype, bf);
            for (int ti = 0; ti < duet_tile_count(); ti++) {
                duet_gemm_tile_t tile = duet_tile_get(ti);
                duet_workload_t wl = make_wl(&SHAPES[si], DUET_COLL_ALL_REDUCE, dtype, t->world, 0, 1);
                result_t res[DUET_MODE_COUNT];
                for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
                    duet_config_t cfg = make_cfg(hw, mode, &SHAPES[si]);
                    cfg.tile = tile;
                    char label[160];
                    snprintf(label, sizeof(label), "W=%d tile %dx%dx%d %s %s shape %s", t->world, tile.bm, tile.bn,
                             tile.bk, duet_mode_name(mode), duet_dtype_name(dtype), SHAPES[si].name);
                    int ok = run_one(t, ctx, bf, rc, si, &wl, &cfg, 5000 + (uint64_t)ti, &res[mode], label);
                    duet_test_check(t, ok, "%s", label);
                }
                duet_test_check(t, same_bytes(&res[0], &res[1]), "W=%d tile %dx%d fused == concurrent bytes (%s %s)",
                                t->world, tile.bm, tile.bn, duet_dtype_name(dtype), SHAPES[si].name);
                result_free(&res[0]);
                result_free(&res[1]);
            }
        }
    }
}

/*
 * The K split: parts of a C tile summed by the last one to finish, or (wgmma tile, split_k up to
 * its SK_OWN_MAX) by the last part, from its own block in shared memory. Shapes: ragged (K = 200,
 * 4 steps of 64, last one partial), small-m (M = 8: rows beyond M are neither stored nor
 * copied), odd-k (K % 8 != 0: the mma.sync tile), aligned, and large (every CTA busy, parts of
 * one C tile side by side; 16 parts: beyond SK_OWN_MAX of 256x256 and 256x128, so the sum of
 * every block from global memory); tiles: 256x128, 256x256 (two passes, two counters per C
 * tile) and 64x64. Each split runs twice per mode: fused and concurrent schedule the parts
 * differently, and all four results must have the same bytes.
 */
static void test_split_k(duet_test *t, duet_ctx_h ctx, bufs_t *bf, ref_cache_t *rc)
{
    const duet_hw_t *hw = test_hw();
    static const struct {
        int si, split_k;
    } cases[] = {{0, 2}, {0, 4}, {1, 2}, {3, 2}, {2, 2}, {2, 4}, {4, 2}, {4, 3}, {4, 8}, {4, 16}};
    static const duet_gemm_tile_t tiles[] = {{256, 128, 64}, {256, 256, 64}, {64, 64, 64}};
    for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
        const int si = cases[ci].si, dtype = DUET_DTYPE_BF16;
        upload_ab(&SHAPES[si], si, dtype, bf);
        for (size_t ti = 0; ti < sizeof(tiles) / sizeof(tiles[0]); ti++) {
            duet_workload_t wl = make_wl(&SHAPES[si], DUET_COLL_ALL_REDUCE, dtype, t->world, 0, 1);
            result_t res[4];
            for (int run = 0; run < 4; run++) {
                const int mode = run / 2 == 0 ? DUET_MODE_FUSED : DUET_MODE_CONCURRENT;
                duet_config_t cfg = make_cfg(hw, mode, &SHAPES[si]);
                cfg.tile = tiles[ti];
                cfg.split_k = cases[ci].split_k;
                char label[160];
                snprintf(label, sizeof(label), "W=%d split_k %d tile %dx%d %s shape %s run %d", t->world,
                         cfg.split_k, cfg.tile.bm, cfg.tile.bn, duet_mode_name(mode), SHAPES[si].name, run % 2);
                int ok = run_one(t, ctx, bf, rc, si, &wl, &cfg, 7000 + (uint64_t)ci, &res[run], label);
                duet_test_check(t, ok, "%s", label);
            }
            int same = same_bytes(&res[0], &res[1]) && same_bytes(&res[0], &res[2]) && same_bytes(&res[0], &res[3]);
            duet_test_check(t, same, "W=%d split_k %d tile %dx%d shape %s: the same bytes in all four runs", t->world,
                            cases[ci].split_k, tiles[ti].bm, tiles[ti].bn, SHAPES[si].name);
            for (int run = 0; run < 4; run++)
                result_free(&res[run]);
        }
    }
    /* A split that leaves a part without K steps is refused before anything runs. */
    duet_workload_t wl = make_wl(&SHAPES[0], DUET_COLL_ALL_REDUCE, DUET_DTYPE_BF16, t->world, 0, 1);
    duet_config_t cfg = make_cfg(hw, DUET_MODE_FUSED, &SHAPES[0]);
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

/* GEMM-only and collective-only operations. */
static void test_partial_ops(duet_test *t, duet_ctx_h ctx, bufs_t *bf, ref_cache_t *rc)
{
    const duet_hw_t *hw = test_hw();
    upload_ab(&SHAPES[0], 0, DUET_DTYPE_BF16, bf);
    for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
        result_t r;
        duet_workload_t wl = make_wl(&SHAPES[0], DUET_COLL_NONE, DUET_DTYPE_BF16, t->world, 0, 1);
        duet_config_t cfg = make_cfg(hw, mode, &SHAPES[0]);
        char label[96];
        snprintf(label, sizeof(label), "W=%d GEMM only, %s", t->world, duet_mode_name(mode));
        duet_test_check(t, run_one(t, ctx, bf, rc, 0, &wl, &cfg, 7000, &r, label), "%s", label);
        result_free(&r);
        wl = make_wl(&SHAPES[0], DUET_COLL_ALL_GATHER, DUET_DTYPE_BF16, t->world, 0, 0);
        snprintf(label, sizeof(label), "W=%d all_gather only, %s", t->world, duet_mode_name(mode));
        duet_test_check(t, run_one(t, ctx, bf, rc, 0, &wl, &cfg, 7001, &r, label), "%s", label);
        result_free(&r);
    }
}

/* Bad arguments are refused before any launch: the poisoned outputs stay untouched. */
static void test_validation(duet_test *t, duet_ctx_h ctx, bufs_t *bf)
{
    const duet_hw_t *hw = duet_ctx_hw(ctx);
    const shape_t *s = &SHAPES[0];
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
        CHECK_HIP(hipMemset(bf->c, 0xff, bf->c_max * 2));
        CHECK_HIP(hipMemset(bf->dst, 0xff, bf->dst_max * 2));
        CHECK_HIP(hipDeviceSynchronize());
        duet_status_t st = named ? duet_gemm_all_reduce(ctx, &op, bf->stream) : duet_run(ctx, &op, bf->stream);
        CHECK_HIP(hipStreamSynchronize(bf->stream));
        uint16_t probe[2];
        CHECK_HIP(hipMemcpy(&probe[0], bf->c, 2, hipMemcpyDeviceToHost));
        CHECK_HIP(hipMemcpy(&probe[1], bf->dst, 2, hipMemcpyDeviceToHost));
        int ok = st == cases[i].want && probe[0] == 0xffff && probe[1] == 0xffff && duet_ctx_last_error(ctx)[0];
        if (!ok)
            duet_test_note(t, "validation '%s': got %s (%s)", cases[i].what, duet_status_name(st),
                           duet_ctx_last_error(ctx));
        duet_test_check(t, ok, "W=%d refused before launch: %s -> %s", t->world, cases[i].what,
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
 * The last rank skips one operation. Every other rank must get DUET_ERR_TIMEOUT naming it
 * within the bound (plus slack for launch and polling), refuse further operations, and after
 * duet_ctx_resync() on every rank the next operation must be correct again.
 */
static void test_timeout(duet_test *t, duet_ctx_h ctx, bufs_t *bf, ref_cache_t *rc, int64_t timeout_ms)
{
    if (t->world < 2)
        return;
    const duet_hw_t *hw = test_hw();
    const int skipper = t->world - 1;
    upload_ab(&SHAPES[0], 0, DUET_DTYPE_BF16, bf);
    for (int mode = 0; mode <= DUET_MODE_CONCURRENT; mode++) {
        int ok = 1;
        double dt = 0;
        if (t->rank != skipper) {
            duet_op_t op;
            memset(&op, 0, sizeof(op));
            op.wl = make_wl(&SHAPES[0], DUET_COLL_ALL_GATHER, DUET_DTYPE_BF16, t->world, 0, 1);
            op.cfg = make_cfg(hw, mode, &SHAPES[0]);
            op.a = bf->a;
            op.b = bf->b;
            op.c = bf->c;
            op.src = bf->src;
            op.dst = bf->dst;
            op.timeout_ms = timeout_ms;
            char want[32];
            snprintf(want, sizeof(want), "rank %d", skipper);
            double t0 = now_s();
            duet_status_t st = duet_run(ctx, &op, bf->stream);
            if (st == DUET_OK)
                st = duet_ctx_sync(ctx, bf->stream);
            dt = now_s() - t0;
            const char *msg = duet_ctx_last_error(ctx);
            ok = st == DUET_ERR_TIMEOUT && strstr(msg, want) != NULL && dt < timeout_ms * 1e-3 + 2.0;
            duet_test_note(t, "%s: %s after %.2f s: %s", duet_mode_name(mode), duet_status_name(st), dt, msg);
            st = duet_run(ctx, &op, bf->stream);
            ok = ok && st == DUET_ERR_BUSY;
        }
        MPI_Barrier(MPI_COMM_WORLD); /* the skipper waits here instead of entering */
        duet_test_check(t, ok, "W=%d %s: a rank that skips the op makes the others time out, naming it", t->world,
                        duet_mode_name(mode));
        duet_status_t st = duet_ctx_resync(ctx);
        duet_test_check(t, st == DUET_OK, "W=%d duet_ctx_resync after the timeout", t->world);
        duet_workload_t wl = make_wl(&SHAPES[0], DUET_COLL_ALL_REDUCE, DUET_DTYPE_BF16, t->world, 0, 1);
        duet_config_t cfg = make_cfg(hw, mode, &SHAPES[0]);
        result_t r;
        char label[96];
        snprintf(label, sizeof(label), "W=%d %s all_reduce correct after recovery", t->world, duet_mode_name(mode));
        duet_test_check(t, run_one(t, ctx, bf, rc, 0, &wl, &cfg, 9000 + (uint64_t)mode, &r, label), "%s", label);
        result_free(&r);
    }
}

/*
 * Forty operations back to back on one stream with no host synchronisation between them,
 * cycling through the collectives and both modes: the epochs, the per-op control block and the
 * ordering of consecutive operations must hold without the host. The last one is checked.
 */
static void test_back_to_back(duet_test *t, duet_ctx_h ctx, bufs_t *bf, ref_cache_t *rc)
{
    const duet_hw_t *hw = test_hw();
    const int si = 2, n = 40;
    upload_ab(&SHAPES[si], si, DUET_DTYPE_BF16, bf);
    duet_status_t st = DUET_OK;
    int coll = DUET_COLL_ALL_GATHER, mode = 0;
    /* The first n - 1 run on whatever src holds; run_one() then runs and checks the last. */
    for (int i = 0; i < n - 1 && st == DUET_OK; i++) {
        coll = DUET_COLL_ALL_GATHER + i % 5;
        mode = (i / 5) % 2;
        duet_op_t op;
        memset(&op, 0, sizeof(op));
        op.wl = make_wl(&SHAPES[si], coll, DUET_DTYPE_BF16, t->world, i % t->world, 1);
        op.cfg = make_cfg(hw, mode, &SHAPES[si]);
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
    result_t r;
    duet_workload_t wl = make_wl(&SHAPES[si], DUET_COLL_ALL_REDUCE, DUET_DTYPE_BF16, t->world, 0, 1);
    duet_config_t cfg = make_cfg(hw, DUET_MODE_FUSED, &SHAPES[si]);
    duet_test_check(t, run_one(t, ctx, bf, rc, si, &wl, &cfg, 8000, &r, "after back to back"),
                    "W=%d all_reduce correct after the back-to-back run", t->world);
    result_free(&r);
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

/* Rough speed figures (not a benchmark: issue 5 owns that): one GEMM and one all_gather, alone. */
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    duet_test t;
    memset(&t, 0, sizeof(t));
    MPI_Comm_rank(MPI_COMM_WORLD, &t.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t.world);
    int quick = 0, perf = 0;
    int64_t timeout_ms = 5000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--verbose") == 0)
            t.verbose = 1;
        else if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc)
            timeout_ms = atoll(argv[++i]);
        else if (strcmp(argv[i], "--perf") == 0)
            perf = 1;
        else if (strcmp(argv[i], "--canary") == 0) {
            int rc = run_canary();
            MPI_Finalize();
            return rc;
        }
    }

    duet_ctx_params_t prm = duet_ctx_default_params();
    prm.heap_bytes = (size_t)128 << 20;
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
        printf("duet GPU tests: %d rank(s), device %s, %d SMs%s, %s\n", t.world, duet_ctx_hw(ctx)->device,
               duet_ctx_hw(ctx)->n_sms, share > 1 ? " shared by the ranks on it" : "",
               quick ? "quick set" : "full set");

    bufs_t bf;
    memset(&bf, 0, sizeof(bf));
    size_t ab_max = 0;
    for (int i = 0; i < NSHAPES; i++) {
        size_t ab = (size_t)((SHAPES[i].m + SHAPES[i].n) * SHAPES[i].k);
        size_t c = (size_t)(SHAPES[i].m * SHAPES[i].n), sr = (size_t)(SHAPES[i].mc * SHAPES[i].nc);
        ab_max = ab > ab_max ? ab : ab_max;
        bf.c_max = c > bf.c_max ? c : bf.c_max;
        bf.src_max = sr > bf.src_max ? sr : bf.src_max;
    }
    bf.dst_max = bf.src_max * (size_t)t.world;
    CHECK_HIP(hipMalloc((void **)&bf.a, ab_max * 2));
    CHECK_HIP(hipMalloc((void **)&bf.b, ab_max * 2));
    CHECK_HIP(hipMalloc((void **)&bf.c, bf.c_max * 2));
    CHECK_HIP(hipMalloc((void **)&bf.src_bad, bf.src_max * 2));
    CHECK_HIP(hipStreamCreateWithFlags(&bf.stream, hipStreamNonBlocking));
    void *p = NULL;
    st = duet_ctx_alloc(ctx, bf.src_max * 2, &p);
    bf.src = (uint16_t *)p;
    if (st == DUET_OK)
        st = duet_ctx_alloc(ctx, bf.dst_max * 2, &p);
    bf.dst = (uint16_t *)p;
    duet_test_check(&t, st == DUET_OK, "W=%d symmetric allocation of src and dst", t.world);

    ref_cache_t rc;
    memset(&rc, 0, sizeof(rc));
    double t0 = now_s();
    if (perf) {
        run_perf(&t, ctx, &bf);
        goto done;
    }
    test_heap(&t, ctx);
    test_validation(&t, ctx, &bf);
    test_matrix(&t, ctx, &bf, &rc, quick);
    if (!quick) {
        test_back_to_back(&t, ctx, &bf, &rc);
        test_partial_ops(&t, ctx, &bf, &rc);
        test_tiles(&t, ctx, &bf, &rc);
        test_split_k(&t, ctx, &bf, &rc);
        test_timeout(&t, ctx, &bf, &rc, timeout_ms < 1500 ? timeout_ms : 1500);
    }
    if (t.rank == 0)
        printf("W=%d: %.1f s\n", t.world, now_s() - t0);
done:

    for (int i = 0; i < NSHAPES; i++)
        for (int d = 0; d < 2; d++)
            free(rc.c[i][d]);
    CHECK_HIP(hipStreamDestroy(bf.stream));
    CHECK_HIP(hipFree(bf.src_bad));
    CHECK_HIP(hipFree(bf.c));
    CHECK_HIP(hipFree(bf.b));
    CHECK_HIP(hipFree(bf.a));
    duet_ctx_destroy(ctx);
    duet_ctx_destroy(NULL); /* a no-op */
    if (t.rank == 0)
        printf("%d passed, %d failed\n", t.passed, t.failed);
    MPI_Finalize();
    return t.failed ? 1 : 0;
}
