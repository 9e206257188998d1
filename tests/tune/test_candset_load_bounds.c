/*
 * The candidate-set loader checks every number it turns into an integer (issue 22: a coverage
 * entry without "k" was read as NaN and cast to int32_t, undefined behaviour that gcc's UBSan did
 * not see; `make sanitize` now names float-cast-overflow, which does).
 */
#include <criterion/criterion.h>
#include <unistd.h>

#include "../test_util.h"
#include "duet/tune.h"

static char path[64];
static void clean(void)
{
    if (path[0])
        unlink(path);
}
TestSuite(candset_load_bounds, .fini = clean, .timeout = 20);

/* A one-arch candidate set of one configuration: `gain` is its gain's text, `arch` the text of the
 * arch object's members after "order". */
static duet_status_t load_gain(const char *gain, const char *arch, duet_tune_candset_t *set)
{
    snprintf(path, sizeof(path), "/tmp/duet-candset-bounds-%d.json", (int)getpid());
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fprintf(f,
            "{\"schema\": \"%s\", \"tolerance\": 0.03, \"tiles\": \"%s\", \"archs\": {\"sm_90\": {\"order\": "
            "[{\"mode\": \"fused\", \"gemm_frac\": 0.75, \"comm_frac\": 0.25, \"tile\": \"256x128x64\", \"gain\": "
            "%s}]%s}}}",
            DUET_TUNE_CANDSET_SCHEMA, DUET_TILE_LIST_VERSION, gain, arch);
    fclose(f);
    return duet_tune_candset_load(path, set);
}
static duet_status_t load(const char *arch, duet_tune_candset_t *set)
{
    return load_gain("3", arch, set);
}

Test(candset_load_bounds, a_valid_set_loads_with_its_integers)
{
    duet_tune_candset_t set;
    cr_assert_eq(load(", \"n_shapes\": 5, \"sms\": [132, 304], \"worlds\": [8, 2], \"coverage\": [{\"k\": 1, "
                      "\"share_within_tol\": 0.6, \"mean_slowdown\": 1.01, \"max_slowdown\": 1.2, \"n_measured\": 5}]",
                      &set),
                 DUET_OK, "%s", duet_last_error());
    const duet_tune_candset_arch_t *a = duet_tune_candset_find(&set, "sm_90");
    cr_assert_not_null(a);
    cr_assert(a->n_shapes == 5 && a->n_sms == 2 && a->sms[0] == 132 && a->sms[1] == 304);
    cr_assert(a->n_worlds == 2 && a->worlds[0] == 2 && a->worlds[1] == 8);
    cr_assert(a->n_order == 1 && a->order[0].gain == 3);
    cr_assert(a->n_coverage == 1 && a->coverage[0].k == 1 && a->coverage[0].n_measured == 5);
    duet_tune_candset_free(&set);
    /* The optional counts may be absent: n_shapes and gain read as 0. */
    cr_assert_eq(load("", &set), DUET_OK, "%s", duet_last_error());
    cr_assert(set.archs[0].n_shapes == 0 && set.archs[0].n_sms == 0);
    duet_tune_candset_free(&set);
    /* The committed set still loads. */
    cr_assert_eq(duet_tune_candset_load("tuning_data/candidate_set.json", &set), DUET_OK, "%s", duet_last_error());
    duet_tune_candset_free(&set);
}

Test(candset_load_bounds, every_integer_is_checked_before_its_cast)
{
    static const struct {
        const char *arch, *what;
    } bad[] = {
        /* The case: k missing (NaN before). */
        {", \"coverage\": [{\"share_within_tol\": 1, \"n_measured\": 1}]", "coverage[].k"},
        {", \"coverage\": [{\"k\": 1e30, \"n_measured\": 1}]", "coverage[].k"},
        {", \"coverage\": [{\"k\": 0.5, \"n_measured\": 1}]", "coverage[].k"},
        {", \"coverage\": [{\"k\": 1}]", "coverage[].n_measured"},
        {", \"coverage\": [{\"k\": 1, \"n_measured\": -1e999}]", "coverage[].n_measured"},
        {", \"n_shapes\": 1e10", "n_shapes"},
        {", \"n_shapes\": \"5\"", "n_shapes"},
        {", \"sms\": [132, 1e30]", "sms"},
        {", \"sms\": [\"132\"]", "sms"},
        {", \"worlds\": [-1]", "worlds"},
        {", \"worlds\": [1e999]", "worlds"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        duet_tune_candset_t set;
        cr_assert_eq(load(bad[i].arch, &set), DUET_ERR_PARSE, "%s", bad[i].arch);
        cr_assert(strstr(duet_last_error(), bad[i].what) != NULL, "%s: %s", bad[i].arch, duet_last_error());
    }
}

Test(candset_load_bounds, a_gain_out_of_range_is_refused)
{
    duet_tune_candset_t set;
    cr_assert_eq(load_gain("3e9", "", &set), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "gain") != NULL, "%s", duet_last_error());
    cr_assert_eq(load_gain("-1", "", &set), DUET_ERR_PARSE);
}
