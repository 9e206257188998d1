/*
 * Max-min fair sharing of capacities among variables (not installed): the solver of the fluid
 * policy, in the style of SimGrid's: variables, constraints with capacities, a bound per variable,
 * solve. It knows nothing of what the variables and the constraints stand for (tiles, links,
 * memory): sim/fluid.c builds a system at every start and end of a tile and reads the values back.
 */
#ifndef DUET_SIM_MAXMIN_H
#define DUET_SIM_MAXMIN_H

/** Constraints one system may have (fluid: link out, link in, HBM). */
#define DUET__MAXMIN_MAX_CONS 4

/**
 * A variable: `weight` identical flows that each get `value`. Each flow uses use[r] units of
 * constraint r per unit of value, and its value may not pass `bound`.
 */
typedef struct duet__maxmin_var {
    double weight;     /* flows the variable stands for (> 0) */
    double bound;      /* upper bound of a flow's value (>= 0) */
    const double *use; /* per constraint: what one flow uses per unit of value (n_cons entries, >= 0) */
    double value;      /* out: the max-min fair value, >= DUET__SIM_PRECISION */
} duet__maxmin_var_t;

/** A system: the capacities of its constraints and its variables. */
typedef struct duet__maxmin {
    int n_cons;
    double cap[DUET__MAXMIN_MAX_CONS]; /* capacity of each constraint; solving consumes it */
    duet__maxmin_var_t *var;
    int n_var;
} duet__maxmin_t;

/**
 * Solve by progressive filling: every unfrozen variable has the same value, which rises until a
 * constraint saturates (its users are frozen at that value) or it meets the bound of some
 * variables (they are frozen at their bound); the capacity left goes on to the others. A value
 * that comes out at 0 (a constraint without capacity) is raised to DUET__SIM_PRECISION, so that
 * whatever depends on it moves on, slowly, instead of stalling. Every value is written; the
 * capacities are used up.
 */
void duet__maxmin_solve(duet__maxmin_t *s);

#endif /* DUET_SIM_MAXMIN_H */
