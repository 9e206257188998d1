/*
 * Providers of the context's process group (duet_bootstrap_t, include/duet/backend.h): MPI, and
 * files in a directory the ranks of one node share. The context calls them only while it is
 * created, allocates, registers buffers, recovers and is destroyed; never inside an operation.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* ------------------------------------------------------------------------------------------ */
/* Files                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/*
 * Round `seq` of rank p is one file written once and hard-linked once per reader q != p, as
 * DIR/duet-boot-GEN-SEQ-P-Q; reader q reads its link and removes it, and the writer removes its
 * temporary name once the links exist. So every file disappears as soon as it has been read, and
 * a reader sees either no link or a complete file (link() is atomic, the data is written before).
 * Every file starts with a header (round, rank, bytes) that the reader checks.
 */
typedef struct duet__boot_file {
    char *dir;
    int rank, world;
    int64_t timeout_ms;
    unsigned gen; /* this process's earlier duet_bootstrap_file calls: part of every name */
    uint64_t seq; /* rounds done */
} duet__boot_file_t;

/* Bootstraps made in this process so far. Every rank makes its bootstraps in the same order, so
 * the ranks of one agree on its number, and its files cannot meet an earlier one's. */
static unsigned duet__boot_file_gen;

typedef struct duet__boot_hdr {
    uint64_t magic, seq, bytes;
    int64_t rank;
} duet__boot_hdr_t;

#define DUET__BOOT_MAGIC 0x746f6f6274657564ull /* "duetboot" */

static double duet__mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* write() all of it; 0 or a negative errno. */
static int duet__write_all(int fd, const void *p, size_t n)
{
    const char *c = (const char *)p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* read() exactly n bytes; 0, -EPROTO when the file is shorter, or a negative errno. */
static int duet__read_all(int fd, void *p, size_t n)
{
    char *c = (char *)p;
    while (n > 0) {
        ssize_t r = read(fd, c, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return -EPROTO;
        c += r;
        n -= (size_t)r;
    }
    return 0;
}

static int duet__file_allgather(void *user, const void *mine, void *all, size_t bytes)
{
    duet__boot_file_t *b = (duet__boot_file_t *)user;
    uint64_t seq = b->seq + 1;
    size_t plen = strlen(b->dir) + 96;
    char *tmp = (char *)malloc(plen), *name = (char *)malloc(plen);
    duet__boot_hdr_t hdr = {DUET__BOOT_MAGIC, seq, (uint64_t)bytes, b->rank};
    int rc = 0, fd = -1;
    if (tmp == NULL || name == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    memcpy((char *)all + (size_t)b->rank * bytes, mine, bytes);
    if (b->world > 1) {
        snprintf(tmp, plen, "%s/.duet-boot-%u-%llu-%d.tmp", b->dir, b->gen, (unsigned long long)seq, b->rank);
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) {
            rc = -errno;
            goto out;
        }
        rc = duet__write_all(fd, &hdr, sizeof(hdr));
        if (rc == 0)
            rc = duet__write_all(fd, mine, bytes);
        if (close(fd) != 0 && rc == 0)
            rc = -errno;
        fd = -1;
        for (int q = 0; q < b->world && rc == 0; q++) {
            if (q == b->rank)
                continue;
            snprintf(name, plen, "%s/duet-boot-%u-%llu-%d-%d", b->dir, b->gen, (unsigned long long)seq, b->rank, q);
            if (link(tmp, name) != 0)
                rc = -errno;
        }
        unlink(tmp);
        if (rc != 0)
            goto out;
    }
    {
        const double deadline = duet__mono_ms() + (double)b->timeout_ms;
        for (int p = 0; p < b->world && rc == 0; p++) {
            if (p == b->rank)
                continue;
            snprintf(name, plen, "%s/duet-boot-%u-%llu-%d-%d", b->dir, b->gen, (unsigned long long)seq, p, b->rank);
            while ((fd = open(name, O_RDONLY)) < 0) {
                if (errno != ENOENT) {
                    rc = -errno;
                    goto out;
                }
                if (duet__mono_ms() > deadline) {
                    rc = -ETIMEDOUT; /* rank p never reached this round */
                    goto out;
                }
                struct timespec ms = {0, 1000000};
                nanosleep(&ms, NULL);
            }
            duet__boot_hdr_t got;
            rc = duet__read_all(fd, &got, sizeof(got));
            if (rc == 0 && (got.magic != DUET__BOOT_MAGIC || got.seq != seq || got.rank != p))
                rc = -EPROTO;
            else if (rc == 0 && got.bytes != (uint64_t)bytes)
                rc = -EMSGSIZE; /* the ranks are not in the same collective */
            if (rc == 0)
                rc = duet__read_all(fd, (char *)all + (size_t)p * bytes, bytes);
            close(fd);
            fd = -1;
            unlink(name);
        }
    }
    if (rc == 0)
        b->seq = seq;
out:
    if (fd >= 0)
        close(fd);
    free(tmp);
    free(name);
    return rc;
}

static void duet__file_release(void *user)
{
    duet__boot_file_t *b = (duet__boot_file_t *)user;
    free(b->dir);
    free(b);
}

duet_status_t duet_bootstrap_file(const char *dir, int rank, int world, int64_t timeout_ms, duet_bootstrap_t *boot_p)
{
    duet_bootstrap_t boot;
    duet__boot_file_t *b = NULL;
    struct stat sb;
    if (dir == NULL || boot_p == NULL)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_bootstrap_file: dir and boot_p must not be NULL");
    if (world < 1 || rank < 0 || rank >= world || timeout_ms <= 0)
        return duet__error(DUET_ERR_INVALID_ARG, "duet_bootstrap_file: rank %d of world %d, timeout %lld ms", rank,
                           world, (long long)timeout_ms);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(dir, R_OK | W_OK | X_OK) != 0)
        return duet__error(DUET_ERR_IO, "duet_bootstrap_file: '%s' is not a directory this process can write", dir);
    b = (duet__boot_file_t *)calloc(1, sizeof(*b));
    if (b == NULL || (b->dir = strdup(dir)) == NULL) {
        free(b);
        return duet__error(DUET_ERR_NO_MEMORY, "duet_bootstrap_file");
    }
    b->rank = rank;
    b->world = world;
    b->timeout_ms = timeout_ms;
    b->gen = duet__boot_file_gen++;
    memset(&boot, 0, sizeof(boot));
    boot.rank = rank;
    boot.world = world;
    boot.allgather = duet__file_allgather;
    boot.barrier = NULL; /* the context's barrier is then an allgather of one byte */
    boot.release = duet__file_release;
    boot.user = b;
    *boot_p = boot;
    return DUET_OK;
}
