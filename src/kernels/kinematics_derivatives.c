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
 *
 * Sparse directions (a unit coordinate, one parameter) cost less: the
 * bodies before the first one whose joint or model numbers the direction
 * moves are zero-filled without a sweep, and where the tangents take the
 * rotation form (dA = [th]x A) revolute and prismatic joints need no joint
 * calls, and products by th = 0 or by zero direction blocks are left out
 * (docs/formulations.md §9; tests/test_tangent_sparse.c).
 */
#include <stdint.h>
#include <string.h>

#include "kernels.h"
#include "base/algebra.h"
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

/* The direction moves no coordinate of joint jt (at the levels computed). */
static inline int joint_still(const mbs_joint_info *jt, const mreal *dq, const mreal *dqd, const mreal *dqdd,
                              int level)
{
    const int o = jt->voff, n = jt->nv;
    return (!dq || m_all_zero(dq + o, n)) && (level < 1 || !dqd || m_all_zero(dqd + o, n)) &&
           (level < 2 || !dqdd || m_all_zero(dqdd + o, n));
}

/* dx moves the joint frames, joint points, CoM or inertia of body i (the
 * quantities of its kinematics; its mass does not enter them) */
static inline int body_moved_by(const mbs_model *m, int i, const mreal *dx)
{
    const mbs_joint_info *jt = &m->joint[i];
    return !(m_all_zero(dx + jt->x_Xp, 9) & m_all_zero(dx + jt->x_Xc, 9) & m_all_zero(dx + jt->x_ppoint, 3) &
             m_all_zero(dx + jt->x_cpoint, 3) & m_all_zero(dx + m->body[i].x_com, 3) &
             m_all_zero(dx + m->body[i].x_inertia, 6));
}

/* Tangents of body i that the direction does not reach: exact zeros (the
 * arrays the consumers read, and those a later sweep from level `from`
 * reuses), and the rotation-tangent form with th = 0. */
static void zero_body(MBS_K(mbs_ws) *dw, int i, int nv, int level, int from)
{
    if (from < 1) {
        mreal *A = dw->A + 9 * i, *AhJ = dw->AhJ + 9 * i, *J = dw->J + 9 * i, *b = dw->b + MBS_BSTRIDE * i;
        for (int k = 0; k < 9; k++) A[k] = AhJ[k] = J[k] = 0;
        v3_zero(dw->o + 3 * i);
        v3_zero(dw->rG + 3 * i);
        v3_zero(dw->r + 3 * i);
        v3_zero(dw->rj + 3 * i);
        v3_zero(dw->a + 3 * i);
        for (int k = 0; k < 6 * nv; k++) b[k] = 0;
        mreal *th = dw->th + 4 * i;
        th[0] = th[1] = th[2] = 0;
        th[3] = 1;
    }
    if (level >= 1 && from < 2) {
        s6_zero(dw->V + 6 * i);
        v3_zero(dw->ad + 3 * i);
        s6_zero(dw->dv + 6 * i);
        mreal *bd = dw->bd + MBS_BSTRIDE * i;
        for (int k = 0; k < 6 * nv; k++) bd[k] = 0;
    }
    if (level >= 2) s6_zero(dw->Vd + 6 * i);
}

#if defined(__GNUC__)
#define KD_INLINE static inline __attribute__((always_inline))
#else
#define KD_INLINE static inline
#endif

/* The quantities of body i that the phases of the tangent sweep share. */
typedef struct {
    const mbs_joint_info *jt;
    const mbs_joint_ops *ops;   /* NULL until a general form needs it */
    int kind;                   /* 1 revolute, 2 prismatic (S a constant unit column), 0 other */
    int h, nv, dqz, hin, thhz;
    const mreal *qi, *dqi, *thh, *AhJ, *Ai, *bi;
    mreal *dAhJ, *dAi, *thi, *dbi;
    mreal *rho, *drho;          /* r_i - r_j and its tangent */
} kd_body;

/* The model numbers of body i and their direction in dx (zeros without dx). */
typedef struct {
    const mreal *Xp, *Xc, *Pp, *Pc, *ci;
    const mreal *dXp, *dXc, *dPp, *dPc, *dci, *dI;
    int bx, fx;   /* dx moves this body's joint points, CoM or inertia (bx); its joint frames (fx) */
} kd_numbers;

KD_INLINE void kd_body_init(kd_body *c, const mbs_model *m, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw,
                            const mreal *q, const mreal *dq, int first, int i, mreal *rho, mreal *drho)
{
    const mbs_joint_info *jt = &m->joint[i];
    c->jt = jt;
    /* revolute and prismatic joints: S a constant unit column (axis e1),
     * dS/dt = 0, as in the fast path of the primal (kinematics.c) */
    c->kind = jt->frame_kind == MBS_FRAME_ROT_E1 ? 1 : jt->frame_kind == MBS_FRAME_SLIDE_E1 ? 2 : 0;
    c->ops = c->kind ? NULL : MBS_K(mbs_joint_ops_of)(jt->type, jt->velocities);
    c->h = jt->parent;
    c->nv = jt->nv;
    c->qi = q + jt->qoff;
    c->dqz = !dq || m_all_zero(dq + jt->voff, c->nv);
    c->dqi = c->dqz ? zeros : dq + jt->voff;
    /* parents outside [first, last) have zero tangents */
    c->hin = c->h >= first;
    c->thh = c->hin ? dw->th + 4 * c->h : zeros;
    /* th_h = 0 (a direction that turns no body up to h): the products by it vanish */
    c->thhz = m_all_zero(c->thh, 3);
    c->AhJ = w->AhJ + 9 * i;
    c->Ai = w->A + 9 * i;
    c->dAhJ = dw->AhJ + 9 * i;
    c->dAi = dw->A + 9 * i;
    c->thi = dw->th + 4 * i;
    c->bi = w->b + MBS_BSTRIDE * i;
    c->dbi = dw->b + MBS_BSTRIDE * i;
    c->rho = rho;
    c->drho = drho;
    v3_sub(rho, w->r + 3 * i, w->rj + 3 * i);
}

KD_INLINE void kd_numbers_init(kd_numbers *p, const mbs_model *m, const mreal *x, const mreal *dx, int i)
{
    const mbs_joint_info *jt = &m->joint[i];
    p->Xp = x + jt->x_Xp;
    p->Xc = x + jt->x_Xc;
    p->Pp = x + jt->x_ppoint;
    p->Pc = x + jt->x_cpoint;
    p->ci = x + m->body[i].x_com;
    p->dXp = p->dXc = p->dPp = p->dPc = p->dci = p->dI = zeros;
    p->bx = p->fx = 0;
    if (dx) {
        p->dXp = dx + jt->x_Xp;
        p->dXc = dx + jt->x_Xc;
        p->dPp = dx + jt->x_ppoint;
        p->dPc = dx + jt->x_cpoint;
        p->dci = dx + m->body[i].x_com;
        p->dI = dx + m->body[i].x_inertia;
        p->fx = !(m_all_zero(p->dXp, 9) & m_all_zero(p->dXc, 9));
        p->bx = p->fx || !(m_all_zero(p->dPp, 3) & m_all_zero(p->dPc, 3) & m_all_zero(p->dci, 3) &
                           m_all_zero(p->dI, 6));
    }
}

/* Positions in the rotation-tangent form: when the parent's tangent is
 * dA_h = [th_h]x A_h (th_h: a small rotation, global axes), the joint's
 * R(q) is a rotation for every q (no Euler parameters: along a radial dp
 * their R is not) and dx leaves the joint frames alone, then
 * dA_hJ = [th_h]x A_hJ, and dR = [S_w dq]x R in the joint frame gives
 * dA_i = [th_i]x A_i with th_i = th_h + A_hJ S_w dq; likewise dt = S_v dq.
 * Every product of a tangent matrix with a vector becomes one cross
 * product. Returns th_i = 0. */
KD_INLINE int kd_positions_rotation(kd_body *c, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw,
                                    const kd_numbers *p, int i)
{
    const int h = c->h;
    const mreal *Ah = w->A + 9 * h, *thh = c->thh, *dqi = c->dqi;
    mreal *drj = dw->rj + 3 * i, *doi = dw->o + 3 * i, *drG = dw->rG + 3 * i;
    const mreal *rji = w->rj + 3 * i, *oi = w->o + 3 * i, *oh = w->o + 3 * h;
    mreal th[3], vl[3] = { 0, 0, 0 }, u[3], t3[3];
    v3_copy(th, thh);
    if (!c->dqz) {
        if (c->kind == 1) {
            v3_axpy(th, dqi[0], c->bi + 3);   /* b_w = A_hJ e1 */
        } else if (c->kind == 2) {
            v3_scale(vl, c->bi, dqi[0]);      /* b_v = A_hJ e1 */
        } else {
            mreal S[MBS_BSTRIDE], wl[3] = { 0, 0, 0 }, sl[3] = { 0, 0, 0 };
            c->ops->subspace(c->qi, S);
            for (int k = 0; k < c->nv; k++) {
                v3_axpy(sl, dqi[k], S + 6 * k);
                v3_axpy(wl, dqi[k], S + 6 * k + 3);
            }
            m3_mv(u, c->AhJ, wl);
            v3_add(th, th, u);
            m3_mv(vl, c->AhJ, sl);
        }
    }
    v3_copy(c->thi, th);
    c->thi[3] = 1;
    const int thz = m_all_zero(th, 3);
    if (thz)
        for (int k = 0; k < 9; k++) c->dAi[k] = 0;
    else
        m3_skew_mul(c->dAi, th, c->Ai);
    /* dA_hJ = [th_h]x A_hJ is needed below only by the general joints */
    if (c->kind == 0) m3_skew_mul(c->dAhJ, thh, c->AhJ);
    /* r_j = o_h + A_h P_p + A_hJ t */
    if (c->thhz) {
        v3_zero(drj);
    } else {
        v3_sub(u, rji, oh);
        v3_cross(drj, thh, u);
    }
    if (c->hin) v3_add(drj, drj, dw->o + 3 * h);
    v3_add(drj, drj, vl);
    if (p->bx) { m3_mv(u, Ah, p->dPp); v3_add(drj, drj, u); }
    /* o_i = r_j - A_i P_c */
    if (thz) {
        v3_copy(doi, drj);
    } else {
        v3_sub(u, rji, oi);
        v3_cross(t3, th, u);
        v3_sub(doi, drj, t3);
    }
    if (p->bx) { m3_mv(u, c->Ai, p->dPc); v3_sub(doi, doi, u); }
    /* r_G = o_i + A_i c_i */
    if (thz) {
        v3_copy(drG, doi);
    } else {
        v3_sub(u, w->rG + 3 * i, oi);
        v3_cross(t3, th, u);
        v3_add(drG, doi, t3);
    }
    if (p->bx) { m3_mv(u, c->Ai, p->dci); v3_add(drG, drG, u); }
    return thz;
}

/* Positions in the general form: every product differentiated. */
KD_INLINE void kd_positions_general(kd_body *c, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw,
                                    const kd_numbers *p, int i)
{
    const int h = c->h;
    const mreal *Ah = w->A + 9 * h, *dAh = c->hin ? dw->A + 9 * h : zeros;
    mreal *drj = dw->rj + 3 * i, *doi = dw->o + 3 * i, *drG = dw->rG + 3 * i;
    mreal R[9], t[3], dR[9], dtt[3], T[9], dT[9], tmp[3];
    if (!c->ops) c->ops = MBS_K(mbs_joint_ops_of)(c->jt->type, c->jt->velocities);
    c->thi[3] = 0;
    t_mul(c->dAhJ, Ah, dAh, p->Xp, p->dXp);
    c->ops->motion(c->qi, R, t);
    c->ops->motion_d(c->qi, c->dqi, dR, dtt);
    m3_mul(T, c->AhJ, R);
    t_mul(dT, c->AhJ, c->dAhJ, R, dR);
    t_mul_bt(c->dAi, T, dT, p->Xc, p->dXc);
    /* r_j = o_h + A_h P_p + A_hJ t */
    t_mv(drj, Ah, dAh, p->Pp, p->dPp);
    v3_add(drj, drj, c->hin ? dw->o + 3 * h : zeros);
    t_mv(tmp, c->AhJ, c->dAhJ, t, dtt);
    v3_add(drj, drj, tmp);
    /* o_i = r_j - A_i P_c */
    t_mv(tmp, c->Ai, c->dAi, p->Pc, p->dPc);
    v3_sub(doi, drj, tmp);
    /* r_G = o_i + A_i c_i */
    t_mv(tmp, c->Ai, c->dAi, p->ci, p->dci);
    v3_add(drG, doi, tmp);
}

/* b_k = [A_hJ S_v + (A_hJ S_w) x rho; A_hJ S_w]; in the rotation-tangent
 * form d(A_hJ s) = th_h x (A_hJ s) + A_hJ ds */
KD_INLINE void kd_joint_map(kd_body *c, int fast)
{
    const mreal *bi = c->bi, *thh = c->thh, *rho = c->rho, *drho = c->drho;
    mreal *dbi = c->dbi;
    mreal S[MBS_BSTRIDE], dS[MBS_BSTRIDE];
    if (fast && c->kind == 1) {
        /* [b_w x rho; b_w] */
        if (c->thhz) {
            v3_zero(dbi + 3);
            v3_cross(dbi, bi + 3, drho);
        } else {
            v3_cross(dbi + 3, thh, bi + 3);
            v3_cross(dbi, dbi + 3, rho);
            v3_cross_add(dbi, bi + 3, drho);
        }
    } else if (fast && c->kind == 2) {
        /* [b_v; 0] */
        if (c->thhz) v3_zero(dbi);
        else v3_cross(dbi, thh, bi);
        dbi[3] = dbi[4] = dbi[5] = 0;
    } else if (fast) {
        if (!c->dqz) c->ops->subspace_d(c->qi, c->dqi, dS);
        for (int k = 0; k < c->nv; k++) {
            const mreal *bk = bi + 6 * k;
            mreal *col = dbi + 6 * k, vk[3], u[3];
            v3_cross(vk, bk + 3, rho);
            v3_sub(vk, bk, vk);   /* A_hJ S_v */
            v3_cross(col, thh, vk);
            v3_cross(col + 3, thh, bk + 3);
            if (!c->dqz) {
                m3_mv(u, c->AhJ, dS + 6 * k);
                v3_add(col, col, u);
                m3_mv(u, c->AhJ, dS + 6 * k + 3);
                v3_add(col + 3, col + 3, u);
            }
            v3_cross_add(col, col + 3, rho);
            v3_cross_add(col, bk + 3, drho);
        }
    } else {
        if (!c->ops) c->ops = MBS_K(mbs_joint_ops_of)(c->jt->type, c->jt->velocities);
        c->ops->subspace(c->qi, S);
        c->ops->subspace_d(c->qi, c->dqi, dS);
        for (int k = 0; k < c->nv; k++) {
            mreal *col = dbi + 6 * k;
            t_mv(col, c->AhJ, c->dAhJ, S + 6 * k, dS + 6 * k);
            t_mv(col + 3, c->AhJ, c->dAhJ, S + 6 * k + 3, dS + 6 * k + 3);
            t_cross_add(col, bi + 6 * k + 3, col + 3, rho, drho);
        }
    }
}

/* J = A Jbar A^T: with dA = [th]x A, dJ = X + X^T (X = [th]x J) + A dJbar A^T */
KD_INLINE void kd_inertia(const kd_body *c, const mreal *x, const mbs_model *m, const MBS_K(mbs_ws) *w,
                          MBS_K(mbs_ws) *dw, const kd_numbers *p, int fast, int thz, int i)
{
    const int dJ0 = !p->bx || m_all_zero(p->dI, 6);
    mreal *dJ = dw->J + 9 * i;
    if (fast && thz) {
        for (int k = 0; k < 9; k++) dJ[k] = 0;
    } else if (fast) {
        mreal X[9];
        m3_skew_mul(X, c->thi, w->J + 9 * i);
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++) dJ[3 * r + k] = X[3 * r + k] + X[3 * k + r];
    }
    if (!fast || !dJ0) {
        mreal Jb[9], dJb[9], AJ[9], dAJ[9];
        m3_sym(Jb, x + m->body[i].x_inertia);
        m3_sym(dJb, p->dI);
        if (fast) {
            m3_mul(AJ, c->Ai, dJb);
            m3_mul_bt(dAJ, AJ, c->Ai);
            for (int k = 0; k < 9; k++) dJ[k] += dAJ[k];
        } else {
            m3_mul(AJ, c->Ai, Jb);
            t_mul(dAJ, c->Ai, c->dAi, Jb, dJb);
            t_mul_bt(dJ, AJ, dAJ, c->Ai, c->dAi);
        }
    }
}

/* ---- positions, joint map and inertia of body i ---- */
KD_INLINE void kd_positions(kd_body *c, const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                            const mreal *dx, MBS_K(mbs_ws) *dw, int i)
{
    const int h = c->h;
    kd_numbers p;
    kd_numbers_init(&p, m, x, dx, i);
    const int thh_ok = c->hin ? MRE(dw->th[4 * h + 3]) != 0 : 1;
#ifdef MBS_COMPLEX
    const int fast = 0 * thh_ok;   /* the complex build keeps the general form */
#else
    const int fast = thh_ok && MRE(w->th[4 * h + 3]) != 0 && c->jt->euler < 0 && !p.fx;
#endif
    int thz = 0;   /* th_i = 0 (rotation-tangent form only) */
    if (fast)
        thz = kd_positions_rotation(c, w, dw, &p, i);
    else
        kd_positions_general(c, w, dw, &p, i);
    mreal *dri = dw->r + 3 * i, *drj = dw->rj + 3 * i;
    switch (w->ref) {
    case MBS_REF_COM: v3_copy(dri, dw->rG + 3 * i); break;
    case MBS_REF_ORIGIN: v3_zero(dri); break;
    case MBS_REF_JOINT: v3_copy(dri, drj); break;
    }
    v3_sub(dw->a + 3 * i, c->hin ? dw->r + 3 * h : zeros, dri);
    v3_sub(c->drho, dri, drj);
    kd_joint_map(c, fast);
    kd_inertia(c, x, m, w, dw, &p, fast, thz, i);
}

/* The velocity quantities of body i that its bias columns bd read. */
typedef struct {
    const mreal *Vh, *dVh, *qdi, *dqdi, *bdi;
    mreal *ddi, *dbdi;
    int dqdz;
    mreal wrho[3], dwrho[3];   /* w_i x rho and its tangent */
} kd_rates;

/* Bias columns in the rotation-tangent form, S constant (A_hJ S = b_k,
 * dS = dSd = 0):
 *   revolute:  wd = w_h x b_w, vd = wd x rho + b_w x (w_i x rho)
 *   prismatic: wd = 0,         vd = w_h x b_v */
KD_INLINE void kd_bias_rotation(const kd_body *c, const kd_rates *v)
{
    const mreal *bi = c->bi, *dbi = c->dbi, *bdi = v->bdi, *Vh = v->Vh, *dVh = v->dVh;
    const mreal *qdi = v->qdi, *dqdi = v->dqdi;
    mreal *col = v->dbdi, *ddi = v->ddi;
    if (c->kind == 1) {
        /* (db_w = th_h x b_w) */
        v3_cross(col + 3, dVh + 3, bi + 3);
        if (!c->thhz) v3_cross_add(col + 3, Vh + 3, dbi + 3);
        v3_cross(col, col + 3, c->rho);
        v3_cross_add(col, bdi + 3, c->drho);
        if (!c->thhz) v3_cross_add(col, dbi + 3, v->wrho);
        v3_cross_add(col, bi + 3, v->dwrho);
        if (v->dqdz)
            for (int k = 0; k < 6; k++) ddi[k] += col[k] * qdi[0];
        else
            for (int k = 0; k < 6; k++) ddi[k] += col[k] * qdi[0] + bdi[k] * dqdi[0];
    } else {
        v3_cross(col, dVh + 3, bi);
        if (!c->thhz) v3_cross_add(col, Vh + 3, dbi);
        col[3] = col[4] = col[5] = 0;
        if (v->dqdz)
            for (int k = 0; k < 3; k++) ddi[k] += col[k] * qdi[0];
        else
            for (int k = 0; k < 3; k++) ddi[k] += col[k] * qdi[0] + bdi[k] * dqdi[0];
    }
}

/* Bias columns in the general form. */
KD_INLINE void kd_bias_general(kd_body *c, const kd_rates *v)
{
    const mreal *rho = c->rho, *drho = c->drho, *Vh = v->Vh, *dVh = v->dVh, *bdi = v->bdi;
    mreal Sd[MBS_BSTRIDE], dSd[MBS_BSTRIDE];
    if (!c->ops) c->ops = MBS_K(mbs_joint_ops_of)(c->jt->type, c->jt->velocities);
    c->ops->subspace_dot(c->qi, v->qdi, Sd);
    c->ops->subspace_dot_d(c->qi, v->qdi, c->dqi, v->dqdi, dSd);
    for (int k = 0; k < c->nv; k++) {
        const mreal *bk = c->bi + 6 * k, *dbk = c->dbi + 6 * k;
        mreal *col = v->dbdi + 6 * k;
        /* v_k = b_k,lin - w_k x rho */
        mreal vk[3], dvk[3], wxr[3];
        v3_cross(wxr, bk + 3, rho);
        v3_sub(vk, bk, wxr);
        v3_zero(dvk);
        t_cross_add(dvk, bk + 3, dbk + 3, rho, drho);
        v3_sub(dvk, dbk, dvk);
        /* wd_k = w_h x w_k + A_hJ Sd_w */
        t_mv(col + 3, c->AhJ, c->dAhJ, Sd + 6 * k + 3, dSd + 6 * k + 3);
        t_cross_add(col + 3, Vh + 3, dVh + 3, bk + 3, dbk + 3);
        /* vd_k = w_h x v_k + A_hJ Sd_v + wd_k x rho + w_k x (w_i x rho) */
        t_mv(col, c->AhJ, c->dAhJ, Sd + 6 * k, dSd + 6 * k);
        t_cross_add(col, Vh + 3, dVh + 3, vk, dvk);
        t_cross_add(col, bdi + 6 * k + 3, col + 3, rho, drho);
        t_cross_add(col, bk + 3, dbk + 3, v->wrho, v->dwrho);
        for (int j = 0; j < 6; j++) v->ddi[j] += col[j] * v->qdi[k] + bdi[6 * k + j] * v->dqdi[k];
    }
}

/* ---- velocities of body i: V, ad and d = [ad x w_h; 0] + bd qd ---- */
KD_INLINE void kd_velocities(kd_body *c, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw, const mreal *qd,
                             const mreal *dqd, int i)
{
    const int h = c->h, nv = c->nv, voff = c->jt->voff;
    const mreal *ai = w->a + 3 * i, *dai = dw->a + 3 * i, *bi = c->bi, *dbi = c->dbi, *Vi = w->V + 6 * i;
    mreal *dVi = dw->V + 6 * i;
    kd_rates v;
    v.Vh = w->V + 6 * h;
    v.dVh = c->hin ? dw->V + 6 * h : zeros;
    v.qdi = qd ? qd + voff : zeros;
    v.dqdz = !dqd || m_all_zero(dqd + voff, nv);
    v.dqdi = v.dqdz ? zeros : dqd + voff;
    v.ddi = dw->dv + 6 * i;
    /* V_i = [v_h + a x w_h; w_h] + b qd */
    for (int k = 0; k < 6; k++) dVi[k] = v.dVh[k];
    t_cross_add(dVi, ai, dai, v.Vh + 3, v.dVh + 3);
    if (v.dqdz) {
        for (int k = 0; k < nv; k++)
            for (int j = 0; j < 6; j++) dVi[j] += dbi[6 * k + j] * v.qdi[k];
    } else {
        for (int k = 0; k < nv; k++)
            for (int j = 0; j < 6; j++) dVi[j] += dbi[6 * k + j] * v.qdi[k] + bi[6 * k + j] * v.dqdi[k];
    }
    /* ad = v_h - v_i */
    mreal *dad = dw->ad + 3 * i;
    const mreal *ad = w->ad + 3 * i;
    v3_sub(dad, v.dVh, dVi);
    /* d = [ad x w_h; 0] + bd qd */
    v3_zero(v.ddi);
    t_cross_add(v.ddi, ad, dad, v.Vh + 3, v.dVh + 3);
    v.ddi[3] = v.ddi[4] = v.ddi[5] = 0;
    v3_cross(v.wrho, Vi + 3, c->rho);
    v3_zero(v.dwrho);
    t_cross_add(v.dwrho, Vi + 3, dVi + 3, c->rho, c->drho);
    v.bdi = w->bd + MBS_BSTRIDE * i;
    v.dbdi = dw->bd + MBS_BSTRIDE * i;
    if (c->kind && MRE(c->thi[3]) != 0)
        kd_bias_rotation(c, &v);
    else
        kd_bias_general(c, &v);
}

/* ---- accelerations: Vd_i = [a_h + a x al_h; al_h] + d + b qdd ---- */
KD_INLINE void kd_accelerations(const kd_body *c, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *dw, const mreal *qdd,
                                const mreal *dqdd, int i)
{
    const int h = c->h, nv = c->nv, voff = c->jt->voff;
    const mreal *ai = w->a + 3 * i, *dai = dw->a + 3 * i, *ddi = dw->dv + 6 * i, *bi = c->bi, *dbi = c->dbi;
    const mreal *Vdh = w->Vd + 6 * h, *dVdh = c->hin ? dw->Vd + 6 * h : zeros;
    mreal *dVdi = dw->Vd + 6 * i;
    for (int k = 0; k < 6; k++) dVdi[k] = dVdh[k] + ddi[k];
    t_cross_add(dVdi, ai, dai, Vdh + 3, dVdh + 3);
    const mreal *qddi = qdd ? qdd + voff : zeros;
    if (!dqdd || m_all_zero(dqdd + voff, nv)) {
        for (int k = 0; k < nv; k++)
            for (int j = 0; j < 6; j++) dVdi[j] += dbi[6 * k + j] * qddi[k];
    } else {
        const mreal *dqddi = dqdd + voff;
        for (int k = 0; k < nv; k++)
            for (int j = 0; j < 6; j++) dVdi[j] += dbi[6 * k + j] * qddi[k] + bi[6 * k + j] * dqddi[k];
    }
}

#if defined(__GNUC__)
__attribute__((flatten))   /* the small vector helpers inline (the loop is past GCC's growth limits) */
#endif
void MBS_K(mbs_kin_forward_d_from)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                                   const mreal *dx, MBS_K(mbs_ws) *dw,
                                   const mreal *q, const mreal *qd, const mreal *qdd,
                                   const mreal *dq, const mreal *dqd, const mreal *dqdd,
                                   int level, int from, int first, int last)
{
    if (first < 1) first = 1;
    if (last > m->nb + 1) last = m->nb + 1;
    int i = first;
    /* Bodies are in parent-before-child order: the bodies before the first one
     * whose joint or model numbers the direction moves have exactly zero
     * tangents (a unit direction of a coordinate: its joint's ancestors and
     * earlier branches; a parameter: the bodies before its own). */
    for (; i < last && joint_still(&m->joint[i], dq, dqd, dqdd, level) && !(dx && body_moved_by(m, i, dx)); i++)
        zero_body(dw, i, m->joint[i].nv, level, from);
    for (; i < last; i++) {
        kd_body c;
        mreal rho[3], drho[3];
        kd_body_init(&c, m, w, dw, q, dq, first, i, rho, drho);
        if (from >= 1) {
            /* positions kept from a sweep along the same (dq, dx) */
            v3_sub(drho, dw->r + 3 * i, dw->rj + 3 * i);
        } else {
            kd_positions(&c, m, x, w, dx, dw, i);
        }
        if (level < 1) continue;
        if (from < 2) kd_velocities(&c, w, dw, qd, dqd, i);
        if (level < 2) continue;
        kd_accelerations(&c, w, dw, qdd, dqdd, i);
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
