/*
 * No silent staleness: calibrate fit and validate on a corpus measured with other kernels than
 * this build's say so on stderr ("duet: CMD: warning: ..."), and the fitted profile's sources
 * record it.
 */
#include <criterion/criterion.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "synth.h"

static void save_with_hash(const char *path, const char *hash)
{
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.01);
    snprintf(c.prov.kernel_commit, sizeof(c.prov.kernel_commit), "0ld0ld0");
    snprintf(c.prov.kernel_hash, sizeof(c.prov.kernel_hash), "%s", hash);
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK, "%s", duet_last_error());
    duet_corpus_free(&c);
}

Test(cli_staleness, other_kernels_are_said_and_recorded, .timeout = 60)
{
    static t_cli_t r;
    char corpus[512], prof[512], rep[512];
    t_tmp_path(corpus, sizeof(corpus), "old.json");
    t_tmp_path(prof, sizeof(prof), "prof.json");
    t_tmp_path(rep, sizeof(rep), "rep.json");
    save_with_hash(corpus, "000000000000");
    t_cli_run(&r, NULL, "calibrate", "fit", "--corpus", corpus, "--hw", "h200", "-o", prof, "--report", rep, "--params",
              "link_gbs", "--folds", "2", "--date", "2026-12-03", "--quiet", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.err, "duet: calibrate fit: warning: ") == r.err, "%s", r.err);
    cr_assert(strstr(r.err, "0ld0ld0") && strstr(r.err, "describe other kernels"), "%s", r.err);
    duet_hw_t hw;
    cr_assert_eq(duet_hw_load(prof, &hw), DUET_OK, "%s", duet_last_error());
    char want[1024];
    snprintf(want, sizeof(want), "fit: %s (kernels 0ld0ld0, STALE: backend now %s)", corpus,
             duet_build_info().kernel_commit);
    cr_assert(strstr(hw.source[DUET_HW_F_link_gbs], want) == hw.source[DUET_HW_F_link_gbs], "%s",
              hw.source[DUET_HW_F_link_gbs]);

    t_cli_run(&r, NULL, "validate", "--corpus", corpus, "--hw", "h200", "--quiet", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert(strstr(r.err, "duet: validate: warning: ") == r.err, "%s", r.err);

    /* The same corpus stamped with this build's kernels: silent. */
    save_with_hash(corpus, duet_build_info().kernel_hash);
    t_cli_run(&r, NULL, "validate", "--corpus", corpus, "--hw", "h200", "--quiet", NULL);
    cr_assert_eq(r.code, 0, "%s", r.err);
    cr_assert_null(strstr(r.err, "warning"), "%s", r.err);
}
