/*
 * davm_matrixr.c - discrete adjoint (DAVM) of the Matrix R
 * formulation: the transpose of ddm_matrixr.c's recursion on the same step
 * linearization (lin_matrixr.c), so both give the gradient of
 * the same discrete psi (docs/sensitivity.md).
 *
 * Step s-1 -> s maps (y^i_{s-1}, rho) to y^i_s and to the full state y_s
 * (kinematic problems): with the linearization applied to every input
 * column c (3 nd state columns, then one per parameter) giving (yi1_c, y1_c),
 * and dg_c the objectives' tangent along (y1_c, the column's parameter
 * direction), the adjoint a_s = dpsi/dy^i_s (3 nd x nobj) runs backwards:
 *   a_N = 0
 *   s = N .. 1:  a_{s-1}[c] = yi1_c . a_s + (w_s dg_c + dG_c at s = N)       (c < 3 nd)
 *                grad_j   += yi1_c . a_s + (w_s dg_c + dG_c at s = N)       (c = 3 nd + j)
 *   grad_j += w_0 dg(Y0_j, dx_j) + Yi0_j . a_0
 * (w the trapezoidal weights, G the terminal part). The forward run stores
 * the state (z, zd, zdd) of every step; the linearizations are recomputed.
 *
 * A parameter that only sets numbers of force elements and time functions
 * (not read by an objective or a driving constraint) moves no kinematic
 * quantity: its column is e_j = -J^-1 R^T dr/drho_j, yi1 = (e, c1 e, d1 e),
 * y1 = Bz e. Its entry w_s dg_j + yi1 . a_s is then psibar . e_j with
 * psibar = w_s Bz^T g_y^T (+ the terminal part) + a_z + c1 a_zd + d1 a_zdd,
 * i.e. nu . dr/drho_j with nu = -R J^-T psibar: the adjoint products of
 * sens_pprod, one per objective for all such parameters (no column, no
 * chain tangent of their own; O(1) per step for all of a spline's knots).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "lin_matrixr.h"
#include "../formulations/form_impl.h"

/* A run: the step linearization, the stored steps, the adjoint and scratch. */
typedef struct {
    sens_run *r;
    mbs_form *g;            /* over the integrator's independent coordinates */
    sens_mr_lin w;
    int nd;
    size_t N3, NI, NU;      /* 3 n; 3 nd (the step's independent inputs); NI + np */
    double *states, *th;    /* per step: (z, zd, zdd); (t, h) */
    size_t nrec, cap;
    double tf;              /* the time the forward run reached */
    sens_pprod *pp;         /* per objective: the element-only parameters' products */
    int *skip, any_skip, user_obj;
    double *buf, *Yi0, *Y0, *a, *an, *YI1, *Y1, *gv, *dg, *dgt, *dx, *pb, *nu;
} dm_run;

/* The element-only parameters take the adjoint products (a program's
 * objective may still read them: their objective columns stay). */
static int dm_setup(dm_run *c, mbs_error *err)
{
    sens_run *r = c->r;
    const mbs_model *m = r->m;
    const int np = r->np, no = r->nobj;
    const size_t N = (size_t)r->nq, P = (size_t)np, NO = (size_t)no, ND = (size_t)c->nd, NI = c->NI, NU = c->NU;
    const size_t N3 = c->N3;
    int rc;
    c->buf = calloc(NI * P + N3 * P + 2 * NI * NO + NI * NU + N3 * NU + 3 * NO + (size_t)m->nx + 2 * ND * NO + N + 4,
                    sizeof(double));
    if (!c->buf || !c->pp || !c->skip || sens_mr_lin_create(&c->w, m, c->g->nd, np))
        return mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
    c->Yi0 = c->buf;
    c->Y0 = c->Yi0 + NI * P;
    c->a = c->Y0 + N3 * P;
    c->an = c->a + NI * NO;
    c->YI1 = c->an + NI * NO;
    c->Y1 = c->YI1 + NI * NU;
    c->gv = c->Y1 + N3 * NU;
    c->dg = c->gv + NO;
    c->dgt = c->dg + NO;
    c->dx = c->dgt + NO;
    c->pb = c->dx + m->nx;
    c->nu = c->pb + ND * NO;
    c->user_obj = r->o->objective != NULL;
    for (int k = 0; k < no; k++) {
        if ((rc = sens_pprod_init(&c->pp[k], m, c->user_obj, err))) return rc;
        sens_pprod_elements_only(&c->pp[k]);
    }
    for (int j = 0; j < np; j++) {
        c->skip[j] = no > 0 && c->pp[0].flag[j] >= 1;
        c->any_skip |= c->skip[j];
    }
    return MBS_OK;
}

/* (q, qd, qdd) at t after a step h: the record s = nrec */
static void dm_record(dm_run *c, double t, double h, const double *q, const double *qd, const double *qdd)
{
    const size_t N = (size_t)c->r->nq;
    double *sp = c->states + c->nrec * c->N3;
    memcpy(sp, q, sizeof(double) * N);
    memcpy(sp + N, qd, sizeof(double) * N);
    memcpy(sp + 2 * N, qdd, sizeof(double) * N);
    c->th[2 * c->nrec] = t;
    c->th[2 * c->nrec + 1] = h;
    c->nrec++;
}

/* Forward: the steps, psi by the trapezoidal rule, every step recorded. */
static int dm_forward(dm_run *c, mbs_integrator *it, const mbs_sim_options *so, mbs_error *err)
{
    sens_run *r = c->r;
    const int no = r->nobj;
    double t = so->t0;
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);
    int rc;
    if ((rc = sens_mr_lin_init(&c->w, r, c->g, t, q, qd, qdd, c->Yi0, c->Y0, err))) return rc;
    c->cap = (size_t)mbs_sim_steps(so) + 3;   /* <= MBS_SIM_MAX_STEPS: options checked */
    c->states = malloc(sizeof(double) * c->N3 * c->cap);
    c->th = malloc(sizeof(double) * 2 * c->cap);
    if (!c->states || !c->th)
        return mbs_error_set(err, MBS_ERR_NOMEM, "davm: out of memory for %zu step records", c->cap);
    for (int k = 0; k < no; k++) r->psi[k] = 0;
    sens_objectives(r, q, qd, qdd, t, 0, c->gv);
    dm_record(c, t, 0, q, qd, qdd);
    while (t < so->tf - 1e-12 * fmax(1, fabs(so->tf))) {
        const double h = fmin(so->dt, so->tf - t);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * c->gv[k];
        if ((rc = mbs_integrator_step(it, h, err))) return rc;
        t = mbs_integrator_time(it);
        q = mbs_integrator_q(it);
        qd = mbs_integrator_qd(it);
        qdd = mbs_integrator_qdd(it);
        if (sens_grow2((void **)&c->states, sizeof(double) * c->N3, (void **)&c->th, sizeof(double) * 2, c->nrec,
                       &c->cap, 1))
            return mbs_error_set(err, MBS_ERR_NOMEM, "davm: out of memory for the step records");
        dm_record(c, t, h, q, qd, qdd);
        sens_objectives(r, q, qd, qdd, t, 0, c->gv);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * c->gv[k];
    }
    sens_objectives(r, q, qd, qdd, t, 1, c->gv);
    for (int k = 0; k < no; k++) r->psi[k] += c->gv[k];
    c->tf = t;
    return MBS_OK;
}

/* psibar of every objective at step s (a_{s} still in a):
 * w_s g_y Bz (+ terminal) + a_z + c1 a_zd + d1 a_zdd */
static void dm_psibar(dm_run *c, size_t s, const double *zs, const double *zds, const double *zdds, double ts,
                      double hs, double ws)
{
    sens_run *r = c->r;
    const int no = r->nobj, nd = c->nd;
    const size_t N = (size_t)r->nq, ND = (size_t)nd, NI = c->NI, last = c->nrec - 1;
    const double c1 = MBS_FORM_GAMMA / (MBS_FORM_BETA * hs), d1 = 1 / (MBS_FORM_BETA * hs * hs);
    for (int k = 0; k < no; k++)
        for (int i = 0; i < nd; i++) {
            const double *ak = c->a + (size_t)k * NI;
            c->pb[(size_t)k * ND + i] = ak[i] + c1 * ak[ND + i] + d1 * ak[2 * ND + i];
        }
    for (int i = 0; i < nd; i++) {
        const double *b = c->w.Bz + (size_t)i * c->N3;
        sens_objectives_d(r, zs, zds, zdds, b, b + N, b + 2 * N, NULL, -1, ts, 0, c->dg);
        if (s == last) sens_objectives_d(r, zs, zds, zdds, b, b + N, b + 2 * N, NULL, -1, ts, 1, c->dgt);
        for (int k = 0; k < no; k++) c->pb[(size_t)k * ND + i] += ws * c->dg[k] + (s == last ? c->dgt[k] : 0);
    }
}

/* Input column col of step s: its objective terms, and the new adjoint
 * (state columns, into an) or the gradient (parameter columns). */
static void dm_column(dm_run *c, size_t s, size_t col, const double *zs, const double *zds, const double *zdds,
                      double ts, double ws)
{
    sens_run *r = c->r;
    const mbs_model *m = r->m;
    const int no = r->nobj;
    const size_t N = (size_t)r->nq, P = (size_t)r->np, NI = c->NI, last = c->nrec - 1;
    const double *y1 = c->Y1 + col * c->N3, *yi1 = c->YI1 + col * NI;
    const double *dxc = NULL;
    const int pc = col >= NI ? (int)(col - NI) : -1;
    if (pc >= 0 && c->skip[pc]) {
        /* its state part through the products below; a program's objective's own g_rho here */
        if (!c->user_obj) return;
        mbs_deriv_param_dx(m, pc, c->dx);
        sens_objectives_d(r, zs, zds, zdds, NULL, NULL, NULL, c->dx, pc, ts, 0, c->dg);
        if (s == last) sens_objectives_d(r, zs, zds, zdds, NULL, NULL, NULL, c->dx, pc, ts, 1, c->dgt);
        for (int k = 0; k < no; k++) r->grad[(size_t)k * P + pc] += ws * c->dg[k] + (s == last ? c->dgt[k] : 0);
        return;
    }
    if (col >= NI) {
        mbs_deriv_param_dx(m, (int)(col - NI), c->dx);
        dxc = c->dx;
    }
    sens_objectives_d(r, zs, zds, zdds, y1, y1 + N, y1 + 2 * N, dxc, pc, ts, 0, c->dg);
    if (s == last) sens_objectives_d(r, zs, zds, zdds, y1, y1 + N, y1 + 2 * N, dxc, pc, ts, 1, c->dgt);
    for (int k = 0; k < no; k++) {
        double v = ws * c->dg[k] + (s == last ? c->dgt[k] : 0);
        const double *ak = c->a + (size_t)k * NI;
        for (size_t i = 0; i < NI; i++) v += yi1[i] * ak[i];
        if (col < NI)
            c->an[NI * (size_t)k + col] = v;   /* an holds the new adjoint below (column col done) */
        else
            r->grad[(size_t)k * P + (col - NI)] += v;
    }
}

/* nu = -R J^-T psibar, then nu . dr/drho_j at the step's end state (r->d's
 * kinematics are redone) */
static void dm_products(dm_run *c, const double *zs, const double *zds, const double *zdds, double ts)
{
    sens_run *r = c->r;
    const int n = r->nq, no = r->nobj, nd = c->nd;
    const size_t N = (size_t)n, ND = (size_t)nd;
    for (int k = 0; k < no; k++) {
        double *p = c->pb + (size_t)k * ND;
        if (nd > 0) sens_lu_solve_t(nd, c->w.J, c->w.ipiv, p);
        for (int i = 0; i < n; i++) {
            double v = 0;
            for (int l = 0; l < nd; l++) v -= c->g->T[(size_t)l * N + i] * p[l];
            c->nu[i] = v;
        }
        sens_pprod_eval(r, &c->pp[k], zs, zds, zdds, c->nu, 3);
        sens_pprod_add(r, &c->pp[k], ts, 1, r->grad + (size_t)k * r->np);
    }
}

/* One step of the backward sweep, s >= 1: the transposed step. */
static int dm_backward_step(dm_run *c, size_t s, mbs_error *err)
{
    sens_run *r = c->r;
    const size_t N = (size_t)r->nq, NI = c->NI, NU = c->NU, last = c->nrec - 1;
    const double *sp = c->states + s * c->N3, *zs = sp, *zds = sp + N, *zdds = sp + 2 * N;
    const double *th = c->th;
    const double ts = th[2 * s], hs = th[2 * s + 1], hn = s < last ? th[2 * s + 3] : 0, ws = 0.5 * (hs + hn);
    int rc;
    if ((rc = sens_mr_lin_factor(&c->w, c->g, ts, zs, zds, zdds, hs, err))) return rc;
    memset(c->dx, 0, sizeof(double) * (size_t)r->m->nx);
    for (size_t col = 0; col < NU; col++) {
        double *e = c->YI1 + col * NI;   /* unit input in YI1's column, overwritten by the output */
        if (col >= NI && c->skip[col - NI]) continue;
        memset(c->an, 0, sizeof(double) * NI);
        if (col < NI) c->an[col] = 1;
        sens_mr_lin_apply(&c->w, c->g, ts, zs, zds, zdds, col < NI ? c->an : NULL, col < NI ? -1 : (int)(col - NI),
                          e, c->Y1 + col * c->N3);
    }
    sens_objectives(r, zs, zds, zdds, ts, 0, c->gv);
    if (c->any_skip) dm_psibar(c, s, zs, zds, zdds, ts, hs, ws);
    for (size_t col = 0; col < NU; col++) dm_column(c, s, col, zs, zds, zdds, ts, ws);
    if (c->any_skip) dm_products(c, zs, zds, zdds, ts);
    memcpy(c->a, c->an, sizeof(double) * NI * (size_t)r->nobj);
    return MBS_OK;
}

/* t0: the objective at y_0 = Y0 and the adjoint through Yi0 */
static void dm_initial(dm_run *c)
{
    sens_run *r = c->r;
    const int np = r->np, no = r->nobj;
    const size_t N = (size_t)r->nq, N3 = c->N3, NI = c->NI, P = (size_t)np;
    const double *st = c->states, *th = c->th;
    const double w0 = 0.5 * (c->nrec > 1 ? th[3] : 0);
    sens_objectives(r, st, st + N, st + 2 * N, th[0], 0, c->gv);
    for (int j = 0; j < np; j++) {
        const double *y = c->Y0 + (size_t)j * N3, *yi = c->Yi0 + (size_t)j * NI;
        mbs_deriv_param_dx(r->m, j, c->dx);
        sens_objectives_d(r, st, st + N, st + 2 * N, y, y + N, y + 2 * N, c->dx, j, th[0], 0, c->dg);
        if (c->nrec == 1)
            sens_objectives_d(r, st, st + N, st + 2 * N, y, y + N, y + 2 * N, c->dx, j, th[0], 1, c->dgt);
        for (int k = 0; k < no; k++) {
            double v = w0 * c->dg[k] + (c->nrec == 1 ? c->dgt[k] : 0);
            const double *ak = c->a + (size_t)k * NI;
            for (size_t i = 0; i < NI; i++) v += yi[i] * ak[i];
            r->grad[(size_t)k * P + j] += v;
        }
    }
}

int sens_davm_matrixr(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const int no = r->nobj;
    const size_t P = (size_t)r->np, NO = (size_t)no;
    dm_run c;
    memset(&c, 0, sizeof c);
    c.r = r;
    c.pp = calloc(NO + 1, sizeof *c.pp);
    c.skip = calloc(P + 1, sizeof(int));
    sens_fwd F;
    int rc = sens_fwd_open(&F, r, SENS_FWD_MATRIXR, err);
    if (!rc) {
        c.g = F.g;
        c.nd = c.g->nd > 0 ? c.g->nd : 0;
        c.N3 = 3 * (size_t)r->nq;
        c.NI = 3 * (size_t)c.nd;
        c.NU = c.NI + P;
        rc = dm_setup(&c, err);
    }
    if (!rc) rc = dm_forward(&c, F.it, &F.so, err);
    if (!rc) {
        /* backward */
        for (size_t k = 0; k < NO * P; k++) r->grad[k] = 0;
        memset(c.a, 0, sizeof(double) * c.NI * NO);
        for (size_t s = c.nrec - 1; s >= 1 && !rc; s--) rc = dm_backward_step(&c, s, err);
    }
    if (!rc) {
        for (int k = 0; k < no && c.any_skip; k++) sens_pprod_finish(r, &c.pp[k], r->grad + (size_t)k * P);
        dm_initial(&c);
        if (r->o->history) r->o->history(r->o->history_user, c.tf, no, r->np, r->psi, r->grad);
    }
    sens_fwd_close(&F, stats);
    sens_mr_lin_free(&c.w);
    for (int k = 0; c.pp && k < no; k++) sens_pprod_free(&c.pp[k]);
    free(c.pp);
    free(c.skip);
    free(c.buf);
    free(c.states);
    free(c.th);
    return rc;
}
