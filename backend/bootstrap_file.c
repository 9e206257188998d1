/*
 * The process group over files in a directory the ranks of one node share (duet_bootstrap_file,
 * include/duet/backend.h). Plain C without MPI or a GPU: the CPU tests build it too
 * (tests/base/test_bootstrap_file.c).
 *
 * Round `seq` of rank p is one file written once and hard-linked once per reader q != p, as
 * DIR/duet-boot-GEN-SEQ-P-Q; reader q reads its link and removes it, and the writer removes its
 * temporary name once the links exist. So every file disappears as soon as it has been read, and
 * a reader sees either no link or a complete file (link() is atomic, the data is written before).
 *
 * A job's identity. A rank that died or timed out leaves files that no reader removed, under the
 * names a later job in the same directory uses. So every rank draws 64 random bits (its nonce)
 when its bootstrap is made, and the first collective starts with a round of hellos: each rank's
 * nonce and the wall-clock time its bootstrap was made. From then on every file carries the
 * writer's nonce and the job's identity as the writer sees it (a hash of every rank's nonce), and
 * a reader takes only a file whose writer's nonce is the one its hello round gave: anything else
 * is a file of another job, left alone while the reader waits for the real one (which its writer
 * puts in place of the stale file). A hello
 * written more than the timeout before this rank's bootstrap was made is from a rank that has
 * given up (a live rank waits at most the timeout), so it is ignored too. A stale hello written
 * within the timeout (a job killed moments before) can still be taken; the ranks' views of the job
 * then differ, which the next round finds (-ESTALE, or a timeout), so the job fails instead of
 * going on with another job's bytes.
 *
 * Files are created exclusively and never through a symbolic link: a link planted at a temporary
 * or published name is removed, never followed, and its target never written.
 */
#define DUET_BACKEND_NO_MPI
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "duet/backend.h"

typedef struct duet__boot_file {
    char *dir;
    int rank, world;
    int64_t timeout_ms;
    unsigned gen;     /* this process's earlier duet_bootstrap_file calls: part of every name */
    uint64_t seq;     /* rounds done (the hello round included) */
    uint64_t nonce;   /* this rank's 64 random bits */
    int64_t made_ms;  /* wall-clock time this bootstrap was made (ms since the epoch) */
    uint64_t *nonces; /* every rank's nonce, from the hello round (world of them) */
    uint64_t job;     /* their hash: the job's identity (0 before the hello round) */
} duet__boot_file_t;

/* Bootstraps made in this process so far. Every rank makes its bootstraps in the same order, so
 * the ranks of one agree on its number, and its files cannot meet an earlier one's. */
static unsigned duet__boot_file_gen;

typedef struct duet__boot_hdr {
    uint64_t magic, seq, bytes;
    int64_t rank;
    uint64_t nonce;  /* the writer's */
    uint64_t job;    /* the writer's view of the job: a hash of every rank's nonce (0 in a hello) */
    int64_t made_ms; /* when the writer's bootstrap was made */
} duet__boot_hdr_t;

#define DUET__BOOT_MAGIC 0x326f6f6274657564ull /* "duetboo2" */

/* What a reader makes of a file at its name. */
enum { DUET__BOOT_TAKE, DUET__BOOT_FOREIGN, DUET__BOOT_STALE_VIEW };

static double duet__mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int64_t duet__wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* 64 random bits, never 0. */
static uint64_t duet__boot_nonce(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = ((uint64_t)ts.tv_sec * 1000000007u) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
        r ^= r >> 33;
        r *= 0xff51afd7ed558ccdull;
        r ^= r >> 33;
    }
    return r ? r : 1;
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

/* Publish one round of this rank: the header and payload to a new temporary (created exclusively,
 * never through a link), then one hard link per reader. A name already there is another job's (no
 * rank of this job writes it twice): it is removed and the link made again. */
static int duet__boot_publish(duet__boot_file_t *b, uint64_t seq, const void *payload, size_t bytes, char *tmp,
                              char *name, size_t plen)
{
    duet__boot_hdr_t hdr = {DUET__BOOT_MAGIC, seq, (uint64_t)bytes, b->rank, b->nonce, b->job, b->made_ms};
    int rc = 0, fd = -1;
    snprintf(tmp, plen, "%s/.duet-boot-%u-%llu-%d-%ld.tmp", b->dir, b->gen, (unsigned long long)seq, b->rank,
             (long)getpid());
    for (int attempt = 0; fd < 0; attempt++) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && (errno != EEXIST || attempt == 3))
            return -errno;
        if (fd < 0)
            unlink(tmp); /* left by a dead process of this pid, or planted: removed, not followed */
    }
    rc = duet__write_all(fd, &hdr, sizeof(hdr));
    if (rc == 0)
        rc = duet__write_all(fd, payload, bytes);
    if (close(fd) != 0 && rc == 0)
        rc = -errno;
    for (int q = 0; q < b->world && rc == 0; q++) {
        if (q == b->rank)
            continue;
        snprintf(name, plen, "%s/duet-boot-%u-%llu-%d-%d", b->dir, b->gen, (unsigned long long)seq, b->rank, q);
        for (int attempt = 0;; attempt++) {
            if (link(tmp, name) == 0)
                break;
            if (errno != EEXIST || attempt == 3) {
                rc = -errno;
                break;
            }
            unlink(name); /* another job's file, or a planted link: removed, not followed */
        }
    }
    unlink(tmp);
    return rc;
}

/* What the header of rank p's file in round seq says of it: this job's, another job's, or this
 * job's from a rank whose view of the job differs from ours. */
static int duet__boot_judge(const duet__boot_file_t *b, const duet__boot_hdr_t *got, uint64_t seq, int p)
{
    if (got->magic != DUET__BOOT_MAGIC || got->seq != seq || got->rank != p)
        return DUET__BOOT_FOREIGN;
    if (b->nonces == NULL) /* a hello: too old to be from a rank still waiting for ours */
        return got->made_ms < b->made_ms - b->timeout_ms - 1000 ? DUET__BOOT_FOREIGN : DUET__BOOT_TAKE;
    if (got->nonce != b->nonces[p])
        return DUET__BOOT_FOREIGN;
    return got->job == b->job ? DUET__BOOT_TAKE : DUET__BOOT_STALE_VIEW;
}

/* Read rank p's file of round seq into out (bytes), waiting for it until `deadline`; the header
 * goes to *got. Files of other jobs are passed over and left in place. */
static int duet__boot_collect(duet__boot_file_t *b, uint64_t seq, int p, void *out, size_t bytes, double deadline,
                              char *name, size_t plen, duet__boot_hdr_t *got)
{
    snprintf(name, plen, "%s/duet-boot-%u-%llu-%d-%d", b->dir, b->gen, (unsigned long long)seq, p, b->rank);
    for (;;) {
        int fd = open(name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno != ENOENT && errno != ELOOP)
            return -errno;
        if (fd >= 0) {
            int rc = duet__read_all(fd, got, sizeof(*got));
            int verdict = rc == 0 ? duet__boot_judge(b, got, seq, p) : DUET__BOOT_FOREIGN;
            if (verdict == DUET__BOOT_STALE_VIEW) {
                close(fd);
                return -ESTALE; /* a rank took another job's hello: the ranks disagree on the job */
            }
            if (verdict == DUET__BOOT_TAKE) {
                if (got->bytes != (uint64_t)bytes)
                    rc = -EMSGSIZE; /* the ranks are not in the same collective */
                else
                    rc = duet__read_all(fd, out, bytes);
                close(fd);
                unlink(name);
                return rc;
            }
            close(fd); /* another job's (or a short file being replaced): wait for this job's */
        }
        if (duet__mono_ms() > deadline)
            return -ETIMEDOUT; /* rank p never reached this round */
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* One round: publish `mine`, collect every other rank's into all. */
static int duet__boot_round(duet__boot_file_t *b, const void *mine, void *all, size_t bytes, duet__boot_hdr_t *hdrs)
{
    uint64_t seq = b->seq + 1;
    size_t plen = strlen(b->dir) + 96;
    char *tmp = (char *)malloc(plen), *name = (char *)malloc(plen);
    int rc = 0;
    if (tmp == NULL || name == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    memcpy((char *)all + (size_t)b->rank * bytes, mine, bytes);
    if (b->world > 1)
        rc = duet__boot_publish(b, seq, mine, bytes, tmp, name, plen);
    const double deadline = duet__mono_ms() + (double)b->timeout_ms;
    for (int p = 0; p < b->world && rc == 0; p++) {
        duet__boot_hdr_t got;
        if (p != b->rank)
            rc = duet__boot_collect(b, seq, p, (char *)all + (size_t)p * bytes, bytes, deadline, name, plen, &got);
        if (rc == 0 && hdrs != NULL)
            hdrs[p] = p == b->rank ? (duet__boot_hdr_t){.nonce = b->nonce} : got;
    }
    if (rc == 0)
        b->seq = seq;
out:
    free(tmp);
    free(name);
    return rc;
}

/* The job's identity: FNV-1a over every rank's nonce in rank order. */
static uint64_t duet__boot_job(const uint64_t *nonces, int world)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int r = 0; r < world; r++)
        for (int i = 0; i < 8; i++) {
            h ^= (nonces[r] >> (8 * i)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    return h ? h : 1;
}

/* The hello round (the first collective's start): every rank's nonce, and from them the job. */
static int duet__boot_hello(duet__boot_file_t *b)
{
    duet__boot_hdr_t *hdrs = (duet__boot_hdr_t *)calloc((size_t)b->world, sizeof(*hdrs));
    unsigned char *all = (unsigned char *)malloc((size_t)b->world);
    uint64_t *nonces = (uint64_t *)calloc((size_t)b->world, sizeof(*nonces));
    unsigned char one = 1;
    int rc = hdrs && all && nonces ? duet__boot_round(b, &one, all, 1, hdrs) : -ENOMEM;
    if (rc == 0) {
        for (int r = 0; r < b->world; r++)
            nonces[r] = hdrs[r].nonce;
        b->nonces = nonces;
        b->job = duet__boot_job(nonces, b->world);
        nonces = NULL;
    }
    free(hdrs);
    free(all);
    free(nonces);
    return rc;
}

static int duet__file_allgather(void *user, const void *mine, void *all, size_t bytes)
{
    duet__boot_file_t *b = (duet__boot_file_t *)user;
    if (b->nonces == NULL) {
        int rc = duet__boot_hello(b);
        if (rc != 0)
            return rc;
    }
    return duet__boot_round(b, mine, all, bytes, NULL);
}

static void duet__file_release(void *user)
{
    duet__boot_file_t *b = (duet__boot_file_t *)user;
    free(b->nonces);
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
    b->nonce = duet__boot_nonce();
    b->made_ms = duet__wall_ms();
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
