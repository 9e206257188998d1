/*
 * Internal helpers of the model layer (not installed). Names start with duet__. The base layer's
 * helpers (errors, checks, files, JSON, buffers) come with it.
 */
#ifndef DUET_MODEL_INTERNAL_H
#define DUET_MODEL_INTERNAL_H

#include "base/base.h"

struct duet_hw;

/* A library version as duet_stack_versions_t holds it: 2.28.3 is 22803. */
#define DUET__V(major, minor, patch) ((major)*10000 + (minor)*100 + (patch))
/** AMD's architectures are named gfx* (model/emit.c): their stacks are RCCL and hipBLASLt. */
int duet__hw_is_amd(const struct duet_hw *hw);
/**
 * Append a formatted line and a newline to buf (model/emit.c); *len counts what the text would hold,
 * so a buffer too short shows as *len >= n, with what fits written and terminated.
 */
void duet__emit_line(char *buf, size_t n, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/**
 * The built-in profiles' names for an error text, with the nearest to `name` first when one is a
 * near miss: "did you mean h200? built-ins: h100, h200, mi300x, mi350x". @return text.
 */
const char *duet__hw_builtin_names(const char *name, char *text, size_t n);

/** Configuration checks that need no profile (mode, tile, comm tile, CTA counts). */
struct duet_config;
struct duet_workload;
duet_status_t duet__config_check_shape(const struct duet_config *cfg, const struct duet_workload *wl);

/*
 * The JSON codec of a configuration (model/config_json.c): the members "mode", "num_wgs",
 * "gemm_wgs", "comm_wgs", "tile", "comm_tile", "group_m" and "split_k", in that order, for every
 * file and output that holds one (corpus rows, the tuning database, the commands' --json).
 */
struct cJSON;
/** Where a text writer puts "split_k": after the other members always, only for a K split (> 1), or not at all. */
enum { DUET__CONFIG_SPLIT_ALWAYS, DUET__CONFIG_SPLIT_IF_SPLIT, DUET__CONFIG_SPLIT_NONE };
/** 1 if `key` is one of a configuration's members. */
int duet__config_json_key(const char *key);
/** Add the members to a cJSON object (split_k always, 1 for no split). @return DUET_ERR_NO_MEMORY if cJSON cannot. */
duet_status_t duet__config_to_cjson(struct cJSON *o, const struct duet_config *cfg);
/** The member names of a configuration object (mode, num_wgs, ...), n_p of them. */
const char *const *duet__config_key_names(size_t *n_p);
/** Append the members as JSON text, `"mode": "fused", ..., "group_m": 8`, then split_k as `split` says. */
void duet__config_json_text(duet__sbuf_t *b, const struct duet_config *cfg, int split);
/** Append `, "split_k": N` as `split` says (a writer that puts it after members of its own). */
void duet__config_json_split_text(duet__sbuf_t *b, const struct duet_config *cfg, int split);
/**
 * Read the members strictly: mode fused, concurrent, vendor or copy; num_wgs, gemm_wgs and comm_wgs
 * integers in [0, 2^20]; group_m in [1, 64]; split_k absent (1) or in [1, DUET_MAX_SPLIT_K]; a
 * supported tile; comm tile "CMxCN"; then the checks of the configuration against `wl` that need
 * no profile. Other keys are the caller's. `where` names the object in messages ("c.json:
 * rows[17]"): DUET_ERR_PARSE with "<where>.<key>: <why>". cfg_p is written only on success.
 */
duet_status_t duet__config_from_json(const struct cJSON *o, const struct duet_workload *wl, const char *where,
                                     struct duet_config *cfg_p);

/*
 * The JSON codec of a workload (model/workload_json.c): the members "collective", "dtype", "m",
 * "n", "k", "mc", "nc", "world" and "root", in that order, for every file and output that holds
 * one (corpus rows, the tuning database, the JSON API's answers, `duet shapes --json`, the GPU
 * bench's report).
 */
/** 1 if `key` is one of a workload's members. */
int duet__workload_json_key(const char *key);
/** Add the members to a cJSON object. @return DUET_ERR_NO_MEMORY if cJSON cannot. */
duet_status_t duet__workload_to_cjson(struct cJSON *o, const struct duet_workload *wl);
/** Append the members as JSON text, `"collective": "all_gather", ..., "root": 0`. */
void duet__workload_json_text(duet__sbuf_t *b, const struct duet_workload *wl);
/** duet__workload_from_json's flags: an absent "root" reads as 0 (files written without one). */
enum { DUET__WORKLOAD_ROOT_OPTIONAL = 1 };
/**
 * Read the members strictly: a known collective and dtype, m, n, k, mc and nc integers in [0,
 * 2^40], world in [1, 1024], root in [0, 1023], then duet_workload_validate(). Other keys are the
 * caller's. `where` names the object in messages: DUET_ERR_PARSE with "<where>.<key>: <why>" (or
 * "<where>: <why>" for the workload's rules). wl_p is written only on success.
 */
duet_status_t duet__workload_from_json(const struct cJSON *o, const char *where, int flags, struct duet_workload *wl_p);

#endif /* DUET_MODEL_INTERNAL_H */
