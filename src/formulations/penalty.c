/*
 * penalty.c - the semi-recursive penalty formulation (thesis §3.4; Bayo,
 * García de Jalón & Serna): the multipliers are replaced by a penalized
 * second-order constraint dynamics,
 *
 *     M zdd - Q + Phi_q^T alpha (Phidd + 2 omega xi Phid + omega^2 Phi) = 0,
 *     Phidd = Phi_q zdd - c,   lambda = alpha (Phidd + 2 omega xi Phid + omega^2 Phi).
 *
 * Accelerations at a known (z, zd): the solution of
 *     (M + Phi_q^T alpha Phi_q) zdd = Q + Phi_q^T alpha (c - 2 omega xi Phid - omega^2 Phi),
 * computed with the multipliers as unknowns (mbs_form_penalty_factor: in the
 * form above alpha ~ 1e10 costs 6 to 7 digits). This initializes ALI3-P
 * (accelerations and multipliers at t0).
 *
 * As a dynamic formulation it is integrated with the trapezoidal rule in the
 * correction D to the predictor (as src/integrators/trapezoidal.c), Newton
 * on the residual f(D) above with the tangent (scaled by beta h^2)
 *     S + (1 + 2 omega xi gamma h + omega^2 beta h^2) alpha Phi_q^T Phi_q,
 * S = M + gamma h C + beta h^2 K (exact, mbs_form_trap_tangent), dropping
 * the second derivatives of the constraints. The constraints are satisfied
 * to O(|Q| / alpha) only.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "form_impl.h"
#include "model/model_impl.h"

#define BETA MBS_FORM_BETA
#define GAMMA MBS_FORM_GAMMA

int mbs_form_penalty_accel(mbs_form *f, double t, const double *q, const double *qd, double *qdd, double *lambda,
                           char *msg, size_t len)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nc = f->nc;
    const double al = f->o.penalty, om = f->o.omega, xi = f->o.xi;
    mbs_data_set_time(d, t);
    /* at zdd = 0: r0 = -Q, phidd0 = -c */
    mbs_form_primal(m, d, t, q, qd, NULL, f->r, f->phi, f->Phi, f->phid, f->phidd);
    mbs_crba(m, &d->ws, f->M);
    /* M qdd + Phi^T lambda = -r0, Phi qdd - lambda / al = -(phidd0 + 2 omega xi Phid + omega^2 Phi) */
    const int info = mbs_form_penalty_factor(n, nc, f->M, f->Phi, al, f->K, f->ipiv);
    if (info != 0) {
        snprintf(msg, len, "penalty formulation: M + Phi_q^T alpha Phi_q is singular (coordinate %s): a "
                 "massless coordinate without constraint?", info <= n ? m->coord_name[info - 1] : "?");
        return MBS_ERR_NUMERIC;
    }
    double *b = f->K + (size_t)(n + nc) * (size_t)(n + nc);
    for (int k = 0; k < n; k++) b[k] = -f->r[k];
    for (int i = 0; i < nc; i++) b[n + i] = -(f->phidd[i] + 2 * om * xi * f->phid[i] + om * om * f->phi[i]);
    mbs_dense_lu_solve(n + nc, f->K, f->ipiv, b);
    memcpy(qdd, b, sizeof(double) * (size_t)n);
    if (lambda) memcpy(lambda, b + n, sizeof(double) * (size_t)nc);
    for (int k = 0; k < n; k++)
        if (!isfinite(qdd[k])) {
            snprintf(msg, len, "penalty formulation: acceleration of %s is not finite at t = %.9g",
                     m->coord_name[k], t);
            return MBS_ERR_NUMERIC;
        }
    return MBS_OK;
}

/* ---------------------------------------------------------------- stepper */



static int pen_step(mbs_form *f, mbs_step_io *io, double h)
{
    const mbs_model *m = f->m;
    mbs_data *d = f->d;
    const int n = f->n, nc = f->nc;
    const size_t bytes = sizeof(double) * (size_t)n;
    const double t1 = io->t + h, kh = BETA * h * h;
    const double al = f->o.penalty, om = f->o.omega, xi = f->o.xi;
    const double sc = 1 + 2 * om * xi * GAMMA * h + om * om * kh;
    memcpy(f->zn, io->q, bytes);
    memcpy(f->zdn, io->qd, bytes);
    memcpy(f->zddn, io->qdd, bytes);
    for (int k = 0; k < n; k++) {
        f->zp[k] = f->zn[k] + h * f->zdn[k] + 0.5 * h * h * f->zddn[k];
        f->zdp[k] = f->zdn[k] + h * f->zddn[k];
        f->D[k] = 0;
    }
    mbs_form_affine(f, h);
    mbs_data_set_time(d, t1);
    int iters = 0, conv = 0;
    double ndz = 0;
    for (int k = 1; k <= f->o.max_iterations; k++) {
        iters = k;
        mbs_form_primal(m, d, t1, f->z, f->zd, f->zdd, f->r, f->phi, f->Phi, f->phid, f->phidd);
        io->st->fevals++;
        for (int i = 0; i < nc; i++)
            f->w1[i] = al * (f->phidd[i] + 2 * om * xi * f->phid[i] + om * om * f->phi[i]);
        mbs_dense_Ptv(n, nc, f->Phi, f->w1, f->v1, 0);
        for (int i = 0; i < n; i++) f->dz[i] = -kh * (f->r[i] + f->v1[i]);
        mbs_form_newton_tangent(f, io->st, k, t1, f->z, f->zd, f->zdd, h, f->S);
        mbs_dense_add_PtP(n, nc, f->Phi, sc * al, f->S);
        io->st->factorizations++;
        lapack_int info = n > 0 ? mbs_dense_lu(n, f->S, f->ipiv) : 0;
        if (info != 0)
            return mbs_fail(io->msg, MBS_ERR_NUMERIC, "penalty formulation: tangent matrix singular at t = %.9g",
                                  t1);
        if (n > 0) mbs_dense_lu_solve(n, f->S, f->ipiv, f->dz);
        for (int i = 0; i < n; i++) f->D[i] += f->dz[i];
        mbs_form_affine(f, h);
        ndz = mbs_dense_norm(f->dz, n);
        if (!isfinite(ndz))
            return mbs_fail(io->msg, MBS_ERR_NUMERIC, "penalty formulation: iteration diverged at t = %.9g", t1);
        if (ndz < f->o.tolerance) {
            conv = 1;
            break;
        }
    }
    if (!conv)
        return mbs_fail(io->msg, MBS_ERR_NUMERIC,
                              "penalty formulation (trapezoidal rule): no convergence at t = %.9g (h = %g) after "
                              "%d iterations: |dz| = %.3e > tolerance %.3e", t1, h, iters, ndz, f->o.tolerance);
    mbs_form_tangent_done(f, iters);
    /* multipliers at the solution */
    mbs_form_constraints(m, d, t1, f->z, f->zd, f->zdd, f->phi, NULL, f->phid, f->phidd);
    for (int i = 0; i < nc; i++)
        f->step.lambda[i] = al * (f->phidd[i] + 2 * om * xi * f->phid[i] + om * om * f->phi[i]);
    f->viol[0] = mbs_dense_norm(f->phi, nc);
    f->viol[1] = mbs_dense_norm(f->phid, nc);
    f->viol[2] = mbs_dense_norm(f->phidd, nc);
    f->viol_ready = 1;
    io->kin_ready = 1;   /* mbs_form_constraints left the kinematics of the new state in d */
    mbs_form_step_done(f, t1, h, iters);
    memcpy(f->step.zd_star, f->zd, bytes);
    memcpy(f->step.zdd_star, f->zdd, bytes);
    f->step.vel_projected = f->step.acc_projected = 0;
    return MBS_OK;
}


const mbs_stepper mbs_stepper_penalty = { "penalty", pen_step };
