/*
 * The candidate set: a greedy max-coverage ordering of configurations over the shapes of
 * measurement corpora, per architecture, with its coverage curve; saved and loaded as JSON.
 * It is what the tuner benchmarks first when no calibrated profile exists for the device.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/internal.h"

/* Fractions are kept to 6 decimals: enough to give back every CTA count up to 4096 SMs after
 * rounding (error <= 5e-7 x 4096 = 0.002 CTA), and short enough to read. */
#define DUET__TUNE_FRAC_SCALE 1e6
/* A bound on the derivation's work: its table holds one time per (shape, configuration), and the
 * greedy cover reads the whole table once per configuration it picks (at most min(shapes,
 * configurations) picks). The committed corpora have 75 x 56 = 4200 cells; 2^20 cells are 8 MB of
 * times (32 MB with the table's room to grow) and at most 2^30 reads of them, seconds; a corpus of 40,000 rows each
 * with its own shape and configuration would otherwise ask for a 12.8 GB table. */
#define DUET__TUNE_MAX_CELLS ((size_t)1 << 20)
/* Relative slack of the coverage test, so that a time equal to (1 + tol) x best on paper is
 * covered whatever the rounding of the product. */
#define DUET__TUNE_COVER_SLACK 1e-9

/* ------------------------------------------------------------------------------------------ */
/* Derivation                                                                                  */
/* ------------------------------------------------------------------------------------------ */

typedef struct duet__tune_shape {
    int32_t sms;
    duet_workload_t wl; /* carries the world */
} duet__tune_shape_t;

/* A configuration's identity: mode, quantised fractions, tile. */
typedef struct duet__tune_ckey {
    int32_t mode;
    long gq, cq;
    duet_gemm_tile_t tile;
} duet__tune_ckey_t;

static int duet__tune_ckey_cmp(const duet__tune_ckey_t *a, const duet__tune_ckey_t *b)
{
    if (a->mode != b->mode)
        return a->mode < b->mode ? -1 : 1;
    if (a->gq != b->gq)
        return a->gq < b->gq ? -1 : 1;
    if (a->cq != b->cq)
        return a->cq < b->cq ? -1 : 1;
    if (a->tile.bm != b->tile.bm)
        return a->tile.bm < b->tile.bm ? -1 : 1;
    if (a->tile.bn != b->tile.bn)
        return a->tile.bn < b->tile.bn ? -1 : 1;
    if (a->tile.bk != b->tile.bk)
        return a->tile.bk < b->tile.bk ? -1 : 1;
    return 0;
}

/* Working state of one architecture. */
typedef struct duet__tune_arch_work {
    char arch[32];
    duet__tune_shape_t *shapes;
    size_t n_shapes, cap_shapes;
    duet__tune_ckey_t *cfgs;
    size_t n_cfgs, cap_cfgs;
    double *ms; /* ms[s * cap_cfgs + c]: NaN when not measured; re-laid out when cfgs grow */
    size_t ms_rows, ms_cols;
} duet__tune_arch_work_t;

static duet_status_t duet__tune_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return DUET_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * elem);
    if (q == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "candidate set: cannot grow a table to %zu items", c);
    *p = q;
    *cap = c;
    return DUET_OK;
}

static int duet__tune_shape_same(const duet__tune_shape_t *a, const duet__tune_shape_t *b)
{
    return a->sms == b->sms && duet_workload_same(&a->wl, &b->wl);
}

/* Make sure the matrix holds n_shapes x n_cfgs; new cells are NaN. */
static duet_status_t duet__tune_matrix_fit(duet__tune_arch_work_t *w)
{
    if (w->n_shapes <= w->ms_rows && w->n_cfgs <= w->ms_cols)
        return DUET_OK;
    size_t rows = w->ms_rows, cols = w->ms_cols;
    while (rows < w->n_shapes)
        rows = rows ? rows * 2 : 64;
    while (cols < w->n_cfgs)
        cols = cols ? cols * 2 : 64;
    double *m = malloc(rows * cols * sizeof(*m));
    if (m == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "candidate set: cannot allocate a %zu x %zu table", rows, cols);
    for (size_t i = 0; i < rows * cols; i++)
        m[i] = NAN;
    for (size_t s = 0; s < w->ms_rows; s++)
        for (size_t c = 0; c < w->ms_cols; c++)
            m[s * cols + c] = w->ms[s * w->ms_cols + c];
    free(w->ms);
    w->ms = m;
    w->ms_rows = rows;
    w->ms_cols = cols;
    return DUET_OK;
}

static duet_status_t duet__tune_work_add_row(duet__tune_arch_work_t *w, int32_t sms, const duet_corpus_row_t *row)
{
    duet__tune_shape_t sh = {sms, row->wl};
    size_t s = 0;
    while (s < w->n_shapes && !duet__tune_shape_same(&w->shapes[s], &sh))
        s++;
    if (s == w->n_shapes) {
        DUET_CHECK(duet__tune_grow((void **)&w->shapes, &w->cap_shapes, s + 1, sizeof(*w->shapes)));
        w->shapes[w->n_shapes++] = sh;
    }
    duet__tune_ckey_t k;
    k.mode = row->cfg.mode;
    k.gq = lround((double)row->cfg.gemm_wgs / sms * DUET__TUNE_FRAC_SCALE);
    k.cq = lround((double)row->cfg.comm_wgs / sms * DUET__TUNE_FRAC_SCALE);
    k.tile = row->cfg.tile;
    size_t c = 0;
    while (c < w->n_cfgs && duet__tune_ckey_cmp(&w->cfgs[c], &k) != 0)
        c++;
    if (c == w->n_cfgs) {
        DUET_CHECK(duet__tune_grow((void **)&w->cfgs, &w->cap_cfgs, c + 1, sizeof(*w->cfgs)));
        w->cfgs[w->n_cfgs++] = k;
    }
    if (w->n_shapes * w->n_cfgs > DUET__TUNE_MAX_CELLS)
        return duet__error(DUET_ERR_INVALID_ARG,
                           "candidate set: the corpora of %s hold %zu shapes x %zu configurations, more than %zu "
                           "(shape, configuration) cells: derive it from fewer corpora or shapes",
                           w->arch, w->n_shapes, w->n_cfgs, DUET__TUNE_MAX_CELLS);
    DUET_CHECK(duet__tune_matrix_fit(w));
    double *cell = &w->ms[s * w->ms_cols + c];
    /* Measured twice (two corpora, or two comm tiles that the set does not distinguish): the
     * lower time is what the configuration can do. */
    if (isnan(*cell) || row->ms < *cell)
        *cell = row->ms;
    return DUET_OK;
}

static void duet__tune_work_free(duet__tune_arch_work_t *w)
{
    free(w->shapes);
    free(w->cfgs);
    free(w->ms);
}

static void duet__tune_add_unique(int32_t *arr, int32_t *n, int32_t cap, int32_t v)
{
    for (int32_t i = 0; i < *n; i++)
        if (arr[i] == v)
            return;
    if (*n >= cap)
        return;
    /* Insertion keeps the list sorted, so that the file does not depend on the corpora's order. */
    int32_t i = *n;
    while (i > 0 && arr[i - 1] > v) {
        arr[i] = arr[i - 1];
        i--;
    }
    arr[i] = v;
    (*n)++;
}

/* Greedy ordering and coverage of one architecture. */
static duet_status_t duet__tune_order_arch(const duet__tune_arch_work_t *w, double tol, duet_tune_candset_arch_t *a)
{
    size_t S = w->n_shapes, C = w->n_cfgs, cols = w->ms_cols;
    duet_status_t st = DUET_OK;
    double *best = malloc((S ? S : 1) * sizeof(*best));
    double *mean = malloc((C ? C : 1) * sizeof(*mean));
    unsigned char *covered = calloc(S ? S : 1, 1), *used = calloc(C ? C : 1, 1);
    a->order = malloc((C ? C : 1) * sizeof(*a->order));
    a->coverage = malloc((C ? C : 1) * sizeof(*a->coverage));
    if (best == NULL || mean == NULL || covered == NULL || used == NULL || a->order == NULL || a->coverage == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "candidate set: cannot allocate the %zu x %zu cover", S, C);
        goto out;
    }
    for (size_t s = 0; s < S; s++) {
        best[s] = INFINITY;
        for (size_t c = 0; c < C; c++)
            if (w->ms[s * cols + c] < best[s])
                best[s] = w->ms[s * cols + c];
    }
    for (size_t c = 0; c < C; c++) {
        double sum = 0;
        size_t n = 0;
        for (size_t s = 0; s < S; s++)
            if (!isnan(w->ms[s * cols + c])) {
                sum += w->ms[s * cols + c] / best[s];
                n++;
            }
        mean[c] = n ? sum / (double)n : INFINITY;
    }
#define DUET__COVERS(s, c)                                                                                             \
    (!isnan(w->ms[(s)*cols + (c)]) && w->ms[(s)*cols + (c)] <= best[s] * (1 + tol) * (1 + DUET__TUNE_COVER_SLACK))

    /* Greedy max coverage: the configuration covering the most uncovered shapes; ties to the lowest
     * mean relative cost, then to the lower configuration key (deterministic). Stop at gain 0. */
    for (;;) {
        long pick = -1, pick_gain = 0;
        for (size_t c = 0; c < C; c++) {
            if (used[c])
                continue;
            long gain = 0;
            for (size_t s = 0; s < S; s++)
                gain += !covered[s] && DUET__COVERS(s, c);
            if (gain == 0)
                continue;
            if (pick < 0 || gain > pick_gain ||
                (gain == pick_gain &&
                 (mean[c] < mean[pick] ||
                  (mean[c] == mean[pick] && duet__tune_ckey_cmp(&w->cfgs[c], &w->cfgs[pick]) < 0)))) {
                pick = (long)c;
                pick_gain = gain;
            }
        }
        if (pick < 0)
            break;
        used[pick] = 1;
        for (size_t s = 0; s < S; s++)
            if (DUET__COVERS(s, (size_t)pick))
                covered[s] = 1;
        duet_tune_cand_t *o = &a->order[a->n_order++];
        o->mode = w->cfgs[pick].mode;
        o->gemm_frac = (double)w->cfgs[pick].gq / DUET__TUNE_FRAC_SCALE;
        o->comm_frac = (double)w->cfgs[pick].cq / DUET__TUNE_FRAC_SCALE;
        o->tile = w->cfgs[pick].tile;
        o->gain = (int32_t)pick_gain;
        o->mean_rel = mean[pick];
        o->shape_best = 0;
    }
    /* The reference design's safety net: a shape still uncovered gets its own best appended. (With
     * every shape measured by at least one configuration the greedy step leaves none.) */
    for (size_t s = 0; s < S; s++) {
        if (covered[s])
            continue;
        size_t bc = 0;
        for (size_t c = 1; c < C; c++)
            if (!isnan(w->ms[s * cols + c]) &&
                (isnan(w->ms[s * cols + bc]) || w->ms[s * cols + c] < w->ms[s * cols + bc]))
                bc = c;
        covered[s] = 1;
        if (used[bc])
            continue;
        used[bc] = 1;
        duet_tune_cand_t *o = &a->order[a->n_order++];
        o->mode = w->cfgs[bc].mode;
        o->gemm_frac = (double)w->cfgs[bc].gq / DUET__TUNE_FRAC_SCALE;
        o->comm_frac = (double)w->cfgs[bc].cq / DUET__TUNE_FRAC_SCALE;
        o->tile = w->cfgs[bc].tile;
        o->gain = 1;
        o->mean_rel = mean[bc];
        o->shape_best = 1;
    }

    /* Coverage curve: for k = 1..n, the best of the first k configurations on each shape. */
    double *run = malloc((S ? S : 1) * sizeof(*run));
    if (run == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "candidate set: cannot allocate the coverage curve");
        goto out;
    }
    for (size_t s = 0; s < S; s++)
        run[s] = INFINITY;
    for (size_t k = 0; k < a->n_order; k++) {
        duet__tune_ckey_t key = {a->order[k].mode, lround(a->order[k].gemm_frac * DUET__TUNE_FRAC_SCALE),
                                 lround(a->order[k].comm_frac * DUET__TUNE_FRAC_SCALE), a->order[k].tile};
        size_t c = 0;
        while (c < C && duet__tune_ckey_cmp(&w->cfgs[c], &key) != 0)
            c++;
        size_t within = 0, measured = 0;
        double sum = 0, mx = 0;
        for (size_t s = 0; s < S; s++) {
            if (c < C && !isnan(w->ms[s * cols + c]) && w->ms[s * cols + c] < run[s])
                run[s] = w->ms[s * cols + c];
            if (!isfinite(run[s]))
                continue;
            double slow = run[s] / best[s];
            measured++;
            sum += slow;
            if (slow > mx)
                mx = slow;
            within += run[s] <= best[s] * (1 + tol) * (1 + DUET__TUNE_COVER_SLACK);
        }
        duet_tune_coverage_t *cv = &a->coverage[k];
        cv->k = (int32_t)(k + 1);
        cv->share_within_tol = S ? (double)within / (double)S : 0;
        cv->mean_slowdown = measured ? sum / (double)measured : NAN;
        cv->max_slowdown = measured ? mx : NAN;
        cv->n_measured = (int32_t)measured;
    }
    a->n_coverage = a->n_order;
    a->n_shapes = (int32_t)S;
    free(run);
#undef DUET__COVERS
out:
    free(used);
    free(covered);
    free(mean);
    free(best);
    return st;
}

static int duet__tune_arch_cmp(const void *x, const void *y)
{
    return strcmp(((const duet_tune_candset_arch_t *)x)->arch, ((const duet_tune_candset_arch_t *)y)->arch);
}

duet_status_t duet_tune_candset_derive(const duet_corpus_t *corpora, size_t n_corpora, double tol,
                                       duet_tune_candset_t *set_p)
{
    if (!(tol >= 0) || tol > 1)
        return duet__error(DUET_ERR_INVALID_ARG, "candidate set: tolerance %g is outside [0, 1]", tol);
    if (n_corpora == 0)
        return duet__error(DUET_ERR_INVALID_ARG, "candidate set: no corpus");
    duet_status_t st = DUET_OK;
    duet_tune_candset_t set;
    memset(&set, 0, sizeof(set));
    set.tol = tol;
    snprintf(set.tiles, sizeof(set.tiles), "%s", DUET_TILE_LIST_VERSION);
    duet__tune_arch_work_t *work = calloc(n_corpora, sizeof(*work));
    set.archs = calloc(n_corpora, sizeof(*set.archs));
    if (work == NULL || set.archs == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "candidate set: cannot allocate %zu archs", n_corpora);
        goto out;
    }
    for (size_t i = 0; i < n_corpora; i++) {
        const duet_corpus_t *c = &corpora[i];
        char arch[32];
        duet_tune_arch_strip(c->arch, arch, sizeof(arch));
        if (arch[0] == '\0' || c->sms < 1) {
            st = duet__error(DUET_ERR_INVALID_ARG, "candidate set: corpus %zu names no arch or SM count", i);
            goto out;
        }
        size_t a = 0;
        while (a < set.n_archs && strcmp(set.archs[a].arch, arch) != 0)
            a++;
        if (a == set.n_archs) {
            snprintf(set.archs[a].arch, sizeof(set.archs[a].arch), "%s", arch);
            snprintf(work[a].arch, sizeof(work[a].arch), "%s", arch);
            set.n_archs++;
        }
        duet__tune_add_unique(set.archs[a].sms, &set.archs[a].n_sms, 8, c->sms);
        duet__tune_add_unique(set.archs[a].worlds, &set.archs[a].n_worlds, 16, c->world);
        for (size_t r = 0; r < c->n; r++) {
            const duet_corpus_row_t *row = &c->rows[r];
            /* Only the operation itself, and only what was measured: a failed row is a configuration
             * the shape does not have (the reference design's NaN). The set's configurations have
             * no K split (the tuner adds the model's splits itself): a split row would otherwise
             * lend its time to the unsplit configuration of the same key. */
            if (row->kind != DUET_ROW_OP || !row->ok || !(row->ms > 0) || row->cfg.split_k > 1)
                continue;
            DUET_CHECK_GOTO(duet__tune_work_add_row(&work[a], c->sms, row), st, out);
        }
    }
    for (size_t a = 0; a < set.n_archs; a++) {
        if (work[a].n_shapes == 0) {
            st = duet__error(DUET_ERR_INVALID_ARG, "candidate set: the corpora of %s hold no measured op rows",
                             set.archs[a].arch);
            goto out;
        }
        DUET_CHECK_GOTO(duet__tune_order_arch(&work[a], tol, &set.archs[a]), st, out);
    }
    /* Sorting moves the arch records; the work tables are indexed the old way but are done with. */
    qsort(set.archs, set.n_archs, sizeof(*set.archs), duet__tune_arch_cmp);
    *set_p = set;
    set.archs = NULL;
    set.n_archs = 0;
out:
    for (size_t a = 0; work != NULL && a < n_corpora; a++)
        duet__tune_work_free(&work[a]);
    free(work);
    duet_tune_candset_free(&set);
    return st;
}

void duet_tune_candset_free(duet_tune_candset_t *set)
{
    if (set == NULL)
        return;
    for (size_t a = 0; set->archs != NULL && a < set->n_archs; a++) {
        free(set->archs[a].order);
        free(set->archs[a].coverage);
    }
    free(set->archs);
    set->archs = NULL;
    set->n_archs = 0;
}

const duet_tune_candset_arch_t *duet_tune_candset_find(const duet_tune_candset_t *set, const char *arch)
{
    char a[32];
    duet_tune_arch_strip(arch, a, sizeof(a));
    for (size_t i = 0; set != NULL && i < set->n_archs; i++)
        if (strcmp(set->archs[i].arch, a) == 0)
            return &set->archs[i];
    return NULL;
}

duet_config_t duet_tune_cand_config(const duet_tune_cand_t *c, const duet_hw_t *hw, int32_t cm, int32_t cn,
                                    int32_t group_m)
{
    duet_config_t cfg = duet_config_default(hw, c->mode);
    long sms = hw->n_sms;
    if (c->mode == DUET_MODE_FUSED) {
        long num = lround((c->gemm_frac + c->comm_frac) * (double)sms);
        num = num < 1 ? 1 : num > sms ? sms : num;
        long g = lround(c->gemm_frac * (double)sms);
        g = g < 0 ? 0 : g > num ? num : g;
        cfg.num_wgs = (int32_t)num;
        cfg.gemm_wgs = (int32_t)g;
        cfg.comm_wgs = (int32_t)(num - g);
    } else {
        long g = lround(c->gemm_frac * (double)sms), k = lround(c->comm_frac * (double)sms);
        cfg.gemm_wgs = (int32_t)(g < 1 ? 1 : g > sms ? sms : g);
        cfg.comm_wgs = (int32_t)(k < 1 ? 1 : k);
        cfg.num_wgs = cfg.gemm_wgs + cfg.comm_wgs;
    }
    cfg.tile = c->tile;
    if (cm > 0)
        cfg.cm = cm;
    if (cn > 0)
        cfg.cn = cn;
    if (group_m > 0)
        cfg.group_m = group_m;
    return cfg;
}

/* ------------------------------------------------------------------------------------------ */
/* File                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Four decimals are what the curves are read at; the file stays short. */
static double duet__tune_round4(double v)
{
    return isfinite(v) ? round(v * 1e4) / 1e4 : v;
}

duet_status_t duet__tune_candset_text(const duet_tune_candset_t *set, const char *const *sources, size_t n_sources,
                                      char **text_p, size_t *len_p)
{
    cJSON *root = cJSON_CreateObject();
    if (root == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "candidate set: cannot build JSON");
    char date[32], tile[48];
    duet__tune_utc_now(date, sizeof(date));
    cJSON_AddStringToObject(root, "schema", DUET_TUNE_CANDSET_SCHEMA);
    duet__tune_json_num(root, "tolerance", set->tol);
    cJSON_AddStringToObject(root, "tiles", set->tiles);
    cJSON_AddStringToObject(root, "duet", DUET_VERSION);
    cJSON_AddStringToObject(root, "date", date);
    cJSON_AddStringToObject(root, "units",
                            "gemm_frac and comm_frac are CTA counts as fractions of the device's SMs; "
                            "coverage k uses the first k configurations of order");
    cJSON *src = cJSON_AddArrayToObject(root, "sources");
    for (size_t i = 0; sources != NULL && i < n_sources; i++)
        cJSON_AddItemToArray(src, cJSON_CreateString(sources[i]));
    cJSON *archs = cJSON_AddObjectToObject(root, "archs");
    for (size_t a = 0; a < set->n_archs; a++) {
        const duet_tune_candset_arch_t *A = &set->archs[a];
        cJSON *ao = cJSON_AddObjectToObject(archs, A->arch);
        cJSON_AddNumberToObject(ao, "n_shapes", A->n_shapes);
        cJSON *sms = cJSON_AddArrayToObject(ao, "sms");
        for (int32_t i = 0; i < A->n_sms; i++)
            cJSON_AddItemToArray(sms, cJSON_CreateNumber(A->sms[i]));
        cJSON *worlds = cJSON_AddArrayToObject(ao, "worlds");
        for (int32_t i = 0; i < A->n_worlds; i++)
            cJSON_AddItemToArray(worlds, cJSON_CreateNumber(A->worlds[i]));
        cJSON *order = cJSON_AddArrayToObject(ao, "order");
        for (size_t i = 0; i < A->n_order; i++) {
            const duet_tune_cand_t *c = &A->order[i];
            cJSON *co = cJSON_CreateObject();
            cJSON_AddStringToObject(co, "mode", duet_mode_name(c->mode));
            duet__tune_json_num(co, "gemm_frac", c->gemm_frac);
            duet__tune_json_num(co, "comm_frac", c->comm_frac);
            snprintf(tile, sizeof(tile), "%dx%dx%d", (int)c->tile.bm, (int)c->tile.bn, (int)c->tile.bk);
            cJSON_AddStringToObject(co, "tile", tile);
            cJSON_AddNumberToObject(co, "gain", c->gain);
            duet__tune_json_num(co, "mean_rel", duet__tune_round4(c->mean_rel));
            cJSON_AddStringToObject(co, "by", c->shape_best ? "shape_best" : "greedy");
            cJSON_AddItemToArray(order, co);
        }
        cJSON *cov = cJSON_AddArrayToObject(ao, "coverage");
        for (size_t i = 0; i < A->n_coverage; i++) {
            const duet_tune_coverage_t *v = &A->coverage[i];
            cJSON *co = cJSON_CreateObject();
            cJSON_AddNumberToObject(co, "k", v->k);
            duet__tune_json_num(co, "share_within_tol", duet__tune_round4(v->share_within_tol));
            duet__tune_json_num(co, "mean_slowdown", duet__tune_round4(v->mean_slowdown));
            duet__tune_json_num(co, "max_slowdown", duet__tune_round4(v->max_slowdown));
            cJSON_AddNumberToObject(co, "n_measured", v->n_measured);
            cJSON_AddItemToArray(cov, co);
        }
    }
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (text == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "candidate set: cannot print JSON");
    size_t len = strlen(text);
    /* End with a newline like every other file duet writes. */
    char *nl = realloc(text, len + 2);
    if (nl == NULL) {
        cJSON_free(text);
        return duet__error(DUET_ERR_NO_MEMORY, "candidate set: cannot print JSON");
    }
    nl[len] = '\n';
    nl[len + 1] = '\0';
    *text_p = nl;
    *len_p = len + 1;
    return DUET_OK;
}

duet_status_t duet_tune_candset_save(const duet_tune_candset_t *set, const char *const *sources, size_t n_sources,
                                     const char *path)
{
    char *text = NULL;
    size_t len = 0;
    DUET_CHECK(duet__tune_candset_text(set, sources, n_sources, &text, &len));
    duet_status_t st = duet__write_file_atomic(path, text, len);
    free(text);
    return st;
}

/*
 * A count or id of the file as an int32: an integer in [lo, hi], checked before the cast (a double
 * beyond int32, or NaN, cast to it is undefined behaviour). `v` NULL (the key is absent) gives
 * `absent` where that is >= 0, and an error where it is -1 (required).
 */
static duet_status_t duet__tune_load_int(const cJSON *v, double lo, double hi, int32_t absent, const char *origin,
                                         const char *arch, const char *what, int32_t *out)
{
    if (v == NULL && absent >= 0) {
        *out = absent;
        return DUET_OK;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= lo && v->valuedouble <= hi) ||
        v->valuedouble != floor(v->valuedouble))
        return duet__error(DUET_ERR_PARSE, "%s: archs.%s.%s: %s an integer in [%.0f, %.0f]", origin, arch, what,
                           v == NULL ? "missing, want" : "not", lo, hi);
    *out = (int32_t)v->valuedouble;
    return DUET_OK;
}

/* archs.<arch>.<key>: a list of at most `cap` distinct integers in [lo, hi], kept sorted. */
static duet_status_t duet__tune_load_ints(const cJSON *ao, const char *key, double lo, double hi, int32_t cap,
                                          const char *origin, const char *arch, int32_t *arr, int32_t *n)
{
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(ao, key))
    {
        int32_t v = 0;
        DUET_CHECK(duet__tune_load_int(it, lo, hi, -1, origin, arch, key, &v));
        duet__tune_add_unique(arr, n, cap, v);
    }
    return DUET_OK;
}

static duet_status_t duet__tune_load_arch(const cJSON *ao, const char *origin, duet_tune_candset_arch_t *A)
{
    const cJSON *order = cJSON_GetObjectItemCaseSensitive(ao, "order"), *it;
    if (!cJSON_IsObject(ao) || !cJSON_IsArray(order))
        return duet__error(DUET_ERR_PARSE, "%s: archs.%s: needs an \"order\" array", origin, A->arch);
    DUET_CHECK(duet__tune_load_int(cJSON_GetObjectItemCaseSensitive(ao, "n_shapes"), 0, INT32_MAX, 0, origin, A->arch,
                                   "n_shapes", &A->n_shapes));
    DUET_CHECK(duet__tune_load_ints(ao, "sms", 1, 4096, 8, origin, A->arch, A->sms, &A->n_sms));
    DUET_CHECK(duet__tune_load_ints(ao, "worlds", 1, 1024, 16, origin, A->arch, A->worlds, &A->n_worlds));
    size_t n = (size_t)cJSON_GetArraySize(order), i = 0, dropped = 0;
    A->order = calloc(n ? n : 1, sizeof(*A->order));
    if (A->order == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate %zu candidates", origin, n);
    cJSON_ArrayForEach(it, order)
    {
        duet_tune_cand_t c;
        memset(&c, 0, sizeof(c));
        const cJSON *mode = cJSON_GetObjectItemCaseSensitive(it, "mode");
        const cJSON *tile = cJSON_GetObjectItemCaseSensitive(it, "tile");
        double g = duet__tune_json_get_num(it, "gemm_frac"), k = duet__tune_json_get_num(it, "comm_frac");
        if (!cJSON_IsString(mode) || duet_mode_parse(mode->valuestring, &c.mode) < 0 || !(g >= 0 && g <= 1) ||
            !(k >= 0 && k <= 1) || !cJSON_IsString(tile))
            return duet__error(DUET_ERR_PARSE,
                               "%s: archs.%s.order[%zu]: needs mode, gemm_frac and comm_frac in [0, 1], and tile",
                               origin, A->arch, i);
        i++;
        if (duet_tile_parse(tile->valuestring, &c.tile) < 0) {
            dropped++; /* a tile this build does not have (another tile-list version) */
            continue;
        }
        c.gemm_frac = g;
        c.comm_frac = k;
        DUET_CHECK(duet__tune_load_int(cJSON_GetObjectItemCaseSensitive(it, "gain"), 0, INT32_MAX, 0, origin, A->arch,
                                       "order[].gain", &c.gain));
        c.mean_rel = duet__tune_json_get_num(it, "mean_rel");
        const cJSON *by = cJSON_GetObjectItemCaseSensitive(it, "by");
        c.shape_best = cJSON_IsString(by) && strcmp(by->valuestring, "shape_best") == 0;
        A->order[A->n_order++] = c;
    }
    /* The curve describes the whole order; with entries dropped it no longer does. */
    const cJSON *cov = cJSON_GetObjectItemCaseSensitive(ao, "coverage");
    if (dropped == 0 && cJSON_IsArray(cov)) {
        size_t m = (size_t)cJSON_GetArraySize(cov);
        A->coverage = calloc(m ? m : 1, sizeof(*A->coverage));
        if (A->coverage == NULL)
            return duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate a coverage curve", origin);
        cJSON_ArrayForEach(it, cov)
        {
            duet_tune_coverage_t *p = &A->coverage[A->n_coverage++];
            DUET_CHECK(duet__tune_load_int(cJSON_GetObjectItemCaseSensitive(it, "k"), 1, INT32_MAX, -1, origin, A->arch,
                                           "coverage[].k", &p->k));
            p->share_within_tol = duet__tune_json_get_num(it, "share_within_tol");
            p->mean_slowdown = duet__tune_json_get_num(it, "mean_slowdown");
            p->max_slowdown = duet__tune_json_get_num(it, "max_slowdown");
            DUET_CHECK(duet__tune_load_int(cJSON_GetObjectItemCaseSensitive(it, "n_measured"), 0, INT32_MAX, -1, origin,
                                           A->arch, "coverage[].n_measured", &p->n_measured));
        }
    }
    return DUET_OK;
}

duet_status_t duet_tune_candset_load(const char *path, duet_tune_candset_t *set_p)
{
    char *text = NULL;
    DUET_CHECK(duet__read_file(path, &text, NULL));
    cJSON *root = duet__json_parse(text, (size_t)-1, path, 1);
    free(text);
    if (root == NULL)
        return duet__last_status(); /* malformed, or out of memory */
    duet_status_t st = DUET_OK;
    duet_tune_candset_t set;
    memset(&set, 0, sizeof(set));
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(root, "archs"), *it;
    const cJSON *tiles = cJSON_GetObjectItemCaseSensitive(root, "tiles");
    set.tol = duet__tune_json_get_num(root, "tolerance");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, DUET_TUNE_CANDSET_SCHEMA) != 0 ||
        !cJSON_IsObject(archs) || !(set.tol >= 0 && set.tol <= 1)) {
        st = duet__error(DUET_ERR_PARSE, "%s: not a candidate set (schema \"%s\", tolerance, archs)", path,
                         DUET_TUNE_CANDSET_SCHEMA);
        goto out;
    }
    snprintf(set.tiles, sizeof(set.tiles), "%s", cJSON_IsString(tiles) ? tiles->valuestring : "");
    size_t n = (size_t)cJSON_GetArraySize(archs);
    set.archs = calloc(n ? n : 1, sizeof(*set.archs));
    if (set.archs == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "%s: cannot allocate %zu archs", path, n);
        goto out;
    }
    cJSON_ArrayForEach(it, archs)
    {
        duet_tune_candset_arch_t *A = &set.archs[set.n_archs++];
        duet_tune_arch_strip(it->string, A->arch, sizeof(A->arch));
        DUET_CHECK_GOTO(duet__tune_load_arch(it, path, A), st, out);
    }
    qsort(set.archs, set.n_archs, sizeof(*set.archs), duet__tune_arch_cmp);
    *set_p = set;
    memset(&set, 0, sizeof(set));
out:
    duet_tune_candset_free(&set);
    cJSON_Delete(root);
    return st;
}
