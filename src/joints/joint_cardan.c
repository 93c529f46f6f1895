/* Cardan (universal) joint: q = (theta1, theta2). First rotation about the
 * parent-fixed axis e1, then about the child-fixed axis, which is e2 at
 * theta1 = 0 (thesis §2.1.3, §2.2.3).
 *   R = Rot(e1, theta1) Rot(e2, theta2),  t = 0
 *   S = [0, 0; e1, w2],  w2 = Rot(e1, theta1) e2 = (0, cos theta1, sin theta1)
 *   dS/dt = [0, 0; 0, theta1dot (0, -sin theta1, cos theta1)]. */
#include "joint.h"
#include "joint_common.h"
#include "joint_additive.h"

MBS_JOINT_ADDITIVE(2)

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

/* ---- derivatives ---- */
static void motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    mreal R1[9], R2[9], D1[9], D2[9], T1[9], T2[9];
    jc_rot_x(R1, q[0]);
    jc_rot_y(R2, q[1]);
    jc_rot_x_d(D1, q[0]);
    jc_rot_y_d(D2, q[1]);
    jc_mul(T1, D1, R2);
    jc_mul(T2, R1, D2);
    for (int k = 0; k < 9; k++) dR[k] = T1[k] * dq[0] + T2[k] * dq[1];
    dt[0] = dt[1] = dt[2] = 0;
}
static void subspace_d(const mreal *q, const mreal *dq, mreal *dS)
{
    jc_zero(dS, 12);
    dS[6 + 4] = -MSIN(q[0]) * dq[0];
    dS[6 + 5] = MCOS(q[0]) * dq[0];
}
static void subspace_dot_d(const mreal *q, const mreal *qd, const mreal *dq, const mreal *dqd, mreal *dSd)
{
    mreal c = MCOS(q[0]), s = MSIN(q[0]);
    jc_zero(dSd, 12);
    dSd[6 + 4] = -dqd[0] * s - qd[0] * c * dq[0];
    dSd[6 + 5] = dqd[0] * c - qd[0] * s * dq[0];
}

const mbs_joint_ops MBS_K(mbs_joint_cardan) = { "cardan", 2, 2, -1, MBS_FRAME_CARDAN,
    motion, subspace, subspace_dot, motion_d, subspace_d, subspace_dot_d,
    MBS_JOINT_ADDITIVE_OPS(2, -1) };
