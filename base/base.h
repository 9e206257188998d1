/*
 * The base layer (not installed): what every layer of duet stands on. Errors and their text
 * (convention 1), the check macros of the foreign boundaries (convention 2), file reading and
 * the careful file writer, JSON parsing and number text, a growable text buffer, summary
 * statistics, and the one epsilon helper that compares simulated times (convention 6). The thread
 * pool has its own header, base/pool.h. Names start with duet__.
 */
#ifndef DUET_BASE_H
#define DUET_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "duet/status.h"

#define DUET__ERRBUF_LEN 512

/** Record the explanation of an error on this thread and return `status` (log once, here). */
duet_status_t duet__error(duet_status_t status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Prefix the current error text with "prefix: " (used when a caller adds context). */
duet_status_t duet__error_prefix(const char *prefix);

/** Propagate an error status: if (call) < 0, return it. */
#define DUET_CHECK(_call)                                                                                              \
    do {                                                                                                               \
        duet_status_t _st = (_call);                                                                                   \
        if (_st < 0)                                                                                                   \
            return _st;                                                                                                \
    } while (0)

/** Propagate an error status to a cleanup label. */
#define DUET_CHECK_GOTO(_call, _status, _label)                                                                        \
    do {                                                                                                               \
        (_status) = (_call);                                                                                           \
        if ((_status) < 0)                                                                                             \
            goto _label;                                                                                               \
    } while (0)

/** A system call at a foreign boundary: record errno's text once and return DUET_ERR_IO. */
#define SYS_CHECK(_call, _what)                                                                                        \
    do {                                                                                                               \
        if ((_call) < 0)                                                                                               \
            return duet__error(DUET_ERR_IO, "%s: %s", (_what), strerror(errno));                                       \
    } while (0)

/**
 * Escape user text for a one-line message: newline, tab and carriage return become \n, \t, \r;
 * other control characters, DEL, bytes that are not well-formed UTF-8 and the C1 controls become
 * \xHH; other UTF-8 is kept. At most `max_in` bytes of `s` are shown, the rest is cut with a
 * mark "...(N more bytes)"; `out` (n bytes) always ends in a NUL. Escaping escaped text changes
 * nothing, so a sink may escape a whole message whose parts were escaped already. @return out.
 */
char *duet__text_escape(char *out, size_t n, const char *s, size_t max_in);
/**
 * 1 when duet__text_escape() would leave `s` as it is: printable ASCII and well-formed UTF-8, no
 * control character (a terminal escape in a name read from a shared file), else 0.
 */
int duet__text_plain(const char *s);
/**
 * `s` escaped as above, at most 200 bytes shown, in a per-thread buffer reused on the fifth call:
 * for up to four user strings in one error message (duet__error(..., "'%s'", duet__q(arg))).
 */
const char *duet__q(const char *s);

/**
 * Read a whole file (or standard input for "-") into a malloc'd NUL-terminated buffer. A folder, or
 * more than duet__max_input_bytes (512 MiB), is DUET_ERR_INVALID_ARG (bad input: exit status 2);
 * a regular file's size is checked before anything is read.
 */
duet_status_t duet__read_file(const char *path, char **text_p, size_t *len_p);
/** The most duet__read_file reads (512 MiB); tests lower it. */
extern size_t duet__max_input_bytes;
/**
 * Write `len` bytes to `path`: a regular file (or nothing yet) is replaced atomically (an
 * exclusive temporary file beside it, fsync, rename, fsync of the folder; on any failure `path`
 * is untouched), a symbolic link is followed and what it ends at is written, a character device,
 * FIFO or open descriptor (/dev/stdout) is written through in place, anything else is refused.
 * "-" writes to standard output. model/fileio.c's header has the whole rule, temporaries included.
 */
duet_status_t duet__write_file_atomic(const char *path, const char *data, size_t len);
/**
 * Write two files as a pair: both as duet__write_file_atomic() writes one, but both are written in
 * full to their temporaries before either is renamed into place, and a failure at any step leaves
 * both targets as they were (a target replaced by the first rename is put back when the second
 * fails). A process killed between the two renames, a window of two system calls, leaves the first
 * new and the second old. A target that is not a regular file (a device, a FIFO) is written
 * through, one after the other; "-" is refused.
 */
duet_status_t duet__write_pair_atomic(const char *const path[2], const char *const data[2], const size_t len[2]);
/**
 * Fault injection for the tests of the writers: N > 0 makes the Nth of the writers' fault points
 * from now (creating a temporary, writing it, keeping a replaced file, renaming) fail with EIO,
 * N < 0 kills the process with SIGKILL at the |N|th; 0 (the default) turns it off.
 */
extern int duet__fault_countdown;

/*
 * JSON shared by the loaders and writers (model/json.c). Every loader parses through
 * duet__json_parse(), so that each rejects duplicate keys the same way.
 */
struct cJSON;
/**
 * Parse `len` bytes of JSON text ((size_t)-1: up to the NUL; text[len] must be a NUL). Text after
 * the value, a NUL byte inside and, when `check_keys`, a key given twice in any object are errors,
 * "<origin>: line N: not valid JSON" or "<origin>: <where>: duplicate key "k"". @return the tree,
 * or NULL with the error recorded (DUET_ERR_PARSE). A loader that can drop one bad entry instead of
 * the whole file passes check_keys = 0 and checks each entry with duet__json_check_keys().
 */
struct cJSON *duet__json_parse(const char *text, size_t len, const char *origin, int check_keys);
/** The status of the last error recorded on this thread (duet__error), for callers of functions that
 * return a pointer (duet__json_parse's NULL): DUET_OK after duet_clear_error(). */
duet_status_t duet__last_status(void);
/**
 * DUET_ERR_PARSE, naming the key and where it is (`where` names `item`, "" for the top), when a key
 * occurs twice among the members of `item` or, with `deep`, of any object inside it; else DUET_OK.
 */
duet_status_t duet__json_check_keys(const struct cJSON *item, const char *origin, const char *where, int deep);
/** What duet__json_member() requires a member to be. */
enum { DUET__JSON_NUMBER, DUET__JSON_STRING, DUET__JSON_BOOL, DUET__JSON_ARRAY, DUET__JSON_OBJECT };
/**
 * Member `key` of object `o`, present and of `type` (DUET__JSON_*), else DUET_ERR_PARSE with
 * "<where>.<key>: missing" or "<where>.<key>: must be a number" (`where` names `o`, e.g.
 * "c.json: rows[17]").
 */
duet_status_t duet__json_member(const struct cJSON *o, const char *key, int type, const char *where,
                                const struct cJSON **v_p);
/** An integer member in [lo, hi], else "<where>.<key>: 2.5 is not an integer in [1, 64]". */
duet_status_t duet__json_member_int(const struct cJSON *o, const char *key, int64_t lo, int64_t hi, const char *where,
                                    int64_t *v_p);
/** A string member of at most n - 1 bytes, copied into buf, else "<where>.<key>: longer than 63 characters". */
duet_status_t duet__json_member_str(const struct cJSON *o, const char *key, const char *where, char *buf, size_t n);
/**
 * A string member naming one of a set (a mode, a collective), read by `parse`, else
 * "<where>.<key>: " and parse's error text.
 */
duet_status_t duet__json_member_named(const struct cJSON *o, const char *key, const char *where,
                                      duet_status_t (*parse)(const char *, int32_t *), int32_t *v_p);
/**
 * DUET_ERR_INVALID_ARG when object `o` has a member whose name is not among keys[0..n):
 * "<where>: unknown member "wrld" (did you mean "world"?)", the suggestion being the nearest
 * known name within two edits (insertions, deletions, substitutions or swaps of neighbours) where
 * there is one, else the list of known names. DUET_OK when every member is known.
 */
duet_status_t duet__json_known_members(const struct cJSON *o, const char *const *keys, size_t n, const char *where);
/** The edit distance of a and b (insertions, deletions, substitutions, swaps of neighbours), capped at 16 characters.
 */
int duet__edit_distance(const char *a, const char *b);
/**
 * The index of the name among names[0..n) nearest to `name` (compared in lower case) within two
 * edits, never one that replaces most of either; -1 when none is that near.
 */
int duet__nearest_name(const char *name, const char *const *names, size_t n);
/**
 * The shortest text that reads back as exactly `v` (at least 32 bytes in buf). @return 0, or -1
 * with "null" in buf when `v` is not finite: writers refuse to write such a number.
 */
int duet__json_num_text(char *buf, size_t n, double v);

/*
 * Summary statistics of samples (base/stats.c). NaN among the samples is the caller's to keep out:
 * the order of a NaN is undefined.
 */
/** Sort v[0..n) ascending. */
void duet__sort_doubles(double *v, size_t n);
/**
 * Quantile q in [0, 1] of v[0..n), sorted ascending: linear interpolation between the two samples
 * around position q (n - 1), as numpy's default and GSL's gsl_stats_quantile_from_sorted_data.
 * NaN when n is 0.
 */
double duet__quantile_sorted(const double *v, size_t n, double q);
/** duet__quantile_sorted() after sorting v in place. */
double duet__quantile(double *v, size_t n, double q);
/** The median of v[0..n) (sorts v in place): the middle sample, or the mean of the two middle ones; NaN for none. */
double duet__median(double *v, size_t n);
/** The arithmetic mean of v[0..n), summed in order; NaN for none. */
double duet__mean(const double *v, size_t n);

/** Relative-epsilon comparison for simulated and modelled times (convention 6). */
int duet__time_eq(double a, double b, double rel_eps);

/*
 * A growable text buffer for writers of JSON and SVG. Appends never fail silently: the first
 * allocation failure sticks in `failed` and duet__sbuf_finish() reports it.
 */
typedef struct duet__sbuf {
    char *data;
    size_t len, cap;
    int failed;
} duet__sbuf_t;

void duet__sbuf_init(duet__sbuf_t *b);
void duet__sbuf_printf(duet__sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Write the buffer to `path` atomically and release it. */
duet_status_t duet__sbuf_write(duet__sbuf_t *b, const char *path);
void duet__sbuf_free(duet__sbuf_t *b);
/** Append `s` with the XML special characters escaped. */
void duet__sbuf_xml(duet__sbuf_t *b, const char *s);

/**
 * Append `s` as a JSON string, quotes included: '"' and '\' escaped, control characters as
 * \u00XX, so that any C string (a label, a device name) reads back as itself.
 */
void duet__json_str(duet__sbuf_t *b, const char *s);

/*
 * CSV (base/csv.c), the one writer of every table duet writes as CSV: fields separated by commas,
 * RFC 4180 quoting (a field holding a comma, a double quote, CR or LF, or with a space at either
 * end, goes in double quotes with its double quotes doubled), records ending in "\n". A write
 * error sticks in `err`; the caller checks it (or the stream) when done.
 */
typedef struct duet__csv {
    FILE *f;
    int fields; /* fields written in the current record */
    int err;
} duet__csv_t;

void duet__csv_init(duet__csv_t *c, FILE *f);
/** One field: the text as it is (NULL: empty), quoted when it must be. */
void duet__csv_str(duet__csv_t *c, const char *s);
/** One field formatted as printf does (a number: "%.3f"), then written as duet__csv_str() writes it. */
void duet__csv_printf(duet__csv_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** A number as the shortest text that reads back as exactly `v`; an empty field when `v` is not finite. */
void duet__csv_num(duet__csv_t *c, double v);
/** A number in a printf format taking one double ("%.3f"); an empty field when `v` is not finite. */
void duet__csv_num_fmt(duet__csv_t *c, const char *fmt, double v);
/** A header record: each name a field, then the end of the record. */
void duet__csv_names(duet__csv_t *c, const char *const *names, size_t n);
/** End the record. */
void duet__csv_end(duet__csv_t *c);

/*
 * A chart of horizontal bar pairs (base/plot.c): one row per item, its two values as bars on an
 * axis from 0 to xmax (longer ones are cut at xmax, values that are not finite are not drawn),
 * a grid line every `tick` and the one at `ref` in red. Left of the axis each row's label, and
 * the group's name beside the first row of a run of rows with the same group; right of the axis,
 * in a column of its own, each row's note. Every text sits outside the plot, so none covers a bar.
 */
typedef struct duet__hbar_row {
    char label[96];
    double v[2];
    char note[24];
    char group[64]; /* rows in a row with the same group are drawn together under its name; "" for none */
} duet__hbar_row_t;

typedef struct duet__hbars {
    const char *title;
    const char *legend[2]; /* what the two bars of a row are */
    const char *colour[2]; /* their fills, e.g. "#4c78a8" */
    double xmax, tick, ref;
    const char *xlabel;     /* the axis' title under its numbers; NULL for none */
    const char *note_title; /* the notes' column heading; NULL for none */
    size_t n;
    const duet__hbar_row_t *rows;
} duet__hbars_t;

/*
 * The chart's geometry in px (base/plot.c; the tests derive positions from these): the width,
 * the row pitch, the height of each bar, the extra space above each group after the first, the
 * top of the first row, and the room under the last row for the numbers and the axis title.
 */
#define DUET__HBARS_W 1100.0
#define DUET__HBARS_ROW 12.0
#define DUET__HBARS_BAR 5.0
#define DUET__HBARS_GAP 3.0
#define DUET__HBARS_TOP 78.0
#define DUET__HBARS_BOTTOM 42.0
/* Text widths are estimated (an SVG writer has no font metrics): at most this many em per
 * character in the monospace font of the labels and notes (DejaVu Sans Mono and Liberation Mono
 * advance 0.60 em). */
#define DUET__HBARS_MONO_EM 0.62

/** A round tick step (1, 2 or 5 x 10^k) giving about `target` ticks over `span`; 1 for a span that is not > 0. */
double duet__nice_step(double span, int target);
/**
 * Set the chart's axis from its rows: a round tick (duet__nice_step, about 8 ticks) and xmax the first
 * tick at or past the longest finite bar (and ref), so no grid runs on where no bar goes.
 */
void duet__hbars_auto_axis(duet__hbars_t *chart);

/** The chart's height in px: its rows, the gaps between its groups, the title and the axis. */
double duet__hbars_height(const duet__hbars_t *chart);
/** Write the chart as SVG to `path` (atomically, as duet__write_file_atomic()). */
duet_status_t duet__svg_hbars_write(const duet__hbars_t *chart, const char *path);

#endif /* DUET_BASE_H */
