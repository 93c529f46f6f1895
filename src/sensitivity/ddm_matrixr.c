/*
 * ddm_matrixr.c - direct differentiation of the discrete Matrix R solution
 * (src/formulations/matrixr.c), semi-recursive, both reference points
 * (thesis §5.2, with the corrections listed in docs/formulations.md,
 * section "Sensitivities of the closed-loop formulations").
 *
 * The step solves F(D^i) = R^T r(z, zd, zdd) = 0 for the correction D^i of
 * the independent coordinates, z^i = z^i_p + D^i, zd^i = zd^i_p +
 * gamma/(beta h) D^i, zdd^i = zdd^i_n + D^i/(beta h^2), where (z, zd, zdd)
 * are the solutions of the kinematic problems at (z^i, zd^i, zdd^i). Its
 * exact derivative uses one tangent of the whole chain (mbs_form_matrixr_chain):
 * along (dz^i, dzd^i, dzdd^i) and dx,
 *   dz   = N^-1 [Phi_q^T (-dPhi|z) + B^T (dz^i - df|z)]
 *   dzd  = N^-1 [Phi_q^T (-dPhid|zd) + B^T (dzd^i - d(B zd)|zd)]          along (dz, 0, 0, dx)
 *   dzdd = N^-1 [Phi_q^T (-dPhidd|zdd) + B^T (dzdd^i - d(B zdd + Bd zd)|zdd)]  along (dz, dzd, 0, dx)
 *   dF   = R^T [dr - dPhi_q^T Phi_q y - dB^T B y],   y = N^-1 r,  along (dz, dzd, dzdd, dx)
 * (dF includes the derivative of R: dR = -N^-1 (Phi^T dPhi_q + B^T dB) R, so
 * dR^T r = -R^T (dPhi_q^T Phi y + dB^T B y); r is not zero in a constrained
 * system, it is the reaction -Phi_q^T lambda). Per step:
 *   J = dF/dD^i, column k along (e_k, gamma/(beta h) e_k, e_k/(beta h^2))
 *   (exact; nd chain tangents), LU once;
 *   for parameter j: dF_j along the predictor's sensitivities
 *   (z^i_p', zd^i_p', zdd^i_n', dx_j), D^i' = -J^-1 dF_j,
 * and by linearity z' = dz_j + sum_k D^i'_k dz_k (and zd', zdd').
 * t0: z0', zd0' from the assembly (model's fixed coordinates) and the
 * velocity problem; z^i0' = B z0' + df/dx etc. from the chain; F is affine
 * in zdd^i with dF/dzdd^i = R^T M R, so zdd^i0' = -(R^T M R)^-1 dF_0.
 */
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "lin_matrixr.h"
#include "../formulations/form_impl.h"


typedef struct {
    sens_run *r;
    sens_mr_lin *w;
    mbs_form *g;
    mbs_form **gt;   /* threads 1 .. of r's team: a form on each thread's data */
    int np;
    size_t NI, N3;
    double *Yi, *Yin, *Y;
} mr_ddm;

/* Column workspace of a thread: the scratch of sens_mr_lin_apply. */
static size_t mr_thread_ws(const sens_mr_lin *w, const mbs_model *m)
{
    const size_t N = (size_t)w->n + 1, ND = (size_t)(w->nd > 0 ? w->nd : 0) + 1;
    return 3 * N + 5 * ND + (size_t)m->nx + 1;
}

/* A thread's copy of w: J, its pivots and Bz shared (read only), the
 * scratch in ws. */
static void mr_thread(const sens_mr_lin *w, double *ws, sens_mr_lin *wt)
{
    const size_t N = (size_t)w->n + 1, ND = (size_t)(w->nd > 0 ? w->nd : 0) + 1;
    *wt = *w;
    wt->pz = ws;
    wt->pF = wt->pz + 3 * N;
    wt->e = wt->pF + ND;
    wt->a = wt->e + ND;
    wt->dx = wt->a + 3 * ND;
}

typedef struct mr_cols {
    const mr_ddm *c;
    double t;
    const double *q, *qd, *qdd;
} mr_cols;

/* Thread th's parameters: thread th > 0 prepares its own form at the
 * step's state (the same bits as g's) and applies the shared factors. */
static void mr_cols_thread(void *ctx, int th, int nth)
{
    const mr_cols *a = ctx;
    const mr_ddm *c = a->c;
    sens_mr_lin wt, *wc = c->w;
    mbs_form *g = c->g;
    if (th > 0) {
        mr_thread(c->w, sens_team_ws(c->r, th), &wt);
        wc = &wt;
        g = c->gt[th - 1];
        (void)mbs_form_matrixr_prepare(g, a->t, a->q, a->qd, a->qdd);   /* succeeded on c->g at this state */
    }
    for (int j = th; j < c->np; j += nth)
        sens_mr_lin_apply(wc, g, a->t, a->q, a->qd, a->qdd, c->Yi + (size_t)j * c->NI, j, c->Yin + (size_t)j * c->NI,
                          c->Y + (size_t)j * c->N3);
}

/* The chain at the step's end state, then each parameter's sensitivities
 * on the threads of the run's team (mr_cols_thread). */
static int mr_advance(void *ctx, double t, double h, const double *q, const double *qd, const double *qdd,
                      mbs_error *err)
{
    mr_ddm *c = ctx;
    int rc = sens_mr_lin_factor(c->w, c->g, t, q, qd, qdd, h, err);
    if (rc) return rc;
    mr_cols a = {c, t, q, qd, qdd};
    sens_team_do(c->r, mr_cols_thread, &a);
    memcpy(c->Yi, c->Yin, sizeof(double) * c->NI * (size_t)c->np);
    return MBS_OK;
}

/* The forms of threads 1 .. of r's team, over g's independent coordinates.
 * NULL (err set) on failure. */
static mbs_form **mr_thread_forms(sens_run *r, const mbs_form *g, const mbs_sim_options *so, mbs_error *err)
{
    const int nt = sens_team_size(r);
    mbs_form **gt = calloc((size_t)nt, sizeof *gt);
    if (!gt) {
        mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        return NULL;
    }
    for (int t = 1; t < nt; t++) {
        mbs_form *f = mbs_form_create(r->m, sens_team_run(r, t)->d, so, err);
        gt[t - 1] = f;
        if (!f) {
            for (int k = 1; k < t; k++) mbs_form_free(gt[k - 1]);
            free(gt);
            return NULL;
        }
        f->nd = g->nd;
        memcpy(f->dof, g->dof, sizeof(mbs_dof) * (size_t)(g->nd > 0 ? g->nd : 0));
    }
    return gt;
}

int sens_ddm_matrixr(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const int n = r->nq, np = r->np;
    const size_t N3 = 3 * (size_t)n, P = (size_t)np;
    sens_mr_lin w;
    memset(&w, 0, sizeof w);
    double *buf = NULL;
    mbs_form **gt = NULL;
    sens_fwd F;
    sens_team T;
    memset(&T, 0, sizeof T);
    int rc = sens_fwd_open(&F, r, SENS_FWD_MATRIXR, err);
    if (rc) goto done;
    mbs_integrator *it = F.it;
    mbs_form *g = F.g;   /* over the integrator's independent coordinates */
    const size_t NI = 3 * (size_t)(g->nd > 0 ? g->nd : 0);
    buf = calloc(2 * NI * P + N3 * P + 1, sizeof(double));
    if (!buf || sens_mr_lin_create(&w, r->m, g->nd, np)) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    const size_t per = mr_thread_ws(&w, r->m), obj = SENS_OBJ_WS(r->m, r->nobj);
    if ((rc = sens_team_open(&T, r, np, per > obj ? per : obj, err))) goto done;
    if (!(gt = mr_thread_forms(r, g, &F.so, err))) {
        rc = err && err->code ? err->code : MBS_ERR_NOMEM;
        goto done;
    }
    mr_ddm c = { r, &w, g, gt, np, NI, N3, buf, buf + NI * P, buf + 2 * NI * P };
    if ((rc = sens_mr_lin_init(&w, r, g, F.so.t0, mbs_integrator_q(it), mbs_integrator_qd(it),
                               mbs_integrator_qdd(it), c.Yi, c.Y, err)))
        goto done;
    rc = sens_ddm_march(r, it, &F.so, c.Y, c.Y + n, c.Y + 2 * n, N3, mr_advance, &c, err);
done:
    for (int t = 1; gt && t < sens_team_size(r); t++) mbs_form_free(gt[t - 1]);
    free(gt);
    if (r->team) sens_team_close(&T, r);
    sens_fwd_close(&F, stats);
    sens_mr_lin_free(&w);
    free(buf);
    return rc;
}
