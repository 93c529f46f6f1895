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

#include "sens_impl.h"
#include "lin_matrixr.h"
#include "../formulations/form_impl.h"

int sens_davm_matrixr(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int n = r->nq, np = r->np, no = r->nobj;
    const size_t N = (size_t)n, N3 = 3 * N, P = (size_t)np, NO = (size_t)no;
    int rc = MBS_OK;
    sens_mr_lin w;
    memset(&w, 0, sizeof w);
    double *buf = NULL, *states = NULL, *th = NULL;
    size_t nrec = 0, cap = 0;
    sens_pprod *pp = calloc(NO + 1, sizeof *pp);
    int *skip = calloc(P + 1, sizeof(int)), any_skip = 0;
    sens_fwd F;
    if ((rc = sens_fwd_open(&F, r, SENS_FWD_MATRIXR, err))) goto done;
    mbs_integrator *it = F.it;
    mbs_form *g = F.g;   /* over the integrator's independent coordinates */
    const mbs_sim_options so = F.so;
    const size_t NI = 3 * (size_t)(g->nd > 0 ? g->nd : 0), NU = NI + P;
    const int nd = g->nd > 0 ? g->nd : 0;
    const size_t ND = (size_t)nd;
    buf = calloc(NI * P + N3 * P + 2 * NI * NO + NI * NU + N3 * NU + 3 * NO + (size_t)m->nx + 2 * ND * NO + N + 4,
                 sizeof(double));
    if (!buf || !pp || !skip || sens_mr_lin_create(&w, m, g->nd, np)) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    double *Yi0 = buf, *Y0 = Yi0 + NI * P, *a = Y0 + N3 * P, *an = a + NI * NO, *YI1 = an + NI * NO, *Y1 = YI1 + NI * NU,
           *gv = Y1 + N3 * NU, *dg = gv + NO, *dgt = dg + NO, *dx = dgt + NO, *pb = dx + m->nx,
           *nu = pb + ND * NO;
    /* the element-only parameters take the adjoint products (a program's
     * objective may still read them: their objective columns stay) */
    const int user_obj = r->o->objective != NULL;
    for (int k = 0; k < no; k++) {
        if ((rc = sens_pprod_init(&pp[k], m, user_obj, err))) goto done;
        sens_pprod_elements_only(&pp[k]);
    }
    for (int j = 0; j < np; j++) {
        skip[j] = no > 0 && pp[0].flag[j] >= 1;
        any_skip |= skip[j];
    }

    /* ---- forward ---- */
    double t = so.t0;
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);
    if ((rc = sens_mr_lin_init(&w, r, g, t, q, qd, qdd, Yi0, Y0, err))) goto done;
    cap = (size_t)mbs_sim_steps(&so) + 3;   /* <= MBS_SIM_MAX_STEPS: options checked */
    states = malloc(sizeof(double) * N3 * cap);
    th = malloc(sizeof(double) * 2 * cap);
    if (!states || !th) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "davm: out of memory for %zu step records", cap);
        goto done;
    }
    for (int k = 0; k < no; k++) r->psi[k] = 0;
    sens_objectives(r, q, qd, qdd, t, 0, gv);
    memcpy(states, q, sizeof(double) * N);
    memcpy(states + N, qd, sizeof(double) * N);
    memcpy(states + 2 * N, qdd, sizeof(double) * N);
    th[0] = t;
    th[1] = 0;
    nrec = 1;
    while (t < so.tf - 1e-12 * fmax(1, fabs(so.tf))) {
        const double h = fmin(so.dt, so.tf - t);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * gv[k];
        if ((rc = mbs_integrator_step(it, h, err))) goto done;
        t = mbs_integrator_time(it);
        q = mbs_integrator_q(it);
        qd = mbs_integrator_qd(it);
        qdd = mbs_integrator_qdd(it);
        if (sens_grow2((void **)&states, sizeof(double) * N3, (void **)&th, sizeof(double) * 2, nrec, &cap, 1)) {
            rc = mbs_error_set(err, MBS_ERR_NOMEM, "davm: out of memory for the step records");
            goto done;
        }
        double *sp = states + nrec * N3;
        memcpy(sp, q, sizeof(double) * N);
        memcpy(sp + N, qd, sizeof(double) * N);
        memcpy(sp + 2 * N, qdd, sizeof(double) * N);
        th[2 * nrec] = t;
        th[2 * nrec + 1] = h;
        nrec++;
        sens_objectives(r, q, qd, qdd, t, 0, gv);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * gv[k];
    }
    sens_objectives(r, q, qd, qdd, t, 1, gv);
    for (int k = 0; k < no; k++) r->psi[k] += gv[k];

    /* ---- backward ---- */
    for (size_t k = 0; k < NO * P; k++) r->grad[k] = 0;
    memset(a, 0, sizeof(double) * NI * NO);
    const size_t last = nrec - 1;
    for (size_t s = last; s >= 1; s--) {
        const double *sp = states + s * N3, *zs = sp, *zds = sp + N, *zdds = sp + 2 * N;
        const double ts = th[2 * s], hs = th[2 * s + 1], hn = s < last ? th[2 * s + 3] : 0, ws = 0.5 * (hs + hn);
        if ((rc = sens_mr_lin_factor(&w, g, ts, zs, zds, zdds, hs, err))) goto done;
        memset(dx, 0, sizeof(double) * (size_t)m->nx);
        for (size_t c = 0; c < NU; c++) {
            double *e = YI1 + c * NI;   /* unit input in YI1's column, overwritten by the output */
            if (c >= NI && skip[c - NI]) continue;
            memset(an, 0, sizeof(double) * NI);
            if (c < NI) an[c] = 1;
            sens_mr_lin_apply(&w, g, ts, zs, zds, zdds, c < NI ? an : NULL, c < NI ? -1 : (int)(c - NI), e,
                              Y1 + c * N3);
        }
        sens_objectives(r, zs, zds, zdds, ts, 0, gv);
        if (any_skip) {
            /* psibar of every objective (a_{s} still in a): w_s g_y Bz (+ terminal) + a_z + c1 a_zd + d1 a_zdd */
            const double c1 = MBS_FORM_GAMMA / (MBS_FORM_BETA * hs), d1 = 1 / (MBS_FORM_BETA * hs * hs);
            for (int k = 0; k < no; k++)
                for (int i = 0; i < nd; i++) {
                    const double *ak = a + (size_t)k * NI;
                    pb[(size_t)k * ND + i] = ak[i] + c1 * ak[ND + i] + d1 * ak[2 * ND + i];
                }
            for (int i = 0; i < nd; i++) {
                const double *b = w.Bz + (size_t)i * N3;
                sens_objectives_d(r, zs, zds, zdds, b, b + N, b + 2 * N, NULL, -1, ts, 0, dg);
                if (s == last) sens_objectives_d(r, zs, zds, zdds, b, b + N, b + 2 * N, NULL, -1, ts, 1, dgt);
                for (int k = 0; k < no; k++) pb[(size_t)k * ND + i] += ws * dg[k] + (s == last ? dgt[k] : 0);
            }
        }
        for (size_t c = 0; c < NU; c++) {
            const double *y1 = Y1 + c * N3, *yi1 = YI1 + c * NI;
            const double *dxc = NULL;
            const int pc = c >= NI ? (int)(c - NI) : -1;
            if (pc >= 0 && skip[pc]) {
                /* its state part through the products below; a program's objective's own g_rho here */
                if (!user_obj) continue;
                mbs_deriv_param_dx(m, pc, dx);
                sens_objectives_d(r, zs, zds, zdds, NULL, NULL, NULL, dx, pc, ts, 0, dg);
                if (s == last) sens_objectives_d(r, zs, zds, zdds, NULL, NULL, NULL, dx, pc, ts, 1, dgt);
                for (int k = 0; k < no; k++) r->grad[(size_t)k * P + pc] += ws * dg[k] + (s == last ? dgt[k] : 0);
                continue;
            }
            if (c >= NI) {
                mbs_deriv_param_dx(m, (int)(c - NI), dx);
                dxc = dx;
            }
            sens_objectives_d(r, zs, zds, zdds, y1, y1 + N, y1 + 2 * N, dxc, pc, ts, 0, dg);
            if (s == last) sens_objectives_d(r, zs, zds, zdds, y1, y1 + N, y1 + 2 * N, dxc, pc, ts, 1, dgt);
            for (int k = 0; k < no; k++) {
                double v = ws * dg[k] + (s == last ? dgt[k] : 0);
                const double *ak = a + (size_t)k * NI;
                for (size_t i = 0; i < NI; i++) v += yi1[i] * ak[i];
                if (c < NI)
                    an[NI * (size_t)k + c] = v;   /* an holds the new adjoint below (column c done) */
                else
                    r->grad[(size_t)k * P + (c - NI)] += v;
            }
        }
        if (any_skip) {
            /* nu = -R J^-T psibar, then nu . dr/drho_j at the step's end state (r->d's kinematics are redone) */
            for (int k = 0; k < no; k++) {
                double *p = pb + (size_t)k * ND;
                if (nd > 0) sens_lu_solve_t(nd, w.J, w.ipiv, p);
                for (int i = 0; i < n; i++) {
                    double v = 0;
                    for (int l = 0; l < nd; l++) v -= g->T[(size_t)l * N + i] * p[l];
                    nu[i] = v;
                }
                sens_pprod_eval(r, &pp[k], zs, zds, zdds, nu, 3);
                sens_pprod_add(r, &pp[k], ts, 1, r->grad + (size_t)k * P);
            }
        }
        memcpy(a, an, sizeof(double) * NI * NO);
    }
    for (int k = 0; k < no && any_skip; k++) sens_pprod_finish(r, &pp[k], r->grad + (size_t)k * P);
    /* t0: the objective at y_0 = Y0 and the adjoint through Yi0 */
    sens_objectives(r, states, states + N, states + 2 * N, th[0], 0, gv);
    {
        const double w0 = 0.5 * (nrec > 1 ? th[3] : 0);
        for (int j = 0; j < np; j++) {
            const double *y = Y0 + (size_t)j * N3, *yi = Yi0 + (size_t)j * NI;
            mbs_deriv_param_dx(m, j, dx);
            sens_objectives_d(r, states, states + N, states + 2 * N, y, y + N, y + 2 * N, dx, j, th[0], 0, dg);
            if (nrec == 1)
                sens_objectives_d(r, states, states + N, states + 2 * N, y, y + N, y + 2 * N, dx, j, th[0], 1, dgt);
            for (int k = 0; k < no; k++) {
                double v = w0 * dg[k] + (nrec == 1 ? dgt[k] : 0);
                const double *ak = a + (size_t)k * NI;
                for (size_t i = 0; i < NI; i++) v += yi[i] * ak[i];
                r->grad[(size_t)k * P + j] += v;
            }
        }
    }
    if (r->o->history) r->o->history(r->o->history_user, t, no, np, r->psi, r->grad);
done:
    sens_fwd_close(&F, stats);
    sens_mr_lin_free(&w);
    for (int k = 0; pp && k < no; k++) sens_pprod_free(&pp[k]);
    free(pp);
    free(skip);
    free(buf);
    free(states);
    free(th);
    return rc;
}
