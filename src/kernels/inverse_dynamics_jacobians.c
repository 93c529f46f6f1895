/*
 * inverse_dynamics_jacobians.c - all columns of dtau/dq and dtau/dqd in
 * O(n depth) with small constants (Carpentier & Mansard 2018 style, world
 * frame; docs/formulations.md §9).
 *
 * Everything is expressed at one point p0 (the model's mass centre at this
 * pose; below, "origin") whatever the workspace's reference point (tau does
 * not depend on it): s_c world twist of column c,
 * V_b spatial velocity, A_b spatial acceleration minus gravity
 * (A = Vd - [w x v; 0] - [g; 0], Vd the material acceleration of the origin
 * point), I_b spatial inertia, F_S the subtree wrench of the completed
 * Newton-Euler pass. Inertias are kept as (m, h = m c, K = inertia about the
 * origin): I [v; w] = [m v + w x h; h x v + K w].
 *
 * A unit change of a non-Euler coordinate k moves the subtree below column k
 * rigidly along sigma = s_k, with d s_c / dq_k = s_k x s_c for every later
 * column c (same joint or below). With u_k = s_k x V_Fk (V_Fk, A_Fk the
 * velocity and acceleration of the frame that carries column k):
 *   dV_b = s x V_b - u,   dA_b = s x A_b - u x V_b - w_k,
 *   w_k = s x A_Fk + V_Fk x u_k.
 * Summing over a subtree S (I^C composite inertia, Id^C = sum(V x* I - I V x)
 * its time derivative, h_S = sum I V, loads f, n, R = sum r f^T):
 *   dF_S/dq_k = s x* F_S + Delta_S,
 *   Delta_S = -I^C w_k - Id^C u_k - u_k x* h_S + [w x f; w tr R - R^T w + w x n]
 *   (w = angular part of s_k), and
 *   dtau_c/dq_k = s_c . (s_k x* F_Sk + Delta_Sk)        c above k
 *               = s_c . Delta_Sc
 *               = -alpha_c . w_k + beta_c . u_k + lambda_c . s_k   c at or below k
 * with alpha_c = I^C s_c, beta_c = s_c x* h - Id^C s_c (subtree of c) and
 * lambda_c the load term. For the velocities (any column, Euler ones
 * included; ut_k = s_k x V_Fk for rigid columns, s_k x V_child for Euler
 * parameters, whose own columns depend on p linearly):
 *   dF_S/dqd_k = Id^C s_k - I^C (u_k + ut_k) + s_k x* h_S
 *   dtau_c/dqd_k = s_c . dF_Sk/dqd_k                        c above k
 *               = -beta_c . s_k - alpha_c . (u_k + ut_k)     c at or below k
 *
 * The mass matrix comes for free: M(r, c) = s_r . alpha_c for r above or in
 * the joint of c (optional output).
 *
 * Euler-parameter columns of dtau/dq are not rigid motions (the rotation
 * formula is extended off |p| = 1): they are skipped here (skip_euler) and
 * left to the caller.
 *
 * A joint with tangent velocities (ball or free, docs/formulations.md
 * "Derivatives in the tangent convention") has rigid columns whose frames
 * are all the child's: a unit tangent step along column k moves the child
 * subtree along sigma = s_k and turns every column c of the joint,
 * ds_c = s_k x s_c. So V_Fk = V_h, A_Fk = A_h for each of its columns,
 * ut_k = s_k x V_i, and the rows of its own columns, the earlier ones
 * included, take the "at or below" formulas. No radial part, no skipping.
 */
#include "kernels.h"
#include "base/algebra.h"

/* per-body and per-column record sizes in w->jac */
enum { JB_V = 0, JB_A = 6, JB_P = 12, JB_PD = 22, JB_H = 32, JB_F = 38, JB_L = 44, JB_SIZE = 60 };
enum { JC_S = 0, JC_AL = 6, JC_BE = 12, JC_U = 18, JC_UT = 24, JC_W = 30, JC_PS = 36, JC_PSD = 42,
       JC_LA = 48, JC_UQ = 52, JC_SIZE = 58 };

size_t MBS_K(mbs_jac_size)(const mbs_model *m)
{
    /* + nv^2: dense scratch for the forward-dynamics Jacobians */
    return (size_t)(m->nb + 1) * JB_SIZE + (size_t)m->nv * JC_SIZE + (size_t)m->nv * m->nv;
}

/* r (+)= I(P) v with P = (m, h, K: xx yy zz xy xz yz) */
static inline void inertia_mv(mreal *r, const mreal *P, const mreal *v, int add)
{
    mreal t[6];
    s6_inertia_mv(t, P, v);
    if (add) for (int c = 0; c < 6; c++) r[c] += t[c];
    else for (int c = 0; c < 6; c++) r[c] = t[c];
}
/* dot products summed as a tree (independent partial sums, paired lanes) */
static inline mreal dot6(const mreal *a, const mreal *b)
{
    const mreal e = (a[0] * b[0] + a[2] * b[2]) + a[4] * b[4];
    const mreal o = (a[1] * b[1] + a[3] * b[3]) + a[5] * b[5];
    return e + o;
}
static inline mreal dot12(const mreal *a, const mreal *b)
{
    const mreal e = ((a[0] * b[0] + a[2] * b[2]) + (a[4] * b[4] + a[6] * b[6])) +
                    ((a[8] * b[8] + a[10] * b[10]));
    const mreal o = ((a[1] * b[1] + a[3] * b[3]) + (a[5] * b[5] + a[7] * b[7])) +
                    ((a[9] * b[9] + a[11] * b[11]));
    return e + o;
}

#if defined(__GNUC__)
#define JAC_INLINE static inline __attribute__((always_inline))
#else
#define JAC_INLINE static inline
#endif

/* The common point of all spatial quantities: the mass centre of the
 * model rather than the global origin, to keep lever arms (and the
 * cancellations between m |c|^2 terms) as small as the model allows. */
JAC_INLINE void jac_origin(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w, mreal *p0)
{
    mreal mtot = 0;
    p0[0] = p0[1] = p0[2] = 0;
    for (int i = 1; i <= m->nb; i++) {
        const mreal mi = x[m->body[i].x_mass];
        for (int c = 0; c < 3; c++) p0[c] += mi * w->rG[3 * i + c];
        mtot += mi;
    }
    if (MRE(mtot) > 0) for (int c = 0; c < 3; c++) p0[c] /= mtot;
}

/* V and A of body i at the origin (r = its reference point - p0) */
JAC_INLINE void jac_body_motion(mreal *B, const mreal *Vr, const mreal *Vdr, const mreal *r, const mreal *grav)
{
    mreal *V = B + JB_V, *A = B + JB_A;
    /* V at the origin: v_O = v_r + r x w */
    v3_copy(V + 3, Vr + 3);
    v3_copy(V, Vr);
    v3_cross_add(V, r, Vr + 3);
    /* spatial acceleration at r, then at the origin, minus gravity */
    v3_copy(A + 3, Vdr + 3);
    v3_copy(A, Vdr);
    v3_cross_add(A, Vr, Vr + 3);  /* - w x v = + v x w */
    v3_cross_add(A, r, Vdr + 3);
    for (int c = 0; c < 3; c++) A[c] -= grav[c];
}

/* A rigid column: carried by the frame VF, AF, which then moves on by
 * the column's velocity qd_k and acceleration qdd_k. */
JAC_INLINE void jac_column_rigid(mreal *C, mreal *VF, mreal *AF, mreal qdk, mreal qddk)
{
    const mreal *s = C + JC_S, *u = C + JC_U;
    mreal *ut = C + JC_UT, *wk = C + JC_W, *uq = C + JC_UQ;
    s6_copy(ut, u);
    s6_copy(uq, u);
    s6_mcross(wk, s, AF);
    mreal t[6];
    s6_mcross(t, VF, u);
    for (int c = 0; c < 6; c++) wk[c] += t[c];
    for (int c = 0; c < 6; c++) {
        AF[c] += s[c] * qddk - u[c] * qdk;
        VF[c] += s[c] * qdk;
    }
}

/* The columns of a joint whose velocities are tangent (a ball or free
 * joint with angular velocity; all its columns are carried by the child
 * frame), b its joint map, Vi the child's velocity, VF, AF the parent's
 * velocity and acceleration, r its reference point, all at the origin: the
 * frame that stays put is the parent's for every column (not advanced from
 * column to column), and the rate term is ut = s x V_i (ds_c/dt = V_i x
 * s_c). */
static void jac_columns_tangent(mreal *JC, const mbs_joint_info *jt, const mreal *b, const mreal *Vi,
                                const mreal *VF, const mreal *AF, const mreal *r)
{
    for (int k = 0; k < jt->nv; k++) {
        mreal *C = JC + (size_t)(jt->voff + k) * JC_SIZE;
        mreal *s = C + JC_S, *u = C + JC_U, *ut = C + JC_UT, *wk = C + JC_W, *uq = C + JC_UQ, t[6];
        v3_copy(s + 3, b + 6 * k + 3);
        v3_copy(s, b + 6 * k);
        v3_cross_add(s, r, s + 3);
        s6_mcross(u, s, VF);
        s6_mcross(ut, s, Vi);
        s6_copy(uq, u);
        s6_mcross(wk, s, AF);
        s6_mcross(t, VF, u);
        for (int c = 0; c < 6; c++) wk[c] += t[c];
    }
}

/* Euler parameter p_a, column k = e0 + a, of body i (V, A its motion at
 * the origin, p, pd, pdd its parameters and their rates). Velocities: the
 * other columns of the joint depend on p (linearly). Positions: the
 * tangent part t = e_a - p_a p of the unit direction rotates the child
 * rigidly along sigma = s_k (|p| = 1); the joint's own columns change by
 * dS[x] = [r_j x w; w], w = 2 A_hJ E(t) x, so that dV_i = dS[pd],
 * dA_i = dS[pdd] + V_F x dS[pd] and u = s x V_i - dV_i,
 * w = s x A_i - u x V_i - dA_i. */
JAC_INLINE void jac_column_euler(mreal *C, const mreal *V, const mreal *A, const mreal *VF, const mreal *AhJ,
                                 const mreal *rj, const mreal *p, const mreal *pd, const mreal *pdd, int a)
{
    const mreal *s = C + JC_S;
    mreal *ut = C + JC_UT, *wk = C + JC_W, *uq = C + JC_UQ;
    s6_mcross(ut, s, V);
    mreal dV[6], dA[6], t[6];
    for (int c = 0; c < 6; c++) dV[c] = dA[c] = 0;
    for (int pass = 0; pass < 2; pass++) {
        const mreal *xv = pass ? pdd : pd;
        if (!xv) continue;
        mreal Ee[12], Ep[12], lw[3], ww[3];
        mreal ea[4] = { 0, 0, 0, 0 };
        ea[a] = 1;
        ep_E(Ee, ea);
        ep_E(Ep, p);
        for (int r = 0; r < 3; r++) {
            lw[r] = 0;
            for (int c = 0; c < 4; c++) lw[r] += 2 * (Ee[4 * r + c] - p[a] * Ep[4 * r + c]) * xv[c];
        }
        m3_mv(ww, AhJ, lw);
        mreal *out = pass ? dA : dV;
        v3_copy(out + 3, ww);
        v3_cross(out, rj, ww);
    }
    s6_mcross(t, VF, dV);
    for (int c = 0; c < 6; c++) dA[c] += t[c];
    s6_mcross(uq, s, V);
    for (int c = 0; c < 6; c++) uq[c] -= dV[c];
    s6_mcross(wk, s, A);
    s6_mcross(t, uq, V);
    for (int c = 0; c < 6; c++) wk[c] -= t[c] + dA[c];
}

/* The columns of joint i at the origin (r = its reference point - p0) */
JAC_INLINE void jac_columns(const mbs_model *m, const MBS_K(mbs_ws) *w, mreal *JB, mreal *JC, const mreal *p0,
                            const mreal *r, const mreal *q, const mreal *qd, const mreal *qdd, int i)
{
    const mbs_joint_info *jt = &m->joint[i];
    const int ni = jt->nv;
    const mreal *B = JB + (size_t)i * JB_SIZE, *Bh = JB + (size_t)jt->parent * JB_SIZE;
    const mreal *bi = w->b + MBS_BSTRIDE * i;
    mreal VF[6], AF[6];
    s6_copy(VF, Bh + JB_V);
    s6_copy(AF, Bh + JB_A);
    const int e0 = jt->euler >= 0 ? jt->euler : ni;
    for (int k = 0; k < ni; k++) {
        mreal *C = JC + (size_t)(jt->voff + k) * JC_SIZE;
        mreal *s = C + JC_S, *u = C + JC_U;
        v3_copy(s + 3, bi + 6 * k + 3);
        v3_copy(s, bi + 6 * k);
        v3_cross_add(s, r, s + 3);
        s6_mcross(u, s, VF);
        if (k < e0) {
            const mreal qdk = qd ? qd[jt->voff + k] : 0, qddk = qdd ? qdd[jt->voff + k] : 0;
            jac_column_rigid(C, VF, AF, qdk, qddk);
        } else {
            const mreal *p = q + jt->qoff + e0, *pd = qd ? qd + jt->voff + e0 : 0;
            const mreal *pdd = qdd ? qdd + jt->voff + e0 : 0;
            mreal rj[3];
            v3_sub(rj, w->rj + 3 * i, p0);
            jac_column_euler(C, B + JB_V, B + JB_A, VF, w->AhJ + 9 * i, rj, p, pd, pdd, k - e0);
        }
    }
}

/* body inertia (m, h, K) at the origin (cg = its mass centre - p0) and
 * its rate (0, hd, Kd) */
JAC_INLINE void jac_body_inertia(mreal *B, mreal mass, const mreal *J, const mreal *cg)
{
    mreal *P = B + JB_P, *Pd = B + JB_PD;
    const mreal cc = v3_dot(cg, cg);
    P[0] = mass;
    for (int c = 0; c < 3; c++) P[1 + c] = mass * cg[c];
    P[4] = J[0] + mass * (cc - cg[0] * cg[0]);
    P[5] = J[4] + mass * (cc - cg[1] * cg[1]);
    P[6] = J[8] + mass * (cc - cg[2] * cg[2]);
    P[7] = J[1] - mass * cg[0] * cg[1];
    P[8] = J[2] - mass * cg[0] * cg[2];
    P[9] = J[5] - mass * cg[1] * cg[2];
    /* momentum I V; its linear part is hd = m v + w x h */
    mreal *H = B + JB_H;
    inertia_mv(H, P, B + JB_V, 0);
    Pd[0] = 0;
    v3_copy(Pd + 1, H);
    /* Kd = 2 (h.v) I - v h^T - h v^T + S(w) K - K S(w) */
    const mreal *hh = P + 1, *v = B + JB_V, *om = B + JB_V + 3;
    mreal K[9];
    m3_sym(K, P + 4);
    mreal SK[9];   /* S(w) K */
    for (int c = 0; c < 3; c++) {
        SK[0 + c] = om[1] * K[6 + c] - om[2] * K[3 + c];
        SK[3 + c] = om[2] * K[0 + c] - om[0] * K[6 + c];
        SK[6 + c] = om[0] * K[3 + c] - om[1] * K[0 + c];
    }
    /* S(w) K - K S(w) = SK + SK^T (K symmetric, S skew) */
    const mreal hv = 2 * v3_dot(hh, v);
    Pd[4] = hv - 2 * v[0] * hh[0] + 2 * SK[0];
    Pd[5] = hv - 2 * v[1] * hh[1] + 2 * SK[4];
    Pd[6] = hv - 2 * v[2] * hh[2] + 2 * SK[8];
    Pd[7] = -v[0] * hh[1] - hh[0] * v[1] + SK[1] + SK[3];
    Pd[8] = -v[0] * hh[2] - hh[0] * v[2] + SK[2] + SK[6];
    Pd[9] = -v[1] * hh[2] - hh[1] * v[2] + SK[5] + SK[7];
}

/* subtree wrench at the origin (completed Newton-Euler in w->F) and the
 * loads: f, n, R = sum r_k f_k^T = o f^T + A P */
JAC_INLINE void jac_body_wrench(mreal *B, const MBS_K(mbs_ws) *w, const mreal *r, const mreal *p0, int loads,
                                int i)
{
    const mreal *Fr = w->F + 6 * i;
    mreal *F = B + JB_F;
    v3_copy(F, Fr);
    v3_copy(F + 3, Fr + 3);
    v3_cross_add(F + 3, r, Fr);
    mreal *L = B + JB_L;
    if (loads) {
        const mreal *fx = w->xfrc + 15 * i, *Ai = w->A + 9 * i;
        mreal o[3];
        v3_sub(o, w->o + 3 * i, p0);
        for (int c = 0; c < 6; c++) L[c] = fx[c];
        m3_mul(L + 6, Ai, fx + 6);
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) L[6 + 3 * a + c] += o[a] * fx[c];
    }
}

/* The column vectors of column C of a joint on body record B (the
 * composite sums of its subtree): alpha, beta, psi' and lambda; psi too
 * unless skipped (an Euler column with skip_euler). */
JAC_INLINE void jac_column_vectors(mreal *C, const mreal *B, int loads, mreal trR, int with_psi)
{
    const mreal *P = B + JB_P, *Pd = B + JB_PD, *H = B + JB_H, *F = B + JB_F, *L = B + JB_L;
    const mreal *s = C + JC_S, *u = C + JC_U, *ut = C + JC_UT, *wk = C + JC_W, *uq = C + JC_UQ;
    mreal *al = C + JC_AL, *be = C + JC_BE, *ps = C + JC_PS, *psd = C + JC_PSD, *la = C + JC_LA;
    mreal t[6];
    inertia_mv(al, P, s, 0);
    /* beta = s x* h - Id s */
    inertia_mv(t, Pd, s, 0);
    for (int c = 0; c < 6; c++) be[c] = -t[c];
    s6_fcross_add(be, s, H);
    /* psi' = Id s - I (u + ut) + s x* h */
    mreal uu[6];
    for (int c = 0; c < 6; c++) { uu[c] = u[c] + ut[c]; psd[c] = t[c]; }
    inertia_mv(t, P, uu, 0);
    for (int c = 0; c < 6; c++) psd[c] -= t[c];
    s6_fcross_add(psd, s, H);
    /* psi = s x* F - I w - Id u - u x* h + load term */
    if (with_psi) {
        inertia_mv(t, P, wk, 0);
        for (int c = 0; c < 6; c++) ps[c] = -t[c];
        inertia_mv(t, Pd, uq, 0);
        for (int c = 0; c < 6; c++) ps[c] -= t[c];
        s6_fcross_add(ps, s, F);
        mreal mu[6];
        for (int c = 0; c < 6; c++) mu[c] = -uq[c];
        s6_fcross_add(ps, mu, H);
    }
    la[0] = la[1] = la[2] = 0;
    if (loads) {
        const mreal *sw = s + 3, *f = L, *n = L + 3, *R = L + 6;
        /* lambda = f x s_lin + tr(R) s_ang - R s_ang + n x s_ang */
        v3_cross(la, f, s);
        v3_cross_add(la, n, sw);
        for (int a = 0; a < 3; a++)
            la[a] += trR * sw[a] - (R[3 * a] * sw[0] + R[3 * a + 1] * sw[1] + R[3 * a + 2] * sw[2]);
        if (with_psi) {
            /* + [w x f; w tr R - R^T w + w x n] */
            v3_cross_add(ps, sw, f);
            v3_cross_add(ps + 3, sw, n);
            for (int a = 0; a < 3; a++)
                ps[3 + a] += trR * sw[a] - (R[a] * sw[0] + R[3 + a] * sw[1] + R[6 + a] * sw[2]);
        }
    }
}

/* Entries of column ck in the rows at or below it, r in [below, qend),
 * at [b + r rs] (dense: b = ck, rs = nv; pattern order: b = the
 * position of (ck, ck) - ck, rs = 1). With the row vectors g_r = [alpha_r;
 * beta_r] (contiguous) each entry is one 12-dot: dq = g . [-w; u] (+
 * lambda . s), dqd = g . [-(u + ut); -s] (dtau_dq NULL: not wanted for
 * this column). */
JAC_INLINE void jac_rows_below(const mreal *JC, ptrdiff_t b, size_t rs, int ck, int below, int qend, int loads,
                               mreal *dtau_dq, mreal *dtau_dqd)
{
    const mreal *C = JC + (size_t)ck * JC_SIZE;
    const mreal *s = C + JC_S, *u = C + JC_U, *ut = C + JC_UT, *wk = C + JC_W, *uq = C + JC_UQ;
    mreal z1[12], z2[12];
    for (int c = 0; c < 6; c++) {
        z1[c] = -wk[c];
        z1[6 + c] = uq[c];
        z2[c] = -(u[c] + ut[c]);
        z2[6 + c] = -s[c];
    }
    if (dtau_dq && dtau_dqd && !loads) {
        /* both at once: each row vector read once */
        for (int r = below; r < qend; r++) {
            const mreal *g = JC + (size_t)r * JC_SIZE + JC_AL;
            const ptrdiff_t o = b + (ptrdiff_t)((size_t)r * rs);
            dtau_dq[o] = dot12(g, z1);
            dtau_dqd[o] = dot12(g, z2);
        }
        return;
    }
    if (dtau_dq) {
        if (loads)
            for (int r = below; r < qend; r++) {
                const mreal *R = JC + (size_t)r * JC_SIZE;
                dtau_dq[b + (ptrdiff_t)((size_t)r * rs)] = dot12(R + JC_AL, z1) +
                    (R[JC_LA] * s[3] + R[JC_LA + 1] * s[4] + R[JC_LA + 2] * s[5]);
            }
        else
            for (int r = below; r < qend; r++)
                dtau_dq[b + (ptrdiff_t)((size_t)r * rs)] = dot12(JC + (size_t)r * JC_SIZE + JC_AL, z1);
    }
    if (dtau_dqd) {
        for (int r = below; r < qend; r++)
            dtau_dqd[b + (ptrdiff_t)((size_t)r * rs)] = dot12(JC + (size_t)r * JC_SIZE + JC_AL, z2);
    }
}

/* Euler rows c of the joint of Euler column ck = v0 + e0 + a (p its
 * parameters, rj its joint point - p0, F the subtree wrench):
 * + (dS_c[t] - s_k x s_c) . F, at dtau_dq[b + r rs] as in jac_rows_below */
JAC_INLINE void jac_rows_euler(const mreal *JC, ptrdiff_t b, size_t rs, int ck, int v0e, int a, const mreal *p,
                               const mreal *AhJ, const mreal *rj, const mreal *F, mreal *dtau_dq)
{
    const mreal *s = JC + (size_t)ck * JC_SIZE + JC_S;
    mreal Ee[12], Ep[12];
    mreal ea[4] = { 0, 0, 0, 0 };
    ea[a] = 1;
    ep_E(Ee, ea);
    ep_E(Ep, p);
    for (int c = 0; c < 4; c++) {
        const int r = v0e + c;
        mreal lw[3], ww[3], dsc[6], sxs[6];
        for (int b = 0; b < 3; b++) lw[b] = 2 * (Ee[4 * b + c] - p[a] * Ep[4 * b + c]);
        m3_mv(ww, AhJ, lw);
        v3_copy(dsc + 3, ww);
        v3_cross(dsc, rj, ww);
        s6_mcross(sxs, s, JC + (size_t)r * JC_SIZE + JC_S);
        for (int b = 0; b < 6; b++) dsc[b] -= sxs[b];
        dtau_dq[b + (ptrdiff_t)((size_t)r * rs)] += dot6(dsc, F);
    }
}

/* Entries of column ck in the rows above, from top up the parent chain of
 * velocities (w->vpar), and its mass-matrix entries: M(r, ck) =
 * s_r . I^C s_ck, r above or in the joint. */
JAC_INLINE void jac_rows_above(const mreal *JC, const int *vpar, int nv, int ck, int top, mreal *dtau_dq,
                               mreal *dtau_dqd, mreal *M)
{
    const mreal *C = JC + (size_t)ck * JC_SIZE, *ps = C + JC_PS, *psd = C + JC_PSD;
    if (dtau_dq && dtau_dqd) {
        for (int r = top; r >= 0; r = vpar[r]) {
            const mreal *sr = JC + (size_t)r * JC_SIZE + JC_S;
            dtau_dq[(size_t)r * nv + ck] = dot6(sr, ps);
            dtau_dqd[(size_t)r * nv + ck] = dot6(sr, psd);
        }
    } else if (dtau_dq) {
        for (int r = top; r >= 0; r = vpar[r])
            dtau_dq[(size_t)r * nv + ck] = dot6(JC + (size_t)r * JC_SIZE + JC_S, ps);
    } else if (dtau_dqd) {
        for (int r = top; r >= 0; r = vpar[r])
            dtau_dqd[(size_t)r * nv + ck] = dot6(JC + (size_t)r * JC_SIZE + JC_S, psd);
    }
    if (M) {
        for (int r = ck; r >= 0; r = vpar[r])
            M[(size_t)r * nv + ck] = M[(size_t)ck * nv + r] = dot6(JC + (size_t)r * JC_SIZE + JC_S, C + JC_AL);
    }
}

/* jac_rows_above in pattern order (sp): the rows top, vpar[top], ... are
 * found in column ck's sorted row list by walking down from pos, the
 * position of top's child on the path (the list may hold rows of
 * force-element cliques between them); M(r, ck) in row ck of the tree
 * storage, where ancestor r sits at its depth. */
JAC_INLINE void jac_rows_above_sparse(const mreal *JC, const int *vpar, const mbs_jac_pattern *sp, int ck, int top,
                                      int pos, mreal *dtau_dq, mreal *dtau_dqd, mreal *M)
{
    const mreal *C = JC + (size_t)ck * JC_SIZE, *ps = C + JC_PS, *psd = C + JC_PSD;
    const int *ind = sp->ind;
    for (int r = top; r >= 0; r = vpar[r]) {
        while (ind[--pos] != r) {}
        const mreal *sr = JC + (size_t)r * JC_SIZE + JC_S;
        if (dtau_dq) dtau_dq[pos] = dot6(sr, ps);
        if (dtau_dqd) dtau_dqd[pos] = dot6(sr, psd);
    }
    if (M) {
        const int *mr = sp->mrow;
        for (int r = ck; r >= 0; r = vpar[r])
            M[mr[ck] + mr[r + 1] - mr[r] - 1] = dot6(JC + (size_t)r * JC_SIZE + JC_S, C + JC_AL);
    }
}

/* ---- backward, body i: column vectors, Jacobian entries, composite sums ---- */
JAC_INLINE void jac_backward_body(const mbs_model *m, const MBS_K(mbs_ws) *w, mreal *JB, mreal *JC,
                                  const mreal *p0, const mreal *q, int loads, int skip_euler, int i,
                                  const mbs_jac_pattern *sp, mreal *dtau_dq, mreal *dtau_dqd, mreal *M)
{
    const int nb = m->nb, nv = m->nv;
    const mbs_joint_info *jt = &m->joint[i];
    const int h = jt->parent, ni = jt->nv, v0 = jt->voff;
    const int qend = m->body[i].subtree_end <= nb ? m->joint[m->body[i].subtree_end].voff : nv;
    mreal *B = JB + (size_t)i * JB_SIZE;
    const int e0 = jt->euler >= 0 ? jt->euler : ni;
    /* a tangent joint's columns: the rows of the joint from its first on */
    const int tangent_end = jt->velocities == MBS_VELOCITIES_TANGENT ? v0 + ni : -1;
    const mreal *L = B + JB_L;
    mreal trR = loads ? L[6] + L[10] + L[14] : 0;
    for (int k = 0; k < ni; k++)
        jac_column_vectors(JC + (size_t)(v0 + k) * JC_SIZE, B, loads, trR, k < e0 || !skip_euler);
    /* columns k of joint i */
    for (int k = 0; k < ni; k++) {
        const int ck = v0 + k;
        const int euler = k >= e0;
        const int dq = dtau_dq && (!euler || !skip_euler);
        /* rows at or below k: this joint from k on (from its first Euler
         * parameter for an Euler column, from its first column for a
         * tangent joint, whose columns all turn with the child), then the
         * subtree */
        const int below = euler ? v0 + e0 : ck < tangent_end ? v0 : ck;
        const ptrdiff_t b = sp ? sp->diag[ck] - ck : ck;
        const size_t rs = sp ? 1 : (size_t)nv;
        jac_rows_below(JC, b, rs, ck, below, qend, loads, dq ? dtau_dq : NULL, dtau_dqd);
        if (dq && euler) {
            mreal rj[3];
            v3_sub(rj, w->rj + 3 * i, p0);
            jac_rows_euler(JC, b, rs, ck, v0 + e0, k - e0, q + jt->qoff + e0, w->AhJ + 9 * i, rj, B + JB_F, dtau_dq);
        }
        /* rows above: earlier columns of this joint, then the ancestors */
        if (sp)
            jac_rows_above_sparse(JC, w->vpar, sp, ck, w->vpar[below], sp->diag[ck] - (ck - below),
                                  dq ? dtau_dq : NULL, dtau_dqd, M);
        else
            jac_rows_above(JC, w->vpar, nv, ck, w->vpar[below], dq ? dtau_dq : NULL, dtau_dqd, M);
    }
    /* pass the composite sums to the parent */
    if (h > 0) {
        mreal *Bp = JB + (size_t)h * JB_SIZE;
        for (int c = JB_P; c < JB_F; c++) Bp[c] += B[c];
        if (loads) for (int c = JB_L; c < JB_SIZE; c++) Bp[c] += B[c];
    }
}

static void jac_all(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd,
                    const mreal *qdd, int skip_euler, const mbs_jac_pattern *sp, mreal *dtau_dq, mreal *dtau_dqd,
                    mreal *M)
{
    const int nb = m->nb, nv = m->nv;
    mreal *JB = w->jac, *JC = w->jac + (size_t)(nb + 1) * JB_SIZE;
    const mreal *grav = x + m->x_gravity;
    int loads = 0;
    for (int k = 15; k < 15 * (nb + 1) && !loads; k++) loads = MRE(w->xfrc[k]) != 0;
    mreal p0[3];
    jac_origin(m, x, w, p0);
    v3_copy(JB + JB_P, p0);   /* kept (ground record) for mbs_jac_body_tangent */
    /* ground: V = 0, A = -a_g */
    for (int c = 0; c < JB_SIZE; c++) if (c < JB_P || c >= JB_P + 3) JB[c] = 0;
    for (int c = 0; c < 3; c++) JB[JB_A + c] = -grav[c];

    /* ---- forward: origin quantities, columns, body inertias ---- */
    for (int i = 1; i <= nb; i++) {
        mreal *B = JB + (size_t)i * JB_SIZE;
        mreal r[3], cg[3];
        v3_sub(r, w->r + 3 * i, p0);
        jac_body_motion(B, w->V + 6 * i, w->Vd + 6 * i, r, grav);
        if (m->joint[i].velocities == MBS_VELOCITIES_TANGENT)
            jac_columns_tangent(JC, &m->joint[i], w->b + MBS_BSTRIDE * i, B + JB_V,
                                JB + (size_t)m->joint[i].parent * JB_SIZE + JB_V,
                                JB + (size_t)m->joint[i].parent * JB_SIZE + JB_A, r);
        else
            jac_columns(m, w, JB, JC, p0, r, q, qd, qdd, i);
        v3_sub(cg, w->rG + 3 * i, p0);
        jac_body_inertia(B, x[m->body[i].x_mass], w->J + 9 * i, cg);
        jac_body_wrench(B, w, r, p0, loads, i);
    }

    /* ---- backward: composite sums, column vectors, Jacobian entries ---- */
    /* zero the entries between independent branches; a single chain from
     * the ground has none (every pair of columns is ancestor-related). In
     * pattern order, the entries of force-element cliques and skipped
     * Euler columns are not written: all start at zero. */
    const size_t nz = sp ? (size_t)sp->ptr[nv] : (size_t)nv * nv;
    if (sp || m->nbranch != 1 || skip_euler) {
        if (dtau_dq) for (size_t k = 0; k < nz; k++) dtau_dq[k] = 0;
        if (dtau_dqd) for (size_t k = 0; k < nz; k++) dtau_dqd[k] = 0;
        if (M && !sp) for (size_t k = 0; k < nz; k++) M[k] = 0;
    }
    for (int i = nb; i >= 1; i--)
        jac_backward_body(m, w, JB, JC, p0, q, loads, skip_euler, i, sp, dtau_dq, dtau_dqd, M);
}

void MBS_K(mbs_rnea_jacobians)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w,
                               const mreal *q, const mreal *qd, const mreal *qdd, int skip_euler,
                               mreal *dtau_dq, mreal *dtau_dqd, mreal *M)
{
    jac_all(m, x, w, q, qd, qdd, skip_euler, NULL, dtau_dq, dtau_dqd, M);
}

void MBS_K(mbs_rnea_jacobians_sparse)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w, const mreal *q,
                                      const mreal *qd, const mreal *qdd, const mbs_jac_pattern *sp,
                                      mreal *dtau_dq, mreal *dtau_dqd, mreal *M)
{
    jac_all(m, x, w, q, qd, qdd, 0, sp, dtau_dq, dtau_dqd, M);
}

void MBS_K(mbs_jac_body_tangent)(const mbs_model *m, const MBS_K(mbs_ws) *w, int k, int which, int b,
                                 MBS_K(mbs_ws) *dw)
{
    const mreal *JB = w->jac, *JC = w->jac + (size_t)(m->nb + 1) * JB_SIZE;
    const mreal *p0 = JB + JB_P, *C = JC + (size_t)k * JC_SIZE, *s = C + JC_S;
    const mreal *Vp = JB + (size_t)b * JB_SIZE + JB_V, *Ab = w->A + 9 * b;
    mreal *dA = dw->A + 9 * b, *dob = dw->o + 3 * b, *dr = dw->r + 3 * b, *dV = dw->V + 6 * b;
    mreal rb[3], t[3];
    v3_sub(rb, w->r + 3 * b, p0);
    if (which == 1) {
        /* a unit change of qd_k: positions fixed, dV = s_k (at p0) */
        for (int c = 0; c < 9; c++) dA[c] = 0;
        v3_zero(dob);
        v3_zero(dr);
        v3_copy(dV + 3, s + 3);
        v3_copy(dV, s);
        v3_cross_add(dV, s + 3, rb);
        return;
    }
    /* q_k: the rigid field v(x) = s_lin + s_ang x (x - p0) */
    for (int c = 0; c < 3; c++) {           /* dA = S(w) A, column by column */
        const mreal col[3] = { Ab[c], Ab[3 + c], Ab[6 + c] };
        v3_cross(t, s + 3, col);
        dA[c] = t[0]; dA[3 + c] = t[1]; dA[6 + c] = t[2];
    }
    v3_sub(t, w->o + 3 * b, p0);
    v3_copy(dob, s);
    v3_cross_add(dob, s + 3, t);
    if (w->ref == MBS_REF_ORIGIN) {
        v3_zero(dr);
    } else {
        v3_copy(dr, s);
        v3_cross_add(dr, s + 3, rb);
    }
    /* dV at p0 = s x V - u; at the reference point r: + dw x (r - p0) + w x dr */
    mreal dVp[6];
    s6_mcross(dVp, s, Vp);
    for (int c = 0; c < 6; c++) dVp[c] -= C[JC_UQ + c];
    v3_copy(dV + 3, dVp + 3);
    v3_copy(dV, dVp);
    v3_cross_add(dV, dVp + 3, rb);
    v3_cross_add(dV, Vp + 3, dr);
}
