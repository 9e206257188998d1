/*
 * duet GPU example: one GEMM with an all_gather beside it, on buffers the program allocated
 * itself, in a program that does not use MPI.
 *
 *   mpirun -np 2 build-gpu/gpu_run /tmp/job-dir         (or torchrun, srun, ...: any launcher)
 *   build-gpu/gpu_run /tmp/job-dir                      (one rank)
 *
 * The launcher gives each process its rank and the world size in the environment (torchrun:
 * RANK and WORLD_SIZE; Open MPI: OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE; PMI: PMI_RANK and
 * PMI_SIZE; none: one rank), and the ranks meet in a directory they share (a fresh one per job).
 * The backend is created through the file bootstrap; A, B, C, src and dst come from
 * hipMalloc/cudaMalloc, src and dst are registered with the context so that peers can reach them.
 *
 * The values are small integers, so every result is exact in fp16 and checkable by hand:
 *   A[i,k] = (i + k) % 3 - 1 and B[j,k] = (j + 2k) % 3 - 1 (each -1, 0 or 1), K = 192:
 *     C[i,j] = sum_k A[i,k] B[j,k], an integer of magnitude at most 192;
 *   rank r's src[i,j] = 8 (r + 1) + (i + j) % 8, so the all_gather's output row r * MC + i of
 *     every rank holds rank r's row i.
 * It prints a few values with the expected ones, and exits 0 only if all of C and dst match.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__HIPCC__) || defined(__HIP__)
#include <hip/hip_runtime.h>
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuMemcpy hipMemcpy
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuStream_t hipStream_t
#define gpuStreamCreate hipStreamCreate
#define gpuStreamDestroy hipStreamDestroy
#define gpuGetDeviceCount hipGetDeviceCount
#else
#include <cuda_runtime.h>
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuMemcpy cudaMemcpy
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuStream_t cudaStream_t
#define gpuStreamCreate cudaStreamCreate
#define gpuStreamDestroy cudaStreamDestroy
#define gpuGetDeviceCount cudaGetDeviceCount
#endif

#define DUET_BACKEND_NO_MPI /* this program knows nothing of MPI */
#include "duet/backend.h"

enum { M = 256, N = 128, K = 192, MC = 256, NC = 64 };

/* fp16 bits of a small integer and back (|v| <= 2048: exact; normal numbers only). */
static uint16_t half_of(int v)
{
    if (v == 0)
        return 0;
    uint16_t sign = v < 0 ? 0x8000u : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v), e = 0;
    while ((a >> e) > 1)
        e++;
    unsigned mant = (a << (10 - e)) & 0x3ffu; /* e <= 10 here */
    return (uint16_t)(sign | ((e + 15) << 10) | mant);
}

static double double_of(uint16_t h)
{
    int e = (h >> 10) & 0x1f;
    double m = (double)(h & 0x3ff);
    double v = e == 0 ? m / 1024.0 / 16384.0 : (1.0 + m / 1024.0) * (double)(1u << e) / 32768.0;
    return (h & 0x8000u) ? -v : v;
}

static int env_int(const char *a, const char *b, const char *c, int dflt)
{
    const char *names[3] = {a, b, c};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (v != NULL && *v != '\0')
            return atoi(v);
    }
    return dflt;
}

#define GPU_CHECK(_call)                                                                                               \
    do {                                                                                                               \
        if ((_call) != 0) {                                                                                            \
            fprintf(stderr, "duet: gpu_run: %s failed\n", #_call);                                                     \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gpu_run DIR   (DIR: a fresh directory every rank can write)\n");
        return 2;
    }
    const int rank = env_int("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", 0);
    const int world = env_int("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", 1);

    /* 1. The context, through the file bootstrap (30 s for every rank to arrive). */
    duet_bootstrap_t boot;
    duet_ctx_h ctx = NULL;
    duet_ctx_params_t prm = duet_ctx_default_params();
    prm.heap_bytes = (size_t)16 << 20; /* the heap holds only the flags here: src and dst are ours */
    duet_status_t st = duet_bootstrap_file(argv[1], rank, world, 30000, &boot);
    if (st == DUET_OK)
        st = duet_ctx_create_bootstrap(&boot, &prm, &ctx);
    if (st != DUET_OK) {
        fprintf(stderr, "duet: gpu_run: rank %d: creating the context: %s\n", rank, duet_last_error());
        return 1;
    }

    /* 2. Our buffers, on the GPU the context picked, filled with the values above. */
    const size_t src_n = (size_t)MC * NC, dst_n = src_n * (size_t)world;
    uint16_t *ha = (uint16_t *)malloc((size_t)M * K * 2), *hb = (uint16_t *)malloc((size_t)N * K * 2);
    uint16_t *hs = (uint16_t *)malloc(src_n * 2), *hc = (uint16_t *)malloc((size_t)M * N * 2);
    uint16_t *hd = (uint16_t *)malloc(dst_n * 2);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++)
            ha[i * K + k] = half_of((i + k) % 3 - 1);
    for (int j = 0; j < N; j++)
        for (int k = 0; k < K; k++)
            hb[j * K + k] = half_of((j + 2 * k) % 3 - 1);
    for (int i = 0; i < MC; i++)
        for (int j = 0; j < NC; j++)
            hs[i * NC + j] = half_of(8 * (rank + 1) + (i + j) % 8);
    void *a = NULL, *b = NULL, *c = NULL, *src = NULL, *dst = NULL;
    GPU_CHECK(gpuMalloc(&a, (size_t)M * K * 2));
    GPU_CHECK(gpuMalloc(&b, (size_t)N * K * 2));
    GPU_CHECK(gpuMalloc(&c, (size_t)M * N * 2));
    GPU_CHECK(gpuMalloc(&src, src_n * 2));
    GPU_CHECK(gpuMalloc(&dst, dst_n * 2));
    GPU_CHECK(gpuMemcpy(a, ha, (size_t)M * K * 2, gpuMemcpyHostToDevice));
    GPU_CHECK(gpuMemcpy(b, hb, (size_t)N * K * 2, gpuMemcpyHostToDevice));
    GPU_CHECK(gpuMemcpy(src, hs, src_n * 2, gpuMemcpyHostToDevice));

    /* 3. Register src and dst (collective), run, wait. */
    duet_buf_h bsrc = NULL, bdst = NULL;
    st = duet_buf_register(ctx, src, src_n * 2, &bsrc);
    if (st == DUET_OK)
        st = duet_buf_register(ctx, dst, dst_n * 2, &bdst);
    gpuStream_t stream;
    GPU_CHECK(gpuStreamCreate(&stream));
    duet_op_t op;
    memset(&op, 0, sizeof(op));
    op.wl = duet_workload_empty();
    op.wl.m = M;
    op.wl.n = N;
    op.wl.k = K;
    op.wl.mc = MC;
    op.wl.nc = NC;
    op.wl.dtype = DUET_DTYPE_FP16;
    op.wl.coll = DUET_COLL_ALL_GATHER;
    op.wl.world = world;
    /* The default configuration for this GPU, with its SMs divided among the ranks that share it
     * (the context gives rank r the GPU r % count on one node): their persistent grids must all be
     * resident at once. With a GPU per rank, this is the whole GPU. */
    duet_hw_t hw = *duet_ctx_hw(ctx);
    int count = 1;
    GPU_CHECK(gpuGetDeviceCount(&count));
    hw.n_sms /= (world + count - 1) / count;
    op.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    op.a = a;
    op.b = b;
    op.c = c;
    op.src = src;
    op.dst = dst;
    if (st == DUET_OK)
        st = duet_run(ctx, &op, stream);
    if (st == DUET_OK)
        st = duet_ctx_sync(ctx, stream);
    if (st != DUET_OK) {
        fprintf(stderr, "duet: gpu_run: rank %d: %s\n", rank, duet_ctx_last_error(ctx));
        return 1;
    }

    /* 4. Check every value, print a few. */
    GPU_CHECK(gpuMemcpy(hc, c, (size_t)M * N * 2, gpuMemcpyDeviceToHost));
    GPU_CHECK(gpuMemcpy(hd, dst, dst_n * 2, gpuMemcpyDeviceToHost));
    long bad = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            int want = 0;
            for (int k = 0; k < K; k++)
                want += ((i + k) % 3 - 1) * ((j + 2 * k) % 3 - 1);
            bad += double_of(hc[i * N + j]) != (double)want;
        }
    for (int r = 0; r < world; r++)
        for (int i = 0; i < MC; i++)
            for (int j = 0; j < NC; j++)
                bad += double_of(hd[((size_t)r * MC + i) * NC + j]) != (double)(8 * (r + 1) + (i + j) % 8);
    const int ci = 5, cj = 7, last = world - 1;
    int cwant = 0;
    for (int k = 0; k < K; k++)
        cwant += ((ci + k) % 3 - 1) * ((cj + 2 * k) % 3 - 1);
    printf(
        "rank %d of %d on %s (built for %s): C[%d,%d] = %g (expected %d), dst[%d,3] = %g (expected %d, from rank %d), "
        "%ld of %zu values wrong: %s\n",
        rank, world, duet_ctx_hw(ctx)->device, duet_backend_archs(), ci, cj, double_of(hc[ci * N + cj]), cwant,
        last * MC + 2, double_of(hd[((size_t)last * MC + 2) * NC + 3]), 8 * (last + 1) + (2 + 3) % 8, last, bad,
        (size_t)M * N + dst_n, bad == 0 ? "OK" : "FAILED");

    /* 5. Deregister (collective), free, destroy (collective). */
    (void)duet_buf_deregister(ctx, bsrc);
    (void)duet_buf_deregister(ctx, bdst);
    (void)gpuStreamDestroy(stream);
    (void)gpuFree(dst);
    (void)gpuFree(src);
    (void)gpuFree(c);
    (void)gpuFree(b);
    (void)gpuFree(a);
    duet_ctx_destroy(ctx);
    free(ha);
    free(hb);
    free(hs);
    free(hc);
    free(hd);
    return bad == 0 ? 0 : 1;
}
