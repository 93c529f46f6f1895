/*
 * mbsens/sensitivity.h - objective functions and their gradients with
 * respect to the design parameters over whole simulations.
 *
 * An objective (the model's "objectives" section, docs/model-format.md) is
 *     psi(rho) = integral_{t0}^{tF} g(q, qd, qdd, rho, t) dt + G(q, qd, qdd, rho)|_{tF}
 * The gradient dpsi/drho over the model's design parameters is computed by
 *
 *   ddm   direct differentiation: one sensitivity system per parameter,
 *         integrated with the dynamics. Semi-recursive formulation: the
 *         exact derivative of the discrete trapezoidal (Newmark) step, one
 *         factorization of the Newton tangent per step for all parameters.
 *         Fully recursive: Anderson & Hsu's O(p n) scheme, RK4 on the state
 *         and its sensitivities, the acceleration sensitivities by
 *         articulated-body solves (never forming M).
 *   davm  discrete adjoint of the trapezoidal rule: one backward sweep per
 *         objective, exact derivative of the discrete psi (as ddm).
 *   cavm  continuous adjoint of the equations of motion (ODE form), CVODES
 *         forward with checkpoints and backward adjoint with Hermite
 *         interpolation of the stored solution.
 *   fd    central finite differences over whole simulations (2p + 1 runs).
 *   cs    complex step over whole simulations (RK4 on the complex build of
 *         the kernels; exact derivative of the RK4-discretized psi).
 * psi is integrated with the scheme of its gradient (trapezoidal quadrature
 * on the trapezoidal steps; RK4 stages; CVODES quadrature).
 */
#ifndef MBSENS_SENSITIVITY_H
#define MBSENS_SENSITIVITY_H

#include "simulate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- objectives of a model ---- */
int mbs_model_nobjectives(const mbs_model *m);
const char *mbs_objective_name(const mbs_model *m, int k);
int mbs_objective_find(const mbs_model *m, const char *name);   /* -1 if absent */
/* The integrand g (terminal = 0) or the terminal term G (terminal = 1) of
 * objective k at (t, q, qd, qdd), as the methods below evaluate it (for
 * plots of a trajectory). Overwrites the kinematics of d. MBS_OK, or
 * MBS_ERR_ARG for a bad index or NULL argument. */
int mbs_objective_integrand_at(const mbs_model *m, mbs_data *d, int k, int terminal, double t, const double *q,
                               const double *qd, const double *qdd, double *g);

/* ---- methods ---- */
typedef enum mbs_sens_method {
    MBS_SENS_DDM = 0,
    MBS_SENS_DAVM,
    MBS_SENS_CAVM,
    MBS_SENS_FD,
    MBS_SENS_CS
} mbs_sens_method;

const char *mbs_sens_method_name(mbs_sens_method m);   /* "ddm", "davm", "cavm", "fd", "cs" */
int mbs_sens_method_from_name(const char *name);       /* -1 if unknown */

/* Called at t0 and after every output step with the running values:
 * psi[nobj] (integral up to t, terminal terms evaluated at t) and, for ddm
 * and fd... only ddm, grad[nobj * nparam] (row-major, NULL otherwise).
 * Return non-zero to stop. */
typedef int (*mbs_sens_history_fn)(void *user, double t, int nobj, int nparam,
                                   const double *psi, const double *grad);

/* A program's own objective, added after the model's (index
 * mbs_model_nobjectives(m) in the result): psi = the integral over the run
 * of g(t, q, qd, qdd, rho), rho the model's parameter values (nparam, in
 * the model's order). Write *g; when g_q is not NULL also the partial
 * derivatives g_q, g_qd, g_qdd (nq each) and g_rho (nparam), all of them.
 * Return 0, or non-zero to stop the analysis with an error. Every method
 * but cs uses it (the derivatives enter where the model's objectives'
 * tangents do); it has no terminal part. */
typedef int (*mbs_sens_objective_fn)(void *user, double t, int nq, const double *q, const double *qd,
                                     const double *qdd, int nparam, const double *rho, double *g, double *g_q,
                                     double *g_qd, double *g_qdd, double *g_rho);

typedef struct mbs_sens_options {
    mbs_sim_options sim;          /* formulation, reference point, integrator
                                   * settings (dt, tf, tolerance, cvodes tolerances) */
    mbs_sens_method method;       /* (ddm) */
    double fd_step;               /* fd: relative step h max(1, |rho|) (1e-6) */
    mbs_sens_history_fn history;  /* optional */
    void *history_user;
    mbs_sens_objective_fn objective;   /* optional: a program's own objective */
    void *objective_user;
    int threads;                  /* ddm: its parameter columns, fd: its 2p runs on this many
                                   * OpenMP threads (0 or 1: serially; mbs_batch_threads(0):
                                   * OMP_NUM_THREADS). With more than one, OpenBLAS runs on one
                                   * thread meanwhile (mbsens/batch.h) and the program's
                                   * objective is called from several threads at once. Inside a
                                   * parallel region (a batch) the run is serial. psi, the
                                   * gradient and the history do not depend on it, to the bit.
                                   * (1) */
} mbs_sens_options;

/* Defaults: the model's simulation options, ddm, fd_step 1e-6, 1 thread. */
mbs_sens_options mbs_sens_options_default(const mbs_model *m);

typedef struct mbs_sens_result {
    int nobj, nparam;
    double *psi;                  /* nobj */
    double *grad;                 /* nobj x nparam, row-major: dpsi_i/drho_j */
    double wall_seconds;
    mbs_sim_stats stats;          /* of the forward simulation */
} mbs_sens_result;

/* Run the analysis. res is filled (free it with mbs_sens_result_free).
 * Errors: no objectives or no parameters (MBS_ERR_ARG), unsupported
 * combination (MBS_ERR_UNSUPPORTED, e.g. davm with the fully recursive
 * formulation), numerical failure with time and cause (MBS_ERR_NUMERIC). */
int mbs_sensitivity(const mbs_model *m, const mbs_sens_options *opts,
                    mbs_sens_result *res, mbs_error *err);
void mbs_sens_result_free(mbs_sens_result *res);

#ifdef __cplusplus
}
#endif
#endif
