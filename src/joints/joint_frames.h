/*
 * joint_frames.h - the joints in their own frames: what the passes in joint
 * frames (kernels/aba_joint_frames.c, kernels/jacobians_1dof.c) do per
 * joint, by its frame kind (mbs_joint_ops.frame_kind, joint.h). Double
 * precision only; static inline (the hot ones always inlined), so that a
 * pass compiles to one loop over the bodies without calls.
 *
 * Body i carries the frame F_i of its child joint (origin at the child
 * joint point, axes A_i X_c). The transform from the parent's frame F_h is
 * a rotation E = C R(q) (columns: F_i axes in F_h) and an offset
 * r = p + C t(q) (origin of F_i in F_h), with the constants
 *   C = X_c(h)^T X_p(i),  p = X_c(h)^T (P_p(i) - P_c(h))
 *   (h = ground: C = X_p(i), p = P_p(i)).
 * When C is a signed permutation (fixed, revolute and prismatic joints
 * between aligned frames; "permutation joints"), products by C are a
 * reordering with signs and those by Rot(e1, q) touch two components; the
 * offset is then kept in the axes of C (the parent joint frame) as
 * rG = C^T r.
 *
 * The motion subspace in F_i is constant: [0; e1] (ROT_E1), [e1; 0]
 * (SLIDE_E1), [0; I] (BALL, 3 DOF), I (FREE, 6 DOF), in either velocity
 * convention. Ball and free joints with Euler-parameter rates work on
 * their 3 rotational DOF: the joint velocity is w' = 2 G(p) pd
 * (child axes), the joint force on w' is (1/2) G(p) tau_p, and the
 * Euler-parameter accelerations are recovered as
 *   pdd = (1/2) G(p)^T dw'/dt - |pd|^2 p,
 * which satisfies p.pdd = -|pd|^2 (for |p| = 1). The translation of a free
 * joint (t in the parent joint frame) becomes nu = R^T td, and
 * tdd = R (dnu/dt + w' x nu).
 * Their tangent kinds (BALL_TANGENT, FREE_TANGENT; kept as BALL and FREE
 * with the flag `tangent` in jf_joint) have these joint velocities as
 * their velocities (w', and [nu; w'] for a free joint), so the joint force
 * is tau itself and the accelerations are dnu/dt; their R is that of
 * p / |p|.
 *
 * Articulated inertias are [A B; B^T K] (A, K symmetric 3x3, B 3x3) about
 * the origin of a frame, in its axes; spatial vectors are [linear;
 * angular].
 */
#ifndef MBS_JOINT_FRAMES_H
#define MBS_JOINT_FRAMES_H

#include <math.h>

#include "base/algebra.h"
#include "joints/joint.h"

#if defined(__GNUC__)
#define JF_INLINE static inline __attribute__((always_inline))
#define JF_UNUSED __attribute__((unused))
/* called, not inlined: the ball and free downdates, rare in a tree, would
 * otherwise make the tip-to-base loop of the 1-DOF joints compile worse */
#define JF_OUTLINE static __attribute__((unused, noinline))
#else
#define JF_INLINE static inline
#define JF_UNUSED
#define JF_OUTLINE static
#endif

/* ------------------------------------------------------------ 3-vectors, 3x3, Euler parameters */

static inline void jf_mt_v(double *y, const double *E, const double *x)      /* y = E^T x */
{
    const double x0 = x[0], x1 = x[1], x2 = x[2];
    y[0] = E[0] * x0 + E[3] * x1 + E[6] * x2;
    y[1] = E[1] * x0 + E[4] * x1 + E[7] * x2;
    y[2] = E[2] * x0 + E[5] * x1 + E[8] * x2;
}
static inline void jf_m_v(double *y, const double *E, const double *x)       /* y = E x */
{
    const double x0 = x[0], x1 = x[1], x2 = x[2];
    y[0] = E[0] * x0 + E[1] * x1 + E[2] * x2;
    y[1] = E[3] * x0 + E[4] * x1 + E[5] * x2;
    y[2] = E[6] * x0 + E[7] * x1 + E[8] * x2;
}
static inline void jf_cross(double *y, const double *a, const double *b)
{
    const double x = a[1] * b[2] - a[2] * b[1], yy = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
    y[0] = x; y[1] = yy; y[2] = z;
}
static inline void jf_mul(double *R, const double *A, const double *B)       /* R = A B */
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
/* A(p), the rotation of the Euler parameters p */
static inline void jf_ep_rot(double *A, const double *p)
{
    const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    A[0] = 2 * (e0 * e0 + e1 * e1) - 1; A[1] = 2 * (e1 * e2 - e0 * e3);     A[2] = 2 * (e1 * e3 + e0 * e2);
    A[3] = 2 * (e1 * e2 + e0 * e3);     A[4] = 2 * (e0 * e0 + e2 * e2) - 1; A[5] = 2 * (e2 * e3 - e0 * e1);
    A[6] = 2 * (e1 * e3 - e0 * e2);     A[7] = 2 * (e2 * e3 + e0 * e1);     A[8] = 2 * (e0 * e0 + e3 * e3) - 1;
}
/* A(p / |p|) */
static inline void jf_quat_rot(double *A, const double *p)
{
    const double pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3], s = 1 / pp;
    jf_ep_rot(A, p);
    for (int k = 0; k < 9; k++) A[k] = (A[k] + (k % 4 == 0 ? 1 - pp : 0)) * s;
}
/* y = s G(p) x (3 <- 4) and y = s G(p)^T x (4 <- 3),
 * G(p) = [-e, -S(e) + e0 I] (the moving-frame map: w' = 2 G pd) */
static inline void jf_ep_G(double *y, const double *p, const double *x, double s)
{
    const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    y[0] = s * (-e1 * x[0] + e0 * x[1] + e3 * x[2] - e2 * x[3]);
    y[1] = s * (-e2 * x[0] - e3 * x[1] + e0 * x[2] + e1 * x[3]);
    y[2] = s * (-e3 * x[0] + e2 * x[1] - e1 * x[2] + e0 * x[3]);
}
static inline void jf_ep_Gt(double *y, const double *p, const double *x, double s)
{
    const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    y[0] = s * (-e1 * x[0] - e2 * x[1] - e3 * x[2]);
    y[1] = s * (e0 * x[0] - e3 * x[1] + e2 * x[2]);
    y[2] = s * (e3 * x[0] + e0 * x[1] - e1 * x[2]);
    y[3] = s * (-e2 * x[0] + e1 * x[1] + e0 * x[2]);
}

/* Inverse of a k x k SPD matrix (k <= 6, row-major, only the lower triangle
 * read) by Cholesky; 0 if not positive definite. */
static JF_UNUSED int jf_spd_inv(int k, const double *N, double *Ni)
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

/* ------------------------------------------------------------ the joint and its transform */

/* Constants of a joint (per data) */
typedef struct jf_joint {
    int kind;                    /* mbs_frame_kind; BALL or FREE for the tangent kinds */
    int tangent;                 /* BALL_TANGENT, FREE_TANGENT */
    int perm, pi[3];             /* C a signed permutation: C[i][pi[i]] = sg[i] */
    double sg[3];
    double C[9], p[3];           /* transform constants (see the top) */
    double pG[3];                /* permutation joints: C^T p */
} jf_joint;

/* The transform F_h -> F_i at the joint's coordinates (per call) */
typedef struct jf_frame {
    double E[9], r[3];           /* rotation and origin of F_i in F_h */
    double R[9];                 /* ball, free (and tangent): R(p) of the joint */
    double cs, sn, rG[3];        /* permutation joints: cos, sin of a revolute angle; C^T r */
} jf_frame;

/* y = C^T x and y += C x for a signed permutation */
static inline void jf_perm_t(double *y, const jf_joint *j, const double *x)
{
    y[j->pi[0]] = j->sg[0] * x[0];
    y[j->pi[1]] = j->sg[1] * x[1];
    y[j->pi[2]] = j->sg[2] * x[2];
}
static inline void jf_perm_add(double *y, const jf_joint *j, const double *x)
{
    y[0] += j->sg[0] * x[j->pi[0]];
    y[1] += j->sg[1] * x[j->pi[1]];
    y[2] += j->sg[2] * x[j->pi[2]];
}

/* The constants of a joint of the given kind from its parent joint frame
 * (Xp, Pp) and the child joint frame of the parent body (Xch, Pch; both
 * NULL for the ground). C is made the exact signed permutation when it is
 * one to round-off and the joint is a fixed, revolute or prismatic one. */
static inline void jf_joint_init(jf_joint *j, int kind, const double *Xp, const double *Pp, const double *Xch,
                                 const double *Pch)
{
    j->tangent = kind == MBS_FRAME_BALL_TANGENT || kind == MBS_FRAME_FREE_TANGENT;
    j->kind = kind == MBS_FRAME_BALL_TANGENT ? MBS_FRAME_BALL : kind == MBS_FRAME_FREE_TANGENT ? MBS_FRAME_FREE : kind;
    kind = j->kind;
    if (Xch) {
        const double dp[3] = { Pp[0] - Pch[0], Pp[1] - Pch[1], Pp[2] - Pch[2] };
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                j->C[3 * r + c] = Xch[r] * Xp[c] + Xch[3 + r] * Xp[3 + c] + Xch[6 + r] * Xp[6 + c];
        jf_mt_v(j->p, Xch, dp);
    } else {
        for (int k = 0; k < 9; k++) j->C[k] = Xp[k];
        for (int k = 0; k < 3; k++) j->p[k] = Pp[k];
    }
    j->perm = (kind == MBS_FRAME_ROT_E1 || kind == MBS_FRAME_SLIDE_E1 || kind == MBS_FRAME_FIXED) &&
              m3_signed_permutation(j->C, j->pi, j->sg);
    if (j->perm) jf_perm_t(j->pG, j, j->p);
}

/* E = C Rot(e1, q) from cos and sin of q: columns 1, 2 of C rotate */
static inline void jf_rot_e1(double *E, const double *C, double cs, double sn)
{
    for (int k = 0; k < 3; k++) {
        const double c1 = C[3 * k + 1], c2 = C[3 * k + 2];
        E[3 * k] = C[3 * k];
        E[3 * k + 1] = cs * c1 + sn * c2;
        E[3 * k + 2] = cs * c2 - sn * c1;
    }
}

/* The transform F_h -> F_i at the joint's coordinates qi */
JF_INLINE void jf_transform(const jf_joint *j, jf_frame *x, const double *qi)
{
    const double *C = j->C;
    double *E = x->E, *r = x->r;
    switch (j->kind) {
    case MBS_FRAME_ROT_E1: {
        const double cs = cos(qi[0]), sn = sin(qi[0]);
        if (j->perm) {
            x->cs = cs; x->sn = sn;
            x->rG[0] = j->pG[0]; x->rG[1] = j->pG[1]; x->rG[2] = j->pG[2];
            break;
        }
        jf_rot_e1(E, C, cs, sn);
        r[0] = j->p[0]; r[1] = j->p[1]; r[2] = j->p[2];
        break;
    }
    case MBS_FRAME_SLIDE_E1:
        if (j->perm) {
            x->rG[0] = j->pG[0] + qi[0]; x->rG[1] = j->pG[1]; x->rG[2] = j->pG[2];
            break;
        }
        for (int k = 0; k < 9; k++) E[k] = C[k];
        for (int k = 0; k < 3; k++) r[k] = j->p[k] + qi[0] * C[3 * k];
        break;
    case MBS_FRAME_BALL:
        if (j->tangent) jf_quat_rot(x->R, qi);
        else jf_ep_rot(x->R, qi);
        jf_mul(E, C, x->R);
        r[0] = j->p[0]; r[1] = j->p[1]; r[2] = j->p[2];
        break;
    case MBS_FRAME_FREE:
        if (j->tangent) jf_quat_rot(x->R, qi + 3);
        else jf_ep_rot(x->R, qi + 3);
        jf_mul(E, C, x->R);
        jf_m_v(r, C, qi);
        for (int k = 0; k < 3; k++) r[k] += j->p[k];
        break;
    default:
        if (j->perm) {
            x->rG[0] = j->pG[0]; x->rG[1] = j->pG[1]; x->rG[2] = j->pG[2];
            break;
        }
        for (int k = 0; k < 9; k++) E[k] = C[k];
        r[0] = j->p[0]; r[1] = j->p[1]; r[2] = j->p[2];
        break;
    }
}

/* motion vector of the parent (F_h) -> child (F_i): [E^T (x_l + x_w x r); E^T x_w] */
static inline void jf_motion_to_child(double *y, const jf_joint *j, const jf_frame *f, const double *x)
{
    double t[3];
    if (j->perm) {
        double xl[3], xw[3];
        jf_perm_t(xl, j, x);
        jf_perm_t(xw, j, x + 3);
        jf_cross(t, xw, f->rG);
        t[0] += xl[0]; t[1] += xl[1]; t[2] += xl[2];
        if (j->kind == MBS_FRAME_ROT_E1) {
            const double c = f->cs, s = f->sn;
            y[0] = t[0]; y[1] = c * t[1] + s * t[2]; y[2] = c * t[2] - s * t[1];
            y[3] = xw[0]; y[4] = c * xw[1] + s * xw[2]; y[5] = c * xw[2] - s * xw[1];
        } else {
            y[0] = t[0]; y[1] = t[1]; y[2] = t[2];
            y[3] = xw[0]; y[4] = xw[1]; y[5] = xw[2];
        }
        return;
    }
    jf_cross(t, x + 3, f->r);
    t[0] += x[0]; t[1] += x[1]; t[2] += x[2];
    jf_mt_v(y, f->E, t);
    jf_mt_v(y + 3, f->E, x + 3);
}

/* force of the child (F_i) added to the parent (F_h): f_h = E f, n_h = E n + r x f_h */
static inline void jf_force_to_parent(double *y, const jf_joint *j, const jf_frame *x, const double *f)
{
    double fh[3], nh[3], t[3];
    if (j->perm) {
        if (j->kind == MBS_FRAME_ROT_E1) {
            const double c = x->cs, s = x->sn;
            fh[0] = f[0]; fh[1] = c * f[1] - s * f[2]; fh[2] = s * f[1] + c * f[2];
            nh[0] = f[3]; nh[1] = c * f[4] - s * f[5]; nh[2] = s * f[4] + c * f[5];
        } else {
            fh[0] = f[0]; fh[1] = f[1]; fh[2] = f[2];
            nh[0] = f[3]; nh[1] = f[4]; nh[2] = f[5];
        }
        jf_cross(t, x->rG, fh);
        nh[0] += t[0]; nh[1] += t[1]; nh[2] += t[2];
        jf_perm_add(y, j, fh);
        jf_perm_add(y + 3, j, nh);
        return;
    }
    jf_m_v(fh, x->E, f);
    jf_m_v(nh, x->E, f + 3);
    jf_cross(t, x->r, fh);
    for (int k = 0; k < 3; k++) {
        y[k] += fh[k];
        y[3 + k] += nh[k] + t[k];
    }
}

/* Parent += X^T [A B; B^T K] X for the transform X from F_h to F_i given by
 * E and r (A, K symmetric: their upper triangles are read; the parent's
 * blocks are kept symmetric in full). First the rotation to F_h axes
 * (A' = E A E^T etc.), then the shift of the reference point from the
 * origin of F_i to that of F_h: with s = -r,
 *   [A', A' S(s) + B'; ., K' + B'^T S(s) - S(s) (A' S(s) + B')].
 * rev: a revolute joint's inertia after its downdate (B e1 = 0, K e1 = 0). */
static JF_UNUSED void jf_inertia_to_parent(double *Ah, double *Bh, double *Kh, const double *E, const double *r,
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
        jf_mul(T, E, B);
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

/* Shift of an inertia [A B; B^T K] (A, K symmetric, upper triangles read)
 * from a point to another at offset s (both in the same axes):
 *   [A, A S(s) + B; ., K + B^T S(s) - S(s) (A S(s) + B)], full blocks out. */
static inline void jf_shift_blocks(double *Ao, double *Bo, double *Ko, const double *A, const double *B,
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

/* Parent += X^T [A B; B^T K] X for a permutation joint: rotation by R
 * (revolute: about e1), shift by -rG, then the signed permutation. */
static JF_UNUSED void jf_inertia_to_parent_perm(double *Ah, double *Bh, double *Kh, const jf_joint *j,
                                                const jf_frame *x, const double *A, const double *B,
                                                const double *K)
{
    double Ar[9], Br[9], Kr[9], As[9], Bs[9], Ks[9];
    const double *pa = A, *pb = B, *pk = K;
    if (j->kind == MBS_FRAME_ROT_E1) {
        const double c = x->cs, s = x->sn, cc = c * c, ss = s * s, cs = c * s, d = cc - ss;
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
        for (int k = 0; k < 3; k++) {
            Y[k] = B[k];
            Y[3 + k] = c * B[3 + k] - s * B[6 + k];
            Y[6 + k] = s * B[3 + k] + c * B[6 + k];
        }
        for (int i = 0; i < 3; i++) {
            Br[3 * i] = Y[3 * i];
            Br[3 * i + 1] = c * Y[3 * i + 1] - s * Y[3 * i + 2];
            Br[3 * i + 2] = s * Y[3 * i + 1] + c * Y[3 * i + 2];
        }
        pa = Ar; pb = Br; pk = Kr;
    }
    const double sv[3] = { -x->rG[0], -x->rG[1], -x->rG[2] };
    jf_shift_blocks(As, Bs, Ks, pa, pb, pk, sv);
    /* C M C^T: (i, k) <- sg_i sg_k M(pi_i, pi_k) */
    for (int i = 0; i < 3; i++) {
        const int pi = j->pi[i];
        for (int k = 0; k < 3; k++) {
            const int pk2 = j->pi[k];
            const double sgn = j->sg[i] * j->sg[k];
            Ah[3 * i + k] += sgn * As[3 * pi + pk2];
            Bh[3 * i + k] += sgn * Bs[3 * pi + pk2];
            Kh[3 * i + k] += sgn * Ks[3 * pi + pk2];
        }
    }
}

/* Parent += X^T [A B; B^T K] X, X the joint's transform F_h -> F_i */
JF_INLINE void jf_inertia_to_parent_of(double *Ah, double *Bh, double *Kh, const jf_joint *j, const jf_frame *x,
                                       const double *A, const double *B, const double *K)
{
    if (j->perm) jf_inertia_to_parent_perm(Ah, Bh, Kh, j, x, A, B, K);
    else jf_inertia_to_parent(Ah, Bh, Kh, x->E, x->r, A, B, K, j->kind == MBS_FRAME_ROT_E1);
}

/* ------------------------------------------------------------ velocities */

/* The joint's part of the velocity of F_i: v += S nu (nu the joint
 * velocity in F_i, kept for the ball and free kinds), and the
 * velocity-product acceleration c = v x S nu. qi, qdi: the joint's
 * coordinates and rates. */
JF_INLINE void jf_velocity(const jf_joint *j, const jf_frame *x, double *v, double *c, double *nu, const double *qi,
                           const double *qdi)
{
    switch (j->kind) {
    case MBS_FRAME_ROT_E1: {
        const double s = qdi[0];
        v[3] += s;
        /* c = v x [0; s e1] = s [0, v2, -v1, 0, w2, -w1] */
        c[0] = 0; c[1] = s * v[2]; c[2] = -s * v[1];
        c[3] = 0; c[4] = s * v[5]; c[5] = -s * v[4];
        break;
    }
    case MBS_FRAME_SLIDE_E1: {
        const double s = qdi[0];
        /* c = v x [s e1; 0] = s [0, w2, -w1, 0, 0, 0] (before adding the joint rate) */
        c[0] = 0; c[1] = s * v[5]; c[2] = -s * v[4];
        c[3] = c[4] = c[5] = 0;
        v[0] += s;
        break;
    }
    case MBS_FRAME_BALL:
        nu[0] = nu[1] = nu[2] = 0;
        if (!j->tangent) jf_ep_G(nu + 3, qi, qdi, 2);
        else { nu[3] = qdi[0]; nu[4] = qdi[1]; nu[5] = qdi[2]; }
        v[3] += nu[3]; v[4] += nu[4]; v[5] += nu[5];
        jf_cross(c, v, nu + 3);               /* [v_l x w'; w x w'] */
        jf_cross(c + 3, v + 3, nu + 3);
        break;
    case MBS_FRAME_FREE:
        if (!j->tangent) {
            jf_mt_v(nu, x->R, qdi);           /* R^T td */
            jf_ep_G(nu + 3, qi + 3, qdi + 3, 2);
        } else {
            for (int k = 0; k < 6; k++) nu[k] = qdi[k];
        }
        for (int k = 0; k < 6; k++) v[k] += nu[k];
        /* c = v x nu = [w x nu_l + v_l x nu_w; w x nu_w] */
        jf_cross(c, v + 3, nu);
        {
            double t[3];
            jf_cross(t, v, nu + 3);
            c[0] += t[0]; c[1] += t[1]; c[2] += t[2];
        }
        jf_cross(c + 3, v + 3, nu + 3);
        break;
    default:
        for (int k = 0; k < 6; k++) c[k] = 0;
        break;
    }
}

/* ------------------------------------------------------------ articulated inertias */

/* The articulated body of a joint in F_i, and what its downdate leaves
 * for the accelerations */
typedef struct jf_artic {
    double A[9], B[9], K[9];     /* articulated inertia [A B; B^T K] (A, K symmetric) */
    double pA[6];                /* articulated bias force */
    double U[36], Dinv[36];      /* U = I^A S (column-major 6 x k), D^-1 (k x k) */
    double u[6];                 /* joint force minus S^T pA */
} jf_artic;

/* Each downdate of the tip-to-base sweep (joint force tau + ql at
 * velocity offset vo, the quaternion of q at qo; c the velocity-product
 * acceleration) sets U = I^A S,
 * u = tau - S^T pA and D^-1, and returns -1 when D is not positive
 * definite, 0 at a root body (root: nothing to pass on), 1 when the parent
 * receives Ia = [Ia Ib; Ib^T Ik] and pa. */

/* revolute and prismatic: D = S^T I^A S a scalar. Ia = I - U U^T / D
 * (upper triangles of the symmetric blocks: all that the transforms to
 * the parent read), and pa = pA + Ia c + U u / D = pA + I c + U (u - U.c) / D,
 * with the zeros of c (revolute: c_0 = c_3 = 0; prismatic: only c_1, c_2) */
JF_INLINE int jf_downdate_1dof(const jf_joint *j, jf_artic *w, const double *c, int vo, int root,
                               const double *tau, const double *ql, double *Ia, double *Ib, double *Ik, double *pa)
{
    const double *A = w->A, *Bm = w->B, *K = w->K, *pA = w->pA;
    double *U = w->U, *u = w->u;
    if (j->kind == MBS_FRAME_ROT_E1) {
        U[0] = Bm[0]; U[1] = Bm[3]; U[2] = Bm[6]; U[3] = K[0]; U[4] = K[3]; U[5] = K[6];
        u[0] = (tau ? tau[vo] : 0) + ql[vo] - pA[3];
    } else {
        U[0] = A[0]; U[1] = A[3]; U[2] = A[6]; U[3] = Bm[0]; U[4] = Bm[1]; U[5] = Bm[2];
        u[0] = (tau ? tau[vo] : 0) + ql[vo] - pA[0];
    }
    const double D = j->kind == MBS_FRAME_ROT_E1 ? K[0] : A[0];
    if (!(D > 0)) return -1;
    const double Di = 1 / D;
    w->Dinv[0] = Di;
    if (root) return 0;
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
    if (j->kind == MBS_FRAME_ROT_E1) {
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

/* ball: U = columns 3..5 of I: [B; K]; D = K; the force on w' is
 * (1/2) G(p) tau_p (tangent: tau). Ia = I - V U^T, pa = pA + V u
 * (V = U D^-1); Ia c is added by the caller. */
JF_OUTLINE int jf_downdate_ball(jf_artic *w, int tangent, int qo, int vo, int root, const double *q,
                               const double *tau, const double *ql, double *Ia, double *Ib, double *Ik, double *pa)
{
    const double *A = w->A, *Bm = w->B, *K = w->K, *pA = w->pA;
    double *U = w->U, *u = w->u;
    double tq[3], Dm[9];
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 3; t++) {
            U[6 * t + s] = Bm[3 * s + t];
            U[6 * t + 3 + s] = K[3 * s + t];
            Dm[3 * s + t] = K[3 * s + t];
        }
    if (tangent) {
        for (int k = 0; k < 3; k++) u[k] = (tau ? tau[vo + k] : 0) + ql[vo + k] - pA[3 + k];
    } else {
        double tl[3];
        if (tau) jf_ep_G(tq, q + qo, tau + vo, 0.5); else tq[0] = tq[1] = tq[2] = 0;
        jf_ep_G(tl, q + qo, ql + vo, 0.5);
        for (int k = 0; k < 3; k++) u[k] = tq[k] + tl[k] - pA[3 + k];
    }
    if (!jf_spd_inv(3, Dm, w->Dinv)) return -1;
    if (root) return 0;
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

/* free: S = I: D = I^A; the subtree passes only the joint force
 * (Ia = 0: Ia c vanishes), [R^T tau_t; (1/2) G(p) tau_p] (tangent: tau) */
JF_OUTLINE int jf_downdate_free(const jf_frame *x, jf_artic *w, int tangent, int qo, int vo, int root,
                               const double *q, const double *tau, const double *ql, double *Ia, double *Ib,
                               double *Ik, double *pa)
{
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
    if (tangent) {
        for (int k = 0; k < 6; k++) tl[k] = (tau ? tau[vo + k] : 0) + ql[vo + k];
    } else {
        double tp[4];
        for (int k = 0; k < 3; k++) tt[k] = (tau ? tau[vo + k] : 0) + ql[vo + k];
        jf_mt_v(tl, x->R, tt);
        for (int k = 0; k < 4; k++) tp[k] = (tau ? tau[vo + 3 + k] : 0) + ql[vo + 3 + k];
        jf_ep_G(tl + 3, q + qo + 3, tp, 0.5);
    }
    for (int k = 0; k < 6; k++) u[k] = tl[k] - pA[k];
    if (!jf_spd_inv(6, Dm, w->Dinv)) return -1;
    if (root) return 0;
    for (int k = 0; k < 9; k++) Ia[k] = Ib[k] = Ik[k] = 0;
    for (int k = 0; k < 6; k++) pa[k] = tl[k];
    return 1;
}

/* ------------------------------------------------------------ accelerations */

/* The joint's part of the acceleration of F_i: with a = X a_h + c on
 * entry, nud = D^-1 (u - U^T a), a += S nud, and the joint's coordinate
 * accelerations qdd (velocities from vo, coordinates q from qo; qd NULL:
 * zero rates). nu: the joint velocity of jf_velocity. */
JF_INLINE void jf_acceleration(const jf_joint *j, const jf_frame *x, const jf_artic *w, const double *nu, double *a,
                               int qo, int vo, const double *q, const double *qd, double *qdd)
{
    const double *U = w->U, *u = w->u;
    switch (j->kind) {
    case MBS_FRAME_ROT_E1: {
        const double s = (u[0] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] + U[4] * a[4] + U[5] * a[5])) * w->Dinv[0];
        qdd[vo] = s;
        a[3] += s;
        break;
    }
    case MBS_FRAME_SLIDE_E1: {
        const double s = (u[0] - (U[0] * a[0] + U[1] * a[1] + U[2] * a[2] + U[3] * a[3] + U[4] * a[4] + U[5] * a[5])) * w->Dinv[0];
        qdd[vo] = s;
        a[0] += s;
        break;
    }
    case MBS_FRAME_BALL: {
        double rr[3], wd[3];
        for (int k = 0; k < 3; k++) {
            const double *Uk = U + 6 * k;
            rr[k] = u[k] - (Uk[0] * a[0] + Uk[1] * a[1] + Uk[2] * a[2] + Uk[3] * a[3] + Uk[4] * a[4] + Uk[5] * a[5]);
        }
        jf_m_v(wd, w->Dinv, rr);
        a[3] += wd[0]; a[4] += wd[1]; a[5] += wd[2];
        if (j->tangent) {
            qdd[vo] = wd[0]; qdd[vo + 1] = wd[1]; qdd[vo + 2] = wd[2];
            break;
        }
        const double *pd = qd ? qd + vo : 0;
        const double pp = pd ? pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3] : 0;
        jf_ep_Gt(qdd + vo, q + qo, wd, 0.5);
        for (int k = 0; k < 4; k++) qdd[vo + k] -= pp * q[qo + k];
        break;
    }
    case MBS_FRAME_FREE: {
        /* nud = D^-1 (u - I^A a') = D^-1 u - a' */
        double nd[6];
        for (int s = 0; s < 6; s++) {
            double t = 0;
            for (int k = 0; k < 6; k++) t += w->Dinv[6 * s + k] * u[k];
            nd[s] = t - a[s];
        }
        for (int k = 0; k < 6; k++) a[k] += nd[k];
        if (j->tangent) {
            for (int k = 0; k < 6; k++) qdd[vo + k] = nd[k];
            break;
        }
        /* tdd = R (nud_l + w' x nu_l) */
        double t[3];
        jf_cross(t, nu + 3, nu);
        t[0] += nd[0]; t[1] += nd[1]; t[2] += nd[2];
        jf_m_v(qdd + vo, x->R, t);
        const double *pd = qd ? qd + vo + 3 : 0;
        const double pp = pd ? pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3] : 0;
        jf_ep_Gt(qdd + vo + 3, q + qo + 3, nd + 3, 0.5);
        for (int k = 0; k < 4; k++) qdd[vo + 3 + k] -= pp * q[qo + 3 + k];
        break;
    }
    default:
        break;
    }
}

/* ------------------------------------------------------------ 1-DOF joints in world axes */

/* The joint's own part of the transform of a fixed, revolute or prismatic
 * joint: E = C Rot(e1, q) (cs, sn: cos and sin of q) or C, and
 * t = p + q C e1 (prismatic) or p; q[qoff] is read for a prismatic joint
 * only. */
JF_INLINE void jf_local_1dof(const jf_joint *j, double cs, double sn, const double *q, int qoff, double *E, double *t)
{
    const double *C = j->C;
    t[0] = j->p[0]; t[1] = j->p[1]; t[2] = j->p[2];
    if (j->kind == MBS_FRAME_ROT_E1) {
        jf_rot_e1(E, C, cs, sn);
    } else {
        for (int k = 0; k < 9; k++) E[k] = C[k];
        if (j->kind == MBS_FRAME_SLIDE_E1) {
            const double qi = q[qoff];
            t[0] += qi * C[0]; t[1] += qi * C[3]; t[2] += qi * C[6];
        }
    }
}

/* The joint's column at a point, in world axes, for the world axis a of
 * e1 and r = (joint point) - (point): [r x a; a] (revolute) or [a; 0]
 * (prismatic) */
JF_INLINE void jf_column_1dof(const jf_joint *j, const double *a, const double *r, double *s)
{
    if (j->kind == MBS_FRAME_ROT_E1) {
        jf_cross(s, r, a);
        s[3] = a[0]; s[4] = a[1]; s[5] = a[2];
    } else {
        s[0] = a[0]; s[1] = a[1]; s[2] = a[2];
        s[3] = s[4] = s[5] = 0;
    }
}

#endif
