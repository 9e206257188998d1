/*
 * Argument checks of a backend operation (model/op.c): every rule without a GPU.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "../test_util.h"
#include "duet/model.h"
#include "duet/op.h"

/* A fake heap of 64 MiB at a fixed address; the checks never dereference it. */
#define HEAP_BASE ((uintptr_t)0x7f0000000000ull)
#define HEAP_SIZE ((size_t)64 << 20)

static duet_hw_t hw;
static duet_op_t op;

/* A valid fused bf16 GEMM + all_gather on rank 0 of 2, src and dst inside the heap, C outside. */
static void setup(void)
{
    cr_assert_eq(duet_hw_builtin("h200", &hw), DUET_OK);
    memset(&op, 0, sizeof(op));
    op.wl = duet_workload_empty();
    op.wl.m = 300;
    op.wl.n = 520;
    op.wl.k = 200;
    op.wl.mc = 600;
    op.wl.nc = 136;
    op.wl.coll = DUET_COLL_ALL_GATHER;
    op.wl.world = 2;
    op.cfg = duet_config_default(&hw, DUET_MODE_FUSED);
    op.a = (const void *)(uintptr_t)0x100000;
    op.b = (const void *)(uintptr_t)0x200000;
    op.c = (void *)(uintptr_t)0x300000;
    op.src = (const void *)(HEAP_BASE + 4096);
    op.dst = (void *)(HEAP_BASE + 4096 + 600 * 136 * 2);
}

static duet_status_t check(int world, int rank)
{
    return duet_op_validate(&op, &hw, HEAP_BASE, HEAP_SIZE, world, rank);
}

TestSuite(op_validate, .init = setup, T_TIMEOUT);

Test(op_validate, accepts_a_valid_op, T_TIMEOUT)
{
    cr_assert_eq(check(2, 0), DUET_OK, "%s", duet_last_error());
}

Test(op_validate, output_sizes, T_TIMEOUT)
{
    cr_assert_eq(duet_op_dst_rows(&op.wl), 1200);
    cr_assert_eq(duet_op_src_bytes(&op.wl), 600 * 136 * 2);
    cr_assert_eq(duet_op_dst_bytes(&op.wl), 1200 * 136 * 2);
    op.wl.coll = DUET_COLL_REDUCE_SCATTER;
    cr_assert_eq(duet_op_dst_rows(&op.wl), 300);
    op.wl.coll = DUET_COLL_ALL_TO_ALL;
    cr_assert_eq(duet_op_dst_rows(&op.wl), 600);
    op.wl.coll = DUET_COLL_NONE;
    cr_assert_eq(duet_op_dst_bytes(&op.wl), 0);
}

Test(op_validate, null_op_or_profile, T_TIMEOUT)
{
    cr_assert_eq(duet_op_validate(NULL, &hw, HEAP_BASE, HEAP_SIZE, 2, 0), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_op_validate(&op, NULL, HEAP_BASE, HEAP_SIZE, 2, 0), DUET_ERR_INVALID_ARG);
}

Test(op_validate, world_and_rank, T_TIMEOUT)
{
    cr_assert_eq(check(3, 0), DUET_ERR_INVALID_ARG, "op.wl.world 2 on a 3-rank context");
    cr_assert_eq(check(2, 2), DUET_ERR_INVALID_ARG, "rank out of range");
    cr_assert_eq(check(2, -1), DUET_ERR_INVALID_ARG);
    op.wl.world = DUET_OP_MAX_WORLD + 1;
    cr_assert_eq(check(DUET_OP_MAX_WORLD + 1, 0), DUET_ERR_UNSUPPORTED);
}

Test(op_validate, world_shape_mismatch, T_TIMEOUT)
{
    op.wl.coll = DUET_COLL_REDUCE_SCATTER;
    op.wl.mc = 601;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "mc not divisible by W");
    cr_assert(strstr(duet_last_error(), "601") != NULL, "%s", duet_last_error());
    op.wl.coll = DUET_COLL_ALL_TO_ALL;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG);
    op.wl.coll = DUET_COLL_ALL_GATHER; /* all_gather needs no divisibility */
    op.dst = (void *)(HEAP_BASE + 4096 + 601 * 136 * 2);
    cr_assert_eq(check(2, 0), DUET_OK, "%s", duet_last_error());
}

Test(op_validate, bad_enums_and_shapes, T_TIMEOUT)
{
    op.wl.dtype = 7;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG);
    setup();
    op.wl.coll = 42;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG);
    setup();
    op.wl.k = 0;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "m, n set but k = 0");
    setup();
    op.wl.coll = DUET_COLL_BROADCAST;
    op.wl.root = 2;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "root outside the world");
}

Test(op_validate, null_pointers, T_TIMEOUT)
{
    op.a = NULL;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "op.a") != NULL, "%s", duet_last_error());
    setup();
    op.dst = NULL;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG);
    setup();
    op.c = (void *)(uintptr_t)0x300001;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "C not element-aligned");
}

Test(op_validate, gemm_only_needs_no_comm_buffers, T_TIMEOUT)
{
    op.wl.coll = DUET_COLL_NONE;
    op.wl.mc = op.wl.nc = 0;
    op.src = NULL;
    op.dst = NULL;
    cr_assert_eq(check(2, 1), DUET_OK, "%s", duet_last_error());
}

Test(op_validate, comm_only_needs_no_gemm_operands, T_TIMEOUT)
{
    op.wl.m = op.wl.n = op.wl.k = 0;
    op.a = op.b = NULL;
    op.c = NULL;
    cr_assert_eq(check(2, 0), DUET_OK, "%s", duet_last_error());
}

Test(op_validate, buffers_outside_the_heap, T_TIMEOUT)
{
    op.src = (const void *)(uintptr_t)0x400000;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "symmetric heap") != NULL, "%s", duet_last_error());
    setup();
    /* dst starts inside but its 1200 x 136 elements run past the end. */
    op.dst = (void *)(HEAP_BASE + HEAP_SIZE - 1024);
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG);
    setup();
    op.dst = (void *)(HEAP_BASE - 2);
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "dst below the heap");
    setup();
    /* Exactly at the end is fine. */
    op.dst = (void *)(HEAP_BASE + HEAP_SIZE - duet_op_dst_bytes(&op.wl));
    cr_assert_eq(check(2, 0), DUET_OK, "%s", duet_last_error());
}

Test(op_validate, overlapping_buffers, T_TIMEOUT)
{
    op.dst = (void *)(HEAP_BASE + 4096 + 100);
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "src and dst overlap");
    setup();
    op.c = (void *)(HEAP_BASE + 8192);
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "C overlaps src");
}

Test(op_validate, configurations_the_kernel_cannot_run, T_TIMEOUT)
{
    op.cfg.num_wgs = hw.n_sms + 1;
    op.cfg.comm_wgs = op.cfg.num_wgs - op.cfg.gemm_wgs;
    cr_assert_eq(check(2, 0), DUET_ERR_INFEASIBLE, "more persistent CTAs than SMs");
    setup();
    op.cfg.tile.bm = 96;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "a tile the kernels do not implement");
    setup();
    op.cfg.cn = 12;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "comm tile rows of 24 bytes");
    setup();
    hw.smem_kib = 64;
    op.cfg.tile = (duet_gemm_tile_t){256, 256, 64};
    cr_assert_eq(check(2, 0), DUET_ERR_INFEASIBLE, "tile larger than shared memory");
    setup();
    op.cfg.mode = DUET_MODE_CONCURRENT;
    op.cfg.gemm_wgs = 0;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG, "concurrent GEMM kernel with no CTA");
}

Test(op_validate, negative_timeout, T_TIMEOUT)
{
    op.timeout_ms = -1;
    cr_assert_eq(check(2, 0), DUET_ERR_INVALID_ARG);
}

Test(op_validate, vendor_mode_is_not_duet_runs, T_TIMEOUT)
{
    op.cfg.mode = DUET_MODE_VENDOR;
    op.cfg.gemm_wgs = 100;
    op.cfg.comm_wgs = 32;
    op.cfg.num_wgs = 132;
    cr_assert_eq(check(2, 0), DUET_ERR_UNSUPPORTED);
    cr_assert(strstr(duet_last_error(), "duet_vendor_run") != NULL, "%s", duet_last_error());
}
