/*
 * test_constraint_tangents.c - the tangent kernel of the constraints
 * (src/constraints/constraint_kernel_d.c) against complex-step derivatives
 * of the constraint kernel (compiled with a complex scalar).
 *
 * On random closed-loop models (every cut type, coordinate and distance
 * drivers with sine and linear time laws, Euler-parameter rows), at random
 * states (q, qd, qdd) and random directions (dq, dqd, dqdd) in the state and
 * dx in the WHOLE model vector (masses, points, joint frames, the drivers'
 * time-law numbers), for the three reference points:
 *   dPhi, dPhi_q (every entry), d(dPhi/dt), d(d2Phi/dt2)
 * must match Im f(x + iH dx, q + iH dq, ...)/H to 1e-12 relative.
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "random_loops.h"
#include "random_model.h"
#include "kernels/kernels.h"
#include "constraints/constraint.h"
#include "model/model_impl.h"
#include "formulations/form_tangent.h"   /* the double tangents, scalar-free interface */

#define NMODELS 120
static const double H = 1e-30;
/* identities: round-off of the random models (2 .. 7 bodies) */
static const double TOL = MBS_ROUNDOFF(7);

static double worst[4];
static const char *wname[4] = { "dPhi", "dPhi_q", "dPhid", "dPhidd" };
static void rec(int k, double e) { if (e > worst[k] || isnan(e)) worst[k] = isnan(e) ? INFINITY : e; }

int main(void)
{
    mbs_rng rng;
    mbs_rng_seed(&rng, 77);
    int seen_drv = 0;
    for (int it = 0; it < NMODELS; it++) {
        int nb = 2 + mbs_rng_int(&rng, 6), ncut = 1 + mbs_rng_int(&rng, 3), types[3];
        for (int k = 0; k < ncut; k++) types[k] = (it * 3 + k + 1) % MBS_JOINT_TYPE_COUNT;
        double *qc = NULL;
        mbs_model *m = mbs_test_random_loops(&rng, nb, ncut, types, it % 2, &qc);
        CHECK(m != NULL, "random loop model %d", it);
        if (!m) continue;
        seen_drv += m->con.ndriver;
        const int nq = m->nq, n = mbs_model_nconstraints(m), nx = m->nx;
        const size_t n1 = (size_t)n + 1, q1 = (size_t)nq + 1;
        double *q = calloc(q1, 8), *qd = calloc(q1, 8), *qdd = calloc(q1, 8);
        double *dq = calloc(q1, 8), *dqd = calloc(q1, 8), *dqdd = calloc(q1, 8), *dx = calloc((size_t)nx + 1, 8);
        double *a[4], *ref[4];
        const size_t sz[4] = { n1, n1 * q1, n1, n1 };
        for (int k = 0; k < 4; k++) { a[k] = calloc(sz[k], 8); ref[k] = calloc(sz[k], 8); }
        mbs_data *d = mbs_data_create(m, NULL);
        mbs_ws_cs wc;
        CHECK(d && mbs_ws_init_cs(&wc, m) == 0, "data");
        mreal *xc = calloc((size_t)nx + 1, sizeof(mreal)), *qcx = calloc(q1, sizeof(mreal));
        mreal *qdc = calloc(q1, sizeof(mreal)), *qddc = calloc(q1, sizeof(mreal));
        mreal *phi = calloc(n1, sizeof(mreal)), *J = calloc(n1 * q1, sizeof(mreal));
        mreal *phid = calloc(n1, sizeof(mreal)), *phidd = calloc(n1, sizeof(mreal));
        for (int trial = 0; trial < 2; trial++) {
            mbs_test_random_state(&rng, m, q, qd, qdd);
            if (trial == 0) memcpy(q, qc, (size_t)nq * 8);
            for (int k = 0; k < nq; k++) {
                dq[k] = mbs_rng_uniform(&rng, -1, 1);
                dqd[k] = mbs_rng_uniform(&rng, -1, 1);
                dqdd[k] = mbs_rng_uniform(&rng, -1, 1);
            }
            for (int k = 0; k < nx; k++) dx[k] = mbs_rng_uniform(&rng, -1, 1);
            const double t = mbs_rng_uniform(&rng, 0, 1);
            for (int rp = MBS_REF_COM; rp <= MBS_REF_JOINT; rp++) {
                mbs_data_set_ref(d, (mbs_ref_point)rp);
                wc.ref = (mbs_ref_point)rp;
                /* analytical tangents */
                mbs_form_constraint_tangent(m, d, t, q, qd, qdd, dq, dqd, dqdd, dx, a[0], a[1], a[2], a[3]);
                /* complex step */
                for (int k = 0; k < nx; k++) xc[k] = m->x[k] + I * H * dx[k];
                for (int k = 0; k < nq; k++) {
                    qcx[k] = q[k] + I * H * dq[k];
                    qdc[k] = qd[k] + I * H * dqd[k];
                    qddc[k] = qdd[k] + I * H * dqdd[k];
                }
                mbs_kin_forward_cs(m, xc, &wc, qcx, qdc, qddc, 2);
                mbs_con_kernel_cs(m, xc, &wc, qcx, qdc, qddc, t, phi, J, phid, NULL, NULL, phidd);
                for (int r = 0; r < n; r++) {
                    ref[0][r] = cimag(phi[r]) / H;
                    ref[2][r] = cimag(phid[r]) / H;
                    ref[3][r] = cimag(phidd[r]) / H;
                    for (int k = 0; k < nq; k++) ref[1][(size_t)r * nq + k] = cimag(J[(size_t)r * nq + k]) / H;
                }
                for (int k = 0; k < 4; k++) rec(k, mbs_rel_err(a[k], ref[k], k == 1 ? n * nq : n));
            }
        }
        mbs_data_free(d);
        mbs_ws_free_cs(&wc);
        for (int k = 0; k < 4; k++) { free(a[k]); free(ref[k]); }
        free(xc); free(qcx); free(qdc); free(qddc); free(phi); free(J); free(phid); free(phidd);
        free(q); free(qd); free(qdd); free(dq); free(dqd); free(dqdd); free(dx); free(qc);
        mbs_model_free(m);
    }
    CHECK(seen_drv >= NMODELS / 2, "drivers seen: %d", seen_drv);
    for (int k = 0; k < 4; k++) {
        printf("  worst relative error %-8s %.3g\n", wname[k], worst[k]);
        CHECK(worst[k] <= TOL, "%s: %g", wname[k], worst[k]);
    }
    return mbs_test_summary("test_constraint_tangents");
}
