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
 *   bench_anchor simfrom MODEL FORMULATION REF STEPS STATE
 *       as sim, from the state (t, q, qd) in the file STATE that trace
 *       wrote: the steps of a window late in the lift without the steps
 *       before it (the predictor starts without a history).
 *   bench_anchor trace MODEL REF STEPS WINDOW PREFIX [T...]
 *       STEPS index-1 steps from the initial state; prints, for each
 *       WINDOW steps, how many steps took 1, 2, ... 8 and more fixed-point
 *       iterations, and writes the state at each time T (s) to
 *       PREFIX_T.state (text: t, nq, nv, q, qd).
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
                    "       bench_anchor fd MODEL com|origin WARM CALLS\n"
                    "       bench_anchor simfrom MODEL index1|ali3p com|origin STEPS STATE\n"
                    "       bench_anchor trace MODEL com|origin STEPS WINDOW PREFIX [T...]\n");
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

typedef struct {
    double t, *q, *qd;
} start_state;

/* The state written by trace: t, nq, nv, then q and qd. */
static int read_state(const char *path, int nq, int nv, start_state *s)
{
    FILE *f = fopen(path, "r");
    int fq = 0, fv = 0, ok = f && fscanf(f, "%lf %d %d", &s->t, &fq, &fv) == 3 && fq == nq && fv == nv;
    s->q = calloc((size_t)nq, sizeof(double));
    s->qd = calloc((size_t)nv, sizeof(double));
    ok = ok && s->q && s->qd;
    for (int k = 0; ok && k < nq; k++) ok = fscanf(f, "%lf", &s->q[k]) == 1;
    for (int k = 0; ok && k < nv; k++) ok = fscanf(f, "%lf", &s->qd[k]) == 1;
    if (f) fclose(f);
    if (!ok) fprintf(stderr, "bench_anchor: %s: not a state of this model\n", path);
    return ok ? 0 : 1;
}

static int write_state(const char *path, double t, int nq, int nv, const double *q, const double *qd)
{
    FILE *f = fopen(path, "w");
    if (!f) return 1;
    fprintf(f, "%.17g %d %d\n", t, nq, nv);
    for (int k = 0; k < nq; k++) fprintf(f, "%.17g\n", q[k]);
    for (int k = 0; k < nv; k++) fprintf(f, "%.17g\n", qd[k]);
    return fclose(f) ? 1 : 0;
}

/* STEPS index-1 steps by the stepper: the histogram of the fixed point's
 * iterations per step over each window, and the states at the times ts. */
static int trace(const mbs_model *m, mbs_data *d, mbs_ref_point ref, long steps, long window,
                 const char *prefix, int nts, char **ts)
{
    mbs_sim_options o = mbs_model_sim_options(m);
    o.ref = ref;
    o.loop = MBS_LOOP_INDEX1;
    o.formulation = MBS_FD_RECURSIVE;
    o.solver = MBS_SOLVER_FIXEDPOINT;
    mbs_error err;
    mbs_integrator *it = mbs_integrator_create(m, d, &o, &err);
    if (!it || mbs_integrator_reset(it, o.t0, NULL, NULL, &err)) {
        fprintf(stderr, "bench_anchor: %s\n", err.msg);
        mbs_integrator_free(it);
        return 1;
    }
    long hist[9] = { 0 }, prev = 0;
    int next = 0;
    printf("# window end t, steps with 1 2 3 4 5 6 7 >=8 iterations, mean\n");
    for (long k = 1; k <= steps; k++) {
        if (mbs_integrator_step(it, o.dt, &err)) {
            fprintf(stderr, "bench_anchor: %s\n", err.msg);
            mbs_integrator_free(it);
            return 1;
        }
        mbs_sim_stats st;
        mbs_integrator_stats(it, &st);
        long n = st.iterations - prev;
        prev = st.iterations;
        hist[n >= 8 ? 8 : n]++;
        const double t = mbs_integrator_time(it);
        while (next < nts && t >= atof(ts[next]) - 0.5 * o.dt) {
            char path[4096];
            snprintf(path, sizeof path, "%s_%s.state", prefix, ts[next++]);
            if (write_state(path, t, mbs_model_nq(m), mbs_model_nv(m), mbs_integrator_q(it),
                            mbs_integrator_qd(it)))
                fprintf(stderr, "bench_anchor: cannot write %s\n", path);
        }
        if (k % window == 0) {
            long tot = 0;
            printf("%.4f", t);
            for (int b = 1; b <= 8; b++) {
                printf(" %ld", hist[b]);
                tot += hist[b] * b;
                hist[b] = 0;
            }
            printf(" %.4f\n", (double)tot / (double)window);
            fflush(stdout);
        }
    }
    mbs_integrator_free(it);
    return 0;
}

/* steps of the model's dt from its initial state or from *from; the last state in *ls */
static int run(const mbs_model *m, mbs_data *d, mbs_loop_formulation loop, mbs_ref_point ref, long steps,
               const start_state *from, last_state *ls, int print)
{
    mbs_sim_options o = mbs_model_sim_options(m);
    if (from) o.t0 = from->t;
    o.loop = loop;
    o.ref = ref;
    o.formulation = loop == MBS_LOOP_INDEX1 ? MBS_FD_RECURSIVE : MBS_FD_SEMI_RECURSIVE;
    o.solver = loop == MBS_LOOP_INDEX1 ? MBS_SOLVER_FIXEDPOINT : MBS_SOLVER_NEWTON;
    o.tf = o.t0 + (double)steps * o.dt;
    mbs_sim_stats st;
    mbs_error err;
    double t0 = 1e-9 * bench_now_ns();
    int rc = mbs_simulate(m, d, &o, from ? from->q : NULL, from ? from->qd : NULL, ls ? keep : NULL, ls,
                          print ? &st : NULL, &err);
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
    const int ref_arg = !strcmp(argv[1], "fd") || !strcmp(argv[1], "trace") ? 3 : 4;
    if (parse_ref(argv[ref_arg], &ref)) return usage();
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
        else rc = run(m, d, loop, ref, atol(argv[5]), NULL, NULL, 1);
    } else if (!strcmp(argv[1], "simfrom") && argc == 7) {
        mbs_loop_formulation loop = !strcmp(argv[3], "index1") ? MBS_LOOP_INDEX1
                                    : !strcmp(argv[3], "ali3p") ? MBS_LOOP_ALI3P
                                                                : MBS_LOOP_NONE;
        start_state from = { 0, NULL, NULL };
        if (loop == MBS_LOOP_NONE) rc = usage();
        else rc = read_state(argv[6], mbs_model_nq(m), mbs_model_nv(m), &from);
        if (!rc) rc = run(m, d, loop, ref, atol(argv[5]), &from, NULL, 1);
        free(from.q);
        free(from.qd);
    } else if (!strcmp(argv[1], "trace") && argc >= 7) {
        rc = trace(m, d, ref, atol(argv[4]), atol(argv[5]), argv[6], argc - 7, argv + 7);
    } else if (!strcmp(argv[1], "fd") && argc == 6) {
        const int n = mbs_model_nq(m);
        last_state ls = { n, calloc((size_t)n, sizeof(double)), calloc((size_t)n, sizeof(double)) };
        double *qdd = calloc((size_t)n, sizeof(double));
        long warm = atol(argv[4]), calls = atol(argv[5]);
        if (!ls.q || !ls.qd || !qdd) rc = 1;
        /* a model with drivers needs a loop formulation; one without forces
         * is the same tree: start it from its initial state */
        if (!rc && warm > 0) rc = run(m, d, MBS_LOOP_INDEX1, ref, warm, NULL, &ls, 0);
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
