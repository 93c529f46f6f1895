/* joint_additive.h - the manifold operations of a joint whose velocities are
 * the rates of its coordinates (joint.h; docs/tangent-space.md §4, §6):
 *   q (+) dq = q + dq,  q0 (-) q1 = q1 - q0,  both Jacobians of (+) = I,
 *   T = I (qdot = v).
 * The Euler-parameter rates of spherical and floating joints are such
 * velocities too (their dq leaves the unit sphere, as the integrators'
 * steps do before their projection). A joint file defines the four
 * functions for its nq with MBS_JOINT_ADDITIVE(nq) and lists them at the end
 * of its table with MBS_JOINT_ADDITIVE_OPS(nq, quat). */
#ifndef MBS_JOINT_ADDITIVE_H
#define MBS_JOINT_ADDITIVE_H

#include "base/scalar.h"

#define MBS_JOINT_ADDITIVE(N)                                                              \
    static void add_integrate(const mreal *q, const mreal *dq, mreal *q1)                  \
    {                                                                                      \
        for (int k = 0; k < (N); k++) q1[k] = q[k] + dq[k];                                \
    }                                                                                      \
    static void add_difference(const mreal *q0, const mreal *q1, mreal *dq)                \
    {                                                                                      \
        for (int k = 0; k < (N); k++) dq[k] = q1[k] - q0[k];                               \
    }                                                                                      \
    static void add_identity(mreal *J)                                                     \
    {                                                                                      \
        for (int k = 0; k < (N) * (N); k++) J[k] = k % ((N) + 1) == 0;                     \
    }                                                                                      \
    static void add_integrate_jacobians(const mreal *q, const mreal *dq, mreal *Jq, mreal *Jdq) \
    {                                                                                      \
        (void)q; (void)dq;                                                                 \
        add_identity(Jq);                                                                  \
        add_identity(Jdq);                                                                 \
    }                                                                                      \
    static void add_velocity_map(const mreal *q, mreal *T)                                 \
    {                                                                                      \
        (void)q;                                                                           \
        add_identity(T);                                                                   \
    }

#define MBS_JOINT_ADDITIVE_OPS(N, QUAT) \
    (N), (QUAT), 0, add_integrate, add_difference, add_integrate_jacobians, add_velocity_map

#endif
