/*
 * cvodes.c - SUNDIALS CVODES (6.x) on the first-order ODE
 * y = [q; qd], ydot = [qd; FD(q, qd)], adaptive step and order, scalar
 * tolerances rtol/atol, output at the requested times (CV_NORMAL: CVODES
 * steps past the output time and interpolates).
 *
 * Method (mbs_sim_options.cvodes_method):
 *
 *   bdf (default)  BDF, orders 1-5, Newton iteration with a dense
 *                  difference-quotient Jacobian (SUNDenseMatrix +
 *                  SUNLinSol_Dense; our own jac(), as CVODES's internal one
 *                  allocates a vector per evaluation). The reason for the default is the
 *                  Euler-parameter manifold: CVODES 6.4 offers a projection
 *                  function (CVodeSetProjFn) that projects the solution and
 *                  its error estimate onto |p| = 1, p.pd = 0 inside every
 *                  step, but only for BDF. The error control then sees the
 *                  projected solution and the integration is never
 *                  restarted. For the non-stiff problems at hand BDF needs
 *                  more steps than Adams at the same tolerance, but it is
 *                  robust, and a dense Jacobian of nq + nv unknowns is cheap at
 *                  the sizes where CVODES is the reference integrator.
 *   adams          Adams-Moulton, orders 1-12, fixed-point (functional)
 *                  iteration, no Jacobian: the cheaper choice for non-stiff
 *                  problems without Euler parameters. With Euler parameters
 *                  the output states are projected, and the integration is
 *                  re-initialized from the projected state when the drift
 *                  exceeds rtol (a restart at order 1: rare, since the
 *                  completed dynamics keeps d2|p|^2/dt2 = 0).
 *
 * Failures are mapped to messages with the time reached (CVodeGetCurrentTime)
 * and CVODES's own message (captured by an error handler, never printed).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvodes/cvodes.h>
#include <cvodes/cvodes_proj.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "integrator_impl.h"
#include "model/model_impl.h"

typedef struct {
    SUNContext ctx;
    void *mem;
    N_Vector y, yout;
    SUNMatrix A;
    SUNLinearSolver LS;
    SUNNonlinearSolver NLS;
    mbs_integrator *it;
    double drift;              /* Euler drift of the last output (adams) */
    /* counters of earlier CVodeReInit segments */
    long steps, iters, jevals, setups, etf;
    char cvmsg[512];           /* last message of CVODES */
} cv_ws;

static void err_handler(int code, const char *module, const char *function, char *msg, void *data)
{
    (void)module;
    cv_ws *w = data;
    if (code == CV_WARNING) return;
    snprintf(w->cvmsg, sizeof w->cvmsg, "%s: %s", function ? function : "CVODE", msg ? msg : "");
}

static int rhs(realtype t, N_Vector y, N_Vector ydot, void *data)
{
    cv_ws *w = data;
    mbs_integrator *it = w->it;
    const int nq = it->nq;
    const double *yv = N_VGetArrayPointer(y);
    double *f = N_VGetArrayPointer(ydot);
    memcpy(f, yv + nq, sizeof(double) * (size_t)nq);   /* qdot = qd: additive coordinates */
    return mbs_integ_fd(it, t, yv, yv + nq, f + nq) ? -1 : 0;
}

/* Jacobian of [qd; FD(q, qd)] (CVLsJacFn): the upper half [0, I] exactly,
 * the lower half [dFD/dq, dFD/dqd] by forward differences with CVODES's own
 * increments (max(sqrt(eps) |y_j|, minInc / ewt_j), as cvLsDenseDQJac), in
 * the work vectors CVODES passes: no allocation. */
static int jac(realtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *data, N_Vector tmp1, N_Vector tmp2,
               N_Vector tmp3)
{
    cv_ws *w = data;
    mbs_integrator *it = w->it;
    const int nq = it->nq, nv = it->nv, n = nq + nv;
    realtype h = 0;
    CVodeGetCurrentStep(w->mem, &h);
    CVodeGetErrWeights(w->mem, tmp3);
    const double *ewt = N_VGetArrayPointer(tmp3), *f0 = N_VGetArrayPointer(fy);
    const double fnorm = N_VWrmsNorm(fy, tmp3), srur = sqrt(UNIT_ROUNDOFF);
    const double min_inc = fnorm != 0 ? 1000 * fabs(h) * UNIT_ROUNDOFF * n * fnorm : 1;
    N_VScale(1, y, tmp1);
    double *yp = N_VGetArrayPointer(tmp1), *a = N_VGetArrayPointer(tmp2) + nq;
    for (int j = 0; j < n; j++) {
        double *col = SUNDenseMatrix_Column(J, j);
        for (int i = 0; i < nq; i++) col[i] = (j >= nq && i == j - nq) ? 1 : 0;   /* additive coordinates */
        const double yj = yp[j];
        double inc = srur * fabs(yj);
        if (inc < min_inc / ewt[j]) inc = min_inc / ewt[j];
        yp[j] = yj + inc;
        inc = yp[j] - yj;
        if (mbs_integ_fd(it, t, yp, yp + nq, a)) return -1;
        yp[j] = yj;
        for (int i = 0; i < nv; i++) col[nq + i] = (a[i] - f0[nq + i]) / inc;
    }
    return 0;
}

/* Projection onto |p| = 1, p.pd = 0 (CVProjFn): ycur + corr is the projected
 * state; the error estimate is projected onto the tangent space of the
 * constraints (p.e_p = 0, pd.e_p + p.e_pd = 0). */
static int project(realtype t, N_Vector ycur, N_Vector corr, realtype eps, N_Vector err, void *data)
{
    (void)t;
    (void)eps;
    cv_ws *w = data;
    const mbs_model *m = w->it->m;
    const int nq = m->nq;
    const double *y = N_VGetArrayPointer(ycur);
    double *c = N_VGetArrayPointer(corr), *e = err ? N_VGetArrayPointer(err) : NULL;
    memset(c, 0, sizeof(double) * ((size_t)nq + (size_t)m->nv));
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int k0 = jt->qoff + jt->euler, v0 = nq + jt->voff + jt->euler;
        const double *p = y + k0, *pd = y + v0;
        double n = sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3]);
        if (!(n > 0) || !isfinite(n)) return -1;
        double pn[4], s = 0;
        for (int k = 0; k < 4; k++) { pn[k] = p[k] / n; s += pn[k] * pd[k]; }
        double pdn[4];
        for (int k = 0; k < 4; k++) {
            c[k0 + k] = pn[k] - p[k];
            c[v0 + k] = -s * pn[k];
            pdn[k] = pd[k] - s * pn[k];
        }
        if (e) {
            double *ep = e + k0, *ev = e + v0, a = 0, b = 0;
            for (int k = 0; k < 4; k++) a += pn[k] * ep[k];
            for (int k = 0; k < 4; k++) ep[k] -= a * pn[k];
            for (int k = 0; k < 4; k++) b += pdn[k] * ep[k] + pn[k] * ev[k];
            for (int k = 0; k < 4; k++) ev[k] -= b * pn[k];
        }
    }
    return 0;
}

static void cv_free(mbs_integrator *it)
{
    cv_ws *w = it->impl;
    if (w->mem) CVodeFree(&w->mem);
    if (w->NLS) SUNNonlinSolFree(w->NLS);
    if (w->LS) SUNLinSolFree(w->LS);
    if (w->A) SUNMatDestroy(w->A);
    if (w->y) N_VDestroy(w->y);
    if (w->yout) N_VDestroy(w->yout);
    if (w->ctx) SUNContext_Free(&w->ctx);
    free(w);
    it->impl = NULL;
}

static int cv_init(mbs_integrator *it)
{
    cv_ws *w = calloc(1, sizeof *w);
    if (!w) return MBS_ERR_NOMEM;
    it->impl = w;
    w->it = it;
    const mbs_sim_options *o = &it->o;
    const sunindextype n = (sunindextype)(it->nq > 0 ? it->nq : 1) + (sunindextype)(it->nv > 0 ? it->nv : 1);
    if (SUNContext_Create(NULL, &w->ctx) != 0) return mbs_integ_fail(it, MBS_ERR_NOMEM, "cvodes: cannot create a context");
    w->y = N_VNew_Serial(n, w->ctx);
    w->yout = N_VNew_Serial(n, w->ctx);
    if (!w->y || !w->yout) return mbs_integ_fail(it, MBS_ERR_NOMEM, "cvodes: out of memory");
    N_VConst(0, w->y);
    const int bdf = o->cvodes_method == MBS_CVODES_BDF;
    w->mem = CVodeCreate(bdf ? CV_BDF : CV_ADAMS, w->ctx);
    if (!w->mem) return mbs_integ_fail(it, MBS_ERR_NOMEM, "cvodes: out of memory");
    int flag = CVodeSetErrHandlerFn(w->mem, err_handler, w);
    if (!flag) flag = CVodeInit(w->mem, rhs, o->t0, w->y);
    if (!flag) flag = CVodeSetUserData(w->mem, w);
    if (!flag) flag = CVodeSStolerances(w->mem, o->rtol, o->atol);
    if (!flag) flag = CVodeSetMaxNumSteps(w->mem, o->cvodes_max_steps);
    if (!flag && bdf) {
        w->A = SUNDenseMatrix(n, n, w->ctx);
        w->LS = w->A ? SUNLinSol_Dense(w->y, w->A, w->ctx) : NULL;
        if (!w->LS) return mbs_integ_fail(it, MBS_ERR_NOMEM, "cvodes: out of memory");
        flag = CVodeSetLinearSolver(w->mem, w->LS, w->A);
        if (!flag) flag = CVodeSetJacFn(w->mem, jac);
        if (!flag && it->m->n_euler > 0 && o->project) flag = CVodeSetProjFn(w->mem, project);
    } else if (!flag) {
        w->NLS = SUNNonlinSol_FixedPoint(w->y, 0, w->ctx);
        if (!w->NLS) return mbs_integ_fail(it, MBS_ERR_NOMEM, "cvodes: out of memory");
        flag = CVodeSetNonlinearSolver(w->mem, w->NLS);
    }
    if (flag) return mbs_integ_fail(it, MBS_ERR_ARG, "cvodes: setup failed (flag %d): %s", flag, w->cvmsg);
    return MBS_OK;
}

static void load_state(const mbs_integrator *it, N_Vector y)
{
    double *v = N_VGetArrayPointer(y);
    memcpy(v, it->q, sizeof(double) * (size_t)it->nq);
    memcpy(v + it->nq, it->qd, sizeof(double) * (size_t)it->nv);
}

/* Add the counters of the current CVODES segment to the statistics
 * (base + current); with `close`, fold them into the base before a ReInit. */
static void update_stats(mbs_integrator *it, int close)
{
    cv_ws *w = it->impl;
    long nst = 0, nni = 0, nje = 0, nsetups = 0, netf = 0;
    CVodeGetNumSteps(w->mem, &nst);
    CVodeGetNumNonlinSolvIters(w->mem, &nni);
    CVodeGetNumLinSolvSetups(w->mem, &nsetups);
    CVodeGetNumErrTestFails(w->mem, &netf);
    if (w->LS) CVodeGetNumJacEvals(w->mem, &nje);
    it->st.steps = w->steps + nst;
    it->st.iterations = w->iters + nni;
    it->st.tangent_evals = w->jevals + nje;
    it->st.factorizations = w->setups + nsetups;
    it->st.error_test_fails = w->etf + netf;
    if (close) {
        w->steps += nst;
        w->iters += nni;
        w->jevals += nje;
        w->setups += nsetups;
        w->etf += netf;
    }
}

static int reinit(mbs_integrator *it)
{
    cv_ws *w = it->impl;
    update_stats(it, 1);
    load_state(it, w->y);
    int flag = CVodeReInit(w->mem, it->t, w->y);
    if (flag) return mbs_integ_fail(it, MBS_ERR_NUMERIC, "cvodes: re-initialization failed at t = %.9g: %s",
                                    it->t, w->cvmsg);
    return MBS_OK;
}

static int cv_reset(mbs_integrator *it)
{
    cv_ws *w = it->impl;
    w->steps = w->iters = w->jevals = w->setups = w->etf = 0;
    w->cvmsg[0] = 0;
    load_state(it, w->y);
    int flag = CVodeReInit(w->mem, it->t, w->y);
    if (flag) return mbs_integ_fail(it, MBS_ERR_NUMERIC, "cvodes: initialization failed at t = %.9g: %s",
                                    it->t, w->cvmsg);
    return MBS_OK;
}

/* What went wrong, and what it means for the user. */
static void flag_text(int flag, const mbs_sim_options *o, const char **what, char *detail, size_t len)
{
    detail[0] = 0;
    switch (flag) {
    case CV_TOO_MUCH_WORK:
        *what = "too much work";
        snprintf(detail, len, " (more than cvodes_max_steps = %ld internal steps before the output time)",
                 o->cvodes_max_steps);
        return;
    case CV_TOO_MUCH_ACC:
        *what = "too much accuracy requested";
        snprintf(detail, len, " (rtol = %g, atol = %g below what the arithmetic allows)", o->rtol, o->atol);
        return;
    case CV_ERR_FAILURE: *what = "repeated error-test failures or minimum step size"; return;
    case CV_CONV_FAILURE: *what = "repeated nonlinear-solver failures or minimum step size"; return;
    case CV_LSETUP_FAIL: *what = "linear solver setup failed"; return;
    case CV_LSOLVE_FAIL: *what = "linear solve failed"; return;
    case CV_RHSFUNC_FAIL: *what = "the dynamics (right-hand side) failed"; return;
    case CV_REPTD_RHSFUNC_ERR: *what = "repeated recoverable failures of the dynamics"; return;
    case CV_UNREC_RHSFUNC_ERR: *what = "unrecoverable failure of the dynamics"; return;
    case CV_PROJFUNC_FAIL: *what = "the Euler-parameter projection failed (|p| = 0?)"; return;
    case CV_REPTD_PROJFUNC_ERR: *what = "repeated projection failures"; return;
    case CV_TOO_CLOSE: *what = "output time too close to the current time"; return;
    default: *what = "failure"; snprintf(detail, len, " (CVODE flag %d)", flag); return;
    }
}

static int cv_step(mbs_integrator *it, double h)
{
    cv_ws *w = it->impl;
    const int nq = it->nq;
    const double tout = it->t + h;
    realtype tret = it->t;
    char fdmsg[MBS_ERROR_MSG_LEN];
    it->msg[0] = 0;
    w->cvmsg[0] = 0;
    int flag = CVode(w->mem, tout, w->yout, &tret, CV_NORMAL);
    update_stats(it, 0);
    if (flag < 0) {
        realtype tcur = tret;
        CVodeGetCurrentTime(w->mem, &tcur);
        memcpy(fdmsg, it->msg, sizeof fdmsg);
        char cv[sizeof w->cvmsg];
        memcpy(cv, w->cvmsg, sizeof cv);
        /* leave the integrator usable at the last output state */
        reinit(it);
        const char *what;
        char detail[160];
        flag_text(flag, &it->o, &what, detail, sizeof detail);
        return mbs_integ_fail(it, MBS_ERR_NUMERIC, "cvodes (%s): %s at t = %.9g%s, integrating from t = %.9g to "
                              "%.9g%s%s%s%s", mbs_cvodes_method_name(it->o.cvodes_method), what, (double)tcur,
                              detail, it->t, tout, fdmsg[0] ? ": " : "", fdmsg, cv[0] ? "; CVODES: " : "", cv);
    }
    const double *y = N_VGetArrayPointer(w->yout);
    memcpy(it->q, y, sizeof(double) * (size_t)nq);
    memcpy(it->qd, y + nq, sizeof(double) * (size_t)it->nv);
    it->t = tout;
    w->drift = mbs_integ_euler_drift(it->m, it->q);
    if (it->o.project && it->m->n_euler > 0) return MBS_OK;   /* qdd after the projection */
    int rc = mbs_integ_fd(it, it->t, it->q, it->qd, it->qdd);
    if (rc) {
        memcpy(fdmsg, it->msg, sizeof fdmsg);
        return mbs_integ_fail(it, rc, "cvodes: failure at t = %.9g: %s", it->t, fdmsg);
    }
    return MBS_OK;
}

/* Adams: restart from the projected state when the drift exceeds rtol. */
static int cv_projected(mbs_integrator *it)
{
    cv_ws *w = it->impl;
    if (it->o.cvodes_method == MBS_CVODES_ADAMS && w->drift > it->o.rtol) return reinit(it);
    return MBS_OK;
}

const mbs_integ_method mbs_integ_cvodes = {
    "cvodes", cv_init, cv_reset, cv_step, 1, cv_projected, cv_free,
};
