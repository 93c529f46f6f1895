/*
 * id_derivatives.c - the derivatives of inverse dynamics
 * (include/mbsens/derivatives.h: mbs_inverse_dynamics_derivatives,
 * _param_derivatives, _directional) and their building blocks
 * (mbs_deriv_id_primal, _tangent, _jacobians, _derivatives), assembled
 * from the tangent kernels (src/kernels/ *_derivatives.c).
 *
 * Inverse dynamics: one tangent sweep per direction. A unit direction in a
 * coordinate of joint i only moves the subtree of i, so the sweep visits that
 * subtree and the path to the root: the full dtau/dq costs O(n depth).
 */
#include <math.h>
#include <string.h>
#include <lapacke.h>
#include <cblas.h>

#include "mbsens/mbsens.h"
#include "mbsens/derivatives.h"
#include "kernels/data.h"
#include "dynamics/derivatives.h"
#include "kernels/jacobians_1dof.h"
#include "kernels/results.h"
#include "forces/force.h"

/* Primal inverse dynamics leaving everything the tangents need in d->ws. */
void mbs_deriv_id_primal(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                      const double *qdd, double *tau)
{
    mbs_kin_forward(m, m->x, &d->ws, q, qd, qdd, 2);
    mbs_data_prepare_loads(m, d, q, qd);
    mbs_body_terms(m, m->x, &d->ws);
    mbs_rnea(m, &d->ws, tau);
}

/* Tangent of ID along a direction, bodies first..last-1 (+ root path). */
void mbs_deriv_id_tangent(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                       const double *qdd, const double *dq, const double *dqd,
                       const double *dqdd, const double *dx, double *dtau, int first, int last)
{
    if (first < 1) first = 1;
    if (last > m->nb + 1) last = m->nb + 1;
    /* a force element may connect a body of the range to one outside it:
     * sweep everything when there are elements */
    if (m->nforce > 0) { first = 1; last = m->nb + 1; }
    mbs_kin_forward_d(m, m->x, &d->ws, dx, &d->dws, q, qd, qdd, dq, dqd, dqdd, 2, first, last);
    /* user loads are constant along any direction; force elements supply
     * their own tangents */
    memset(d->dws.xfrc + 15 * first, 0, sizeof(double) * 15 * (size_t)(last - first));
    memset(d->dws.qfrc, 0, sizeof(double) * (size_t)m->nv);
    if (m->nforce > 0)
        mbs_forces_apply_d(m, m->x, &d->ws, dx, &d->dws, q, qd, dq, dqd, d->dws.qfrc, d->time);
    mbs_body_terms_d(m, m->x, &d->ws, dx, &d->dws, first, last);
    mbs_rnea_d(m, &d->ws, &d->dws, d->dws.qfrc, dtau, first, last);
}

/* ------------------------------------------------------------------ */
/* inverse dynamics                                                    */

/* The fast all-columns kernel (src/kernels/inverse_dynamics_jacobians.c)
 * rests on rigid-body identities that the rotation formula of Euler
 * parameters satisfies only on |p| = 1: states off |p| = 1 beyond round-off
 * (the state check accepts 1e-6) take the generic path (one tangent sweep
 * per column). The kernel treats all applied loads as user loads (global
 * forces at body points, global torques, joint forces, whose values do not
 * change along a state direction); force elements add the change of their
 * values (element_columns). */
int mbs_deriv_id_fast(const mbs_model *m, const double *q)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const double *p = q + jt->qoff + jt->euler;
        if (fabs(p[0] * p[0] + p[1] * p[1] + p[2] * p[2] + p[3] * p[3] - 1) > 1e-14) return 0;
    }
    return 1;
}

/* The force elements' part of dtau/dq (which = 0) or dtau/dqd (which = 1):
 * the kernel moved their loads with the bodies but kept their values; for
 * each column k, the tangents of the element loads (mbs_forces_apply_d,
 * with the rigid-motion kinematic tangents of the bodies they touch from
 * mbs_jac_body_tangent) give dW_b = [df; dn + o x df + eps(A dP)] at the
 * origin and dQ^q, and dtau_c -= s_c . sum_{b below c} dW_b + dQ^q_c. Cost
 * O(nv (elements + touched bodies x depth)). */
static void element_columns(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                            int which, double *J)
{
    const int nv = m->nv, nb = m->nb;
    double *e = d->dbuf + 4 * nv, *dqf = d->dbuf + 5 * nv;
    mbs_ws *w = &d->ws, *dw = &d->dws;
    memset(e, 0, sizeof(double) * (size_t)nv);   /* the unit direction e_k, one entry set at a time */
    for (int i = 1; i <= nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int end = m->body[i].subtree_end;
        for (int k = jt->voff; k < jt->voff + jt->nv; k++) {
            /* kinematic tangents of the touched bodies, zero load tangents */
            for (int f = 0; f < m->nforce; f++)
                for (int s = 0; s < 2; s++) {
                    const int b = m->force[f].body[s];
                    if (b <= 0) continue;
                    if (b >= i && b < end) {
                        mbs_jac_body_tangent(m, w, k, which, b, dw);
                    } else {
                        memset(dw->A + 9 * b, 0, 9 * sizeof(double));
                        memset(dw->o + 3 * b, 0, 3 * sizeof(double));
                        memset(dw->r + 3 * b, 0, 3 * sizeof(double));
                        memset(dw->V + 6 * b, 0, 6 * sizeof(double));
                    }
                    memset(dw->xfrc + 15 * b, 0, 15 * sizeof(double));
                }
            memset(dqf, 0, sizeof(double) * (size_t)nv);
            e[k] = 1;
            mbs_forces_apply_d(m, m->x, w, NULL, dw, q, qd, which == 0 ? e : NULL, which == 1 ? e : NULL,
                               dqf, d->time);
            e[k] = 0;
            for (int r = 0; r < nv; r++) J[(size_t)r * nv + k] -= dqf[r];
            /* each touched body once: its load tangent goes up its path */
            for (int f = 0; f < m->nforce; f++)
                for (int s = 0; s < 2; s++) {
                    const int b = m->force[f].body[s];
                    if (b <= 0) continue;
                    double *L = dw->xfrc + 15 * b, W[6];
                    if (!mbs_deriv_load_wrench(w->A + 9 * b, w->o + 3 * b, L, W)) continue;
                    for (int j = b; j > 0; j = m->joint[j].parent) {
                        const mbs_joint_info *jj = &m->joint[j];
                        const double *bj = w->b + MBS_BSTRIDE * j, *rj = w->r + 3 * j;
                        for (int c = 0; c < jj->nv; c++)
                            J[(size_t)(jj->voff + c) * nv + k] -= mbs_deriv_column_work(bj + 6 * c, rj, W);
                    }
                    memset(L, 0, 15 * sizeof(double));   /* counted once */
                }
        }
    }
}

/* dtau/dq and dtau/dqd (either may be NULL) at the completed Newton-Euler
 * primal left in d->ws at (q, qd, qdd). Fast path: every column in
 * O(n depth) (src/kernels/inverse_dynamics_jacobians.c), except that the
 * Euler-parameter columns of dtau/dq get there only their part along the
 * tangent directions e_a - p_a p; the radial part p_a (dtau/dq) p takes one
 * tangent sweep along p per Euler joint, over its subtree and root path.
 * Generic path: one tangent sweep per column. */
void mbs_deriv_id_jacobians(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                            const double *qdd, double *dtau_dq, double *dtau_dqd, double *M)
{
    const int nv = m->nv;
    double *e = d->dbuf + 4 * nv, *col = d->dbuf + 5 * nv;   /* callers use dbuf[0, 2 nv) */
    const int fast = mbs_deriv_id_fast(m, q);
    if (fast) {
        mbs_rnea_jacobians(m, m->x, &d->ws, q, qd, qdd, 0, dtau_dq, dtau_dqd, M);
        if (m->nforce > 0) {
            if (dtau_dq) element_columns(m, d, q, qd, 0, dtau_dq);
            if (dtau_dqd) element_columns(m, d, q, qd, 1, dtau_dqd);
        }
    } else if (M) {
        mbs_crba(m, &d->ws, M);
    }
    memset(e, 0, sizeof(double) * (size_t)nv);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int end = m->body[i].subtree_end;
        if (fast) {
            if (!dtau_dq || jt->euler < 0) continue;
            const int e0 = jt->voff + jt->euler;
            const double *p = q + jt->qoff + jt->euler;
            for (int a = 0; a < 4; a++) e[e0 + a] = p[a];
            mbs_deriv_id_tangent(m, d, q, qd, qdd, e, NULL, NULL, NULL, col, i, end);
            for (int a = 0; a < 4; a++) e[e0 + a] = 0;
            for (int r = 0; r < nv; r++)
                for (int a = 0; a < 4; a++) dtau_dq[r * nv + e0 + a] += p[a] * col[r];
            continue;
        }
        for (int k = jt->voff; k < jt->voff + jt->nv; k++) {
            e[k] = 1;
            if (dtau_dq) {
                mbs_deriv_id_tangent(m, d, q, qd, qdd, e, NULL, NULL, NULL, col, i, end);
                for (int r = 0; r < nv; r++) dtau_dq[r * nv + k] = col[r];
            }
            if (dtau_dqd) {
                mbs_deriv_id_tangent(m, d, q, qd, qdd, NULL, e, NULL, NULL, col, i, end);
                for (int r = 0; r < nv; r++) dtau_dqd[r * nv + k] = col[r];
            }
            e[k] = 0;
        }
    }
}

int mbs_inverse_dynamics_derivatives(const mbs_model *m, mbs_data *d,
                                     const double *q, const double *qd, const double *qdd,
                                     double *tau, double *dtau_dq, double *dtau_dqd)
{
    int rc = mbs_data_check_state(d, q, qd, qdd);
    if (rc) return rc;
    return mbs_deriv_id_derivatives(m, d, q, qd, qdd, tau, dtau_dq, dtau_dqd);
}

int mbs_deriv_id_derivatives(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                             const double *qdd, double *tau, double *dtau_dq, double *dtau_dqd)
{
    int rc;
    const int nv = m->nv;
    double *t = d->dbuf;
    if (mbs_jac1_usable(m, d)) {
        /* trees of revolute, prismatic and fixed joints: one fused pass
         * (src/kernels/jacobians_1dof.c); the entry search only on failure */
        if (mbs_jac1_id_jacobians(m, d, q, qd, qdd, tau, dtau_dq, dtau_dqd, NULL)) {
            if (tau && (rc = mbs_deriv_check_finite(d, tau, nv, "tau"))) return rc;
            if (dtau_dq && (rc = mbs_deriv_check_finite(d, dtau_dq, nv * nv, "dtau/dq"))) return rc;
            if (dtau_dqd && (rc = mbs_deriv_check_finite(d, dtau_dqd, nv * nv, "dtau/dqd"))) return rc;
        }
        d->err[0] = 0;
        return MBS_OK;
    }
    mbs_deriv_id_primal(m, d, q, qd, qdd, t);
    if (tau) memcpy(tau, t, sizeof(double) * (size_t)nv);
    mbs_deriv_id_jacobians(m, d, q, qd, qdd, dtau_dq, dtau_dqd, NULL);
    if (tau && (rc = mbs_deriv_check_finite(d, tau, nv, "tau"))) return rc;
    if (dtau_dq && (rc = mbs_deriv_check_finite(d, dtau_dq, nv * nv, "dtau/dq"))) return rc;
    if (dtau_dqd && (rc = mbs_deriv_check_finite(d, dtau_dqd, nv * nv, "dtau/dqd"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_inverse_dynamics_param_derivatives(const mbs_model *m, mbs_data *d,
                                           const double *q, const double *qd,
                                           const double *qdd, double *dtau_drho)
{
    int rc = mbs_data_check_state(d, q, qd, qdd);
    if (rc) return rc;
    const int nv = m->nv, np = m->nparam;
    double *col = d->dbuf + 2 * nv;
    mbs_deriv_id_primal(m, d, q, qd, qdd, d->dbuf);
    for (int k = 0; k < np; k++) {
        mbs_deriv_param_dx(m, k, d->dx);
        mbs_deriv_id_tangent(m, d, q, qd, qdd, NULL, NULL, NULL, d->dx, col, 1, m->nb + 1);
        for (int r = 0; r < nv; r++) dtau_drho[r * np + k] = col[r];
    }
    if (np && (rc = mbs_deriv_check_finite(d, dtau_drho, nv * np, "dtau/drho"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_inverse_dynamics_directional(const mbs_model *m, mbs_data *d,
                                     const double *q, const double *qd, const double *qdd,
                                     const double *dq, const double *dqd, const double *dqdd,
                                     const double *drho, double *dtau)
{
    int rc = mbs_data_check_state(d, q, qd, qdd);
    if (rc) return rc;
    mbs_deriv_id_primal(m, d, q, qd, qdd, d->dbuf);
    mbs_deriv_param_direction(m, drho, d->dx);
    mbs_deriv_id_tangent(m, d, q, qd, qdd, dq, dqd, dqdd, drho ? d->dx : NULL, dtau, 1, m->nb + 1);
    if ((rc = mbs_deriv_check_finite(d, dtau, m->nv, "directional dtau"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}
