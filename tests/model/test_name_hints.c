/*
 * Names a person types: a built-in profile in any case, and a near miss of a profile, collective,
 * mode or dtype answered with the name meant.
 */
#include <criterion/criterion.h>

#include "../test_util.h"

Test(name_hints, builtin_profiles_in_any_case, T_TIMEOUT)
{
    duet_hw_t lower, upper, mixed;
    cr_assert_eq(duet_hw_builtin("h200", &lower), DUET_OK);
    cr_assert_eq(duet_hw_load("H200", &upper), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_hw_load("Mi300X", &mixed), DUET_OK, "%s", duet_last_error());
    /* The profile is the built-in's, named as the built-in is. */
    cr_assert_str_eq(upper.name, "h200");
    cr_assert_eq(upper.n_sms, lower.n_sms);
    cr_assert_str_eq(mixed.name, "mi300x");
}

Test(name_hints, a_misspelt_profile_gets_the_nearest_builtin, T_TIMEOUT)
{
    duet_hw_t hw;
    /* One insertion from h200, one deletion from mi300x: suggested. */
    cr_assert_eq(duet_hw_load("h2000", &hw), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(duet_last_error(), "did you mean h200?") != NULL, "%s", duet_last_error());
    cr_assert(strstr(duet_last_error(), "nor a readable file") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_hw_load("mi300", &hw), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(duet_last_error(), "did you mean mi300x?") != NULL, "%s", duet_last_error());
    /* Nothing near: the list only. */
    cr_assert_eq(duet_hw_load("quux", &hw), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(duet_last_error(), "did you mean") == NULL, "%s", duet_last_error());
    cr_assert(strstr(duet_last_error(), "h100, h200, mi300x, mi350x") != NULL, "%s", duet_last_error());
}

Test(name_hints, misspelt_collective_mode_and_dtype, T_TIMEOUT)
{
    int32_t x;
    static const struct {
        duet_status_t (*parse)(const char *, int32_t *);
        const char *typed, *meant;
    } cases[] = {
        {duet_collective_parse, "all_gathr", "did you mean all_gather?"},
        {duet_collective_parse, "reduce_scater", "did you mean reduce_scatter?"},
        {duet_collective_parse, "ALL_REDUCE", "did you mean all_reduce?"},
        {duet_mode_parse, "fuse", "did you mean fused?"},
        {duet_dtype_parse, "BF16", "did you mean bf16?"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(cases[i].parse(cases[i].typed, &x), DUET_ERR_INVALID_ARG, "%s", cases[i].typed);
        cr_assert(strstr(duet_last_error(), cases[i].meant) != NULL, "%s: %s", cases[i].typed, duet_last_error());
    }
    /* Whatever the suggestion, the accepted names are listed. */
    cr_assert_eq(duet_dtype_parse("fp32", &x), DUET_ERR_INVALID_ARG);
    cr_assert(strstr(duet_last_error(), "one of: fp16, bf16") != NULL, "%s", duet_last_error());
}
