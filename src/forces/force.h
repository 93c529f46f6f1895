/*
 * force.h - the one interface every force element type implements
 * (internal; templated over mreal like src/joints/joint.h).
 *
 * An element adds its loads to the kernel workspace, at the state of the
 * velocity-level kinematics already in w and at time t:
 *   - forces at body points: f (global components) to w->xfrc[15 i + 0..2]
 *     and pbar f^T to the P block w->xfrc[15 i + 6..14] (pbar: the point in
 *     body i's local coordinates); torques (global) to w->xfrc[15 i + 3..5];
 *     body_terms.c turns them into the moment about the CoM at the pose;
 *   - generalized forces on coordinates to w->qfrc.
 * Loads on the ground (body 0) are dropped. q and qd are the joint
 * coordinates and velocities of the kinematics in w (joint elements
 * read them). Elements never allocate and never fail: degenerate states
 * are regularized (see force_spring_damper.c).
 *
 * Writing a new element type: one file src/forces/force_NAME.c defining an
 * ops table, a line in force_table.c, builder and loader support.
 */
#ifdef MBS_COMPLEX
#ifndef MBS_FORCE_H_CS
#define MBS_FORCE_H_CS
#define MBS_FORCE_BODY
#endif
#else
#ifndef MBS_FORCE_H_D
#define MBS_FORCE_H_D
#define MBS_FORCE_BODY
#endif
#endif

#ifdef MBS_FORCE_BODY
#undef MBS_FORCE_BODY

#include "../kernels/kernels.h"
#include "kernels/functions.h"

typedef struct MBS_K(mbs_force_ops) {
    const char *name;      /* as in the model file */
    /* add the element's loads to w->xfrc / w->qfrc */
    void (*apply)(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                  MBS_K(mbs_ws) *w, const mreal *q, const mreal *qd, mreal t);
    /* potential energy (NULL: the element has none) */
    mreal (*energy)(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                    const MBS_K(mbs_ws) *w, const mreal *q);
    /* tangent of apply (see mbs_forces_apply_d): adds to dw->xfrc and dqfrc */
    void (*apply_d)(const mbs_model *m, const mbs_force_info *fe, const mreal *x,
                    const MBS_K(mbs_ws) *w, const mreal *dx, MBS_K(mbs_ws) *dw,
                    const mreal *q, const mreal *qd, const mreal *dq, const mreal *dqd,
                    mreal *dqfrc, mreal t);
} MBS_K(mbs_force_ops);

extern const MBS_K(mbs_force_ops) MBS_K(mbs_force_spring_damper);
extern const MBS_K(mbs_force_ops) MBS_K(mbs_force_joint_spring);
extern const MBS_K(mbs_force_ops) MBS_K(mbs_force_joint_force);
extern const MBS_K(mbs_force_ops) MBS_K(mbs_force_body_load);
extern const MBS_K(mbs_force_ops) MBS_K(mbs_force_contact_plane);
extern const MBS_K(mbs_force_ops) MBS_K(mbs_force_tire);

/* Look-up by mbs_force_type (force_table.c); NULL if invalid. */
const MBS_K(mbs_force_ops) *MBS_K(mbs_force_ops_of)(int type);

/* Add the loads of every force element of m at time t (force_table.c).
 * Call after velocity-level kinematics at (q, qd) and after the user loads
 * have been copied into w->xfrc / w->qfrc. */
void MBS_K(mbs_forces_apply)(const mbs_model *m, const mreal *x, MBS_K(mbs_ws) *w,
                             const mreal *q, const mreal *qd, mreal t);

/* Tangent (directional derivative) of mbs_forces_apply along a direction
 * (dq, dqd) in the state and dx in the model vector (element numbers,
 * function numbers, points; any may be NULL for zero), for the derivative
 * work (src/dynamics/id_derivatives.c, docs/formulations.md): ADDS the tangents of the
 * element loads to dw->xfrc (same layout as w->xfrc) and to dqfrc (nv; NULL:
 * dw->qfrc). Needs the primal velocity-level kinematics at (q, qd) in w and
 * the kinematic tangents along the same direction in dw (A, o, r, V; from
 * mbs_kin_forward_d) for every body an element touches; the ground is
 * taken as fixed. An element touches the bodies of its points (two for a
 * spring-damper, which may lie outside a subtree-limited sweep) or only
 * coordinates (joint elements). Time is not differentiated. */
void MBS_K(mbs_forces_apply_d)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                               const mreal *dx, MBS_K(mbs_ws) *dw, const mreal *q, const mreal *qd,
                               const mreal *dq, const mreal *dqd, mreal *dqfrc, mreal t);

/* Tangent of the time factor of element fe along dx (0 without a function;
 * force_time.c). */
mreal MBS_K(mbs_force_time_factor_d)(const mbs_model *m, const mbs_force_info *fe,
                                     const mreal *x, const mreal *dx, mreal t);

/* Total potential energy of the elements (springs), positions in w. */
mreal MBS_K(mbs_forces_energy)(const mbs_model *m, const mreal *x, const MBS_K(mbs_ws) *w,
                               const mreal *q);

/* Time factor of element fe: its function at t, or 1 without one
 * (force_time.c). */
mreal MBS_K(mbs_force_time_factor)(const mbs_model *m, const mbs_force_info *fe,
                                   const mreal *x, mreal t);

#endif
