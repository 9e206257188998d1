/*
 * GPU tests of how a launcher starts the backend and hands it memory:
 *   - the architecture check's matching rule, on names derived from the vendors' rules;
 *   - a context created through duet_bootstrap_file (the ranks meet in a directory; MPI only
 *     sets the test up), which must leave that directory empty, and a bootstrap of the test's own
 *     that wraps it, whose release must be called exactly once, also when creation fails;
 *   - buffers from hipMalloc registered with duet_buf_register: at a different offset inside
 *     their allocation on every rank, two in one allocation, beside heap buffers; the operation's
 *     outputs must equal the host reference (all_gather: bit-exact) and C must equal, bit for
 *     bit, the C of the same operation on heap buffers; every refusal names its reason;
 *   - duet_run on a stream that is capturing a graph: refused with DUET_ERR_UNSUPPORTED, the
 *     capture still ends cleanly, and the context still runs operations.
 * The operation: a bf16 GEMM 192 x 160 x 136 with an all_gather of 128 x 72 per rank, fused.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "backend/gpu.h"
#include "tests/gpu/check.h"
#include "tests/gpu/test_launch.h"

extern "C" int duet__arch_match(const char *built, const char *arch);

enum { L_M = 192, L_N = 160, L_K = 136, L_MC = 128, L_NC = 72 };

/* The operation's device buffers (outside any heap), and the references on the host. */
typedef struct lbufs {
    int rank, world;
    uint16_t *a, *b, *c;  /* device */
    uint16_t *h_src;      /* this rank's src */
    uint16_t *h_dst_ref;  /* the all_gather of every rank's src */
    double *h_ref, *h_p;  /* the GEMM's double reference and sum of magnitudes */
    uint16_t *h_c, *h_c0; /* C read back; C of the first (heap) run */
    uint16_t *h_dst;      /* dst read back */
    size_t src_bytes, dst_bytes;
    hipStream_t s;
    duet_hw_t hw; /* the context's, its SMs divided among the ranks that share the GPU */
} lbufs_t;

/*
 * The profile the test's configurations come from: the context's, with its SMs divided among the
 * ranks on this GPU, as test_gpu.hip does: ranks that share a GPU (W = 2 on one H200 under MPS)
 * must all have their persistent grids resident at once, or the first waits at the entry barrier
 * for a rank whose kernel cannot start.
 */
static void lhw_init(lbufs_t *L, duet_ctx_h ctx)
{
    int devs[DUET_OP_MAX_WORLD], dev = duet_ctx_device(ctx), share = 0;
    MPI_Allgather(&dev, 1, MPI_INT, devs, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < L->world; r++)
        share += devs[r] == dev;
    L->hw = *duet_ctx_hw(ctx);
    L->hw.n_sms /= share;
}

static duet_op_t lop(duet_ctx_h ctx, const lbufs_t *L, const void *src, void *dst)
{
    (void)ctx;
    duet_op_t op;
    memset(&op, 0, sizeof(op));
    op.wl = duet_workload_empty();
    op.wl.m = L_M;
    op.wl.n = L_N;
    op.wl.k = L_K;
    op.wl.mc = L_MC;
    op.wl.nc = L_NC;
    op.wl.dtype = DUET_DTYPE_BF16;
    op.wl.coll = DUET_COLL_ALL_GATHER;
    op.wl.world = L->world;
    op.cfg = duet_config_default(&L->hw, DUET_MODE_FUSED);
    op.a = L->a;
    op.b = L->b;
    op.c = L->c;
    op.src = src;
    op.dst = dst;
    return op;
}

static void lbufs_init(lbufs_t *L, uint64_t seed)
{
    memset(L, 0, sizeof(*L));
    MPI_Comm_rank(MPI_COMM_WORLD, &L->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &L->world);
    const int dt = DUET_DTYPE_BF16;
    size_t na = (size_t)L_M * L_K, nb = (size_t)L_N * L_K, nc = (size_t)L_M * L_N, ns = (size_t)L_MC * L_NC;
    L->src_bytes = ns * 2;
    L->dst_bytes = ns * (size_t)L->world * 2;
    uint16_t *ha = (uint16_t *)malloc(na * 2), *hb = (uint16_t *)malloc(nb * 2);
    duet_test_fill(ha, na, dt, duet_test_case_seed(seed, 1, 1));
    duet_test_fill(hb, nb, dt, duet_test_case_seed(seed, 1, 2));
    L->h_ref = (double *)malloc(nc * sizeof(double));
    L->h_p = (double *)malloc(nc * sizeof(double));
    duet_test_gemm_ref(ha, hb, L->h_ref, L->h_p, L_M, L_N, L_K, dt);
    /* Rank r's src is stream (seed, 10 + r); the all_gather's row block r is exactly it. */
    L->h_src = (uint16_t *)malloc(L->src_bytes);
    L->h_dst_ref = (uint16_t *)malloc(L->dst_bytes);
    for (int r = 0; r < L->world; r++)
        duet_test_fill(L->h_dst_ref + (size_t)r * ns, ns, dt, duet_test_case_seed(seed, 1, 10 + (uint64_t)r));
    memcpy(L->h_src, L->h_dst_ref + (size_t)L->rank * ns, L->src_bytes);
    L->h_c = (uint16_t *)malloc(nc * 2);
    L->h_c0 = (uint16_t *)malloc(nc * 2);
    L->h_dst = (uint16_t *)malloc(L->dst_bytes);
    CHECK_HIP(hipStreamCreateWithFlags(&L->s, hipStreamNonBlocking));
    CHECK_HIP(hipMalloc((void **)&L->a, na * 2));
    CHECK_HIP(hipMalloc((void **)&L->b, nb * 2));
    CHECK_HIP(hipMalloc((void **)&L->c, nc * 2));
    CHECK_HIP(hipMemcpy(L->a, ha, na * 2, hipMemcpyHostToDevice));
    CHECK_HIP(hipMemcpy(L->b, hb, nb * 2, hipMemcpyHostToDevice));
    free(ha);
    free(hb);
}

static void lbufs_free(lbufs_t *L)
{
    CHECK_HIP(hipFree(L->a));
    CHECK_HIP(hipFree(L->b));
    CHECK_HIP(hipFree(L->c));
    CHECK_HIP(hipStreamDestroy(L->s));
    free(L->h_src);
    free(L->h_dst_ref);
    free(L->h_ref);
    free(L->h_p);
    free(L->h_c);
    free(L->h_c0);
    free(L->h_dst);
}

/*
 * Run the operation with src and dst where given (src filled with this rank's input first, C and
 * dst poisoned with NaN), and check C within its bound and dst bit-exact. 1: every check held
 * here (the caller's duet_test_check agrees across ranks).
 */
static int lrun(duet_test *t, duet_ctx_h ctx, lbufs_t *L, void *src, void *dst, const char *what)
{
    duet_op_t op = lop(ctx, L, src, dst);
    size_t nc = (size_t)L_M * L_N;
    CHECK_HIP(hipMemcpy(src, L->h_src, L->src_bytes, hipMemcpyHostToDevice));
    CHECK_HIP(hipMemset(dst, 0xff, L->dst_bytes));
    CHECK_HIP(hipMemset(L->c, 0xff, nc * 2));
    CHECK_HIP(hipDeviceSynchronize());
    duet_status_t st = duet_run(ctx, &op, L->s);
    if (st == DUET_OK)
        st = duet_ctx_sync(ctx, L->s);
    if (st != DUET_OK) {
        duet_test_note(t, "%s: %s: %s", what, duet_status_name(st), duet_ctx_last_error(ctx));
        return 0;
    }
    CHECK_HIP(hipMemcpy(L->h_c, L->c, nc * 2, hipMemcpyDeviceToHost));
    CHECK_HIP(hipMemcpy(L->h_dst, dst, L->dst_bytes, hipMemcpyDeviceToHost));
    for (size_t i = 0; i < nc; i++) {
        double got = duet_to_f32(L->h_c[i], DUET_DTYPE_BF16);
        if (!(fabs(got - L->h_ref[i]) <= duet_test_gemm_bound(L->h_ref[i], L->h_p[i], L_K, DUET_DTYPE_BF16))) {
            duet_test_note(t, "%s: C[%zu] = %g, reference %g", what, i, got, L->h_ref[i]);
            return 0;
        }
    }
    for (size_t i = 0; i < L->dst_bytes / 2; i++)
        if (L->h_dst[i] != L->h_dst_ref[i]) {
            duet_test_note(t, "%s: dst[%zu] = 0x%04x, expected 0x%04x (rank %zu's src)", what, i, L->h_dst[i],
                           L->h_dst_ref[i], i / ((size_t)L_MC * L_NC));
            return 0;
        }
    return 1;
}

/* Whether the last error of `ctx` (or the thread's, for NULL) contains `needle`; noted if not. */
static int lsays(duet_test *t, duet_ctx_h ctx, const char *needle)
{
    const char *msg = ctx != NULL ? duet_ctx_last_error(ctx) : duet_last_error();
    if (strstr(msg, needle) != NULL)
        return 1;
    duet_test_note(t, "expected \"%s\" in: %s", needle, msg);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */

/* The matching rule (ctx.hip), on names whose verdicts follow from the vendors' rules: AMD code
 * objects load on their own processor only, target features aside; an NVIDIA cubin for sm_XY
 * runs on sm_XZ for Z >= Y, and one for sm_XYa on sm_XY only. */
static void test_arch(duet_test *t)
{
    struct {
        const char *built, *arch;
        int ok;
    } cases[] = {
        {"gfx90a gfx940", "gfx942", 0},
        {"gfx90a gfx942", "gfx942", 1},
        {"gfx942", "gfx942:sramecc+:xnack-", 1},
        {"gfx942:xnack-", "gfx942", 1},
        {"gfx942 gfx950", "gfx950", 1},
        {"gfx942", "gfx94", 0},
        {"gfx94", "gfx942", 0},
        {"sm_90a", "sm_90", 1},
        {"sm_90a", "sm_100", 0},
        {"sm_90a", "sm_89", 0},
        {"sm_80", "sm_86", 1},
        {"sm_86", "sm_80", 0},
        {"sm_80", "sm_90", 0},
        {"", "gfx942", 0},
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        if (duet__arch_match(cases[i].built, cases[i].arch) != cases[i].ok) {
            duet_test_note(t, "arch match(\"%s\", \"%s\") != %d", cases[i].built, cases[i].arch, cases[i].ok);
            ok = 0;
        }
    duet_test_check(t, ok, "arch: the build-versus-device rule on 14 names");
    const char *built = duet_backend_archs();
#if defined(DUET_GPU_NVIDIA)
    duet_test_check(t, strcmp(built, "sm_90a") == 0, "arch: this build says it holds %s", built);
#else
    duet_test_check(t, strncmp(built, "gfx", 3) == 0, "arch: this build says it holds %s", built);
#endif
}

/* ------------------------------------------------------------------------------------------ */

/* A bootstrap of the test's own: the file provider inside, counting the calls to release. */
typedef struct counting {
    duet_bootstrap_t inner;
    int released;
} counting_t;

static int counting_allgather(void *user, const void *mine, void *all, size_t bytes)
{
    counting_t *c = (counting_t *)user;
    return c->inner.allgather(c->inner.user, mine, all, bytes);
}

static void counting_release(void *user)
{
    counting_t *c = (counting_t *)user;
    c->released++;
    if (c->inner.release != NULL)
        c->inner.release(c->inner.user);
}

static duet_bootstrap_t counting_boot(counting_t *c)
{
    duet_bootstrap_t b;
    memset(&b, 0, sizeof(b));
    b.rank = c->inner.rank;
    b.world = c->inner.world;
    b.allgather = counting_allgather;
    b.release = counting_release;
    b.user = c;
    return b;
}

/* Files left in `dir`, . and .. aside (-1: it cannot be read). */
static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    if (d == NULL)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* ------------------------------------------------------------------------------------------ */

static void test_register(duet_test *t, duet_ctx_h ctx, lbufs_t *L, void *hsrc, void *hdst)
{
    const int W = L->world, r = L->rank;
    char *big = NULL, *own = NULL, *small = NULL;
    duet_buf_h bsrc = NULL, bdst = NULL, bown = NULL, btiny = NULL, bbad = NULL;
    duet_status_t st;
    /* One allocation of 8 MiB holds src at 1 MiB + 4 KiB * rank and dst at 4 MiB + 8 KiB * (W-1-rank):
     * offsets that differ between ranks, so that a peer must use each rank's own. */
    CHECK_HIP(hipMalloc((void **)&big, (size_t)8 << 20));
    CHECK_HIP(hipMalloc((void **)&own, L->dst_bytes));
    CHECK_HIP(hipMalloc((void **)&small, (size_t)64 << 10));
    char *rsrc = big + ((size_t)1 << 20) + (size_t)4096 * (size_t)r;
    char *rdst = big + ((size_t)4 << 20) + (size_t)8192 * (size_t)(W - 1 - r);

    int ok = lrun(t, ctx, L, hsrc, hdst, "heap src and dst");
    memcpy(L->h_c0, L->h_c, (size_t)L_M * L_N * 2);
    duet_test_check(t, ok, "W=%d register: the heap run (the reference of the others)", W);

    st = duet_buf_register(ctx, rsrc, L->src_bytes, &bsrc);
    duet_test_check(t, st == DUET_OK, "W=%d register: src inside an allocation, at a rank-dependent offset", W);
    st = duet_buf_register(ctx, rdst, L->dst_bytes, &bdst);
    duet_test_check(t, st == DUET_OK, "W=%d register: dst in the same allocation (one shared mapping)", W);
    st = duet_buf_register(ctx, own, L->dst_bytes, &bown);
    duet_test_check(t, st == DUET_OK, "W=%d register: a whole allocation", W);
    if (bsrc == NULL || bdst == NULL || bown == NULL)
        goto out;

    ok = lrun(t, ctx, L, rsrc, rdst, "registered src and dst");
    ok = ok && memcmp(L->h_c, L->h_c0, (size_t)L_M * L_N * 2) == 0;
    duet_test_check(t, ok, "W=%d register: registered src and dst: dst exact, C bit-equal to the heap run's", W);
    ok = lrun(t, ctx, L, hsrc, rdst, "heap src, registered dst");
    duet_test_check(t, ok, "W=%d register: heap src, registered dst", W);
    ok = lrun(t, ctx, L, rsrc, own, "two registered allocations");
    duet_test_check(t, ok, "W=%d register: src and dst in two registered allocations", W);

    /* Refusals of duet_run: memory that is not registered, and a buffer too small. */
    {
        duet_op_t op = lop(ctx, L, rsrc, big + ((size_t)6 << 20));
        st = duet_run(ctx, &op, L->s);
        duet_test_check(t, st == DUET_ERR_INVALID_ARG && lsays(t, ctx, "duet_buf_register()"),
                        "W=%d register: dst in an unregistered part of the allocation is refused", W);
        char *tiny = big + ((size_t)7 << 20);
        st = duet_buf_register(ctx, tiny, L->dst_bytes - 256, &btiny);
        op = lop(ctx, L, rsrc, tiny);
        duet_status_t st2 = st == DUET_OK ? duet_run(ctx, &op, L->s) : st;
        duet_test_check(t,
                        st == DUET_OK && st2 == DUET_ERR_INVALID_ARG &&
                            lsays(t, ctx, "runs 256 bytes past the end of its registered buffer"),
                        "W=%d register: a dst 256 bytes too small is refused, naming the shortfall", W);
        duet_test_check(t, duet_buf_deregister(ctx, btiny) == DUET_OK, "W=%d register: deregister", W);
    }
    /* Refusals of duet_buf_register, each on every rank. */
    {
        void *host = aligned_alloc(4096, 4096);
        st = duet_buf_register(ctx, host, 4096, &bbad);
        duet_test_check(t, st == DUET_ERR_INVALID_ARG && bbad == NULL && lsays(t, ctx, "not device memory"),
                        "W=%d register: host memory is refused", W);
        /* 4 MiB: past the 64 KiB asked for and past any rounding of the allocation (2 MiB pages). */
        st = duet_buf_register(ctx, small, (size_t)4 << 20, &bbad);
        duet_test_check(t,
                        st == DUET_ERR_INVALID_ARG && bbad == NULL && lsays(t, ctx, "past the end of its allocation"),
                        "W=%d register: 4 MiB of a 64 KiB allocation is refused", W);
        st = duet_buf_register(ctx, hsrc, 4096, &bbad);
        duet_test_check(t, st == DUET_ERR_INVALID_ARG && bbad == NULL && lsays(t, ctx, "inside the symmetric heap"),
                        "W=%d register: heap memory is refused", W);
        st = duet_buf_register(ctx, small + 128, 4096, &bbad);
        duet_test_check(t, st == DUET_ERR_INVALID_ARG && bbad == NULL && lsays(t, ctx, "not aligned"),
                        "W=%d register: an unaligned start is refused", W);
        st = duet_buf_register(ctx, small, 0, &bbad);
        duet_test_check(t, st == DUET_ERR_INVALID_ARG && bbad == NULL, "W=%d register: zero bytes are refused", W);
        if (W > 1) {
            st = duet_buf_register(ctx, small, (size_t)4096 * (size_t)(1 + r), &bbad);
            duet_test_check(t, st == DUET_ERR_INVALID_ARG && bbad == NULL && lsays(t, ctx, "buffers of one size"),
                            "W=%d register: sizes that differ between ranks are refused on every rank", W);
            /* Only the last rank passes host memory: it says why, the others name it. */
            st = duet_buf_register(ctx, r == W - 1 ? host : small, 4096, &bbad);
            char who[64];
            snprintf(who, sizeof(who), "rank %d's buffer was refused", W - 1);
            duet_test_check(
                t, st == DUET_ERR_INVALID_ARG && bbad == NULL && lsays(t, ctx, r == W - 1 ? "not device memory" : who),
                "W=%d register: one rank's bad buffer fails every rank", W);
        }
        free(host);
    }
    /* The context is intact: a run after the refusals, then deregistration. */
    ok = lrun(t, ctx, L, rsrc, rdst, "registered, after the refusals");
    duet_test_check(t, ok, "W=%d register: a run after the refusals", W);
    st = duet_buf_deregister(ctx, bsrc);
    bsrc = NULL;
    {
        duet_op_t op = lop(ctx, L, rsrc, rdst);
        duet_status_t st2 = duet_run(ctx, &op, L->s);
        duet_test_check(t, st == DUET_OK && st2 == DUET_ERR_INVALID_ARG && lsays(t, ctx, "op.src"),
                        "W=%d register: a deregistered src is refused", W);
    }
    duet_test_check(t, duet_buf_deregister(ctx, NULL) == DUET_OK, "W=%d register: deregister(NULL) is a no-op", W);
out:
    duet_buf_deregister(ctx, bsrc);
    duet_buf_deregister(ctx, bdst);
    duet_buf_deregister(ctx, bown);
    CHECK_HIP(hipFree(small));
    CHECK_HIP(hipFree(own));
    CHECK_HIP(hipFree(big));
}

/* ------------------------------------------------------------------------------------------ */

static void test_graph(duet_test *t, duet_ctx_h ctx, lbufs_t *L, void *hsrc, void *hdst)
{
    const int W = L->world;
    hipGraph_t g = NULL;
    duet_op_t op = lop(ctx, L, hsrc, hdst);
    CHECK_HIP(hipStreamBeginCapture(L->s, hipStreamCaptureModeGlobal));
    duet_status_t st = duet_run(ctx, &op, L->s);
    hipError_t e = hipStreamEndCapture(L->s, &g);
    duet_test_check(t, st == DUET_ERR_UNSUPPORTED && lsays(t, ctx, "capturing a graph"),
                    "W=%d graph: duet_run on a capturing stream is refused (DUET_ERR_UNSUPPORTED)", W);
    duet_test_check(t, e == hipSuccess, "W=%d graph: the capture still ends cleanly (%s)", W, hipGetErrorString(e));
    if (g != NULL)
        CHECK_HIP(hipGraphDestroy(g));
    (void)hipGetLastError();
    duet_test_check(t, lrun(t, ctx, L, hsrc, hdst, "after the refused capture"),
                    "W=%d graph: the same stream runs the operation afterwards", W);
}

/* ------------------------------------------------------------------------------------------ */

void duet_test_launch(duet_test *t, uint64_t seed)
{
    lbufs_t L;
    char dir[64] = "/tmp/duet-boot-XXXXXX";
    duet_ctx_h ctx = NULL;
    void *hsrc = NULL, *hdst = NULL;
    lbufs_init(&L, seed);
    const int W = L.world;

    test_arch(t);

    /* The directory: made by rank 0, its name handed over by MPI (the launcher's job). */
    int made = L.rank != 0 || mkdtemp(dir) != NULL;
    MPI_Bcast(dir, (int)sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
    duet_test_check(t, made, "W=%d bootstrap: a fresh directory %s", W, dir);

    duet_ctx_params_t prm = duet_ctx_default_params();
    prm.heap_bytes = (size_t)16 << 20;

    /* A failing creation (a GPU that does not exist) through the counting wrapper: every rank
     * returns the error, and release runs once. */
    {
        counting_t c;
        memset(&c, 0, sizeof(c));
        duet_status_t st = duet_bootstrap_file(dir, L.rank, W, 20000, &c.inner);
        duet_bootstrap_t b = counting_boot(&c);
        duet_ctx_params_t bad = prm;
        bad.device = 999;
        duet_ctx_h never = NULL;
        duet_status_t st2 = st == DUET_OK ? duet_ctx_create_bootstrap(&b, &bad, &never) : st;
        duet_test_check(t, st2 == DUET_ERR_INVALID_ARG && never == NULL && c.released == 1,
                        "W=%d bootstrap: a failed creation fails every rank and releases its bootstrap once "
                        "(released %d)",
                        W, c.released);
        if (st2 != DUET_ERR_INVALID_ARG)
            duet_test_note(t, "%s: %s", duet_status_name(st2), duet_last_error());
    }
    /* The context of the remaining tests, over files only. */
    {
        counting_t *c = (counting_t *)calloc(1, sizeof(counting_t));
        duet_status_t st = duet_bootstrap_file(dir, L.rank, W, 20000, &c->inner);
        duet_bootstrap_t b = counting_boot(c);
        if (st == DUET_OK)
            st = duet_ctx_create_bootstrap(&b, &prm, &ctx);
        duet_test_check(t, st == DUET_OK && duet_ctx_rank(ctx) == L.rank && duet_ctx_world(ctx) == W,
                        "W=%d bootstrap: a context over the file bootstrap has MPI's rank and world", W);
        if (st != DUET_OK) {
            duet_test_note(t, "%s: %s", duet_status_name(st), duet_last_error());
            free(c);
            goto out;
        }
        lhw_init(&L, ctx);
        st = duet_ctx_alloc(ctx, L.src_bytes, &hsrc);
        if (st == DUET_OK)
            st = duet_ctx_alloc(ctx, L.dst_bytes, &hdst);
        duet_test_check(t, st == DUET_OK, "W=%d bootstrap: collective allocations over files", W);
        if (st != DUET_OK)
            goto out;
        test_register(t, ctx, &L, hsrc, hdst);
        test_graph(t, ctx, &L, hsrc, hdst);
        duet_ctx_destroy(ctx);
        ctx = NULL;
        duet_test_check(t, c->released == 1, "W=%d bootstrap: destroy releases the bootstrap once (%d)", W,
                        c->released);
        free(c);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        int left = L.rank == 0 ? files_in(dir) : 0;
        duet_test_check(t, left == 0, "W=%d bootstrap: every file of the exchange was removed (%d left)", W, left);
    }
out:
    duet_ctx_destroy(ctx);
    MPI_Barrier(MPI_COMM_WORLD);
    if (L.rank == 0)
        rmdir(dir);
    lbufs_free(&L);
}
