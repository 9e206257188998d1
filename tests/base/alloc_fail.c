/*
 * The wrappers of tests/alloc_fail.h: the test binary is linked with -Wl,--wrap=malloc (and calloc,
 * realloc), so every call of the library and the tests reaches these first.
 */
#include <stddef.h>

#include "../alloc_fail.h"

_Atomic long t_alloc_countdown;

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);

/* 1 when this allocation is the one to fail. */
static int t__alloc_fails(void)
{
    long c = atomic_load(&t_alloc_countdown);
    while (c > 0) {
        if (atomic_compare_exchange_weak(&t_alloc_countdown, &c, c - 1))
            return c == 1;
    }
    return 0;
}

void *__wrap_malloc(size_t n)
{
    return t__alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return t__alloc_fails() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    return t__alloc_fails() ? NULL : __real_realloc(p, n);
}
