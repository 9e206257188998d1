/*
 * Each rule of a database entry, met by one edit of a stored entry: the entry is left out of the
 * listing with a warning naming the member, and the file is left as it is.
 */
#include "tune_util.h"

Test(db_entry_rules, every_rule_costs_the_entry_with_a_warning_naming_the_member, .timeout = 60)
{
    static const struct {
        const char *from, *to, *why;
    } cases[] = {
        {"\"tiles\":\t\"", "\"tiles\":\t5, \"was\":\t\"", ".tiles: missing, not a string, or longer than"},
        {"\"date\":\t\"", "\"date\":\t5, \"was\":\t\"", ".date: missing, not a string"},
        {"\"duet\":\t\"", "\"duet\":\t5, \"was\":\t\"", ".duet: missing, not a string"},
        {"\"sms\":\t132", "\"sms\":\t0", ".sms: missing or not an integer in [1, 4096]"},
        {"\"sms\":\t132", "\"sms\":\t132.5", ".sms: missing or not an integer"},
        {"\"modes\":\t[", "\"modes\":\t5, \"was\":\t[", ".modes: missing or not an array"},
        {"\"modes\":\t[\"fused\"", "\"modes\":\t[\"warp\"", ".modes: fused or concurrent"},
        {"\"collective\":\t\"all_gather\"", "\"collective\":\t\"gossip\"", ".collective: unknown collective 'gossip'"},
        {"\"dtype\":\t\"bf16\"", "\"dtype\":\t7", ".dtype: must be a string"},
        {"\"m\":\t1000", "\"m\":\t-1", ".m: -1 is not an integer in [0, 1099511627776]"},
        {"\"n\":\t4096", "\"n\":\t\"x\"", ".n: must be a number"},
        {"\"world\":\t2", "\"world\":\t0", ".world: 0 is not an integer in [1, 1024]"},
        {"\"root\":\t0", "\"root\":\t5000", ".root: 5000 is not an integer in [0, 1023]"},
        {"\"nc\":\t2048", "\"nc\":\t0", "comm tensor 1024x0"},
        {"\"n_warmup\":\t5", "\"n_warmup\":\t-5", ".n_warmup: missing or not an integer"},
        {"\"n_repeat\":\t20", "\"n_repeat\":\t2e6", ".n_repeat: missing or not an integer"},
        {"\"candidates\":\t[", "\"candidates\":\t5, \"was\":\t[", ".candidates: missing or more than 64"},
        {"\"ok\":\ttrue", "\"ok\":\t1", ".ok: missing or not true/false"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        tt_expect_edit_drops(cases[i].from, cases[i].to, cases[i].why);
}
