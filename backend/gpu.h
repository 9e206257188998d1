/*
 * The backend's one portability header.
 *
 * The source is HIP. hipcc compiles it as is against the ROCm runtime. Under nvcc the HIP names
 * the backend uses are mapped to CUDA here, because the HIP headers Debian ships do not compile
 * against CUDA 13. Besides the runtime names, this header owns every device primitive whose
 * spelling differs between the vendors: system-scope flag loads and stores, the wall clock, the
 * spin-wait pause, the asynchronous global-to-shared copy, and fp16/bf16 conversions. The GEMM
 * tile's inner matrix instruction is the only other vendor switch (backend/gemm_tile.h).
 */
#ifndef DUET_BACKEND_GPU_H
#define DUET_BACKEND_GPU_H

#include <stdint.h>

#if defined(__HIPCC__) || defined(__HIP__)
/* ------------------------------------------------------------------------------------------ */
/* AMD: HIP as is                                                                              */
/* ------------------------------------------------------------------------------------------ */
#include <hip/hip_runtime.h>
#define DUET_GPU_AMD 1
#define DUET_GPU_VENDOR "hip"
/* Wavefront width of CDNA (gfx90a, gfx94x). */
#define DUET_WARP 64
#if defined(__HIP_DEVICE_COMPILE__)
#define DUET_DEVICE_PASS 1
#endif
#define hipDevAttrSmemOptin hipDeviceAttributeSharedMemPerBlockOptin
#define hipDevAttrSmCount hipDeviceAttributeMultiprocessorCount
/* Kernel parameters already live in addressable constant memory on AMD. */
#define __grid_constant__

#elif defined(__CUDACC__)
/* ------------------------------------------------------------------------------------------ */
/* NVIDIA: the HIP names used by the backend, spelled in CUDA                                  */
/* ------------------------------------------------------------------------------------------ */
#include <cuda.h> /* CUtensorMap (the driver entry point is looked up at run time, not linked) */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define DUET_GPU_NVIDIA 1
#define DUET_GPU_VENDOR "cuda"
#define DUET_WARP 32
#if defined(__CUDA_ARCH__)
#define DUET_DEVICE_PASS 1
#endif

#define hipError_t cudaError_t
#define hipSuccess cudaSuccess
#define hipErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define hipErrorInvalidValue cudaErrorInvalidValue
#define hipGetErrorString cudaGetErrorString
#define hipGetErrorName cudaGetErrorName
#define hipGetLastError cudaGetLastError
#define hipGetDeviceCount cudaGetDeviceCount
#define hipSetDevice cudaSetDevice
#define hipGetDevice cudaGetDevice
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDevAttrSmemOptin cudaDevAttrMaxSharedMemoryPerBlockOptin
#define hipDevAttrSmCount cudaDevAttrMultiProcessorCount
#define hipDeviceProp_t cudaDeviceProp
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define hipDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemcpyDefault cudaMemcpyDefault
#define hipHostMalloc(_p, _bytes, _flags) cudaHostAlloc((_p), (_bytes), (_flags))
#define hipHostMallocMapped cudaHostAllocMapped
#define hipHostFree cudaFreeHost
#define hipHostGetDevicePointer cudaHostGetDevicePointer
#define hipStream_t cudaStream_t
#define hipStreamCreateWithFlags cudaStreamCreateWithFlags
#define hipStreamNonBlocking cudaStreamNonBlocking
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipStreamWaitEvent cudaStreamWaitEvent
#define hipEvent_t cudaEvent_t
#define hipEventCreateWithFlags cudaEventCreateWithFlags
#define hipEventDisableTiming cudaEventDisableTiming
#define hipEventRecord cudaEventRecord
#define hipEventDestroy cudaEventDestroy
#define hipEventCreate cudaEventCreate
#define hipEventElapsedTime cudaEventElapsedTime
#define hipEventSynchronize cudaEventSynchronize
#define hipDriverGetVersion cudaDriverGetVersion
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipIpcMemHandle_t cudaIpcMemHandle_t
#define hipIpcGetMemHandle cudaIpcGetMemHandle
#define hipIpcOpenMemHandle cudaIpcOpenMemHandle
#define hipIpcCloseMemHandle cudaIpcCloseMemHandle
#define hipIpcMemLazyEnablePeerAccess cudaIpcMemLazyEnablePeerAccess
#define hipFuncSetAttribute cudaFuncSetAttribute
#define hipFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define hipStreamCaptureStatus cudaStreamCaptureStatus
#define hipStreamCaptureStatusNone cudaStreamCaptureStatusNone
#define hipStreamCaptureStatusActive cudaStreamCaptureStatusActive
#define hipStreamIsCapturing cudaStreamIsCapturing
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamEndCapture cudaStreamEndCapture
#define hipStreamCaptureModeGlobal cudaStreamCaptureModeGlobal
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define hipGraph_t cudaGraph_t
#define hipGraphExec_t cudaGraphExec_t
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphDestroy cudaGraphDestroy
#define hipGraphNode_t cudaGraphNode_t
#define hipGraphNodeType cudaGraphNodeType
#define hipGraphGetNodes cudaGraphGetNodes
#define hipGraphNodeGetType cudaGraphNodeGetType
#define hipGraphChildGraphNodeGetGraph cudaGraphChildGraphNodeGetGraph
#define hipGraphNodeTypeKernel cudaGraphNodeTypeKernel
#define hipGraphNodeTypeMemcpy cudaGraphNodeTypeMemcpy
#define hipGraphNodeTypeGraph cudaGraphNodeTypeGraph
#define hipHostMallocDefault cudaHostAllocDefault
#else
#error "backend/gpu.h needs hipcc or nvcc"
#endif

/*
 * Whether `p` is device memory (not host, pinned host or managed memory) and of which GPU: the
 * pointer-attribute struct differs between CUDA, ROCm 5 (memoryType) and ROCm 6 (type). Memory
 * the runtime does not know reads as not device memory, whatever the runtime's own verdict.
 */
static inline void duet_gpu_ptr_device(const void *p, int *is_device, int *device)
{
    *is_device = 0;
    *device = -1;
#if defined(DUET_GPU_NVIDIA)
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    *is_device = a.type == cudaMemoryTypeDevice;
#else
    hipPointerAttribute_t a;
    if (hipPointerGetAttributes(&a, p) != hipSuccess) {
        (void)hipGetLastError();
        return;
    }
#if defined(HIP_VERSION_MAJOR) && HIP_VERSION_MAJOR >= 6
    *is_device = a.type == hipMemoryTypeDevice && !a.isManaged;
#else
    *is_device = a.memoryType == hipMemoryTypeDevice && !a.isManaged;
#endif
#endif
    *device = a.device;
}

/* Threads of every backend CTA that run tiles: 8 warps on NVIDIA, 4 wavefronts on AMD. */
#define DUET_THREADS 256

/*
 * NVIDIA: a kernel with the wgmma GEMM tile has one more warpgroup, the producer, which only
 * issues the tile's TMA loads (backend/gemm_hopper.h). It takes no part in the CTA barriers of
 * the tiles, so those are a named barrier over the DUET_THREADS tile threads (duet_dev_sync).
 */
#if defined(DUET_GPU_NVIDIA)
#define DUET_PRODUCER_THREADS 128
#else
#define DUET_PRODUCER_THREADS 0
#endif

/* ------------------------------------------------------------------------------------------ */
/* Device primitives                                                                           */
/* ------------------------------------------------------------------------------------------ */

/** Nanoseconds of a device wall clock, for bounded waits. */
__device__ static inline uint64_t duet_dev_time_ns(void)
{
#if defined(DUET_GPU_NVIDIA)
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
#else
    /* s_memrealtime counts a constant 100 MHz on gfx90a and gfx94x: 10 ns per tick. */
    return __builtin_amdgcn_s_memrealtime() * 10ull;
#endif
}

/** The SM (CU) the calling thread runs on, for measured timelines. */
__device__ static inline int32_t duet_dev_smid(void)
{
#if defined(DUET_GPU_NVIDIA)
    uint32_t id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return (int32_t)id;
#else
    return (int32_t)__smid();
#endif
}

/**
 * Barrier of the DUET_THREADS tile threads of a CTA (all of a CTA without a producer
 * warpgroup), with __syncthreads' memory ordering among them. NVIDIA: named barrier 1 (0 is
 * __syncthreads', which the producer warpgroup would have to reach too).
 */
__device__ static __forceinline__ void duet_dev_sync(void)
{
#if defined(DUET_GPU_NVIDIA)
    asm volatile("bar.sync 1, %0;" ::"n"(DUET_THREADS) : "memory");
#else
    __syncthreads();
#endif
}

/** Pause a spinning thread so that polling does not flood the memory system. */
__device__ static inline void duet_dev_pause(void)
{
#if defined(DUET_GPU_NVIDIA)
    __nanosleep(256);
#else
    __builtin_amdgcn_s_sleep(4); /* 4 x 64 clocks */
#endif
}

/** Store a flag with release semantics at system scope (visible to peer GPUs and the host). */
__device__ static inline void duet_dev_store_release_sys(uint32_t *p, uint32_t v)
{
#if defined(DUET_GPU_NVIDIA)
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
    __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
#endif
}

/** Load a flag with acquire semantics at system scope. */
__device__ static inline uint32_t duet_dev_load_acquire_sys(const uint32_t *p)
{
#if defined(DUET_GPU_NVIDIA)
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
#else
    return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_SYSTEM);
#endif
}

/** Load a device-local word with acquire semantics at device (GPU) scope. */
__device__ static inline uint32_t duet_dev_load_acquire_gpu(const uint32_t *p)
{
#if defined(DUET_GPU_NVIDIA)
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
#else
    return __hip_atomic_load(p, __ATOMIC_ACQUIRE, __HIP_MEMORY_SCOPE_AGENT);
#endif
}

/*
 * 16-byte global load of data other SMs stored: NVIDIA caches it at the global level only
 * (ld.cg: no stale L1 line); AMD's L1 is write-through and its device-scope fences invalidate
 * it, so a plain load does.
 */
__device__ static inline float4 duet_dev_ld_cg4(const float4 *p)
{
#if defined(DUET_GPU_NVIDIA)
    return __ldcg(p);
#else
    return *p;
#endif
}

/*
 * Asynchronous 16-byte global-to-shared copy. NVIDIA: cp.async with zero fill when `valid` is 0
 * (src-size 0 reads nothing). AMD: a plain 16-byte load and LDS store (CDNA has no such copy
 * engine; the stage loop in gemm_tile.h is correct either way).
 */
__device__ static inline void duet_dev_cp_async16(void *smem_dst, const void *gmem_src, bool valid)
{
#if defined(DUET_GPU_NVIDIA)
    unsigned dst = (unsigned)__cvta_generic_to_shared(smem_dst);
    int bytes = valid ? 16 : 0;
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(gmem_src), "r"(bytes) : "memory");
#else
    uint4 v = valid ? *(const uint4 *)gmem_src : make_uint4(0, 0, 0, 0);
    *(uint4 *)smem_dst = v;
#endif
}

/*
 * Asynchronous 4-byte global-to-shared copy (both addresses 4-byte aligned), zero-filled when
 * `valid` is 0: the GEMM tile's loads where K is even but not a multiple of 8, whose rows start
 * on 4 bytes only. NVIDIA: cp.async.ca (the 4- and 8-byte sizes exist only with .ca). AMD: a
 * plain load and LDS store, as duet_dev_cp_async16.
 */
__device__ static inline void duet_dev_cp_async4(void *smem_dst, const void *gmem_src, bool valid)
{
#if defined(DUET_GPU_NVIDIA)
    unsigned dst = (unsigned)__cvta_generic_to_shared(smem_dst);
    int bytes = valid ? 4 : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(gmem_src), "r"(bytes) : "memory");
#else
    *(uint32_t *)smem_dst = valid ? *(const uint32_t *)gmem_src : 0u;
#endif
}

__device__ static inline void duet_dev_cp_async_commit(void)
{
#if defined(DUET_GPU_NVIDIA)
    asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}

/** Wait until at most N committed copy groups are still in flight. */
template <int N> __device__ static inline void duet_dev_cp_async_wait(void)
{
#if defined(DUET_GPU_NVIDIA)
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

#endif /* DUET_BACKEND_GPU_H */
