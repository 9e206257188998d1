/*
 * Writing JSON strings by hand (not installed): shared by the corpus and timeline writers.
 */
#ifndef DUET_MODEL_JSON_STR_H
#define DUET_MODEL_JSON_STR_H

#include "model/internal.h"

/**
 * Append `s` as a JSON string, quotes included: '"' and '\' escaped, control characters as
 * \u00XX, so that any C string (a label, a device name) reads back as itself.
 */
void duet__json_str(duet__sbuf_t *b, const char *s);

#endif /* DUET_MODEL_JSON_STR_H */
