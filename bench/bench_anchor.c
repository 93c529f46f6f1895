/*
 * bench_anchor.c - the ship-anchor lift (models/anchor_lift.json, thesis
 * §7.5, Table 7.29) for instruction counts: run it under
 * `valgrind --tool=callgrind` twice with two counts and take the
 * difference, which removes the loading and the set-up (docs/benchmarks.md,
 * "Anchor lift"; scripts/callgrind_anchor.sh does this).
 *
 *   bench_anchor sim MODEL FORMULATION REF STEPS
 *       STEPS steps of dt of the model from its initial state:
 *       FORMULATION index1 (fully recursive forward dynamics, the
 *       trapezoidal rule's fixed point) or ali3p (semi-recursive, Newton);
 *       REF com or origin. Prints the statistics of the run.
 *   bench_anchor fd MODEL REF WARM CALLS
 *       WARM index-1 steps to reach a state in contact, then CALLS fully
 *       recursive forward-dynamics calls at that state (with the model's
 *       force elements: give a copy without forces for the call alone).
 *
 * Wall times are printed too, but on a shared machine only the
 * instruction counts compare.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_common.h"

static int usage(void)
{
    fprintf(stderr, "usage: bench_anchor sim MODEL index1|ali3p com|origin STEPS\n"
                    "       bench_anchor fd MODEL com|origin WARM CALLS\n");
    return 2;
}

static int parse_ref(const char *s, mbs_ref_point *ref)
{
    if (!strcmp(s, "com")) *ref = MBS_REF_COM;
    else if (!strcmp(s, "origin")) *ref = MBS_REF_ORIGIN;
    else return -1;
    return 0;
}

typedef struct {
    int n;
    double *q, *qd;
} last_state;

static int keep(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                const double *qdd)
{
    (void)d; (void)t; (void)qdd;
    last_state *s = user;
    memcpy(s->q, q, sizeof(double) * (size_t)s->n);
    memcpy(s->qd, qd, sizeof(double) * (size_t)s->n);
    (void)m;
    return 0;
}

/* steps of the model's dt from its initial state; the last state in *ls */
static int run(const mbs_model *m, mbs_data *d, mbs_loop_formulation loop, mbs_ref_point ref, long steps,
               last_state *ls, int print)
{
    mbs_sim_options o = mbs_model_sim_options(m);
    o.loop = loop;
    o.ref = ref;
    o.formulation = loop == MBS_LOOP_INDEX1 ? MBS_FD_RECURSIVE : MBS_FD_SEMI_RECURSIVE;
    o.solver = loop == MBS_LOOP_INDEX1 ? MBS_SOLVER_FIXEDPOINT : MBS_SOLVER_NEWTON;
    o.tf = o.t0 + (double)steps * o.dt;
    mbs_sim_stats st;
    mbs_error err;
    double t0 = 1e-9 * bench_now_ns();
    int rc = mbs_simulate(m, d, &o, NULL, NULL, ls ? keep : NULL, ls, print ? &st : NULL, &err);
    double el = 1e-9 * bench_now_ns() - t0;
    if (rc) {
        fprintf(stderr, "bench_anchor: %s\n", err.msg);
        return 1;
    }
    if (print)
        printf("%ld steps in %.3f s (%.2f us/step): iterations %.3f per step (max %d), violation |phi| %.2e "
               "|phid| %.2e, energy drift %.3e J\n",
               st.steps, el, 1e6 * el / (double)st.steps, st.iterations_mean, st.iterations_max, st.violation[0],
               st.violation[1], st.energy_drift);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 6) return usage();
    mbs_ref_point ref;
    if (parse_ref(argv[4 - (strcmp(argv[1], "fd") == 0)], &ref)) return usage();
    mbs_error err;
    mbs_model *m = mbs_model_load(argv[2], &err);
    if (!m) {
        fprintf(stderr, "bench_anchor: %s\n", err.msg);
        return 1;
    }
    mbs_data *d = mbs_data_create(m, &err);
    if (!d) {
        fprintf(stderr, "bench_anchor: %s\n", err.msg);
        mbs_model_free(m);
        return 1;
    }
    mbs_data_set_ref(d, ref);
    int rc = 0;
    if (!strcmp(argv[1], "sim")) {
        mbs_loop_formulation loop = !strcmp(argv[3], "index1") ? MBS_LOOP_INDEX1
                                    : !strcmp(argv[3], "ali3p") ? MBS_LOOP_ALI3P
                                                                : MBS_LOOP_NONE;
        if (loop == MBS_LOOP_NONE) rc = usage();
        else rc = run(m, d, loop, ref, atol(argv[5]), NULL, 1);
    } else if (!strcmp(argv[1], "fd") && argc == 6) {
        const int n = mbs_model_nq(m);
        last_state ls = { n, calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double)) };
        double *qdd = calloc((size_t)n, sizeof(double));
        long warm = atol(argv[4]), calls = atol(argv[5]);
        if (!ls.q || !ls.qd || !qdd) rc = 1;
        /* a model with drivers needs a loop formulation; one without forces
         * is the same tree: start it from its initial state */
        if (!rc && warm > 0) rc = run(m, d, MBS_LOOP_INDEX1, ref, warm, &ls, 0);
        if (!rc && warm <= 0) mbs_model_initial_state(m, ls.q, ls.qd);
        double t0 = 1e-9 * bench_now_ns();
        for (long k = 0; !rc && k < calls; k++)
            if (mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, ls.q, ls.qd, NULL, qdd) != MBS_OK) rc = 1;
        double el = 1e-9 * bench_now_ns() - t0;
        if (!rc) printf("%ld forward-dynamics calls: %.2f us per call\n", calls, 1e6 * el / (double)calls);
        free(ls.q);
        free(ls.qd);
        free(qdd);
    } else {
        rc = usage();
    }
    mbs_data_free(d);
    mbs_model_free(m);
    return rc;
}
