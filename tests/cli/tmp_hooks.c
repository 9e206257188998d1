/*
 * The suite's temporary folder: made before the first test, removed with everything in it after
 * the last, so that no test leaves a file in /tmp whatever happens to it (t_tmpdir() in
 * tests/test_util.h puts each test's files in a folder of its own inside it). Criterion's runner
 * calls these hooks in its own process; the test processes inherit DUET_TEST_TMP from it.
 */
#include <criterion/criterion.h>
#include <criterion/hooks.h>

#include "../test_util.h"

static char t__suite_dir[64];

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
    (void)set;
    snprintf(t__suite_dir, sizeof(t__suite_dir), "/tmp/duet-tests-XXXXXX");
    if (mkdtemp(t__suite_dir) == NULL) {
        fprintf(stderr, "duet tests: cannot make %s: %s\n", t__suite_dir, strerror(errno));
        abort();
    }
    setenv("DUET_TEST_TMP", t__suite_dir, 1);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
    (void)stats;
    if (t__suite_dir[0] != '\0')
        t_rmtree(t__suite_dir);
}
