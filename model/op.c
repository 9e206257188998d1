/*
 * Argument checks of a backend operation (include/duet/op.h). Pure C: the backend calls
 * duet_op_validate() before it launches anything, and the CPU test suite exercises it.
 */
#include <stdint.h>
#include <string.h>

#include "duet/op.h"
#include "model/internal.h"

int64_t duet_op_dst_rows(const duet_workload_t *wl)
{
    switch (wl->coll) {
    case DUET_COLL_ALL_GATHER:
        return (int64_t)wl->world * wl->mc;
    case DUET_COLL_REDUCE_SCATTER:
        return wl->world > 0 ? wl->mc / wl->world : 0;
    case DUET_COLL_ALL_REDUCE:
    case DUET_COLL_ALL_TO_ALL:
    case DUET_COLL_BROADCAST:
        return wl->mc;
    default:
        return 0;
    }
}

size_t duet_op_src_bytes(const duet_workload_t *wl)
{
    if (wl->coll == DUET_COLL_NONE || wl->mc <= 0 || wl->nc <= 0)
        return 0;
    return (size_t)wl->mc * (size_t)wl->nc * (size_t)duet_dtype_bytes(wl->dtype);
}

size_t duet_op_dst_bytes(const duet_workload_t *wl)
{
    int64_t rows = duet_op_dst_rows(wl);
    if (rows <= 0 || wl->nc <= 0)
        return 0;
    return (size_t)rows * (size_t)wl->nc * (size_t)duet_dtype_bytes(wl->dtype);
}

/* [p, p + n) and [q, q + m) share a byte. Empty ranges overlap nothing. */
static int duet__ranges_overlap(uintptr_t p, size_t n, uintptr_t q, size_t m)
{
    return n > 0 && m > 0 && p < q + m && q < p + n;
}

/* A device pointer the kernels dereference: non-NULL and aligned to the 2-byte element. */
static duet_status_t duet__check_ptr(const void *p, const char *name)
{
    if (p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "op.%s is NULL", name);
    if ((uintptr_t)p % 2 != 0)
        return duet__error(DUET_ERR_INVALID_ARG, "op.%s = %p is not aligned to its 2-byte elements", name, p);
    return DUET_OK;
}

/*
 * The whole range [p, p + bytes) lies in one region peers can address (regions[0]: the symmetric
 * heap; the others: registered buffers). A range that starts in a region but runs past its end is
 * named as such: the buffer is too small for the operation.
 */
static duet_status_t duet__check_in_region(const void *p, size_t bytes, const duet_op_region_t *regions, int n,
                                           const char *name)
{
    uintptr_t a = (uintptr_t)p;
    for (int i = 0; i < n; i++) {
        uintptr_t base = regions[i].base;
        size_t size = regions[i].bytes;
        if (a < base || a - base >= size)
            continue;
        if (bytes <= size - (a - base))
            return DUET_OK;
        return duet__error(DUET_ERR_INVALID_ARG,
                           "op.%s [%p, +%zu bytes) runs %zu bytes past the end of %s [%p, +%zu bytes): too small for "
                           "the operation",
                           name, p, bytes, bytes - (size - (a - base)),
                           i == 0 ? "the symmetric heap" : "its registered buffer", (void *)base, size);
    }
    return duet__error(DUET_ERR_INVALID_ARG,
                       "op.%s [%p, +%zu bytes) is not inside the symmetric heap [%p, +%zu bytes)%s: peers address it "
                       "through their mapping of it, so allocate it with duet_ctx_alloc() or register it with "
                       "duet_buf_register()",
                       name, p, bytes, n > 0 ? (void *)regions[0].base : NULL, n > 0 ? regions[0].bytes : (size_t)0,
                       n > 1 ? " nor in a registered buffer" : "");
}

duet_status_t duet_op_validate(const duet_op_t *op, const duet_hw_t *hw, uintptr_t heap_base, size_t heap_size,
                               int world, int rank)
{
    duet_op_region_t heap = {heap_base, heap_size};
    return duet_op_validate_regions(op, hw, &heap, 1, world, rank);
}

duet_status_t duet_op_validate_regions(const duet_op_t *op, const duet_hw_t *hw, const duet_op_region_t *regions,
                                       int n_regions, int world, int rank)
{
    if (op == NULL || hw == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_op_validate: op and hw must not be NULL");
    const duet_workload_t *wl = &op->wl;
    if (world < 1 || world > DUET_OP_MAX_WORLD)
        return duet__error(DUET_ERR_UNSUPPORTED, "world %d is outside [1, %d] (one node)", world, DUET_OP_MAX_WORLD);
    if (rank < 0 || rank >= world)
        return duet__error(DUET_ERR_INVALID_ARG, "rank %d is outside [0, %d)", rank, world);
    if (wl->world != world)
        return duet__error(DUET_ERR_INVALID_ARG, "op.wl.world is %d but the context has %d ranks", (int)wl->world,
                           world);
    /* Workload rules (extents, dtype, divisibility of mc by W, root) come first, then the
     * configuration against this device's profile (SM count, shared memory). */
    DUET_CHECK(duet_config_validate(&op->cfg, wl, hw));
    if (op->cfg.mode == DUET_MODE_VENDOR)
        return duet__error(DUET_ERR_UNSUPPORTED,
                           "vendor mode runs the GEMM in the vendor library: use duet_vendor_run() "
                           "(include/duet/baseline.h), not duet_run()");
    if (op->timeout_ms < 0)
        return duet__error(DUET_ERR_INVALID_ARG, "op.timeout_ms %lld is negative", (long long)op->timeout_ms);

    size_t eb = (size_t)duet_dtype_bytes(wl->dtype);
    size_t c_bytes = 0;
    if (wl->m > 0) {
        DUET_CHECK(duet__check_ptr(op->a, "a"));
        DUET_CHECK(duet__check_ptr(op->b, "b"));
        DUET_CHECK(duet__check_ptr(op->c, "c"));
        c_bytes = (size_t)wl->m * (size_t)wl->n * eb;
    }
    if (wl->coll == DUET_COLL_NONE)
        return DUET_OK;

    size_t src_bytes = duet_op_src_bytes(wl), dst_bytes = duet_op_dst_bytes(wl);
    DUET_CHECK(duet__check_ptr(op->src, "src"));
    DUET_CHECK(duet__check_ptr(op->dst, "dst"));
    DUET_CHECK(duet__check_in_region(op->src, src_bytes, regions, n_regions, "src"));
    DUET_CHECK(duet__check_in_region(op->dst, dst_bytes, regions, n_regions, "dst"));
    if (duet__ranges_overlap((uintptr_t)op->src, src_bytes, (uintptr_t)op->dst, dst_bytes))
        return duet__error(DUET_ERR_INVALID_ARG, "op.src and op.dst overlap: %s is not supported in place",
                           duet_collective_name(wl->coll));
    if (duet__ranges_overlap((uintptr_t)op->c, c_bytes, (uintptr_t)op->src, src_bytes) ||
        duet__ranges_overlap((uintptr_t)op->c, c_bytes, (uintptr_t)op->dst, dst_bytes))
        return duet__error(DUET_ERR_INVALID_ARG, "op.c overlaps the collective's src or dst");
    return DUET_OK;
}
