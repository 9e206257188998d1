/*
 * The tuning database: one JSON file shared by every process of a user, written under an advisory
 * lock with a re-read and merge, so that concurrent tuners lose nothing, and replaced through
 * duet__write_file_atomic() (a temporary file and a rename), so that readers never see a partial
 * file and need no lock.
 *
 * Damage, and what each operation does with it:
 * - A bad entry (its key given twice, a key given twice inside it, a number beyond the range of a
 *   double such as 1e999, a time out of range) is dropped on its own, with a warning that names it
 *   and says why; every other entry is kept. Lookups and listings skip it (a miss), and a store
 *   leaves it out of the file it writes, so the database is JSON again after one store. An entry
 *   this version cannot read for another reason (a future format) is kept verbatim by a store.
 * - A file that is not a database at all (not JSON, a top-level key twice, no "duet-tuning/2"
 *   or "duet-tuning/1" schema with an "entries" object) is never changed: reads report it (a lookup warns and
 *   misses, a listing fails with the reason), a store refuses to replace it (DUET_ERR_PARSE; the
 *   tuner warns and keeps its winner), and clear refuses to delete it. The user fixes or removes
 *   the file. An empty regular file holds nothing and counts as no database.
 * - Read-only operations (lookup, list) never write, rename or create anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tune/internal.h"

#define DUET__TUNE_LOCK_TIMEOUT_MS 60000
/* The longest time an entry may hold, us: 1e12 us is 11.6 days, far beyond any kernel measured. */
#define DUET__TUNE_MAX_US 1e12

/*
 * The time members of an entry (the winner's median, its prediction) and of a candidate
 * (prediction, median, fastest, slowest run) in each layout: [0] duet-tuning/2 (us), [1]
 * duet-tuning/1 (ms). In memory they are us, as in /2, so that an entry reads back exactly.
 */
static const char *const duet__tune_entry_times[2][2] = {{"measured_us", "pred_us"}, {"measured_ms", "pred_ms"}};
static const char *const duet__tune_cand_times[2][4] = {{"pred_us", "us", "min_us", "max_us"},
                                                        {"pred_ms", "ms", "min_ms", "max_ms"}};

/*
 * A /1 object that also holds a time under its /2 name: a /1 writer never wrote those, so which
 * value is meant is unknown and the object does not read (an upgrade leaves both, see
 * duet__tune_rename, so that the first store into the file keeps it as it was).
 */
static duet_status_t duet__tune_v1_clash(const cJSON *o, const char *const *v2, const char *const *v1, int n,
                                         const char *where)
{
    for (int i = 0; i < n; i++)
        if (cJSON_GetObjectItemCaseSensitive(o, v2[i]) != NULL)
            return duet__error(DUET_ERR_PARSE,
                               "%s.%s: a duet-tuning/2 member in a duet-tuning/1 entry (whose time is %s)", where,
                               v2[i], v1[i]);
    return DUET_OK;
}

/* A time member of the file as us (NaN when absent or null): /2 holds us, /1 ms. */
static double duet__tune_time_get(const cJSON *o, const char *key, int v1)
{
    double v = duet__tune_json_get_num(o, key);
    return v1 ? v * 1e3 : v;
}

/* ------------------------------------------------------------------------------------------ */
/* Paths, folders, the lock                                                                    */
/* ------------------------------------------------------------------------------------------ */

duet_status_t duet_tune_db_open(const char *path, duet_tune_db_t *db_p)
{
    duet_tune_db_t db;
    memset(&db, 0, sizeof(db));
    db.lock_timeout_ms = DUET__TUNE_LOCK_TIMEOUT_MS;
    const char *env = getenv("DUET_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
    int len;
    if (path != NULL && path[0] != '\0') {
        len = snprintf(db.path, sizeof(db.path), "%s", path);
    } else if (env != NULL && env[0] != '\0') {
        len = snprintf(db.path, sizeof(db.path), "%s", env);
    } else if (xdg != NULL && xdg[0] == '/') {
        /* The XDG spec: a relative XDG_CACHE_HOME is invalid and must be ignored. */
        len = snprintf(db.path, sizeof(db.path), "%s/duet/tuning.json", xdg);
    } else {
        const char *home = getenv("HOME");
        if (home == NULL || home[0] == '\0') {
            struct passwd *pw = getpwuid(getuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (home == NULL || home[0] == '\0')
            return duet__error(DUET_ERR_NOT_FOUND,
                               "tuning database: no DUET_CACHE, XDG_CACHE_HOME or home folder to put it in");
        len = snprintf(db.path, sizeof(db.path), "%s/.cache/duet/tuning.json", home);
    }
    if (len < 0 || (size_t)len >= sizeof(db.path) - 32) /* room for ".lock" */
        return duet__error(DUET_ERR_INVALID_ARG, "tuning database: path longer than %zu characters",
                           sizeof(db.path) - 32);
    *db_p = db;
    return DUET_OK;
}

/* Create every missing folder of the database's parent directory (mkdir -p). */
static duet_status_t duet__tune_mkdirs(const char *path)
{
    char dir[DUET_TUNE_PATH_LEN];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return DUET_OK; /* the current folder or the root: nothing to create */
    *slash = '\0';
    for (char *p = dir + 1;; p++) {
        if (*p == '/' || *p == '\0') {
            char saved = *p;
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST)
                return duet__error(DUET_ERR_IO, "%s: cannot create the folder %s: %s", path, dir, strerror(errno));
            *p = saved;
            if (saved == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return duet__error(DUET_ERR_IO, "%s: %s is not a folder", path, dir);
    return DUET_OK;
}

/*
 * Take the advisory lock: flock(LOCK_EX) on "<path>.lock", polled so that a stuck holder turns into
 * DUET_ERR_BUSY after the timeout instead of a hang. The lock file is never removed: removing it
 * would let two processes lock two different inodes of the same name.
 */
static duet_status_t duet__tune_lock(duet_tune_db_t *db, int *fd_p)
{
    char lock[DUET_TUNE_PATH_LEN + 8];
    snprintf(lock, sizeof(lock), "%s.lock", db->path);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return duet__error(errno == ENOENT ? DUET_ERR_NOT_FOUND : DUET_ERR_IO, "%s: cannot open the lock file: %s",
                           lock, strerror(errno));
    long waited_us = 0, step_us = 500;
    long limit_us = (long)(db->lock_timeout_ms > 0 ? db->lock_timeout_ms : DUET__TUNE_LOCK_TIMEOUT_MS) * 1000;
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            break;
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK) {
            int e = errno;
            close(fd);
            return duet__error(DUET_ERR_IO, "%s: flock: %s", lock, strerror(e));
        }
        if (waited_us >= limit_us) {
            close(fd);
            return duet__error(DUET_ERR_BUSY, "%s: still locked by another process after %ld ms", lock,
                               waited_us / 1000);
        }
        struct timespec ts = {0, step_us * 1000};
        nanosleep(&ts, NULL);
        waited_us += step_us;
        if (step_us < 16000)
            step_us *= 2;
    }
    *fd_p = fd;
    return DUET_OK;
}

static void duet__tune_unlock(int fd)
{
    if (fd >= 0) {
        flock(fd, LOCK_UN);
        close(fd);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Reading the file                                                                            */
/* ------------------------------------------------------------------------------------------ */

/*
 * Read the database. @return DUET_OK with *root_p (a cJSON object with "schema" and "entries") and
 * *v1_p (1: the file is duet-tuning/1, its times in ms),
 * DUET_ERR_NOT_FOUND when there is no file (or it is empty: it holds nothing to lose),
 * DUET_ERR_PARSE when the text is not a database (the reason is recorded), DUET_ERR_IO when it
 * cannot be read. Duplicate keys are checked at the top level only: below "entries" they make
 * one entry bad (duet__tune_entry_bad), not the file.
 */
static duet_status_t duet__tune_read_root(const duet_tune_db_t *db, cJSON **root_p, int *v1_p)
{
    char *text = NULL;
    size_t len = 0;
    struct stat sb;
    /* Opening a FIFO to read would wait for a writer that never comes. */
    if (stat(db->path, &sb) == 0 && (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode) || S_ISDIR(sb.st_mode)))
        return duet__error(DUET_ERR_PARSE, "%s: not a regular file, so not a tuning database", db->path);
    DUET_CHECK(duet__read_file(db->path, &text, &len));
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r'))
        i++;
    if (i == len) {
        free(text);
        return duet__error(DUET_ERR_NOT_FOUND, "%s: empty", db->path);
    }
    cJSON *root = duet__json_parse(text, len, db->path, 0);
    free(text);
    if (root == NULL)
        return duet__last_status(); /* malformed, or out of memory */
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    int v1 = cJSON_IsString(schema) && strcmp(schema->valuestring, DUET_TUNE_DB_SCHEMA_V1) == 0;
    if (!cJSON_IsObject(root) || !cJSON_IsString(schema) ||
        (strcmp(schema->valuestring, DUET_TUNE_DB_SCHEMA) != 0 && !v1) || !cJSON_IsObject(entries)) {
        cJSON_Delete(root);
        return duet__error(DUET_ERR_PARSE,
                           "%s: not a tuning database (schema \"%s\", or \"%s\" before it, with an \"entries\" "
                           "object)",
                           db->path, DUET_TUNE_DB_SCHEMA, DUET_TUNE_DB_SCHEMA_V1);
    }
    if (duet__json_check_keys(root, db->path, "", 0) < 0) {
        cJSON_Delete(root);
        return DUET_ERR_PARSE;
    }
    *root_p = root;
    *v1_p = v1;
    return DUET_OK;
}

/*
 * Rename member `from` of o to `to`, its number (if it is one) times `scale`. Where o already has
 * a member `to`, both are left as they are: the rename would write the name twice, which makes
 * the whole entry bad and costs it at the store that upgrades the file (duet__tune_v1_clash).
 */
static duet_status_t duet__tune_rename(cJSON *o, const char *from, const char *to, double scale)
{
    cJSON *it = cJSON_GetObjectItemCaseSensitive(o, from);
    if (it == NULL || cJSON_GetObjectItemCaseSensitive(o, to) != NULL)
        return DUET_OK;
    char *name = cJSON_malloc(strlen(to) + 1);
    if (name == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot rename a member");
    memcpy(name, to, strlen(to) + 1);
    if (!(it->type & cJSON_StringIsConst))
        cJSON_free(it->string);
    it->string = name;
    it->type &= ~cJSON_StringIsConst;
    if (cJSON_IsNumber(it))
        cJSON_SetNumberValue(it, it->valuedouble * scale);
    return DUET_OK;
}

/*
 * A duet-tuning/1 tree as duet-tuning/2: every entry's and candidate's times from ms under the /1
 * keys to us under the /2 keys, and the schema. Members that are not what a /1 entry holds are
 * left as they are (an entry this version cannot read is kept, not repaired).
 */
static duet_status_t duet__tune_upgrade(cJSON *root)
{
    cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries"), *e, *c;
    cJSON_ArrayForEach(e, entries)
    {
        if (!cJSON_IsObject(e))
            continue;
        for (int i = 0; i < 2; i++)
            DUET_CHECK(duet__tune_rename(e, duet__tune_entry_times[1][i], duet__tune_entry_times[0][i], 1e3));
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(e, "candidates"))
        {
            for (int i = 0; cJSON_IsObject(c) && i < 4; i++)
                DUET_CHECK(duet__tune_rename(c, duet__tune_cand_times[1][i], duet__tune_cand_times[0][i], 1e3));
        }
    }
    cJSON *schema = cJSON_CreateString(DUET_TUNE_DB_SCHEMA);
    if (schema == NULL || !cJSON_ReplaceItemInObjectCaseSensitive(root, "schema", schema)) {
        cJSON_Delete(schema);
        return duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot rewrite the schema");
    }
    return DUET_OK;
}

/* The first number in `item` or below it that is not finite (JSON text such as 1e999 parses to infinity), or NULL. */
static const cJSON *duet__tune_nonfinite(const cJSON *item)
{
    if (cJSON_IsNumber(item) && !isfinite(item->valuedouble))
        return item;
    for (const cJSON *c = item->child; c != NULL; c = c->next) {
        const cJSON *in = duet__tune_nonfinite(c);
        if (in != NULL)
            return in;
    }
    return NULL;
}

static int duet__tune_name_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * The names of the entries, sorted (malloc'd; NULL with *n_p = 0 for none or when out of memory),
 * so that how often each occurs is found in O(log n) instead of a pass over the entries per entry.
 */
static const char **duet__tune_sorted_names(const cJSON *entries, size_t *n_p)
{
    size_t n = 0;
    for (const cJSON *it = entries->child; it != NULL; it = it->next)
        n++;
    const char **names = n ? malloc(n * sizeof(*names)) : NULL;
    *n_p = names ? n : 0;
    if (names == NULL)
        return NULL;
    n = 0;
    for (const cJSON *it = entries->child; it != NULL; it = it->next)
        names[n++] = it->string;
    qsort(names, n, sizeof(*names), duet__tune_name_cmp);
    return names;
}

/* Whether `name` occurs more than once among the sorted names. */
static int duet__tune_name_twice(const char **names, size_t n, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first name >= name */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(names[mid], name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo + 1 < n && strcmp(names[lo], name) == 0 && strcmp(names[lo + 1], name) == 0;
}

/*
 * Whether an entry of the database is bad beyond keeping (its key twice among the entries, as
 * `twice` says, a key twice inside it, a number out of the range of a double): 1 with the reason
 * recorded, else 0. An entry that is only unreadable by this version is not bad here: a store
 * keeps it verbatim.
 */
static int duet__tune_entry_bad(const duet_tune_db_t *db, const cJSON *item, int twice)
{
    if (twice) {
        duet__error(DUET_ERR_PARSE, "%s: entries: duplicate key \"%s\"", db->path, duet__q(item->string));
        return 1;
    }
    char where[256];
    snprintf(where, sizeof(where), "entries[\"%s\"]", duet__q(item->string));
    if (duet__json_check_keys(item, db->path, where, 1) < 0)
        return duet__last_status() == DUET_ERR_NO_MEMORY ? -1 : 1; /* -1: could not check, not bad */
    const cJSON *bad = duet__tune_nonfinite(item);
    if (bad != NULL) {
        duet__error(DUET_ERR_PARSE, "%s: %s.%s: a number beyond the range of a double", db->path, where,
                    bad->string ? duet__q(bad->string) : "[]");
        return 1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Entries <-> JSON                                                                            */
/* ------------------------------------------------------------------------------------------ */

static cJSON *duet__tune_entry_to_json(const duet_tune_entry_t *e, int with_key)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    if (with_key)
        cJSON_AddStringToObject(o, "key", e->key);
    cJSON_AddStringToObject(o, "arch", e->arch);
    cJSON_AddNumberToObject(o, "sms", e->sms);
    cJSON *modes = cJSON_AddArrayToObject(o, "modes");
    for (int32_t m = 0; m < DUET_MODE_COUNT; m++)
        if (e->modes & (1u << m))
            cJSON_AddItemToArray(modes, cJSON_CreateString(duet_mode_name(m)));
    cJSON_AddStringToObject(o, "tiles", e->tiles);
    if (duet__workload_to_cjson(o, &e->wl) < 0 ||
        duet__config_to_cjson(cJSON_AddObjectToObject(o, "config"), &e->cfg) < 0) {
        cJSON_Delete(o);
        return NULL;
    }
    duet__tune_json_num(o, "measured_us", e->measured_us);
    duet__tune_json_num(o, "pred_us", e->pred_us);
    cJSON_AddNumberToObject(o, "n_warmup", e->n_warmup);
    cJSON_AddNumberToObject(o, "n_repeat", e->n_repeat);
    cJSON *arr = cJSON_AddArrayToObject(o, "candidates");
    for (int32_t i = 0; i < e->n_cands; i++) {
        const duet_tune_outcome_t *c = &e->cands[i];
        cJSON *co = cJSON_CreateObject();
        if (duet__config_to_cjson(co, &c->cfg) < 0) {
            cJSON_Delete(co);
            cJSON_Delete(o);
            return NULL;
        }
        cJSON_AddStringToObject(co, "source", duet_tune_source_name(c->source));
        cJSON_AddNumberToObject(co, "model_rank", c->model_rank);
        duet__tune_json_num(co, "pred_us", c->pred_us);
        cJSON_AddBoolToObject(co, "ok", c->ok != 0);
        if (c->ok) {
            duet__tune_json_num(co, "us", c->us);
            duet__tune_json_num(co, "min_us", c->min_us);
            duet__tune_json_num(co, "max_us", c->max_us);
        } else {
            cJSON_AddStringToObject(co, "status", duet_status_name((duet_status_t)c->status));
            cJSON_AddStringToObject(co, "error", c->error);
        }
        cJSON_AddItemToArray(arr, co);
    }
    cJSON_AddStringToObject(o, "date", e->date);
    cJSON_AddStringToObject(o, "duet", e->duet_version);
    return o;
}

static duet_status_t duet__tune_str_member(const cJSON *o, const char *key, const char *where, char *buf, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= n)
        return duet__error(DUET_ERR_PARSE, "%s.%s: missing, not a string, or longer than %zu", where, key, n - 1);
    if (!duet__text_plain(v->valuestring))
        return duet__error(DUET_ERR_PARSE, "%s.%s: '%s' holds a control character or a byte that is not text", where,
                           key, duet__q(v->valuestring));
    snprintf(buf, n, "%s", v->valuestring);
    return DUET_OK;
}

static duet_status_t duet__tune_int_member(const cJSON *o, const char *key, const char *where, double lo, double hi,
                                           int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > hi)
        return duet__error(DUET_ERR_PARSE, "%s.%s: missing or not an integer in [%g, %g]", where, key, lo, hi);
    *out = (int64_t)v->valuedouble;
    return DUET_OK;
}

static duet_status_t duet__tune_outcome_from_json(const cJSON *co, const duet_workload_t *wl, const char *where, int v1,
                                                  duet_tune_outcome_t *c)
{
    const char *const *tk = duet__tune_cand_times[v1];
    memset(c, 0, sizeof(*c));
    DUET_CHECK(duet__config_from_json(co, wl, where, &c->cfg));
    const cJSON *src = cJSON_GetObjectItemCaseSensitive(co, "source");
    c->source = DUET_TUNE_SRC_MODEL;
    for (int32_t s = 0; cJSON_IsString(src) && s < DUET_TUNE_SRC_COUNT; s++)
        if (strcmp(src->valuestring, duet_tune_source_name(s)) == 0)
            c->source = s;
    int64_t v = 0;
    if (duet__tune_int_member(co, "model_rank", where, 0, 1e9, &v) == DUET_OK)
        c->model_rank = (int32_t)v;
    if (v1)
        DUET_CHECK(duet__tune_v1_clash(co, duet__tune_cand_times[0], duet__tune_cand_times[1], 4, where));
    c->pred_us = duet__tune_time_get(co, tk[0], v1);
    const cJSON *ok = cJSON_GetObjectItemCaseSensitive(co, "ok");
    if (!cJSON_IsBool(ok))
        return duet__error(DUET_ERR_PARSE, "%s.ok: missing or not true/false", where);
    c->ok = cJSON_IsTrue(ok);
    if (c->ok) {
        c->us = duet__tune_time_get(co, tk[1], v1);
        c->min_us = duet__tune_time_get(co, tk[2], v1);
        c->max_us = duet__tune_time_get(co, tk[3], v1);
        if (!(c->us > 0) || !(c->us <= DUET__TUNE_MAX_US))
            return duet__error(DUET_ERR_PARSE, "%s.%s: a measured candidate needs a time in (0, %g] %s", where, tk[1],
                               v1 ? DUET__TUNE_MAX_US / 1e3 : DUET__TUNE_MAX_US, v1 ? "ms" : "us");
    } else {
        const cJSON *err = cJSON_GetObjectItemCaseSensitive(co, "error");
        /* Shown by duet tune --list: escaped as every error line is (a shared file may hold anything). */
        duet__text_escape(c->error, sizeof(c->error), cJSON_IsString(err) ? err->valuestring : "unknown error",
                          sizeof(c->error) - 1);
        const cJSON *status = cJSON_GetObjectItemCaseSensitive(co, "status");
        c->status = DUET_ERR_INTERNAL;
        for (int s = 0; s >= -64 && cJSON_IsString(status); s--)
            if (strcmp(status->valuestring, duet_status_name((duet_status_t)s)) == 0) {
                c->status = s;
                break;
            }
    }
    return DUET_OK;
}

static duet_status_t duet__tune_entry_from_json(const cJSON *o, const char *key, int v1, duet_tune_entry_t *e)
{
    const char *const *tk = duet__tune_entry_times[v1];
    char where[DUET_TUNE_KEY_LEN + 32];
    snprintf(where, sizeof(where), "entries[\"%.*s\"]", DUET_TUNE_KEY_LEN, key);
    memset(e, 0, sizeof(*e));
    if (!cJSON_IsObject(o))
        return duet__error(DUET_ERR_PARSE, "%s: not an object", where);
    if (strlen(key) >= sizeof(e->key))
        return duet__error(DUET_ERR_PARSE, "%s: key longer than %zu", where, sizeof(e->key) - 1);
    if (!duet__text_plain(key))
        return duet__error(DUET_ERR_PARSE, "%s: the key holds a control character or a byte that is not text", where);
    snprintf(e->key, sizeof(e->key), "%s", key);
    DUET_CHECK(duet__tune_str_member(o, "arch", where, e->arch, sizeof(e->arch)));
    DUET_CHECK(duet__tune_str_member(o, "tiles", where, e->tiles, sizeof(e->tiles)));
    DUET_CHECK(duet__tune_str_member(o, "date", where, e->date, sizeof(e->date)));
    DUET_CHECK(duet__tune_str_member(o, "duet", where, e->duet_version, sizeof(e->duet_version)));
    int64_t v;
    DUET_CHECK(duet__tune_int_member(o, "sms", where, 1, 4096, &v));
    e->sms = (int32_t)v;
    const cJSON *modes = cJSON_GetObjectItemCaseSensitive(o, "modes"), *it;
    if (!cJSON_IsArray(modes))
        return duet__error(DUET_ERR_PARSE, "%s.modes: missing or not an array", where);
    cJSON_ArrayForEach(it, modes)
    {
        int32_t m;
        if (!cJSON_IsString(it) || duet_mode_parse(it->valuestring, &m) < 0)
            return duet__error(DUET_ERR_PARSE, "%s.modes: fused or concurrent", where);
        e->modes |= 1u << m;
    }
    DUET_CHECK(duet__workload_from_json(o, where, 0, &e->wl));
    char cw[DUET_TUNE_KEY_LEN + 48];
    snprintf(cw, sizeof(cw), "%s.config", where);
    DUET_CHECK(duet__config_from_json(cJSON_GetObjectItemCaseSensitive(o, "config"), &e->wl, cw, &e->cfg));
    if (v1)
        DUET_CHECK(duet__tune_v1_clash(o, duet__tune_entry_times[0], duet__tune_entry_times[1], 2, where));
    e->measured_us = duet__tune_time_get(o, tk[0], v1);
    e->pred_us = duet__tune_time_get(o, tk[1], v1);
    if (!(e->measured_us > 0) || !(e->measured_us <= DUET__TUNE_MAX_US))
        return duet__error(DUET_ERR_PARSE, "%s.%s: missing or not a time in (0, %g] %s", where, tk[0],
                           v1 ? DUET__TUNE_MAX_US / 1e3 : DUET__TUNE_MAX_US, v1 ? "ms" : "us");
    DUET_CHECK(duet__tune_int_member(o, "n_warmup", where, 0, 1e6, &v));
    e->n_warmup = (int32_t)v;
    DUET_CHECK(duet__tune_int_member(o, "n_repeat", where, 0, 1e6, &v));
    e->n_repeat = (int32_t)v;
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(o, "candidates");
    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > DUET_TUNE_MAX_CANDIDATES)
        return duet__error(DUET_ERR_PARSE, "%s.candidates: missing or more than %d", where, DUET_TUNE_MAX_CANDIDATES);
    cJSON_ArrayForEach(it, arr)
    {
        snprintf(cw, sizeof(cw), "%s.candidates[%d]", where, (int)e->n_cands);
        DUET_CHECK(duet__tune_outcome_from_json(it, &e->wl, cw, v1, &e->cands[e->n_cands]));
        e->n_cands++;
    }
    return DUET_OK;
}

cJSON *duet__tune_entries_cjson(const duet_tune_entry_t *entries, size_t n)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr != NULL && i < n; i++)
        cJSON_AddItemToArray(arr, duet__tune_entry_to_json(&entries[i], 1));
    return arr;
}

duet_status_t duet_tune_entries_to_json(const duet_tune_entry_t *entries, size_t n, char **text_p)
{
    cJSON *arr = duet__tune_entries_cjson(entries, n);
    if (arr == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot build JSON");
    char *text = cJSON_Print(arr);
    cJSON_Delete(arr);
    if (text == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot print JSON");
    *text_p = text;
    return DUET_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Lookup, store, list, clear                                                                  */
/* ------------------------------------------------------------------------------------------ */

/* Whether `key` occurs again among the members after `first` (cJSON finds the first of them). */
static int duet__tune_again(const cJSON *first, const char *key)
{
    for (const cJSON *it = first->next; it != NULL; it = it->next)
        if (strcmp(it->string, key) == 0)
            return 1;
    return 0;
}

duet_status_t duet_tune_db_lookup(duet_tune_db_t *db, const char *key, duet_tune_entry_t *entry_p)
{
    cJSON *root = NULL;
    int v1 = 0;
    duet_status_t st = duet__tune_read_root(db, &root, &v1);
    if (st == DUET_ERR_PARSE) {
        /* Left as it is: a lookup only reads. The miss lets the tuner go on; a store will refuse. */
        duet__tune_db_warn(db, "%s; left as it is and not used", duet_last_error());
        return duet__error(DUET_ERR_NOT_FOUND, "%s: not a usable database", db->path);
    }
    DUET_CHECK(st);
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    const cJSON *o = cJSON_GetObjectItemCaseSensitive(entries, key);
    if (o == NULL) {
        st = duet__error(DUET_ERR_NOT_FOUND, "%s: no entry for %s", db->path, duet__q(key));
    } else {
        duet_tune_entry_t *e = malloc(sizeof(*e));
        int bad = 0;
        if (e == NULL) {
            st = duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot allocate an entry");
        } else if ((bad = duet__tune_entry_bad(db, o, duet__tune_again(o, key))) < 0) {
            st = DUET_ERR_NO_MEMORY;
        } else if (bad || duet__tune_entry_from_json(o, key, v1, e) < 0) {
            /* Skipped, not fatal: the next store of this key replaces it. */
            duet__tune_db_warn(db, "%s: ignoring a malformed entry: %s", db->path, duet_last_error());
            st = duet__error(DUET_ERR_NOT_FOUND, "%s: malformed entry for %s", db->path, duet__q(key));
        } else {
            *entry_p = *e;
        }
        free(e);
    }
    cJSON_Delete(root);
    return st;
}

/*
 * Turn every number of a parsed tree back into text that reads as the same double. cJSON prints
 * numbers with 15 digits when they compare equal within a tolerance, so without this every merge
 * would round the other processes' times by a bit. A number that is not finite is refused: its
 * text ("inf") is not JSON, and a file with it would not read back.
 */
static duet_status_t duet__tune_json_exact(cJSON *item)
{
    for (; item != NULL; item = item->next) {
        if (cJSON_IsNumber(item)) {
            char buf[40];
            if (duet__json_num_text(buf, sizeof(buf), item->valuedouble) < 0)
                return duet__error(DUET_ERR_INVALID_ARG, "tuning database: \"%s\" is not a finite number; not written",
                                   item->string ? duet__q(item->string) : "[]");
            char *text = cJSON_malloc(strlen(buf) + 1);
            if (text == NULL)
                return duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot format a number");
            memcpy(text, buf, strlen(buf) + 1);
            item->type = cJSON_Raw;
            item->valuestring = text;
        }
        DUET_CHECK(duet__tune_json_exact(item->child));
    }
    return DUET_OK;
}

static int duet__tune_item_cmp(const void *a, const void *b)
{
    const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
    return strcmp(x->string, y->string);
}

/* Sort an object's members by name, so the file is the same whatever order processes wrote in. */
static duet_status_t duet__tune_sort_members(cJSON *obj)
{
    int n = cJSON_GetArraySize(obj);
    if (n < 2)
        return DUET_OK;
    cJSON **items = malloc((size_t)n * sizeof(*items));
    if (items == NULL)
        return duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot sort %d entries", n);
    for (int i = 0; i < n; i++)
        items[i] = cJSON_DetachItemFromArray(obj, 0);
    qsort(items, (size_t)n, sizeof(*items), duet__tune_item_cmp);
    for (int i = 0; i < n; i++) {
        /* Re-link the detached item under its own name (cJSON copies the name before freeing it). */
        cJSON_AddItemToObject(obj, items[i]->string, items[i]);
    }
    free(items);
    return DUET_OK;
}

/*
 * Drop the bad entries (duet__tune_entry_bad) from a tree about to be written, each with a warning,
 * and every entry of `key` (the store replaces them). Both copies of a key given twice go: which of
 * them was meant cannot be known, and the next store of the key writes it once.
 */
static duet_status_t duet__tune_drop_bad(duet_tune_db_t *db, cJSON *entries, const char *key)
{
    cJSON *it = entries->child;
    size_t n_drop = 0, cap = 0, n_names = 0;
    cJSON **drop = NULL;
    const char **names = duet__tune_sorted_names(entries, &n_names);
    for (; it != NULL; it = it->next) {
        int bad = strcmp(it->string, key) != 0
                      ? duet__tune_entry_bad(db, it, duet__tune_name_twice(names, n_names, it->string))
                      : 0;
        if (bad < 0) { /* out of memory: an entry that could not be checked is not dropped as bad */
            free(drop);
            free(names);
            return DUET_ERR_NO_MEMORY;
        }
        if (bad)
            duet__tune_db_warn(db, "%s; dropping the entry, keeping the others", duet_last_error());
        if (!bad && strcmp(it->string, key) != 0)
            continue;
        if (n_drop == cap) {
            cap = cap ? 2 * cap : 8;
            cJSON **grown = realloc(drop, cap * sizeof(*drop));
            if (grown == NULL) {
                /* Nothing is dropped: a store that kept the key's old entry beside the new one
                 * would write the key twice, which costs the entry when the file is read. */
                free(drop);
                free(names);
                return duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot list the entries to replace");
            }
            drop = grown;
        }
        drop[n_drop++] = it;
    }
    for (size_t i = 0; i < n_drop; i++)
        cJSON_Delete(cJSON_DetachItemViaPointer(entries, drop[i]));
    free(drop);
    free(names);
    return DUET_OK;
}

duet_status_t duet_tune_db_store(duet_tune_db_t *db, const duet_tune_entry_t *entry)
{
    if (entry->key[0] == '\0')
        return duet__error(DUET_ERR_INVALID_ARG, "tuning database: an entry needs a key");
    /* Only what reads back is written: the entry's text goes through the loader first (a time that
     * is not finite would be written as null, which the loader refuses). */
    cJSON *item = duet__tune_entry_to_json(entry, 0), *back = NULL;
    char *text = item ? cJSON_PrintUnformatted(item) : NULL;
    duet_tune_entry_t *check = malloc(sizeof(*check));
    duet_status_t st = DUET_OK, why = DUET_OK;
    if (text == NULL || check == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot build JSON");
    } else if ((back = duet__json_parse(text, (size_t)-1, "tuning database", 1)) == NULL ||
               (why = duet__tune_entry_from_json(back, entry->key, 0, check)) < 0) {
        /* Out of memory while checking is the machine's state, not the entry's fault. */
        if (back == NULL)
            why = duet__last_status();
        st = duet__error(why == DUET_ERR_NO_MEMORY ? DUET_ERR_NO_MEMORY : DUET_ERR_INVALID_ARG,
                         "tuning database: the entry would not read back (%s); not stored", duet_last_error());
    }
    cJSON_Delete(back);
    cJSON_free(text);
    text = NULL;
    free(check);
    if (st < 0) {
        cJSON_Delete(item);
        return st;
    }
    st = duet__tune_mkdirs(db->path);
    int fd = -1;
    if (st == DUET_OK)
        st = duet__tune_lock(db, &fd);
    if (st < 0) {
        cJSON_Delete(item);
        return st;
    }

    cJSON *root = NULL;
    int v1 = 0;
    /* Re-read under the lock: what other processes stored since we last looked is merged, not lost. */
    st = duet__tune_read_root(db, &root, &v1);
    if (st == DUET_ERR_PARSE) {
        st = duet__error(DUET_ERR_PARSE, "%s; not replacing it: fix or remove the file", duet_last_error());
        goto out;
    }
    if (st == DUET_ERR_NOT_FOUND) {
        root = cJSON_CreateObject();
        if (root == NULL || cJSON_AddStringToObject(root, "schema", DUET_TUNE_DB_SCHEMA) == NULL ||
            cJSON_AddObjectToObject(root, "entries") == NULL) {
            st = duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot build JSON");
            goto out;
        }
        st = DUET_OK;
    }
    if (st < 0)
        goto out;
    /* A duet-tuning/1 file becomes /2 as a whole: one file, one unit. */
    if (v1)
        DUET_CHECK_GOTO(duet__tune_upgrade(root), st, out);
    cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    DUET_CHECK_GOTO(duet__tune_drop_bad(db, entries, entry->key), st, out);
    cJSON_AddItemToObject(entries, entry->key, item);
    item = NULL;
    DUET_CHECK_GOTO(duet__tune_sort_members(entries), st, out);
    DUET_CHECK_GOTO(duet__tune_json_exact(root), st, out);
    text = cJSON_Print(root);
    if (text == NULL) {
        st = duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot print JSON");
        goto out;
    }
    DUET_CHECK_GOTO(duet__write_file_atomic(db->path, text, strlen(text)), st, out);
out:
    cJSON_free(text);
    cJSON_Delete(item);
    cJSON_Delete(root);
    duet__tune_unlock(fd);
    return st;
}

static int duet__tune_entry_cmp(const void *a, const void *b)
{
    return strcmp(((const duet_tune_entry_t *)a)->key, ((const duet_tune_entry_t *)b)->key);
}

duet_status_t duet_tune_db_list(duet_tune_db_t *db, duet_tune_entry_t **entries_p, size_t *n_p)
{
    cJSON *root = NULL;
    int v1 = 0;
    duet_status_t st = duet__tune_read_root(db, &root, &v1);
    if (st == DUET_ERR_NOT_FOUND) {
        *entries_p = NULL;
        *n_p = 0;
        return DUET_OK;
    }
    DUET_CHECK(st); /* not a database: the caller reports it; the file stays as it is */
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries"), *it;
    size_t cap = (size_t)cJSON_GetArraySize(entries), n = 0;
    duet_tune_entry_t *out = malloc((cap ? cap : 1) * sizeof(*out));
    if (out == NULL) {
        cJSON_Delete(root);
        return duet__error(DUET_ERR_NO_MEMORY, "tuning database: cannot list %zu entries", cap);
    }
    size_t n_names = 0;
    const char **names = duet__tune_sorted_names(entries, &n_names);
    cJSON_ArrayForEach(it, entries)
    {
        int bad = duet__tune_entry_bad(db, it, duet__tune_name_twice(names, n_names, it->string));
        if (bad < 0) { /* out of memory: not a reason to leave an entry out */
            free(out);
            free(names);
            cJSON_Delete(root);
            return DUET_ERR_NO_MEMORY;
        }
        if (bad || duet__tune_entry_from_json(it, it->string, v1, &out[n]) < 0) {
            duet__tune_db_warn(db, "%s: ignoring a malformed entry: %s", db->path, duet_last_error());
            continue;
        }
        n++;
    }
    free(names);
    cJSON_Delete(root);
    qsort(out, n, sizeof(*out), duet__tune_entry_cmp);
    *entries_p = out;
    *n_p = n;
    return DUET_OK;
}

/*
 * Whether the file at the path is one clear may delete: a regular file (a link is followed) that
 * is empty or holds a tuning database (schema and "entries"; bad entries inside do not matter).
 * @return DUET_OK, DUET_ERR_NOT_FOUND (nothing there), or an error saying why not.
 */
static duet_status_t duet__tune_clear_check(const duet_tune_db_t *db)
{
    struct stat sb;
    if (stat(db->path, &sb) != 0)
        return errno == ENOENT ? DUET_ERR_NOT_FOUND : duet__error(DUET_ERR_IO, "%s: %s", db->path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return duet__error(DUET_ERR_INVALID_ARG, "%s: not a regular file, so not a tuning database; not deleting it",
                           db->path);
    cJSON *root = NULL;
    int v1 = 0;
    duet_status_t st = duet__tune_read_root(db, &root, &v1);
    cJSON_Delete(root);
    if (st == DUET_ERR_PARSE)
        return duet__error(DUET_ERR_PARSE, "%s; not deleting it", duet_last_error());
    return st == DUET_ERR_NOT_FOUND ? DUET_OK : st; /* empty: nothing to lose */
}

duet_status_t duet_tune_db_clear(duet_tune_db_t *db)
{
    duet_status_t st = duet__tune_clear_check(db);
    if (st == DUET_ERR_NOT_FOUND)
        return DUET_OK; /* nothing to clear; do not create folders or a lock file for it */
    DUET_CHECK(st);
    int fd = -1;
    DUET_CHECK(duet__tune_lock(db, &fd));
    /* Again under the lock: a writer may have replaced the file since the first look. A symbolic
     * link is followed, so the file it names goes and the link stays (a store creates the file again). */
    st = duet__tune_clear_check(db);
    char *target = NULL;
    if (st == DUET_OK) {
        target = realpath(db->path, NULL);
        if (target == NULL || unlink(target) != 0)
            st = duet__error(DUET_ERR_IO, "%s: cannot delete: %s", db->path, strerror(errno));
    } else if (st == DUET_ERR_NOT_FOUND) {
        st = DUET_OK;
    }
    free(target);
    duet__tune_unlock(fd);
    return st;
}
