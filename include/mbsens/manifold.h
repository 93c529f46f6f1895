/*
 * mbsens/manifold.h - the velocity map between a model's velocities and
 * the rates of its coordinates (docs/tangent-space.md §1.1,
 * docs/formulations.md "Tangent velocities").
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

#ifdef __cplusplus
}
#endif

#endif
