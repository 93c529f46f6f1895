/* Floating joint: q = (x, y, z, e0, e1, e2, e3): translation of the child
 * point in the parent joint frame, then the Euler parameters of the relative
 * rotation about that point (7 coordinates, 6 DOF; thesis §2.1.6, §2.2.6).
 *   t = (x, y, z),  R = A(p)
 *   S = [I, 0; 0, 2 E(p)],  dS/dt = [0, 0; 0, 2 E(pdot)]. */
#include "joint.h"
#include "joint_common.h"
#include "../algebra.h"

static void motion(const mreal *q, mreal *R, mreal *t)
{
    ep_rotation(R, q + 3);
    t[0] = q[0]; t[1] = q[1]; t[2] = q[2];
}
static void subspace(const mreal *q, mreal *S)
{
    jc_zero(S, 42);
    S[0] = 1; S[6 + 1] = 1; S[12 + 2] = 1;
    jc_euler_columns(S + 18, q + 3);
}
static void subspace_dot(const mreal *q, const mreal *qd, mreal *Sd)
{
    (void)q;
    jc_zero(Sd, 42);
    jc_euler_columns(Sd + 18, qd + 3);
}

const mbs_joint_ops MBS_K(mbs_joint_floating) = { "floating", 7, 6, 3, motion, subspace, subspace_dot };
