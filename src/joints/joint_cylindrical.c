/* Cylindrical joint: q = (s, theta), slide along e1 then rotate about e1
 * (thesis §2.1.4, §2.2.4; translation first).
 *   t = s e1,  R = Rot(e1, theta),  S = [e1, 0; 0, e1],  dS/dt = 0. */
#include "joint.h"
#include "joint_common.h"
#include "joint_additive.h"

MBS_JOINT_ADDITIVE(2)

static void motion(const mreal *q, mreal *R, mreal *t)
{
    jc_rot_x(R, q[1]);
    t[0] = q[0]; t[1] = 0; t[2] = 0;
}
static void subspace(const mreal *q, mreal *S)
{
    (void)q;
    jc_zero(S, 12);
    S[0] = 1;      /* column 0: translation */
    S[6 + 3] = 1;  /* column 1: rotation */
}
static void subspace_dot(const mreal *q, const mreal *qd, mreal *Sd) { (void)q; (void)qd; jc_zero(Sd, 12); }

/* ---- derivatives ---- */
static void motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    jc_rot_x_d(dR, q[1]);
    for (int k = 0; k < 9; k++) dR[k] *= dq[1];
    dt[0] = dq[0]; dt[1] = 0; dt[2] = 0;
}
static void subspace_d(const mreal *q, const mreal *dq, mreal *dS) { (void)q; (void)dq; jc_zero(dS, 12); }
static void subspace_dot_d(const mreal *q, const mreal *qd, const mreal *dq, const mreal *dqd, mreal *dSd)
{ (void)q; (void)qd; (void)dq; (void)dqd; jc_zero(dSd, 12); }

const mbs_joint_ops MBS_K(mbs_joint_cylindrical) = { "cylindrical", 2, 2, -1, MBS_FRAME_GENERAL,
    motion, subspace, subspace_dot, motion_d, subspace_d, subspace_dot_d,
    MBS_JOINT_ADDITIVE_OPS(2, -1) };
