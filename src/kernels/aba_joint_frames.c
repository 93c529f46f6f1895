/*
 * aba_joint_frames.c - the fully recursive forward dynamics in
 * body-fixed joint frames (the articulated-body algorithm in Featherstone's
 * local form), the fast path of mbs_forward_dynamics(MBS_FD_RECURSIVE).
 *
 * The global-axes kernels (kinematics.c, body_terms.c,
 * aba.c) express every quantity in ground axes at a
 * reference point; that costs, per body and call, the rotation of the body
 * inertia (A J A^T), three 3x3 products for A_i, and products by the
 * non-constant joint maps b_i. Here every body i carries the frame F_i of
 * its child joint (origin at the child joint point, axes A_i X_c); in F_i
 *   - the body's spatial inertia is constant (computed once per data);
 *   - the joint map S_i is constant: [0; e1] (revolute), [e1; 0]
 *     (prismatic), [0; I] (spherical, 3 DOF), I (floating, 6 DOF);
 *   - the transform from the parent frame F_h is a rotation E_i = C_i R(q)
 *     and a translation r_i = p_i + C_i t(q), with the constants
 *     C_i = X_c(h)^T X_p(i), p_i = X_c(h)^T (P_p(i) - P_c(h)) (h = ground:
 *     C_i = X_p(i), p_i = P_p(i)).
 * The price is that articulated inertias are rotated when they are passed to
 * the parent. See docs/formulations.md ("Forward dynamics in joint frames").
 *
 * Spherical and floating joints work on their 3 rotational DOF: the joint
 * velocity is w' = 2 G(p) pd (child axes), the joint force on w' is
 * (1/2) G(p) tau_p, and the Euler-parameter accelerations are recovered as
 *   pdd = (1/2) G(p)^T dw'/dt - |pd|^2 p,
 * which satisfies p.pdd = -|pd|^2 (for |p| = 1) and is the solution of the
 * completed equations of aba.c. The translation of a
 * floating joint (t in the parent joint frame) becomes nu = R^T td, and
 * tdd = R (dnu/dt + w' x nu).
 *
 * Double precision only, and only for models whose joints are all fixed,
 * revolute, prismatic, spherical or floating, without force elements and
 * without user body loads (joint loads are fine). Everything else goes
 * through the global-axes kernels, which also leave the factors and
 * kinematics that the derivative code reads (mbs_fd_unchecked).
 */
#include <math.h>
#include <stdlib.h>

#include "base/algebra.h"
#include "kernels/data.h"
#include "model/model_impl.h"

enum { FDL_FIXED = 0, FDL_REV, FDL_PRISM, FDL_SPH, FDL_FREE };

typedef struct fdl_body {
    int kind, parent, qoff;
    double C[9], p[3];           /* transform constants (see the top) */
    /* C a signed permutation (revolute, prismatic and fixed joints only):
     * C[i][pi[i]] = sg[i]; pG = C^T p */
    int perm, pi[3];
    double sg[3], pG[3];
    double m, mc[3], Io[9];      /* inertia at the origin of F_i, F_i axes: m, m c, J_c + m(|c|^2 I - c c^T) */
} fdl_body;

typedef struct fdl_ws {
    double E[9], r[3];           /* F_h -> F_i: rotation (columns: F_i axes in F_h) and origin of F_i in F_h */
    double R[9];                 /* spherical/floating: R(p) of the joint */
    double cs, sn, rG[3];        /* permutation bodies: cos, sin of a revolute angle; C^T r */
    double v[6], c[6], nu[6];    /* velocity of F_i, velocity-product acceleration, joint velocity */
    double A[9], B[9], K[9];     /* articulated inertia [A B; B^T K] (A, K symmetric) */
    double pA[6];                /* articulated bias force */
    double U[36], Dinv[36];      /* U = I^A S (column-major 6 x k), D^-1 (k x k) */
    double u[6], a[6];
} fdl_ws;

struct mbs_fdl {
    int usable;
    fdl_body *b;
    fdl_ws *w;
};

/* ------------------------------------------------------------ small helpers */

static inline void mt_v(double *y, const double *E, const double *x)      /* y = E^T x */
{
    const double x0 = x[0], x1 = x[1], x2 = x[2];
    y[0] = E[0] * x0 + E[3] * x1 + E[6] * x2;
    y[1] = E[1] * x0 + E[4] * x1 + E[7] * x2;
    y[2] = E[2] * x0 + E[5] * x1 + E[8] * x2;
}
static inline void m_v(double *y, const double *E, const double *x)       /* y = E x */
{
    const double x0 = x[0], x1 = x[1], x2 = x[2];
    y[0] = E[0] * x0 + E[1] * x1 + E[2] * x2;
    y[1] = E[3] * x0 + E[4] * x1 + E[5] * x2;
    y[2] = E[6] * x0 + E[7] * x1 + E[8] * x2;
}
static inline void cross(double *y, const double *a, const double *b)
{
    const double x = a[1] * b[2] - a[2] * b[1], yy = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    y[0] = x; y[1] = yy; y[2] = z;
}
static inline void mul(double *R, const double *A, const double *B)       /* R = A B */
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
static inline void ep_rot(double *A, const double *p)
{
    const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    A[0] = 2 * (e0 * e0 + e1 * e1) - 1; A[1] = 2 * (e1 * e2 - e0 * e3);     A[2] = 2 * (e1 * e3 + e0 * e2);
    A[3] = 2 * (e1 * e2 + e0 * e3);     A[4] = 2 * (e0 * e0 + e2 * e2) - 1; A[5] = 2 * (e2 * e3 - e0 * e1);
    A[6] = 2 * (e1 * e3 - e0 * e2);     A[7] = 2 * (e2 * e3 + e0 * e1);     A[8] = 2 * (e0 * e0 + e3 * e3) - 1;
}
/* y = s G(p) x (3 <- 4) and y = s G(p)^T x (4 <- 3),
 * G(p) = [-e, -S(e) + e0 I] (the moving-frame map: w' = 2 G pd) */
static inline void ep_G(double *y, const double *p, const double *x, double s)
{
    const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    y[0] = s * (-e1 * x[0] + e0 * x[1] + e3 * x[2] - e2 * x[3]);
    y[1] = s * (-e2 * x[0] - e3 * x[1] + e0 * x[2] + e1 * x[3]);
    y[2] = s * (-e3 * x[0] + e2 * x[1] - e1 * x[2] + e0 * x[3]);
}
static inline void ep_Gt(double *y, const double *p, const double *x, double s)
{
    const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    y[0] = s * (-e1 * x[0] - e2 * x[1] - e3 * x[2]);
    y[1] = s * (e0 * x[0] - e3 * x[1] + e2 * x[2]);
    y[2] = s * (e3 * x[0] + e0 * x[1] - e1 * x[2]);
    y[3] = s * (-e2 * x[0] + e1 * x[1] + e0 * x[2]);
}

/* Inverse of a k x k SPD matrix (k <= 6, row-major, only the lower triangle
 * read) by Cholesky; 0 if not positive definite. */
static int spd_inv(int k, const double *N, double *Ni)
{
    double L[36], Y[36];
    for (int i = 0; i < k; i++)
        for (int j = 0; j <= i; j++) {
            double s = N[i * k + j];
            for (int t = 0; t < j; t++) s -= L[i * 6 + t] * L[j * 6 + t];
            if (i == j) {
                if (!(s > 0)) return 0;
                L[i * 6 + i] = sqrt(s);
            } else {
                L[i * 6 + j] = s / L[j * 6 + j];
            }
        }
    for (int c = 0; c < k; c++)
        for (int i = c; i < k; i++) {
            double s = i == c ? 1 : 0;
            for (int t = c; t < i; t++) s -= L[i * 6 + t] * Y[t * 6 + c];
            Y[i * 6 + c] = s / L[i * 6 + i];
        }
    for (int i = 0; i < k; i++)
        for (int j = 0; j <= i; j++) {
            double s = 0;
            for (int t = i; t < k; t++) s += Y[t * 6 + i] * Y[t * 6 + j];
            Ni[i * k + j] = Ni[j * k + i] = s;
        }
    return 1;
}

/* Parent += X^T [A B; B^T K] X for the transform X from F_h to F_i given by
 * E and r (A, K symmetric: their upper triangles are read; the parent's
 * blocks are kept symmetric in full). First the rotation to F_h axes
 * (A' = E A E^T etc.), then the shift of the reference point from the
 * origin of F_i to that of F_h: with s = -r,
 *   [A', A' S(s) + B'; ., K' + B'^T S(s) - S(s) (A' S(s) + B')]. */
static void inertia_to_parent(double *Ah, double *Bh, double *Kh, const double *E, const double *r,
                              const double *A, const double *B, const double *K, int rev)
{
    double T[9], Ar[9], Br[9], Kr[9];
    /* A' = E A E^T (A symmetric: T = E A, then the upper triangle of T E^T) */
    const double a00 = A[0], a01 = A[1], a02 = A[2], a11 = A[4], a12 = A[5], a22 = A[8];
    for (int i = 0; i < 3; i++) {
        const double e0 = E[3 * i], e1 = E[3 * i + 1], e2 = E[3 * i + 2];
        T[3 * i] = e0 * a00 + e1 * a01 + e2 * a02;
        T[3 * i + 1] = e0 * a01 + e1 * a11 + e2 * a12;
        T[3 * i + 2] = e0 * a02 + e1 * a12 + e2 * a22;
    }
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++)
            Ar[3 * i + j] = Ar[3 * j + i] = T[3 * i] * E[3 * j] + T[3 * i + 1] * E[3 * j + 1] + T[3 * i + 2] * E[3 * j + 2];
    if (rev) {
        /* revolute joint, Ia after the downdate: Ia S = 0 for S = [0; e1],
         * so column 0 of B and row and column 0 of K vanish (exactly, in
         * exact arithmetic; they are not read): only columns 1, 2 of E act */
        const double k11 = K[4], k12 = K[5], k22 = K[8];
        for (int i = 0; i < 3; i++) {
            const double e1 = E[3 * i + 1], e2 = E[3 * i + 2];
            T[3 * i + 1] = e1 * k11 + e2 * k12;
            T[3 * i + 2] = e1 * k12 + e2 * k22;
        }
        for (int i = 0; i < 3; i++)
            for (int j = i; j < 3; j++)
                Kr[3 * i + j] = Kr[3 * j + i] = T[3 * i + 1] * E[3 * j + 1] + T[3 * i + 2] * E[3 * j + 2];
        for (int i = 0; i < 3; i++) {
            const double e0 = E[3 * i], e1 = E[3 * i + 1], e2 = E[3 * i + 2];
            T[3 * i + 1] = e0 * B[1] + e1 * B[4] + e2 * B[7];
            T[3 * i + 2] = e0 * B[2] + e1 * B[5] + e2 * B[8];
        }
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                Br[3 * i + j] = T[3 * i + 1] * E[3 * j + 1] + T[3 * i + 2] * E[3 * j + 2];
    } else {
        const double k00 = K[0], k01 = K[1], k02 = K[2], k11 = K[4], k12 = K[5], k22 = K[8];
        for (int i = 0; i < 3; i++) {
            const double e0 = E[3 * i], e1 = E[3 * i + 1], e2 = E[3 * i + 2];
            T[3 * i] = e0 * k00 + e1 * k01 + e2 * k02;
            T[3 * i + 1] = e0 * k01 + e1 * k11 + e2 * k12;
            T[3 * i + 2] = e0 * k02 + e1 * k12 + e2 * k22;
        }
        for (int i = 0; i < 3; i++)
            for (int j = i; j < 3; j++)
                Kr[3 * i + j] = Kr[3 * j + i] = T[3 * i] * E[3 * j] + T[3 * i + 1] * E[3 * j + 1] + T[3 * i + 2] * E[3 * j + 2];
        mul(T, E, B);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                Br[3 * i + j] = T[3 * i] * E[3 * j] + T[3 * i + 1] * E[3 * j + 1] + T[3 * i + 2] * E[3 * j + 2];
    }
    /* shift by s = -r: P = A' S(s) + B' (row i of A' S(s) = (row i of A') x s) */
    const double s0 = -r[0], s1 = -r[1], s2 = -r[2];
    double P[9], W[9];
    for (int i = 0; i < 3; i++) {
        const double *ra = Ar + 3 * i;
        P[3 * i] = Br[3 * i] + (ra[1] * s2 - ra[2] * s1);
        P[3 * i + 1] = Br[3 * i + 1] + (ra[2] * s0 - ra[0] * s2);
        P[3 * i + 2] = Br[3 * i + 2] + (ra[0] * s1 - ra[1] * s0);
        /* row i of B'^T S(s) = (column i of B') x s */
        const double b0 = Br[i], b1 = Br[3 + i], b2 = Br[6 + i];
        W[3 * i] = b1 * s2 - b2 * s1;
        W[3 * i + 1] = b2 * s0 - b0 * s2;
        W[3 * i + 2] = b0 * s1 - b1 * s0;
    }
    for (int k = 0; k < 9; k++) { Ah[k] += Ar[k]; Bh[k] += P[k]; }
    /* K' + W - S(s) P, symmetric: column j of S(s) P = s x (column j of P) */
    for (int j = 0; j < 3; j++) {
        const double p0 = P[j], p1 = P[3 + j], p2 = P[6 + j];
        const double sp[3] = { s1 * p2 - s2 * p1, s2 * p0 - s0 * p2, s0 * p1 - s1 * p0 };
        for (int i = 0; i <= j; i++) {
            const double v = Kr[3 * i + j] + W[3 * i + j] - sp[i];
            Kh[3 * i + j] += v;
            if (i != j) Kh[3 * j + i] += v;
        }
    }
}


/* ------------------------------------------------------------ transforms F_h <-> F_i
 * General bodies: E and r. Permutation bodies (C a signed permutation,
 * joint rotation about e1 or none): E = C R with R = Rot(e1, q) or I, so
 * that products by C are a reordering with signs and those by R touch two
 * components; the shift is done in the axes of C (the parent joint frame),
 * where the offset is rG = C^T r. */

/* y = C^T x and y += C x for a signed permutation */
static inline void perm_t(double *y, const fdl_body *b, const double *x)
{
    y[b->pi[0]] = b->sg[0] * x[0];
    y[b->pi[1]] = b->sg[1] * x[1];
    y[b->pi[2]] = b->sg[2] * x[2];
}
static inline void perm_add(double *y, const fdl_body *b, const double *x)
{
    y[0] += b->sg[0] * x[b->pi[0]];
    y[1] += b->sg[1] * x[b->pi[1]];
    y[2] += b->sg[2] * x[b->pi[2]];
}

/* motion vector of the parent (F_h) -> child (F_i): [E^T (x_l + x_w x r); E^T x_w] */
static inline void motion_to_child(double *y, const fdl_body *b, const fdl_ws *w, const double *x)
{
    double t[3];
    if (b->perm) {
        double xl[3], xw[3];
        perm_t(xl, b, x);
        perm_t(xw, b, x + 3);
        cross(t, xw, w->rG);
        t[0] += xl[0]; t[1] += xl[1]; t[2] += xl[2];
        if (b->kind == FDL_REV) {
            const double c = w->cs, s = w->sn;
            y[0] = t[0]; y[1] = c * t[1] + s * t[2]; y[2] = c * t[2] - s * t[1];
            y[3] = xw[0]; y[4] = c * xw[1] + s * xw[2]; y[5] = c * xw[2] - s * xw[1];
        } else {
            y[0] = t[0]; y[1] = t[1]; y[2] = t[2];
            y[3] = xw[0]; y[4] = xw[1]; y[5] = xw[2];
        }
        return;
    }
    cross(t, x + 3, w->r);
    t[0] += x[0]; t[1] += x[1]; t[2] += x[2];
    mt_v(y, w->E, t);
    mt_v(y + 3, w->E, x + 3);
}

/* force of the child (F_i) added to the parent (F_h): f_h = E f, n_h = E n + r x f_h */
static inline void force_to_parent(double *y, const fdl_body *b, const fdl_ws *w, const double *f)
{
    double fh[3], nh[3], t[3];
    if (b->perm) {
        if (b->kind == FDL_REV) {
            const double c = w->cs, s = w->sn;
            fh[0] = f[0]; fh[1] = c * f[1] - s * f[2]; fh[2] = s * f[1] + c * f[2];
            nh[0] = f[3]; nh[1] = c * f[4] - s * f[5]; nh[2] = s * f[4] + c * f[5];
        } else {
            fh[0] = f[0]; fh[1] = f[1]; fh[2] = f[2];
            nh[0] = f[3]; nh[1] = f[4]; nh[2] = f[5];
        }
        cross(t, w->rG, fh);
        nh[0] += t[0]; nh[1] += t[1]; nh[2] += t[2];
        perm_add(y, b, fh);
        perm_add(y + 3, b, nh);
        return;
    }
    m_v(fh, w->E, f);
    m_v(nh, w->E, f + 3);
    cross(t, w->r, fh);
    for (int k = 0; k < 3; k++) {
        y[k] += fh[k];
        y[3 + k] += nh[k] + t[k];
    }
}

/* Shift of an inertia [A B; B^T K] (A, K symmetric, upper triangles read)
 * from a point to another at offset s (both in the same axes):
 *   [A, A S(s) + B; ., K + B^T S(s) - S(s) (A S(s) + B)], full blocks out. */
static inline void shift_blocks(double *Ao, double *Bo, double *Ko, const double *A, const double *B,
                                const double *K, const double *sv)
{
    const double s0 = sv[0], s1 = sv[1], s2 = sv[2];
    const double Af[9] = { A[0], A[1], A[2], A[1], A[4], A[5], A[2], A[5], A[8] };
    double W[9];
    for (int i = 0; i < 3; i++) {
        const double ra0 = Af[3 * i], ra1 = Af[3 * i + 1], ra2 = Af[3 * i + 2];
        Bo[3 * i] = B[3 * i] + (ra1 * s2 - ra2 * s1);
        Bo[3 * i + 1] = B[3 * i + 1] + (ra2 * s0 - ra0 * s2);
        Bo[3 * i + 2] = B[3 * i + 2] + (ra0 * s1 - ra1 * s0);
        const double b0 = B[i], b1 = B[3 + i], b2 = B[6 + i];
        W[3 * i] = b1 * s2 - b2 * s1;
        W[3 * i + 1] = b2 * s0 - b0 * s2;
        W[3 * i + 2] = b0 * s1 - b1 * s0;
    }
    Ao[0] = A[0]; Ao[1] = Ao[3] = A[1]; Ao[2] = Ao[6] = A[2];
    Ao[4] = A[4]; Ao[5] = Ao[7] = A[5]; Ao[8] = A[8];
    for (int j = 0; j < 3; j++) {
        const double p0 = Bo[j], p1 = Bo[3 + j], p2 = Bo[6 + j];
        const double sp[3] = { s1 * p2 - s2 * p1, s2 * p0 - s0 * p2, s0 * p1 - s1 * p0 };
        for (int i = 0; i <= j; i++) Ko[3 * i + j] = Ko[3 * j + i] = K[3 * i + j] + W[3 * i + j] - sp[i];
    }
}

/* Parent += X^T [A B; B^T K] X for a permutation body: rotation by R
 * (revolute: about e1), shift by -rG, then the signed permutation. */
static void inertia_to_parent_perm(double *Ah, double *Bh, double *Kh, const fdl_body *b, const fdl_ws *w,
                                   const double *A, const double *B, const double *K)
{
    double Ar[9], Br[9], Kr[9], As[9], Bs[9], Ks[9];
    const double *pa = A, *pb = B, *pk = K;
    if (b->kind == FDL_REV) {
        const double c = w->cs, s = w->sn, cc = c * c, ss = s * s, cs = c * s, d = cc - ss;
        /* R A R^T, A symmetric (upper triangle) */
        Ar[0] = A[0];
        Ar[1] = c * A[1] - s * A[2];
        Ar[2] = s * A[1] + c * A[2];
        Ar[4] = cc * A[4] - 2 * cs * A[5] + ss * A[8];
        Ar[8] = ss * A[4] + 2 * cs * A[5] + cc * A[8];
        Ar[5] = cs * (A[4] - A[8]) + d * A[5];
        Kr[0] = K[0];
        Kr[1] = c * K[1] - s * K[2];
        Kr[2] = s * K[1] + c * K[2];
        Kr[4] = cc * K[4] - 2 * cs * K[5] + ss * K[8];
        Kr[8] = ss * K[4] + 2 * cs * K[5] + cc * K[8];
        Kr[5] = cs * (K[4] - K[8]) + d * K[5];
        /* R B R^T: rows 1, 2 then columns 1, 2 */
        double Y[9];
        for (int j = 0; j < 3; j++) {
            Y[j] = B[j];
            Y[3 + j] = c * B[3 + j] - s * B[6 + j];
            Y[6 + j] = s * B[3 + j] + c * B[6 + j];
        }
        for (int i = 0; i < 3; i++) {
            Br[3 * i] = Y[3 * i];
            Br[3 * i + 1] = c * Y[3 * i + 1] - s * Y[3 * i + 2];
            Br[3 * i + 2] = s * Y[3 * i + 1] + c * Y[3 * i + 2];
        }
        pa = Ar; pb = Br; pk = Kr;
    }
    const double sv[3] = { -w->rG[0], -w->rG[1], -w->rG[2] };
    shift_blocks(As, Bs, Ks, pa, pb, pk, sv);
    /* C M C^T: (i, j) <- sg_i sg_j M(pi_i, pi_j) */
    for (int i = 0; i < 3; i++) {
        const int pi = b->pi[i];
        for (int j = 0; j < 3; j++) {
            const int pj = b->pi[j];
            const double sgn = b->sg[i] * b->sg[j];
            Ah[3 * i + j] += sgn * As[3 * pi + pj];
            Bh[3 * i + j] += sgn * Bs[3 * pi + pj];
            Kh[3 * i + j] += sgn * Ks[3 * pi + pj];
        }
    }
}

/* ------------------------------------------------------------ set-up */

static int fdl_kind(mbs_joint_type t)
{
    switch (t) {
    case MBS_JOINT_FIXED: return FDL_FIXED;
    case MBS_JOINT_REVOLUTE: return FDL_REV;
    case MBS_JOINT_PRISMATIC: return FDL_PRISM;
    case MBS_JOINT_SPHERICAL: return FDL_SPH;
    case MBS_JOINT_FLOATING: return FDL_FREE;
    default: return -1;
    }
}

int mbs_fdl_create(mbs_data *d, const mbs_model *m)
{
    struct mbs_fdl *f = calloc(1, sizeof *f);
    if (!f) return -1;
    d->fdl = f;
    f->b = calloc((size_t)m->nb + 1, sizeof *f->b);
    f->w = calloc((size_t)m->nb + 1, sizeof *f->w);
    if (!f->b || !f->w) return -1;
    f->usable = m->nforce == 0;
    const double *x = m->x;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        fdl_body *b = &f->b[i];
        b->kind = fdl_kind(jt->type);
        if (b->kind < 0) f->usable = 0;
        b->parent = jt->parent;
        b->qoff = jt->qoff;
        const double *Xp = x + jt->x_Xp, *Pp = x + jt->x_ppoint;
        if (jt->parent > 0) {
            const mbs_joint_info *jh = &m->joint[jt->parent];
            const double *Xch = x + jh->x_Xc, *Pch = x + jh->x_cpoint;
            double dp[3] = { Pp[0] - Pch[0], Pp[1] - Pch[1], Pp[2] - Pch[2] };
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++)
                    b->C[3 * r + c] = Xch[r] * Xp[c] + Xch[3 + r] * Xp[3 + c] + Xch[6 + r] * Xp[6 + c];
            mt_v(b->p, Xch, dp);
        } else {
            for (int k = 0; k < 9; k++) b->C[k] = Xp[k];
            for (int k = 0; k < 3; k++) b->p[k] = Pp[k];
        }
        /* inertia in F_i: c' = X_c^T (c - P_c), J' = X_c^T J X_c */
        const double *Xc = x + jt->x_Xc, *Pc = x + jt->x_cpoint, *cb = x + m->body[i].x_com;
        const double *I6 = x + m->body[i].x_inertia;
        const double mass = x[m->body[i].x_mass];
        const double J[9] = { I6[0], I6[3], I6[4], I6[3], I6[1], I6[5], I6[4], I6[5], I6[2] };
        double dc[3] = { cb[0] - Pc[0], cb[1] - Pc[1], cb[2] - Pc[2] }, c[3], T[9];
        mt_v(c, Xc, dc);
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                T[3 * r + k] = Xc[r] * J[k] + Xc[3 + r] * J[3 + k] + Xc[6 + r] * J[6 + k];   /* X_c^T J */
        const double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < 3; k++)
                b->Io[3 * r + k] = T[3 * r] * Xc[k] + T[3 * r + 1] * Xc[3 + k] + T[3 * r + 2] * Xc[6 + k] +
                                   mass * ((r == k ? cc : 0) - c[r] * c[k]);
        /* exactly symmetric */
        for (int r = 0; r < 3; r++)
            for (int k = 0; k < r; k++) b->Io[3 * r + k] = b->Io[3 * k + r];
        b->m = mass;
        for (int k = 0; k < 3; k++) b->mc[k] = mass * c[k];
        /* C a signed permutation? Then exactly that permutation from here on
         * (also for the general formulas) */
        b->perm = (b->kind == FDL_REV || b->kind == FDL_PRISM || b->kind == FDL_FIXED) &&
                  m3_signed_permutation(b->C, b->pi, b->sg);
        if (b->perm) {
            perm_t(b->pG, b, b->p);
        }
    }
    return 0;
}

void mbs_fdl_free(mbs_data *d)
{
    if (!d->fdl) return;
    free(d->fdl->b);
    free(d->fdl->w);
    free(d->fdl);
    d->fdl = 0;
}

void mbs_fdl_scribble(mbs_data *d, uint64_t *s)
{
    mbs_scribble_bytes(d->fdl->w, sizeof(fdl_ws) * ((size_t)d->model->nb + 1), s);
}

int mbs_fdl_usable(const mbs_data *d) { return d->fdl && d->fdl->usable && !d->has_body_load; }

/* ------------------------------------------------------------ the algorithm */

#if defined(__GNUC__)
#define FDL_INLINE static inline __attribute__((always_inline))
#else
#define FDL_INLINE static inline
#endif

/* ---- transform F_h -> F_i of body i at its coordinates qi ---- */
FDL_INLINE void fdl_transform(const fdl_body *b, fdl_ws *w, const double *qi)
{
    const double *C = b->C;
    double *E = w->E, *r = w->r;
    switch (b->kind) {
    case FDL_REV: {
        const double cs = cos(qi[0]), sn = sin(qi[0]);
        if (b->perm) {
            w->cs = cs; w->sn = sn;
            w->rG[0] = b->pG[0]; w->rG[1] = b->pG[1]; w->rG[2] = b->pG[2];
            break;
        }
        for (int k = 0; k < 3; k++) {
            const double c1 = C[3 * k + 1], c2 = C[3 * k + 2];
            E[3 * k] = C[3 * k];
            E[3 * k + 1] = cs * c1 + sn * c2;
            E[3 * k + 2] = cs * c2 - sn * c1;
        }
        r[0] = b->p[0]; r[1] = b->p[1]; r[2] = b->p[2];
        break;
    }
    case FDL_PRISM:
        if (b->perm) {
            w->rG[0] = b->pG[0] + qi[0]; w->rG[1] = b->pG[1]; w->rG[2] = b->pG[2];
            break;
        }
        for (int k = 0; k < 9; k++) E[k] = C[k];
        for (int k = 0; k < 3; k++) r[k] = b->p[k] + qi[0] * C[3 * k];
        break;
    case FDL_SPH:
        ep_rot(w->R, qi);
        mul(E, C, w->R);
        r[0] = b->p[0]; r[1] = b->p[1]; r[2] = b->p[2];
        break;
    case FDL_FREE:
        ep_rot(w->R, qi + 3);
        mul(E, C, w->R);
        m_v(r, C, qi);
        for (int k = 0; k < 3; k++) r[k] += b->p[k];
        break;
    default:
        if (b->perm) {
            w->rG[0] = b->pG[0]; w->rG[1] = b->pG[1]; w->rG[2] = b->pG[2];
            break;
        }
        for (int k = 0; k < 9; k++) E[k] = C[k];
        r[0] = b->p[0]; r[1] = b->p[1]; r[2] = b->p[2];
        break;
    }
}

/* ---- the articulated inertia of body i starts as the body's ---- */
FDL_INLINE void fdl_body_inertia(const fdl_body *b, fdl_ws *w)
{
    const double ms = b->m, mc0 = b->mc[0], mc1 = b->mc[1], mc2 = b->mc[2];
    w->A[0] = ms; w->A[1] = 0; w->A[2] = 0;
    w->A[3] = 0; w->A[4] = ms; w->A[5] = 0;
    w->A[6] = 0; w->A[7] = 0; w->A[8] = ms;
    w->B[0] = 0; w->B[1] = mc2; w->B[2] = -mc1;       /* -S(m c) */
    w->B[3] = -mc2; w->B[4] = 0; w->B[5] = mc0;
    w->B[6] = mc1; w->B[7] = -mc0; w->B[8] = 0;
    for (int k = 0; k < 9; k++) w->K[k] = b->Io[k];
}

/* ---- velocity of body i: v_i = X v_h + S nu, and c = v x S nu ---- */
FDL_INLINE void fdl_velocity(const fdl_body *b, fdl_ws *w, const fdl_ws *W, const double *qi, const double *qdi)
{
    double *v = w->v, *c = w->c, *nu = w->nu;
    const int h = b->parent;
    if (h > 0) {
        motion_to_child(v, b, w, W[h].v);
    } else {
        for (int k = 0; k < 6; k++) v[k] = 0;
    }
    switch (b->kind) {
    case FDL_REV: {
        const double s = qdi[0];
        v[3] += s;
        /* c = v x [0; s e1] = s [0, v2, -v1, 0, w2, -w1] */
        c[0] = 0; c[1] = s * v[2]; c[2] = -s * v[1];
        c[3] = 0; c[4] = s * v[5]; c[5] = -s * v[4];
        break;
    }
    case FDL_PRISM: {
        const double s = qdi[0];
        /* c = v x [s e1; 0] = s [0, w2, -w1, 0, 0, 0] (before adding the joint rate) */
        c[0] = 0; c[1] = s * v[5]; c[2] = -s * v[4];
        c[3] = c[4] = c[5] = 0;
        v[0] += s;
        break;
    }
    case FDL_SPH:
        nu[0] = nu[1] = nu[2] = 0;
        ep_G(nu + 3, qi, qdi, 2);
        v[3] += nu[3]; v[4] += nu[4]; v[5] += nu[5];
        cross(c, v, nu + 3);               /* [v_l x w'; w x w'] */
        cross(c + 3, v + 3, nu + 3);
        break;
    case FDL_FREE:
        mt_v(nu, w->R, qdi);               /* R^T td */
        ep_G(nu + 3, qi + 3, qdi + 3, 2);
        for (int k = 0; k < 6; k++) v[k] += nu[k];
        /* c = v x nu = [w x nu_l + v_l x nu_w; w x nu_w] */
        cross(c, v + 3, nu);
        {
            double t[3];
            cross(t, v, nu + 3);
            c[0] += t[0]; c[1] += t[1]; c[2] += t[2];
        }
        cross(c + 3, v + 3, nu + 3);
        break;
    default:
        for (int k = 0; k < 6; k++) c[k] = 0;
        break;
    }
}

/* ---- bias force of body i: p = v x* (I v), I v = [m v_l - mc x w; mc x v_l + Io w] ---- */
FDL_INLINE void fdl_bias(const fdl_body *b, fdl_ws *w)
{
    const double *K = b->Io, *v = w->v, ms = b->m;
    double f[3], n[3], t[3];
    cross(t, b->mc, v + 3);
    f[0] = ms * v[0] - t[0]; f[1] = ms * v[1] - t[1]; f[2] = ms * v[2] - t[2];
    cross(n, b->mc, v);
    n[0] += K[0] * v[3] + K[1] * v[4] + K[2] * v[5];
    n[1] += K[3] * v[3] + K[4] * v[4] + K[5] * v[5];
    n[2] += K[6] * v[3] + K[7] * v[4] + K[8] * v[5];
    cross(w->pA, v + 3, f);
    cross(w->pA + 3, v + 3, n);
    cross(t, v, f);
    w->pA[3] += t[0]; w->pA[4] += t[1]; w->pA[5] += t[2];
}

/* Each downdate of the tip-to-base sweep (body i, joint force tau + ql at
 * coordinate offset o) sets U = I^A S, u = tau - S^T pA and D^-1, and
 * returns -1 when D is not positive definite, 0 at a root body (nothing
 * to pass on), 1 when the parent receives Ia = [Ia Ib; Ib^T Ik] and pa. */

/* revolute and prismatic: D = S^T I^A S a scalar. Ia = I - U U^T / D
 * (upper triangles of the symmetric blocks: all that inertia_to_parent*
 * read), and pa = pA + Ia c + U u / D = pA + I c + U (u - U.c) / D, with
 * the zeros of c (revolute: c_0 = c_3 = 0; prismatic: only c_1, c_2) */
FDL_INLINE int fdl_downdate_1dof(const fdl_body *b, fdl_ws *w, const double *tau, const double *ql, double *Ia,
                                 double *Ib, double *Ik, double *pa)
{
    const int o = b->qoff;
    const double *A = w->A, *Bm = w->B, *K = w->K, *pA = w->pA, *c = w->c;
    double *U = w->U, *u = w->u;
    if (b->kind == FDL_REV) {
        U[0] = Bm[0]; U[1] = Bm[3]; U[2] = Bm[6]; U[3] = K[0]; U[4] = K[3]; U[5] = K[6];
        u[0] = (tau ? tau[o] : 0) + ql[o] - pA[3];
    } else {
        U[0] = A[0]; U[1] = A[3]; U[2] = A[6]; U[3] = Bm[0]; U[4] = Bm[1]; U[5] = Bm[2];
        u[0] = (tau ? tau[o] : 0) + ql[o] - pA[0];
    }
    const double D = b->kind == FDL_REV ? K[0] : A[0];
    if (!(D > 0)) return -1;
    const double Di = 1 / D;
    w->Dinv[0] = Di;
    if (b->parent == 0) return 0;
    double V[6];
    for (int k = 0; k < 6; k++) V[k] = U[k] * Di;
    for (int s = 0; s < 3; s++) {
        for (int t = s; t < 3; t++) {
            Ia[3 * s + t] = A[3 * s + t] - V[s] * U[t];
            Ik[3 * s + t] = K[3 * s + t] - V[3 + s] * U[3 + t];
        }
        for (int t = 0; t < 3; t++) Ib[3 * s + t] = Bm[3 * s + t] - V[s] * U[3 + t];
    }
    const double c1 = c[1], c2 = c[2], c4 = c[4], c5 = c[5];
    double Ic[6], uc = u[0];
    if (b->kind == FDL_REV) {
        for (int s = 0; s < 3; s++) {
            Ic[s] = A[3 * s + 1] * c1 + A[3 * s + 2] * c2 + Bm[3 * s + 1] * c4 + Bm[3 * s + 2] * c5;
            Ic[3 + s] = Bm[3 + s] * c1 + Bm[6 + s] * c2 + K[3 * s + 1] * c4 + K[3 * s + 2] * c5;
        }
        uc -= U[1] * c1 + U[2] * c2 + U[4] * c4 + U[5] * c5;
    } else {
        for (int s = 0; s < 3; s++) {
            Ic[s] = A[3 * s + 1] * c1 + A[3 * s + 2] * c2;
            Ic[3 + s] = Bm[3 + s] * c1 + Bm[6 + s] * c2;
        }
        uc -= U[1] * c1 + U[2] * c2;
    }
    uc *= Di;
    for (int k = 0; k < 6; k++) pa[k] = pA[k] + Ic[k] + U[k] * uc;
    return 1;
}

/* spherical: U = columns 3..5 of I: [B; K]; D = K; the force on w' is
 * (1/2) G(p) tau_p. Ia = I - V U^T, pa = pA + V u (V = U D^-1); Ia c is
 * added by the caller. */
FDL_INLINE int fdl_downdate_ball(const fdl_body *b, fdl_ws *w, const double *q, const double *tau, const double *ql,
                                 double *Ia, double *Ib, double *Ik, double *pa)
{
    const int o = b->qoff;
    const double *A = w->A, *Bm = w->B, *K = w->K, *pA = w->pA;
    double *U = w->U, *u = w->u;
    double tq[3], Dm[9];
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 3; t++) {
            U[6 * t + s] = Bm[3 * s + t];
            U[6 * t + 3 + s] = K[3 * s + t];
            Dm[3 * s + t] = K[3 * s + t];
        }
    if (tau) ep_G(tq, q + o, tau + o, 0.5); else tq[0] = tq[1] = tq[2] = 0;
    {
        double tl[3];
        ep_G(tl, q + o, ql + o, 0.5);
        for (int k = 0; k < 3; k++) u[k] = tq[k] + tl[k] - pA[3 + k];
    }
    if (!spd_inv(3, Dm, w->Dinv)) return -1;
    if (b->parent == 0) return 0;
    /* V = U D^-1 (6 x 3, column-major) */
    double V[18];
    for (int t = 0; t < 3; t++)
        for (int s = 0; s < 6; s++)
            V[6 * t + s] = U[s] * w->Dinv[t] + U[6 + s] * w->Dinv[3 + t] + U[12 + s] * w->Dinv[6 + t];
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 3; t++) {
            double sa = 0, sb = 0, sk = 0;
            for (int k = 0; k < 3; k++) {
                sa += V[6 * k + s] * U[6 * k + t];
                sb += V[6 * k + s] * U[6 * k + 3 + t];
                sk += V[6 * k + 3 + s] * U[6 * k + 3 + t];
            }
            Ia[3 * s + t] = A[3 * s + t] - sa;
            Ib[3 * s + t] = Bm[3 * s + t] - sb;
            Ik[3 * s + t] = K[3 * s + t] - sk;
        }
    for (int s = 0; s < 6; s++) pa[s] = pA[s] + V[s] * u[0] + V[6 + s] * u[1] + V[12 + s] * u[2];
    return 1;
}

/* floating: S = I: D = I^A; the subtree passes only the joint force
 * (Ia = 0: Ia c vanishes) */
FDL_INLINE int fdl_downdate_free(const fdl_body *b, fdl_ws *w, const double *q, const double *tau, const double *ql,
                                 double *Ia, double *Ib, double *Ik, double *pa)
{
    const int o = b->qoff;
    const double *A = w->A, *Bm = w->B, *K = w->K, *pA = w->pA;
    double *u = w->u;
    double tl[6], tt[3];
    double Dm[36];
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 3; t++) {
            Dm[6 * s + t] = A[3 * s + t];
            Dm[6 * s + 3 + t] = Bm[3 * s + t];
            Dm[6 * (3 + t) + s] = Bm[3 * s + t];
            Dm[6 * (3 + s) + 3 + t] = K[3 * s + t];
        }
    for (int k = 0; k < 3; k++) tt[k] = (tau ? tau[o + k] : 0) + ql[o + k];
    mt_v(tl, w->R, tt);
    {
        double tp[4];
        for (int k = 0; k < 4; k++) tp[k] = (tau ? tau[o + 3 + k] : 0) + ql[o + 3 + k];
        ep_G(tl + 3, q + o + 3, tp, 0.5);
    }
    for (int k = 0; k < 6; k++) u[k] = tl[k] - pA[k];
    if (!spd_inv(6, Dm, w->Dinv)) return -1;
    if (b->parent == 0) return 0;
    for (int k = 0; k < 9; k++) Ia[k] = Ib[k] = Ik[k] = 0;
    for (int k = 0; k < 6; k++) pa[k] = tl[k];
    return 1;
}

/* ---- accelerations of body i (ah: the parent's, or gravity as a base
 * acceleration): a = X ah + c + S nud, and qdd of its joint ---- */
FDL_INLINE void fdl_accelerations(const fdl_body *b, fdl_ws *w, const double *ah, const double *q,
                                  const double *qd, double *qdd)
{
    const double *U = w->U, *u = w->u;
    double *a = w->a;
    const int o = b->qoff;
    motion_to_child(a, b, w, ah);
    for (int k = 0; k < 6; k++) a[k] += w->c[k];
    switch (b->kind) {
    case FDL_REV: {
        const double s = (u[0] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] + U[4] * a[4] + U[5] * a[5])) * w->Dinv[0];
        qdd[o] = s;
        a[3] += s;
        break;
    }
    case FDL_PRISM: {
        const double s = (u[0] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] + U[4] * a[4] + U[5] * a[5])) * w->Dinv[0];
        qdd[o] = s;
        a[0] += s;
        break;
    }
    case FDL_SPH: {
        double rr[3], wd[3];
        for (int k = 0; k < 3; k++) {
            const double *Uk = U + 6 * k;
            rr[k] = u[k] - (Uk[0] * a[0] + Uk[1] * a[1] + Uk[2] * a[2] + Uk[3] * a[3] + Uk[4] * a[4] + Uk[5] * a[5]);
        }
        m_v(wd, w->Dinv, rr);
        a[3] += wd[0]; a[4] += wd[1]; a[5] += wd[2];
        const double *pd = qd ? qd + o : 0;
        const double pp = pd ? pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3] : 0;
        ep_Gt(qdd + o, q + o, wd, 0.5);
        for (int k = 0; k < 4; k++) qdd[o + k] -= pp * q[o + k];
        break;
    }
    case FDL_FREE: {
        /* nud = D^-1 (u - I^A a') = D^-1 u - a' */
        double nd[6];
        for (int s = 0; s < 6; s++) {
            double t = 0;
            for (int k = 0; k < 6; k++) t += w->Dinv[6 * s + k] * u[k];
            nd[s] = t - a[s];
        }
        for (int k = 0; k < 6; k++) a[k] += nd[k];
        /* tdd = R (nud_l + w' x nu_l) */
        double t[3];
        cross(t, w->nu + 3, w->nu);
        t[0] += nd[0]; t[1] += nd[1]; t[2] += nd[2];
        m_v(qdd + o, w->R, t);
        const double *pd = qd ? qd + o + 3 : 0;
        const double pp = pd ? pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3] : 0;
        ep_Gt(qdd + o + 3, q + o + 3, nd + 3, 0.5);
        for (int k = 0; k < 4; k++) qdd[o + 3 + k] -= pp * q[o + 3 + k];
        break;
    }
    default:
        break;
    }
}

int mbs_fdl_forward_dynamics(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                             const double *tau, double *qdd)
{
    const int nb = m->nb;
    const fdl_body *B = d->fdl->b;
    fdl_ws *W = d->fdl->w;
    const double *ql = d->qload;

    /* ---- base to tip: transforms, velocities, body inertias and bias forces ---- */
    for (int i = 1; i <= nb; i++) {
        const fdl_body *b = &B[i];
        fdl_ws *w = &W[i];
        fdl_transform(b, w, q + b->qoff);
        fdl_body_inertia(b, w);
        if (!qd) {
            for (int k = 0; k < 6; k++) w->v[k] = w->c[k] = w->nu[k] = w->pA[k] = 0;
            continue;
        }
        fdl_velocity(b, w, W, q + b->qoff, qd + b->qoff);
        fdl_bias(b, w);
    }

    /* ---- tip to base: articulated inertias and bias forces ---- */
    for (int i = nb; i >= 1; i--) {
        const fdl_body *b = &B[i];
        fdl_ws *w = &W[i];
        double Ia[9], Ib[9], Ik[9], pa[6];
        const double *PA = Ia, *PB = Ib, *PK = Ik, *c = 0;
        int pass;
        switch (b->kind) {
        case FDL_REV:
        case FDL_PRISM: pass = fdl_downdate_1dof(b, w, tau, ql, Ia, Ib, Ik, pa); break;   /* Ia c is in pa */
        case FDL_SPH: pass = fdl_downdate_ball(b, w, q, tau, ql, Ia, Ib, Ik, pa); c = w->c; break;
        case FDL_FREE: pass = fdl_downdate_free(b, w, q, tau, ql, Ia, Ib, Ik, pa); break;
        default:
            /* a fixed joint: c = 0, the whole inertia passes */
            pass = b->parent > 0;
            for (int k = 0; k < 6 && pass; k++) pa[k] = w->pA[k];
            PA = w->A; PB = w->B; PK = w->K;
            break;
        }
        if (pass < 0) return -i;
        if (pass == 0) continue;
        if (c) {
            /* pa += Ia c (Ia = [PA PB; PB^T PK]) */
            for (int s = 0; s < 3; s++) {
                pa[s] += PA[3 * s] * c[0] + PA[3 * s + 1] * c[1] + PA[3 * s + 2] * c[2] +
                         PB[3 * s] * c[3] + PB[3 * s + 1] * c[4] + PB[3 * s + 2] * c[5];
                pa[3 + s] += PB[s] * c[0] + PB[3 + s] * c[1] + PB[6 + s] * c[2] +
                             PK[3 * s] * c[3] + PK[3 * s + 1] * c[4] + PK[3 * s + 2] * c[5];
            }
        }
        fdl_ws *wh = &W[b->parent];
        if (b->perm) inertia_to_parent_perm(wh->A, wh->B, wh->K, b, w, PA, PB, PK);
        else inertia_to_parent(wh->A, wh->B, wh->K, w->E, w->r, PA, PB, PK, b->kind == FDL_REV);
        force_to_parent(wh->pA, b, w, pa);
    }

    /* ---- base to tip: accelerations ---- */
    const double *g = m->x + m->x_gravity;
    const double a0[6] = { -g[0], -g[1], -g[2], 0, 0, 0 };   /* gravity as a base acceleration */
    for (int i = 1; i <= nb; i++)
        fdl_accelerations(&B[i], &W[i], B[i].parent > 0 ? W[B[i].parent].a : a0, q, qd, qdd);
    return 0;
}
