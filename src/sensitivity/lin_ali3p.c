/*
 * lin_ali3p.c - the linearization of one ALI3-P step (the
 * discrete map of src/formulations/ali3p.c, projections included, the
 * branch the step took), shared by the direct differentiation
 * (ddm_ali3p.c) and the discrete adjoint (davm_ali3p.c);
 * docs/sensitivity.md "DDM and DAVM of ALI3-P".
 *
 * The step maps y_n = (z_n, zd_n, zdd_n) (projected values) and rho to
 * y_{n+1}; its linearization y_{n+1}' = A y_n' + B rho' is never formed as
 * a matrix. sens_ali_lin_form forms the point Jacobians of the residual and
 * the constraints at the states the step visited (all at the step's
 * converged z):
 *   P1 = (z, zd*, zdd*)   index-3 stage: f = r + Phi_z^T lambda
 *       F_z = dr/dz + d(Phi_z^T lambda)/dz, F_zd = dr/dzd, F_zdd = M,
 *       F_rho = dr/drho + dPhi_z/drho^T lambda, Phi_z, Phi_rho
 *   P2 = (z, zd, zdd)     the projected state: d(Phi_z^T sigma)/dz, d(Phi_z^T kappa)/dz,
 *       dPhid/dz (fixed zd), dPhidd/dz, dPhidd/dzd, and their rho columns
 *   d(M v)/dz = dr/dz(z, zd, zdd) - dr/dz(z, zd, zdd - v) (r is affine in
 *       the accelerations: the Q terms cancel), v = zd - zd* (velocity
 *       projection) or zdd - zdd* (acceleration projection); likewise for rho.
 * State Jacobians of r come from the all-columns inverse-dynamics kernel
 * (mbs_deriv_id_derivatives), the constraint second derivatives from one
 * constraint tangent per coordinate, rho columns from one tangent sweep per
 * parameter and point (none for the parameters the caller skips). The DDM
 * (sens_ali_lin_step) takes each column (Y_j, e_j) forwards through the
 * linear algebra below; the DAVM (sens_ali_lin_reverse) takes an adjoint
 * backwards through its transpose, operation by operation:
 *   predictor  z_p' = z' + h zd' + h^2/2 zdd',  zd_p' = zd' + h zdd',  zdd_n' = zdd'
 *   index-3    S D' + beta h^2 Phi_z^T mu = -beta h^2 w,  Phi_z D' = -dPhi
 *              w = F_z z_p' + F_zd zd_p' + M zdd_n' (+ F_rho e_j),
 *              dPhi = Phi_z z_p' (+ Phi_rho e_j),
 *              S = M + gamma h F_zd + beta h^2 F_z (the exact tangent),
 *              solved exactly in the singular basis of Phi_z^T (stage_factor,
 *              stage_solve)
 *   z' = z_p' + D', zd*' = zd_p' + gamma/(beta h) D', zdd*' = zdd_n' + D'/(beta h^2)
 *   velocity projection (if taken): M Dv' + Phi_z^T sigma' = -(H_v z' (+ H_v,rho e_j)),
 *              Phi_z Dv' = -(Phi_z zd*' + Phid_z z' (+ Phid_rho e_j)),  zd' = zd*' + Dv'
 *              (penalty form: one solve with P_hat = M + varsigma alpha Phi^T Phi,
 *              iterative form: the exact constrained solve, both in the singular basis)
 *              H_v = d(M v)/dz + d(Phi_z^T sigma)/dz
 *   acceleration projection likewise with H_a, kappa and
 *              Phidd_z z' + Phidd_zd zd' + Phi_z zdd*'.
 * The multipliers sigma, kappa come from the corrections (minimum norm
 * Phi_z^T sigma = -M (zd - zd*)).
 */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "lin_ali3p.h"
#include "../formulations/form_impl.h"
#include "../constraints/constraint.h"
#include "kernels/jacobians_1dof.h"

#define BETA MBS_FORM_BETA
#define GAMMA MBS_FORM_GAMMA

/* y = A x for A n x n row-major (add: y += A x) */
static void mv(int rows, int cols, const double *A, const double *x, double *y, int add)
{
    for (int i = 0; i < rows; i++) {
        const double *a = A + (size_t)i * cols;
        double s = add ? y[i] : 0;
        for (int j = 0; j < cols; j++) s += a[j] * x[j];
        y[i] = s;
    }
}

/* y = A x for A n x n column-major */
static void mv_colmajor(int n, const double *A, const double *x, double *y)
{
    for (int i = 0; i < n; i++) y[i] = 0;
    for (int c = 0; c < n; c++) {
        const double *a = A + (size_t)c * n, xc = x[c];
        for (int i = 0; i < n; i++) y[i] += a[i] * xc;
    }
}

void sens_ali_lin_free(sens_ali_lin *w)
{
    if (!w) return;
    free(w->base);
    free(w->ipiv);
    free(w->Kp);
    free(w->svA);
    free(w->force_only);
    free(w->zpb);
    memset(w, 0, sizeof *w);
}

int sens_ali_lin_create(sens_ali_lin *w, const mbs_model *m, int np)
{
    memset(w, 0, sizeof *w);
    const int n = m->nq, nc = mbs_model_nconstraints(m);
    w->n = n;
    w->nc = nc;
    w->np = np;
    w->nu = 3 * n + np;
    const size_t N = (size_t)n + 1, C = (size_t)nc + 1, Pp = (size_t)np + 1, nx = (size_t)m->nx + 1;
    size_t total = 10 * N * N + 5 * C * N + 5 * N * Pp + 3 * C * Pp + 13 * N + 9 * C + nx;
    double *p = calloc(total, sizeof(double));
    w->base = p;
    w->ipiv = calloc(N + C, sizeof *w->ipiv);
    w->Kp = calloc((N + C) * (N + C), sizeof(double));
    if (!p || !w->ipiv || !w->Kp) return MBS_ERR_NOMEM;
    double **nn[] = { &w->M, &w->Fz, &w->Fzd, &w->S, &w->Hv, &w->Ha, &w->Aq, &w->SU, &w->KN, &w->KB };
    for (size_t k = 0; k < sizeof nn / sizeof nn[0]; k++) { *nn[k] = p; p += N * N; }
    double **cn[] = { &w->Phi, &w->Vz, &w->Az, &w->Azd, &w->dPhi };
    for (size_t k = 0; k < sizeof cn / sizeof cn[0]; k++) { *cn[k] = p; p += C * N; }
    double **np_[] = { &w->Fp, &w->Hvp, &w->Hap, &w->DR2, &w->DR3 };
    for (size_t k = 0; k < sizeof np_ / sizeof np_[0]; k++) { *np_[k] = p; p += N * Pp; }
    double **cp[] = { &w->Pp, &w->Vp, &w->Ap };
    for (size_t k = 0; k < sizeof cp / sizeof cp[0]; k++) { *cp[k] = p; p += C * Pp; }
    double **vn[] = { &w->r, &w->zp, &w->zdp, &w->zddn, &w->wv, &w->v, &w->rhs, &w->vv, &w->va, &w->dr, &w->x1,
                      &w->e, &w->tmp };
    for (size_t k = 0; k < sizeof vn / sizeof vn[0]; k++) { *vn[k] = p; p += N; }
    double **vc[] = { &w->phi, &w->phid, &w->phidd, &w->sig, &w->kap, &w->dphi, &w->dphid, &w->dphidd, &w->viol };
    for (size_t k = 0; k < sizeof vc / sizeof vc[0]; k++) { *vc[k] = p; p += C; }
    w->dx = p; p += nx;
    double aa = 0, bb = 0, ss = 0;
    /* dgesvd of Phi_z^T (n x nc): U n x n, V^T nc x nc */
    const int mn = n < nc ? n : nc;
    double sq = 0;
    if (n > 0 && nc > 0)
        LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'A', 'A', n, nc, &aa, n, &ss, &aa, n, &bb, nc, &sq, -1);
    w->svlwork = (int)sq + 64;
    w->svA = calloc(N * C + (size_t)mn + 1 + 3 * N * N + C * C + (size_t)w->svlwork + N, sizeof(double));
    if (!w->svA) return MBS_ERR_NOMEM;
    w->sv = w->svA + N * C;
    w->U = w->sv + mn + 1;
    w->K = w->U + N * N;
    w->UMU = w->K + N * N;
    w->VT = w->UMU + N * N;
    w->svwork = w->VT + C * C;
    w->y = w->svwork + w->svlwork;
    /* parameters that only set numbers of force elements: the element loads depend on (z, zd, t) only,
     * so at the projected state their d(M v)/drho, constraint and multiplier columns vanish */
    w->force_only = calloc(4 * (size_t)np + 1, sizeof(int));
    if (!w->force_only) return MBS_ERR_NOMEM;
    w->dynamic = w->force_only + np;
    w->skip = w->dynamic + np;
    w->pc = w->skip + np;
    w->zpb = calloc(10 * N + 4 * C, sizeof(double));
    if (!w->zpb) return MBS_ERR_NOMEM;
    {
        double *q = w->zpb;
        double **rn[] = { &w->zpb, &w->zdpb, &w->zddnb, &w->wvb, &w->vb, &w->z1b, &w->zd1b, &w->zdd1b, &w->rhsb,
                          &w->xsb };
        for (size_t k = 0; k < sizeof rn / sizeof rn[0]; k++) { *rn[k] = q; q += N; }
        double **rc[] = { &w->dphib, &w->gb, &w->gvb, &w->gab };
        for (size_t k = 0; k < sizeof rc / sizeof rc[0]; k++) { *rc[k] = q; q += C; }
    }
    for (int j = 0; j < np; j++) w->dynamic[j] = mbs_form_param_dynamic(m, j);
    for (int j = 0; j < np; j++) {
        const mbs_param_info *pi = &m->param[j];
        int all = pi->ntargets > 0;
        for (int t = 0; t < pi->ntargets && all; t++) {
            int in = 0;
            for (int k = 0; k < m->nforce && !in; k++)
                in = pi->target[t] >= m->force[k].x && pi->target[t] < m->force[k].x + m->force[k].nx;
            all = in;
        }
        w->force_only[j] = all;
    }
    return MBS_OK;
}

/* The projection matrix P_hat = M + sa Phi^T Phi in the singular basis of
 * Phi_z^T = U Sigma V^T: U^T P_hat U = U^T M U + sa Sigma Sigma^T. Scaled
 * by the singular values this is well conditioned, so its Cholesky factor
 * solves accurately for any right-hand side, including the large,
 * inconsistent ones of the unit input columns (in the original coordinates
 * the solve would lose ~eps sa / m relative to them). The iterative
 * (exact) projection uses the null-space block of U^T M U instead. */
static int svd_basis(sens_ali_lin *w)
{
    const int n = w->n, nc = w->nc, mn = n < nc ? n : nc;
    const size_t N = (size_t)n;
    if (n == 0) return MBS_OK;
    for (size_t k = 0; k < N * N; k++) w->U[k] = 0;
    for (int i = 0; i < n; i++) w->U[(size_t)i * n + i] = 1;
    for (int i = 0; i <= mn; i++) w->sv[i] = 0;
    if (nc > 0) {
        memcpy(w->svA, w->Phi, sizeof(double) * N * (size_t)nc);   /* row-major Phi = col-major Phi^T */
        if (LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'A', 'A', n, nc, w->svA, n, w->sv, w->U, n, w->VT, nc, w->svwork,
                                w->svlwork) != 0)
            return MBS_ERR_NUMERIC;
    }
    w->rank = 0;
    for (int i = 0; i < mn; i++)
        if (w->sv[i] > 1e-10 * w->sv[0]) w->rank++;
    return MBS_OK;
}

static int proj_basis(sens_ali_lin *w, double sa, int iterative)
{
    const int n = w->n, mn = n < w->nc ? n : w->nc;
    const size_t N = (size_t)n;
    if (n == 0) return MBS_OK;
    /* UMU = U^T M U (col-major) */
    for (int a = 0; a < n; a++) {
        mv(n, n, w->M, w->U + (size_t)a * n, w->tmp, 0);
        for (int b = 0; b < n; b++) {
            const double *ub = w->U + (size_t)b * n;
            double s = 0;
            for (int i = 0; i < n; i++) s += ub[i] * w->tmp[i];
            w->UMU[(size_t)a * n + b] = s;
        }
    }
    if (!iterative) {
        memcpy(w->K, w->UMU, sizeof(double) * N * N);
        for (int i = 0; i < mn; i++) w->K[(size_t)i * n + i] += sa * w->sv[i] * w->sv[i];
        return mbs_dense_chol(n, w->K) ? MBS_ERR_NUMERIC : MBS_OK;
    }
    const int r = w->rank, q = n - r;
    for (int a = 0; a < q; a++)
        for (int b = 0; b < q; b++) w->K[(size_t)a * q + b] = w->UMU[(size_t)(r + a) * n + r + b];
    return q > 0 && mbs_dense_chol(q, w->K) ? MBS_ERR_NUMERIC : MBS_OK;
}

/* The index-3 stage's linearization, solved exactly in the singular basis
 * of Phi_z^T = U Sigma V^T (no multiplier iteration): with D' = U y,
 *   Phi_z D' = -dPhi        gives  sigma_a y_a = -(V^T dPhi)_a,  a < rank
 *                                  (least squares where dPhi is inconsistent),
 *   S D' + beta h^2 Phi_z^T mu = -beta h^2 w, projected on the null space
 *   U_N (where Phi_z^T mu has no component):
 *       (U_N^T S U_N) y_N = -beta h^2 U_N^T w - (U_N^T S U_R) y_R.
 * stage_factor forms U_N^T S U_N (LU) and U_N^T S U_R once per step from
 * S (col-major); stage_solve takes one column in O(n^2 + nc^2). */
static int stage_factor(sens_ali_lin *w)
{
    const int n = w->n, r = w->rank, q = n - r;
    for (int a = 0; a < n; a++) mv_colmajor(n, w->S, w->U + (size_t)a * n, w->SU + (size_t)a * n);
    for (int b = 0; b < q; b++) {
        const double *ub = w->U + (size_t)(r + b) * n;
        for (int a = 0; a < n; a++) {
            const double *sa = w->SU + (size_t)a * n;
            double s = 0;
            for (int i = 0; i < n; i++) s += ub[i] * sa[i];
            if (a < r) w->KB[(size_t)a * q + b] = s;
            else w->KN[(size_t)(a - r) * q + b] = s;
        }
    }
    return q > 0 && mbs_dense_lu(q, w->KN, w->ipiv) != 0 ? MBS_ERR_NUMERIC : MBS_OK;
}

static void stage_solve(sens_ali_lin *w, double kh, const double *wv, const double *dphi, double *v)
{
    const int n = w->n, nc = w->nc, r = w->rank, q = n - r;
    double *y = w->y;
    for (int a = 0; a < r; a++) {
        double g = 0;
        for (int k = 0; k < nc; k++) g += w->VT[(size_t)k * nc + a] * dphi[k];
        y[a] = -g / w->sv[a];
    }
    for (int b = 0; b < q; b++) {
        const double *ub = w->U + (size_t)(r + b) * n;
        double s = 0;
        for (int i = 0; i < n; i++) s += ub[i] * wv[i];
        s *= -kh;
        for (int a = 0; a < r; a++) s -= w->KB[(size_t)a * q + b] * y[a];
        y[r + b] = s;
    }
    if (q > 0) mbs_dense_lu_solve(q, w->KN, w->ipiv, y + r);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int a = 0; a < n; a++) s += w->U[(size_t)a * n + i] * y[a];
        v[i] = s;
    }
}

/* x' of a projection: x*' (xs) and the linearized equations
 *   penalty:   P_hat x' = M x*' + rhs - sa Phi^T g
 *   iterative: M (x' - x*') + Phi^T s' = rhs,  Phi x' + g = 0
 * (g: the violation's tangent without the Phi x' part). x may alias xs. */
static void proj_apply(sens_ali_lin *w, int iterative, double sa, const double *xs, const double *rhs, const double *g,
                       double *x)
{
    const int n = w->n, nc = w->nc, mn = n < nc ? n : nc, r = w->rank;
    double *y = w->y, *u = w->x1;
    if (n == 0) return;
    if (!iterative) {
        mv(n, n, w->M, xs, u, 0);
        for (int i = 0; i < n; i++) u[i] += rhs[i];
        for (int a = 0; a < n; a++) {
            const double *ua = w->U + (size_t)a * n;
            double s = 0;
            for (int i = 0; i < n; i++) s += ua[i] * u[i];
            if (a < mn) {
                double vg = 0;
                for (int k = 0; k < nc; k++) vg += w->VT[(size_t)k * nc + a] * g[k];
                s -= sa * w->sv[a] * vg;
            }
            y[a] = s;
        }
        mbs_dense_chol_solve(n, w->K, y);
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int a = 0; a < n; a++) s += w->U[(size_t)a * n + i] * y[a];
            x[i] = s;
        }
        return;
    }
    /* viol = Phi x* + g; range part y_R = -Sigma^-1 V^T viol; null part from U_N^T M U y = U_N^T rhs */
    mbs_dense_Pv(n, nc, w->Phi, xs, w->viol);
    for (int k = 0; k < nc; k++) w->viol[k] += g[k];
    for (int a = 0; a < r; a++) {
        double vg = 0;
        for (int k = 0; k < nc; k++) vg += w->VT[(size_t)k * nc + a] * w->viol[k];
        y[a] = -vg / w->sv[a];
    }
    for (int a = r; a < n; a++) {
        const double *ua = w->U + (size_t)a * n;
        double s = 0;
        for (int i = 0; i < n; i++) s += ua[i] * rhs[i];
        for (int b = 0; b < r; b++) s -= w->UMU[(size_t)b * n + a] * y[b];
        y[a] = s;
    }
    if (n - r > 0) mbs_dense_chol_solve(n - r, w->K, y + r);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int a = 0; a < n; a++) s += w->U[(size_t)a * n + i] * y[a];
        x[i] = xs[i] + s;
    }
}

/* The multipliers of a projection from its correction D: Phi_z^T sigma = -M D
 * (minimum norm). Forming them as varsigma alpha times a violation at
 * round-off would amplify it by ~1e9. */
static void proj_multipliers(sens_ali_lin *w, const double *D, double *sigma)
{
    /* sigma = V_r Sigma_r^-1 U_r^T (-M D), with Phi_z^T = U Sigma V^T (proj_basis) */
    const int n = w->n, nc = w->nc, r = w->rank;
    if (nc == 0) return;
    mv(n, n, w->M, D, w->tmp, 0);
    for (int k = 0; k < nc; k++) sigma[k] = 0;
    for (int a = 0; a < r; a++) {
        const double *ua = w->U + (size_t)a * n;
        double s = 0;
        for (int i = 0; i < n; i++) s -= ua[i] * w->tmp[i];
        s /= w->sv[a];
        for (int k = 0; k < nc; k++) sigma[k] += w->VT[(size_t)k * nc + a] * s;
    }
}

/* the state Jacobian of r at (z, zd, zdd): dr/dz (and dr/dzd) row-major */
static int id_jac(sens_run *r, const double *z, const double *zd, const double *zdd, double *Rz, double *Rzd)
{
    return mbs_deriv_id_derivatives(r->m, r->d, z, zd, zdd, NULL, Rz, Rzd);
}

/* Every point of the step's linearization is at the converged z: the
 * positions are computed once (the P1 primal), the other points redo the
 * velocity and acceleration levels over them, then the loads, body terms,
 * residual r and (phid, phidd: NULL to skip) the constraints. */
static void primal_rates(const mbs_model *m, mbs_data *d, double t, const double *z, const double *zd,
                         const double *zdd, double *r, double *phid, double *phidd)
{
    mbs_kin_velocities(m, &d->ws, z, zd, zdd);
    mbs_data_prepare_loads(m, d, z, zd);
    mbs_body_terms(m, m->x, &d->ws);
    mbs_rnea(m, &d->ws, r ? r : d->dbuf);
    if (phid || phidd) mbs_con_kernel(m, m->x, &d->ws, z, zd, zdd, t, NULL, NULL, phid, NULL, NULL, phidd);
}

/* dr/dz at (z, zd, zdd) up to terms that do not depend on zdd (the force
 * elements' own columns): for the differences d(M v)/dz, where those cancel.
 * Without Euler parameters, the all-columns kernel alone, at the positions
 * in d->ws (the step's z). */
static int id_jac_acc(sens_run *r, const double *z, const double *zd, const double *zdd, double *Rz)
{
    const mbs_model *m = r->m;
    if (m->n_euler > 0) return id_jac(r, z, zd, zdd, Rz, NULL);
    /* trees of 1-DOF joints: the fused pass (the element loads, which it
     * leaves out, cancel in the differences); it does not touch d->ws */
    if (mbs_jac1_rigid_usable(m, r->d))
        return mbs_jac1_id_jacobians(m, r->d, z, zd, zdd, NULL, Rz, NULL, NULL) ? MBS_ERR_NUMERIC : MBS_OK;
    primal_rates(m, r->d, r->d->time, z, zd, zdd, NULL, NULL, NULL);
    mbs_rnea_jacobians(m, m->x, &r->d->ws, z, zd, zdd, 0, Rz, NULL, NULL);
    for (int k = 0; k < m->nq * m->nq; k++)
        if (!isfinite(Rz[k])) return MBS_ERR_NUMERIC;
    return MBS_OK;
}

/* ---- the form's columns on the threads of the run's team ----
 * The parameter columns and the state columns of the P2 point are
 * tangents at one primal state each: thread 0 computes them on r->d with
 * the scratch of w, thread t > 0 on its own data (sens_team_run) with its
 * own scratch, after redoing the primal passes of that point on it. */
typedef struct ali_tws {
    mbs_data *d;
    double *r, *phi, *phid, *phidd, *Phi, *M, *dPhi, *dphid, *dphidd, *e, *tmp, *dx, *dr;
} ali_tws;

static size_t ali_tws_size(const sens_ali_lin *w, const mbs_model *m)
{
    const size_t N = (size_t)w->n + 1, C = (size_t)w->nc + 1;
    return 4 * N + 5 * C + 2 * C * N + N * N + (size_t)m->nx + 1;
}

/* Thread th's data and scratch (w's own for th = 0). */
static void ali_tws_get(sens_ali_lin *w, sens_run *r, int th, ali_tws *s)
{
    if (th == 0) {
        *s = (ali_tws){ r->d, w->r, w->phi, w->phid, w->phidd, w->Phi, w->M, w->dPhi, w->dphid, w->dphidd, w->e,
                        w->tmp, w->dx, w->DR3 };
        return;
    }
    const size_t N = (size_t)w->n + 1, C = (size_t)w->nc + 1;
    double *p = sens_team_ws(r, th);
    s->d = sens_team_run(r, th)->d;
    double **vn[] = { &s->r, &s->e, &s->tmp, &s->dr };
    for (size_t k = 0; k < sizeof vn / sizeof vn[0]; k++) { *vn[k] = p; p += N; }
    double **vc[] = { &s->phi, &s->phid, &s->phidd, &s->dphid, &s->dphidd };
    for (size_t k = 0; k < sizeof vc / sizeof vc[0]; k++) { *vc[k] = p; p += C; }
    s->Phi = p; p += C * N;
    s->dPhi = p; p += C * N;
    s->M = p; p += N * N;
    s->dx = p;
}

/* Thread th's data and scratch at a point of the step: thread th > 0
 * redoes on its data the P1 primal (positions at z and the index-3
 * stage's point), as sens_ali_lin_form computes it on r->d, then, with a,
 * the rates at (z, zd, a) (and the constraints' with cons). */
static void ali_tws_at(sens_ali_lin *w, sens_run *r, int th, const sens_ali_rec *st, const double *a, int cons,
                       ali_tws *s)
{
    ali_tws_get(w, r, th, s);
    if (th == 0) return;
    const mbs_model *m = r->m;
    mbs_data_set_time(s->d, st->t);
    mbs_form_primal(m, s->d, st->t, st->z, st->zds, st->zdds, s->r, s->phi, s->Phi, NULL, NULL);
    mbs_crba(m, &s->d->ws, s->M);
    if (a) primal_rates(m, s->d, st->t, st->z, st->zd, a, s->r, cons ? s->phid : NULL, cons ? s->phidd : NULL);
}

/* P1: parameter j's residual and constraint tangents at (z, zd*, zdd*). */
static void ali_p1_column(sens_ali_lin *w, const mbs_model *m, const ali_tws *s, int j, double t, const double *z,
                          const double *zds, const double *zdds, const double *lam)
{
    const int n = w->n, nc = w->nc;
    double *fp = w->Fp + (size_t)j * (size_t)n, *pp = w->Pp + (size_t)j * nc;
    mbs_deriv_param_dx(m, j, s->dx);
    if (w->dynamic[j]) {
        mbs_form_tangent_dynamic(m, s->d, z, zds, s->dx, fp);
        memset(pp, 0, sizeof(double) * (size_t)nc);
        return;
    }
    mbs_form_tangent(m, s->d, t, z, zds, zdds, NULL, NULL, NULL, s->dx, fp, pp, s->dPhi, NULL, NULL);
    mbs_dense_Ptv(n, nc, s->dPhi, lam, fp, 1);
}

/* P2: the state column k (tangent along z_k at the projected state). */
static void ali_p2_state_column(sens_ali_lin *w, const mbs_model *m, const ali_tws *s, int k, double t,
                                const double *z, const double *zd, const double *zdd, const double *lam)
{
    const int n = w->n, nc = w->nc;
    memset(s->e, 0, sizeof(double) * (size_t)n);
    s->e[k] = 1;
    mbs_form_tangent(m, s->d, t, z, zd, zdd, s->e, NULL, NULL, NULL, NULL, NULL, s->dPhi, s->dphid, s->dphidd);
    s->e[k] = 0;   /* e stays zero: the velocity columns after these set one entry at a time */
    /* F_z += d(Phi_z^T lambda)/dz (row-major: column k) */
    mbs_dense_Ptv(n, nc, s->dPhi, lam, s->tmp, 0);
    for (int i = 0; i < n; i++) w->Fz[(size_t)i * n + k] += s->tmp[i];
    if (w->vel) {
        mbs_dense_Ptv(n, nc, s->dPhi, w->sig, s->tmp, 0);
        for (int i = 0; i < n; i++) w->Hv[(size_t)i * n + k] += s->tmp[i];
    }
    for (int i = 0; i < nc; i++) w->Vz[(size_t)i * n + k] = s->dphid[i];
    if (w->acc) {
        mbs_dense_Ptv(n, nc, s->dPhi, w->kap, s->tmp, 0);
        for (int i = 0; i < n; i++) w->Ha[(size_t)i * n + k] += s->tmp[i];
        for (int i = 0; i < nc; i++) w->Az[(size_t)i * n + k] = s->dphidd[i];
    }
}

/* P2: parameter j's columns at the projected state (projections only). */
static void ali_p2_param_column(sens_ali_lin *w, const mbs_model *m, const ali_tws *s, int j, double t,
                                const double *z, const double *zd, const double *zdd)
{
    const int n = w->n, nc = w->nc;
    const size_t N = (size_t)n;
    if (w->dynamic[j]) {
        /* no constraint or multiplier columns; the residual's (for d(M v)/drho)
         * unless only force elements move, whose loads cancel there */
        memset(w->Vp + (size_t)j * nc, 0, sizeof(double) * (size_t)nc);
        memset(w->Ap + (size_t)j * nc, 0, sizeof(double) * (size_t)nc);
        memset(w->Hvp + (size_t)j * N, 0, sizeof(double) * N);
        memset(w->Hap + (size_t)j * N, 0, sizeof(double) * N);
        if (!w->force_only[j]) {
            mbs_deriv_param_dx(m, j, s->dx);
            mbs_form_tangent_dynamic(m, s->d, z, zd, s->dx, w->DR2 + (size_t)j * N);
        }
        return;
    }
    mbs_deriv_param_dx(m, j, s->dx);
    mbs_form_tangent(m, s->d, t, z, zd, zdd, NULL, NULL, NULL, s->dx, w->DR2 + (size_t)j * N, NULL, s->dPhi,
                     w->Vp + (size_t)j * nc, w->Ap + (size_t)j * nc);
    if (w->vel) mbs_dense_Ptv(n, nc, s->dPhi, w->sig, w->Hvp + (size_t)j * N, 0);
    if (w->acc) mbs_dense_Ptv(n, nc, s->dPhi, w->kap, w->Hap + (size_t)j * N, 0);
}

/* The difference pass at (z, zd, a): parameter j's dr/drho(z, zd, zdd) -
 * dr/drho(z, zd, a) into H (DR2 holds the first). */
static void ali_pass_column(sens_ali_lin *w, const mbs_model *m, const ali_tws *s, int j, double t,
                            const double *z, const double *zd, const double *a, double *H)
{
    const int n = w->n;
    if (w->force_only[j]) return;
    mbs_deriv_param_dx(m, j, s->dx);
    if (w->dynamic[j]) mbs_form_tangent_dynamic(m, s->d, z, zd, s->dx, s->dr);
    else mbs_form_tangent(m, s->d, t, z, zd, a, NULL, NULL, NULL, s->dx, s->dr, NULL, NULL, NULL, NULL);
    double *hc = H + (size_t)j * n, *d2 = w->DR2 + (size_t)j * n;
    for (int i = 0; i < n; i++) hc[i] += d2[i] - s->dr[i];
}

/* The columns of one point of the form on the threads of r's team:
 * ALI_P1 the parameters' at the index-3 point; ALI_P2 the state columns
 * and (with a projection) the parameters' at the projected state (a =
 * zdd); ALI_PASS the difference pass at (z, zd, a) into H. */
enum { ALI_P1, ALI_P2, ALI_PASS };
typedef struct ali_cols {
    sens_ali_lin *w;
    sens_run *r;
    const sens_ali_rec *st;
    int what;
    const double *a;
    double *H;
} ali_cols;

/* Thread th's columns of ali_form_columns. */
static void ali_cols_thread(void *ctx, int th, int nth)
{
    const ali_cols *c = ctx;
    sens_ali_lin *w = c->w;
    const mbs_model *m = c->r->m;
    const sens_ali_rec *st = c->st;
    const double t = st->t, *z = st->z, *zd = st->zd, *a = c->a;
    const int what = c->what;
    ali_tws s;
    ali_tws_at(w, c->r, th, st, what == ALI_P1 ? NULL : a, what == ALI_P2, &s);
    for (int k = th; what == ALI_P2 && k < w->n; k += nth) ali_p2_state_column(w, m, &s, k, t, z, zd, a, st->lam);
    for (int i = th; i < w->npc; i += nth) {
        if (what == ALI_P1) ali_p1_column(w, m, &s, w->pc[i], t, z, st->zds, st->zdds, st->lam);
        else if (what == ALI_PASS) ali_pass_column(w, m, &s, w->pc[i], t, z, zd, a, c->H);
        else if (w->vel || w->acc) ali_p2_param_column(w, m, &s, w->pc[i], t, z, zd, a);
    }
}

static void ali_form_columns(sens_ali_lin *w, sens_run *r, const sens_ali_rec *st, int what, const double *a,
                             double *H)
{
    ali_cols c = {w, r, st, what, a, H};
    sens_team_do(r, ali_cols_thread, &c);
}

size_t sens_ali_lin_form_ws(const sens_ali_lin *w, const mbs_model *m)
{
    return ali_tws_size(w, m);
}

/* long-function: the blocks of one step's linearization in the order
 * they are stored (mass and projection, constraints, parameter columns). */
int sens_ali_lin_form(sens_ali_lin *w, sens_run *r, const mbs_sim_options *so, const sens_ali_rec *st,
                      mbs_error *err)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int n = w->n, nc = w->nc, np = w->np;
    const size_t N = (size_t)n;
    const double t = st->t, h = st->h, kh = BETA * h * h;
    const double sa = so->proj_scale * so->penalty;
    const int iterative = so->projection == MBS_PROJ_ITERATIVE, vel = st->vel, acc = st->acc;
    w->h = h;
    w->sa = sa;
    w->vel = vel;
    w->acc = acc;
    w->iterative = iterative;
    w->npc = 0;
    for (int j = 0; j < np; j++)
        if (!w->skip[j]) w->pc[w->npc++] = j;
    const double *z = st->z, *zd = st->zd, *zdd = st->zdd, *zds = st->zds, *zdds = st->zdds;
    int rc;
    mbs_data_set_time(d, t);

    /* ---- state Jacobians of r by the all-columns kernel ---- */
    if ((rc = id_jac(r, z, zds, zdds, w->Fz, w->Fzd))) goto numeric;

    /* ---- P1: index-3 point (the positions at z for the whole step) ---- */
    mbs_form_primal(m, d, t, z, zds, zdds, w->r, w->phi, w->Phi, NULL, NULL);
    mbs_crba(m, &d->ws, w->M);
    ali_form_columns(w, r, st, ALI_P1, NULL, NULL);
    if (vel || acc) {
        if ((rc = id_jac_acc(r, z, zd, zdd, w->Aq))) goto numeric;
    }
    if (vel) {
        for (int i = 0; i < n; i++) w->va[i] = zdd[i] - (zd[i] - zds[i]);
        if ((rc = id_jac_acc(r, z, zd, w->va, w->Hv))) goto numeric;
        for (size_t k = 0; k < N * N; k++) w->Hv[k] = w->Aq[k] - w->Hv[k];   /* d(M v)/dz */
    }
    if (acc) {
        if ((rc = id_jac_acc(r, z, zd, zdds, w->Ha))) goto numeric;
        for (size_t k = 0; k < N * N; k++) w->Ha[k] = w->Aq[k] - w->Ha[k];   /* d(M va)/dz */
    }

    /* the singular basis of Phi_z^T (the index-3 stage and the projections),
     * the projections' factor and multipliers (M at z) */
    if (svd_basis(w) != MBS_OK)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: SVD of the constraint Jacobian "
                             "failed", t);
    if ((vel || acc) && proj_basis(w, sa, iterative) != MBS_OK)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: projection matrix not positive "
                             "definite", t);
    if (vel) {
        for (int i = 0; i < n; i++) w->vv[i] = zd[i] - zds[i];
        proj_multipliers(w, w->vv, w->sig);
    }
    if (acc) {
        for (int i = 0; i < n; i++) w->va[i] = zdd[i] - zdds[i];
        proj_multipliers(w, w->va, w->kap);
    }

    /* ---- P2: the projected state; constraint second derivatives along z (and zd) ---- */
    /* (the constraint kernel's primal at this state too: its tangents use it) */
    primal_rates(m, d, t, z, zd, zdd, w->r, w->phid, w->phidd);
    ali_form_columns(w, r, st, ALI_P2, zdd, NULL);
    /* dPhidd/dzd: for Phi(z, t) with Phid, Phidd its exact time derivatives,
     * Phidd = Phi_z zdd + (Phi_z zd)_z zd + 2 Phi_zt zd + Phi_tt gives dPhidd/dzd = 2 dPhid/dz.
     * The kinematics of Euler-parameter joints are exact only on |p| = 1, and integrator states
     * are off it by round-off: there (and only there) one tangent per velocity instead. */
    if (acc && m->n_euler == 0) {
        for (size_t k = 0; k < (size_t)nc * N; k++) w->Azd[k] = 2 * w->Vz[k];
    } else if (acc) {
        for (int k = 0; k < n; k++) {
            w->e[k] = 1;
            mbs_form_tangent(m, d, t, z, zd, zdd, NULL, w->e, NULL, NULL, NULL, NULL, NULL, NULL, w->dphidd);
            w->e[k] = 0;
            for (int i = 0; i < nc; i++) w->Azd[(size_t)i * n + k] = w->dphidd[i];
        }
    }
    /* d(M v)/drho = dr/drho(z, zd, zdd) - dr/drho(z, zd, zdd - v) */
    for (int pass = 0; pass < 2; pass++) {
        if (!(pass == 0 ? vel : acc)) continue;
        double *a = w->va, *H = pass == 0 ? w->Hvp : w->Hap;
        if (pass == 0)
            for (int i = 0; i < n; i++) a[i] = zdd[i] - (zd[i] - zds[i]);
        else
            memcpy(a, zdds, sizeof(double) * N);
        primal_rates(m, d, t, z, zd, a, w->r, NULL, NULL);
        ali_form_columns(w, r, st, ALI_PASS, a, H);
    }

    /* ---- factorizations ---- */
    for (int c = 0; c < n; c++)
        for (int i = 0; i < n; i++) {
            const size_t ic = (size_t)i * n + c;
            w->S[(size_t)c * n + i] = w->M[ic] + GAMMA * h * w->Fzd[ic] + kh * w->Fz[ic];
        }
    if (n > 0 && stage_factor(w) != MBS_OK)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: step tangent singular on the "
                             "constraints' null space", t);
    return MBS_OK;
numeric:
    return mbs_error_set(err, rc, "sensitivity at t = %.9g: state Jacobian of the residual: %s", t,
                         d->err[0] ? d->err : "not finite");
}

/* Column j (Yin_j, e_j) through the step's linear algebra into Yout_j,
 * with the scratch of w (zp, zdp, zddn, wv, v, rhs, x1, y; dphi, dphid,
 * dphidd, viol): a thread's copy of w (sens_ali_lin_thread) has its own. */
static void ali_column(sens_ali_lin *w, int j, const double *Yin, double *Yout)
{
    const int n = w->n, nc = w->nc, vel = w->vel, acc = w->acc, iterative = w->iterative;
    const size_t N = (size_t)n;
    const double h = w->h, sa = w->sa, kh = BETA * h * h, c1 = GAMMA / (BETA * h), d1 = 1 / kh;
    double *out = Yout + (size_t)j * 3 * N, *z1 = out, *zd1 = out + N, *zdd1 = out + 2 * N;
    const double *y = Yin + (size_t)j * 3 * N, *yd = y + N, *ydd = y + 2 * N;
    for (int i = 0; i < n; i++) {
        w->zp[i] = y[i] + h * yd[i] + 0.5 * h * h * ydd[i];
        w->zdp[i] = yd[i] + h * ydd[i];
        w->zddn[i] = ydd[i];
    }
    /* w = F_z z_p' + F_zd zd_p' + M zdd_n' (+ F_rho), dPhi = Phi z_p' (+ Phi_rho) */
    mv(n, n, w->Fz, w->zp, w->wv, 0);
    mv(n, n, w->Fzd, w->zdp, w->wv, 1);
    mv(n, n, w->M, w->zddn, w->wv, 1);
    mbs_dense_Pv(n, nc, w->Phi, w->zp, w->dphi);
    for (int i = 0; i < n; i++) w->wv[i] += w->Fp[(size_t)j * N + i];
    for (int i = 0; i < nc; i++) w->dphi[i] += w->Pp[(size_t)j * nc + i];
    stage_solve(w, kh, w->wv, w->dphi, w->v);
    for (int i = 0; i < n; i++) {
        z1[i] = w->zp[i] + w->v[i];
        zd1[i] = w->zdp[i] + c1 * w->v[i];
        zdd1[i] = w->zddn[i] + d1 * w->v[i];
    }
    /* velocity projection: zd1 holds zd*' */
    if (vel) {
        mv(n, n, w->Hv, z1, w->rhs, 0);
        mv(nc, n, w->Vz, z1, w->dphid, 0);
        for (int i = 0; i < n; i++) w->rhs[i] += w->Hvp[(size_t)j * N + i];
        for (int i = 0; i < nc; i++) w->dphid[i] += w->Vp[(size_t)j * nc + i];
        for (int i = 0; i < n; i++) w->rhs[i] = -w->rhs[i];
        proj_apply(w, iterative, sa, zd1, w->rhs, w->dphid, zd1);
    }
    if (acc) {
        mv(n, n, w->Ha, z1, w->rhs, 0);
        mv(nc, n, w->Az, z1, w->dphidd, 0);
        mv(nc, n, w->Azd, zd1, w->dphidd, 1);
        for (int i = 0; i < n; i++) w->rhs[i] += w->Hap[(size_t)j * N + i];
        for (int i = 0; i < nc; i++) w->dphidd[i] += w->Ap[(size_t)j * nc + i];
        for (int i = 0; i < n; i++) w->rhs[i] = -w->rhs[i];
        proj_apply(w, iterative, sa, zdd1, w->rhs, w->dphidd, zdd1);
    }
}

size_t sens_ali_lin_thread_ws(const sens_ali_lin *w)
{
    return 8 * ((size_t)w->n + 1) + 4 * ((size_t)w->nc + 1);
}

void sens_ali_lin_thread(const sens_ali_lin *w, double *ws, sens_ali_lin *wt)
{
    const size_t N = (size_t)w->n + 1, C = (size_t)w->nc + 1;
    *wt = *w;
    double **vn[] = { &wt->zp, &wt->zdp, &wt->zddn, &wt->wv, &wt->v, &wt->rhs, &wt->x1, &wt->y };
    for (size_t k = 0; k < sizeof vn / sizeof vn[0]; k++) { *vn[k] = ws; ws += N; }
    double **vc[] = { &wt->dphi, &wt->dphid, &wt->dphidd, &wt->viol };
    for (size_t k = 0; k < sizeof vc / sizeof vc[0]; k++) { *vc[k] = ws; ws += C; }
}

typedef struct ali_step_cols {
    sens_ali_lin *w;
    sens_run *r;
    const double *Yin;
    double *Yout;
} ali_step_cols;

/* Thread th's columns of sens_ali_lin_step, with its own scratch. */
static void ali_step_thread(void *ctx, int th, int nth)
{
    const ali_step_cols *c = ctx;
    sens_ali_lin wt, *wc = c->w;
    if (th > 0) {
        sens_ali_lin_thread(c->w, sens_team_ws(c->r, th), &wt);
        wc = &wt;
    }
    for (int j = th; j < c->w->np; j += nth) ali_column(wc, j, c->Yin, c->Yout);
}

int sens_ali_lin_step(sens_ali_lin *w, sens_run *r, const mbs_sim_options *so, const sens_ali_rec *st,
                      const double *Yin, double *Yout, mbs_error *err)
{
    int rc = sens_ali_lin_form(w, r, so, st, err);
    if (rc) return rc;
    /* the columns on the threads of r's team, each with its own scratch */
    ali_step_cols c = {w, r, Yin, Yout};
    sens_team_do(r, ali_step_thread, &c);
    return MBS_OK;
}

/* ---------------------------------------------------------------- the transposed step */

/* y_a = U_a . x (all a) */
static void to_basis(const sens_ali_lin *w, const double *x, double *y)
{
    const int n = w->n;
    for (int a = 0; a < n; a++) {
        const double *ua = w->U + (size_t)a * n;
        double s = 0;
        for (int i = 0; i < n; i++) s += ua[i] * x[i];
        y[a] = s;
    }
}

/* The transpose of proj_apply: from xb (the adjoint of x) the adjoints of
 * x* (xsb), of the right-hand side (rhsb) and of g (gb), all set. */
static void proj_apply_t(sens_ali_lin *w, const double *xb, double *xsb, double *rhsb, double *gb)
{
    const int n = w->n, nc = w->nc, mn = n < nc ? n : nc, r = w->rank;
    double *y = w->y;
    to_basis(w, xb, y);
    if (!w->iterative) {
        /* x = U K^-1 (U^T (M x* + rhs) - sa Sigma V^T g), K symmetric */
        mbs_dense_chol_solve(n, w->K, y);
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (int a = 0; a < n; a++) s += w->U[(size_t)a * n + i] * y[a];
            rhsb[i] = s;
        }
        for (int k = 0; k < nc; k++) {
            double s = 0;
            for (int a = 0; a < mn; a++) s += w->sv[a] * y[a] * w->VT[(size_t)k * nc + a];
            gb[k] = -w->sa * s;
        }
        mbs_dense_Ptv(n, n, w->M, rhsb, xsb, 0);
        return;
    }
    /* x = x* + U y: y_R = -Sigma_R^-1 V_R^T (Phi x* + g),
     * y_N = K^-1 (U_N^T rhs - (U^T M U)_NR y_R) */
    memcpy(xsb, xb, sizeof(double) * (size_t)n);
    const int q = n - r;
    if (q > 0) mbs_dense_chol_solve(q, w->K, y + r);
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int a = r; a < n; a++) s += w->U[(size_t)a * n + i] * y[a];
        rhsb[i] = s;
    }
    for (int b = 0; b < r; b++) {
        double s = 0;
        for (int a = r; a < n; a++) s += w->UMU[(size_t)b * n + a] * y[a];
        y[b] -= s;
    }
    for (int k = 0; k < nc; k++) {
        double s = 0;
        for (int a = 0; a < r; a++) s += y[a] * w->VT[(size_t)k * nc + a] / w->sv[a];
        gb[k] = -s;
    }
    mbs_dense_Ptv(n, nc, w->Phi, gb, xsb, 1);
}

/* The transpose of stage_solve: from vb the adjoints of w (wvb) and of dPhi (dphib), set. */
static void stage_solve_t(sens_ali_lin *w, double kh, const double *vb, double *wvb, double *dphib)
{
    const int n = w->n, nc = w->nc, r = w->rank, q = n - r;
    double *y = w->y;
    to_basis(w, vb, y);
    if (q > 0) sens_lu_solve_t(q, w->KN, w->ipiv, y + r);   /* the adjoint of the right-hand side s */
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int b = 0; b < q; b++) s += w->U[(size_t)(r + b) * n + i] * y[r + b];
        wvb[i] = -kh * s;
    }
    for (int a = 0; a < r; a++) {
        double s = 0;
        for (int b = 0; b < q; b++) s += w->KB[(size_t)a * q + b] * y[r + b];
        y[a] -= s;
    }
    for (int k = 0; k < nc; k++) {
        double s = 0;
        for (int a = 0; a < r; a++) s += y[a] * w->VT[(size_t)k * nc + a] / w->sv[a];
        dphib[k] = -s;
    }
}

static double dotn(int n, const double *a, const double *b)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

void sens_ali_lin_reverse(sens_ali_lin *w, const double *abar, double *abar_in, double *gp, double *wbar)
{
    const int n = w->n, nc = w->nc;
    const size_t N = (size_t)n;
    const double h = w->h, kh = BETA * h * h, c1 = GAMMA / (BETA * h), d1 = 1 / kh;
    double *z1b = w->z1b, *zd1b = w->zd1b, *zdd1b = w->zdd1b;
    memcpy(z1b, abar, sizeof(double) * N);
    memcpy(zd1b, abar + N, sizeof(double) * N);
    memcpy(zdd1b, abar + 2 * N, sizeof(double) * N);
    /* acceleration projection: zdd1 = proj(zdd1*, -(Ha z1 + Hap e), Az z1 + Azd zd1 + Ap e) */
    if (w->acc) {
        proj_apply_t(w, zdd1b, w->xsb, w->rhsb, w->gab);
        memcpy(zdd1b, w->xsb, sizeof(double) * N);
        for (int i = 0; i < n; i++) w->rhsb[i] = -w->rhsb[i];
        mbs_dense_Ptv(n, n, w->Ha, w->rhsb, z1b, 1);
        mbs_dense_Ptv(n, nc, w->Az, w->gab, z1b, 1);
        mbs_dense_Ptv(n, nc, w->Azd, w->gab, zd1b, 1);
        for (int i = 0; i < w->npc; i++) {
            const int j = w->pc[i];
            gp[j] += dotn(n, w->Hap + (size_t)j * N, w->rhsb) + dotn(nc, w->Ap + (size_t)j * nc, w->gab);
        }
    }
    /* velocity projection: zd1 = proj(zd1*, -(Hv z1 + Hvp e), Vz z1 + Vp e) */
    if (w->vel) {
        proj_apply_t(w, zd1b, w->xsb, w->rhsb, w->gvb);
        memcpy(zd1b, w->xsb, sizeof(double) * N);
        for (int i = 0; i < n; i++) w->rhsb[i] = -w->rhsb[i];
        mbs_dense_Ptv(n, n, w->Hv, w->rhsb, z1b, 1);
        mbs_dense_Ptv(n, nc, w->Vz, w->gvb, z1b, 1);
        for (int i = 0; i < w->npc; i++) {
            const int j = w->pc[i];
            gp[j] += dotn(n, w->Hvp + (size_t)j * N, w->rhsb) + dotn(nc, w->Vp + (size_t)j * nc, w->gvb);
        }
    }
    /* z1 = z_p + v, zd1* = zd_p + c1 v, zdd1* = zdd_n + d1 v */
    for (int i = 0; i < n; i++) w->vb[i] = z1b[i] + c1 * zd1b[i] + d1 * zdd1b[i];
    stage_solve_t(w, kh, w->vb, w->wvb, w->dphib);
    /* w = F_z z_p + F_zd zd_p + M zdd_n + F_rho e, dPhi = Phi z_p + Phi_rho e */
    double *zpb = w->zpb, *zdpb = w->zdpb, *zddnb = w->zddnb;
    memcpy(zpb, z1b, sizeof(double) * N);
    memcpy(zdpb, zd1b, sizeof(double) * N);
    memcpy(zddnb, zdd1b, sizeof(double) * N);
    mbs_dense_Ptv(n, n, w->Fz, w->wvb, zpb, 1);
    mbs_dense_Ptv(n, n, w->Fzd, w->wvb, zdpb, 1);
    mbs_dense_Ptv(n, n, w->M, w->wvb, zddnb, 1);
    mbs_dense_Ptv(n, nc, w->Phi, w->dphib, zpb, 1);
    for (int i = 0; i < w->npc; i++) {
        const int j = w->pc[i];
        gp[j] += dotn(n, w->Fp + (size_t)j * N, w->wvb) + dotn(nc, w->Pp + (size_t)j * nc, w->dphib);
    }
    memcpy(wbar, w->wvb, sizeof(double) * N);
    /* the predictor */
    for (int i = 0; i < n; i++) {
        abar_in[i] = zpb[i];
        abar_in[N + i] = h * zpb[i] + zdpb[i];
        abar_in[2 * N + i] = 0.5 * h * h * zpb[i] + h * zdpb[i] + zddnb[i];
    }
}

/* ---------------------------------------------------------------- t0 */

int sens_ali_lin_init(sens_ali_lin *w, sens_run *r, const mbs_sim_options *so, double t, const double *z,
                      const double *zd, const double *zdd, double *Y0, mbs_error *err)
{
    const mbs_model *m = r->m;
    mbs_data *d = r->d;
    const int n = w->n, nc = w->nc, np = w->np;
    const size_t N = (size_t)n;
    const double al = so->penalty, om = so->omega, xi = so->xi;
    double *Z = w->Fp, *Zd = w->DR2;   /* n x np scratch */
    int rc = sens_loops_kinematic_init(r, t, z, zd, zdd, Z, Zd, err);
    if (rc) return rc;
    mbs_data_set_time(d, t);
    mbs_form_primal(m, d, t, z, zd, zdd, w->r, w->phi, w->Phi, w->phid, w->phidd);
    mbs_crba(m, &d->ws, w->M);
    /* the penalty equations of the initial accelerations (penalty.c) and their derivatives, with
     * the multipliers as unknowns (mbs_form_penalty_factor) */
    const int nk = n + nc;
    if (nk > 0 && mbs_form_penalty_factor(n, nc, w->M, w->Phi, al, w->Kp, w->ipiv) != 0)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: penalty matrix singular", t);
    /* lam: from r0 = r - M zdd and phidd0 = phidd - Phi zdd (zdd = 0) */
    double *lam = w->sig, *b = w->Kp + (size_t)nk * (size_t)nk;
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int k = 0; k < n; k++) s += w->M[(size_t)i * N + k] * zdd[k];
        b[i] = s - w->r[i];
    }
    mbs_dense_Pv(n, nc, w->Phi, zdd, b + n);
    for (int i = 0; i < nc; i++) b[n + i] -= w->phidd[i] + 2 * om * xi * w->phid[i] + om * om * w->phi[i];
    if (nk > 0) mbs_dense_lu_solve(nk, w->Kp, w->ipiv, b);
    memcpy(lam, b + n, sizeof(double) * (size_t)nc);
    for (int j = 0; j < np; j++) {
        double *y = Y0 + (size_t)j * 3 * N, *zj = y, *zdj = y + N, *zddj = y + 2 * N;
        memcpy(zj, Z + (size_t)j * N, sizeof(double) * N);
        memcpy(zdj, Zd + (size_t)j * N, sizeof(double) * N);
        mbs_deriv_param_dx(m, j, w->dx);
        mbs_form_tangent(m, d, t, z, zd, zdd, zj, zdj, NULL, w->dx, w->dr, w->dphi, w->dPhi, w->dphid, w->dphidd);
        /* M zddj + Phi^T lamj = -(dr + dPhi^T lam), Phi zddj - lamj / al = -(dphidd + ...) */
        mbs_dense_Ptv(n, nc, w->dPhi, lam, b, 0);
        for (int i = 0; i < n; i++) b[i] = -(w->dr[i] + b[i]);
        for (int i = 0; i < nc; i++) b[n + i] = -(w->dphidd[i] + 2 * om * xi * w->dphid[i] + om * om * w->dphi[i]);
        if (nk > 0) mbs_dense_lu_solve(nk, w->Kp, w->ipiv, b);
        memcpy(zddj, b, sizeof(double) * N);
    }
    return MBS_OK;
}

void sens_ali_rec_from_step(sens_ali_rec *rec, const mbs_form_step *st, const double *z, const double *zd,
                            const double *zdd, int n, int nc, int copy)
{
    rec->t = st->t;
    rec->h = st->h;
    rec->vel = st->vel_projected;
    rec->acc = st->acc_projected;
    if (copy) {
        memcpy((double *)rec->z, z, sizeof(double) * (size_t)n);
        memcpy((double *)rec->zd, zd, sizeof(double) * (size_t)n);
        memcpy((double *)rec->zdd, zdd, sizeof(double) * (size_t)n);
        memcpy((double *)rec->zds, st->zd_star, sizeof(double) * (size_t)n);
        memcpy((double *)rec->zdds, st->zdd_star, sizeof(double) * (size_t)n);
        memcpy((double *)rec->lam, st->lambda, sizeof(double) * (size_t)nc);
    } else {
        rec->z = z;
        rec->zd = zd;
        rec->zdd = zdd;
        rec->zds = st->zd_star;
        rec->zdds = st->zdd_star;
        rec->lam = st->lambda;
    }
}
