/*
 * Internal hooks of model/corpus.c (not installed), for the tests.
 */
#ifndef DUET_MODEL_CORPUS_INTERNAL_H
#define DUET_MODEL_CORPUS_INTERNAL_H

#include <stddef.h>

/**
 * Steps of the duplicate-row check since the last corpus parse began on this thread: hash-table
 * slots visited plus rows compared (every duet_corpus_row_same_point() call counts). About one
 * per row when loading is linear; a search of the earlier rows for each row makes it rows^2 / 2.
 */
size_t duet__corpus_dup_steps(void);

#endif /* DUET_MODEL_CORPUS_INTERNAL_H */
