/*
 * Running the duet binary from a test, as a user would: arguments, standard input, exit code,
 * standard output and error. Shared by the CLI tests of every layer.
 */
#ifndef DUET_TEST_CLI_RUN_H
#define DUET_TEST_CLI_RUN_H

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

typedef struct t_cli {
    int code;
    char out[1 << 20];
    char err[1 << 14];
} t_cli_t;

static inline void t_cli_slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = '\0';
    if (f)
        fclose(f);
}

/*
 * Run build/duet (or $DUET_BIN) with the NULL-terminated arguments after `input` (standard input;
 * NULL for none), in this test's environment. Each Criterion test runs in its own process, so
 * pid-named files do not collide.
 */
static inline void t_cli_run(t_cli_t *r, const char *input, ...)
{
    const char *bin = getenv("DUET_BIN") ? getenv("DUET_BIN") : "build/duet";
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)bin;
    va_list ap;
    va_start(ap, input);
    for (const char *a; (a = va_arg(ap, const char *)) != NULL && argc < 63;)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    char in[64], out[64], err[64];
    t_tmp_path(in, sizeof(in), "cli.in");
    t_tmp_path(out, sizeof(out), "cli.out");
    t_tmp_path(err, sizeof(err), "cli.err");
    FILE *f = fopen(in, "wb");
    cr_assert_not_null(f);
    if (input)
        fputs(input, f);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        int fi = open(in, O_RDONLY), fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644),
            fe = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fi, 0);
        dup2(fo, 1);
        dup2(fe, 2);
        execv(bin, argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    r->code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    t_cli_slurp(out, r->out, sizeof(r->out));
    t_cli_slurp(err, r->err, sizeof(r->err));
    unlink(in);
    unlink(out);
    unlink(err);
}

/* Exit `code` and one line on stderr, starting "duet: <cmd>: ", mentioning `what`. */
static inline void t_cli_expect_error(const t_cli_t *r, int code, const char *cmd, const char *what)
{
    cr_assert_eq(r->code, code, "exit %d (want %d); stderr: %s", r->code, code, r->err);
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "duet: %s: ", cmd);
    cr_assert(strncmp(r->err, prefix, strlen(prefix)) == 0, "stderr '%s' lacks '%s'", r->err, prefix);
    cr_assert(strstr(r->err, what) != NULL, "stderr '%s' lacks '%s'", r->err, what);
    const char *nl = strchr(r->err, '\n');
    cr_assert(nl != NULL && nl[1] == '\0', "one line: '%s'", r->err);
    cr_assert(strstr(r->err, "Sanitizer") == NULL && strstr(r->err, "runtime error") == NULL);
}

#endif /* DUET_TEST_CLI_RUN_H */
