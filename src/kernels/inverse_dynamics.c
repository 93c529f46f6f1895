/*
 * inverse_dynamics.c - recursive Newton-Euler inverse dynamics
 * (Luh-Walker-Paul in the thesis's velocity-transformation form;
 * Zhakatayev et al. with external loads on every body).
 *
 *   forward pass (kinematics.c):  Vd_i = B_i Vd_h + b_i qdd_i + d_i
 *   per body:                      F_i = M^v_i Vd_i - Q^v_i
 *   backward pass:                 F_h += B_i^T F_i
 *   joint force:                   tau_i = b_i^T F_i - Q^z_i
 * so that tau = M qdd - Q (docs/formulations.md §5).
 */
#include "kernels.h"
#include "base/algebra.h"

void MBS_K(mbs_rnea)(const mbs_model *m, MBS_K(mbs_ws) *w, mreal *tau)
{
    for (int i = 1; i <= m->nb; i++) {
        mreal *F = w->F + 6 * i;
        m6_body_inertia_mv(F, w->Mv + 36 * i, w->Vd + 6 * i);
        for (int c = 0; c < 6; c++) F[c] -= w->Qv[6 * i + c];
    }
    for (int i = m->nb; i >= 1; i--) {
        const mbs_joint_info *jt = &m->joint[i];
        const mreal *F = w->F + 6 * i, *bi = w->b + MBS_BSTRIDE * i;
        for (int k = 0; k < jt->nv; k++)
            tau[jt->voff + k] = s6_dot(bi + 6 * k, F) - w->qfrc[jt->voff + k];
        if (jt->parent > 0)
            s6_wrench_shift_add(w->F + 6 * jt->parent, w->a + 3 * i, F);
    }
}

void MBS_K(mbs_inverse_dynamics_x)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w,
                                   const mreal *q, const mreal *qd, const mreal *qdd,
                                   mreal *tau)
{
    MBS_K(mbs_kin_forward)(m, x, w, q, qd, qdd, 2);
    MBS_K(mbs_body_terms)(m, x, w);
    MBS_K(mbs_rnea)(m, w, tau);
}
