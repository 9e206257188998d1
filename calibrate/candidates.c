/*
 * The candidates of a selection (`duet calibrate select --candidates FILE`): one candidate model a
 * line, its name, the constants it fits, and the start values it gives over the base profile.
 *
 *     # name    constants to fit                     start values over the base
 *     base      gemm_eff_bf16,tile_overhead_us
 *     heat      gemm_eff_bf16,tile_overhead_us,clock_heat   clock_heat=0.1
 *
 * Every error names the file and the line, as a compiler does.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate/internal.h"

/* A line of the file longer than this is refused (a candidate needs far less). */
#define DUET__CAND_LINE_MAX 4096
#define DUET__CAND_SYNTAX "NAME PARAM,PARAM,... [CONST=VALUE ...]"

static int duet__cand_name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof(((duet_cal_candidate_t *)0)->name))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
            return 0;
    return 1;
}

/* One CONST=VALUE of candidate c (line `at` of origin). */
static duet_status_t duet__cand_assign(duet_cal_candidate_t *c, const char *tok, const char *at)
{
    const char *eq = strchr(tok, '=');
    char key[64];
    size_t klen = (size_t)(eq - tok);
    if (klen == 0 || klen >= sizeof(key))
        return duet__error(DUET_ERR_PARSE, "%s: '%s' is not CONST=VALUE", at, tok);
    memcpy(key, tok, klen);
    key[klen] = '\0';
    int32_t f = duet__cal_field_find(key);
    if (f < 0)
        return duet__error(DUET_ERR_PARSE, "%s: '%s' is not a profile constant (see 'duet hw show h200')", at, key);
    const duet_hw_field_info_t *fi = duet_hw_field_info(f);
    char *end = NULL;
    double v = strtod(eq + 1, &end);
    if (eq[1] == '\0' || *end != '\0' || !isfinite(v))
        return duet__error(DUET_ERR_PARSE, "%s: %s: '%s' is not a number", at, key, eq + 1);
    if (v < fi->min || v > fi->max)
        return duet__error(DUET_ERR_PARSE, "%s: %s = %g is outside its bounds [%g, %g] %s", at, key, v, fi->min,
                           fi->max, fi->unit);
    if (fi->is_int && v != floor(v))
        return duet__error(DUET_ERR_PARSE, "%s: %s is a count (%s): %g is not a whole number", at, key, fi->unit, v);
    for (int32_t j = 0; j < c->n_set; j++)
        if (c->set_field[j] == f)
            return duet__error(DUET_ERR_PARSE, "%s: %s is set twice", at, key);
    if (c->n_set == DUET_CAL_MAX_PARAMS)
        return duet__error(DUET_ERR_PARSE, "%s: more than %d start values", at, DUET_CAL_MAX_PARAMS);
    c->set_field[c->n_set] = f;
    c->set_value[c->n_set++] = v;
    return DUET_OK;
}

/* One candidate from the tokens of a line (at least one), checked against the base profile. */
static duet_status_t duet__cand_line(char **tok, int ntok, const char *at, const duet_hw_t *base,
                                     duet_cal_candidate_t *c)
{
    memset(c, 0, sizeof(*c));
    if (strchr(tok[0], '=') != NULL || ntok < 2)
        return duet__error(DUET_ERR_PARSE, "%s: a candidate is one line '" DUET__CAND_SYNTAX "'", at);
    if (!duet__cand_name_ok(tok[0]))
        return duet__error(DUET_ERR_PARSE, "%s: candidate name '%s': 1 to %zu of A-Z a-z 0-9 _ . -", at, tok[0],
                           sizeof(c->name) - 1);
    snprintf(c->name, sizeof(c->name), "%s", tok[0]);
    if (strchr(tok[1], '=') != NULL)
        return duet__error(DUET_ERR_PARSE, "%s: candidate '%s': the parameter list comes before the start values", at,
                           c->name);
    duet_cal_params_t p = duet_cal_default_params();
    if (duet_cal_params_set_fit(&p, tok[1]) < 0) {
        char why[DUET__ERRBUF_LEN];
        snprintf(why, sizeof(why), "%s", duet_last_error());
        return duet__error(DUET_ERR_PARSE, "%s: candidate '%s': %s", at, c->name, why);
    }
    c->n_fit = p.n_fit;
    memcpy(c->fit, p.fit, sizeof(c->fit));
    for (int i = 2; i < ntok; i++) {
        if (strchr(tok[i], '=') == NULL)
            return duet__error(DUET_ERR_PARSE, "%s: candidate '%s': '%s' is not CONST=VALUE (" DUET__CAND_SYNTAX ")",
                               at, c->name, tok[i]);
        DUET_CHECK(duet__cand_assign(c, tok[i], at));
    }
    /* A fitted constant is fitted as its logarithm: it cannot start at 0. */
    duet_hw_t hw;
    duet_cal_candidate_hw(c, base, &hw);
    for (int32_t j = 0; j < c->n_fit; j++)
        if (!(duet_hw_get(&hw, c->fit[j]) > 0))
            return duet__error(DUET_ERR_PARSE,
                               "%s: candidate '%s' fits %s, which starts at 0 in profile %s: a fitted constant needs "
                               "a positive start (add %s=VALUE)",
                               at, c->name, duet_hw_field_info(c->fit[j])->key, base->name,
                               duet_hw_field_info(c->fit[j])->key);
    return DUET_OK;
}

void duet_cal_candidate_hw(const duet_cal_candidate_t *c, const duet_hw_t *base, duet_hw_t *hw_p)
{
    *hw_p = *base;
    for (int32_t j = 0; j < c->n_set; j++) {
        duet_hw_set(hw_p, c->set_field[j], c->set_value[j]);
        snprintf(hw_p->source[c->set_field[j]], DUET_HW_SOURCE_LEN, "start value of candidate '%s' (calibrate select)",
                 c->name);
    }
}

duet_status_t duet_cal_candidates_parse(const char *text, const char *origin, const duet_hw_t *base,
                                        duet_cal_candidates_t *c_p)
{
    duet_cal_candidates_t *cs = calloc(1, sizeof(*cs));
    char *line = malloc(DUET__CAND_LINE_MAX + 1);
    duet_status_t st = DUET_OK;
    if (cs == NULL || line == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate", origin);
        goto cleanup;
    }
    const char *p = text;
    for (int32_t lineno = 1; *p != '\0'; lineno++) {
        const char *eol = strchr(p, '\n');
        size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);
        char at[320];
        snprintf(at, sizeof(at), "%s:%d", origin, (int)lineno);
        if (len > DUET__CAND_LINE_MAX) {
            st = duet__error(DUET_ERR_PARSE, "%s: line longer than %d characters", at, DUET__CAND_LINE_MAX);
            goto cleanup;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (eol != NULL);
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        char *tok[2 + DUET_CAL_MAX_PARAMS + 1];
        int ntok = 0;
        for (char *save = NULL, *t = strtok_r(line, " \t\r\v\f", &save); t != NULL;
             t = strtok_r(NULL, " \t\r\v\f", &save)) {
            if (ntok == (int)(sizeof(tok) / sizeof(tok[0]))) {
                st = duet__error(DUET_ERR_PARSE, "%s: more than %d start values", at, DUET_CAL_MAX_PARAMS);
                goto cleanup;
            }
            tok[ntok++] = t;
        }
        if (ntok == 0)
            continue;
        if (cs->n == DUET_CAL_MAX_CANDIDATES) {
            st = duet__error(DUET_ERR_PARSE, "%s: more than %d candidates", at, DUET_CAL_MAX_CANDIDATES);
            goto cleanup;
        }
        duet_cal_candidate_t *c = &cs->c[cs->n];
        DUET_CHECK_GOTO(duet__cand_line(tok, ntok, at, base, c), st, cleanup);
        c->line = lineno;
        for (int32_t k = 0; k < cs->n; k++)
            if (strcmp(cs->c[k].name, c->name) == 0) {
                st = duet__error(DUET_ERR_PARSE, "%s: candidate '%s' is already defined on line %d", at, c->name,
                                 (int)cs->c[k].line);
                goto cleanup;
            }
        cs->n++;
    }
    if (cs->n == 0) {
        st = duet__error(DUET_ERR_PARSE, "%s: no candidate (one a line: " DUET__CAND_SYNTAX ")", origin);
        goto cleanup;
    }
    *c_p = *cs;
cleanup:
    free(line);
    free(cs);
    return st;
}

duet_status_t duet_cal_candidates_load(const char *path, const duet_hw_t *base, duet_cal_candidates_t *c_p)
{
    char *text = NULL;
    size_t len = 0;
    DUET_CHECK(duet__read_file(path, &text, &len));
    duet_status_t st = strlen(text) != len ? duet__error(DUET_ERR_PARSE, "%s: not a text file (a NUL byte)", path)
                                           : duet_cal_candidates_parse(text, path, base, c_p);
    free(text);
    return st;
}
