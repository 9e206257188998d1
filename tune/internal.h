/*
 * Internal helpers of the tune layer (not installed). Names start with duet__tune_.
 */
#ifndef DUET_TUNE_INTERNAL_H
#define DUET_TUNE_INTERNAL_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "duet/sim.h"
#include "duet/tune.h"
#include "model/internal.h"

/** "fused", "concurrent" or "fused+concurrent" for a mode set. */
const char *duet__tune_modes_name(uint32_t modes);

/** The current UTC time as ISO 8601 ("2026-11-30T12:00:00Z"). */
void duet__tune_utc_now(char *buf, size_t n);

/** Add a number that reads back exactly, or null when it is not finite (JSON has no NaN). */
void duet__tune_json_num(cJSON *o, const char *key, double v);
/** A number member, or NaN when absent or null. */
double duet__tune_json_get_num(const cJSON *o, const char *key);

/** Entries as a cJSON array of the stored objects (times in us), each with its "key"; NULL when out of memory. */
cJSON *duet__tune_entries_cjson(const duet_tune_entry_t *entries, size_t n);

/** The candidate set file's text (malloc'd, ending in a newline), as duet_tune_candset_save() writes it. */
duet_status_t duet__tune_candset_text(const duet_tune_candset_t *set, const char *const *sources, size_t n_sources,
                                      char **text_p, size_t *len_p);

/** Deliver a warning: the callback (or stderr) and the handle's counter and last text. */
void duet__tune_db_warn(duet_tune_db_t *db, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Simulated makespan of one configuration on the profile (fluid policy), milliseconds. */
duet_status_t duet__tune_predict(duet_sim_ws_t *ws, const duet_hw_t *hw, const duet_workload_t *wl,
                                 const duet_config_t *cfg, double *ms_p);

#endif /* DUET_TUNE_INTERNAL_H */
