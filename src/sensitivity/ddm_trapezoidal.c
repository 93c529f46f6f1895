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

#include "sens_common.h"

#define BETA 0.25
#define GAMMA 0.5

typedef struct {
    sens_run *r;
    int np;
    size_t n;
    double *Sz, *Szd, *Szdd, *M, *K, *C, *S, *r0;
    lapack_int *ipiv;
} trap_ddm;

/* Column j: one tangent sweep of the residual along the predictor's
 * sensitivities and dx_j on the data of rt (its primal at the step's end
 * state), one solve with the factored tangent. Scratch: dzp, dzdp, dr (n),
 * dx (nx). */
static void trap_column(const trap_ddm *c, sens_run *rt, int j, double h, const double *q, const double *qd,
                        const double *qdd, double *dzp, double *dzdp, double *dr, double *dx)
{
    const mbs_model *m = rt->m;
    const int nv = rt->nv;
    const size_t n = c->n;
    double *sz = c->Sz + (size_t)j * n, *szd = c->Szd + (size_t)j * n, *szdd = c->Szdd + (size_t)j * n;
    for (int k = 0; k < nv; k++) {
        dzp[k] = sz[k] + h * szd[k] + 0.5 * h * h * szdd[k];
        dzdp[k] = szd[k] + h * szdd[k];
    }
    mbs_deriv_param_dx(m, j, dx);
    mbs_deriv_id_tangent(m, rt->d, q, qd, qdd, dzp, dzdp, szdd, dx, dr, 1, m->nb + 1);
    sens_trap_complete_d(m, q, qd, qdd, c->r0, dzp, dzdp, szdd, dr);
    for (int k = 0; k < nv; k++) dr[k] *= -BETA * h * h;
    if (nv > 0) LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', nv, 1, c->S, nv, c->ipiv, dr, nv);
    for (int k = 0; k < nv; k++) {
        sz[k] = dzp[k] + dr[k];
        szd[k] = dzdp[k] + GAMMA / (BETA * h) * dr[k];
        szdd[k] = szdd[k] + dr[k] / (BETA * h * h);
    }
}

typedef struct trap_cols {
    const trap_ddm *c;
    double t, h;
    const double *q, *qd, *qdd;
} trap_cols;

/* Thread th's columns at the step's end state (threads > 0 redo the
 * primal pass on their data first). */
static void trap_cols_thread(void *ctx, int th, int nth)
{
    const trap_cols *a = ctx;
    const trap_ddm *c = a->c;
    const mbs_model *m = c->r->m;
    sens_run *rt = sens_team_run(c->r, th);
    const size_t n = c->n;
    double *dzp = sens_team_ws(c->r, th), *dzdp = dzp + n, *dr = dzdp + n, *dx = dr + n, *r0 = dx + m->nx + 1;
    if (th > 0) {
        mbs_data_set_time(rt->d, a->t);
        mbs_deriv_id_primal(m, rt->d, a->q, a->qd, a->qdd, r0);
    }
    for (int j = th; j < c->np; j += nth) trap_column(c, rt, j, a->h, a->q, a->qd, a->qdd, dzp, dzdp, dr, dx);
}

/* the Newton tangent at the converged state, factored once, then the
 * columns on the threads of the run's team */
static int trap_advance(void *ctx, double t, double h, const double *q, const double *qd, const double *qdd,
                        mbs_error *err)
{
    trap_ddm *c = ctx;
    sens_run *r = c->r;
    const mbs_model *m = r->m;
    const int nv = r->nv;
    int rc;
    mbs_data_set_time(r->d, t);
    if ((rc = mbs_deriv_id_derivatives(m, r->d, q, qd, qdd, c->r0, c->K, c->C)) ||
        (rc = sens_mass_matrix(r, q, c->M)))
        return mbs_error_set(err, rc, "sensitivity at t = %.9g: %s", t, mbs_data_error(r->d));
    mbs_trap_assemble_tangent(m, q, qd, qdd, c->r0, c->M, c->K, c->C, h, c->S);
    lapack_int info = nv > 0 ? LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nv, nv, c->S, nv, c->ipiv) : 0;
    if (info != 0) return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: step tangent singular", t);
    mbs_deriv_id_primal(m, r->d, q, qd, qdd, c->r0);
    trap_cols a = {c, t, h, q, qd, qdd};
    sens_team_do(r, trap_cols_thread, &a);
    return MBS_OK;
}

int sens_ddm_trapezoidal(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int nv = r->nv, np = r->np;
    const size_t n = (size_t)(nv > 0 ? nv : 1), P = (size_t)np;
    int rc = MBS_OK;
    sens_fwd F;
    sens_fwd_open(&F, r, SENS_FWD_OPEN, err);   /* failure: F.it is NULL (checked below) */
    mbs_integrator *it = F.it;
    const mbs_sim_options so = F.so;
    /* sensitivities: 3 state blocks x np; the step's tangent and scratch */
    trap_ddm c = { r, np, n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    sens_team T;
    const size_t per = 4 * n + (size_t)m->nx + 1, obj = SENS_OBJ_WS(m, r->nobj);
    if (sens_team_open(&T, r, np, per > obj ? per : obj, err)) it = NULL;
    c.Sz = calloc(P * n, 8); c.Szd = calloc(P * n, 8); c.Szdd = calloc(P * n, 8);
    c.M = calloc(n * n, 8); c.K = calloc(n * n, 8); c.C = calloc(n * n, 8); c.S = calloc(n * n, 8);
    c.r0 = calloc(n, 8);
    c.ipiv = calloc(n, sizeof *c.ipiv);
    if (!it || !c.Sz || !c.Szd || !c.Szdd || !c.M || !c.K || !c.C || !c.S || !c.r0 || !c.ipiv) {
        rc = err && err->code ? err->code : mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = mbs_integrator_reset(it, so.t0, NULL, NULL, err))) goto done;
    const double t = so.t0;
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it);

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
            for (int k = 0; k < nv; k++) c.Szdd[(size_t)j * n + k] = A[(size_t)k * P + j];
        free(A);
    }
    rc = sens_ddm_march(r, it, &so, c.Sz, c.Szd, c.Szdd, n, trap_advance, &c, err);
done:
    sens_fwd_close(&F, stats);
    free(c.Sz); free(c.Szd); free(c.Szdd); free(c.M); free(c.K); free(c.C); free(c.S);
    free(c.r0); free(c.ipiv);
    sens_team_close(&T, r);
    return rc;
}
