/*
 * Allocation failures on demand, for the tests of every layer: the test binary is linked with the
 * C library's malloc, calloc and realloc wrapped (tests/base/alloc_fail.c, the linker's --wrap), so
 * that a test can make the Nth allocation from now fail, as a machine out of memory would.
 * (Allocations inside the C library itself, strdup's and the JSON parser's among them, are not
 * wrapped: they cannot be made to fail here.)
 */
#ifndef DUET_TEST_ALLOC_FAIL_H
#define DUET_TEST_ALLOC_FAIL_H

#include <stdatomic.h>

/* > 0: the allocation that brings it to 0 fails; 0: none fails. */
extern _Atomic long t_alloc_countdown;

/*
 * Run `op` (an expression giving a duet_status_t) with its 1st, 2nd, ... 64th allocation failing,
 * then every 16th part of the way further (a run of thousands of allocations repeats the same few
 * in loops: the count stays logarithmic), until
 * a run that fails none succeeds; `undo` (a statement, which sees the status as t__st) runs after
 * every attempt. A run whose allocation failed must say DUET_ERR_NO_MEMORY (the machine's state,
 * reported as such, never as bad input) with a message, or succeed where the code can do without
 * what it could not allocate (a sort for a warning's sake); *runs_p gets the number of
 * allocations that were made to fail (the last attempt's count).
 */
#define T_EVERY_ALLOC_FAILS(op, undo, runs_p)                                                                          \
    do {                                                                                                               \
        for (long t__n = 1;; t__n += t__n < 64 ? 1 : t__n / 16) {                                                      \
            cr_assert_lt(t__n, 100000, "no end to the allocations");                                                   \
            t_alloc_countdown = t__n;                                                                                  \
            duet_status_t t__st = (op);                                                                                \
            int t__hit = t_alloc_countdown == 0;                                                                       \
            t_alloc_countdown = 0;                                                                                     \
            if (!t__hit) {                                                                                             \
                cr_assert_eq(t__st, DUET_OK, "with no failed allocation: %s", duet_last_error());                      \
                undo;                                                                                                  \
                *(runs_p) = t__n - 1;                                                                                  \
                break;                                                                                                 \
            }                                                                                                          \
            cr_assert(t__st == DUET_ERR_NO_MEMORY || t__st == DUET_OK, "allocation %ld failed: %d %s", t__n,           \
                      (int)t__st, duet_last_error());                                                                  \
            cr_assert(t__st == DUET_OK || duet_last_error()[0] != '\0');                                               \
            undo;                                                                                                      \
        }                                                                                                              \
    } while (0)

#endif /* DUET_TEST_ALLOC_FAIL_H */
