/*
 * davm_ali3p.c - discrete adjoint (DAVM) of the ALI3-P
 * formulation (docs/sensitivity.md "DDM and DAVM of ALI3-P"):
 * the transpose of the recursion that ddm_ali3p.c runs forward, on the
 * same step linearization (lin_ali3p.c), so both give the
 * gradient of the same discrete psi.
 *
 * Forward: the ALI3-P run, storing every step's record (converged z,
 * projected zd, zdd, unprojected zd*, zdd*, lambda*, branch taken).
 * psi_k = sum_n w_n g_k(y_n) + G_k(y_N), w the trapezoidal weights.
 * Backward, all objectives at once (a: 3n x nobj, the derivative of psi
 * with respect to y_n through everything after it):
 *   a_N = (w_N g_y(y_N) + G_y(y_N))^T,   grad += w_N g_rho + G_rho
 *   n = N-1 .. 0:  the linearization y_{n+1}' = A y_n' + B rho' of step
 *                  n -> n+1 (recomputed from its record), run transposed per
 *                  objective (sens_ali_lin_reverse): a_n = A^T a_{n+1} +
 *                  w_n g_y(y_n)^T, grad += B^T a_{n+1} + w_n g_rho(y_n)
 *   grad += Y0^T a_0   (Y0 = dy_0/drho: the initial kinematic and penalty sensitivities)
 * Neither A nor B is formed. The columns of B are formed only for the
 * parameters that move the kinematics, the constraints or the inertia; for
 * those that only set numbers of force elements and functions (stiffness,
 * free lengths, spline knots...), B_j = L (dr/drho_j) with L the step's
 * linear map of a residual perturbation, so (B^T a)_j = wbar . dr/drho_j
 * with wbar = L^T a: one adjoint product per objective for all of them
 * (sens_pprod, flat in the number of spline knots).
 * Memory: 5n + nc doubles per step (the records); the step linearization is
 * recomputed, not stored.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "lin_ali3p.h"
#include "../formulations/form_impl.h"

typedef struct {
    double t, h;
    int vel, acc;
} rec_head;

/* G (nobj x nu, row-major: objective k's row) = d g / d (y, rho) at a state,
 * by one objective tangent per column: the 3n state columns and the
 * parameter columns of the list pl (npl; the others are never written);
 * g (nobj) the values. */
static void objective_jacobian(sens_run *r, const double *q, const double *qd, const double *qdd, double t,
                               int terminal, const int *pl, int npl, double *g, double *G, double *e, double *dx,
                               double *dg)
{
    const mbs_model *m = r->m;
    const int n = r->nq, np = r->np, no = r->nobj, nu = 3 * n + np;
    sens_objectives(r, q, qd, qdd, t, terminal, g);
    memset(e, 0, sizeof(double) * 3 * (size_t)n);
    for (int i = 0; i < 3 * n + npl; i++) {
        const int c = i < 3 * n ? i : 3 * n + pl[i - 3 * n];
        if (c < 3 * n) {
            e[c] = 1;
            sens_objectives_d(r, q, qd, qdd, e, e + n, e + 2 * n, NULL, -1, t, terminal, dg);
            e[c] = 0;
        } else {
            mbs_deriv_param_dx(m, c - 3 * n, dx);
            sens_objectives_d(r, q, qd, qdd, NULL, NULL, NULL, dx, c - 3 * n, t, terminal, dg);
        }
        for (int k = 0; k < no; k++) G[(size_t)k * nu + c] = dg[k];
    }
}

/* long-function: the forward run and the backward sweep share the step
 * records, the adjoint buffers and the parameter lists; apart, each piece
 * would take a dozen of them as arguments. */
int sens_davm_ali3p(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int n = r->nq, np = r->np, no = r->nobj, nc = mbs_model_nconstraints(m);
    const size_t N = (size_t)n, N3 = 3 * N, P = (size_t)np, NU = N3 + P;
    const size_t recsz = 5 * N + (size_t)nc;   /* z, zd, zdd, zd*, zdd*, lambda */
    int rc = MBS_OK;
    sens_ali_lin w;
    memset(&w, 0, sizeof w);
    double *buf = NULL, *recs = NULL;
    rec_head *heads = NULL;
    size_t nrec = 0, cap = 0;
    sens_pprod *pp = calloc((size_t)no + 1, sizeof *pp);
    int *pcol = calloc(P + 1, sizeof(int));
    sens_fwd F;
    if ((rc = sens_fwd_open(&F, r, SENS_FWD_ALI3P, err))) goto done;
    mbs_integrator *it = F.it;
    const mbs_sim_options so = F.so;
    buf = calloc(N3 * P + 2 * N3 * (size_t)no + 2 * (size_t)no * NU + 4 * (size_t)no + N3 + N + (size_t)m->nx + 4,
                 sizeof(double));
    if (!buf || !pp || !pcol || sens_ali_lin_create(&w, m, np)) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    double *Y0 = buf, *a = Y0 + N3 * P, *an = a + N3 * (size_t)no, *G = an + N3 * (size_t)no,
           *GT = G + (size_t)no * NU, *g = GT + (size_t)no * NU, *dg = g + no, *e = dg + no, *wbar = e + N3,
           *dx = wbar + N;
    /* the element-only parameters take the adjoint products; the objectives
     * depend only on the others (or, with a program's objective, on all) */
    for (int k = 0; k < no; k++) {
        if ((rc = sens_pprod_init(&pp[k], m, r->o->objective != NULL, err))) goto done;
        sens_pprod_elements_only(&pp[k]);
    }
    int any_skip = 0, npl = 0;   /* pcol: the parameters an objective can read, as a list */
    for (int j = 0; j < np; j++) {
        w.skip[j] = no > 0 && pp[0].flag[j] >= 1;
        any_skip |= w.skip[j];
        if (!w.skip[j] || r->o->objective != NULL) pcol[npl++] = j;
    }

    /* ---- forward: the run, psi, the records ---- */
    double t = so.t0;
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);
    if ((rc = sens_ali_lin_init(&w, r, &so, t, q, qd, qdd, Y0, err))) goto done;
    cap = (size_t)mbs_sim_steps(&so) + 3;   /* <= MBS_SIM_MAX_STEPS: options checked */
    recs = malloc(sizeof(double) * recsz * cap);
    heads = malloc(sizeof *heads * cap);
    if (!recs || !heads) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "davm: out of memory for %zu step records", cap);
        goto done;
    }
    /* record 0: the initial state (only z, zd, zdd used) */
    memcpy(recs, q, sizeof(double) * N);
    memcpy(recs + N, qd, sizeof(double) * N);
    memcpy(recs + 2 * N, qdd, sizeof(double) * N);
    heads[0].t = t;
    heads[0].h = 0;
    nrec = 1;
    for (int k = 0; k < no; k++) r->psi[k] = 0;
    sens_objectives(r, q, qd, qdd, t, 0, g);
    while (t < so.tf - 1e-12 * fmax(1, fabs(so.tf))) {
        const double h = fmin(so.dt, so.tf - t);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * g[k];
        if ((rc = mbs_integrator_step(it, h, err))) goto done;
        t = mbs_integrator_time(it);
        q = mbs_integrator_q(it);
        qd = mbs_integrator_qd(it);
        qdd = mbs_integrator_qdd(it);
        if (sens_grow2((void **)&recs, sizeof(double) * recsz, (void **)&heads, sizeof *heads, nrec, &cap, 1)) {
            rc = mbs_error_set(err, MBS_ERR_NOMEM, "davm: out of memory for the step records");
            goto done;
        }
        double *rp = recs + nrec * recsz;
        sens_ali_rec rec = { 0, 0, rp, rp + N, rp + 2 * N, rp + 3 * N, rp + 4 * N, rp + 5 * N, 0, 0 };
        sens_ali_rec_from_step(&rec, mbs_form_last_step(it), q, qd, qdd, n, nc, 1);
        heads[nrec].t = rec.t;
        heads[nrec].h = rec.h;
        heads[nrec].vel = rec.vel;
        heads[nrec].acc = rec.acc;
        nrec++;
        sens_objectives(r, q, qd, qdd, t, 0, g);
        for (int k = 0; k < no; k++) r->psi[k] += 0.5 * h * g[k];
    }
    sens_objectives(r, q, qd, qdd, t, 1, g);
    for (int k = 0; k < no; k++) r->psi[k] += g[k];

    /* ---- backward ---- */
    for (size_t k = 0; k < (size_t)no * P; k++) r->grad[k] = 0;
    const size_t last = nrec - 1;
    for (size_t s = last + 1; s-- > 0;) {
        const double *rp = recs + s * recsz;
        const double hn = s < last ? heads[s + 1].h : 0, hp = s > 0 ? heads[s].h : 0, wn = 0.5 * (hn + hp);
        if (s < last) {
            /* step s -> s + 1: a_s = A^T a_{s+1}, grad += B^T a_{s+1} */
            const double *rq = recs + (s + 1) * recsz;
            sens_ali_rec rec = { heads[s + 1].t, heads[s + 1].h, rq, rq + N, rq + 2 * N, rq + 3 * N, rq + 4 * N,
                                 rq + 5 * N, heads[s + 1].vel, heads[s + 1].acc };
            if ((rc = sens_ali_lin_form(&w, r, &so, &rec, err))) goto done;
            for (int k = 0; k < no; k++) {
                double *gk = r->grad + (size_t)k * P;
                sens_ali_lin_reverse(&w, a + (size_t)k * N3, an + (size_t)k * N3, gk, wbar);
                if (any_skip) {
                    /* wbar . dr/drho_j at the index-3 point (z, zd*, zdd*), the step's time */
                    sens_pprod_eval(r, &pp[k], rec.z, rec.zds, rec.zdds, wbar, 3);
                    sens_pprod_add(r, &pp[k], rec.t, 1, gk);
                }
            }
            memcpy(a, an, sizeof(double) * N3 * (size_t)no);
        } else {
            memset(a, 0, sizeof(double) * N3 * (size_t)no);
        }
        /* + w_s g_y(y_s) (+ G_y at the end), grad += w_s g_rho (+ G_rho) */
        const double tt = heads[s].t;
        objective_jacobian(r, rp, rp + N, rp + 2 * N, tt, 0, pcol, npl, g, G, e, dx, dg);
        if (s == last) objective_jacobian(r, rp, rp + N, rp + 2 * N, tt, 1, pcol, npl, g, GT, e, dx, dg);
        for (int k = 0; k < no; k++) {
            double *ak = a + (size_t)k * N3;
            const double *gk = G + (size_t)k * NU, *gt = GT + (size_t)k * NU;
            for (size_t i = 0; i < N3 + (size_t)npl; i++) {
                const size_t c = i < N3 ? i : N3 + (size_t)pcol[i - N3];
                const double v = wn * gk[c] + (s == last ? gt[c] : 0);
                if (c < N3)
                    ak[c] += v;
                else
                    r->grad[(size_t)k * P + (c - N3)] += v;
            }
        }
    }
    for (int k = 0; k < no && any_skip; k++) sens_pprod_finish(r, &pp[k], r->grad + (size_t)k * P);
    /* grad += Y0^T a_0 */
    for (int k = 0; k < no; k++)
        for (int j = 0; j < np; j++) {
            const double *y = Y0 + (size_t)j * N3, *ak = a + (size_t)k * N3;
            double sum = 0;
            for (size_t i = 0; i < N3; i++) sum += y[i] * ak[i];
            r->grad[(size_t)k * P + j] += sum;
        }
    if (r->o->history) r->o->history(r->o->history_user, t, no, np, r->psi, r->grad);
done:
    sens_fwd_close(&F, stats);
    sens_ali_lin_free(&w);
    for (int k = 0; pp && k < no; k++) sens_pprod_free(&pp[k]);
    free(pp);
    free(pcol);
    free(buf);
    free(recs);
    free(heads);
    return rc;
}
