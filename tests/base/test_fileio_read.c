/*
 * The one reader of every input file (base/fileio.c, duet__read_file): a folder, or more than the
 * limit, is bad input (DUET_ERR_INVALID_ARG, exit status 2 on the command line); a regular file's
 * size is checked before a byte is read, a pipe is read up to the limit and refused there.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sys/wait.h>

#include "../test_util.h"
#include "base/base.h"

/* A file of `size` bytes of 'x' (written, so not sparse: its bytes are really there). */
static void put_bytes(const char *path, size_t size)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    for (size_t i = 0; i < size; i++)
        fputc('x', f);
    cr_assert_eq(fclose(f), 0);
}

Test(fileio_read, a_regular_file_over_the_limit_is_refused_by_its_size, T_TIMEOUT)
{
    char path[128];
    t_tmp_path(path, sizeof(path), "big.json");
    /* 600 MiB, sparse: stat says 629145600 bytes at once; reading them would take seconds and 512 MiB. */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert(fd >= 0 && ftruncate(fd, (off_t)600 << 20) == 0);
    close(fd);
    char *text = (char *)"untouched";
    cr_assert_eq(duet__read_file(path, &text, NULL), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "629145600 bytes, larger than the 512 MiB duet reads") != NULL, "%s",
              duet_last_error());
    cr_assert_str_eq(text, "untouched");
}

Test(fileio_read, the_limit_itself_is_read_and_one_byte_more_refused, T_TIMEOUT)
{
    duet__max_input_bytes = 1000;
    char at[128], over[128];
    t_tmp_path(at, sizeof(at), "at.txt");
    t_tmp_path(over, sizeof(over), "over.txt");
    put_bytes(at, 1000);
    put_bytes(over, 1001);
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(duet__read_file(at, &text, &len), DUET_OK, "%s", duet_last_error());
    cr_assert(len == 1000 && text[999] == 'x' && text[1000] == '\0');
    free(text);
    cr_assert_eq(duet__read_file(over, &text, &len), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "1001 bytes") != NULL, "%s", duet_last_error());
}

/* Standard input from a pipe that a child fills with `n` bytes. */
static pid_t stdin_from_pipe(size_t n)
{
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        char buf[256];
        memset(buf, 'y', sizeof(buf));
        for (size_t done = 0; done < n;) {
            size_t k = n - done < sizeof(buf) ? n - done : sizeof(buf);
            ssize_t w = write(p[1], buf, k);
            if (w <= 0)
                _exit(0); /* the reader stopped reading */
            done += (size_t)w;
        }
        _exit(0);
    }
    close(p[1]);
    cr_assert(dup2(p[0], STDIN_FILENO) == STDIN_FILENO);
    close(p[0]);
    return pid;
}

Test(fileio_read, a_pipe_is_read_up_to_the_limit_and_refused_there, T_TIMEOUT)
{
    duet__max_input_bytes = 100000;
    /* 10^6 bytes offered: refused after 100001 have been read, not after all of them. */
    pid_t pid = stdin_from_pipe(1000000);
    char *text = (char *)"untouched";
    cr_assert_eq(duet__read_file("-", &text, NULL), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "-: larger than the 0 MiB duet reads") != NULL, "%s", duet_last_error());
    cr_assert_str_eq(text, "untouched");
    close(STDIN_FILENO); /* the writer gets EPIPE and ends */
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
}

Test(fileio_read, a_pipe_within_the_limit_is_read_whole, T_TIMEOUT)
{
    duet__max_input_bytes = 100000;
    pid_t pid = stdin_from_pipe(100000);
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(duet__read_file("-", &text, &len), DUET_OK, "%s", duet_last_error());
    cr_assert(len == 100000 && text[0] == 'y' && text[99999] == 'y' && text[100000] == '\0');
    free(text);
    int ws = 0;
    cr_assert_eq(waitpid(pid, &ws, 0), pid);
}

Test(fileio_read, a_folder_is_bad_input_and_a_missing_file_not_found, T_TIMEOUT)
{
    char *text = NULL;
    cr_assert_eq(duet__read_file(t_tmpdir(), &text, NULL), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "is a folder, not a file") != NULL, "%s", duet_last_error());
    char path[128];
    t_tmp_path(path, sizeof(path), "absent.json");
    cr_assert_eq(duet__read_file(path, &text, NULL), DUET_ERR_NOT_FOUND);
}

Test(fileio_read, an_empty_file_and_a_proc_file_that_says_size_zero, T_TIMEOUT)
{
    char path[128];
    t_tmp_path(path, sizeof(path), "empty.json");
    put_bytes(path, 0);
    char *text = NULL;
    size_t len = 7;
    cr_assert_eq(duet__read_file(path, &text, &len), DUET_OK);
    cr_assert(len == 0 && text[0] == '\0');
    free(text);
    /* /proc/self/status is a regular file whose stat size is 0, yet it holds text: read to the end. */
    cr_assert_eq(duet__read_file("/proc/self/status", &text, &len), DUET_OK, "%s", duet_last_error());
    cr_assert(len > 100 && strncmp(text, "Name:", 5) == 0 && strlen(text) == len);
    free(text);
}
