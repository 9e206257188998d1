/*
 * Copy mode's counterpart in the libraries people run: the collective on the copy engines through the
 * library's zero-CTA policy, the GEMM on every SM (no SM count target). Only what the versions named
 * have is written; where a fact could not be confirmed the text says so.
 *
 * Facts (each with where it was read):
 *  - NCCL 2.28.3 added ncclConfig_t.CTAPolicy = NCCL_CTA_POLICY_ZERO (0x02; NCCL_CTA_POLICY_DEFAULT
 *    0x00 and _EFFICIENCY 0x01 came with 2.27) and copy-engine collectives "for ncclAllGather,
 *    ncclAlltoAll, ncclGather, ncclScatter" where the buffers are registered into symmetric windows
 *    and the communicator has that policy (the v2.28.3-1 release notes; src/nccl.h.in). The
 *    environment variable NCCL_CTA_POLICY overrides the config: an integer in 2.28
 *    (NCCL_PARAM(CtaPolicy, "CTA_POLICY") in src/init.cc), from 2.29 also the names DEFAULT,
 *    EFFICIENCY and ZERO, with "2" still read as ZERO (getEnvCtaPolicyOnce in src/init.cc).
 *  - The path is taken only where every condition holds, else NCCL appends its kernel task with no
 *    message (src/enqueue.cc of v2.28.3-1, the test before ceCollTaskAppend): comm->symmetricSupport
 *    (every rank direct peer-to-peer, one node, NCCL_WIN_ENABLE, cuMem: src/init.cc), both the send
 *    and the receive buffer in windows registered with NCCL_WIN_COLL_SYMMETRIC
 *    (ncclCommWindowRegister(comm, buff, size, &win, flags); the memory from cuMem, e.g.
 *    ncclMemAlloc), CTAPolicy == NCCL_CTA_POLICY_ZERO, and ncclCeImplemented(): all_gather,
 *    all_to_all, gather, scatter, with a CUDA driver of 12.5 or later (src/ce_coll.cc). Broadcast and
 *    the reductions stay on SM kernels.
 *  - Which path ran: NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=INIT logs "Init CE, rank ..." when the
 *    first copy-engine collective is queued (ncclCeInit, src/ce_coll.cc, 2.28 and later; a maintainer
 *    names this check in NVIDIA/nccl-tests#341); from 2.29 NCCL_DEBUG_SUBSYS=TUNING logs
 *    "<Coll> [Copy Engine]: <bytes> Bytes -> cudaMemcpy" on rank 0 for each (src/enqueue.cc of
 *    v2.29.2-1).
 *  - PyTorch: ProcessGroupNCCL.Options().config.cta_policy = NCCL_CTA_POLICY_ZERO (pytorch/pytorch
 *    #164309, merged October 2025; the first release carrying it is not confirmed here), or
 *    NCCL_CTA_POLICY=2 in the environment; the tensors from symmetric memory with the NCCL backend
 *    (torch.distributed._symmetric_memory: set_backend("NCCL"), empty(), rendezvous()), as
 *    pytorch/pytorch#170265 tests it; that PR reports that NCCL 2.28.9 does not run copy-engine
 *    collectives on the default stream (it issues them with async_op=True or on a side stream).
 *  - RCCL: "Enable Copy Engine (CE) collectives support" in RCCL 2.28.3 for ROCm 7.13 (its
 *    CHANGELOG.md in ROCm/rocm-systems), the same opt-ins (NCCL_CTA_POLICY=2 or
 *    config.CTAPolicy = NCCL_CTA_POLICY_ZERO, both buffers registered as symmetric windows) for
 *    all_gather, all_to_all, gather and scatter; symmetric memory needs cuMem, which RCCL turns on by
 *    itself on gfx1250 only, so NCCL_CUMEM_ENABLE=1 elsewhere (the RCCL 2.31.2 CHANGELOG entry on
 *    hierarchical copy-engine collectives; AMD's Primus guide "RCCL SDMA AllGather for TorchTitan
 *    FSDP2" sets the same). ROCr's HSA_ENABLE_SDMA and HSA_ENABLE_PEER_SDMA (default 1) turn the
 *    DMA engines off for device-to-device copies when 0 (ROCR-Runtime docs, "Environment
 *    variables"). No documented log line names RCCL's path (its own tests look for "CE: rank" under
 *    NCCL_DEBUG=INFO, ROCm/rocm-systems#11214, which is not documentation).
 */
#include <stdio.h>
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

#define DUET__CE_COLLS DUET__V(2, 28, 0)      /* NCCL 2.28.3, RCCL 2.28.3: zero-CTA copy-engine collectives */
#define DUET__CE_TUNING_LOG DUET__V(2, 29, 0) /* NCCL: "[Copy Engine]" under NCCL_DEBUG_SUBSYS=TUNING */

uint32_t duet_stack_copy_colls(int32_t stack, const duet_hw_t *hw, const duet_stack_versions_t *vp)
{
    if (hw == NULL || stack < 0 || stack >= DUET_STACK_COUNT || stack == DUET_STACK_TE)
        return 0;
    const int amd = duet__hw_is_amd(hw);
    if ((amd && stack == DUET_STACK_NCCL) || (!amd && stack == DUET_STACK_RCCL))
        return 0;
    const duet_stack_versions_t v = vp != NULL ? *vp : duet_stack_versions_default();
    if ((amd ? v.rccl : v.nccl) < DUET__CE_COLLS)
        return 0;
    /* Of duet's collectives, the two the libraries copy; gather and scatter are not duet's. */
    return (1u << DUET_COLL_ALL_GATHER) | (1u << DUET_COLL_ALL_TO_ALL);
}

/* The communicator with the zero-CTA policy and both buffers in symmetric windows (NCCL and RCCL). */
static void duet__emit_ce_config(char *buf, size_t n, size_t *len)
{
    duet__emit_line(buf, n, len, "ncclConfig_t config = NCCL_CONFIG_INITIALIZER;");
    duet__emit_line(buf, n, len, "config.CTAPolicy = NCCL_CTA_POLICY_ZERO;  /* or NCCL_CTA_POLICY=2 */");
    duet__emit_line(buf, n, len, "ncclCommInitRankConfig(&comm, nranks, id, rank, &config);");
    duet__emit_line(buf, n, len, "ncclMemAlloc(&sendbuff, sendbytes);  /* and recvbuff: windows need cuMem memory */");
    duet__emit_line(buf, n, len,
                    "ncclCommWindowRegister(comm, sendbuff, sendbytes, &send_win, NCCL_WIN_COLL_SYMMETRIC);");
    duet__emit_line(buf, n, len,
                    "ncclCommWindowRegister(comm, recvbuff, recvbytes, &recv_win, NCCL_WIN_COLL_SYMMETRIC);");
}

/* PyTorch: the zero-CTA policy on the process group, the tensors from symmetric memory. */
static void duet__emit_ce_torch(char *buf, size_t n, size_t *len, int amd)
{
    duet__emit_line(buf, n, len,
                    "os.environ[\"NCCL_CTA_POLICY\"] = \"2\"  # NCCL_CTA_POLICY_ZERO, before the "
                    "process group (or its config.cta_policy where PyTorch has it)");
    if (amd)
        duet__emit_line(buf, n, len,
                        "os.environ[\"NCCL_CUMEM_ENABLE\"] = \"1\"  # symmetric windows need cuMem; RCCL turns it "
                        "on by itself on gfx1250 only");
    duet__emit_line(buf, n, len, "torch.distributed.init_process_group(\"nccl\")");
    duet__emit_line(buf, n, len, "import torch.distributed._symmetric_memory as symm_mem");
    duet__emit_line(buf, n, len, "symm_mem.set_backend(\"NCCL\")");
    duet__emit_line(buf, n, len,
                    "# both tensors from symm_mem.empty(...) and symm_mem.rendezvous(t, group); issue the "
                    "collective with async_op=True or on a side stream (NCCL 2.28.9 ran none on the default "
                    "stream, pytorch/pytorch#170265)");
    if (amd)
        duet__emit_line(buf, n, len,
                        "# unconfirmed on ROCm: that PyTorch's NCCL symmetric-memory backend registers "
                        "RCCL windows the same way");
}

/* Where the library runs its SM kernels instead, and how to tell which path ran. */
static void duet__emit_ce_check(char *buf, size_t n, size_t *len, int amd, int32_t ver)
{
    const char *lib = amd ? "RCCL" : "NCCL";
    if (amd)
        duet__emit_line(buf, n, len,
                        "# HSA_ENABLE_SDMA and HSA_ENABLE_PEER_SDMA unset or 1 (ROCr's defaults): 0 takes "
                        "device-to-device copies off the DMA engines");
    duet__emit_line(buf, n, len,
                    "# the copy engines run it only on one node with direct peer access between all ranks%s and "
                    "both buffers in symmetric windows; elsewhere %s runs its SM kernels and says nothing",
                    amd ? "" : ", a CUDA 12.5 driver or later", lib);
    if (amd)
        duet__emit_line(buf, n, len,
                        "# to check: no documented RCCL log line names the path; a trace (rocprofv3) shows no "
                        "RCCL kernel for the collective when the copy engines ran it");
    else if (ver >= DUET__CE_TUNING_LOG)
        duet__emit_line(buf, n, len,
                        "# to check: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING logs \"Init CE\" once and "
                        "\"[Copy Engine]: ... -> cudaMemcpy\" on rank 0 per collective");
    else
        duet__emit_line(buf, n, len,
                        "# to check: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT logs \"Init CE, rank ...\" when the "
                        "first copy-engine collective is queued; none means SM kernels ran");
}

/* Why the library has no copy-engine path here: its version, the collective, or the stack. */
static void duet__emit_ce_none(char *buf, size_t n, size_t *len, int32_t stack, const duet_hw_t *hw,
                               const duet_stack_versions_t *v, int32_t coll)
{
    const int amd = duet__hw_is_amd(hw);
    const int32_t ver = amd ? v->rccl : v->nccl;
    char vs[16];
    duet_version_str(ver, vs, sizeof(vs));
    if (stack == DUET_STACK_TE)
        duet__emit_line(buf, n, len,
                        "# Transformer Engine: duet writes no copy-engine settings for it (--emit torch or nccl "
                        "writes NCCL's)");
    else if (ver < DUET__CE_COLLS)
        duet__emit_line(buf, n, len,
                        "# %s %s runs no collective on the copy engines: the zero-CTA policy came with 2.28 "
                        "(--%s-version 2.28 writes its settings)",
                        amd ? "RCCL" : "NCCL", vs, amd ? "rccl" : "nccl");
    else
        duet__emit_line(buf, n, len,
                        "# %s %s copies all_gather, all_to_all, gather and scatter on the copy engines, not %s: "
                        "it stays on SM kernels",
                        amd ? "RCCL" : "NCCL", vs, duet_collective_name(coll));
}

duet_status_t duet_emit_copy_settings_at(int32_t stack, const duet_hw_t *hw, const duet_stack_versions_t *vp,
                                         int32_t coll, const duet_config_t *cfg, char *buf, size_t n)
{
    if (cfg == NULL || hw == NULL || buf == NULL || n == 0 || cfg->mode != DUET_MODE_COPY)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: needs a copy-mode configuration and a buffer");
    duet_stack_limits_t lim;
    DUET_CHECK(duet_stack_limits(stack, hw, vp, &lim));
    const duet_stack_versions_t v = vp != NULL ? *vp : duet_stack_versions_default();
    const int amd = duet__hw_is_amd(hw);
    const int32_t ver = amd ? v.rccl : v.nccl;
    size_t len = 0;
    buf[0] = '\0';
    if (coll < 0 || coll >= 32 || !(duet_stack_copy_colls(stack, hw, &v) & (1u << coll))) {
        duet__emit_ce_none(buf, n, &len, stack, hw, &v, coll);
    } else {
        duet__emit_line(buf, n, &len,
                        "# %s%s: %s on the copy engines (the zero-CTA policy), the GEMM on all %d %s (no %s count "
                        "target)",
                        stack == DUET_STACK_TORCH ? "PyTorch, " : "", lim.libs, duet_collective_name(coll), hw->n_sms,
                        amd ? "CUs" : "SMs", amd ? "CU" : "SM");
        if (stack == DUET_STACK_TORCH) {
            duet__emit_ce_torch(buf, n, &len, amd);
        } else if (stack == DUET_STACK_ENV) {
            duet__emit_line(buf, n, &len, "NCCL_CTA_POLICY=2");
            if (amd)
                duet__emit_line(buf, n, &len, "NCCL_CUMEM_ENABLE=1");
            duet__emit_line(buf, n, &len,
                            "# no environment variable registers the buffers: in code, ncclCommWindowRegister(..., "
                            "NCCL_WIN_COLL_SYMMETRIC) for both");
        } else {
            if (amd)
                duet__emit_line(buf, n, &len,
                                "setenv(\"NCCL_CUMEM_ENABLE\", \"1\", 1);  /* before the "
                                "communicator: RCCL turns cuMem on by itself on gfx1250 only */");
            duet__emit_ce_config(buf, n, &len);
        }
        duet__emit_ce_check(buf, n, &len, amd, ver);
    }
    if (len >= n)
        return duet__error(DUET_ERR_INVALID_ARG, "emit: %zu bytes do not hold the settings (%zu)", n, len + 1);
    return DUET_OK;
}
