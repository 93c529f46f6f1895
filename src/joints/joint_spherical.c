/* Spherical joint: q = p = (e0, e1, e2, e3), the Euler parameters of the
 * relative rotation (4 coordinates, 3 DOF; thesis §2.1.5, §2.2.5).
 *   R = A(p),  t = 0,  S = [0; 2 E(p)],  dS/dt = [0; 2 E(pdot)]
 * (E is linear in p). The relative angular velocity is w = 2 E(p) pdot. */
#include "joint.h"
#include "joint_common.h"
#include "../algebra.h"

static void motion(const mreal *q, mreal *R, mreal *t)
{
    ep_rotation(R, q);
    t[0] = t[1] = t[2] = 0;
}
static void subspace(const mreal *q, mreal *S)
{
    jc_zero(S, 24);
    jc_euler_columns(S, q);
}
static void subspace_dot(const mreal *q, const mreal *qd, mreal *Sd)
{
    (void)q;
    jc_zero(Sd, 24);
    jc_euler_columns(Sd, qd);
}

const mbs_joint_ops MBS_K(mbs_joint_spherical) = { "spherical", 4, 3, 0, motion, subspace, subspace_dot };
