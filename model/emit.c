/*
 * A vendor-mode configuration (the GEMM's SM target beside a collective on a capped number of
 * CTAs) written as the settings of the stacks people run: NCCL/RCCL with cuBLASLt/hipBLASLt,
 * PyTorch, Transformer Engine, or plain environment variables. Only knobs that exist are named:
 * NCCL_MIN_CTAS / NCCL_MAX_CTAS and ncclConfig_t.minCTAs / maxCTAs (NCCL 2.17 and later; RCCL
 * reads the same), CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET (hipBLASLt has no such attribute, so the
 * AMD text says so), PyTorch's ProcessGroupNCCL.Options().config.min_ctas / max_ctas and its private
 * torch._C._set_sm_carveout_experimental (the SMs withheld from cuBLASLt's plan), and Transformer
 * Engine's NVTE_EXT_MARGIN_SM (SMs withheld from its GEMMs) and userbuffers' num_sm /
 * set_sm_margin.
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

/* Append a formatted line to buf; *len counts what it would hold, so a short buffer is detected. */
static void duet__emit_line(char *buf, size_t n, size_t *len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void duet__emit_line(char *buf, size_t n, size_t *len, const char *fmt, ...)
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

/* NCCL's (and RCCL's) environment variables that pin a collective to c CTAs (NCCL 2.17 and later). */
static void duet__emit_nccl_env(char *buf, size_t n, size_t *len, int c)
{
    duet__emit_line(buf, n, len, "NCCL_MIN_CTAS=%d", c);
    duet__emit_line(buf, n, len, "NCCL_MAX_CTAS=%d", c);
}

duet_status_t duet_emit_settings(int32_t stack, const duet_hw_t *hw, const duet_config_t *cfg, char *buf, size_t n)
{
    if (stack < 0 || stack >= DUET_STACK_COUNT)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: unknown stack %d", (int)stack);
    if (cfg == NULL || hw == NULL || buf == NULL || n == 0 || cfg->mode != DUET_MODE_VENDOR)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: needs a vendor-mode configuration and a buffer");
    const int g = cfg->gemm_wgs, c = cfg->comm_wgs, s = hw->n_sms;
    /* Vendor mode partitions the SMs: the GEMM's target and the comm grid add up to the chip. */
    const int withheld = s - g;
    size_t len = 0;
    buf[0] = '\0';
    switch (stack) {
    case DUET_STACK_NCCL:
    case DUET_STACK_RCCL:
        duet__emit_line(buf, n, &len, "# %s: the collective on %d CTAs; the GEMM on %d of the %d %s",
                        stack == DUET_STACK_NCCL ? "NCCL + cuBLASLt" : "RCCL + hipBLASLt", c, g, s,
                        stack == DUET_STACK_NCCL ? "SMs" : "CUs");
        duet__emit_line(buf, n, &len, "ncclConfig_t config = NCCL_CONFIG_INITIALIZER;");
        duet__emit_line(buf, n, &len, "config.minCTAs = %d;", c);
        duet__emit_line(buf, n, &len, "config.maxCTAs = %d;", c);
        duet__emit_line(buf, n, &len, "ncclCommInitRankConfig(&comm, nranks, id, rank, &config);");
        if (stack == DUET_STACK_NCCL) {
            duet__emit_line(buf, n, &len, "int32_t sm_target = %d;", g);
            duet__emit_line(buf, n, &len,
                            "cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, "
                            "sizeof(sm_target));");
        } else {
            duet__emit_line(
                buf, n, &len,
                "# hipBLASLt has no CU-count target (no counterpart of CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET): "
                "the GEMM cannot be told to leave %d CUs to the collective, so this split is not "
                "reachable through hipBLASLt's API",
                withheld);
        }
        break;
    case DUET_STACK_TORCH:
        duet__emit_line(buf, n, &len, "# PyTorch: the NCCL process group on %d CTAs; cuBLASLt matmuls on %d of %d SMs",
                        c, g, s);
        duet__emit_line(buf, n, &len, "opts = torch.distributed.ProcessGroupNCCL.Options()");
        duet__emit_line(buf, n, &len, "opts.config.min_ctas = %d", c);
        duet__emit_line(buf, n, &len, "opts.config.max_ctas = %d", c);
        duet__emit_line(buf, n, &len, "torch.distributed.init_process_group(\"nccl\", pg_options=opts)");
        duet__emit_line(buf, n, &len,
                        "torch._C._set_sm_carveout_experimental(%d)  # private API: SMs left out of "
                        "matmul plans",
                        withheld);
        break;
    case DUET_STACK_TE:
        duet__emit_line(buf, n, &len,
                        "# Transformer Engine: its GEMMs on %d of %d SMs; the collective through NCCL on %d CTAs", g, s,
                        c);
        duet__emit_line(buf, n, &len, "NVTE_EXT_MARGIN_SM=%d", withheld);
        duet__emit_nccl_env(buf, n, &len, c);
        duet__emit_line(buf, n, &len,
                        "# userbuffers bulk overlap instead: ub_cfgs entry {\"method\": \"bulk\", \"num_sm\": %d, "
                        "\"set_sm_margin\": True} (TE's own comm kernel, which duet does not model)",
                        c);
        break;
    default: /* DUET_STACK_ENV */
        duet__emit_nccl_env(buf, n, &len, c);
        duet__emit_line(buf, n, &len, "NVTE_EXT_MARGIN_SM=%d", withheld);
        duet__emit_line(buf, n, &len,
                        "# no environment variable sets cuBLASLt's SM target: in code, "
                        "CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = %d",
                        g);
        break;
    }
    if (len >= n)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: %zu bytes do not hold the settings (%zu)", n, len + 1);
    return DUET_OK;
}
