/* force_common.h - helpers shared by the force element files (internal, inline). */
#ifndef MBS_FORCE_COMMON_H
#define MBS_FORCE_COMMON_H

#include "base/scalar.h"
#include "base/algebra.h"

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

/* Tangent of fc_point along a direction, the point r already evaluated:
 * dr, dv (dv may be NULL) from the kinematic tangents dA, do, dV, dref of
 * body i and the tangent dpbar of the local point (from the model-vector
 * direction; NULL: zero). The ground (i = 0) does not move: its tangents
 * are taken as zero whatever the arrays hold. */
static inline void fc_point_tangent(const mreal *A, const mreal *V, const mreal *ref, const mreal *dA,
                                    const mreal *dO, const mreal *dV, const mreal *dref, int i, const mreal *pbar,
                                    const mreal *dpbar, const mreal *r, mreal *dr, mreal *dv)
{
    mreal t[3];
    if (dpbar) m3_mv(dr, A + 9 * i, dpbar);
    else v3_zero(dr);
    if (i > 0) {
        m3_mv(t, dA + 9 * i, pbar);
        v3_add(dr, dr, t);
        v3_add(dr, dr, dO + 3 * i);
    }
    if (!dv) return;
    v3_zero(dv);
    if (i <= 0) return;
    mreal s[3], ds[3];
    v3_sub(s, r, ref + 3 * i);
    v3_sub(ds, dr, dref + 3 * i);
    v3_cross(dv, dV + 6 * i + 3, s);
    v3_cross_add(dv, V + 6 * i + 3, ds);
    v3_add(dv, dv, dV + 6 * i);
}

/* Tangent of fc_point along a direction: r, and dr, dv as fc_point_tangent. */
static inline void fc_point_d(const mreal *A, const mreal *o, const mreal *V, const mreal *ref,
                              const mreal *dA, const mreal *dO, const mreal *dV, const mreal *dref,
                              int i, const mreal *pbar, const mreal *dpbar, mreal *r, mreal *dr, mreal *dv)
{
    fc_point(A, o, V, ref, i, pbar, r, 0);
    fc_point_tangent(A, V, ref, dA, dO, dV, dref, i, pbar, dpbar, r, dr, dv);
}

/* Tangent of fc_add_force: f at pbar gives d(f) and d(P) = dpbar f^T + pbar df^T
 * (dpbar NULL: zero). */
static inline void fc_add_force_d(mreal *dxfrc, int i, const mreal *pbar, const mreal *dpbar, const mreal *f,
                                  const mreal *df)
{
    if (i <= 0) return;
    mreal *L = dxfrc + 15 * i;
    for (int k = 0; k < 3; k++) L[k] += df[k];
    if (dpbar) {
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++) L[6 + 3 * r + s] += pbar[r] * df[s] + dpbar[r] * f[s];
    } else {
        for (int r = 0; r < 3; r++)
            for (int s = 0; s < 3; s++) L[6 + 3 * r + s] += pbar[r] * df[s];
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
