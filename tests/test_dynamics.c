/*
 * test_dynamics.c - inverse dynamics and mass matrix on random trees.
 *
 * For 250 random trees mixing every joint type, with random body loads at
 * random points and random joint loads, for the three reference points:
 *   - two independent paths: ID(q, qd, qdd) = M(q) qdd + ID(q, qd, 0)
 *     (Newton-Euler recursion vs composite-inertia mass matrix);
 *   - the result does not depend on the reference point;
 *   - M is symmetric, 1/2 qd^T M qd equals the kinetic energy computed body
 *     by body, M p = 0 along every Euler-parameter quadruple;
 *   - power balance: dT/dt (complex step along the motion) equals the
 *     power of the actuation tau, gravity, body loads and joint loads.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_model.h"
#include "kernels/kernels.h"
#include "base/algebra.h"

#define NTREES 250
static const double H = 1e-20;

static double ddot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static mreal kinetic_energy_cs(const mbs_model *m, const mreal *x, const mbs_ws_cs *w)
{
    mreal T = 0;
    for (int i = 1; i <= m->nb; i++) {
        mreal s[3], t[3], v[3], Jw[3];
        const mreal *om = w->V + 6 * i + 3;
        v3_sub(s, w->rG + 3 * i, w->r + 3 * i);
        v3_cross(t, om, s);
        v3_add(v, w->V + 6 * i, t);
        m3_mv(Jw, w->J + 9 * i, om);
        T += 0.5 * (x[m->body[i].x_mass] * v3_dot(v, v) + v3_dot(om, Jw));
    }
    return T;
}

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 2024);
    double w_two = 0, w_ref = 0, w_sym = 0, w_ke = 0, w_null = 0, w_pow = 0, w_orth = 0;

    for (int tree = 0; tree < NTREES; tree++) {
        int nb = 1 + mbs_rng_int(&rng, 12);
        mbs_model *m = mbs_test_random_tree(&rng, nb, 0);
        CHECK(m != NULL, "random tree %d", tree);
        if (!m) continue;
        const int nq = m->nq;
        size_t n1 = (size_t)nq + 1;
        double *q = calloc(n1, 8), *qd = calloc(n1, 8), *qdd = calloc(n1, 8);
        double *tau = calloc(n1, 8), *tau0 = calloc(n1, 8), *h = calloc(n1, 8), *M = calloc(n1 * n1, 8);
        double *ql = calloc(n1, 8);
        mreal *qc = calloc(n1, sizeof(mreal)), *qdc = calloc(n1, sizeof(mreal)), *xc = calloc((size_t)m->nx, sizeof(mreal));
        mbs_test_random_state(&rng, m, q, qd, qdd);
        mbs_data *d = mbs_data_create(m, NULL);

        /* loads: one force at a random point and one torque per body */
        double (*lp)[9] = calloc((size_t)m->nb + 1, sizeof *lp);
        for (int i = 1; i <= m->nb; i++) {
            for (int k = 0; k < 9; k++) lp[i][k] = mbs_rng_uniform(&rng, -1, 1);
            CHECK(mbs_data_add_body_load(d, i, lp[i], lp[i] + 3, lp[i] + 6) == MBS_OK, "load");
        }
        double *jl = mbs_data_joint_load(d);
        for (int k = 0; k < nq; k++) jl[k] = ql[k] = mbs_rng_uniform(&rng, -1, 1);
        /* joint loads on Euler parameters must be orthogonal to p (a torque
         * maps to 2 E^T n); project them */
        for (int i = 1; i <= m->nb; i++) {
            const mbs_joint_info *jt = &m->joint[i];
            if (jt->euler < 0) continue;
            double *p = q + jt->qoff + jt->euler, *f = jl + jt->qoff + jt->euler, s = 0;
            for (int k = 0; k < 4; k++) s += p[k] * f[k];
            for (int k = 0; k < 4; k++) { f[k] -= s * p[k]; ql[jt->qoff + jt->euler + k] = f[k]; }
        }

        for (int ref = MBS_REF_COM; ref <= MBS_REF_JOINT; ref++) {
            mbs_data_set_ref(d, (mbs_ref_point)ref);
            CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, tau) == MBS_OK, "ID: %s", mbs_data_error(d));
            CHECK(mbs_bias_forces(m, d, q, qd, h) == MBS_OK, "bias");
            CHECK(mbs_mass_matrix(m, d, q, M) == MBS_OK, "mass matrix");
            double scale = 1;
            for (int k = 0; k < nq; k++) scale = fmax(scale, fabs(tau[k]));
            for (int r = 0; r < nq; r++) {
                double s = h[r];
                for (int c = 0; c < nq; c++) s += M[r * nq + c] * qdd[c];
                w_two = fmax(w_two, fabs(s - tau[r]) / scale);
                for (int c = 0; c < nq; c++)
                    w_sym = fmax(w_sym, fabs(M[r * nq + c] - M[c * nq + r]) / (1 + fabs(M[r * nq + r])));
            }
            if (ref == MBS_REF_COM) memcpy(tau0, tau, sizeof(double) * (size_t)nq);
            else w_ref = fmax(w_ref, mbs_rel_err(tau, tau0, nq));

            /* 1/2 qd^T M qd = kinetic energy */
            CHECK(mbs_kinematics(m, d, q, qd, NULL) == MBS_OK, "kinematics");
            double T = mbs_kinetic_energy(m, d), Tq = 0;
            for (int r = 0; r < nq; r++)
                for (int c = 0; c < nq; c++) Tq += 0.5 * qd[r] * M[r * nq + c] * qd[c];
            w_ke = fmax(w_ke, fabs(T - Tq) / (1 + T));

            /* M p = 0 and tau . p = 0 for Euler parameters */
            for (int i = 1; i <= m->nb; i++) {
                const mbs_joint_info *jt = &m->joint[i];
                if (jt->euler < 0) continue;
                int e = jt->qoff + jt->euler;
                for (int r = 0; r < nq; r++) {
                    double s = 0;
                    for (int k = 0; k < 4; k++) s += M[r * nq + e + k] * q[e + k];
                    w_null = fmax(w_null, fabs(s) / (1 + fabs(M[r * nq + r])));
                }
                double s = 0;
                for (int k = 0; k < 4; k++) s += tau[e + k] * q[e + k];
                w_orth = fmax(w_orth, fabs(s) / scale);
            }
        }

        /* power balance, CoM reference */
        {
            mbs_data_set_ref(d, MBS_REF_COM);
            CHECK(mbs_inverse_dynamics(m, d, q, qd, qdd, tau) == MBS_OK, "ID");
            double P = 0, g[3];
            mbs_model_gravity(m, g);
            for (int k = 0; k < nq; k++) P += qd[k] * (tau[k] + ql[k]);
            for (int i = 1; i <= m->nb; i++) {
                double vG[3], w[3], vP[3];
                mbs_body_velocity(d, i, vG, w);
                mbs_body_point(d, i, lp[i], NULL, vP, NULL);
                P += mbs_body_mass(m, i) * ddot3(g, vG) + ddot3(lp[i] + 3, vP) + ddot3(lp[i] + 6, w);
            }
            mbs_ws_cs wc;
            CHECK(mbs_ws_init_cs(&wc, m) == 0, "ws");
            for (int k = 0; k < m->nx; k++) xc[k] = m->x[k];
            for (int k = 0; k < nq; k++) { qc[k] = q[k] + I * H * qd[k]; qdc[k] = qd[k] + I * H * qdd[k]; }
            mbs_kin_forward_cs(m, xc, &wc, qc, qdc, NULL, 1);
            double dT = cimag(kinetic_energy_cs(m, xc, &wc)) / H;
            w_pow = fmax(w_pow, fabs(dT - P) / (1 + fabs(P)));
            mbs_ws_free_cs(&wc);
        }

        mbs_data_free(d);
        mbs_model_free(m);
        free(q); free(qd); free(qdd); free(tau); free(tau0); free(h); free(M); free(ql);
        free(qc); free(qdc); free(xc); free(lp);
    }
    printf("worst relative errors: ID vs M qdd + h %.2e, reference points %.2e, symmetry %.2e, "
           "kinetic energy %.2e, M p %.2e, tau.p %.2e, power balance %.2e\n",
           w_two, w_ref, w_sym, w_ke, w_null, w_orth, w_pow);
    /* identities that hold exactly: round-off of trees of at most 12 bodies */
    const double ro = MBS_ROUNDOFF(12);
    CHECK(w_two <= ro, "ID = M qdd + h: %g", w_two);
    CHECK(w_ref <= ro, "reference independence: %g", w_ref);
    CHECK(w_sym <= ro, "symmetry: %g", w_sym);
    CHECK(w_ke <= ro, "kinetic energy: %g", w_ke);
    CHECK(w_null <= ro, "M p = 0: %g", w_null);
    CHECK(w_orth <= ro, "tau.p = 0: %g", w_orth);
    CHECK(w_pow <= ro, "power balance: %g", w_pow);
    return mbs_test_summary("dynamics");
}
