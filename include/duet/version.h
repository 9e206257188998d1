/*
 * duet: the version of the library and its headers.
 *
 * The three numbers are the one place the version is written: the Makefile reads them for the shared
 * library's file name and soname (libduet.so.MAJOR) and for duet.pc, and `duet --version` prints
 * duet_version(). DUET_VERSION is the version of the headers a program was compiled with; duet_version()
 * that of the library it runs with, so a program can compare the two.
 */
#ifndef DUET_VERSION_H
#define DUET_VERSION_H

#ifdef __cplusplus
extern "C" {
#endif

#define DUET_VERSION_MAJOR 0
#define DUET_VERSION_MINOR 4
#define DUET_VERSION_PATCH 0

#define DUET__VERSION_TEXT(x) #x
#define DUET__VERSION_STR(a, b, c) DUET__VERSION_TEXT(a) "." DUET__VERSION_TEXT(b) "." DUET__VERSION_TEXT(c)
/* "MAJOR.MINOR.PATCH", e.g. "0.4.0". */
#define DUET_VERSION DUET__VERSION_STR(DUET_VERSION_MAJOR, DUET_VERSION_MINOR, DUET_VERSION_PATCH)
/* One integer that orders versions: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define DUET_VERSION_NUMBER (DUET_VERSION_MAJOR * 10000 + DUET_VERSION_MINOR * 100 + DUET_VERSION_PATCH)

/** The version of the library linked at run time, "MAJOR.MINOR.PATCH"; a static string. */
const char *duet_version(void);

#ifdef __cplusplus
}
#endif

#endif /* DUET_VERSION_H */
