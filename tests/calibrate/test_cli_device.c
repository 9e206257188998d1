/*
 * One device at a time: `calibrate fit`, `calibrate select` and `validate` refuse corpora of
 * different devices, or a profile of another device than the corpora's, with one line naming both
 * (exit 2), unless --allow-device-mix; the drivers' spellings of one device are one device.
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "synth.h"

/* The synthetic corpus (simulated on h200's constants, 132 SMs) as measured on `device`. */
static void save_on(const char *path, const char *device)
{
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    snprintf(c.device, sizeof(c.device), "%s", device);
    cr_assert_eq(duet_corpus_save(&c, path), DUET_OK, "%s", duet_last_error());
    duet_corpus_free(&c);
}

Test(cli_device, validate_refuses_a_profile_of_another_device, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char h100[96], pcie[96];
    t_tmp(h100, sizeof(h100), "h100.json");
    t_tmp(pcie, sizeof(pcie), "pcie.json");
    save_on(h100, "NVIDIA H100 80GB HBM3");
    save_on(pcie, "NVIDIA H100 PCIe");

    /* An H100 corpus priced with the H200's profile: refused, naming both devices and the profile
     * of the corpus's device. */
    t_cli_run(r, NULL, "validate", "--corpus", h100, "--hw", "h200", "--quiet", NULL);
    t_cli_expect_error(r, 2, "validate",
                       "h100.json was measured on NVIDIA H100 80GB HBM3, but profile h200 is of NVIDIA H200: give its "
                       "profile (--hw h100), or pass --allow-device-mix");
    /* Forced: a warning, then the table. */
    t_cli_run(r, NULL, "validate", "--corpus", h100, "--hw", "h200", "--quiet", "--allow-device-mix", NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    cr_assert(strstr(r->err, "duet: validate: warning: ") == r->err, "%s", r->err);
    cr_assert(strstr(r->err, "measured on NVIDIA H100 80GB HBM3, profile h200 is of NVIDIA H200 (--allow-device-mix)"),
              "%s", r->err);
    cr_assert(strstr(r->out, "exact pick") != NULL, "%s", r->out);
    /* Its own profile: no word about devices. */
    t_cli_run(r, NULL, "validate", "--corpus", h100, "--hw", "h100", "--quiet", NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    cr_assert_str_eq(r->err, "");

    /* An H100 PCIe is not the SXM the h100 profile describes, and no built-in is its own. */
    t_cli_run(r, NULL, "validate", "--corpus", pcie, "--hw", "h100", "--quiet", NULL);
    t_cli_expect_error(r, 2, "validate",
                       "was measured on NVIDIA H100 PCIe, but profile h100 is of NVIDIA H100 80GB HBM3: no built-in is "
                       "of that device: fit one (docs/calibration.md), or pass --allow-device-mix");
    unlink(h100);
    unlink(pcie);
    free(r);
}

/* A profile spelling its device "NVIDIA H100" takes corpora of "NVIDIA H100 80GB HBM3" (what the
 * SXM's driver prints), and the reverse. */
Test(cli_device, spellings_of_one_device_match, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char corpus[96], prof[96];
    t_tmp(corpus, sizeof(corpus), "c.json");
    t_tmp(prof, sizeof(prof), "p.json");
    duet_hw_t hw = t_hw("h100");
    snprintf(hw.device, sizeof(hw.device), "NVIDIA H100");
    cr_assert_eq(duet_hw_save(&hw, prof), DUET_OK, "%s", duet_last_error());
    save_on(corpus, "NVIDIA H100 80GB HBM3");
    t_cli_run(r, NULL, "validate", "--corpus", corpus, "--hw", prof, "--quiet", NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    cr_assert_str_eq(r->err, "");
    save_on(corpus, "nvidia  H100");
    t_cli_run(r, NULL, "validate", "--corpus", corpus, "--hw", "h100", "--quiet", NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    unlink(corpus);
    unlink(prof);
    free(r);
}

Test(cli_device, validate_refuses_corpora_of_two_devices, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char a[96], b[96];
    t_tmp(a, sizeof(a), "a.json");
    t_tmp(b, sizeof(b), "b.json");
    save_on(a, "NVIDIA H200");
    save_on(b, "NVIDIA H100 80GB HBM3");
    t_cli_run(r, NULL, "validate", "--corpus", a, b, "--hw", "h200", "--quiet", NULL);
    t_cli_expect_error(r, 2, "validate", "b.json was measured on NVIDIA H100 80GB HBM3, ");
    cr_assert(strstr(r->err, "a.json on NVIDIA H200: corpora of one device only (pass --allow-device-mix to mix them)"),
              "%s", r->err);
    /* A second sweep of another device is a corpus like the others. */
    t_cli_run(r, NULL, "validate", "--corpus", a, "--sweep2", b, "--hw", "h200", "--quiet", NULL);
    t_cli_expect_error(r, 2, "validate", "b.json was measured on NVIDIA H100 80GB HBM3");
    /* Forced: a warning for the corpus and one for the profile. */
    t_cli_run(r, NULL, "validate", "--corpus", a, b, "--hw", "h200", "--quiet", "--allow-device-mix", NULL);
    cr_assert_eq(r->code, 0, "%s", r->err);
    cr_assert(strstr(r->err, "warning: ") != NULL && strstr(r->err, "on NVIDIA H200 (--allow-device-mix)") != NULL,
              "%s", r->err);
    unlink(a);
    unlink(b);
    free(r);
}

Test(cli_device, fit_and_select_refuse_and_a_forced_fit_names_the_corpus_device, T_TIMEOUT)
{
    t_cli_t *r = malloc(sizeof(*r));
    char a[96], b[96], prof[96], rep[96], cands[96];
    t_tmp(a, sizeof(a), "a.json");
    t_tmp(b, sizeof(b), "b.json");
    t_tmp(prof, sizeof(prof), "p.json");
    t_tmp(rep, sizeof(rep), "r.json");
    t_tmp(cands, sizeof(cands), "cands.txt");
    save_on(a, "NVIDIA H200");
    save_on(b, "NVIDIA H100 80GB HBM3");
#define FIT(...)                                                                                                       \
    t_cli_run(r, NULL, "calibrate", "fit", "--corpus", __VA_ARGS__, "-o", prof, "--report", rep, "--quiet",            \
              "--params", "gemm_eff_fp16", "--folds", "0", NULL)
    FIT(a, b, "--hw", "h200");
    t_cli_expect_error(r, 2, "calibrate fit", "b.json was measured on NVIDIA H100 80GB HBM3, ");
    cr_assert(access(prof, F_OK) != 0 && access(rep, F_OK) != 0, "nothing written");
    FIT(b, "--hw", "h200");
    t_cli_expect_error(r, 2, "calibrate fit",
                       "b.json was measured on NVIDIA H100 80GB HBM3, but base profile h200 is of NVIDIA H200: give "
                       "its profile (--hw h100), or pass --allow-device-mix");

    /* Forced from the H200's profile: the fitted profile is of the device the corpus measured. */
    FIT(b, "--hw", "h200", "--allow-device-mix");
    cr_assert_eq(r->code, 0, "%s", r->err);
    cr_assert(strstr(r->err, "warning: ") != NULL, "%s", r->err);
    duet_hw_t hw;
    cr_assert_eq(duet_hw_load(prof, &hw), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(hw.device, "NVIDIA H100 80GB HBM3");
    cr_assert_str_eq(hw.name, "h200");
    unlink(prof);
    unlink(rep);

    /* calibrate select reads corpora with a base profile the same way. */
    cr_assert_eq(t_spill(cands, "core gemm_eff_fp16\n"), 0);
    t_cli_run(r, NULL, "calibrate", "select", "--corpus", b, "--hw", "h200", "--candidates", cands, "--quiet", NULL);
    t_cli_expect_error(r, 2, "calibrate select", "but base profile h200 is of NVIDIA H200");
#undef FIT
    unlink(a);
    unlink(b);
    unlink(cands);
    free(r);
}
