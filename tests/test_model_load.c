/*
 * test_model_load.c - loading valid models: sizes, names, tree order,
 * model-vector layout, parameters, re-parameterization and the DH placement;
 * the velocity layout (sizes, offsets, conventions, names) of every shipped
 * model and of random trees of every joint type.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static mbs_model *load_ok(const char *json, const char *name)
{
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load_string(json, name, &err);
    CHECK(m != NULL, "loading %s failed: %s", name, err.msg);
    return m;
}

/* ---- small 3x3 helpers (row-major) ---- */
static void mul(double *R, const double *A, const double *B)
{
    double T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            T[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
    memcpy(R, T, sizeof T);
}
static void mul_bt(double *R, const double *A, const double *B)
{
    double T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            T[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
    memcpy(R, T, sizeof T);
}
static void mv(double *r, const double *A, const double *a)
{
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = A[3 * i] * a[0] + A[3 * i + 1] * a[1] + A[3 * i + 2] * a[2];
    memcpy(r, t, sizeof t);
}
static void rotz(double *R, double t)
{
    double c = cos(t), s = sin(t);
    double M[9] = { c, -s, 0, s, c, 0, 0, 0, 1 };
    memcpy(R, M, sizeof M);
}
static void rotx(double *R, double t)
{
    double c = cos(t), s = sin(t);
    double M[9] = { 1, 0, 0, 0, c, -s, 0, s, c };
    memcpy(R, M, sizeof M);
}
static double det3(const double *A)
{
    return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
           A[2] * (A[3] * A[7] - A[4] * A[6]);
}

/* Every joint frame is a proper orthonormal triad. */
static void check_frames(const mbs_model *m)
{
    for (int i = 1; i <= m->nb; i++) {
        for (int side = 0; side < 2; side++) {
            const double *X = m->x + (side ? m->joint[i].x_Xc : m->joint[i].x_Xp);
            double XtX[9];
            double Xt[9];
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) Xt[3 * r + c] = X[3 * c + r];
            mul(XtX, Xt, X);
            double e = 0;
            for (int k = 0; k < 9; k++) e = fmax(e, fabs(XtX[k] - (k % 4 == 0 ? 1 : 0)));
            /* built from unit vectors by cross products and normalizations: a few roundings per entry,
             * 3-term sums in X^T X and the determinant: 16 eps */
            CHECK(e <= 16 * MBS_EPS, "joint %s side %d: frame not orthonormal (err %g)", m->joint[i].name, side, e);
            CHECK_CLOSE(det3(X), 1.0, 16 * MBS_EPS, "joint %s side %d: det", m->joint[i].name, side);
            double ar = X[0] * X[1] + X[3] * X[4] + X[6] * X[7];
            CHECK(fabs(ar) <= 8 * MBS_EPS, "joint %s: ref not orthogonal to axis (%g)", m->joint[i].name, ar);
        }
    }
}

/* column c of a row-major 3x3 */
static void column(const double *X, int c, double *v)
{
    v[0] = X[c];
    v[1] = X[3 + c];
    v[2] = X[6 + c];
}

static void check_vec(const double *a, double x, double y, double z, const char *what)
{
    double b[3] = { x, y, z };
    /* a normalized or rotated vector of the model against its closed form: a few roundings */
    CHECK(mbs_rel_err(a, b, 3) <= 16 * MBS_EPS, "%s = [%g, %g, %g], expected [%g, %g, %g]", what, a[0], a[1], a[2],
          x, y, z);
}

/* ---------------------------------------------------------------- pendulum (file) */

static void test_pendulum_file(void)
{
    mbs_error err = { 0, "" };
    const char *path = mbs_test_path("tests/models/pendulum.json");
    mbs_model *m = mbs_model_load(path, &err);
    CHECK(m != NULL, "load %s: %s", path, err.msg);
    if (!m) return;
    CHECK(strcmp(mbs_model_name(m), "pendulum") == 0, "name %s", mbs_model_name(m));
    CHECK(mbs_model_nbodies(m) == 2, "nbodies %d", mbs_model_nbodies(m));
    CHECK(mbs_model_nq(m) == 2 && mbs_model_ndof(m) == 2, "nq %d ndof %d", mbs_model_nq(m), mbs_model_ndof(m));
    CHECK(mbs_model_nconstraints(m) == 0, "nconstraints");
    CHECK(mbs_model_npoints(m) == 4, "npoints %d", mbs_model_npoints(m));
    CHECK(mbs_model_nvectors(m) == 1, "nvectors %d", mbs_model_nvectors(m));
    CHECK(mbs_model_nparams(m) == 2, "nparams %d", mbs_model_nparams(m));
    CHECK(strcmp(mbs_coord_name(m, 0), "j1") == 0 && strcmp(mbs_coord_name(m, 1), "j2") == 0, "coord names");
    CHECK(mbs_coord_name(m, 2) == NULL, "coord name out of range");
    CHECK(strcmp(mbs_body_name(m, 0), "ground") == 0, "ground name");
    CHECK(mbs_body_find(m, "ground") == 0 && mbs_body_find(m, "link2") == 2 && mbs_body_find(m, "x") == -1, "find");
    CHECK(mbs_body_parent(m, 2) == 1 && mbs_body_parent(m, 1) == 0, "parents");
    CHECK(mbs_joint_type_of(m, 2) == MBS_JOINT_REVOLUTE, "type");
    CHECK(strcmp(mbs_joint_name(m, 1), "j1") == 0, "joint name");
    CHECK(mbs_joint_nq(m, 2) == 1 && mbs_joint_coord_offset(m, 2) == 1, "joint 2 coordinates");

    double g[3];
    mbs_model_gravity(m, g);
    check_vec(g, 0, -9.81, 0, "gravity");
    double q[2], qd[2];
    mbs_model_initial_state(m, q, qd);
    CHECK(q[0] == 0.3 && q[1] == 0 && qd[0] == 0.1 && qd[1] == 0, "initial state %g %g %g %g", q[0], q[1], qd[0],
          qd[1]);

    /* parameters applied: L1 = 1.2 -> tip[0] = 1.2, com[0] = 0.6; m2 = 1.5 -> mass 3.25 */
    int tip = mbs_point_find(m, "link1.tip");
    CHECK(tip >= 0 && mbs_point_body(m, tip) == 1, "link1.tip");
    if (tip >= 0) CHECK_CLOSE(m->x[m->point[tip].x], 1.2, 4 * MBS_EPS, "tip[0] from L1");
    CHECK_CLOSE(m->x[m->body[1].x_com], 0.6, 4 * MBS_EPS, "com[0] = 0.5 L1");
    CHECK_CLOSE(mbs_body_mass(m, 2), 3.25, 4 * MBS_EPS, "mass = 2 m2 + 0.25");
    CHECK_CLOSE(mbs_body_mass(m, 1), 2.0, 4 * MBS_EPS, "mass link1");
    /* the joint placed on link1.tip reads the same model entry */
    if (tip >= 0) CHECK(m->joint[2].x_ppoint == m->point[tip].x, "j2 parent point is link1.tip");
    int base2 = mbs_point_find(m, "link2.base");
    if (base2 >= 0) CHECK(m->joint[2].x_cpoint == m->point[base2].x, "j2 child point is link2.base");
    int L1 = mbs_param_find(m, "L1");
    CHECK(L1 == 0 && mbs_param_value(m, L1) == 1.2 && mbs_param_lower(m, L1) == 0.5 && mbs_param_upper(m, L1) == 2,
          "L1 info");
    CHECK(m->param[0].ntargets == 2, "L1 has two targets");
    CHECK(isinf(mbs_param_upper(m, 1)) && mbs_param_upper(m, 1) > 0, "m2 default upper bound");
    /* 3x3 inertia form */
    const double *I2 = m->x + m->body[2].x_inertia;
    CHECK(I2[0] == 0.005 && I2[1] == 0.05 && I2[2] == 0.05 && I2[3] == 0 && I2[4] == 0 && I2[5] == 0,
          "inertia from 3x3");
    /* vector normalized */
    CHECK(strcmp(mbs_vector_name(m, 0), "link1.u") == 0 && mbs_vector_body(m, 0) == 1, "vector name");
    check_vec(m->x + m->vector[0].x, 0, 0, 1, "link1.u");
    /* default revolute frame with axis z: [z, x, y] */
    const double *Xp = m->x + m->joint[1].x_Xp;
    double c0[3], c1[3], c2[3];
    column(Xp, 0, c0);
    column(Xp, 1, c1);
    column(Xp, 2, c2);
    check_vec(c0, 0, 0, 1, "j1 axis");
    check_vec(c1, 1, 0, 0, "j1 ref");
    check_vec(c2, 0, 1, 0, "j1 axis x ref");
    check_frames(m);

    /* re-parameterization */
    double vals[2] = { 1.5, 2.0 };
    mbs_model *m2 = mbs_model_with_params(m, vals, &err);
    CHECK(m2 != NULL, "with_params: %s", err.msg);
    if (m2) {
        CHECK_CLOSE(m2->x[m2->point[tip].x], 1.5, 4 * MBS_EPS, "new tip");
        CHECK_CLOSE(m2->x[m2->body[1].x_com], 0.75, 4 * MBS_EPS, "new com");
        CHECK_CLOSE(mbs_body_mass(m2, 2), 4.25, 4 * MBS_EPS, "new mass");
        CHECK(mbs_param_value(m2, 0) == 1.5 && mbs_param_value(m2, 1) == 2.0, "new values");
        CHECK(strcmp(mbs_coord_name(m2, 1), "j2") == 0 && strcmp(mbs_model_name(m2), "pendulum") == 0, "copy names");
        /* everything else identical */
        int same = m2->nx == m->nx;
        for (int k = 0; same && k < m->nx; k++) {
            int target = 0;
            for (int p = 0; p < m->nparam; p++)
                for (int t = 0; t < m->param[p].ntargets; t++)
                    if (m->param[p].target[t] == k) target = 1;
            if (!target && m2->x[k] != m->x[k]) same = 0;
        }
        CHECK(same, "with_params changed only the targets");
        mbs_model_free(m2);
    }
    CHECK_CLOSE(mbs_body_mass(m, 2), 3.25, 4 * MBS_EPS, "original unchanged");
    double bad[2] = { 2.5, 2.0 };
    m2 = mbs_model_with_params(m, bad, &err);
    CHECK(m2 == NULL && err.code == MBS_ERR_ARG && strstr(err.msg, "L1") && strstr(err.msg, "outside"),
          "with_params bound violation: %s", err.msg);
    mbs_model_free(m2);

    FILE *devnull = fopen("/dev/null", "w");
    if (devnull) {
        mbs_model_print(m, devnull);
        fclose(devnull);
    }
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- tree order */

static void test_tree_order(void)
{
    mbs_error err = { 0, "" };
    mbs_model *m = mbs_model_load(mbs_test_path("tests/models/tree_unordered.json"), &err);
    CHECK(m != NULL, "tree: %s", err.msg);
    if (!m) return;
    /* DFS preorder, children in the order the bodies are listed */
    static const char *order[] = { "ground", "a", "c", "b", "d", "f", "e" };
    static const int parent[] = { -1, 0, 1, 1, 3, 4, 0 };
    static const int subtree_end[] = { 7, 6, 3, 6, 6, 6, 7 };
    static const int depth[] = { 0, 1, 2, 2, 3, 4, 1 };
    static const int nchildren[] = { 2, 2, 0, 1, 1, 0, 0 };
    static const int first_child[] = { 1, 2, -1, 4, 5, -1, -1 };
    static const int next_sibling[] = { -1, 6, 3, -1, -1, -1, -1 };
    static const int branch[] = { -1, 0, 1, 2, 2, 2, 3 };
    CHECK(mbs_model_nbodies(m) == 6, "nbodies");
    for (int i = 0; i <= 6 && i <= m->nb; i++) {
        CHECK(strcmp(m->body[i].name, order[i]) == 0, "body %d is %s, expected %s", i, m->body[i].name, order[i]);
        CHECK(m->body[i].parent == parent[i], "parent of %s: %d", order[i], m->body[i].parent);
        CHECK(m->body[i].subtree_end == subtree_end[i], "subtree_end of %s: %d", order[i], m->body[i].subtree_end);
        CHECK(m->body[i].depth == depth[i], "depth of %s: %d", order[i], m->body[i].depth);
        CHECK(m->body[i].nchildren == nchildren[i], "nchildren of %s: %d", order[i], m->body[i].nchildren);
        CHECK(m->body[i].first_child == first_child[i], "first_child of %s", order[i]);
        CHECK(m->body[i].next_sibling == next_sibling[i], "next_sibling of %s", order[i]);
        CHECK(m->body[i].branch == branch[i], "branch of %s: %d", order[i], m->body[i].branch);
        if (i > 0) CHECK(m->joint[i].child == i && m->joint[i].parent == parent[i], "joint %d moves body %d", i, i);
    }
    CHECK(m->max_depth == 4, "max_depth %d", m->max_depth);
    CHECK(m->nbranch == 4, "nbranch %d", m->nbranch);
    static const int bf[] = { 1, 2, 3, 6 }, bl[] = { 1, 2, 5, 6 };
    for (int k = 0; k < 4 && k < m->nbranch; k++)
        CHECK(m->branch_first[k] == bf[k] && m->branch_last[k] == bl[k], "branch %d: %d..%d", k,
              m->branch_first[k], m->branch_last[k]);

    /* coordinates */
    CHECK(mbs_model_nq(m) == 18 && mbs_model_ndof(m) == 16, "nq %d ndof %d", mbs_model_nq(m), mbs_model_ndof(m));
    CHECK(mbs_model_nv(m) == 18, "nv %d (velocities are the Euler-parameter rates)", mbs_model_nv(m));
    CHECK(m->n_euler == 2, "n_euler %d", m->n_euler);
    static const char *names[18] = { "ja.x", "ja.y", "ja.z", "ja.e0", "ja.e1", "ja.e2", "ja.e3",
                                     "jc.e0", "jc.e1", "jc.e2", "jc.e3", "jb.theta1", "jb.theta2",
                                     "jd.s1", "jd.s2", "jd.theta", "je.s", "je.theta" };
    for (int k = 0; k < 18 && k < mbs_model_nq(m); k++)
        CHECK(strcmp(mbs_coord_name(m, k), names[k]) == 0, "coord %d: %s, expected %s", k, mbs_coord_name(m, k),
              names[k]);
    static const int qoff[] = { 0, 0, 7, 11, 13, 16, 16 }, nq[] = { 0, 7, 4, 2, 3, 0, 2 },
                     euler[] = { 0, 3, 0, -1, -1, -1, -1 };
    for (int i = 1; i <= 6; i++) {
        CHECK(mbs_joint_coord_offset(m, i) == qoff[i] && mbs_joint_nq(m, i) == nq[i], "joint %d: qoff %d nq %d", i,
              mbs_joint_coord_offset(m, i), mbs_joint_nq(m, i));
        CHECK(m->joint[i].euler == euler[i], "joint %d euler %d", i, m->joint[i].euler);
    }
    CHECK(m->joint[5].type == MBS_JOINT_FIXED && m->joint[5].ndof == 0, "fixed joint");
    double q[18], qd[18];
    mbs_model_initial_state(m, q, qd);
    static const double q_exp[18] = { 1, 2, 3, 1, 0, 0, 0, 0.6, 0.8, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    CHECK(mbs_rel_err(q, q_exp, 18) == 0, "q0");
    CHECK(qd[7] == 0.8 && qd[8] == -0.6 && qd[9] == 0.5 && qd[10] == 0.1 && qd[0] == 0, "qd0");

    /* frames: floating default = identity; cardan axis z ref y = [z, y, -x];
     * planar axis (0,1,1)/sqrt2 with the default ref (0,-1,1)/sqrt2 */
    const double *X = m->x + m->joint[1].x_Xp;
    for (int k = 0; k < 9; k++) CHECK(X[k] == (k % 4 == 0 ? 1 : 0), "floating default frame entry %d = %g", k, X[k]);
    double c[3];
    X = m->x + m->joint[3].x_Xc;
    column(X, 0, c);
    check_vec(c, 0, 0, 1, "cardan axis");
    column(X, 1, c);
    check_vec(c, 0, 1, 0, "cardan ref");
    column(X, 2, c);
    check_vec(c, -1, 0, 0, "cardan axis x ref");
    X = m->x + m->joint[4].x_Xp;
    column(X, 0, c);
    check_vec(c, 0, sqrt(0.5), sqrt(0.5), "planar axis");
    column(X, 1, c);
    check_vec(c, 0, -sqrt(0.5), sqrt(0.5), "planar default ref");
    check_frames(m);
    /* the spherical joint sits on a.p */
    int p = mbs_point_find(m, "a.p");
    CHECK(p >= 0 && m->joint[2].x_ppoint == m->point[p].x, "jc on a.p");
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- parameters */

static void test_params_inline(void)
{
    const char *json =
        "{ \"name\": \"params\", \"gravity\": [0, 0, -9.81],\n"
        "  \"bodies\": [ { \"name\": \"b\", \"mass\": 1, \"com\": [0, 0, 0],\n"
        "                  \"inertia\": [[2, 0.1, 0], [0.1, 2, 0.2], [0, 0.2, 3]],\n"
        "                  \"points\": { \"hinge\": [0, 0, 0.5] } } ],\n"
        "  \"joints\": [ { \"name\": \"j\", \"type\": \"prismatic\", \"parent\": \"ground\", \"child\": \"b\",\n"
        "                  \"child_point\": \"hinge\", \"axis\": [2, 0, 0], \"ref\": [1, 1, 0] } ],\n"
        "  \"parameters\": [\n"
        "    { \"name\": \"g\", \"value\": 9.0, \"sets\": [ { \"target\": \"gravity[2]\", \"scale\": -1 } ] },\n"
        "    { \"name\": \"h\", \"value\": 0.25, \"lower\": 0, \"upper\": 1,\n"
        "      \"sets\": [ \"b.hinge[2]\", { \"target\": \"b.com[2]\", \"scale\": 2, \"offset\": -0.1 },\n"
        "                { \"target\": \"b.inertia.zz\", \"scale\": 4, \"offset\": 2 },\n"
        "                { \"target\": \"b.inertia.xy\", \"scale\": 0.2 } ] },\n"
        "    { \"name\": \"mass\", \"value\": 3, \"sets\": [ \"b.mass\" ] } ] }";
    mbs_model *m = load_ok(json, "inline.json");
    if (!m) return;
    CHECK(strcmp(mbs_model_name(m), "params") == 0, "name");
    double g[3];
    mbs_model_gravity(m, g);
    check_vec(g, 0, 0, -9.0, "gravity from parameter");
    const mbs_body_info *b = &m->body[1];
    CHECK_CLOSE(m->x[b->x_mass], 3, 0, "mass");
    CHECK_CLOSE(m->x[b->x_com + 2], 0.4, 4 * MBS_EPS, "com[2] = 2 h - 0.1");
    CHECK_CLOSE(m->x[b->x_inertia + 2], 3.0, 4 * MBS_EPS, "zz = 4 h + 2");
    CHECK_CLOSE(m->x[b->x_inertia + 3], 0.05, 4 * MBS_EPS, "xy = 0.2 h");
    CHECK(m->x[b->x_inertia + 5] == 0.2 && m->x[b->x_inertia + 4] == 0, "xz, yz from the 3x3 form");
    CHECK_CLOSE(m->x[m->joint[1].x_cpoint + 2], 0.25, 0, "joint point moved by h");
    CHECK(m->param[1].ntargets == 4, "h has 4 targets");
    CHECK(strcmp(m->param[1].target_name[1], "b.com[2]") == 0, "target name kept");
    /* prismatic axis (2,0,0) normalized, ref (1,1,0) orthogonalized to y */
    const double *X = m->x + m->joint[1].x_Xp;
    double c[3];
    column(X, 0, c);
    check_vec(c, 1, 0, 0, "axis normalized");
    column(X, 1, c);
    check_vec(c, 0, 1, 0, "ref orthogonalized");
    check_frames(m);
    /* ground joint point: anonymous, not listed among named points */
    CHECK(mbs_model_npoints(m) == 1, "only the named point is listed");

    mbs_error err = { 0, "" };
    double vals[3] = { 9.81, 0.4, 2 };
    mbs_model *m2 = mbs_model_with_params(m, vals, &err);
    CHECK(m2 != NULL, "with_params: %s", err.msg);
    if (m2) {
        CHECK_CLOSE(m2->x[m2->x_gravity + 2], -9.81, 4 * MBS_EPS, "gravity");
        CHECK_CLOSE(m2->x[m2->body[1].x_inertia + 2], 3.6, 4 * MBS_EPS, "zz");
        CHECK_CLOSE(m2->x[m2->joint[1].x_cpoint + 2], 0.4, 0, "joint point");
        mbs_model_free(m2);
    }
    /* physical checks after the new values: negative mass */
    double neg[3] = { 9.81, 0.4, -1 };
    m2 = mbs_model_with_params(m, neg, &err);
    CHECK(m2 == NULL && err.code == MBS_ERR_MODEL && strstr(err.msg, "bodies[0]") && strstr(err.msg, "mass"),
          "negative mass via with_params: %s", err.msg);
    mbs_model_free(m2);
    double nan3[3] = { NAN, 0.5, 1 };
    m2 = mbs_model_with_params(m, nan3, &err);
    CHECK(m2 == NULL && strstr(err.msg, "not finite"), "NaN parameter: %s", err.msg);
    mbs_model_free(m2);
    mbs_model_free(m);
}

/* ---------------------------------------------------------------- DH */

/* The child frame from the builder's numbers must equal the DH product
 * Rz(theta) Tz(d) Tx(a) Rx(alpha), along a chain of random DH rows. */
static void test_dh(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 20240601);
    enum { N = 5 };
    for (int trial = 0; trial < 20; trial++) {
        double a[N], alpha[N], d[N], theta[N], q[N];
        int prismatic[N];
        char json[8192];
        int len = snprintf(json, sizeof json, "{ \"bodies\": [");
        for (int i = 0; i < N; i++)
            len += snprintf(json + len, sizeof json - (size_t)len,
                            "%s{ \"name\": \"l%d\", \"mass\": 1, \"inertia\": [1, 1, 1, 0, 0, 0] }", i ? ", " : "",
                            i + 1);
        len += snprintf(json + len, sizeof json - (size_t)len, "], \"joints\": [");
        for (int i = 0; i < N; i++) {
            a[i] = mbs_rng_uniform(&rng, -1, 1);
            alpha[i] = mbs_rng_uniform(&rng, -M_PI, M_PI);
            d[i] = mbs_rng_uniform(&rng, -1, 1);
            theta[i] = mbs_rng_uniform(&rng, -M_PI, M_PI);
            q[i] = mbs_rng_uniform(&rng, -2, 2);
            prismatic[i] = mbs_rng_int(&rng, 2);
            if (i == 0 && trial == 0) alpha[i] = M_PI / 2;   /* the classic case */
            char parent[16];
            snprintf(parent, sizeof parent, i ? "l%d" : "ground", i);
            len += snprintf(json + len, sizeof json - (size_t)len,
                            "%s{ \"name\": \"j%d\", \"type\": \"%s\", \"parent\": \"%s\", \"child\": \"l%d\", "
                            "\"dh\": { \"a\": %.17g, \"alpha\": %.17g, \"d\": %.17g, \"theta\": %.17g }, "
                            "\"q0\": [%.17g] }",
                            i ? ", " : "", i + 1, prismatic[i] ? "prismatic" : "revolute", parent, i + 1, a[i],
                            alpha[i], d[i], theta[i], q[i]);
        }
        snprintf(json + len, sizeof json - (size_t)len, "] }");
        mbs_model *m = load_ok(json, "dh.json");
        if (!m) return;
        CHECK(m->nb == N && m->nq == N, "DH chain sizes");
        double q0[N];
        mbs_model_initial_state(m, q0, NULL);
        /* the builder's placement */
        double A[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, o[3] = { 0, 0, 0 };
        /* the DH product */
        double Ad[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, od[3] = { 0, 0, 0 };
        double worst = 0;
        for (int i = 1; i <= N; i++) {
            const mbs_joint_info *j = &m->joint[i];
            const double *Xp = m->x + j->x_Xp, *Xc = m->x + j->x_Xc;
            const double *pp = m->x + j->x_ppoint, *cp = m->x + j->x_cpoint;
            double qi = q0[j->qoff];
            double R[9] = { 1, 0, 0, 0, 1, 0, 0, 0, 1 }, t[3] = { 0, 0, 0 };
            if (j->type == MBS_JOINT_REVOLUTE) {
                double cq = cos(qi), sq = sin(qi);
                double Rr[9] = { 1, 0, 0, 0, cq, -sq, 0, sq, cq };   /* Rot(e1, q) */
                memcpy(R, Rr, sizeof R);
            } else {
                t[0] = qi;
            }
            /* A_i = A_h Xp R Xc^T;  r(cp) = r(pp) + A_h Xp t;  o_i = r(cp) - A_i cp */
            double AX[9], Ai[9], v[3], w[3], rcp[3];
            mul(AX, A, Xp);
            mul(Ai, AX, R);
            mul_bt(Ai, Ai, Xc);
            mv(v, A, pp);
            mv(w, AX, t);
            for (int k = 0; k < 3; k++) rcp[k] = o[k] + v[k] + w[k];
            mv(v, Ai, cp);
            for (int k = 0; k < 3; k++) o[k] = rcp[k] - v[k];
            memcpy(A, Ai, sizeof A);

            int r = i - 1;   /* chain: body order = input order */
            double th = theta[r] + (prismatic[r] ? 0 : q[r]);
            double dd = d[r] + (prismatic[r] ? q[r] : 0);
            double Rz[9], Rx[9], T[9], loc[3], gl[3];
            rotz(Rz, th);
            rotx(Rx, alpha[r]);
            double c = cos(th), s = sin(th);
            loc[0] = a[r] * c;
            loc[1] = a[r] * s;
            loc[2] = dd;
            mv(gl, Ad, loc);
            for (int k = 0; k < 3; k++) od[k] += gl[k];
            mul(T, Rz, Rx);
            mul(Ad, Ad, T);
            worst = fmax(worst, mbs_rel_err(A, Ad, 9));
            worst = fmax(worst, mbs_rel_err(o, od, 3));
        }
        /* products of N D-H transforms (a few tens of roundings each) */
        CHECK(worst <= MBS_ROUNDOFF(N), "trial %d: DH placement differs from the DH product by %g", trial, worst);
        check_frames(m);
        mbs_model_free(m);
    }
}

/* ---------------------------------------------------------------- misc */

static void test_principal_moments(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 7);
    for (int trial = 0; trial < 50; trial++) {
        double lam[3] = { mbs_rng_uniform(&rng, 0.1, 2), mbs_rng_uniform(&rng, 0.1, 2), mbs_rng_uniform(&rng, 0.1, 2) };
        if (trial == 0) lam[0] = lam[1] = lam[2] = 1.5;          /* repeated */
        if (trial == 1) { lam[0] = 1; lam[1] = lam[2] = 2; }
        /* random rotation from a unit quaternion */
        double p[4], n = 0;
        for (int k = 0; k < 4; k++) { p[k] = mbs_rng_uniform(&rng, -1, 1); n += p[k] * p[k]; }
        for (int k = 0; k < 4; k++) p[k] /= sqrt(n);
        double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
        double R[9] = { 2 * (e0 * e0 + e1 * e1) - 1, 2 * (e1 * e2 - e0 * e3), 2 * (e1 * e3 + e0 * e2),
                        2 * (e1 * e2 + e0 * e3), 2 * (e0 * e0 + e2 * e2) - 1, 2 * (e2 * e3 - e0 * e1),
                        2 * (e1 * e3 - e0 * e2), 2 * (e2 * e3 + e0 * e1), 2 * (e0 * e0 + e3 * e3) - 1 };
        double D[9] = { lam[0], 0, 0, 0, lam[1], 0, 0, 0, lam[2] }, J[9];
        mul(J, R, D);
        mul_bt(J, J, R);
        double I6[6] = { J[0], J[4], J[8], J[1], J[2], J[5] }, got[3];
        mbs_inertia_principal(I6, got);
        /* sort expected */
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 2 - i; k++)
                if (lam[k] > lam[k + 1]) { double t = lam[k]; lam[k] = lam[k + 1]; lam[k + 1] = t; }
        /* the eigenvalues of a symmetric matrix move by at most its perturbation: the rounding of R D R^T
         * and of the eigen solve, a few tens of operations on entries up to 2 (64 eps) */
        CHECK(mbs_rel_err(got, lam, 3) <= 64 * MBS_EPS, "principal moments %g %g %g vs %g %g %g", got[0], got[1],
              got[2], lam[0], lam[1], lam[2]);
    }
}

static void test_misc(void)
{
    CHECK(strcmp(mbs_version(), MBSENS_VERSION_STRING) == 0, "version");
    CHECK(strcmp(mbs_status_string(MBS_ERR_PARSE), "syntax error") == 0, "status string");
    CHECK(strcmp(mbs_status_string(12345), "unknown status") == 0, "unknown status string");
    static const char *types[] = { "fixed", "revolute", "prismatic", "cylindrical", "cardan", "spherical", "planar",
                                   "floating" };
    for (int t = 0; t < MBS_JOINT_TYPE_COUNT; t++) {
        CHECK(strcmp(mbs_joint_type_name((mbs_joint_type)t), types[t]) == 0, "type name %d", t);
        CHECK(mbs_joint_type_from_name(types[t]) == t, "type from name %s", types[t]);
    }
    CHECK(mbs_joint_type_from_name("hinge") == -1 && mbs_joint_type_from_name(NULL) == -1, "unknown type");
    CHECK(strcmp(mbs_inertia_entry_names[3], "xy") == 0, "inertia names");
    mbs_error err = { 0, "" };
    CHECK(mbs_error_set(&err, MBS_ERR_ARG, "a %d\nb", 1) == MBS_ERR_ARG && err.code == MBS_ERR_ARG &&
              strcmp(err.msg, "a 1 b") == 0, "mbs_error_set: %s", err.msg);
    CHECK(mbs_error_set(NULL, MBS_ERR_IO, "x") == MBS_ERR_IO, "mbs_error_set with NULL");

    /* a massless body (zero mass and inertia) and a point mass are valid;
     * spherical default q0 is the identity; the name defaults to the file name */
    mbs_model *m = load_ok("{ \"bodies\": [ { \"name\": \"ghost\", \"mass\": 0 }, { \"name\": \"pm\", \"mass\": 2 } ],"
                           "  \"joints\": [ { \"name\": \"s\", \"type\": \"spherical\", \"parent\": \"ground\", "
                           "\"child\": \"ghost\" }, { \"name\": \"r\", \"type\": \"revolute\", \"parent\": \"ghost\", "
                           "\"child\": \"pm\", \"parent_axis\": [0, 1, 0], \"child_axis\": [1, 0, 0] } ] }",
                           "dir/massless.json");
    if (m) {
        double q[5];
        mbs_model_initial_state(m, q, NULL);
        CHECK(q[0] == 1 && q[1] == 0 && q[2] == 0 && q[3] == 0, "identity Euler parameters by default");
        CHECK(strcmp(mbs_model_name(m), "massless") == 0, "default name %s", mbs_model_name(m));
        CHECK(m->ndof == 4 && m->nq == 5, "sizes");
        double c[3];
        column(m->x + m->joint[2].x_Xp, 0, c);
        check_vec(c, 0, 1, 0, "parent_axis");
        column(m->x + m->joint[2].x_Xc, 0, c);
        check_vec(c, 1, 0, 0, "child_axis");
        check_frames(m);
        mbs_model_free(m);
    }
    CHECK(mbs_body_name(NULL, 0) == NULL && mbs_model_nq(NULL) == 0 && mbs_model_nv(NULL) == 0,
          "NULL model accessors");
    mbs_model_free(NULL);
}

/* The velocity layout through the public accessors: every joint's
 * velocities are the rates of its coordinates (nv = nq by joint type, the
 * same offsets, the same names), the blocks tile 0..nv in joint order,
 * ndof = nv - (unit quaternions), and the accessors refuse bad indices. */
static void check_velocity_layout(const mbs_model *m, const char *label)
{
    static const int type_nq[MBS_JOINT_TYPE_COUNT] = { 0, 1, 1, 2, 2, 4, 3, 7 };
    int nb = mbs_model_nbodies(m), next = 0, nquat = 0, bad = 0;
    for (int j = 1; j <= nb; j++) {
        mbs_joint_type t = mbs_joint_type_of(m, j);
        int nv = mbs_joint_nv(m, j), voff = mbs_joint_vel_offset(m, j);
        int has_quat = t == MBS_JOINT_SPHERICAL || t == MBS_JOINT_FLOATING;
        nquat += has_quat;
        bad += nv != type_nq[t] || nv != mbs_joint_nq(m, j) || voff != next ||
               voff != mbs_joint_coord_offset(m, j) ||
               mbs_joint_velocities(m, j) != MBS_VELOCITIES_EULER_RATES ||
               m->joint[j].quat != (t == MBS_JOINT_FLOATING ? 3 : has_quat ? 0 : -1);
        for (int k = 0; k < nv; k++) {
            const char *a = mbs_vel_name(m, voff + k), *b = mbs_coord_name(m, voff + k);
            bad += !a || !b || strcmp(a, b) != 0;
        }
        next += nv;
    }
    CHECK(bad == 0, "%s: %d joints or names with another velocity layout", label, bad);
    int nv = mbs_model_nv(m);
    CHECK(nv == next && nv == mbs_model_nq(m) && mbs_model_ndof(m) == nv - nquat && m->n_quat == nquat,
          "%s: nv %d, sum of the joints' %d, nq %d, ndof %d, quaternions %d/%d", label, nv, next, mbs_model_nq(m),
          mbs_model_ndof(m), m->n_quat, nquat);
    CHECK(mbs_vel_name(m, -1) == NULL && mbs_vel_name(m, nv) == NULL && mbs_joint_nv(m, 0) == 0 &&
              mbs_joint_nv(m, nb + 1) == 0 && mbs_joint_vel_offset(m, nb + 1) == -1 &&
              mbs_joint_velocities(m, 0) == -1 && mbs_joint_velocities(NULL, 1) == -1 &&
              mbs_vel_name(NULL, 0) == NULL,
          "%s: bad indices", label);
}

static int ends_with(const char *s, const char *ext)
{
    size_t n = strlen(s), e = strlen(ext);
    return n >= e && strcmp(s + n - e, ext) == 0;
}

/* Every model file of dir that loads (URDF: fixed and floating base). */
static int velocity_layout_files(const char *dir, const char *ext)
{
    char path[1024];
    snprintf(path, sizeof path, "%s", mbs_test_path(dir));
    DIR *d = opendir(path);
    CHECK(d != NULL, "cannot list %s", path);
    if (!d) return 0;
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!ends_with(e->d_name, ext)) continue;
        char file[1400];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        int urdf = ends_with(ext, ".urdf");
        for (int floating = 0; floating < (urdf ? 2 : 1); floating++) {
            mbs_error err;
            mbs_urdf_options o = { floating, 0, NULL, NULL, 0, MBS_VELOCITIES_EULER_RATES };
            mbs_model *m = urdf ? mbs_model_load_urdf(file, &o, &err) : mbs_model_load(file, &err);
            if (!m) continue;   /* the files of bad input */
            check_velocity_layout(m, file);
            count++;
            mbs_model_free(m);
        }
    }
    closedir(d);
    return count;
}

static void test_velocity_layout(void)
{
    int n = velocity_layout_files("models", ".json") + velocity_layout_files("tests/models", ".json") +
            velocity_layout_files("tests/urdf", ".urdf");
    CHECK(n >= 20, "%d shipped models checked", n);
    mbs_rng r;
    mbs_rng_seed(&r, 21);
    for (int t = 0; t <= MBS_JOINT_TYPE_COUNT; t++)   /* each type alone, then all mixed */
        for (int rep = 0; rep < 5; rep++) {
            unsigned types = t < MBS_JOINT_TYPE_COUNT ? 1u << t : 0;
            mbs_model *m = mbs_test_random_tree(&r, 1 + mbs_rng_int(&r, 12), types);
            CHECK(m != NULL, "random tree of types %#x", types);
            if (!m) continue;
            check_velocity_layout(m, "random tree");
            mbs_model_free(m);
        }
}

int main(void)
{
    test_velocity_layout();
    test_misc();
    test_pendulum_file();
    test_tree_order();
    test_params_inline();
    test_dh();
    test_principal_moments();
    return mbs_test_summary("test_model_load");
}
