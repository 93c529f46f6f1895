/*
 * aba.c - fully recursive O(n) forward dynamics:
 * articulated-body triangularization and back-substitution
 * (thesis §2.4.2, eq. 2.247; Anderson & Hsu eqs. 52-61; Featherstone).
 * Never forms the mass matrix.
 *
 *   init         M^_i = M^v_i,  Q^_i = Q^v_i
 *   tip -> base  U = M^_i b_i,  N = b_i^T U (+ p p^T, Euler completion)
 *                x = Q^_i - M^_i d_i,  u = b_i^T x + Q^q_i + tau_i
 *                M^_h += B_i^T (M^_i - U N^-1 U^T) B_i
 *                Q^_h += B_i^T (x - U N^-1 u)
 *   base -> tip  qdd_i = N^-1 (u - U^T B_i Vd_h)
 *                Vd_i  = B_i Vd_h + b_i qdd_i + d_i
 *
 * Euler parameters: b p = 0 makes N singular along p. N is completed with
 * p p^T and the right-hand side gets p (-|pd|^2 - p.u): this adds the
 * differentiated normalization p.pdd = -|pd|^2 and drops the component of
 * the joint forces along p, which does no work (docs/formulations.md, Forward dynamics).
 *
 * Hybrid dynamics (mbs_aba_prescribed; Featherstone, Rigid Body Dynamics
 * Algorithms §9.2): velocities whose accelerations are given take no part
 * in the elimination. Their b_p qdd_p joins d_i like a velocity-product
 * term, the body stays rigidly attached along them, and the base-to-tip
 * sweep returns the generalized force each needs, b_p^T (M^_i Vd_i - Q^_i)
 * less the applied joint forces: the row of M' qdd - Q (M' as above; the
 * prescribed velocities must not be Euler parameters).
 */
#include "kernels/kernels.h"
#include "base/algebra.h"

/* Inverse of a small SPD matrix (n <= 7) by Cholesky; returns 0 if not
 * positive definite (by the real part). */
static int spd_inverse(int n, const mreal *N, mreal *Ni)
{
    mreal L[49], Y[49];
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            mreal s = N[i * n + j];
            for (int k = 0; k < j; k++) s -= L[i * 7 + k] * L[j * 7 + k];
            if (i == j) {
                if (!(MRE(s) > 0)) return 0;
                L[i * 7 + i] = MSQRT(s);
            } else {
                L[i * 7 + j] = s / L[j * 7 + j];
            }
        }
    /* Y = L^-1 (lower triangular) */
    for (int c = 0; c < n; c++)
        for (int i = 0; i < n; i++) {
            if (i < c) { Y[i * 7 + c] = 0; continue; }
            mreal s = (i == c) ? 1 : 0;
            for (int k = c; k < i; k++) s -= L[i * 7 + k] * Y[k * 7 + c];
            Y[i * 7 + c] = s / L[i * 7 + i];
        }
    /* Ni = Y^T Y */
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++) {
            mreal s = 0;
            for (int k = i; k < n; k++) s += Y[k * 7 + i] * Y[k * 7 + j];
            Ni[i * n + j] = Ni[j * n + i] = s;
        }
    return 1;
}

/* The velocities of joint i that are not prescribed (all without presc):
 * their count, their indices within the joint in fk (ascending). */
static int free_velocities(const mbs_joint_info *jt, const unsigned char *presc, int *fk)
{
    int nf = 0;
    for (int k = 0; k < jt->nv; k++)
        if (!presc || !presc[jt->voff + k]) fk[nf++] = k;
    return nf;
}

/* N_i^-1 over the free velocities fk of joint i, with the Euler completion
 * (the four parameters are free) on N and u; 0 if not positive definite. */
static int joint_inverse(const mbs_joint_info *jt, const mreal *bi, const int *fk, int ni, const mreal *q,
                         const mreal *qd, const mreal *U, mreal *u, mreal *Ni)
{
    mreal N[49];
    for (int r = 0; r < ni; r++)
        for (int c = 0; c <= r; c++)
            N[r * ni + c] = N[c * ni + r] = s6_dot(bi + 6 * fk[r], U + 6 * c);
    if (jt->euler >= 0) {
        int e = 0;
        while (fk[e] != jt->euler) e++;
        mreal pu = 0, pdpd = 0;
        const mreal *p = q + jt->qoff + jt->euler;
        for (int k = 0; k < 4; k++) {
            pu += p[k] * u[e + k];
            pdpd += qd ? qd[jt->voff + jt->euler + k] * qd[jt->voff + jt->euler + k] : 0;
        }
        for (int r = 0; r < 4; r++) {
            for (int c = 0; c < 4; c++) N[(e + r) * ni + e + c] += p[r] * p[c];
            u[e + r] += p[r] * (-pdpd - pu);
        }
    }
    if (ni == 1) {
        if (!(MRE(N[0]) > 0)) return 0;
        Ni[0] = 1 / N[0];
    } else if (ni > 0 && !spd_inverse(ni, N, Ni)) {
        return 0;
    }
    return 1;
}

/* The articulated inertia and force body i passes to its parent:
 * T = M^ - U N^-1 U^T (upper triangle: m6_congruence_add_sym reads no
 * more) and y = x - U N^-1 u. */
static void pass_to_parent(const mbs_model *m, MBS_K(mbs_ws) *w, int i, int ni, const mreal *xv)
{
    const mbs_joint_info *jt = &m->joint[i];
    const mreal *MS = w->MS + 36 * i, *U = w->U + MBS_BSTRIDE * i, *Ni = w->Ninv + 49 * i, *u = w->u + 7 * i;
    mreal T[36], y[6], Nu[7];
    for (int c = 0; c < 6; c++) y[c] = xv[c];
    if (ni == 1) {
        const mreal n = Ni[0];
        Nu[0] = n * u[0];
        for (int s = 0; s < 6; s++) {
            const mreal vs = U[s] * n;
            for (int t = s; t < 6; t++) T[6 * s + t] = MS[6 * s + t] - vs * U[t];
            y[s] -= U[s] * Nu[0];
        }
    } else {
        for (int s = 0; s < 6; s++)
            for (int t = s; t < 6; t++) T[6 * s + t] = MS[6 * s + t];
        for (int r = 0; r < ni; r++) {
            Nu[r] = 0;
            for (int c = 0; c < ni; c++) Nu[r] += Ni[r * ni + c] * u[c];
        }
        for (int r = 0; r < ni; r++) {
            /* V_r = sum_c U_c Ni[c][r] */
            mreal Vr[6] = { 0, 0, 0, 0, 0, 0 };
            for (int c = 0; c < ni; c++)
                for (int s = 0; s < 6; s++) Vr[s] += U[6 * c + s] * Ni[c * ni + r];
            for (int s = 0; s < 6; s++)
                for (int t = s; t < 6; t++) T[6 * s + t] -= Vr[s] * U[6 * r + t];
            for (int s = 0; s < 6; s++) y[s] -= U[6 * r + s] * Nu[r];
        }
    }
    m6_congruence_add_sym(w->MS + 36 * jt->parent, w->a + 3 * i, T);
    s6_wrench_shift_add(w->F + 6 * jt->parent, w->a + 3 * i, y);
}

/* Tip-to-base step of joint i. Its prescribed velocities (presc) move the
 * body by the known b_p qdd_p, which joins the velocity-product term d_i;
 * the free ones are eliminated as in mbs_aba. 0, or 0 > -i (singular). */
static int articulate(const mbs_model *m, MBS_K(mbs_ws) *w, int i, const mreal *q, const mreal *qd,
                      const mreal *tau, const unsigned char *presc, const mreal *qdd)
{
    const mbs_joint_info *jt = &m->joint[i];
    int fk[7];
    const int ni = free_velocities(jt, presc, fk);
    const mreal *MS = w->MS + 36 * i, *QS = w->F + 6 * i;
    const mreal *bi = w->b + MBS_BSTRIDE * i, *di = w->dv + 6 * i;
    mreal *U = w->U + MBS_BSTRIDE * i, *u = w->u + 7 * i, xv[6], dp[6];
    if (ni < jt->nv) {
        for (int c = 0; c < 6; c++) dp[c] = di[c];
        for (int k = 0; k < jt->nv; k++)
            if (presc[jt->voff + k])
                for (int c = 0; c < 6; c++) dp[c] += bi[6 * k + c] * qdd[jt->voff + k];
        di = dp;
    }
    /* x = Q^ - M^ d */
    m6_mv(xv, MS, di);
    for (int c = 0; c < 6; c++) xv[c] = QS[c] - xv[c];
    for (int k = 0; k < ni; k++) {
        const int v = jt->voff + fk[k];
        mreal Uk[6];
        m6_mv(Uk, MS, bi + 6 * fk[k]);
        s6_copy(U + 6 * k, Uk);
        u[k] = s6_dot(bi + 6 * fk[k], xv) + w->qfrc[v] + (tau ? tau[v] : 0);
    }
    if (!joint_inverse(jt, bi, fk, ni, q, qd, U, u, w->Ninv + 49 * i)) return -i;
    if (jt->parent != 0) pass_to_parent(m, w, i, ni, xv);
    return 0;
}

/* Base-to-tip step of joint i: the free accelerations, the body's Vd_i,
 * and for the prescribed velocities the generalized force
 * frc_p = b_p^T (M^_i Vd_i - Q^_i) - qfrc_p - tau_p that moves them. */
static void accelerate(const mbs_model *m, MBS_K(mbs_ws) *w, int i, const mreal *tau,
                       const unsigned char *presc, mreal *qdd, mreal *frc)
{
    const mbs_joint_info *jt = &m->joint[i];
    int fk[7];
    const int ni = free_velocities(jt, presc, fk);
    const mreal *U = w->U + MBS_BSTRIDE * i, *Ni = w->Ninv + 49 * i, *u = w->u + 7 * i;
    const mreal *bi = w->b + MBS_BSTRIDE * i;
    mreal *Vd = w->Vd + 6 * i, r[7];
    s6_twist_shift(Vd, w->a + 3 * i, w->Vd + 6 * jt->parent);
    for (int k = 0; k < ni; k++) r[k] = u[k] - s6_dot(U + 6 * k, Vd);
    for (int k = 0; k < ni; k++) {
        mreal s = 0;
        for (int c = 0; c < ni; c++) s += Ni[k * ni + c] * r[c];
        qdd[jt->voff + fk[k]] = s;
        for (int c = 0; c < 6; c++) Vd[c] += bi[6 * fk[k] + c] * s;
    }
    for (int c = 0; c < 6; c++) Vd[c] += w->dv[6 * i + c];
    if (ni == jt->nv) return;
    for (int k = 0; k < jt->nv; k++)
        if (presc[jt->voff + k])
            for (int c = 0; c < 6; c++) Vd[c] += bi[6 * k + c] * qdd[jt->voff + k];
    mreal f[6];
    m6_mv(f, w->MS + 36 * i, Vd);
    for (int c = 0; c < 6; c++) f[c] -= w->F[6 * i + c];
    for (int k = 0; k < jt->nv; k++) {
        const int v = jt->voff + k;
        if (presc[v]) frc[v] = s6_dot(bi + 6 * k, f) - w->qfrc[v] - (tau ? tau[v] : 0);
    }
}

int MBS_K(mbs_aba_prescribed)(const mbs_model *m, MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd,
                              const mreal *tau, const unsigned char *presc, mreal *qdd, mreal *frc)
{
    const int nb = m->nb;
    for (int i = 1; i <= nb; i++) {
        for (int c = 0; c < 36; c++) w->MS[36 * i + c] = w->Mv[36 * i + c];
        for (int c = 0; c < 6; c++) w->F[6 * i + c] = w->Qv[6 * i + c];
    }
    for (int i = nb; i >= 1; i--) {
        const int bad = articulate(m, w, i, q, qd, tau, presc, qdd);
        if (bad) return bad;
    }
    for (int i = 1; i <= nb; i++) accelerate(m, w, i, tau, presc, qdd, frc);
    return 0;
}

int MBS_K(mbs_aba)(const mbs_model *m, MBS_K(mbs_ws) *w, const mreal *q,
                   const mreal *qd, const mreal *tau, mreal *qdd)
{
    return MBS_K(mbs_aba_prescribed)(m, w, q, qd, tau, NULL, qdd, NULL);
}

/*
 * Solve M' y = r with the articulated-body factors left by mbs_aba (M^_i,
 * U_i, N_i^-1): the same two sweeps with no velocity or gravity terms.
 * M' is M completed along every Euler-parameter p (p^T y_block = p^T r_block).
 * This is the back-substitution of the differentiated recursion: the
 * derivative of qdd along any direction solves M' dqdd = -(tangent of the
 * residual), so derivatives reuse the factors at O(n) per direction.
 * s provides scratch arrays (F, u, Vd). The tip-to-base sweep skips the
 * bodies whose subtree carries no force (u_i = 0 and F_i = 0): what they
 * would pass on is zero.
 */
void MBS_K(mbs_aba_solve)(const mbs_model *m, const MBS_K(mbs_ws) *w, MBS_K(mbs_ws) *s,
                          const mreal *r, mreal *y)
{
    const int nb = m->nb;
    for (int i = 1; i <= nb; i++)
        for (int c = 0; c < 6; c++) s->F[6 * i + c] = 0;
    for (int i = nb; i >= 1; i--) {
        const mbs_joint_info *jt = &m->joint[i];
        const int ni = jt->nv;
        const mreal *bi = w->b + MBS_BSTRIDE * i, *U = w->U + MBS_BSTRIDE * i, *Ni = w->Ninv + 49 * i;
        const mreal *xv = s->F + 6 * i;
        mreal *u = s->u + 7 * i;
        int zero = 1;   /* no force on the subtree (right-hand sides with few nonzeros) */
        for (int k = 0; k < ni; k++) {
            u[k] = s6_dot(bi + 6 * k, xv) + r[jt->voff + k];
            zero = zero && MRE(u[k]) == 0 && MIM(u[k]) == 0;
        }
        for (int c = 0; c < 6 && zero; c++) zero = MRE(xv[c]) == 0 && MIM(xv[c]) == 0;
        /* a zero subtree adds zeros to its parent: nothing to pass on */
        if (jt->parent == 0 || zero) continue;
        mreal yv[6], Nu[7];
        for (int c = 0; c < 6; c++) yv[c] = xv[c];
        for (int a = 0; a < ni; a++) {
            Nu[a] = 0;
            for (int c = 0; c < ni; c++) Nu[a] += Ni[a * ni + c] * u[c];
        }
        for (int a = 0; a < ni; a++)
            for (int c = 0; c < 6; c++) yv[c] -= U[6 * a + c] * Nu[a];
        s6_wrench_shift_add(s->F + 6 * jt->parent, w->a + 3 * i, yv);
    }
    for (int i = 1; i <= nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int ni = jt->nv;
        const mreal *U = w->U + MBS_BSTRIDE * i, *Ni = w->Ninv + 49 * i, *u = s->u + 7 * i;
        const mreal *bi = w->b + MBS_BSTRIDE * i;
        mreal *Vd = s->Vd + 6 * i, rr[7];
        if (jt->parent > 0) s6_twist_shift(Vd, w->a + 3 * i, s->Vd + 6 * jt->parent);
        else s6_zero(Vd);
        for (int k = 0; k < ni; k++) rr[k] = u[k] - s6_dot(U + 6 * k, Vd);
        for (int k = 0; k < ni; k++) {
            mreal v = 0;
            for (int c = 0; c < ni; c++) v += Ni[k * ni + c] * rr[c];
            y[jt->voff + k] = v;
            for (int c = 0; c < 6; c++) Vd[c] += bi[6 * k + c] * v;
        }
    }
}
