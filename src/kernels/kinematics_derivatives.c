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

void MBS_K(mbs_kin_forward_d_from)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                   const mreal *dx, MBS_K(mbs_ws) *dw,
                                   const mreal *q, const mreal *qd, const mreal *qdd,
                                   const mreal *dq, const mreal *dqd, const mreal *dqdd,
                                   int level, int from, int first, int last)
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

        const mreal *bi = w->b + MBS_BSTRIDE * i;
        mreal *dbi = dw->b + MBS_BSTRIDE * i;
        mreal rho[3], drho[3];
        if (from >= 1) {
            /* positions kept from a sweep along the same (dq, dx) */
            v3_sub(rho, w->r + 3 * i, w->rj + 3 * i);
            v3_sub(drho, dw->r + 3 * i, dw->rj + 3 * i);
        } else {
            /* ---- positions ---- */
            /* Rotation-tangent form: when the parent's tangent is dA_h = [th_h]x A_h
             * (th_h: a small rotation, global axes), the joint's R(q) is a rotation
             * for every q (no Euler parameters: along a radial dp their R is not)
             * and dx leaves the joint frames alone, then dA_hJ = [th_h]x A_hJ, and
             * dR = [S_w dq]x R in the joint frame gives dA_i = [th_i]x A_i with
             * th_i = th_h + A_hJ S_w dq; likewise dt = S_v dq. Every product of a
             * tangent matrix with a vector becomes one cross product. */
            const int thh_ok = hin ? MRE(dw->th[4 * h + 3]) != 0 : 1;
            const mreal *thh = hin ? dw->th + 4 * h : zeros;
            mreal *thi = dw->th + 4 * i;
#ifdef MBS_COMPLEX
            int fast = 0 * thh_ok;   /* the complex build keeps the general form */
#else
            int fast = thh_ok && MRE(w->th[4 * h + 3]) != 0 && ops->euler < 0;
#endif
            if (fast && dx) {
                for (int k = 0; k < 9 && fast; k++) fast = dXp[k] == 0 && dXc[k] == 0;
            }
            ops->subspace(qi, S);
            mreal *drj = dw->rj + 3 * i, *doi = dw->o + 3 * i, *drG = dw->rG + 3 * i, *dri = dw->r + 3 * i;
            if (fast) {
                const mreal *rji = w->rj + 3 * i, *oi = w->o + 3 * i, *oh = w->o + 3 * h;
                mreal wl[3] = { 0, 0, 0 }, vl[3] = { 0, 0, 0 }, u[3];
                for (int k = 0; k < nq; k++) {
                    v3_axpy(vl, dqi[k], S + 6 * k);
                    v3_axpy(wl, dqi[k], S + 6 * k + 3);
                }
                m3_skew_mul(dAhJ, thh, AhJ);
                m3_mv(u, AhJ, wl);
                v3_add(thi, thh, u);
                thi[3] = 1;
                m3_skew_mul(dAi, thi, Ai);
                /* r_j = o_h + A_h P_p + A_hJ t */
                v3_sub(u, rji, oh);
                v3_cross(drj, thh, u);
                v3_add(drj, drj, hin ? dw->o + 3 * h : zeros);
                m3_mv(u, AhJ, vl);
                v3_add(drj, drj, u);
                if (dx) { m3_mv(u, Ah, dPp); v3_add(drj, drj, u); }
                /* o_i = r_j - A_i P_c */
                v3_sub(u, rji, oi);
                v3_cross(tmp, thi, u);
                v3_sub(doi, drj, tmp);
                if (dx) { m3_mv(u, Ai, dPc); v3_sub(doi, doi, u); }
                /* r_G = o_i + A_i c_i */
                v3_sub(u, w->rG + 3 * i, oi);
                v3_cross(tmp, thi, u);
                v3_add(drG, doi, tmp);
                if (dx) { m3_mv(u, Ai, dci); v3_add(drG, drG, u); }
            } else {
                thi[3] = 0;
                t_mul(dAhJ, Ah, dAh, Xp, dXp);
                ops->motion(qi, R, t);
                ops->motion_d(qi, dqi, dR, dtt);
                m3_mul(T, AhJ, R);
                t_mul(dT, AhJ, dAhJ, R, dR);
                t_mul_bt(dAi, T, dT, Xc, dXc);
                /* r_j = o_h + A_h P_p + A_hJ t */
                t_mv(drj, Ah, dAh, Pp, dPp);
                v3_add(drj, drj, hin ? dw->o + 3 * h : zeros);
                t_mv(tmp, AhJ, dAhJ, t, dtt);
                v3_add(drj, drj, tmp);
                /* o_i = r_j - A_i P_c */
                t_mv(tmp, Ai, dAi, Pc, dPc);
                v3_sub(doi, drj, tmp);
                /* r_G = o_i + A_i c_i */
                t_mv(tmp, Ai, dAi, ci, dci);
                v3_add(drG, doi, tmp);
            }
            switch (w->ref) {
            case MBS_REF_COM: v3_copy(dri, drG); break;
            case MBS_REF_ORIGIN: v3_zero(dri); break;
            case MBS_REF_JOINT: v3_copy(dri, drj); break;
            }
            v3_sub(dw->a + 3 * i, hin ? dw->r + 3 * h : zeros, dri);

            /* b_k = [A_hJ S_v + (A_hJ S_w) x rho; A_hJ S_w] */
            const mreal *ri = w->r + 3 * i, *rj = w->rj + 3 * i;
            v3_sub(rho, ri, rj);
            v3_sub(drho, dri, drj);
            ops->subspace_d(qi, dqi, dS);
            for (int k = 0; k < nq; k++) {
                mreal *col = dbi + 6 * k;
                t_mv(col, AhJ, dAhJ, S + 6 * k, dS + 6 * k);
                t_mv(col + 3, AhJ, dAhJ, S + 6 * k + 3, dS + 6 * k + 3);
                t_cross_add(col, bi + 6 * k + 3, col + 3, rho, drho);
            }
            /* J = A Jbar A^T: with dA = [th]x A, dJ = X + X^T (X = [th]x J) + A dJbar A^T */
            {
                const mreal *dI = dx ? dx + m->body[i].x_inertia : zeros;
                int dJ0 = 1;
                for (int k = 0; k < 6 && dJ0; k++) dJ0 = dI[k] == 0;
                mreal *dJ = dw->J + 9 * i;
                if (fast) {
                    mreal X[9];
                    m3_skew_mul(X, thi, w->J + 9 * i);
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++) dJ[3 * r + c] = X[3 * r + c] + X[3 * c + r];
                }
                if (!fast || !dJ0) {
                    mreal Jb[9], dJb[9], AJ[9], dAJ[9];
                    m3_sym(Jb, x + m->body[i].x_inertia);
                    m3_sym(dJb, dI);
                    if (fast) {
                        m3_mul(AJ, Ai, dJb);
                        m3_mul_bt(dAJ, AJ, Ai);
                        for (int k = 0; k < 9; k++) dJ[k] += dAJ[k];
                    } else {
                        m3_mul(AJ, Ai, Jb);
                        t_mul(dAJ, Ai, dAi, Jb, dJb);
                        t_mul_bt(dJ, AJ, dAJ, Ai, dAi);
                    }
                }
            }
        }
        if (level < 1) continue;

        /* ---- velocities ---- */
        mreal *ddi = dw->dv + 6 * i;
        const mreal *ai = w->a + 3 * i, *dai = dw->a + 3 * i;
        if (from < 2) {
            const mreal *Vh = w->V + 6 * h, *dVh = hin ? dw->V + 6 * h : zeros, *Vi = w->V + 6 * i;
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

void MBS_K(mbs_kin_forward_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                              const mreal *dx, MBS_K(mbs_ws) *dw,
                              const mreal *q, const mreal *qd, const mreal *qdd,
                              const mreal *dq, const mreal *dqd, const mreal *dqdd,
                              int level, int first, int last)
{
    MBS_K(mbs_kin_forward_d_from)(m, x, w, dx, dw, q, qd, qdd, dq, dqd, dqdd, level, 0, first, last);
}
