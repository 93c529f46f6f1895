/*
 * test_models.c - the shipped models (models/<name>.json) load and mean what
 * docs/models.md says.
 *
 * double_pendulum.json: sizes, names, parameters, and the kinematics, mass
 * matrix, kinetic energy and inverse dynamics against the closed-form
 * equations of a planar double pendulum with point masses (also after
 * changing the design parameters, which checks that L1/L2 move both the
 * rod end and the point mass).
 *
 * human43.json: sizes, topology, coordinate names, total mass (sum of
 * Table 2 of Zhakatayev et al.), end points and whole-body centre of mass
 * at q = 0 computed by hand from Table 1 (docs/models.md), every body frame
 * at random q against an independent product of the distal D-H matrices
 * (eq. 4 of the paper) transcribed here from Table 1, static joint torques
 * at q = 0 computed by hand, and the mass matrix symmetric positive definite
 * (Cholesky) and consistent with the kinetic energy.
 */
#include "testutil.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;
static const double G = 9.81;

/* Cholesky of an n x n row-major matrix (copied); 0 if positive definite. */
static int cholesky_ok(const double *M, int n)
{
    double *L = malloc(sizeof *L * (size_t)n * (size_t)n);
    int ok = 1;
    if (!L) return 0;
    memcpy(L, M, sizeof *L * (size_t)n * (size_t)n);
    for (int j = 0; j < n && ok; j++) {
        double s = L[j * n + j];
        for (int k = 0; k < j; k++) s -= L[j * n + k] * L[j * n + k];
        if (!(s > 0)) { ok = 0; break; }
        L[j * n + j] = sqrt(s);
        for (int i = j + 1; i < n; i++) {
            double t = L[i * n + j];
            for (int k = 0; k < j; k++) t -= L[i * n + k] * L[j * n + k];
            L[i * n + j] = t / L[j * n + j];
        }
    }
    free(L);
    return ok;
}

static double max_asym(const double *M, int n)
{
    double e = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            double d = fabs(M[i * n + j] - M[j * n + i]);
            if (d > e) e = d;
        }
    return e;
}

/* ------------------------------------------------------------------ */
/* double pendulum                                                     */

typedef struct { double L1, L2, mP, mQ; } pend_par;

/* closed form, q1 absolute from the downward vertical, q2 relative */
static void pend_points(const pend_par *p, const double q[2], double P[2], double Q[2])
{
    P[0] = p->L1 * sin(q[0]);
    P[1] = -p->L1 * cos(q[0]);
    Q[0] = P[0] + p->L2 * sin(q[0] + q[1]);
    Q[1] = P[1] - p->L2 * cos(q[0] + q[1]);
}

static void pend_mass(const pend_par *p, const double q[2], double M[4])
{
    double c2 = cos(q[1]);
    M[0] = (p->mP + p->mQ) * p->L1 * p->L1 + p->mQ * p->L2 * p->L2 + 2 * p->mQ * p->L1 * p->L2 * c2;
    M[1] = M[2] = p->mQ * p->L2 * p->L2 + p->mQ * p->L1 * p->L2 * c2;
    M[3] = p->mQ * p->L2 * p->L2;
}

static void pend_tau(const pend_par *p, const double q[2], const double qd[2],
                     const double qdd[2], double tau[2])
{
    double M[4], s2 = sin(q[1]), s1 = sin(q[0]), s12 = sin(q[0] + q[1]);
    double k = p->mQ * p->L1 * p->L2 * s2;
    pend_mass(p, q, M);
    tau[0] = M[0] * qdd[0] + M[1] * qdd[1] - k * (2 * qd[0] * qd[1] + qd[1] * qd[1])
           + (p->mP + p->mQ) * G * p->L1 * s1 + p->mQ * G * p->L2 * s12;
    tau[1] = M[2] * qdd[0] + M[3] * qdd[1] + k * qd[0] * qd[0] + p->mQ * G * p->L2 * s12;
}

static void check_pendulum_physics(const mbs_model *m, const pend_par *p, const char *what)
{
    mbs_error err;
    mbs_data *d = mbs_data_create(m, &err);
    CHECK(d != NULL, "%s: mbs_data_create: %s", what, d ? "" : err.msg);
    if (!d) return;
    int iP = mbs_point_find(m, "body1.P"), iQ = mbs_point_find(m, "body2.Q");
    CHECK(iP >= 0 && iQ >= 0, "%s: points body1.P (%d), body2.Q (%d)", what, iP, iQ);
    /* the closed forms against the recursions: round-off of a two-body tree; the energies and forces
     * are sums of terms up to (mP + mQ) (L1 + L2)^2 qd^2 and g (mP + mQ) (L1 + L2) in size */
    const double ro = MBS_ROUNDOFF(2), sz = (p->mP + p->mQ) * (p->L1 + p->L2) * (p->L1 + p->L2) * 25 +
                                          G * (p->mP + p->mQ) * (p->L1 + p->L2);
    mbs_rng rng;
    mbs_rng_seed(&rng, 42);
    const double fixed[4][2] = { {0, 0}, {PI / 2, 0}, {PI / 6, -PI / 3}, {-2.0, 2.5} };
    for (int t = 0; t < 8; t++) {
        double q[2], qd[2], qdd[2];
        for (int k = 0; k < 2; k++) {
            q[k] = t < 4 ? fixed[t][k] : mbs_rng_uniform(&rng, -PI, PI);
            qd[k] = t < 4 ? 0.3 * t - 0.5 * k : mbs_rng_uniform(&rng, -3, 3);
            qdd[k] = t < 4 ? 0.7 - t + k : mbs_rng_uniform(&rng, -5, 5);
        }
        double P[2], Q[2], r[3], M[4], Mref[4], tau[2], tref[2];
        pend_points(p, q, P, Q);
        int rc = mbs_kinematics(m, d, q, qd, NULL);
        CHECK(rc == MBS_OK, "%s: mbs_kinematics rc %d", what, rc);
        if (iP >= 0) {
            mbs_point_kinematics(m, d, iP, r, NULL, NULL);
            CHECK_CLOSE(r[0], P[0], ro, "%s: x_P at q=(%g,%g)", what, q[0], q[1]);
            CHECK_CLOSE(r[1], P[1], ro, "%s: y_P at q=(%g,%g)", what, q[0], q[1]);
            CHECK_CLOSE(r[2], 0.0, ro, "%s: z_P", what);
        }
        if (iQ >= 0) {
            mbs_point_kinematics(m, d, iQ, r, NULL, NULL);
            CHECK_CLOSE(r[0], Q[0], ro, "%s: x_Q at q=(%g,%g)", what, q[0], q[1]);
            CHECK_CLOSE(r[1], Q[1], ro, "%s: y_Q at q=(%g,%g)", what, q[0], q[1]);
            CHECK_CLOSE(r[2], 0.0, ro, "%s: z_Q", what);
        }
        /* the point masses sit at the rod ends */
        mbs_body_com(d, 1, r);
        CHECK_CLOSE(r[0], P[0], ro, "%s: com of body1 x", what);
        CHECK_CLOSE(r[1], P[1], ro, "%s: com of body1 y", what);
        mbs_body_com(d, 2, r);
        CHECK_CLOSE(r[0], Q[0], ro, "%s: com of body2 x", what);
        CHECK_CLOSE(r[1], Q[1], ro, "%s: com of body2 y", what);

        /* kinetic energy 1/2 qd^T M qd and potential energy of the masses */
        pend_mass(p, q, Mref);
        double T = 0.5 * (Mref[0] * qd[0] * qd[0] + 2 * Mref[1] * qd[0] * qd[1] + Mref[3] * qd[1] * qd[1]);
        CHECK_CLOSE(mbs_kinetic_energy(m, d), T, ro * sz, "%s: kinetic energy", what);
        CHECK_CLOSE(mbs_potential_energy(m, d), G * (p->mP * P[1] + p->mQ * Q[1]), ro * sz,
                    "%s: potential energy", what);

        rc = mbs_mass_matrix(m, d, q, M);
        CHECK(rc == MBS_OK, "%s: mbs_mass_matrix rc %d", what, rc);
        CHECK(mbs_rel_err(M, Mref, 4) <= ro, "%s: mass matrix at q=(%g,%g): [%g %g; %g %g] vs [%g %g; %g %g]",
              what, q[0], q[1], M[0], M[1], M[2], M[3], Mref[0], Mref[1], Mref[2], Mref[3]);

        pend_tau(p, q, qd, qdd, tref);
        rc = mbs_inverse_dynamics(m, d, q, qd, qdd, tau);
        CHECK(rc == MBS_OK, "%s: mbs_inverse_dynamics rc %d", what, rc);
        CHECK(mbs_rel_err(tau, tref, 2) <= ro * sz, "%s: inverse dynamics at q=(%g,%g): (%.15g, %.15g) vs (%.15g, %.15g)",
              what, q[0], q[1], tau[0], tau[1], tref[0], tref[1]);
    }
    mbs_data_free(d);
}

static void test_double_pendulum(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    CHECK(m != NULL, "load double_pendulum.json: %s", m ? "" : err.msg);
    if (!m) return;
    CHECK(strcmp(mbs_model_name(m), "double_pendulum") == 0, "name %s", mbs_model_name(m));
    CHECK(mbs_model_nbodies(m) == 2, "n_bodies %d", mbs_model_nbodies(m));
    CHECK(mbs_model_nq(m) == 2, "nq %d", mbs_model_nq(m));
    CHECK(mbs_model_ndof(m) == 2, "n_dof %d", mbs_model_ndof(m));
    CHECK(mbs_model_nconstraints(m) == 0, "n_constraints %d", mbs_model_nconstraints(m));
    CHECK(strcmp(mbs_coord_name(m, 0), "theta1") == 0, "coord 0 %s", mbs_coord_name(m, 0));
    CHECK(strcmp(mbs_coord_name(m, 1), "theta2") == 0, "coord 1 %s", mbs_coord_name(m, 1));
    CHECK(mbs_joint_type_of(m, 1) == MBS_JOINT_REVOLUTE && mbs_joint_type_of(m, 2) == MBS_JOINT_REVOLUTE,
          "both joints revolute");
    CHECK(mbs_body_find(m, "body1") == 1 && mbs_body_find(m, "body2") == 2, "body order");
    CHECK(mbs_body_parent(m, 2) == 1 && mbs_body_parent(m, 1) == 0, "chain topology");
    CHECK_CLOSE(mbs_body_mass(m, 1), 1.0, 0, "M_P");
    CHECK_CLOSE(mbs_body_mass(m, 2), 1.0, 0, "M_Q");
    double g[3];
    mbs_model_gravity(m, g);
    CHECK(g[0] == 0 && g[1] == -9.81 && g[2] == 0, "gravity (%g, %g, %g)", g[0], g[1], g[2]);

    static const char *const pnames[4] = { "L1", "L2", "M_P", "M_Q" };
    CHECK(mbs_model_nparams(m) == 4, "n_params %d", mbs_model_nparams(m));
    for (int k = 0; k < 4 && k < mbs_model_nparams(m); k++) {
        CHECK(strcmp(mbs_param_name(m, k), pnames[k]) == 0, "param %d is %s", k, mbs_param_name(m, k));
        CHECK(mbs_param_find(m, pnames[k]) == k, "find %s", pnames[k]);
        CHECK_CLOSE(mbs_param_value(m, k), 1.0, 0, "value of %s", pnames[k]);
        CHECK(mbs_param_lower(m, k) > 0 && mbs_param_upper(m, k) > mbs_param_lower(m, k),
              "bounds of %s", pnames[k]);
    }
    double q0[2], qd0[2];
    mbs_model_initial_state(m, q0, qd0);
    CHECK(q0[0] == 0.5 && q0[1] == 0.5 && qd0[0] == 0 && qd0[1] == 0, "initial state");

    pend_par nominal = { 1.0, 1.0, 1.0, 1.0 };
    check_pendulum_physics(m, &nominal, "nominal");

    /* every parameter changed: L1/L2 must move rod end and point mass */
    double vals[4] = { 1.5, 0.7, 2.0, 0.5 };
    mbs_model *m2 = mbs_model_with_params(m, vals, &err);
    CHECK(m2 != NULL, "mbs_model_with_params: %s", m2 ? "" : err.msg);
    if (m2) {
        CHECK_CLOSE(mbs_body_mass(m2, 1), 2.0, 0, "M_P after with_params");
        CHECK_CLOSE(mbs_body_mass(m2, 2), 0.5, 0, "M_Q after with_params");
        pend_par changed = { 1.5, 0.7, 2.0, 0.5 };
        check_pendulum_physics(m2, &changed, "changed parameters");
        mbs_model_free(m2);
    }
    mbs_model_free(m);
}

/* ------------------------------------------------------------------ */
/* human43                                                             */

/* Table 1 of Zhakatayev et al., transcribed independently of the JSON file:
 * parent joint, theta offset (units of pi/2), d and a as signed link
 * indices into Table 2 (0: zero), alpha (units of pi/2). Joints 1-3 are
 * prismatic (d = q1, q2, -q3); the others revolute (theta = q + offset). */
static const struct { int parent, th, d, a, al; } dh43[44] = {
    {0, 0, 0, 0, 0},
    {0, 0, 0, 0, -1}, {1, 1, 0, 0, -1}, {2, 0, 0, 0, 0}, {3, 1, 0, 0, -1}, {4, 1, 0, 0, -1},
    {5, 0, 0, 1, 1}, {6, 0, 0, 0, -1}, {7, 1, 0, 0, -1}, {8, 0, 0, 2, 0}, {9, 0, 0, 3, 0},
    {10, 0, 0, 0, 1}, {11, 0, 4, 0, -1}, {12, -1, 0, 5, 0},
    {5, 0, 0, -6, 1}, {14, 0, 0, 0, -1}, {15, 1, 0, 0, -1}, {16, 0, 0, 7, 0}, {17, 0, 0, 8, 0},
    {18, 0, 0, 0, 1}, {19, 0, 9, 0, -1}, {20, -1, 0, 10, 0},
    {5, 1, 0, -11, 0},
    {22, -1, 0, 0, 1}, {23, 0, 0, 12, 0}, {24, 0, 0, 0, -1}, {25, 1, 0, 0, -1}, {26, 0, 0, 13, 0},
    {27, -1, 0, 0, -1}, {28, 0, 14, 0, 1}, {29, 1, 0, 0, 1}, {30, 0, 0, 15, 0},
    {22, -1, 0, 0, 1}, {32, 0, 0, -16, 0}, {33, 0, 0, 0, -1}, {34, 1, 0, 0, -1}, {35, 0, 0, 17, 0},
    {36, -1, 0, 0, -1}, {37, 0, 18, 0, 1}, {38, 1, 0, 0, 1}, {39, 0, 0, 19, 0},
    {22, -1, 0, 0, 1}, {41, 1, 0, 0, -1}, {42, 1, 0, -20, 0},
};
/* Table 2: link lengths [cm] and masses [kg], j = 1..20 */
static const double L43cm[21] = { 0, 9, 44, 43, 16, 6, 9, 44, 43, 16, 6, 49, 17, 28, 26, 19, 17, 28, 26, 19, 35 };
static const double m43[21] = { 0, 4.5, 9.5, 3.7, 1.2, 0.2, 4.5, 9.5, 3.7, 1.2, 0.2, 12.3,
                                5.8, 1.9, 1.3, 0.5, 5.8, 1.9, 1.3, 0.5, 8.0 };

static const char *const coord43[43] = {
    "q1_pelvis_tz", "q2_pelvis_ty", "q3_pelvis_tx", "q4_pelvis_tilt", "q5_pelvis_rot",
    "q6_r_pelvis_list", "q7_r_hip_rot", "q8_r_hip_add", "q9_r_hip_flex", "q10_r_knee",
    "q11_r_ankle_flex", "q12_r_ankle_inv", "q13_r_toe",
    "q14_l_pelvis_list", "q15_l_hip_rot", "q16_l_hip_add", "q17_l_hip_flex", "q18_l_knee",
    "q19_l_ankle_flex", "q20_l_ankle_inv", "q21_l_toe",
    "q22_trunk_bend",
    "q23_r_sc_elev", "q24_r_sc_prot", "q25_r_shoulder_rot", "q26_r_shoulder_abd",
    "q27_r_shoulder_flex", "q28_r_elbow", "q29_r_pronation", "q30_r_wrist_flex", "q31_r_wrist_dev",
    "q32_l_sc_elev", "q33_l_sc_prot", "q34_l_shoulder_rot", "q35_l_shoulder_abd",
    "q36_l_shoulder_flex", "q37_l_elbow", "q38_l_pronation", "q39_l_wrist_flex", "q40_l_wrist_dev",
    "q41_neck_bend", "q42_neck_rot", "q43_neck_flex",
};

static double link_len(int j) { return j == 0 ? 0 : (j > 0 ? 1 : -1) * L43cm[abs(j)] / 100.0; }

/* 4x4 homogeneous transforms, row-major */
static void mat4_mul(double C[16], const double A[16], const double B[16])
{
    double t[16];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double s = 0;
            for (int k = 0; k < 4; k++) s += A[i * 4 + k] * B[k * 4 + j];
            t[i * 4 + j] = s;
        }
    memcpy(C, t, sizeof t);
}

/* eq. (4) of the paper: Rot_z(theta) Trans_z(d) Trans_x(a) Rot_x(alpha) */
static void dh_matrix(double A[16], double th, double d, double a, double al)
{
    double c = cos(th), s = sin(th), ca = cos(al), sa = sin(al);
    double M[16] = { c, -ca * s, sa * s, a * c,
                     s, ca * c, -sa * c, a * s,
                     0, sa, ca, d,
                     0, 0, 0, 1 };
    memcpy(A, M, sizeof M);
}

/* T[i] for i = 1..43 (T[0] = identity) at joint coordinates q (43) */
static void human_frames(const double *q, double T[44][16])
{
    static const double I4[16] = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 };
    memcpy(T[0], I4, sizeof I4);
    for (int i = 1; i <= 43; i++) {
        double th = dh43[i].th * PI / 2, d = link_len(dh43[i].d);
        if (i <= 2) d += q[i - 1];
        else if (i == 3) d -= q[i - 1];
        else th += q[i - 1];
        double A[16];
        dh_matrix(A, th, d, link_len(dh43[i].a), dh43[i].al * PI / 2);
        mat4_mul(T[i], T[dh43[i].parent], A);
    }
}

static void test_human43(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/human43.json"), &err);
    CHECK(m != NULL, "load human43.json: %s", m ? "" : err.msg);
    if (!m) return;
    const int n = 43;
    CHECK(mbs_model_nbodies(m) == n, "n_bodies %d", mbs_model_nbodies(m));
    CHECK(mbs_model_nq(m) == n, "nq %d", mbs_model_nq(m));
    CHECK(mbs_model_ndof(m) == n, "n_dof %d", mbs_model_ndof(m));
    if (mbs_model_nbodies(m) != n || mbs_model_nq(m) != n) { mbs_model_free(m); return; }
    double g[3];
    mbs_model_gravity(m, g);
    CHECK(g[0] == 0 && g[1] == 0 && g[2] == -9.81, "gravity (%g, %g, %g) (footnote 5 of the paper)", g[0], g[1], g[2]);

    /* total mass = sum of Table 2 (both legs and arms counted twice) */
    double table_mass = 0, mass = 0;
    for (int j = 1; j <= 20; j++) table_mass += m43[j];
    /* sums of 20 numbers of 2 decimals: a few roundings */
    CHECK_CLOSE(table_mass, 77.5, 32 * MBS_EPS, "sum of Table 2");
    for (int b = 1; b <= n; b++) mass += mbs_body_mass(m, b);
    CHECK_CLOSE(mass, table_mass, 64 * MBS_EPS, "total mass of human43");

    /* coordinates, joint types, topology (parents as in eq. 18 of the paper) */
    int nmassive = 0;
    for (int i = 1; i <= n; i++) {
        const char *name = mbs_coord_name(m, i - 1);
        CHECK(strcmp(name, coord43[i - 1]) == 0, "coordinate %d is %s, expected %s", i - 1, name, coord43[i - 1]);
        CHECK(strcmp(mbs_joint_name(m, i), coord43[i - 1]) == 0, "joint %d is %s", i, mbs_joint_name(m, i));
        CHECK(mbs_joint_nq(m, i) == 1 && mbs_joint_coord_offset(m, i) == i - 1,
              "joint %d: nq %d, coordinate offset %d", i, mbs_joint_nq(m, i), mbs_joint_coord_offset(m, i));
        mbs_joint_type t = mbs_joint_type_of(m, i);
        CHECK(t == (i <= 3 ? MBS_JOINT_PRISMATIC : MBS_JOINT_REVOLUTE), "joint %d type %s", i, mbs_joint_type_name(t));
        CHECK(mbs_body_parent(m, i) == dh43[i].parent, "parent of body %d is %d, expected %d",
              i, mbs_body_parent(m, i), dh43[i].parent);
        /* the mass of link j sits on the body whose D-H row holds L_j */
        int j = abs(dh43[i].d) + abs(dh43[i].a);
        CHECK_CLOSE(mbs_body_mass(m, i), j ? m43[j] : 0.0, 0, "mass of body %d (%s)", i, mbs_body_name(m, i));
        if (mbs_body_mass(m, i) > 0) nmassive++;
    }
    CHECK(nmassive == 20, "%d massive links (the paper: 20 links)", nmassive);
    CHECK(strcmp(mbs_body_name(m, 5), "pelvis") == 0, "body 5 is the pelvis, got %s", mbs_body_name(m, 5));

    mbs_data *d = mbs_data_create(m, &err);
    CHECK(d != NULL, "mbs_data_create: %s", d ? "" : err.msg);
    if (!d) { mbs_model_free(m); return; }
    double *q = calloc(n, sizeof *q), *qd = calloc(n, sizeof *qd), *qdd = calloc(n, sizeof *qdd);
    double *tau = calloc(n, sizeof *tau), *M = calloc((size_t)n * n, sizeof *M);
    double (*T)[16] = malloc(sizeof(double[44][16]));
    if (!q || !qd || !qdd || !tau || !M || !T) { CHECK(0, "out of memory"); goto done; }

    /* q = 0: the neutral standing posture, by hand from Table 1 (docs/models.md) */
    {
        static const struct { const char *point; double r[3]; } ends[] = {
            { "pelvis.origin",     { 0, 0, 0 } },
            { "r_hemipelvis.distal", { 0.09, 0, 0 } },      /* right hip: a6 = L1 along x */
            { "l_hemipelvis.distal", { -0.09, 0, 0 } },     /* left hip: a14 = -L6 */
            { "r_thigh.distal",    { 0.09, 0, -0.44 } },    /* right knee: L2 down */
            { "r_shank.distal",    { 0.09, 0, -0.87 } },    /* right ankle: + L3 */
            { "r_foot.distal",     { 0.09, 0.16, -0.87 } }, /* ball: d12 = L4 forward */
            { "r_toes.distal",     { 0.09, 0.22, -0.87 } }, /* toe tip: + L5 */
            { "l_toes.distal",     { -0.09, 0.22, -0.87 } },
            { "trunk.distal",      { 0, 0, 0.49 } },        /* a22 = -L11, x22 = -z */
            { "r_shoulder.distal", { 0.17, 0, 0.49 } },     /* a24 = L12 along x */
            { "l_shoulder.distal", { -0.17, 0, 0.49 } },    /* a33 = -L16 */
            { "r_upperarm.distal", { 0.17, 0, 0.21 } },     /* elbow: L13 down */
            { "r_forearm.distal",  { 0.17, 0, -0.05 } },    /* wrist: d29 = L14 along z28 = -z */
            { "r_hand.distal",     { 0.17, 0, -0.24 } },    /* hand tip: + L15 */
            { "l_hand.distal",     { -0.17, 0, -0.24 } },
            { "head.distal",       { 0, 0, 0.84 } },        /* a43 = -L20, x43 = -z */
            { "head.proximal",     { 0, 0, 0.49 } },
        };
        int rc = mbs_kinematics(m, d, q, NULL, NULL);
        CHECK(rc == MBS_OK, "kinematics at q = 0: rc %d", rc);
        for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++) {
            int ip = mbs_point_find(m, ends[k].point);
            CHECK(ip >= 0, "point %s", ends[k].point);
            if (ip < 0) continue;
            double r[3];
            mbs_point_kinematics(m, d, ip, r, NULL, NULL);
            /* round-off of the 43-body recursions (lengths below 1 m) */
            CHECK(mbs_rel_err(r, ends[k].r, 3) <= MBS_ROUNDOFF(n), "%s at q = 0: (%g, %g, %g), expected (%g, %g, %g)",
                  ends[k].point, r[0], r[1], r[2], ends[k].r[0], ends[k].r[1], ends[k].r[2]);
        }
        /* whole-body centre of mass: y = 0.268 / 77.5 (feet and toes in front),
         * z = 3.9475 / 77.5 (docs/models.md) */
        double c[3] = { 0, 0, 0 };
        for (int b = 1; b <= n; b++) {
            double rG[3];
            mbs_body_com(d, b, rG);
            for (int k = 0; k < 3; k++) c[k] += mbs_body_mass(m, b) * rG[k] / 77.5;
        }
        const double cref[3] = { 0, 0.268 / 77.5, 3.9475 / 77.5 };
        CHECK(mbs_rel_err(c, cref, 3) <= MBS_ROUNDOFF(n), "centre of mass at q = 0: (%.15g, %.15g, %.15g)", c[0], c[1],
              c[2]);
        CHECK_CLOSE(mbs_potential_energy(m, d), 77.5 * 9.81 * cref[2], MBS_ROUNDOFF(n) * 77.5 * 9.81,
                    "potential energy at q = 0");

        /* static holding torques at q = 0 (tau = -Q, by hand):
         * q1 vertical slide carries the weight; q2, q3 horizontal: 0;
         * q4 about -x through the origin: -g * sum(m y) = -9.81 * 0.268;
         * hip/knee/ankle flexion (axis -x) of each leg: -9.81 (1.2*0.08 + 0.2*0.19);
         * toe (axis -x at the ball): -9.81 * 0.2 * 0.03; vertical axes: 0;
         * neck flexion: head straight above its joint: 0. */
        rc = mbs_inverse_dynamics(m, d, q, qd, qdd, tau);
        CHECK(rc == MBS_OK, "inverse dynamics at q = 0: rc %d", rc);
        const double leg = -9.81 * (1.2 * 0.08 + 0.2 * 0.19), toe = -9.81 * 0.2 * 0.03;
        static const int idx[] = { 1, 2, 3, 4, 5, 9, 10, 11, 13, 17, 18, 19, 21, 7, 15, 22, 27, 43 };
        const double ref[] = { 77.5 * 9.81, 0, 0, -9.81 * 0.268, 0, leg, leg, leg, toe, leg, leg, leg, toe,
                               0, 0, 0, 0, 0 };
        for (size_t k = 0; k < sizeof idx / sizeof idx[0]; k++)
            /* round-off of the recursions on terms up to the whole weight, 77.5 g */
            CHECK_CLOSE(tau[idx[k] - 1], ref[k], MBS_ROUNDOFF(n) * 77.5 * 9.81, "static torque on %s at q = 0",
                        coord43[idx[k] - 1]);
    }

    /* every body frame at random q against the D-H product */
    mbs_rng rng;
    mbs_rng_seed(&rng, 4343);
    for (int t = 0; t < 6; t++) {
        for (int k = 0; k < n; k++) {
            q[k] = t == 0 ? 0 : mbs_rng_uniform(&rng, k < 3 ? -0.5 : -1.5, k < 3 ? 0.5 : 1.5);
            qd[k] = mbs_rng_uniform(&rng, -2, 2);
        }
        human_frames(q, T);
        int rc = mbs_kinematics(m, d, q, qd, NULL);
        CHECK(rc == MBS_OK, "kinematics rc %d", rc);
        double worst = 0;
        int worst_body = 0;
        for (int i = 1; i <= n; i++) {
            double A[9], o[3], Aref[9], oref[3];
            mbs_body_pose(d, i, A, o);
            for (int r = 0; r < 3; r++) {
                oref[r] = T[i][r * 4 + 3];
                for (int c = 0; c < 3; c++) Aref[r * 3 + c] = T[i][r * 4 + c];
            }
            double e = mbs_rel_err(A, Aref, 9), e2 = mbs_rel_err(o, oref, 3);
            if (e2 > e) e = e2;
            if (e > worst) { worst = e; worst_body = i; }
        }
        CHECK(worst <= MBS_ROUNDOFF(n), "sample %d: body frames vs D-H product, worst %g at body %d (%s)",
              t, worst, worst_body, mbs_body_name(m, worst_body));

        /* mass matrix: symmetric, positive definite, 1/2 qd^T M qd = T */
        double KE = mbs_kinetic_energy(m, d);
        rc = mbs_mass_matrix(m, d, q, M);
        CHECK(rc == MBS_OK, "mass matrix rc %d", rc);
        double mmax = 0;
        for (int k = 0; k < n * n; k++) if (fabs(M[k]) > mmax) mmax = fabs(M[k]);
        CHECK(max_asym(M, n) <= MBS_ROUNDOFF(n) * mmax, "sample %d: mass matrix asymmetry %g", t, max_asym(M, n));
        CHECK(cholesky_ok(M, n), "sample %d: mass matrix not positive definite", t);
        /* generalized mass of the vertical slide = total mass */
        CHECK_CLOSE(M[0], 77.5, MBS_ROUNDOFF(n), "sample %d: M[q1][q1]", t);
        double qMq = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) qMq += qd[i] * M[i * n + j] * qd[j];
        /* qMq: n^2 products of terms up to mmax qd^2 (qd <= 2) */
        CHECK_CLOSE(0.5 * qMq, KE, MBS_ROUNDOFF(n) + n * n * MBS_EPS * mmax * 4, "sample %d: kinetic energy vs "
                    "mass matrix", t);
    }
done:
    free(q); free(qd); free(qdd); free(tau); free(M); free(T);
    mbs_data_free(d);
    mbs_model_free(m);
}

int main(void)
{
    test_double_pendulum();
    test_human43();
    return mbs_test_summary("test_models");
}
