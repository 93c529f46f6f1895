/*
 * mbsens/simulate.h - time integration of the equations of motion.
 *
 * Three integrators advance the state (q, qd) of a tree model:
 *
 *   trapezoidal  Newmark beta = 1/4, gamma = 1/2 (the implicit trapezoidal
 *                rule), fixed step; the nonlinear equations of a step are
 *                solved by Newton-Raphson on the inverse-dynamics residual
 *                with the tangent M + gamma h C + beta h^2 K, or by
 *                fixed-point iteration on the forward dynamics (thesis
 *                §2.4.1). Second order, no numerical damping.
 *   rk4          classical explicit Runge-Kutta, fixed step, on the
 *                first-order ODE y = [q; qd], ydot = [qd; FD(q, qd)].
 *   cvodes       SUNDIALS CVODES on the same ODE: adaptive step and order
 *                (BDF with dense Newton by default), tolerances rtol/atol.
 *
 * Two interfaces: a stepper object (mbs_integrator_create / _step / _free),
 * which leaves the loop to the caller (optimization and sensitivity code),
 * and mbs_simulate(), which runs from t0 to tf and calls a function after
 * every step.
 *
 * Euler parameters (spherical and floating joints): the equations are
 * completed along each p with the differentiated normalization
 * p.pdd = -|pd|^2 (as in mbs_forward_dynamics). After each step the drift
 * ||p| - 1| is recorded (mbs_sim_stats.euler_drift) and, unless
 * options.project is 0, the state is projected back with
 * mbs_normalize_state().
 *
 * Tangent velocities (a spherical or floating joint with "velocities":
 * "tangent", docs/tangent-space.md §9): the state is (q, v) with nv < nq.
 * Integrator rk4 steps on the manifold (RKMK4: q_n (+) z within a step, the
 * quaternions stay unit to round-off, no projection of them), and so does
 * the trapezoidal rule (z = z_p (+) D, its Newton tangent along the
 * manifold); cvodes, and closed loops, return MBS_ERR_UNSUPPORTED on such
 * a model, naming what is missing.
 *
 * Time-dependent loads are evaluated at the integrator's time through
 * mbs_data_set_time(). The applied loads of the mbs_data (body and joint
 * loads) act during the integration; the caller may change them between
 * steps.
 */
#ifndef MBSENS_SIMULATE_H
#define MBSENS_SIMULATE_H

#include <stddef.h>
#include "dynamics.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_integrator_type {
    MBS_INTEGRATOR_TRAPEZOIDAL = 0,   /* "trapezoidal" */
    MBS_INTEGRATOR_RK4,               /* "rk4" */
    MBS_INTEGRATOR_CVODES             /* "cvodes" */
} mbs_integrator_type;

/* Nonlinear solver of the trapezoidal rule. */
typedef enum mbs_nl_solver {
    MBS_SOLVER_NEWTON = 0,            /* "newton" */
    MBS_SOLVER_FIXEDPOINT             /* "fixedpoint" */
} mbs_nl_solver;

/* Linear multistep method of CVODES. */
typedef enum mbs_cvodes_method {
    MBS_CVODES_BDF = 0,   /* "bdf": dense Newton, Euler parameters projected in every step */
    MBS_CVODES_ADAMS      /* "adams": fixed-point iteration, projection at output times */
} mbs_cvodes_method;

/* When the trapezoidal rule's Newton iteration re-evaluates and factorizes
 * its tangent (the converged solution is the same to the tolerance; only
 * the cost and the iteration counts change). */
typedef enum mbs_tangent_update {
    MBS_TANGENT_ITERATION = 0,/* "iteration": every iteration (full Newton-Raphson; default) */
    MBS_TANGENT_STEP          /* "step": first iteration of every step (modified Newton) */
} mbs_tangent_update;

const char *mbs_integrator_name(mbs_integrator_type t);
int mbs_integrator_from_name(const char *name);         /* -1 if unknown */
const char *mbs_nl_solver_name(mbs_nl_solver s);
int mbs_nl_solver_from_name(const char *name);          /* -1 if unknown */
const char *mbs_cvodes_method_name(mbs_cvodes_method c);
int mbs_cvodes_method_from_name(const char *name);      /* -1 if unknown */
const char *mbs_tangent_update_name(mbs_tangent_update u);
int mbs_tangent_update_from_name(const char *name);     /* -1 if unknown */

/* ---- closed loops (src/formulations/; docs/formulations.md, "Closed-loop
 * formulations") ----
 *
 * A model with closed loops or driving constraints (mbsens/constraints.h)
 * needs one of these formulations; the open-tree integrators refuse it:
 *
 *   matrixr  independent coordinates z^i (a choice of degrees of freedom),
 *            zd = R zd^i + S b from the constraint Jacobian (least squares:
 *            redundant constraints allowed), R^T (M zdd - Q) = 0; trapezoidal
 *            rule on z^i with Newton-Raphson, the kinematic position,
 *            velocity and acceleration problems solved at every iterate.
 *   ali3p    index-3 augmented Lagrangian on the dependent coordinates with
 *            mass-orthogonal velocity and acceleration projections
 *            (penalty alpha, projection scale varsigma), trapezoidal rule
 *            with Newton-Raphson, multipliers carried over between steps
 *            with the factor lambda_factor; initial accelerations and
 *            multipliers from the penalty formulation.
 *   penalty  M zdd + Phi_q^T alpha (Phidd + 2 omega xi Phid + omega^2 Phi) = Q,
 *            trapezoidal rule with Newton-Raphson.
 *   index1   Lagrange multipliers at acceleration level, [M Phi_q^T; Phi_q 0],
 *            by recursive constraint reduction (articulated-body solves of
 *            M^-1 Phi_q^T, Kang & Yoon), with Baumgarte stabilization
 *            (omega, xi) or without; an ODE in (q, qd) integrated by the
 *            chosen integrator (rk4, cvodes, or the trapezoidal rule with
 *            its fixed-point solver; Euler parameters by completion and
 *            projection as for open trees).
 * The initial state is made consistent first: assembly (mbs_assemble) with
 * the model's fixed coordinates, then the velocity problem. */
typedef enum mbs_loop_formulation {
    MBS_LOOP_NONE = 0,       /* "none": open tree */
    MBS_LOOP_MATRIXR,        /* "matrixr" */
    MBS_LOOP_ALI3P,          /* "ali3p" */
    MBS_LOOP_PENALTY,        /* "penalty" */
    MBS_LOOP_INDEX1          /* "index1" */
} mbs_loop_formulation;

/* ALI3-P projections: the penalty (non-iterative) form
 * (M + varsigma Phi^T alpha Phi) zd = M zd* + varsigma Phi^T alpha b, or the
 * augmented-Lagrangian (iterative) one, which iterates its multipliers until
 * the violation is below the tolerance. */
typedef enum mbs_projection {
    MBS_PROJ_PENALTY = 0,    /* "penalty" (non-iterative; thesis Ch. 7) */
    MBS_PROJ_ITERATIVE       /* "iterative" */
} mbs_projection;

/* An independent coordinate of Matrix R: a joint coordinate (constant B)
 * or a global component of a named point (configuration-dependent B). */
typedef struct mbs_dof {
    int point;               /* -1: the coordinate `coord`; else a point index (mbs_point_find) */
    int coord;               /* coordinate index (point < 0) */
    int component;           /* point: 0, 1, 2 for x, y, z */
} mbs_dof;

const char *mbs_loop_formulation_name(mbs_loop_formulation f);
int mbs_loop_formulation_from_name(const char *name);  /* -1 if unknown */
const char *mbs_projection_name(mbs_projection p);
int mbs_projection_from_name(const char *name);        /* -1 if unknown */

/* 2-norms of the constraint violations at a state: |Phi|, |dPhi/dt| and
 * |d2Phi/dt2| (= |Phi_q qdd - c|), every row of the constraint vector.
 * qd, qdd may be NULL (the corresponding entries are then 0). Runs the
 * kinematics in d. */
int mbs_constraint_violation(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                             const double *qdd, double viol[3]);

/* ---- tangent of the inverse-dynamics residual ----
 *
 * The residual of the trapezoidal rule is r(q, qd, qdd) = ID(q, qd, qdd):
 * the generalized forces of mbs_inverse_dynamics (M qdd - Q, applied loads
 * of d included, at the time of d). A tangent function writes
 *     K = dr/dq,   C = dr/dqd     (nv x nv, row-major: K[i*nv + j] = dr_i/dq_j)
 * at (q, qd, qdd); on a tangent joint dq is the tangent q (+) dq, as for
 * mbs_inverse_dynamics_derivatives. q may be slightly off the Euler-parameter manifold
 * (Newton iterates); evaluate r there as it stands, without normalizing.
 * `work` holds MBS_TANGENT_WORK_SIZE(nq) doubles of scratch. The state of
 * d (its kinematics) may be overwritten. Returns MBS_OK or a negative
 * status (message in mbs_data_error(d)). The Euler-parameter completion and
 * the mass matrix (dr/dqdd) are added by the integrator. */
typedef int (*mbs_tangent_fn)(void *ctx, const mbs_model *m, mbs_data *d,
                              const double *q, const double *qd, const double *qdd,
                              double *K, double *C, double *work);

#define MBS_TANGENT_WORK_SIZE(nq) (4 * (size_t)(nq))

/* Central differences of the residual, step 6e-6 max(1, |x_j|)
 * (truncation and round-off both ~1e-11 relative). Costs 4 nq
 * inverse-dynamics evaluations. ctx is unused. */
int mbs_tangent_fd(void *ctx, const mbs_model *m, mbs_data *d,
                   const double *q, const double *qd, const double *qdd,
                   double *K, double *C, double *work);

/* The default tangent: mbs_inverse_dynamics_derivatives (exact, force
 * elements included; much cheaper than mbs_tangent_fd, docs/benchmarks.md).
 * ctx is unused. */
int mbs_tangent_analytic(void *ctx, const mbs_model *m, mbs_data *d,
                         const double *q, const double *qd, const double *qdd,
                         double *K, double *C, double *work);

/* ---- options ---- */

typedef struct mbs_sim_options {
    mbs_fd_algorithm formulation;     /* forward dynamics for the initial accelerations,
                                       * rk4, cvodes and the fixed-point solver (fr) */
    mbs_ref_point ref;                /* reference point of the recursions (com) */
    mbs_integrator_type integrator;   /* (trapezoidal) */
    mbs_nl_solver solver;             /* trapezoidal: newton or fixedpoint (newton) */
    double t0;                        /* initial time (0) */
    double dt;                        /* step of the fixed-step methods and output
                                       * interval of cvodes, > 0 (1e-3) */
    double tf;                        /* final time of mbs_simulate (1) */
    double tolerance;                 /* trapezoidal: convergence when the 2-norm of the
                                       * increment dz is below this (1e-10); the fixed
                                       * point also stops when its estimated distance
                                       * to the solution is */
    int max_iterations;               /* trapezoidal: iterations per step (20) */
    mbs_tangent_update tangent_update;/* trapezoidal Newton: when the tangent is
                                       * re-evaluated (iteration) */
    double rtol, atol;                /* cvodes: relative and absolute tolerances (1e-8, 1e-10) */
    mbs_cvodes_method cvodes_method;  /* (bdf) */
    long cvodes_max_steps;            /* cvodes: internal steps per output interval (100000) */
    int project;                      /* project Euler parameters after every step (1) */
    mbs_tangent_fn tangent;           /* Newton tangent; NULL: mbs_tangent_analytic */
    void *tangent_ctx;
    /* closed loops (see above) */
    mbs_loop_formulation loop;        /* (none) */
    double penalty;                   /* alpha, the same for every constraint row (1e9) */
    double proj_scale;                /* ali3p: varsigma, projection penalty varsigma alpha (1) */
    mbs_projection projection;        /* ali3p (penalty) */
    double proj_tol;                  /* ali3p: a projection is skipped when the 2-norm of the
                                       * violation is at most this; 0: always project (0) */
    double lambda_factor;             /* ali3p: lambda* of a step starts from this times the
                                       * previous one (1; thesis: 0.95 .. 0.99 against the drift
                                       * of undetermined multipliers of redundant constraints) */
    int tangent_keep;                 /* ali3p, matrixr, penalty: keep the force part
                                       * gamma h C + beta h^2 K of the Newton tangent (its tangent
                                       * sweeps) across iterations and steps, re-evaluated when a
                                       * step needs more than 3 iterations or h changes (ali3p
                                       * redoes a step that failed with a kept one); M (once per
                                       * step) and the constraint terms are always current (1);
                                       * 0: every iteration or step, as tangent_update says */
    double omega, xi;                 /* penalty formulation (and the ali3p initialization),
                                       * index1 Baumgarte: natural frequency and damping
                                       * ratio (10, 1) */
    int baumgarte;                    /* index1: stabilize with omega, xi (1) or not (0) */
    const mbs_dof *dofs;              /* matrixr: the independent coordinates; NULL (or
                                       * ndofs = 0): the model's "assembly.fixed" coordinates
                                       * when they are a valid choice, else chosen from the
                                       * constraint Jacobian (pivoted QR) */
    int ndofs;
} mbs_sim_options;

/* The defaults in parentheses above. */
mbs_sim_options mbs_sim_options_default(void);

/* The defaults overridden by the model's "simulation" section
 * (docs/model-format.md). */
mbs_sim_options mbs_model_sim_options(const mbs_model *m);

/* The most steps a run may take: (tf - t0) / dt, and also max(|t0|, |tf|) / dt
 * (so that every time t0 + k dt of the grid is resolved to better than
 * 1e-6 dt in double precision), at most 1e9; split longer runs with the
 * stepper below. */
#define MBS_SIM_MAX_STEPS 1000000000L

/* MBS_OK, or MBS_ERR_ARG with a message naming the bad member (also a
 * time grid of more than MBS_SIM_MAX_STEPS steps). */
int mbs_sim_options_check(const mbs_sim_options *o, mbs_error *err);

/* Steps of a run from t0 to tf with step dt as mbs_simulate makes them
 * (the last one shortened to end at tf; a remainder below 1e-9 dt is
 * absorbed by the step before): 0 .. MBS_SIM_MAX_STEPS, or -1 for a
 * grid that mbs_sim_options_check refuses as too long. */
long mbs_sim_steps(const mbs_sim_options *o);

/* ---- statistics ---- */

typedef struct mbs_sim_stats {
    long steps;               /* integration steps (cvodes: internal steps) */
    long outputs;             /* calls of mbs_integrator_step (output points after t0) */
    long iterations;          /* nonlinear iterations in total (trapezoidal; cvodes:
                               * its nonlinear solver iterations) */
    int iterations_max;       /* most iterations in one step (trapezoidal) */
    double iterations_mean;   /* iterations / steps */
    long fevals;              /* evaluations of the dynamics made by the integrator:
                               * inverse-dynamics residuals, forward dynamics, cvodes
                               * right-hand sides (also for its difference-quotient
                               * Jacobians); not those inside tangent functions */
    long tangent_evals;       /* tangent (Jacobian) evaluations */
    long factorizations;      /* LU factorizations (trapezoidal Newton; cvodes setups) */
    long error_test_fails;    /* cvodes */
    double energy0;           /* mechanical energy at t0: kinetic + gravity + springs
                               * (mbs_elastic_energy) */
    double energy;            /* ... at the current time */
    double energy_drift;      /* max |E(t) - E(t0)| over the output points (the
                               * dissipated energy when dampers, joint forces or
                               * loads act) */
    double euler_drift;       /* max ||p| - 1| over the unit quaternions (Euler-rate
                               * and tangent joints) and output points, before
                               * projection (0 if none) */
    double violation[3];      /* closed-loop formulations: max over the output points of
                               * |Phi|_2, |dPhi/dt|_2, |d2Phi/dt2|_2 (mbs_constraint_violation) */
    long projections[2];      /* ali3p: velocity and acceleration projections applied */
} mbs_sim_stats;

/* ---- stepper ---- */

typedef struct mbs_integrator mbs_integrator;

/* Allocates everything the integrator needs (steps do not allocate). d is
 * used for every evaluation and must outlive the integrator; its reference
 * point is set to opts->ref. The state is the model's initial state at
 * opts->t0 until mbs_integrator_reset is called. NULL on failure (err). */
mbs_integrator *mbs_integrator_create(const mbs_model *m, mbs_data *d,
                                      const mbs_sim_options *opts, mbs_error *err);
void mbs_integrator_free(mbs_integrator *it);

/* Set the state at time t (q, qd may be NULL: the model's q0, qd0), compute
 * the initial accelerations, reset the statistics. Euler parameters must be
 * normalized (|p| = 1 to 1e-6, p.pd = 0 is enforced by projection). */
int mbs_integrator_reset(mbs_integrator *it, double t, const double *q,
                         const double *qd, mbs_error *err);

/* Advance from the current time t to t + h (h > 0): one step of the
 * fixed-step methods, adaptive steps of cvodes to the output time t + h.
 * Afterwards d holds the kinematics of the new (q, qd, qdd). On failure err
 * names the time and the cause, e.g. "trapezoidal rule (newton): no
 * convergence at t = 0.25 ..."; the trapezoidal rule then keeps its state,
 * the other methods may not (reset before going on). */
int mbs_integrator_step(mbs_integrator *it, double h, mbs_error *err);

double mbs_integrator_time(const mbs_integrator *it);
const double *mbs_integrator_q(const mbs_integrator *it);
const double *mbs_integrator_qd(const mbs_integrator *it);
const double *mbs_integrator_qdd(const mbs_integrator *it);
void mbs_integrator_stats(const mbs_integrator *it, mbs_sim_stats *stats);
const mbs_sim_options *mbs_integrator_options(const mbs_integrator *it);

/* ---- whole runs ---- */

/* Called at t0 and after every step, with the kinematics of (q, qd, qdd)
 * in d (so mbs_point_kinematics etc. may be used). Return 0 to continue;
 * any other value stops the run and is returned by mbs_simulate. */
typedef int (*mbs_sim_callback)(void *user, const mbs_model *m, mbs_data *d, double t,
                                const double *q, const double *qd, const double *qdd);

/* Integrate from opts->t0 to opts->tf with steps opts->dt (the last step is
 * shortened to end exactly at tf). q0, qd0 may be NULL (the model's initial
 * state); cb may be NULL; stats may be NULL (then the mechanical energy,
 * which only the statistics report, is not evaluated after every step).
 * Returns MBS_OK, the callback's non-zero value, or a negative status with
 * err filled. */
int mbs_simulate(const mbs_model *m, mbs_data *d, const mbs_sim_options *opts,
                 const double *q0, const double *qd0, mbs_sim_callback cb, void *user,
                 mbs_sim_stats *stats, mbs_error *err);

/* ---- outputs (the model's "outputs" section) ---- */

typedef enum mbs_output_kind {
    MBS_OUTPUT_POSITION = 0,   /* of a named point: 3 columns NAME.x NAME.y NAME.z */
    MBS_OUTPUT_VELOCITY,       /* NAME.vx NAME.vy NAME.vz */
    MBS_OUTPUT_ACCELERATION,   /* NAME.ax NAME.ay NAME.az */
    MBS_OUTPUT_ENERGY,         /* 4 columns: kinetic_energy, potential_energy (gravity),
                                * elastic_energy (springs), energy (their sum) */
    MBS_OUTPUT_POSE,           /* of a body: 7 columns BODY.x BODY.y BODY.z (origin of the body
                                * frame) and BODY.qw BODY.qx BODY.qy BODY.qz (orientation: the
                                * unit quaternion of its rotation matrix, qw >= 0) */
    MBS_OUTPUT_FORCE           /* of 1 or 3 coordinates: NAME.force, the generalized force of
                                * inverse dynamics tau = M qdd - Q (force elements included, at
                                * the state's time): what the coordinate's drivers, loop
                                * constraints or actuators supply. Needs the whole state:
                                * mbs_output_eval_state */
} mbs_output_kind;

typedef struct mbs_output {
    mbs_output_kind kind;
    int point;                 /* named point index (position/velocity/acceleration), else -1 */
    int body;                  /* body index (pose), else -1 */
    int ncoord;                /* force: 1 or 3 coordinates, coord[0 .. ncoord - 1] */
    int coord[3];
} mbs_output;

int mbs_model_noutputs(const mbs_model *m);
mbs_output mbs_model_output(const mbs_model *m, int k);
int mbs_output_ncolumns(const mbs_output *o);                 /* 3, energy 4, pose 7, force ncoord */
#define MBS_OUTPUT_MAX_COLUMNS 7
/* Name of column c (0..ncolumns-1) into buf; returns the length snprintf
 * would write. */
int mbs_output_column_name(const mbs_model *m, const mbs_output *o, int c,
                           char *buf, size_t len);
/* Values of the columns from the kinematics held in d, made at q (the
 * springs' elastic energy needs q): MBS_OK, or MBS_ERR_ARG with values
 * untouched for a NULL argument, a point or body out of range, and a
 * force output, which needs the velocities, accelerations and loads that
 * d does not hold (mbs_output_eval_state evaluates it). */
int mbs_output_eval(const mbs_model *m, const mbs_data *d, const double *q,
                    const mbs_output *o, double *values);
/* Values of the columns of any output at the state (t, q, qd, qdd): runs on
 * d what the output needs (the kinematics, or inverse dynamics with the
 * loads at t), overwriting its kinematics; inside a simulation's step
 * callback, give it a data of its own. MBS_OK, MBS_ERR_ARG, or
 * MBS_ERR_NUMERIC for a force that is not finite (message in d). */
int mbs_output_eval_state(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                          const double *qdd, const mbs_output *o, double *values);

#ifdef __cplusplus
}
#endif
#endif
