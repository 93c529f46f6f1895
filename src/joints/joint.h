/*
 * joint.h - the one interface every joint type implements.
 *
 * A joint connects a parent body h to a child body i. Each side carries a
 * joint frame: a point (P_p on the parent, P_c on the child, in the bodies'
 * local coordinates) and an orthonormal triad X = [axis, ref, axis x ref]
 * (X_p, X_c). With the joint coordinates q the child is placed by
 *
 *     A_i      = A_h X_p R(q) X_c^T
 *     r_{P_c}  = r_{P_p} + A_h X_p t(q)
 *
 * where R(q), t(q) are the relative rotation and translation expressed in
 * the parent's joint frame. A joint type supplies only these, plus its
 * motion subspace in the same frame:
 *
 *     column k of S(q) = [ v_k ; w_k ]
 *
 * the velocity of the child point P_c and the angular velocity of the
 * child relative to the parent per unit qdot_k, and the time derivative
 * dS/dt along (q, qdot), still in the parent joint frame. Everything else
 * (global maps b_i, their material derivatives, reference points) is
 * computed by the shared kinematics code, so adding a joint type means
 * writing one file with these three functions.
 *
 * The joint's velocities v (nv of them) are the rates of its coordinates
 * (the Euler-parameter rates for spherical and floating joints), with the
 * additive manifold operations of joint_additive.h (integrate, difference,
 * their Jacobians, the velocity map qdot = T v), except in the two tangent
 * tables: a spherical or floating joint whose velocities are tangent
 * (docs/tangent-space.md §1, §6) has v = w (3) or [nu; w] (6), the body
 * twist of its child joint frame in the child's axes, and the exponential
 * maps of SO(3) and SE(3) of manifold.h. Its `euler` is -1 (no Euler-rate
 * completion anywhere), its `quat` the offset of the unit quaternion, and
 * its frame kind BALL_TANGENT or FREE_TANGENT.
 *
 * Coordinates of the joint types (n coordinates / DOF):
 *   fixed       0/0
 *   revolute    1/1  angle about e1
 *   prismatic   1/1  slide along e1
 *   cylindrical 2/2  slide along e1, then angle about e1
 *   cardan      2/2  angle about e1 (parent-fixed), then about the
 *                    rotated e2 (child-fixed)
 *   spherical   4/3  Euler parameters of R
 *   planar      3/3  slides along e2 and e3, then angle about e1 (normal)
 *   floating    7/6  translation (3) in the parent joint frame, then
 *                    Euler parameters (4)
 */
#ifndef MBS_JOINT_H
#define MBS_JOINT_H

#include "base/scalar.h"

#define MBS_JOINT_MAXQ 7

/* The form a joint takes in its own frames, for the passes that work in
 * joint frames (joints/joint_frames.h; kernels/aba_joint_frames.c,
 * kernels/jacobians_1dof.c). With the parent joint frame X_p and the
 * constant rotation C between the parent's child frame and X_p:
 *   FIXED     R = I, t = 0, no column
 *   ROT_E1    R = Rot(e1, q), t = 0, S = [0; e1]
 *   SLIDE_E1  R = I, t = q e1, S = [e1; 0]
 *   BALL      R = A(p) (Euler parameters), t = 0, three rotational
 *             columns w' = 2 G(p) pd in the child's axes
 *   FREE      t = (x, y, z) in the parent joint frame, then as BALL
 *   CARDAN    R = Rot(e1, q1) Rot(e2, q2), t = 0, S = [0, 0; e1, Rot(e1, q1) e2]
 *             (in the parent joint frame): a fast path of the global-axes
 *             kinematics (kernels/kinematics.c); the articulated-body
 *             passes in joint frames take it as GENERAL
 *   BALL_TANGENT  R = A(p/|p|), t = 0, S = [0; I] in the child's axes: the
 *             velocities are the columns' coefficients w themselves
 *   FREE_TANGENT  t = (x, y, z) in the parent joint frame, R as
 *             BALL_TANGENT, S = I in the child's axes (v = [nu; w], t' = R nu)
 * A kind of its own (a joint type with another velocity convention) is
 * added as a new value with its operations in joint_frames.h; GENERAL
 * (negative) has no joint-frame form, and the passes refuse the model. */
typedef enum mbs_frame_kind {
    MBS_FRAME_GENERAL = -1,
    MBS_FRAME_FIXED = 0,
    MBS_FRAME_ROT_E1,
    MBS_FRAME_SLIDE_E1,
    MBS_FRAME_BALL,
    MBS_FRAME_FREE,
    MBS_FRAME_CARDAN,
    MBS_FRAME_BALL_TANGENT,
    MBS_FRAME_FREE_TANGENT
} mbs_frame_kind;

typedef struct mbs_joint_ops {
    const char *name;  /* as in the model file */
    int nq;            /* coordinates */
    int ndof;          /* degrees of freedom */
    int euler;         /* offset of the Euler parameters in q, or -1 */
    mbs_frame_kind frame_kind;   /* the form in joint frames (above) */
    /* R (3x3 row-major) and t (3) in the parent joint frame */
    void (*motion)(const mreal *q, mreal *R, mreal *t);
    /* S: 6 x nv, column-major ([v_k; w_k] per column) */
    void (*subspace)(const mreal *q, mreal *S);
    /* dS/dt along (q, qd), same layout */
    void (*subspace_dot)(const mreal *q, const mreal *qd, mreal *Sd);

    /* ---- derivatives (directional, along dq and dqd) ---- */
    /* dR, dt: derivatives of R(q), t(q) along dq */
    void (*motion_d)(const mreal *q, const mreal *dq, mreal *dR, mreal *dt);
    /* dS: derivative of S(q) along dq */
    void (*subspace_d)(const mreal *q, const mreal *dq, mreal *dS);
    /* dSd: derivative of dS/dt(q, qd) along (dq, dqd) */
    void (*subspace_dot_d)(const mreal *q, const mreal *qd, const mreal *dq,
                           const mreal *dqd, mreal *dSd);

    /* ---- velocities and the manifold (docs/tangent-space.md §4, §6) ---- */
    int nv;            /* velocities */
    int quat;          /* offset of the unit quaternion in q, or -1 */
    int tangent;       /* 1: v is the tangent-space velocity (nv = ndof); 0: v = qdot (nv = nq) */
    /* q1 = q (+) dq, dq a velocity-sized step (nv) */
    void (*integrate)(const mreal *q, const mreal *dq, mreal *q1);
    /* dq = q0 (-) q1, the step with q0 (+) dq = q1 */
    void (*difference)(const mreal *q0, const mreal *q1, mreal *dq);
    /* Jq = d(q (+) dq)/dq along the tangents at q, Jdq = d(q (+) dq)/d(dq),
     * both nv x nv row-major, in the tangents at q (+) dq */
    void (*integrate_jacobians)(const mreal *q, const mreal *dq, mreal *Jq, mreal *Jdq);
    /* T: qdot = T(q) v, nq x nv row-major */
    void (*velocity_map)(const mreal *q, mreal *T);
} mbs_joint_ops;

/* One table entry per joint type, indexed by mbs_joint_type
 * (include/mbsens/model.h). Defined in joints/joint_*.c. */
#define MBS_JOINT_DECLARE(kind) extern const mbs_joint_ops MBS_K(mbs_joint_##kind)
MBS_JOINT_DECLARE(fixed);
MBS_JOINT_DECLARE(revolute);
MBS_JOINT_DECLARE(prismatic);
MBS_JOINT_DECLARE(cylindrical);
MBS_JOINT_DECLARE(cardan);
MBS_JOINT_DECLARE(spherical);
MBS_JOINT_DECLARE(planar);
MBS_JOINT_DECLARE(floating);
MBS_JOINT_DECLARE(spherical_tangent);
MBS_JOINT_DECLARE(floating_tangent);

/* Look-up by type and velocity convention (mbs_velocities; the tangent
 * tables exist for spherical and floating joints, every other type has one
 * table). Kinematics, the joint-frame passes at set-up, the builder. */
const mbs_joint_ops *MBS_K(mbs_joint_ops_of)(int type, int velocities);

#endif
