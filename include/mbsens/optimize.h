/*
 * mbsens/optimize.h - gradient-based design optimization and optimal
 * control (docs/optimization.md).
 *
 * The design variables are the model's named parameters ("parameters" in
 * the model file), each within its bounds; the caller may hold some of them
 * at their values. The objective is one of the model's objectives or a
 * weighted sum of them,
 *     Psi(rho) = sum_k w_k psi_k(rho),
 * and its gradient comes from mbs_sensitivity() with the chosen method
 * (direct differentiation or an adjoint, docs/sensitivity.md). The
 * optimizer is NLopt (L-BFGS, SLSQP or MMA, all with bounds).
 *
 * Scaling. The optimizer works on u_j = rho_j / s_j with s_j = |rho_j| at
 * the start (bounds width where rho_j = 0, 1 if unbounded), and on
 * Psi / |Psi_start|, so that the stopping tolerances are relative and
 * parameters of different units (a stiffness of 1e4 N/m, a damping of
 * 1e2 N s/m) are comparable.
 *
 * Iterations. NLopt reports evaluations, not iterations; an iteration here
 * is an evaluation that lowers the best Psi found so far (an accepted
 * point). Its step is the 2-norm of the change of u since the previous
 * accepted point.
 *
 * Failed evaluations. If the simulation fails at a trial point (Newton
 * non-convergence, a parameter value the model rejects...), the evaluation
 * is reported through `message` and answered with a value above the
 * best one and the best point's gradient, which makes the line searches of
 * the three algorithms shrink the step (backtrack). Only if that repeats
 * max_failures times in a row is the run stopped (stop reason "failures");
 * the best point found is returned in every case.
 *
 * Horizon continuation (thesis §7.4.4): with `continuation`, the problem
 * is solved first over [t0, t0 + continuation_start], then over horizons
 * longer by continuation_step each, up to the final time of the options,
 * each stage starting from the solution of the previous one. Spline knot
 * values (targets FUNC.values[k]) that cannot act within a stage's horizon
 * (t_{k-1} at or beyond it) are held at their current values during that
 * stage: the cubic spline is not local, and such knots would otherwise be
 * levers of little effect pushed to their bounds.
 */
#ifndef MBSENS_OPTIMIZE_H
#define MBSENS_OPTIMIZE_H

#include "sensitivity.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most horizon-continuation stages of one run (each is an optimization). */
#define MBS_OPT_MAX_STAGES 10000

typedef enum mbs_opt_algorithm {
    MBS_OPT_LBFGS = 0,    /* "lbfgs": NLOPT_LD_LBFGS (limited-memory BFGS, bounds) */
    MBS_OPT_SLSQP,        /* "slsqp": NLOPT_LD_SLSQP (sequential quadratic programming) */
    MBS_OPT_MMA           /* "mma":   NLOPT_LD_MMA (method of moving asymptotes) */
} mbs_opt_algorithm;

const char *mbs_opt_algorithm_name(mbs_opt_algorithm a);
int mbs_opt_algorithm_from_name(const char *name);        /* -1 if unknown */

/* How the variables are scaled (see above). */
typedef enum mbs_opt_scaling {
    MBS_OPT_SCALE_VALUE = 0,  /* "value": s_j = |rho_j| at the start (default) */
    MBS_OPT_SCALE_BOUNDS,     /* "bounds": s_j = upper - lower where both are finite */
    MBS_OPT_SCALE_NONE        /* "none": s_j = 1 */
} mbs_opt_scaling;

const char *mbs_opt_scaling_name(mbs_opt_scaling s);
int mbs_opt_scaling_from_name(const char *name);          /* -1 if unknown */

/* One accepted point. Arrays are of length nparam (every parameter, the
 * fixed ones included) and valid during the call only. */
typedef struct mbs_opt_iter {
    int iteration;            /* 1, 2, ... (0: the starting point of a stage) */
    int evaluations;          /* evaluations so far (all stages) */
    int stage;                /* continuation stage (0 without continuation) */
    double tf;                /* final time of the stage's horizon */
    double psi;               /* weighted objective */
    double gnorm;             /* 2-norm of the projected gradient of psi (parameter units) */
    double step;              /* 2-norm of the change of the scaled variables */
    int nparam;
    const double *x;          /* parameter values */
    const double *grad;       /* dpsi/drho */
} mbs_opt_iter;

/* Called at the start of every stage (iteration 0) and at every accepted
 * point. Return non-zero to stop (stop reason "callback"). */
typedef int (*mbs_opt_callback)(void *user, const mbs_opt_iter *it);
/* Receives one line about a failed evaluation (and what the driver does
 * about it). */
typedef void (*mbs_opt_message_fn)(void *user, const char *msg);

typedef struct mbs_opt_options {
    mbs_sens_options sens;    /* simulation settings (formulation, dt, tf, ...) and
                               * gradient method; see `auto_method` */
    int auto_method;          /* 1 (default): choose the method: for closed loops ddm
                               * (ali3p or matrixr; ali3p if none is set); for open
                               * trees an adjoint when the model has more parameters
                               * than objectives (davm with semi, cavm with fr), ddm
                               * otherwise. 0: use sens.method */
    mbs_opt_algorithm algorithm;  /* (lbfgs) */
    int objective;            /* objective index when weights is NULL (0) */
    const double *weights;    /* nobj weights, or NULL */
    const int *fixed;         /* nparam flags: non-zero = held at its value; NULL: none */
    int max_iter;             /* accepted points per stage (100) */
    int max_eval;             /* evaluations per stage (0: 10 max_iter + 20) */
    double xtol;              /* relative tolerance on the scaled variables (1e-8) */
    double ftol;              /* relative tolerance on psi (1e-10) */
    double pgtol;             /* stop when the inf-norm of the projected gradient of the
                               * scaled problem is below this (1e-8; 0: off) */
    mbs_opt_scaling scaling;  /* (value) */
    int lbfgs_memory;         /* L-BFGS: stored corrections (0: NLopt's default) */
    int max_failures;         /* consecutive failed evaluations before stopping (20) */
    int continuation;         /* horizon continuation (0) */
    double continuation_start;/* first horizon length (1 s) */
    double continuation_step; /* growth per stage (1 s); at most MBS_OPT_MAX_STAGES stages */
    mbs_opt_callback callback;
    void *callback_user;
    mbs_opt_message_fn message;
    void *message_user;
} mbs_opt_options;

/* Defaults as above, sens = mbs_sens_options_default(m). */
mbs_opt_options mbs_opt_options_default(const mbs_model *m);

typedef struct mbs_opt_result {
    int nparam;
    double *x0;               /* starting parameter values (nparam) */
    double *x;                /* final (best) parameter values (nparam) */
    double *grad;             /* dpsi/drho at x over the full horizon (nparam) */
    double psi_initial;       /* psi at x0 over the full horizon */
    double psi_final;         /* psi at x over the full horizon */
    double pg_norm_initial;   /* 2-norm of the projected gradient at x0 */
    double pg_norm;           /* ... at x (free parameters, parameter units) */
    double pg_norm_scaled;    /* inf-norm of the projected gradient of the scaled problem */
    int iterations;           /* accepted points, all stages */
    int evaluations;          /* objective and gradient evaluations, all stages */
    int failed_evaluations;
    int stages;               /* 1, or the number of continuation stages */
    int nlopt_code;           /* NLopt's return code of the last stage */
    char stop_reason[64];     /* "ftol", "xtol", "pgtol", "max_iter", "max_eval",
                               * "callback", "failures", "success", "roundoff", ... */
    mbs_sens_method method;   /* gradient method used */
    mbs_sens_options sens;    /* the options used (full horizon) */
    double wall_seconds;
} mbs_opt_result;

/* Run the optimization from the model's parameter values. res is filled
 * (free with mbs_opt_result_free) when MBS_OK is returned; a failure of the
 * starting point, bad options (MBS_ERR_ARG: no parameters or objectives,
 * weights, an unsupported method for the model) return an error and leave
 * res empty. Stopping for any reason after a successful start is MBS_OK. */
int mbs_optimize(const mbs_model *m, const mbs_opt_options *o, mbs_opt_result *res, mbs_error *err);
void mbs_opt_result_free(mbs_opt_result *res);

/* The gradient method mbs_optimize would use with auto_method = 1, and the
 * matching simulation settings (loop formulation) in *sens. */
mbs_sens_method mbs_opt_auto_method(const mbs_model *m, mbs_sens_options *sens);

/* Weighted objective along a simulation: called at t0 and after every step
 * of the sensitivity options' simulation with t, the weighted integrand
 * g(t) = sum_k w_k g_k and the running psi (trapezoidal quadrature, the
 * terminal terms added at the end only). weights NULL: objective
 * `objective` alone. Return non-zero from fn to stop. Used for plots of
 * the initial against the optimized response. */
typedef int (*mbs_opt_trace_fn)(void *user, double t, double g, double psi);
int mbs_objective_trace(const mbs_model *m, const mbs_sens_options *o, int objective, const double *weights,
                        mbs_opt_trace_fn fn, void *user, mbs_error *err);

#ifdef __cplusplus
}
#endif
#endif
