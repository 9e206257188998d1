/*
 * What this build was made from (Makefile: build/gen/duet_build_info.h), so that a corpus can
 * name the kernels it measured and a fit can tell when they have changed since. Builds without
 * the generated header (the fuzz harnesses) say "unknown".
 */
#include "duet/corpus.h"

#if defined(__has_include)
#if __has_include("duet_build_info.h")
#include "duet_build_info.h"
#endif
#endif
#ifndef DUET_KERNEL_COMMIT
#define DUET_KERNEL_COMMIT "unknown"
#endif
#ifndef DUET_KERNEL_HASH
#define DUET_KERNEL_HASH "unknown"
#endif
#ifndef DUET_SOURCE_COMMIT
#define DUET_SOURCE_COMMIT "unknown"
#endif

duet_build_info_t duet_build_info(void)
{
    duet_build_info_t b = {DUET_KERNEL_COMMIT, DUET_KERNEL_HASH, DUET_SOURCE_COMMIT};
    return b;
}
