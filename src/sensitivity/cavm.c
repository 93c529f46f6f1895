/*
 * cavm.c - continuous adjoint (CAVM) of the equations of
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
#include <stdio.h>
#include <string.h>

#include <cvodes/cvodes.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "sens_common.h"
#include "kernels/functions.h"

typedef struct {
    sens_run *r;
    int k;                  /* objective being differentiated */
    int failed;
    char msg[MBS_ERROR_MSG_LEN];
    double *a, *A, *B;               /* accelerations, dA/dq, dA/dqd */
    double *gq, *gqd, *ga, *grho;    /* objective gradients (grho per parameter) */
    double *e, *dg, *mu, *nu, *scr;
    sens_pprod pp;                   /* adjoint parameter products */
} cav;

static int fd_and_jacobians(cav *c, double t, const double *q, const double *qd, int need_jac)
{
    sens_run *r = c->r;
    const mbs_model *m = r->m;
    const mbs_fd_algorithm alg = r->o->sim.formulation;
    mbs_data_set_time(r->d, t);
    if (!need_jac) {
        int rc = mbs_fd_in_workspace(m, r->d, alg, q, qd, NULL, c->a);
        if (rc) snprintf(c->msg, sizeof c->msg, "t = %.9g: %s", t, mbs_data_error(r->d));
        return rc;
    }
    int rc = mbs_forward_dynamics_derivatives(m, r->d, alg, q, qd, NULL, c->a, c->A, c->B, NULL);
    if (rc) snprintf(c->msg, sizeof c->msg, "t = %.9g: %s", t, mbs_data_error(r->d));
    return rc;
}

/* gradients of objective k's part at (q, qd, a): gq, gqd, ga, and grho for
 * the parameters the objectives may depend on (the others have none) */
static void objective_gradients(cav *c, double t, const double *q, const double *qd, int terminal)
{
    sens_run *r = c->r;
    const int nv = r->nv;
    double *g = c->dg;
    sens_objectives(r, q, qd, c->a, t, terminal, g);
    memset(c->gq, 0, sizeof(double) * (size_t)nv);
    memset(c->gqd, 0, sizeof(double) * (size_t)nv);
    memset(c->ga, 0, sizeof(double) * (size_t)nv);
    sens_objective_state_gradient(r, c->k, q, qd, c->a, t, terminal, 1, c->gq, c->gqd, c->ga, c->e, g);
    sens_pprod *pp = &c->pp;
    for (int i = 0; i < pp->nobjp; i++) {
        const int j = pp->objp[i];
        const mbs_param_info *p = &r->m->param[j];
        for (int s = 0; s < p->ntargets; s++) pp->dx[p->target[s]] += p->scale[s];
        sens_objectives_d(r, q, qd, c->a, NULL, NULL, NULL, pp->dx, j, t, terminal, g);
        for (int s = 0; s < p->ntargets; s++) pp->dx[p->target[s]] = 0;
        c->grho[j] = g[c->k];
    }
}

/* nu = Pi(M'^-1 mu) at (q, qd), Pi removing the Euler blocks' components
 * along p: then mu . a_rho = -nu . dr/drho (a_rho = -M'^-1 Pi(r_rho)) */
static void adjoint_nu(cav *c, double t, const double *q, const double *qd, const double *mu)
{
    sens_run *r = c->r;
    mbs_data_set_time(r->d, t);
    sens_solve_mprime(r, q, qd, mu, c->nu, c->scr);
    for (int i = 1; i <= r->m->nb; i++) {
        const mbs_joint_info *jt = &r->m->joint[i];
        if (jt->euler < 0) continue;
        const double *p = q + jt->qoff + jt->euler;
        double *nue = c->nu + jt->voff + jt->euler, pn = 0;
        for (int k = 0; k < 4; k++) pn += p[k] * nue[k];
        for (int k = 0; k < 4; k++) nue[k] -= p[k] * pn;
    }
    mbs_data_set_time(r->d, t);
}

/* ---- forward problem ---- */
static int rhs(realtype t, N_Vector y, N_Vector ydot, void *user)
{
    cav *c = user;
    const int nq = c->r->nq;
    const double *yv = N_VGetArrayPointer(y);
    double *f = N_VGetArrayPointer(ydot);
    if (fd_and_jacobians(c, t, yv, yv + nq, 0)) { c->failed = 1; return -1; }
    memcpy(f, yv + nq, sizeof(double) * (size_t)nq);   /* qdot = qd: additive coordinates */
    memcpy(f + nq, c->a, sizeof(double) * (size_t)c->r->nv);
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
    const int nq = c->r->nq, nv = c->r->nv;
    const double *yv = N_VGetArrayPointer(y), *l = N_VGetArrayPointer(yB);
    double *f = N_VGetArrayPointer(yBdot);
    if (fd_and_jacobians(c, t, yv, yv + nq, 1)) { c->failed = 1; return -1; }
    objective_gradients(c, t, yv, yv + nq, 0);
    for (int j = 0; j < nv; j++) c->mu[j] = l[nv + j] + c->ga[j];
    for (int j = 0; j < nv; j++) {
        double sa = 0, sb = 0;
        for (int i = 0; i < nv; i++) {
            sa += c->A[i * nv + j] * c->mu[i];
            sb += c->B[i * nv + j] * c->mu[i];
        }
        f[j] = -sa - c->gq[j];
        f[nv + j] = -l[j] - sb - c->gqd[j];
    }
    return 0;
}

/* integrand of the backward quadrature: the parameters with products of
 * their own (sens_pprod gen), g_rho + mu . a_rho */
static int rhs_quad_b(realtype t, N_Vector y, N_Vector yB, N_Vector qBdot, void *user)
{
    cav *c = user;
    sens_run *r = c->r;
    sens_pprod *pp = &c->pp;
    const int nq = r->nq, nv = r->nv;
    const double *yv = N_VGetArrayPointer(y), *l = N_VGetArrayPointer(yB);
    double *f = N_VGetArrayPointer(qBdot);
    if (fd_and_jacobians(c, t, yv, yv + nq, 1)) { c->failed = 1; return -1; }
    objective_gradients(c, t, yv, yv + nq, 0);
    for (int j = 0; j < nv; j++) c->mu[j] = l[nv + j] + c->ga[j];
    adjoint_nu(c, t, yv, yv + nq, c->mu);
    sens_pprod_eval(r, pp, yv, yv + nq, c->a, c->nu, 1);
    /* backward quadrature runs from tF to t0: the integrand enters with a minus */
    for (int i = 0; i < pp->ngen; i++) {
        const int j = pp->gen[i];
        f[i] = -((pp->flag[j] == 0 || r->o->objective ? c->grho[j] : 0) - pp->prod[i]);
    }
    return 0;
}

/* The forward solution at every internal step (t, y, and the step's
 * derivative dy/dt, the data CVODES's own Hermite interpolation keeps
 * between checkpoints), for the knot quadrature. CVodeGetAdjY would give the
 * same interpolant, but its cached interval goes stale when it is asked
 * for a point just right of a checkpoint after the backward integrator
 * evaluated that checkpoint (SUNDIALS 6.4: CVAfindIndex sets ilast = 1
 * without recomputing the Hermite coefficients), which the quadrature's
 * nodes do. */
typedef struct {
    size_t n, cap;
    int dim;
    double *t, *y;          /* y: per point, y (dim) then dy/dt (dim) */
} fwd_table;

static int fwd_push(fwd_table *ft, double t, N_Vector y, N_Vector yd)
{
    if (sens_grow2((void **)&ft->t, sizeof(double), (void **)&ft->y, sizeof(double) * 2 * (size_t)ft->dim, ft->n,
                   &ft->cap, 256))
        return -1;
    double *row = ft->y + 2 * (size_t)ft->dim * (size_t)ft->n;
    memcpy(row, N_VGetArrayPointer(y), sizeof(double) * (size_t)ft->dim);
    memcpy(row + ft->dim, N_VGetArrayPointer(yd), sizeof(double) * (size_t)ft->dim);
    ft->t[ft->n++] = t;
    return 0;
}

/* cubic Hermite interpolation of the stored forward solution at t */
static void fwd_eval(const fwd_table *ft, double t, double *y)
{
    long lo = 0, hi = (long)ft->n - 1;
    while (hi - lo > 1) {
        long mid = (lo + hi) / 2;
        if (ft->t[mid] <= t) lo = mid;
        else hi = mid;
    }
    const int d = ft->dim;
    const double *a = ft->y + 2 * (size_t)d * (size_t)lo, *b = ft->y + 2 * (size_t)d * (size_t)hi;
    const double h = ft->t[hi] - ft->t[lo];
    if (!(h > 0)) { memcpy(y, a, sizeof(double) * (size_t)d); return; }
    const double s = (t - ft->t[lo]) / h, s2 = s * s, s3 = s2 * s;
    const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s, h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
    for (int k = 0; k < d; k++) y[k] = h00 * a[k] + h10 * h * a[d + k] + h01 * b[k] + h11 * h * b[d + k];
}

/* The knot parameters' part of the gradient over one backward step
 * [ta, tb]: int -S_f(t) W(t) dt (S_f = nu . dr/df, param_products.c), with
 * S_f sampled at ns Gauss nodes of the step (forward state interpolated
 * from the stored forward steps, adjoint from the backward step's own
 * polynomial), its interpolating polynomial integrated exactly against the
 * spline's piecewise-cubic weights (mbs_spline_adj_add_integral): O(ns)
 * evaluations per step, O(1) per knot the step covers. */
static int knot_quadrature(cav *c, const fwd_table *ft, void *cvB, double ta, double tb, int ns, double *yv,
                           N_Vector lN, double *sv)
{
    sens_run *r = c->r;
    sens_pprod *pp = &c->pp;
    const int nq = r->nq, nv = r->nv;
    const double *gu, *gw;
    mbs_gauss_legendre01(ns, &gu, &gw);
    double ts[8];
    for (int g = 0; g < ns; g++) {
        const double t = ta + gu[g] * (tb - ta);
        ts[g] = t;
        if (CVodeGetDky(cvB, t, 0, lN) < 0) {
            snprintf(c->msg, sizeof c->msg, "t = %.9g: no adjoint solution for the knot quadrature", t);
            return -1;
        }
        fwd_eval(ft, t, yv);
        const double *l = N_VGetArrayPointer(lN);
        if (fd_and_jacobians(c, t, yv, yv + nq, 0)) return -1;
        /* mu = lambda2 + g_a */
        objective_gradients(c, t, yv, yv + nq, 0);
        for (int j = 0; j < nv; j++) c->mu[j] = l[nv + j] + c->ga[j];
        adjoint_nu(c, t, yv, yv + nq, c->mu);
        sens_pprod_eval(r, pp, yv, yv + nq, c->a, c->nu, 2);
        for (int i = 0; i < pp->nfn; i++) sv[i * 8 + g] = -pp->S[i];
    }
    for (int i = 0; i < pp->nfn; i++)
        mbs_spline_adj_add_integral(&r->m->func[pp->fn[i]], ta, tb, ns, ts, sv + i * 8, pp->acc + pp->acc_off[i]);
    return 0;
}

/* nodes of the knot quadrature per backward step: the backward polynomial's
 * order q + 2 (at least 4; at most 8, the table) */
static int knot_nodes(void *cvB)
{
    int q = 0;
    if (CVodeGetLastOrder(cvB, &q) < 0) q = 5;
    int ns = q + 2;
    return ns < 4 ? 4 : ns > 8 ? 8 : ns;
}

/* A run: the evaluations' workspace, the CVODES objects, the stored
 * forward solution (with spline parameters) and scratch. */
typedef struct {
    cav c;
    SUNContext ctx;
    void *cv;
    N_Vector y, yq, yB, qB, yN, lN;
    SUNNonlinearSolver nls, nlsB;
    double *sv;
    fwd_table ft;
    int which, ncheck;
} cv_run;

static int cv_alloc(cv_run *v, sens_run *r, mbs_error *err)
{
    cav *c = &v->c;
    const int nq = r->nq, nv = r->nv, no = r->nobj;
    const size_t n = (size_t)(nv > 0 ? nv : 1), P = (size_t)(r->np > 0 ? r->np : 1);
    c->a = calloc(n, 8); c->A = calloc(n * n, 8); c->B = calloc(n * n, 8);
    c->gq = calloc(n, 8); c->gqd = calloc(n, 8); c->ga = calloc(n, 8);
    c->grho = calloc(P, 8); c->e = calloc(2 * n, 8); c->dg = calloc((size_t)no + 1, 8);
    c->mu = calloc(n, 8); c->nu = calloc(n, 8); c->scr = calloc(n, 8);
    v->sv = calloc(8 * ((size_t)c->pp.nfn + 1), 8);
    if (!c->a || !c->A || !c->B || !c->gq || !c->gqd || !c->ga || !c->grho || !c->e || !c->dg || !c->mu || !c->nu ||
        !c->scr || !v->sv || SUNContext_Create(NULL, &v->ctx))
        return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    v->y = N_VNew_Serial(nq + nv, v->ctx);   /* [q; qd] */
    v->yq = N_VNew_Serial(no, v->ctx);
    v->yB = N_VNew_Serial(2 * nv, v->ctx);   /* [lambda1; lambda2] */
    v->qB = N_VNew_Serial(c->pp.ngen > 0 ? c->pp.ngen : 1, v->ctx);
    v->yN = N_VNew_Serial(nq + nv, v->ctx);
    v->lN = N_VNew_Serial(2 * nv, v->ctx);
    if (!v->y || !v->yq || !v->yB || !v->qB || !v->yN || !v->lN)
        return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    return MBS_OK;
}

static void cv_free(cv_run *v)
{
    cav *c = &v->c;
    if (v->cv) CVodeFree(&v->cv);
    if (v->nls) SUNNonlinSolFree(v->nls);
    if (v->nlsB) SUNNonlinSolFree(v->nlsB);
    N_Vector vec[] = { v->y, v->yq, v->yB, v->qB, v->yN, v->lN };
    for (size_t k = 0; k < sizeof vec / sizeof vec[0]; k++)
        if (vec[k]) N_VDestroy(vec[k]);
    if (v->ctx) SUNContext_Free(&v->ctx);
    free(c->a); free(c->A); free(c->B); free(c->gq); free(c->gqd); free(c->ga);
    free(c->grho); free(c->e); free(c->dg); free(c->mu); free(c->nu); free(c->scr); free(v->sv);
    free(v->ft.t); free(v->ft.y);
    sens_pprod_free(&c->pp);
}

/* Forward: Adams with fixed-point iteration (non-stiff), quadrature of g;
 * with spline parameters step by step to tF exactly, storing every step
 * for the knot quadrature. */
static int cv_forward(cv_run *v, const mbs_sim_options *so, mbs_error *err)
{
    cav *c = &v->c;
    const mbs_model *m = c->r->m;
    const int nq = c->r->nq;
    double *yv = N_VGetArrayPointer(v->y);
    mbs_model_initial_state(m, yv, yv + nq);
    mbs_normalize_state(m, yv, yv + nq);
    N_VConst(0, v->yq);
    v->cv = CVodeCreate(CV_ADAMS, v->ctx);
    void *cv = v->cv;
    if (!cv || CVodeInit(cv, rhs, so->t0, v->y) || CVodeSStolerances(cv, so->rtol, so->atol) ||
        CVodeSetUserData(cv, c) || CVodeSetMaxNumSteps(cv, so->cvodes_max_steps) ||
        !(v->nls = SUNNonlinSol_FixedPoint(v->y, 0, v->ctx)) || CVodeSetNonlinearSolver(cv, v->nls) ||
        CVodeQuadInit(cv, rhs_quad, v->yq) || CVodeQuadSStolerances(cv, so->rtol, so->atol) ||
        CVodeSetQuadErrCon(cv, SUNTRUE) || CVodeAdjInit(cv, 100, CV_HERMITE))
        return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: CVODES set-up failed");
    realtype tret = so->t0;
    int flag;
    if (c->pp.nfn == 0) {
        flag = CVodeF(cv, so->tf, v->y, &tret, CV_NORMAL, &v->ncheck);
    } else {
        v->ft.dim = nq + c->r->nv;
        flag = CVodeSetStopTime(cv, so->tf);
        if (flag >= 0 && rhs(so->t0, v->y, v->yN, c) == 0 && fwd_push(&v->ft, so->t0, v->y, v->yN) == 0) {
            while (tret < so->tf && flag >= 0 && !c->failed) {
                flag = CVodeF(cv, so->tf, v->y, &tret, CV_ONE_STEP, &v->ncheck);
                if (flag < 0) break;
                if (CVodeGetDky(cv, tret, 1, v->yN) < 0 || fwd_push(&v->ft, tret, v->y, v->yN))
                    return mbs_error_set(err, MBS_ERR_NOMEM, "cavm: out of memory for the forward solution at t = "
                                         "%.9g (%zu steps stored)", tret, v->ft.n);
            }
        } else if (flag >= 0) {
            flag = -1;
        }
    }
    if (flag < 0 || c->failed)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: forward integration failed (CVODES flag %d)%s%s", flag,
                             c->failed ? ": " : "", c->failed ? c->msg : "");
    CVodeGetQuad(cv, &tret, v->yq);
    return MBS_OK;
}

/* psi: the quadrature plus the terminal terms at tF; the statistics. */
static int cv_psi(cv_run *v, const mbs_sim_options *so, mbs_sim_stats *stats, mbs_error *err)
{
    cav *c = &v->c;
    sens_run *r = c->r;
    const double *yv = N_VGetArrayPointer(v->y), *ps = N_VGetArrayPointer(v->yq);
    for (int k = 0; k < r->nobj; k++) r->psi[k] = ps[k];
    if (fd_and_jacobians(c, so->tf, yv, yv + r->nq, 1)) return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: %s", c->msg);
    sens_objectives(r, yv, yv + r->nq, c->a, so->tf, 1, c->dg);
    for (int k = 0; k < r->nobj; k++) r->psi[k] += c->dg[k];
    if (stats) {
        long ns = 0, nf = 0;
        memset(stats, 0, sizeof *stats);
        CVodeGetNumSteps(v->cv, &ns);
        CVodeGetNumRhsEvals(v->cv, &nf);
        stats->steps = ns;
        stats->fevals = nf;
    }
    return MBS_OK;
}

/* Objective k's terminal conditions from G into yB; grad = G_rho + G_a .
 * a_rho(tF), the latter as -nu . dr/drho, nu = Pi(M'^-1 G_a). */
static void cv_terminal(cv_run *v, const mbs_sim_options *so, double *grad)
{
    cav *c = &v->c;
    sens_run *r = c->r;
    const int nq = r->nq, nv = r->nv;
    double *yv = N_VGetArrayPointer(v->y), *lB = N_VGetArrayPointer(v->yB);
    fd_and_jacobians(c, so->tf, yv, yv + nq, 1);
    objective_gradients(c, so->tf, yv, yv + nq, 1);
    for (int j = 0; j < nv; j++) {
        double sa = 0, sb = 0;
        for (int i = 0; i < nv; i++) { sa += c->A[i * nv + j] * c->ga[i]; sb += c->B[i * nv + j] * c->ga[i]; }
        lB[j] = c->gq[j] + sa;
        lB[nv + j] = c->gqd[j] + sb;
    }
    for (int p = 0; p < r->np; p++) grad[p] = 0;
    for (int i = 0; i < c->pp.nobjp; i++) grad[c->pp.objp[i]] = c->grho[c->pp.objp[i]];
    adjoint_nu(c, so->tf, yv, yv + nq, c->ga);
    sens_pprod_eval(r, &c->pp, yv, yv + nq, c->a, c->nu, 3);
    sens_pprod_add(r, &c->pp, so->tf, -1, grad);
    N_VConst(0, v->qB);
}

/* The backward problem: created for the first objective, re-initialized
 * for the next ones. */
static int cv_backward_init(cv_run *v, const mbs_sim_options *so, int k, mbs_error *err)
{
    void *cv = v->cv;
    const int ngen = v->c.pp.ngen;
    if (k == 0) {
        if (CVodeCreateB(cv, CV_ADAMS, &v->which) || CVodeInitB(cv, v->which, rhs_b, so->tf, v->yB) ||
            CVodeSStolerancesB(cv, v->which, so->rtol, so->atol) || CVodeSetUserDataB(cv, v->which, &v->c) ||
            CVodeSetMaxNumStepsB(cv, v->which, so->cvodes_max_steps) ||
            !(v->nlsB = SUNNonlinSol_FixedPoint(v->yB, 0, v->ctx)) ||
            CVodeSetNonlinearSolverB(cv, v->which, v->nlsB) ||
            (ngen > 0 && (CVodeQuadInitB(cv, v->which, rhs_quad_b, v->qB) ||
                          CVodeQuadSStolerancesB(cv, v->which, so->rtol, so->atol) ||
                          CVodeSetQuadErrConB(cv, v->which, SUNTRUE))))
            return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: CVODES backward set-up failed");
    } else if (CVodeReInitB(cv, v->which, so->tf, v->yB) || (ngen > 0 && CVodeQuadReInitB(cv, v->which, v->qB))) {
        return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: CVODES backward re-initialization failed");
    }
    return MBS_OK;
}

/* The backward integration to t0; with spline parameters step by step,
 * the knot quadrature on each backward step. */
static int cv_backward_run(cv_run *v, const mbs_sim_options *so, mbs_error *err)
{
    cav *c = &v->c;
    int flag;
    if (c->pp.nfn == 0) {
        flag = CVodeB(v->cv, so->t0, CV_NORMAL);
    } else {
        void *cvB = CVodeGetAdjCVodeBmem(v->cv, v->which);
        double tb = so->tf;
        flag = CV_SUCCESS;
        while (tb > so->t0 && flag >= 0 && !c->failed) {
            flag = CVodeB(v->cv, so->t0, CV_ONE_STEP);
            if (flag < 0) break;
            double ta = tb;
            CVodeGetB(v->cv, v->which, &ta, v->yB);
            if (!(ta < tb))
                return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: backward integration stalled at t = %.9g", tb);
            if (knot_quadrature(c, &v->ft, cvB, ta, tb, knot_nodes(cvB), N_VGetArrayPointer(v->yN), v->lN, v->sv))
                return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: knot quadrature: %s", c->msg);
            tb = ta;
        }
    }
    if (flag < 0 || c->failed)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "cavm: backward integration failed (CVODES flag %d)%s%s", flag,
                             c->failed ? ": " : "", c->failed ? c->msg : "");
    return MBS_OK;
}

/* One backward sweep: the gradient of objective k. */
static int cv_sweep(cv_run *v, const mbs_sim_options *so, int k, mbs_error *err)
{
    cav *c = &v->c;
    sens_run *r = c->r;
    double *grad = r->grad + (size_t)k * r->np;
    int rc;
    c->k = k;
    cv_terminal(v, so, grad);
    if ((rc = cv_backward_init(v, so, k, err))) return rc;
    if ((rc = cv_backward_run(v, so, err))) return rc;
    if (c->pp.ngen > 0) {
        realtype tret;
        CVodeGetQuadB(v->cv, v->which, &tret, v->qB);
        const double *qv = N_VGetArrayPointer(v->qB);
        for (int i = 0; i < c->pp.ngen; i++) grad[c->pp.gen[i]] += qv[i];
    }
    sens_pprod_finish(r, &c->pp, grad);
    if (r->o->history) r->o->history(r->o->history_user, so->t0, r->nobj, r->np, r->psi, NULL);
    return MBS_OK;
}

int sens_cavm(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_sim_options *so = &r->o->sim;
    cv_run v;
    memset(&v, 0, sizeof v);
    v.c.r = r;
    int rc = sens_pprod_init(&v.c.pp, r->m, r->o->objective != NULL, err);
    if (rc) return rc;
    rc = cv_alloc(&v, r, err);
    if (!rc) rc = cv_forward(&v, so, err);
    if (!rc) rc = cv_psi(&v, so, stats, err);
    for (int k = 0; k < r->nobj && !rc; k++) rc = cv_sweep(&v, so, k, err);   /* one sweep per objective */
    cv_free(&v);
    return rc;
}
