/*
 * test_formulations.c - the closed-loop formulations (src/formulations/):
 * ALI3-P, Matrix R, penalty and index-1 on the shipped models.
 *
 * Trajectories. All formulations integrate the same DAE with second-order
 * schemes (the trapezoidal rule on the dependent coordinates, on the
 * independent ones, or on the index-1 ODE; RK4 is fourth order). Where two
 * runs are other discretizations, their difference is bounded by the sum of
 * their discretization errors, each estimated from runs at h/2 and h/4
 * (Richardson, mbs_test_order_error); where they run the same discrete
 * equations in other arithmetic (another reference point, another Newton
 * path), by what each step's round-off and the Newton tolerance grow to
 * along the run, measured on it (mbs_test_run_spread). Ratios that verify
 * an order: 4 for O(h^2) when h is halved, accepted within 3..5 (the O(h)
 * corrections at these steps); 10 for O(1/alpha) when alpha grows tenfold,
 * within 5..20.
 *
 * Constraints: Matrix R solves the kinematic problems (violations at
 * round-off: C eps times the size of the constraint terms, roundoff_scale);
 * ALI3-P satisfies Phi to its Newton tolerance and the velocity/acceleration
 * constraints to what the penalty projections leave, O(|M x*| / (varsigma
 * alpha)); penalty and index-1 (Baumgarte) drift by O(h^2), index-1 without
 * Baumgarte drifts like t^2.
 *
 * Energy: no damping in the five-bar and the no-spring slider-crank, so
 * the mechanical energy is conserved up to the O(h^2) error of the
 * trapezoidal rule on a nonlinear system and, for ALI3-P, the dissipation
 * of the mass-orthogonal projections (which never add energy).
 *
 * Driven five-bar: the crank follows a sine law (a rheonomic driver row);
 * all formulations follow the law (to their constraint accuracy) and agree
 * as for the free five-bar.
 *
 * IFToMM spatial slider-crank (no spring): free motion under gravity from
 * 6 rad/s: the crank turns continuously, the slider stays between its
 * geometric limits (which it reaches), energy is conserved.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const double PI = 3.14159265358979323846;

static int coord_find(const mbs_model *m, const char *name)
{
    for (int k = 0; k < mbs_model_nq(m); k++)
        if (!strcmp(mbs_coord_name(m, k), name)) return k;
    return -1;
}

typedef struct {
    int nq, n, cap;
    double *q, *qd, *qdd;   /* n rows of nq */
    double e_max, e_min;    /* energy extremes (mechanical, from the stats) */
} traj;

static int record(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                  const double *qdd)
{
    (void)m; (void)d; (void)t;
    traj *tr = user;
    if (tr->n >= tr->cap) return 0;
    memcpy(tr->q + (size_t)tr->n * tr->nq, q, sizeof(double) * (size_t)tr->nq);
    memcpy(tr->qd + (size_t)tr->n * tr->nq, qd, sizeof(double) * (size_t)tr->nq);
    memcpy(tr->qdd + (size_t)tr->n * tr->nq, qdd, sizeof(double) * (size_t)tr->nq);
    tr->n++;
    return 0;
}

static void traj_free(traj *t)
{
    free(t->q);
    free(t->qd);
    free(t->qdd);
}

static mbs_model *load(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "models/%s.json", name);
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_model *m = mbs_model_load(mbs_test_path(rel), &err);
    CHECK(m != NULL, "load %s: %s", name, err.msg);
    return m;
}

/* the five-bar with its crank driven: jA = f(t) = offset + A sin(2 pi 0.5 t + pi/2), f(0) = q0,
 * f'(0) = 0 (released from rest as the free five-bar); one degree of freedom */
static const double DRIVE_A = 0.4, DRIVE_Q0 = -2.356194490192345;
static const char *DRIVEN =
    "\"functions\": [{\"name\": \"drive\", \"type\": \"sine\", \"amplitude\": 0.4, \"frequency\": 0.5,"
    " \"phase\": 1.5707963267948966, \"offset\": -2.756194490192345}],"
    "\"constraints\": [{\"name\": \"crank\", \"type\": \"coordinate\", \"joint\": \"jA\", \"function\": \"drive\"}]";

/* models/NAME.json with ",EXTRA" inserted before its final brace */
static mbs_model *load_with(const char *name, const char *extra)
{
    char rel[256];
    snprintf(rel, sizeof rel, "models/%s.json", name);
    FILE *fp = fopen(mbs_test_path(rel), "rb");
    CHECK(fp != NULL, "open %s", rel);
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    const long len = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *s = calloc((size_t)len + strlen(extra) + 8, 1);
    const size_t got = fread(s, 1, (size_t)len, fp);
    fclose(fp);
    s[got] = 0;
    char *e = strrchr(s, '}');
    if (e) sprintf(e, ",%s}", extra);
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_model *m = mbs_model_load_string(s, name, &err);
    CHECK(m != NULL, "%s: %s", name, err.msg);
    free(s);
    return m;
}

/* Simulate with options o, recording every step. Returns 0 on success. */
static int run(const mbs_model *m, const mbs_sim_options *o, traj *tr, mbs_sim_stats *st)
{
    memset(tr, 0, sizeof *tr);
    tr->nq = mbs_model_nq(m);
    tr->cap = (int)ceil((o->tf - o->t0) / o->dt - 1e-9) + 2;
    tr->q = calloc((size_t)tr->cap * (size_t)tr->nq, sizeof(double));
    tr->qd = calloc((size_t)tr->cap * (size_t)tr->nq, sizeof(double));
    tr->qdd = calloc((size_t)tr->cap * (size_t)tr->nq, sizeof(double));
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_data *d = mbs_data_create(m, &err);
    int rc = mbs_simulate(m, d, o, NULL, NULL, record, tr, st, &err);
    CHECK(rc == MBS_OK, "%s with %s: %s", mbs_model_name(m), mbs_loop_formulation_name(o->loop), err.msg);
    mbs_data_free(d);
    return rc;
}

/* max over the trajectory of |a - b| for q, qd, qdd */
static void diff(const traj *a, const traj *b, double out[3])
{
    out[0] = out[1] = out[2] = 0;
    const int n = a->n < b->n ? a->n : b->n;
    for (size_t k = 0; k < (size_t)n * (size_t)a->nq; k++) {
        double d0 = fabs(a->q[k] - b->q[k]), d1 = fabs(a->qd[k] - b->qd[k]), d2 = fabs(a->qdd[k] - b->qdd[k]);
        if (!(d0 <= out[0])) out[0] = d0;
        if (!(d1 <= out[1])) out[1] = d1;
        if (!(d2 <= out[2])) out[2] = d2;
    }
    if (a->n != b->n) out[0] = out[1] = out[2] = INFINITY;
}

static mbs_sim_options opts(const mbs_model *m, mbs_loop_formulation f, double tf)
{
    mbs_sim_options o = mbs_model_sim_options(m);
    o.loop = f;
    o.tf = tf;
    o.dt = 1e-3;
    return o;
}

/* Round-off bounds of the constraint violations along the run tr: a violation evaluated at a
 * state that satisfies the constraints is the rounding of its terms, at most C eps times their
 * size, C = 64 (tens of terms per row, each rounded once or twice). Sizes: |Phi_q| L (the largest
 * entry of Phi_q, a length for angular coordinates, times the largest |q| or 1) for Phi,
 * |Phi_q| |qd| for Phid, |Phi_q| (|qdd| + |qd|^2) for Phidd; maxima over the run. out[3] = the
 * largest |Phi_q| entry, for bounds of the form |Phi_q| tol. */
static void roundoff_scale(const mbs_model *m, const traj *tr, double out[4])
{
    const int nq = tr->nq, nc = mbs_model_nconstraints(m);
    double *J = malloc(sizeof(double) * (size_t)(nc * nq + 1));
    double jmax = 0, qm = 1, vm = 0, am = 0;
    mbs_data *d = mbs_data_create(m, NULL);
    for (int k = 0; k < tr->n; k++) {
        const double *q = tr->q + (size_t)k * nq;
        if (k % 50 == 0 && mbs_constraint_jacobian(m, d, q, k * 1e-3, J) == MBS_OK)
            for (int i = 0; i < nc * nq; i++) jmax = fmax(jmax, fabs(J[i]));
        for (int i = 0; i < nq; i++) {
            qm = fmax(qm, fabs(q[i]));
            vm = fmax(vm, fabs(tr->qd[(size_t)k * nq + i]));
            am = fmax(am, fabs(tr->qdd[(size_t)k * nq + i]));
        }
    }
    mbs_data_free(d);
    free(J);
    out[0] = 64 * MBS_EPS * jmax * qm;
    out[1] = 64 * MBS_EPS * jmax * vm;
    out[2] = 64 * MBS_EPS * jmax * (am + vm * vm);
    out[3] = jmax;
}

/* ---------------------------------------------------------------- five-bar */

static void fivebar(void)
{
    mbs_model *m = load("fivebar");
    if (!m) return;
    const double tf = 2;
    mbs_sim_stats st, sref;
    traj ref, t;
    mbs_sim_options o = opts(m, MBS_LOOP_MATRIXR, tf);
    if (run(m, &o, &ref, &sref)) { mbs_model_free(m); return; }
    printf("five-bar, %g s at 1 ms, differences to Matrix R (com):\n", tf);
    /* Two kinds of case. SAME: the same discrete equations as the reference in other arithmetic
     * (another reference point, another Newton path: each step converged to |dz| < 1e-10), bounded
     * by what one step's difference grows to along the run (mbs_test_run_spread). ORDER: another
     * discretization of the same DAE, second order (RK4: fourth), whose difference to the reference
     * is at most the sum of the two runs' discretization errors, each estimated from a run at h/2
     * (mbs_test_order_error; the ratio checks below show the runs are in the asymptotic range);
     * penalty and index-1 add their constraint drift, which is O(h^2) too (Baumgarte). */
    enum { SAME, ORDER };
    struct {
        const char *what;
        mbs_loop_formulation f;
        mbs_ref_point ref;
        int variant;        /* 1: iterative projections, 2: point DOFs, 3: no tangent reuse, 4: rk4 */
        int kind;
    } cases[] = {
        { "matrixr origin", MBS_LOOP_MATRIXR, MBS_REF_ORIGIN, 0, SAME },
        { "matrixr no tangent reuse", MBS_LOOP_MATRIXR, MBS_REF_COM, 3, SAME },
        { "matrixr point DOFs", MBS_LOOP_MATRIXR, MBS_REF_COM, 2, ORDER },
        { "ali3p com", MBS_LOOP_ALI3P, MBS_REF_COM, 0, ORDER },
        { "ali3p origin", MBS_LOOP_ALI3P, MBS_REF_ORIGIN, 0, ORDER },
        { "ali3p iterative projections", MBS_LOOP_ALI3P, MBS_REF_COM, 1, ORDER },
        { "ali3p no tangent reuse", MBS_LOOP_ALI3P, MBS_REF_COM, 3, ORDER },
        { "penalty", MBS_LOOP_PENALTY, MBS_REF_COM, 0, ORDER },
        { "index1 trapezoidal", MBS_LOOP_INDEX1, MBS_REF_COM, 0, ORDER },
        { "index1 rk4", MBS_LOOP_INDEX1, MBS_REF_ORIGIN, 4, ORDER },
    };
    const int p2 = mbs_point_find(m, "b12.P2");
    double eref[3];
    mbs_sim_options oref = opts(m, MBS_LOOP_MATRIXR, tf);
    mbs_test_order_error(m, &oref, 2, NULL, NULL, eref);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        o = opts(m, cases[c].f, tf);
        o.ref = cases[c].ref;
        mbs_dof dofs[2] = { { p2, -1, 0 }, { p2, -1, 1 } };
        if (cases[c].variant == 1) o.projection = MBS_PROJ_ITERATIVE;
        if (cases[c].variant == 2) { o.dofs = dofs; o.ndofs = 2; }
        if (cases[c].variant == 3) o.tangent_keep = 0;
        if (cases[c].variant == 4) o.integrator = MBS_INTEGRATOR_RK4;
        double tol[3] = { INFINITY, INFINITY, INFINITY };
        if (cases[c].kind == SAME) {
            mbs_test_run_spread(m, &oref, &o, NULL, NULL, tol);
        } else {
            double e[3];
            mbs_test_order_error(m, &o, cases[c].variant == 4 ? 4 : 2, NULL, NULL, e);
            for (int k = 0; k < 3; k++) tol[k] = e[k] + eref[k];
        }
        if (run(m, &o, &t, &st) == MBS_OK) {
            double dd[3];
            diff(&t, &ref, dd);
            printf("  %-28s q %.2e  qd %.2e  qdd %.2e  (bounds %.1e %.1e %.1e; iterations %.2f)\n", cases[c].what,
                   dd[0], dd[1], dd[2], tol[0], tol[1], tol[2], st.iterations_mean);
            for (int k = 0; k < 3; k++)
                CHECK(dd[k] <= tol[k], "%s: difference %d = %g > %g", cases[c].what, k, dd[k], tol[k]);
        }
        traj_free(&t);
    }
    /* these differences are discretization differences, O(h^2): halving h divides them by ~4 */
    {
        struct { const char *what; mbs_loop_formulation f; int variant; } oc[] = {
            { "ali3p - matrixr", MBS_LOOP_ALI3P, 0 },
            { "matrixr point DOFs - matrixr", MBS_LOOP_MATRIXR, 2 },
        };
        for (size_t c = 0; c < sizeof oc / sizeof oc[0]; c++) {
            double dh[2][3];
            for (int r = 0; r < 2; r++) {
                traj a, b;
                mbs_dof dofs[2] = { { p2, -1, 0 }, { p2, -1, 1 } };
                o = opts(m, MBS_LOOP_MATRIXR, 1);
                o.dt = r ? 1e-3 : 2e-3;
                run(m, &o, &b, &st);
                o.loop = oc[c].f;
                if (oc[c].variant == 2) { o.dofs = dofs; o.ndofs = 2; }
                run(m, &o, &a, &st);
                diff(&a, &b, dh[r]);
                traj_free(&a);
                traj_free(&b);
            }
            const double ratio = dh[0][0] / dh[1][0];
            printf("  %s, 1 s: |dq| %.3e at 2 ms, %.3e at 1 ms: ratio %.2f (O(h^2): 4)\n", oc[c].what, dh[0][0],
                   dh[1][0], ratio);
            CHECK(ratio > 3 && ratio < 5, "%s: difference ratio %g, expected ~4 (O(h^2))", oc[c].what, ratio);
        }
        /* RK4 (index1) against the trapezoidal rule (Matrix R) at 1 ms and at 0.5 ms: the
         * difference is the trapezoidal rule's error */
        double e[2];
        traj a, b;
        o = opts(m, MBS_LOOP_INDEX1, 1);
        o.integrator = MBS_INTEGRATOR_RK4;
        run(m, &o, &a, &st);
        for (int r = 0; r < 2; r++) {
            o = opts(m, MBS_LOOP_MATRIXR, 1);
            o.dt = r ? 5e-4 : 1e-3;
            run(m, &o, &b, &st);
            /* compare at the common times (every other row at 0.5 ms) */
            e[r] = 0;
            for (int k = 0; k < a.n; k++)
                for (int i = 0; i < a.nq; i++) {
                    const double dq = fabs(a.q[(size_t)k * a.nq + i] - b.q[(size_t)(r ? 2 * k : k) * b.nq + i]);
                    if (dq > e[r]) e[r] = dq;
                }
            traj_free(&b);
        }
        traj_free(&a);
        printf("  index1 rk4 (1 ms) - matrixr, 1 s: |dq| %.3e (1 ms), %.3e (0.5 ms): ratio %.2f\n", e[0], e[1],
               e[0] / e[1]);
        CHECK(e[0] / e[1] > 3 && e[0] / e[1] < 5, "RK4 vs trapezoidal: ratio %g, expected ~4", e[0] / e[1]);
    }
    /* violations and energy over 5 s. Matrix R solves the kinematic problems: its violations are
     * the rounding of the constraint terms (roundoff_scale). ALI3-P: Phi to its Newton tolerance
     * (the last correction, below tol, moves Phi by at most |Phi_q| tol), the velocities to
     * round-off (the projection is solved for the correction), the accelerations to what the
     * penalty projection leaves, O(1 / (varsigma alpha)): 10 alpha divides it by about 10.
     * Penalty and index-1 (Baumgarte) drift by O(h^2): halving h divides their violations by
     * about 4. Energy (no damping): conserved up to the trapezoidal rule's O(h^2) error (and, for
     * ALI3-P, the projections, which only dissipate): halving h divides the drift by about 4. */
    for (int c = 0; c < 4; c++) {
        const mbs_loop_formulation f = (mbs_loop_formulation)(MBS_LOOP_MATRIXR + c);
        const char *fn = mbs_loop_formulation_name(f);
        mbs_sim_stats s2, sa;
        o = opts(m, f, 5);
        if (run(m, &o, &t, &st) != MBS_OK) { traj_free(&t); continue; }
        double ro[4];
        roundoff_scale(m, &t, ro);
        traj_free(&t);
        o.dt = 5e-4;
        const int rc2 = run(m, &o, &t, &s2);
        traj_free(&t);
        const double rel = st.energy_drift / fabs(st.energy0), rel2 = s2.energy_drift / fabs(s2.energy0);
        printf("  %-8s 5 s: max |Phi| %.1e |Phid| %.1e |Phidd| %.1e (round-off scale %.0e %.0e %.0e), "
               "energy drift %.2e (relative; %.2e at 0.5 ms), %ld/%ld projections\n", fn, st.violation[0],
               st.violation[1], st.violation[2], ro[0], ro[1], ro[2], rel, rel2, st.projections[0],
               st.projections[1]);
        CHECK(rc2 == MBS_OK && rel / rel2 > 3 && rel / rel2 < 5, "%s: energy drift %g at 1 ms, %g at 0.5 ms: not "
              "O(h^2)", fn, rel, rel2);
        if (f == MBS_LOOP_MATRIXR) {
            for (int k = 0; k < 3; k++)
                CHECK(st.violation[k] <= ro[k], "%s: violation %d = %g > %g", fn, k, st.violation[k], ro[k]);
        } else if (f == MBS_LOOP_ALI3P) {
            o = opts(m, f, 5);
            o.penalty *= 10;
            const int rca = run(m, &o, &t, &sa);
            traj_free(&t);
            printf("           alpha x 10: max |Phidd| %.1e\n", sa.violation[2]);
            CHECK(st.violation[0] <= ro[3] * o.tolerance + ro[0] && st.violation[1] <= ro[1],
                  "%s: violations %g %g > %g %g", fn, st.violation[0], st.violation[1], ro[3] * o.tolerance + ro[0],
                  ro[1]);
            CHECK(rca == MBS_OK && st.violation[2] / sa.violation[2] > 5 && st.violation[2] / sa.violation[2] < 20,
                  "%s: |Phidd| %g, with 10 alpha %g: not O(1/alpha)", fn, st.violation[2], sa.violation[2]);
            CHECK(st.projections[0] == st.steps && st.projections[1] == st.steps, "ALI3-P projects every step by "
                  "default");
        } else {
            printf("           at 0.5 ms: max |Phi| %.1e |Phid| %.1e |Phidd| %.1e\n", s2.violation[0],
                   s2.violation[1], s2.violation[2]);
            /* index-1 solves Phidd = -(2 omega xi Phid + omega^2 Phi) at every evaluation: its
             * acceleration violation follows from the other two (maxima at other times) */
            const int nk = f == MBS_LOOP_INDEX1 ? 2 : 3;
            for (int k = 0; k < nk; k++)
                CHECK(st.violation[k] / s2.violation[k] > 3 && st.violation[k] / s2.violation[k] < 5,
                      "%s: violation %d %g at 1 ms, %g at 0.5 ms: not O(h^2)", fn, k, st.violation[k],
                      s2.violation[k]);
            const double bg = 2 * o.omega * o.xi * st.violation[1] + o.omega * o.omega * st.violation[0] + ro[2];
            if (f == MBS_LOOP_INDEX1)
                CHECK(st.violation[2] <= bg, "%s: |Phidd| %g > 2 omega xi |Phid| + omega^2 |Phi| = %g", fn,
                      st.violation[2], bg);
        }
    }
    /* index-1 with RK4 (h = 5 ms): without Baumgarte the position violation drifts (grows
     * ~t^2); with it, it stays bounded */
    {
        double v[2][2];
        for (int b = 0; b < 2; b++)
            for (int r = 0; r < 2; r++) {
                o = opts(m, MBS_LOOP_INDEX1, r ? 20 : 5);
                o.dt = 5e-3;
                o.integrator = MBS_INTEGRATOR_RK4;
                o.baumgarte = b;
                mbs_data *d = mbs_data_create(m, NULL);
                mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, &st, NULL);
                mbs_data_free(d);
                v[b][r] = st.violation[0];
            }
        printf("  index1 rk4 5 ms, max |Phi| over 5 s / 20 s: %.2e / %.2e without Baumgarte, %.2e / %.2e with\n",
               v[0][0], v[0][1], v[1][0], v[1][1]);
        /* t^2: 16 times larger after 4 times as long (accepted from 10); bounded: the largest
         * violation is reached in the first seconds (accepted up to 10 % more) */
        CHECK(v[0][1] > 10 * v[0][0], "index-1 without stabilization should drift: %g then %g", v[0][0], v[0][1]);
        CHECK(v[1][1] < 1.1 * v[1][0] && v[1][1] < v[0][1] / 10, "Baumgarte: bounded violation %g, %g", v[1][0],
              v[1][1]);
    }
    /* projections skipped below proj_tol: the branch is taken, the result stays close */
    {
        o = opts(m, MBS_LOOP_ALI3P, tf);
        o.proj_tol = 1e-5;
        if (run(m, &o, &t, &st) == MBS_OK) {
            double dd[3];
            diff(&t, &ref, dd);
            printf("  ali3p proj_tol 1e-5: %ld/%ld of %ld steps projected, |dq| %.2e, max |Phid| %.1e "
                   "|Phidd| %.1e\n", st.projections[0], st.projections[1], st.steps, dd[0], st.violation[1],
                   st.violation[2]);
            CHECK(st.projections[0] < st.steps && st.projections[1] < st.steps, "no projection was skipped");
            CHECK(st.violation[1] <= 1e-5 && st.violation[2] <= 1e-5, "violations above proj_tol: %g %g",
                  st.violation[1], st.violation[2]);
            /* without the velocity projections the scheme is the plain ALI3 with acceleration
             * projections only: another O(h^2) discretization, as far from Matrix R as the two
             * discretization errors */
            double e[3];
            mbs_test_order_error(m, &o, 2, NULL, NULL, e);
            CHECK(dd[0] <= e[0] + eref[0], "skipping projections: |dq| = %g > %g", dd[0], e[0] + eref[0]);
        }
        traj_free(&t);
    }
    traj_free(&ref);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- driven five-bar */

/* A rheonomic constraint: the crank jA driven by a sine law (time derivatives of the
 * driver rows in the velocity and acceleration problems, Phi_t, Phid_t). */
static void fivebar_driven(void)
{
    mbs_model *m = load_with("fivebar", DRIVEN);
    if (!m) return;
    const double tf = 1, w = PI;   /* 2 pi 0.5 Hz */
    const int jA = coord_find(m, "jA");
    traj ref, t;
    mbs_sim_stats st;
    mbs_sim_options o = opts(m, MBS_LOOP_MATRIXR, tf);
    if (run(m, &o, &ref, &st)) { mbs_model_free(m); return; }
    printf("driven five-bar, %g s at 1 ms:\n", tf);
    /* Differences to Matrix R (com): Matrix R with the origin as reference point runs the same
     * discrete equations (mbs_test_run_spread); the others are other discretizations, as far from
     * it as the two runs' O(h^2) errors (mbs_test_order_error). The driver row obeys its law as
     * any constraint row: Matrix R to round-off (roundoff_scale), ALI3-P Phi to the Newton
     * tolerance, Phid to round-off, Phidd to what the acceleration projection leaves (at most
     * its |Phidd|); penalty and index-1 as their constraint drift, O(h^2) (their deviation from
     * the law at 0.5 ms about 4 times smaller; index-1's acceleration deviation follows from the
     * other two by its Baumgarte law). */
    const struct {
        mbs_loop_formulation f;
        mbs_ref_point ref;
    } cases[] = {
        { MBS_LOOP_MATRIXR, MBS_REF_COM }, { MBS_LOOP_MATRIXR, MBS_REF_ORIGIN }, { MBS_LOOP_ALI3P, MBS_REF_COM },
        { MBS_LOOP_ALI3P, MBS_REF_ORIGIN }, { MBS_LOOP_PENALTY, MBS_REF_COM }, { MBS_LOOP_INDEX1, MBS_REF_COM },
    };
    double eref[3], ro[4];
    mbs_test_order_error(m, &o, 2, NULL, NULL, eref);
    roundoff_scale(m, &ref, ro);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mbs_sim_options oc = opts(m, cases[c].f, tf);
        oc.ref = cases[c].ref;
        double tol[3], law[2][3];
        if (cases[c].f == MBS_LOOP_MATRIXR) {
            mbs_test_run_spread(m, &o, &oc, NULL, NULL, tol);
        } else {
            double e[3];
            mbs_test_order_error(m, &oc, 2, NULL, NULL, e);
            for (int k = 0; k < 3; k++) tol[k] = e[k] + eref[k];
        }
        for (int r = 0; r < 2; r++) {
            mbs_sim_options oh = oc;
            oh.dt = r ? 5e-4 : 1e-3;
            law[r][0] = law[r][1] = law[r][2] = INFINITY;
            if (run(m, &oh, &t, r ? NULL : &st) == MBS_OK) {
                law[r][0] = law[r][1] = law[r][2] = 0;
                for (int k = 0; k < t.n; k++) {
                    const double tk = k * oh.dt;
                    const size_t i = (size_t)k * (size_t)t.nq + (size_t)jA;
                    const double e[3] = { fabs(t.q[i] - (DRIVE_Q0 - DRIVE_A + DRIVE_A * cos(w * tk))),
                                          fabs(t.qd[i] + DRIVE_A * w * sin(w * tk)),
                                          fabs(t.qdd[i] + DRIVE_A * w * w * cos(w * tk)) };
                    for (int j = 0; j < 3; j++)
                        if (!(e[j] <= law[r][j])) law[r][j] = e[j];
                }
            }
            if (r == 0) {
                double dd[3];
                diff(&t, &ref, dd);
                printf("  %-8s %-6s - matrixr: q %.2e qd %.2e qdd %.2e (bounds %.1e %.1e %.1e); driver law %.1e "
                       "%.1e %.1e; max |Phi| %.1e |Phid| %.1e |Phidd| %.1e\n", mbs_loop_formulation_name(oc.loop),
                       mbs_ref_point_name(oc.ref), dd[0], dd[1], dd[2], tol[0], tol[1], tol[2], law[0][0],
                       law[0][1], law[0][2], st.violation[0], st.violation[1], st.violation[2]);
                for (int j = 0; j < 3; j++)
                    CHECK(dd[j] <= tol[j], "driven %s %s: difference %d = %g > %g",
                          mbs_loop_formulation_name(oc.loop), mbs_ref_point_name(oc.ref), j, dd[j], tol[j]);
            }
            traj_free(&t);
        }
        const char *fn = mbs_loop_formulation_name(oc.loop), *rn = mbs_ref_point_name(oc.ref);
        if (oc.loop == MBS_LOOP_MATRIXR) {
            for (int j = 0; j < 3; j++)
                CHECK(law[0][j] <= ro[j], "driven %s %s: driver law %d off by %g > %g", fn, rn, j, law[0][j], ro[j]);
        } else if (oc.loop == MBS_LOOP_ALI3P) {
            CHECK(law[0][0] <= ro[3] * oc.tolerance + ro[0] && law[0][1] <= ro[1] &&
                  law[0][2] <= st.violation[2] + ro[2], "driven %s %s: driver law off by %g %g %g", fn, rn,
                  law[0][0], law[0][1], law[0][2]);
        } else {
            /* index-1: the row's Phidd = -(2 omega xi Phid + omega^2 Phi) at every evaluation */
            const int nk = oc.loop == MBS_LOOP_INDEX1 ? 2 : 3;
            for (int j = 0; j < nk; j++)
                CHECK(law[0][j] / law[1][j] > 3 && law[0][j] / law[1][j] < 5, "driven %s %s: driver law %d off "
                      "by %g at 1 ms, %g at 0.5 ms: not O(h^2)", fn, rn, j, law[0][j], law[1][j]);
            const double bg = 2 * oc.omega * oc.xi * law[0][1] + oc.omega * oc.omega * law[0][0] + ro[2];
            if (oc.loop == MBS_LOOP_INDEX1)
                CHECK(law[0][2] <= bg, "driven %s: driver law off by %g in acceleration > %g", fn, law[0][2], bg);
        }
    }
    traj_free(&ref);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- slider-crank */

static void slider_crank(void)
{
    mbs_model *m = load("slider_crank_nospring");
    if (!m) return;
    const int jA = coord_find(m, "jA"), jD = coord_find(m, "jD");
    CHECK(jA >= 0 && jD >= 0, "slider-crank coordinates");
    /* slider limits: |B - C| = 0.3 with B on the crank circle of radius 0.08 about
     * A = (0, 0.1, 0.12) in the y-z plane, C = (x, 0, 0) */
    const double ra = sqrt(0.1 * 0.1 + 0.12 * 0.12);
    const double xmin = sqrt(0.09 - (ra + 0.08) * (ra + 0.08)), xmax = sqrt(0.09 - (ra - 0.08) * (ra - 0.08));
    mbs_sim_stats st;
    const double tf = 5;
    printf("slider-crank without spring (IFToMM), %g s: slider limits [%.6f, %.6f]\n", tf, xmin, xmax);
    const mbs_loop_formulation fs[] = { MBS_LOOP_MATRIXR, MBS_LOOP_ALI3P, MBS_LOOP_PENALTY, MBS_LOOP_INDEX1 };
    double crank[4][3];   /* final crank angle at 1 ms, 0.5 ms (Matrix R: and 0.25 ms) */
    for (int c = 0; c < 4; c++) {
        traj com;
        memset(&com, 0, sizeof com);
        mbs_sim_options oc = opts(m, fs[c], tf);
        /* thesis Table 7.10: alpha = 1e10, varsigma = 1e-4 for ALI3-P */
        if (fs[c] == MBS_LOOP_ALI3P) { oc.penalty = 1e10; oc.proj_scale = 1e-4; }
        double rel1 = 0;
        for (int rp = MBS_REF_COM; rp <= MBS_REF_ORIGIN; rp++) {
            traj t;
            mbs_sim_options o = oc;
            o.ref = (mbs_ref_point)rp;
            if (run(m, &o, &t, &st) != MBS_OK) { traj_free(&t); continue; }
            double smin = 1e9, smax = -1e9, amax = 0;
            for (int k = 0; k < t.n; k++) {
                const double x = t.q[(size_t)k * t.nq + jD];
                if (x < smin) smin = x;
                if (x > smax) smax = x;
                amax = fmax(amax, fabs(t.qdd[(size_t)k * t.nq + jD]));
            }
            const double th = t.q[(size_t)(t.n - 1) * t.nq + jA], rel = st.energy_drift / st.energy0;
            printf("  %-8s %-6s crank %.6f rad (%.2f turns), slider [%.6f, %.6f], energy drift %.2e\n",
                   mbs_loop_formulation_name(fs[c]), mbs_ref_point_name((mbs_ref_point)rp), th, th / (2 * PI),
                   smin, smax, rel);
            /* the slider moves by at most 0.3 / xmin < 2 times the error of the rod's length, itself at
             * most |Phi| (plus the rounding of x); between two outputs its extremes are missed by at
             * most max |xdd| h^2 / 8 */
            const double over = 2 * st.violation[0] + 64 * MBS_EPS * xmax, miss = amax * o.dt * o.dt / 8 + over;
            CHECK(smin >= xmin - over && smax <= xmax + over, "slider outside its limits by %g, %g (> %g)",
                  xmin - smin, smax - xmax, over);
            CHECK(smin <= xmin + miss && smax >= xmax - miss, "slider does not reach its limits: %g, %g (> %g)",
                  smin - xmin, xmax - smax, miss);
            /* enough energy to pass the dead points (it starts at 6 rad/s) */
            CHECK(th > 8 * 2 * PI, "the crank turns continuously: %g rad", th);
            if (rp == MBS_REF_COM) {
                crank[c][0] = th;
                rel1 = rel;
                com = t;
            } else {
                double dd[3], tol[3];
                diff(&t, &com, dd);
                /* the same discrete equations in other arithmetic: what each step's round-off and
                 * Newton tolerance grow to over the 8.7 turns (ALI3-P, penalty: alpha makes the
                 * iteration matrix ill-conditioned, and their per-step round-off larger) */
                mbs_test_run_spread(m, &oc, &o, NULL, NULL, tol);
                printf("           com - origin: |dq| %.2e |dqd| %.2e (bounds %.1e %.1e)\n", dd[0], dd[1], tol[0],
                       tol[1]);
                CHECK(dd[0] <= tol[0] && dd[1] <= tol[1], "%s: com and origin differ: %g %g > %g %g",
                      mbs_loop_formulation_name(fs[c]), dd[0], dd[1], tol[0], tol[1]);
                traj_free(&t);
            }
        }
        traj_free(&com);
        /* at 0.5 ms: the crank angle (convergence, below) and the energy error, the trapezoidal
         * rule's O(h^2) error on this fast motion (5 .. 25 rad/s), plus the O(h^2) constraint drift
         * of penalty and index-1: 4 times smaller */
        mbs_sim_options o = oc;
        o.dt = 5e-4;
        traj t;
        crank[c][1] = run(m, &o, &t, &st) == MBS_OK ? t.q[(size_t)(t.n - 1) * t.nq + jA] : NAN;
        const double rel2 = st.energy_drift / st.energy0;
        CHECK(rel1 / rel2 > 3 && rel1 / rel2 < 5, "%s: energy drift %g at 1 ms, %g at 0.5 ms: not O(h^2)",
              mbs_loop_formulation_name(fs[c]), rel1, rel2);
        traj_free(&t);
        if (c == 0) {
            o.dt = 2.5e-4;
            crank[c][2] = run(m, &o, &t, &st) == MBS_OK ? t.q[(size_t)(t.n - 1) * t.nq + jA] : NAN;
            traj_free(&t);
        }
    }
    /* all formulations converge to the same motion. Penalty and index-1 differ from Matrix R by
     * their O(h^2) constraint drift: halving h divides it by 4. ALI3-P and Matrix R are both
     * trapezoidal, their difference is at most the sum of their discretization errors, each
     * estimated from its change when h is halved (as mbs_test_order_error; Matrix R's ratio
     * checked from 0.5 ms to 0.25 ms) */
    const double emr = 1.5 * fabs(crank[0][0] - crank[0][1]);
    CHECK(fabs(crank[0][0] - crank[0][1]) >= 3 * fabs(crank[0][1] - crank[0][2]), "matrixr crank angle: "
          "changes %g, %g: not O(h^2)", crank[0][0] - crank[0][1], crank[0][1] - crank[0][2]);
    for (int c = 1; c < 4; c++) {
        const double d1 = crank[c][0] - crank[0][0], d2 = crank[c][1] - crank[0][1];
        printf("  crank angle - matrixr: %-8s %.3e (1 ms), %.3e (0.5 ms)\n", mbs_loop_formulation_name(fs[c]), d1,
               d2);
        if (fs[c] == MBS_LOOP_ALI3P) {
            const double tol = 1.5 * fabs(crank[c][0] - crank[c][1]) + emr;
            CHECK(fabs(d1) <= tol, "ali3p crank angle %g > %g", d1, tol);
        } else {
            CHECK(d1 / d2 > 3 && d1 / d2 < 5, "%s: crank angle differences %g, %g: expected O(h^2)",
                  mbs_loop_formulation_name(fs[c]), d1, d2);
        }
    }
    mbs_model_free(m);

    /* with the spring and damper (thesis Table 7.9): ALI3-P and Matrix R agree to their O(h^2)
     * discretization errors on this fast motion (mbs_test_order_error) */
    m = load("slider_crank");
    if (!m) return;
    mbs_sim_options o = opts(m, MBS_LOOP_MATRIXR, 2), oa = o;
    oa.loop = MBS_LOOP_ALI3P;
    oa.penalty = 1e10;
    oa.proj_scale = 1e-4;
    traj a, b;
    if (run(m, &o, &a, &st) == MBS_OK && run(m, &oa, &b, &st) == MBS_OK) {
        double dd[3], ea[3], eb[3];
        diff(&a, &b, dd);
        mbs_test_order_error(m, &o, 2, NULL, NULL, ea);
        mbs_test_order_error(m, &oa, 2, NULL, NULL, eb);
        printf("slider-crank with spring, 2 s: ali3p - matrixr |dq| %.2e |dqd| %.2e |dqdd| %.2e (bounds %.1e %.1e "
               "%.1e)\n", dd[0], dd[1], dd[2], ea[0] + eb[0], ea[1] + eb[1], ea[2] + eb[2]);
        for (int k = 0; k < 3; k++)
            CHECK(dd[k] <= ea[k] + eb[k], "slider-crank with spring: difference %d = %g > %g", k, dd[k],
                  ea[k] + eb[k]);
    }
    traj_free(&b);
    traj_free(&a);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- redundant four-bar, quarter car */

static void redundant_and_euler(void)
{
    const char *names[] = { "fourbar_redundant", "quarter_car" };
    for (int k = 0; k < 2; k++) {
        mbs_model *m = load(names[k]);
        if (!m) continue;
        traj a, b, c;
        mbs_sim_stats sa, sb, sc;
        /* the redundant four-bar's motion amplifies small differences fast (x1e8 in 1 s: per-step
         * differences at the Newton tolerance reach 1e-4 after 3 s), so compare over 0.25 s, where
         * the differences measure the formulations, not that amplification */
        mbs_sim_options o = opts(m, MBS_LOOP_MATRIXR, k == 0 ? 0.25 : 3);
        int ok = run(m, &o, &a, &sa) == MBS_OK;
        o.loop = MBS_LOOP_ALI3P;
        ok = run(m, &o, &b, &sb) == MBS_OK && ok;
        o.lambda_factor = 0.97;   /* the thesis's remedy against drifting redundant multipliers */
        ok = run(m, &o, &c, &sc) == MBS_OK && ok;
        if (ok) {
            double d1[3], d2[3], ea[3], eb[3], sp[3], ro[4];
            diff(&a, &b, d1);
            diff(&b, &c, d2);
            /* ALI3-P and Matrix R: other discretizations, within their O(h^2) errors; the
             * multiplier start lambda_factor: the same discrete equations (ALI3-P's iterations
             * converge lambda*), other Newton paths (mbs_test_run_spread) */
            mbs_sim_options oa = opts(m, MBS_LOOP_MATRIXR, o.tf), ob = o;
            ob.lambda_factor = 1;
            mbs_test_order_error(m, &oa, 2, NULL, NULL, ea);
            mbs_test_order_error(m, &ob, 2, NULL, NULL, eb);
            mbs_test_run_spread(m, &ob, &o, NULL, NULL, sp);
            roundoff_scale(m, &a, ro);
            printf("%s, %g s: ali3p - matrixr |dq| %.2e |dqd| %.2e (bounds %.1e %.1e); lambda factor 0.97 vs 1: "
                   "|dq| %.2e (bound %.1e); max |Phi| %.1e (matrixr) %.1e (ali3p), Euler drift %.1e\n", names[k],
                   o.tf, d1[0], d1[1], ea[0] + eb[0], ea[1] + eb[1], d2[0], sp[0], sa.violation[0], sb.violation[0],
                   sb.euler_drift);
            if (k == 0) {
                /* a fast mechanism: the ALI3-P / Matrix R difference is their O(h^2) discretization
                 * difference (halving h divides it by ~4) */
                traj a2, b2;
                mbs_sim_options o2 = opts(m, MBS_LOOP_MATRIXR, o.tf);
                o2.dt = 5e-4;
                double d3[3] = { 0, 0, 0 };
                if (run(m, &o2, &a2, NULL) == MBS_OK) {
                    o2.loop = MBS_LOOP_ALI3P;
                    if (run(m, &o2, &b2, NULL) == MBS_OK) diff(&a2, &b2, d3);
                    traj_free(&b2);
                }
                traj_free(&a2);
                printf("  ... at 0.5 ms: |dq| %.2e: ratio %.2f\n", d3[0], d1[0] / d3[0]);
                CHECK(d1[0] / d3[0] > 3 && d1[0] / d3[0] < 5, "%s: ratio %g", names[k], d1[0] / d3[0]);
            }
            CHECK(d1[0] <= ea[0] + eb[0] && d1[1] <= ea[1] + eb[1], "%s: ali3p vs matrixr %g %g", names[k], d1[0],
                  d1[1]);
            CHECK(d2[0] <= sp[0], "%s: the multiplier start changes the solution: %g > %g", names[k], d2[0], sp[0]);
            /* Matrix R at round-off, ALI3-P to the Newton tolerance (|Phi_q| tol), its velocities
             * to round-off after the projection */
            const double vtol = ro[3] * o.tolerance + ro[0];
            CHECK(sa.violation[0] <= ro[0] && sb.violation[0] <= vtol && sc.violation[0] <= vtol,
                  "%s: violations %g %g %g", names[k], sa.violation[0], sb.violation[0], sc.violation[0]);
            CHECK(sb.violation[1] <= ro[1], "%s: velocity violation %g > %g", names[k], sb.violation[1], ro[1]);
        }
        traj_free(&a);
        traj_free(&b);
        traj_free(&c);
        mbs_model_free(m);
    }
}

/* ---------------------------------------------------------------- API behaviour */

static void api(void)
{
    mbs_model *m = load("fivebar");
    if (!m) return;
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_data *d = mbs_data_create(m, &err);
    mbs_sim_options o = mbs_model_sim_options(m);
    o.loop = MBS_LOOP_NONE;
    mbs_integrator *it = mbs_integrator_create(m, d, &o, &err);
    CHECK(it == NULL && strstr(err.msg, "closed loops") && strstr(err.msg, "--formulation ali3p|matrixr|penalty|index1"),
          "open-tree formulation on a closed loop: '%s'", err.msg);
    mbs_integrator_free(it);
    /* a loop formulation needs the trapezoidal rule (except index1) */
    o.loop = MBS_LOOP_ALI3P;
    o.integrator = MBS_INTEGRATOR_RK4;
    it = mbs_integrator_create(m, d, &o, &err);
    CHECK(it == NULL && strstr(err.msg, "trapezoidal"), "ali3p with rk4: '%s'", err.msg);
    /* names */
    CHECK(mbs_loop_formulation_from_name("ali3p") == MBS_LOOP_ALI3P && mbs_loop_formulation_from_name("x") < 0 &&
          !strcmp(mbs_loop_formulation_name(MBS_LOOP_INDEX1), "index1") &&
          mbs_projection_from_name("iterative") == MBS_PROJ_ITERATIVE, "names");
    /* an inconsistent initial state is assembled (the fixed coordinates held) */
    o.integrator = MBS_INTEGRATOR_TRAPEZOIDAL;
    it = mbs_integrator_create(m, d, &o, &err);
    CHECK(it != NULL, "%s", err.msg);
    if (it) {
        const int nq = mbs_model_nq(m);
        double q[16], qd[16], v[3];
        mbs_model_initial_state(m, q, qd);
        const double jA = q[0], j1 = q[1];
        q[2] += 0.05;
        q[3] -= 0.03;
        qd[0] = 0.5;
        qd[3] = 1;   /* dependent: replaced by the velocity problem */
        CHECK(mbs_integrator_reset(it, 0, q, qd, &err) == MBS_OK, "%s", err.msg);
        const double *q0 = mbs_integrator_q(it), *qd0 = mbs_integrator_qd(it);
        mbs_constraint_violation(m, d, 0, q0, qd0, mbs_integrator_qdd(it), v);
        /* positions: Newton until |dq| < tol, the last correction applied: |Phi| <= |Phi_q| tol
         * (the round-off scale of one state, roundoff_scale); velocities: one linear solve, at
         * round-off; accelerations: ALI3-P's initial ones are the penalty formulation's, which
         * violate Phidd by lambda / alpha: 10 alpha, 10 times less */
        traj one = { nq, 1, 1, (double *)q0, (double *)qd0, (double *)mbs_integrator_qdd(it), 0, 0 };
        double ro[4], v10[3], tol = 0;
        roundoff_scale(m, &one, ro);
        mbs_model_assembly_settings(m, &tol, NULL);
        mbs_sim_options o10 = o;
        o10.penalty *= 10;
        mbs_integrator *i10 = mbs_integrator_create(m, d, &o10, &err);
        CHECK(i10 && mbs_integrator_reset(i10, 0, q, qd, &err) == MBS_OK, "%s", err.msg);
        mbs_constraint_violation(m, d, 0, mbs_integrator_q(i10), mbs_integrator_qd(i10), mbs_integrator_qdd(i10),
                                 v10);
        mbs_integrator_free(i10);
        printf("assembled initial state: |Phi| %.1e |Phid| %.1e |Phidd| %.1e (%.1e with 10 alpha)\n", v[0], v[1],
               v[2], v10[2]);
        CHECK(v[0] <= ro[3] * tol + ro[0] && v[1] <= ro[1] && v[2] / v10[2] > 5 && v[2] / v10[2] < 20,
              "assembled initial state: %g %g %g (%g with 10 alpha)", v[0], v[1], v[2], v10[2]);
        CHECK(q0[0] == jA && q0[1] == j1 && qd0[0] == 0.5, "the fixed coordinates are held");
        CHECK(nq == 4, "nq");
        mbs_integrator_free(it);
    }
    mbs_data_free(d);
    mbs_model_free(m);
}

int main(void)
{
    fivebar();
    fivebar_driven();
    slider_crank();
    redundant_and_euler();
    api();
    return mbs_test_summary("test_formulations");
}
