/*
 * A profile's name, device, arch and sources are printed as they are (duet hw show, the headers of
 * predict and tune): a control character there is refused when the profile is read, so a profile
 * from a shared folder cannot send terminal escapes to standard output.
 */
#include <criterion/criterion.h>

#include "../cli_run.h"
#include "../test_util.h"
#include "base/base.h"

/* The built-in h200 as JSON text with `from` replaced by `to` (malloc'd). */
static char *h200_with(const char *from, const char *to)
{
    duet_hw_t hw = t_hw("h200");
    char *text = NULL;
    cr_assert_eq(duet_hw_to_json(&hw, &text), DUET_OK);
    char *p = strstr(text, from);
    cr_assert_not_null(p, "no '%s'", from);
    char *out = t_splice(text, (size_t)(p - text), strlen(from), to);
    free(text);
    return out;
}

Test(hw_text, a_control_character_in_a_printed_string_is_refused, T_TIMEOUT)
{
    static const struct {
        const char *from, *to, *why;
    } cases[] = {
        {"\"name\":\t\"h200\"", "\"name\":\t\"h200\\u001b[31m\"", "name: 'h200\\x1b[31m' holds a control character"},
        {"\"device\":\t\"", "\"device\":\t\"\\u009b31m", "device: '\\xc2\\x9b31m"},
        {"\"arch\":\t\"sm_90\"", "\"arch\":\t\"sm_90\\r\"", "arch: 'sm_90\\r' holds"},
        {"\"source\":\t\"", "\"source\":\t\"\\u0007", ".source: '\\x07"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = h200_with(cases[i].from, cases[i].to);
        duet_hw_t hw;
        cr_assert_eq(duet_hw_from_json(text, "p.json", &hw), DUET_ERR_PARSE, "%s", cases[i].to);
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%s", duet_last_error());
        free(text);
    }
    /* Text outside ASCII is text: a name in UTF-8 is kept. */
    char *text = h200_with("\"name\":\t\"h200\"", "\"name\":\t\"h200-\\u00e9t\\u00e9\"");
    duet_hw_t hw;
    cr_assert_eq(duet_hw_from_json(text, "p.json", &hw), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(hw.name, "h200-\xc3\xa9t\xc3\xa9");
    free(text);
}

Test(hw_text, hw_show_prints_nothing_of_a_profile_with_an_escape, T_TIMEOUT)
{
    char path[128];
    t_tmp_path(path, sizeof(path), "esc.json");
    char *text = h200_with("\"name\":\t\"h200\"", "\"name\":\t\"\\u001b]0;owned\\u0007\"");
    cr_assert_eq(t_spill(path, text), 0);
    free(text);
    static t_cli_t r;
    t_cli_run(&r, NULL, "hw", "show", path, NULL);
    t_cli_expect_error(&r, 2, "hw show", "name: '\\x1b]0;owned\\x07' holds a control character");
    cr_assert_str_eq(r.out, "");
}

Test(hw_text, text_plain, T_TIMEOUT)
{
    cr_assert_eq(duet__text_plain("h200 (sm_90) 1.5 GB/s"), 1);
    cr_assert_eq(duet__text_plain(""), 1);
    cr_assert_eq(duet__text_plain("caf\xc3\xa9"), 1, "UTF-8 e-acute");
    cr_assert_eq(duet__text_plain("a\tb"), 0, "a tab is a control character");
    cr_assert_eq(duet__text_plain("a\x7f"), 0, "DEL");
    cr_assert_eq(duet__text_plain("\xc2\x9b"), 0, "C1 CSI in UTF-8");
    cr_assert_eq(duet__text_plain("\xc3"), 0, "a cut UTF-8 sequence");
    cr_assert_eq(duet__text_plain("\xff"), 0, "not UTF-8");
}

/* Each rule of a profile file, met by one edit of h200's own JSON. */
Test(hw_text, every_rule_of_a_profile_file, T_TIMEOUT)
{
    static const struct {
        const char *from, *to, *why;
    } cases[] = {
        {"\"schema\":\t\"duet-hw/1\"", "\"schema\":\t\"duet-hw/9\"",
         "p.json: schema \"duet-hw/9\" is not \"duet-hw/1\""},
        {"\"schema\":\t\"duet-hw/1\"", "\"schema\":\t1", "p.json: \"schema\" must be a string"},
        {"\"schema\":\t\"duet-hw/1\",", "\"colour\": 1, \"schema\":\t\"duet-hw/1\",",
         "p.json: unknown key \"colour\" (schema, name, device, arch, fabric, constants)"},
        {"\"name\":\t\"h200\"", "\"name\":\t\"\"", "p.json: \"name\" must be 1 to"},
        {"\"name\":\t\"h200\",", "", "p.json: missing key \"name\""},
        {"\"fabric\":\t\"switch\"", "\"fabric\":\t\"ring\"", "p.json: fabric: \"ring\" is not \"switch\" or \"mesh\""},
        {"\"constants\":", "\"constantz\": 1, \"x\":", "unknown key \"constantz\""},
        {"\"n_sms\":\t{", "\"n_sm\":\t{", "p.json: constants.n_sm: unknown constant"},
        {"\"n_sms\":\t{", "\"n_sms\": 5, \"y\":\t{", "constants.n_sms: must be an object"},
        {"\"n_sms\":\t{", "\"n_sms\":\t{\"why\": 1, ", "constants.n_sms: unknown key \"why\" (value, unit, source)"},
        {"\"value\":\t132", "\"valu\":\t132", "unknown key \"valu\""},
        {"\"value\":\t132", "\"value\":\t\"132\"", "constants.n_sms: \"value\" must be a number"},
        {"\"value\":\t132", "\"value\":\t132.5", "constants.n_sms: must be an integer, got 132.5"},
        {"\"value\":\t132", "\"value\":\t-132", "constants.n_sms: must not be negative, got -132"},
        {"\"value\":\t132", "\"value\":\t1e999", "constants.n_sms: value is not finite"},
        {"\"value\":\t132", "\"value\":\t100000", "constants.n_sms: 100000 SMs is outside the plausible range"},
        {"\"unit\":\t\"SMs\"", "\"unit\":\t\"cores\"", "constants.n_sms: unit must be \"SMs\""},
        {"\"unit\":\t\"SMs\"", "\"unit\":\t3", "constants.n_sms: unit must be \"SMs\""},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *text = h200_with(cases[i].from, cases[i].to);
        duet_hw_t hw;
        cr_assert_eq(duet_hw_from_json(text, "p.json", &hw), DUET_ERR_PARSE, "%s", cases[i].to);
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%s: %s", cases[i].to, duet_last_error());
        free(text);
    }
    duet_hw_t hw;
    cr_assert_eq(duet_hw_load("", &hw), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_hw_load(NULL, &hw), DUET_ERR_INVALID_ARG);
    cr_assert_eq(duet_hw_load("no-such-profile", &hw), DUET_ERR_NOT_FOUND);
}
