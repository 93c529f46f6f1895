/* Spherical joint: q = p = (e0, e1, e2, e3), the Euler parameters of the
 * relative rotation (4 coordinates, 3 DOF; thesis §2.1.5, §2.2.5).
 *   R = A(p),  t = 0,  S = [0; 2 E(p)],  dS/dt = [0; 2 E(pdot)]
 * (E is linear in p). The relative angular velocity is w = 2 E(p) pdot. */
#include "joint.h"
#include "joint_common.h"
#include "base/algebra.h"
#include "joint_additive.h"

MBS_JOINT_ADDITIVE(4)

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

/* ---- derivatives ---- */
static void motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    jc_ep_rotation_d(dR, q, dq);
    dt[0] = dt[1] = dt[2] = 0;
}
static void subspace_d(const mreal *q, const mreal *dq, mreal *dS)
{
    (void)q;
    jc_zero(dS, 24);
    jc_euler_columns(dS, dq);
}
static void subspace_dot_d(const mreal *q, const mreal *qd, const mreal *dq, const mreal *dqd, mreal *dSd)
{
    (void)q; (void)qd; (void)dq;
    jc_zero(dSd, 24);
    jc_euler_columns(dSd, dqd);
}

const mbs_joint_ops MBS_K(mbs_joint_spherical) = { "spherical", 4, 3, 0, MBS_FRAME_BALL,
    motion, subspace, subspace_dot, motion_d, subspace_d, subspace_dot_d,
    MBS_JOINT_ADDITIVE_OPS(4, 0) };
