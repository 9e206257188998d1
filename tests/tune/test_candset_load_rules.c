/*
 * Each rule of a candidate set file, met by one edit of the committed set
 * (tuning_data/candidate_set.json): the file refused, naming what is wrong and where.
 */
#include "tune_util.h"

static char *committed;

static void with_edit(const char *from, const char *to, const char *why)
{
    if (committed == NULL)
        committed = t_slurp("tuning_data/candidate_set.json");
    cr_assert_not_null(committed);
    char *p = strstr(committed, from);
    cr_assert_not_null(p, "no '%s'", from);
    char *text = t_splice(committed, (size_t)(p - committed), strlen(from), to);
    char path[128];
    t_tmp_path(path, sizeof(path), "set.json");
    cr_assert_eq(t_spill(path, text), 0);
    free(text);
    duet_tune_candset_t set;
    cr_assert_eq(duet_tune_candset_load(path, &set), DUET_ERR_PARSE, "%s -> %s", from, to);
    cr_assert(strstr(duet_last_error(), why) != NULL, "%s -> %s: %s", from, to, duet_last_error());
}

Test(candset_load_rules, every_rule_names_what_is_wrong, T_TIMEOUT)
{
    with_edit("\"duet-candidates/1\"", "\"duet-candidates/9\"", "not a candidate set (schema \"duet-candidates/1\"");
    with_edit("\"tolerance\":\t0.03", "\"tolerance\":\t2", "not a candidate set");
    with_edit("\"archs\":\t{", "\"archs\":\t7, \"x\": {", "not a candidate set");
    with_edit("\"order\":\t[", "\"orders\":\t[", "archs.sm_90: needs an \"order\" array");
    with_edit("\"n_shapes\":\t75", "\"n_shapes\":\t-1", "archs.sm_90.n_shapes");
    with_edit("\"mode\":\t\"fused\"", "\"mode\":\t\"warp\"",
              "archs.sm_90.order[0]: needs mode, gemm_frac and comm_frac in [0, 1], and tile");
    with_edit("\"gemm_frac\":\t1,", "\"gemm_frac\":\t1.5,", "archs.sm_90.order[0]: needs mode");
    with_edit("\"comm_frac\":\t0,", "\"comm_frac\":\t-0.5,", "archs.sm_90.order[0]: needs mode");
    with_edit("\"tile\":\t\"128x256x64\"", "\"tile\":\t5", "archs.sm_90.order[0]: needs mode");
    with_edit("\"gain\":\t42", "\"gain\":\t-42", "archs.sm_90.order[].gain: not an integer in [0, 2147483647]");
    with_edit("\"sms\":\t[132]", "\"sms\":\t[0]", "archs.sm_90.sms");
    with_edit("\"worlds\":\t[2]", "\"worlds\":\t[2.5]", "archs.sm_90.worlds");
    free(committed);
    committed = NULL;
}
