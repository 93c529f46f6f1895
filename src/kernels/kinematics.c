/*
 * kinematics.c - recursive forward kinematics (thesis §2.1-2.2, eq. 2.121).
 *
 * Base-to-tip over bodies in parent-before-child order. For body i with
 * parent h and joint frames X_p, X_c (docs/formulations.md §1-3):
 *
 *   A_i  = A_h X_p R(q_i) X_c^T
 *   r_j  = o_h + A_h P_p + A_h X_p t(q_i)          child joint point
 *   o_i  = r_j - A_i P_c,  r_Gi = o_i + A_i c_i
 *   b_i  : column k = [A_hJ v_k + A_hJ w_k x (r_i - r_j); A_hJ w_k]
 *   V_i  = B_i V_h + b_i qd_i
 *   bd_i : column k = [vd_k + wd_k x rho + w_k x (w_i x rho); wd_k],
 *          vd_k = w_h x v_k + A_hJ dv_k/dt,  wd_k = w_h x w_k + A_hJ dw_k/dt,
 *          rho = r_i - r_j
 *   d_i  = [ad_i x w_h; 0] + bd_i qd_i,   ad_i = v_h - v_i (material velocities)
 *   Vd_i = B_i Vd_h + b_i qdd_i + d_i
 *
 * The reference point r_i is the CoM, 0 (the body point at the global
 * origin) or the child joint point r_j, per w->ref.
 */
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "base/algebra.h"
#include "../joints/joint.h"

/* A workspace with njac numbers of Jacobian scratch (w->jac; NULL if 0). */
static int ws_init(MBS_K(mbs_ws) *w, const mbs_model *m, size_t njac)
{
    int n = m->nb + 1;
    size_t total = (size_t)n * (9 + 3 + 3 + 3 + 3 + 9 + 3 + MBS_BSTRIDE + 9 + 4 +
                                6 + 3 + MBS_BSTRIDE + 6 + 6 + 36 + 6 + 6 + 36 +
                                MBS_BSTRIDE + 49 + 7 + 15) + (size_t)m->nv + 1 + njac +
                   ((size_t)m->nv * sizeof(int) + sizeof(mreal) - 1) / sizeof(mreal);
    mreal *p = calloc(total, sizeof(mreal));
    if (!p) return -1;
    w->nb = m->nb;
    w->nv = m->nv;
    w->ref = MBS_REF_COM;
#define TAKE(field, k) do { w->field = p; p += (size_t)n * (k); } while (0)
    TAKE(A, 9); TAKE(o, 3); TAKE(rG, 3); TAKE(r, 3); TAKE(rj, 3); TAKE(AhJ, 9);
    TAKE(a, 3); TAKE(b, MBS_BSTRIDE); TAKE(J, 9); TAKE(th, 4);
    TAKE(V, 6); TAKE(ad, 3); TAKE(bd, MBS_BSTRIDE); TAKE(dv, 6);
    TAKE(Vd, 6);
    TAKE(Mv, 36); TAKE(Qv, 6); TAKE(F, 6); TAKE(MS, 36); TAKE(U, MBS_BSTRIDE);
    TAKE(Ninv, 49); TAKE(u, 7);
    TAKE(xfrc, 15);
#undef TAKE
    w->qfrc = p;
    p += m->nv;
    w->jac = njac ? p : 0;
    p += njac;
    w->vpar = (int *)(void *)p;
    /* vpar: the previous velocity on the path to the ground; last[i]: the
     * last velocity at or above body i (-1: none), bodies parent first */
    int *last = malloc((size_t)n * sizeof *last);
    if (!last) {
        free(w->A);
        w->A = 0;
        return -1;
    }
    last[0] = -1;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int up = last[jt->parent];
        for (int k = 0; k < jt->nv; k++) w->vpar[jt->voff + k] = k > 0 ? jt->voff + k - 1 : up;
        last[i] = jt->nv > 0 ? jt->voff + jt->nv - 1 : up;
    }
    free(last);
    m3_identity(w->A);
    m3_identity(w->AhJ);
    w->th[3] = 1;   /* the ground's A is a rotation */
    w->ccache = 0;   /* attached by its user (mbs_con_cache_attach) */
    return 0;
}

int MBS_K(mbs_ws_init)(MBS_K(mbs_ws) *w, const mbs_model *m)
{
    return ws_init(w, m, MBS_K(mbs_jac_size)(m));
}

int MBS_K(mbs_ws_init_kinematics)(MBS_K(mbs_ws) *w, const mbs_model *m)
{
    return ws_init(w, m, 0);
}

void MBS_K(mbs_scribble_bytes)(void *p, size_t n, uint64_t *s)
{
    unsigned char *c = p;
    for (size_t k = 0; k < n; k += 8) {
        *s ^= *s >> 12; *s ^= *s << 25; *s ^= *s >> 27;
        const uint64_t v = *s * 2685821657736338717ULL;
        memcpy(c + k, &v, n - k < 8 ? n - k : 8);
    }
}

void MBS_K(mbs_ws_scribble)(MBS_K(mbs_ws) *w, const mbs_model *m, int ground, uint64_t *s)
{
    mreal *const f[] = { w->A, w->o, w->rG, w->r, w->rj, w->AhJ, w->a, w->b, w->J, w->th, w->V, w->ad, w->bd,
                         w->dv, w->Vd, w->Mv, w->Qv, w->F, w->MS, w->U, w->Ninv, w->u, w->xfrc };
    const int k[] = { 9, 3, 3, 3, 3, 9, 3, MBS_BSTRIDE, 9, 4, 6, 3, MBS_BSTRIDE, 6, 6, 36, 6, 6, 36,
                      MBS_BSTRIDE, 49, 7, 15 };
    const size_t z = sizeof(mreal), from = ground ? 0 : 1;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        MBS_K(mbs_scribble_bytes)(f[i] + from * (size_t)k[i], z * (size_t)k[i] * ((size_t)w->nb + 1 - from), s);
    MBS_K(mbs_scribble_bytes)(w->qfrc, z * (size_t)w->nv, s);
    if (w->jac) MBS_K(mbs_scribble_bytes)(w->jac, z * MBS_K(mbs_jac_size)(m), s);
}

void MBS_K(mbs_ws_zero_kinematics)(MBS_K(mbs_ws) *w)
{
    const size_t n = (size_t)w->nb + 1, z = sizeof(mreal);
    memset(w->A, 0, z * 9 * n);
    memset(w->o, 0, z * 3 * n);
    memset(w->rG, 0, z * 3 * n);
    memset(w->r, 0, z * 3 * n);
    memset(w->rj, 0, z * 3 * n);
    memset(w->AhJ, 0, z * 9 * n);
    memset(w->a, 0, z * 3 * n);
    memset(w->b, 0, z * MBS_BSTRIDE * n);
    memset(w->J, 0, z * 9 * n);
    memset(w->V, 0, z * 6 * n);
    memset(w->ad, 0, z * 3 * n);
    memset(w->bd, 0, z * MBS_BSTRIDE * n);
    memset(w->dv, 0, z * 6 * n);
    memset(w->Vd, 0, z * 6 * n);
}

void MBS_K(mbs_ws_free)(MBS_K(mbs_ws) *w)
{
    if (w && w->A) free(w->A);
    if (w) w->A = 0;
    if (w) free(w->ccache);
    if (w) w->ccache = 0;
}

/* The fast paths by frame kind: 1 revolute, 2 prismatic (S a unit column,
 * dS/dt = 0), 3 cardan (S = [0, 0; e1, (0, c1, s1)], dS/dt only in the
 * second column); 0 the general path through the joint's ops. Revolute
 * and prismatic joints do the arithmetic of the general path minus the
 * products by the structural zeros and ones of R, t, S; cardan joints
 * compute the same quantities in another order (A_hJ Rot(e1) first),
 * equal to round-off. */
static inline int kin_kind(const mbs_joint_info *jt)
{
    switch (jt->frame_kind) {
    case MBS_FRAME_ROT_E1: return 1;
    case MBS_FRAME_SLIDE_E1: return 2;
    case MBS_FRAME_CARDAN: return 3;
    default: return 0;
    }
}

/* Cardan joint: the world axes of its two rotations and of the derivative
 * of the second one, U = A_hJ Rot(e1, q1) (column k into u + 3 k), from
 * c1, s1 = cos, sin q1 */
static inline void kin_cardan_axes(const mreal *AhJ, mreal c1, mreal s1, mreal *u)
{
    for (int r = 0; r < 3; r++) {
        const mreal a1 = AhJ[3 * r + 1], a2 = AhJ[3 * r + 2];
        u[r] = AhJ[3 * r];
        u[3 + r] = a1 * c1 + a2 * s1;
        u[6 + r] = a2 * c1 - a1 * s1;
    }
}

/* The velocity (level >= 1) and acceleration (level 2) blocks of body i
 * over its positions, joint map b_i and rho = r_i - r_j already in w: one
 * code for mbs_kin_forward and mbs_kin_velocities (thesis eq. 2.121). */
#if defined(__GNUC__)
__attribute__((always_inline))   /* in the loop of mbs_kin_forward */
#endif
static inline void kin_body_rates(const mbs_model *m, MBS_K(mbs_ws) *w, int i, const mreal *q, const mreal *qd,
                                  const mreal *qdd, const mreal rho[3], int level, const mreal *cu)
{
    const mbs_joint_info *jt = &m->joint[i];
    const int kind = kin_kind(jt);
    const int h = jt->parent, nv = jt->nv;
    const mreal *qi = q + jt->qoff;
    const mreal *AhJ = w->AhJ + 9 * i;
    const mreal *bi = w->b + MBS_BSTRIDE * i;
    mreal Sd[MBS_BSTRIDE];
    /* ---- velocities ---- */
    const mreal *Vh = w->V + 6 * h;
    mreal *Vi = w->V + 6 * i;
    const mreal *qdi = qd ? qd + jt->voff : 0;
    s6_twist_shift(Vi, w->a + 3 * i, Vh);
    if (qdi)
        for (int k = 0; k < nv; k++)
            for (int c = 0; c < 6; c++) Vi[c] += bi[6 * k + c] * qdi[k];
    mreal *ad = w->ad + 3 * i;
    v3_sub(ad, Vh, Vi);
    mreal *di = w->dv + 6 * i;
    v3_cross(di, ad, Vh + 3);
    di[3] = di[4] = di[5] = 0;
    mreal *bdi = w->bd + MBS_BSTRIDE * i;
    mreal wrho[3];
    v3_cross(wrho, Vi + 3, rho);           /* w_i x rho */
    if (kind == 1) {
        /* v_k at r_j = 0, dS/dt = 0: wd = w_h x w_k,
         * vd = wd x rho + w_k x (w_i x rho) */
        mreal *col = bdi;
        v3_cross(col + 3, Vh + 3, bi + 3);
        v3_cross(col, col + 3, rho);
        v3_cross_add(col, bi + 3, wrho);
        if (qdi)
            for (int c = 0; c < 6; c++) di[c] += col[c] * qdi[0];
    } else if (kind == 2) {
        /* w_k = 0, dS/dt = 0: vd = w_h x v_k */
        mreal *col = bdi;
        v3_cross(col, Vh + 3, bi);
        col[3] = col[4] = col[5] = 0;
        if (qdi)
            for (int c = 0; c < 3; c++) di[c] += col[c] * qdi[0];
    } else if (kind == 3) {
        /* v_k at r_j = 0; dS/dt: [0; 0] and [0; q1dot (0, -s1, c1)], in world
         * axes q1dot u2: wd_k = w_h x w_k (+ q1dot u2), vd_k = wd_k x rho + w_k x (w_i x rho) */
        mreal ul[9];
        const mreal *u = cu;
        if (!u) {
            kin_cardan_axes(AhJ, MCOS(qi[0]), MSIN(qi[0]), ul);
            u = ul;
        }
        const mreal q1d = qdi ? qdi[0] : 0;
        for (int k = 0; k < 2; k++) {
            mreal *col = bdi + 6 * k;
            const mreal *bk = bi + 6 * k;
            v3_cross(col + 3, Vh + 3, bk + 3);
            if (k == 1)
                for (int c = 0; c < 3; c++) col[3 + c] += q1d * u[6 + c];
            v3_cross(col, col + 3, rho);
            v3_cross_add(col, bk + 3, wrho);
            if (qdi)
                for (int c = 0; c < 6; c++) di[c] += col[c] * qdi[k];
        }
    } else {
        const mbs_joint_ops *ops = MBS_K(mbs_joint_ops_of)(jt->type, jt->velocities);
        if (qdi) ops->subspace_dot(qi, qdi, Sd);
        else for (int k = 0; k < 6 * nv; k++) Sd[k] = 0;
        for (int k = 0; k < nv; k++) {
            mreal *col = bdi + 6 * k;
            const mreal *bk = bi + 6 * k;
            mreal vk[3];
            /* v_k (at r_j) = b_k linear - w_k x rho */
            mreal wxr[3];
            v3_cross(wxr, bk + 3, rho);
            v3_sub(vk, bk, wxr);
            /* wd_k = w_h x w_k + A_hJ dS_w/dt */
            m3_mv(col + 3, AhJ, Sd + 6 * k + 3);
            v3_cross_add(col + 3, Vh + 3, bk + 3);
            /* vd_k = w_h x v_k + A_hJ dS_v/dt */
            m3_mv(col, AhJ, Sd + 6 * k);
            v3_cross_add(col, Vh + 3, vk);
            /* + wd_k x rho + w_k x (w_i x rho) */
            v3_cross_add(col, col + 3, rho);
            v3_cross_add(col, bk + 3, wrho);
            if (qdi)
                for (int c = 0; c < 6; c++) di[c] += col[c] * qdi[k];
        }
    }
    if (level < 2) return;

    /* ---- accelerations ---- */
    mreal *Vdi = w->Vd + 6 * i;
    s6_twist_shift(Vdi, w->a + 3 * i, w->Vd + 6 * h);
    for (int c = 0; c < 6; c++) Vdi[c] += di[c];
    if (qdd) {
        const mreal *qddi = qdd + jt->voff;
        for (int k = 0; k < nv; k++)
            for (int c = 0; c < 6; c++) Vdi[c] += bi[6 * k + c] * qddi[k];
    }
}

/* The joint map b_i of body i at r_i (rho = r_i - r_j; kind 1 revolute,
 * 2 prismatic, 0 other), over A_hJ already in w. */
#if defined(__GNUC__)
__attribute__((always_inline))   /* in the loop of mbs_kin_forward */
#endif
static inline void kin_joint_map(MBS_K(mbs_ws) *w, const mbs_joint_info *jt, int i, int kind, const mreal *qi,
                                 const mreal rho[3], const mreal *u)
{
    const mreal *AhJ = w->AhJ + 9 * i;
    mreal *bi = w->b + MBS_BSTRIDE * i;
    if (kind == 1) {
        /* [A_hJ e1 x rho; A_hJ e1] */
        bi[3] = AhJ[0]; bi[4] = AhJ[3]; bi[5] = AhJ[6];
        v3_cross(bi, bi + 3, rho);
    } else if (kind == 2) {
        bi[0] = AhJ[0]; bi[1] = AhJ[3]; bi[2] = AhJ[6];
        bi[3] = bi[4] = bi[5] = 0;
    } else if (kind == 3) {
        /* [u_k x rho; u_k], k = 0, 1 */
        for (int k = 0; k < 2; k++) {
            mreal *col = bi + 6 * k;
            v3_copy(col + 3, u + 3 * k);
            v3_cross(col, col + 3, rho);
        }
    } else {
        mreal S[MBS_BSTRIDE];
        const mbs_joint_ops *ops = MBS_K(mbs_joint_ops_of)(jt->type, jt->velocities);
        ops->subspace(qi, S);
        for (int k = 0; k < jt->nv; k++) {
            mreal *col = bi + 6 * k;
            m3_mv(col, AhJ, S + 6 * k);
            m3_mv(col + 3, AhJ, S + 6 * k + 3);
            v3_cross_add(col, col + 3, rho);
        }
    }
}

/* The inertia of body i about its CoM in global axes: J = A Jbar A^T
 * (symmetric: the upper triangle is computed and mirrored). */
#if defined(__GNUC__)
__attribute__((always_inline))   /* in the loop of mbs_kin_forward */
#endif
static inline void kin_body_inertia(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w, int i)
{
    /* local copies: no stores through w while the products run */
    mreal Jb[9], AJ[9], A[9], Jl[9];
    m3_copy(A, w->A + 9 * i);
    m3_sym(Jb, x + m->body[i].x_inertia);
    m3_mul(AJ, A, Jb);
    for (int r = 0; r < 3; r++)
        for (int c = r; c < 3; c++)
            Jl[3 * r + c] = Jl[3 * c + r] =
                AJ[3 * r] * A[3 * c] + AJ[3 * r + 1] * A[3 * c + 1] + AJ[3 * r + 2] * A[3 * c + 2];
    m3_copy(w->J + 9 * i, Jl);
}

void MBS_K(mbs_kin_forward)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w,
                            const mreal *q, const mreal *qd, const mreal *qdd, int level)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        /* revolute, prismatic and cardan joints take a fast path (kin_kind) */
        const int kind = kin_kind(jt);
        const int h = jt->parent;
        const mreal *qi = q + jt->qoff;
        const mreal *Ah = w->A + 9 * h, *oh = w->o + 3 * h;
        mreal *Ai = w->A + 9 * i, *AhJ = w->AhJ + 9 * i;
        mreal T[9], tmp[3], u[9];   /* u: a cardan joint's axes (kin_cardan_axes) */

        /* ---- positions ---- */
        m3_mul(AhJ, Ah, x + jt->x_Xp);
        mreal *rj = w->rj + 3 * i;
        m3_mv(rj, Ah, x + jt->x_ppoint);
        v3_add(rj, rj, oh);
        if (kind == 1) {
            /* T = AhJ Rot(e1, q): columns 1, 2 rotate */
            mreal c = MCOS(qi[0]), s = MSIN(qi[0]);
            for (int r = 0; r < 3; r++) {
                const mreal a1 = AhJ[3 * r + 1], a2 = AhJ[3 * r + 2];
                T[3 * r] = AhJ[3 * r];
                T[3 * r + 1] = a1 * c + a2 * s;
                T[3 * r + 2] = a2 * c - a1 * s;
            }
        } else if (kind == 2) {
            m3_copy(T, AhJ);
            rj[0] += AhJ[0] * qi[0]; rj[1] += AhJ[3] * qi[0]; rj[2] += AhJ[6] * qi[0];
        } else if (kind == 3) {
            /* T = U Rot(e2, q2), U = AhJ Rot(e1, q1): columns 0, 2 of U rotate */
            kin_cardan_axes(AhJ, MCOS(qi[0]), MSIN(qi[0]), u);
            const mreal c2 = MCOS(qi[1]), s2 = MSIN(qi[1]);
            for (int r = 0; r < 3; r++) {
                T[3 * r] = u[r] * c2 - u[6 + r] * s2;
                T[3 * r + 1] = u[3 + r];
                T[3 * r + 2] = u[r] * s2 + u[6 + r] * c2;
            }
        } else {
            mreal R[9], t[3];
            const mbs_joint_ops *ops = MBS_K(mbs_joint_ops_of)(jt->type, jt->velocities);
            ops->motion(qi, R, t);
            m3_mul(T, AhJ, R);
            m3_mv(tmp, AhJ, t);
            v3_add(rj, rj, tmp);
        }
        m3_mul_bt(Ai, T, x + jt->x_Xc);
        /* th[3] of a primal workspace: 1 where A_i is a rotation, i.e. no joint on
         * the path is an Euler-parameter joint off the unit sphere (the rotation
         * tangents of kinematics_derivatives.c need it) */
        {
            int rot = MRE(w->th[4 * h + 3]) != 0;
            if (rot && jt->euler >= 0) {
                const mreal *p = qi + jt->euler;
                rot = fabs(MRE(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]) - 1) <= 1e-14;
            }
            w->th[4 * i + 3] = rot;
        }
        mreal *oi = w->o + 3 * i;
        m3_mv(tmp, Ai, x + jt->x_cpoint);
        v3_sub(oi, rj, tmp);
        mreal *rG = w->rG + 3 * i;
        m3_mv(tmp, Ai, x + m->body[i].x_com);
        v3_add(rG, oi, tmp);
        mreal *ri = w->r + 3 * i;
        switch (w->ref) {
        case MBS_REF_COM: v3_copy(ri, rG); break;
        case MBS_REF_ORIGIN: v3_zero(ri); break;
        case MBS_REF_JOINT: v3_copy(ri, rj); break;
        }
        v3_sub(w->a + 3 * i, w->r + 3 * h, ri);

        mreal rho[3];
        v3_sub(rho, ri, rj);
        kin_joint_map(w, jt, i, kind, qi, rho, u);
        kin_body_inertia(m, x, w, i);
        if (level < 1) continue;
        kin_body_rates(m, w, i, q, qd, qdd, rho, level, kind == 3 ? u : NULL);
    }
}

void MBS_K(mbs_kin_velocities)(const mbs_model *m, MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd,
                               const mreal *qdd)
{
    for (int i = 1; i <= m->nb; i++) {
        mreal rho[3];
        v3_sub(rho, w->r + 3 * i, w->rj + 3 * i);
        kin_body_rates(m, w, i, q, qd, qdd, rho, 2, NULL);
    }
}

void MBS_K(mbs_kin_accelerations)(const mbs_model *m, MBS_K(mbs_ws) *w, const mreal *qdd)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        mreal *Vdi = w->Vd + 6 * i;
        const mreal *bi = w->b + MBS_BSTRIDE * i;
        s6_twist_shift(Vdi, w->a + 3 * i, w->Vd + 6 * jt->parent);
        for (int c = 0; c < 6; c++) Vdi[c] += w->dv[6 * i + c];
        for (int k = 0; k < jt->nv; k++)
            for (int c = 0; c < 6; c++) Vdi[c] += bi[6 * k + c] * qdd[jt->voff + k];
    }
}
