/* joint_common.h - helpers shared by the joint files (internal, inline). */
#ifndef MBS_JOINT_COMMON_H
#define MBS_JOINT_COMMON_H

#include "../scalar.h"
#include "../algebra.h"

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
