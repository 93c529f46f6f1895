/*
 * form_impl.h - the closed-loop formulations (internal; src/formulations/,
 * docs/formulations.md "Closed-loop formulations").
 *
 * One object, mbs_form, owned by the integrator (it->form) when a loop
 * formulation is selected: the shared evaluation core (form_core.c), and
 * the formulations
 *   ali3p.c    index-3 augmented Lagrangian with projections (a stepper)
 *   matrixr.c  Matrix R on independent coordinates (a stepper)
 *   penalty.c  the penalty formulation (a stepper; and the initial
 *              accelerations and multipliers of ALI3-P)
 *   index1.c   Lagrange multipliers at acceleration level (accelerations
 *              for the ODE integrators: rk4, cvodes, trapezoidal fixed point)
 * Everything is allocated by mbs_form_create; steps do not allocate.
 *
 * Conventions: z = q (joint coordinates of the spanning tree), n = nq,
 * nc = all constraint rows (loop closure, drivers, Euler normalization; the
 * penalty alpha is the same for every row). The residual of the equations
 * of motion is the Newton-Euler inverse dynamics r(z, zd, zdd) = M zdd - Q
 * (applied loads and force elements included), so that with multipliers
 *     r + Phi_q^T lambda = 0.
 * Matrices handed to LAPACK are column-major; Phi_q is row-major (nc x n)
 * as the constraint kernel writes it.
 */
#ifndef MBS_FORM_IMPL_H
#define MBS_FORM_IMPL_H

#include <lapacke.h>

#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "../base/error.h"
#include "base/dense.h"
#include "stepper.h"
#include "form_tangent.h"

#define MBS_FORM_BETA 0.25
#define MBS_FORM_GAMMA 0.5

/* What a step did, kept until the next step: everything an adjoint (or a
 * DDM) needs to replay it. Arrays belong to the mbs_form (overwritten by
 * the next step; copy them to store a trajectory).
 *   ali3p:   z (converged), zd_star/zdd_star (Newmark values at z, before
 *            the projections), zd/zdd (after: the integrator's state),
 *            lambda (lambda* after the last update: the multipliers of
 *            r + Phi_q^T lambda = 0), vel_projected / acc_projected (the
 *            branch taken), sigma / kappa (iterative projections: their
 *            accumulated multipliers, else 0; accurate ones follow from
 *            the corrections: Phi_q^T sigma = -M (zd - zd*)).
 *   penalty: lambda = alpha (Phidd + 2 omega xi Phid + omega^2 Phi);
 *            zd_star = zd, zdd_star = zdd.
 *   matrixr: zi, zdi, zddi (independent coordinates); z, zd, zdd from the
 *            kinematic problems at them.
 *   index1:  lambda of the last acceleration evaluation. */
typedef struct mbs_form_step {
    double t, h;                   /* the step ended at t and had length h (its end
                                    * state: mbs_integrator_q, _qd, _qdd) */
    double *zd_star, *zdd_star;    /* n */
    double *lambda;                /* nc */
    double *sigma, *kappa;         /* nc */
    double *zi, *zdi, *zddi;       /* nd (matrixr) */
    int vel_projected, acc_projected;
    int iterations;
} mbs_form_step;

typedef struct mbs_form {
    const mbs_model *m;
    mbs_data *d;
    mbs_sim_options o;
    int n;             /* coordinates */
    int nc;            /* constraint rows */
    int nr;            /* rows used by index1 (nc without the Euler rows) */
    /* the last evaluation (mbs_form_primal) */
    double *r;         /* n */
    double *phi, *phid, *phidd, *b, *c;   /* nc */
    double *Phi;       /* nc x n, row-major */
    double *M;         /* n x n (symmetric) */
    /* dense work */
    double *S;         /* n x n col-major: Newton tangent, LU-factored */
    double *P;         /* n x n col-major: projection matrix, Cholesky-factored */
    lapack_int *ipiv;  /* n + nc */
    double *K;         /* (n + nc)^2 col-major: mbs_form_penalty_factor; then n + nc */
    double *v1, *v2, *v3, *v4, *e;   /* n */
    double *w1, *w2;   /* nc */
    /* trapezoidal step */
    double *zn, *zdn, *zddn, *zp, *zdp, *D, *z, *zd, *zdd, *dz;   /* n */
    double *lam;       /* nc: lambda* carried between steps */
    /* index1 */
    double *Y;         /* n x nr col-major: M^-1 Phi^T */
    double *A;         /* nr x nr col-major */
    double *gam, *sv, *tid, *qdd0;
    double *lswork;    /* dgelsd */
    int lwork;
    lapack_int *iwork;
    int prescribed;    /* the rows are coordinate drivers only: hybrid dynamics, no Y */
    unsigned char *presc;   /* nv: 1 at the driven velocities */
    int *drv_v;        /* ndriver: the velocity each driver moves */
    double *frc;       /* nv: the generalized forces of the driven velocities */
    /* matrixr */
    int nd;            /* independent coordinates */
    mbs_dof *dof;      /* nd */
    double *Bm;        /* nd x n row-major: dz^i/dz */
    double *N;         /* n x n col-major: Phi^T Phi + B^T B, Cholesky-factored */
    double *T;         /* n x nd col-major: R = N^-1 B^T */
    double *J;         /* nd x nd col-major: the reduced tangent, LU-factored */
    lapack_int *ipivd; /* nd */
    double *fi, *fdi, *fddi;          /* nd: DOF values of the last kinematic evaluation */
    double *zi, *zdi, *zddi, *zin, *zdin, *zddin, *zip, *zdip, *Di, *dDi, *yd;   /* nd */
    int nkin;          /* position iterations of the last kinematic solve */
    /* Newton tangent reuse (o.tangent_keep) */
    int have_tangent;  /* f->CK holds a force tangent */
    double tangent_h;  /* ... for this step size */
    double *CK;        /* n x n col-major: gamma h C + beta h^2 K, kept */
    /* violations of the state a stepper just produced (skips their evaluation in observe) */
    int viol_ready;
    double viol[3];
    double *dPhi;      /* nc x n: tangent scratch (matrixr chain) */
    double *dB;        /* nd x n */
    double *ty;        /* n: N^-1 r at the prepared state */
    double *tP, *tB;   /* nc, nd: Phi ty, B ty */
    mbs_form_step step;
} mbs_form;

/* ---- object (form_core.c) ---- */
mbs_form *mbs_form_create(const mbs_model *m, mbs_data *d, const mbs_sim_options *o, mbs_error *err);
void mbs_form_free(mbs_form *f);
/* The stepper of formulation loop (NULL for index1: the ODE integrators). */
const mbs_stepper *mbs_form_stepper(mbs_loop_formulation loop);
/* 1 if the formulation enforces the Euler normalization as a constraint
 * (ali3p, matrixr, penalty: no projection by the integrator). */
int mbs_form_keeps_euler(const mbs_form *f);
/* Consistent initial state: assembly with the model's fixed coordinates,
 * then the velocity problem (q, qd in/out). */
int mbs_form_initial_state(mbs_form *f, double t, double *q, double *qd, char msg[MBS_ERROR_MSG_LEN]);
/* Accelerations of the formulation at a consistent (q, qd) (ali3p:
 * penalty formulation, also the multipliers). */
int mbs_form_fd(mbs_form *f, double t, const double *q, const double *qd, double *qdd, char msg[MBS_ERROR_MSG_LEN]);
/* Re-evaluate the Newton tangent at iteration k of a step of size h? */
int mbs_form_need_tangent(const mbs_form *f, int k, double h);
/* The force part of the scaled Newton tangent S = M + gamma h C + beta h^2 K
 * into S (col-major), at the primal left in d (body terms of the iterate):
 * M by composite inertias (with tangent_keep: at the first iteration of the
 * step only; the iterates of a step differ by the small Newton corrections),
 * gamma h C + beta h^2 K from the tangent sweeps when mbs_form_need_tangent
 * says so, then kept in f->CK. Counts tangent evaluations in st. (The
 * constraint part, which changes fastest, is added fresh at every iteration
 * by the caller.) */
void mbs_form_newton_tangent(mbs_form *f, mbs_sim_stats *st, int k, double t, const double *z, const double *zd,
                             const double *zdd, double h, double *S);
/* After a step that took iters iterations (tangent reuse bookkeeping). */
void mbs_form_tangent_done(mbs_form *f, int iters);
/* Constraint violations of the state (q, qd, qdd) at t (the owner's, after
 * a step or a reset) into the statistics' maxima. */
void mbs_form_observe(mbs_form *f, double t, const double *q, const double *qd, const double *qdd,
                      mbs_sim_stats *st);

/* ---- evaluation core (form_core.c) ---- */
/* Kinematics (level 2) at (q, qd, qdd) (NULL = 0), applied loads at the
 * data's time, body terms and Newton-Euler: r = M qdd - Q (r may be NULL);
 * the constraints at t (outputs may be NULL; phidd at qdd). */
void mbs_form_primal(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                     const double *qdd, double *r, double *phi, double *Phi, double *phid, double *phidd);
/* The same (r only) when the kinematics of (q, qd) are already in d: only
 * the acceleration pass at qdd is redone. */
void mbs_form_primal_acc(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                         double *r);
/* Only the kinematics and the constraints. */
void mbs_form_constraints(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                          const double *qdd, double *phi, double *Phi, double *phid, double *phidd);
/* Tangents along (dq, dqd, dqdd) and dx (any NULL = 0) at the primal left
 * by mbs_form_primal (same state; dr needs the full primal): dr of the
 * Newton-Euler residual (force elements included), and of the constraints. */
void mbs_form_tangent(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                      const double *qdd, const double *dq, const double *dqd, const double *dqdd,
                      const double *dx, double *dr, double *dphi, double *dPhi, double *dphid, double *dphidd);
/* The same, with the kinematic tangents below level `from` (1: positions,
 * 2: and velocities) kept from the previous tangent along the same (dq, dx)
 * (and dqd) at the same primal: a chain of tangents that adds the
 * velocity, then the acceleration direction redoes only those levels. */
void mbs_form_tangent_from(const mbs_model *m, mbs_data *d, double t, const double *q, const double *qd,
                           const double *qdd, const double *dq, const double *dqd, const double *dqdd,
                           const double *dx, int from, double *dr, double *dphi, double *dPhi, double *dphid,
                           double *dphidd);
/* The tangent dr along a dx that moves no kinematic quantity (gravity,
 * masses, inertias, numbers of force elements and functions: mbs_form_param_dynamic):
 * the kinematic tangents vanish, so only the loads and the body terms are
 * differentiated (no kinematic sweep; the constraints' tangents are zero). */
void mbs_form_tangent_dynamic(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                              const double *dx, double *dr);
/* 1 if every target of parameter j is a gravity component, a body mass or
 * inertia entry, or a number of a force element or of a function that
 * drives no constraint (its kinematic and constraint tangents vanish) */
int mbs_form_param_dynamic(const mbs_model *m, int j);
/* The scaled Newton tangent of the trapezoidal residual in the correction D
 * (z = z_p + D, zd = zd_p + gamma/(beta h) D, zdd = zdd_n + D/(beta h^2)):
 *     S = beta h^2 dr/dD = M + gamma h C + beta h^2 K
 * exactly, column by column as tangents of r (n sweeps), at the primal left
 * in d, one column per velocity. S: nv x nv col-major. e: 3 nv scratch. */
void mbs_form_trap_tangent(const mbs_model *m, mbs_data *d, double t, const double *z, const double *zd,
                           const double *zdd, double h, double *S, double *e);
/* The trapezoidal states from the correction D (ALI3-P and penalty):
 * z = z_p + D, zd = zd_p + gamma/(beta h) D, zdd = zdd_n + D/(beta h^2). */
void mbs_form_affine(mbs_form *f, double h);
/* A converged step of length h to t1 in iters iterations: the step
 * record's t, h, iterations (the formulation sets the rest); the new state
 * is (z, zd, zdd), which the owner of the stepper takes. */
void mbs_form_step_done(mbs_form *f, double t1, double h, int iters);
/* The penalty equations  M x + Phi^T lam = v,  lam = al (Phi x - g)  (M n x n,
 * symmetric; Phi nc x n row-major) as one saddle-point system
 *     [M  Phi^T; Phi  -I/al] [x; lam] = [v; g]:
 * K ((n + nc)^2, col-major) is that matrix LU-factored (piv: n + nc); then
 * mbs_dense_lu_solve(n + nc, K, piv, b) turns b = [v; g] into [x; lam].
 * Their usual form (M + al Phi^T Phi) x = v + al Phi^T g forms al Phi^T g
 * and al Phi^T Phi x, of size al |g|, and loses eps al |Phi|^2 / |M| of
 * relative accuracy in the directions the constraints leave free; with lam
 * an unknown, x is accurate to round-off. Returns 0 or (column + 1) of a
 * zero pivot. */
int mbs_form_penalty_factor(int n, int nc, const double *M, const double *Phi, double al, double *K, lapack_int *piv);
/* x = P^-1 v for P = M + s Phi^T Phi (Cholesky factor in P, col-major),
 * with one step of iterative refinement (ali3p.c). res: n, tmp: nc. */
void mbs_form_proj_solve(int n, int nc, const double *M, const double *Phi, double s, const double *P,
                         const double *v, double *x, double *res, double *tmp);

/* ---- formulations ---- */
/* Penalty accelerations and multipliers at (q, qd) (penalty.c). */
int mbs_form_penalty_accel(mbs_form *f, double t, const double *q, const double *qd, double *qdd, double *lambda,
                           char *msg, size_t len);
/* Index-1 accelerations (index1.c). */
int mbs_form_index1_accel(mbs_form *f, double t, const double *q, const double *qd, double *qdd, char *msg,
                          size_t len);
/* Matrix R (matrixr.c): choose the independent coordinates (create), the
 * accelerations at a consistent (q, qd), and the kinematic problems at
 * given independent coordinates. */
int mbs_form_matrixr_setup(mbs_form *f, const double *q, char *msg, size_t len);
int mbs_form_matrixr_accel(mbs_form *f, double t, const double *q, const double *qd, double *qdd, char *msg,
                           size_t len);
/* Positions (Newton from z), velocities and accelerations at the
 * independent coordinates (zi, zdi, zddi; zddi may be NULL = 0). Leaves at
 * the final z: f->Phi, f->Bm, f->N (factored), f->b, f->c, and in d the
 * kinematics of (z, zd) with the accelerations at zdd = 0 (for
 * mbs_form_primal_acc). */
int mbs_form_matrixr_kinematics(mbs_form *f, double t, const double *zi, const double *zdi, const double *zddi,
                                double *z, double *zd, double *zdd, char *msg, size_t len);
/* For the sensitivities (ddm_matrixr.c), at a state (z, zd, zdd) the
 * kinematic problems produced: the primal, Phi_q, B, N (factored),
 * R (f->T) and y = N^-1 r (f->ty). Returns non-zero if N is singular. */
int mbs_form_matrixr_prepare(mbs_form *f, double t, const double *z, const double *zd, const double *zdd);
/* Tangent of the whole chain z^i -> (z, zd, zdd) -> F = R^T r along
 * (dzi, dzdi, dzddi) in the independent coordinates and dx in the model
 * vector (any NULL = 0), at the prepared state: dz, dzd, dzdd (n) and dF
 * (nd) (docs/formulations.md). */
void mbs_form_matrixr_chain(mbs_form *f, double t, const double *z, const double *zd, const double *zdd,
                            const double *dzi, const double *dzdi, const double *dzddi, const double *dx,
                            double *dz, double *dzd, double *dzdd, double *dF);
extern const mbs_stepper mbs_stepper_ali3p;
extern const mbs_stepper mbs_stepper_matrixr;
extern const mbs_stepper mbs_stepper_penalty;

#endif
