/*
 * `duet predict --emit`'s copy-engine settings: copy mode's counterpart in NCCL, RCCL, PyTorch and
 * the environment. Every expected line is written out by hand from the facts model/emit_copy.c cites
 * (NCCL 2.28.3: config.CTAPolicy = NCCL_CTA_POLICY_ZERO or NCCL_CTA_POLICY=2, both buffers in
 * NCCL_WIN_COLL_SYMMETRIC windows, all_gather and all_to_all of duet's collectives; "Init CE" under
 * NCCL_DEBUG_SUBSYS=INIT, "[Copy Engine]" under TUNING from 2.29; RCCL 2.28.3 the same with
 * NCCL_CUMEM_ENABLE=1 and ROCr's SDMA switches).
 */
#include <criterion/criterion.h>

#include "../test_util.h"

/* The communicator with the zero-CTA policy and both buffers in symmetric windows, as NCCL and RCCL
 * take it (the same lines for both: RCCL keeps NCCL's API). */
#define T_CE_CONFIG                                                                                                    \
    "ncclConfig_t config = NCCL_CONFIG_INITIALIZER;\n"                                                                 \
    "config.CTAPolicy = NCCL_CTA_POLICY_ZERO;  /* or NCCL_CTA_POLICY=2 */\n"                                           \
    "ncclCommInitRankConfig(&comm, nranks, id, rank, &config);\n"                                                      \
    "ncclMemAlloc(&sendbuff, sendbytes);  /* and recvbuff: windows need cuMem memory */\n"                             \
    "ncclCommWindowRegister(comm, sendbuff, sendbytes, &send_win, NCCL_WIN_COLL_SYMMETRIC);\n"                         \
    "ncclCommWindowRegister(comm, recvbuff, recvbytes, &recv_win, NCCL_WIN_COLL_SYMMETRIC);\n"

/* Copy mode on every SM with two copy streams, at the versions given (NULL: the defaults). */
static duet_status_t copy_emit(int32_t stack, const char *profile, const char *nccl, const char *rccl, int32_t coll,
                               char *buf, size_t n)
{
    duet_hw_t hw = t_hw(profile);
    duet_stack_versions_t v = duet_stack_versions_default();
    if (nccl != NULL)
        cr_assert_eq(duet_version_parse(nccl, &v.nccl), DUET_OK);
    if (rccl != NULL)
        cr_assert_eq(duet_version_parse(rccl, &v.rccl), DUET_OK);
    duet_config_t c = duet_config_default(&hw, DUET_MODE_COPY);
    c.comm_wgs = 2;
    return duet_emit_copy_settings_at(stack, &hw, &v, coll, &c, buf, n);
}

Test(emit_copy, nccl_2_28_zero_cta_policy_and_symmetric_windows, T_TIMEOUT)
{
    char got[4096];
    cr_assert_eq(copy_emit(DUET_STACK_NCCL, "h200", "2.28", NULL, DUET_COLL_ALL_GATHER, got, sizeof(got)), DUET_OK,
                 "%s", duet_last_error());
    /* H200: 132 SMs, all of them the GEMM's; 2.28 logs "Init CE" only (the TUNING line came with 2.29). */
    cr_assert_str_eq(got, "# NCCL 2.28 + cuBLASLt: all_gather on the copy engines (the zero-CTA policy), the GEMM on "
                          "all 132 SMs (no SM count target)\n" T_CE_CONFIG
                          "# the copy engines run it only on one node with direct peer access between all ranks, a "
                          "CUDA 12.5 driver or later and both buffers in symmetric windows; elsewhere NCCL runs its "
                          "SM kernels and says nothing\n"
                          "# to check: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT logs \"Init CE, rank ...\" when the "
                          "first copy-engine collective is queued; none means SM kernels ran\n");
    /* 2.29: the per-collective "[Copy Engine]" line under TUNING as well. */
    cr_assert_eq(copy_emit(DUET_STACK_NCCL, "h200", "2.29.2", NULL, DUET_COLL_ALL_TO_ALL, got, sizeof(got)), DUET_OK);
    cr_assert(strstr(got, "# NCCL 2.29.2 + cuBLASLt: all_to_all on the copy engines") == got, "%s", got);
    cr_assert(strstr(got, "# to check: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING logs \"Init CE\" once and "
                          "\"[Copy Engine]: ... -> cudaMemcpy\" on rank 0 per collective\n") != NULL,
              "%s", got);
}

Test(emit_copy, rccl_torch_and_env, T_TIMEOUT)
{
    char got[4096];
    /* RCCL 2.28.3 (ROCm 7.13) on MI300X: 304 CUs; hipBLASLt 1.4 by default; cuMem asked for by hand. */
    cr_assert_eq(copy_emit(DUET_STACK_RCCL, "mi300x", NULL, "2.28.3", DUET_COLL_ALL_GATHER, got, sizeof(got)), DUET_OK,
                 "%s", duet_last_error());
    cr_assert_str_eq(got, "# RCCL 2.28.3 + hipBLASLt 1.4: all_gather on the copy engines (the zero-CTA policy), the "
                          "GEMM on all 304 CUs (no CU count target)\n"
                          "setenv(\"NCCL_CUMEM_ENABLE\", \"1\", 1);  /* before the communicator: RCCL turns cuMem on "
                          "by itself on gfx1250 only */\n" T_CE_CONFIG
                          "# HSA_ENABLE_SDMA and HSA_ENABLE_PEER_SDMA unset or 1 (ROCr's defaults): 0 takes "
                          "device-to-device copies off the DMA engines\n"
                          "# the copy engines run it only on one node with direct peer access between all ranks and "
                          "both buffers in symmetric windows; elsewhere RCCL runs its SM kernels and says nothing\n"
                          "# to check: no documented RCCL log line names the path; a trace (rocprofv3) shows no RCCL "
                          "kernel for the collective when the copy engines ran it\n");
    /* PyTorch on NVIDIA: the policy through the environment, the tensors from symmetric memory. */
    cr_assert_eq(copy_emit(DUET_STACK_TORCH, "h200", "2.28", NULL, DUET_COLL_ALL_GATHER, got, sizeof(got)), DUET_OK);
    cr_assert_str_eq(got, "# PyTorch, NCCL 2.28 + cuBLASLt: all_gather on the copy engines (the zero-CTA policy), the "
                          "GEMM on all 132 SMs (no SM count target)\n"
                          "os.environ[\"NCCL_CTA_POLICY\"] = \"2\"  # NCCL_CTA_POLICY_ZERO, before the process group "
                          "(or its config.cta_policy where PyTorch has it)\n"
                          "torch.distributed.init_process_group(\"nccl\")\n"
                          "import torch.distributed._symmetric_memory as symm_mem\n"
                          "symm_mem.set_backend(\"NCCL\")\n"
                          "# both tensors from symm_mem.empty(...) and symm_mem.rendezvous(t, group); issue the "
                          "collective with async_op=True or on a side stream (NCCL 2.28.9 ran none on the default "
                          "stream, pytorch/pytorch#170265)\n"
                          "# the copy engines run it only on one node with direct peer access between all ranks, a "
                          "CUDA 12.5 driver or later and both buffers in symmetric windows; elsewhere NCCL runs its "
                          "SM kernels and says nothing\n"
                          "# to check: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT logs \"Init CE, rank ...\" when the "
                          "first copy-engine collective is queued; none means SM kernels ran\n");
    /* On ROCm the same, with cuMem and the unconfirmed registration said as such. */
    cr_assert_eq(copy_emit(DUET_STACK_TORCH, "mi350x", NULL, "2.28", DUET_COLL_ALL_TO_ALL, got, sizeof(got)), DUET_OK);
    cr_assert(strstr(got, "os.environ[\"NCCL_CUMEM_ENABLE\"] = \"1\"") != NULL, "%s", got);
    cr_assert(strstr(got, "# unconfirmed on ROCm:") != NULL, "%s", got);
    /* The environment alone: the policy, and that the registration is code. */
    cr_assert_eq(copy_emit(DUET_STACK_ENV, "h200", "2.28", NULL, DUET_COLL_ALL_GATHER, got, sizeof(got)), DUET_OK);
    cr_assert(strstr(got, "\nNCCL_CTA_POLICY=2\n# no environment variable registers the buffers: in code, "
                          "ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC) for both\n") != NULL,
              "%s", got);
}

Test(emit_copy, one_line_where_the_library_has_no_copy_engine_path, T_TIMEOUT)
{
    static const struct {
        int32_t stack;
        const char *profile, *nccl, *rccl;
        int32_t coll;
        const char *want;
    } cases[] = {
        /* NCCL 2.27 (the default): the zero-CTA policy is 2.28's. */
        {DUET_STACK_NCCL, "h200", NULL, NULL, DUET_COLL_ALL_GATHER,
         "# NCCL 2.27 runs no collective on the copy engines: the zero-CTA policy came with 2.28 (--nccl-version 2.28 "
         "writes its settings)\n"},
        /* Broadcast: NCCL copies all_gather, all_to_all, gather and scatter only. */
        {DUET_STACK_NCCL, "h200", "2.28", NULL, DUET_COLL_BROADCAST,
         "# NCCL 2.28 copies all_gather, all_to_all, gather and scatter on the copy engines, not broadcast: it stays "
         "on SM kernels\n"},
        /* RCCL 2.20.5 (the default, ROCm 6.2). */
        {DUET_STACK_RCCL, "mi300x", NULL, NULL, DUET_COLL_ALL_GATHER,
         "# RCCL 2.20.5 runs no collective on the copy engines: the zero-CTA policy came with 2.28 (--rccl-version "
         "2.28 writes its settings)\n"},
        {DUET_STACK_TE, "h200", "2.28", NULL, DUET_COLL_ALL_GATHER,
         "# Transformer Engine: duet writes no copy-engine settings for it (--emit torch or nccl writes NCCL's)\n"},
    };
    char got[4096];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(
            copy_emit(cases[i].stack, cases[i].profile, cases[i].nccl, cases[i].rccl, cases[i].coll, got, sizeof(got)),
            DUET_OK, "case %zu", i);
        cr_assert_str_eq(got, cases[i].want, "case %zu", i);
    }
}

Test(emit_copy, which_collectives_and_what_is_refused, T_TIMEOUT)
{
    duet_hw_t h200 = t_hw("h200"), mi300x = t_hw("mi300x");
    duet_stack_versions_t v = duet_stack_versions_default();
    const uint32_t ag_a2a = (1u << DUET_COLL_ALL_GATHER) | (1u << DUET_COLL_ALL_TO_ALL);
    cr_assert_eq(duet_stack_copy_colls(DUET_STACK_NCCL, &h200, &v), 0, "2.27: none");
    cr_assert_eq(duet_version_parse("2.28.3", &v.nccl), DUET_OK);
    cr_assert_eq(duet_version_parse("2.28.3", &v.rccl), DUET_OK);
    static const int32_t nv[] = {DUET_STACK_NCCL, DUET_STACK_TORCH, DUET_STACK_ENV};
    for (size_t i = 0; i < sizeof(nv) / sizeof(nv[0]); i++)
        cr_assert_eq(duet_stack_copy_colls(nv[i], &h200, &v), ag_a2a, "%s", duet_stack_name(nv[i]));
    cr_assert_eq(duet_stack_copy_colls(DUET_STACK_TE, &h200, &v), 0);
    cr_assert_eq(duet_stack_copy_colls(DUET_STACK_RCCL, &h200, &v), 0, "RCCL on NVIDIA");
    cr_assert_eq(duet_stack_copy_colls(DUET_STACK_RCCL, &mi300x, &v), ag_a2a);
    cr_assert_eq(duet_stack_copy_colls(DUET_STACK_NCCL, &mi300x, &v), 0, "NCCL on AMD");
    cr_assert_eq(duet_stack_copy_colls(DUET_STACK_COUNT, &h200, &v), 0);
    cr_assert_eq(duet_stack_copy_colls(DUET_STACK_NCCL, NULL, &v), 0);
    /* Vendor mode's configuration is not copy mode's; NCCL on AMD is refused as duet_stack_limits does. */
    char buf[64] = "untouched";
    duet_config_t c = duet_config_default(&h200, DUET_MODE_VENDOR);
    cr_assert_eq(duet_emit_copy_settings_at(DUET_STACK_NCCL, &h200, &v, DUET_COLL_ALL_GATHER, &c, buf, sizeof(buf)),
                 DUET_ERR_INVALID_ARG);
    c = duet_config_default(&mi300x, DUET_MODE_COPY);
    cr_assert_eq(duet_emit_copy_settings_at(DUET_STACK_NCCL, &mi300x, &v, DUET_COLL_ALL_GATHER, &c, buf, sizeof(buf)),
                 DUET_ERR_INVALID_ARG);
    /* 64 bytes do not hold the settings: refused, the text cut and terminated. */
    c = duet_config_default(&h200, DUET_MODE_COPY);
    cr_assert_eq(duet_emit_copy_settings_at(DUET_STACK_NCCL, &h200, &v, DUET_COLL_ALL_GATHER, &c, buf, sizeof(buf)),
                 DUET_ERR_INVALID_ARG);
    cr_assert(strlen(buf) < sizeof(buf));
}
