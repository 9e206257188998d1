/*
 * Device helpers of the GPU tests: guard bands, buffer comparison, and the GEMM reference in
 * double (tests/gpu/check.h).
 *
 * The reference runs on the GPU, not the host: a 2048 x 2048 x 1024 product is 4.3 G multiply-adds,
 * seconds per rank for one host core (and every rank of a W = 4 run computes its own), about ten
 * milliseconds for the plain shared-memory kernel below. It uses no tensor core and no library:
 * fp16/bf16 -> double conversions, double products (exact) and double sums, nothing the kernels
 * under test share. test_reference in test_gpu.hip checks it against the host's loop.
 */
#include "tests/gpu/check.h"

#include "backend/convert.h"
#include "tests/gpu/harness.h"

static unsigned long long *g_scratch; /* device word for the first-index reductions */

void duet_test_dev_init(void)
{
    CHECK_HIP(hipMalloc((void **)&g_scratch, sizeof(*g_scratch)));
}

void duet_test_dev_fini(void)
{
    CHECK_HIP(hipFree(g_scratch));
    g_scratch = NULL;
}

/* Grid-stride launch geometry: enough CTAs for any size, bounded so a launch stays cheap. */
static unsigned grid_for(size_t n)
{
    size_t b = (n + 255) / 256;
    return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

__global__ void guard_fill_kernel(uint16_t *base, size_t lo, size_t hi, size_t total)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x)
        base[i] = i >= lo && i < hi ? (uint16_t)0xffffu : duet_test_canary(i);
}

__global__ void guard_check_kernel(const uint16_t *base, size_t lo, size_t hi, size_t total, unsigned long long *first)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x)
        if ((i < lo || i >= hi) && base[i] != duet_test_canary(i))
            atomicMin(first, (unsigned long long)i);
}

__global__ void first_diff_kernel(const uint16_t *p, const uint16_t *q, size_t n, unsigned long long *first)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (p[i] != q[i])
            atomicMin(first, (unsigned long long)i);
}

/* Read the reduction's result: the first index, or -1 when nothing was found. */
static int64_t scratch_result(hipStream_t s)
{
    unsigned long long first = 0;
    CHECK_HIP(hipMemcpyAsync(&first, g_scratch, sizeof(first), hipMemcpyDeviceToHost, s));
    CHECK_HIP(hipStreamSynchronize(s));
    return first == ~0ull ? -1 : (int64_t)first;
}

void duet_test_dev_guard_fill(uint16_t *base, size_t lo, size_t hi, size_t total, hipStream_t s)
{
    if (total == 0)
        return;
    guard_fill_kernel<<<grid_for(total), 256, 0, s>>>(base, lo, hi, total);
    CHECK_HIP(hipGetLastError());
}

int64_t duet_test_dev_guard_check(const uint16_t *base, size_t lo, size_t hi, size_t total, hipStream_t s,
                                  uint16_t *got_p)
{
    CHECK_HIP(hipMemsetAsync(g_scratch, 0xff, sizeof(*g_scratch), s));
    if (total > 0) {
        guard_check_kernel<<<grid_for(total), 256, 0, s>>>(base, lo, hi, total, g_scratch);
        CHECK_HIP(hipGetLastError());
    }
    int64_t first = scratch_result(s);
    *got_p = 0;
    if (first >= 0)
        CHECK_HIP(hipMemcpy(got_p, base + first, sizeof(*got_p), hipMemcpyDeviceToHost));
    return first;
}

int64_t duet_test_dev_first_diff(const uint16_t *p, const uint16_t *q, size_t n, hipStream_t s)
{
    CHECK_HIP(hipMemsetAsync(g_scratch, 0xff, sizeof(*g_scratch), s));
    if (n > 0) {
        first_diff_kernel<<<grid_for(n), 256, 0, s>>>(p, q, n, g_scratch);
        CHECK_HIP(hipGetLastError());
    }
    return scratch_result(s);
}

/* One 16 x 16 block of C per CTA, K in steps of 16 through shared memory, one element a thread. */
#define REF_T 16
__global__ void gemm_ref_kernel(const uint16_t *a, const uint16_t *b, int64_t m, int64_t n, int64_t k, int dtype,
                                double *ref, double *p)
{
    __shared__ double as[REF_T][REF_T + 1], bs[REF_T][REF_T + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t i = (int64_t)blockIdx.y * REF_T + ty, j = (int64_t)blockIdx.x * REF_T + tx;
    /* Row ty of the block's B rows, loaded by the same thread pattern as A's. */
    const int64_t jb = (int64_t)blockIdx.x * REF_T + ty;
    double s = 0.0, sa = 0.0;
    for (int64_t k0 = 0; k0 < k; k0 += REF_T) {
        const int64_t kk = k0 + tx;
        as[ty][tx] = i < m && kk < k ? (double)duet_to_f32(a[i * k + kk], dtype) : 0.0;
        bs[ty][tx] = jb < n && kk < k ? (double)duet_to_f32(b[jb * k + kk], dtype) : 0.0;
        __syncthreads();
        for (int q = 0; q < REF_T; q++) {
            const double x = as[ty][q] * bs[tx][q];
            s += x;
            sa += fabs(x);
        }
        __syncthreads();
    }
    if (i < m && j < n) {
        ref[i * n + j] = s;
        p[i * n + j] = sa;
    }
}

void duet_test_dev_gemm_ref(const uint16_t *a, const uint16_t *b, int64_t m, int64_t n, int64_t k, int dtype,
                            double *ref, double *p, hipStream_t s)
{
    if (m <= 0 || n <= 0)
        return;
    dim3 grid((unsigned)((n + REF_T - 1) / REF_T), (unsigned)((m + REF_T - 1) / REF_T)), block(REF_T, REF_T);
    gemm_ref_kernel<<<grid, block, 0, s>>>(a, b, m, n, k, dtype, ref, p);
    CHECK_HIP(hipGetLastError());
}
