/*
 * sens_common.c - what the sensitivity methods share: the objectives
 * (the model's and the program's own) and their tangents along a run, the
 * trapezoidal quadrature of the forward march (sens_ddm_march), the forward
 * run of a method (sens_fwd_open), the mass matrix, the completion of the
 * Euler rows of the trapezoidal residual, the transposed LU solve.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <omp.h>

#include "sens_common.h"
#include "../formulations/form_impl.h"

/* ---------------------------------------------------------------- threads */

int sens_blas_single(int threads)
{
    if (threads <= 1) return 0;
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
    return saved;
}

void sens_blas_restore(int threads, int saved)
{
    if (threads > 1) openblas_set_num_threads(saved);
}

int sens_team_open(sens_team *T, sens_run *r, int max_cols, size_t per, mbs_error *err)
{
    memset(T, 0, sizeof *T);
    int nt = r->o && r->o->threads > 1 && !omp_in_parallel() ? r->o->threads : 1;
    if (nt > max_cols) nt = max_cols > 1 ? max_cols : 1;
    T->nt = 1;
    T->per = per > 0 ? per : 1;
    T->ws = calloc((size_t)nt * T->per, sizeof(double));
    T->run = nt > 1 ? calloc((size_t)nt - 1, sizeof *T->run) : NULL;
    r->team = T;
    if (!T->ws || (nt > 1 && !T->run)) return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    for (int t = 1; t < nt; t++) {
        sens_run *c = &T->run[t - 1];
        *c = *r;
        c->psi = c->grad = NULL;
        c->team = NULL;
        c->d = mbs_data_create(r->m, err);
        if (!c->d || sens_run_user_init(c)) {
            sens_run_user_free(c);
            mbs_data_free(c->d);
            c->d = NULL;
            return err && err->code ? err->code : mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        }
        mbs_data_set_ref(c->d, mbs_data_ref(r->d));
        T->nt = t + 1;
    }
    T->blas = sens_blas_single(T->nt);
    return MBS_OK;
}

void sens_team_close(sens_team *T, sens_run *r)
{
    if (T->blas > 0) sens_blas_restore(T->nt, T->blas);
    for (int t = 1; t < T->nt; t++) {
        sens_run *c = &T->run[t - 1];
        if (c->ufail && !r->ufail) {
            r->ufail = 1;
            memcpy(r->umsg, c->umsg, sizeof r->umsg);
        }
        sens_run_user_free(c);
        mbs_data_free(c->d);
    }
    free(T->run);
    free(T->ws);
    memset(T, 0, sizeof *T);
    r->team = NULL;
}

sens_run *sens_team_run(sens_run *r, int t)
{
    return t > 0 && r->team ? &r->team->run[t - 1] : r;
}

double *sens_team_ws(sens_run *r, int t)
{
    return r->team->ws + (size_t)t * r->team->per;
}

int sens_team_size(const sens_run *r)
{
    return r->team ? r->team->nt : 1;
}

void sens_team_do(sens_run *r, sens_team_fn body, void *ctx)
{
    const int nt = sens_team_size(r);
    if (nt <= 1) {
        body(ctx, 0, 1);
        return;
    }
#pragma omp parallel num_threads(nt)
    body(ctx, omp_get_thread_num(), omp_get_num_threads());
}

/* ---------------------------------------------------------------- objectives */

int sens_nobj(const mbs_model *m, const mbs_sens_options *o) { return m->nobj + (o && o->objective ? 1 : 0); }

int sens_objectives_read_forces(const mbs_model *m)
{
    for (int k = 0; k < m->nobj; k++)
        for (int i = 0; i < m->obj[k].nterm; i++)
            if (m->obj[k].term[i].quantity == MBS_OBJQ_COORDINATE_FORCE) return 1;
    return 0;
}

int sens_run_user_init(sens_run *r)
{
    r->ubuf = NULL;
    r->ufail = r->uvalid = 0;
    r->umsg[0] = 0;
    r->tau = NULL;
    if (sens_objectives_read_forces(r->m) && !(r->tau = calloc(2 * (size_t)r->m->nv, sizeof(double))))
        return MBS_ERR_NOMEM;
    if (!r->o || !r->o->objective) return MBS_OK;
    /* rho, the gradient (g_q, g_qd, g_qdd, g_rho), the state of the gradient */
    r->ubuf = calloc(2 * (size_t)r->m->nparam + 6 * (size_t)r->m->nq + 1, sizeof(double));
    return r->ubuf ? MBS_OK : MBS_ERR_NOMEM;
}

void sens_run_user_free(sens_run *r)
{
    free(r->ubuf);
    free(r->tau);
    r->ubuf = NULL;
    r->tau = NULL;
}

int sens_run_user_check(const sens_run *r, mbs_error *err)
{
    if (!r->ufail) return MBS_OK;
    return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity: the program's objective: %s", r->umsg);
}

/* The program's objective at (t, q, qd, qdd): its value, and with grad its
 * gradient in r->ubuf + np (g_q, g_qd, g_qdd, g_rho). The gradient of the
 * last state is kept: the tangents along the many directions of one state
 * call the program once. A failure (or a non-finite value) is recorded
 * once and reported by the driver; the value is then NaN. */
static double user_objective(sens_run *r, double t, const double *q, const double *qd, const double *qdd, int grad)
{
    const mbs_model *m = r->m;
    const int nq = m->nq, np = m->nparam;
    const size_t bytes = sizeof(double) * (size_t)nq;
    double *rho = r->ubuf, *gq = rho + np, *gqd = gq + nq, *gqdd = gqd + nq, *grho = gqdd + nq, g = 0;
    double *sq = grho + np, *sqd = sq + nq, *sqdd = sqd + nq;
    if (r->uvalid && t == r->ut && !memcmp(q, sq, bytes) && !memcmp(qd, sqd, bytes) &&
        (qdd ? !memcmp(qdd, sqdd, bytes) : 0))
        return r->ug;
    r->uvalid = 0;
    for (int j = 0; j < np; j++) rho[j] = m->param[j].value;
    int rc = r->o->objective(r->o->objective_user, t, nq, q, qd, qdd, np, rho, &g, grad ? gq : NULL,
                             grad ? gqd : NULL, grad ? gqdd : NULL, grad ? grho : NULL);
    int finite = isfinite(g);
    for (int k = 0; grad && k < 3 * nq + np && finite; k++) finite = isfinite(gq[k]);
    if ((rc || !finite) && !r->ufail) {
        r->ufail = 1;
        if (rc) snprintf(r->umsg, sizeof r->umsg, "it returned %d at t = %.9g", rc, t);
        else snprintf(r->umsg, sizeof r->umsg, "non-finite value or derivative at t = %.9g", t);
    }
    if (rc || !finite) return NAN;
    if (grad && qdd) {   /* keep it for the next directions at this state */
        memcpy(sq, q, bytes);
        memcpy(sqd, qd, bytes);
        memcpy(sqdd, qdd, bytes);
        r->ut = t;
        r->ug = g;
        r->uvalid = 1;
    }
    return g;
}

void sens_objectives_primal(sens_run *r, const double *q, const double *qd, const double *qdd, double t)
{
    mbs_data_set_time(r->d, t);
    mbs_deriv_id_primal(r->m, r->d, q, qd, qdd, r->tau ? r->tau : r->d->dbuf);
}

void sens_objectives(sens_run *r, const double *q, const double *qd, const double *qdd,
                     double t, int terminal, double *g)
{
    const mbs_model *m = r->m;
    sens_objectives_primal(r, q, qd, qdd, t);
    for (int k = 0; k < m->nobj; k++)
        g[k] = mbs_objective_integrand(m, m->x, &r->d->ws, k, terminal, q, qd, qdd, r->tau, t);
    if (r->o && r->o->objective) g[m->nobj] = terminal ? 0 : user_objective(r, t, q, qd, qdd, 0);
}

int mbs_objective_integrand_at(const mbs_model *m, mbs_data *d, int k, int terminal, double t, const double *q,
                               const double *qd, const double *qdd, double *g)
{
    if (!m || !d || !q || !qd || !qdd || !g || k < 0 || k >= m->nobj) return MBS_ERR_ARG;
    mbs_data_set_time(d, t);
    mbs_deriv_id_primal(m, d, q, qd, qdd, d->dbuf);
    *g = mbs_objective_integrand(m, m->x, &d->ws, k, terminal != 0, q, qd, qdd, d->dbuf, t);
    return MBS_OK;
}

/* One past the last body whose kinematics an objective reads (bodies are
 * in depth-first order, so the sweep over 1 .. end-1 covers their paths):
 * coordinates read none, the kinetic energy all. */
static int objective_body_end(const mbs_model *m)
{
    int end = 1;
    for (int k = 0; k < m->nobj; k++)
        for (int i = 0; i < m->obj[k].nterm; i++) {
            const mbs_objective_term *tm = &m->obj[k].term[i];
            int b = 0;
            switch (tm->quantity) {
            case MBS_OBJQ_POINT_POSITION:
            case MBS_OBJQ_POINT_VELOCITY:
            case MBS_OBJQ_POINT_ACCELERATION: b = m->point[tm->point].body; break;
            case MBS_OBJQ_ANGULAR_VELOCITY: b = tm->body; break;
            case MBS_OBJQ_KINETIC_ENERGY: b = m->nb; break;
            default: b = 0; break;
            }
            if (b + 1 > end) end = b + 1;
        }
    return end;
}

void sens_objectives_d(sens_run *r, const double *q, const double *qd, const double *qdd,
                       const double *dq, const double *dqd, const double *dqdd, const double *dx, int param,
                       double t, int terminal, double *dg)
{
    const mbs_model *m = r->m;
    double *dtau = r->tau ? r->tau + m->nv : NULL;
    if (dtau) {
        /* the tangent of the inverse dynamics (the kinematics' with it, in
         * dws) needs its primal's loads and body terms: redone here, since a
         * caller may have left only the kinematics of the state in ws */
        sens_objectives_primal(r, q, qd, qdd, t);
        mbs_deriv_id_tangent(m, r->d, q, qd, qdd, dq, dqd, dqdd, dx, dtau, 1, m->nb + 1);
    } else {
        mbs_kin_forward_d(m, m->x, &r->d->ws, dx, &r->d->dws, q, qd, qdd, dq, dqd, dqdd, 2, 1,
                          objective_body_end(m));
    }
    for (int k = 0; k < m->nobj; k++)
        dg[k] = mbs_objective_integrand_d(m, m->x, &r->d->ws, dx, &r->d->dws, k, terminal,
                                          q, qd, qdd, r->tau, dq, dqd, dqdd, dtau, t);
    if (r->o && r->o->objective) {
        double s = 0;
        if (!terminal) {
            const int nq = m->nq, np = m->nparam;
            (void)user_objective(r, t, q, qd, qdd, 1);
            const double *gq = r->ubuf + np, *gqd = gq + nq, *gqdd = gqd + nq, *grho = gqdd + nq;
            for (int i = 0; i < nq; i++)
                s += (dq ? gq[i] * dq[i] : 0) + (dqd ? gqd[i] * dqd[i] : 0) + (dqdd ? gqdd[i] * dqdd[i] : 0);
            if (param >= 0) s += grho[param];
        }
        dg[m->nobj] = s;
    }
}

typedef struct obj_cols {
    sens_run *r;
    const double *q, *qd, *qdd, *Sz, *Szd, *Szdd;
    double t;
    int terminal;
    size_t stride;
    double *dg, *dgj, *dx;
} obj_cols;

/* Thread th's columns of sens_objectives_ddm. */
static void obj_cols_thread(void *ctx, int th, int nth)
{
    const obj_cols *c = ctx;
    sens_run *r = c->r, *rt = sens_team_run(r, th);
    const int no = r->nobj, np = r->np;
    double *gj = c->dgj, *xj = c->dx;
    if (th > 0) {
        gj = sens_team_ws(r, th);
        xj = gj + no;
        sens_objectives_primal(rt, c->q, c->qd, c->qdd, c->t);
    }
    for (int j = th; j < np; j += nth) {
        const size_t o = (size_t)j * c->stride;
        mbs_deriv_param_dx(r->m, j, xj);
        sens_objectives_d(rt, c->q, c->qd, c->qdd, c->Sz + o, c->Szd + o, c->Szdd + o, xj, j, c->t, c->terminal, gj);
        for (int k = 0; k < no; k++) c->dg[(size_t)k * np + j] = gj[k];
    }
}

void sens_objectives_ddm(sens_run *r, const double *q, const double *qd, const double *qdd, double t, int terminal,
                         const double *Sz, const double *Szd, const double *Szdd, size_t stride, double *g,
                         double *dg, double *dgj, double *dx)
{
    sens_objectives(r, q, qd, qdd, t, terminal, g);
    obj_cols c = {r, q, qd, qdd, Sz, Szd, Szdd, t, terminal, stride, dg, dgj, dx};
    sens_team_do(r, obj_cols_thread, &c);
}

void sens_accumulate(sens_run *r, double w, const double *g, const double *dg)
{
    const int no = r->nobj, np = r->np;
    for (int k = 0; k < no; k++) {
        r->psi[k] += w * g[k];
        for (int j = 0; j < np; j++) r->grad[k * np + j] += w * dg[(size_t)k * np + j];
    }
}

/* b <- A^-T b for the LU factor of mbs_dense_lu (col-major, 1-based pivots
 * as LAPACK's: P A = L U, so A^T = U^T L^T P) */
void sens_lu_solve_t(int n, const double *A, const lapack_int *piv, double *b)
{
    for (int k = 0; k < n; k++) {
        const double *ck = A + (size_t)k * n;
        double s = b[k];
        for (int i = 0; i < k; i++) s -= ck[i] * b[i];
        b[k] = s / ck[k];
    }
    for (int k = n - 1; k >= 0; k--) {
        const double *ck = A + (size_t)k * n;
        double s = b[k];
        for (int i = k + 1; i < n; i++) s -= ck[i] * b[i];
        b[k] = s;
    }
    for (int k = n - 1; k >= 0; k--) {
        const int p = (int)piv[k] - 1;
        if (p != k) { double t = b[k]; b[k] = b[p]; b[p] = t; }
    }
}

int sens_fwd_open(sens_fwd *f, sens_run *r, int kind, mbs_error *err)
{
    const mbs_model *m = r->m;
    memset(f, 0, sizeof *f);
    f->so = r->o->sim;
    f->so.integrator = MBS_INTEGRATOR_TRAPEZOIDAL;
    if (kind == SENS_FWD_OPEN) {
        f->so.project = 0;
        f->so.solver = MBS_SOLVER_NEWTON;
        if (!f->so.tangent) f->so.tangent = mbs_tangent_analytic;
    } else if (kind == SENS_FWD_ALI3P) {
        f->so.loop = MBS_LOOP_ALI3P;
    } else if (kind == SENS_FWD_MATRIXR) {
        f->so.loop = MBS_LOOP_MATRIXR;
    }
    f->d = mbs_data_create(m, err);
    f->it = f->d ? mbs_integrator_create(m, f->d, &f->so, err) : NULL;
    if (f->it && kind == SENS_FWD_MATRIXR) {
        f->g = mbs_form_create(m, r->d, &f->so, err);
        if (f->g) {
            f->g->nd = f->it->form->nd;
            memcpy(f->g->dof, f->it->form->dof, sizeof(mbs_dof) * (size_t)(f->g->nd > 0 ? f->g->nd : 0));
        }
    }
    if (!f->it || (kind == SENS_FWD_MATRIXR && !f->g)) return err && err->code ? err->code : MBS_ERR_NOMEM;
    return MBS_OK;
}

void sens_fwd_close(sens_fwd *f, mbs_sim_stats *stats)
{
    if (stats && f->it) mbs_integrator_stats(f->it, stats);
    mbs_form_free(f->g);
    mbs_integrator_free(f->it);
    mbs_data_free(f->d);
    memset(f, 0, sizeof *f);
}

int sens_ddm_march(sens_run *r, mbs_integrator *it, const mbs_sim_options *so, const double *Sz,
                   const double *Szd, const double *Szdd, size_t stride, sens_advance_fn advance, void *ctx,
                   mbs_error *err)
{
    const int no = r->nobj, np = r->np;
    const size_t P = (size_t)np;
    double *g = calloc((size_t)no * (P + 2) + (size_t)r->m->nx + 2, sizeof(double));
    if (!g) return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    double *dg = g + no, *dgj = dg + (size_t)no * P, *dx = dgj + no;
    int rc = MBS_OK;
    double t = mbs_integrator_time(it);
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);
    for (int k = 0; k < no; k++) { r->psi[k] = 0; for (int j = 0; j < np; j++) r->grad[k * np + j] = 0; }
    sens_objectives_ddm(r, q, qd, qdd, t, 0, Sz, Szd, Szdd, stride, g, dg, dgj, dx);
    if (r->o->history) r->o->history(r->o->history_user, t, no, np, r->psi, r->grad);
    while (t < so->tf - 1e-12 * fmax(1, fabs(so->tf))) {
        const double h = fmin(so->dt, so->tf - t);
        sens_accumulate(r, 0.5 * h, g, dg);
        if ((rc = mbs_integrator_step(it, h, err))) goto done;
        t = mbs_integrator_time(it);
        q = mbs_integrator_q(it);
        qd = mbs_integrator_qd(it);
        qdd = mbs_integrator_qdd(it);
        if ((rc = advance(ctx, t, h, q, qd, qdd, err))) goto done;
        sens_objectives_ddm(r, q, qd, qdd, t, 0, Sz, Szd, Szdd, stride, g, dg, dgj, dx);
        sens_accumulate(r, 0.5 * h, g, dg);
        if (r->o->history && r->o->history(r->o->history_user, t, no, np, r->psi, r->grad)) break;
    }
    /* terminal terms at tF */
    sens_objectives_ddm(r, q, qd, qdd, t, 1, Sz, Szd, Szdd, stride, g, dg, dgj, dx);
    sens_accumulate(r, 1, g, dg);
done:
    free(g);
    return rc;
}

int sens_grow2(void **a, size_t a_size, void **b, size_t b_size, size_t n, size_t *cap, size_t first)
{
    if (n < *cap) return 0;
    const size_t c2 = *cap ? 2 * *cap : first;
    void *a2 = realloc(*a, a_size * c2);
    if (!a2) return -1;
    *a = a2;
    void *b2 = realloc(*b, b_size * c2);
    if (!b2) return -1;
    *b = b2;
    *cap = c2;
    return 0;
}

int sens_mass_matrix(sens_run *r, const double *q, double *M)
{
    mbs_kin_forward(r->m, r->m->x, &r->d->ws, q, NULL, NULL, 0);
    mbs_mass_terms(r->m, r->m->x, &r->d->ws);
    mbs_crba(r->m, &r->d->ws, M);
    for (int k = 0; k < r->nv * r->nv; k++)
        if (!isfinite(M[k])) return mbs_data_fail(r->d, MBS_ERR_NUMERIC, "mass matrix not finite");
    return MBS_OK;
}

void sens_objective_state_gradient(sens_run *r, int k, const double *q, const double *qd,
                                   const double *qdd, double t, int terminal, double w, double *gq,
                                   double *gqd, double *gqdd, double *e, double *dg)
{
    const int nv = r->nv;
    double *zero = e + nv, *out[3] = { gq, gqd, gqdd };
    memset(e, 0, sizeof(double) * 2 * (size_t)nv);
    for (int blk = 0; blk < 3; blk++)
        for (int c = 0; c < nv; c++) {
            e[c] = 1;
            sens_objectives_d(r, q, qd, qdd, blk == 0 ? e : zero, blk == 1 ? e : zero, blk == 2 ? e : zero,
                              NULL, -1, t, terminal, dg);
            out[blk][c] += w * dg[k];
            e[c] = 0;
        }
}

/* ---------------------------------------------------------------- the trapezoidal step */

void sens_trap_complete_d(const mbs_model *m, const double *z, const double *zd, const double *zdd,
                          const double *r0, const double *dz, const double *dzd, const double *dzdd,
                          double *dr)
{
    /* r'_E = r_E - p (p.r_E) + p (p.pdd + |pd|^2) */
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler;
        const double *p = z + jt->qoff + jt->euler, *pd = zd + e, *pdd = zdd + e, *rE = r0 + e;
        const double *dp = dz + e, *dpd = dzd + e, *dpdd = dzdd + e;
        double pr = 0, dpr = 0, pdr = 0, c = 0, dc = 0;
        for (int k = 0; k < 4; k++) {
            pr += p[k] * rE[k];
            dpr += dp[k] * rE[k];
            pdr += p[k] * dr[e + k];
            c += p[k] * pdd[k] + pd[k] * pd[k];
            dc += dp[k] * pdd[k] + p[k] * dpdd[k] + 2 * pd[k] * dpd[k];
        }
        for (int k = 0; k < 4; k++)
            dr[e + k] += -dp[k] * pr - p[k] * (dpr + pdr) + dp[k] * c + p[k] * dc;
    }
}
