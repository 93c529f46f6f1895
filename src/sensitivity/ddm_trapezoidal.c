/*
 * ddm_trapezoidal.c - direct differentiation of the discrete trapezoidal
 * (Newmark beta = 1/4, gamma = 1/2) solution, semi-recursive formulation
 * (thesis §4.2, differentiated exactly as src/integrators/trapezoidal.c
 * discretizes; docs/sensitivity.md).
 *
 * Step n -> n+1 solves r'(z, zd, zdd; rho) = 0 (the completed Newton-Euler
 * residual) for the correction D = z - z_p to the predictor, with
 *   z = z_p + D, zd = zd_p + gamma/(beta h) D, zdd = zdd_n + D/(beta h^2),
 *   z_p = z_n + h zd_n + h^2/2 zdd_n,  zd_p = zd_n + h zdd_n.
 * Its derivative with respect to rho_j is, with s = dz/drho_j etc.,
 *   S' s_D = -beta h^2 (r'_z s_zp + r'_zd s_zdp + r'_zdd s_zdd,n + r'_rho e_j)
 * where S' = M' + gamma h C' + beta h^2 K' is the Newton tangent at the
 * converged state (factored once per step for all parameters) and the
 * bracket is ONE tangent sweep of the residual along (s_zp, s_zdp, s_zdd,n,
 * dx_j) — O(n) per parameter. psi is the trapezoidal quadrature of g on the
 * steps, its gradient that of dg along the sensitivities.
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_impl.h"

#define BETA 0.25
#define GAMMA 0.5

int sens_ddm_trapezoidal(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int nq = r->nq, np = r->np, no = r->nobj;
    const size_t n = (size_t)(nq > 0 ? nq : 1), P = (size_t)np;
    int rc = MBS_OK;
    mbs_sim_options so = r->o->sim;
    so.project = 0;                       /* the completed equations keep |p| = 1 */
    so.integrator = MBS_INTEGRATOR_TRAPEZOIDAL;
    so.solver = MBS_SOLVER_NEWTON;
    if (!so.tangent) so.tangent = mbs_tangent_analytic;
    mbs_data *di = mbs_data_create(m, err);   /* the integrator's own data */
    mbs_integrator *it = di ? mbs_integrator_create(m, di, &so, err) : NULL;
    /* sensitivities: 3 state blocks x np, plus predictor blocks */
    double *Sz = calloc(P * n, 8), *Szd = calloc(P * n, 8), *Szdd = calloc(P * n, 8);
    double *M = calloc(n * n, 8), *K = calloc(n * n, 8), *C = calloc(n * n, 8), *S = calloc(n * n, 8);
    double *zn = calloc(n, 8), *zdn = calloc(n, 8), *zddn = calloc(n, 8);
    double *dzp = calloc(n, 8), *dzdp = calloc(n, 8), *dr = calloc(n, 8), *r0 = calloc(n, 8);
    double *dx = calloc((size_t)m->nx + 1, 8);
    double *g = calloc((size_t)no + 1, 8), *dg = calloc((size_t)no * P + 1, 8), *dgj = calloc((size_t)no + 1, 8);
    lapack_int *ipiv = calloc(n, sizeof *ipiv);
    if (!it || !Sz || !Szd || !Szdd || !M || !K || !C || !S || !zn || !zdn || !zddn || !dzp || !dzdp ||
        !dr || !r0 || !dx || !g || !dg || !dgj || !ipiv) {
        rc = err && err->code ? err->code : mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = mbs_integrator_reset(it, so.t0, NULL, NULL, err))) goto done;
    double t = so.t0;
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);

    /* t0: initial accelerations depend on rho through the dynamics */
    mbs_data_set_time(r->d, t);
    if (np > 0) {
        double *A = calloc(n * P, 8);
        if (!A) { rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); goto done; }
        rc = mbs_forward_dynamics_param_derivatives(m, r->d, so.formulation, q, qd, NULL, NULL, A);
        if (rc) {
            mbs_error_set(err, rc, "sensitivity at t = %.9g: %s", t, mbs_data_error(r->d));
            free(A);
            goto done;
        }
        for (int j = 0; j < np; j++)
            for (int k = 0; k < nq; k++) Szdd[(size_t)j * n + k] = A[(size_t)k * P + j];
        free(A);
    }
    for (int k = 0; k < no; k++) { r->psi[k] = 0; for (int j = 0; j < np; j++) r->grad[k * np + j] = 0; }
    sens_objectives_ddm(r, q, qd, qdd, t, 0, Sz, Szd, Szdd, (size_t)n, g, dg, dgj, dx);
    if (r->o->history) r->o->history(r->o->history_user, t, no, np, r->psi, r->grad);

    while (t < so.tf - 1e-12 * fmax(1, fabs(so.tf))) {
        const double h = fmin(so.dt, so.tf - t);
        sens_accumulate(r, 0.5 * h, g, dg);
        memcpy(zn, q, 8 * (size_t)nq);
        memcpy(zdn, qd, 8 * (size_t)nq);
        memcpy(zddn, qdd, 8 * (size_t)nq);
        if ((rc = mbs_integrator_step(it, h, err))) goto done;
        t = mbs_integrator_time(it);
        q = mbs_integrator_q(it);
        qd = mbs_integrator_qd(it);
        qdd = mbs_integrator_qdd(it);
        mbs_data_set_time(r->d, t);

        /* Newton tangent at the converged state, factored once */
        if ((rc = mbs_deriv_id_derivatives(m, r->d, q, qd, qdd, r0, K, C)) ||
            (rc = sens_mass_matrix(r, q, M))) {
            mbs_error_set(err, rc, "sensitivity at t = %.9g: %s", t, mbs_data_error(r->d));
            goto done;
        }
        mbs_trap_assemble_tangent(m, q, qd, qdd, r0, M, K, C, h, S);
        lapack_int info = nq > 0 ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nq, nq, S, nq, ipiv) : 0;
        if (info != 0) {
            rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: step tangent singular", t);
            goto done;
        }
        mbs_deriv_id_primal(m, r->d, q, qd, qdd, r0);
        for (int j = 0; j < np; j++) {
            double *sz = Sz + (size_t)j * n, *szd = Szd + (size_t)j * n, *szdd = Szdd + (size_t)j * n;
            for (int k = 0; k < nq; k++) {
                dzp[k] = sz[k] + h * szd[k] + 0.5 * h * h * szdd[k];
                dzdp[k] = szd[k] + h * szdd[k];
            }
            mbs_deriv_param_dx(m, j, dx);
            mbs_deriv_id_tangent(m, r->d, q, qd, qdd, dzp, dzdp, szdd, dx, dr, 1, m->nb + 1);
            sens_trap_complete_d(m, q, qd, qdd, r0, dzp, dzdp, szdd, dr);
            for (int k = 0; k < nq; k++) dr[k] *= -BETA * h * h;
            if (nq > 0) LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', nq, 1, S, nq, ipiv, dr, nq);
            for (int k = 0; k < nq; k++) {
                sz[k] = dzp[k] + dr[k];
                szd[k] = dzdp[k] + GAMMA / (BETA * h) * dr[k];
                szdd[k] = szdd[k] + dr[k] / (BETA * h * h);
            }
        }
        /* objectives at t_{n+1} */
        sens_objectives_ddm(r, q, qd, qdd, t, 0, Sz, Szd, Szdd, (size_t)n, g, dg, dgj, dx);
        sens_accumulate(r, 0.5 * h, g, dg);
        if (r->o->history && r->o->history(r->o->history_user, t, no, np, r->psi, r->grad)) break;
        /* the next step adds the left half weight of this point */
    }
    /* terminal terms at tF */
    sens_objectives_ddm(r, q, qd, qdd, t, 1, Sz, Szd, Szdd, (size_t)n, g, dg, dgj, dx);
    sens_accumulate(r, 1, g, dg);
done:
    if (stats && it) mbs_integrator_stats(it, stats);
    mbs_integrator_free(it);
    mbs_data_free(di);
    free(Sz); free(Szd); free(Szdd); free(M); free(K); free(C); free(S);
    free(zn); free(zdn); free(zddn); free(dzp); free(dzdp); free(dr); free(r0); free(dx);
    free(g); free(dg); free(dgj); free(ipiv);
    return rc;
}
