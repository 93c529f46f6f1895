/*
 * kinematics_derivatives.c - directional derivative (tangent) of the
 * recursive kinematics in kinematics.c.
 *
 * Differentiates every line of mbs_kin_forward along a direction
 * (dq, dqd, dqdd) in the state and dx in the model vector (design
 * parameters: masses, centres of mass, inertias, points, joint frames,
 * gravity). The tangents are stored in a second workspace `dw` with the same
 * layout as the primal workspace `w`, which must hold the primal results at
 * the same point. Cost O(n) per direction; bodies before `first` are skipped
 * (their tangents must be zero: valid when dx = 0 and the direction only
 * moves joints first..nb, e.g. a unit direction of a coordinate of body
 * `first` when `last` bounds its subtree). Bodies from `last` on are
 * skipped too (pass m->nb + 1 for all). Parents before `first` count as
 * having zero tangents. q, qd, qdd are the primal state (qd, qdd may be
 * NULL for zero), dq, dqd, dqdd the direction (NULL for zero), dx the
 * direction in the model vector (NULL for zero).
 */
#include "kernels.h"
#include "../algebra.h"
#include "../joints/joint.h"

/* dC = dA B + A dB (3x3) */
static inline void t_mul(mreal *dC, const mreal *A, const mreal *dA, const mreal *B, const mreal *dB)
{
    mreal T[9];
    m3_mul(dC, dA, B);
    m3_mul(T, A, dB);
    for (int k = 0; k < 9; k++) dC[k] += T[k];
}
/* dC = dA B^T + A dB^T */
static inline void t_mul_bt(mreal *dC, const mreal *A, const mreal *dA, const mreal *B, const mreal *dB)
{
    mreal T[9];
    m3_mul_bt(dC, dA, B);
    m3_mul_bt(T, A, dB);
    for (int k = 0; k < 9; k++) dC[k] += T[k];
}
/* dr = dA v + A dv */
static inline void t_mv(mreal *dr, const mreal *A, const mreal *dA, const mreal *v, const mreal *dv)
{
    mreal t[3];
    m3_mv(dr, dA, v);
    m3_mv(t, A, dv);
    v3_add(dr, dr, t);
}
/* dc += da x b + a x db */
static inline void t_cross_add(mreal *dc, const mreal *a, const mreal *da, const mreal *b, const mreal *db)
{
    v3_cross_add(dc, da, b);
    v3_cross_add(dc, a, db);
}

static const mreal zeros[MBS_BSTRIDE];

void MBS_K(mbs_kin_forward_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                              const mreal *dx, MBS_K(mbs_ws) *dw,
                              const mreal *q, const mreal *qd, const mreal *qdd,
                              const mreal *dq, const mreal *dqd, const mreal *dqdd,
                              int level, int first, int last)
{
    mreal S[MBS_BSTRIDE], Sd[MBS_BSTRIDE], dS[MBS_BSTRIDE], dSd[MBS_BSTRIDE];
    if (first < 1) first = 1;
    if (last > m->nb + 1) last = m->nb + 1;
    for (int i = first; i < last; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const mbs_joint_ops *ops = MBS_K(mbs_joint_ops_of)(jt->type);
        const int h = jt->parent, nq = jt->nq;
        const mreal *qi = q + jt->qoff, *dqi = dq ? dq + jt->qoff : zeros;
        /* parents outside [first, last) have zero tangents */
        const int hin = h >= first;
        const mreal *Ah = w->A + 9 * h, *dAh = hin ? dw->A + 9 * h : zeros;
        const mreal *Xp = x + jt->x_Xp, *Xc = x + jt->x_Xc;
        const mreal *dXp = dx ? dx + jt->x_Xp : zeros, *dXc = dx ? dx + jt->x_Xc : zeros;
        const mreal *Pp = x + jt->x_ppoint, *Pc = x + jt->x_cpoint, *ci = x + m->body[i].x_com;
        const mreal *dPp = dx ? dx + jt->x_ppoint : zeros, *dPc = dx ? dx + jt->x_cpoint : zeros;
        const mreal *dci = dx ? dx + m->body[i].x_com : zeros;
        const mreal *AhJ = w->AhJ + 9 * i, *Ai = w->A + 9 * i;
        mreal *dAhJ = dw->AhJ + 9 * i, *dAi = dw->A + 9 * i;
        mreal R[9], t[3], dR[9], dtt[3], T[9], dT[9], tmp[3];

        /* ---- positions ---- */
        t_mul(dAhJ, Ah, dAh, Xp, dXp);
        ops->motion(qi, R, t);
        ops->motion_d(qi, dqi, dR, dtt);
        m3_mul(T, AhJ, R);
        t_mul(dT, AhJ, dAhJ, R, dR);
        t_mul_bt(dAi, T, dT, Xc, dXc);
        /* r_j = o_h + A_h P_p + A_hJ t */
        mreal *drj = dw->rj + 3 * i;
        t_mv(drj, Ah, dAh, Pp, dPp);
        v3_add(drj, drj, hin ? dw->o + 3 * h : zeros);
        t_mv(tmp, AhJ, dAhJ, t, dtt);
        v3_add(drj, drj, tmp);
        /* o_i = r_j - A_i P_c */
        mreal *doi = dw->o + 3 * i;
        t_mv(tmp, Ai, dAi, Pc, dPc);
        v3_sub(doi, drj, tmp);
        /* r_G = o_i + A_i c_i */
        mreal *drG = dw->rG + 3 * i;
        t_mv(tmp, Ai, dAi, ci, dci);
        v3_add(drG, doi, tmp);
        mreal *dri = dw->r + 3 * i;
        switch (w->ref) {
        case MBS_REF_COM: v3_copy(dri, drG); break;
        case MBS_REF_ORIGIN: v3_zero(dri); break;
        case MBS_REF_JOINT: v3_copy(dri, drj); break;
        }
        v3_sub(dw->a + 3 * i, hin ? dw->r + 3 * h : zeros, dri);

        /* b_k = [A_hJ S_v + (A_hJ S_w) x rho; A_hJ S_w] */
        const mreal *ri = w->r + 3 * i, *rj = w->rj + 3 * i;
        mreal rho[3], drho[3];
        v3_sub(rho, ri, rj);
        v3_sub(drho, dri, drj);
        ops->subspace(qi, S);
        ops->subspace_d(qi, dqi, dS);
        const mreal *bi = w->b + MBS_BSTRIDE * i;
        mreal *dbi = dw->b + MBS_BSTRIDE * i;
        for (int k = 0; k < nq; k++) {
            mreal *col = dbi + 6 * k;
            t_mv(col, AhJ, dAhJ, S + 6 * k, dS + 6 * k);
            t_mv(col + 3, AhJ, dAhJ, S + 6 * k + 3, dS + 6 * k + 3);
            t_cross_add(col, bi + 6 * k + 3, col + 3, rho, drho);
        }
        /* J = A Jbar A^T */
        {
            mreal Jb[9], dJb[9], AJ[9], dAJ[9];
            m3_sym(Jb, x + m->body[i].x_inertia);
            m3_sym(dJb, dx ? dx + m->body[i].x_inertia : zeros);
            m3_mul(AJ, Ai, Jb);
            t_mul(dAJ, Ai, dAi, Jb, dJb);
            t_mul_bt(dw->J + 9 * i, AJ, dAJ, Ai, dAi);
        }
        if (level < 1) continue;

        /* ---- velocities ---- */
        const mreal *Vh = w->V + 6 * h, *dVh = hin ? dw->V + 6 * h : zeros, *Vi = w->V + 6 * i;
        const mreal *ai = w->a + 3 * i, *dai = dw->a + 3 * i;
        mreal *dVi = dw->V + 6 * i;
        const mreal *qdi = qd ? qd + jt->qoff : zeros, *dqdi = dqd ? dqd + jt->qoff : zeros;
        /* V_i = [v_h + a x w_h; w_h] + b qd */
        for (int c = 0; c < 6; c++) dVi[c] = dVh[c];
        t_cross_add(dVi, ai, dai, Vh + 3, dVh + 3);
        for (int k = 0; k < nq; k++)
            for (int c = 0; c < 6; c++) dVi[c] += dbi[6 * k + c] * qdi[k] + bi[6 * k + c] * dqdi[k];
        /* ad = v_h - v_i */
        mreal *dad = dw->ad + 3 * i;
        const mreal *ad = w->ad + 3 * i;
        v3_sub(dad, dVh, dVi);
        /* d = [ad x w_h; 0] + bd qd */
        mreal *ddi = dw->dv + 6 * i;
        v3_zero(ddi);
        t_cross_add(ddi, ad, dad, Vh + 3, dVh + 3);
        ddi[3] = ddi[4] = ddi[5] = 0;
        ops->subspace_dot(qi, qdi, Sd);
        ops->subspace_dot_d(qi, qdi, dqi, dqdi, dSd);
        mreal wrho[3], dwrho[3];
        v3_cross(wrho, Vi + 3, rho);
        v3_zero(dwrho);
        t_cross_add(dwrho, Vi + 3, dVi + 3, rho, drho);
        const mreal *bdi = w->bd + MBS_BSTRIDE * i;
        mreal *dbdi = dw->bd + MBS_BSTRIDE * i;
        for (int k = 0; k < nq; k++) {
            const mreal *bk = bi + 6 * k, *dbk = dbi + 6 * k;
            mreal *col = dbdi + 6 * k;
            /* v_k = b_k,lin - w_k x rho */
            mreal vk[3], dvk[3], wxr[3];
            v3_cross(wxr, bk + 3, rho);
            v3_sub(vk, bk, wxr);
            v3_zero(dvk);
            t_cross_add(dvk, bk + 3, dbk + 3, rho, drho);
            v3_sub(dvk, dbk, dvk);
            /* wd_k = w_h x w_k + A_hJ Sd_w */
            t_mv(col + 3, AhJ, dAhJ, Sd + 6 * k + 3, dSd + 6 * k + 3);
            t_cross_add(col + 3, Vh + 3, dVh + 3, bk + 3, dbk + 3);
            /* vd_k = w_h x v_k + A_hJ Sd_v + wd_k x rho + w_k x (w_i x rho) */
            t_mv(col, AhJ, dAhJ, Sd + 6 * k, dSd + 6 * k);
            t_cross_add(col, Vh + 3, dVh + 3, vk, dvk);
            t_cross_add(col, bdi + 6 * k + 3, col + 3, rho, drho);
            t_cross_add(col, bk + 3, dbk + 3, wrho, dwrho);
            for (int c = 0; c < 6; c++) ddi[c] += col[c] * qdi[k] + bdi[6 * k + c] * dqdi[k];
        }
        if (level < 2) continue;

        /* ---- accelerations: Vd_i = [a_h + a x al_h; al_h] + d + b qdd ---- */
        const mreal *Vdh = w->Vd + 6 * h, *dVdh = hin ? dw->Vd + 6 * h : zeros;
        mreal *dVdi = dw->Vd + 6 * i;
        for (int c = 0; c < 6; c++) dVdi[c] = dVdh[c] + ddi[c];
        t_cross_add(dVdi, ai, dai, Vdh + 3, dVdh + 3);
        const mreal *qddi = qdd ? qdd + jt->qoff : zeros;
        const mreal *dqddi = dqdd ? dqdd + jt->qoff : zeros;
        for (int k = 0; k < nq; k++)
            for (int c = 0; c < 6; c++) dVdi[c] += dbi[6 * k + c] * qddi[k] + bi[6 * k + c] * dqddi[k];
    }
}
