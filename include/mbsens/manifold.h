/*
 * mbsens/manifold.h - the configuration manifold of a model: the velocity
 * map between its velocities and the rates of its coordinates, and the
 * exponential map (integrate, difference, their Jacobians; docs/api.md
 * "Manifold operations", docs/formulations.md "Tangent velocities").
 *
 * For every joint qdot_J = T_J(q_J) v_J: T_J = I for a joint whose
 * velocities are the rates of its coordinates (Euler-parameter rates
 * included), and for a joint with tangent velocities
 *   spherical (v = w):        T = G(p)^T / 2                    (4 x 3)
 *   floating  (v = [nu; w]):  T = [R 0; 0 G(p)^T / 2]           (7 x 6)
 * with R the joint's rotation, G(p) = [-e, -S(e) + e0 I]. Accelerations:
 * qddot = T vdot + Tdot v. The left inverse T^+ (T^+ T = I) is 2 G(p) / |p|^2
 * on a quaternion block and R^T on a translation block.
 */
#ifndef MBSENS_MANIFOLD_H
#define MBSENS_MANIFOLD_H

#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* T(q): nq x nv, row-major (block diagonal over the joints). */
void mbs_velocity_map(const mbs_model *m, const double *q, double *T);
/* qd = T(q) v and, when vd and qdd are given, qdd = T(q) vd + Tdot v
 * (nq each; vd, qdd may be NULL). MBS_OK or MBS_ERR_ARG. */
int mbs_rates_from_velocity(const mbs_model *m, const double *q, const double *v, const double *vd,
                            double *qd, double *qdd);
/* v = T^+ qd and, when qdd and vd are given, vd = T^+ (qdd - Tdot v) (nv
 * each): the inverse of mbs_rates_from_velocity where the rates of every
 * tangent joint's quaternion are orthogonal to it (p.pdot = 0; the
 * component along p is dropped). MBS_OK or MBS_ERR_ARG. */
int mbs_velocity_from_rates(const mbs_model *m, const double *q, const double *qd, const double *qdd,
                            double *v, double *vd);

/* ---- integrate and difference (docs/api.md "Manifold operations") ----
 * Joint by joint, with the joint's velocities v_J (nv_J) as the tangent:
 *   - a joint whose velocities are the rates of its coordinates (every
 *     joint type, and spherical and floating joints with Euler-parameter
 *     rates) is additive: q (+) d = q + d, q0 (-) q1 = q1 - q0. Nothing is
 *     normalized: an Euler-rate step leaves |p| = 1 at second order (p.pd = 0
 *     gives |p + d|^2 = 1 + |d|^2); mbs_normalize_state projects it back;
 *   - a tangent spherical joint (d = w): p (+) w = p (x) exp(w), a right
 *     (body-side) perturbation, w in the child joint frame's axes;
 *   - a tangent floating joint (d = [nu; w]): the exponential of SE(3),
 *     (t, R) (+) d = (t + R V(w) nu, R exp(w)), nu and w in the child
 *     joint frame's axes (the body twist); q0 (-) q1 is the SE(3) logarithm
 *     of (R0^T (t1 - t0), R0^T R1).
 * The quaternion of a tangent joint keeps its norm to round-off (exp(w) is
 * a unit quaternion); q0 (-) q1 takes the shortest rotation (|w| <= pi) and
 * depends only on the rotations of q0 and q1 (any non-zero norm). q0 (+)
 * (q0 (-) q1) = q1 as rotations (p or -p: the same rotation). */

/* q1 = q (+) (v dt) (nq; q1 may be q). MBS_OK or MBS_ERR_ARG. */
int mbs_integrate(const mbs_model *m, const double *q, const double *v, double dt, double *q1);
/* v = q0 (-) q1 (nv): the step with q0 (+) v = q1. MBS_OK or MBS_ERR_ARG. */
int mbs_difference(const mbs_model *m, const double *q0, const double *q1, double *v);
/* The Jacobians of q1 = q (+) (v dt), nv x nv row-major, block diagonal
 * over the joints; a derivative "with respect to q" is taken along the
 * tangent at q (a right perturbation q (+) e) and expressed in the tangent
 * at q1:
 *   Jq = d(q1)/dq   (Ad(exp(v dt))^-1 on a tangent joint, I on the others)
 *   Jv = d(q1)/dv   (dt J_r(v dt) on a tangent joint, dt I on the others)
 * so that (q (+) e) (+) ((v + f) dt) = q1 (+) (Jq e + Jv f) to first order.
 * Jq or Jv may be NULL. MBS_OK or MBS_ERR_ARG. */
int mbs_integrate_jacobians(const mbs_model *m, const double *q, const double *v, double dt, double *Jq,
                            double *Jv);
/* The Jacobians of d = q0 (-) q1 along the tangents at q0 and q1, nv x nv
 * row-major, block diagonal:
 *   J0 = dd/dq0   (-J_r(d)^-1 Ad(exp d)^-1 on a tangent joint, -I on the others)
 *   J1 = dd/dq1   (J_r(d)^-1 on a tangent joint, I on the others)
 * J0 or J1 may be NULL. MBS_OK or MBS_ERR_ARG. */
int mbs_difference_jacobians(const mbs_model *m, const double *q0, const double *q1, double *J0, double *J1);

#ifdef __cplusplus
}
#endif

#endif
