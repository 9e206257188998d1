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

/*
 * src and dst in buffers registered beside the heap (duet_op_validate_regions): fake regions at
 * fixed addresses, never dereferenced: the heap, and two registered buffers of 1 MiB, the second
 * directly after the first, so that a range straddling them is testable.
 */
static const duet_op_region_t REGIONS[3] = {
    {HEAP_BASE, HEAP_SIZE},
    {(uintptr_t)0x7e0000000000ull, (size_t)1 << 20},
    {(uintptr_t)0x7e0000100000ull, (size_t)1 << 20},
};
/* setup()'s all_gather at W = 2: src 600 x 136 and dst 1200 x 136 bf16 elements. */
#define SRC_BYTES ((size_t)600 * 136 * 2)

static duet_status_t check_regions(int n_regions)
{
    return duet_op_validate_regions(&op, &hw, REGIONS, n_regions, 2, 0);
}

/* src (163,200 bytes) in the first registered buffer, dst (326,400 bytes) at the start of the second. */
static void in_registered(void)
{
    op.src = (const void *)REGIONS[1].base;
    op.dst = (void *)REGIONS[2].base;
}

Test(op_validate, registered_buffers_hold_src_and_dst, T_TIMEOUT)
{
    in_registered();
    cr_assert_eq(check_regions(3), DUET_OK, "%s", duet_last_error());
    /* One in the heap, the other registered. */
    op.src = (const void *)(REGIONS[0].base + 4096);
    cr_assert_eq(check_regions(3), DUET_OK, "%s", duet_last_error());
}

Test(op_validate, without_the_registration_the_buffer_is_refused, T_TIMEOUT)
{
    in_registered();
    cr_assert_eq(check_regions(2), DUET_ERR_INVALID_ARG, "dst's buffer is not among the regions");
    cr_assert(strstr(duet_last_error(), "op.dst") != NULL, "%s", duet_last_error());
    cr_assert(strstr(duet_last_error(), "duet_buf_register()") != NULL, "%s", duet_last_error());
    cr_assert(strstr(duet_last_error(), "nor in a registered buffer") != NULL, "%s", duet_last_error());
    /* The heap alone: the message names the heap only. */
    cr_assert_eq(check_regions(1), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "nor in a registered buffer") == NULL, "%s", duet_last_error());
}

Test(op_validate, a_buffer_too_small_is_named, T_TIMEOUT)
{
    in_registered();
    /* dst (326,400 bytes) starts 726,400 bytes into the second buffer of 1,048,576 bytes: it needs
     * 726,400 + 326,400 - 1,048,576 = 4,224 bytes more. */
    op.dst = (void *)(REGIONS[2].base + 726400);
    cr_assert_eq(check_regions(3), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "runs 4224 bytes past the end of its registered buffer") != NULL, "%s",
              duet_last_error());
    /* The same at the end of the heap. */
    op.dst = (void *)(REGIONS[0].base + REGIONS[0].bytes - 1024);
    cr_assert_eq(check_regions(3), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "past the end of the symmetric heap") != NULL, "%s", duet_last_error());
}

Test(op_validate, a_range_straddling_two_buffers_is_refused, T_TIMEOUT)
{
    /* Adjacent in the address space, but two registrations: peers map them separately. */
    op.src = (const void *)(REGIONS[2].base - SRC_BYTES / 2);
    cr_assert_eq(check_regions(3), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "op.src") != NULL, "%s", duet_last_error());
}

Test(op_validate, the_heap_only_form_is_the_one_region_case, T_TIMEOUT)
{
    /* setup() puts src and dst in the heap: one region or three, the verdict is the same. */
    cr_assert_eq(check_regions(1), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(check_regions(3), DUET_OK, "%s", duet_last_error());
}
