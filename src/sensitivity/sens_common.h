/*
 * sens_common.h - the trajectory-sensitivity methods and what they share
 * (internal; docs/sensitivity.md). The dispatcher (sensitivity.c) calls the
 * methods declared at the end; the methods call the shared pieces of
 * sens_common.c, loops_kinematic_init.c and fd.c, never the dispatcher.
 */
#ifndef MBS_SENS_COMMON_H
#define MBS_SENS_COMMON_H

#include <lapacke.h>

#include "mbsens/mbsens.h"
#include "mbsens/sensitivity.h"
#include "kernels/data.h"
#include "dynamics/derivatives.h"
#include "../base/error.h"
#include "../integrators/integrator_impl.h"

struct sens_team;

/* Work shared by a run: sizes, the result arrays, scratch. */
typedef struct sens_run {
    const mbs_model *m;
    const mbs_sens_options *o;
    mbs_data *d;
    int nq, nv, np, nobj;  /* coordinates, velocities, parameters, objectives */
    double *psi, *grad;     /* result arrays (nobj, nobj * np) */
    char msg[MBS_ERROR_MSG_LEN];
    /* the program's own objective (o->objective), index m->nobj: scratch
     * (rho, then its gradient: g_q, g_qd, g_qdd, g_rho) and its failure */
    double *ubuf;
    int ufail, uvalid;      /* uvalid: ubuf holds g and its gradient at (ut, the state stored there) */
    double ut, ug;
    char umsg[MBS_ERROR_MSG_LEN];
    struct sens_team *team;   /* the DDM's parameter columns on threads (NULL: serially) */
    double *tau;            /* objectives reading coordinate forces: the inverse dynamics at the
                             * state of the last sens_objectives (nv), then its tangent (nv);
                             * NULL without such objectives */
} sens_run;

/* 1 if an objective of m reads a coordinate force (the inverse dynamics,
 * hence every body, element load and dynamic parameter), else 0 */
int sens_objectives_read_forces(const mbs_model *m);

/* OpenBLAS on one thread while `threads` > 1 threads compute (the fd
 * reference's runs, the DDM's columns): a threaded BLAS under each of them
 * would oversubscribe the cores and add in another order than the serial
 * one (mbsens/batch.h). Returns the setting to restore, then
 * sens_blas_restore(threads, saved). Process-wide. */
int sens_blas_single(int threads);
void sens_blas_restore(int threads, int saved);

/* The DDM's parameter columns on threads. Thread 0 is the run itself; each
 * other thread has a copy of the run (options, its own mbs_data with the
 * run's reference point, its own scratch for the program's objective) and
 * every thread a column workspace of `per` doubles, all allocated at
 * set-up. Thread t of nth computes the columns j = t, t + nth, ...: each
 * column is computed as serially, from the same primal state, so the
 * results are bit for bit those of one thread. In a parallel region (a
 * batch) the team is one thread. */
typedef struct sens_team {
    int nt;                 /* threads (1: serially) */
    sens_run *run;          /* nt - 1: the runs of threads 1 .. nt - 1 */
    double *ws;             /* nt x per doubles */
    size_t per;
    int blas;               /* OpenBLAS's setting before (sens_blas_single; 0: not changed) */
} sens_team;
/* Open the team of r (r->o->threads, at most max_cols threads) and set
 * r->team. MBS_OK, or MBS_ERR_NOMEM (err set; the team is then safe to
 * close). */
int sens_team_open(sens_team *T, sens_run *r, int max_cols, size_t per, mbs_error *err);
/* The program's objective's first failure on a thread into r; frees;
 * r->team = NULL. */
void sens_team_close(sens_team *T, sens_run *r);
/* Inside a parallel region of nt threads: the run and the column
 * workspace of thread t (r itself for t = 0, or without a team). */
sens_run *sens_team_run(sens_run *r, int t);
double *sens_team_ws(sens_run *r, int t);
/* The threads a team's region runs on (1 without a team). */
int sens_team_size(const sens_run *r);
/* The work of thread th of a team of nth in one of its regions. */
typedef void (*sens_team_fn)(void *ctx, int th, int nth);
/* body(ctx, th, nth) on every thread of r's team, in a parallel region;
 * a team of one (no team, or inside another parallel region) calls
 * body(ctx, 0, 1) directly: libgomp enters and leaves even a region of
 * one thread with a system call (a futex wake), which at a few regions a
 * step costs more than the step's own work on some machines. */
void sens_team_do(sens_run *r, sens_team_fn body, void *ctx);
/* The primal state of the objectives' tangents at (q, qd, qdd, t) on the
 * data of r (what sens_objectives leaves): a thread's first step before
 * its columns of sens_objectives_d. */
void sens_objectives_primal(sens_run *r, const double *q, const double *qd, const double *qdd, double t);

/* Objectives of a run: the model's, plus the program's own if any. */
int sens_nobj(const mbs_model *m, const mbs_sens_options *o);
/* Scratch for the program's objective (none without one) and for the
 * coordinate forces of the objectives (r->tau); free with
 * sens_run_user_free. Returns MBS_OK or MBS_ERR_NOMEM. */
int sens_run_user_init(sens_run *r);
void sens_run_user_free(sens_run *r);
/* The program's objective failed during the run: its message into err. */
int sens_run_user_check(const sens_run *r, mbs_error *err);

/* Integrand g (integral part, terminal = 0) or terminal part G (1) of every
 * objective at (q, qd, qdd, t): runs the primal kinematics and loads in d
 * (mbs_deriv_id_primal) and writes g[nobj]. */
void sens_objectives(sens_run *r, const double *q, const double *qd, const double *qdd,
                     double t, int terminal, double *g);

/* Tangents of the objectives along (dq, dqd, dqdd, dx) at the primal left by
 * sens_objectives (same state): dg[nobj]. param: the parameter whose
 * direction dx is (mbs_deriv_param_dx), or -1 (dx NULL or not one
 * parameter's): the program's objective takes its g_rho[param] from it. */
void sens_objectives_d(sens_run *r, const double *q, const double *qd, const double *qdd,
                       const double *dq, const double *dqd, const double *dqdd, const double *dx, int param,
                       double t, int terminal, double *dg);

/* The forward methods' objectives at (q, qd, qdd, t): values g[nobj] and
 * parameter gradients dg (nobj x np, row-major) from the state
 * sensitivities of parameter j at Sz, Szd, Szdd + j * stride. Scratch: dgj
 * (nobj), dx (nx); with a team, thread t > 0 takes them from its column
 * workspace (SENS_OBJ_WS doubles at its start). */
#define SENS_OBJ_WS(m, nobj) ((size_t)(nobj) + (size_t)(m)->nx + 1)
void sens_objectives_ddm(sens_run *r, const double *q, const double *qd, const double *qdd, double t, int terminal,
                         const double *Sz, const double *Szd, const double *Szdd, size_t stride, double *g,
                         double *dg, double *dgj, double *dx);
/* psi += w g and grad += w dg (a quadrature weight; 1 for terminal parts). */
void sens_accumulate(sens_run *r, double w, const double *g, const double *dg);

/* Room for one more record in two arrays grown together (the adjoints'
 * stored forward runs): when *n == *cap both are reallocated to twice
 * (at least `first`) entries of a_size and b_size bytes. 0, or -1 out of
 * memory (the arrays stay valid and keep their contents). */
int sens_grow2(void **a, size_t a_size, void **b, size_t b_size, size_t n, size_t *cap, size_t first);

/* b <- A^-T b for an LU factor of mbs_dense_lu (col-major n x n, 1-based
 * pivots as LAPACK's): the transposed solves of the discrete adjoints. */
void sens_lu_solve_t(int n, const double *A, const lapack_int *piv, double *b);

/* The forward run of a method that differentiates the trapezoidal rule:
 * the run's options with the trapezoidal integrator, the integrator on its
 * own data and, for SENS_FWD_MATRIXR, a Matrix R form on r->d over the
 * integrator's independent coordinates (the step linearization's).
 *   SENS_FWD_OPEN     open trees: Newton with the analytical tangent unless
 *                     one is set, no Euler-parameter projection (the
 *                     completed equations keep |p| = 1)
 *   SENS_FWD_ALI3P, SENS_FWD_MATRIXR   that closed-loop formulation
 *   SENS_FWD_LOOP     the options' own loop formulation */
enum { SENS_FWD_OPEN, SENS_FWD_ALI3P, SENS_FWD_MATRIXR, SENS_FWD_LOOP };
typedef struct sens_fwd {
    mbs_sim_options so;
    mbs_data *d;
    mbs_integrator *it;
    struct mbs_form *g;
} sens_fwd;
/* MBS_OK, or the error's code (err set); f is then safe to close. */
int sens_fwd_open(sens_fwd *f, sens_run *r, int kind, mbs_error *err);
/* The integrator's statistics into stats (may be NULL), then frees. */
void sens_fwd_close(sens_fwd *f, mbs_sim_stats *stats);

/* A forward method's differentiated step: after the integrator took the
 * step of length h to t (its state q, qd, qdd), update the sensitivities
 * the march reads. */
typedef int (*sens_advance_fn)(void *ctx, double t, double h, const double *q, const double *qd, const double *qdd,
                               mbs_error *err);

/* The forward methods' march (DDM of the trapezoidal rule, ALI3-P and
 * Matrix R): from the integrator's initial state to so->tf in steps of
 * so->dt, psi and its gradient by the trapezoidal quadrature of the
 * objectives and of their tangents along the state sensitivities of
 * parameter j at Sz, Szd, Szdd + j * stride (set for t0 by the caller,
 * updated by advance after each step), the terminal terms at tF, the
 * history callback at every point. */
int sens_ddm_march(sens_run *r, mbs_integrator *it, const mbs_sim_options *so, const double *Sz,
                   const double *Szd, const double *Szdd, size_t stride, sens_advance_fn advance, void *ctx,
                   mbs_error *err);

/* Mass matrix at q without state checks (into M, nv x nv row-major). */
int sens_mass_matrix(sens_run *r, const double *q, double *M);

/* Adds w times the gradient of objective k's part (integral or terminal)
 * with respect to q, qd, qdd to gq, gqd, gqdd, by unit tangents at the
 * primal left by sens_objectives at the same state. Scratch: e (2 nv),
 * dg (nobj). */
void sens_objective_state_gradient(sens_run *r, int k, const double *q, const double *qd,
                                   const double *qdd, double t, int terminal, double w, double *gq,
                                   double *gqd, double *gqdd, double *e, double *dg);

/* The trapezoidal step's tangent S' is mbs_trap_assemble_tangent
 * (src/integrators/trapezoidal.c, the integrator's own). */
/* Tangent of the completed residual: dr (raw tangent, in place) becomes dr'. */
void sens_trap_complete_d(const mbs_model *m, const double *z, const double *zd, const double *zdd,
                          const double *r0, const double *dz, const double *dzd, const double *dzdd,
                          double *dr);

/* y = M'^-1 x at q (M' = M completed along the Euler parameters) by the
 * articulated-body factors (O(n)); scratch: nv doubles. Overwrites the
 * kinematics in r->d. */
void sens_solve_mprime(sens_run *r, const double *q, const double *qd, const double *x, double *y,
                       double *scratch);

/* Parameters that only set numbers of force elements and of functions no
 * objective uses (param_products.c): flags[j] = 1; 2 + f when every target
 * is a value of spline function f. */
void sens_param_classify(const mbs_model *m, int *element_only_flags);

/* The adjoints' parameter products nu . dr/drho_j (param_products.c). */
typedef struct sens_pprod {
    int *flag;              /* sens_param_classify, per parameter */
    int *gen, ngen;         /* parameters with a product of their own (flag 0, 1) */
    int *objp, nobjp;       /* parameters the objectives may depend on (flag 0) */
    int *fn, nfn;           /* spline functions whose values are parameters */
    size_t *acc_off, nacc;  /* per such function: 2 n accumulators (mbs_spline_adj_*) */
    double *acc;
    double *S;              /* per such function: nu . dr/df at the last evaluation */
    double *prod;           /* per gen entry: nu . dr/drho at the last evaluation */
    double *W, *dx, *dr;    /* scratch: 6 (nb + 1), nx (kept zero), nv */
} sens_pprod;
int sens_pprod_init(sens_pprod *pp, const mbs_model *m, int all_obj, mbs_error *err);
void sens_pprod_free(sens_pprod *pp);
/* Keep only the element-only parameters (flag >= 1) in gen: the caller
 * forms the general parameters' columns itself (the closed-loop DAVM). */
void sens_pprod_elements_only(sens_pprod *pp);
/* At (q, qd, qdd), time of r->d: what & 1: the products of the gen
 * parameters (prod; O(1) each for flag 1, a tangent sweep for flag 0);
 * what & 2: S of every spline function (O(1) each). */
void sens_pprod_eval(sens_run *r, sens_pprod *pp, const double *q, const double *qd, const double *qdd,
                     const double *nu, int what);
/* grad[gen] += w prod; the splines' accumulators += w S W(t). */
void sens_pprod_add(sens_run *r, sens_pprod *pp, double t, double w, double *grad);
/* grad[knot parameters] += the accumulated knot gradients (O(p) once); the
 * accumulators are zeroed for the next sweep. */
void sens_pprod_finish(sens_run *r, sens_pprod *pp, double *grad);

/* Methods (each fills r->psi and r->grad). */
int sens_ddm_trapezoidal(sens_run *r, mbs_sim_stats *stats, mbs_error *err);
int sens_ddm_rk4(sens_run *r, mbs_sim_stats *stats, mbs_error *err);
int sens_davm_trapezoidal(sens_run *r, mbs_sim_stats *stats, mbs_error *err);
int sens_cavm(sens_run *r, mbs_sim_stats *stats, mbs_error *err);

/* Closed loops, direct differentiation of the discrete steps (ddm_ali3p.c,
 * ddm_matrixr.c; docs/formulations.md "Sensitivities of the closed-loop
 * formulations").
 *
 * The discrete adjoints (davm_ali3p.c, davm_matrixr.c)
 * share the DDMs' step linearizations (lin_ali3p.c,
 * lin_matrixr.c). For any other adjoint: the forward data
 * of every step is exposed by the stepper, after each mbs_integrator_step,
 * through mbs_form_last_step(it) (src/formulations/form_impl.h,
 * mbs_form_step): t, h; the converged z; the unprojected Newmark values
 * zd_star, zdd_star at z; the projected zd, zdd (the integrator's state);
 * lambda (ali3p: lambda* after the last update, the multipliers of
 * r + Phi_q^T lambda = 0); sigma, kappa (iterative projections: their
 * accumulated multipliers; 0 for the penalty projections — an adjoint, like
 * ddm_ali3p.c, should take the projection multipliers from the corrections,
 * Phi_q^T sigma = -M (zd - zd*) (minimum norm), not from varsigma alpha
 * times a residual at round-off); vel_projected / acc_projected (the branch taken:
 * an adjoint must skip exactly the projections the step skipped); matrixr:
 * zi, zdi, zddi (independent coordinates; z, zd, zdd follow from the
 * kinematic problems, mbs_form_matrixr_kinematics, warm-started from the
 * stored z). The arrays are overwritten by the next step: copy them (n
 * doubles each for z, zd, zdd, zd_star, zdd_star, nc for lambda, 2 flags
 * per step) to store the trajectory. The t0 record (h = 0) holds the
 * penalty (ali3p) or Matrix R initial accelerations and multipliers. The
 * derivative building blocks are in src/formulations/form_impl.h
 * (mbs_form_primal / mbs_form_tangent: residual and constraint tangents
 * along any direction, force elements included) and ddm_ali3p.c (the exact
 * step tangent, the projection derivatives). */
int sens_ddm_ali3p(sens_run *r, mbs_sim_stats *stats, mbs_error *err);
/* Kinematic sensitivities of the initial state of a closed-loop model
 * (loops_kinematic_init.c): the assembly with the model's fixed coordinates held and
 * the velocity problem, z0' and zd0' (n x np, column per parameter), by
 * minimum-norm least squares as the kinematic problems. */
int sens_loops_kinematic_init(sens_run *r, double t, const double *z, const double *zd, const double *zdd,
                              double *Z, double *Zd, mbs_error *err);
int sens_ddm_matrixr(sens_run *r, mbs_sim_stats *stats, mbs_error *err);
/* Discrete adjoint of ALI3-P on the DDM's step linearization
 * (davm_ali3p.c, lin_ali3p.c). */
int sens_davm_ali3p(sens_run *r, mbs_sim_stats *stats, mbs_error *err);
/* ... and of Matrix R (davm_matrixr.c, lin_matrixr.c). */
int sens_davm_matrixr(sens_run *r, mbs_sim_stats *stats, mbs_error *err);
/* Continuous adjoint of the closed-loop formulations (matrixr, ali3p): the
 * constrained equations in independent coordinates, backward RK4 on the
 * stored forward run (cavm_loops.c). */
int sens_cavm_loops(sens_run *r, mbs_sim_stats *stats, mbs_error *err);

/* Complex-step reference on the RK4 scheme (complex_step.c). */
int mbs_sens_complex_step_rk4(const mbs_model *m, const mbs_sim_options *so, double *psi,
                              double *grad, mbs_error *err);

/* psi only, by the integrator of the options (trapezoidal quadrature on the
 * output grid; fd.c, for the fd reference). */
int sens_psi_only(const mbs_model *m, const mbs_sens_options *o, double *psi,
                  mbs_sim_stats *stats, mbs_error *err);
/* The fd reference: central differences of psi over whole simulations
 * (fd.c). */
int sens_fd(sens_run *r, mbs_sim_stats *stats, mbs_error *err);

#endif
