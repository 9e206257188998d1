/*
 * Max-min fair sharing by progressive filling (sim/maxmin.h).
 */
#include <math.h>

#include "sim/internal.h"
#include "sim/maxmin.h"

void duet__maxmin_solve(duet__maxmin_t *s)
{
    duet__maxmin_var_t *v = s->var;
    int open = s->n_var;
    for (int i = 0; i < s->n_var; i++)
        v[i].value = -1.0; /* unfrozen */
    while (open > 0) {
        /* The level every unfrozen variable would reach: the lowest of their bounds, unless a
         * constraint saturates first. */
        double demand[DUET__MAXMIN_MAX_CONS] = {0};
        double level = INFINITY;
        for (int i = 0; i < s->n_var; i++) {
            if (v[i].value >= 0)
                continue;
            if (v[i].bound < level)
                level = v[i].bound;
            for (int r = 0; r < s->n_cons; r++)
                demand[r] += v[i].weight * v[i].use[r];
        }
        int bottleneck = -1;
        for (int r = 0; r < s->n_cons; r++) {
            if (demand[r] > 0 && s->cap[r] / demand[r] < level) {
                level = s->cap[r] / demand[r];
                bottleneck = r;
            }
        }
        /* Freeze the users of the saturated constraint, or the variables at their bound, and take
         * what they use from every constraint. */
        for (int i = 0; i < s->n_var; i++) {
            if (v[i].value >= 0)
                continue;
            int frozen = bottleneck >= 0 ? v[i].use[bottleneck] > 0 : v[i].bound <= level;
            if (!frozen)
                continue;
            v[i].value = level;
            open--;
            for (int r = 0; r < s->n_cons; r++)
                s->cap[r] -= v[i].weight * v[i].use[r] * level;
        }
        /* Rounding may take a little more than a saturated constraint had. */
        for (int r = 0; r < s->n_cons; r++)
            if (s->cap[r] < 0)
                s->cap[r] = 0;
    }
    for (int i = 0; i < s->n_var; i++)
        if (v[i].value <= 0)
            v[i].value = DUET__SIM_PRECISION; /* no capacity left: crawl, never stall */
}
