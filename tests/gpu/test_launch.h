/*
 * GPU tests of how a launcher starts the backend and hands it memory (tests/gpu/test_launch.hip):
 * the architecture check, a context over the file bootstrap (no MPI inside the backend), buffers
 * registered with duet_buf_register beside heap buffers, and graph capture.
 */
#ifndef DUET_TESTS_GPU_TEST_LAUNCH_H
#define DUET_TESTS_GPU_TEST_LAUNCH_H

#include <stdint.h>

#include "duet/backend.h"
#include "tests/gpu/harness.h"

/* Every part, in order, on a context of its own (collective over MPI_COMM_WORLD). */
void duet_test_launch(duet_test *t, uint64_t seed);

#endif /* DUET_TESTS_GPU_TEST_LAUNCH_H */
