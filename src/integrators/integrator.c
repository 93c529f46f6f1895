/*
 * integrator.c - the integrator object (mbsens/simulate.h): options,
 * create/reset/step/free, the bookkeeping after each step (Euler drift,
 * projection, kinematics, energy, statistics) and mbs_simulate().
 *
 * The methods live in trapezoidal.c, rk4.c and cvodes.c; the dynamics they
 * need (forward dynamics and the inverse-dynamics residual, both without
 * the normalization check, since iterates and stages are slightly off
 * |p| = 1) are here.
 */
#include <lapacke.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrator_impl.h"
#include "../base/error.h"
#include "kernels/results.h"
#include "model/model_impl.h"
#include "../formulations/form_impl.h"
#include "model/state.h"

/* ---------------------------------------------------------------- names */

const char *mbs_integrator_name(mbs_integrator_type t)
{
    switch (t) {
    case MBS_INTEGRATOR_TRAPEZOIDAL: return "trapezoidal";
    case MBS_INTEGRATOR_RK4: return "rk4";
    case MBS_INTEGRATOR_CVODES: return "cvodes";
    }
    return "?";
}

int mbs_integrator_from_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "trapezoidal")) return MBS_INTEGRATOR_TRAPEZOIDAL;
    if (!strcmp(name, "rk4")) return MBS_INTEGRATOR_RK4;
    if (!strcmp(name, "cvodes")) return MBS_INTEGRATOR_CVODES;
    return -1;
}

const char *mbs_nl_solver_name(mbs_nl_solver s)
{
    return s == MBS_SOLVER_FIXEDPOINT ? "fixedpoint" : "newton";
}

int mbs_nl_solver_from_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "newton")) return MBS_SOLVER_NEWTON;
    if (!strcmp(name, "fixedpoint")) return MBS_SOLVER_FIXEDPOINT;
    return -1;
}

const char *mbs_cvodes_method_name(mbs_cvodes_method c)
{
    return c == MBS_CVODES_ADAMS ? "adams" : "bdf";
}

int mbs_cvodes_method_from_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "bdf")) return MBS_CVODES_BDF;
    if (!strcmp(name, "adams")) return MBS_CVODES_ADAMS;
    return -1;
}

const char *mbs_tangent_update_name(mbs_tangent_update u)
{
    switch (u) {
    case MBS_TANGENT_ITERATION: return "iteration";
    case MBS_TANGENT_STEP: return "step";
    }
    return "?";
}

int mbs_tangent_update_from_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "iteration")) return MBS_TANGENT_ITERATION;
    if (!strcmp(name, "step")) return MBS_TANGENT_STEP;
    return -1;
}

/* ---------------------------------------------------------------- options */

mbs_sim_options mbs_sim_options_default(void)
{
    mbs_sim_options o;
    memset(&o, 0, sizeof o);
    o.formulation = MBS_FD_RECURSIVE;
    o.ref = MBS_REF_COM;
    o.integrator = MBS_INTEGRATOR_TRAPEZOIDAL;
    o.solver = MBS_SOLVER_NEWTON;
    o.t0 = 0;
    o.dt = 1e-3;
    o.tf = 1;
    o.tolerance = 1e-10;
    o.max_iterations = 20;
    o.tangent_update = MBS_TANGENT_ITERATION;
    o.rtol = 1e-8;
    o.atol = 1e-10;
    o.cvodes_method = MBS_CVODES_BDF;
    o.cvodes_max_steps = 100000;
    o.project = 1;
    o.tangent = NULL;
    o.tangent_ctx = NULL;
    o.loop = MBS_LOOP_NONE;
    o.penalty = 1e9;
    o.proj_scale = 1;
    o.projection = MBS_PROJ_PENALTY;
    o.proj_tol = 0;
    o.lambda_factor = 1;
    o.tangent_keep = 1;
    o.omega = 10;
    o.xi = 1;
    o.baumgarte = 1;
    o.dofs = NULL;
    o.ndofs = 0;
    return o;
}

mbs_sim_options mbs_model_sim_options(const mbs_model *m)
{
    if (m && m->sim.present) return m->sim.options;
    return mbs_sim_options_default();
}

/* (tf - t0) / dt rounded up, as a double (no conversion can overflow). */
static double grid_steps(const mbs_sim_options *o)
{
    return ceil((o->tf - o->t0) / o->dt - 1e-9);
}

/* The time grid of mbs_simulate (and of the sensitivity methods) within
 * MBS_SIM_MAX_STEPS: its length in steps, and its distance from t = 0 in
 * steps (beyond it, t0 + k dt would not resolve the steps). */
static int grid_check(const mbs_sim_options *o, mbs_error *err)
{
    const double max = (double)MBS_SIM_MAX_STEPS, n = grid_steps(o);
    if (!(n <= max))
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: t = %g .. %g with dt = %g is %.3g steps; at most "
                             "%.0e are allowed (MBS_SIM_MAX_STEPS): increase dt or shorten the run", o->t0, o->tf,
                             o->dt, n, max);
    const double tabs = fmax(fabs(o->t0), fabs(o->tf));
    if (!(tabs / o->dt <= max))
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: |t| up to %g is %.3g steps of dt = %g from t = 0; "
                             "at most %.0e (MBS_SIM_MAX_STEPS), beyond which the times t0 + k dt are not resolved: "
                             "shift the time origin or increase dt", tabs, tabs / o->dt, o->dt, max);
    return MBS_OK;
}

long mbs_sim_steps(const mbs_sim_options *o)
{
    const double n = grid_steps(o);
    if (!(n <= (double)MBS_SIM_MAX_STEPS)) return -1;
    return n > 0 ? (long)n : 0;
}

int mbs_sim_options_check(const mbs_sim_options *o, mbs_error *err)
{
    if (!o) return mbs_error_set(err, MBS_ERR_ARG, "simulation options: NULL");
    if (o->formulation != MBS_FD_RECURSIVE && o->formulation != MBS_FD_SEMI_RECURSIVE)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: unknown formulation %d", (int)o->formulation);
    if (o->ref != MBS_REF_COM && o->ref != MBS_REF_ORIGIN && o->ref != MBS_REF_JOINT)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: unknown reference point %d", (int)o->ref);
    if (mbs_integrator_from_name(mbs_integrator_name(o->integrator)) < 0)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: unknown integrator %d", (int)o->integrator);
    if (o->solver != MBS_SOLVER_NEWTON && o->solver != MBS_SOLVER_FIXEDPOINT)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: unknown solver %d", (int)o->solver);
    if (mbs_tangent_update_from_name(mbs_tangent_update_name(o->tangent_update)) < 0)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: unknown tangent update %d", (int)o->tangent_update);
    if (o->cvodes_method != MBS_CVODES_BDF && o->cvodes_method != MBS_CVODES_ADAMS)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: unknown cvodes method %d", (int)o->cvodes_method);
    if (!isfinite(o->t0))
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: t0 must be finite, got %g", o->t0);
    if (!(o->dt > 0) || !isfinite(o->dt))
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: dt must be > 0, got %g", o->dt);
    if (!isfinite(o->tf) || !(o->tf >= o->t0))
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: tf must be finite and >= t0 = %g, got %g",
                             o->t0, o->tf);
    if (grid_check(o, err)) return MBS_ERR_ARG;
    if (!(o->tolerance > 0) || !isfinite(o->tolerance))
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: tolerance must be > 0, got %g", o->tolerance);
    if (o->max_iterations < 1)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: max_iterations must be >= 1, got %d",
                             o->max_iterations);
    if (!(o->rtol > 0) || !isfinite(o->rtol))
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: rtol must be > 0, got %g", o->rtol);
    if (!(o->atol > 0) || !isfinite(o->atol))
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: atol must be > 0, got %g", o->atol);
    if (o->cvodes_max_steps < 1)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: cvodes_max_steps must be >= 1, got %ld",
                             o->cvodes_max_steps);
    if (mbs_loop_formulation_from_name(mbs_loop_formulation_name(o->loop)) < 0)
        return mbs_error_set(err, MBS_ERR_ARG, "simulation options: unknown loop formulation %d", (int)o->loop);
    if (o->loop != MBS_LOOP_NONE) {
        if (!(o->penalty > 0) || !isfinite(o->penalty))
            return mbs_error_set(err, MBS_ERR_ARG, "simulation options: penalty must be > 0, got %g", o->penalty);
        if (!(o->proj_scale > 0) || !isfinite(o->proj_scale))
            return mbs_error_set(err, MBS_ERR_ARG, "simulation options: proj_scale must be > 0, got %g", o->proj_scale);
        if (o->projection != MBS_PROJ_PENALTY && o->projection != MBS_PROJ_ITERATIVE)
            return mbs_error_set(err, MBS_ERR_ARG, "simulation options: unknown projection %d", (int)o->projection);
        if (!(o->proj_tol >= 0) || !isfinite(o->proj_tol))
            return mbs_error_set(err, MBS_ERR_ARG, "simulation options: proj_tol must be >= 0, got %g", o->proj_tol);
        if (!(o->lambda_factor >= 0 && o->lambda_factor <= 1))
            return mbs_error_set(err, MBS_ERR_ARG, "simulation options: lambda_factor must be in [0, 1], got %g",
                                 o->lambda_factor);
        if (!(o->omega >= 0) || !isfinite(o->omega) || !(o->xi >= 0) || !isfinite(o->xi))
            return mbs_error_set(err, MBS_ERR_ARG, "simulation options: omega and xi must be >= 0, got %g, %g",
                                 o->omega, o->xi);
        if (o->ndofs < 0 || (o->ndofs > 0 && !o->dofs))
            return mbs_error_set(err, MBS_ERR_ARG, "simulation options: %d independent coordinates without a list",
                                 o->ndofs);
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- dynamics */

void mbs_integ_accept(mbs_integrator *it, const double *q, const double *qd, const double *qdd, double t1,
                      int iters)
{
    const size_t vbytes = sizeof(double) * (size_t)it->nv;
    it->st.steps++;
    it->st.iterations += iters;
    if (iters > it->st.iterations_max) it->st.iterations_max = iters;
    memcpy(it->q, q, sizeof(double) * (size_t)it->nq);
    memcpy(it->qd, qd, vbytes);
    memcpy(it->qdd, qdd, vbytes);
    it->t = t1;
}

int mbs_integ_fail(mbs_integrator *it, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(it->msg, sizeof it->msg, fmt, ap);
    va_end(ap);
    return code;
}

void mbs_integ_id(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                  const double *qdd, double *r)
{
    mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
    mbs_data_prepare_loads(m, d, q, qd);
    mbs_body_terms(m, m->x, &d->ws);
    mbs_rnea(m, &d->ws, r);
}

/* Semi-recursive forward dynamics as in src/dynamics/forward_dynamics.c, with a
 * column-major Cholesky (the matrix is symmetric, so row- and column-major
 * are the same) through the _work interface, which does not allocate. */
int mbs_integ_fd(mbs_integrator *it, double t, const double *q, const double *qd, double *qdd)
{
    const mbs_model *m = it->m;
    mbs_data *d = it->d;
    it->st.fevals++;
    mbs_data_set_time(d, t);
    for (int k = 0; k < m->nq; k++)
        if (!isfinite(q[k]))
            return mbs_integ_fail(it, MBS_ERR_NUMERIC, "state not finite at t = %.9g (%s = %g)", t,
                                  m->coord_name[k], q[k]);
    for (int k = 0; k < m->nv; k++)
        if (!isfinite(qd[k]))
            return mbs_integ_fail(it, MBS_ERR_NUMERIC, "state not finite at t = %.9g (%s.qd = %g)", t,
                                  m->vel_name[k], qd[k]);
    int rc = MBS_OK;
    if (it->form) {
        rc = mbs_form_fd(it->form, t, q, qd, qdd, it->msg);   /* closed loops: src/formulations/ */
    } else if ((rc = mbs_fd_accelerations(m, d, it->o.formulation, q, qd, NULL, qdd)) != MBS_OK) {
        /* both open-tree algorithms (src/dynamics/forward_dynamics.c; fr in joint frames where it applies), no
         * state checks; nothing here reads the kinematics it leaves (the bookkeeping recomputes them) */
        rc = mbs_integ_fail(it, rc, "%s", mbs_data_error(d));
    }
    if (rc) return rc;
    for (int k = 0; k < m->nv; k++)
        if (!isfinite(qdd[k]))
            return mbs_integ_fail(it, MBS_ERR_NUMERIC, "forward dynamics: acceleration of %s is not finite at t = %.9g",
                                  m->vel_name[k], t);
    return MBS_OK;
}

double mbs_integ_euler_drift(const mbs_model *m, const double *q)
{
    double drift = 0;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->quat < 0) continue;
        const double *p = q + jt->qoff + jt->quat;
        double e = fabs(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]) - 1);
        if (!(e <= drift)) drift = e;   /* NaN propagates */
    }
    return drift;
}

/* ---------------------------------------------------------------- object */

/* A closed-loop formulation's step as the integrator's method: its stepper
 * from the integrator's state, then the new state (the formulation's z,
 * zd, zdd) taken as an implicit step's. */
static int form_step(mbs_integrator *it, double h)
{
    mbs_form *f = it->form;
    mbs_step_io io = { it->t, it->q, it->qd, it->qdd, &it->st, it->msg, 0 };
    int rc = it->stepper->step(f, &io, h);
    if (rc) return rc;
    mbs_integ_accept(it, f->z, f->zd, f->zdd, f->step.t, f->step.iterations);
    it->kin_ready = io.kin_ready;
    return MBS_OK;
}

static const mbs_integ_method form_method = { "formulation", NULL, NULL, form_step, 0, NULL, NULL };

const mbs_form_step *mbs_form_last_step(const mbs_integrator *it)
{
    return it->form ? &it->form->step : NULL;
}

static const mbs_integ_method *method_of(mbs_integrator_type t)
{
    switch (t) {
    case MBS_INTEGRATOR_TRAPEZOIDAL: return &mbs_integ_trapezoidal;
    case MBS_INTEGRATOR_RK4: return &mbs_integ_rk4;
    case MBS_INTEGRATOR_CVODES: return &mbs_integ_cvodes;
    }
    return NULL;
}

/* Kinematics of the current state in d (unless the step left them there:
 * it->kin_ready), and its mechanical energy
 * (kinetic + gravity + springs). A collapsed spring_damper (zero length:
 * direction undefined, force regularized away) is an error, not something
 * to integrate through silently. */
static int observe(mbs_integrator *it, mbs_error *err)
{
    const mbs_model *m = it->m;
    mbs_data_set_time(it->d, it->t);
    if (!it->kin_ready) mbs_kin_forward(m, m->x, &it->d->ws, it->q, it->qd, it->qdd, 2);
    it->kin_ready = 0;
    if (it->track_energy)
        it->st.energy = mbs_kinetic_energy(m, it->d) + mbs_potential_energy(m, it->d) +
                        mbs_elastic_energy(m, it->d, it->q);
    if (it->form)   /* constraint violations; same kinematics left in d */
        mbs_form_observe(it->form, it->t, it->q, it->qd, it->qdd, &it->st);
    /* what the callers read: the state, and the kinematics left in d for the queries */
    const int nq = it->nq, nv = it->nv;
    char msg[MBS_ERROR_MSG_LEN];
    if (mbs_results_finite(m, "integration", MBS_RESULTS({ "q", it->q, nq, 1, MBS_IX_COORD, 0 },
                                                         { "qd", it->qd, nv, 1, MBS_IX_COORD, 0 },
                                                         { "qdd", it->qdd, nv, 1, MBS_IX_COORD, 0 }),
                           msg, sizeof msg))
        return mbs_error_set(err, MBS_ERR_NUMERIC, "%s at t = %.9g", msg, it->t);
    if (mbs_data_kinematics_results(it->d, it->q, it->qd, it->qdd))
        return mbs_error_set(err, MBS_ERR_NUMERIC, "%s at t = %.9g", mbs_data_error(it->d), it->t);
    int k = mbs_forces_degenerate(m, it->d);
    if (k >= 0)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "spring_damper '%s' has collapsed at t = %.9g (length %g, "
                             "below 1e-6 of its initial length: its direction is undefined)",
                             mbs_force_name(m, k), it->t, mbs_force_length(m, it->d, k));
    return MBS_OK;
}

/* Joints with tangent velocities: RK4 and the trapezoidal rule step on the
 * manifold (rk4.c, trapezoidal.c) for open trees, the latter's Newton
 * tangent along the manifold (the analytical derivatives and the central
 * differences both take dq as q (+) dq); the rest refuse them, naming what
 * is missing. */
static int tangent_supported(const mbs_model *m, const mbs_sim_options *o, mbs_error *err)
{
    if (m->con.ncut + m->con.ndriver > 0)
        return mbs_tangent_unsupported_err(m, "integrators on closed loops (the kinematic problems on the "
                                           "manifold)", err);
    if (o->integrator == MBS_INTEGRATOR_CVODES)
        return mbs_tangent_unsupported_err(m, "integrator cvodes (its chart with resets; rk4 and trapezoidal "
                                           "step on the manifold)", err);
    return MBS_OK;
}

mbs_integrator *mbs_integrator_create(const mbs_model *m, mbs_data *d,
                                      const mbs_sim_options *opts, mbs_error *err)
{
    if (!m || !d) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_integrator_create: model or data is NULL");
        return NULL;
    }
    if (d->model != m) {
        mbs_error_set(err, MBS_ERR_ARG, "mbs_integrator_create: the data was created for another model");
        return NULL;
    }
    mbs_sim_options o = opts ? *opts : mbs_model_sim_options(m);
    if (mbs_sim_options_check(&o, err)) return NULL;
    if (tangent_supported(m, &o, err)) return NULL;
    if (!o.tangent) o.tangent = mbs_tangent_analytic;
    mbs_integrator *it = calloc(1, sizeof *it);
    if (!it) {
        mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    it->m = m;
    it->d = d;
    it->o = o;
    it->nq = m->nq;
    it->nv = m->nv;
    it->track_energy = 1;
    /* closed loops (src/formulations/): a loop formulation is required */
    const int loops = m->con.ncut + m->con.ndriver;
    if (loops > 0 && o.loop == MBS_LOOP_NONE) {
        mbs_error_set(err, MBS_ERR_ARG, "model '%s' has closed loops (%d cut joint%s, %d driving constraint%s, %d "
                      "constraint equations): use --formulation ali3p|matrixr|penalty|index1 (mbs_sim_options.loop)",
                      m->name, m->con.ncut, m->con.ncut == 1 ? "" : "s", m->con.ndriver,
                      m->con.ndriver == 1 ? "" : "s", mbs_model_nconstraints(m));
        free(it);
        return NULL;
    }
    if (o.loop != MBS_LOOP_NONE && o.loop != MBS_LOOP_INDEX1 && o.integrator != MBS_INTEGRATOR_TRAPEZOIDAL) {
        mbs_error_set(err, MBS_ERR_ARG, "formulation %s integrates with the trapezoidal rule (integrator %s "
                      "requested; index1 works with rk4 and cvodes)", mbs_loop_formulation_name(o.loop),
                      mbs_integrator_name(o.integrator));
        free(it);
        return NULL;
    }
    if (o.loop == MBS_LOOP_INDEX1 && o.integrator == MBS_INTEGRATOR_TRAPEZOIDAL)
        o.solver = MBS_SOLVER_FIXEDPOINT;   /* the Newton residual has no constraint terms */
    it->o = o;
    it->stepper = o.loop != MBS_LOOP_NONE && o.loop != MBS_LOOP_INDEX1 ? mbs_form_stepper(o.loop) : NULL;
    it->meth = it->stepper ? &form_method : method_of(o.integrator);
    const size_t nq = (size_t)(m->nq > 0 ? m->nq : 1), nv = (size_t)(m->nv > 0 ? m->nv : 1);
    it->q = calloc(nq + 2 * nv, sizeof(double));
    if (!it->q) {
        mbs_integrator_free(it);
        mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    it->qd = it->q + nq;
    it->qdd = it->q + nq + nv;
    mbs_data_set_ref(d, o.ref);
    if (o.loop != MBS_LOOP_NONE && !(it->form = mbs_form_create(m, d, &o, err))) {
        mbs_integrator_free(it);
        return NULL;
    }
    int rc = it->meth->init ? it->meth->init(it) : MBS_OK;
    if (rc) {
        mbs_error_set(err, rc, "%s", it->msg[0] ? it->msg : "out of memory");
        mbs_integrator_free(it);
        return NULL;
    }
    if (mbs_integrator_reset(it, o.t0, NULL, NULL, err)) {
        mbs_integrator_free(it);
        return NULL;
    }
    return it;
}

void mbs_integrator_free(mbs_integrator *it)
{
    if (!it) return;
    if (it->impl && it->meth && it->meth->free) it->meth->free(it);
    free(it->q);
    mbs_form_free(it->form);
    free(it);
}

int mbs_integrator_reset(mbs_integrator *it, double t, const double *q, const double *qd,
                         mbs_error *err)
{
    if (!it) return mbs_error_set(err, MBS_ERR_ARG, "mbs_integrator_reset: integrator is NULL");
    const mbs_model *m = it->m;
    if (!isfinite(t)) return mbs_error_set(err, MBS_ERR_ARG, "mbs_integrator_reset: time not finite");
    double *q0 = it->q, *qd0 = it->qd;
    mbs_model_initial_state(m, q0, qd0);
    if (q) memcpy(q0, q, sizeof(double) * (size_t)m->nq);
    if (qd) memcpy(qd0, qd, sizeof(double) * (size_t)m->nv);
    int rc = mbs_data_check_state(it->d, q0, qd0, NULL);
    if (rc) return mbs_error_set(err, rc, "initial state: %s", mbs_data_error(it->d));
    mbs_normalize_state(m, q0, qd0);
    if (it->form && (rc = mbs_form_initial_state(it->form, t, q0, qd0, it->msg)))
        return mbs_error_set(err, rc, "initial state: %s", it->msg);
    memset(&it->st, 0, sizeof it->st);
    it->t = t;
    it->msg[0] = 0;
    it->kin_ready = 0;
    rc = mbs_integ_fd(it, t, q0, qd0, it->qdd);
    if (rc) return mbs_error_set(err, rc, "initial accelerations: %s", it->msg);
    if (it->meth->reset && (rc = it->meth->reset(it)))
        return mbs_error_set(err, rc, "%s", it->msg);
    if ((rc = observe(it, err))) return rc;
    it->st.energy0 = it->st.energy;
    return MBS_OK;
}

int mbs_integrator_step(mbs_integrator *it, double h, mbs_error *err)
{
    if (!it) return mbs_error_set(err, MBS_ERR_ARG, "mbs_integrator_step: integrator is NULL");
    if (!(h > 0) || !isfinite(h))
        return mbs_error_set(err, MBS_ERR_ARG, "mbs_integrator_step: step must be > 0, got %g", h);
    const mbs_model *m = it->m;
    it->msg[0] = 0;
    it->kin_ready = 0;
    int rc = it->meth->step(it, h);
    if (rc) return mbs_error_set(err, rc, "%s", it->msg[0] ? it->msg : "integration step failed");
    it->st.outputs++;
    double drift = mbs_integ_euler_drift(m, it->q);
    if (!(drift <= it->st.euler_drift)) it->st.euler_drift = drift;
    if (it->o.project && m->n_euler > 0 && !mbs_form_keeps_euler(it->form)) {
        it->kin_ready = 0;
        if (mbs_normalize_state(m, it->q, it->qd))
            return mbs_error_set(err, MBS_ERR_NUMERIC, "Euler parameters degenerate at t = %.9g", it->t);
        if (it->meth->recompute_qdd) {
            rc = mbs_integ_fd(it, it->t, it->q, it->qd, it->qdd);
            if (rc) return mbs_error_set(err, rc, "%s", it->msg);
        }
        if (it->meth->projected && (rc = it->meth->projected(it)))
            return mbs_error_set(err, rc, "%s", it->msg);
    }
    if ((rc = observe(it, err))) return rc;
    if (it->track_energy) {
        double de = fabs(it->st.energy - it->st.energy0);
        if (!(de <= it->st.energy_drift)) it->st.energy_drift = de;
    }
    return MBS_OK;
}

double mbs_integrator_time(const mbs_integrator *it) { return it->t; }
const double *mbs_integrator_q(const mbs_integrator *it) { return it->q; }
const double *mbs_integrator_qd(const mbs_integrator *it) { return it->qd; }
const double *mbs_integrator_qdd(const mbs_integrator *it) { return it->qdd; }
const mbs_sim_options *mbs_integrator_options(const mbs_integrator *it) { return &it->o; }

void mbs_integrator_stats(const mbs_integrator *it, mbs_sim_stats *stats)
{
    *stats = it->st;
    stats->iterations_mean = it->st.steps > 0 ? (double)it->st.iterations / (double)it->st.steps : 0;
}

/* ---------------------------------------------------------------- runs */

int mbs_simulate(const mbs_model *m, mbs_data *d, const mbs_sim_options *opts,
                 const double *q0, const double *qd0, mbs_sim_callback cb, void *user,
                 mbs_sim_stats *stats, mbs_error *err)
{
    if (stats) memset(stats, 0, sizeof *stats);
    mbs_integrator *it = mbs_integrator_create(m, d, opts, err);
    if (!it) return err ? err->code : MBS_ERR_ARG;
    const mbs_sim_options *o = &it->o;
    /* nobody can read the energy statistics without stats: no energy evaluation per step */
    it->track_energy = stats != NULL;
    int rc = mbs_integrator_reset(it, o->t0, q0, qd0, err);
    if (!rc && cb && (rc = cb(user, m, d, it->t, it->q, it->qd, it->qdd)) != 0)
        mbs_error_set(err, rc, "simulation stopped by the callback at t = %.9g", it->t);
    /* Step k ends at t0 + k dt (no accumulation of rounding in t); the last
     * step is shortened to end at tf, and a remainder below 1e-9 dt is
     * absorbed by the previous step. */
    const long nsteps = mbs_sim_steps(o);   /* <= MBS_SIM_MAX_STEPS: options checked by the create */
    for (long k = 1; !rc && k <= nsteps; k++) {
        double tn = k == nsteps ? o->tf : o->t0 + (double)k * o->dt;
        rc = mbs_integrator_step(it, tn - it->t, err);
        if (!rc) it->t = tn;    /* exact grid times (the step ended there up to rounding) */
        if (!rc && cb && (rc = cb(user, m, d, it->t, it->q, it->qd, it->qdd)) != 0)
            mbs_error_set(err, rc, "simulation stopped by the callback at t = %.9g", it->t);
    }
    if (stats) mbs_integrator_stats(it, stats);
    mbs_integrator_free(it);
    return rc;
}
