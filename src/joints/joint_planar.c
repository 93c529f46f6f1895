/* Planar joint: q = (s1, s2, theta): slides along e2 and e3 (in the plane
 * normal to the axis e1), then a rotation about e1 through the child joint
 * point (thesis §2.1.7, §2.2.7, with the child point at the child's CoM in
 * the thesis).
 *   t = s1 e2 + s2 e3,  R = Rot(e1, theta),  S = [e2, e3, 0; 0, 0, e1],  dS/dt = 0. */
#include "joint.h"
#include "joint_common.h"
#include "joint_additive.h"

MBS_JOINT_ADDITIVE(3)

static void motion(const mreal *q, mreal *R, mreal *t)
{
    jc_rot_x(R, q[2]);
    t[0] = 0; t[1] = q[0]; t[2] = q[1];
}
static void subspace(const mreal *q, mreal *S)
{
    (void)q;
    jc_zero(S, 18);
    S[1] = 1;          /* column 0: along e2 */
    S[6 + 2] = 1;      /* column 1: along e3 */
    S[12 + 3] = 1;     /* column 2: about e1 */
}
static void subspace_dot(const mreal *q, const mreal *qd, mreal *Sd) { (void)q; (void)qd; jc_zero(Sd, 18); }

/* ---- derivatives ---- */
static void motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    jc_rot_x_d(dR, q[2]);
    for (int k = 0; k < 9; k++) dR[k] *= dq[2];
    dt[0] = 0; dt[1] = dq[0]; dt[2] = dq[1];
}
static void subspace_d(const mreal *q, const mreal *dq, mreal *dS) { (void)q; (void)dq; jc_zero(dS, 18); }
static void subspace_dot_d(const mreal *q, const mreal *qd, const mreal *dq, const mreal *dqd, mreal *dSd)
{ (void)q; (void)qd; (void)dq; (void)dqd; jc_zero(dSd, 18); }

const mbs_joint_ops MBS_K(mbs_joint_planar) = { "planar", 3, 3, -1, MBS_FRAME_GENERAL,
    motion, subspace, subspace_dot, motion_d, subspace_d, subspace_dot_d,
    MBS_JOINT_ADDITIVE_OPS(3, -1) };
