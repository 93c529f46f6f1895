/* Prismatic joint: one distance along the joint axis e1 (thesis §2.1.2, §2.2.2).
 *   R = I,  t = q e1,  S = [e1; 0],  dS/dt = 0. */
#include "joint.h"
#include "joint_common.h"
#include "joint_additive.h"

MBS_JOINT_ADDITIVE(1)

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

/* ---- derivatives ---- */
static void motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    (void)q;
    jc_zero(dR, 9);
    dt[0] = dq[0]; dt[1] = 0; dt[2] = 0;
}
static void subspace_d(const mreal *q, const mreal *dq, mreal *dS) { (void)q; (void)dq; jc_zero(dS, 6); }
static void subspace_dot_d(const mreal *q, const mreal *qd, const mreal *dq, const mreal *dqd, mreal *dSd)
{ (void)q; (void)qd; (void)dq; (void)dqd; jc_zero(dSd, 6); }

const mbs_joint_ops MBS_K(mbs_joint_prismatic) = { "prismatic", 1, 1, -1, MBS_FRAME_SLIDE_E1,
    motion, subspace, subspace_dot, motion_d, subspace_d, subspace_dot_d,
    MBS_JOINT_ADDITIVE_OPS(1, -1) };
