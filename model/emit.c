/*
 * A vendor-mode configuration (the GEMM's SM target beside a collective on a capped number of
 * CTAs) written as the settings of the stacks people run: NCCL/RCCL with cuBLASLt/hipBLASLt,
 * PyTorch, Transformer Engine, or plain environment variables. Only settings that take effect at the
 * versions named are written: each stack's limits are the facts below, each with its source.
 *
 * Facts (read in the libraries' own source and release notes):
 *  - NCCL: ncclConfig_t.minCTAs / maxCTAs and NCCL_MIN_CTAS / NCCL_MAX_CTAS exist from 2.17
 *    (src/init.cc of v2.17.1-1, NCCL_PARAM(MaxCTAs, "MAX_CTAS")). Both are clamped to MAXCHANNELS
 *    with only a log line (src/init.cc, "cap channels if needed"); MAXCHANNELS is 32 up to 2.24 and
 *    64 from 2.25 (src/include/device.h of v2.24.3-1 and v2.25.1-1).
 *  - RCCL: the same config and environment variables, the same clamp (src/init.cc); MAXCHANNELS
 *    is 32 in 2.18.3 (ROCm 6.0), 64 in 2.18.6 (ROCm 6.1) and 128 from 2.20.5 (ROCm 6.2)
 *    (src/include/device.h at the rocm-6.0.2, rocm-6.1.0 and rocm-6.2.0 tags).
 *  - cuBLASLt: CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, the SM count its heuristic plans for.
 *  - hipBLASLt: HIPBLASLT_MATMUL_DESC_SM_COUNT_TARGET (and hipblasLtSetSmCountTarget) from 1.4.0
 *    (its CHANGELOG.md, "hipBLASLt 1.4.0"); before it there is no CU count target.
 *  - PyTorch: torch._C._set_sm_carveout_experimental(n) is read in the cuBLASLt matmul path
 *    (aten/src/ATen/cuda/CUDABlas.cpp: CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = SMs - n); on ROCm the
 *    same path runs the matmul on a stream whose CU mask leaves n CUs out (_getCarveoutStream,
 *    hipExtStreamCreateWithCUMask). So the carve-out needs the Lt path:
 *    torch.backends.cuda.preferred_blas_library("cublaslt") (hipBLASLt on ROCm).
 *  - Transformer Engine: its GEMMs get SMs - NVTE_EXT_MARGIN_SM (transformer_engine/pytorch
 *    cpp_extensions, "NVTE_EXT_MARGIN_SM"); userbuffers' overlap with set_sm_margin takes
 *    SMs - num_sm - NVTE_EXT_MARGIN_SM (common/comm_gemm_overlap: _math_sms), so the two margins add
 *    up and only one may be set; its bulk overlap runs all_gather and reduce_scatter only
 *    (CommOverlapType { RS, AG }).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

static const char *const duet__stack_names[DUET_STACK_COUNT] = {"nccl", "rccl", "torch", "te", "env"};

const char *duet_stack_name(int32_t stack)
{
    return stack >= 0 && stack < DUET_STACK_COUNT ? duet__stack_names[stack] : "?";
}

duet_status_t duet_stack_parse(const char *s, int32_t *stack_p)
{
    for (int32_t i = 0; i < DUET_STACK_COUNT; i++)
        if (s != NULL && strcmp(s, duet__stack_names[i]) == 0) {
            *stack_p = i;
            return DUET_OK;
        }
    return duet__error(DUET_ERR_INVALID_ARG, "'%s' is not nccl, rccl, torch, te or env", duet__q(s ? s : ""));
}

/* The versions the facts above name. */
#define DUET__NCCL_CONFIG_CTAS DUET__V(2, 17, 0)  /* minCTAs/maxCTAs, NCCL_MIN_CTAS/NCCL_MAX_CTAS */
#define DUET__NCCL_CHANNELS_64 DUET__V(2, 25, 0)  /* MAXCHANNELS 32 -> 64 */
#define DUET__RCCL_CHANNELS_64 DUET__V(2, 18, 6)  /* ROCm 6.1: MAXCHANNELS 32 -> 64 */
#define DUET__RCCL_CHANNELS_128 DUET__V(2, 20, 0) /* ROCm 6.2 (2.20.5): 64 -> 128 */
#define DUET__HIPBLASLT_TARGET DUET__V(1, 4, 0)   /* HIPBLASLT_MATMUL_DESC_SM_COUNT_TARGET */

duet_stack_versions_t duet_stack_versions_default(void)
{
    duet_stack_versions_t v = {DUET__V(2, 27, 0), DUET__V(2, 20, 5), DUET__V(1, 4, 0)};
    return v;
}

duet_status_t duet_version_parse(const char *s, int32_t *v_p)
{
    int part[3] = {0, 0, 0}, n = 0;
    const char *p = s;
    if (s == NULL || *s == '\0')
        return duet__error(DUET_ERR_INVALID_ARG, "empty version");
    while (n < 3) {
        if (*p < '0' || *p > '9')
            break;
        long x = 0;
        while (*p >= '0' && *p <= '9' && x < 1000)
            x = x * 10 + (*p++ - '0');
        if (x > 99)
            break;
        part[n++] = (int)x;
        if (*p != '.')
            break;
        p++;
    }
    if (n < 2 || *p != '\0')
        return duet__error(DUET_ERR_INVALID_ARG, "'%s' is not a version MAJOR.MINOR[.PATCH] (each 0 to 99)",
                           duet__q(s));
    *v_p = DUET__V(part[0], part[1], part[2]);
    return DUET_OK;
}

const char *duet_version_str(int32_t v, char *buf, size_t n)
{
    if (v % 100 != 0)
        snprintf(buf, n, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    else
        snprintf(buf, n, "%d.%d", v / 10000, v / 100 % 100);
    return buf;
}

/* AMD's architectures are named gfx*: their stacks are RCCL and hipBLASLt. */
int duet__hw_is_amd(const duet_hw_t *hw)
{
    return strncmp(hw->arch, "gfx", 3) == 0;
}

duet_status_t duet_stack_limits(int32_t stack, const duet_hw_t *hw, const duet_stack_versions_t *vp,
                                duet_stack_limits_t *lim_p)
{
    if (stack < 0 || stack >= DUET_STACK_COUNT || hw == NULL || lim_p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: unknown stack %d", (int)stack);
    const duet_stack_versions_t v = vp != NULL ? *vp : duet_stack_versions_default();
    const int amd = duet__hw_is_amd(hw);
    char cv[16], gv[16];
    duet_stack_limits_t lim;
    memset(&lim, 0, sizeof(lim));
    if (amd && (stack == DUET_STACK_NCCL || stack == DUET_STACK_TE))
        return duet__error(DUET_ERR_INVALID_ARG, "--emit %s: %s runs on NVIDIA GPUs and %s is AMD (%s): use --emit %s",
                           duet_stack_name(stack), stack == DUET_STACK_NCCL ? "NCCL" : "Transformer Engine", hw->name,
                           hw->arch, stack == DUET_STACK_NCCL ? "rccl" : "torch or env");
    if (!amd && stack == DUET_STACK_RCCL)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "--emit rccl: RCCL runs on AMD GPUs and %s is not (%s): use --emit nccl", hw->name,
                           hw->arch);
    const int32_t coll_v = amd ? v.rccl : v.nccl;
    const char *coll_lib = amd ? "RCCL" : "NCCL";
    duet_version_str(coll_v, cv, sizeof(cv));
    if (coll_v < DUET__NCCL_CONFIG_CTAS)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "--emit %s: %s %s has no minCTAs/maxCTAs (nor NCCL_MIN_CTAS/NCCL_MAX_CTAS): they came "
                           "with 2.17",
                           duet_stack_name(stack), coll_lib, cv);
    if (amd)
        lim.max_ctas = coll_v >= DUET__RCCL_CHANNELS_128 ? 128 : coll_v >= DUET__RCCL_CHANNELS_64 ? 64 : 32;
    else
        lim.max_ctas = coll_v >= DUET__NCCL_CHANNELS_64 ? 64 : 32;
    if (!amd) {
        lim.gemm_target = 1; /* cuBLASLt's SM count target; PyTorch's and TE's knobs feed it */
        snprintf(lim.libs, sizeof(lim.libs), "%s %s + cuBLASLt", coll_lib, cv);
    } else if (stack == DUET_STACK_TORCH) {
        lim.gemm_target = 1; /* the carve-out is a CU mask on the matmul's stream: no library knob needed */
        snprintf(lim.libs, sizeof(lim.libs), "%s %s + hipBLASLt", coll_lib, cv);
    } else {
        duet_version_str(v.hipblaslt, gv, sizeof(gv));
        lim.gemm_target = v.hipblaslt >= DUET__HIPBLASLT_TARGET;
        snprintf(lim.libs, sizeof(lim.libs), "%s %s + hipBLASLt %s", coll_lib, cv, gv);
        if (!lim.gemm_target)
            snprintf(lim.no_target, sizeof(lim.no_target),
                     "hipBLASLt %s has no CU count target (HIPBLASLT_MATMUL_DESC_SM_COUNT_TARGET came with 1.4), so "
                     "its GEMM cannot be kept off the collective's CUs",
                     gv);
    }
    if (stack == DUET_STACK_TE)
        lim.bulk_colls = (1u << DUET_COLL_ALL_GATHER) | (1u << DUET_COLL_REDUCE_SCATTER);
    *lim_p = lim;
    return DUET_OK;
}

/* Append a formatted line to buf; *len counts what it would hold, so a short buffer is detected. */
void duet__emit_line(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(*len < n ? buf + *len : NULL, *len < n ? n - *len : 0, fmt, ap);
    va_end(ap);
    if (w > 0)
        *len += (size_t)w;
    if (*len < n)
        buf[(*len)++] = '\n';
    else
        (*len)++;
    if (*len < n)
        buf[*len] = '\0';
}

/* NCCL's (and RCCL's) environment variables that pin a collective to c CTAs (2.17 and later). */
static void duet__emit_nccl_env(char *buf, size_t n, size_t *len, int c)
{
    duet__emit_line(buf, n, len, "NCCL_MIN_CTAS=%d", c);
    duet__emit_line(buf, n, len, "NCCL_MAX_CTAS=%d", c);
}

/* The communicator config that pins the collective to c CTAs (NCCL and RCCL alike). */
static void duet__emit_nccl_config(char *buf, size_t n, size_t *len, int c)
{
    duet__emit_line(buf, n, len, "ncclConfig_t config = NCCL_CONFIG_INITIALIZER;");
    duet__emit_line(buf, n, len, "config.minCTAs = %d;", c);
    duet__emit_line(buf, n, len, "config.maxCTAs = %d;", c);
    duet__emit_line(buf, n, len, "ncclCommInitRankConfig(&comm, nranks, id, rank, &config);");
}

duet_status_t duet_emit_settings_at(int32_t stack, const duet_hw_t *hw, const duet_stack_versions_t *v, int32_t coll,
                                    const duet_config_t *cfg, char *buf, size_t n)
{
    if (stack < 0 || stack >= DUET_STACK_COUNT)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: unknown stack %d", (int)stack);
    if (cfg == NULL || hw == NULL || buf == NULL || n == 0 || cfg->mode != DUET_MODE_VENDOR)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: needs a vendor-mode configuration and a buffer");
    duet_stack_limits_t lim;
    DUET_CHECK(duet_stack_limits(stack, hw, v, &lim));
    const int g = cfg->gemm_wgs, c = cfg->comm_wgs, s = hw->n_sms;
    const int amd = duet__hw_is_amd(hw);
    const char *unit = amd ? "CUs" : "SMs";
    if (c < 1 || c > lim.max_ctas)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: %s caps the collective at %d CTAs; %d is not reachable",
                           lim.libs, lim.max_ctas, c);
    if (!lim.gemm_target)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: %s", lim.no_target);
    /* Vendor mode partitions the SMs: the GEMM's target and the comm grid add up to the chip. */
    const int withheld = s - g;
    size_t len = 0;
    buf[0] = '\0';
    switch (stack) {
    case DUET_STACK_NCCL:
    case DUET_STACK_RCCL:
        duet__emit_line(buf, n, &len, "# %s: the collective on %d CTAs (at most %d); the GEMM on %d of the %d %s",
                        lim.libs, c, lim.max_ctas, g, s, unit);
        duet__emit_nccl_config(buf, n, &len, c);
        duet__emit_line(buf, n, &len, "int32_t sm_target = %d;", g);
        duet__emit_line(buf, n, &len,
                        "%sMatmulDescSetAttribute(desc, %s_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, "
                        "sizeof(sm_target));",
                        amd ? "hipblasLt" : "cublasLt", amd ? "HIPBLASLT" : "CUBLASLT");
        break;
    case DUET_STACK_TORCH:
        duet__emit_line(buf, n, &len,
                        "# PyTorch%s, %s: the process group on %d CTAs (at most %d); matmuls on %d of %d %s",
                        amd ? " on ROCm" : "", lim.libs, c, lim.max_ctas, g, s, unit);
        duet__emit_line(buf, n, &len, "opts = torch.distributed.ProcessGroupNCCL.Options()");
        duet__emit_line(buf, n, &len, "opts.config.min_ctas = %d", c);
        duet__emit_line(buf, n, &len, "opts.config.max_ctas = %d", c);
        duet__emit_line(buf, n, &len, "torch.distributed.init_process_group(\"nccl\", pg_options=opts)");
        duet__emit_line(buf, n, &len,
                        "torch.backends.cuda.preferred_blas_library(\"cublaslt\")  # the carve-out acts on "
                        "%s matmuls only",
                        amd ? "the hipBLASLt" : "cuBLASLt");
        if (amd)
            duet__emit_line(buf, n, &len,
                            "torch._C._set_sm_carveout_experimental(%d)  # private API: matmuls run on a stream whose "
                            "CU mask leaves %d CUs out",
                            withheld, withheld);
        else
            duet__emit_line(buf, n, &len,
                            "torch._C._set_sm_carveout_experimental(%d)  # private API: SMs left out of cuBLASLt's "
                            "matmul plans",
                            withheld);
        break;
    case DUET_STACK_TE:
        duet__emit_line(buf, n, &len,
                        "# Transformer Engine, %s: its GEMMs on %d of %d SMs; the collective through NCCL on %d CTAs "
                        "(at most %d)",
                        lim.libs, g, s, c, lim.max_ctas);
        duet__emit_line(buf, n, &len, "NVTE_EXT_MARGIN_SM=%d", withheld);
        duet__emit_nccl_env(buf, n, &len, c);
        if (coll >= 0 && coll < 32 && (lim.bulk_colls & (1u << coll)))
            duet__emit_line(buf, n, &len,
                            "# or userbuffers bulk overlap (TE's own comm kernel, which duet does not model): ub_cfgs "
                            "entry {\"method\": \"bulk\", \"num_sm\": %d, \"set_sm_margin\": True} with "
                            "NVTE_EXT_MARGIN_SM unset (TE subtracts both margins)",
                            c);
        break;
    default: /* DUET_STACK_ENV */
        duet__emit_line(buf, n, &len, "# %s: the collective on %d CTAs (at most %d); the GEMM on %d of the %d %s",
                        lim.libs, c, lim.max_ctas, g, s, unit);
        duet__emit_nccl_env(buf, n, &len, c);
        if (!amd)
            duet__emit_line(buf, n, &len, "NVTE_EXT_MARGIN_SM=%d  # Transformer Engine's GEMMs only", withheld);
        duet__emit_line(buf, n, &len,
                        "# no environment variable sets %s's SM target: in code, %s_MATMUL_DESC_SM_COUNT_TARGET = %d",
                        amd ? "hipBLASLt" : "cuBLASLt", amd ? "HIPBLASLT" : "CUBLASLT", g);
        break;
    }
    if (len >= n)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: %zu bytes do not hold the settings (%zu)", n, len + 1);
    return DUET_OK;
}

duet_status_t duet_emit_settings(int32_t stack, const duet_hw_t *hw, const duet_config_t *cfg, char *buf, size_t n)
{
    return duet_emit_settings_at(stack, hw, NULL, -1, cfg, buf, n);
}
