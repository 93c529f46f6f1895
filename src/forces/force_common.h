/* force_common.h - helpers shared by the force element files (internal, inline). */
#ifndef MBS_FORCE_COMMON_H
#define MBS_FORCE_COMMON_H

#include "../scalar.h"
#include "../algebra.h"

/* Position r and velocity v (may be NULL) of the point with local
 * coordinates pbar on body i, from the kinematics in the workspace arrays:
 *   r = o_i + A_i pbar,  v = V_i[0:3] + w_i x (r - r_i). */
static inline void fc_point(const mreal *A, const mreal *o, const mreal *V, const mreal *ref,
                            int i, const mreal *pbar, mreal *r, mreal *v)
{
    m3_mv(r, A + 9 * i, pbar);
    v3_add(r, r, o + 3 * i);
    if (v) {
        mreal s[3];
        v3_sub(s, r, ref + 3 * i);
        v3_cross(v, V + 6 * i + 3, s);
        v3_add(v, v, V + 6 * i);
    }
}

/* Force f (global) at local point pbar of body i into the 15-number load
 * block of that body: f, and P += pbar f^T. Nothing for the ground. */
static inline void fc_add_force(mreal *xfrc, int i, const mreal *pbar, const mreal *f)
{
    if (i <= 0) return;
    mreal *L = xfrc + 15 * i;
    for (int k = 0; k < 3; k++) L[k] += f[k];
    for (int r = 0; r < 3; r++)
        for (int s = 0; s < 3; s++) L[6 + 3 * r + s] += pbar[r] * f[s];
}

/* Torque n (global) on body i. */
static inline void fc_add_torque(mreal *xfrc, int i, const mreal *n)
{
    if (i <= 0) return;
    for (int k = 0; k < 3; k++) xfrc[15 * i + 3 + k] += n[k];
}

#endif
