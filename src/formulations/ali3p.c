/*
 * ali3p.c - the semi-recursive index-3 augmented Lagrangian formulation
 * with mass-orthogonal projections, ALI3-P (thesis §3.3, §6.2.2; Bayo &
 * Ledesma; Dopico, López Varela & Luaces 2020), trapezoidal rule.
 *
 * Step n -> n+1 (h), unknown the correction D to the Newmark predictor
 * (as src/integrators/trapezoidal.c):
 *   z = z_p + D,  zd* = zd_p + gamma/(beta h) D,  zdd* = zdd_n + D/(beta h^2)
 *   z_p = z_n + h zd_n + h^2/2 zdd_n,  zd_p = zd_n + h zdd_n
 * (zd_n, zdd_n: the PROJECTED values of step n). Augmented-Lagrangian
 * index-3 stage: with lambda* starting from lambda_factor times the last
 * step's, Newton-Raphson on
 *   f(D) = r(z, zd*, zdd*) + Phi_q^T (lambda* + alpha Phi) = 0
 * with the thesis's tangent (scaled by beta h^2)
 *   T = M + gamma h C + beta h^2 (K + Phi_q^T alpha Phi_q)
 * (M, C, K exact: mbs_form_trap_tangent; the second derivatives of the
 * constraints and of M zdd are dropped from the Newton tangent, not from
 * the sensitivities), the multipliers updated after every iteration with
 * the constraints at the new iterate, lambda* <- lambda* + alpha Phi, until
 * |dD|_2 < tolerance. At convergence r + Phi_q^T lambda* = 0 with Phi ~ 0.
 *
 * Projections (P = M, penalty varsigma alpha; P_hat = M + varsigma alpha
 * Phi_q^T Phi_q, one Cholesky factorization for both):
 *   velocity      P_hat zd = M zd* + varsigma alpha Phi_q^T b         (b = -Phi_t)
 *   acceleration  P_hat zdd = M zdd* + varsigma alpha Phi_q^T c(z, zd)  (projected zd)
 * solved for the corrections zd - zd*, zdd - zdd* (see project()),
 * or their iterative (augmented-Lagrangian) versions, which subtract
 * Phi_q^T sigma (kappa) and iterate sigma <- sigma + varsigma alpha Phid
 * until |Phid| (|Phidd|) < tolerance. A projection is skipped when the
 * violation is at most proj_tol (> 0). The step record (form_impl.h) keeps
 * the converged z, zd*, zdd*, lambda*, sigma, kappa and the branch taken.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "form_impl.h"
#include "model/model_impl.h"
#include "../constraints/constraint.h"

#define BETA MBS_FORM_BETA
#define GAMMA MBS_FORM_GAMMA



/* x = P_hat^-1 v (v != x), with one step of iterative refinement: P_hat =
 * M + s Phi^T Phi with s = varsigma alpha ~ 1e9 is ill-conditioned (its
 * Cholesky solution is off by ~eps s/m in the unconstrained directions);
 * the residual v - M x - s Phi^T (Phi x), formed from M and Phi apart, is
 * accurate, and one correction brings x to round-off. */
void mbs_form_proj_solve(int n, int nc, const double *M, const double *Phi, double s, const double *P,
                         const double *v, double *x, double *res, double *tmp)
{
    memcpy(x, v, sizeof(double) * (size_t)n);
    if (n == 0) return;
    mbs_dense_chol_solve(n, P, x);
    for (int i = 0; i < n; i++) {
        double a = 0;
        for (int j = 0; j < n; j++) a += M[(size_t)i * n + j] * x[j];
        res[i] = v[i] - a;
    }
    mbs_dense_Pv(n, nc, Phi, x, tmp);
    for (int i = 0; i < nc; i++) tmp[i] *= s;
    for (int r = 0; r < nc; r++) {
        const double *p = Phi + (size_t)r * n;
        for (int i = 0; i < n; i++) res[i] -= p[i] * tmp[r];
    }
    mbs_dense_chol_solve(n, P, res);
    for (int i = 0; i < n; i++) x[i] += res[i];
}

/* Project x* (n) onto Phi_q x = g (nc), P_hat factored in f->P:
 *   x = x* + D,   P_hat D = -Phi^T (mu + s (Phi x* - g))
 * which is P_hat x = M x* + s Phi^T g - Phi^T mu written for the
 * correction D: its right-hand side is small (x* nearly satisfies the
 * constraints), so the rounding of the large s = varsigma alpha terms stays
 * relative to the violation e0 = Phi x* - g (given: the caller has it
 * for the proj_tol test). mu = 0 for the penalty (non-iterative)
 * projection; the iterative one updates mu <- mu + s (Phi x - g) until the
 * violation is below the tolerance. (The right-hand side being small, the
 * Cholesky solution needs no refinement.) mu (nc) returns the final multipliers
 * (0 for the penalty form): M (x - x*) + Phi^T mu = 0 in the iterative case. */
static int project(mbs_step_io *io, mbs_form *f, const double *xs, const double *g, const double *e0, double *x,
                   double *mu)
{
    const int n = f->n, nc = f->nc;
    const double s = f->o.proj_scale * f->o.penalty;
    double *e = f->w2;
    for (int i = 0; i < nc; i++) mu[i] = 0;
    const int iterative = f->o.projection == MBS_PROJ_ITERATIVE;
    for (int k = 0; k <= (iterative ? f->o.max_iterations : 0); k++) {
        for (int i = 0; i < nc; i++) e[i] = -(mu[i] + s * e0[i]);
        mbs_dense_Ptv(n, nc, f->Phi, e, f->v2, 0);
        memcpy(f->v1, f->v2, sizeof(double) * (size_t)n);
        if (n > 0) mbs_dense_chol_solve(n, f->P, f->v1);
        for (int i = 0; i < n; i++) x[i] = xs[i] + f->v1[i];
        if (!iterative) return MBS_OK;
        mbs_dense_Pv(n, nc, f->Phi, x, e);
        for (int i = 0; i < nc; i++) {
            e[i] -= g[i];
            mu[i] += s * e[i];
        }
        if (mbs_dense_norm(e, nc) < f->o.tolerance) return MBS_OK;
    }
    return mbs_fail(io->msg, MBS_ERR_NUMERIC, "ali3p: iterative projection did not converge at t = %.9g",
                          io->t);
}

static int factor_projection(mbs_step_io *io, mbs_form *f)
{
    const int n = f->n;
    memcpy(f->P, f->M, sizeof(double) * (size_t)n * (size_t)n);
    mbs_dense_add_PtP(n, f->nc, f->Phi, f->o.proj_scale * f->o.penalty, f->P);
    lapack_int info = n > 0 ? mbs_dense_chol(n, f->P) : 0;
    if (info != 0)
        return mbs_fail(io->msg, MBS_ERR_NUMERIC, "ali3p: projection matrix M + varsigma Phi^T alpha Phi not "
                              "positive definite (coordinate %s)", info > 0 ? f->m->coord_name[info - 1] : "?");
    io->st->factorizations++;
    return MBS_OK;
}

/* The index-3 stage from the predictor; 0 converged, 1 not, < 0 error. */
static int ali_stage(mbs_step_io *io, mbs_form *f, double h, double t1, int *iters, double *ndz)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nc = f->nc;
    const double kh = BETA * h * h, al = f->o.penalty;
    for (int k = 0; k < n; k++) f->D[k] = 0;
    mbs_form_affine(f, h);
    for (int k = 1; k <= f->o.max_iterations; k++) {
        *iters = k;
        mbs_form_primal(m, d, t1, f->z, f->zd, f->zdd, f->r, f->phi, f->Phi, NULL, NULL);
        io->st->fevals++;
        if (k > 1)
            for (int i = 0; i < nc; i++) f->lam[i] += al * f->phi[i];
        for (int i = 0; i < nc; i++) f->w1[i] = f->lam[i] + al * f->phi[i];
        mbs_dense_Ptv(n, nc, f->Phi, f->w1, f->v1, 0);
        for (int i = 0; i < n; i++) f->dz[i] = -kh * (f->r[i] + f->v1[i]);
        mbs_form_newton_tangent(f, io->st, k, t1, f->z, f->zd, f->zdd, h, f->S);
        mbs_dense_add_PtP(n, nc, f->Phi, kh * al, f->S);
        io->st->factorizations++;
        lapack_int info = n > 0 ? mbs_dense_lu(n, f->S, f->ipiv) : 0;
        if (info != 0)
            return mbs_fail(io->msg, MBS_ERR_NUMERIC, "ali3p: tangent matrix singular at t = %.9g (%s)", t1,
                                  info > 0 ? m->coord_name[info - 1] : "bad argument");
        if (n > 0) mbs_dense_lu_solve(n, f->S, f->ipiv, f->dz);
        for (int i = 0; i < n; i++) f->D[i] += f->dz[i];
        mbs_form_affine(f, h);
        *ndz = mbs_dense_norm(f->dz, n);
        if (!isfinite(*ndz))
            return mbs_fail(io->msg, MBS_ERR_NUMERIC, "ali3p: iteration diverged at t = %.9g (step from %.9g)", t1,
                                  io->t);
        /* the last correction is applied: with Newton's convergence the error left is then far below
         * the tolerance, which matters since zdd = ... + D/(beta h^2) amplifies it by 4e6 at 1 ms */
        if (*ndz < f->o.tolerance) return 0;
    }
    return 1;
}

static int ali_step(mbs_form *f, mbs_step_io *io, double h)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nc = f->nc;
    const size_t bytes = sizeof(double) * (size_t)n, cbytes = sizeof(double) * (size_t)nc;
    const double t1 = io->t + h, al = f->o.penalty;
    memcpy(f->zn, io->q, bytes);
    memcpy(f->zdn, io->qd, bytes);
    memcpy(f->zddn, io->qdd, bytes);
    for (int k = 0; k < n; k++) {
        f->zp[k] = f->zn[k] + h * f->zdn[k] + 0.5 * h * h * f->zddn[k];
        f->zdp[k] = f->zdn[k] + h * f->zddn[k];
    }
    for (int i = 0; i < nc; i++) f->lam[i] *= f->o.lambda_factor;
    memcpy(f->step.kappa, f->lam, cbytes);   /* lambda* at the start, for a retry */
    mbs_data_set_time(d, t1);

    /* ---- index-3 augmented Lagrangian stage ---- */
    int iters = 0, rc;
    double ndz = 0;
    const int kept = f->o.tangent_keep && f->have_tangent;
    rc = ali_stage(io, f, h, t1, &iters, &ndz);
    if (rc > 0 && kept) {
        /* a kept tangent did not do: again from the predictor with a fresh one */
        int more = 0;
        f->have_tangent = 0;
        memcpy(f->lam, f->step.kappa, cbytes);
        rc = ali_stage(io, f, h, t1, &more, &ndz);
        iters += more;
    }
    if (rc < 0) return rc;
    if (rc > 0) {
        double nphi = mbs_dense_norm(f->phi, nc);
        return mbs_fail(io->msg, MBS_ERR_NUMERIC,
                              "ali3p (trapezoidal rule): no convergence at t = %.9g (step from t = %.9g, h = %g) "
                              "after %d iterations: |dz| = %.3e > tolerance %.3e, |Phi| = %.3e", t1, io->t, h,
                              iters, ndz, f->o.tolerance, nphi);
    }
    mbs_form_tangent_done(f, iters);

    /* ---- at the converged z: last multiplier update, projections ---- */
    mbs_kin_forward(m, m->x, &d->ws, f->z, NULL, NULL, 0);
    mbs_con_kernel(m, m->x, &d->ws, f->z, NULL, NULL, t1, f->phi, f->Phi, NULL, f->b, NULL, NULL);
    mbs_mass_terms(m, m->x, &d->ws);
    mbs_crba(m, &d->ws, f->M);
    /* Phid at zd* = Phi_q zd* - b */
    mbs_dense_Pv(n, nc, f->Phi, f->zd, f->phid);
    for (int i = 0; i < nc; i++) f->phid[i] -= f->b[i];
    for (int i = 0; i < nc; i++) f->lam[i] += al * f->phi[i];
    memcpy(f->step.zd_star, f->zd, bytes);
    memcpy(f->step.zdd_star, f->zdd, bytes);
    memcpy(f->step.lambda, f->lam, sizeof(double) * (size_t)nc);
    const double tolp = f->o.proj_tol;
    int vel = !(tolp > 0) || mbs_dense_norm(f->phid, nc) > tolp, factored = 0;
    if (vel) {
        if ((rc = factor_projection(io, f))) return rc;
        factored = 1;
        if ((rc = project(io, f, f->step.zd_star, f->b, f->phid, f->zd, f->step.sigma))) return rc;
        io->st->projections[0]++;
    } else {
        memset(f->step.sigma, 0, sizeof(double) * (size_t)nc);
    }
    /* c at (z, zd) with the projected zd (the positions of z are in d); phidd at zdd* */
    mbs_kin_velocities(m, &d->ws, f->z, f->zd, NULL);
    mbs_con_kernel(m, m->x, &d->ws, f->z, f->zd, NULL, t1, NULL, NULL, NULL, NULL, f->c, NULL);
    mbs_dense_Pv(n, nc, f->Phi, f->zdd, f->phidd);
    for (int i = 0; i < nc; i++) f->phidd[i] -= f->c[i];
    int acc = !(tolp > 0) || mbs_dense_norm(f->phidd, nc) > tolp;
    if (acc) {
        if (!factored && (rc = factor_projection(io, f))) return rc;
        if ((rc = project(io, f, f->step.zdd_star, f->c, f->phidd, f->zdd, f->step.kappa))) return rc;
        io->st->projections[1]++;
    } else {
        memset(f->step.kappa, 0, sizeof(double) * (size_t)nc);
    }

    /* violations of the returned state: Phi at z, Phi_q zd - b, Phi_q zdd - c */
    f->viol[0] = mbs_dense_norm(f->phi, nc);
    mbs_dense_Pv(n, nc, f->Phi, f->zd, f->w1);
    mbs_dense_Pv(n, nc, f->Phi, f->zdd, f->w2);
    for (int i = 0; i < nc; i++) {
        f->w1[i] -= f->b[i];
        f->w2[i] -= f->c[i];
    }
    f->viol[1] = mbs_dense_norm(f->w1, nc);
    f->viol[2] = mbs_dense_norm(f->w2, nc);
    f->viol_ready = 1;
    /* d holds the kinematics of (z, zd) at zdd = 0 (the pass for c): with the acceleration pass at
     * the returned zdd they are those of the new state, which the bookkeeping then reuses */
    mbs_kin_accelerations(m, &d->ws, f->zdd);
    io->kin_ready = 1;
    mbs_form_step_done(f, t1, h, iters);
    f->step.vel_projected = vel;
    f->step.acc_projected = acc;
    return MBS_OK;
}


const mbs_stepper mbs_stepper_ali3p = { "ali3p", ali_step };
