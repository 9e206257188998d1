/*
 * Device utilities for host C code (include/duet/measure.h): device buffers, random fills, the
 * device's description, two streams and event timing, so that the measurement code and the GPU
 * commands need no GPU headers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/convert.h"
#include "backend/ctx.h"
#include "duet/measure.h"

duet_status_t duet_gpu_malloc(size_t bytes, void **ptr_p)
{
    void *p = NULL;
    hipError_t e = hipMalloc(&p, bytes ? bytes : 1);
    if (e != hipSuccess)
        return duet__error(DUET_ERR_NO_MEMORY, "cannot allocate %zu bytes on the GPU: %s", bytes, hipGetErrorString(e));
    *ptr_p = p;
    return DUET_OK;
}

void duet_gpu_free(void *ptr)
{
    if (ptr)
        (void)hipFree(ptr);
}

/* splitmix64: a fast, well-mixed hash of (seed, index); uniform bits without state. */
__device__ static inline uint64_t duet__fill_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

__global__ void duet__fill_kernel(uint16_t *p, size_t n, int32_t dtype, uint64_t seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        /* 24 random bits -> [-1, 1); exact zeros are replaced so an unwritten output shows. */
        float f = (float)(duet__fill_mix(seed ^ (i * 0x632be59bd9b4e019ull)) >> 40) * (2.0f / 16777216.0f) - 1.0f;
        if (f == 0.0f)
            f = 0.5f;
        /* Rounded to nearest even (backend/convert.h). */
        p[i] = duet_from_f32(f, dtype);
    }
}

duet_status_t duet_gpu_fill_random(void *ptr, size_t n, int32_t dtype, uint64_t seed, void *stream)
{
    if (n == 0)
        return DUET_OK;
    size_t blocks = (n + 255) / 256;
    if (blocks > 65536)
        blocks = 65536;
    duet__fill_kernel<<<(unsigned)blocks, 256, 0, (hipStream_t)stream>>>((uint16_t *)ptr, n, dtype, seed);
    hipError_t e = hipGetLastError();
    if (e != hipSuccess)
        return duet__error(DUET_ERR_BACKEND, "random fill: %s", hipGetErrorString(e));
    return DUET_OK;
}

duet_status_t duet_gpu_describe(int device, duet_gpu_info_t *info_p)
{
    duet_status_t st = DUET_OK;
    duet_gpu_info_t in;
    hipDeviceProp_t prop;
    int dv = 0, rv = 0;
    const char *rt;
    memset(&in, 0, sizeof(in));
    HIP_CHECK(hipGetDeviceProperties(&prop, device), st, out);
    /* prop.name has room for 256 bytes; a name longer than ours is cut. */
    snprintf(in.name, sizeof(in.name), "%.*s", (int)sizeof(in.name) - 1, prop.name);
#if defined(DUET_GPU_AMD)
    snprintf(in.arch, sizeof(in.arch), "%.*s", (int)sizeof(in.arch) - 1, prop.gcnArchName);
    rt = "HIP";
#else
    snprintf(in.arch, sizeof(in.arch), "sm_%d%d", prop.major, prop.minor);
    rt = "CUDA";
#endif
    in.sms = prop.multiProcessorCount;
    (void)hipDriverGetVersion(&dv);
    (void)hipRuntimeGetVersion(&rv);
    snprintf(in.driver, sizeof(in.driver), "%s driver API %d.%d", rt, dv / 1000, dv % 1000 / 10);
    snprintf(in.runtime, sizeof(in.runtime), "%s runtime %d.%d", rt, rv / 1000, rv % 1000 / 10);
    *info_p = in;
out:
    return st;
}

duet_status_t duet_gpu_streams_create(duet_gpu_streams_t *s_p)
{
    duet_status_t st = DUET_OK;
    duet_gpu_streams_t s;
    hipStream_t a = NULL, b = NULL;
    hipEvent_t e[4] = {NULL, NULL, NULL, NULL};
    HIP_CHECK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking), st, fail);
    HIP_CHECK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking), st, fail);
    for (int i = 0; i < 2; i++)
        HIP_CHECK(hipEventCreate(&e[i]), st, fail);
    for (int i = 2; i < 4; i++)
        HIP_CHECK(hipEventCreateWithFlags(&e[i], hipEventDisableTiming), st, fail);
    s.main = a;
    s.side = b;
    for (int i = 0; i < 4; i++)
        s.ev[i] = e[i];
    *s_p = s;
    return DUET_OK;
fail:
    for (int i = 3; i >= 0; i--)
        if (e[i])
            (void)hipEventDestroy(e[i]);
    if (b)
        (void)hipStreamDestroy(b);
    if (a)
        (void)hipStreamDestroy(a);
    duet__error_prefix("cannot create streams and events");
    return st;
}

void duet_gpu_streams_destroy(duet_gpu_streams_t *s)
{
    for (int i = 0; i < 4; i++)
        if (s->ev[i])
            (void)hipEventDestroy((hipEvent_t)s->ev[i]);
    if (s->main)
        (void)hipStreamDestroy((hipStream_t)s->main);
    if (s->side)
        (void)hipStreamDestroy((hipStream_t)s->side);
    memset(s, 0, sizeof(*s));
}

duet_status_t duet_gpu_time(duet_gpu_streams_t *s, duet_timed_fn fn, void *user, double *ms_p)
{
    duet_status_t st = DUET_OK;
    hipStream_t m = (hipStream_t)s->main, side = (hipStream_t)s->side;
    hipEvent_t start = (hipEvent_t)s->ev[0], stop = (hipEvent_t)s->ev[1];
    hipEvent_t fork = (hipEvent_t)s->ev[2], join = (hipEvent_t)s->ev[3];
    float ms = 0;
    HIP_CHECK(hipEventRecord(start, m), st, out);
    HIP_CHECK(hipEventRecord(fork, m), st, out);
    HIP_CHECK(hipStreamWaitEvent(side, fork, 0), st, out);
    DUET_CHECK_GOTO(fn(user, m, side), st, out);
    HIP_CHECK(hipEventRecord(join, side), st, out);
    HIP_CHECK(hipStreamWaitEvent(m, join, 0), st, out);
    HIP_CHECK(hipEventRecord(stop, m), st, out);
    HIP_CHECK(hipEventSynchronize(stop), st, out);
    HIP_CHECK(hipEventElapsedTime(&ms, start, stop), st, out);
    *ms_p = ms;
out:
    return st;
}
