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
 * The kinematics left in d are unspecified (on trees of fixed, revolute,
 * prismatic, spherical and floating joints the pass uses the joint-frame
 * constants and does not form them): call mbs_kinematics for body
 * quantities at q. */
int mbs_mass_matrix(const mbs_model *m, mbs_data *d, const double *q, double *M);

/* Bias term h(q, qd) = -Q(q, qd) = inverse dynamics with qdd = 0. */
int mbs_bias_forces(const mbs_model *m, mbs_data *d, const double *q,
                    const double *qd, double *h);

/* ---- forward dynamics ---- */

typedef enum mbs_fd_algorithm {
    MBS_FD_RECURSIVE = 0,   /* fully recursive O(n), articulated bodies ("fr") */
    MBS_FD_SEMI_RECURSIVE   /* composite inertias + Cholesky, dense or without fill-in ("semi") */
} mbs_fd_algorithm;

const char *mbs_fd_algorithm_name(mbs_fd_algorithm a);  /* "fr", "semi" */
int mbs_fd_algorithm_from_name(const char *name);       /* -1 if unknown */

/* Solve M(q) qdd = Q(q, qd) + tau for qdd (tau may be NULL). Euler
 * parameters: the rank deficiency of M along each p is completed with the
 * differentiated normalization p.pdd = -|pd|^2, so qdd keeps the state on
 * |p| = 1 to second order. The kinematics left in d are unspecified (the
 * fully recursive algorithm works in joint frames and does not form them
 * on trees of fixed, revolute, prismatic, spherical and floating joints
 * without force elements or body loads): call mbs_kinematics(q, qd, qdd)
 * for body quantities at the solution. Returns MBS_ERR_NUMERIC if the
 * system is singular (message names the joint or coordinate). */
int mbs_forward_dynamics(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                         const double *q, const double *qd, const double *tau,
                         double *qdd);

#ifdef __cplusplus
}
#endif
#endif
