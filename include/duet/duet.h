/*
 * duet: the umbrella header. Each layer also has its own header:
 *   duet/status.h   status codes and error text
 *   duet/types.h    workload, configuration and the enums shared with the GPU kernels
 *   duet/plan_map.h tile and queue index arithmetic shared by simulator and kernels
 *   duet/model.h    hardware profiles, validation, the plan, the cost model
 *   duet/sim.h      the discrete-event makespan simulator and sweeps
 *   duet/version.h  DUET_VERSION_MAJOR/MINOR/PATCH and duet_version()
 * The GPU backend (duet/backend.h) needs HIP/CUDA and MPI and is not included here.
 */
#ifndef DUET_DUET_H
#define DUET_DUET_H

#include "duet/model.h"
#include "duet/plan_map.h"
#include "duet/sim.h"
#include "duet/status.h"
#include "duet/types.h"
#include "duet/version.h"

#endif /* DUET_DUET_H */
