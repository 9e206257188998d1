/*
 * The GPU backend's process group over files (backend/bootstrap_file.c, duet_bootstrap_file): plain
 * C, so tested here with processes in place of ranks. Files are created exclusively and never
 * through a link; a job takes only its own files, never those a dead job left in the directory.
 */
#define DUET_BACKEND_NO_MPI
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "../test_util.h"
#include "duet/backend.h"

/* Rank r's bytes in round n of job j: 8 bytes a reader can tell apart from any other job's. */
static void payload(char out[8], char job, int rank, int round)
{
    memset(out, 0, 8);
    snprintf(out, 8, "%c-%d-%d", job, rank, round);
}

/*
 * Run `rounds` allgathers of 8 bytes as `rank` of `world` (job `job`), in a child; it stops after
 * `stop_after` rounds (a rank that dies) when that is less. Exit status: 0 when every round gave
 * this job's bytes from every rank, 20 + n when round n failed (a timeout among them), 40 + n when
 * round n gave bytes of another job.
 */
static pid_t rank_run(const char *dir, char job, int rank, int world, int64_t timeout_ms, int rounds, int stop_after,
                      int delay_ms)
{
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid != 0)
        return pid;
    if (delay_ms > 0) {
        struct timespec ts = {delay_ms / 1000, (long)(delay_ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
    }
    duet_bootstrap_t boot;
    if (duet_bootstrap_file(dir, rank, world, timeout_ms, &boot) != DUET_OK)
        _exit(99);
    char mine[8], all[8 * 8], want[8];
    for (int n = 1; n <= rounds && n <= stop_after; n++) {
        payload(mine, job, rank, n);
        if (boot.allgather(boot.user, mine, all, sizeof(mine)) != 0)
            _exit(20 + n);
        for (int p = 0; p < world; p++) {
            payload(want, job, p, n);
            if (memcmp(all + 8 * p, want, 8) != 0)
                _exit(40 + n);
        }
    }
    boot.release(boot.user);
    _exit(0);
}

static int rank_wait(pid_t pid)
{
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
    cr_assert(WIFEXITED(ws), "a rank was killed (signal %d)", WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    return WEXITSTATUS(ws);
}

static int files_in(const char *dir)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void make_dir(char *dir, size_t n, const char *name)
{
    t_tmp_path(dir, n, name);
    cr_assert_eq(mkdir(dir, 0700), 0, "%s", dir);
}

Test(bootstrap_file, three_ranks_exchange_three_rounds_and_leave_no_file, T_TIMEOUT)
{
    char dir[128];
    make_dir(dir, sizeof(dir), "boot");
    pid_t r[3];
    for (int i = 0; i < 3; i++)
        r[i] = rank_run(dir, 'A', i, 3, 10000, 3, 3, 0);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(rank_wait(r[i]), 0, "rank %d", i);
    cr_assert_eq(files_in(dir), 0, "every file is removed once read");
}

Test(bootstrap_file, a_rank_that_never_comes_times_out, T_TIMEOUT)
{
    char dir[128];
    make_dir(dir, sizeof(dir), "boot");
    /* The first collective's first round (the hellos) waits 200 ms for rank 1, then fails: 21. */
    cr_assert_eq(rank_wait(rank_run(dir, 'A', 0, 2, 200, 1, 1, 0)), 21);
}

/*
 * A job whose rank 1 died after the first round, and whose rank 0 then timed out in the second,
 * leaves rank 0's second-round file for rank 1 in the directory. A later job in the same directory
 * (its ranks made seconds later, past the timeout) completes with its own bytes; before, its
 * rank 1 took the dead rank's bytes, or its rank 0 failed to publish over the dead file.
 */
Test(bootstrap_file, a_later_job_takes_its_own_bytes_not_a_dead_jobs, .timeout = 30)
{
    char dir[128];
    make_dir(dir, sizeof(dir), "boot");
    pid_t d0 = rank_run(dir, 'D', 0, 2, 300, 2, 2, 0), d1 = rank_run(dir, 'D', 1, 2, 300, 2, 1, 0);
    cr_assert_eq(rank_wait(d1), 0);
    cr_assert_eq(rank_wait(d0), 22, "the dead job's rank 0 timed out in its second round");
    cr_assert(files_in(dir) >= 1, "it left its published file");
    /* Rank 1 first, so that it meets the dead file before the live rank 0 replaces it. */
    pid_t l1 = rank_run(dir, 'L', 1, 2, 2000, 2, 2, 0), l0 = rank_run(dir, 'L', 0, 2, 2000, 2, 2, 300);
    int s1 = rank_wait(l1);
    cr_assert_eq(s1, 0, "rank 1 of the later job: %d", s1);
    cr_assert_eq(rank_wait(l0), 0, "rank 0 of the later job");
}

/*
 * A hello older than the timeout (plus a second of slack) is from a rank that gave up: a later
 * job's rank that comes first passes over it and waits for its live peer, whose hello replaces it.
 */
Test(bootstrap_file, a_hello_older_than_the_timeout_is_passed_over, .timeout = 30)
{
    char dir[128];
    make_dir(dir, sizeof(dir), "boot");
    cr_assert_eq(rank_wait(rank_run(dir, 'D', 0, 2, 100, 1, 1, 0)), 21, "the dead rank timed out in its hello");
    /* The later job's timeout is 800 ms: the dead hello must be over 1.8 s old when it is made. */
    struct timespec ts = {2, 100000000};
    nanosleep(&ts, NULL);
    pid_t l1 = rank_run(dir, 'L', 1, 2, 800, 2, 2, 0), l0 = rank_run(dir, 'L', 0, 2, 800, 2, 2, 300);
    cr_assert_eq(rank_wait(l1), 0, "rank 1 of the later job");
    cr_assert_eq(rank_wait(l0), 0, "rank 0 of the later job");
}

/*
 * A job killed moments before (its files younger than the timeout) may leave a hello that a later
 * rank takes; then the ranks disagree on the job and fail, but no rank ever returns the dead
 * job's bytes as its peer's.
 */
Test(bootstrap_file, a_fresh_dead_hello_fails_the_job_but_never_hands_over_its_bytes, .timeout = 30)
{
    char dir[128];
    make_dir(dir, sizeof(dir), "boot");
    cr_assert_eq(rank_wait(rank_run(dir, 'D', 0, 2, 100, 1, 1, 0)), 21, "the dead rank timed out in its hello");
    pid_t l1 = rank_run(dir, 'L', 1, 2, 1500, 2, 2, 0), l0 = rank_run(dir, 'L', 0, 2, 1500, 2, 2, 400);
    int s1 = rank_wait(l1), s0 = rank_wait(l0);
    cr_assert(s1 < 40 && s0 < 40, "no rank got another job's bytes (%d, %d)", s1, s0);
}

/* A symbolic link planted at a name the bootstrap writes: removed, never followed. */
Test(bootstrap_file, a_planted_link_is_never_followed, T_TIMEOUT)
{
    char dir[128], victim[128], link_at[256];
    make_dir(dir, sizeof(dir), "boot");
    t_tmp_path(victim, sizeof(victim), "victim.txt");
    cr_assert_eq(t_spill(victim, "precious\n"), 0);
    /* Rank 0 runs here, so its temporary names are known: every round's, under the names this
     * and earlier versions used, and rank 0's published name for rank 1 in the first round. */
    const char *const fmt[] = {"%s/.duet-boot-0-%d-0-%ld.tmp", "%s/.duet-boot-0-%d-0.tmp%.0ld"};
    for (int f = 0; f < 2; f++)
        for (int seq = 1; seq <= 3; seq++) {
            snprintf(link_at, sizeof(link_at), fmt[f], dir, seq, (long)getpid());
            cr_assert_eq(symlink(victim, link_at), 0, "%s", link_at);
        }
    snprintf(link_at, sizeof(link_at), "%s/duet-boot-0-1-0-1", dir);
    cr_assert_eq(symlink(victim, link_at), 0);
    pid_t r1 = rank_run(dir, 'A', 1, 2, 5000, 2, 2, 0);
    duet_bootstrap_t boot;
    cr_assert_eq(duet_bootstrap_file(dir, 0, 2, 5000, &boot), DUET_OK, "%s", duet_last_error());
    char mine[8], all[16], want[8];
    for (int n = 1; n <= 2; n++) {
        payload(mine, 'A', 0, n);
        int rc = boot.allgather(boot.user, mine, all, 8);
        cr_assert_eq(rc, 0, "round %d: %d", n, rc);
        payload(want, 'A', 1, n);
        cr_assert(memcmp(all + 8, want, 8) == 0, "round %d", n);
    }
    boot.release(boot.user);
    cr_assert_eq(rank_wait(r1), 0);
    char *text = t_slurp(victim);
    cr_assert_str_eq(text, "precious\n", "the link's target is never written");
    free(text);
}

Test(bootstrap_file, bad_arguments, T_TIMEOUT)
{
    duet_bootstrap_t boot;
    char file[128];
    t_tmp_path(file, sizeof(file), "plain.txt");
    cr_assert_eq(t_spill(file, "x"), 0);
    cr_assert_eq(duet_bootstrap_file(NULL, 0, 1, 10, &boot), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_bootstrap_file(t_tmpdir(), 1, 1, 10, &boot), DUET_ERR_INVALID_ARG, "rank outside the world");
    cr_assert_eq(duet_bootstrap_file(t_tmpdir(), 0, 1, 0, &boot), DUET_ERR_INVALID_ARG, "no timeout");
    cr_assert_eq(duet_bootstrap_file(file, 0, 1, 10, &boot), DUET_ERR_IO, "not a directory");
    /* World 1 exchanges with itself, writing nothing. */
    cr_assert_eq(duet_bootstrap_file(t_tmpdir(), 0, 1, 10, &boot), DUET_OK);
    char mine[4] = "abc", all[4];
    cr_assert_eq(boot.allgather(boot.user, mine, all, 4), 0);
    cr_assert_str_eq(all, "abc");
    boot.release(boot.user);
    cr_assert_eq(files_in(t_tmpdir()), 1, "only plain.txt");
}
