/*
 * The MPI provider of the context's process group (duet_bootstrap_t, include/duet/backend.h); the
 * provider over files in a shared directory is backend/bootstrap_file.c. The context calls them
 * only while it is created, allocates, registers buffers, recovers and is destroyed; never inside
 * an operation.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "duet/backend.h"

/* ------------------------------------------------------------------------------------------ */
/* MPI                                                                                         */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet__boot_mpi {
    MPI_Comm comm; /* our duplicate of the caller's */
} duet__boot_mpi_t;

static int duet__mpi_allgather(void *user, const void *mine, void *all, size_t bytes)
{
    duet__boot_mpi_t *b = (duet__boot_mpi_t *)user;
    if (bytes > INT_MAX)
        return -EOVERFLOW;
    return MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, b->comm) == MPI_SUCCESS ? 0 : 1;
}

static int duet__mpi_barrier(void *user)
{
    duet__boot_mpi_t *b = (duet__boot_mpi_t *)user;
    return MPI_Barrier(b->comm) == MPI_SUCCESS ? 0 : 1;
}

static void duet__mpi_release(void *user)
{
    duet__boot_mpi_t *b = (duet__boot_mpi_t *)user;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Comm_free(&b->comm);
    free(b);
}

duet_status_t duet_bootstrap_mpi(MPI_Comm comm, duet_bootstrap_t *boot_p)
{
    duet_status_t st = DUET_OK;
    duet_bootstrap_t boot;
    duet__boot_mpi_t *b = NULL;
    int rank = 0, world = 0;
    if (boot_p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_bootstrap_mpi: boot_p is NULL");
    b = (duet__boot_mpi_t *)calloc(1, sizeof(*b));
    if (b == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "duet_bootstrap_mpi");
    b->comm = MPI_COMM_NULL;
    if (MPI_Comm_dup(comm, &b->comm) != MPI_SUCCESS || MPI_Comm_rank(b->comm, &rank) != MPI_SUCCESS ||
        MPI_Comm_size(b->comm, &world) != MPI_SUCCESS) {
        st = duet__error(DUET_ERR_MPI, "duet_bootstrap_mpi: the communicator cannot be duplicated or queried");
        goto fail;
    }
    memset(&boot, 0, sizeof(boot));
    boot.rank = rank;
    boot.world = world;
    boot.allgather = duet__mpi_allgather;
    boot.barrier = duet__mpi_barrier;
    boot.release = duet__mpi_release;
    boot.user = b;
    *boot_p = boot;
    return DUET_OK;
fail:
    if (b->comm != MPI_COMM_NULL)
        MPI_Comm_free(&b->comm);
    free(b);
    return st;
}

duet_status_t duet_ctx_create(MPI_Comm comm, const duet_ctx_params_t *params, duet_ctx_h *ctx_p)
{
    duet_bootstrap_t boot;
    duet_status_t st = duet_bootstrap_mpi(comm, &boot);
    if (st < 0)
        return st;
    return duet_ctx_create_bootstrap(&boot, params, ctx_p);
}

duet_status_t duet__mpi_agree(MPI_Comm comm, duet_status_t st);
duet_status_t duet__mpi_agree(MPI_Comm comm, duet_status_t st)
{
    int mine = (int)st, worst = 0;
    if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return duet__error(DUET_ERR_MPI, "MPI_Allreduce of the ranks' status failed");
    if (worst < 0 && mine == 0)
        return duet__error((duet_status_t)worst, "another rank failed (%s); see its message",
                           duet_status_name((duet_status_t)worst));
    return (duet_status_t)worst;
}
