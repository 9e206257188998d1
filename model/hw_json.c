/*
 * Hardware profiles as JSON (cJSON).
 *
 * Format (schema "duet-hw/1"):
 *   {"schema": "duet-hw/1", "name": "h200", "device": "NVIDIA H200", "arch": "sm_90",
 *    "fabric": "switch" | "mesh",
 *    "constants": {"n_sms": {"value": 132, "unit": "SMs", "source": "..."}, ...}}
 * Every constant of DUET_HW_FIELDS must be present, with the unit duet uses; "source" is
 * optional text. Anything else is an error that names the key and the file.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "duet/model.h"
#include "model/internal.h"

static duet_status_t duet__json_string(const cJSON *obj, const char *key, const char *origin, char *out, size_t n)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (it == NULL)
        return duet__error(DUET_ERR_PARSE, "%s: missing key \"%s\"", origin, key);
    if (!cJSON_IsString(it))
        return duet__error(DUET_ERR_PARSE, "%s: \"%s\" must be a string", origin, key);
    if (strlen(it->valuestring) == 0 || strlen(it->valuestring) >= n)
        return duet__error(DUET_ERR_PARSE, "%s: \"%s\" must be 1 to %zu characters", origin, key, n - 1);
    snprintf(out, n, "%s", it->valuestring);
    return DUET_OK;
}

static duet_status_t duet__hw_constant(const cJSON *entry, int f, const char *origin, duet_hw_t *hw)
{
    const duet_hw_field_info_t *fi = duet_hw_field_info(f);
    if (!cJSON_IsObject(entry))
        return duet__error(
            DUET_ERR_PARSE,
            "%s: constants.%s: must be an object {\"value\": number, \"unit\": \"%s\", \"source\": text}", origin,
            fi->key, fi->unit);
    const cJSON *it;
    cJSON_ArrayForEach(it, entry)
    {
        if (strcmp(it->string, "value") != 0 && strcmp(it->string, "unit") != 0 && strcmp(it->string, "source") != 0)
            return duet__error(DUET_ERR_PARSE, "%s: constants.%s: unknown key \"%s\" (value, unit, source)", origin,
                               fi->key, it->string);
    }
    const cJSON *val = cJSON_GetObjectItemCaseSensitive(entry, "value");
    if (val == NULL)
        return duet__error(DUET_ERR_PARSE, "%s: constants.%s: missing \"value\"", origin, fi->key);
    if (!cJSON_IsNumber(val))
        return duet__error(DUET_ERR_PARSE, "%s: constants.%s: \"value\" must be a number", origin, fi->key);
    double v = val->valuedouble;
    if (!isfinite(v))
        return duet__error(DUET_ERR_PARSE, "%s: constants.%s: value is not finite", origin, fi->key);
    if (fi->is_int && v != floor(v))
        return duet__error(DUET_ERR_PARSE, "%s: constants.%s: must be an integer, got %g", origin, fi->key, v);
    if (v < 0)
        return duet__error(DUET_ERR_PARSE, "%s: constants.%s: must not be negative, got %g", origin, fi->key, v);
    if (v < fi->min || v > fi->max)
        return duet__error(DUET_ERR_PARSE, "%s: constants.%s: %g %s is outside the plausible range [%g, %g]", origin,
                           fi->key, v, fi->unit, fi->min, fi->max);
    const cJSON *unit = cJSON_GetObjectItemCaseSensitive(entry, "unit");
    if (unit != NULL && (!cJSON_IsString(unit) || strcmp(unit->valuestring, fi->unit) != 0))
        return duet__error(DUET_ERR_PARSE, "%s: constants.%s: unit must be \"%s\"", origin, fi->key, fi->unit);
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(entry, "source");
    if (src != NULL && !cJSON_IsString(src))
        return duet__error(DUET_ERR_PARSE, "%s: constants.%s: \"source\" must be a string", origin, fi->key);
    duet_hw_set(hw, f, v);
    snprintf(hw->source[f], DUET_HW_SOURCE_LEN, "%s", src ? src->valuestring : "");
    return DUET_OK;
}

static int duet__hw_field_by_key(const char *key)
{
    for (int f = 0; f < DUET_HW_NFIELDS; f++)
        if (strcmp(duet_hw_field_info(f)->key, key) == 0)
            return f;
    return -1;
}

static duet_status_t duet__hw_from_cjson(const cJSON *root, const char *origin, duet_hw_t *hw)
{
    static const char *const top_keys[] = {"schema", "name", "device", "arch", "fabric", "constants"};
    if (!cJSON_IsObject(root))
        return duet__error(DUET_ERR_PARSE, "%s: a profile must be a JSON object", origin);
    const cJSON *it;
    cJSON_ArrayForEach(it, root)
    {
        int known = 0;
        for (size_t i = 0; i < sizeof(top_keys) / sizeof(top_keys[0]); i++)
            known |= strcmp(it->string, top_keys[i]) == 0;
        if (!known)
            return duet__error(DUET_ERR_PARSE, "%s: unknown key \"%s\" (schema, name, device, arch, fabric, constants)",
                               origin, it->string);
    }
    char schema[32], fabric[16];
    DUET_CHECK(duet__json_string(root, "schema", origin, schema, sizeof(schema)));
    if (strcmp(schema, DUET_HW_SCHEMA) != 0)
        return duet__error(DUET_ERR_PARSE, "%s: schema \"%s\" is not \"%s\"", origin, schema, DUET_HW_SCHEMA);
    DUET_CHECK(duet__json_string(root, "name", origin, hw->name, sizeof(hw->name)));
    DUET_CHECK(duet__json_string(root, "device", origin, hw->device, sizeof(hw->device)));
    DUET_CHECK(duet__json_string(root, "arch", origin, hw->arch, sizeof(hw->arch)));
    DUET_CHECK(duet__json_string(root, "fabric", origin, fabric, sizeof(fabric)));
    if (strcmp(fabric, "switch") == 0)
        hw->fabric = DUET_FABRIC_SWITCH;
    else if (strcmp(fabric, "mesh") == 0)
        hw->fabric = DUET_FABRIC_MESH;
    else
        return duet__error(DUET_ERR_PARSE, "%s: fabric: \"%s\" is not \"switch\" or \"mesh\"", origin, fabric);

    const cJSON *consts = cJSON_GetObjectItemCaseSensitive(root, "constants");
    if (consts == NULL)
        return duet__error(DUET_ERR_PARSE, "%s: missing key \"constants\"", origin);
    if (!cJSON_IsObject(consts))
        return duet__error(DUET_ERR_PARSE, "%s: \"constants\" must be an object", origin);
    int seen[DUET_HW_NFIELDS] = {0};
    cJSON_ArrayForEach(it, consts)
    {
        int f = duet__hw_field_by_key(it->string);
        if (f < 0)
            return duet__error(DUET_ERR_PARSE, "%s: constants.%s: unknown constant (duet hw show h200 lists them)",
                               origin, it->string);
        DUET_CHECK(duet__hw_constant(it, f, origin, hw));
        seen[f] = 1;
    }
    for (int f = 0; f < DUET_HW_NFIELDS; f++)
        if (!seen[f])
            return duet__error(DUET_ERR_PARSE, "%s: constants.%s: missing", origin, duet_hw_field_info(f)->key);
    duet_status_t st = duet_hw_validate(hw);
    if (st < 0) {
        duet__error_prefix(origin);
        return DUET_ERR_PARSE;
    }
    return DUET_OK;
}

duet_status_t duet_hw_from_json(const char *text, const char *origin, duet_hw_t *hw_p)
{
    cJSON *root = duet__json_parse(text, (size_t)-1, origin, 1);
    if (root == NULL)
        return duet__last_status(); /* malformed, or out of memory */
    duet_hw_t *hw = calloc(1, sizeof(*hw));
    duet_status_t status = DUET_OK;
    if (hw == NULL) {
        status = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a profile", origin);
        goto out;
    }
    DUET_CHECK_GOTO(duet__hw_from_cjson(root, origin, hw), status, out);
    *hw_p = *hw;
out:
    free(hw);
    cJSON_Delete(root);
    return status;
}

duet_status_t duet_hw_to_json(const duet_hw_t *hw, char **text_p)
{
    duet_status_t status = DUET_ERR_NO_MEMORY;
    cJSON *root = cJSON_CreateObject();
    cJSON *consts = NULL;
    if (root == NULL)
        goto fail;
    if (!cJSON_AddStringToObject(root, "schema", DUET_HW_SCHEMA) || !cJSON_AddStringToObject(root, "name", hw->name) ||
        !cJSON_AddStringToObject(root, "device", hw->device) || !cJSON_AddStringToObject(root, "arch", hw->arch) ||
        !cJSON_AddStringToObject(root, "fabric", hw->fabric == DUET_FABRIC_MESH ? "mesh" : "switch"))
        goto fail;
    consts = cJSON_AddObjectToObject(root, "constants");
    if (consts == NULL)
        goto fail;
    for (int f = 0; f < DUET_HW_NFIELDS; f++) {
        const duet_hw_field_info_t *fi = duet_hw_field_info(f);
        cJSON *e = cJSON_AddObjectToObject(consts, fi->key);
        if (e == NULL || !cJSON_AddNumberToObject(e, "value", duet_hw_get(hw, f)) ||
            !cJSON_AddStringToObject(e, "unit", fi->unit) || !cJSON_AddStringToObject(e, "source", hw->source[f]))
            goto fail;
    }
    char *text = cJSON_Print(root);
    if (text == NULL)
        goto fail;
    cJSON_Delete(root);
    /* Return memory the caller frees with free(), whatever allocator cJSON was built with. */
    size_t n = strlen(text);
    char *out = malloc(n + 2);
    if (out == NULL) {
        cJSON_free(text);
        return duet__error(DUET_ERR_NO_MEMORY, "cannot serialise profile %s", hw->name);
    }
    memcpy(out, text, n);
    out[n] = '\n';
    out[n + 1] = '\0';
    cJSON_free(text);
    *text_p = out;
    return DUET_OK;
fail:
    cJSON_Delete(root);
    return duet__error(status, "cannot serialise profile %s", hw->name);
}

duet_status_t duet_hw_load(const char *name_or_path, duet_hw_t *hw_p)
{
    if (name_or_path == NULL || *name_or_path == '\0')
        return duet__error(DUET_ERR_INVALID_ARG, "empty profile name");
    /* A built-in name wins unless it looks like a path. */
    if (strchr(name_or_path, '/') == NULL && strchr(name_or_path, '.') == NULL && strcmp(name_or_path, "-") != 0) {
        duet_status_t st = duet_hw_builtin(name_or_path, hw_p);
        if (st == DUET_OK || st != DUET_ERR_NOT_FOUND)
            return st;
        /* Not a built-in: try it as a file name; keep the built-in list in the message. */
        FILE *f = fopen(name_or_path, "rb");
        char known[192];
        if (f == NULL)
            return duet__error(DUET_ERR_NOT_FOUND, "'%s' is neither a built-in profile (%s) nor a readable file",
                               duet__q(name_or_path), duet__hw_builtin_names(name_or_path, known, sizeof(known)));
        fclose(f);
    }
    char *text = NULL;
    DUET_CHECK(duet__read_file(name_or_path, &text, NULL));
    const char *origin = strcmp(name_or_path, "-") == 0 ? "<stdin>" : name_or_path;
    duet_status_t st = duet_hw_from_json(text, origin, hw_p);
    free(text);
    return st;
}

duet_status_t duet_hw_save(const duet_hw_t *hw, const char *path)
{
    DUET_CHECK(duet_hw_validate(hw));
    char *text = NULL;
    DUET_CHECK(duet_hw_to_json(hw, &text));
    duet_status_t st = duet__write_file_atomic(path, text, strlen(text));
    free(text);
    return st;
}
