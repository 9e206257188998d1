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
    /* No --hw: the built-in of the GPU by its name (the library's table; an H100 and an H200 are
     * both sm_90). The ranks' GPUs are taken to be of one kind, so the first one's name decides,
     * before the context picks each rank's GPU; a rank whose GPU is another kind says so below. */
    duet_measure_params_t q = *p;
    duet_gpu_info_t g0;
    memset(&g0, 0, sizeof(g0));
    if (q.ctx.hw == NULL && duet_gpu_describe(q.ctx.device >= 0 ? q.ctx.device : 0, &g0) == DUET_OK)
        q.ctx.hw = duet_hw_builtin_for_device(g0.name, g0.arch, NULL);
    duet_status_t st = duet_measure_create(e->comm, &q, &e->m);
    if (st < 0) {
        cli_error(cmd, "rank %d: %s", e->rank, duet_last_error());
        gpu_env_fini(e);
        return CLI_EXIT_FAILED;
    }
    e->gpu = duet_measure_gpu(e->m);
    e->hw = duet_measure_hw(e->m);
    /* Where the built-in is not the device's own, a note says which it fell back to. */
    if (p->ctx.hw != NULL)
        return CLI_EXIT_OK;
    const char *own = duet_hw_builtin_for_device(e->gpu->name, e->gpu->arch, NULL);
    if (strcmp(own, e->hw->name) != 0)
        fprintf(stderr, "duet: %s: note: rank %d: GPU %s is priced with profile %s (that of GPU 0 of the node, %s)\n",
                cmd, e->rank, e->gpu->name, e->hw->name, g0.name[0] ? g0.name : "not described");
    else if (e->rank == 0)
        (void)cli_device_profile(cmd, e->gpu->name, e->gpu->arch);
    return CLI_EXIT_OK;
}

const char *cli_default_hw(const char *cmd)
{
    duet_gpu_info_t g;
    if (duet_gpu_describe(0, &g) < 0) {
        fprintf(stderr, "duet: %s: note: no GPU answers (%s): using h200\n", cmd, duet_last_error());
        return "h200";
    }
    return cli_device_profile(cmd, g.name, g.arch);
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
