/*
 * Fuzz the corpus loader: duet_corpus_parse(). A corpus it accepts must save (atomically, in the
 * harness's temporary folder) and load back with the same rows. The file holds us and memory ms
 * (duet-corpus/2), so the first save and load may move a time by one unit in the last place (a
 * double in ms is not always a double in us / 1000); after it the corpus is a fixed point: the next
 * save and load give the same rows and the same bytes.
 */
#include <math.h>
#include <string.h>

#include "base/base.h"
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
            double x = c.rows[i].ms, y = back.rows[i].ms;
            FZ_ASSERT(back.rows[i].ok == c.rows[i].ok &&
                      (y == x || y == nextafter(x, INFINITY) || y == nextafter(x, -INFINITY)));
        }
        char path2[512], *t1 = NULL, *t2 = NULL;
        duet_corpus_t again;
        fz_path("corpus2.json", path2, sizeof(path2));
        FZ_ASSERT(duet_corpus_save(&back, path2) == DUET_OK);
        FZ_ASSERT(duet_corpus_load(path2, &again) == DUET_OK);
        for (size_t i = 0; i < c.n; i++)
            FZ_ASSERT(again.rows[i].ms == back.rows[i].ms && again.rows[i].min_ms == back.rows[i].min_ms &&
                      again.rows[i].max_ms == back.rows[i].max_ms);
        FZ_ASSERT(duet_corpus_save(&again, path) == DUET_OK);
        FZ_ASSERT(duet__read_file(path, &t1, NULL) == DUET_OK && duet__read_file(path2, &t2, NULL) == DUET_OK);
        FZ_ASSERT(strcmp(t1, t2) == 0);
        free(t1);
        free(t2);
        duet_corpus_free(&again);
        duet_corpus_free(&back);
        duet_corpus_free(&c);
        fz_clean();
    }
    free(text);
    return 0;
}
