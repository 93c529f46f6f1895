/*
 * test_poses.c - what viewers read from a run: body poses as outputs
 * (MBS_OUTPUT_POSE, "outputs": ["poses", {"body": ...}]), the rotation to
 * quaternion conversion they use, and objective integrands at a state
 * (mbs_objective_integrand_at).
 *
 * Tolerances, in units of eps = 2.2e-16. The rotation A = A(q) of a unit
 * quaternion carries <= 3 eps per entry (two products, a sum). Its
 * quaternion q' (Shepperd: the largest of 1 + tr, 1 + A_ii - ...: >= 1, so
 * the scale s = 1/(2 sqrt(d)) is <= 1/2) has each component within 5 eps
 * (3 roundings of the sum or difference, the square root, the product by
 * s, plus A's 3 eps times 2 s <= 1). Then |q'| - 1 is within 2 x 5 eps from
 * the components plus 4 for the sum of squares and the root: <= 14 eps,
 * bound 16 eps. The rebuilt A(q') differs from A by its own 3 eps, A's 3
 * eps, and the conversion error through dA/dq (entries <= 4 in size, four
 * components): 16 x 5 eps: 86 eps in all, bound 100 eps. The integrand
 * evaluated after a run at the run's states, against mbs_objective_trace's
 * values: the same formulas at the same states, reached along other code
 * paths (the trace inside the sensitivity code's run, this check from a
 * fresh kinematics pass), so they may differ by the round-off of the recursions, MBS_ROUNDOFF(bodies), relative to
 * max(1, |g|).
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "random_model.h"
#include "testutil.h"

/* A(q) of a unit quaternion [w, x, y, z] */
static void quat_matrix(const double q[4], double A[9])
{
    const double w = q[0], x = q[1], y = q[2], z = q[3];
    A[0] = 1 - 2 * (y * y + z * z); A[1] = 2 * (x * y - w * z);     A[2] = 2 * (x * z + w * y);
    A[3] = 2 * (x * y + w * z);     A[4] = 1 - 2 * (x * x + z * z); A[5] = 2 * (y * z - w * x);
    A[6] = 2 * (x * z - w * y);     A[7] = 2 * (y * z + w * x);     A[8] = 1 - 2 * (x * x + y * y);
}

static void check_quaternion(const double A[9], const char *what)
{
    double q[4], B[9];
    mbs_rotation_quaternion(A, q);
    quat_matrix(q, B);
    double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    CHECK(fabs(n - 1) <= 16 * DBL_EPSILON && q[0] >= 0, "%s: |q| = %.17g, w = %g", what, n, q[0]);
    const double e = mbs_rel_err(B, A, 9);
    CHECK(e <= 100 * DBL_EPSILON, "%s: rebuilt rotation differs by %.3g", what, e);
}

static void test_quaternions(void)
{
    mbs_rng r;
    mbs_rng_seed(&r, 5);
    for (int k = 0; k < 200; k++) {
        /* random unit quaternions, including rotations by nearly pi (w ~ 0) */
        double q[4], A[9], n = 0;
        for (int c = 0; c < 4; c++) q[c] = mbs_rng_uniform(&r, -1, 1);
        if (k % 4 == 0) q[0] = 1e-9 * q[0];
        for (int c = 0; c < 4; c++) n += q[c] * q[c];
        for (int c = 0; c < 4; c++) q[c] /= sqrt(n);
        quat_matrix(q, A);
        check_quaternion(A, "random rotation");
    }
    static const double flips[3][9] = { { 1, 0, 0, 0, -1, 0, 0, 0, -1 }, { -1, 0, 0, 0, 1, 0, 0, 0, -1 },
                                        { -1, 0, 0, 0, -1, 0, 0, 0, 1 } };
    for (int k = 0; k < 3; k++) check_quaternion(flips[k], "rotation by pi about an axis");
}

/* "outputs": ["poses", {"body": "b2"}]: the pose columns are the body's
 * origin and the quaternion of its rotation */
static void test_pose_outputs(void)
{
    static const char *json =
        "{\"name\": \"p\", \"bodies\": ["
        "{\"name\": \"b1\", \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [0.01, 0.02, 0.02, 0, 0, 0]},"
        "{\"name\": \"b2\", \"mass\": 1, \"com\": [0.5, 0, 0], \"inertia\": [0.01, 0.02, 0.02, 0, 0, 0]}],"
        "\"joints\": ["
        "{\"name\": \"j1\", \"type\": \"spherical\", \"parent\": \"ground\", \"child\": \"b1\"},"
        "{\"name\": \"j2\", \"type\": \"revolute\", \"parent\": \"b1\", \"child\": \"b2\","
        " \"parent_point\": [1, 0, 0], \"axis\": [0, 1, 1]}],"
        "\"outputs\": [\"poses\", {\"body\": \"b2\"}, \"energy\"]}";
    mbs_error err;
    mbs_model *m = mbs_model_load_string(json, "poses.json", &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    CHECK(mbs_model_noutputs(m) == 4, "%d outputs", mbs_model_noutputs(m));
    mbs_output o = mbs_model_output(m, 2);
    char name[64];
    mbs_output_column_name(m, &o, 4, name, sizeof name);
    CHECK(o.kind == MBS_OUTPUT_POSE && o.body == 2 && mbs_output_ncolumns(&o) == 7 && !strcmp(name, "b2.qx"),
          "output 2: kind %d body %d, column 4 %s", (int)o.kind, o.body, name);
    mbs_data *d = mbs_data_create(m, &err);
    mbs_rng r;
    mbs_rng_seed(&r, 9);
    double q[5], v[MBS_OUTPUT_MAX_COLUMNS], A[9], org[3], qa[4];
    for (int s = 0; s < 10; s++) {
        mbs_test_random_state(&r, m, q, NULL, NULL);
        mbs_kinematics(m, d, q, NULL, NULL);
        for (int k = 0; k < 3; k++) {
            o = mbs_model_output(m, k);
            mbs_output_eval(m, d, q, &o, v);
            mbs_body_pose(d, o.body, A, org);
            mbs_rotation_quaternion(A, qa);
            CHECK(!memcmp(v, org, sizeof org) && !memcmp(v + 3, qa, sizeof qa), "pose of body %d", o.body);
        }
    }
    mbs_data_free(d);
    mbs_model_free(m);
    m = mbs_model_load_string("{\"name\": \"p\", \"bodies\": [{\"name\": \"b1\", \"mass\": 1}],"
                              "\"joints\": [{\"name\": \"j1\", \"type\": \"revolute\", \"parent\": \"ground\","
                              " \"child\": \"b1\"}], \"outputs\": [{\"body\": \"nope\"}]}", "bad.json", &err);
    CHECK(!m && strstr(err.msg, "outputs[0].body") && strstr(err.msg, "nope"), "unknown body: %s", err.msg);
    mbs_model_free(m);
}

typedef struct { mbs_data *d; const mbs_model *m; int k; double worst; int n; double *g; int cap; } trace_ctx;

static int record_g(void *user, double t, double g, double psi)
{
    (void)t; (void)psi;
    trace_ctx *c = user;
    if (c->n < c->cap) c->g[c->n++] = g;
    return 0;
}

static int compare_g(void *user, const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                     const double *qdd)
{
    (void)d;
    trace_ctx *c = user;
    double g;
    CHECK(mbs_objective_integrand_at(m, c->d, c->k, 0, t, q, qd, qdd, &g) == MBS_OK, "integrand at t = %g", t);
    if (c->n < c->cap) c->worst = fmax(c->worst, fabs(g - c->g[c->n]) / fmax(1, fabs(c->g[c->n])));
    c->n++;
    return 0;
}

static void test_integrands(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("tests/models/double_pendulum_objectives.json"), &err);
    CHECK(m != NULL, "%s", err.msg);
    if (!m) return;
    mbs_sens_options o = mbs_sens_options_default(m);
    o.sim.tf = 0.2;
    o.sim.project = 0;
    for (int k = 0; k < mbs_model_nobjectives(m); k++) {
        trace_ctx c = { mbs_data_create(m, &err), m, k, 0, 0, calloc(1000, sizeof(double)), 1000 };
        CHECK(mbs_objective_trace(m, &o, k, NULL, record_g, &c, &err) == MBS_OK, "trace: %s", err.msg);
        c.cap = c.n;
        c.n = 0;
        mbs_data *d = mbs_data_create(m, &err);
        CHECK(mbs_simulate(m, d, &o.sim, NULL, NULL, compare_g, &c, NULL, &err) == MBS_OK, "run: %s", err.msg);
        CHECK(c.n == c.cap && c.worst <= MBS_ROUNDOFF(mbs_model_nbodies(m)), "objective %s: %d of %d states, worst %.3g",
              mbs_objective_name(m, k), c.n, c.cap, c.worst);
        mbs_data_free(d);
        mbs_data_free(c.d);
        free(c.g);
    }
    double g;
    mbs_data *d = mbs_data_create(m, &err);
    double q[2] = { 0 }, qd[2] = { 0 }, qdd[2] = { 0 };
    CHECK(mbs_objective_integrand_at(m, d, 99, 0, 0, q, qd, qdd, &g) == MBS_ERR_ARG, "bad index accepted");
    mbs_data_free(d);
    mbs_model_free(m);
}

int main(void)
{
    test_quaternions();
    test_pose_outputs();
    test_integrands();
    return mbs_test_summary("test_poses");
}
