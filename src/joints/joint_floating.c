/* Floating joint: q = (x, y, z, e0, e1, e2, e3): translation of the child
 * point in the parent joint frame, then the Euler parameters of the relative
 * rotation about that point (7 coordinates, 6 DOF; thesis §2.1.6, §2.2.6).
 *   t = (x, y, z),  R = A(p)
 *   S = [I, 0; 0, 2 E(p)],  dS/dt = [0, 0; 0, 2 E(pdot)]. */
#include "joint.h"
#include "joint_common.h"
#include "base/algebra.h"
#include "joint_additive.h"
#include "joint_tangent.h"
#include "manifold.h"

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

/* ---- tangent velocities: v = [nu; w], the body twist of the child joint
 * frame relative to the parent's, in the child's axes (t' = R nu,
 * R' = R S(w)):
 *   S = [R 0; 0 R],  dS/dt = [R S(w) 0; 0 R S(w)]
 * and along a tangent dq = [dnu; dw] (the direction of q (+) e dq, SE(3)):
 *   dR = R S(dw),  dt = R dnu,  dS: both blocks R S(dw),
 *   d(dS/dt): both blocks R S(dw) S(w) + R S(dw') (dw' the angular block of dv).
 * The manifold operations are those of SE(3) (manifold.h). ---- */
static void tg_motion(const mreal *q, mreal *R, mreal *t)
{
    MBS_K(mbs_quat_rotation)(q + 3, R);
    t[0] = q[0]; t[1] = q[1]; t[2] = q[2];
}
static void tg_subspace(const mreal *q, mreal *S)
{
    mreal R[9];
    MBS_K(mbs_quat_rotation)(q + 3, R);
    jc_zero(S, 36);
    tj_columns(S, R, 0);
    tj_columns(S + 18, R, 3);
}
static void tg_blocks(mreal *S, const mreal *M)
{
    jc_zero(S, 36);
    tj_columns(S, M, 0);
    tj_columns(S + 18, M, 3);
}
/* both blocks R S(w): dS/dt along the velocity's angular block w, and dS
 * along a tangent whose angular block is w */
static void tg_subspace_dot(const mreal *q, const mreal *v, mreal *Sd)
{
    mreal R[9], M[9];
    MBS_K(mbs_quat_rotation)(q + 3, R);
    tj_mul_skew(M, R, v + 3);
    tg_blocks(Sd, M);
}
static void tg_motion_d(const mreal *q, const mreal *dq, mreal *dR, mreal *dt)
{
    mreal R[9];
    MBS_K(mbs_quat_rotation)(q + 3, R);
    tj_mul_skew(dR, R, dq + 3);
    m3_mv(dt, R, dq);
}
static void tg_subspace_dot_d(const mreal *q, const mreal *v, const mreal *dq, const mreal *dv, mreal *dSd)
{
    mreal R[9], M[9];
    MBS_K(mbs_quat_rotation)(q + 3, R);
    tj_rate_d(M, R, v + 3, dq + 3, dv + 3);
    tg_blocks(dSd, M);
}
static void tg_integrate_jacobians(const mreal *q, const mreal *dq, mreal *Jq, mreal *Jdq)
{
    (void)q;
    MBS_K(mbs_se3_ad_inv)(dq, Jq);
    MBS_K(mbs_se3_jr)(dq, Jdq);
}
/* T = [R 0; 0 G(p)^T / 2] (7 x 6) */
static void tg_velocity_map(const mreal *q, mreal *T)
{
    mreal R[9];
    MBS_K(mbs_quat_rotation)(q + 3, R);
    jc_zero(T, 42);
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) T[6 * r + k] = R[3 * r + k];
    tj_quat_map(T + 18 + 3, 6, q + 3);
}

const mbs_joint_ops MBS_K(mbs_joint_floating_tangent) = { "floating", 7, 6, -1, MBS_FRAME_FREE_TANGENT,
    tg_motion, tg_subspace, tg_subspace_dot, tg_motion_d, tg_subspace_dot, tg_subspace_dot_d,
    6, 3, 1, MBS_K(mbs_se3_integrate), MBS_K(mbs_se3_difference), tg_integrate_jacobians,
    tg_velocity_map };
