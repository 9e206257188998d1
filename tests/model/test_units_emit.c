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

/* The vendor configuration the golden texts are for: GEMM on 121 of the profile's SMs, comm on 11 CTAs
 * (H200: 132 SMs; MI300X: 304 CUs, GEMM on 293). */
static void emit_of(int32_t stack, const char *profile, int32_t coll, char *buf, size_t n)
{
    duet_hw_t hw = t_hw(profile);
    duet_config_t c = duet_config_default(&hw, DUET_MODE_VENDOR);
    c.comm_wgs = 11;
    c.gemm_wgs = hw.n_sms - 11;
    cr_assert_eq(duet_emit_settings_at(stack, &hw, NULL, coll, &c, buf, n), DUET_OK, "%s", duet_last_error());
}

Test(emit, golden_settings_per_stack, T_TIMEOUT)
{
    char got[4096];
    /* NCCL (2.27 by default, which caps CTAs at 64): minCTAs = maxCTAs = 11; cuBLASLt's SM target 121. */
    emit_of(DUET_STACK_NCCL, "h200", DUET_COLL_ALL_GATHER, got, sizeof(got));
    cr_assert_str_eq(got,
                     "# NCCL 2.27 + cuBLASLt: the collective on 11 CTAs (at most 64); the GEMM on 121 of the 132 SMs\n"
                     "ncclConfig_t config = NCCL_CONFIG_INITIALIZER;\n"
                     "config.minCTAs = 11;\n"
                     "config.maxCTAs = 11;\n"
                     "ncclCommInitRankConfig(&comm, nranks, id, rank, &config);\n"
                     "int32_t sm_target = 121;\n"
                     "cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, "
                     "sizeof(sm_target));\n");
    /* RCCL (2.20.5 by default: 128 CTAs) reads the same communicator config; hipBLASLt 1.4's CU target
     * 304 - 11 = 293. */
    emit_of(DUET_STACK_RCCL, "mi300x", DUET_COLL_ALL_GATHER, got, sizeof(got));
    cr_assert_str_eq(
        got, "# RCCL 2.20.5 + hipBLASLt 1.4: the collective on 11 CTAs (at most 128); the GEMM on 293 of the 304 "
             "CUs\n"
             "ncclConfig_t config = NCCL_CONFIG_INITIALIZER;\n"
             "config.minCTAs = 11;\n"
             "config.maxCTAs = 11;\n"
             "ncclCommInitRankConfig(&comm, nranks, id, rank, &config);\n"
             "int32_t sm_target = 293;\n"
             "hipblasLtMatmulDescSetAttribute(desc, HIPBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &sm_target, "
             "sizeof(sm_target));\n");
    /* PyTorch: the carve-out is the SMs withheld from the matmul, 132 - 121 = 11, on the cuBLASLt path. */
    emit_of(DUET_STACK_TORCH, "h200", DUET_COLL_ALL_GATHER, got, sizeof(got));
    cr_assert_str_eq(got,
                     "# PyTorch, NCCL 2.27 + cuBLASLt: the process group on 11 CTAs (at most 64); matmuls on 121 of "
                     "132 SMs\n"
                     "opts = torch.distributed.ProcessGroupNCCL.Options()\n"
                     "opts.config.min_ctas = 11\n"
                     "opts.config.max_ctas = 11\n"
                     "torch.distributed.init_process_group(\"nccl\", pg_options=opts)\n"
                     "torch.backends.cuda.preferred_blas_library(\"cublaslt\")  # the carve-out acts on cuBLASLt "
                     "matmuls only\n"
                     "torch._C._set_sm_carveout_experimental(11)  # private API: SMs left out of cuBLASLt's matmul "
                     "plans\n");
    /* On ROCm the carve-out is a CU mask on the matmul's stream: 11 of MI300X's 304 CUs left out. */
    emit_of(DUET_STACK_TORCH, "mi300x", DUET_COLL_ALL_GATHER, got, sizeof(got));
    cr_assert(strstr(got, "torch._C._set_sm_carveout_experimental(11)  # private API: matmuls run on a stream whose CU "
                          "mask leaves 11 CUs out\n") != NULL,
              "%s", got);
    /* Transformer Engine: one margin, NVTE_EXT_MARGIN_SM = 11; the bulk overlap (all_gather and
     * reduce_scatter only) as the alternative with that variable unset, since TE adds both margins. */
    emit_of(DUET_STACK_TE, "h200", DUET_COLL_ALL_GATHER, got, sizeof(got));
    cr_assert_str_eq(got, "# Transformer Engine, NCCL 2.27 + cuBLASLt: its GEMMs on 121 of 132 SMs; the collective "
                          "through NCCL on 11 CTAs (at most 64)\n"
                          "NVTE_EXT_MARGIN_SM=11\n"
                          "NCCL_MIN_CTAS=11\n"
                          "NCCL_MAX_CTAS=11\n"
                          "# or userbuffers bulk overlap (TE's own comm kernel, which duet does not model): ub_cfgs "
                          "entry {\"method\": \"bulk\", \"num_sm\": 11, \"set_sm_margin\": True} with "
                          "NVTE_EXT_MARGIN_SM unset (TE subtracts both margins)\n");
    static const int32_t no_bulk[] = {DUET_COLL_ALL_REDUCE, DUET_COLL_ALL_TO_ALL, DUET_COLL_BROADCAST};
    for (size_t i = 0; i < sizeof(no_bulk) / sizeof(no_bulk[0]); i++) {
        emit_of(DUET_STACK_TE, "h200", no_bulk[i], got, sizeof(got));
        cr_assert(strstr(got, "bulk") == NULL, "%s has no bulk overlap in TE: %s", duet_collective_name(no_bulk[i]),
                  got);
    }
    emit_of(DUET_STACK_ENV, "h200", DUET_COLL_ALL_GATHER, got, sizeof(got));
    cr_assert_str_eq(got,
                     "# NCCL 2.27 + cuBLASLt: the collective on 11 CTAs (at most 64); the GEMM on 121 of the 132 SMs\n"
                     "NCCL_MIN_CTAS=11\n"
                     "NCCL_MAX_CTAS=11\n"
                     "NVTE_EXT_MARGIN_SM=11  # Transformer Engine's GEMMs only\n"
                     "# no environment variable sets cuBLASLt's SM target: in code, "
                     "CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET = 121\n");
}

/*
 * The limits, version by version, as the libraries' sources state them (model/emit.c): NCCL caps
 * CTAs at 32 before 2.25 and 64 from 2.25, and has the settings from 2.17; RCCL at 32 in 2.18.3, 64
 * in 2.18.6, 128 from 2.20; hipBLASLt has a CU target from 1.4.
 */
Test(emit, limits_for_the_version_named, T_TIMEOUT)
{
    duet_hw_t h200 = t_hw("h200"), mi300x = t_hw("mi300x"), mi350x = t_hw("mi350x");
    duet_stack_versions_t v = duet_stack_versions_default();
    duet_stack_limits_t lim;
    static const struct {
        const char *ver;
        int32_t cap;
    } nccl[] = {{"2.17", 32}, {"2.21.5", 32}, {"2.24.3", 32}, {"2.25", 64}, {"2.27.3", 64}, {"2.29", 64}},
      rccl[] = {{"2.18.3", 32}, {"2.18.6", 64}, {"2.20.5", 128}, {"2.22", 128}};
    for (size_t i = 0; i < sizeof(nccl) / sizeof(nccl[0]); i++) {
        cr_assert_eq(duet_version_parse(nccl[i].ver, &v.nccl), DUET_OK);
        for (int32_t st = DUET_STACK_NCCL; st < DUET_STACK_COUNT; st++) {
            if (st == DUET_STACK_RCCL)
                continue;
            cr_assert_eq(duet_stack_limits(st, &h200, &v, &lim), DUET_OK, "%s", duet_last_error());
            cr_assert_eq(lim.max_ctas, nccl[i].cap, "NCCL %s, %s", nccl[i].ver, duet_stack_name(st));
            cr_assert_eq(lim.gemm_target, 1);
        }
    }
    for (size_t i = 0; i < sizeof(rccl) / sizeof(rccl[0]); i++) {
        cr_assert_eq(duet_version_parse(rccl[i].ver, &v.rccl), DUET_OK);
        cr_assert_eq(duet_stack_limits(DUET_STACK_RCCL, &mi350x, &v, &lim), DUET_OK, "%s", duet_last_error());
        cr_assert_eq(lim.max_ctas, rccl[i].cap, "RCCL %s", rccl[i].ver);
    }
    cr_assert_eq(duet_version_parse("1.3", &v.hipblaslt), DUET_OK);
    cr_assert_eq(duet_stack_limits(DUET_STACK_RCCL, &mi300x, &v, &lim), DUET_OK);
    cr_assert_eq(lim.gemm_target, 0, "hipBLASLt 1.3 has no CU target");
    cr_assert(strstr(lim.no_target, "1.4") != NULL, "%s", lim.no_target);
    cr_assert_eq(duet_stack_limits(DUET_STACK_TORCH, &mi300x, &v, &lim), DUET_OK);
    cr_assert_eq(lim.gemm_target, 1, "PyTorch's carve-out on ROCm is a CU mask, not a hipBLASLt setting");
    cr_assert_eq(duet_version_parse("1.4", &v.hipblaslt), DUET_OK);
    cr_assert_eq(duet_stack_limits(DUET_STACK_RCCL, &mi300x, &v, &lim), DUET_OK);
    cr_assert_eq(lim.gemm_target, 1);
    /* No minCTAs/maxCTAs before 2.17; NCCL and TE on AMD, RCCL on NVIDIA: refused. */
    cr_assert_eq(duet_version_parse("2.16.5", &v.nccl), DUET_OK);
    cr_assert_eq(duet_stack_limits(DUET_STACK_NCCL, &h200, &v, &lim), DUET_ERR_INVALID_ARG);
    v = duet_stack_versions_default();
    cr_assert_eq(duet_stack_limits(DUET_STACK_NCCL, &mi300x, &v, &lim), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_stack_limits(DUET_STACK_TE, &mi350x, &v, &lim), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_stack_limits(DUET_STACK_RCCL, &h200, &v, &lim), DUET_ERR_INVALID_ARG);
    /* A split past the cap is not written. */
    duet_config_t c = duet_config_default(&h200, DUET_MODE_VENDOR);
    c.comm_wgs = 65;
    c.gemm_wgs = 132 - 65;
    char buf[2048];
    cr_assert_eq(duet_emit_settings(DUET_STACK_NCCL, &h200, &c, buf, sizeof(buf)), DUET_ERR_INVALID_ARG);
    /* Versions: MAJOR.MINOR[.PATCH], each 0 to 99. */
    int32_t x;
    cr_assert_eq(duet_version_parse("2.18.6", &x), DUET_OK);
    cr_assert_eq(x, 21806);
    char vs[16];
    cr_assert_str_eq(duet_version_str(x, vs, sizeof(vs)), "2.18.6");
    cr_assert_str_eq(duet_version_str(22700, vs, sizeof(vs)), "2.27");
    static const char *const bad[] = {"2", "2.", "2.x", "v2.21", "2.21.5.1", "2.100", ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_assert_eq(duet_version_parse(bad[i], &x), DUET_ERR_INVALID_ARG, "'%s'", bad[i]);
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
