/*
 * test_integrators.c - time integration (mbsens/simulate.h).
 *
 *   - single pendulum at a large amplitude: period against the exact
 *     4 sqrt(L/g) K(sin(theta0/2)) (K by the arithmetic-geometric mean),
 *     every integrator and solver;
 *   - double pendulum, small oscillations along each mode shape: periods
 *     against the eigenvalues of the linearized system, and against the
 *     discrete periods the trapezoidal rule and RK4 must give for a linear
 *     system (arctan and the RK4 amplification factor);
 *   - convergence: trapezoidal state error and energy error ~h^2, RK4 state
 *     error ~h^4; the energy error of the trapezoidal rule stays bounded;
 *   - agreement: fully recursive = semi-recursive, Newton = fixed point
 *     (the same discrete solution), three reference points, CVODES (BDF and
 *     Adams) = RK4, FD tangent = analytical tangent, on a spatial chain with
 *     a floating base and spherical joints;
 *   - torque-free asymmetric rigid body on a floating joint, spinning about
 *     its intermediate axis (it flips): global angular momentum, linear
 *     momentum and energy conserved, Euler-parameter drift reported and
 *     projected;
 *   - force elements: a spring-damper slider and a joint-spring pendulum
 *     settle at their static equilibria; on a body hung by a spring-damper
 *     the loss of mechanical energy equals the damper work; a collapsed
 *     spring stops the run with an error;
 *   - errors: non-convergence (iteration limit 1, too large a step), CVODES
 *     failure, bad options; each message names the time;
 *   - the model's "simulation" and "outputs" sections; a coordinate-force
 *     output refused by mbs_output_eval, evaluated at a state;
 *   - the fixed point's stopping rule on a dragged chain with contacts and
 *     friction: every accepted correction against the step iterated to
 *     1e-16.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mbs_testing.h"

#define PI 3.14159265358979323846
#define G 9.81

/* ------------------------------------------------------------ helpers */

static mbs_model *load(const char *json, const char *name)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(json, name, &err);
    CHECK(m != NULL, "load %s: %s", name, m ? "" : err.msg);
    return m;
}

/* The model of json and a data for it (both checked): 1, or 0 with nothing
 * left to free */
static int load_with_data(const char *json, const char *name, mbs_model **m, mbs_data **d)
{
    *d = NULL;
    if (!(*m = load(json, name))) return 0;
    *d = mbs_data_create(*m, NULL);
    CHECK(*d != NULL, "data for %s", name);
    if (*d) return 1;
    mbs_model_free(*m);
    return 0;
}

static void free_with_data(mbs_model *m, mbs_data *d)
{
    mbs_data_free(d);
    mbs_model_free(m);
}

/* A recorded trajectory: t and y = [q, qd] at every output point. */
typedef struct {
    int nq, n, cap;
    double *t, *y;
} traj;

static int record(void *user, const mbs_model *m, mbs_data *d, double t, const double *q,
                  const double *qd, const double *qdd)
{
    (void)m;
    (void)d;
    (void)qdd;
    traj *r = user;
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 1024;
        double *tt = realloc(r->t, sizeof(double) * (size_t)cap);
        if (!tt) return MBS_ERR_NOMEM;
        r->t = tt;
        double *yy = realloc(r->y, sizeof(double) * (size_t)cap * 2 * (size_t)r->nq);
        if (!yy) return MBS_ERR_NOMEM;
        r->y = yy;
        r->cap = cap;
    }
    r->t[r->n] = t;
    memcpy(r->y + (size_t)r->n * 2 * r->nq, q, sizeof(double) * (size_t)r->nq);
    memcpy(r->y + (size_t)r->n * 2 * r->nq + r->nq, qd, sizeof(double) * (size_t)r->nq);
    r->n++;
    return 0;
}

static void traj_free(traj *r)
{
    free(r->t);
    free(r->y);
    memset(r, 0, sizeof *r);
}

/* Run a simulation, recording the trajectory. Returns the status. */
static int run(const mbs_model *m, const mbs_sim_options *o, const double *q0, const double *qd0,
               traj *r, mbs_sim_stats *st, const char *what)
{
    mbs_error err;
    memset(&err, 0, sizeof err);
    mbs_data *d = mbs_data_create(m, NULL);
    memset(r, 0, sizeof *r);
    r->nq = mbs_model_nq(m);
    mbs_sim_stats s;
    int rc = mbs_simulate(m, d, o, q0, qd0, record, r, st ? st : &s, &err);
    CHECK(rc == MBS_OK, "%s: %s", what, err.msg);
    mbs_data_free(d);
    return rc;
}

/* Final state y = [q, qd] */
static const double *final_state(const traj *r) { return r->y + (size_t)(r->n - 1) * 2 * r->nq; }

/* Times at which coordinate k crosses zero downwards (from > 0 to <= 0),
 * located on the cubic Hermite interpolant of (q, qd) between outputs.
 * Returns the number found (at most max). */
static int down_crossings(const traj *r, int k, double *tc, int max)
{
    int nc = 0;
    const int w = 2 * r->nq;
    for (int i = 1; i < r->n && nc < max; i++) {
        double q0 = r->y[(size_t)(i - 1) * w + k], v0 = r->y[(size_t)(i - 1) * w + r->nq + k];
        double q1 = r->y[(size_t)i * w + k], v1 = r->y[(size_t)i * w + r->nq + k];
        if (!(q0 > 0 && q1 <= 0)) continue;
        double h = r->t[i] - r->t[i - 1], a = 0, b = 1;
        for (int it = 0; it < 200 && b - a > 1e-16; it++) {
            double s = 0.5 * (a + b), s2 = s * s, s3 = s2 * s;
            double v = (2 * s3 - 3 * s2 + 1) * q0 + (s3 - 2 * s2 + s) * h * v0 + (-2 * s3 + 3 * s2) * q1 +
                       (s3 - s2) * h * v1;
            if (v > 0) a = s;
            else b = s;
        }
        tc[nc++] = r->t[i - 1] + 0.5 * (a + b) * h;
    }
    return nc;
}

/* Complete elliptic integral of the first kind K(k) = pi / (2 AGM(1, sqrt(1 - k^2))). */
static double ellipk(double k)
{
    double a = 1, b = sqrt(1 - k * k);
    for (int i = 0; i < 40 && fabs(a - b) > 1e-16 * a; i++) {
        double an = 0.5 * (a + b);
        b = sqrt(a * b);
        a = an;
    }
    return PI / (2 * a);
}

static mbs_sim_options opts(mbs_integrator_type integ, double dt, double tf)
{
    mbs_sim_options o = mbs_sim_options_default();
    o.integrator = integ;
    o.dt = dt;
    o.tf = tf;
    return o;
}

/* ------------------------------------------------------------ pendulum */

static const char *PENDULUM =
    "{ \"name\": \"pendulum\", \"gravity\": [0, -9.81, 0],"
    "  \"bodies\": [ { \"name\": \"bob\", \"mass\": 1, \"com\": [0, -1, 0],"
    "                  \"points\": { \"tip\": [0, -1, 0] } } ],"
    "  \"joints\": [ { \"name\": \"theta\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"bob\","
    "                  \"axis\": [0, 0, 1], \"q0\": [2.0] } ] }";

/* Large-amplitude pendulum (theta0 = 2 rad, L = 1 m): period from two
 * successive downward zero crossings against the exact value.
 *
 * Tolerances from the step. For a linear oscillator the trapezoidal rule's
 * frequency is (2/h) atan(w h/2): relative period error (w h)^2/12 + O(h^4);
 * RK4's is (w h)^4/120. The pendulum's local frequency never exceeds
 * w0 = sqrt(g/L) (its linearization at the bottom), so these are bounds
 * with w = w0: 8.2e-7 (trapezoidal, h = 1e-3), 8.0e-9 (RK4, h = 1e-2).
 * CVODES: its local errors (each at most rtol relative, its error test)
 * summed over its steps; the period depends on the energy, which they change
 * by as much, so the pendulum does not amplify them. */
static void test_pendulum_period(void)
{
    mbs_model *m = load(PENDULUM, "pendulum");
    if (!m) return;
    const double theta0 = 2.0, w0 = sqrt(G);
    const double Texact = 4 * sqrt(1 / G) * ellipk(sin(theta0 / 2));
    CHECK_CLOSE(Texact, 2.665870942835, 1e-12, "exact period (AGM; the reference has 13 digits)");
    struct { mbs_integrator_type integ; mbs_nl_solver solver; mbs_cvodes_method cm; double h, tol; } cases[] = {
        { MBS_INTEGRATOR_TRAPEZOIDAL, MBS_SOLVER_NEWTON, 0, 1e-3, (w0 * 1e-3) * (w0 * 1e-3) / 12 },
        { MBS_INTEGRATOR_TRAPEZOIDAL, MBS_SOLVER_FIXEDPOINT, 0, 1e-3, (w0 * 1e-3) * (w0 * 1e-3) / 12 },
        { MBS_INTEGRATOR_RK4, 0, 0, 1e-2, pow(w0 * 1e-2, 4) / 120 },
        { MBS_INTEGRATOR_CVODES, 0, MBS_CVODES_BDF, 1e-2, 0 },   /* steps x rtol */
        { MBS_INTEGRATOR_CVODES, 0, MBS_CVODES_ADAMS, 1e-2, 0 },
    };
    double err_trap[2] = { 0, 0 }, vcross = 1;   /* periods of the two solvers; speed at the crossing */
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mbs_sim_options o = opts(cases[c].integ, cases[c].h, 1.3 * Texact);
        o.solver = cases[c].solver;
        o.cvodes_method = cases[c].cm;
        o.rtol = 1e-10;
        o.atol = 1e-12;
        traj r;
        mbs_sim_stats st;
        if (run(m, &o, NULL, NULL, &r, &st, "pendulum") == MBS_OK) {
            double tc[4];
            int nc = down_crossings(&r, 0, tc, 4);
            CHECK(nc == 2, "two crossings, got %d", nc);
            double Tm = nc >= 2 ? tc[1] - tc[0] : 0;
            double rel = fabs(Tm - Texact) / Texact;
            if (o.integrator == MBS_INTEGRATOR_CVODES) cases[c].tol = (double)st.steps * o.rtol;
            printf("pendulum %-11s %-10s %-5s h = %-6g period %.12f  rel. error %.2e (bound %.2e)  steps %ld"
                   "  iterations mean %.2f max %d  evaluations %ld\n",
                   mbs_integrator_name(o.integrator), o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL ?
                   mbs_nl_solver_name(o.solver) : "", o.integrator == MBS_INTEGRATOR_CVODES ?
                   mbs_cvodes_method_name(o.cvodes_method) : "", o.dt, Tm, rel, cases[c].tol, st.steps,
                   st.iterations_mean, st.iterations_max, st.fevals);
            CHECK(rel <= cases[c].tol, "%s period error %.3e > %.3e", mbs_integrator_name(o.integrator), rel,
                  cases[c].tol);
            if (o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL) {
                err_trap[o.solver] = Tm;
                /* the predictor is O(h^3) off (1e-9): Newton needs 2 iterations, a third at most */
                CHECK(st.iterations_max <= 3, "Newmark iterations per step %d", st.iterations_max);
                for (int i = 1; i < r.n; i++)
                    if (r.y[2 * (i - 1)] > 0 && r.y[2 * i] <= 0) vcross = fabs(r.y[2 * i + 1]);
            }
        }
        traj_free(&r);
    }
    /* the two solvers converge to the same discrete solution: their trajectories differ by the
     * tolerance's effect and round-off grown along the run (mbs_test_run_spread), the crossing
     * times by that over the speed at the crossing, the period by twice that */
    {
        mbs_sim_options on = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 1e-3, 1.3 * Texact), of = on;
        of.solver = MBS_SOLVER_FIXEDPOINT;
        double b[3];
        mbs_test_run_spread(m, &on, &of, NULL, NULL, b);
        CHECK(fabs(err_trap[0] - err_trap[1]) <= 2 * b[0] / vcross, "newton and fixed point: periods %.15g, %.15g "
              "(bound %g)", err_trap[0], err_trap[1], 2 * b[0] / vcross);
    }
    mbs_model_free(m);
}

/* ------------------------------------------------------------ double pendulum */

/* models/double_pendulum.json (docs/models.md): L1 = L2 = 1, M_P = M_Q = 1.
 * Linearized: M0 = [[5, 2], [2, 1]], K0 = g [[3, 1], [1, 1]];
 * det(K0 - w^2 M0) = 0 gives w^2 = g (2 -+ sqrt 2), mode shapes
 * theta2/theta1 = sqrt 2 - 1 (slow) and -(1 + sqrt 2) (fast).
 * Started on a mode shape with amplitude 1e-4, the motion is that mode; its
 * period is measured by zero crossings of theta1 over two periods.
 *
 * For a linear system both fixed-step methods are exact functions of w h:
 * trapezoidal w_h = (2/h) atan(w h/2); RK4 w_h = arg R(i w h)/h with
 * R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24 (CVODES: the exact period, to its
 * local errors summed, steps x rtol). The measured periods must match these
 * discrete periods up to
 *   - the nonlinear frequency shift, proportional to the squared amplitude:
 *     measured by a second run at twice the amplitude, whose period is
 *     longer by 3 times the shift (taken with a margin of 1.5);
 *   - the crossing interpolation (cubic Hermite between outputs h apart):
 *     h^4 max |q''''| / 384 over the slope w a, relative (w h)^4 / (384 2 pi).
 * The discrete periods are within (w h)^2/12 (trapezoidal) and (w h)^4/120
 * (RK4) of the exact one (leading terms of the series, which alternate), so
 * the measured error is bounded by that plus the above. */
static void test_double_pendulum_modes(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    CHECK(m != NULL, "load double pendulum: %s", m ? "" : err.msg);
    if (!m) return;
    const double s2 = sqrt(2.0);
    const double w[2] = { sqrt(G * (2 - s2)), sqrt(G * (2 + s2)) };
    const double shape[2] = { s2 - 1, -(1 + s2) };
    for (int mode = 0; mode < 2; mode++) {
        const double T = 2 * PI / w[mode];
        double q0[2] = { 1e-4, 1e-4 * shape[mode] }, qd0[2] = { 0, 0 };
        struct { mbs_integrator_type integ; double h; } cases[] = {
            { MBS_INTEGRATOR_TRAPEZOIDAL, 1e-3 }, { MBS_INTEGRATOR_RK4, 1e-2 }, { MBS_INTEGRATOR_CVODES, 1e-2 },
        };
        for (int c = 0; c < 3; c++) {
            const double h = cases[c].h, wh = w[mode] * h;
            double Tdisc = T, bound = 0;
            if (cases[c].integ == MBS_INTEGRATOR_TRAPEZOIDAL) {
                Tdisc = 2 * PI / ((2 / h) * atan(wh / 2));
                bound = wh * wh / 12;
            } else if (cases[c].integ == MBS_INTEGRATOR_RK4) {
                double re = 1 - wh * wh / 2 + pow(wh, 4) / 24, im = wh - pow(wh, 3) / 6;
                Tdisc = 2 * PI / (atan2(im, re) / h);
                bound = pow(wh, 4) / 120;
            }
            mbs_sim_options o = opts(cases[c].integ, h, 2.3 * T);
            o.rtol = 1e-10;
            o.atol = 1e-14;    /* amplitudes are 1e-4 */
            traj r, r2;
            double q2[2] = { 2 * q0[0], 2 * q0[1] }, Tm2 = 0;
            mbs_sim_stats st;
            if (run(m, &o, q2, qd0, &r2, NULL, "double pendulum, 2 a") == MBS_OK) {
                double tc[4];
                if (down_crossings(&r2, 0, tc, 4) >= 3) Tm2 = 0.5 * (tc[2] - tc[0]);
            }
            traj_free(&r2);
            if (run(m, &o, q0, qd0, &r, &st, "double pendulum") == MBS_OK) {
                double tc[4];
                int nc = down_crossings(&r, 0, tc, 4);
                CHECK(nc >= 3, "mode %d: crossings %d", mode, nc);
                double Tm = nc >= 3 ? 0.5 * (tc[2] - tc[0]) : 0;
                const double wh_out = w[mode] * o.dt;
                const double left = 1.5 * fabs(Tm2 - Tm) / (3 * T) + pow(wh_out, 4) / (384 * 2 * PI) +
                                    (cases[c].integ == MBS_INTEGRATOR_CVODES ? (double)st.steps * o.rtol : 0);
                printf("double pendulum mode %d (T = %.9f) %-11s h = %-5g measured %.9f  rel. error %.2e"
                       "  discrete-period error %.2e (bound %.2e; at 2 a %+.2e)\n", mode + 1, T,
                       mbs_integrator_name(o.integrator), h, Tm, fabs(Tm - T) / T, fabs(Tm - Tdisc) / T, left,
                       (Tm2 - Tm) / T);
                /* (the relative difference of two periods of order 1: a few roundings, 8 eps) */
                CHECK(fabs(Tdisc - T) / T <= bound + 8 * MBS_EPS, "discrete period bound");
                CHECK(fabs(Tm - T) / T <= bound + left, "mode %d %s: error %.3e > %.3e", mode,
                      mbs_integrator_name(o.integrator), fabs(Tm - T) / T, bound + left);
                CHECK(fabs(Tm - Tdisc) / T <= left, "mode %d %s: discrete period %.12f, measured %.12f (bound %.2e)",
                      mode, mbs_integrator_name(o.integrator), Tdisc, Tm, left);
                /* the other mode is not excited: theta2/theta1 stays on the mode shape (the
                 * discretizations of a linear system keep the modes apart; the nonlinear terms
                 * couple them at O(a^3) = 1e-11 here; the bound is a^2) */
                double dev = 0;
                for (int i = 0; i < r.n; i++) {
                    double d = fabs(r.y[4 * i + 1] - shape[mode] * r.y[4 * i]);
                    if (d > dev) dev = d;
                }
                CHECK(dev <= 1e-4 * 1e-4, "mode %d: off the mode shape by %.3e", mode, dev);
            }
            traj_free(&r);
        }
    }
    mbs_model_free(m);
}

/* ------------------------------------------------------------ convergence */

/* Double pendulum from its file state (0.5, 0.5) rad at rest, t in [0, 1]:
 * errors at tf against RK4 with h = 1e-4 (error ~1e-15). The RK4 steps
 * (w h <= 0.12 with w up to ~6 rad/s) are in the asymptotic range, where
 * the error ratio approaches 16 (at h = 0.04 it is still 13.5). */
static void test_convergence(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    CHECK(m != NULL, "load: %s", m ? "" : err.msg);
    if (!m) return;
    traj ref;
    mbs_sim_options o = opts(MBS_INTEGRATOR_RK4, 1e-4, 1.0);
    if (run(m, &o, NULL, NULL, &ref, NULL, "reference") != MBS_OK) { mbs_model_free(m); return; }
    const double *yref = final_state(&ref);

    double e_trap[3], e_energy[3], e_rk4[3];
    const double htrap[3] = { 4e-3, 2e-3, 1e-3 }, hrk[3] = { 2e-2, 1e-2, 5e-3 };
    for (int k = 0; k < 3; k++) {
        traj r;
        mbs_sim_stats st;
        o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, htrap[k], 1.0);
        e_trap[k] = e_energy[k] = NAN;
        if (run(m, &o, NULL, NULL, &r, &st, "trapezoidal") == MBS_OK) {
            e_trap[k] = mbs_rel_err(final_state(&r), yref, 4);
            e_energy[k] = st.energy_drift;
        }
        traj_free(&r);
        o = opts(MBS_INTEGRATOR_RK4, hrk[k], 1.0);
        e_rk4[k] = NAN;
        if (run(m, &o, NULL, NULL, &r, &st, "rk4") == MBS_OK) e_rk4[k] = mbs_rel_err(final_state(&r), yref, 4);
        traj_free(&r);
    }
    for (int k = 0; k < 3; k++)
        printf("convergence: trapezoidal h = %g state error %.3e energy error %.3e | rk4 h = %g state error %.3e\n",
               htrap[k], e_trap[k], e_energy[k], hrk[k], e_rk4[k]);
    for (int k = 0; k < 2; k++) {
        double rt = e_trap[k] / e_trap[k + 1], re = e_energy[k] / e_energy[k + 1], rr = e_rk4[k] / e_rk4[k + 1];
        printf("convergence ratios (h / h/2): trapezoidal state %.3f, energy %.3f; rk4 state %.3f\n", rt, re, rr);
        CHECK(rt > 3.5 && rt < 4.5, "trapezoidal state error ratio %.3f (second order: 4)", rt);
        CHECK(re > 3 && re < 5, "trapezoidal energy error ratio %.3f (second order: 4)", re);
        CHECK(rr > 14 && rr < 18, "rk4 state error ratio %.3f (fourth order: 16)", rr);
    }
    traj_free(&ref);

    /* The energy error of the trapezoidal rule stays bounded (no drift): the
     * large-amplitude pendulum over 8 periods with h = 2e-3; the largest
     * error over the run is that of the first period, and the final one is
     * no larger. */
    mbs_model *p = load(PENDULUM, "pendulum");
    if (p) {
        const double T = 4 * sqrt(1 / G) * ellipk(sin(1.0));
        mbs_sim_stats s1, s8;
        traj r;
        o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 2e-3, T);
        run(p, &o, NULL, NULL, &r, &s1, "pendulum 1 period");
        traj_free(&r);
        o.tf = 8 * T;
        run(p, &o, NULL, NULL, &r, &s8, "pendulum 8 periods");
        traj_free(&r);
        printf("energy error, pendulum h = 2e-3: max over 1 period %.3e, over 8 periods %.3e, at the end %.3e\n",
               s1.energy_drift, s8.energy_drift, fabs(s8.energy - s8.energy0));
        /* the same largest error every period; 1 % for where the outputs fall on that maximum
         * ((w h)^2 / 8 = 5e-6 of it) and the slow drift of the discrete period */
        CHECK(s8.energy_drift <= 1.01 * s1.energy_drift, "energy error grows: %.3e after 1 period, %.3e after 8",
              s1.energy_drift, s8.energy_drift);
        CHECK(fabs(s8.energy - s8.energy0) <= s1.energy_drift, "final energy error");
        mbs_model_free(p);
    }
    mbs_model_free(m);
}

/* ------------------------------------------------------------ agreement */

static void test_agreement(void)
{
    mbs_error err;
    char *json = mbs_generate_chain_json(4, MBS_JOINT_SPHERICAL, 1, &err);
    CHECK(json != NULL, "generate: %s", json ? "" : err.msg);
    if (!json) return;
    mbs_model *m = load(json, "chain");
    free(json);
    if (!m) return;
    const int nq = mbs_model_nq(m), ny = 2 * nq;
    const double tf = 0.3;

    /* trapezoidal, Newton (FD tangent), fr, com: the reference discrete solution */
    mbs_sim_options o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 2e-3, tf);
    o.tangent = mbs_tangent_fd;
    traj ref;
    mbs_sim_stats sref;
    if (run(m, &o, NULL, NULL, &ref, &sref, "trapezoidal newton fr") != MBS_OK) { mbs_model_free(m); return; }
    printf("chain (nq = %d): trapezoidal newton h = 2e-3: %ld steps, iterations mean %.2f max %d, "
           "Euler drift %.2e, energy drift %.2e\n", nq, sref.steps, sref.iterations_mean, sref.iterations_max,
           sref.euler_drift, sref.energy_drift);
    /* one step's drift of |p| (projected after every step): the local error of the trapezoidal rule,
     * (w h)^3 / 12 with w the largest |qd| */
    double wmax = 0;
    for (int i = 0; i < ref.n * ny; i++) if (i % ny >= nq) wmax = fmax(wmax, fabs(ref.y[i]));
    CHECK(sref.euler_drift > 0 && sref.euler_drift <= pow(wmax * o.dt, 3) / 12, "Euler drift %.3e > %.3e",
          sref.euler_drift, pow(wmax * o.dt, 3) / 12);

    /* the same discrete solution by other arithmetic (recursions, reference points, tangents, solvers):
     * bounded by what each step's round-off and solver tolerance grow to along the run
     * (mbs_test_run_spread) */
    struct { const char *what; mbs_sim_options o; } v[8];
    int nv = 0;
    v[nv].what = "newton semi";
    v[nv].o = o; v[nv++].o.formulation = MBS_FD_SEMI_RECURSIVE;
    v[nv].what = "fixedpoint fr";
    v[nv].o = o; v[nv++].o.solver = MBS_SOLVER_FIXEDPOINT;
    v[nv].what = "fixedpoint semi";
    v[nv].o = o; v[nv].o.solver = MBS_SOLVER_FIXEDPOINT; v[nv++].o.formulation = MBS_FD_SEMI_RECURSIVE;
    v[nv].what = "newton ref origin";
    v[nv].o = o; v[nv++].o.ref = MBS_REF_ORIGIN;
    v[nv].what = "newton ref joint";
    v[nv].o = o; v[nv++].o.ref = MBS_REF_JOINT;
    v[nv].what = "newton analytical tangent";
    v[nv].o = o; v[nv++].o.tangent = mbs_tangent_analytic;
    v[nv].what = "newton tangent once per step";
    v[nv].o = o; v[nv++].o.tangent_update = MBS_TANGENT_STEP;
    for (int k = 0; k < nv; k++) {
        traj r;
        mbs_sim_stats st;
        double b[3];
        mbs_test_run_spread(m, &o, &v[k].o, NULL, NULL, b);
        if (run(m, &v[k].o, NULL, NULL, &r, &st, v[k].what) == MBS_OK) {
            double eq = 0, ev = 0;
            for (int i = 0; i < r.n && i < ref.n; i++)
                for (int j = 0; j < ny; j++) {
                    const double e = fabs(r.y[(size_t)i * ny + j] - ref.y[(size_t)i * ny + j]);
                    if (j < nq) eq = fmax(eq, e);
                    else ev = fmax(ev, e);
                }
            CHECK(r.n == ref.n, "%s: %d outputs, expected %d", v[k].what, r.n, ref.n);
            printf("chain: trapezoidal %-26s max deviation from newton fr q %.2e qd %.2e (bounds %.1e %.1e), "
                   "iterations mean %.2f max %d\n", v[k].what, eq, ev, b[0], b[1], st.iterations_mean,
                   st.iterations_max);
            CHECK(eq <= b[0] && ev <= b[1], "%s: deviation %.3e %.3e > %.1e %.1e", v[k].what, eq, ev, b[0], b[1]);
            if (v[k].o.tangent == mbs_tangent_analytic)
                CHECK(st.iterations == sref.iterations, "analytical tangent: %ld iterations, FD %ld",
                      st.iterations, sref.iterations);
        }
        traj_free(&r);
    }

    /* RK4 fr = semi (round-off grown along the run); CVODES BDF and Adams = RK4 with a fine step */
    traj rk, rs;
    o = opts(MBS_INTEGRATOR_RK4, 1e-3, tf);
    run(m, &o, NULL, NULL, &rk, NULL, "rk4 fr");
    mbs_sim_options os = o;
    os.formulation = MBS_FD_SEMI_RECURSIVE;
    run(m, &os, NULL, NULL, &rs, NULL, "rk4 semi");
    double ymax = 0;
    for (int i = 0; i < rk.n * ny; i++) ymax = fmax(ymax, fabs(rk.y[i]));
    if (rk.n == rs.n && rk.n > 0) {
        double b[3];
        mbs_test_run_spread(m, &o, &os, NULL, NULL, b);
        double e = mbs_rel_err(final_state(&rs), final_state(&rk), ny) * fmax(1, ymax);
        printf("chain: rk4 semi vs fr %.2e (bound %.1e)\n", e, fmax(b[0], b[1]));
        CHECK(e <= fmax(b[0], b[1]), "rk4 semi vs fr: %.3e", e);
    }
    /* trapezoidal (h = 2e-3) vs RK4: within their discretization errors (mbs_test_order_error) */
    double etr[3], erk[3];
    mbs_sim_options ot = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 2e-3, tf);
    mbs_test_order_error(m, &ot, 2, NULL, NULL, etr);
    mbs_test_order_error(m, &o, 4, NULL, NULL, erk);
    double et = mbs_rel_err(final_state(&ref), final_state(&rk), ny) * fmax(1, ymax);
    const double bt = fmax(etr[0] + erk[0], etr[1] + erk[1]);
    printf("chain: trapezoidal h = 2e-3 vs rk4 h = 1e-3: %.2e (bound %.1e)\n", et, bt);
    CHECK(et <= bt, "trapezoidal vs rk4: %.3e > %.3e", et, bt);
    for (int method = 0; method < 2; method++) {
        traj rc;
        mbs_sim_stats st;
        o = opts(MBS_INTEGRATOR_CVODES, 1e-2, tf);
        o.cvodes_method = (mbs_cvodes_method)method;
        o.rtol = 1e-10;
        o.atol = 1e-12;
        if (run(m, &o, NULL, NULL, &rc, &st, "cvodes") == MBS_OK && rk.n > 0) {
            /* CVODES: its local errors summed (steps x (rtol |y| + atol)); RK4: its own error */
            double e = mbs_rel_err(final_state(&rc), final_state(&rk), ny) * fmax(1, ymax);
            const double bc = (double)st.steps * (o.rtol * ymax + o.atol) + fmax(erk[0], erk[1]);
            printf("chain: cvodes %s vs rk4: %.2e (bound %.1e; steps %ld, evaluations %ld, Jacobians %ld, Euler "
                   "drift %.2e)\n", mbs_cvodes_method_name(o.cvodes_method), e, bc, st.steps, st.fevals,
                   st.tangent_evals, st.euler_drift);
            CHECK(e <= bc, "cvodes %s vs rk4: %.3e > %.3e", mbs_cvodes_method_name(o.cvodes_method), e, bc);
            CHECK(rc.n == 31, "cvodes outputs %d", rc.n);
            CHECK(fabs(rc.t[rc.n - 1] - tf) <= 4 * MBS_EPS * tf, "last output at tf (to its rounding)");
        }
        traj_free(&rc);
    }
    traj_free(&rk);
    traj_free(&rs);
    traj_free(&ref);
    mbs_model_free(m);
}

/* ------------------------------------------------------------ free rigid body */

static const char *FREE_BODY =
    "{ \"name\": \"free_body\", \"gravity\": [0, 0, 0],"
    "  \"bodies\": [ { \"name\": \"box\", \"mass\": 3, \"com\": [0.1, -0.05, 0.02],"
    "                  \"inertia\": [2, 3, 4, 0, 0, 0] } ],"
    "  \"joints\": [ { \"name\": \"free\", \"type\": \"floating\", \"parent\": \"ground\", \"child\": \"box\","
    "                  \"child_point\": [0.1, -0.05, 0.02] } ] }";

/* Global angular momentum about the CoM, A J A^T w, and linear momentum. */
static void momenta(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double H[3], double P[3])
{
    mbs_kinematics(m, d, q, qd, NULL);
    double A[9], v[3], w[3], wl[3], Jl[3] = { 2, 3, 4 };
    mbs_body_pose(d, 1, A, NULL);
    mbs_body_velocity(d, 1, v, w);
    for (int r = 0; r < 3; r++) wl[r] = (A[r] * w[0] + A[3 + r] * w[1] + A[6 + r] * w[2]) * Jl[r];
    for (int r = 0; r < 3; r++) {
        H[r] = A[3 * r] * wl[0] + A[3 * r + 1] * wl[1] + A[3 * r + 2] * wl[2];
        P[r] = 3 * v[r];
    }
}

/* An asymmetric body (principal moments 2, 3, 4) spinning at 2 rad/s about
 * its intermediate axis with a 10 % transverse perturbation: the spin axis
 * flips (Dzhanibekov effect; body w_y changes sign after ~4 s), the hardest
 * case for the Euler-parameter integration. No gravity, no loads: linear
 * and angular momentum and the energy are invariants.
 *
 * Bounds. Neither fixed-step method conserves H and E exactly in these
 * coordinates. Their phase error over T is T (w h)^2/12 (trapezoidal) and
 * T (w h)^4/120 (RK4) with w = |w0| ~ 2 rad/s: 3.8e-5 (h = 4e-3; 4 times
 * less at h = 2e-3) and 9.5e-9 (RK4, h = 1e-2); the invariants drift by
 * less than that. CVODES: at most
 * steps x rtol (the local errors summed). The trapezoidal H error must
 * also be second order (ratio 4 between h and h/2). Linear momentum is
 * exact up to round-off for all methods (the translation is decoupled and
 * the Newmark relations are evaluated in correction form): a few roundings
 * of v per step, summed over the steps (4 eps |P| per step). The Euler
 * parameters, projected after every step, drift within one step by the
 * local error, (w h)^3 / 12 (trapezoidal), (w h)^5 / 120 (RK4), rtol
 * (CVODES); unprojected, that adds up like the phase error. Projection
 * leaves ||p| - 1| at the rounding of p / |p| and of the test's |p|: 4 eps. */
static void test_free_body(void)
{
    mbs_model *m;
    mbs_data *d;
    if (!load_with_data(FREE_BODY, "free body", &m, &d)) return;
    double q0[7] = { 0, 0, 0, 1, 0, 0, 0 }, qd0[7] = { 0.3, -0.1, 0.2, 0, 0, 0, 0 };
    const double w0[3] = { 0.2, 2.0, 0.2 };
    mbs_euler_rates_from_omega(q0 + 3, w0, qd0 + 3);
    double H0[3], P0[3];
    momenta(m, d, q0, qd0, H0, P0);
    const double tf = 7.0, Hn = sqrt(H0[0] * H0[0] + H0[1] * H0[1] + H0[2] * H0[2]);
    const double wn = sqrt(w0[0] * w0[0] + w0[1] * w0[1] + w0[2] * w0[2]);
    struct { mbs_integrator_type integ; double h; int project; } cases[] = {
        { MBS_INTEGRATOR_TRAPEZOIDAL, 4e-3, 1 },
        { MBS_INTEGRATOR_TRAPEZOIDAL, 2e-3, 1 },
        { MBS_INTEGRATOR_TRAPEZOIDAL, 4e-3, 0 },
        { MBS_INTEGRATOR_RK4, 1e-2, 1 },
        { MBS_INTEGRATOR_CVODES, 1e-2, 1 },
    };
    double eH[2] = { 0, 0 };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mbs_sim_options o = opts(cases[c].integ, cases[c].h, tf);
        o.project = cases[c].project;
        o.rtol = 1e-10;
        o.atol = 1e-12;
        traj r;
        mbs_sim_stats st;
        if (run(m, &o, q0, qd0, &r, &st, "free body") != MBS_OK) { traj_free(&r); continue; }
        double errH = 0, errP = 0, pnorm = 0, wy_min = 1e9;
        for (int i = 0; i < r.n; i++) {
            const double *q = r.y + 14 * i, *qd = q + 7;
            double H[3], P[3], A[9], w[3];
            mbs_data *dd = d;
            if (!o.project) {   /* mbs_kinematics needs |p| = 1 to 1e-6; use a normalized copy */
                double qq[7], vv[7];
                memcpy(qq, q, sizeof qq);
                memcpy(vv, qd, sizeof vv);
                mbs_normalize_state(m, qq, vv);
                momenta(m, dd, qq, vv, H, P);
            } else {
                momenta(m, dd, q, qd, H, P);
                double n = sqrt(q[3] * q[3] + q[4] * q[4] + q[5] * q[5] + q[6] * q[6]);
                if (fabs(n - 1) > pnorm) pnorm = fabs(n - 1);
            }
            mbs_body_pose(d, 1, A, NULL);
            mbs_body_velocity(d, 1, NULL, w);
            double wy = A[1] * w[0] + A[4] * w[1] + A[7] * w[2];   /* body y component */
            if (wy < wy_min) wy_min = wy;
            for (int k = 0; k < 3; k++) {
                if (fabs(H[k] - H0[k]) > errH) errH = fabs(H[k] - H0[k]);
                if (fabs(P[k] - P0[k]) > errP) errP = fabs(P[k] - P0[k]);
            }
        }
        errH /= Hn;
        double errE = st.energy_drift / st.energy0, wh = wn * o.dt, bound, local;
        if (o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL) bound = tf * wh * wh / 12, local = pow(wh, 3) / 12;
        else if (o.integrator == MBS_INTEGRATOR_RK4) bound = tf * pow(wh, 4) / 120, local = pow(wh, 5) / 120;
        else bound = (double)st.steps * o.rtol, local = o.rtol;
        const double pn = sqrt(P0[0] * P0[0] + P0[1] * P0[1] + P0[2] * P0[2]);
        printf("free body %-11s h = %-5g project %d: |dH|/|H| %.2e  |dP| %.2e  dE/E %.2e  Euler drift %.2e"
               "  |p|-1 after projection %.1e  min body w_y %.3f  steps %ld iterations mean %.2f max %d\n",
               mbs_integrator_name(o.integrator), o.dt, o.project, errH, errP, errE, st.euler_drift, pnorm, wy_min,
               st.steps, st.iterations_mean, st.iterations_max);
        CHECK(wy_min < -0.5, "the spin axis flips (min w_y %.3f)", wy_min);
        CHECK(errH <= bound, "%s: angular momentum error %.3e > %.2e", mbs_integrator_name(o.integrator), errH,
              bound);
        CHECK(errE <= bound, "%s: energy error %.3e > %.2e", mbs_integrator_name(o.integrator), errE, bound);
        CHECK(errP <= (double)st.steps * 4 * MBS_EPS * pn, "linear momentum error %.3e", errP);
        CHECK(st.euler_drift > 0, "Euler drift is reported");
        CHECK(st.euler_drift <= (o.project ? local : bound), "Euler drift %.3e > %.3e", st.euler_drift,
              o.project ? local : bound);
        if (o.project) CHECK(pnorm <= 4 * MBS_EPS, "projected: ||p| - 1| = %.3e", pnorm);
        if (o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL && o.project) eH[o.dt < 3e-3] = errH;
        traj_free(&r);
    }
    printf("free body: trapezoidal angular momentum error ratio (h / h/2) %.3f\n", eH[0] / eH[1]);
    CHECK(eH[0] / eH[1] > 3.5 && eH[0] / eH[1] < 4.5, "angular momentum error: second order");
    free_with_data(m, d);
}

/* ------------------------------------------------------------ errors */

static int contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/* ------------------------------------------------------------ force elements */

/* A 2 kg mass on a vertical slide, hung from the ground point (0, 1, 0) by
 * a spring-damper (k = 200 N/m, c = 8 N s/m, l0 = 0.5 m; w = 10 rad/s,
 * damping ratio 0.2), released at s = 0 (l = 1). Static equilibrium:
 * k (l - l0) = m g, i.e. s_eq = 1 - l0 - m g/k. The oscillation decays as
 * exp(-2 t): after 14 s the amplitude 0.4 m has dropped to 3e-13. A second
 * case: a pendulum with a damped joint spring (-20 (q - 0.5) - 4 qd; about
 * the equilibrium w = 5.4 rad/s, decay exp(-2 t)) settles where
 * 20 (q - 0.5) + m g L sin q = 0. The equilibrium is a fixed point of every
 * discrete scheme, so what is left at 14 s is the decayed transient (twice
 * A exp(-2 T), A the initial distance, w A exp(-2 T) in velocity) and the
 * solver's own accuracy, which the damping keeps from adding up: 10 times
 * the Newton tolerance (on the position correction) or CVODES's
 * rtol |s| + atol, w times that in velocity. */
static const char *SLIDER =
    "{ \"name\": \"slider\", \"gravity\": [0, -9.81, 0],"
    "  \"bodies\": [ { \"name\": \"mass\", \"mass\": 2, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } ],"
    "  \"joints\": [ { \"name\": \"s\", \"type\": \"prismatic\", \"parent\": \"ground\", \"child\": \"mass\","
    "                  \"axis\": [0, 1, 0] } ],"
    "  \"forces\": [ { \"name\": \"spring\", \"type\": \"spring_damper\", \"body1\": \"ground\", \"point1\": [0, 1, 0],"
    "                  \"body2\": \"mass\", \"point2\": [0, 0, 0], \"stiffness\": 200, \"damping\": 8,"
    "                  \"length\": 0.5 } ] }";

static const char *DAMPED_PENDULUM =
    "{ \"name\": \"damped_pendulum\", \"gravity\": [0, -9.81, 0],"
    "  \"bodies\": [ { \"name\": \"bob\", \"mass\": 1, \"com\": [0, -1, 0] } ],"
    "  \"joints\": [ { \"name\": \"theta\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"bob\","
    "                  \"axis\": [0, 0, 1], \"q0\": [2.0] } ],"
    "  \"forces\": [ { \"name\": \"hinge\", \"type\": \"joint_spring\", \"joint\": \"theta\", \"stiffness\": 20,"
    "                  \"damping\": 4, \"position\": 0.5 } ] }";

static void test_settling(void)
{
    mbs_model *m = load(SLIDER, "slider");
    mbs_model *p = load(DAMPED_PENDULUM, "damped pendulum");
    if (!m || !p) { mbs_model_free(m); mbs_model_free(p); return; }
    const double s_eq = 1 - 0.5 - 2 * G / 200;
    /* pendulum equilibrium by Newton: 20 (q - 0.5) + g sin q = 0 */
    double q_eq = 0.5;
    for (int k = 0; k < 50; k++) q_eq -= (20 * (q_eq - 0.5) + G * sin(q_eq)) / (20 + G * cos(q_eq));
    struct { mbs_integrator_type integ; double h; } cases[] = {
        { MBS_INTEGRATOR_TRAPEZOIDAL, 1e-3 }, { MBS_INTEGRATOR_RK4, 5e-3 }, { MBS_INTEGRATOR_CVODES, 1e-2 },
    };
    for (int c = 0; c < 3; c++) {
        for (int which = 0; which < 2; which++) {
            mbs_sim_options o = opts(cases[c].integ, cases[c].h, 14);
            o.rtol = 1e-10;
            o.atol = 1e-12;
            traj r;
            mbs_sim_stats st;
            if (run(which ? p : m, &o, NULL, NULL, &r, &st, "settling") == MBS_OK) {
                const double *y = final_state(&r), target = which ? q_eq : s_eq;
                const double A = which ? 2 - q_eq : s_eq, w = which ? 5.4 : 10, decay = exp(-2 * o.tf);
                const double solver = o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL ? o.tolerance
                                      : o.integrator == MBS_INTEGRATOR_CVODES ? o.rtol * fabs(target) + o.atol : 0;
                const double bq = 2 * A * decay + 10 * solver + 64 * MBS_EPS * fabs(target);
                const double bv = 2 * w * A * decay + 10 * w * solver + 64 * MBS_EPS * w * fabs(target);
                printf("settling %-15s %-11s: final %.12f (equilibrium %.12f), velocity %.1e, dissipated %.6f J\n",
                       which ? "damped pendulum" : "slider", mbs_integrator_name(o.integrator), y[0], target, y[1],
                       st.energy0 - st.energy);
                CHECK(fabs(y[0] - target) <= bq, "%s: final %.12f, equilibrium %.12f (bound %.1e)",
                      mbs_integrator_name(o.integrator), y[0], target, bq);
                CHECK(fabs(y[1]) <= bv, "at rest: %.3e > %.1e", y[1], bv);
                if (!which) {
                    /* energy lost = E0 - E_eq, with E = 1/2 k (l - l0)^2 - m g (-s) ...; E is
                     * stationary at the equilibrium: off by 1/2 k ds^2 + 1/2 m v^2, plus the rounding
                     * of a few terms (64 eps) */
                    double E0 = 0.5 * 200 * 0.25, Eeq = 0.5 * 200 * pow(1 - s_eq - 0.5, 2) + 2 * G * s_eq;
                    CHECK_CLOSE(st.energy0, E0, 64 * MBS_EPS, "initial energy (spring)");
                    CHECK_CLOSE(st.energy, Eeq, (0.5 * 200 * bq * bq + 0.5 * 2 * bv * bv) / fabs(Eeq) + 64 * MBS_EPS,
                                "final energy");
                }
            }
            traj_free(&r);
        }
    }
    mbs_model_free(m);
    mbs_model_free(p);
}

/* An asymmetric body on a floating joint hung from the ground by a
 * spring-damper attached off its centre of mass (translation and rotation
 * coupled), started with a lateral and an angular velocity. The damper
 * dissipates W = integral of c ldot^2 dt, which must equal the loss of
 * mechanical energy E0 - E(T) (kinetic + gravity + elastic). The power is
 * sampled at the outputs and integrated by Simpson's rule (error ~h^4).
 * RK4: the mismatch is its O(h^4) error and Simpson's, so at h/2 it is at
 * least 8 times smaller (16 asymptotically). CVODES: Simpson's error
 * (|W(h) - W(2h)| / 15, 1.25 times that) plus CVODES's local errors summed
 * (steps x (rtol (|E0| + |E|) + atol), the energy's terms being of the size
 * of |E0| + |E|). The trapezoidal rule's energy balance is off by
 * O(h^2) (its discrete dissipation is c h sum ldot_mid^2 and its
 * conservation of the nonlinear energy is approximate): the signed mismatch
 * m(h) must be C h^2, i.e. m(h)/m(h/2) within 3.5..4.5, and its Richardson
 * extrapolation m(h/2) - (m(h) - m(h/2))/3, what is left after the h^2
 * term, must vanish with h: from (h/2, h/4) at least 4 times smaller than
 * from (h, h/2) (an O(1) discrepancy in the balance would stay). */
static const char *HANGING =
    "{ \"name\": \"hanging\", \"gravity\": [0, 0, -9.81],"
    "  \"bodies\": [ { \"name\": \"box\", \"mass\": 1.5, \"inertia\": [0.02, 0.03, 0.04, 0.001, 0, 0.002],"
    "                  \"points\": { \"hook\": [0.05, 0.1, 0.02] } } ],"
    "  \"joints\": [ { \"name\": \"free\", \"type\": \"floating\", \"parent\": \"ground\", \"child\": \"box\","
    "                  \"parent_point\": [0, 0, -1], \"q0\": [0, 0, 0, 1, 0, 0, 0],"
    "                  \"qd0\": [0.8, 0, 0.3, 0, 0.6, -0.4, 0.5] } ],"
    "  \"forces\": [ { \"name\": \"rope\", \"type\": \"spring_damper\", \"body1\": \"ground\", \"point1\": [0, 0, 0],"
    "                  \"point2\": \"box.hook\", \"stiffness\": 300, \"damping\": 2, \"length\": 0.8 } ] }";

typedef struct {
    int body;
    double hook[3], c;
    int n, cap;
    double *P;     /* damper power at the outputs */
} power_rec;

static int power_cb(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                    const double *qdd)
{
    (void)m; (void)t; (void)q; (void)qd; (void)qdd;
    power_rec *r = user;
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 4096;
        double *P = realloc(r->P, sizeof(double) * (size_t)cap);
        if (!P) return MBS_ERR_NOMEM;
        r->P = P;
        r->cap = cap;
    }
    double x[3], v[3];
    mbs_body_point(d, r->body, r->hook, x, v, NULL);
    double l = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
    double ld = (x[0] * v[0] + x[1] * v[1] + x[2] * v[2]) / l;
    r->P[r->n++] = r->c * ld * ld;
    return 0;
}

static void test_dissipation(void)
{
    mbs_model *m = load(HANGING, "hanging");
    if (!m) return;
    const double tf = 3;
    struct { mbs_integrator_type integ; double h; } cases[] = {
        { MBS_INTEGRATOR_TRAPEZOIDAL, 1e-3 }, { MBS_INTEGRATOR_TRAPEZOIDAL, 5e-4 },
        { MBS_INTEGRATOR_TRAPEZOIDAL, 2.5e-4 }, { MBS_INTEGRATOR_RK4, 1e-3 }, { MBS_INTEGRATOR_RK4, 5e-4 },
        { MBS_INTEGRATOR_CVODES, 1e-3 },
    };
    double mismatch[3] = { 0, 0, 0 }, mrk[2] = { 0, 0 };
    for (int c = 0; c < 6; c++) {
        mbs_sim_options o = opts(cases[c].integ, cases[c].h, tf);
        o.rtol = 1e-11;
        o.atol = 1e-13;
        power_rec r = { 1, { 0.05, 0.1, 0.02 }, 2, 0, 0, NULL };
        mbs_data *d = mbs_data_create(m, NULL);
        mbs_sim_stats st;
        mbs_error err;
        int rc = mbs_simulate(m, d, &o, NULL, NULL, power_cb, &r, &st, &err);
        CHECK(rc == MBS_OK, "hanging: %s", err.msg);
        if (rc == MBS_OK) {
            CHECK(r.n == (int)lround(tf / o.dt) + 1 && r.n % 2 == 1, "outputs %d", r.n);
            double W = 0, W2 = 0;   /* Simpson, with the outputs h and 2h apart */
            for (int i = 0; i + 2 < r.n; i += 2) W += o.dt / 3 * (r.P[i] + 4 * r.P[i + 1] + r.P[i + 2]);
            for (int i = 0; i + 4 < r.n; i += 4) W2 += 2 * o.dt / 3 * (r.P[i] + 4 * r.P[i + 2] + r.P[i + 4]);
            const int w2ok = (r.n - 1) % 4 == 0;
            double lost = st.energy0 - st.energy, rel = fabs(lost - W) / W, mis = (lost - W) / W;
            printf("dissipation %-11s h = %g: damper work %.10f J, energy lost %.10f J, relative mismatch %.2e, "
                   "Euler drift %.1e\n", mbs_integrator_name(o.integrator), o.dt, W, lost, rel, st.euler_drift);
            CHECK(W > 0.5, "the damper works (%g J)", W);
            if (o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL) {
                mismatch[o.dt < 0.75e-3 ? (o.dt < 0.375e-3 ? 2 : 1) : 0] = mis;
            } else if (o.integrator == MBS_INTEGRATOR_RK4) {
                mrk[o.dt < 0.75e-3] = rel;
            } else {
                const double b = (w2ok ? 1.25 * fabs(W - W2) / 15 : INFINITY) / W +
                                 (double)st.steps * (o.rtol * (fabs(st.energy0) + fabs(st.energy)) + o.atol) / W;
                CHECK(rel <= b, "%s energy balance %.3e > %.3e", mbs_integrator_name(o.integrator), rel, b);
            }
        }
        free(r.P);
        mbs_data_free(d);
    }
    double ratio = mismatch[0] / mismatch[1], extra = mismatch[1] - (mismatch[0] - mismatch[1]) / 3;
    double extra2 = mismatch[2] - (mismatch[1] - mismatch[2]) / 3;
    printf("dissipation: trapezoidal energy-balance mismatch ratio (h / h/2) %.3f, extrapolated to h = 0: %.2e "
           "(from h/2, h/4: %.2e); rk4 mismatch ratio %.1f\n", ratio, extra, extra2, mrk[0] / mrk[1]);
    CHECK(ratio > 3.5 && ratio < 4.5, "energy balance of the trapezoidal rule: second order (%.3f)", ratio);
    CHECK(fabs(extra2) <= fabs(extra) / 4, "energy balance of the trapezoidal rule extrapolated to h = 0: %.3e, "
          "then %.3e: does not vanish", extra, extra2);
    CHECK(mrk[0] / mrk[1] > 8, "rk4 energy balance: %.3e at h, %.3e at h/2: not O(h^4)", mrk[0], mrk[1]);
    mbs_model_free(m);
}

/* The Newton tangent does not change the discrete solution: on the body
 * hung by a spring-damper (force-element derivatives in the analytical
 * tangent), finite-difference and analytical tangents, re-evaluated every
 * iteration or once per step, give the same trajectory (to the Newton
 * tolerance and round-off grown along the run, mbs_test_run_spread) and,
 * for the two full-Newton variants, the same iterations. */
static void test_tangent_variants(void)
{
    mbs_model *m = load(HANGING, "hanging");
    if (!m) return;
    mbs_sim_options o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 1e-3, 0.5);
    o.tangent = mbs_tangent_fd;
    traj ref;
    mbs_sim_stats sref;
    if (run(m, &o, NULL, NULL, &ref, &sref, "fd tangent") != MBS_OK) { mbs_model_free(m); return; }
    struct { const char *what; mbs_tangent_fn t; mbs_tangent_update u; } v[] = {
        { "analytical tangent", mbs_tangent_analytic, MBS_TANGENT_ITERATION },
        { "fd tangent once per step", NULL, MBS_TANGENT_STEP },
        { "analytical tangent once per step", mbs_tangent_analytic, MBS_TANGENT_STEP },
    };
    for (int k = 0; k < 3; k++) {
        mbs_sim_options ok = o;
        ok.tangent = v[k].t;
        ok.tangent_update = v[k].u;
        traj r;
        mbs_sim_stats st;
        double b[3];
        mbs_test_run_spread(m, &o, &ok, NULL, NULL, b);
        if (run(m, &ok, NULL, NULL, &r, &st, v[k].what) == MBS_OK && r.n == ref.n) {
            double e = 0;
            for (int i = 0; i < r.n * 14; i++) e = fmax(e, fabs(r.y[i] - ref.y[i]));
            printf("hanging body, trapezoidal: %-33s deviation from fd tangent %.1e (bound %.1e), iterations mean "
                   "%.2f max %d, tangents %ld (fd tangent: mean %.2f max %d, tangents %ld)\n", v[k].what, e,
                   fmax(b[0], b[1]), st.iterations_mean, st.iterations_max, st.tangent_evals, sref.iterations_mean,
                   sref.iterations_max, sref.tangent_evals);
            CHECK(e <= fmax(b[0], b[1]), "%s: deviation %.3e", v[k].what, e);
            if (v[k].u == MBS_TANGENT_ITERATION)
                CHECK(st.iterations == sref.iterations, "%s: %ld iterations, fd %ld", v[k].what, st.iterations,
                      sref.iterations);
            else
                CHECK(st.tangent_evals == st.steps, "once per step: %ld tangents, %ld steps", st.tangent_evals,
                      st.steps);
        }
        traj_free(&r);
    }
    traj_free(&ref);
    mbs_model_free(m);
}

/* A spring_damper whose points meet: the integrator stops with an error
 * naming the element and the time instead of going on with an undefined
 * direction. The slider with a free length 0 and its hook at the anchor
 * height: no gravity, pushed up through the anchor. */
static void test_collapsed_spring(void)
{
    const char *json =
        "{ \"name\": \"through\", \"gravity\": [0, 0, 0],"
        "  \"bodies\": [ { \"name\": \"mass\", \"mass\": 1, \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0] } ],"
        "  \"joints\": [ { \"name\": \"s\", \"type\": \"prismatic\", \"parent\": \"ground\", \"child\": \"mass\","
        "                  \"axis\": [0, 1, 0], \"qd0\": [1] } ],"
        "  \"forces\": [ { \"name\": \"spring\", \"type\": \"spring_damper\", \"body1\": \"ground\", \"point1\": [0, 0.5, 0],"
        "                  \"body2\": \"mass\", \"stiffness\": 0, \"damping\": 0 } ] }";
    mbs_model *m;
    mbs_data *d;
    if (!load_with_data(json, "through", &m, &d)) return;
    mbs_sim_options o = opts(MBS_INTEGRATOR_RK4, 0.1, 1);
    mbs_error err;
    memset(&err, 0, sizeof err);
    int rc = mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, NULL, &err);
    printf("collapsed spring: %s\n", err.msg);
    CHECK(rc == MBS_ERR_NUMERIC && contains(err.msg, "spring_damper 'spring' has collapsed at t = 0.5"),
          "message: %s", err.msg);
    free_with_data(m, d);
}

static void test_errors(void)
{
    mbs_model *m;
    mbs_data *d;
    if (!load_with_data(PENDULUM, "pendulum", &m, &d)) return;
    mbs_error err;

    /* iteration limit 1: started with a velocity, the predictor error
     * (h^3/6 |z'''| ~ 1e-9) is above the tolerance at the first step */
    for (int s = 0; s < 2; s++) {
        mbs_sim_options o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 1e-3, 1);
        o.solver = (mbs_nl_solver)s;
        o.max_iterations = 1;
        memset(&err, 0, sizeof err);
        double qd0[1] = { 1 };
        int rc = mbs_simulate(m, d, &o, NULL, qd0, NULL, NULL, NULL, &err);
        printf("max_iterations = 1 (%s): %s\n", mbs_nl_solver_name(o.solver), err.msg);
        CHECK(rc == MBS_ERR_NUMERIC && err.code == MBS_ERR_NUMERIC, "rc %d", rc);
        CHECK(contains(err.msg, "no convergence at t = 0.001 ") && contains(err.msg, "after 1 iteration") &&
              contains(err.msg, "|residual| = ") && contains(err.msg, mbs_nl_solver_name(o.solver)),
              "message: %s", err.msg);
    }
    /* a step far too large for the fixed-point iteration (contraction
     * factor ~ beta h^2 g/L = 2.5 at h = 1): diverges at the first step */
    {
        mbs_sim_options o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 1.0, 3);
        o.solver = MBS_SOLVER_FIXEDPOINT;
        memset(&err, 0, sizeof err);
        int rc = mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, NULL, &err);
        printf("fixed point, h = 1: %s\n", err.msg);
        CHECK(rc == MBS_ERR_NUMERIC, "rc %d", rc);
        CHECK(contains(err.msg, "at t = 1 ") && contains(err.msg, "fixedpoint"), "message: %s", err.msg);
    }
    /* Newton converges where the fixed point does not */
    {
        mbs_sim_options o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 0.1, 3);
        mbs_sim_stats st;
        int rc = mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, &st, &err);
        CHECK(rc == MBS_OK, "newton h = 0.1: %s", err.msg);
        printf("newton h = 0.1: iterations mean %.2f max %d\n", st.iterations_mean, st.iterations_max);
    }
    /* CVODES: too few internal steps */
    {
        mbs_sim_options o = opts(MBS_INTEGRATOR_CVODES, 0.5, 1);
        o.cvodes_max_steps = 3;
        memset(&err, 0, sizeof err);
        int rc = mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, NULL, &err);
        printf("cvodes max steps 3: %s\n", err.msg);
        CHECK(rc == MBS_ERR_NUMERIC, "rc %d", rc);
        CHECK(contains(err.msg, "too much work at t = ") && contains(err.msg, "to 0.5"), "message: %s", err.msg);
    }
    /* bad options */
    {
        mbs_sim_options o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 0, 1);
        int rc = mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, NULL, &err);
        CHECK(rc == MBS_ERR_ARG && contains(err.msg, "dt must be > 0"), "dt = 0: %s", err.msg);
        o = opts(MBS_INTEGRATOR_TRAPEZOIDAL, 1e-3, -1);
        rc = mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, NULL, &err);
        CHECK(rc == MBS_ERR_ARG && contains(err.msg, "tf"), "tf < t0: %s", err.msg);
        o = opts((mbs_integrator_type)7, 1e-3, 1);
        rc = mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, NULL, &err);
        CHECK(rc == MBS_ERR_ARG && contains(err.msg, "integrator"), "integrator 7: %s", err.msg);
        double qbad[1] = { NAN };
        o = opts(MBS_INTEGRATOR_RK4, 1e-3, 1);
        rc = mbs_simulate(m, d, &o, qbad, NULL, NULL, NULL, NULL, &err);
        CHECK(rc == MBS_ERR_NUMERIC && contains(err.msg, "initial state"), "q = nan: %s", err.msg);
    }
    /* stepper: step sizes, time grid, callback stop */
    {
        mbs_sim_options o = opts(MBS_INTEGRATOR_RK4, 0.3, 1);
        mbs_integrator *it = mbs_integrator_create(m, d, &o, &err);
        CHECK(it != NULL, "create: %s", err.msg);
        if (it) {
            CHECK(mbs_integrator_step(it, 0, &err) == MBS_ERR_ARG, "h = 0 rejected");
            CHECK(mbs_integrator_step(it, 0.01, &err) == MBS_OK && fabs(mbs_integrator_time(it) - 0.01) <=
                  MBS_EPS * 0.01, "step (t = 0 + h, rounded once)");
            mbs_sim_stats st;
            mbs_integrator_stats(it, &st);
            CHECK(st.steps == 1 && st.fevals == 1 + 4, "rk4: 4 evaluations per step (+1 initial), got %ld",
                  st.fevals);
            double q[1] = { 0.1 }, qd[1] = { 0 };
            CHECK(mbs_integrator_reset(it, 5, q, qd, &err) == MBS_OK && mbs_integrator_time(it) == 5 &&
                  mbs_integrator_q(it)[0] == 0.1, "reset");
            /* a pendulum's forward dynamics: a few tens of roundings */
            CHECK_CLOSE(mbs_integrator_qdd(it)[0], -G * sin(0.1), 64 * MBS_EPS, "initial acceleration");
            mbs_integrator_free(it);
        }
        traj r;
        run(m, &o, NULL, NULL, &r, NULL, "grid");
        CHECK(r.n == 5 && fabs(r.t[3] - 0.9) <= 4 * MBS_EPS && r.t[4] == 1.0, "outputs at 0, .3, .6, .9 (three "
              "sums, rounded), 1 (%d)", r.n);
        traj_free(&r);
    }
    free_with_data(m, d);
}

/* ------------------------------------------------------------ model sections */

static void test_model_sections(void)
{
    const char *json =
        "{ \"name\": \"p\", \"gravity\": [0, -9.81, 0],"
        "  \"bodies\": [ { \"name\": \"bob\", \"mass\": 1, \"com\": [0, -1, 0], \"points\": { \"tip\": [0, -1, 0] } } ],"
        "  \"joints\": [ { \"name\": \"theta\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"bob\","
        "                  \"axis\": [0, 0, 1], \"q0\": [0.5] } ],"
        "  \"parameters\": [ { \"name\": \"L\", \"value\": 1, \"sets\": [ { \"target\": \"bob.tip[1]\", \"scale\": -1 } ] } ],"
        "  \"simulation\": { \"formulation\": \"semi\", \"ref\": \"joint\", \"integrator\": \"rk4\","
        "                    \"solver\": \"fixedpoint\", \"dt\": 0.01, \"tf\": 2.5, \"tolerance\": 1e-9,"
        "                    \"max_iterations\": 7, \"rtol\": 1e-6, \"atol\": 1e-9, \"cvodes_method\": \"adams\","
        "                    \"project\": false, \"tangent_update\": \"step\", \"tangent\": \"analytic\" },"
        "  \"outputs\": [ { \"point\": \"bob.tip\", \"quantities\": [\"position\", \"acceleration\"] }, \"energy\","
        "                 { \"point\": \"bob.tip\" } ] }";
    mbs_model *m = load(json, "sections");
    if (!m) return;
    mbs_sim_options o = mbs_model_sim_options(m);
    CHECK(o.formulation == MBS_FD_SEMI_RECURSIVE && o.ref == MBS_REF_JOINT && o.integrator == MBS_INTEGRATOR_RK4 &&
          o.solver == MBS_SOLVER_FIXEDPOINT && o.dt == 0.01 && o.tf == 2.5 && o.tolerance == 1e-9 &&
          o.max_iterations == 7 && o.rtol == 1e-6 && o.atol == 1e-9 && o.cvodes_method == MBS_CVODES_ADAMS &&
          o.project == 0 && o.t0 == 0 && o.tangent_update == MBS_TANGENT_STEP && o.tangent == mbs_tangent_analytic,
          "simulation section read");
    {
        /* "tangent": "fd" selects the central differences; absent, the
         * options keep NULL, which the integrators take as the analytical
         * tangent (the default) */
        char buf[2048];
        const char *at = strstr(json, "\"analytic\"");
        CHECK(at != NULL && strlen(json) < sizeof buf, "model text");
        if (at && strlen(json) < sizeof buf) {
            const size_t k = (size_t)(at - json);
            snprintf(buf, sizeof buf, "%.*s\"fd\"%s", (int)k, json, at + strlen("\"analytic\""));
            mbs_model *mf = load(buf, "tangent fd");
            if (mf) {
                CHECK(mbs_model_sim_options(mf).tangent == mbs_tangent_fd, "\"tangent\": \"fd\" read");
                mbs_model_free(mf);
            }
            snprintf(buf, sizeof buf, "%.*s\"step\" }%s", (int)(strstr(json, "\"step\"") - json), json,
                     strstr(json, "\"step\"") + strlen("\"step\", \"tangent\": \"analytic\" }"));
            mbs_model *md = load(buf, "tangent absent");
            if (md) {
                mbs_sim_options od = mbs_model_sim_options(md);
                CHECK(od.tangent == NULL, "no \"tangent\": the default (NULL)");
                mbs_data *dd = mbs_data_create(md, NULL);
                od.integrator = MBS_INTEGRATOR_TRAPEZOIDAL;
                od.solver = MBS_SOLVER_NEWTON;
                mbs_error e2;
                mbs_integrator *it = dd ? mbs_integrator_create(md, dd, &od, &e2) : NULL;
                CHECK(it != NULL && it->o.tangent == mbs_tangent_analytic, "the default tangent is the analytical one");
                mbs_integrator_free(it);
                mbs_data_free(dd);
                mbs_model_free(md);
            }
        }
    }
    CHECK(mbs_model_noutputs(m) == 4, "outputs: %d", mbs_model_noutputs(m));
    const char *names[4][4] = { { "bob.tip.x", "bob.tip.y", "bob.tip.z" }, { "bob.tip.ax", "bob.tip.ay", "bob.tip.az" },
                                { "kinetic_energy", "potential_energy", "elastic_energy", "energy" },
                                { "bob.tip.x", "bob.tip.y", "bob.tip.z" } };
    mbs_data *d = mbs_data_create(m, NULL);
    double q[1] = { 0.5 }, qd[1] = { 2 }, qdd[1] = { -3 };
    mbs_kinematics(m, d, q, qd, qdd);
    for (int k = 0; k < 4 && k < mbs_model_noutputs(m); k++) {
        mbs_output out = mbs_model_output(m, k);
        const int nc = mbs_output_ncolumns(&out);
        CHECK(nc == (k == 2 ? 4 : 3), "columns");
        for (int c = 0; c < nc; c++) {
            char buf[64];
            mbs_output_column_name(m, &out, c, buf, sizeof buf);
            CHECK(strcmp(buf, names[k][c]) == 0, "output %d column %d: %s", k, c, buf);
        }
        double v[4];
        mbs_output_eval(m, d, q, &out, v);
        /* through the recursive kinematics: tens of roundings of terms of the size of the results */
        const double ro = 64 * MBS_EPS;
        if (k == 0) CHECK(fabs(v[0] - sin(0.5)) <= ro && fabs(v[1] + cos(0.5)) <= ro, "tip position");
        if (k == 1) /* a = qdd e_t - qd^2 e_r: e_t = (cos, sin), e_r = (sin, -cos); |qdd| + qd^2 = 7 */
            CHECK(fabs(v[0] - (-3 * cos(0.5) - 4 * sin(0.5))) <= 7 * ro &&
                  fabs(v[1] - (-3 * sin(0.5) + 4 * cos(0.5))) <= 7 * ro, "tip acceleration %g %g", v[0], v[1]);
        if (k == 2) CHECK(fabs(v[0] - 2) <= 2 * ro && fabs(v[1] + G * cos(0.5)) <= G * ro && v[2] == 0 &&
                          fabs(v[3] - v[0] - v[1]) <= MBS_EPS * (fabs(v[0]) + fabs(v[1])), "energies %g %g %g %g", v[0],
                          v[1], v[2], v[3]);
    }
    /* copies keep the sections */
    double L = 1.5;
    mbs_error err;
    mbs_model *c = mbs_model_with_params(m, &L, &err);
    CHECK(c != NULL && mbs_model_noutputs(c) == 4 && mbs_model_sim_options(c).dt == 0.01, "copy keeps the sections");
    mbs_model_free(c);
    mbs_data_free(d);
    mbs_model_free(m);

    /* defaults without a section */
    m = load(PENDULUM, "pendulum");
    if (m) {
        o = mbs_model_sim_options(m);
        mbs_sim_options def = mbs_sim_options_default();
        CHECK(memcmp(&o, &def, sizeof o) == 0 && mbs_model_noutputs(m) == 0, "defaults");
        CHECK(def.dt == 1e-3 && def.tolerance == 1e-10 && def.max_iterations == 20 && def.project == 1 &&
              def.integrator == MBS_INTEGRATOR_TRAPEZOIDAL && def.solver == MBS_SOLVER_NEWTON, "default values");
        mbs_model_free(m);
    }

    /* errors name the JSON path */
    const char *base =
        "{ \"bodies\": [ { \"name\": \"bob\", \"mass\": 1, \"points\": { \"tip\": [0, -1, 0] } } ],"
        "  \"joints\": [ { \"name\": \"j\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"bob\" } ], %s }";
    struct { const char *section, *expect; } bad[] = {
        { "\"simulation\": { \"dt\": -1 }", "t.json: simulation.dt: must be > 0, got -1" },
        { "\"simulation\": { \"integrator\": \"euler\" }", "simulation.integrator: unknown value \"euler\"" },
        { "\"simulation\": { \"step\": 0.1 }", "simulation: unknown member \"step\"" },
        { "\"simulation\": { \"t0\": 2, \"tf\": 1 }", "simulation.tf: must be >= t0" },
        { "\"simulation\": { \"max_iterations\": 0 }", "simulation.max_iterations: expected an integer" },
        { "\"simulation\": { \"project\": 1 }", "simulation.project: expected true or false" },
        { "\"simulation\": { \"tangent\": \"exact\" }", "simulation.tangent: unknown value \"exact\" (expected fd or analytic)" },
        { "\"simulation\": { \"tangent_update\": \"never\" }", "simulation.tangent_update: unknown value" },
        { "\"outputs\": [ \"momentum\" ]", "outputs[0]: unknown output \"momentum\"" },
        { "\"outputs\": [ { \"point\": \"bob.nose\" } ]", "outputs[0].point: unknown point \"bob.nose\"" },
        { "\"outputs\": [ { \"point\": \"bob.tip\", \"quantities\": [\"jerk\"] } ]", "outputs[0].quantities: element 0" },
        { "\"outputs\": { }", "outputs: expected an array" },
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[1024];
        snprintf(text, sizeof text, base, bad[k].section);
        memset(&err, 0, sizeof err);
        mbs_model *b = mbs_model_load_string(text, "t.json", &err);
        CHECK(b == NULL && err.code == MBS_ERR_MODEL && contains(err.msg, bad[k].expect), "%s: got '%s'",
              bad[k].section, err.msg);
        mbs_model_free(b);
    }
}

/* ------------------------------------------------------------ force outputs */

/* A coordinate-force output needs qd, qdd and the loads at t, which the
 * kinematics held in a data do not give: mbs_output_eval refuses it
 * (MBS_ERR_ARG, values untouched, never NaN) and mbs_output_eval_state
 * evaluates it: tau = m L^2 qdd + m g L sin q for the pendulum (L = 1,
 * m = 1), to tens of roundings of terms of the size |qdd| + g. */
static void test_force_output(void)
{
    const char *json =
        "{ \"name\": \"p\", \"gravity\": [0, -9.81, 0],"
        "  \"bodies\": [ { \"name\": \"bob\", \"mass\": 1, \"com\": [0, -1, 0], \"points\": { \"tip\": [0, -1, 0] } } ],"
        "  \"joints\": [ { \"name\": \"theta\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"bob\","
        "                  \"axis\": [0, 0, 1], \"q0\": [0.5] } ],"
        "  \"outputs\": [ { \"coordinate\": \"theta\", \"quantity\": \"force\" }, { \"point\": \"bob.tip\" } ] }";
    mbs_model *m;
    mbs_data *d;
    if (!load_with_data(json, "force output", &m, &d)) return;
    double q[1] = { 0.5 }, qd[1] = { 2 }, qdd[1] = { -3 }, v[3] = { 7, 7, 7 };
    mbs_output f = mbs_model_output(m, 0), p = mbs_model_output(m, 1), bad = p;
    CHECK(f.kind == MBS_OUTPUT_FORCE && p.kind == MBS_OUTPUT_POSITION, "outputs read");
    mbs_kinematics(m, d, q, qd, qdd);
    CHECK(mbs_output_eval(m, d, q, &f, v) == MBS_ERR_ARG && v[0] == 7, "force output refused, value untouched: %g",
          v[0]);
    CHECK(mbs_output_eval(m, d, q, &p, v) == MBS_OK && fabs(v[0] - sin(0.5)) <= 64 * MBS_EPS, "tip position %g",
          v[0]);
    bad.point = mbs_model_npoints(m);
    CHECK(mbs_output_eval(m, d, q, &bad, v) == MBS_ERR_ARG, "point out of range refused");
    CHECK(mbs_output_eval_state(m, d, 0, q, qd, qdd, &f, v) == MBS_OK, "force output at a state");
    const double tau = qdd[0] + G * sin(q[0]);
    CHECK(fabs(v[0] - tau) <= 64 * MBS_EPS * (fabs(qdd[0]) + G), "force output %.17g, tau %.17g", v[0], tau);
    free_with_data(m, d);
}

/* ------------------------------------------------------------ fixed point: stopping rule */

/* A chain of four links (0.1 m, 1 kg) dragged over a floor: the top link on
 * a floating joint whose translation is driven (x, y, z at constant rates,
 * index-1 constraints, as the anchor lift's hoist), the others on revolute
 * joints; each link carries a contact sphere (Hertz, restitution, regularized
 * Coulomb friction mu = 0.3 at a slip speed of 0.01 m/s). */
#define CHAIN_LINK(n)                                                                                              \
    "{ \"name\": \"" n "\", \"mass\": 1.0, \"com\": [-0.05, 0, 0], \"inertia\": [1e-4, 8.3e-4, 8.3e-4, 0, 0, 0],"  \
    "  \"points\": { \"top\": [0, 0, 0], \"bottom\": [-0.1, 0, 0], \"centre\": [-0.05, 0, 0] } }"
#define CHAIN_FLOOR(n)                                                                                             \
    "{ \"name\": \"floor_" n "\", \"type\": \"contact_plane\", \"body\": \"" n "\", \"point\": \"centre\","         \
    "  \"shape\": \"sphere\", \"radius\": 0.02, \"plane_point\": [0, 0, -0.02], \"plane_normal\": [0, 0, 1],"       \
    "  \"stiffness\": 1e7, \"exponent\": 1.5, \"restitution\": 0.5, \"impact_velocity\": 0.1, \"smoothing\": 1e-7,"  \
    "  \"friction\": 0.3, \"slip_speed\": 0.01 }"
static const char *DRAGGED_CHAIN =
    "{ \"name\": \"dragged_chain\", \"gravity\": [0, 0, -9.81],"
    "  \"bodies\": [ " CHAIN_LINK("L1") ", " CHAIN_LINK("L2") ", " CHAIN_LINK("L3") ", " CHAIN_LINK("L4") " ],"
    "  \"joints\": [ { \"name\": \"hoist\", \"type\": \"floating\", \"parent\": \"ground\", \"child\": \"L1\","
    "                  \"child_point\": \"top\", \"q0\": [0, 0, 0, 1, 0, 0, 0] },"
    "    { \"name\": \"j2\", \"type\": \"revolute\", \"parent\": \"L1\", \"child\": \"L2\", \"parent_point\": \"bottom\","
    "      \"child_point\": \"top\", \"axis\": [0, 1, 0] },"
    "    { \"name\": \"j3\", \"type\": \"revolute\", \"parent\": \"L2\", \"child\": \"L3\", \"parent_point\": \"bottom\","
    "      \"child_point\": \"top\", \"axis\": [0, 0, 1] },"
    "    { \"name\": \"j4\", \"type\": \"revolute\", \"parent\": \"L3\", \"child\": \"L4\", \"parent_point\": \"bottom\","
    "      \"child_point\": \"top\", \"axis\": [0, 1, 0] } ],"
    "  \"forces\": [ " CHAIN_FLOOR("L1") ", " CHAIN_FLOOR("L2") ", " CHAIN_FLOOR("L3") ", " CHAIN_FLOOR("L4") " ],"
    "  \"constraints\": ["
    "    { \"name\": \"hoist_x\", \"type\": \"coordinate\", \"joint\": \"hoist\", \"coordinate\": \"x\", \"value\": 0, \"rate\": 0.1 },"
    "    { \"name\": \"hoist_y\", \"type\": \"coordinate\", \"joint\": \"hoist\", \"coordinate\": \"y\", \"value\": 0, \"rate\": 0.05 },"
    "    { \"name\": \"hoist_z\", \"type\": \"coordinate\", \"joint\": \"hoist\", \"coordinate\": \"z\", \"value\": 0, \"rate\": 0.05 } ],"
    "  \"simulation\": { \"integrator\": \"trapezoidal\", \"formulation\": \"index1\", \"dt\": 0.001, \"tf\": 0.5 } }";

static double dist2(const double *a, const double *b, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) s += (a[k] - b[k]) * (a[k] - b[k]);
    return sqrt(s);
}

/* The fixed point's stopping rule (docs/formulations.md, "Fixed point"):
 * after an increment dD the iterate is within rho/(1 - rho) |dD| of the
 * fixed point, rho the contraction; the iteration stops when that, with
 * rho estimated (rho_e: the ratio of the last two increments, or carried
 * from a recent step), or |dD| itself is below the tolerance. Every step
 * of a run of the dragged chain (index1 with the trapezoidal rule: the
 * fixed point on the fully recursive forward dynamics) is redone from the
 * same state (t, q, qd, qdd) by a second integrator iterated to 1e-16,
 * and the distance e_k = |D_k - D*| of the accepted correction to that
 * solution is asserted.
 *
 * The bound the test derives: the error before the last iteration is
 * e_{k-1} = |(D_k - D*) - dD_k| (dD_k from mbs_trap_fixed_point_stop), so
 * the last iteration contracted the error by rho_k = e_k / e_{k-1}, and
 * e_k = rho_k e_{k-1} <= rho_k (e_k + |dD_k|) gives
 * e_k <= rho_k / (1 - rho_k) |dD_k|. With the rule's stop
 * (rho_e/(1 - rho_e) |dD_k| < tol, or |dD_k| < tol):
 *   e_k <= tol F,  F = rho_k (1 - rho_e) / (rho_e (1 - rho_k))  (or rho_k / (1 - rho_k)),
 * plus the reference's own distance to the solution (its last increment
 * times the same rho_k / (1 - rho_k): the same map near the same point)
 * and the round-off of D recovered from the accelerations
 * (D = beta h^2 (zdd - zdd_n): eps |zdd| beta h^2 per entry, each side).
 * F > 1 where rho_e is below the contraction of the step: the largest F
 * and e / tol are printed. */
static void test_fixed_point_stop(void)
{
    mbs_model *m = load(DRAGGED_CHAIN, "dragged chain");
    if (!m) return;
    mbs_error err;
    mbs_sim_options o = mbs_model_sim_options(m), ot = o;
    ot.tolerance = 1e-16;
    ot.max_iterations = 100;
    mbs_data *d = mbs_data_create(m, NULL), *dt = mbs_data_create(m, NULL);
    mbs_integrator *it = mbs_integrator_create(m, d, &o, &err);
    CHECK(it != NULL, "create: %s", err.msg);
    mbs_integrator *ref = mbs_integrator_create(m, dt, &ot, &err);
    CHECK(ref != NULL, "create: %s", err.msg);
    const int nq = mbs_model_nq(m), steps = (int)lround(o.tf / o.dt);
    const double h = o.dt, tol = o.tolerance, s = 0.25 * h * h;
    const size_t bytes = sizeof(double) * (size_t)nq;
    double *buf = calloc(4 * (size_t)nq, sizeof(double));
    double *zddn = buf, *D = zddn + nq, *Ds = D + nq, *ek = Ds + nq;
    int carried = 0, multi = 0, ok = it && ref && buf;
    double worst = 0, worst_F = 0, worst_ratio = 0, rho_max = 0;
    for (int n = 0; ok && n < steps; n++) {
        memcpy(zddn, it->qdd, bytes);
        ref->t = it->t;
        memcpy(ref->q, it->q, bytes);
        memcpy(ref->qd, it->qd, bytes);
        memcpy(ref->qdd, it->qdd, bytes);
        const long i0 = it->st.iterations;
        if (mbs_integrator_step(ref, h, &err) || mbs_integrator_step(it, h, &err)) {
            CHECK(0, "step %d: %s", n, err.msg);
            break;
        }
        double rho_e, ndz, rho_r, ndz_r, zdd = 0;
        const double *dD = mbs_trap_fixed_point_stop(it, &rho_e, &ndz);
        mbs_trap_fixed_point_stop(ref, &rho_r, &ndz_r);
        /* D as the step holds it: zdd = zdd_n + D / (beta h^2) */
        for (int k = 0; k < nq; k++) {
            D[k] = s * (it->qdd[k] - zddn[k]);
            Ds[k] = s * (ref->qdd[k] - zddn[k]);
            ek[k] = D[k] - Ds[k] - dD[k];   /* the error before the last iteration */
            zdd += it->qdd[k] * it->qdd[k] + zddn[k] * zddn[k];
        }
        double ep = 0;
        for (int k = 0; k < nq; k++) ep += ek[k] * ek[k];
        ep = sqrt(ep);
        const double e = dist2(D, Ds, nq), roff = 4 * s * MBS_EPS * sqrt(zdd), rho = ep > 0 ? e / ep : 0;
        const int k = (int)(it->st.iterations - i0);
        carried += k == 1 && rho_e >= 0;
        multi += k > 1;
        CHECK(rho < 1, "step %d: the last iteration contracted the error (%g -> %g)", n, ep, e);
        if (!(rho < 1)) break;
        if (rho > rho_max) rho_max = rho;
        const int on_rate = !(ndz < tol);
        CHECK(!on_rate || (rho_e >= 0 && rho_e < 1 && rho_e / (1 - rho_e) * ndz < tol),
              "step %d: stopped with |dD| = %g, rho_e = %g", n, ndz, rho_e);
        const double F = on_rate ? rho * (1 - rho_e) / (rho_e * (1 - rho)) : rho / (1 - rho);
        const double bound = tol * F + rho / (1 - rho) * ndz_r + roff;
        CHECK(e <= bound, "step %d (%d iterations): |D - D*| = %.3e > %.3e (rho %.4f, rho_e %.4f, |dD| %.3e)",
              n, k, e, bound, rho, rho_e, ndz);
        if (e / tol > worst) worst = e / tol;
        if (F > worst_F) worst_F = F;
        if (e / bound > worst_ratio) worst_ratio = e / bound;
    }
    printf("fixed point stop (dragged chain, %d steps): %d in one iteration on a carried rate, %d in more; "
           "max contraction %.4f; max |D - D*| / tol %.3f; max F %.3f; max |D - D*| / bound %.3f\n",
           steps, carried, multi, rho_max, worst, worst_F, worst_ratio);
    CHECK(carried > steps / 10 && multi > steps / 10, "both paths exercised: %d carried, %d iterated", carried, multi);
    free(buf);
    mbs_integrator_free(it);
    mbs_integrator_free(ref);
    mbs_data_free(d);
    mbs_data_free(dt);
    mbs_model_free(m);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);   /* progress lines in order with the failures on stderr */
    test_pendulum_period();
    test_double_pendulum_modes();
    test_convergence();
    test_agreement();
    test_free_body();
    test_errors();
    test_settling();
    test_dissipation();
    test_tangent_variants();
    test_collapsed_spring();
    test_model_sections();
    test_force_output();
    test_fixed_point_stop();
    return mbs_test_summary("test_integrators");
}
