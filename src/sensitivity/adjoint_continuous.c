/*
 * adjoint_continuous.c - continuous adjoint (CAVM) of the equations of
 * motion in first-order form, with SUNDIALS CVODES (docs/sensitivity.md).
 *
 * y = [q; qd], f(y, rho) = [qd; a(q, qd, rho)], a = FD (the forward
 * dynamics of the chosen formulation, Euler parameters completed). For
 *     psi = int g(q, qd, a, rho, t) dt + G(q, qd, a, rho)|tF
 * with A = da/dq, B = da/dqd and mu = lambda2 + g_a:
 *     lambda1' = -A^T mu - g_q
 *     lambda2' = -lambda1 - B^T mu - g_qd
 *     lambda(tF) = [G_q + A^T G_a; G_qd + B^T G_a]
 *     dpsi/drho = int (g_rho + mu^T a_rho) dt + G_rho + G_a a_rho(tF)
 * (y(t0) does not depend on rho for open trees). CVODES integrates the
 * forward problem with the integral of g as a quadrature, stores
 * checkpoints (CVodeAdjInit, Hermite interpolation), then integrates the
 * adjoint backwards with the gradient as a backward quadrature: the adjoint
 * sees the forward solution interpolated to its own steps, so its accuracy
 * does not need a finer forward step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "sens_impl.h"

typedef struct {
    sens_run *r;
    int k;                  /* objective being differentiated */
    int failed;
    char msg[MBS_ERROR_MSG_LEN];
    double *a, *tid, *A, *B, *P;     /* accelerations, ID at them, dA/dq, dA/dqd, da/drho */
    double *gq, *gqd, *ga, *grho;    /* objective gradients */
    double *e, *dg, *mu, *dx;
    double *nu, *prod, *W, *dr;      /* adjoint parameter products */
    int *eonly;
} cav;

static int fd_and_jacobians(cav *c, double t, const double *q, const double *qd, int need_jac)
{
    sens_run *r = c->r;
    const mbs_model *m = r->m;
    const mbs_fd_algorithm alg = r->o->sim.formulation;
    mbs_data_set_time(r->d, t);
    if (!need_jac) {
        int rc = mbs_fd_unchecked(m, r->d, alg, q, qd, NULL, c->a);
        if (rc) snprintf(c->msg, sizeof c->msg, "t = %.9g: %s", t, mbs_data_error(r->d));
        return rc;
    }
    int rc = MBS_OK;
    if (need_jac & 2 && r->np > 0) rc = mbs_forward_dynamics_param_derivatives(m, r->d, alg, q, qd, NULL, NULL, c->P);
    /* last, so that its factors of M' stay in the data for solves */
    if (!rc) rc = mbs_forward_dynamics_derivatives(m, r->d, alg, q, qd, NULL, c->a, c->A, c->B, NULL);
    if (rc) snprintf(c->msg, sizeof c->msg, "t = %.9g: %s", t, mbs_data_error(r->d));
    return rc;
}

/* gradients of objective k's part at (q, qd, a): gq, gqd, ga, grho */
static void objective_gradients(cav *c, double t, const double *q, const double *qd, int terminal,
                                const int *skip)
{
    sens_run *r = c->r;
    const int nq = r->nq;
    double *g = c->dg;
    sens_objectives(r, q, qd, c->a, t, terminal, g);
    memset(c->gq, 0, sizeof(double) * (size_t)nq);
    memset(c->gqd, 0, sizeof(double) * (size_t)nq);
    memset(c->ga, 0, sizeof(double) * (size_t)nq);
    sens_objective_state_gradient(r, c->k, q, qd, c->a, t, terminal, 1, c->gq, c->gqd, c->ga, c->e, g);
    for (int j = 0; j < r->np; j++) {
        if (skip && skip[j]) { c->grho[j] = 0; continue; }
        mbs_deriv_param_dx(r->m, j, c->dx);
        sens_objectives_d(r, q, qd, c->a, NULL, NULL, NULL, c->dx, t, terminal, g);
        c->grho[j] = g[c->k];
    }
}

/* ---- forward problem ---- */
static int rhs(realtype t, N_Vector y, N_Vector ydot, void *user)
{
    cav *c = user;
    const int nq = c->r->nq;
    const double *yv = N_VGetArrayPointer(y);
    double *f = N_VGetArrayPointer(ydot);
    if (fd_and_jacobians(c, t, yv, yv + nq, 0)) { c->failed = 1; return -1; }
    memcpy(f, yv + nq, sizeof(double) * (size_t)nq);
    memcpy(f + nq, c->a, sizeof(double) * (size_t)nq);
    return 0;
}

static int rhs_quad(realtype t, N_Vector y, N_Vector qdot, void *user)
{
    cav *c = user;
    const int nq = c->r->nq;
    const double *yv = N_VGetArrayPointer(y);
    if (fd_and_jacobians(c, t, yv, yv + nq, 0)) { c->failed = 1; return -1; }
    sens_objectives(c->r, yv, yv + nq, c->a, t, 0, N_VGetArrayPointer(qdot));
    return 0;
}

/* ---- backward problem ---- */
static int rhs_b(realtype t, N_Vector y, N_Vector yB, N_Vector yBdot, void *user)
{
    cav *c = user;
    const int nq = c->r->nq;
    const double *yv = N_VGetArrayPointer(y), *l = N_VGetArrayPointer(yB);
    double *f = N_VGetArrayPointer(yBdot);
    if (fd_and_jacobians(c, t, yv, yv + nq, 1)) { c->failed = 1; return -1; }
    objective_gradients(c, t, yv, yv + nq, 0, c->eonly);
    for (int j = 0; j < nq; j++) c->mu[j] = l[nq + j] + c->ga[j];
    for (int j = 0; j < nq; j++) {
        double sa = 0, sb = 0;
        for (int i = 0; i < nq; i++) {
            sa += c->A[i * nq + j] * c->mu[i];
            sb += c->B[i * nq + j] * c->mu[i];
        }
        f[j] = -sa - c->gq[j];
        f[nq + j] = -l[j] - sb - c->gqd[j];
    }
    return 0;
}

static int rhs_quad_b(realtype t, N_Vector y, N_Vector yB, N_Vector qBdot, void *user)
{
    cav *c = user;
    sens_run *r = c->r;
    const int nq = r->nq, np = r->np;
    const double *yv = N_VGetArrayPointer(y), *l = N_VGetArrayPointer(yB);
    double *f = N_VGetArrayPointer(qBdot);
    if (fd_and_jacobians(c, t, yv, yv + nq, 1)) { c->failed = 1; return -1; }
    objective_gradients(c, t, yv, yv + nq, 0, c->eonly);
    for (int j = 0; j < nq; j++) c->mu[j] = l[nq + j] + c->ga[j];
    /* mu . a_rho without forming a_rho: a_rho = M'^-1 Pi(-dE_rho), so
     * mu . a_rho = -Pi(M'^-1 mu) . dE_rho, the virtual power of the
     * parameter tangents of the residual under nu = Pi(M'^-1 mu)
     * (sens_param_products: O(1) per element-only parameter) */
    sens_solve_mprime(r, yv, yv + nq, c->mu, c->nu, c->dr);
    for (int i = 1; i <= r->m->nb; i++) {
        const mbs_joint_info *jt = &r->m->joint[i];
        if (jt->euler < 0) continue;
        const int e0 = jt->qoff + jt->euler;
        double pn = 0;
        for (int k = 0; k < 4; k++) pn += yv[e0 + k] * c->nu[e0 + k];
        for (int k = 0; k < 4; k++) c->nu[e0 + k] -= yv[e0 + k] * pn;
    }
    mbs_data_set_time(r->d, t);
    sens_param_products(r, yv, yv + nq, c->a, c->nu, c->eonly, c->prod, c->W, c->dx, c->dr);
    /* backward quadrature runs from tF to t0: the integrand enters with a minus */
    for (int p = 0; p < np; p++) f[p] = -(c->grho[p] - c->prod[p]);
    return 0;
}

int sens_cavm(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int nq = r->nq, np = r->np, no = r->nobj;
    const mbs_sim_options *so = &r->o->sim;
    const size_t n = (size_t)(nq > 0 ? nq : 1), P = (size_t)(np > 0 ? np : 1);
    int rc = MBS_OK, which = 0, ncheck = 0;
    SUNContext ctx = NULL;
    void *cv = NULL;
    N_Vector y = NULL, yq = NULL, yB = NULL, qB = NULL;
    SUNNonlinearSolver nls = NULL, nlsB = NULL;
    cav c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.a = calloc(n, 8); c.tid = calloc(n, 8); c.A = calloc(n * n, 8); c.B = calloc(n * n, 8);
    c.P = calloc(n * P, 8); c.gq = calloc(n, 8); c.gqd = calloc(n, 8); c.ga = calloc(n, 8);
    c.grho = calloc(P, 8); c.e = calloc(2 * n, 8); c.dg = calloc((size_t)no + 1, 8);
    c.mu = calloc(n, 8); c.dx = calloc((size_t)m->nx + 1, 8);
    c.nu = calloc(n, 8); c.prod = calloc(P, 8); c.W = calloc(6 * ((size_t)m->nb + 1), 8); c.dr = calloc(n, 8);
    c.eonly = calloc(P, sizeof(int));
    if (c.eonly) sens_param_classify(m, c.eonly);
    if (!c.a || !c.tid || !c.A || !c.B || !c.P || !c.gq || !c.gqd || !c.ga || !c.grho || !c.e || !c.dg ||
        !c.mu || !c.dx || !c.nu || !c.prod || !c.W || !c.dr || !c.eonly || SUNContext_Create(NULL, &ctx)) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    y = N_VNew_Serial(2 * nq, ctx);
    yq = N_VNew_Serial(no, ctx);
    yB = N_VNew_Serial(2 * nq, ctx);
    qB = N_VNew_Serial(np, ctx);
    if (!y || !yq || !yB || !qB) { rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); goto done; }
    double *yv = N_VGetArrayPointer(y);
    mbs_model_initial_state(m, yv, yv + nq);
    mbs_normalize_state(m, yv, yv + nq);
    N_VConst(0, yq);
    /* forward: Adams with fixed-point iteration (non-stiff), quadrature of g */
    cv = CVodeCreate(CV_ADAMS, ctx);
    if (!cv || CVodeInit(cv, rhs, so->t0, y) || CVodeSStolerances(cv, so->rtol, so->atol) ||
        CVodeSetUserData(cv, &c) || CVodeSetMaxNumSteps(cv, so->cvodes_max_steps) ||
        !(nls = SUNNonlinSol_FixedPoint(y, 0, ctx)) || CVodeSetNonlinearSolver(cv, nls) ||
        CVodeQuadInit(cv, rhs_quad, yq) || CVodeQuadSStolerances(cv, so->rtol, so->atol) ||
        CVodeSetQuadErrCon(cv, SUNTRUE) || CVodeAdjInit(cv, 100, CV_HERMITE)) {
        rc = mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: CVODES set-up failed");
        goto done;
    }
    realtype tret;
    int flag = CVodeF(cv, so->tf, y, &tret, CV_NORMAL, &ncheck);
    if (flag < 0 || c.failed) {
        rc = mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: forward integration failed (CVODES flag %d)%s%s", flag,
                           c.failed ? ": " : "", c.failed ? c.msg : "");
        goto done;
    }
    CVodeGetQuad(cv, &tret, yq);
    const double *ps = N_VGetArrayPointer(yq);
    for (int k = 0; k < no; k++) r->psi[k] = ps[k];
    /* terminal terms and the objective gradients at tF */
    if (fd_and_jacobians(&c, so->tf, yv, yv + nq, 3)) {
        rc = mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: %s", c.msg);
        goto done;
    }
    double *G = calloc((size_t)no + 1, 8);
    if (!G) { rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); goto done; }
    sens_objectives(r, yv, yv + nq, c.a, so->tf, 1, G);
    for (int k = 0; k < no; k++) r->psi[k] += G[k];
    free(G);
    if (stats) {
        long ns = 0, nf = 0;
        memset(stats, 0, sizeof *stats);
        CVodeGetNumSteps(cv, &ns);
        CVodeGetNumRhsEvals(cv, &nf);
        stats->steps = ns;
        stats->fevals = nf;
    }
    /* backward, one sweep per objective */
    for (int k = 0; k < no; k++) {
        c.k = k;
        /* terminal conditions from G */
        fd_and_jacobians(&c, so->tf, yv, yv + nq, 3);
        objective_gradients(&c, so->tf, yv, yv + nq, 1, NULL);
        double *lB = N_VGetArrayPointer(yB);
        for (int j = 0; j < nq; j++) {
            double sa = 0, sb = 0;
            for (int i = 0; i < nq; i++) { sa += c.A[i * nq + j] * c.ga[i]; sb += c.B[i * nq + j] * c.ga[i]; }
            lB[j] = c.gq[j] + sa;
            lB[nq + j] = c.gqd[j] + sb;
        }
        double *grad = r->grad + (size_t)k * np;
        for (int p = 0; p < np; p++) {
            double s = c.grho[p];
            for (int i = 0; i < nq; i++) s += c.ga[i] * c.P[i * np + p];
            grad[p] = s;
        }
        N_VConst(0, qB);
        if (k == 0) {
            if (CVodeCreateB(cv, CV_ADAMS, &which) || CVodeInitB(cv, which, rhs_b, so->tf, yB) ||
                CVodeSStolerancesB(cv, which, so->rtol, so->atol) || CVodeSetUserDataB(cv, which, &c) ||
                CVodeSetMaxNumStepsB(cv, which, so->cvodes_max_steps) ||
                !(nlsB = SUNNonlinSol_FixedPoint(yB, 0, ctx)) || CVodeSetNonlinearSolverB(cv, which, nlsB) ||
                (np > 0 && (CVodeQuadInitB(cv, which, rhs_quad_b, qB) ||
                            CVodeQuadSStolerancesB(cv, which, so->rtol, so->atol) ||
                            CVodeSetQuadErrConB(cv, which, SUNTRUE)))) {
                rc = mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: CVODES backward set-up failed");
                goto done;
            }
        } else if (CVodeReInitB(cv, which, so->tf, yB) || (np > 0 && CVodeQuadReInitB(cv, which, qB))) {
            rc = mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: CVODES backward re-initialization failed");
            goto done;
        }
        flag = CVodeB(cv, so->t0, CV_NORMAL);
        if (flag < 0 || c.failed) {
            rc = mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: backward integration failed (CVODES flag %d)%s%s", flag,
                               c.failed ? ": " : "", c.failed ? c.msg : "");
            goto done;
        }
        if (np > 0) {
            CVodeGetQuadB(cv, which, &tret, qB);
            const double *qv = N_VGetArrayPointer(qB);
            for (int p = 0; p < np; p++) grad[p] += qv[p];
        }
        if (r->o->history) r->o->history(r->o->history_user, so->t0, no, np, r->psi, NULL);
    }
done:
    if (cv) CVodeFree(&cv);
    if (nls) SUNNonlinSolFree(nls);
    if (nlsB) SUNNonlinSolFree(nlsB);
    if (y) N_VDestroy(y);
    if (yq) N_VDestroy(yq);
    if (yB) N_VDestroy(yB);
    if (qB) N_VDestroy(qB);
    if (ctx) SUNContext_Free(&ctx);
    free(c.a); free(c.tid); free(c.A); free(c.B); free(c.P); free(c.gq); free(c.gqd); free(c.ga);
    free(c.grho); free(c.e); free(c.dg); free(c.mu); free(c.dx);
    free(c.nu); free(c.prod); free(c.W); free(c.dr); free(c.eonly);
    return rc;
}
