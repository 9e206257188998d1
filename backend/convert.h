/*
 * fp16 / bf16 <-> fp32 conversions on raw 16-bit patterns, for device code and for the host
 * references of the GPU tests. Float to 16-bit rounds to nearest even on both sides, so a host
 * reference that adds in the same order as a kernel reproduces its bits.
 *
 * Device code uses the vendor's conversion instructions; host code uses the portable bit
 * arithmetic below, which implements the same IEEE rounding (the GPU tests compare the two).
 */
#ifndef DUET_BACKEND_CONVERT_H
#define DUET_BACKEND_CONVERT_H

#include <stdint.h>
#include <string.h>

#include "backend/gpu.h"
#include "duet/types.h"

#define DUET_CVT static inline __host__ __device__

DUET_CVT uint32_t duet_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof(u));
    return u;
}

DUET_CVT float duet_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof(f));
    return f;
}

/* ---- portable versions (host) ------------------------------------------------------------ */

DUET_CVT float duet_sw_bf16_to_f32(uint16_t h)
{
    return duet_bits_f32((uint32_t)h << 16);
}

DUET_CVT uint16_t duet_sw_f32_to_bf16(float f)
{
    uint32_t u = duet_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet and signed */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7fffu + ((u >> 16) & 1u); /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

DUET_CVT float duet_sw_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {
        /* Zero or subnormal: m * 2^-24 is exact in fp32. */
        float v = (float)m * 5.9604644775390625e-8f;
        return duet_bits_f32(duet_f32_bits(v) | sign);
    }
    if (e == 31)
        return duet_bits_f32(sign | 0x7f800000u | (m << 13));
    return duet_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

DUET_CVT uint16_t duet_sw_f32_to_f16(float f)
{
    uint32_t x = duet_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) /* Inf or NaN */
        return (uint16_t)(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (x >= 0x477ff000u) /* at or above the midpoint between 65504 and 65536: rounds to Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (x < 0x38800000u) {
        /* Below 2^-14: a subnormal half, q = value / 2^-24 rounded to nearest even. */
        if (x <= 0x33000000u) /* <= 2^-25: rounds to zero (the tie goes to even 0) */
            return sign;
        uint32_t e = x >> 23, m = (x & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14..24 */
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    uint32_t r = x - 0x38000000u; /* rebias the exponent from 127 to 15 */
    r = (r + 0xfffu + ((r >> 13) & 1u)) >> 13;
    return (uint16_t)(sign | r);
}

/* ---- dispatch: device instructions in device code, the portable versions on the host ---- */

DUET_CVT float duet_to_f32(uint16_t h, int dtype)
{
#if defined(DUET_DEVICE_PASS)
    if (dtype == DUET_DTYPE_BF16)
        return duet_sw_bf16_to_f32(h); /* a shift: the same on every vendor */
#if defined(DUET_GPU_NVIDIA)
    return __half2float(__ushort_as_half(h));
#else
    _Float16 v;
    memcpy(&v, &h, sizeof(v));
    return (float)v;
#endif
#else
    return dtype == DUET_DTYPE_BF16 ? duet_sw_bf16_to_f32(h) : duet_sw_f16_to_f32(h);
#endif
}

DUET_CVT uint16_t duet_from_f32(float f, int dtype)
{
#if defined(DUET_DEVICE_PASS)
#if defined(DUET_GPU_NVIDIA)
    if (dtype == DUET_DTYPE_BF16)
        return __bfloat16_as_ushort(__float2bfloat16_rn(f));
    return __half_as_ushort(__float2half_rn(f));
#else
    if (dtype == DUET_DTYPE_BF16)
        return duet_sw_f32_to_bf16(f);
    _Float16 v = (_Float16)f;
    uint16_t h;
    memcpy(&h, &v, sizeof(h));
    return h;
#endif
#else
    return dtype == DUET_DTYPE_BF16 ? duet_sw_f32_to_bf16(f) : duet_sw_f32_to_f16(f);
#endif
}

#endif /* DUET_BACKEND_CONVERT_H */
