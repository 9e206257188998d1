/*
 * Status strings and the per-thread last-error text.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "duet/status.h"
#include "model/internal.h"

const char *duet_status_string(duet_status_t status)
{
    switch (status) {
#define DUET__STATUS_STR(name, value, msg)                                                                             \
    case DUET_##name:                                                                                                  \
        return msg;
        DUET_STATUS_MAP(DUET__STATUS_STR)
#undef DUET__STATUS_STR
    }
    return "unknown status";
}

const char *duet_status_name(duet_status_t status)
{
    switch (status) {
#define DUET__STATUS_NAME(name, value, msg)                                                                            \
    case DUET_##name:                                                                                                  \
        return "DUET_" #name;
        DUET_STATUS_MAP(DUET__STATUS_NAME)
#undef DUET__STATUS_NAME
    }
    return "DUET_UNKNOWN";
}

/* One buffer per thread: library calls on different threads never see each other's errors. */
static _Thread_local char duet__errbuf[DUET__ERRBUF_LEN];

const char *duet_last_error(void) { return duet__errbuf; }

void duet_clear_error(void) { duet__errbuf[0] = '\0'; }

duet_status_t duet__error(duet_status_t status, const char *fmt, ...)
{
    /* Format into a scratch buffer: callers often pass duet_last_error() itself as an argument
     * to add context to it. */
    char tmp[DUET__ERRBUF_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    memcpy(duet__errbuf, tmp, sizeof(tmp));
    return status;
}

duet_status_t duet__error_prefix(const char *prefix)
{
    char tmp[2 * DUET__ERRBUF_LEN];
    snprintf(tmp, sizeof(tmp), "%s: %s", prefix, duet__errbuf);
    snprintf(duet__errbuf, sizeof(duet__errbuf), "%.*s", DUET__ERRBUF_LEN - 1, tmp);
    return DUET_OK;
}
