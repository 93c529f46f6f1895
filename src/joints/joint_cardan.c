/* Cardan (universal) joint: q = (theta1, theta2). First rotation about the
 * parent-fixed axis e1, then about the child-fixed axis, which is e2 at
 * theta1 = 0 (thesis §2.1.3, §2.2.3).
 *   R = Rot(e1, theta1) Rot(e2, theta2),  t = 0
 *   S = [0, 0; e1, w2],  w2 = Rot(e1, theta1) e2 = (0, cos theta1, sin theta1)
 *   dS/dt = [0, 0; 0, theta1dot (0, -sin theta1, cos theta1)]. */
#include "joint.h"
#include "joint_common.h"

static void motion(const mreal *q, mreal *R, mreal *t)
{
    mreal R1[9], R2[9];
    jc_rot_x(R1, q[0]);
    jc_rot_y(R2, q[1]);
    jc_mul(R, R1, R2);
    t[0] = t[1] = t[2] = 0;
}
static void subspace(const mreal *q, mreal *S)
{
    jc_zero(S, 12);
    S[3] = 1;
    S[6 + 4] = MCOS(q[0]);
    S[6 + 5] = MSIN(q[0]);
}
static void subspace_dot(const mreal *q, const mreal *qd, mreal *Sd)
{
    jc_zero(Sd, 12);
    Sd[6 + 4] = -qd[0] * MSIN(q[0]);
    Sd[6 + 5] = qd[0] * MCOS(q[0]);
}

const mbs_joint_ops MBS_K(mbs_joint_cardan) = { "cardan", 2, 2, -1, motion, subspace, subspace_dot };
