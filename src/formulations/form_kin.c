/*
 * form_kin.c - the velocity and acceleration levels of the forward
 * kinematics over positions already in the workspace (form_impl.h,
 * mbs_form_kin_velocities).
 *
 * The closed-loop steppers evaluate the positions first (Phi, Phi_q, M at
 * the converged z), project the velocities with them, and only then need
 * the velocity-level kinematics (for c(z, zd) and the residual). The kernel
 * mbs_kin_forward recomputes the positions for level >= 1; this pass does
 * the same arithmetic as its velocity and acceleration blocks
 * (src/kernels/kinematics.c, thesis eq. 2.121), in the same order, from the
 * stored A_hJ, b_i, r_i, r_j and a_i, so that
 *   mbs_kin_forward(q, NULL, NULL, 0); mbs_form_kin_velocities(q, qd, qdd)
 * leaves exactly what mbs_kin_forward(q, qd, qdd, 2) does
 * (tests/test_formulations.c checks it on random closed loops of every
 * joint type). Double only: it belongs with the kernels (compiled for both
 * scalars) once the kinematics kernel offers a velocity entry point.
 */
#include "form_impl.h"
#include "../model_impl.h"
#include "../algebra.h"
#include "../joints/joint.h"

void mbs_form_kin_velocities(const mbs_model *m, mbs_ws *w, const double *q, const double *qd, const double *qdd)
{
    double Sd[MBS_BSTRIDE];
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int kind = jt->type == MBS_JOINT_REVOLUTE ? 1 : jt->type == MBS_JOINT_PRISMATIC ? 2 : 0;
        const int h = jt->parent, nq = jt->nq;
        const double *qi = q + jt->qoff;
        const double *AhJ = w->AhJ + 9 * i;
        const double *bi = w->b + MBS_BSTRIDE * i;
        double rho[3];
        v3_sub(rho, w->r + 3 * i, w->rj + 3 * i);

        /* ---- velocities ---- */
        const double *Vh = w->V + 6 * h;
        double *Vi = w->V + 6 * i;
        const double *qdi = qd ? qd + jt->qoff : 0;
        s6_twist_shift(Vi, w->a + 3 * i, Vh);
        if (qdi)
            for (int k = 0; k < nq; k++)
                for (int c = 0; c < 6; c++) Vi[c] += bi[6 * k + c] * qdi[k];
        double *ad = w->ad + 3 * i;
        v3_sub(ad, Vh, Vi);
        double *di = w->dv + 6 * i;
        v3_cross(di, ad, Vh + 3);
        di[3] = di[4] = di[5] = 0;
        double *bdi = w->bd + MBS_BSTRIDE * i;
        double wrho[3];
        v3_cross(wrho, Vi + 3, rho);
        if (kind == 1) {
            double *col = bdi;
            v3_cross(col + 3, Vh + 3, bi + 3);
            v3_cross(col, col + 3, rho);
            v3_cross_add(col, bi + 3, wrho);
            if (qdi)
                for (int c = 0; c < 6; c++) di[c] += col[c] * qdi[0];
        } else if (kind == 2) {
            double *col = bdi;
            v3_cross(col, Vh + 3, bi);
            col[3] = col[4] = col[5] = 0;
            if (qdi)
                for (int c = 0; c < 3; c++) di[c] += col[c] * qdi[0];
        } else {
            const mbs_joint_ops *ops = mbs_joint_ops_of(jt->type);
            if (qdi) ops->subspace_dot(qi, qdi, Sd);
            else for (int k = 0; k < 6 * nq; k++) Sd[k] = 0;
            for (int k = 0; k < nq; k++) {
                double *col = bdi + 6 * k;
                const double *bk = bi + 6 * k;
                double vk[3], wxr[3];
                v3_cross(wxr, bk + 3, rho);
                v3_sub(vk, bk, wxr);
                m3_mv(col + 3, AhJ, Sd + 6 * k + 3);
                v3_cross_add(col + 3, Vh + 3, bk + 3);
                m3_mv(col, AhJ, Sd + 6 * k);
                v3_cross_add(col, Vh + 3, vk);
                v3_cross_add(col, col + 3, rho);
                v3_cross_add(col, bk + 3, wrho);
                if (qdi)
                    for (int c = 0; c < 6; c++) di[c] += col[c] * qdi[k];
            }
        }

        /* ---- accelerations ---- */
        double *Vdi = w->Vd + 6 * i;
        s6_twist_shift(Vdi, w->a + 3 * i, w->Vd + 6 * h);
        for (int c = 0; c < 6; c++) Vdi[c] += di[c];
        if (qdd) {
            const double *qddi = qdd + jt->qoff;
            for (int k = 0; k < nq; k++)
                for (int c = 0; c < 6; c++) Vdi[c] += bi[6 * k + c] * qddi[k];
        }
    }
}
