/* Floating joint: q = (x, y, z, e0, e1, e2, e3): translation of the child
 * point in the parent joint frame, then the Euler parameters of the relative
 * rotation about that point (7 coordinates, 6 DOF; thesis §2.1.6, §2.2.6).
 *   t = (x, y, z),  R = A(p)
 *   S = [I, 0; 0, 2 E(p)],  dS/dt = [0, 0; 0, 2 E(pdot)]. */
#include "joint.h"
#include "joint_common.h"
#include "base/algebra.h"
#include "joint_additive.h"

MBS_JOINT_ADDITIVE(7)

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

/* ---- derivatives ---- */
static void motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    jc_ep_rotation_d(dR, q + 3, dq + 3);
    dt[0] = dq[0]; dt[1] = dq[1]; dt[2] = dq[2];
}
static void subspace_d(const mreal *q, const mreal *dq, mreal *dS)
{
    (void)q;
    jc_zero(dS, 42);
    jc_euler_columns(dS + 18, dq + 3);
}
static void subspace_dot_d(const mreal *q, const mreal *qd, const mreal *dq, const mreal *dqd, mreal *dSd)
{
    (void)q; (void)qd; (void)dq;
    jc_zero(dSd, 42);
    jc_euler_columns(dSd + 18, dqd + 3);
}

const mbs_joint_ops MBS_K(mbs_joint_floating) = { "floating", 7, 6, 3, MBS_FRAME_FREE,
    motion, subspace, subspace_dot, motion_d, subspace_d, subspace_dot_d,
    MBS_JOINT_ADDITIVE_OPS(7, 3) };
