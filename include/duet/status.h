/*
 * duet: status codes and error text.
 *
 * Every public function returns a duet_status_t. DUET_OK is 0 and every error is negative, so
 * "if (status < 0)" is the error test everywhere. The enum and its message table are generated
 * from one X-macro so that the two can never drift apart (the UCX/libuv pattern).
 *
 * The function that first detects an error records a one-line explanation with the failing value
 * (duet__error() internally); callers that only propagate the status do not log again. The text
 * of the most recent error on the calling thread is available through duet_last_error().
 */
#ifndef DUET_STATUS_H
#define DUET_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, message) */
#define DUET_STATUS_MAP(X)                                                                                             \
    X(OK, 0, "success")                                                                                                \
    X(ERR_INVALID_ARG, -1, "invalid argument")                                                                         \
    X(ERR_NO_MEMORY, -2, "out of memory")                                                                              \
    X(ERR_IO, -3, "input/output error")                                                                                \
    X(ERR_PARSE, -4, "malformed input")                                                                                \
    X(ERR_UNSUPPORTED, -5, "not supported")                                                                            \
    X(ERR_NOT_FOUND, -6, "not found")                                                                                  \
    X(ERR_TIMEOUT, -7, "timed out")                                                                                    \
    X(ERR_BACKEND, -8, "GPU runtime error")                                                                            \
    X(ERR_MPI, -9, "MPI error")                                                                                        \
    X(ERR_NOT_CONVERGED, -10, "fit did not converge")                                                                  \
    X(ERR_OUT_OF_HEAP, -11, "symmetric heap exhausted")                                                                \
    X(ERR_INFEASIBLE, -12, "configuration cannot run on this hardware")                                                \
    X(ERR_BUSY, -13, "resource busy")                                                                                  \
    X(ERR_INTERNAL, -14, "internal error")

typedef enum {
#define DUET__STATUS_ENUM(name, value, msg) DUET_##name = (value),
    DUET_STATUS_MAP(DUET__STATUS_ENUM)
#undef DUET__STATUS_ENUM
} duet_status_t;

/** @return the fixed message of a status code ("unknown status" for values outside the map). */
const char *duet_status_string(duet_status_t status);

/** @return the symbolic name of a status code, e.g. "DUET_ERR_TIMEOUT". */
const char *duet_status_name(duet_status_t status);

/**
 * @return the explanation of the most recent error recorded on this thread (e.g.
 * "constants.clock_ghz: must be a number, got a string"), or "" when none was recorded.
 * The text stays valid until the next duet call on this thread.
 */
const char *duet_last_error(void);

/** Forget the last error text of this thread. */
void duet_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif /* DUET_STATUS_H */
