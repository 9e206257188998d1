/*
 * Internal helpers of the model layer (not installed). Names start with duet__. The base layer's
 * helpers (errors, checks, files, JSON, buffers) come with it.
 */
#ifndef DUET_MODEL_INTERNAL_H
#define DUET_MODEL_INTERNAL_H

#include "base/base.h"

/** Configuration checks that need no profile (mode, tile, comm tile, CTA counts). */
struct duet_config;
struct duet_workload;
duet_status_t duet__config_check_shape(const struct duet_config *cfg, const struct duet_workload *wl);

#endif /* DUET_MODEL_INTERNAL_H */
