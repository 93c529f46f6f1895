/* joint_tangent.h - helpers of the spherical and floating joints whose
 * velocities are tangent (docs/tangent-space.md §6): with R = A(p/|p|) the
 * relative rotation and w a 3-vector, the blocks of S, dS/dt and their
 * derivatives are R and products R S(w) (S(w) the skew matrix). Internal,
 * inline; the two joint files include it, and the velocity maps of the
 * builder and of dynamics/manifold.c. */
#ifndef MBS_JOINT_TANGENT_H
#define MBS_JOINT_TANGENT_H

#include "base/scalar.h"

/* M = A S(w) (3x3 row-major): column k is A (w x e_k). M may not alias A. */
static inline void tj_mul_skew(mreal *M, const mreal *A, const mreal *w)
{
    for (int r = 0; r < 3; r++) {
        const mreal a0 = A[3 * r], a1 = A[3 * r + 1], a2 = A[3 * r + 2];
        M[3 * r] = a1 * w[2] - a2 * w[1];
        M[3 * r + 1] = a2 * w[0] - a0 * w[2];
        M[3 * r + 2] = a0 * w[1] - a1 * w[0];
    }
}
/* Three columns of a 6-row column-major block (S, dS/dt, ...) from the 3x3
 * row-major B, at row `row` (0: linear, 3: angular) of columns 0, 1, 2. */
static inline void tj_columns(mreal *S, const mreal *B, int row)
{
    for (int k = 0; k < 3; k++)
        for (int r = 0; r < 3; r++) S[6 * k + row + r] = B[3 * r + k];
}
/* d/dt (R S(w)) along (dq, dv) with R' = R S(dq): R S(dq) S(w) + R S(dv). */
static inline void tj_rate_d(mreal *M, const mreal *R, const mreal *w, const mreal *dq, const mreal *dw)
{
    mreal A[9], B[9];
    tj_mul_skew(A, R, dq);
    tj_mul_skew(M, A, w);
    tj_mul_skew(B, R, dw);
    for (int k = 0; k < 9; k++) M[k] += B[k];
}
/* T = 1/2 G(p)^T (4x3 row-major, into rows of stride `ld` at T): pdot = T w
 * for the angular velocity w in the child's axes (p (x) [0; w] / 2). */
static inline void tj_quat_map(mreal *T, int ld, const mreal *p)
{
    const mreal e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    const mreal h = (mreal)0.5;
    mreal *r0 = T, *r1 = T + ld, *r2 = T + 2 * ld, *r3 = T + 3 * ld;
    r0[0] = -h * e1; r0[1] = -h * e2; r0[2] = -h * e3;
    r1[0] = h * e0;  r1[1] = -h * e3; r1[2] = h * e2;
    r2[0] = h * e3;  r2[1] = h * e0;  r2[2] = -h * e1;
    r3[0] = -h * e2; r3[1] = h * e1;  r3[2] = h * e0;
}
/* w = 2 G(p) pdot / |p|^2 = T^+ pdot: the angular velocity in the child's
 * axes of the rates pdot (their component along p dropped). */
static inline void tj_quat_omega(const mreal *p, const mreal *pd, mreal *w)
{
    const mreal s = 2 / (p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
    w[0] = s * (-pd[0] * p[1] + p[0] * pd[1] - (p[2] * pd[3] - p[3] * pd[2]));
    w[1] = s * (-pd[0] * p[2] + p[0] * pd[2] - (p[3] * pd[1] - p[1] * pd[3]));
    w[2] = s * (-pd[0] * p[3] + p[0] * pd[3] - (p[1] * pd[2] - p[2] * pd[1]));
}

#endif
