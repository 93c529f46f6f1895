/* joint_common.h - helpers shared by the joint files (internal, inline). */
#ifndef MBS_JOINT_COMMON_H
#define MBS_JOINT_COMMON_H

#include "base/scalar.h"
#include "base/algebra.h"

static inline void jc_zero(mreal *a, int n) { for (int k = 0; k < n; k++) a[k] = 0; }
static inline void jc_identity(mreal *R) { m3_identity(R); }
static inline void jc_mul(mreal *R, const mreal *A, const mreal *B) { m3_mul(R, A, B); }
/* Rotation about x and about y. */
static inline void jc_rot_x(mreal *R, mreal th)
{
    mreal c = MCOS(th), s = MSIN(th);
    R[0] = 1; R[1] = 0; R[2] = 0;
    R[3] = 0; R[4] = c; R[5] = -s;
    R[6] = 0; R[7] = s; R[8] = c;
}
static inline void jc_rot_y(mreal *R, mreal th)
{
    mreal c = MCOS(th), s = MSIN(th);
    R[0] = c;  R[1] = 0; R[2] = s;
    R[3] = 0;  R[4] = 1; R[5] = 0;
    R[6] = -s; R[7] = 0; R[8] = c;
}
/* Derivatives of the rotations about x and y with respect to the angle. */
static inline void jc_rot_x_d(mreal *R, mreal th)
{
    mreal c = MCOS(th), s = MSIN(th);
    R[0] = 0; R[1] = 0;  R[2] = 0;
    R[3] = 0; R[4] = -s; R[5] = -c;
    R[6] = 0; R[7] = c;  R[8] = -s;
}
static inline void jc_rot_y_d(mreal *R, mreal th)
{
    mreal c = MCOS(th), s = MSIN(th);
    R[0] = -s; R[1] = 0; R[2] = c;
    R[3] = 0;  R[4] = 0; R[5] = 0;
    R[6] = -c; R[7] = 0; R[8] = -s;
}
/* Derivative of A(p) along dp (ep_rotation), by the product rule: every
 * entry is linear in dp, so its relative accuracy does not depend on the
 * size of dp (a direction may be a parameter's, of any units). */
static inline void jc_ep_rotation_d(mreal *dA, const mreal *p, const mreal *dp)
{
    const mreal e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    const mreal d0 = dp[0], d1 = dp[1], d2 = dp[2], d3 = dp[3];
    dA[0] = 4 * (e0 * d0 + e1 * d1);
    dA[1] = 2 * (d1 * e2 + e1 * d2 - d0 * e3 - e0 * d3);
    dA[2] = 2 * (d1 * e3 + e1 * d3 + d0 * e2 + e0 * d2);
    dA[3] = 2 * (d1 * e2 + e1 * d2 + d0 * e3 + e0 * d3);
    dA[4] = 4 * (e0 * d0 + e2 * d2);
    dA[5] = 2 * (d2 * e3 + e2 * d3 - d0 * e1 - e0 * d1);
    dA[6] = 2 * (d1 * e3 + e1 * d3 - d0 * e2 - e0 * d2);
    dA[7] = 2 * (d2 * e3 + e2 * d3 + d0 * e1 + e0 * d1);
    dA[8] = 4 * (e0 * d0 + e3 * d3);
}

/* Four subspace columns [0; 2 E(p)[:, k]] (columns of 6, already zeroed). */
static inline void jc_euler_columns(mreal *S, const mreal *p)
{
    mreal E[12];
    ep_E(E, p);
    for (int k = 0; k < 4; k++) {
        S[6 * k + 3] = 2 * E[k];
        S[6 * k + 4] = 2 * E[4 + k];
        S[6 * k + 5] = 2 * E[8 + k];
    }
}

#endif
