/*
 * test_kinematics.c - recursive kinematics against independent derivatives.
 *
 * On random trees mixing every joint type, for the three reference points:
 *   - velocities (the maps b_i) against the complex-step derivative of
 *     positions along q(t) = q + t qd, and against central differences;
 *   - accelerations (bd_i, d_i) against the complex-step derivative of
 *     velocities along (q + t qd, qd + t qdd), and central differences;
 *   - angular velocity from dA/dt A^T = S(w);
 *   - physical results independent of the reference point;
 *   - named points and vectors; Euler-parameter mappings;
 *   - the cardan joints' fast path (kernels/kinematics.c) = the joint's
 *     definition, R = Rot(e1, q1) Rot(e2, q2), w = e1 q1dot + Rot(e1, q1) e2
 *     q2dot, composed here from the joint frames on random cardan trees.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "mbs_testing.h"

#define NTREES 250
#define NB_MAX 10   /* bodies of the random trees: 1 .. NB_MAX */
static const double H = 1e-20;

typedef struct {
    double rG[3], vG[3], aG[3], w[3], al[3], A[9];
} body_kin;

static void kin_double(const mbs_model *m, mbs_data *d, body_kin *out)
{
    for (int i = 1; i <= m->nb; i++) {
        mbs_body_com(d, i, out[i].rG);
        mbs_body_velocity(d, i, out[i].vG, out[i].w);
        mbs_body_acceleration(d, i, out[i].aG, out[i].al);
        mbs_body_pose(d, i, out[i].A, NULL);
    }
}

/* CoM position and velocity from the complex workspace. */
static void com_cs(const mbs_ws_cs *w, int i, mreal *rG, mreal *vG)
{
    mreal s[3], t[3];
    for (int k = 0; k < 3; k++) rG[k] = w->rG[3 * i + k];
    v3_sub(s, w->rG + 3 * i, w->r + 3 * i);
    v3_cross(t, w->V + 6 * i + 3, s);
    v3_add(vG, w->V + 6 * i, t);
}

/* R = A B^T for double 3x3 (this file is compiled with mreal = complex) */
static void dmul_bt(double *R, const double *A, const double *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}

static double maxabs(const double *a, int n)
{
    double s = 0;
    for (int k = 0; k < n; k++) if (fabs(a[k]) > s) s = fabs(a[k]);
    return s;
}

/* Rotation about e1 (k = 0) or e2 (k = 1) */
static void rot_axis(double *R, int k, double th)
{
    const double c = cos(th), s = sin(th);
    const double Rx[9] = { 1, 0, 0, 0, c, -s, 0, s, c }, Ry[9] = { c, 0, s, 0, 1, 0, -s, 0, c };
    memcpy(R, k ? Ry : Rx, sizeof Rx);
}

static void dmul(double *R, const double *A, const double *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}

static void dmv(double *y, const double *A, const double *x)
{
    for (int i = 0; i < 3; i++) y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}

/* Random trees of cardan joints: body poses and angular velocities of
 * mbs_kinematics against the recursion from the joint's definition; the
 * worst relative difference (the rotations and origins, the angular
 * velocities: each a few roundings per body on the path) */
static double cardan_definition(mbs_rng *rng)
{
    double worst = 0;
    for (int tree = 0; tree < 50; tree++) {
        mbs_model *m = mbs_test_random_tree(rng, 1 + mbs_rng_int(rng, NB_MAX), 1u << MBS_JOINT_CARDAN);
        CHECK(m != NULL, "cardan tree %d", tree);
        if (!m) continue;
        const int nb = m->nb, nq = m->nq;
        double *q = calloc((size_t)nq, sizeof(double)), *qd = calloc((size_t)nq, sizeof(double));
        double (*A)[9] = calloc((size_t)nb + 1, sizeof *A), (*o)[3] = calloc((size_t)nb + 1, sizeof *o);
        double (*w)[3] = calloc((size_t)nb + 1, sizeof *w);
        mbs_test_random_state(rng, m, q, qd, NULL);
        mbs_data *d = mbs_data_create(m, NULL);
        CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_OK, "kinematics: %s", mbs_data_error(d));
        A[0][0] = A[0][4] = A[0][8] = 1;
        for (int i = 1; i <= nb; i++) {
            const int h = m->joint[i].parent, c = m->joint[i].qoff;
            double Pp[3], Xp[9], Pc[3], Xc[9], R1[9], R2[9], R[9], AX[9], T[9], t[3], e2[3], wl[3], wg[3];
            mbs_joint_frames(m, i, Pp, Xp, Pc, Xc);
            rot_axis(R1, 0, q[c]);
            rot_axis(R2, 1, q[c + 1]);
            dmul(R, R1, R2);
            dmul(AX, A[h], Xp);
            dmul(T, AX, R);
            for (int r = 0; r < 3; r++)
                for (int k = 0; k < 3; k++) A[i][3 * r + k] = T[3 * r] * Xc[3 * k] + T[3 * r + 1] * Xc[3 * k + 1] + T[3 * r + 2] * Xc[3 * k + 2];
            dmv(t, A[h], Pp);
            double ac[3];
            dmv(ac, A[i], Pc);
            for (int k = 0; k < 3; k++) o[i][k] = o[h][k] + t[k] - ac[k];
            const double ey[3] = { 0, 1, 0 };
            dmv(e2, R1, ey);
            for (int k = 0; k < 3; k++) wl[k] = (k == 0 ? qd[c] : 0) + e2[k] * qd[c + 1];
            dmv(wg, AX, wl);
            for (int k = 0; k < 3; k++) w[i][k] = w[h][k] + wg[k];
            double Ak[9], ok[3], vk[3], wk[3];
            mbs_body_pose(d, i, Ak, ok);
            mbs_body_velocity(d, i, vk, wk);
            worst = fmax(worst, fmax(mbs_rel_err(Ak, A[i], 9), fmax(mbs_rel_err(ok, o[i], 3), mbs_rel_err(wk, w[i], 3))));
        }
        mbs_data_free(d);
        mbs_model_free(m);
        free(q); free(qd); free(A); free(o); free(w);
    }
    return worst;
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 12345);
    double worst_cs_v = 0, worst_cs_a = 0, worst_fd_v = 0, worst_fd_a = 0, worst_ref = 0;
    int types_seen[MBS_JOINT_TYPE_COUNT] = { 0 };

    for (int tree = 0; tree < NTREES; tree++) {
        int nb = 1 + mbs_rng_int(&rng, NB_MAX);
        mbs_model *m = mbs_test_random_tree(&rng, nb, 0);
        CHECK(m != NULL, "random tree %d", tree);
        if (!m) continue;
        for (int i = 1; i <= m->nb; i++) types_seen[m->joint[i].type]++;
        int nq = m->nq;
        double *q = calloc((size_t)nq + 1, sizeof(double)), *qd = calloc((size_t)nq + 1, sizeof(double));
        double *qdd = calloc((size_t)nq + 1, sizeof(double)), *qt = calloc((size_t)nq + 1, sizeof(double));
        mreal *qc = calloc((size_t)nq + 1, sizeof(mreal)), *qdc = calloc((size_t)nq + 1, sizeof(mreal));
        mreal *qddc = calloc((size_t)nq + 1, sizeof(mreal)), *xc = calloc((size_t)m->nx, sizeof(mreal));
        body_kin *ref0 = calloc((size_t)m->nb + 1, sizeof(body_kin)), *cur = calloc((size_t)m->nb + 1, sizeof(body_kin));
        body_kin *kp = calloc((size_t)m->nb + 1, sizeof(body_kin)), *km = calloc((size_t)m->nb + 1, sizeof(body_kin));
        body_kin *kp2 = calloc((size_t)m->nb + 1, sizeof(body_kin)), *km2 = calloc((size_t)m->nb + 1, sizeof(body_kin));
        mbs_test_random_state(&rng, m, q, qd, qdd);
        for (int k = 0; k < m->nx; k++) xc[k] = m->x[k];
        mbs_data *d = mbs_data_create(m, NULL);
        mbs_ws_cs wc;
        CHECK(mbs_ws_init_cs(&wc, m) == 0, "complex workspace");

        for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
            mbs_data_set_ref(d, (mbs_ref_point)ref);
            wc.ref = (mbs_ref_point)ref;
            CHECK(mbs_kinematics(m, d, q, qd, qdd) == MBS_OK, "kinematics: %s", mbs_data_error(d));
            kin_double(m, d, cur);
            if (ref == MBS_REF_COM) memcpy(ref0, cur, sizeof(body_kin) * (size_t)(m->nb + 1));
            else
                for (int i = 1; i <= m->nb; i++) {
                    double e = 0, a[24], b[24];
                    memcpy(a, &cur[i], sizeof a);
                    memcpy(b, &ref0[i], sizeof b);
                    e = mbs_rel_err(a, b, 24);
                    if (e > worst_ref) worst_ref = e;
                }

            /* velocity: d/dt positions along q + t qd (complex step) */
            for (int k = 0; k < nq; k++) { qc[k] = q[k] + I * H * qd[k]; qdc[k] = qd[k] + I * H * qdd[k]; qddc[k] = qdd[k]; }
            mbs_kin_forward_cs(m, xc, &wc, qc, qdc, qddc, 2);
            for (int i = 1; i <= m->nb; i++) {
                mreal rG[3], vG[3];
                com_cs(&wc, i, rG, vG);
                double dv[3], da[3], dw[3], e;
                for (int k = 0; k < 3; k++) {
                    dv[k] = cimag(rG[k]) / H - cur[i].vG[k];
                    da[k] = cimag(vG[k]) / H - cur[i].aG[k];
                    dw[k] = cimag(wc.V[6 * i + 3 + k]) / H - cur[i].al[k];
                }
                /* dA/dt A^T = S(w) */
                double Ad[9], W[9];
                for (int k = 0; k < 9; k++) Ad[k] = cimag(wc.A[9 * i + k]) / H;
                dmul_bt(W, Ad, cur[i].A);
                double ws[3] = { W[7], W[2], W[3] }, dws[3];
                for (int k = 0; k < 3; k++) dws[k] = ws[k] - cur[i].w[k];
                double sv = 1 + maxabs(cur[i].vG, 3), sa = 1 + maxabs(cur[i].aG, 3) + maxabs(cur[i].al, 3);
                e = maxabs(dv, 3) / sv;
                if (e > worst_cs_v) worst_cs_v = e;
                e = maxabs(dws, 3) / (1 + maxabs(cur[i].w, 3));
                if (e > worst_cs_v) worst_cs_v = e;
                e = (maxabs(da, 3) + maxabs(dw, 3)) / sa;
                if (e > worst_cs_a) worst_cs_a = e;
            }
        }
        /* central differences of positions (plain double path, CoM reference): velocity (dt = 1e-4)
         * and acceleration (second difference, dt = 1e-3), each within its own error: truncation
         * c dt^2, shown by the same difference at 2 dt (3 c dt^2 apart: 2/3 of that, with a margin of
         * 2), and round-off, that of the positions (MBS_ROUNDOFF of the tree, relative to 1 + |r|) over
         * 2 dt or dt^2, twice */
        for (int pass = 0; pass < 2; pass++) {
            const double dt = pass == 0 ? 1e-4 : 1e-3;
            mbs_data_set_ref(d, MBS_REF_COM);
            for (int s = -2; s <= 2; s++) {
                if (s == 0) continue;
                for (int k = 0; k < nq; k++) qt[k] = q[k] + s * dt * qd[k] + 0.5 * s * s * dt * dt * qdd[k];
                CHECK(mbs_kinematics(m, d, qt, NULL, NULL) == MBS_OK, "fd kinematics: %s", mbs_data_error(d));
                kin_double(m, d, s == -1 ? km : s == 1 ? kp : s == -2 ? km2 : kp2);
            }
            for (int i = 1; i <= m->nb; i++) {
                double ev = 0, ea = 0;
                for (int k = 0; k < 3; k++) {
                    const double r = MBS_ROUNDOFF(m->nb) * (1 + fabs(ref0[i].rG[k]));
                    const double v = (kp[i].rG[k] - km[i].rG[k]) / (2 * dt);
                    const double v2 = (kp2[i].rG[k] - km2[i].rG[k]) / (4 * dt);
                    const double a = (kp[i].rG[k] - 2 * ref0[i].rG[k] + km[i].rG[k]) / (dt * dt);
                    const double a2 = (kp2[i].rG[k] - 2 * ref0[i].rG[k] + km2[i].rG[k]) / (4 * dt * dt);
                    const double bv = 4.0 / 3 * fabs(v - v2) + 2 * r / dt, ba = 4.0 / 3 * fabs(a - a2) + 8 * r / (dt * dt);
                    ev = fmax(ev, fabs(v - ref0[i].vG[k]) / bv);
                    ea = fmax(ea, fabs(a - ref0[i].aG[k]) / ba);
                }
                if (pass == 0 && ev > worst_fd_v) worst_fd_v = ev;
                if (pass == 1 && ea > worst_fd_a) worst_fd_a = ea;
            }
        }
        /* named points and vectors: derivatives of positions */
        mbs_data_set_ref(d, MBS_REF_ORIGIN);
        wc.ref = MBS_REF_ORIGIN;
        CHECK(mbs_kinematics(m, d, q, qd, qdd) == MBS_OK, "kinematics");
        mbs_kin_forward_cs(m, xc, &wc, qc, qdc, qddc, 2);
        for (int p = 0; p < m->npoint; p++) {
            if (!m->point[p].name) continue;
            double r[3], v[3], a[3];
            mbs_point_kinematics(m, d, p, r, v, a);
            int b = m->point[p].body;
            mreal rp[3], t[3];
            m3_mv(rp, wc.A + 9 * b, xc + m->point[p].x);
            v3_add(rp, rp, wc.o + 3 * b);
            (void)t;
            double e = 0;
            for (int k = 0; k < 3; k++) e = fmax(e, fabs(cimag(rp[k]) / H - v[k]));
            CHECK(e <= MBS_ROUNDOFF(m->nb) * (1 + maxabs(v, 3)), "point %s velocity error %g", m->point[p].name, e);
        }
        for (int p = 0; p < m->nvector; p++) {
            double u[3], ud[3], udd[3];
            mbs_vector_kinematics(m, d, p, u, ud, udd);
            int b = m->vector[p].body;
            mreal uc[3];
            m3_mv(uc, wc.A + 9 * b, xc + m->vector[p].x);
            double e = 0;
            for (int k = 0; k < 3; k++) e = fmax(e, fabs(cimag(uc[k]) / H - ud[k]));
            CHECK(e <= MBS_ROUNDOFF(m->nb) * (1 + maxabs(ud, 3)), "vector %s derivative error %g", m->vector[p].name, e);
            /* a unit vector rotated by the product of the tree's rotations (orthogonal to round-off) */
            CHECK(fabs(u[0] * u[0] + u[1] * u[1] + u[2] * u[2] - 1) <= MBS_ROUNDOFF(m->nb), "vector stays unit");
        }

        mbs_ws_free_cs(&wc);
        mbs_data_free(d);
        mbs_model_free(m);
        free(q); free(qd); free(qdd); free(qt); free(qc); free(qdc); free(qddc); free(xc);
        free(ref0); free(cur); free(kp); free(km); free(kp2); free(km2);
    }
    printf("worst relative errors: velocity cs %.2e, acceleration cs %.2e, reference points %.2e; central "
           "differences: velocity %.2f, acceleration %.2f of their own error\n",
           worst_cs_v, worst_cs_a, worst_ref, worst_fd_v, worst_fd_a);
    /* identities to round-off (trees of at most NB_MAX bodies) */
    CHECK(worst_cs_v <= MBS_ROUNDOFF(NB_MAX), "velocity vs complex step: %g", worst_cs_v);
    CHECK(worst_cs_a <= MBS_ROUNDOFF(NB_MAX), "acceleration vs complex step: %g", worst_cs_a);
    CHECK(worst_fd_v <= 1, "velocity vs central differences: %g of their error", worst_fd_v);
    CHECK(worst_fd_a <= 1, "acceleration vs central differences: %g of their error", worst_fd_a);
    CHECK(worst_ref <= MBS_ROUNDOFF(NB_MAX), "reference point independence: %g", worst_ref);
    const double worst_cardan = cardan_definition(&rng);
    printf("cardan fast path vs the joint's definition: worst relative difference %.2e\n", worst_cardan);
    CHECK(worst_cardan <= MBS_ROUNDOFF(NB_MAX), "cardan fast path = definition: %g", worst_cardan);
    for (int t = 0; t < MBS_JOINT_TYPE_COUNT; t++)
        CHECK(types_seen[t] > 20, "joint type %s covered %d times", mbs_joint_type_name((mbs_joint_type)t), types_seen[t]);

    /* Euler parameters: w = 2 E pdot and pdot = 1/2 E^T w are inverse maps
     * on p.pdot = 0, and A(p) is a rotation with dA/dt = S(w) A. */
    for (int trial = 0; trial < 100; trial++) {
        double p[4], w[3], pd[4], w2[3], n = 0;
        for (int k = 0; k < 4; k++) { p[k] = mbs_rng_uniform(&rng, -1, 1); n += p[k] * p[k]; }
        for (int k = 0; k < 4; k++) p[k] /= sqrt(n);
        for (int k = 0; k < 3; k++) w[k] = mbs_rng_uniform(&rng, -5, 5);
        mbs_euler_rates_from_omega(p, w, pd);
        mbs_euler_omega_from_rates(p, pd, w2);
        /* 4 x 3 products and sums each way, |w| <= 9: 64 eps relative; p.pdot of order |pd| (<= 5) */
        CHECK(mbs_rel_err(w2, w, 3) <= 64 * MBS_EPS, "omega round trip");
        CHECK(fabs(p[0] * pd[0] + p[1] * pd[1] + p[2] * pd[2] + p[3] * pd[3]) <= 64 * MBS_EPS * 5, "p.pdot = 0");
        mreal pc[4], A[9];
        double Ad[9], A0[9], W[9];
        for (int k = 0; k < 4; k++) pc[k] = p[k] + I * H * pd[k];
        ep_rotation(A, pc);
        for (int k = 0; k < 9; k++) { Ad[k] = cimag(A[k]) / H; A0[k] = creal(A[k]); }
        dmul_bt(W, Ad, A0);
        double ws[3] = { W[7], W[2], W[3] };
        CHECK(mbs_rel_err(ws, w, 3) <= 4 * 64 * MBS_EPS, "dA/dt A^T = S(2 E pdot)");
    }
    /* mbs_normalize_state projects onto |p| = 1, p.pdot = 0 */
    {
        mbs_model *m = mbs_test_random_tree(&rng, 3, 1u << MBS_JOINT_SPHERICAL);
        double q[12], qd[12];
        for (int k = 0; k < 12; k++) { q[k] = mbs_rng_uniform(&rng, -2, 2); qd[k] = mbs_rng_uniform(&rng, -2, 2); }
        mbs_data *d = mbs_data_create(m, NULL);
        CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_ERR_NUMERIC, "non-normalized Euler parameters rejected");
        CHECK(strstr(mbs_data_error(d), "not normalized") != NULL, "message: %s", mbs_data_error(d));
        CHECK(mbs_normalize_state(m, q, qd) == MBS_OK, "normalize");
        for (int j = 0; j < 3; j++) {
            double n = 0, s = 0;
            for (int k = 0; k < 4; k++) { n += q[4 * j + k] * q[4 * j + k]; s += q[4 * j + k] * qd[4 * j + k]; }
            /* p / |p| and pd minus its projection: a few roundings (4 eps; |qd| <= 2) */
            CHECK(fabs(n - 1) <= 4 * MBS_EPS && fabs(s) <= 4 * MBS_EPS * 4, "normalized joint %d", j);
        }
        CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_OK, "normalized state accepted");
        q[0] = NAN;
        CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_ERR_NUMERIC, "NaN rejected");
        CHECK(strstr(mbs_data_error(d), "not finite") != NULL, "message: %s", mbs_data_error(d));
        mbs_data_free(d);
        mbs_model_free(m);
    }
    return mbs_test_summary("kinematics");
}
