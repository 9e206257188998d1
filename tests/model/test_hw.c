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
    cr_assert_eq(duet_hw_builtin_count(), 4);
    for (int i = 0; i < duet_hw_builtin_count(); i++) {
        duet_hw_t hw;
        cr_assert_eq(duet_hw_builtin(duet_hw_builtin_name(i), &hw), DUET_OK);
        cr_assert_eq(duet_hw_validate(&hw), DUET_OK, "%s: %s", hw.name, duet_last_error());
        for (int f = 0; f < DUET_HW_NFIELDS; f++)
            cr_assert(strlen(hw.source[f]) > 5, "%s: constant %s has no source", hw.name, duet_hw_field_info(f)->key);
    }
    duet_hw_t h = t_hw("h200"), a = t_hw("mi300x"), b = t_hw("mi350x"), g = t_hw("h100");
    cr_assert_eq(h.n_sms, 132);
    /* H100 SXM5 (datasheet): 132 SMs, 50 MB of L2, 989.4 TFLOP/s dense bf16 like the H200; the start
     * profile's memory rate is a measured copy of about 3.0 TB/s (HBM3, 3.35 TB/s datasheet), which
     * the built-in's fit replaces by an effective constant (as h200's). */
    cr_assert_eq(g.n_sms, 132);
    cr_assert(t_rel_eq(g.l2_mib, 50, 1e-12));
    duet_hw_t g0;
    cr_assert_eq(duet_hw_load("tuning_data/h100_w1_start.json", &g0), DUET_OK, "%s", duet_last_error());
    cr_assert(t_rel_eq(g0.hbm_gbs, 3000, 1e-12));
    cr_assert(strncmp(g.source[DUET_HW_F_hbm_gbs], "fit: ", 5) == 0, "%s", g.source[DUET_HW_F_hbm_gbs]);
    cr_assert(t_rel_eq(duet_cost_peak_flops(&g, DUET_DTYPE_BF16), 989.4e12, 0.01));
    cr_assert_str_eq(g.arch, "sm_90");
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

/* Each built-in of a committed profile (tuning_data/NAME.json) is that file, constant by constant
 * with its sources (tools/gpu.sh builtin generates it; regenerate after a new fit). */
Test(hw, builtins_are_their_committed_profiles, T_TIMEOUT)
{
    static const char *const names[] = {"h100", "h200"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[64];
        snprintf(path, sizeof(path), "tuning_data/%s.json", names[i]);
        duet_hw_t file, built = t_hw(names[i]);
        cr_assert_eq(duet_hw_load(path, &file), DUET_OK, "%s", duet_last_error());
        cr_assert_str_eq(file.name, names[i]);
        cr_assert(duet_hw_device_match(file.device, built.device), "%s: %s vs %s", path, file.device, built.device);
        cr_assert_str_eq(file.arch, built.arch);
        cr_assert_eq(file.fabric, built.fabric);
        for (int f = 0; f < DUET_HW_NFIELDS; f++) {
            const char *key = duet_hw_field_info(f)->key;
            cr_assert_eq(duet_hw_get(&built, f), duet_hw_get(&file, f), "%s %s: built-in %.17g, file %.17g", path, key,
                         duet_hw_get(&built, f), duet_hw_get(&file, f));
            cr_assert_str_eq(built.source[f], file.source[f], "%s %s", path, key);
        }
    }
}

/* The H100's start profile: the H200's one-GPU start with the H100's own datasheet and measured
 * values, and every constant taken from the H200 saying so. */
Test(hw, h100_start_profile_names_its_sources, T_TIMEOUT)
{
    duet_hw_t s, h2;
    cr_assert_eq(duet_hw_load("tuning_data/h100_w1_start.json", &s), DUET_OK, "%s", duet_last_error());
    cr_assert_eq(duet_hw_load("tuning_data/h200_w1_start.json", &h2), DUET_OK, "%s", duet_last_error());
    cr_assert_str_eq(s.name, "h100");
    cr_assert_str_eq(s.device, "NVIDIA H100 80GB HBM3");
    for (int f = 0; f < DUET_HW_NFIELDS; f++) {
        const char *key = duet_hw_field_info(f)->key;
        /* No fit of the H100 yet: a value from the H200's fit says that it is the H200's. */
        cr_assert(strncmp(s.source[f], "fit:", 4) != 0, "%s: %s", key, s.source[f]);
        if (strncmp(h2.source[f], "fit:", 4) == 0) {
            cr_assert_eq(duet_hw_get(&s, f), duet_hw_get(&h2, f), "%s", key);
            cr_assert(strstr(s.source[f], "H200") || strstr(s.source[f], "h200"), "%s: %s", key, s.source[f]);
            cr_assert(strstr(s.source[f], "unmeasured on H100"), "%s: %s", key, s.source[f]);
        }
    }
    /* The fabric: NVLink 4 through NVSwitch, one port, its constants from the 2 x H200 fit. */
    cr_assert_eq(s.n_links, 1);
    cr_assert(strstr(s.source[DUET_HW_F_link_gbs], "2 x H200") != NULL, "%s", s.source[DUET_HW_F_link_gbs]);
    cr_assert(strstr(s.source[DUET_HW_F_link_gbs], "450 GB/s") != NULL, "%s", s.source[DUET_HW_F_link_gbs]);
    cr_assert(t_rel_eq(s.l2_mib, 50, 1e-12));
    cr_assert(t_rel_eq(s.hbm_gbs, 3000, 1e-12));
}

/* The names drivers print (CUDA's device properties and nvidia-smi, HIP's and rocminfo's), and
 * the profile each gets. */
Test(hw, builtin_for_device_by_the_drivers_names, T_TIMEOUT)
{
    static const struct {
        const char *device, *arch, *profile;
        duet_hw_match_t how;
    } cases[] = {
        {"NVIDIA H100 80GB HBM3", "sm_90", "h100", DUET_HW_MATCH_EXACT},
        {"NVIDIA H100", "sm_90", "h100", DUET_HW_MATCH_EXACT},
        {"nvidia  h100", NULL, "h100", DUET_HW_MATCH_EXACT},
        {"NVIDIA H100 PCIe", "sm_90", "h100", DUET_HW_MATCH_FAMILY},
        {"NVIDIA H100 NVL", "sm_90", "h100", DUET_HW_MATCH_FAMILY},
        {"NVIDIA H200", "sm_90", "h200", DUET_HW_MATCH_EXACT},
        {"NVIDIA H200 NVL", "sm_90", "h200", DUET_HW_MATCH_FAMILY},
        /* Whole words: a GH200 is not an H200, an H20 is neither; both Hopper, so the sm_90 default. */
        {"NVIDIA GH200 480GB", "sm_90", "h200", DUET_HW_MATCH_ARCH},
        {"NVIDIA H20", "sm_90", "h200", DUET_HW_MATCH_ARCH},
        {"NVIDIA H800", "sm_90", "h200", DUET_HW_MATCH_ARCH},
        {"AMD Instinct MI300X", "gfx942:sramecc+:xnack-", "mi300x", DUET_HW_MATCH_EXACT},
        {"AMD Instinct MI300X VF", "gfx942:sramecc+:xnack-", "mi300x", DUET_HW_MATCH_EXACT},
        {"AMD Instinct MI350X", "gfx950", "mi350x", DUET_HW_MATCH_EXACT},
        {"AMD Instinct MI355X", "gfx950", "mi350x", DUET_HW_MATCH_FAMILY},
        {"AMD Instinct MI325X", "gfx942", "mi300x", DUET_HW_MATCH_ARCH},
        {"AMD Instinct MI300A", "gfx942", "mi300x", DUET_HW_MATCH_ARCH},
        {"", "gfx950", "mi350x", DUET_HW_MATCH_ARCH},
        {"AMD Radeon Graphics", NULL, "mi300x", DUET_HW_MATCH_ARCH},
        {NULL, NULL, "h200", DUET_HW_MATCH_ARCH},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        duet_hw_match_t how = (duet_hw_match_t)-1;
        const char *p = duet_hw_builtin_for_device(cases[i].device, cases[i].arch, &how);
        cr_assert_str_eq(p, cases[i].profile, "%s", cases[i].device ? cases[i].device : "(null)");
        cr_assert_eq(how, cases[i].how, "%s: match %d", cases[i].device ? cases[i].device : "(null)", (int)how);
        duet_hw_t hw;
        cr_assert_eq(duet_hw_builtin(p, &hw), DUET_OK, "%s", p);
    }
    cr_assert_str_eq(duet_hw_builtin_for_device("NVIDIA H100 80GB HBM3", NULL, NULL), "h100");
    /* Every built-in's own device is an exact match of itself. */
    for (int i = 0; i < duet_hw_builtin_count(); i++) {
        duet_hw_t hw = t_hw(duet_hw_builtin_name(i));
        duet_hw_match_t how;
        cr_assert_str_eq(duet_hw_builtin_for_device(hw.device, hw.arch, &how), hw.name);
        cr_assert_eq(how, DUET_HW_MATCH_EXACT, "%s", hw.device);
    }
}

/* Which device names are one device (a corpus and a profile, two corpora). */
Test(hw, device_match_spellings_and_variants, T_TIMEOUT)
{
    static const struct {
        const char *a, *b;
        int same;
    } cases[] = {
        {"NVIDIA H200", "NVIDIA H200", 1},
        {"NVIDIA H200", "nvidia h200", 1},
        {"NVIDIA H200", " NVIDIA  H200 ", 1},
        {"NVIDIA H100 80GB HBM3", "NVIDIA H100", 1},
        {"NVIDIA H100", "NVIDIA H100 80GB HBM3", 1},
        {"AMD Instinct MI300X", "AMD Instinct MI300X VF", 1},
        {"NVIDIA H100 80GB HBM3", "NVIDIA H200", 0},
        {"NVIDIA H100", "NVIDIA H100 PCIe", 0},
        {"NVIDIA H100 80GB HBM3", "NVIDIA H100 PCIe", 0},
        {"NVIDIA H200", "NVIDIA H200 NVL", 0},
        {"NVIDIA H200", "NVIDIA GH200 480GB", 0},
        {"AMD Instinct MI350X", "AMD Instinct MI355X", 0},
        {"AMD Instinct MI300X", "AMD Instinct MI325X", 0},
        {"NVIDIA H100 PCIe", "NVIDIA H100 PCIe", 1},
        {"", "NVIDIA H200", 1},
        {"NVIDIA H200", NULL, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cr_assert_eq(duet_hw_device_match(cases[i].a, cases[i].b), cases[i].same, "'%s' vs '%s'", cases[i].a,
                     cases[i].b ? cases[i].b : "(null)");
        cr_assert_eq(duet_hw_device_match(cases[i].b, cases[i].a), cases[i].same, "symmetric: '%s' vs '%s'", cases[i].a,
                     cases[i].b ? cases[i].b : "(null)");
    }
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
