/*
 * mbsens/derivatives.h - analytical derivatives of inverse and forward
 * dynamics with respect to the state, the actuation and the design
 * parameters.
 *
 * All functions fill caller-provided arrays (row-major, nq rows) and do not
 * allocate. Derivatives are exact (no finite differences). Directional and
 * parameter derivatives are the tangent (forward-mode) of the recursive
 * algorithm they differentiate, cost O(n) per direction (docs/
 * formulations.md §9). The state Jacobians (mbs_inverse_dynamics_
 * derivatives, mbs_forward_dynamics_derivatives) take all columns at once
 * in O(n depth) (docs/formulations.md, "All-columns derivative
 * Jacobians"); the forward-dynamics ones then apply M'^-1 (dense, O(nq^3)).
 *
 * Euler-parameter coordinates: derivatives are those of the functions as
 * implemented, i.e. of the rotation formula A(p) = (2 e0^2 - 1) I + ...
 * extended off |p| = 1; forward-dynamics derivatives include the
 * normalization completion p.pdd = -|pd|^2.
 */
#ifndef MBSENS_DERIVATIVES_H
#define MBSENS_DERIVATIVES_H

#include "dynamics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tau = ID(q, qd, qdd) and its partials dtau/dq, dtau/dqd (nq x nq).
 * (dtau/dqdd = M: mbs_mass_matrix.) Any output may be NULL. */
int mbs_inverse_dynamics_derivatives(const mbs_model *m, mbs_data *d,
                                     const double *q, const double *qd, const double *qdd,
                                     double *tau, double *dtau_dq, double *dtau_dqd);

/* dtau/drho (nq x nparams) for the model's design parameters. */
int mbs_inverse_dynamics_param_derivatives(const mbs_model *m, mbs_data *d,
                                           const double *q, const double *qd,
                                           const double *qdd, double *dtau_drho);

/* Directional derivative of ID along (dq, dqd, dqdd) in the state and drho
 * in the parameters (any may be NULL = 0): dtau = d/de ID(... + e ...). */
int mbs_inverse_dynamics_directional(const mbs_model *m, mbs_data *d,
                                     const double *q, const double *qd, const double *qdd,
                                     const double *dq, const double *dqd, const double *dqdd,
                                     const double *drho, double *dtau);

/* qdd = FD(q, qd, tau) and its partials dqdd/dq, dqdd/dqd, dqdd/dtau
 * (= M^-1 completed for Euler parameters). alg selects the algorithm of
 * qdd (fully recursive or semi-recursive); the Jacobians use one method
 * for both (M'^-1 formed once from a tree-sparse factorization of M').
 * Any output may be NULL. */
int mbs_forward_dynamics_derivatives(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                     const double *q, const double *qd, const double *tau,
                                     double *qdd, double *dqdd_dq, double *dqdd_dqd,
                                     double *dqdd_dtau);

/* dqdd/drho (nq x nparams). qdd (may be NULL) receives FD(q, qd, tau). */
int mbs_forward_dynamics_param_derivatives(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                           const double *q, const double *qd, const double *tau,
                                           double *qdd, double *dqdd_drho);

/* Directional derivative of FD along (dq, dqd, dtau, drho) (any NULL = 0). */
int mbs_forward_dynamics_directional(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                     const double *q, const double *qd, const double *tau,
                                     const double *dq, const double *dqd, const double *dtau,
                                     const double *drho, double *qdd, double *dqdd);

#ifdef __cplusplus
}
#endif
#endif
