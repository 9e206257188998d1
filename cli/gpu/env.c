/*
 * The set-up of the GPU commands: MPI, and the library's measurer (context, device description,
 * streams, baselines); progress lines.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/gpu/gpu.h"

double gpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int gpu_env_init(gpu_env_t *e, const char *cmd, int *argc, char ***argv, const duet_measure_params_t *p)
{
    memset(e, 0, sizeof(*e));
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        int provided;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
            cli_error(cmd, "MPI_Init failed (run under mpirun, one rank per GPU)");
            return CLI_EXIT_FAILED;
        }
        e->mpi_inited_here = 1;
    }
    e->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(e->comm, &e->rank);
    MPI_Comm_size(e->comm, &e->world);
    duet_status_t st = duet_measure_create(e->comm, p, &e->m);
    if (st < 0) {
        cli_error(cmd, "rank %d: %s", e->rank, duet_last_error());
        gpu_env_fini(e);
        return CLI_EXIT_FAILED;
    }
    e->gpu = duet_measure_gpu(e->m);
    e->hw = duet_measure_hw(e->m);
    return CLI_EXIT_OK;
}

void gpu_env_fini(gpu_env_t *e)
{
    duet_measure_destroy(e->m);
    e->m = NULL;
    if (e->mpi_inited_here)
        MPI_Finalize();
    e->mpi_inited_here = 0;
}

void gpu_progress(const gpu_env_t *e, const char *what, size_t done, size_t total, double t0)
{
    if (e->rank != 0)
        return;
    double el = gpu_now() - t0;
    double eta = done > 0 ? el / (double)done * (double)(total - done) : 0;
    int width = 30, fill = total ? (int)((double)width * (double)done / (double)total) : width;
    fprintf(stderr, "\r[%.*s%*s] %zu/%zu %-40.40s %4.0fs elapsed, ETA %4.0fs", fill, "##############################",
            width - fill, "", done, total, what, el, eta);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}
