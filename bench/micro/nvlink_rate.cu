/*
 * NVLink rate of one CTA and of a few: plain 16-byte loads and stores against the bulk copy
 * engine (cp.async.bulk, sm_90), from GPU 0 to or from GPU 1's memory, one process, peer access
 * on. Why: duet's comm tiles move about 20 GB/s per CTA with plain stores and 7.6 GB/s with plain
 * loads (measured on two H200s, 2026-11), so a collective beside a GEMM needs 16-66 SMs to fill the link. If
 * the copy engine moves more per SM, a few CTAs could carry the collective and leave the GEMM the
 * rest.
 *
 *   nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -o nvlink_rate bench/micro/nvlink_rate.cu
 *   ./nvlink_rate [MiB per run, default 256 [method filter]] > nvlink_rate.json
 *
 * Each method moves the same bytes with C CTAs of 256 threads, each CTA a contiguous slice;
 * the figure is bytes / median kernel time of 7 runs (events), in GB/s. Methods:
 *   put_plainU   each thread loads U 16-byte vectors of local src, then stores them to the peer
 *   get_plainU   each thread loads U vectors of the peer's src, then stores them locally
 *   put_bulkS    thread 0: bulk-load chunks of local src into S shared-memory slots (mbarrier),
 *                bulk-store each slot to the peer (bulk groups); S slots of 16 KiB in flight
 *   get_bulkS    the same with the peer as the source and local memory as the destination
 *   put_tileU_CMxCN, get_tileU_CMxCN
 *                the plain loop over duet's comm tiles (CM x CN elements of a matrix 8192 wide)
 *   ..._generic  the same through pointers the compiler cannot trace (generic LD/ST), as duet's
 *   ..._bidir    the same on both GPUs at once, each towards the other (as a collective runs)
 */
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            fprintf(stderr, "nvlink_rate: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__);                 \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

static constexpr int THREADS = 256;
static constexpr int CHUNK = 16384; /* bytes of one bulk copy (a multiple of 16) */

template <int U> __global__ void __launch_bounds__(THREADS, 1) copy_plain(const uint4 *src, uint4 *dst, size_t n_vec)
{
    /* This CTA's slice of the vectors. */
    const size_t per = (n_vec + gridDim.x - 1) / gridDim.x;
    const size_t lo = blockIdx.x * per, hi = lo + per < n_vec ? lo + per : n_vec;
    for (size_t base = lo + threadIdx.x; base < hi; base += (size_t)THREADS * U) {
        uint4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const size_t i = base + (size_t)u * THREADS;
            if (i < hi)
                v[u] = src[i];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            const size_t i = base + (size_t)u * THREADS;
            if (i < hi)
                dst[i] = v[u];
        }
    }
}

/* duet's comm-tile access pattern: CM x CN element tiles (2-byte elements) of a matrix NC
 * elements wide, in row-major tile order, tile t on CTA t % gridDim.x; U vectors per thread in
 * flight, as backend/comm_tile.h. */
/* A pointer the compiler cannot trace to a kernel parameter: accesses through it are generic
 * (LD/ST), as duet's through its heap bases. */
template <typename T> __device__ static inline T *launder(T *p)
{
    asm volatile("mov.b64 %0, %0;" : "+l"(p));
    return p;
}

template <int U, int CM, int CN, bool GENERIC = false>
__global__ void __launch_bounds__(THREADS, 1) copy_tiles(const uint4 *src, uint4 *dst, size_t n_vec)
{
    if (GENERIC) {
        src = launder(src);
        dst = launder(dst);
    }
    constexpr int NC = 8192, VPR = CN / 8, TILE_V = CM * VPR;
    const size_t rows = n_vec * 8 / NC, tiles = rows / CM * (NC / CN);
    for (size_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const size_t tm = t / (NC / CN), tn = t % (NC / CN);
        for (int base = threadIdx.x; base < TILE_V; base += THREADS * U) {
            uint4 v[U];
            size_t off[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int i = base + u * THREADS;
                off[u] = ((tm * CM + i / VPR) * NC + tn * CN) / 8 + i % VPR;
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (base + u * THREADS < TILE_V)
                    v[u] = src[off[u]];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (base + u * THREADS < TILE_V)
                    dst[off[u]] = v[u];
        }
        __syncthreads(); /* duet's CTAs meet between tiles (the dequeue) */
    }
}

__device__ static inline uint32_t smem_addr(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* Thread 0 moves the CTA's slice through S shared-memory slots: a slot is refilled by a bulk load
 * once the bulk store that last read it has finished reading (wait_group.read), and a loaded slot
 * is stored once its mbarrier's transaction count completed. Loads run S/2 chunks ahead. */
template <int S> __global__ void __launch_bounds__(THREADS, 1) copy_bulk(const char *src, char *dst, size_t bytes)
{
    extern __shared__ __align__(128) char slots[];
    __shared__ __align__(8) uint64_t full[S];
    const size_t chunks = bytes / CHUNK;
    const size_t per = (chunks + gridDim.x - 1) / gridDim.x;
    const size_t lo = blockIdx.x * per, hi = lo + per < chunks ? lo + per : chunks;
    if (threadIdx.x != 0 || lo >= hi)
        return;
    for (int s = 0; s < S; s++)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(&full[s])) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    constexpr int LEAD = S / 2 > 0 ? S / 2 : 1;
    const size_t n = hi - lo;
    for (size_t i = 0; i < n + LEAD; i++) {
        if (i < n) {
            const int s = (int)(i % S);
            /* Stores issued so far: i - LEAD (when positive); the one of chunk i - S read this slot. */
            if (i >= (size_t)S)
                asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(S - LEAD - 1) : "memory");
            const uint32_t bar = smem_addr(&full[s]);
            asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(CHUNK) : "memory");
            asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                             smem_addr(slots + (size_t)s * CHUNK)),
                         "l"(src + (lo + i) * CHUNK), "r"(CHUNK), "r"(bar)
                         : "memory");
        }
        if (i >= (size_t)LEAD) {
            const size_t j = i - LEAD;
            const int s = (int)(j % S);
            const uint32_t bar = smem_addr(&full[s]), parity = (uint32_t)((j / S) & 1);
            asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
                         " @!p bra W;\n}" ::"r"(bar),
                         "r"(parity)
                         : "memory");
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + (lo + j) * CHUNK),
                         "r"(smem_addr(slots + (size_t)s * CHUNK)), "r"(CHUNK)
                         : "memory");
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

typedef void (*launch_fn)(int ctas, const char *src, char *dst, size_t bytes);

template <int U> static void run_plain(int ctas, const char *src, char *dst, size_t bytes)
{
    copy_plain<U><<<ctas, THREADS>>>((const uint4 *)src, (uint4 *)dst, bytes / 16);
}
template <int U, int CM, int CN, bool GENERIC = false> static void run_tiles(int ctas, const char *src, char *dst, size_t bytes)
{
    copy_tiles<U, CM, CN, GENERIC><<<ctas, THREADS>>>((const uint4 *)src, (uint4 *)dst, bytes / 16);
}
template <int S> static void run_bulk(int ctas, const char *src, char *dst, size_t bytes)
{
    copy_bulk<S><<<ctas, THREADS, S * CHUNK>>>(src, dst, bytes);
}
template <int S> static void bulk_init(void)
{
    CK(cudaFuncSetAttribute(copy_bulk<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, S * CHUNK));
}

static double median_ms(launch_fn f, int ctas, const char *src, char *dst, size_t bytes)
{
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = 0; r < 9; r++) {
        CK(cudaEventRecord(a));
        f(ctas, src, dst, bytes);
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        CK(cudaGetLastError());
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r >= 2) /* two warm-up runs */
            t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return t[t.size() / 2];
}

/* Both GPUs at once, each pushing to (or pulling from) the other; the time is the slower GPU's. */
static double median_ms_bidir(launch_fn f, int ctas, const char *src[2], char *dst[2], size_t bytes)
{
    cudaEvent_t a[2], b[2];
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaEventCreate(&a[d]));
        CK(cudaEventCreate(&b[d]));
    }
    std::vector<float> t;
    for (int r = 0; r < 9; r++) {
        for (int d = 0; d < 2; d++) {
            CK(cudaSetDevice(d));
            CK(cudaEventRecord(a[d]));
            f(ctas, src[d], dst[d], bytes);
            CK(cudaEventRecord(b[d]));
        }
        float worst = 0;
        for (int d = 0; d < 2; d++) {
            CK(cudaSetDevice(d));
            CK(cudaEventSynchronize(b[d]));
            CK(cudaGetLastError());
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, a[d], b[d]));
            worst = ms > worst ? ms : worst;
        }
        if (r >= 2)
            t.push_back(worst);
    }
    for (int d = 0; d < 2; d++) {
        CK(cudaSetDevice(d));
        CK(cudaEventDestroy(a[d]));
        CK(cudaEventDestroy(b[d]));
    }
    CK(cudaSetDevice(0));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

int main(int argc, char **argv)
{
    const size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256;
    const size_t bytes = mib << 20;
    const char *filter = argc > 2 ? argv[2] : NULL; /* only the methods whose name has this */
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    if (ndev < 2) {
        fprintf(stderr, "nvlink_rate: needs two GPUs, found %d\n", ndev);
        return 1;
    }
    int can = 0;
    CK(cudaDeviceCanAccessPeer(&can, 0, 1));
    if (!can) {
        fprintf(stderr, "nvlink_rate: GPU 0 cannot access GPU 1\n");
        return 1;
    }
    char *loc0, *loc0b, *rem1, *loc1, *rem0;
    CK(cudaSetDevice(1));
    CK(cudaDeviceEnablePeerAccess(0, 0));
    CK(cudaMalloc(&rem1, bytes));
    CK(cudaMalloc(&loc1, bytes));
    CK(cudaMemset(rem1, 1, bytes));
    CK(cudaMemset(loc1, 3, bytes));
    bulk_init<4>();
    bulk_init<8>();
    CK(cudaDeviceSynchronize());
    CK(cudaSetDevice(0));
    CK(cudaDeviceEnablePeerAccess(1, 0));
    CK(cudaMalloc(&loc0, bytes));
    CK(cudaMalloc(&loc0b, bytes));
    CK(cudaMalloc(&rem0, bytes));
    CK(cudaMemset(loc0, 2, bytes));
    bulk_init<4>();
    bulk_init<8>();
    struct method {
        const char *name;
        launch_fn f;
        bool get;
    } methods[] = {
        {"put_plain4", run_plain<4>, false}, {"put_plain8", run_plain<8>, false}, {"put_plain16", run_plain<16>, false},
        {"put_bulk4", run_bulk<4>, false},   {"put_bulk8", run_bulk<8>, false},   {"get_plain4", run_plain<4>, true},
        {"get_plain8", run_plain<8>, true},  {"get_plain16", run_plain<16>, true}, {"get_bulk4", run_bulk<4>, true},
        {"get_bulk8", run_bulk<8>, true},    {"local_plain8", run_plain<8>, false}, {"local_bulk8", run_bulk<8>, false},
        {"put_tile4_256x64", run_tiles<4, 256, 64>, false},  {"put_tile8_256x64", run_tiles<8, 256, 64>, false},
        {"put_tile4_16x1024", run_tiles<4, 16, 1024>, false}, {"get_tile4_256x64", run_tiles<4, 256, 64>, true},
        {"get_tile8_256x64", run_tiles<8, 256, 64>, true},
        {"put_tile4_256x64_generic", run_tiles<4, 256, 64, true>, false},
        {"get_tile4_256x64_generic", run_tiles<4, 256, 64, true>, true},
    };
    const int ctas_list[] = {1, 4, 8, 16, 32, 132};
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("{\n  \"device\": \"%s\",\n  \"bytes\": %zu,\n  \"threads\": %d,\n  \"bulk_chunk\": %d,\n  \"rows\": [\n",
           prop.name, bytes, THREADS, CHUNK);
    bool first = true;
    for (const method &m : methods) {
        if (filter != NULL && strstr(m.name, filter) == NULL)
            continue;
        const bool local = m.name[0] == 'l';
        const char *src = m.get ? rem1 : loc0;
        char *dst = m.get ? loc0b : (local ? loc0b : rem1);
        for (int bidir = 0; bidir < (local ? 1 : 2); bidir++)
            for (int ctas : ctas_list) {
                /* One CTA at 8 GB/s takes 33 ms for 256 MiB: fine; fewer bytes would time the launch. */
                /* GPU 1 pushes loc1 to rem0 on GPU 0, or pulls rem0 into loc1. */
                const char *srcs[2] = {src, m.get ? rem0 : loc1};
                char *dsts[2] = {dst, m.get ? loc1 : rem0};
                const double ms = bidir ? median_ms_bidir(m.f, ctas, srcs, dsts, bytes)
                                        : median_ms(m.f, ctas, src, dst, bytes);
                const double gbs = (double)bytes / (ms * 1e-3) / 1e9;
                printf("%s    {\"method\": \"%s%s\", \"ctas\": %d, \"ms\": %.4f, \"gbs\": %.1f, \"gbs_per_cta\": %.1f}",
                       first ? "" : ",\n", m.name, bidir ? "_bidir" : "", ctas, ms, gbs, gbs / ctas);
                fprintf(stderr, "%-24s %4d CTAs  %8.3f ms  %7.1f GB/s  %6.1f GB/s per CTA\n", m.name, ctas, ms,
                        gbs, gbs / ctas);
                first = false;
            }
    }
    printf("\n  ]\n}\n");
    return 0;
}
