/*
 * test_human43.c - Zhakatayev et al. §5.2 on the 43-DOF human model:
 * inverse-dynamics derivatives along q_i(t) = sin(2 pi t), t = 0 .. 3 s in
 * steps of 10 ms (301 samples), against complex-step derivatives, and the
 * exact zeros between branches that do not influence each other: dtau_i/dq_j
 * and dtau_i/dqd_j vanish identically unless one of the two joints is an
 * ancestor of the other (or they are the same).
 */
#define MBS_COMPLEX
#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "testutil.h"
#include "mbs_testing.h"

static const double H = 1e-30;

static int is_ancestor(const mbs_model *m, int a, int b) /* a ancestor of b or a == b */
{
    for (int j = b; j > 0; j = m->joint[j].parent)
        if (j == a) return 1;
    return 0;
}

int main(void)
{
    mbs_error err;
    mbs_model *m = mbs_model_load(mbs_test_path("models/human43.json"), &err);
    CHECK(m != NULL, "load: %s", err.msg);
    if (!m) return mbs_test_summary("human43");
    const int nq = m->nq;
    CHECK(nq == 43 && m->nb == 43, "43 coordinates, one per body (nq %d)", nq);
    mbs_data *d = mbs_data_create(m, NULL);
    double q[43], qd[43], qdd[43], A[43 * 43], B[43 * 43];
    mbs_ws_cs w;
    CHECK(mbs_ws_init_cs(&w, m) == 0, "ws");
    mreal *x = calloc((size_t)m->nx, sizeof(mreal)), qc[43], qdc[43], qddc[43], out[43];
    for (int k = 0; k < m->nx; k++) x[k] = m->x[k];
    double worst_q = 0, worst_qd = 0;
    long nonzero_violations = 0, structural_zeros = 0, coupled_nonzero = 0;
    for (int s = 0; s <= 300; s++) {
        double t = 0.01 * s, c = 2 * 3.14159265358979323846;
        for (int k = 0; k < nq; k++) { q[k] = sin(c * t); qd[k] = c * cos(c * t); qdd[k] = -c * c * sin(c * t); }
        CHECK(mbs_inverse_dynamics_derivatives(m, d, q, qd, qdd, NULL, A, B) == MBS_OK, "derivatives at t = %g", t);
        /* complex step on every 10th sample (all samples for the zero pattern) */
        if (s % 10 == 0) {
            for (int dir = 0; dir < 2 * nq; dir++) {
                for (int k = 0; k < nq; k++) { qc[k] = q[k]; qdc[k] = qd[k]; qddc[k] = qdd[k]; }
                if (dir < nq) qc[dir] += I * H; else qdc[dir - nq] += I * H;
                mbs_kin_forward_cs(m, x, &w, qc, qdc, qddc, 2);
                for (int k = 0; k < 15 * (m->nb + 1); k++) w.xfrc[k] = 0;
                for (int k = 0; k < nq; k++) w.qfrc[k] = 0;
                mbs_body_terms_cs(m, x, &w);
                mbs_rnea_cs(m, &w, out);
                double scale = 1, e = 0;
                for (int r = 0; r < nq; r++) {
                    double a = dir < nq ? A[r * nq + dir] : B[r * nq + dir - nq], ref = cimag(out[r]) / H;
                    scale = fmax(scale, fabs(ref));
                    e = fmax(e, fabs(a - ref));
                }
                if (dir < nq) worst_q = fmax(worst_q, e / scale); else worst_qd = fmax(worst_qd, e / scale);
            }
        }
        for (int i = 1; i <= nq; i++)
            for (int j = 1; j <= nq; j++) {
                int coupled = is_ancestor(m, i, j) || is_ancestor(m, j, i);
                double a = A[(i - 1) * nq + j - 1], b = B[(i - 1) * nq + j - 1];
                if (!coupled) {
                    structural_zeros++;
                    if (a != 0.0 || b != 0.0) nonzero_violations++;
                } else if (a != 0.0) {
                    coupled_nonzero++;
                }
            }
    }
    printf("301 samples: worst relative error vs complex step dtau/dq %.2e, dtau/dqd %.2e; "
           "%ld structural zeros (all exact: %s), %ld coupled non-zeros\n",
           worst_q, worst_qd, structural_zeros, nonzero_violations == 0 ? "yes" : "no", coupled_nonzero);
    /* analytical against complex step: round-off of the 43-body tree */
    CHECK(worst_q <= MBS_ROUNDOFF(43), "dtau/dq vs complex step: %g", worst_q);
    CHECK(worst_qd <= MBS_ROUNDOFF(43), "dtau/dqd vs complex step: %g", worst_qd);
    CHECK(nonzero_violations == 0, "%ld non-zero entries between uncoupled branches", nonzero_violations);
    CHECK(structural_zeros > 301L * 43 * 10, "the model has independent branches (%ld zeros)", structural_zeros);
    CHECK(coupled_nonzero > 301L * 43, "coupled entries are generally non-zero (%ld)", coupled_nonzero);
    free(x);
    mbs_ws_free_cs(&w);
    mbs_data_free(d);
    mbs_model_free(m);
    return mbs_test_summary("human43");
}
