/*
 * Each rule of a fit's parameters and of a candidates file, met by one value just outside it.
 */
#include <criterion/criterion.h>

#include "synth.h"

Test(cal_rules, the_parameter_list, T_TIMEOUT)
{
    duet_cal_params_t p = duet_cal_default_params();
    static const struct {
        const char *list, *why;
    } cases[] = {
        {"", "parameter list: empty"},
        {"gemm_eff_bf16,,link_gbs", "empty or overlong name"},
        {"warp_speed", "parameter 'warp_speed' is not a profile constant"},
        {"n_sms", "parameter 'n_sms' is a count (SMs), not a continuous constant"},
        {"link_gbs,link_gbs", "parameter 'link_gbs' is listed twice"},
        {"link_gbs,", "trailing comma"},
        {"a_name_of_more_than_sixty_three_characters_is_no_name_of_a_constant_at_all", "empty or overlong name"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(duet_cal_params_set_fit(&p, cases[i].list), DUET_ERR_INVALID_ARG, "%s", cases[i].list);
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%s: %s", cases[i].list, duet_last_error());
    }
    cr_assert_eq(duet_cal_params_set_fit(&p, NULL), DUET_ERR_INVALID_ARG);
}

Test(cal_rules, the_fit_settings, T_TIMEOUT)
{
    duet_hw_t truth = t_hw("h200");
    duet_corpus_t c = t_synthetic_corpus(&truth, &duet_sim_policy_fluid, 0.0);
    duet_cal_params_t ok = duet_cal_default_params();
    cr_assert_eq(duet_cal_params_set_fit(&ok, "gemm_eff_bf16"), DUET_OK);
    ok.folds = 0;
    ok.threads = 1;
    static const char *const why[] = {
        "fit: between 1 and 24 parameters (got 0)",
        "fit: parameter",
        "need max_iter >= 1",
        "need max_iter >= 1",
        "need max_iter >= 1",
        "need max_iter >= 1",
        "presearch rounds must be in [0, 20]",
        "threads must be in [0, 4096]",
        "no row kind or no mode selected",
        "no row kind or no mode selected",
    };
    duet_cal_params_t p[sizeof(why) / sizeof(why[0])];
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
        p[i] = ok;
    p[0].n_fit = 0;
    p[1].fit[0] = DUET_HW_F_n_sms; /* a count */
    p[2].max_iter = 0;
    p[3].xtol = 0;
    p[4].gtol = -1;
    p[5].fd_step = 0.2;
    p[6].presearch = 21;
    p[7].threads = 5000;
    p[8].kinds = 0;
    p[9].modes = 0;
    duet_cal_report_t *rep = calloc(1, sizeof(*rep));
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        cr_assert_eq(duet_cal_report_run(&c, NULL, 1, &truth, &p[i], rep), DUET_ERR_INVALID_ARG, "%zu: %s", i,
                     duet_last_error());
        cr_assert(strstr(duet_last_error(), why[i]) != NULL, "%zu: %s", i, duet_last_error());
    }
    free(rep);
    duet_corpus_free(&c);
}

Test(cal_rules, the_candidates_file, T_TIMEOUT)
{
    duet_hw_t base = t_hw("h200");
    duet_cal_candidates_t *c = calloc(1, sizeof(*c));
    static const struct {
        const char *text, *why;
    } cases[] = {
        {"", "cands: no candidate (one a line: NAME PARAM,PARAM,... [CONST=VALUE ...])"},
        {"# only a comment\n\n", "cands: no candidate"},
        {"bad/name link_gbs\n", "cands:1: candidate name 'bad/name': 1 to 31 of A-Z a-z 0-9 _ . -"},
        {"a_name_of_thirty_two_characters_ link_gbs\n", "candidate name 'a_name_of_thirty_two_characters_'"},
        {"lonely\n", "cands:1: a candidate is one line 'NAME PARAM,PARAM,... [CONST=VALUE ...]'"},
        {"x=1 link_gbs\n", "cands:1: a candidate is one line"},
        {"a link_gbs=3 hbm_gbs\n", "cands:1: candidate 'a': the parameter list comes before the start values"},
        {"a warp\n", "cands:1: candidate 'a': parameter 'warp' is not a profile constant"},
        {"a link_gbs hbm_gbs\n", "cands:1: candidate 'a': 'hbm_gbs' is not CONST=VALUE"},
        {"a link_gbs =3\n", "cands:1: '=3' is not CONST=VALUE"},
        {"a link_gbs warp=3\n", "cands:1: 'warp' is not a profile constant"},
        {"a link_gbs link_gbs=\n", "cands:1: link_gbs: '' is not a number"},
        {"a link_gbs link_gbs=3x\n", "cands:1: link_gbs: '3x' is not a number"},
        {"a link_gbs link_gbs=inf\n", "cands:1: link_gbs: 'inf' is not a number"},
        {"a link_gbs link_gbs=1e9\n", "cands:1: link_gbs = 1e+09 is outside its bounds"},
        {"a link_gbs n_sms=100.5\n", "cands:1: n_sms is a count (SMs): 100.5 is not a whole number"},
        {"a link_gbs link_gbs=300 link_gbs=310\n", "cands:1: link_gbs is set twice"},
        {"a link_gbs\na hbm_gbs\n", "cands:2: candidate 'a' is already defined on line 1"},
        {"a clock_heat clock_heat=0\n", "cands:1: candidate 'a' fits clock_heat, which starts at 0 in profile h200"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(duet_cal_candidates_parse(cases[i].text, "cands", &base, c), DUET_ERR_PARSE, "%s: %s",
                     cases[i].text, duet_last_error());
        cr_assert(strstr(duet_last_error(), cases[i].why) != NULL, "%s: %s", cases[i].text, duet_last_error());
    }
    free(c);
}
