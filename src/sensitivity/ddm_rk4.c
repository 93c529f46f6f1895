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
    double *tid, *dg;            /* n; nobj x np */
} stage_ws;

/* The columns at a state (q, qd) whose accelerations qdd and primal the
 * data of r holds (mbs_deriv_fd_primal with tid, then the objectives'
 * primal): per parameter j, dqdd_j = M'^-1 (dtau - the residual's tangent
 * along (sq_j, sqd_j, dx_j)) into dqdd + j n, and the objectives' tangents
 * into dg[k np + j] (k < nobj). The other threads of r's team redo the two
 * primal passes on their data first (their columns are then the same bits
 * as on r). */
typedef struct rk4_cols {
    sens_run *r;
    double t;
    int terminal;
    const double *q, *qd, *qdd, *tid, *sq, *sqd;
    double *dqdd, *dg;
} rk4_cols;

/* Thread th's columns of rk4_columns. */
static void rk4_cols_thread(void *ctx, int th, int nth)
{
    const rk4_cols *c = ctx;
    sens_run *r = c->r, *rt = sens_team_run(r, th);
    const mbs_model *m = r->m;
    const int nv = r->nv, np = r->np, no = r->nobj;
    const size_t n = (size_t)(nv > 0 ? nv : 1), P = (size_t)(np > 0 ? np : 1);
    const double t = c->t, *q = c->q, *qd = c->qd, *qdd = c->qdd;
    double *rhs = sens_team_ws(r, th), *dgj = rhs + n, *dx = dgj + no + 1, *tt = dx + m->nx + 1;
    const double *tidt = c->tid;
    if (th > 0) {
        double *qddt = tt + n;
        mbs_data_set_time(rt->d, t);
        mbs_deriv_fd_primal(m, rt->d, MBS_FD_RECURSIVE, q, qd, NULL, qddt, tt);
        sens_objectives_primal(rt, q, qd, qdd, t);
        tidt = tt;
    }
    for (int j = th; j < np; j += nth) {
        const double *dq = c->sq + (size_t)j * n, *dqd = c->sqd + (size_t)j * n;
        double *dqddj = c->dqdd + (size_t)j * n;
        mbs_deriv_param_dx(m, j, dx);
        mbs_deriv_id_tangent(m, rt->d, q, qd, qdd, dq, dqd, NULL, dx, rhs, 1, m->nb + 1);
        mbs_deriv_fd_solve(m, rt->d, MBS_FD_RECURSIVE, q, qd, NULL, qdd, tidt, dq, dqd, rhs, dqddj);
        sens_objectives_d(rt, q, qd, qdd, dq, dqd, dqddj, dx, j, t, c->terminal, dgj);
        for (int k = 0; k < no; k++) c->dg[(size_t)k * P + j] = dgj[k];
    }
}

static void rk4_columns(sens_run *r, double t, int terminal, const double *q, const double *qd, const double *qdd,
                        const double *tid, const double *sq, const double *sqd, double *dqdd, double *dg)
{
    rk4_cols c = {r, t, terminal, q, qd, qdd, tid, sq, sqd, dqdd, dg};
    sens_team_do(r, rk4_cols_thread, &c);
}

/* Column workspace of a thread: rhs, dgj, dx, tid and qdd (rk4_columns). */
static size_t rk4_ws(const sens_run *r)
{
    const size_t n = (size_t)(r->nv > 0 ? r->nv : 1);
    return 3 * n + (size_t)r->nobj + (size_t)r->m->nx + 2;
}

/* One stage: state (q, qd) and sensitivities (sq, sqd) at time t give
 * kq = qd, kqd = qdd, kpsi = g and their tangents ksq = sqd, ksqd = dqdd,
 * kdpsi = dg (per parameter). */
static int stage(sens_run *r, double t, const double *q, const double *qd, const double *sq,
                 const double *sqd, double *qdd, double *kpsi, double *ksqd, double *kdpsi,
                 stage_ws *w, mbs_error *err)
{
    mbs_data_set_time(r->d, t);
    int rc = mbs_deriv_fd_primal(r->m, r->d, MBS_FD_RECURSIVE, q, qd, NULL, qdd, w->tid);
    if (rc) return mbs_error_set(err, rc, "sensitivity (fr, rk4) at t = %.9g: %s", t, mbs_data_error(r->d));
    sens_objectives(r, q, qd, qdd, t, 0, kpsi);
    rk4_columns(r, t, 0, q, qd, qdd, w->tid, sq, sqd, ksqd, kdpsi);
    return MBS_OK;
}

int sens_ddm_rk4(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int nq = r->nq, nv = r->nv, np = r->np, no = r->nobj;
    const size_t nqa = (size_t)(nq > 0 ? nq : 1), n = (size_t)(nv > 0 ? nv : 1);
    const size_t P = (size_t)(np > 0 ? np : 1), O = (size_t)(no > 0 ? no : 1);
    const mbs_sim_options *so = &r->o->sim;
    int rc = MBS_OK;
    mbs_data_set_ref(r->d, so->ref);
    double *q = calloc(nqa, 8), *qd = calloc(n, 8), *yq = calloc(nqa, 8), *yqd = calloc(n, 8);
    double *kq[4], *kqd[4], *kpsi[4], *ksq[4], *ksqd[4], *kdpsi[4];
    double *Sq = calloc(P * n, 8), *Sqd = calloc(P * n, 8), *sq = calloc(P * n, 8), *sqd = calloc(P * n, 8);
    stage_ws w;
    memset(&w, 0, sizeof w);
    w.tid = calloc(n, 8);
    w.dg = calloc(O * P, 8);
    sens_team T;
    int ok = !sens_team_open(&T, r, np, rk4_ws(r), err);
    ok = ok && q && qd && yq && yqd && Sq && Sqd && sq && sqd && w.tid && w.dg;
    for (int s = 0; s < 4; s++) {
        kq[s] = calloc(n, 8); kqd[s] = calloc(n, 8); kpsi[s] = calloc(O, 8);
        ksq[s] = calloc(P * n, 8); ksqd[s] = calloc(P * n, 8); kdpsi[s] = calloc(O * P, 8);
        ok = ok && kq[s] && kqd[s] && kpsi[s] && ksq[s] && ksqd[s] && kdpsi[s];
    }
    if (!ok) { rc = err && err->code ? err->code : mbs_error_set(err, MBS_ERR_NOMEM, "out of memory"); goto done; }
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
            /* stage state: y + c_s h k_{s-1} (q: additive, kq the velocities) */
            for (int k = 0; k < nq; k++) q[k] = yq[k] + (s ? c[s] * h * kq[s - 1][k] : 0);
            for (int k = 0; k < nv; k++) qd[k] = yqd[k] + (s ? c[s] * h * kqd[s - 1][k] : 0);
            for (size_t k = 0; k < (size_t)np * n; k++) {
                sq[k] = Sq[k] + (s ? c[s] * h * ksq[s - 1][k] : 0);
                sqd[k] = Sqd[k] + (s ? c[s] * h * ksqd[s - 1][k] : 0);
            }
            memcpy(kq[s], qd, 8 * (size_t)nv);
            memcpy(ksq[s], sqd, 8 * (size_t)np * n);
            if ((rc = stage(r, t + c[s] * h, q, qd, sq, sqd, kqd[s], kpsi[s], ksqd[s], kdpsi[s], &w, err)))
                goto done;
            fevals++;
        }
        for (int k = 0; k < nq; k++) yq[k] += h / 6 * (kq[0][k] + 2 * kq[1][k] + 2 * kq[2][k] + kq[3][k]);
        for (int k = 0; k < nv; k++) yqd[k] += h / 6 * (kqd[0][k] + 2 * kqd[1][k] + 2 * kqd[2][k] + kqd[3][k]);
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
        double *g = kpsi[0], *dqdd = ksqd[0], *qdd = kqd[0];
        mbs_data_set_time(r->d, t);
        if ((rc = mbs_deriv_fd_primal(m, r->d, MBS_FD_RECURSIVE, yq, yqd, NULL, qdd, w.tid))) {
            mbs_error_set(err, rc, "sensitivity (fr, rk4) at t = %.9g: %s", t, mbs_data_error(r->d));
            goto done;
        }
        sens_objectives(r, yq, yqd, qdd, t, 1, g);
        for (int k = 0; k < no; k++) r->psi[k] += g[k];
        rk4_columns(r, t, 1, yq, yqd, qdd, w.tid, Sq, Sqd, dqdd, w.dg);
        for (int k = 0; k < no; k++)
            for (int j = 0; j < np; j++) r->grad[k * np + j] += w.dg[(size_t)k * P + j];
    }
    if (stats) {
        memset(stats, 0, sizeof *stats);
        stats->steps = stats->outputs = steps;
        stats->fevals = 4 * steps;
        (void)fevals;
    }
done:
    free(q); free(qd); free(yq); free(yqd); free(Sq); free(Sqd); free(sq); free(sqd);
    free(w.tid); free(w.dg);
    sens_team_close(&T, r);
    for (int s = 0; s < 4; s++) { free(kq[s]); free(kqd[s]); free(kpsi[s]); free(ksq[s]); free(ksqd[s]); free(kdpsi[s]); }
    return rc;
}
