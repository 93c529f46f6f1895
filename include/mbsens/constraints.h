/*
 * mbsens/constraints.h - closed loops, driving constraints and the
 * kinematic problems (assembly, velocity, acceleration).
 *
 * A model whose joints form closed loops is opened into a spanning tree by
 * cutting one joint per independent loop (docs/model-format.md, "Closed
 * loops"). The tree's joint coordinates q are then subject to constraints
 *
 *     Phi(q, t) = 0
 *
 * whose rows are, in this order:
 *   1. loop closure: the equations of every cut joint (cut joints in the
 *      order of mbs_cut_*), written on global points and vectors of its two
 *      joint frames (thesis §3.5; docs/formulations.md §8);
 *   2. driving constraints: q_k - f(t) = 0 or |r2 - r1| - f(t) = 0;
 *   3. Euler-parameter normalization p.p - 1 = 0, one per spherical or
 *      floating tree joint (in body order).
 * mbs_model_nconstraints() counts all three, as the thesis does (Table 7.8).
 * The open-tree solvers of mbsens already keep |p| = 1 by completion, so a
 * formulation that does the same uses only the first
 * mbs_model_nconstraints(m) - mbs_model_neuler_constraints(m) rows: Euler
 * rows are last, so with row-major storage they are simply left off.
 *
 * Conventions: the Jacobian Phi_q is the derivative with respect to the
 * joint coordinates q (Euler parameters included; the thesis's Phi_z-hat),
 * dense, ncon x nq, row-major. Velocity: Phi_q qd = b with b = -Phi_t.
 * Acceleration: Phi_q qdd = c with c = -(dPhi_q/dt) qd - dPhi_t/dt, so that
 * d2Phi/dt2 = Phi_q qdd - c. Everything is independent of the reference
 * point set on the data (mbs_data_set_ref).
 *
 * Every evaluation runs the kinematics on d at the given state, and leaves
 * the results there (positions; velocities; accelerations at qdd = 0).
 */
#ifndef MBSENS_CONSTRAINTS_H
#define MBSENS_CONSTRAINTS_H

#include "data.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mbs_driver_type {
    MBS_DRIVER_COORDINATE = 0,   /* q_k - f(t) = 0 */
    MBS_DRIVER_DISTANCE,         /* |r2 - r1| - f(t) = 0 */
    MBS_DRIVER_TYPE_COUNT
} mbs_driver_type;

/* ---- sizes (mbs_model_nconstraints() in model.h is their sum) ---- */
int mbs_model_nloop_constraints(const mbs_model *m);    /* loop-closure rows */
int mbs_model_ndriver_constraints(const mbs_model *m);  /* driving rows */
int mbs_model_neuler_constraints(const mbs_model *m);   /* Euler normalization rows (last) */

/* ---- cut joints (one per independent loop) ---- */
int mbs_model_ncuts(const mbs_model *m);
const char *mbs_cut_name(const mbs_model *m, int k);
mbs_joint_type mbs_cut_type(const mbs_model *m, int k);
/* side 0: the parent-side body of the joint as written, 1: the child side. */
int mbs_cut_body(const mbs_model *m, int k, int side);
int mbs_cut_row(const mbs_model *m, int k);              /* first row */
int mbs_cut_nrows(const mbs_model *m, int k);
int mbs_cut_user(const mbs_model *m, int k);             /* 1 if marked "cut": true */
/* Bodies of the loop that cut joint k closes (body side 0 up to the common
 * ancestor, then down to side 1; the ground is body 0). Returns the count. */
int mbs_cut_loop(const mbs_model *m, int k, const int **bodies);
int mbs_cut_find(const mbs_model *m, const char *name);  /* -1 if absent */
/* Geometry of cut joint k as mbs_joint_frames: point and frame on the side-0
 * body (P0, X0, body-local) and on the side-1 body. MBS_OK or MBS_ERR_ARG. */
int mbs_cut_frames(const mbs_model *m, int k, double P0[3], double X0[9], double P1[3], double X1[9]);
/* Number of loop-closure rows of a cut joint of type t: spherical 3,
 * revolute 6, cylindrical 6, prismatic 9, cardan 4, planar 4, fixed 9,
 * floating 0 (-1 for an invalid type). */
int mbs_cut_type_nrows(mbs_joint_type t);

/* ---- driving constraints ---- */
int mbs_model_ndrivers(const mbs_model *m);
const char *mbs_driver_name(const mbs_model *m, int k);
mbs_driver_type mbs_driver_type_of(const mbs_model *m, int k);
int mbs_driver_row(const mbs_model *m, int k);

/* Name of constraint row k: "loop j4: point x", "driver crank",
 * "euler j2" ... (NULL if out of range). */
const char *mbs_constraint_name(const mbs_model *m, int row);

/* ---- evaluation (n = mbs_model_nconstraints rows) ----
 * Return MBS_OK, or MBS_ERR_NUMERIC for a non-finite or non-normalized
 * state (message in mbs_data_error). */

/* Everything at once, one kinematics pass: any output may be NULL.
 *   phi   (n)      Phi(q, t)
 *   Phi_q (n x nq) Jacobian, row-major
 *   phid  (n)      dPhi/dt = Phi_q qd + Phi_t (needs qd)
 *   b     (n)      -Phi_t
 *   c     (n)      -(dPhi_q/dt) qd - dPhi_t/dt (needs qd) */
int mbs_constraint_eval(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double t,
                        double *phi, double *Phi_q, double *phid, double *b, double *c);
int mbs_constraints(const mbs_model *m, mbs_data *d, const double *q, double t, double *phi);
int mbs_constraint_jacobian(const mbs_model *m, mbs_data *d, const double *q, double t, double *Phi_q);
int mbs_constraint_velocity(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double t,
                            double *phid);
int mbs_constraint_velocity_rhs(const mbs_model *m, mbs_data *d, const double *q, double t, double *b);
int mbs_constraint_acceleration_rhs(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                                    double t, double *c);

/* Numerical rank of Phi_q (every row, Euler rows included) at q: the number
 * of independent constraint equations (singular values above 1e-11 times
 * the largest). nq - rank is the mobility (degrees of freedom) of the
 * mechanism at q; n - rank the number of redundant equations. */
int mbs_constraint_rank(const mbs_model *m, mbs_data *d, const double *q, double t, int *rank);

/* ---- kinematic problems (thesis §3.1) ----
 * Each solves the constraints stacked with rows B that hold chosen
 * coordinates ("fixed" coordinates: the degrees of freedom imposed by the
 * user), in the least-squares sense with a minimum-norm solution (SVD), so
 * redundant constraints and incomplete DOF choices are handled:
 *   assembly      [Phi_q; B] dq = [-Phi; 0], q += dq, until |dq|_2 < tol
 *   velocity      [Phi_q; B] qd = [b; B qd_given]
 *   acceleration  [Phi_q; B] qdd = [c; B qdd_given]
 * The fixed coordinates keep the values they have on input. */
typedef struct mbs_kin_options {
    const int *fixed;       /* coordinates held fixed (indices in q) */
    int nfixed;             /* < 0: the model's "assembly.fixed" list (fixed is ignored) */
    double tol;             /* <= 0: the model's (default 1e-10), on |dq|_2 */
    int max_iter;           /* <= 0: the model's (default 50) */
    double residual_tol;    /* <= 0: 1e-8; assembly fails if max |Phi_k| stays above it */
    int euler_rows;         /* 1 (default): include the Euler normalization rows; 0: leave
                             * them out and only renormalize after every step */
} mbs_kin_options;

/* The model's "assembly" section: the coordinates it holds fixed (indices
 * in q; returns the count) and the Newton-Raphson tolerance and iteration
 * limit (any output may be NULL). */
int mbs_model_assembly_fixed(const mbs_model *m, const int **fixed);
void mbs_model_assembly_settings(const mbs_model *m, double *tol, int *max_iter);

/* The model's defaults (nfixed = -1, ...). */
void mbs_kin_options_default(mbs_kin_options *o);

typedef struct mbs_assembly_report {
    int iterations;
    double step;            /* |dq|_2 of the last iteration */
    double residual;        /* max |Phi_k| at the end */
    int worst_row;          /* row of that residual */
} mbs_assembly_report;

/* Assemble q (in/out, length nq) at time t. opt and rep may be NULL.
 * On failure (MBS_ERR_NUMERIC) q holds the last iterate and the message
 * names the loop with the largest residual, its bodies and the value. */
int mbs_assemble(const mbs_model *m, mbs_data *d, double *q, double t, const mbs_kin_options *opt,
                 mbs_assembly_report *rep);
/* Consistent velocities qd (in/out) at an assembled q. */
int mbs_solve_velocity(const mbs_model *m, mbs_data *d, const double *q, double *qd, double t,
                       const mbs_kin_options *opt);
/* Consistent accelerations qdd (in/out) at an assembled (q, qd). */
int mbs_solve_acceleration(const mbs_model *m, mbs_data *d, const double *q, const double *qd, double *qdd,
                           double t, const mbs_kin_options *opt);

#ifdef __cplusplus
}
#endif
#endif
