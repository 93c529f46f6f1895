/*
 * lin_matrixr.c - the linearization of one Matrix R step
 * (src/formulations/matrixr.c), shared by the direct differentiation
 * (ddm_matrixr.c, along each parameter's sensitivities) and the discrete
 * adjoint (davm_matrixr.c, along every input column, then
 * transposed); docs/sensitivity.md "Matrix R".
 *
 * The step maps the independent coordinates' y^i_n = (z^i, zd^i, zdd^i)
 * and rho to y^i_{n+1}; the full state y_{n+1} = (z, zd, zdd) follows from
 * the kinematic problems. At the prepared end state (mbs_form_matrixr_prepare),
 * with the chain tangent of mbs_form_matrixr_chain (docs/formulations.md):
 *   J = dF/dD^i, column k the chain along (e_k, gamma/(beta h) e_k, e_k/(beta h^2)),
 *       whose full-state tangents Bz_k are kept
 *   input (y^i', dx): predictor a = (z^i' + h zd^i' + h^2/2 zdd^i', zd^i' + h zdd^i', zdd^i'),
 *       chain along (a, dx) -> full-state p and dF;  e = -J^-1 dF
 *   y^i_{n+1}' = a + (e, gamma/(beta h) e, e/(beta h^2)),  y_{n+1}' = p + sum_k e_k Bz_k.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sens_common.h"
#include "lin_matrixr.h"
#include "../formulations/form_impl.h"
#include "../constraints/constraint.h"

#define BETA MBS_FORM_BETA
#define GAMMA MBS_FORM_GAMMA

void sens_mr_lin_free(sens_mr_lin *w)
{
    if (!w) return;
    free(w->base);
    free(w->ipiv);
    memset(w, 0, sizeof *w);
}

int sens_mr_lin_create(sens_mr_lin *w, const mbs_model *m, int nd, int np)
{
    memset(w, 0, sizeof *w);
    w->n = m->nq;
    w->nd = nd;
    w->np = np;
    const size_t N = (size_t)w->n + 1, ND = (size_t)(nd > 0 ? nd : 0) + 1;
    size_t total = ND * ND + 3 * N * ND + 3 * N + 5 * ND + (size_t)m->nx + 4;
    w->base = calloc(total, sizeof(double));
    w->ipiv = calloc(ND, sizeof *w->ipiv);
    if (!w->base || !w->ipiv) return MBS_ERR_NOMEM;
    double *p = w->base;
    w->J = p; p += ND * ND;
    w->Bz = p; p += 3 * N * ND;
    w->pz = p; p += 3 * N;
    w->pF = p; p += ND;
    w->e = p; p += ND;
    w->a = p; p += 3 * ND;
    w->dx = p;
    return MBS_OK;
}

int sens_mr_lin_factor(sens_mr_lin *w, mbs_form *g, double t, const double *q, const double *qd, const double *qdd,
                       double h, mbs_error *err)
{
    const int nd = w->nd, n = w->n;
    const size_t N = (size_t)n, ND = (size_t)nd;
    const double c1 = GAMMA / (BETA * h), d1 = 1 / (BETA * h * h);
    w->h = h;
    if (mbs_form_matrixr_prepare(g, t, q, qd, qdd))
        return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: [Phi_q; B] singular", t);
    double *a = w->a;
    for (int k = 0; k < nd; k++) {
        memset(a, 0, sizeof(double) * 3 * ND);
        a[k] = 1;
        a[ND + k] = c1;
        a[2 * ND + k] = d1;
        double *b = w->Bz + (size_t)k * 3 * N;
        mbs_form_matrixr_chain(g, t, q, qd, qdd, a, a + ND, a + 2 * ND, NULL, b, b + N, b + 2 * N, w->J + (size_t)k * nd);
    }
    if (nd > 0 && mbs_dense_lu(nd, w->J, w->ipiv) != 0)
        return mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: step Jacobian singular", t);
    return MBS_OK;
}

void sens_mr_lin_apply(sens_mr_lin *w, mbs_form *g, double t, const double *q, const double *qd, const double *qdd,
                       const double *yi, int param, double *yi1, double *y1)
{
    const mbs_model *m = g->m;
    const int nd = w->nd, n = w->n;
    const size_t N = (size_t)n, ND = (size_t)nd;
    const double h = w->h, c1 = GAMMA / (BETA * h), d1 = 1 / (BETA * h * h);
    double *a = w->a, *e = w->e, *pz = w->pz;
    for (int k = 0; k < nd; k++) {
        const double zi = yi ? yi[k] : 0, zdi = yi ? yi[ND + k] : 0, zddi = yi ? yi[2 * ND + k] : 0;
        a[k] = zi + h * zdi + 0.5 * h * h * zddi;   /* z^i_p' */
        a[ND + k] = zdi + h * zddi;                  /* zd^i_p' */
        a[2 * ND + k] = zddi;                        /* zdd^i_n' */
    }
    if (param >= 0) mbs_deriv_param_dx(m, param, w->dx);
    mbs_form_matrixr_chain(g, t, q, qd, qdd, a, a + ND, a + 2 * ND, param >= 0 ? w->dx : NULL, pz, pz + N, pz + 2 * N,
                           w->pF);
    for (int k = 0; k < nd; k++) e[k] = -w->pF[k];
    if (nd > 0) mbs_dense_lu_solve(nd, w->J, w->ipiv, e);
    for (int k = 0; k < nd; k++) {
        yi1[k] = a[k] + e[k];
        yi1[ND + k] = a[ND + k] + c1 * e[k];
        yi1[2 * ND + k] = a[2 * ND + k] + d1 * e[k];
    }
    for (size_t i = 0; i < 3 * N; i++) {
        double s = pz[i];
        for (int k = 0; k < nd; k++) s += e[k] * w->Bz[(size_t)k * 3 * N + i];
        y1[i] = s;
    }
}

int sens_mr_lin_init(sens_mr_lin *w, sens_run *r, mbs_form *g, double t, const double *q, const double *qd,
                     const double *qdd, double *Yi0, double *Y0, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int n = w->n, nd = w->nd, np = w->np;
    const size_t N = (size_t)n, ND = (size_t)nd, N3 = 3 * N, NI = 3 * ND;
    /* z0', zd0' (n x np) into the first two blocks of Y0's columns via scratch */
    double *Z = calloc(N * (size_t)np + 1, sizeof(double)), *Zd = calloc(N * (size_t)np + 1, sizeof(double));
    int rc = MBS_OK;
    if (!Z || !Zd) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    if ((rc = sens_loops_kinematic_init(r, t, q, qd, qdd, Z, Zd, err))) goto done;
    if (mbs_form_matrixr_prepare(g, t, q, qd, qdd)) {
        rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: [Phi_q; B] singular", t);
        goto done;
    }
    /* reduced mass matrix R^T M R = dF/dzdd^i: the chain along unit dzdd^i */
    for (int k = 0; k < nd; k++) {
        memset(w->e, 0, sizeof(double) * ND);
        w->e[k] = 1;
        mbs_form_matrixr_chain(g, t, q, qd, qdd, NULL, NULL, w->e, NULL, w->pz, w->pz + N, w->pz + 2 * N,
                               w->J + (size_t)k * nd);
    }
    if (nd > 0 && mbs_dense_lu(nd, w->J, w->ipiv) != 0) {
        rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: reduced mass matrix singular", t);
        goto done;
    }
    for (int j = 0; j < np; j++) {
        double *yi = Yi0 + (size_t)j * NI, *zi = yi, *zdi = yi + ND, *zddi = yi + 2 * ND;
        const double *z0 = Z + (size_t)j * N, *zd0 = Zd + (size_t)j * N;
        mbs_deriv_param_dx(m, j, w->dx);
        /* B z0' and the dx part of f: the DOF tangents along (z0', dx) */
        mbs_form_tangent(m, r->d, t, q, qd, qdd, z0, zd0, NULL, w->dx, NULL, NULL, NULL, NULL, NULL);
        for (int k = 0; k < nd; k++) {
            const mbs_dof *gd = &g->dof[k];
            if (gd->point < 0) {
                zi[k] = z0[gd->coord];
                zdi[k] = zd0[gd->coord];
            } else {
                double dv[3];
                const mbs_point_info *pt = &m->point[gd->point];
                mbs_con_point_component_d(m, m->x, &r->d->ws, w->dx, &r->d->dws, pt->body, pt->x, gd->component, dv,
                                          NULL);
                zi[k] = dv[0];
                zdi[k] = dv[1];
            }
        }
        mbs_form_matrixr_chain(g, t, q, qd, qdd, zi, zdi, NULL, w->dx, w->pz, w->pz + N, w->pz + 2 * N, w->pF);
        for (int k = 0; k < nd; k++) zddi[k] = -w->pF[k];
        if (nd > 0) mbs_dense_lu_solve(nd, w->J, w->ipiv, zddi);
        /* the full state sensitivities at t0 from the chain at the solved zdd^i' */
        double *y = Y0 + (size_t)j * N3;
        mbs_form_matrixr_chain(g, t, q, qd, qdd, zi, zdi, zddi, w->dx, y, y + N, y + 2 * N, w->pF);
    }
done:
    free(Z);
    free(Zd);
    return rc;
}
