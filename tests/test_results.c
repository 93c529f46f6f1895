/*
 * test_results.c - no public call hands back a NaN or an infinity as a
 * result (docs/api.md, "Errors"): at states whose results overflow, every
 * family of entry points returns MBS_ERR_NUMERIC with a message naming the
 * result ("WHAT: NAME[ENTRY] is not finite"), and at large states whose
 * results are finite none of them refuses. Also the time grid limit of the
 * simulation options (MBS_SIM_MAX_STEPS).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A revolute joint about z, then a slider along the arm: M depends on the
 * slider's position (M_11 = I + m s^2), which a large s overflows. */
static const char *const ARM_SLIDER =
    "{ \"name\": \"arm_slider\", \"gravity\": [0, -9.81, 0],"
    "  \"bodies\": ["
    "    { \"name\": \"arm\", \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [0.1, 0.1, 0.1, 0, 0, 0] },"
    "    { \"name\": \"slider\", \"mass\": 1, \"com\": [0, 0, 0], \"inertia\": [0.01, 0.01, 0.01, 0, 0, 0],"
    "      \"points\": { \"tip\": [0.1, 0, 0] }, \"vectors\": { \"ax\": [1, 0, 0] } } ],"
    "  \"joints\": ["
    "    { \"name\": \"turn\", \"type\": \"revolute\", \"parent\": \"ground\", \"child\": \"arm\","
    "      \"parent_point\": [0, 0, 0], \"child_point\": [0, 0, 0], \"axis\": [0, 0, 1] },"
    "    { \"name\": \"slide\", \"type\": \"prismatic\", \"parent\": \"arm\", \"child\": \"slider\","
    "      \"parent_point\": [0, 0, 0], \"child_point\": [0, 0, 0], \"axis\": [1, 0, 0] } ] }";

/* One body on a slider: its velocity enters no acceleration, so only the
 * kinetic energy (m v^2 / 2) can overflow. */
static const char *const SLIDER =
    "{ \"name\": \"slider\", \"gravity\": [0, -9.81, 0],"
    "  \"bodies\": [ { \"name\": \"block\", \"mass\": 2, \"com\": [0, 0, 0], \"inertia\": [1, 1, 1, 0, 0, 0] } ],"
    "  \"joints\": [ { \"name\": \"x\", \"type\": \"prismatic\", \"parent\": \"ground\", \"child\": \"block\","
    "      \"parent_point\": [0, 0, 0], \"child_point\": [0, 0, 0], \"axis\": [1, 0, 0] } ] }";

static int has(const char *msg, const char *part) { return msg && strstr(msg, part) != NULL; }

static int all_finite(const double *x, int n)
{
    for (int k = 0; k < n; k++)
        if (!isfinite(x[k])) return 0;
    return 1;
}

/* dynamics and derivatives of the double pendulum at qd = 1e200: the
 * accelerations (qd^2) overflow */
static void test_dynamics(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    mbs_data *d = mbs_data_create(m, NULL);
    const int nq = 2, np = mbs_model_nparams(m);
    double q[2] = { 0.5, 0.5 }, qd[2] = { 1e200, 1e200 }, qdd[2] = { 0, 0 }, out[2], A[4], B[4], C[4], P[8];
    double dq[2] = { 1, 0 };
    const char *e;

    CHECK(mbs_kinematics(m, d, q, qd, qdd) == MBS_ERR_NUMERIC, "kinematics");
    e = mbs_data_error(d);
    CHECK(has(e, "kinematics: acceleration of body 'body1' is not finite"), "kinematics: %s", e);
    CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, out) == MBS_ERR_NUMERIC, "inverse dynamics");
    e = mbs_data_error(d);
    CHECK(has(e, "inverse dynamics: tau[theta1] is not finite"), "inverse dynamics: %s", e);
    CHECK(mbs_bias_forces(m, d, q, qd, out) == MBS_ERR_NUMERIC, "bias forces");
    for (int alg = 0; alg < 2; alg++) {
        CHECK(mbs_forward_dynamics(m, d, (mbs_fd_algorithm)alg, q, qd, NULL, out) == MBS_ERR_NUMERIC, "FD %d", alg);
        e = mbs_data_error(d);
        CHECK(has(e, "is not finite"), "forward dynamics %d: %s", alg, e);
        CHECK(mbs_forward_dynamics_derivatives(m, d, (mbs_fd_algorithm)alg, q, qd, NULL, out, A, B, C) ==
                  MBS_ERR_NUMERIC, "FD derivatives %d", alg);
        CHECK(mbs_forward_dynamics_param_derivatives(m, d, (mbs_fd_algorithm)alg, q, qd, NULL, out, P) ==
                  MBS_ERR_NUMERIC, "FD parameter derivatives %d", alg);
        CHECK(mbs_forward_dynamics_directional(m, d, (mbs_fd_algorithm)alg, q, qd, NULL, dq, NULL, NULL, NULL, out,
                                               C) == MBS_ERR_NUMERIC, "FD directional %d", alg);
    }
    CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, out, A, B) == MBS_ERR_NUMERIC, "ID derivatives");
    e = mbs_data_error(d);
    CHECK(has(e, "derivatives: ") && has(e, "is not finite"), "ID derivatives: %s", e);
    CHECK(mbs_inverse_dynamics_param_derivatives(m, d, q, qd, qdd, P) == MBS_ERR_NUMERIC, "ID parameter derivatives");
    e = mbs_data_error(d);
    CHECK(has(e, "dtau/drho[theta1][L1] is not finite"), "ID parameter derivatives: %s", e);
    CHECK(mbs_inverse_dynamics_directional(m, d, q, qd, qdd, dq, NULL, NULL, NULL, out) == MBS_ERR_NUMERIC,
          "ID directional");
    double work[4 * 2];
    CHECK(mbs_tangent_fd(NULL, m, d, q, qd, qdd, A, B, work) == MBS_ERR_NUMERIC, "tangent fd");
    e = mbs_data_error(d);
    CHECK(has(e, "finite-difference tangent: K[theta1][theta1] is not finite"), "tangent fd: %s", e);
    CHECK(mbs_tangent_analytic(NULL, m, d, q, qd, qdd, A, B, work) == MBS_ERR_NUMERIC, "tangent analytic");

    /* large but representable: every call succeeds and returns finite numbers */
    qd[0] = qd[1] = 1e100;
    CHECK(mbs_kinematics(m, d, q, qd, qdd) == MBS_OK, "kinematics at qd = 1e100: %s", mbs_data_error(d));
    CHECK(mbs_data_error(d)[0] == '\0', "no message left");
    const double T = mbs_kinetic_energy(m, d);
    CHECK(isfinite(T) && T > 1e199, "kinetic energy %g", T);
    double r[3], v[3], a[3];
    mbs_point_kinematics(m, d, mbs_point_find(m, "body2.Q"), r, v, a);
    CHECK(all_finite(r, 3) && all_finite(v, 3) && all_finite(a, 3), "point Q");
    CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, out) == MBS_OK && all_finite(out, nq), "ID at 1e100");
    CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, out, A, B) == MBS_OK && all_finite(A, 4),
          "ID derivatives at 1e100: %s", mbs_data_error(d));
    CHECK(mbs_forward_dynamics(m, d, MBS_FD_RECURSIVE, q, qd, NULL, out) == MBS_OK && all_finite(out, nq),
          "FD at 1e100");
    (void)np;
    mbs_data_free(d);
    mbs_model_free(m);
}

/* the mass matrix overflows with the slider's position; the kinematics
 * queries of a point and a vector stay within the check */
static void test_mass_matrix(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(ARM_SLIDER, "arm_slider", &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    mbs_data *d = mbs_data_create(m, NULL);
    double q[2] = { 0.3, 1e200 }, M[4];
    CHECK(mbs_mass_matrix(m, d, q, M) == MBS_ERR_NUMERIC, "mass matrix");
    CHECK(has(mbs_data_error(d), "mass matrix: M[turn][turn] is not finite"), "%s", mbs_data_error(d));
    q[1] = 1e100;
    CHECK(mbs_mass_matrix(m, d, q, M) == MBS_OK && all_finite(M, 4), "at s = 1e100: %s", mbs_data_error(d));
    /* kinematics at a large position and rate: the queries checked through their values */
    double qd[2] = { 1e110, 0 }, r[3], v[3], a[3];
    CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_ERR_NUMERIC, "kinematics: w^2 s overflows");
    CHECK(has(mbs_data_error(d), "kinematics: acceleration of body 'slider' is not finite"), "%s",
          mbs_data_error(d));
    qd[0] = 1e-20;
    CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_OK, "kinematics, finite: %s", mbs_data_error(d));
    mbs_point_kinematics(m, d, 0, r, v, a);
    CHECK(all_finite(r, 3) && all_finite(v, 3) && all_finite(a, 3), "point");
    mbs_vector_kinematics(m, d, 0, r, v, a);
    CHECK(all_finite(r, 3) && all_finite(v, 3) && all_finite(a, 3), "vector");
    mbs_data_free(d);
    mbs_model_free(m);
}

/* the body quantities are finite, the kinetic energy is not: found by the
 * exact path of the kinematics check */
static void test_energy(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load_string(SLIDER, "slider", &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    mbs_data *d = mbs_data_create(m, NULL);
    double q[1] = { 0 }, qd[1] = { 1e160 }, tau[1];
    CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_ERR_NUMERIC, "kinematics");
    CHECK(has(mbs_data_error(d), "kinematics: the kinetic energy is not finite (inf)"), "%s", mbs_data_error(d));
    CHECK(mbs_inverse_dynamics(m, d, q, qd, NULL, tau) == MBS_ERR_NUMERIC, "inverse dynamics leaves them too");
    qd[0] = 1e150;
    CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_OK && isfinite(mbs_kinetic_energy(m, d)), "1e150: %s",
          mbs_data_error(d));
    mbs_data_free(d);
    mbs_model_free(m);
}

/* constraints and kinematic problems of the five-bar at a huge rate:
 * Phi_q is finite, the acceleration terms (qd^2) are not */
static void test_constraints(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/fivebar.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    mbs_data *d = mbs_data_create(m, NULL);
    const int nq = mbs_model_nq(m), nc = mbs_model_nconstraints(m) + mbs_model_neuler_constraints(m);
    double *q = calloc((size_t)nq, 8), *qd = calloc((size_t)nq, 8), *qdd = calloc((size_t)nq, 8);
    double *c = calloc((size_t)nc + 1, 8), *phid = calloc((size_t)nc + 1, 8), viol[3];
    mbs_model_initial_state(m, q, qd);
    for (int k = 0; k < nq; k++) qd[k] = 1e200;
    CHECK(mbs_constraint_acceleration_rhs(m, d, q, qd, 0, c) == MBS_ERR_NUMERIC, "acceleration rhs");
    CHECK(has(mbs_data_error(d), "constraints: c[") && has(mbs_data_error(d), "is not finite"), "%s",
          mbs_data_error(d));
    CHECK(mbs_constraint_velocity(m, d, q, qd, 0, phid) == MBS_OK && all_finite(phid, nc), "velocity: %s",
          mbs_data_error(d));
    CHECK(mbs_solve_acceleration(m, d, q, qd, qdd, 0, NULL) == MBS_ERR_NUMERIC, "acceleration problem");
    CHECK(has(mbs_data_error(d), "acceleration problem: qdd[") || has(mbs_data_error(d), "is not finite"), "%s",
          mbs_data_error(d));
    CHECK(mbs_constraint_violation(m, d, 0, q, qd, qdd, viol) == MBS_ERR_NUMERIC, "violation");
    CHECK(has(mbs_data_error(d), "is not finite"), "%s", mbs_data_error(d));
    free(q); free(qd); free(qdd); free(c); free(phid);
    mbs_data_free(d);
    mbs_model_free(m);
}

static void test_euler_rates(void)
{
    const double p[4] = { 0.5, 0.5, 0.5, 0.5 }, big[4] = { 1e308, -1e308, 1e308, -1e308 };
    double w[3], pd[4];
    CHECK(mbs_euler_omega_from_rates(p, big, w) == MBS_ERR_NUMERIC, "omega from rates overflows");
    const double pb[4] = { 1e200, 0, 0, 0 }, wb[3] = { 1e200, 1e200, 1e200 };   /* (|p| = 1 cannot overflow) */
    CHECK(mbs_euler_rates_from_omega(pb, wb, pd) == MBS_ERR_NUMERIC, "rates from omega overflow");
    const double ok[4] = { 0.1, -0.1, 0.2, -0.2 };
    CHECK(mbs_euler_omega_from_rates(p, ok, w) == MBS_OK && all_finite(w, 3), "finite");
}

/* the time grid: at most MBS_SIM_MAX_STEPS steps, counted without overflow */
static void test_time_grid(void)
{
    mbs_error err;
    mbs_sim_options o = mbs_sim_options_default();
    o.dt = 1;
    o.tf = 1e19;   /* (long)(tf / dt) overflows a 64-bit long */
    CHECK(mbs_sim_options_check(&o, &err) == MBS_ERR_ARG, "1e19 steps refused");
    CHECK(has(err.msg, "is 1e+19 steps; at most 1e+09 are allowed (MBS_SIM_MAX_STEPS)"), "%s", err.msg);
    CHECK(mbs_sim_steps(&o) == -1, "mbs_sim_steps of a refused grid: %ld", mbs_sim_steps(&o));
    o.dt = 1e-10;
    o.tf = 1e10;
    CHECK(mbs_sim_options_check(&o, &err) == MBS_ERR_ARG, "1e20 steps refused");
    o.tf = 0.1;   /* 1e9 steps: the limit itself is allowed */
    CHECK(mbs_sim_options_check(&o, &err) == MBS_OK, "1e9 steps allowed: %s", err.msg);
    CHECK(mbs_sim_steps(&o) == MBS_SIM_MAX_STEPS, "1e9 steps: %ld", mbs_sim_steps(&o));
    o.tf = 0.2;
    CHECK(mbs_sim_options_check(&o, &err) == MBS_ERR_ARG, "2e9 steps refused");
    /* far from t = 0, a step below the resolution of t is refused */
    o.t0 = 1e15;
    o.tf = 1e15 + 1;
    o.dt = 0.01;
    CHECK(mbs_sim_options_check(&o, &err) == MBS_ERR_ARG, "t0 = 1e15, dt = 0.01 refused");
    CHECK(has(err.msg, "the times t0 + k dt are not resolved"), "%s", err.msg);
    o = mbs_sim_options_default();
    o.tf = 0.0105;   /* the last step shortened */
    o.dt = 0.001;
    CHECK(mbs_sim_steps(&o) == 11, "steps to 0.0105: %ld", mbs_sim_steps(&o));
    /* mbs_simulate refuses it as well (through the options check of the integrator) */
    mbs_model *m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    if (!m) return;
    mbs_data *d = mbs_data_create(m, NULL);
    o.dt = 1;
    o.tf = 1e19;
    memset(&err, 0, sizeof err);
    CHECK(mbs_simulate(m, d, &o, NULL, NULL, NULL, NULL, NULL, &err) == MBS_ERR_ARG, "simulate refuses");
    CHECK(has(err.msg, "MBS_SIM_MAX_STEPS"), "%s", err.msg);
    mbs_data_free(d);
    mbs_model_free(m);
}

int main(void)
{
    test_dynamics();
    test_mass_matrix();
    test_energy();
    test_constraints();
    test_euler_rates();
    test_time_grid();
    return mbs_test_summary("results");
}
