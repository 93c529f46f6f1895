/*
 * algebra.h - small fixed-size algebra used by the kernels (inline).
 *
 * Conventions
 *   - 3x3 matrices are row-major: A[3*r + c].
 *   - 6-vectors are [linear; angular] (the thesis order): V = [v; w],
 *     wrenches F = [f; n].
 *   - 6 x n matrices (joint maps b_i) are stored column by column:
 *     column k occupies b[6k .. 6k+5].
 *   - 6x6 matrices are row-major: M[6*r + c].
 *   - S(a) is the skew matrix with S(a) b = a x b.
 */
#ifndef MBS_ALGEBRA_H
#define MBS_ALGEBRA_H

#include <stdint.h>
#include <string.h>

#include "base/scalar.h"

/* ---------- zero tests ---------- */

/* 1 if p[0..n-1] are all zero, +0 or -0 (no early exit: a few vector
 * operations; the tangent kernels' test for directions that leave a block) */
#ifdef MBS_COMPLEX
static inline int m_all_zero(const mreal *p, int n)
{
    int nz = 0;
    for (int k = 0; k < n; k++) nz |= p[k] != 0;
    return !nz;
}
#else
static inline int m_all_zero(const double *p, int n)
{
    /* the bit patterns without their sign bits */
    uint64_t acc = 0;
    for (int k = 0; k < n; k++) {
        uint64_t u;
        memcpy(&u, p + k, sizeof u);
        acc |= u << 1;
    }
    return acc == 0;
}
#endif

/* ---------- 3-vectors ---------- */
static inline void v3_set(mreal *r, mreal x, mreal y, mreal z) { r[0] = x; r[1] = y; r[2] = z; }
static inline void v3_copy(mreal *r, const mreal *a) { r[0] = a[0]; r[1] = a[1]; r[2] = a[2]; }
static inline void v3_zero(mreal *r) { r[0] = 0; r[1] = 0; r[2] = 0; }
static inline void v3_add(mreal *r, const mreal *a, const mreal *b)
{ r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2]; }
static inline void v3_sub(mreal *r, const mreal *a, const mreal *b)
{ r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2]; }
static inline void v3_scale(mreal *r, const mreal *a, mreal s)
{ r[0] = s * a[0]; r[1] = s * a[1]; r[2] = s * a[2]; }
/* r += s a */
static inline void v3_axpy(mreal *r, mreal s, const mreal *a)
{ r[0] += s * a[0]; r[1] += s * a[1]; r[2] += s * a[2]; }
static inline mreal v3_dot(const mreal *a, const mreal *b)
{ return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
/* r = a x b (r may alias neither a nor b) */
static inline void v3_cross(mreal *r, const mreal *a, const mreal *b)
{
    mreal x = a[1] * b[2] - a[2] * b[1];
    mreal y = a[2] * b[0] - a[0] * b[2];
    mreal z = a[0] * b[1] - a[1] * b[0];
    r[0] = x; r[1] = y; r[2] = z;
}
/* r += a x b */
static inline void v3_cross_add(mreal *r, const mreal *a, const mreal *b)
{
    r[0] += a[1] * b[2] - a[2] * b[1];
    r[1] += a[2] * b[0] - a[0] * b[2];
    r[2] += a[0] * b[1] - a[1] * b[0];
}

/* ---------- 3x3 matrices (row-major) ---------- */
static inline void m3_identity(mreal *A)
{
    for (int k = 0; k < 9; k++) A[k] = 0;
    A[0] = A[4] = A[8] = 1;
}
static inline void m3_copy(mreal *R, const mreal *A) { for (int k = 0; k < 9; k++) R[k] = A[k]; }
/* r = A a */
static inline void m3_mv(mreal *r, const mreal *A, const mreal *a)
{
    mreal x = A[0] * a[0] + A[1] * a[1] + A[2] * a[2];
    mreal y = A[3] * a[0] + A[4] * a[1] + A[5] * a[2];
    mreal z = A[6] * a[0] + A[7] * a[1] + A[8] * a[2];
    r[0] = x; r[1] = y; r[2] = z;
}
/* r = A^T a */
static inline void m3_mtv(mreal *r, const mreal *A, const mreal *a)
{
    mreal x = A[0] * a[0] + A[3] * a[1] + A[6] * a[2];
    mreal y = A[1] * a[0] + A[4] * a[1] + A[7] * a[2];
    mreal z = A[2] * a[0] + A[5] * a[1] + A[8] * a[2];
    r[0] = x; r[1] = y; r[2] = z;
}
/* R = A B (R must not alias A or B) */
/* R = [t]x A (each column of A crossed by t; row-major) */
static inline void m3_skew_mul(mreal *R, const mreal *t, const mreal *A)
{
    for (int c = 0; c < 3; c++) {
        const mreal a0 = A[c], a1 = A[3 + c], a2 = A[6 + c];
        R[c] = t[1] * a2 - t[2] * a1;
        R[3 + c] = t[2] * a0 - t[0] * a2;
        R[6 + c] = t[0] * a1 - t[1] * a0;
    }
}
static inline void m3_mul(mreal *R, const mreal *A, const mreal *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = A[3 * i] * B[j] + A[3 * i + 1] * B[3 + j] + A[3 * i + 2] * B[6 + j];
}
/* R = A B^T */
static inline void m3_mul_bt(mreal *R, const mreal *A, const mreal *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = A[3 * i] * B[3 * j] + A[3 * i + 1] * B[3 * j + 1] + A[3 * i + 2] * B[3 * j + 2];
}
/* R = A^T B */
static inline void m3_mul_at(mreal *R, const mreal *A, const mreal *B)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            R[3 * i + j] = A[i] * B[j] + A[3 + i] * B[3 + j] + A[6 + i] * B[6 + j];
}
/* Rotation by angle phi about the unit axis e (Rodrigues). */
static inline void m3_rot(mreal *R, const double *e, mreal phi)
{
    mreal c = MCOS(phi), s = MSIN(phi), t = 1 - c;
    R[0] = c + t * e[0] * e[0];        R[1] = t * e[0] * e[1] - s * e[2]; R[2] = t * e[0] * e[2] + s * e[1];
    R[3] = t * e[1] * e[0] + s * e[2]; R[4] = c + t * e[1] * e[1];        R[5] = t * e[1] * e[2] - s * e[0];
    R[6] = t * e[2] * e[0] - s * e[1]; R[7] = t * e[2] * e[1] + s * e[0]; R[8] = c + t * e[2] * e[2];
}
/* Symmetric 3x3 from the 6 entries (xx, yy, zz, xy, xz, yz). */
static inline void m3_sym(mreal *J, const mreal *I6)
{
    J[0] = I6[0]; J[4] = I6[1]; J[8] = I6[2];
    J[1] = J[3] = I6[3];
    J[2] = J[6] = I6[4];
    J[5] = J[7] = I6[5];
}

/* ---------- Euler parameters p = [e0, e1, e2, e3] ----------
 * A(p) = (2 e0^2 - 1) I + 2 (e e^T + e0 S(e)) = E G^T
 * E(p) = [-e, S(e) + e0 I],  G(p) = [-e, -S(e) + e0 I]   (3x4, row-major)
 * w (fixed frame) = 2 E pdot,  w (moving frame) = 2 G pdot. */
static inline void ep_rotation(mreal *A, const mreal *p)
{
    mreal e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    A[0] = 2 * (e0 * e0 + e1 * e1) - 1; A[1] = 2 * (e1 * e2 - e0 * e3);     A[2] = 2 * (e1 * e3 + e0 * e2);
    A[3] = 2 * (e1 * e2 + e0 * e3);     A[4] = 2 * (e0 * e0 + e2 * e2) - 1; A[5] = 2 * (e2 * e3 - e0 * e1);
    A[6] = 2 * (e1 * e3 - e0 * e2);     A[7] = 2 * (e2 * e3 + e0 * e1);     A[8] = 2 * (e0 * e0 + e3 * e3) - 1;
}
/* E(p) as a 3x4 row-major matrix. It is linear in p, so E(pdot) = dE/dt. */
static inline void ep_E(mreal *E, const mreal *p)
{
    mreal e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    E[0] = -e1; E[1] = e0;  E[2] = -e3; E[3] = e2;
    E[4] = -e2; E[5] = e3;  E[6] = e0;  E[7] = -e1;
    E[8] = -e3; E[9] = -e2; E[10] = e1; E[11] = e0;
}

/* ---------- 6-vectors and transports ----------
 * Twist transport B = [I, S(a); 0, I] with a = r_parent - r_child:
 *   B [v; w] = [v + a x w; w]
 * Wrench transport (a wrench at r_child moved to r_parent):
 *   B^T [f; n] = [f; n - a x f]                                             */
static inline void s6_copy(mreal *r, const mreal *a) { for (int k = 0; k < 6; k++) r[k] = a[k]; }
static inline void s6_zero(mreal *r) { for (int k = 0; k < 6; k++) r[k] = 0; }
static inline mreal s6_dot(const mreal *a, const mreal *b)
{ return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]; }
/* r = B V (r may alias V) */
static inline void s6_twist_shift(mreal *r, const mreal *a, const mreal *V)
{
    mreal t[3];
    v3_cross(t, a, V + 3);
    r[0] = V[0] + t[0]; r[1] = V[1] + t[1]; r[2] = V[2] + t[2];
    r[3] = V[3]; r[4] = V[4]; r[5] = V[5];
}
/* r += B^T F */
static inline void s6_wrench_shift_add(mreal *r, const mreal *a, const mreal *F)
{
    r[0] += F[0]; r[1] += F[1]; r[2] += F[2];
    r[3] += F[3] - (a[1] * F[2] - a[2] * F[1]);
    r[4] += F[4] - (a[2] * F[0] - a[0] * F[2]);
    r[5] += F[5] - (a[0] * F[1] - a[1] * F[0]);
}
/* 1 if the rotation C (3x3 row-major) is a signed permutation, C[r][pi[r]] =
 * sg[r] = +-1, its entries within 1e-13 of 0 or +-1 (joint frames read from
 * files are orthonormal to round-off: the difference is a rotation of
 * < 1e-13 rad), and then C is set to exactly that permutation; else 0 */
static inline int m3_signed_permutation(double *C, int *pi, double *sg)
{
    for (int r = 0; r < 3; r++) {
        int nz = 0;
        for (int k = 0; k < 3; k++) {
            const double a = fabs(C[3 * r + k]);
            if (fabs(a - 1) < 1e-13) { nz++; pi[r] = k; sg[r] = C[3 * r + k] > 0 ? 1 : -1; }
            else if (!(a < 1e-13)) return 0;
        }
        if (nz != 1) return 0;
    }
    if (pi[0] == pi[1] || pi[0] == pi[2] || pi[1] == pi[2]) return 0;
    for (int k = 0; k < 9; k++) C[k] = 0;
    for (int r = 0; r < 3; r++) C[3 * r + pi[r]] = sg[r];
    return 1;
}
/* motion cross product r = a x b of 6-vectors [lin; ang] (r must not alias) */
static inline void s6_mcross(mreal *r, const mreal *a, const mreal *b)
{
    r[0] = a[4] * b[2] - a[5] * b[1] + a[1] * b[5] - a[2] * b[4];
    r[1] = a[5] * b[0] - a[3] * b[2] + a[2] * b[3] - a[0] * b[5];
    r[2] = a[3] * b[1] - a[4] * b[0] + a[0] * b[4] - a[1] * b[3];
    r[3] = a[4] * b[5] - a[5] * b[4];
    r[4] = a[5] * b[3] - a[3] * b[5];
    r[5] = a[3] * b[4] - a[4] * b[3];
}
/* r = I(P) v for a spatial inertia P = (m, h, K: xx yy zz xy xz yz) (h = m c,
 * K about the reference point): [m v + w x h; h x v + K w] (r must not alias) */
static inline void s6_inertia_mv(mreal *r, const mreal *P, const mreal *v)
{
    const mreal m = P[0], *h = P + 1, *K = P + 4, *w = v + 3;
    r[0] = m * v[0] + w[1] * h[2] - w[2] * h[1];
    r[1] = m * v[1] + w[2] * h[0] - w[0] * h[2];
    r[2] = m * v[2] + w[0] * h[1] - w[1] * h[0];
    r[3] = h[1] * v[2] - h[2] * v[1] + K[0] * w[0] + K[3] * w[1] + K[4] * w[2];
    r[4] = h[2] * v[0] - h[0] * v[2] + K[3] * w[0] + K[1] * w[1] + K[5] * w[2];
    r[5] = h[0] * v[1] - h[1] * v[0] + K[4] * w[0] + K[5] * w[1] + K[2] * w[2];
}
/* force cross product r += a x* f = [w x f; w x n + v x f] */
static inline void s6_fcross_add(mreal *r, const mreal *a, const mreal *f)
{
    r[0] += a[4] * f[2] - a[5] * f[1];
    r[1] += a[5] * f[0] - a[3] * f[2];
    r[2] += a[3] * f[1] - a[4] * f[0];
    r[3] += a[4] * f[5] - a[5] * f[4] + a[1] * f[2] - a[2] * f[1];
    r[4] += a[5] * f[3] - a[3] * f[5] + a[2] * f[0] - a[0] * f[2];
    r[5] += a[3] * f[4] - a[4] * f[3] + a[0] * f[1] - a[1] * f[0];
}
/* r = M V for a row-major 6x6 M */
static inline void m6_mv(mreal *r, const mreal *M, const mreal *V)
{
    for (int i = 0; i < 6; i++)
        r[i] = M[6 * i] * V[0] + M[6 * i + 1] * V[1] + M[6 * i + 2] * V[2] +
               M[6 * i + 3] * V[3] + M[6 * i + 4] * V[4] + M[6 * i + 5] * V[5];
}
/* r += M V */
static inline void m6_mv_add(mreal *r, const mreal *M, const mreal *V)
{
    for (int i = 0; i < 6; i++)
        r[i] += M[6 * i] * V[0] + M[6 * i + 1] * V[1] + M[6 * i + 2] * V[2] +
                M[6 * i + 3] * V[3] + M[6 * i + 4] * V[4] + M[6 * i + 5] * V[5];
}

/* Rigid-body inertia about a point r (6x6, row-major), for a body of mass m,
 * centre of mass c and inertia J (3x3, global, about the CoM), with
 * g = c - r:  [ m I, -m S(g); m S(g), J - m S(g) S(g) ]. */
static inline void m6_body_inertia(mreal *M, mreal m, const mreal *g, const mreal *J)
{
    /* every entry written once (no zero fill first: in the body terms that
     * fill costs more than the products) */
    M[0] = m; M[1] = 0; M[2] = 0;
    M[6] = 0; M[7] = m; M[8] = 0;
    M[12] = 0; M[13] = 0; M[14] = m;
    /* -m S(g) in the top right block; m S(g) in the bottom left */
    mreal mg0 = m * g[0], mg1 = m * g[1], mg2 = m * g[2];
    /* S(g) = [0 -g2 g1; g2 0 -g0; -g1 g0 0] */
    M[3] = 0;     M[4] = mg2;   M[5] = -mg1;
    M[9] = -mg2;  M[10] = 0;    M[11] = mg0;
    M[15] = mg1;  M[16] = -mg0; M[17] = 0;
    M[18] = 0;    M[19] = -mg2; M[20] = mg1;
    M[24] = mg2;  M[25] = 0;    M[26] = -mg0;
    M[30] = -mg1; M[31] = mg0;  M[32] = 0;
    /* J - m S(g)S(g) = J + m (|g|^2 I - g g^T) */
    mreal gg = v3_dot(g, g);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            M[6 * (3 + i) + 3 + j] = J[3 * i + j] + m * ((i == j ? gg : 0) - g[i] * g[j]);
}

/* r = M V for M built by m6_body_inertia (reads only m = M[0], m g from
 * the top-right block and the bottom-right block):
 *   f = m v - (m g) x w,   n = (m g) x v + J' w                            */
static inline void m6_body_inertia_mv(mreal *r, const mreal *M, const mreal *V)
{
    const mreal m = M[0], mg0 = M[11], mg1 = M[15], mg2 = M[4];
    const mreal v0 = V[0], v1 = V[1], v2 = V[2], w0 = V[3], w1 = V[4], w2 = V[5];
    r[0] = m * v0 - (mg1 * w2 - mg2 * w1);
    r[1] = m * v1 - (mg2 * w0 - mg0 * w2);
    r[2] = m * v2 - (mg0 * w1 - mg1 * w0);
    r[3] = (mg1 * v2 - mg2 * v1) + M[21] * w0 + M[22] * w1 + M[23] * w2;
    r[4] = (mg2 * v0 - mg0 * v2) + M[27] * w0 + M[28] * w1 + M[29] * w2;
    r[5] = (mg0 * v1 - mg1 * v0) + M[33] * w0 + M[34] * w1 + M[35] * w2;
}

/* M_parent += B^T M B, with B = [I, S(a); 0, I] (a = r_parent - r_child).
 * With M = [m11 m12; m21 m22] (3x3 blocks):
 *   B^T M B = [ m11,            m11 S(a) + m12;
 *               m21 - S(a) m11,  m22 + m21 S(a) - S(a) m12 - S(a) m11 S(a) ] */
static inline void m6_congruence_add(mreal *Mp, const mreal *a, const mreal *M)
{
    mreal T[36];
    /* T = M B : columns 3..5 get  M[:,0:3] S(a) + M[:,3:6] */
    for (int i = 0; i < 6; i++) {
        const mreal *row = M + 6 * i;
        T[6 * i + 0] = row[0]; T[6 * i + 1] = row[1]; T[6 * i + 2] = row[2];
        /* (row[0:3] S(a)) = row x? : r^T S(a) = (S(a)^T r)^T = (-a x r)^T = (r x a)^T */
        T[6 * i + 3] = row[3] + (row[1] * a[2] - row[2] * a[1]);
        T[6 * i + 4] = row[4] + (row[2] * a[0] - row[0] * a[2]);
        T[6 * i + 5] = row[5] + (row[0] * a[1] - row[1] * a[0]);
    }
    /* Mp += B^T T : rows 0..2 = T rows 0..2 ; rows 3..5 = T rows 3..5 - S(a) T rows 0..2 */
    for (int j = 0; j < 6; j++) {
        mreal t0 = T[j], t1 = T[6 + j], t2 = T[12 + j];
        Mp[j] += t0; Mp[6 + j] += t1; Mp[12 + j] += t2;
        Mp[18 + j] += T[18 + j] - (a[1] * t2 - a[2] * t1);
        Mp[24 + j] += T[24 + j] - (a[2] * t0 - a[0] * t2);
        Mp[30 + j] += T[30 + j] - (a[0] * t1 - a[1] * t0);
    }
}

/* Mp += B^T M B for a symmetric M (as m6_congruence_add; only the upper
 * triangle of M is read, the 21 distinct entries of the result are formed
 * once and written to both triangles of Mp). With P = m11 S(a) + m12:
 *   B^T M B = [ m11, P; P^T, m22 + m21 S(a) - S(a) P ]                     */
static inline void m6_congruence_add_sym(mreal *Mp, const mreal *a, const mreal *M)
{
    /* P = m11 S(a) + m12: row r of m11 S(a) is (m11 row r) x a */
    mreal P[9];
    const mreal m11[9] = { M[0], M[1], M[2], M[1], M[7], M[8], M[2], M[8], M[14] };
    for (int r = 0; r < 3; r++) {
        const mreal *row = m11 + 3 * r, *top = M + 6 * r;
        P[3 * r + 0] = top[3] + (row[1] * a[2] - row[2] * a[1]);
        P[3 * r + 1] = top[4] + (row[2] * a[0] - row[0] * a[2]);
        P[3 * r + 2] = top[5] + (row[0] * a[1] - row[1] * a[0]);
    }
    /* Q = m21 S(a) + m22 (m21 = m12^T: row r of m21 is column 3+r of M's top rows) */
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            Mp[6 * r + c] += M[6 * (r < c ? r : c) + (r < c ? c : r)];
            Mp[6 * r + 3 + c] += P[3 * r + c];
            Mp[6 * (3 + c) + r] += P[3 * r + c];
        }
    /* bottom right, upper triangle: m22 + (m21 S(a))[r][c] - (S(a) P)[r][c] */
    const mreal m0 = M[3], m1 = M[9], m2 = M[15];      /* column 3 of m12 = row 0 of m21 */
    const mreal n0 = M[4], n1 = M[10], n2 = M[16];     /* row 1 of m21 */
    const mreal o0 = M[5], o1 = M[11], o2 = M[17];     /* row 2 of m21 */
    /* rows of m21 S(a) = (row of m21) x a */
    mreal W[9];
    W[0] = m1 * a[2] - m2 * a[1]; W[1] = m2 * a[0] - m0 * a[2]; W[2] = m0 * a[1] - m1 * a[0];
    W[3] = n1 * a[2] - n2 * a[1]; W[4] = n2 * a[0] - n0 * a[2]; W[5] = n0 * a[1] - n1 * a[0];
    W[6] = o1 * a[2] - o2 * a[1]; W[7] = o2 * a[0] - o0 * a[2]; W[8] = o0 * a[1] - o1 * a[0];
    /* S(a) P: column c = a x P[:, c] */
    for (int c = 0; c < 3; c++) {
        const mreal p0 = P[c], p1 = P[3 + c], p2 = P[6 + c];
        const mreal sp[3] = { a[1] * p2 - a[2] * p1, a[2] * p0 - a[0] * p2, a[0] * p1 - a[1] * p0 };
        for (int r = 0; r <= c; r++) {
            const mreal v = M[6 * (3 + r) + 3 + c] + W[3 * r + c] - sp[r];
            Mp[6 * (3 + r) + 3 + c] += v;
            if (r != c) Mp[6 * (3 + c) + 3 + r] += v;
        }
    }
}

#endif
