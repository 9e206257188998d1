/*
 * duet: the library's version, compiled in so that a program linked against the shared library
 * learns the version it runs with, not the one of the headers it was compiled against.
 */
#include "duet/version.h"

const char *duet_version(void)
{
    return DUET_VERSION;
}
