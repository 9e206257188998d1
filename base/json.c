/*
 * JSON shared by every loader and writer: one parse entry point that rejects what cJSON lets
 * through (duplicate keys, text after the value, NUL bytes), and the number text every writer
 * uses, which refuses infinity and NaN (JSON has neither).
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* Objects up to this many members are checked pairwise; larger ones through a sorted copy. */
#define DUET__JSON_PAIRWISE_MAX 16

static int duet__json_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The first name that occurs twice among obj's members, or NULL; *oom_p on an allocation failure. */
static const char *duet__json_dup_name(const cJSON *obj, int *oom_p)
{
    int n = 0;
    const cJSON *it;
    for (it = obj->child; it != NULL; it = it->next)
        n++;
    if (n < 2)
        return NULL;
    if (n <= DUET__JSON_PAIRWISE_MAX) {
        for (const cJSON *a = obj->child; a != NULL; a = a->next)
            for (const cJSON *b = a->next; b != NULL; b = b->next)
                if (a->string != NULL && b->string != NULL && strcmp(a->string, b->string) == 0)
                    return a->string;
        return NULL;
    }
    const char **names = malloc((size_t)n * sizeof(*names));
    if (names == NULL) {
        *oom_p = 1;
        return NULL;
    }
    int k = 0;
    for (it = obj->child; it != NULL; it = it->next)
        if (it->string != NULL)
            names[k++] = it->string;
    qsort(names, (size_t)k, sizeof(*names), duet__json_name_cmp);
    const char *dup = NULL;
    for (int i = 1; i < k && dup == NULL; i++)
        if (strcmp(names[i - 1], names[i]) == 0)
            dup = names[i];
    free(names);
    return dup;
}

/* `path` (cap bytes, plen used) names `item`; the recursion appends ".key" or "[i]" and restores it. */
static duet_status_t duet__json_keys_at(const cJSON *item, const char *origin, char *path, size_t plen, size_t cap,
                                        int deep)
{
    if (cJSON_IsObject(item)) {
        int oom = 0;
        const char *dup = duet__json_dup_name(item, &oom);
        if (oom)
            return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate to check the keys", origin);
        if (dup != NULL)
            return duet__error(DUET_ERR_PARSE, "%s: %s%sduplicate key \"%s\"", origin, path, plen ? ": " : "",
                               duet__q(dup));
    }
    if (!deep)
        return DUET_OK;
    size_t i = 0;
    for (const cJSON *c = item->child; c != NULL; c = c->next, i++) {
        if (!cJSON_IsObject(c) && !cJSON_IsArray(c))
            continue;
        if (cJSON_IsObject(item))
            snprintf(path + plen, cap - plen, "%s%s", plen ? "." : "", c->string ? c->string : "");
        else
            snprintf(path + plen, cap - plen, "[%zu]", i);
        DUET_CHECK(duet__json_keys_at(c, origin, path, strlen(path), cap, deep));
        path[plen] = '\0';
    }
    return DUET_OK;
}

duet_status_t duet__json_check_keys(const struct cJSON *item, const char *origin, const char *where, int deep)
{
    char path[192];
    snprintf(path, sizeof(path), "%s", where ? where : "");
    return duet__json_keys_at(item, origin, path, strlen(path), sizeof(path), deep);
}

/* Line number of a byte offset, for parse errors a person can find. */
static int duet__json_line_of(const char *text, const char *at)
{
    int line = 1;
    for (const char *p = text; p < at && *p; p++)
        line += *p == '\n';
    return line;
}

struct cJSON *duet__json_parse(const char *text, size_t len, const char *origin, int check_keys)
{
    if (len == (size_t)-1) {
        len = strlen(text);
    } else if (memchr(text, '\0', len) != NULL) {
        const char *nul = memchr(text, '\0', len);
        duet__error(DUET_ERR_PARSE, "%s: line %d: a NUL byte: not JSON text", origin, duet__json_line_of(text, nul));
        return NULL;
    }
    /* The length takes in the terminating NUL: that is how cJSON tells the end from text after the value. */
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (root == NULL) {
        const char *at = end != NULL && end >= text && end <= text + len ? end : text + len;
        duet__error(DUET_ERR_PARSE, "%s: line %d: not valid JSON", origin, duet__json_line_of(text, at));
        return NULL;
    }
    if (check_keys && duet__json_check_keys(root, origin, "", 1) < 0) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

int duet__json_num_text(char *buf, size_t n, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "null");
        return -1;
    }
    /* The shortest text that reads back as the same double: cJSON's own printing compares with a
     * tolerance and may drop the last bit, and a stored time must read back exactly. */
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, n, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return 0;
}

void duet__json_str(duet__sbuf_t *b, const char *s)
{
    duet__sbuf_printf(b, "\"");
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            duet__sbuf_printf(b, "\\%c", ch);
        else if (ch < 0x20)
            duet__sbuf_printf(b, "\\u%04x", ch);
        else
            duet__sbuf_printf(b, "%c", ch);
    }
    duet__sbuf_printf(b, "\"");
}

duet_status_t duet__json_member(const struct cJSON *o, const char *key, int type, const char *where,
                                const struct cJSON **v_p)
{
    static const char *const names[] = {"a number", "a string", "true or false", "an array", "an object"};
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (v == NULL)
        return duet__error(DUET_ERR_PARSE, "%s.%s: missing", where, key);
    int ok = type == DUET__JSON_NUMBER   ? cJSON_IsNumber(v)
             : type == DUET__JSON_STRING ? cJSON_IsString(v)
             : type == DUET__JSON_BOOL   ? cJSON_IsBool(v)
             : type == DUET__JSON_ARRAY  ? cJSON_IsArray(v)
                                         : cJSON_IsObject(v);
    if (!ok)
        return duet__error(DUET_ERR_PARSE, "%s.%s: must be %s", where, key, names[type]);
    *v_p = v;
    return DUET_OK;
}

duet_status_t duet__json_member_int(const struct cJSON *o, const char *key, int64_t lo, int64_t hi, const char *where,
                                    int64_t *v_p)
{
    const cJSON *v = NULL;
    DUET_CHECK(duet__json_member(o, key, DUET__JSON_NUMBER, where, &v));
    double d = v->valuedouble;
    if (d != floor(d) || d < (double)lo || d > (double)hi)
        return duet__error(DUET_ERR_PARSE, "%s.%s: %g is not an integer in [%lld, %lld]", where, key, d, (long long)lo,
                           (long long)hi);
    *v_p = (int64_t)d;
    return DUET_OK;
}

duet_status_t duet__json_member_str(const struct cJSON *o, const char *key, const char *where, char *buf, size_t n)
{
    const cJSON *v = NULL;
    DUET_CHECK(duet__json_member(o, key, DUET__JSON_STRING, where, &v));
    if (strlen(v->valuestring) >= n)
        return duet__error(DUET_ERR_PARSE, "%s.%s: longer than %zu characters", where, key, n - 1);
    snprintf(buf, n, "%s", v->valuestring);
    return DUET_OK;
}

int duet__edit_distance(const char *a, const char *b)
{
    /* Optimal string alignment over the first 16 bytes of each: names are short, and anything
     * longer is no near miss of one. */
    enum { L = 16 };
    size_t na = strnlen(a, L), nb = strnlen(b, L);
    int d[L + 1][L + 1];
    for (size_t i = 0; i <= na; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= nb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            int best = sub < del ? sub : del;
            best = ins < best ? ins : best;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[na][nb];
}

int duet__nearest_name(const char *name, const char *const *names, size_t n)
{
    /* Compared in lower case, so that a name in capitals is one of its own spelling. */
    char low[17];
    size_t len = 0;
    for (; name[len] != '\0' && len < sizeof(low) - 1; len++)
        low[len] = (char)tolower((unsigned char)name[len]);
    low[len] = '\0';
    int best = -1, best_d = 3; /* a suggestion is at most two edits away */
    for (size_t i = 0; i < n; i++) {
        int d = duet__edit_distance(low, names[i]);
        /* Never suggest by replacing most of the name ("m" is not a near miss of "n"). */
        if (d < best_d && (size_t)d < strlen(names[i]) && (size_t)d < strlen(name)) {
            best_d = d;
            best = (int)i;
        }
    }
    return best;
}

duet_status_t duet__json_known_members(const struct cJSON *o, const char *const *keys, size_t n, const char *where)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, o)
    {
        const char *name = it->string ? it->string : "";
        int known = 0;
        for (size_t i = 0; i < n && !known; i++)
            known = strcmp(name, keys[i]) == 0;
        if (known)
            continue;
        int near = duet__nearest_name(name, keys, n);
        size_t best = near >= 0 ? (size_t)near : n;
        if (best < n)
            return duet__error(DUET_ERR_INVALID_ARG, "%s: unknown member \"%s\" (did you mean \"%s\"?)", where,
                               duet__q(name), keys[best]);
        char list[512] = "";
        size_t len = 0;
        for (size_t i = 0; i < n && len < sizeof(list); i++)
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", keys[i]);
        return duet__error(DUET_ERR_INVALID_ARG, "%s: unknown member \"%s\" (known: %s)", where, duet__q(name), list);
    }
    return DUET_OK;
}

duet_status_t duet__json_member_named(const struct cJSON *o, const char *key, const char *where,
                                      duet_status_t (*parse)(const char *, int32_t *), int32_t *v_p)
{
    char buf[64];
    DUET_CHECK(duet__json_member_str(o, key, where, buf, sizeof(buf)));
    int32_t v;
    if (parse(buf, &v) < 0)
        return duet__error(DUET_ERR_PARSE, "%s.%s: %s", where, key, duet_last_error());
    *v_p = v;
    return DUET_OK;
}
