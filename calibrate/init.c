/*
 * The GSL boundary: switching GSL's aborting error handler off, and translating GSL status codes
 * into duet's. Plus the layer's wall clock.
 */
#include <gsl/gsl_errno.h>
#include <math.h>
#include <pthread.h>
#include <time.h>

#include "calibrate/internal.h"

static pthread_once_t duet__cal_once = PTHREAD_ONCE_INIT;

static void duet__cal_init_once(void)
{
    /* GSL's default handler prints and calls abort(): a library must never take the process
     * down, so every GSL error is returned to the caller instead, and GSL_CHECK turns it into a
     * duet status with the message recorded once. */
    gsl_set_error_handler_off();
}

duet_status_t duet_cal_init(void)
{
    if (pthread_once(&duet__cal_once, duet__cal_init_once) != 0)
        return duet__error(DUET_ERR_INTERNAL, "calibration: cannot initialise (pthread_once failed)");
    return DUET_OK;
}

duet_status_t duet__cal_gsl_error(int gsl_status, const char *what)
{
    duet_status_t st;
    switch (gsl_status) {
    case GSL_ENOMEM:
        st = DUET_ERR_NO_MEMORY;
        break;
    case GSL_EINVAL:
    case GSL_EDOM:
    case GSL_EBADLEN:
    case GSL_ENOTSQR:
        /* A malformed problem reached GSL: a bug in this layer, not in the user's input, which
         * is checked before any GSL call. */
        st = DUET_ERR_INTERNAL;
        break;
    default:
        /* Numerical trouble (singular matrices, no progress, non-finite values, iteration
         * limits): the fit cannot go on from here. */
        st = DUET_ERR_NOT_CONVERGED;
        break;
    }
    return duet__error(st, "%s: GSL: %s", what, gsl_strerror(gsl_status));
}

double duet__cal_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
