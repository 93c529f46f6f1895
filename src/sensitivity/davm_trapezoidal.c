/*
 * davm_trapezoidal.c - discrete adjoint (DAVM) of the trapezoidal rule,
 * semi-recursive formulation (docs/sensitivity.md): the transpose of the
 * recurrence that ddm_trapezoidal.c differentiates, swept backwards once per
 * objective over the stored trajectory. It gives the exact gradient of the
 * discrete psi, like the DDM, at a cost per step independent of the number
 * of objectives' gradients' parameters except for the final products with
 * dr/drho.
 *
 * Forward: X_n = (z_n, zd_n, zdd_n); step n solves r'(X_{n+1}; rho) = 0 for
 * D with X_{n+1} = (z_p + D, zd_p + c1 D, zdd_n + d1 D), c1 = gamma/(beta h),
 * d1 = 1/(beta h^2). psi = sum_n w_n g(X_n) + G(X_N), w the trapezoidal
 * weights.
 * Backward, with a = dpsi/dX_{n+1} (all later dependence):
 *   S'^T nu = a_z + c1 a_zd + d1 a_zdd
 *   b_z = a_z - beta h^2 R_z^T nu,  b_zd = a_zd - beta h^2 R_zd^T nu,
 *   b_zdd = a_zdd - beta h^2 R_zdd^T nu,  dpsi/drho -= beta h^2 R_rho^T nu
 *   a_z,n = b_z;  a_zd,n = h b_z + b_zd;  a_zdd,n = h^2/2 b_z + h b_zd + b_zdd
 *   a_n += w_n g_X(X_n)
 * and at t0 (z0, zd0 fixed; zdd0 = FD(z0, zd0; rho)): dpsi/drho += a_zdd,0 . dFD/drho.
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"

#define BETA 0.25
#define GAMMA 0.5
/* one stored state of the trajectory: q (nq), qd and qdd (nv each) */
#define STATE_SIZE(r) ((size_t)(r)->nq + 2 * (size_t)(r)->nv)

/* Explicit completed Jacobians R_z, R_zd, R_zdd (row-major) from the raw
 * K, C, M by completing every column. */
static void completed_jacobians(const mbs_model *m, const double *z, const double *zd,
                                const double *zdd, const double *r0, double *K, double *C,
                                double *M, double *col, double *e)
{
    const int nv = m->nv;
    if (m->n_euler == 0) return;
    double *mats[3] = { K, C, M };
    for (int which = 0; which < 3; which++) {
        double *A = mats[which];
        for (int c = 0; c < nv; c++) {
            for (int r = 0; r < nv; r++) col[r] = A[r * nv + c];
            memset(e, 0, sizeof(double) * (size_t)nv);
            e[c] = 1;
            memset(e + nv, 0, sizeof(double) * (size_t)nv);
            sens_trap_complete_d(m, z, zd, zdd, r0, which == 0 ? e : e + nv, which == 1 ? e : e + nv,
                                 which == 2 ? e : e + nv, col);
            for (int r = 0; r < nv; r++) A[r * nv + c] = col[r];
        }
    }
}

/* v <- Pi(v): along each Euler block, v - p (p . v) (v velocity-sized, p in z) */
static void project_euler(const mbs_model *m, const double *z, double *v)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const double *p = z + jt->qoff + jt->euler;
        double *ve = v + jt->voff + jt->euler, pn = 0;
        for (int c = 0; c < 4; c++) pn += p[c] * ve[c];
        for (int c = 0; c < 4; c++) ve[c] -= p[c] * pn;
    }
}

/* grad[j] += w dg_k/drho_j at the state X (primal of sens_objectives left in
 * r->d) for the parameters the objectives may depend on; the others have
 * none (pp->dx is zero outside the parameter being differentiated) */
static void objective_param_terms(sens_run *r, sens_pprod *pp, const double *X, double t, int terminal, double w,
                                  int k, double *dg, double *grad)
{
    const mbs_model *m = r->m;
    const double *qd = X + r->nq, *qdd = qd + r->nv;
    for (int i = 0; i < pp->nobjp; i++) {
        const int j = pp->objp[i];
        const mbs_param_info *p = &m->param[j];
        for (int c = 0; c < p->ntargets; c++) pp->dx[p->target[c]] += p->scale[c];
        sens_objectives_d(r, X, qd, qdd, NULL, NULL, NULL, pp->dx, j, t, terminal, dg);
        for (int c = 0; c < p->ntargets; c++) pp->dx[p->target[c]] = 0;
        grad[j] += w * dg[k];
    }
}

/* The forward run over the grid of N steps: the states (q, qd, qdd) into
 * X (nq + 2 nv each: STATE_SIZE) and the times into T (N + 1 of each), psi
 * into r->psi. */
static int forward_run(sens_run *r, mbs_integrator *it, const mbs_sim_options *so, long N, double *X, double *T,
                       double *g, mbs_error *err)
{
    const int nq = r->nq, nv = r->nv, np = r->np, no = r->nobj;
    const size_t ns = STATE_SIZE(r);
    int rc;
    if ((rc = mbs_integrator_reset(it, so->t0, NULL, NULL, err))) return rc;
    for (int k = 0; k < no; k++) r->psi[k] = 0;
    T[0] = so->t0;
    memcpy(X, mbs_integrator_q(it), 8 * (size_t)nq);
    memcpy(X + nq, mbs_integrator_qd(it), 8 * (size_t)nv);
    memcpy(X + nq + nv, mbs_integrator_qdd(it), 8 * (size_t)nv);
    sens_objectives(r, X, X + nq, X + nq + nv, T[0], 0, g);
    for (long s = 0; s < N; s++) {
        const double h = fmin(so->dt, so->tf - T[s]);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * g[k];
        if ((rc = mbs_integrator_step(it, h, err))) return rc;
        double *Xs = X + ns * (size_t)(s + 1);
        T[s + 1] = mbs_integrator_time(it);
        memcpy(Xs, mbs_integrator_q(it), 8 * (size_t)nq);
        memcpy(Xs + nq, mbs_integrator_qd(it), 8 * (size_t)nv);
        memcpy(Xs + nq + nv, mbs_integrator_qdd(it), 8 * (size_t)nv);
        sens_objectives(r, Xs, Xs + nq, Xs + nq + nv, T[s + 1], 0, g);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * g[k];
        if (r->o->history) r->o->history(r->o->history_user, T[s + 1], no, np, r->psi, NULL);
    }
    {
        double *XN = X + ns * (size_t)N;
        sens_objectives(r, XN, XN + nq, XN + nq + nv, T[N], 1, g);
        for (int k = 0; k < no; k++) r->psi[k] += g[k];
    }
    return MBS_OK;
}

/* b = a - beta h^2 R^T nu (kh = beta h^2; R_z, R_zd, R_zdd = K, C, M, nv x nv
 * row-major; a, b: 3 blocks of n) */
static void adjoint_b(int nv, size_t n, double kh, const double *K, const double *C, const double *M,
                      const double *nu, const double *a, double *b)
{
    for (int c = 0; c < nv; c++) {
        double sz = 0, szd = 0, szdd = 0;
        for (int rr = 0; rr < nv; rr++) {
            sz += K[rr * nv + c] * nu[rr];
            szd += C[rr * nv + c] * nu[rr];
            szdd += M[rr * nv + c] * nu[rr];
        }
        b[c] = a[c] - kh * sz;
        b[n + c] = a[n + c] - kh * szd;
        b[2 * n + c] = a[2 * n + c] - kh * szdd;
    }
}

/* a at X_s: b through the transpose of the step's map from X_s (the
 * predictor of z, zd over h) */
static void adjoint_back(int nv, size_t n, double h, const double *b, double *a)
{
    for (int c = 0; c < nv; c++) {
        a[c] = b[c];
        a[n + c] = h * b[c] + b[n + c];
        a[2 * n + c] = 0.5 * h * h * b[c] + h * b[n + c] + b[2 * n + c];
    }
}

/* The adjoint of objective k at the last state XN (time tN, last step hN):
 * its integrand's share 0.5 hN and its terminal part, into a and grad. */
static void end_terms(sens_run *r, sens_pprod *pp, int k, const double *XN, double tN, double hN, double *a,
                      double *g, double *e, double *dgall, double *grad)
{
    const size_t n = (size_t)(r->nv > 0 ? r->nv : 1);
    const double *qd = XN + r->nq, *qdd = qd + r->nv;
    sens_objectives(r, XN, qd, qdd, tN, 0, g);
    sens_objective_state_gradient(r, k, XN, qd, qdd, tN, 0, 0.5 * hN, a, a + n, a + 2 * n, e, dgall);
    objective_param_terms(r, pp, XN, tN, 0, 0.5 * hN, k, dgall, grad);
    sens_objectives(r, XN, qd, qdd, tN, 1, g);
    sens_objective_state_gradient(r, k, XN, qd, qdd, tN, 1, 1.0, a, a + n, a + 2 * n, e, dgall);
    objective_param_terms(r, pp, XN, tN, 1, 1.0, k, dgall, grad);
}

int sens_davm_trapezoidal(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int nq = r->nq, nv = r->nv, np = r->np, no = r->nobj;
    const size_t n = (size_t)(nv > 0 ? nv : 1), ns = STATE_SIZE(r);
    int rc = MBS_OK;
    sens_fwd F;
    sens_fwd_open(&F, r, SENS_FWD_OPEN, err);   /* failure: F.it is NULL (checked below) */
    mbs_integrator *it = F.it;
    const mbs_sim_options so = F.so;
    /* the step grid */
    long N = 0;
    for (double t = so.t0; t < so.tf - 1e-12 * fmax(1, fabs(so.tf)); t = fmin(t + so.dt, so.tf)) N++;
    double *X = malloc(sizeof(double) * (ns * (size_t)(N + 1) + 1));
    double *T = malloc(sizeof(double) * (size_t)(N + 1));
    double *M = calloc(n * n, 8), *K = calloc(n * n, 8), *C = calloc(n * n, 8), *S = calloc(n * n, 8);
    double *a = calloc(3 * n, 8), *b = calloc(3 * n, 8), *nu = calloc(n, 8), *r0 = calloc(n, 8);
    double *col = calloc(n, 8), *e = calloc(2 * n, 8);
    double *g = calloc((size_t)no + 1, 8), *dgall = calloc((size_t)no + 1, 8);
    lapack_int *ipiv = calloc(n, sizeof *ipiv);
    double *nup = calloc(n, 8);
    sens_pprod pp;
    if ((rc = sens_pprod_init(&pp, m, r->o->objective != NULL, err))) {
        memset(&pp, 0, sizeof pp);
        goto done;
    }
    if (it && (!X || !T)) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "davm: out of memory for the trajectory of %ld steps (%.3g MB)", N,
                           8e-6 * (double)(N + 1) * (double)(ns + 1));
        goto done;
    }
    if (!it || !X || !T || !M || !K || !C || !S || !a || !b || !nu || !r0 || !col || !e || !nup ||
        !g || !dgall || !ipiv) {
        rc = err && err->code ? err->code : mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    /* ---- forward: trajectory and psi ---- */
    if ((rc = forward_run(r, it, &so, N, X, T, g, err))) goto done;
    if (stats) mbs_integrator_stats(it, stats);

    /* ---- backward, one sweep per objective ---- */
    for (int k = 0; k < no; k++) {
        double *grad = r->grad + (size_t)k * np;
        for (int j = 0; j < np; j++) grad[j] = 0;
        memset(a, 0, sizeof(double) * 3 * n);
        end_terms(r, &pp, k, X + ns * (size_t)N, T[N], T[N] - T[N - 1], a, g, e, dgall, grad);
        for (long s = N - 1; s >= 0; s--) {
            const double h = T[s + 1] - T[s], kh = BETA * h * h;
            const double c1 = GAMMA / (BETA * h), d1 = 1 / (BETA * h * h);
            const double *X1 = X + ns * (size_t)(s + 1), *z = X1, *zd = X1 + nq, *zdd = zd + nv;
            mbs_data_set_time(r->d, T[s + 1]);
            if ((rc = mbs_deriv_id_derivatives(m, r->d, z, zd, zdd, r0, K, C)) ||
                (rc = sens_mass_matrix(r, z, M))) {
                mbs_error_set(err, rc, "adjoint at t = %.9g: %s", T[s + 1], mbs_data_error(r->d));
                goto done;
            }
            mbs_deriv_id_primal(m, r->d, z, zd, zdd, r0);
            mbs_trap_assemble_tangent(m, z, zd, zdd, r0, M, K, C, h, S);
            completed_jacobians(m, z, zd, zdd, r0, K, C, M, col, e);
            for (int c = 0; c < nv; c++) nu[c] = a[c] + c1 * a[n + c] + d1 * a[2 * n + c];
            if (nv > 0) {
                if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, nv, nv, S, nv, ipiv) != 0) {
                    rc = mbs_error_set(err, MBS_ERR_NUMERIC, "adjoint at t = %.9g: step tangent singular", T[s + 1]);
                    goto done;
                }
                LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'T', nv, 1, S, nv, ipiv, nu, nv);
            }
            adjoint_b(nv, n, kh, K, C, M, nu, a, b);
            /* parameters: - beta h^2 nu . R_rho, with R_rho = Pi(r_rho) along the
             * Euler blocks: nu . Pi(v) = (nu - p (p . nu)) . v */
            for (int c = 0; c < nv; c++) nup[c] = nu[c];
            project_euler(m, z, nup);
            sens_pprod_eval(r, &pp, z, zd, zdd, nup, 3);
            sens_pprod_add(r, &pp, T[s + 1], -kh, grad);
            adjoint_back(nv, n, h, b, a);
            /* direct objective terms at X_s */
            const double *X0 = X + ns * (size_t)s, *qd0 = X0 + nq, *qdd0 = qd0 + nv;
            const double w = 0.5 * h + (s > 0 ? 0.5 * (T[s] - T[s - 1]) : 0);
            sens_objectives(r, X0, qd0, qdd0, T[s], 0, g);
            sens_objective_state_gradient(r, k, X0, qd0, qdd0, T[s], 0, w, a, a + n, a + 2 * n, e, dgall);
            objective_param_terms(r, &pp, X0, T[s], 0, w, k, dgall, grad);
        }
        /* t0: zdd0 = FD(z0, zd0; rho): a_zdd . dFD/drho = -nu . dr/drho with
         * nu = Pi(M'^-1 a_zdd) (as in the continuous adjoint) */
        mbs_data_set_time(r->d, T[0]);
        sens_solve_mprime(r, X, X + nq, a + 2 * n, nup, col);
        project_euler(m, X, nup);
        mbs_data_set_time(r->d, T[0]);
        sens_pprod_eval(r, &pp, X, X + nq, X + nq + nv, nup, 3);
        sens_pprod_add(r, &pp, T[0], -1, grad);
        sens_pprod_finish(r, &pp, grad);
    }
done:
    sens_fwd_close(&F, NULL);
    free(X); free(T); free(M); free(K); free(C); free(S); free(a); free(b); free(nu); free(r0);
    free(col); free(e); free(g); free(dgall); free(ipiv);
    free(nup);
    sens_pprod_free(&pp);
    return rc;
}
