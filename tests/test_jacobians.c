/*
 * test_jacobians.c - frame and point Jacobians, J-dot v, the centre of mass,
 * its Jacobian and the centroidal momentum (mbsens/jacobians.h).
 *
 * On random trees mixing every joint type, for the three reference points
 * and both axes, at a random body and local point:
 *   - J column c against the complex step of the point position and of the
 *     rotation, Im A(q + i h t) A^T / h (the axial vector of a skew matrix),
 *     along the coordinate direction t of the column: e_c, or for an Euler
 *     parameter its tangent part e_c - p_c p (|p| = 1; J p = 0, so J e_c =
 *     J (e_c - p_c p));
 *   - J-dot v against Im J(q + i h v) v / h (v tangent to |p| = 1);
 *   - J v and J vd + J-dot v against the point's velocity and acceleration
 *     of mbs_body_point;
 *   - J_G against the complex step of r_G; A_G e_c = h_G(q, e_c); A_G v = h_G;
 *     A_G-dot v against Im A_G(q + i h v) v / h;
 *   - the named point's Jacobian = the frame Jacobian's linear rows there.
 * And the double pendulum of models/double_pendulum.json, values by hand.
 *
 * Tolerances: the complex step with h = 1e-20 has no truncation error
 * (O(h^2)) and no cancellation; both sides are one evaluation of the
 * kinematics (a sum over the path of terms through a few dozen roundings,
 * times lever arms and rates up to about 10 on these trees): MBS_ROUNDOFF
 * of the tree (testutil.h), relative to max(1, the largest entry).
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"

#define NTREES 150
#define NB_MAX 10
static const double H = 1e-20;

static double worst_frac = 0;   /* the worst error as a fraction of its bound */

/* max |a - b| / max(1, max |b|) against MBS_ROUNDOFF(nb): a CHECK */
static void check_close(const double *a, const double *b, int n, int nb, const char *what, int tree)
{
    const double e = mbs_rel_err(a, b, n), bound = MBS_ROUNDOFF(nb);
    worst_frac = fmax(worst_frac, e / bound);
    CHECK(e <= bound, "tree %d: %s: relative error %.3g > %.3g", tree, what, e, bound);
}

/* The world position of body b's local point pl and its rotation, complex. */
static void pose_cs(const mbs_ws_cs *w, int b, const double *pl, mreal rP[3], mreal A[9])
{
    for (int k = 0; k < 9; k++) A[k] = w->A[9 * b + k];
    for (int r = 0; r < 3; r++) rP[r] = w->o[3 * b + r] + A[3 * r] * pl[0] + A[3 * r + 1] * pl[1] + A[3 * r + 2] * pl[2];
}

/* Direction of column c in q: e_c, or its tangent part for an Euler
 * parameter (the joint's coordinates: the column's offset in the joint). */
static void column_direction(const mbs_model *m, const double *q, int joint, int k, double *t)
{
    const mbs_joint_info *jt = &m->joint[joint];
    memset(t, 0, sizeof(double) * (size_t)m->nq);
    t[jt->qoff + k] = 1;
    if (jt->euler >= 0 && k >= jt->euler && k < jt->euler + 4) {
        const double *p = q + jt->qoff + jt->euler;
        for (int a = 0; a < 4; a++) t[jt->qoff + jt->euler + a] -= p[k - jt->euler] * p[a];
    }
}

/* y = A x for a row-major rows x n matrix */
static void matvec(const double *A, int rows, int n, const double *x, double *y)
{
    for (int r = 0; r < rows; r++) {
        double s = 0;
        for (int c = 0; c < n; c++) s += A[r * n + c] * x[c];
        y[r] = s;
    }
}

typedef struct {
    const mbs_model *m;
    mbs_data *d;
    mbs_ws_cs wc;
    mreal *xc, *qc, *sub;
    double *q, *qd, *qdd, *t, *J, *J2, *AG;
    int tree;
} ctx;

/* The complex-step kinematics (c->wc) at q + i H t, t the tangent direction
 * of velocity k of joint j. */
static void step_column(ctx *c, int j, int k)
{
    column_direction(c->m, c->q, j, k, c->t);
    for (int i = 0; i < c->m->nq; i++) c->qc[i] = c->q[i] + I * H * c->t[i];
    mbs_kin_forward_cs(c->m, c->xc, &c->wc, c->qc, NULL, NULL, 0);
}

/* J (both axes) against the complex step of position and rotation, and
 * J-dot v against the complex step of J along v. */
static void check_frame(ctx *c, int body, const double *pl)
{
    const mbs_model *m = c->m;
    const int nv = m->nv, nq = m->nq;
    double A0[9], r0[3], vP[3], aP[3], w[3], al[3];
    mbs_body_pose(c->d, body, A0, NULL);
    mbs_body_point(c->d, body, pl, r0, vP, aP);
    mbs_body_velocity(c->d, body, NULL, w);
    mbs_body_acceleration(c->d, body, NULL, al);
    for (int axes = MBS_AXES_WORLD; axes <= MBS_AXES_LOCAL; axes++) {
        CHECK(mbs_frame_jacobian(m, c->d, body, pl, (mbs_axes)axes, c->J) == MBS_OK, "%s", mbs_data_error(c->d));
        for (int j = 1; j <= m->nb; j++)
            for (int k = 0; k < m->joint[j].nv; k++) {
                const int col = m->joint[j].voff + k;
                step_column(c, j, k);
                mreal rP[3], A[9];
                pose_cs(&c->wc, body, pl, rP, A);
                double ref[6], got[6], Ad[9], W[9];
                for (int r = 0; r < 9; r++) Ad[r] = cimag(A[r]) / H;
                for (int r = 0; r < 3; r++)
                    for (int s = 0; s < 3; s++)
                        W[3 * r + s] = Ad[3 * r] * A0[3 * s] + Ad[3 * r + 1] * A0[3 * s + 1] + Ad[3 * r + 2] * A0[3 * s + 2];
                const double lin[3] = { cimag(rP[0]) / H, cimag(rP[1]) / H, cimag(rP[2]) / H };
                const double ang[3] = { W[7], W[2], W[3] };
                for (int r = 0; r < 3; r++) {
                    ref[r] = axes ? A0[r] * lin[0] + A0[3 + r] * lin[1] + A0[6 + r] * lin[2] : lin[r];
                    ref[3 + r] = axes ? A0[r] * ang[0] + A0[3 + r] * ang[1] + A0[6 + r] * ang[2] : ang[r];
                }
                for (int r = 0; r < 6; r++) got[r] = c->J[r * nv + col];
                check_close(got, ref, 6, m->nb, axes ? "J local column" : "J world column", c->tree);
            }
        /* J-dot v: Im J(q + i h v) v / h */
        double Jdv[6], ref[6];
        CHECK(mbs_frame_jacobian_dot_v(m, c->d, body, pl, (mbs_axes)axes, Jdv) == MBS_OK, "%s", mbs_data_error(c->d));
        for (int i = 0; i < nq; i++) c->qc[i] = c->q[i] + I * H * c->qd[i];
        mbs_kin_forward_cs(m, c->xc, &c->wc, c->qc, NULL, NULL, 0);
        mreal *Jc = (mreal *)(void *)c->J2, plc[3] = { pl[0], pl[1], pl[2] };
        mbs_frame_jac_cs(m, &c->wc, body, plc, axes, Jc);
        for (int r = 0; r < 6; r++) {
            mreal s = 0;
            for (int k = 0; k < nv; k++) s += Jc[r * nv + k] * c->qd[k];
            ref[r] = cimag(s) / H;
        }
        check_close(Jdv, ref, 6, m->nb, axes ? "J-dot v local" : "J-dot v world", c->tree);
        if (axes == MBS_AXES_LOCAL) continue;
        /* J v = [v_P; w], J vd + J-dot v = [a_P; alpha] */
        double Jv[6], Ja[6], vw[6], aa[6];
        matvec(c->J, 6, nv, c->qd, Jv);
        matvec(c->J, 6, nv, c->qdd, Ja);
        for (int r = 0; r < 6; r++) Ja[r] += Jdv[r];
        for (int r = 0; r < 3; r++) { vw[r] = vP[r]; vw[3 + r] = w[r]; aa[r] = aP[r]; aa[3 + r] = al[r]; }
        check_close(Jv, vw, 6, m->nb, "J v", c->tree);
        check_close(Ja, aa, 6, m->nb, "J vd + J-dot v", c->tree);
    }
}

/* A_G and J_G (complex step of r_G; h_G at unit velocities) and A_G-dot v. */
static void check_centroidal(ctx *c)
{
    const mbs_model *m = c->m;
    const int nv = m->nv, nq = m->nq;
    double JG[3 * 64], hG[6], Av[6], dh[6], ref[6], rG[3];
    CHECK(mbs_com_jacobian(m, c->d, JG) == MBS_OK, "%s", mbs_data_error(c->d));
    CHECK(mbs_centroidal_momentum_matrix(m, c->d, c->AG) == MBS_OK, "%s", mbs_data_error(c->d));
    CHECK(mbs_centroidal_momentum(m, c->d, hG) == MBS_OK, "%s", mbs_data_error(c->d));
    CHECK(mbs_centroidal_momentum_dot_v(m, c->d, dh) == MBS_OK, "%s", mbs_data_error(c->d));
    CHECK(mbs_com(m, c->d, rG, NULL, NULL) == MBS_OK, "%s", mbs_data_error(c->d));
    matvec(c->AG, 6, nv, c->qd, Av);
    check_close(Av, hG, 6, m->nb, "A_G v = h_G", c->tree);
    for (int j = 1; j <= m->nb; j++)
        for (int k = 0; k < m->joint[j].nv; k++) {
            const int col = m->joint[j].voff + k;
            step_column(c, j, k);
            mreal rc[3];
            mbs_com_kin_cs(m, c->xc, &c->wc, rc, NULL, NULL);
            double got[3];
            for (int r = 0; r < 3; r++) { ref[r] = cimag(rc[r]) / H; got[r] = JG[r * nv + col]; }
            check_close(got, ref, 3, m->nb, "J_G column", c->tree);
        }
    /* A_G e_c = h_G(q, e_c) */
    for (int col = 0; col < nv; col++) {
        memset(c->t, 0, sizeof(double) * (size_t)nv);
        c->t[col] = 1;
        CHECK(mbs_kinematics(m, c->d, c->q, c->t, NULL) == MBS_OK, "%s", mbs_data_error(c->d));
        double h[6], got[6];
        CHECK(mbs_centroidal_momentum(m, c->d, h) == MBS_OK, "%s", mbs_data_error(c->d));
        for (int r = 0; r < 6; r++) got[r] = c->AG[r * nv + col];
        check_close(got, h, 6, m->nb, "A_G e_c = h_G(q, e_c)", c->tree);
    }
    /* A_G-dot v: Im A_G(q + i h v) v / h */
    for (int i = 0; i < nq; i++) c->qc[i] = c->q[i] + I * H * c->qd[i];
    mbs_kin_forward_cs(m, c->xc, &c->wc, c->qc, NULL, NULL, 0);
    mreal rc[3], *Ac = (mreal *)(void *)c->J2;
    const mreal mt = mbs_com_kin_cs(m, c->xc, &c->wc, rc, NULL, NULL);
    mbs_com_subtrees_cs(m, c->xc, &c->wc, rc, c->sub);
    for (int k = 0; k < 6 * nv; k++) Ac[k] = 0;
    mbs_centroidal_columns_cs(m, &c->wc, rc, mt, c->sub, Ac, NULL);
    for (int r = 0; r < 6; r++) {
        mreal s = 0;
        for (int k = 0; k < nv; k++) s += Ac[r * nv + k] * c->qd[k];
        ref[r] = cimag(s) / H;
    }
    check_close(dh, ref, 6, m->nb, "A_G-dot v", c->tree);
}

static void random_trees(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2026);
    int types_seen[MBS_JOINT_TYPE_COUNT] = { 0 };
    for (int tree = 0; tree < NTREES; tree++) {
        mbs_model *m = mbs_test_random_tree(&rng, 1 + mbs_rng_int(&rng, NB_MAX), 0);
        CHECK(m != NULL, "random tree %d", tree);
        if (!m) continue;
        for (int i = 1; i <= m->nb; i++) types_seen[m->joint[i].type]++;
        const size_t nq = (size_t)m->nq + 1, nv = (size_t)m->nv + 1;
        ctx c = { .m = m, .tree = tree };
        c.q = calloc(nq, sizeof(double)); c.qd = calloc(nv, sizeof(double)); c.qdd = calloc(nv, sizeof(double));
        c.t = calloc(nq > nv ? nq : nv, sizeof(double));
        c.J = calloc(6 * nv, sizeof(double)); c.AG = calloc(6 * nv, sizeof(double));
        c.J2 = calloc(6 * nv, sizeof(mreal));   /* complex J or A_G */
        c.qc = calloc(nq, sizeof(mreal)); c.xc = calloc((size_t)m->nx, sizeof(mreal));
        c.sub = calloc(MBS_COM_SUB * ((size_t)m->nb + 1), sizeof(mreal));
        for (int k = 0; k < m->nx; k++) c.xc[k] = m->x[k];
        CHECK(m->nv <= 64, "tree %d: nv %d fits the test's J_G", tree, m->nv);
        CHECK(mbs_ws_init_cs(&c.wc, m) == 0, "complex workspace");
        c.d = mbs_data_create(m, NULL);
        mbs_test_random_state(&rng, m, c.q, c.qd, c.qdd);
        const int body = 1 + mbs_rng_int(&rng, m->nb);
        double pl[3];
        for (int k = 0; k < 3; k++) pl[k] = mbs_rng_uniform(&rng, -1, 1);
        for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
            mbs_data_set_ref(c.d, (mbs_ref_point)ref);
            c.wc.ref = (mbs_ref_point)ref;
            CHECK(mbs_kinematics(m, c.d, c.q, c.qd, c.qdd) == MBS_OK, "%s", mbs_data_error(c.d));
            check_frame(&c, body, pl);
            for (int p = 0; p < m->npoint; p++) {
                double Jp[3 * 64];
                CHECK(mbs_point_jacobian(m, c.d, p, Jp) == MBS_OK, "%s", mbs_data_error(c.d));
                mbs_frame_jacobian(m, c.d, m->point[p].body, m->x + m->point[p].x, MBS_AXES_WORLD, c.J);
                CHECK(memcmp(Jp, c.J, sizeof(double) * 3 * (size_t)m->nv) == 0, "tree %d: point %d", tree, p);
            }
            check_centroidal(&c);
        }
        mbs_data_free(c.d);
        mbs_ws_free_cs(&c.wc);
        mbs_model_free(m);
        free(c.q); free(c.qd); free(c.qdd); free(c.t); free(c.J); free(c.AG); free(c.J2);
        free(c.qc); free(c.xc); free(c.sub);
    }
    for (int k = 0; k < MBS_JOINT_TYPE_COUNT; k++)
        CHECK(types_seen[k] > 0, "joint type %s drawn", mbs_joint_type_name((mbs_joint_type)k));
}

/* The double pendulum (point masses 1 at P1 = (s1, -c1, 0) and P2 = P1 +
 * (s12, -c12, 0), q1 absolute, q2 relative, both about z): every result by
 * hand. Both sides are a few roundings of numbers of order 1 to 10:
 * MBS_ROUNDOFF of the two bodies. */
static void double_pendulum(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/double_pendulum.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return;
    mbs_data *d = mbs_data_create(m, NULL);
    const double q[2] = { 0.3, -0.4 }, qd[2] = { 1, 2 }, qdd[2] = { 0.5, -0.25 };
    CHECK(mbs_kinematics(m, d, q, qd, qdd) == MBS_OK, "%s", mbs_data_error(d));
    const double s1 = sin(q[0]), c1 = cos(q[0]), s12 = sin(q[0] + q[1]), c12 = cos(q[0] + q[1]);
    const double w1 = qd[0], w12 = qd[0] + qd[1], tol = MBS_ROUNDOFF(2);
    const int b2 = mbs_body_find(m, "body2"), Q = mbs_point_find(m, "body2.Q");
    const double Ql[3] = { 0, -1, 0 };
    double J[12], Jdv[6], Jp[6];
    /* world axes at Q: columns (c1 + c12, s1 + s12, 0; 0, 0, 1) and (c12, s12, 0; 0, 0, 1) */
    const double Jw[12] = { c1 + c12, c12, s1 + s12, s12, 0, 0, 0, 0, 0, 0, 1, 1 };
    CHECK(mbs_frame_jacobian(m, d, b2, Ql, MBS_AXES_WORLD, J) == MBS_OK, "%s", mbs_data_error(d));
    for (int k = 0; k < 12; k++) CHECK_CLOSE(J[k], Jw[k], tol, "J world [%d]", k);
    CHECK(mbs_point_jacobian(m, d, Q, Jp) == MBS_OK, "%s", mbs_data_error(d));
    for (int k = 0; k < 6; k++) CHECK_CLOSE(Jp[k], Jw[k], tol, "point J [%d]", k);
    /* body axes (rotated by q1 + q2): (1 + cos q2, -sin q2) and (1, 0) */
    const double Jl[12] = { 1 + cos(q[1]), 1, -sin(q[1]), 0, 0, 0, 0, 0, 0, 0, 1, 1 };
    CHECK(mbs_frame_jacobian(m, d, b2, Ql, MBS_AXES_LOCAL, J) == MBS_OK, "%s", mbs_data_error(d));
    for (int k = 0; k < 12; k++) CHECK_CLOSE(J[k], Jl[k], tol, "J local [%d]", k);
    /* J-dot v at Q: the centripetal acceleration w1^2 (-s1, c1) + w12^2 (-s12, c12) */
    const double a1[3] = { -s1 * w1 * w1, c1 * w1 * w1, 0 };
    const double a2[3] = { a1[0] - s12 * w12 * w12, a1[1] + c12 * w12 * w12, 0 };
    CHECK(mbs_frame_jacobian_dot_v(m, d, b2, Ql, MBS_AXES_WORLD, Jdv) == MBS_OK, "%s", mbs_data_error(d));
    for (int k = 0; k < 6; k++) CHECK_CLOSE(Jdv[k], k < 3 ? a2[k] : 0, tol, "J-dot v [%d]", k);
    /* centre of mass, its Jacobian, centroidal momentum and its rate */
    const double P1[2] = { s1, -c1 }, P2[2] = { s1 + s12, -c1 - c12 };
    const double v1[2] = { w1 * c1, w1 * s1 }, v2[2] = { v1[0] + w12 * c12, v1[1] + w12 * s12 };
    const double G[2] = { (P1[0] + P2[0]) / 2, (P1[1] + P2[1]) / 2 };
    const double g1[2] = { P1[0] - G[0], P1[1] - G[1] }, g2[2] = { P2[0] - G[0], P2[1] - G[1] };
    double rG[3], vG[3], aG[3], JG[6], hG[6], AG[12], dh[6];
    CHECK(mbs_com(m, d, rG, vG, aG) == MBS_OK, "%s", mbs_data_error(d));
    for (int k = 0; k < 2; k++) CHECK_CLOSE(rG[k], G[k], tol, "r_G [%d]", k);
    for (int k = 0; k < 2; k++) CHECK_CLOSE(vG[k], (v1[k] + v2[k]) / 2, tol, "v_G [%d]", k);
    CHECK(mbs_com_jacobian(m, d, JG) == MBS_OK, "%s", mbs_data_error(d));
    const double JGh[6] = { c1 + c12 / 2, c12 / 2, s1 + s12 / 2, s12 / 2, 0, 0 };
    for (int k = 0; k < 6; k++) CHECK_CLOSE(JG[k], JGh[k], tol, "J_G [%d]", k);
    CHECK(mbs_centroidal_momentum(m, d, hG) == MBS_OK, "%s", mbs_data_error(d));
    const double Lz = g1[0] * v1[1] - g1[1] * v1[0] + g2[0] * v2[1] - g2[1] * v2[0];
    const double hh[6] = { v1[0] + v2[0], v1[1] + v2[1], 0, 0, 0, Lz };
    for (int k = 0; k < 6; k++) CHECK_CLOSE(hG[k], hh[k], tol, "h_G [%d]", k);
    /* A_G column 2 (body 2 alone turning about the second pivot): linear
     * (c12, s12), angular g2 x (c12, s12) */
    CHECK(mbs_centroidal_momentum_matrix(m, d, AG) == MBS_OK, "%s", mbs_data_error(d));
    const double AG2[6] = { c12, s12, 0, 0, 0, g2[0] * s12 - g2[1] * c12 };
    for (int k = 0; k < 6; k++) CHECK_CLOSE(AG[2 * k + 1], AG2[k], tol, "A_G column 2 [%d]", k);
    const double dhh[6] = { a1[0] + a2[0], a1[1] + a2[1], 0, 0, 0,
                            g1[0] * a1[1] - g1[1] * a1[0] + g2[0] * a2[1] - g2[1] * a2[0] };
    CHECK(mbs_centroidal_momentum_dot_v(m, d, dh) == MBS_OK, "%s", mbs_data_error(d));
    for (int k = 0; k < 6; k++) CHECK_CLOSE(dh[k], dhh[k], tol, "A_G-dot v [%d]", k);
    /* bad arguments: a clear error, nothing else */
    CHECK(mbs_frame_jacobian(m, d, 3, NULL, MBS_AXES_WORLD, J) == MBS_ERR_ARG, "body 3");
    CHECK(strstr(mbs_data_error(d), "out of range 0..2") != NULL, "message: %s", mbs_data_error(d));
    CHECK(mbs_frame_jacobian(m, d, 1, NULL, (mbs_axes)7, J) == MBS_ERR_ARG, "axes 7");
    CHECK(mbs_point_jacobian(m, d, 9, J) == MBS_ERR_ARG, "point 9");
    const double bad[3] = { 0, NAN, 0 };
    CHECK(mbs_frame_jacobian_dot_v(m, d, 1, bad, MBS_AXES_WORLD, Jdv) == MBS_ERR_ARG, "NaN point");
    mbs_data_free(d);
    mbs_model_free(m);
}

int main(void)
{
    double_pendulum();
    random_trees();
    printf("worst error / bound: %.3g\n", worst_frac);
    return mbs_test_summary("test_jacobians");
}
