/* Fixed joint: no coordinates; the child keeps the placement given by the
 * two joint frames. */
#include "joint.h"
#include "joint_common.h"
#include "joint_additive.h"

MBS_JOINT_ADDITIVE(0)

static void motion(const mreal *q, mreal *R, mreal *t)
{
    (void)q;
    for (int k = 0; k < 9; k++) R[k] = 0;
    R[0] = R[4] = R[8] = 1;
    t[0] = t[1] = t[2] = 0;
}
static void subspace(const mreal *q, mreal *S) { (void)q; (void)S; }
static void subspace_dot(const mreal *q, const mreal *qd, mreal *Sd) { (void)q; (void)qd; (void)Sd; }

/* ---- derivatives ---- */
static void motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    (void)q; (void)dq;
    for (int k = 0; k < 9; k++) dR[k] = 0;
    dt[0] = dt[1] = dt[2] = 0;
}
static void subspace_d(const mreal *q, const mreal *dq, mreal *dS) { (void)q; (void)dq; (void)dS; }
static void subspace_dot_d(const mreal *q, const mreal *qd, const mreal *dq, const mreal *dqd, mreal *dSd)
{ (void)q; (void)qd; (void)dq; (void)dqd; (void)dSd; }

const mbs_joint_ops MBS_K(mbs_joint_fixed) = { "fixed", 0, 0, -1, MBS_FRAME_FIXED,
    motion, subspace, subspace_dot, motion_d, subspace_d, subspace_dot_d,
    MBS_JOINT_ADDITIVE_OPS(0, -1) };
