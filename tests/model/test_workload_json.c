/*
 * The workload codec (model/workload_json.c): the text and the cJSON object it writes (the same
 * members in the same order), what it reads back, and what it refuses, with the message naming
 * the member.
 */
#include <criterion/criterion.h>

#include "../test_util.h"
#include "model/internal.h"

TestSuite(workload_json, T_TIMEOUT);

/* A broadcast from rank 1 of 4: every member away from its default. */
static duet_workload_t wl_bcast(void)
{
    duet_workload_t w = t_wl(1000, 3000, 999, DUET_COLL_BROADCAST, 4096, 2048, 4);
    w.dtype = DUET_DTYPE_FP16;
    w.root = 1;
    return w;
}

static const char wl_text[] =
    "\"collective\": \"broadcast\", \"dtype\": \"fp16\", \"m\": 1000, \"n\": 3000, \"k\": 999, "
    "\"mc\": 4096, \"nc\": 2048, \"world\": 4, \"root\": 1";

Test(workload_json, the_text_and_the_object_hold_the_members_in_order)
{
    duet_workload_t w = wl_bcast();
    duet__sbuf_t b;
    duet__sbuf_init(&b);
    duet__workload_json_text(&b, &w);
    cr_assert(!b.failed);
    cr_assert_str_eq(b.data, wl_text);
    duet__sbuf_free(&b);

    cJSON *o = cJSON_CreateObject();
    cr_assert_eq(duet__workload_to_cjson(o, &w), DUET_OK);
    char *printed = cJSON_PrintUnformatted(o);
    cr_assert_str_eq(printed, "{\"collective\":\"broadcast\",\"dtype\":\"fp16\",\"m\":1000,\"n\":3000,\"k\":999,"
                              "\"mc\":4096,\"nc\":2048,\"world\":4,\"root\":1}");
    cJSON_free(printed);
    cJSON_Delete(o);
}

Test(workload_json, what_it_writes_reads_back)
{
    duet_workload_t w = wl_bcast(), back;
    char text[512];
    snprintf(text, sizeof(text), "{%s}", wl_text);
    cJSON *o = cJSON_Parse(text);
    cr_assert_eq(duet__workload_from_json(o, "w", 0, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(memcmp(&back, &w, sizeof(w)), 0);
    for (int i = 0; i < 9; i++) {
        static const char *const keys[] = {"collective", "dtype", "m", "n", "k", "mc", "nc", "world", "root"};
        cr_assert(duet__workload_json_key(keys[i]), "%s", keys[i]);
    }
    cr_assert(!duet__workload_json_key("comm_bytes"));
    /* Without a root: refused, or read as 0 where the caller allows it. */
    cJSON_DeleteItemFromObject(o, "root");
    cr_assert_eq(duet__workload_from_json(o, "w", 0, &back), DUET_ERR_PARSE);
    cr_assert_str_eq(duet_last_error(), "w.root: missing");
    cJSON_ReplaceItemInObject(o, "collective", cJSON_CreateString("all_gather"));
    cr_assert_eq(duet__workload_from_json(o, "w", DUET__WORKLOAD_ROOT_OPTIONAL, &back), DUET_OK, "%s",
                 duet_last_error());
    cr_assert_eq(back.root, 0);
    cr_assert_eq(back.coll, DUET_COLL_ALL_GATHER);
    cJSON_Delete(o);
}

Test(workload_json, it_refuses_naming_the_member)
{
    static const struct {
        const char *key, *value, *why;
    } cases[] = {
        {"collective", "\"gossip\"", "w.collective: unknown collective 'gossip'"},
        {"dtype", "7", "w.dtype: must be a string"},
        {"m", "1.5", "w.m: 1.5 is not an integer in [0, 1099511627776]"},
        {"nc", "-1", "w.nc: -1 is not an integer in [0, 1099511627776]"},
        {"world", "0", "w.world: 0 is not an integer in [1, 1024]"},
        {"root", "1024", "w.root: 1024 is not an integer in [0, 1023]"},
        /* The workload's own rules: a broadcast root inside the world. */
        {"root", "4", "w: broadcast root 4 is outside [0, 4)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[512];
        snprintf(text, sizeof(text), "{%s}", wl_text);
        cJSON *o = cJSON_Parse(text);
        cJSON_ReplaceItemInObject(o, cases[i].key, cJSON_Parse(cases[i].value));
        duet_workload_t back;
        memset(&back, 0x5a, sizeof(back));
        cr_assert_eq(duet__workload_from_json(o, "w", 0, &back), DUET_ERR_PARSE, "%zu", i);
        cr_assert(strstr(duet_last_error(), cases[i].why) == duet_last_error(), "%zu: %s", i, duet_last_error());
        /* Nothing written on failure. */
        cr_assert_eq(back.world, (int32_t)0x5a5a5a5a);
        cJSON_Delete(o);
    }
}
