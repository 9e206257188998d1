/*
 * Hardware profiles: built-ins, JSON round trip, and every rejection path of the loader.
 */
#include <criterion/criterion.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../test_util.h"

Test(status, every_code_has_a_name_and_message, T_TIMEOUT)
{
#define CHECK_STATUS(name, value, msg)                                                                                 \
    cr_assert_str_eq(duet_status_string(DUET_##name), msg);                                                            \
    cr_assert_str_eq(duet_status_name(DUET_##name), "DUET_" #name);                                                    \
    cr_assert(DUET_##name <= 0);
    DUET_STATUS_MAP(CHECK_STATUS)
#undef CHECK_STATUS
    cr_assert_eq(DUET_OK, 0);
    cr_assert_str_eq(duet_status_string((duet_status_t)-999), "unknown status");
}

Test(status, last_error_is_kept_and_cleared, T_TIMEOUT)
{
    duet_hw_t hw;
    cr_assert_eq(duet_hw_builtin("nope", &hw), DUET_ERR_NOT_FOUND);
    cr_assert(strstr(duet_last_error(), "nope") != NULL);
    cr_assert(strstr(duet_last_error(), "h200") != NULL, "the message lists the built-ins");
    duet_clear_error();
    cr_assert_str_eq(duet_last_error(), "");
}

Test(hw, builtins_are_complete_and_valid, T_TIMEOUT)
{
    cr_assert_eq(duet_hw_builtin_count(), 3);
    for (int i = 0; i < duet_hw_builtin_count(); i++) {
        duet_hw_t hw;
        cr_assert_eq(duet_hw_builtin(duet_hw_builtin_name(i), &hw), DUET_OK);
        cr_assert_eq(duet_hw_validate(&hw), DUET_OK, "%s: %s", hw.name, duet_last_error());
        for (int f = 0; f < DUET_HW_NFIELDS; f++)
            cr_assert(strlen(hw.source[f]) > 5, "%s: constant %s has no source", hw.name, duet_hw_field_info(f)->key);
    }
    duet_hw_t h = t_hw("h200"), a = t_hw("mi300x"), b = t_hw("mi350x");
    cr_assert_eq(h.n_sms, 132);
    cr_assert_eq(a.n_sms, 304);
    cr_assert_eq(b.n_sms, 256);
    cr_assert_eq(h.fabric, DUET_FABRIC_SWITCH);
    cr_assert_eq(a.fabric, DUET_FABRIC_MESH);
    cr_assert_eq(a.n_links, 7);
    /* Peak rates follow from the constants: 989 (datasheet H200), 1307 (MI300X), ~2300 (MI350X). */
    cr_assert(t_rel_eq(duet_cost_peak_flops(&h, DUET_DTYPE_BF16), 989.4e12, 0.01));
    cr_assert(t_rel_eq(duet_cost_peak_flops(&a, DUET_DTYPE_FP16), 1307e12, 0.01));
    cr_assert(t_rel_eq(duet_cost_peak_flops(&b, DUET_DTYPE_BF16), 2300e12, 0.01));
}

Test(hw, json_round_trip_is_exact, T_TIMEOUT)
{
    for (int i = 0; i < duet_hw_builtin_count(); i++) {
        duet_hw_t hw = t_hw(duet_hw_builtin_name(i)), back;
        char *text = NULL;
        cr_assert_eq(duet_hw_to_json(&hw, &text), DUET_OK);
        cr_assert_eq(duet_hw_from_json(text, "mem", &back), DUET_OK, "%s", duet_last_error());
        free(text);
        cr_assert_str_eq(back.name, hw.name);
        cr_assert_str_eq(back.arch, hw.arch);
        cr_assert_eq(back.fabric, hw.fabric);
        for (int f = 0; f < DUET_HW_NFIELDS; f++) {
            cr_assert_eq(duet_hw_get(&back, f), duet_hw_get(&hw, f), "%s", duet_hw_field_info(f)->key);
            cr_assert_str_eq(back.source[f], hw.source[f]);
        }
    }
}

/* Load the h200 profile as cJSON, let `edit` break it, and return the loader's status. */
static duet_status_t load_edited(void (*edit)(cJSON *root), duet_hw_t *out)
{
    duet_hw_t hw = t_hw("h200");
    char *text = NULL;
    cr_assert_eq(duet_hw_to_json(&hw, &text), DUET_OK);
    cJSON *root = cJSON_Parse(text);
    free(text);
    edit(root);
    char *bad = cJSON_Print(root);
    cJSON_Delete(root);
    duet_hw_t tmp;
    memset(&tmp, 0x5a, sizeof(tmp));
    duet_status_t st = duet_hw_from_json(bad, "bad.json", out ? out : &tmp);
    cJSON_free(bad);
    return st;
}

static cJSON *constant(cJSON *root, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "constants"), key);
}

static void edit_unknown_top(cJSON *r)
{
    cJSON_AddStringToObject(r, "colour", "blue");
}
static void edit_unknown_const(cJSON *r)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "value", 1);
    cJSON_AddItemToObject(cJSON_GetObjectItemCaseSensitive(r, "constants"), "warp_drive", e);
}
static void edit_missing_const(cJSON *r)
{
    cJSON_DeleteItemFromObject(cJSON_GetObjectItemCaseSensitive(r, "constants"), "hbm_gbs");
}
static void edit_string_value(cJSON *r)
{
    cJSON_ReplaceItemInObject(constant(r, "clock_ghz"), "value", cJSON_CreateString("fast"));
}
static void edit_negative(cJSON *r)
{
    cJSON_ReplaceItemInObject(constant(r, "link_gbs"), "value", cJSON_CreateNumber(-380));
}
static void edit_absurd(cJSON *r)
{
    cJSON_ReplaceItemInObject(constant(r, "n_sms"), "value", cJSON_CreateNumber(100000));
}
static void edit_fraction(cJSON *r)
{
    cJSON_ReplaceItemInObject(constant(r, "n_sms"), "value", cJSON_CreateNumber(131.5));
}
static void edit_unit(cJSON *r)
{
    cJSON_ReplaceItemInObject(constant(r, "hbm_gbs"), "unit", cJSON_CreateString("TB/s"));
}
static void edit_schema(cJSON *r)
{
    cJSON_ReplaceItemInObject(r, "schema", cJSON_CreateString("duet-hw/99"));
}
static void edit_fabric(cJSON *r)
{
    cJSON_ReplaceItemInObject(r, "fabric", cJSON_CreateString("carrier-pigeon"));
}
static void edit_not_object(cJSON *r)
{
    cJSON_ReplaceItemInObject(cJSON_GetObjectItemCaseSensitive(r, "constants"), "n_sms", cJSON_CreateNumber(132));
}
static void edit_missing_name(cJSON *r)
{
    cJSON_DeleteItemFromObject(r, "name");
}
static void edit_entry_key(cJSON *r)
{
    cJSON_AddStringToObject(constant(r, "n_sms"), "note", "x");
}
static void edit_source_type(cJSON *r)
{
    cJSON_ReplaceItemInObject(constant(r, "n_sms"), "source", cJSON_CreateNumber(3));
}
static void edit_switch_links(cJSON *r)
{
    cJSON_ReplaceItemInObject(constant(r, "n_links"), "value", cJSON_CreateNumber(4));
}

typedef struct reject_case {
    void (*edit)(cJSON *);
    const char *must_mention;
} reject_case_t;

Test(hw, loader_rejects_bad_profiles_naming_the_key_and_file, T_TIMEOUT)
{
    const reject_case_t cases[] = {
        {edit_unknown_top, "colour"},    {edit_unknown_const, "warp_drive"},
        {edit_missing_const, "hbm_gbs"}, {edit_string_value, "clock_ghz"},
        {edit_negative, "link_gbs"},     {edit_absurd, "n_sms"},
        {edit_fraction, "integer"},      {edit_unit, "GB/s"},
        {edit_schema, "duet-hw/99"},     {edit_fabric, "carrier-pigeon"},
        {edit_not_object, "n_sms"},      {edit_missing_name, "name"},
        {edit_entry_key, "note"},        {edit_source_type, "source"},
        {edit_switch_links, "n_links"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_status_t st = load_edited(cases[i].edit, NULL);
        cr_assert_eq(st, DUET_ERR_PARSE, "case %zu loaded: %s", i, duet_last_error());
        cr_assert(strstr(duet_last_error(), cases[i].must_mention) != NULL, "case %zu: '%s' lacks '%s'", i,
                  duet_last_error(), cases[i].must_mention);
        cr_assert(strstr(duet_last_error(), "bad.json") != NULL, "case %zu: '%s' lacks the file name", i,
                  duet_last_error());
    }
}

Test(hw, loader_rejects_invalid_json_with_a_line_number, T_TIMEOUT)
{
    duet_hw_t hw;
    cr_assert_eq(duet_hw_from_json("{\n  \"schema\": \"duet-hw/1\",\n  oops\n}", "x.json", &hw), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "x.json: line 3") != NULL, "%s", duet_last_error());
    cr_assert_eq(duet_hw_from_json("[1, 2]", "y.json", &hw), DUET_ERR_PARSE);
    cr_assert(strstr(duet_last_error(), "object") != NULL);
    cr_assert_eq(duet_hw_from_json("", "z.json", &hw), DUET_ERR_PARSE);
}

Test(hw, failed_load_leaves_the_output_untouched, T_TIMEOUT)
{
    duet_hw_t out;
    memset(&out, 0x77, sizeof(out));
    unsigned char before[sizeof(out)];
    memcpy(before, &out, sizeof(out));
    cr_assert_eq(load_edited(edit_negative, &out), DUET_ERR_PARSE);
    cr_assert_eq(memcmp(before, &out, sizeof(out)), 0);
}

Test(hw, save_is_atomic_and_loadable, T_TIMEOUT)
{
    char dir[128];
    cr_assert_lt(snprintf(dir, sizeof(dir), "%s/hw-XXXXXX", t_tmpdir()), (int)sizeof(dir));
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof(path), "%s/my.json", dir);
    duet_hw_t hw = t_hw("mi300x"), back;
    hw.link_gbs = 44.0;
    cr_assert_eq(duet_hw_save(&hw, path), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_hw_load(path, &back), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(back.link_gbs, 44.0);
    /* A folder that does not exist: an error, and nothing written. */
    char bad[300];
    snprintf(bad, sizeof(bad), "%s/missing/x.json", dir);
    cr_assert_eq(duet_hw_save(&hw, bad), DUET_ERR_NOT_FOUND);
    struct stat sb;
    cr_assert_neq(stat(bad, &sb), 0);
    /* An invalid profile is refused before anything is written. */
    char other[300];
    snprintf(other, sizeof(other), "%s/invalid.json", dir);
    hw.n_sms = 0;
    cr_assert_eq(duet_hw_save(&hw, other), DUET_ERR_INVALID_ARG);
    cr_assert_neq(stat(other, &sb), 0);
    unlink(path);
    rmdir(dir);
}

Test(hw, load_resolves_names_and_paths, T_TIMEOUT)
{
    duet_hw_t hw;
    cr_assert_eq(duet_hw_load("mi350x", &hw), DUET_OK);
    cr_assert_str_eq(hw.arch, "gfx950");
    cr_assert_eq(duet_hw_load("no-such-profile", &hw), DUET_ERR_NOT_FOUND);
    cr_assert_eq(duet_hw_load("/nonexistent/dir/p.json", &hw), DUET_ERR_NOT_FOUND);
    cr_assert_eq(duet_hw_load("", &hw), DUET_ERR_INVALID_ARG);
}

/* The built-in h200 is the calibrated profile, constant by constant, with the file's sources
 * (tools/gpu.sh builtin generates it; regenerate after a new fit). */
Test(hw, builtin_h200_is_the_calibrated_profile, T_TIMEOUT)
{
    duet_hw_t file, built = t_hw("h200");
    cr_assert_eq(duet_hw_load("tuning_data/h200.json", &file), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(file.name, "h200");
    cr_assert_str_eq(file.arch, built.arch);
    cr_assert_eq(file.fabric, built.fabric);
    for (int f = 0; f < DUET_HW_NFIELDS; f++) {
        const char *key = duet_hw_field_info(f)->key;
        cr_assert_eq(duet_hw_get(&built, f), duet_hw_get(&file, f), "%s: built-in %.17g, file %.17g", key,
                     duet_hw_get(&built, f), duet_hw_get(&file, f));
        cr_assert_str_eq(built.source[f], file.source[f], "%s", key);
    }
    /* The fit's own constants say so in their source. */
    const char *fit = "fit: tuning_data/h200_world1-train-s1.json (kernels ";
    cr_assert(strncmp(built.source[DUET_HW_F_gemm_eff_fp16], fit, strlen(fit)) == 0, "%s",
              built.source[DUET_HW_F_gemm_eff_fp16]);
    /* The fabric's constants come from the 2 x H200 fit: a one-GPU corpus moves no remote bytes. */
    cr_assert(strncmp(built.source[DUET_HW_F_link_gbs], "fit: tuning_data/h200_world2.json", 33) == 0, "%s",
              built.source[DUET_HW_F_link_gbs]);
}
