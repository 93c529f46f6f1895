/*
 * mbsens/dynamics.h - inverse dynamics and the mass matrix.
 *
 * Equations of motion in joint coordinates:
 *     M(q) qdd = Q(q, qd) + tau
 * with Q the generalized gravity, velocity-dependent (Coriolis, centrifugal)
 * and applied forces (body loads and joint loads from mbs_data), and tau
 * the actuation. For Euler-parameter joints the rows of M are singular
 * along p (M p = 0); tau for those coordinates is orthogonal to p.
 */
#ifndef MBSENS_DYNAMICS_H
#define MBSENS_DYNAMICS_H

#include "data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Recursive Newton-Euler: tau = M(q) qdd - Q(q, qd). Also leaves the
 * kinematics of (q, qd, qdd) in d. */
int mbs_inverse_dynamics(const mbs_model *m, mbs_data *d, const double *q,
                         const double *qd, const double *qdd, double *tau);

/* Mass matrix by composite inertias, nq x nq row-major (full, symmetric).
 * Leaves the position kinematics of q in d. */
int mbs_mass_matrix(const mbs_model *m, mbs_data *d, const double *q, double *M);

/* Bias term h(q, qd) = -Q(q, qd) = inverse dynamics with qdd = 0. */
int mbs_bias_forces(const mbs_model *m, mbs_data *d, const double *q,
                    const double *qd, double *h);

#ifdef __cplusplus
}
#endif
#endif
