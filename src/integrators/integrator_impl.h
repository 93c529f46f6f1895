/*
 * integrator_impl.h - the integrator object and the helpers shared by the
 * methods (internal).
 *
 * integrator.c owns the object, the state, the statistics and the
 * bookkeeping after each step (drift, projection, kinematics, energy);
 * trapezoidal.c, rk4.c and cvodes.c each provide a method table.
 */
#ifndef MBS_INTEGRATOR_IMPL_H
#define MBS_INTEGRATOR_IMPL_H

#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "../formulations/form_impl.h"

typedef struct mbs_integ_method {
    const char *name;
    /* allocate it->impl (called once by create; NULL: nothing to allocate) */
    int (*init)(mbs_integrator *it);
    /* called by reset after it sets the state (t, q, qd, qdd) */
    int (*reset)(mbs_integrator *it);
    /* advance it->t by h: write it->q, it->qd (unprojected), it->qdd and
     * it->t; on failure leave them untouched and fill it->msg */
    int (*step)(mbs_integrator *it, double h);
    /* recompute qdd after the projection (explicit methods), or not */
    int recompute_qdd;
    /* called after the common code projects the state; e.g. cvodes re-initializes */
    int (*projected)(mbs_integrator *it);
    void (*free)(mbs_integrator *it);   /* NULL: nothing to free */
} mbs_integ_method;

struct mbs_integrator {
    const mbs_model *m;
    mbs_data *d;
    mbs_sim_options o;
    const mbs_integ_method *meth;
    void *impl;
    int nq, nv;             /* coordinates (q), velocities (qd, qdd) */
    double t;
    double *q, *qd, *qdd;   /* current state; qdd: accelerations at (q, qd) */
    struct mbs_form *form;  /* closed-loop formulation (src/formulations/), or NULL */
    const mbs_stepper *stepper;   /* the formulation's stepper (ali3p, matrixr, penalty), or NULL */
    int kin_ready;          /* the step left in d the level-2 kinematics of (q, qd, qdd):
                             * the bookkeeping after it skips its own pass */
    int track_energy;       /* evaluate the mechanical energy after every step (st.energy,
                             * energy_drift); 0 only in mbs_simulate without statistics */
    mbs_sim_stats st;
    char msg[MBS_ERROR_MSG_LEN];
};

/* A converged implicit step to t1 in iters iterations: the statistics, and
 * (q, qd, qdd) the integrator's new state at its new time. */
void mbs_integ_accept(mbs_integrator *it, const double *q, const double *qd, const double *qdd, double t1,
                      int iters);
/* The record of the closed-loop formulation's last step (or of the reset:
 * h = 0); NULL without a formulation. */
const mbs_form_step *mbs_form_last_step(const mbs_integrator *it);

/* it->msg = formatted message; returns code. */
int mbs_integ_fail(mbs_integrator *it, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Forward dynamics qdd = FD(q, qd) at time t with the formulation of the
 * options, without the normalization check of mbs_forward_dynamics (stage
 * and iterate states are slightly off |p| = 1; the completed equations are
 * well defined there). Counts one evaluation. */
int mbs_integ_fd(mbs_integrator *it, double t, const double *q, const double *qd, double *qdd);

/* Inverse-dynamics residual r = M qdd - Q (loads included) at time t, no
 * normalization check, no evaluation count. Leaves the kinematics and body
 * terms of (q, qd, qdd) in it->d. */
void mbs_integ_id(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                  const double *qdd, double *r);

/* max over the unit quaternions of ||p| - 1| (0 if none). */
double mbs_integ_euler_drift(const mbs_model *m, const double *q);

/* Trapezoidal rule: the discrete equations of a step of size h from the
 * current state at the correction D (nv) to the predictor (NULL: 0):
 * completed residual r' (nv) and, if S is not NULL, the scaled tangent
 * S' = beta h^2 dr'/dD (nv x nv, row-major). For tests and sensitivity code. */
int mbs_trap_eval(mbs_integrator *it, double h, const double *D, double *r, double *S);

/* Trapezoidal fixed point, the last iteration of the last step: the
 * contraction rate its stopping test used (-1: none, the test is on the
 * increment alone) and the 2-norm of its increment; returns the increment
 * (nq). For tests. */
const double *mbs_trap_fixed_point_stop(const mbs_integrator *it, double *rho, double *ndz);

/* The Newton tangent S' = M' + gamma h C' + beta h^2 K' of the trapezoidal
 * step (column-major) at (z, zd, zdd), completed along every Euler-parameter
 * block; r0 is the raw residual there (trapezoidal.c). */
void mbs_trap_assemble_tangent(const mbs_model *m, const double *z, const double *zd, const double *zdd,
                               const double *r0, const double *M, const double *K, const double *C,
                               double h, double *S);

extern const mbs_integ_method mbs_integ_trapezoidal;
extern const mbs_integ_method mbs_integ_rk4;
extern const mbs_integ_method mbs_integ_cvodes;

#endif
