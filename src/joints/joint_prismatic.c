/* Prismatic joint: one distance along the joint axis e1 (thesis §2.1.2, §2.2.2).
 *   R = I,  t = q e1,  S = [e1; 0],  dS/dt = 0. */
#include "joint.h"
#include "joint_common.h"

static void motion(const mreal *q, mreal *R, mreal *t)
{
    jc_identity(R);
    t[0] = q[0]; t[1] = 0; t[2] = 0;
}
static void subspace(const mreal *q, mreal *S)
{
    (void)q;
    jc_zero(S, 6);
    S[0] = 1;
}
static void subspace_dot(const mreal *q, const mreal *qd, mreal *Sd) { (void)q; (void)qd; jc_zero(Sd, 6); }

const mbs_joint_ops MBS_K(mbs_joint_prismatic) = { "prismatic", 1, 1, -1, motion, subspace, subspace_dot };
