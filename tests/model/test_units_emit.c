/*
 * Sizes and bandwidths as nccl-tests reports them (its performance notes, "Performance reported by NCCL tests"), sizes
 * in bytes on the command line, the CTA split in words, and the vendor settings `duet predict --emit` writes. Every
 * expected number and line below is worked out by hand from the definitions, in the comments.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

Test(units, nccl_tests_size_and_bus_factor_per_collective, T_TIMEOUT)
{
    /* src 4096 x 8192 bf16 = 4096 * 8192 * 2 = 67108864 bytes (64 MiB) per rank. */
    const double src = 67108864.0;
    duet_workload_t ag = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 4096, 8192, 4);
    duet_workload_t ar = t_wl(0, 0, 0, DUET_COLL_ALL_REDUCE, 4096, 8192, 4);
    duet_workload_t rs = t_wl(0, 0, 0, DUET_COLL_REDUCE_SCATTER, 4096, 8192, 4);
    duet_workload_t a2a = t_wl(0, 0, 0, DUET_COLL_ALL_TO_ALL, 4096, 8192, 4);
    duet_workload_t bc = t_wl(0, 0, 0, DUET_COLL_BROADCAST, 4096, 8192, 4);
    /* all_gather: S = sendcount x n = 4 sources; the others one source-sized buffer. */
    cr_assert_eq(duet_coll_bytes(&ag), 4 * src);
    cr_assert_eq(duet_coll_bytes(&ar), src);
    cr_assert_eq(duet_coll_bytes(&rs), src, "reduce_scatter: recvcount x n = the input");
    cr_assert_eq(duet_coll_bytes(&a2a), src);
    cr_assert_eq(duet_coll_bytes(&bc), src);
    /* n = 4: 2(n-1)/n = 1.5, (n-1)/n = 0.75, broadcast 1. */
    cr_assert_eq(duet_coll_busbw_factor(DUET_COLL_ALL_REDUCE, 4), 1.5);
    cr_assert_eq(duet_coll_busbw_factor(DUET_COLL_ALL_GATHER, 4), 0.75);
    cr_assert_eq(duet_coll_busbw_factor(DUET_COLL_REDUCE_SCATTER, 4), 0.75);
    cr_assert_eq(duet_coll_busbw_factor(DUET_COLL_ALL_TO_ALL, 4), 0.75);
    cr_assert_eq(duet_coll_busbw_factor(DUET_COLL_BROADCAST, 4), 1.0);
    cr_assert_eq(duet_coll_busbw_factor(DUET_COLL_ALL_REDUCE, 8), 1.75, "2 * 7 / 8");
    cr_assert_eq(duet_coll_busbw_factor(DUET_COLL_NONE, 8), 0.0);
    /* all_reduce of 64 MiB in 1 ms: algbw = 67108864 / 1e-3 / 1e9 = 67.108864 GB/s; busbw x 1.5 =
     * 100.663296 GB/s. all_gather of 4 x 64 MiB in 2 ms: 134.217728 GB/s, busbw x 0.75 = 100.663296. */
    double alg, bus;
    duet_coll_bandwidth(&ar, 1e-3, &alg, &bus);
    cr_assert(fabs(alg - 67.108864) < 1e-9 && fabs(bus - 100.663296) < 1e-9, "%.9f %.9f", alg, bus);
    duet_coll_bandwidth(&ag, 2e-3, &alg, &bus);
    cr_assert(fabs(alg - 134.217728) < 1e-9 && fabs(bus - 100.663296) < 1e-9, "%.9f %.9f", alg, bus);
    duet_coll_bandwidth(&bc, 0.0, &alg, &bus);
    cr_assert(alg == 0.0 && bus == 0.0, "no time, no bandwidth");
}

Test(units, sizes_in_bytes_parse_as_nccl_tests_reads_them, T_TIMEOUT)
{
    int64_t v = -1;
    cr_assert_eq(duet_bytes_parse("64M", &v), DUET_OK);
    cr_assert_eq(v, INT64_C(67108864));
    cr_assert_eq(duet_bytes_parse("1G", &v), DUET_OK);
    cr_assert_eq(v, INT64_C(1073741824));
    cr_assert_eq(duet_bytes_parse("8K", &v), DUET_OK);
    cr_assert_eq(v, 8192);
    cr_assert_eq(duet_bytes_parse("512MiB", &v), DUET_OK);
    cr_assert_eq(v, INT64_C(536870912));
    cr_assert_eq(duet_bytes_parse("100", &v), DUET_OK);
    cr_assert_eq(v, 100);
    v = 7;
    static const char *const bad[] = {"", "M", "-1", "1.5M", "64 M", "64MB ", "64T", "99999999999999999999", "9G9"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(duet_bytes_parse(bad[i], &v), DUET_ERR_INVALID_ARG, "'%s'", bad[i]);
    cr_assert_eq(v, 7, "written only on success");
    cr_assert_eq(duet_bytes_parse("9000000000G", &v), DUET_ERR_INVALID_ARG, "overflows 63 bits");
}

Test(units, comm_bytes_give_the_shape_back, T_TIMEOUT)
{
    /* all_gather of 128 MiB over 2 ranks: 64 MiB per rank = 33554432 bf16 elements = 4096 x 8192. */
    duet_workload_t w = t_wl(0, 0, 0, DUET_COLL_ALL_GATHER, 0, 0, 2);
    cr_assert_eq(duet_workload_set_comm_bytes(&w, INT64_C(134217728)), DUET_OK, "%s", duet_last_error());
    cr_assert(w.mc == 4096 && w.nc == 8192, "%lld x %lld", (long long)w.mc, (long long)w.nc);
    cr_assert_eq(duet_coll_bytes(&w), 134217728.0);
    /* all_reduce of 6 KiB: 3072 elements; 8192, 4096 and 2048 do not divide, 1024 does: 3 x 1024. */
    w = t_wl(0, 0, 0, DUET_COLL_ALL_REDUCE, 0, 0, 2);
    cr_assert_eq(duet_workload_set_comm_bytes(&w, 6144), DUET_OK);
    cr_assert(w.mc == 3 && w.nc == 1024, "%lld x %lld", (long long)w.mc, (long long)w.nc);
    /* reduce_scatter over 8 ranks of 8 x 8192 x 2 bytes: rows 8, a multiple of 8. */
    w = t_wl(0, 0, 0, DUET_COLL_REDUCE_SCATTER, 0, 0, 8);
    cr_assert_eq(duet_workload_set_comm_bytes(&w, 131072), DUET_OK);
    cr_assert(w.mc == 8 && w.nc == 8192);
    /* 3 bytes of bf16: not whole elements; the workload is left as it was. */
    w = t_wl(0, 0, 0, DUET_COLL_ALL_REDUCE, 5, 7, 2);
    cr_assert_eq(duet_workload_set_comm_bytes(&w, 3), DUET_ERR_INVALID_ARG);
    cr_assert(w.mc == 5 && w.nc == 7);
}

Test(units, split_words_say_what_runs, T_TIMEOUT)
{
    char b[48];
    duet_config_t c = {.mode = DUET_MODE_FUSED, .num_wgs = 132, .gemm_wgs = 132, .comm_wgs = 0};
    cr_assert_str_eq(duet_config_split_str(&c, b, sizeof(b)), "132+0 steal");
    c = (duet_config_t){.mode = DUET_MODE_CONCURRENT, .num_wgs = 132, .gemm_wgs = 100, .comm_wgs = 32};
    cr_assert_str_eq(duet_config_split_str(&c, b, sizeof(b)), "100|32");
    c.mode = DUET_MODE_VENDOR;
    cr_assert_str_eq(duet_config_split_str(&c, b, sizeof(b)), "100 SM|32");
}

/* The vendor configuration the golden texts are for: GEMM on 121 of H200's 132 SMs, comm on 11 CTAs. */
static void emit_of(int32_t stack, char *buf, size_t n)
{
    duet_hw_t hw = t_hw("h200");
    cr_assert_eq(hw.n_sms, 132);
    duet_config_t c = duet_config_default(&hw, DUET_MODE_VENDOR);
    c.gemm_wgs = 121;
    c.comm_wgs = 11;
    cr_assert_eq(duet_emit_settings(stack, &hw, &c, buf, n), DUET_OK, "%s", duet_last_error());
}

Test(emit, golden_settings_per_stack, T_TIMEOUT)
{
    char got[4096];
    /* NCCL: minCTAs = maxCTAs = 11 pins the collective's CTAs; cuBLASLt's SM target 121. */
    emit_of(DUET_STACK_NCCL, got, sizeof(got));
    cr_assert_str_eq(got, "# NCCL + cuBLASLt: the collective on 11 CTAs; the GEMM on 121 of the 132 SMs\n"
                          "ncclConfig_t config = NCCL_CONFIG_INITIALIZER;\n"
                          "config.minCTAs = 11;\n"
                          "config.maxCTAs = 11;\n"
                          "ncclCommInitRankConfig(&comm, nranks, id, rank, &config);\n"
                          "int32_t sm_target = 121;\n"
                          "cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, "
                          "sizeof(sm_target));\n");
    /* RCCL reads the same communicator config; hipBLASLt has no CU target: 132 - 121 = 11 CUs. */
    emit_of(DUET_STACK_RCCL, got, sizeof(got));
    cr_assert_str_eq(got,
                     "# RCCL + hipBLASLt: the collective on 11 CTAs; the GEMM on 121 of the 132 CUs\n"
                     "ncclConfig_t config = NCCL_CONFIG_INITIALIZER;\n"
                     "config.minCTAs = 11;\n"
                     "config.maxCTAs = 11;\n"
                     "ncclCommInitRankConfig(&comm, nranks, id, rank, &config);\n"
                     "# hipBLASLt has no CU-count target (no counterpart of CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET): "
                     "the GEMM cannot be told to leave 11 CUs to the collective, so this split is not reachable "
                     "through hipBLASLt's API\n");
    /* PyTorch: the carve-out is the SMs withheld from the matmul, 132 - 121 = 11. */
    emit_of(DUET_STACK_TORCH, got, sizeof(got));
    cr_assert_str_eq(got, "# PyTorch: the NCCL process group on 11 CTAs; cuBLASLt matmuls on 121 of 132 SMs\n"
                          "opts = torch.distributed.ProcessGroupNCCL.Options()\n"
                          "opts.config.min_ctas = 11\n"
                          "opts.config.max_ctas = 11\n"
                          "torch.distributed.init_process_group(\"nccl\", pg_options=opts)\n"
                          "torch._C._set_sm_carveout_experimental(11)  # private API: SMs left out of matmul plans\n");
    /* Transformer Engine: NVTE_EXT_MARGIN_SM withholds 11 SMs from its GEMMs. */
    emit_of(DUET_STACK_TE, got, sizeof(got));
    cr_assert_str_eq(got, "# Transformer Engine: its GEMMs on 121 of 132 SMs; the collective through NCCL on 11 CTAs\n"
                          "NVTE_EXT_MARGIN_SM=11\n"
                          "NCCL_MIN_CTAS=11\n"
                          "NCCL_MAX_CTAS=11\n"
                          "# userbuffers bulk overlap instead: ub_cfgs entry {\"method\": \"bulk\", \"num_sm\": 11, "
                          "\"set_sm_margin\": True} (TE's own comm kernel, which duet does not model)\n");
    emit_of(DUET_STACK_ENV, got, sizeof(got));
    cr_assert_str_eq(got, "NCCL_MIN_CTAS=11\n"
                          "NCCL_MAX_CTAS=11\n"
                          "NVTE_EXT_MARGIN_SM=11\n"
                          "# no environment variable sets cuBLASLt's SM target: in code, "
                          "CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = 121\n");
}

Test(emit, refuses_what_it_cannot_express, T_TIMEOUT)
{
    duet_hw_t hw = t_hw("h200");
    duet_config_t c = duet_config_default(&hw, DUET_MODE_FUSED);
    char buf[4096] = "untouched";
    cr_assert_eq(duet_emit_settings(DUET_STACK_NCCL, &hw, &c, buf, sizeof(buf)), DUET_ERR_INVALID_ARG,
                 "duet's own modes have no vendor settings");
    c = duet_config_default(&hw, DUET_MODE_VENDOR);
    cr_assert_eq(duet_emit_settings(DUET_STACK_COUNT, &hw, &c, buf, sizeof(buf)), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_emit_settings(DUET_STACK_NCCL, &hw, &c, buf, 40), DUET_ERR_INVALID_ARG, "too small a buffer");
    cr_assert(strlen(buf) < 40, "cut, terminated");
    int32_t s = -1;
    cr_assert_eq(duet_stack_parse("torch", &s), DUET_OK);
    cr_assert_eq(s, DUET_STACK_TORCH);
    cr_assert_str_eq(duet_stack_name(s), "torch");
    cr_assert_eq(duet_stack_parse("megatron", &s), DUET_ERR_INVALID_ARG);
}
