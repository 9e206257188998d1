/*
 * Fuzz the JSON entry point duet_predict_json() (sim/api_json.c), which the Python package and
 * other languages call: any text as a request. A request it answers must be answered with one
 * JSON object of the schema its "op" names, built from finite numbers; a request it refuses must
 * leave the response pointer alone and say why. "plan", "simulate" and "hw" answer the same request
 * with the same text (the simulator is deterministic); "predict" too but for its wall time.
 *
 * "hw" may name a file; the harness passes only requests whose "hw" is absent, an object or a
 * built-in name, so nothing outside the inputs is read (a path such as /dev/stdin would wait).
 *
 * A sweep may simulate up to DUET_SWEEP_MAX_EVENTS events, a few seconds at -O2 and a minute or
 * more under the sanitizers, past libFuzzer's timeout. The harness gives every request object a
 * smaller budget, "max_events": 32768 (the seeds' sweeps take 159 to 10,320 events), written as its
 * first member, so a sweep past it fails fast on the same path a large one takes in use; a request
 * that names max_events itself then has it twice and is refused as such.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>

#include "base/base.h"
#include "duet/duet.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when the request's "hw" is a string other than a built-in profile's name (a path). */
static int fz_names_a_file(const char *text)
{
    cJSON *req = cJSON_Parse(text);
    const cJSON *hw = cJSON_IsObject(req) ? cJSON_GetObjectItemCaseSensitive(req, "hw") : NULL;
    int file = 0;
    if (cJSON_IsString(hw)) {
        file = 1;
        for (int i = 0; i < duet_hw_builtin_count(); i++)
            if (strcmp(hw->valuestring, duet_hw_builtin_name(i)) == 0)
                file = 0;
    }
    cJSON_Delete(req);
    return file;
}

/* Every number of the answer is finite (cJSON prints NaN and infinity as null, which JSON readers
 * take for a missing value). */
static int fz_all_numbers_finite(const cJSON *o)
{
    if (cJSON_IsNumber(o))
        return isfinite(o->valuedouble);
    if (cJSON_IsNull(o))
        return 0;
    for (const cJSON *c = o->child; c != NULL; c = c->next)
        if (!fz_all_numbers_finite(c))
            return 0;
    return 1;
}

/* The answer with the predict answer's wall time removed, printed, for comparing two answers. */
static char *fz_canonical(const char *answer)
{
    cJSON *o = cJSON_Parse(answer);
    if (o == NULL)
        return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(o, "wall_us");
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

/* The request with "max_events":32768, after its opening brace when it is an object. */
static char *fz_with_budget(const uint8_t *data, size_t size)
{
    static const char budget[] = "\"max_events\":32768,";
    size_t i = 0;
    while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
        i++;
    if (i == size || data[i] != '{')
        return fz_text(data, size);
    /* No comma before the closing brace of an empty object. */
    size_t j = i + 1;
    while (j < size && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r'))
        j++;
    size_t add = sizeof(budget) - 1 - (j < size && data[j] == '}');
    char *s = malloc(size + add + 1);
    if (s == NULL)
        abort();
    memcpy(s, data, i + 1);
    memcpy(s + i + 1, budget, add);
    memcpy(s + i + 1 + add, data + i + 1, size - i - 1);
    s[size + add] = '\0';
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_with_budget(data, size);
    if (fz_names_a_file(text)) {
        free(text);
        return 0;
    }
    char sentinel = 0, *out = &sentinel;
    duet_status_t st = duet_predict_json(text, &out);
    if (st != DUET_OK) {
        FZ_ASSERT(st < 0);
        FZ_ASSERT(out == &sentinel);
        FZ_ASSERT(duet_last_error()[0] != '\0');
        free(text);
        return 0;
    }
    FZ_ASSERT(out != NULL && out != &sentinel);
    cJSON *o = cJSON_Parse(out);
    FZ_ASSERT(cJSON_IsObject(o));
    FZ_ASSERT(fz_all_numbers_finite(o));
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(o, "schema");
    FZ_ASSERT(cJSON_IsString(schema));
    if (strcmp(schema->valuestring, "duet-predict/2") == 0) {
        /* Ranked by the upper end of each prediction's interval (hi_us), lowest first; a point within
         * DUET_RANK_TIE_REL of the one before it is tied with it (their order is then the tie rule's)
         * and shares its rank. Every interval holds its prediction. */
        const cJSON *ranked = cJSON_GetObjectItemCaseSensitive(o, "ranked"), *e;
        double prev = 0, prev_rank = 0;
        int i = 0;
        FZ_ASSERT(cJSON_IsArray(ranked));
        cJSON_ArrayForEach(e, ranked)
        {
            const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "hi_us");
            const cJSON *p = cJSON_GetObjectItemCaseSensitive(e, "pred_us");
            const cJSON *lo = cJSON_GetObjectItemCaseSensitive(e, "lo_us");
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(e, "rank");
            FZ_ASSERT(cJSON_IsNumber(t) && t->valuedouble > 0 && cJSON_IsNumber(r));
            FZ_ASSERT(cJSON_IsNumber(p) && cJSON_IsNumber(lo));
            FZ_ASSERT(lo->valuedouble <= p->valuedouble && p->valuedouble <= t->valuedouble);
            if (i > 0 && duet__time_eq(prev, t->valuedouble, DUET_RANK_TIE_REL))
                FZ_ASSERT(r->valuedouble == prev_rank);
            else
                FZ_ASSERT(t->valuedouble > prev && r->valuedouble == i + 1);
            prev = t->valuedouble;
            prev_rank = r->valuedouble;
            i++;
        }
    } else if (strcmp(schema->valuestring, "duet-simulate/1") == 0) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "makespan_us");
        FZ_ASSERT(cJSON_IsNumber(t) && t->valuedouble >= 0);
    } else {
        FZ_ASSERT(strcmp(schema->valuestring, "duet-plan/1") == 0 || strcmp(schema->valuestring, "duet-hw/1") == 0);
    }
    cJSON_Delete(o);
    /* The same request, the same answer. */
    char *again = NULL;
    FZ_ASSERT(duet_predict_json(text, &again) == DUET_OK);
    char *a = fz_canonical(out), *b = fz_canonical(again);
    FZ_ASSERT(a != NULL && b != NULL && strcmp(a, b) == 0);
    cJSON_free(a);
    cJSON_free(b);
    duet_json_free(again);
    duet_json_free(out);
    free(text);
    return 0;
}
