/*
 * ddm_ali3p.c - direct differentiation of the discrete ALI3-P solution
 * (src/formulations/ali3p.c), semi-recursive, both reference points
 * (thesis §5.4.1, digest thesis_ch5.md S4, with its corrections;
 * docs/formulations.md "Sensitivities of the closed-loop formulations").
 *
 * With ' = d/d rho_j and dx_j the parameter's direction in the model
 * vector, every derivative below is ONE tangent of the residual and the
 * constraints (mbs_form_tangent) along a direction (dq, dqd, dqdd, dx):
 * the partial derivatives with respect to the state and the parameters are
 * never formed separately.
 *
 * t0. The initial state is the assembly with the model's fixed coordinates
 * B (held), the velocity problem, and the penalty accelerations:
 *   [Phi_q; B] z0'  = [-dPhi(0, 0, 0, dx); 0]
 *   [Phi_q; B] zd0' = [-dPhid(z0', 0, 0, dx); 0]                (zd fixed)
 *   (M + Phi_q^T alpha Phi_q) zdd0' = -[dr + dPhi_q^T alpha psi
 *          + Phi_q^T alpha (dPhidd + 2 omega xi dPhid + omega^2 dPhi)](z0', zd0', 0, dx)
 * (psi = Phidd + 2 omega xi Phid + omega^2 Phi; least squares, minimum norm
 * for the first two, as the kinematic problems).
 *
 * Each step: the index-3 stage at convergence is r(z, zd*, zdd*) +
 * Phi_q^T lambda = 0, Phi(z) = 0, with z = z_p + D etc. as in ali3p.c and
 * the predictor from the previous step's PROJECTED values. Its derivative:
 *   S D' + beta h^2 Phi_q^T mu = -beta h^2 w,    Phi_q D' = -dPhi
 *   w = dr + dPhi_q^T lambda   along (z_p', zd_p', zdd_n', dx) at fixed D, lambda
 *   S = M + gamma h C + beta h^2 (K + d(Phi_q^T lambda)/dz)   (the EXACT tangent:
 *       column k is the tangent along (beta h^2 e_k, gamma h e_k, e_k))
 * solved, for all parameters with one LU of S + beta h^2 alpha Phi_q^T Phi_q,
 * by the augmented-Lagrangian iteration
 *   (S + beta h^2 alpha Phi^T Phi) D' = -beta h^2 (w + Phi^T (mu + alpha dPhi)),
 *   mu <- mu + alpha (Phi_q D' + dPhi)
 * (mu = lambda', unique up to redundant rows; D' is unique), until the
 * constraint derivative vanishes. z' = z_p' + D', zd*' = zd_p' + gamma/(beta h) D',
 * zdd*' = zdd_n' + D'/(beta h^2).
 *
 * Projections, only where the step applied them (the record's flags),
 * with the same P_hat = M + varsigma alpha Phi_q^T Phi_q (one Cholesky):
 *   velocity  G = M (zd - zd*) + Phi_q^T sigma = 0, sigma = varsigma alpha Phid
 *             (penalty form) or the iterated multiplier:
 *     P_hat zd' = M zd*' - d(M v) - dPhi_q^T sigma - varsigma alpha Phi_q^T dPhid    (penalty)
 *     with v = zd - zd*, tangents along (z', 0, 0, dx) at fixed zd; the
 *     iterative form solves M zd' + Phi^T sigma' = ..., Phi zd' = -dPhid by
 *     the same augmented-Lagrangian iteration with P_hat.
 *   acceleration: the same with zdd, zdd*, kappa and dPhidd along
 *     (z', zd', 0, dx) at fixed zdd (c with the projected zd).
 *   d(M v) = tangent of r at (z, zd, a) minus that at (z, zd, a - v) along the
 *   same direction (r is affine in the accelerations: the Q-terms cancel);
 *   dPhid at fixed zd = its tangent along (z', zd*', 0, dx) minus Phi_q zd*'.
 * A projection that the step skipped leaves zd' = zd*' (zdd' = zdd*').
 *
 * psi is the trapezoidal quadrature of g on the steps (projected states),
 * its gradient that of dg along (z', zd', zdd', dx).
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_impl.h"
#include "../formulations/form_impl.h"

#define BETA MBS_FORM_BETA
#define GAMMA MBS_FORM_GAMMA
#define AL_MAX_ITER 100

typedef struct {
    int n, nc, np;
    double *Z, *Zd, *Zdd;      /* n x np: z', zd', zdd' (projected), column per parameter */
    double *Zs, *Zds, *Zdds;   /* n x np: unprojected zd*', zdd*' (Zs unused: z' is Z) */
    double *MU;                /* nc x np: lambda' of the last step (AL start) */
    double *DR1, *DR2, *DR0;   /* n x np: tangents of r for d(M v) */
    double *zn, *zdn, *zddn, *r, *M, *S, *P, *Phi, *phi, *phid, *phidd, *lam, *sig, *kap;
    double *dr, *dPhi, *dphi, *dphid, *dphidd, *w, *rhs, *v, *e, *dx, *mu, *viol, *va, *vv;
    double *zp, *zdp, *s1, *s2;
    lapack_int *ipiv;
    /* minimum-norm least squares Phi_q^T sigma = -M D (the projection multipliers) */
    double *lsA, *lsb, *lss, *lswork;
    lapack_int *lsiwork;
    int lwork;
    double *g, *dg, *dgj;
} ddm_ws;

static void ws_free(ddm_ws *w)
{
    free(w->Z);
    free(w->ipiv);
    free(w->lsA);
    free(w->lswork);
    free(w->lsiwork);
}

static int ws_alloc(ddm_ws *w, const mbs_model *m, int no)
{
    const size_t n = (size_t)w->n + 1, nc = (size_t)w->nc + 1, np = (size_t)w->np + 1, nx = (size_t)m->nx + 1;
    const size_t no1 = (size_t)no + 1;
    size_t total = 8 * n * np + nc * np + 3 * n * n + nc * n * 2 + 20 * n + 12 * nc + nx + no1 * (np + 2);
    double *p = calloc(total, sizeof(double));
    w->ipiv = calloc(n, sizeof *w->ipiv);
    if (!p || !w->ipiv) {
        free(p);
        return MBS_ERR_NOMEM;
    }
    w->Z = p; p += n * np;
    w->Zd = p; p += n * np;
    w->Zdd = p; p += n * np;
    w->Zs = p; p += n * np;
    w->Zds = p; p += n * np;
    w->Zdds = p; p += n * np;
    w->DR1 = p; p += n * np;
    w->DR2 = p; p += n * np;
    w->MU = p; p += nc * np;
    w->M = p; p += n * n;
    w->S = p; p += n * n;
    w->P = p; p += n * n;
    w->Phi = p; p += nc * n;
    w->dPhi = p; p += nc * n;
    double **vn[] = { &w->zn, &w->zdn, &w->zddn, &w->r, &w->dr, &w->w, &w->rhs, &w->v, &w->zp, &w->zdp,
                      &w->va, &w->vv, &w->DR0, &w->s1 };
    for (size_t k = 0; k < sizeof vn / sizeof vn[0]; k++) { *vn[k] = p; p += n; }
    w->e = p; p += 3 * n;
    double **vc[] = { &w->phi, &w->phid, &w->phidd, &w->lam, &w->sig, &w->kap, &w->dphi, &w->dphid, &w->dphidd,
                      &w->viol, &w->s2 };
    for (size_t k = 0; k < sizeof vc / sizeof vc[0]; k++) { *vc[k] = p; p += nc; }
    w->mu = NULL;
    w->dx = p; p += nx;
    w->g = p; p += no1;
    w->dg = p; p += no1 * np;
    w->dgj = p; p += no1;
    /* dgelsd on Phi_q^T (n x nc) */
    const int rows = w->n, cols = w->nc, ldb = rows > cols ? rows : cols;
    double wq = 0, aa = 0, bb = 0, ss = 0;
    lapack_int iwq = 0, rank = 0;
    if (rows > 0 && cols > 0)
        LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, rows, cols, 1, &aa, rows, &bb, ldb, &ss, 1e-12, &rank, &wq, -1, &iwq);
    w->lwork = (int)wq + 64;
    w->lsA = calloc((size_t)rows * (size_t)cols + 2 * (size_t)ldb + 2, sizeof(double));
    w->lswork = calloc((size_t)w->lwork, sizeof(double));
    w->lsiwork = calloc((size_t)iwq + 64, sizeof *w->lsiwork);
    if (!w->lsA || !w->lswork || !w->lsiwork) return MBS_ERR_NOMEM;
    w->lsb = w->lsA + (size_t)rows * (size_t)cols;
    w->lss = w->lsb + ldb;
    return MBS_OK;
}

/* The multipliers of a projection from its correction D = x - x*:
 *   Phi_q^T sigma = -M D   (minimum norm; M (x - x*) + Phi^T sigma = 0)
 * Computing sigma = varsigma alpha (Phi x - g) instead would multiply a
 * residual at round-off level by ~1e9. */
static void proj_multipliers(ddm_ws *w, const double *D, double *sigma)
{
    const int n = w->n, nc = w->nc, ldb = n > nc ? n : nc;
    if (nc == 0) return;
    for (int i = 0; i < n; i++) {
        double a = 0;
        for (int j = 0; j < n; j++) a += w->M[(size_t)i * n + j] * D[j];
        w->lsb[i] = -a;
    }
    for (int i = n; i < ldb; i++) w->lsb[i] = 0;
    for (int c = 0; c < nc; c++)
        for (int r = 0; r < n; r++) w->lsA[(size_t)c * n + r] = w->Phi[(size_t)c * n + r];
    lapack_int rank = 0;
    LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, n, nc, 1, w->lsA, n, w->lsb, ldb, w->lss, 1e-12, &rank, w->lswork,
                        w->lwork, w->lsiwork);
    memcpy(sigma, w->lsb, sizeof(double) * (size_t)nc);
}

/* Minimum-norm least-squares solve of [Phi (nc rows); B (fixed coordinates)] X = RHS
 * for nrhs columns (RHS: (nc + nf) x nrhs col-major, X out n x nrhs). Once per run. */
static int lsq_stacked(const mbs_model *m, int n, int nc, const double *Phi, const double *RHS, int nrhs,
                       double *X)
{
    const int nf = m->con.nfixed, rows = nc + nf, ldb = rows > n ? rows : n;
    if (n == 0 || nrhs == 0) return MBS_OK;
    double *A = calloc((size_t)rows * (size_t)n + 1, sizeof(double));
    double *B = calloc((size_t)ldb * (size_t)nrhs + 1, sizeof(double));
    double *s = calloc((size_t)n + 1, sizeof(double));
    int rc = MBS_OK;
    if (!A || !B || !s) {
        rc = MBS_ERR_NOMEM;
        goto done;
    }
    for (int j = 0; j < n; j++) {
        for (int r = 0; r < nc; r++) A[(size_t)j * rows + r] = Phi[(size_t)r * n + j];
        for (int i = 0; i < nf; i++) A[(size_t)j * rows + nc + i] = m->con.fixed[i] == j ? 1 : 0;
    }
    for (int c = 0; c < nrhs; c++)
        for (int r = 0; r < rows; r++) B[(size_t)c * ldb + r] = RHS[(size_t)c * rows + r];
    lapack_int rank = 0;
    if (rows > 0 && LAPACKE_dgelsd(LAPACK_COL_MAJOR, rows, n, nrhs, A, rows, B, ldb, s, 1e-11, &rank) != 0) {
        rc = MBS_ERR_NUMERIC;
        goto done;
    }
    for (int c = 0; c < nrhs; c++)
        for (int i = 0; i < n; i++) X[(size_t)c * n + i] = rows > 0 ? B[(size_t)c * ldb + i] : 0;
done:
    free(A);
    free(B);
    free(s);
    return rc;
}

/* ---------------------------------------------------------------- t0 */

int sens_loops_kinematic_init(sens_run *r, double t, const double *z, const double *zd, const double *zdd,
                              double *Z, double *Zd, mbs_error *err)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int n = m->nq, nc = mbs_model_nconstraints(m), np = r->np, nf = m->con.nfixed, rows = nc + nf;
    memset(Z, 0, sizeof(double) * (size_t)n * (size_t)np);
    memset(Zd, 0, sizeof(double) * (size_t)n * (size_t)np);
    if (m->con.ncut + m->con.ndriver == 0 || np == 0) return MBS_OK;   /* open tree: the state is given */
    double *RHS = calloc((size_t)rows * (size_t)np + 1, sizeof(double));
    double *Phi = calloc((size_t)nc * (size_t)n + 1, sizeof(double)), *dx = calloc((size_t)m->nx + 1, sizeof(double));
    double *v = calloc((size_t)nc + 1, sizeof(double));
    int rc = MBS_OK;
    if (!RHS || !Phi || !dx || !v) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    mbs_data_set_time(d, t);
    /* positions: [Phi_q; B] z' = [-dPhi(dx); 0] (the assembly held the fixed coordinates) */
    mbs_form_primal(m, d, t, z, zd, zdd, NULL, NULL, Phi, NULL, NULL);
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, NULL, NULL, NULL, dx, NULL, v, NULL, NULL, NULL);
        for (int i = 0; i < nc; i++) RHS[(size_t)j * rows + i] = -v[i];
    }
    if ((rc = lsq_stacked(m, n, nc, Phi, RHS, np, Z))) goto fail;
    /* velocities: [Phi_q; B] zd' = [-dPhid(z', 0, 0, dx) (zd fixed); 0] */
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, Z + (size_t)j * n, NULL, NULL, dx, NULL, NULL, NULL, v, NULL);
        for (int i = 0; i < nc; i++) RHS[(size_t)j * rows + i] = -v[i];
        for (int i = 0; i < nf; i++) RHS[(size_t)j * rows + nc + i] = 0;
    }
    if ((rc = lsq_stacked(m, n, nc, Phi, RHS, np, Zd))) goto fail;
    goto done;
fail:
    mbs_error_set(err, rc, "sensitivity at t = %.9g: initial kinematic sensitivities (least squares)", t);
done:
    free(RHS);
    free(Phi);
    free(dx);
    free(v);
    return rc;
}

static int init_sens(sens_run *r, ddm_ws *w, const mbs_sim_options *so, double t, const double *z,
                     const double *zd, const double *zdd, mbs_error *err)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int n = w->n, nc = w->nc, np = w->np;
    const double al = so->penalty, om = so->omega, xi = so->xi;
    int rc = sens_loops_kinematic_init(r, t, z, zd, zdd, w->Z, w->Zd, err);
    if (rc) return rc;
    mbs_data_set_time(d, t);
    mbs_form_primal(m, d, t, z, zd, zdd, w->r, w->phi, w->Phi, w->phid, w->phidd);
    /* accelerations: penalty formulation */
    mbs_crba(m, &d->ws, w->M);
    memcpy(w->P, w->M, sizeof(double) * (size_t)n * (size_t)n);
    mbs_form_add_PtP(n, nc, w->Phi, al, w->P);
    if (n > 0 && mbs_form_chol(n, w->P) != 0) {
        return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: penalty matrix not positive definite",
                             t);
    }
    for (int i = 0; i < nc; i++) w->lam[i] = al * (w->phidd[i] + 2 * om * xi * w->phid[i] + om * om * w->phi[i]);
    for (int j = 0; j < np; j++) {
        double *zj = w->Z + (size_t)j * n, *zdj = w->Zd + (size_t)j * n, *zddj = w->Zdd + (size_t)j * n;
        mbs_deriv_param_dx(m, j, w->dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, zj, zdj, NULL, w->dx, w->dr, w->dphi, w->dPhi, w->dphid,
                         w->dphidd);
        /* rhs = -[dr + dPhi^T lam + Phi^T al (dphidd + 2 om xi dphid + om^2 dphi)] */
        for (int i = 0; i < nc; i++) w->viol[i] = al * (w->dphidd[i] + 2 * om * xi * w->dphid[i] + om * om * w->dphi[i]);
        mbs_form_Ptv(n, nc, w->dPhi, w->lam, w->rhs, 0);
        mbs_form_Ptv(n, nc, w->Phi, w->viol, w->rhs, 1);
        for (int i = 0; i < n; i++) zddj[i] = -(w->dr[i] + w->rhs[i]);
        if (n > 0) mbs_form_chol_solve(n, w->P, zddj);
    }
    return MBS_OK;
}

/* ---------------------------------------------------------------- projections */

/* One projection's sensitivity, for the correction x' = x*' + D:
 *   penalty:   P_hat D = rhs - sa Phi^T dv
 *   iterative: P_hat D = rhs - Phi^T (s' + sa dv),  s' <- s' + sa (Phi D + dv)  until Phi D + dv = 0
 * rhs = -d(M v) - dPhi_q^T s_eff (w->rhs), dv = the full tangent of the
 * violation along (z', x*', ...) (w->viol, nc): both small, as the
 * correction. x (in: x*', out: x'). */
static int proj_solve(ddm_ws *w, int iterative, double sa, double *x, double *s_mu)
{
    const int n = w->n, nc = w->nc;
    for (int i = 0; i < nc; i++) s_mu[i] = 0;
    for (int k = 0; k < (iterative ? AL_MAX_ITER : 1); k++) {
        for (int i = 0; i < nc; i++) w->dphi[i] = s_mu[i] + sa * w->viol[i];
        mbs_form_Ptv(n, nc, w->Phi, w->dphi, w->v, 0);
        for (int i = 0; i < n; i++) w->v[i] = w->rhs[i] - w->v[i];
        mbs_form_proj_solve(n, nc, w->M, w->Phi, sa, w->P, w->v, w->vv, w->s1, w->s2);
        if (!iterative) {
            for (int i = 0; i < n; i++) x[i] += w->vv[i];
            return MBS_OK;
        }
        mbs_form_Pv(n, nc, w->Phi, w->vv, w->dphid);
        double vn = 0, sc = 0;
        for (int i = 0; i < nc; i++) {
            const double e = w->dphid[i] + w->viol[i];
            s_mu[i] += sa * e;
            vn += e * e;
            sc += w->viol[i] * w->viol[i] + w->dphid[i] * w->dphid[i];
        }
        if (sqrt(vn) <= 1e-14 * (1 + sqrt(sc))) {
            for (int i = 0; i < n; i++) x[i] += w->vv[i];
            return MBS_OK;
        }
    }
    return MBS_ERR_NUMERIC;
}

/* ---------------------------------------------------------------- driver */

int sens_ddm_ali3p(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int n = r->nq, np = r->np, no = r->nobj, nc = mbs_model_nconstraints(m);
    const size_t N = (size_t)n, P = (size_t)np;
    int rc = MBS_OK;
    mbs_sim_options so = r->o->sim;
    so.integrator = MBS_INTEGRATOR_TRAPEZOIDAL;
    so.loop = MBS_LOOP_ALI3P;
    ddm_ws w;
    memset(&w, 0, sizeof w);
    w.n = n;
    w.nc = nc;
    w.np = np;
    mbs_data *di = mbs_data_create(m, err);
    mbs_integrator *it = di ? mbs_integrator_create(m, di, &so, err) : NULL;
    if (!it) {
        rc = err && err->code ? err->code : MBS_ERR_NOMEM;
        goto done;
    }
    if (ws_alloc(&w, m, no)) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    double t = so.t0;
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);
    mbs_data *d = r->d;
    const double al = so.penalty, sa = so.proj_scale * so.penalty;
    const int iterative = so.projection == MBS_PROJ_ITERATIVE;
    if ((rc = init_sens(r, &w, &so, t, q, qd, qdd, err))) goto done;

    for (int k = 0; k < no; k++) { r->psi[k] = 0; for (int j = 0; j < np; j++) r->grad[k * np + j] = 0; }
    sens_objectives(r, q, qd, qdd, t, 0, w.g);
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, w.dx);
        sens_objectives_d(r, q, qd, qdd, w.Z + j * N, w.Zd + j * N, w.Zdd + j * N, w.dx, t, 0, w.dgj);
        for (int k = 0; k < no; k++) w.dg[(size_t)k * P + j] = w.dgj[k];
    }
    if (r->o->history) r->o->history(r->o->history_user, t, no, np, r->psi, r->grad);

    while (t < so.tf - 1e-12 * fmax(1, fabs(so.tf))) {
        const double h = fmin(so.dt, so.tf - t), kh = BETA * h * h, c1 = GAMMA / (BETA * h), d1 = 1 / kh;
        for (int k = 0; k < no; k++) {
            r->psi[k] += 0.5 * h * w.g[k];
            for (int j = 0; j < np; j++) r->grad[k * np + j] += 0.5 * h * w.dg[(size_t)k * P + j];
        }
        if ((rc = mbs_integrator_step(it, h, err))) goto done;
        t = mbs_integrator_time(it);
        q = mbs_integrator_q(it);
        qd = mbs_integrator_qd(it);
        qdd = mbs_integrator_qdd(it);
        const mbs_form_step *st = mbs_form_last_step(it);
        const double *zds = st->zd_star, *zdds = st->zdd_star;
        memcpy(w.lam, st->lambda, sizeof(double) * (size_t)nc);
        mbs_data_set_time(d, t);

        /* ---- index-3 stage: exact tangent at (z, zd*, zdd*), LU of S + kh al Phi^T Phi ---- */
        mbs_form_primal(m, d, t, q, zds, zdds, w.r, w.phi, w.Phi, NULL, NULL);
        {
            double *dq = w.e, *dqd = w.e + n, *dqdd = w.e + 2 * n;
            memset(w.e, 0, sizeof(double) * 3 * N);
            for (int c = 0; c < n; c++) {
                dq[c] = kh;
                dqd[c] = GAMMA * h;
                dqdd[c] = 1;
                double *col = w.S + (size_t)c * N;
                mbs_form_tangent(m, d, t, q, zds, zdds, dq, dqd, dqdd, NULL, col, NULL, w.dPhi, NULL, NULL);
                mbs_form_Ptv(n, nc, w.dPhi, w.lam, col, 1);
                dq[c] = dqd[c] = dqdd[c] = 0;
            }
            mbs_form_add_PtP(n, nc, w.Phi, kh * al, w.S);
            if (n > 0 && mbs_form_lu(n, w.S, w.ipiv) != 0) {
                rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: step tangent singular", t);
                goto done;
            }
        }
        for (int j = 0; j < np; j++) {
            double *zj = w.Z + j * N, *zdj = w.Zd + j * N, *zddj = w.Zdd + j * N;
            double *zdsj = w.Zds + j * N, *zddsj = w.Zdds + j * N, *mu = w.MU + (size_t)j * (size_t)nc;
            for (int i = 0; i < n; i++) {
                w.zp[i] = zj[i] + h * zdj[i] + 0.5 * h * h * zddj[i];
                w.zdp[i] = zdj[i] + h * zddj[i];
                w.zddn[i] = zddj[i];
            }
            mbs_deriv_param_dx(m, j, w.dx);
            mbs_form_tangent(m, d, t, q, zds, zdds, w.zp, w.zdp, w.zddn, w.dx, w.dr, w.dphi, w.dPhi, NULL, NULL);
            mbs_form_Ptv(n, nc, w.dPhi, w.lam, w.dr, 1);   /* w = dr + dPhi^T lambda */
            for (int i = 0; i < nc; i++) mu[i] *= so.lambda_factor;
            int ok = 0;
            for (int k = 0; k < AL_MAX_ITER && !ok; k++) {
                for (int i = 0; i < nc; i++) w.viol[i] = mu[i] + al * w.dphi[i];
                mbs_form_Ptv(n, nc, w.Phi, w.viol, w.rhs, 0);
                for (int i = 0; i < n; i++) w.v[i] = -kh * (w.dr[i] + w.rhs[i]);
                if (n > 0) mbs_form_lu_solve(n, w.S, w.ipiv, w.v);
                mbs_form_Pv(n, nc, w.Phi, w.v, w.dphid);
                double vn = 0, sc = 0;
                for (int i = 0; i < nc; i++) {
                    const double e = w.dphid[i] + w.dphi[i];
                    mu[i] += al * e;
                    vn += e * e;
                    sc += w.dphi[i] * w.dphi[i] + w.dphid[i] * w.dphid[i];
                }
                if (sqrt(vn) <= 1e-14 * (1 + sqrt(sc))) ok = 1;
            }
            if (!ok) {
                rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: the multiplier iteration of "
                                   "parameter %s did not converge", t, m->param[j].name);
                goto done;
            }
            for (int i = 0; i < n; i++) {
                zj[i] = w.zp[i] + w.v[i];
                zdsj[i] = w.zdp[i] + c1 * w.v[i];
                zddsj[i] = w.zddn[i] + d1 * w.v[i];
            }
        }

        /* ---- projections (the branches the step took) ---- */
        const int vel = st->vel_projected, acc = st->acc_projected;
        if (vel || acc) {
            mbs_crba(m, &d->ws, w.M);   /* positions of the last primal: z */
            memcpy(w.P, w.M, sizeof(double) * N * N);
            mbs_form_add_PtP(n, nc, w.Phi, sa, w.P);
            if (n > 0 && mbs_form_chol(n, w.P) != 0) {
                rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: projection matrix", t);
                goto done;
            }
        }
        /* d(M v) = dr(z, zd, a) - dr(z, zd, a - v) along the same (z', ., 0, dx): r is affine in the
         * accelerations, and the Q-terms cancel. The first primal, at the projected state, also gives
         * the constraint tangents. */
        if (vel) {
            for (int i = 0; i < n; i++) {
                w.vv[i] = qd[i] - zds[i];
                w.va[i] = qdd[i] - w.vv[i];
            }
            mbs_form_primal(m, d, t, q, qd, w.va, w.DR0, NULL, NULL, NULL, NULL);
            for (int j = 0; j < np; j++) {
                mbs_deriv_param_dx(m, j, w.dx);
                mbs_form_tangent(m, d, t, q, qd, w.va, w.Z + j * N, w.Zds + j * N, NULL, w.dx, w.DR1 + j * N, NULL,
                                 NULL, NULL, NULL);
            }
            mbs_form_primal(m, d, t, q, qd, qdd, w.DR0, NULL, NULL, w.phid, NULL);
            proj_multipliers(&w, w.vv, w.sig);   /* vv = zd - zd* */
            for (int j = 0; j < np; j++) {
                double *zdsj = w.Zds + j * N;
                mbs_deriv_param_dx(m, j, w.dx);
                /* the violation's tangent along (z', zd*'): Phi_q zd*' + dPhid|zd */
                mbs_form_tangent(m, d, t, q, qd, qdd, w.Z + j * N, zdsj, NULL, w.dx, w.dr, NULL, w.dPhi, w.viol,
                                 NULL);
                mbs_form_Ptv(n, nc, w.dPhi, w.sig, w.rhs, 0);
                for (int i = 0; i < n; i++) w.rhs[i] = -(w.dr[i] - w.DR1[j * N + i]) - w.rhs[i];
                memcpy(w.Zd + j * N, zdsj, sizeof(double) * N);
                if (proj_solve(&w, iterative, sa, w.Zd + j * N, w.kap) != MBS_OK) {
                    rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: velocity projection", t);
                    goto done;
                }
            }
        } else {
            memcpy(w.Zd, w.Zds, sizeof(double) * N * P);
        }
        if (acc) {
            mbs_form_primal(m, d, t, q, qd, zdds, w.DR0, NULL, NULL, NULL, NULL);
            for (int j = 0; j < np; j++) {
                mbs_deriv_param_dx(m, j, w.dx);
                mbs_form_tangent(m, d, t, q, qd, zdds, w.Z + j * N, w.Zd + j * N, w.Zdds + j * N, w.dx,
                                 w.DR2 + j * N, NULL, NULL, NULL, NULL);
            }
            mbs_form_primal(m, d, t, q, qd, qdd, w.DR0, NULL, NULL, NULL, w.phidd);
            for (int i = 0; i < n; i++) w.va[i] = qdd[i] - zdds[i];
            proj_multipliers(&w, w.va, w.kap);
            for (int j = 0; j < np; j++) {
                double *zddsj = w.Zdds + j * N;
                mbs_deriv_param_dx(m, j, w.dx);
                /* the violation's tangent along (z', zd', zdd*'): Phi_q zdd*' + dPhidd|zdd */
                mbs_form_tangent(m, d, t, q, qd, qdd, w.Z + j * N, w.Zd + j * N, zddsj, w.dx, w.dr, NULL, w.dPhi,
                                 NULL, w.viol);
                mbs_form_Ptv(n, nc, w.dPhi, w.kap, w.rhs, 0);
                for (int i = 0; i < n; i++) w.rhs[i] = -(w.dr[i] - w.DR2[j * N + i]) - w.rhs[i];
                memcpy(w.Zdd + j * N, zddsj, sizeof(double) * N);
                if (proj_solve(&w, iterative, sa, w.Zdd + j * N, w.dphidd) != MBS_OK) {
                    rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: acceleration projection", t);
                    goto done;
                }
            }
        } else {
            memcpy(w.Zdd, w.Zdds, sizeof(double) * N * P);
        }

        /* ---- objectives at t_{n+1} ---- */
        sens_objectives(r, q, qd, qdd, t, 0, w.g);
        for (int j = 0; j < np; j++) {
            mbs_deriv_param_dx(m, j, w.dx);
            sens_objectives_d(r, q, qd, qdd, w.Z + j * N, w.Zd + j * N, w.Zdd + j * N, w.dx, t, 0, w.dgj);
            for (int k = 0; k < no; k++) w.dg[(size_t)k * P + j] = w.dgj[k];
        }
        for (int k = 0; k < no; k++) {
            r->psi[k] += 0.5 * h * w.g[k];
            for (int j = 0; j < np; j++) r->grad[k * np + j] += 0.5 * h * w.dg[(size_t)k * P + j];
        }
        if (r->o->history && r->o->history(r->o->history_user, t, no, np, r->psi, r->grad)) break;
    }
    /* terminal terms at tF */
    sens_objectives(r, q, qd, qdd, t, 1, w.g);
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, w.dx);
        sens_objectives_d(r, q, qd, qdd, w.Z + j * N, w.Zd + j * N, w.Zdd + j * N, w.dx, t, 1, w.dgj);
        for (int k = 0; k < no; k++) r->grad[k * np + j] += w.dgj[k];
    }
    for (int k = 0; k < no; k++) r->psi[k] += w.g[k];
done:
    if (stats && it) mbs_integrator_stats(it, stats);
    mbs_integrator_free(it);
    mbs_data_free(di);
    ws_free(&w);
    return rc;
}
