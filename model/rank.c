/*
 * Ranking configurations by a predicted time, with one rule for the configurations the
 * prediction cannot tell apart. duet validate, the fit report's tables (duet's model and the
 * reference rules alike), the tuner and the sweep rank through it, so that a pick never depends
 * on the order in which a corpus or a sweep lists its configurations.
 */
#include <stdlib.h>

#include "duet/model.h"
#include "model/internal.h"

/* A total order on configurations that does not depend on where they came from. */
static int duet__rank_cfg_cmp(const duet_config_t *a, const duet_config_t *b)
{
    int32_t ska = a->split_k > 1 ? a->split_k : 1, skb = b->split_k > 1 ? b->split_k : 1;
    const int32_t ka[] = {a->mode,     a->tile.bm,  a->tile.bn, a->tile.bk, ska,   a->stream_k != 0,
                          a->comm_wgs, a->gemm_wgs, a->num_wgs, a->cm,      a->cn, a->group_m};
    const int32_t kb[] = {b->mode,     b->tile.bm,  b->tile.bn, b->tile.bk, skb,   b->stream_k != 0,
                          b->comm_wgs, b->gemm_wgs, b->num_wgs, b->cm,      b->cn, b->group_m};
    for (size_t i = 0; i < sizeof(ka) / sizeof(ka[0]); i++)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

static int duet__rank_rest_cmp(const duet_rank_item_t *a, const duet_rank_item_t *b)
{
    int c = duet__rank_cfg_cmp(&a->cfg, &b->cfg);
    return c != 0 ? c : (a->idx > b->idx) - (a->idx < b->idx);
}

static int duet__rank_pred_cmp(const void *x, const void *y)
{
    const duet_rank_item_t *a = x, *b = y;
    if (a->pred != b->pred)
        return a->pred < b->pred ? -1 : 1;
    return duet__rank_rest_cmp(a, b);
}

/*
 * Among tied configurations, the one with the most CTAs on the collective first: the model says
 * the collective hides either way, and it is the collective the model prices too fast where ties
 * arise (docs/calibration.md), so the configuration whose collective ends earliest (at the
 * model's rates more CTAs never end it later) has the most slack before a slower collective
 * becomes the critical path.
 */
static int duet__rank_tie_cmp(const void *x, const void *y)
{
    const duet_rank_item_t *a = x, *b = y;
    if (a->cfg.comm_wgs != b->cfg.comm_wgs)
        return a->cfg.comm_wgs > b->cfg.comm_wgs ? -1 : 1;
    return duet__rank_rest_cmp(a, b);
}

void duet_rank_sort(duet_rank_item_t *items, size_t n)
{
    if (items == NULL || n < 2)
        return;
    qsort(items, n, sizeof(*items), duet__rank_pred_cmp);
    /* A tie: the items within DUET_RANK_TIE_REL of the fastest of them. */
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && duet__time_eq(items[j].pred, items[i].pred, DUET_RANK_TIE_REL))
            j++;
        if (j - i > 1)
            qsort(items + i, j - i, sizeof(*items), duet__rank_tie_cmp);
        i = j;
    }
}
