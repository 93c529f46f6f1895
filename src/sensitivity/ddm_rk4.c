/*
 * ddm_rk4.c - direct differentiation with the fully recursive formulation
 * (Anderson & Hsu 2002; thesis §4.3): the state y = [q; qd], its
 * sensitivities s_j = dy/drho_j and psi are advanced together by the
 * classical RK4 scheme, so the gradient is the exact derivative of the
 * RK4-discretized psi. Each stage needs, per parameter, the directional
 * derivative of the forward dynamics,
 *     dqdd = M'^-1 (dtau - tangent of the Newton-Euler residual along (s_q, s_qd, dx_j)),
 * solved with the articulated-body factors of the stage (O(n) per
 * parameter, M never formed), and the tangent of the objective integrand.
 *
 *   k1 = f(t, y)            k2 = f(t + h/2, y + h/2 k1)
 *   k3 = f(t + h/2, y + h/2 k2)   k4 = f(t + h, y + h k3)
 *   y+ = y + h/6 (k1 + 2 k2 + 2 k3 + k4), the same for psi (psidot = g),
 *   and for each s_j with the tangents of the stages.
 * With r->np == 0 only psi is computed (the fd reference for fr).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"

typedef struct {
    double *q, *qd, *a, *tid, *rhs, *g, *dg, *dx;
    double *sq, *sqd;            /* np x nq stage sensitivities */
} stage_ws;

/* One stage: state (q, qd) and sensitivities (sq, sqd) at time t give
 * kq = qd, kqd = qdd, kpsi = g and their tangents ksq = sqd, ksqd = dqdd,
 * kdpsi = dg (per parameter). */
static int stage(sens_run *r, double t, const double *q, const double *qd, const double *sq,
                 const double *sqd, double *qdd, double *kpsi, double *ksqd, double *kdpsi,
                 stage_ws *w, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int nq = r->nq, np = r->np, no = r->nobj;
    const size_t n = (size_t)(nq > 0 ? nq : 1);
    mbs_data_set_time(r->d, t);
    int rc = mbs_deriv_fd_primal(m, r->d, MBS_FD_RECURSIVE, q, qd, NULL, qdd, w->tid);
    if (rc) return mbs_error_set(err, rc, "sensitivity (fr, rk4) at t = %.9g: %s", t, mbs_data_error(r->d));
    sens_objectives(r, q, qd, qdd, t, 0, kpsi);
    for (int j = 0; j < np; j++) {
        const double *dq = sq + (size_t)j * n, *dqd = sqd + (size_t)j * n;
        double *dqdd = ksqd + (size_t)j * n;
        mbs_deriv_param_dx(m, j, w->dx);
        mbs_deriv_id_tangent(m, r->d, q, qd, qdd, dq, dqd, NULL, w->dx, w->rhs, 1, m->nb + 1);
        mbs_deriv_fd_solve(m, r->d, MBS_FD_RECURSIVE, q, qd, NULL, qdd, w->tid, dq, dqd, w->rhs, dqdd);
        sens_objectives_d(r, q, qd, qdd, dq, dqd, dqdd, w->dx, j, t, 0, w->dg);
        for (int k = 0; k < no; k++) kdpsi[(size_t)k * (size_t)(np > 0 ? np : 1) + j] = w->dg[k];
    }
    return MBS_OK;
}

int sens_ddm_rk4(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int nq = r->nq, np = r->np, no = r->nobj;
    const size_t n = (size_t)(nq > 0 ? nq : 1), P = (size_t)(np > 0 ? np : 1), O = (size_t)(no > 0 ? no : 1);
    const mbs_sim_options *so = &r->o->sim;
    int rc = MBS_OK;
    mbs_data_set_ref(r->d, so->ref);
    double *q = calloc(n, 8), *qd = calloc(n, 8), *yq = calloc(n, 8), *yqd = calloc(n, 8);
    double *kq[4], *kqd[4], *kpsi[4], *ksq[4], *ksqd[4], *kdpsi[4];
    double *Sq = calloc(P * n, 8), *Sqd = calloc(P * n, 8), *sq = calloc(P * n, 8), *sqd = calloc(P * n, 8);
    stage_ws w;
    memset(&w, 0, sizeof w);
    w.tid = calloc(n, 8);
    w.rhs = calloc(n, 8);
    w.dg = calloc(O, 8);
    w.dx = calloc((size_t)m->nx + 1, 8);
    int ok = q && qd && yq && yqd && Sq && Sqd && sq && sqd && w.tid && w.rhs && w.dg && w.dx;
    for (int s = 0; s < 4; s++) {
        kq[s] = calloc(n, 8); kqd[s] = calloc(n, 8); kpsi[s] = calloc(O, 8);
        ksq[s] = calloc(P * n, 8); ksqd[s] = calloc(P * n, 8); kdpsi[s] = calloc(O * P, 8);
        ok = ok && kq[s] && kqd[s] && kpsi[s] && ksq[s] && ksqd[s] && kdpsi[s];
    }
    if (!ok) { rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); goto done; }
    mbs_model_initial_state(m, yq, yqd);
    if (mbs_normalize_state(m, yq, yqd)) {
        rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity: degenerate initial Euler parameters");
        goto done;
    }
    for (int k = 0; k < no; k++) { r->psi[k] = 0; for (int j = 0; j < np; j++) r->grad[k * np + j] = 0; }
    long steps = 0, fevals = 0;
    double t = so->t0;
    static const double c[4] = { 0, 0.5, 0.5, 1 }, wgt[4] = { 1, 2, 2, 1 };
    while (t < so->tf - 1e-12 * fmax(1, fabs(so->tf))) {
        const double h = fmin(so->dt, so->tf - t);
        for (int s = 0; s < 4; s++) {
            /* stage state: y + c_s h k_{s-1} */
            for (int k = 0; k < nq; k++) {
                q[k] = yq[k] + (s ? c[s] * h * kq[s - 1][k] : 0);
                qd[k] = yqd[k] + (s ? c[s] * h * kqd[s - 1][k] : 0);
            }
            for (size_t k = 0; k < (size_t)np * n; k++) {
                sq[k] = Sq[k] + (s ? c[s] * h * ksq[s - 1][k] : 0);
                sqd[k] = Sqd[k] + (s ? c[s] * h * ksqd[s - 1][k] : 0);
            }
            memcpy(kq[s], qd, 8 * (size_t)nq);
            memcpy(ksq[s], sqd, 8 * (size_t)np * n);
            if ((rc = stage(r, t + c[s] * h, q, qd, sq, sqd, kqd[s], kpsi[s], ksqd[s], kdpsi[s], &w, err)))
                goto done;
            fevals++;
        }
        for (int k = 0; k < nq; k++) {
            yq[k] += h / 6 * (kq[0][k] + 2 * kq[1][k] + 2 * kq[2][k] + kq[3][k]);
            yqd[k] += h / 6 * (kqd[0][k] + 2 * kqd[1][k] + 2 * kqd[2][k] + kqd[3][k]);
        }
        for (size_t k = 0; k < (size_t)np * n; k++) {
            Sq[k] += h / 6 * (ksq[0][k] + 2 * ksq[1][k] + 2 * ksq[2][k] + ksq[3][k]);
            Sqd[k] += h / 6 * (ksqd[0][k] + 2 * ksqd[1][k] + 2 * ksqd[2][k] + ksqd[3][k]);
        }
        for (int k = 0; k < no; k++) {
            for (int s = 0; s < 4; s++) r->psi[k] += h / 6 * wgt[s] * kpsi[s][k];
            for (int j = 0; j < np; j++)
                for (int s = 0; s < 4; s++) r->grad[k * np + j] += h / 6 * wgt[s] * kdpsi[s][(size_t)k * P + j];
        }
        t += h;
        steps++;
        if (r->o->history && r->o->history(r->o->history_user, t, no, np, r->psi, np ? r->grad : NULL)) break;
    }
    /* terminal terms at the final state: accelerations from the dynamics */
    {
        double *g = kpsi[0], *dqdd = ksqd[0];
        mbs_data_set_time(r->d, t);
        if ((rc = mbs_deriv_fd_primal(m, r->d, MBS_FD_RECURSIVE, yq, yqd, NULL, q, w.tid))) {
            mbs_error_set(err, rc, "sensitivity (fr, rk4) at t = %.9g: %s", t, mbs_data_error(r->d));
            goto done;
        }
        sens_objectives(r, yq, yqd, q, t, 1, g);
        for (int k = 0; k < no; k++) r->psi[k] += g[k];
        for (int j = 0; j < np; j++) {
            const double *dq = Sq + (size_t)j * n, *dqd = Sqd + (size_t)j * n;
            mbs_deriv_param_dx(m, j, w.dx);
            mbs_deriv_id_tangent(m, r->d, yq, yqd, q, dq, dqd, NULL, w.dx, w.rhs, 1, m->nb + 1);
            mbs_deriv_fd_solve(m, r->d, MBS_FD_RECURSIVE, yq, yqd, NULL, q, w.tid, dq, dqd, w.rhs, dqdd);
            sens_objectives_d(r, yq, yqd, q, dq, dqd, dqdd, w.dx, j, t, 1, w.dg);
            for (int k = 0; k < no; k++) r->grad[k * np + j] += w.dg[k];
        }
    }
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->steps = stats->outputs = steps;
        stats->fevals = 4 * steps;
        (void)fevals;
    }
done:
    free(q); free(qd); free(yq); free(yqd); free(Sq); free(Sqd); free(sq); free(sqd);
    free(w.tid); free(w.rhs); free(w.dg); free(w.dx);
    for (int s = 0; s < 4; s++) { free(kq[s]); free(kqd[s]); free(kpsi[s]); free(ksq[s]); free(ksqd[s]); free(kdpsi[s]); }
    return rc;
}
