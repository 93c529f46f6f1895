/*
 * inverse_dynamics_derivatives.c - tangent of the Newton-Euler recursion in
 * inverse_dynamics.c (the thesis's differentiated two-sweep residual,
 * §4.2 and §6.3.1; Zhakatayev et al. §4 for the open-tree recursion).
 *
 *   dF_i   = dM^v_i Vd_i + M^v_i dVd_i - dQ^v_i          bodies first..last-1
 *   dF_h  += B_i^T dF_i + dB_i^T F_i,   dB^T[f; n] = [0; -da x f]
 *   dtau_i = db_i^T F_i + b_i^T dF_i - dQ^q_i
 *
 * The primal workspace w must hold a completed mbs_rnea (accumulated F).
 * With a direction confined to the subtree first..last-1, only that subtree
 * and the path from `first` to the root are visited: O(subtree + depth).
 * dtau is written in full (zeros elsewhere; mbs_rnea_d_range: only that
 * subtree and path). dqfrc may be NULL.
 */
#include "kernels.h"
#include "base/algebra.h"

static void rnea_d(const mbs_model *m, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw, const mreal *dqfrc,
                   mreal *dtau, int first, int last, int range)
{
    if (first < 1) first = 1;
    if (last > m->nb + 1) last = m->nb + 1;
    if (!range) {
        for (int k = 0; k < m->nv; k++) dtau[k] = dqfrc ? -dqfrc[k] : 0;
    } else {
        const int k0 = m->joint[first].voff, k1 = last <= m->nb ? m->joint[last].voff : m->nv;
        for (int k = k0; k < k1; k++) dtau[k] = dqfrc ? -dqfrc[k] : 0;
        for (int j = m->joint[first].parent; j > 0; j = m->joint[j].parent)
            for (int k = m->joint[j].voff; k < m->joint[j].voff + m->joint[j].nv; k++)
                dtau[k] = dqfrc ? -dqfrc[k] : 0;
    }
    for (int i = first; i < last; i++) {
        /* M^v and its tangent have the body-inertia structure (m6_body_inertia:
         * m I, m S(g), J'), whose product takes a third of a general 6 x 6's */
        mreal *dF = dw->F + 6 * i, t[6];
        m6_body_inertia_mv(dF, dw->Mv + 36 * i, w->Vd + 6 * i);
        m6_body_inertia_mv(t, w->Mv + 36 * i, dw->Vd + 6 * i);
        for (int c = 0; c < 6; c++) dF[c] += t[c] - dw->Qv[6 * i + c];
    }
    /* ancestors of `first` accumulate only */
    for (int j = m->joint[first].parent; j > 0; j = m->joint[j].parent)
        for (int c = 0; c < 6; c++) dw->F[6 * j + c] = 0;
    for (int i = last - 1; i >= first; i--) {
        const mbs_joint_info *jt = &m->joint[i];
        const mreal *F = w->F + 6 * i, *dF = dw->F + 6 * i;
        const mreal *bi = w->b + MBS_BSTRIDE * i, *dbi = dw->b + MBS_BSTRIDE * i;
        for (int k = 0; k < jt->nv; k++)
            dtau[jt->voff + k] += s6_dot(dbi + 6 * k, F) + s6_dot(bi + 6 * k, dF);
        const int h = jt->parent;
        if (h > 0) {
            mreal *dFh = dw->F + 6 * h;
            s6_wrench_shift_add(dFh, w->a + 3 * i, dF);
            const mreal *da = dw->a + 3 * i;
            dFh[3] -= da[1] * F[2] - da[2] * F[1];
            dFh[4] -= da[2] * F[0] - da[0] * F[2];
            dFh[5] -= da[0] * F[1] - da[1] * F[0];
        }
    }
    for (int j = m->joint[first].parent; j > 0; j = m->joint[j].parent) {
        const mbs_joint_info *jt = &m->joint[j];
        const mreal *dF = dw->F + 6 * j, *bj = w->b + MBS_BSTRIDE * j;
        for (int k = 0; k < jt->nv; k++) dtau[jt->voff + k] += s6_dot(bj + 6 * k, dF);
        if (jt->parent > 0) s6_wrench_shift_add(dw->F + 6 * jt->parent, w->a + 3 * j, dF);
    }
}

void MBS_K(mbs_rnea_d)(const mbs_model *m, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw,
                       const mreal *dqfrc, mreal *dtau, int first, int last)
{
    rnea_d(m, w, dw, dqfrc, dtau, first, last, 0);
}

void MBS_K(mbs_rnea_d_range)(const mbs_model *m, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw,
                             const mreal *dqfrc, mreal *dtau, int first, int last)
{
    rnea_d(m, w, dw, dqfrc, dtau, first, last, 1);
}
