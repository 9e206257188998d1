/*
 * Fuzz the corpus loader: duet_corpus_parse(). A corpus it accepts must save (atomically, in the
 * harness's temporary folder) and load back with the same rows.
 */
#include <string.h>

#include "duet/corpus.h"
#include "duet/duet.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fz_text(data, size);
    duet_corpus_t c, back;
    if (duet_corpus_parse(text, "fuzz.json", &c) == DUET_OK) {
        char path[512];
        fz_path("corpus.json", path, sizeof(path));
        FZ_ASSERT(duet_corpus_save(&c, path) == DUET_OK);
        FZ_ASSERT(duet_corpus_load(path, &back) == DUET_OK);
        FZ_ASSERT(back.n == c.n && back.world == c.world && back.sms == c.sms);
        for (size_t i = 0; i < c.n; i++) {
            FZ_ASSERT(duet_corpus_row_same_point(&back.rows[i], &c.rows[i]));
            FZ_ASSERT(back.rows[i].ok == c.rows[i].ok && back.rows[i].ms == c.rows[i].ms);
        }
        duet_corpus_free(&back);
        duet_corpus_free(&c);
        fz_clean();
    }
    free(text);
    return 0;
}
