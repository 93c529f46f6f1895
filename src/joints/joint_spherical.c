/* Spherical joint: q = p = (e0, e1, e2, e3), the Euler parameters of the
 * relative rotation (4 coordinates, 3 DOF; thesis §2.1.5, §2.2.5).
 *   R = A(p),  t = 0,  S = [0; 2 E(p)],  dS/dt = [0; 2 E(pdot)]
 * (E is linear in p). The relative angular velocity is w = 2 E(p) pdot. */
#include "joint.h"
#include "joint_common.h"
#include "base/algebra.h"
#include "joint_additive.h"
#include "joint_tangent.h"
#include "manifold.h"

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

/* ---- tangent velocities: v = w, the angular velocity of the child joint
 * frame relative to the parent's in the child's axes (R' = R S(w)):
 *   R = A(p/|p|),  S = [0; R],  dS/dt = [0; R S(w)]
 * and along a tangent dq (the direction of p (x) exp(e dq)):
 *   dR = R S(dq),  dS = [0; R S(dq)],  d(dS/dt) = [0; R S(dq) S(w) + R S(dw)].
 * The manifold operations are those of SO(3) (manifold.h). ---- */
static void tg_motion(const mreal *q, mreal *R, mreal *t)
{
    MBS_K(mbs_quat_rotation)(q, R);
    t[0] = t[1] = t[2] = 0;
}
/* The angular block of a 6 x 3 column block from the 3x3 M, zero linear rows. */
static void tg_angular(mreal *S, const mreal *M)
{
    jc_zero(S, 18);
    tj_columns(S, M, 3);
}
static void tg_subspace(const mreal *q, mreal *S)
{
    mreal R[9];
    MBS_K(mbs_quat_rotation)(q, R);
    tg_angular(S, R);
}
/* [0; R S(w)]: dS/dt along the velocity w, and dS along the tangent w */
static void tg_subspace_dot(const mreal *q, const mreal *w, mreal *Sd)
{
    mreal R[9], M[9];
    MBS_K(mbs_quat_rotation)(q, R);
    tj_mul_skew(M, R, w);
    tg_angular(Sd, M);
}
static void tg_motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    mreal R[9];
    MBS_K(mbs_quat_rotation)(q, R);
    tj_mul_skew(dR, R, dq);
    dt[0] = dt[1] = dt[2] = 0;
}
static void tg_subspace_dot_d(const mreal *q, const mreal *v, const mreal *dq, const mreal *dv, mreal *dSd)
{
    mreal R[9], M[9];
    MBS_K(mbs_quat_rotation)(q, R);
    tj_rate_d(M, R, v, dq, dv);
    tg_angular(dSd, M);
}
static void tg_integrate_jacobians(const mreal *q, const mreal *dq, mreal *Jq, mreal *Jdq)
{
    (void)q;
    MBS_K(mbs_so3_ad_inv)(dq, Jq);
    MBS_K(mbs_so3_jr)(dq, Jdq);
}
static void tg_velocity_map(const mreal *q, mreal *T)
{
    tj_quat_map(T, 3, q);
}

const mbs_joint_ops MBS_K(mbs_joint_spherical_tangent) = { "spherical", 4, 3, -1, MBS_FRAME_BALL_TANGENT,
    tg_motion, tg_subspace, tg_subspace_dot, tg_motion_d, tg_subspace_dot, tg_subspace_dot_d,
    3, 0, 1, MBS_K(mbs_so3_integrate), MBS_K(mbs_so3_difference), tg_integrate_jacobians,
    tg_velocity_map };
