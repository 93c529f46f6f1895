/*
 * ddm_matrixr.c - direct differentiation of the discrete Matrix R solution
 * (src/formulations/matrixr.c), semi-recursive, both reference points
 * (thesis §5.2, digest thesis_ch5.md S2 with its corrections;
 * docs/formulations.md "Sensitivities of the closed-loop formulations").
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

#include "sens_impl.h"
#include "../formulations/form_impl.h"
#include "../constraints/constraint.h"

#define BETA MBS_FORM_BETA
#define GAMMA MBS_FORM_GAMMA

int sens_ddm_matrixr(sens_run *r, mbs_sim_stats *stats, mbs_error *err)
{
    const mbs_model *m = r->m;
    const int n = r->nq, np = r->np, no = r->nobj;
    /* column strides: n (as sens_loops_kinematic_init writes them) and np + 1 */
    const size_t N = (size_t)n, P = (size_t)np + 1, N1 = N + 1;
    int rc = MBS_OK;
    mbs_sim_options so = r->o->sim;
    so.integrator = MBS_INTEGRATOR_TRAPEZOIDAL;
    so.loop = MBS_LOOP_MATRIXR;
    mbs_data *di = mbs_data_create(m, err);
    mbs_integrator *it = di ? mbs_integrator_create(m, di, &so, err) : NULL;
    mbs_form *g = it ? mbs_form_create(m, r->d, &so, err) : NULL;
    if (!g) {
        rc = err && err->code ? err->code : MBS_ERR_NOMEM;
        mbs_integrator_free(it);
        mbs_data_free(di);
        return rc;
    }
    /* the integrator's independent coordinates */
    g->nd = it->form->nd;
    memcpy(g->dof, it->form->dof, sizeof(mbs_dof) * (size_t)(g->nd > 0 ? g->nd : 0));
    const int nd = g->nd;
    const size_t ND = (size_t)nd + 1;
    double *Z = calloc(N1 * P, 8), *Zd = calloc(N1 * P, 8), *Zdd = calloc(N1 * P, 8);
    double *Zi = calloc(ND * P, 8), *Zdi = calloc(ND * P, 8), *Zddi = calloc(ND * P, 8);
    double *Bz = calloc(N1 * ND * 3, 8);   /* the chain along the basis directions of D^i */
    double *pz = calloc(N1 * 3, 8), *pF = calloc(ND, 8), *a = calloc(ND * 3, 8), *e = calloc(ND, 8);
    double *dx = calloc((size_t)m->nx + 1, 8), *gv = calloc((size_t)no + 1, 8), *dg = calloc((size_t)no * P + 1, 8);
    double *dgj = calloc((size_t)no + 1, 8), *J = calloc(ND * ND, 8);
    lapack_int *ipiv = calloc(ND, sizeof *ipiv);
    if (!Z || !Zd || !Zdd || !Zi || !Zdi || !Zddi || !Bz || !pz || !pF || !a || !e || !dx || !gv || !dg ||
        !dgj || !J || !ipiv) {
        rc = mbs_error_set(err, MBS_ERR_NOMEM, "out of memory");
        goto done;
    }
    double t = so.t0;
    const double *q = mbs_integrator_q(it), *qd = mbs_integrator_qd(it), *qdd = mbs_integrator_qdd(it);

    /* ---- t0 ---- */
    if ((rc = sens_loops_kinematic_init(r, t, q, qd, qdd, Z, Zd, err))) goto done;
    if (mbs_form_matrixr_prepare(g, t, q, qd, qdd)) {
        rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: [Phi_q; B] singular", t);
        goto done;
    }
    /* z^i0' = B z0' + df|dx, zd^i0' = B zd0' + d(B zd)|(z0', dx): the chain with dz^i = 0 gives the
     * (dz, dzd) of a motion that keeps z^i; add what B makes of the given z0', zd0' */
    {
        /* reduced mass matrix R^T M R = dF/dzdd^i: the chain along unit dzdd^i */
        for (int k = 0; k < nd; k++) {
            memset(e, 0, 8 * ND);
            e[k] = 1;
            mbs_form_matrixr_chain(g, t, q, qd, qdd, NULL, NULL, e, NULL, pz, pz + N, pz + 2 * N, J + (size_t)k * nd);
        }
        if (nd > 0 && mbs_form_lu(nd, J, ipiv) != 0) {
            rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: reduced mass matrix singular", t);
            goto done;
        }
        for (int j = 0; j < np; j++) {
            double *zi = Zi + (size_t)j * ND, *zdi = Zdi + (size_t)j * ND, *zddi = Zddi + (size_t)j * ND;
            const double *z0 = Z + (size_t)j * N, *zd0 = Zd + (size_t)j * N;
            mbs_deriv_param_dx(m, j, dx);
            /* B z0' and the dx part of f: the DOF tangents along (z0', dx) */
            mbs_form_tangent(m, r->d, t, q, qd, qdd, z0, zd0, NULL, dx, NULL, NULL, NULL, NULL, NULL);
            for (int k = 0; k < nd; k++) {
                const mbs_dof *gd = &g->dof[k];
                if (gd->point < 0) {
                    zi[k] = z0[gd->coord];
                    zdi[k] = zd0[gd->coord];
                } else {
                    double dv[3];
                    const mbs_point_info *pt = &m->point[gd->point];
                    mbs_con_point_component_d(m, m->x, &r->d->ws, dx, &r->d->dws, pt->body, pt->x, gd->component,
                                              dv, NULL);
                    zi[k] = dv[0];
                    zdi[k] = dv[1];
                }
            }
            mbs_form_matrixr_chain(g, t, q, qd, qdd, zi, zdi, NULL, dx, pz, pz + N, pz + 2 * N, pF);
            for (int k = 0; k < nd; k++) zddi[k] = -pF[k];
            if (nd > 0) mbs_form_lu_solve(nd, J, ipiv, zddi);
            /* the full state sensitivities at t0 from the chain at the solved zdd^i' */
            mbs_form_matrixr_chain(g, t, q, qd, qdd, zi, zdi, zddi, dx, Z + (size_t)j * N, Zd + (size_t)j * N,
                                   Zdd + (size_t)j * N, pF);
        }
    }
    for (int k = 0; k < no; k++) { r->psi[k] = 0; for (int j = 0; j < np; j++) r->grad[k * np + j] = 0; }
    sens_objectives(r, q, qd, qdd, t, 0, gv);
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        sens_objectives_d(r, q, qd, qdd, Z + j * N, Zd + j * N, Zdd + j * N, dx, t, 0, dgj);
        for (int k = 0; k < no; k++) dg[(size_t)k * P + j] = dgj[k];
    }
    if (r->o->history) r->o->history(r->o->history_user, t, no, np, r->psi, r->grad);

    /* ---- steps ---- */
    while (t < so.tf - 1e-12 * fmax(1, fabs(so.tf))) {
        const double h = fmin(so.dt, so.tf - t), c1 = GAMMA / (BETA * h), d1 = 1 / (BETA * h * h);
        for (int k = 0; k < no; k++) {
            r->psi[k] += 0.5 * h * gv[k];
            for (int j = 0; j < np; j++) r->grad[k * np + j] += 0.5 * h * dg[(size_t)k * P + j];
        }
        if ((rc = mbs_integrator_step(it, h, err))) goto done;
        t = mbs_integrator_time(it);
        q = mbs_integrator_q(it);
        qd = mbs_integrator_qd(it);
        qdd = mbs_integrator_qdd(it);
        if (mbs_form_matrixr_prepare(g, t, q, qd, qdd)) {
            rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: [Phi_q; B] singular", t);
            goto done;
        }
        /* exact step Jacobian, column k along (e_k, c1 e_k, d1 e_k) */
        for (int k = 0; k < nd; k++) {
            memset(a, 0, 8 * ND * 3);
            a[k] = 1;
            a[ND + k] = c1;
            a[2 * ND + k] = d1;
            mbs_form_matrixr_chain(g, t, q, qd, qdd, a, a + ND, a + 2 * ND, NULL, Bz + (size_t)k * 3 * N,
                                   Bz + (size_t)k * 3 * N + N, Bz + (size_t)k * 3 * N + 2 * N, J + (size_t)k * nd);
        }
        if (nd > 0 && mbs_form_lu(nd, J, ipiv) != 0) {
            rc = mbs_error_set(err, MBS_ERR_NUMERIC, "sensitivity at t = %.9g: step Jacobian singular", t);
            goto done;
        }
        for (int j = 0; j < np; j++) {
            double *zi = Zi + (size_t)j * ND, *zdi = Zdi + (size_t)j * ND, *zddi = Zddi + (size_t)j * ND;
            for (int k = 0; k < nd; k++) {
                a[k] = zi[k] + h * zdi[k] + 0.5 * h * h * zddi[k];   /* z^i_p' */
                a[ND + k] = zdi[k] + h * zddi[k];                    /* zd^i_p' */
                a[2 * ND + k] = zddi[k];                             /* zdd^i_n' */
            }
            mbs_deriv_param_dx(m, j, dx);
            mbs_form_matrixr_chain(g, t, q, qd, qdd, a, a + ND, a + 2 * ND, dx, pz, pz + N, pz + 2 * N, pF);
            for (int k = 0; k < nd; k++) e[k] = -pF[k];
            if (nd > 0) mbs_form_lu_solve(nd, J, ipiv, e);
            for (int k = 0; k < nd; k++) {
                zi[k] = a[k] + e[k];
                zdi[k] = a[ND + k] + c1 * e[k];
                zddi[k] = a[2 * ND + k] + d1 * e[k];
            }
            double *zj = Z + (size_t)j * N, *zdj = Zd + (size_t)j * N, *zddj = Zdd + (size_t)j * N;
            for (int i = 0; i < n; i++) {
                double s0 = pz[i], s1 = pz[N + i], s2 = pz[2 * N + i];
                for (int k = 0; k < nd; k++) {
                    const double *b = Bz + (size_t)k * 3 * N;
                    s0 += e[k] * b[i];
                    s1 += e[k] * b[N + i];
                    s2 += e[k] * b[2 * N + i];
                }
                zj[i] = s0;
                zdj[i] = s1;
                zddj[i] = s2;
            }
        }
        sens_objectives(r, q, qd, qdd, t, 0, gv);
        for (int j = 0; j < np; j++) {
            mbs_deriv_param_dx(m, j, dx);
            sens_objectives_d(r, q, qd, qdd, Z + j * N, Zd + j * N, Zdd + j * N, dx, t, 0, dgj);
            for (int k = 0; k < no; k++) dg[(size_t)k * P + j] = dgj[k];
        }
        for (int k = 0; k < no; k++) {
            r->psi[k] += 0.5 * h * gv[k];
            for (int j = 0; j < np; j++) r->grad[k * np + j] += 0.5 * h * dg[(size_t)k * P + j];
        }
        if (r->o->history && r->o->history(r->o->history_user, t, no, np, r->psi, r->grad)) break;
    }
    sens_objectives(r, q, qd, qdd, t, 1, gv);
    for (int j = 0; j < np; j++) {
        mbs_deriv_param_dx(m, j, dx);
        sens_objectives_d(r, q, qd, qdd, Z + j * N, Zd + j * N, Zdd + j * N, dx, t, 1, dgj);
        for (int k = 0; k < no; k++) r->grad[k * np + j] += dgj[k];
    }
    for (int k = 0; k < no; k++) r->psi[k] += gv[k];
done:
    if (stats && it) mbs_integrator_stats(it, stats);
    mbs_form_free(g);
    mbs_integrator_free(it);
    mbs_data_free(di);
    free(Z); free(Zd); free(Zdd); free(Zi); free(Zdi); free(Zddi); free(Bz); free(pz); free(pF);
    free(a); free(e); free(dx); free(gv); free(dg); free(dgj); free(J); free(ipiv);
    return rc;
}
