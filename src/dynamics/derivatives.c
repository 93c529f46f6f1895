/*
 * derivatives.c - public derivative API (include/mbsens/derivatives.h):
 * Jacobians and directional derivatives of inverse and forward dynamics,
 * assembled from the tangent kernels (src/kernels/ *_derivatives.c).
 *
 * Inverse dynamics: one tangent sweep per direction. A unit direction in a
 * coordinate of joint i only moves the subtree of i, so the sweep visits that
 * subtree and the path to the root: the full dtau/dq costs O(n depth).
 *
 * Forward dynamics: differentiating the completed equations of motion
 *     M' qdd = Pi(r) - sum_k P_k |pd_k|^2,   r = tau - ID(q, qd, 0)
 * (docs/formulations.md §9) gives, with dE = d/de ID(q, qd, qdd fixed) - dtau
 * along the direction and c_k = p_k . r_k = p_k . (tau - tau_id)_k
 * (tau_id = ID(q, qd, qdd) = M qdd + tau - r),
 *     M' dqdd = -Pi(dE) - sum_k P_k (dp.qdd_k + 2 pd.dpd + (dp.p) c_k) - dP c_k
 * M' is solved with the articulated-body factors (fully recursive, O(n) per
 * direction) or one dense Cholesky factorization (semi-recursive).
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

/* dx = sum_k drho_k d x / d rho_k */
static void param_direction(const mbs_model *m, const double *drho, double *dx)
{
    memset(dx, 0, sizeof(double) * (size_t)m->nx);
    for (int k = 0; k < m->nparam; k++) {
        if (!drho || drho[k] == 0) continue;
        const mbs_param_info *p = &m->param[k];
        for (int t = 0; t < p->ntargets; t++) dx[p->target[t]] += p->scale[t] * drho[k];
    }
}

void mbs_deriv_param_dx(const mbs_model *m, int k, double *dx)
{
    memset(dx, 0, sizeof(double) * (size_t)m->nx);
    const mbs_param_info *p = &m->param[k];
    for (int t = 0; t < p->ntargets; t++) dx[p->target[t]] += p->scale[t];
}

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
    memset(d->dws.qfrc, 0, sizeof(double) * (size_t)m->nq);
    if (m->nforce > 0)
        mbs_forces_apply_d(m, m->x, &d->ws, dx, &d->dws, q, qd, dq, dqd, d->dws.qfrc, d->time);
    mbs_body_terms_d(m, m->x, &d->ws, dx, &d->dws, first, last);
    mbs_rnea_d(m, &d->ws, &d->dws, d->dws.qfrc, dtau, first, last);
}

static int check_finite(mbs_data *d, const double *v, int n, const char *what)
{
    /* the results check of every public call (src/kernels/results.c): nq rows of
     * coordinates, columns of coordinates or (d.../drho) of parameters */
    const int nq = d->model->nq > 0 ? d->model->nq : 1, cols = n / nq;
    const mbs_index_kind ck = strstr(what, "drho") ? MBS_IX_PARAM : cols == nq ? MBS_IX_COORD : MBS_IX_NONE;
    return mbs_data_results(d, "derivatives", MBS_RESULTS({ what, v, nq, cols, MBS_IX_COORD, ck }));
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
static int fast_jacobians(const mbs_model *m, const double *q)
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
 * O(nq (elements + touched bodies x depth)). */
static void element_columns(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                            int which, double *J)
{
    const int nq = m->nq, nb = m->nb;
    double *e = d->dbuf + 4 * nq, *dqf = d->dbuf + 5 * nq;
    mbs_ws *w = &d->ws, *dw = &d->dws;
    memset(e, 0, sizeof(double) * (size_t)nq);   /* the unit direction e_k, one entry set at a time */
    for (int i = 1; i <= nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int end = m->body[i].subtree_end;
        for (int k = jt->qoff; k < jt->qoff + jt->nq; k++) {
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
            memset(dqf, 0, sizeof(double) * (size_t)nq);
            e[k] = 1;
            mbs_forces_apply_d(m, m->x, w, NULL, dw, q, qd, which == 0 ? e : NULL, which == 1 ? e : NULL,
                               dqf, d->time);
            e[k] = 0;
            for (int r = 0; r < nq; r++) J[(size_t)r * nq + k] -= dqf[r];
            /* each touched body once: its load tangent goes up its path */
            for (int f = 0; f < m->nforce; f++)
                for (int s = 0; s < 2; s++) {
                    const int b = m->force[f].body[s];
                    if (b <= 0) continue;
                    double *L = dw->xfrc + 15 * b;
                    if (L[0] == 0 && L[1] == 0 && L[2] == 0 && L[3] == 0 && L[4] == 0 && L[5] == 0) {
                        int zero = 1;
                        for (int c = 6; c < 15; c++) zero &= L[c] == 0;
                        if (zero) continue;
                    }
                    const double *A = w->A + 9 * b, *o = w->o + 3 * b;
                    double AP[9], W[6];
                    for (int a = 0; a < 3; a++)
                        for (int c = 0; c < 3; c++)
                            AP[3 * a + c] = A[3 * a] * L[6 + c] + A[3 * a + 1] * L[9 + c] + A[3 * a + 2] * L[12 + c];
                    W[0] = L[0]; W[1] = L[1]; W[2] = L[2];
                    W[3] = L[3] + AP[5] - AP[7] + o[1] * L[2] - o[2] * L[1];
                    W[4] = L[4] + AP[6] - AP[2] + o[2] * L[0] - o[0] * L[2];
                    W[5] = L[5] + AP[1] - AP[3] + o[0] * L[1] - o[1] * L[0];
                    for (int j = b; j > 0; j = m->joint[j].parent) {
                        const mbs_joint_info *jj = &m->joint[j];
                        const double *bj = w->b + MBS_BSTRIDE * j, *rj = w->r + 3 * j;
                        for (int c = 0; c < jj->nq; c++) {
                            const double *col = bj + 6 * c;
                            /* column at the origin: [b_lin + r x b_ang; b_ang] */
                            const double sl0 = col[0] + rj[1] * col[5] - rj[2] * col[4];
                            const double sl1 = col[1] + rj[2] * col[3] - rj[0] * col[5];
                            const double sl2 = col[2] + rj[0] * col[4] - rj[1] * col[3];
                            J[(size_t)(jj->qoff + c) * nq + k] -=
                                sl0 * W[0] + sl1 * W[1] + sl2 * W[2] + col[3] * W[3] + col[4] * W[4] + col[5] * W[5];
                        }
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
static void id_jacobians(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                         const double *qdd, double *dtau_dq, double *dtau_dqd, double *M)
{
    const int nq = m->nq;
    double *e = d->dbuf + 4 * nq, *col = d->dbuf + 5 * nq;   /* callers use dbuf[0, 2 nq) */
    const int fast = fast_jacobians(m, q);
    if (fast) {
        mbs_rnea_jacobians(m, m->x, &d->ws, q, qd, qdd, 0, dtau_dq, dtau_dqd, M);
        if (m->nforce > 0) {
            if (dtau_dq) element_columns(m, d, q, qd, 0, dtau_dq);
            if (dtau_dqd) element_columns(m, d, q, qd, 1, dtau_dqd);
        }
    } else if (M) {
        mbs_crba(m, &d->ws, M);
    }
    memset(e, 0, sizeof(double) * (size_t)nq);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int end = m->body[i].subtree_end;
        if (fast) {
            if (!dtau_dq || jt->euler < 0) continue;
            const int e0 = jt->qoff + jt->euler;
            const double *p = q + e0;
            for (int a = 0; a < 4; a++) e[e0 + a] = p[a];
            mbs_deriv_id_tangent(m, d, q, qd, qdd, e, NULL, NULL, NULL, col, i, end);
            for (int a = 0; a < 4; a++) e[e0 + a] = 0;
            for (int r = 0; r < nq; r++)
                for (int a = 0; a < 4; a++) dtau_dq[r * nq + e0 + a] += p[a] * col[r];
            continue;
        }
        for (int k = jt->qoff; k < jt->qoff + jt->nq; k++) {
            e[k] = 1;
            if (dtau_dq) {
                mbs_deriv_id_tangent(m, d, q, qd, qdd, e, NULL, NULL, NULL, col, i, end);
                for (int r = 0; r < nq; r++) dtau_dq[r * nq + k] = col[r];
            }
            if (dtau_dqd) {
                mbs_deriv_id_tangent(m, d, q, qd, qdd, NULL, e, NULL, NULL, col, i, end);
                for (int r = 0; r < nq; r++) dtau_dqd[r * nq + k] = col[r];
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
    const int nq = m->nq;
    double *t = d->dbuf;
    if (mbs_idl_usable(m, d)) {
        /* trees of revolute, prismatic and fixed joints: one fused pass
         * (src/kernels/jacobians_1dof.c); the entry search only on failure */
        if (mbs_idl_id_jacobians(m, d, q, qd, qdd, tau, dtau_dq, dtau_dqd, NULL)) {
            if (tau && (rc = check_finite(d, tau, nq, "tau"))) return rc;
            if (dtau_dq && (rc = check_finite(d, dtau_dq, nq * nq, "dtau/dq"))) return rc;
            if (dtau_dqd && (rc = check_finite(d, dtau_dqd, nq * nq, "dtau/dqd"))) return rc;
        }
        d->err[0] = 0;
        return MBS_OK;
    }
    mbs_deriv_id_primal(m, d, q, qd, qdd, t);
    if (tau) memcpy(tau, t, sizeof(double) * (size_t)nq);
    id_jacobians(m, d, q, qd, qdd, dtau_dq, dtau_dqd, NULL);
    if (tau && (rc = check_finite(d, tau, nq, "tau"))) return rc;
    if (dtau_dq && (rc = check_finite(d, dtau_dq, nq * nq, "dtau/dq"))) return rc;
    if (dtau_dqd && (rc = check_finite(d, dtau_dqd, nq * nq, "dtau/dqd"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_inverse_dynamics_param_derivatives(const mbs_model *m, mbs_data *d,
                                           const double *q, const double *qd,
                                           const double *qdd, double *dtau_drho)
{
    int rc = mbs_data_check_state(d, q, qd, qdd);
    if (rc) return rc;
    const int nq = m->nq, np = m->nparam;
    double *col = d->dbuf + 2 * nq;
    mbs_deriv_id_primal(m, d, q, qd, qdd, d->dbuf);
    for (int k = 0; k < np; k++) {
        mbs_deriv_param_dx(m, k, d->dx);
        mbs_deriv_id_tangent(m, d, q, qd, qdd, NULL, NULL, NULL, d->dx, col, 1, m->nb + 1);
        for (int r = 0; r < nq; r++) dtau_drho[r * np + k] = col[r];
    }
    if (np && (rc = check_finite(d, dtau_drho, nq * np, "dtau/drho"))) return rc;
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
    param_direction(m, drho, d->dx);
    mbs_deriv_id_tangent(m, d, q, qd, qdd, dq, dqd, dqdd, drho ? d->dx : NULL, dtau, 1, m->nb + 1);
    if ((rc = check_finite(d, dtau, m->nq, "directional dtau"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

/* ------------------------------------------------------------------ */
/* forward dynamics                                                    */

/* Primal FD leaving: qdd, the factors (ABA) or the Cholesky factor of M'
 * (semi, in d->scratch), and a completed RNEA at (q, qd, qdd) in d->ws with
 * tau_id = ID(q, qd, qdd) in tid. */
int mbs_deriv_fd_primal(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                        const double *qd, const double *tau, double *qdd, double *tid)
{
    const int nq = m->nq;
    int rc;
    if (alg == MBS_FD_SEMI_RECURSIVE) {
        rc = mbs_fd_unchecked(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, qdd);
        if (rc) return rc;
        /* factor M' (the forward solve left it factored in scratch only if
         * nq > 0; recompute explicitly to keep this independent) */
        double *M = d->scratch;
        mbs_crba(m, &d->ws, M);
        for (int i = 1; i <= m->nb; i++) {
            const mbs_joint_info *jt = &m->joint[i];
            if (jt->euler < 0) continue;
            const int e = jt->qoff + jt->euler;
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++) M[(e + r) * nq + e + c] += q[e + r] * q[e + c];
        }
        if (nq > 0 && LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nq, M, nq) != 0)
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix not positive definite");
    } else {
        rc = mbs_fd_unchecked(m, d, MBS_FD_RECURSIVE, q, qd, tau, qdd);
        if (rc) return rc;
    }
    /* Newton-Euler at the solution (keeps the ABA factors MS, U, Ninv):
     * positions, velocities, loads and body terms are those of the forward
     * dynamics at (q, qd); only the accelerations are (re)computed */
    mbs_kin_accelerations(m, &d->ws, qdd);
    mbs_rnea(m, &d->ws, tid);
    return MBS_OK;
}

/* Right-hand side from dE (in place) and solve for dqdd. */
/* The right-hand side of M' dqdd = rhs from dE (in place): sign and
 * Euler-parameter completion along the direction (dq, dqd). */
static void fd_rhs(const mbs_model *m, const double *q, const double *qd, const double *tau,
                   const double *qdd, const double *tid, const double *dq, const double *dqd,
                   double *rhs)
{
    const int nq = m->nq;
    for (int k = 0; k < nq; k++) rhs[k] = -rhs[k];
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->qoff + jt->euler;
        const double *p = q + e, *pd = qd ? qd + e : NULL;
        double pE = 0, dpa = 0, pdd = 0, dpp = 0, c = 0;
        for (int k = 0; k < 4; k++) {
            pE += p[k] * rhs[e + k];               /* = -p.dE */
            c += p[k] * ((tau ? tau[e + k] : 0) - tid[e + k]);
            if (dq) { dpa += dq[e + k] * qdd[e + k]; dpp += dq[e + k] * p[k]; }
            if (pd && dqd) pdd += 2 * pd[k] * dqd[e + k];
        }
        for (int k = 0; k < 4; k++) {
            rhs[e + k] -= p[k] * (pE + dpa + pdd + dpp * c);
            if (dq) rhs[e + k] -= dq[e + k] * c;
        }
    }
}

void mbs_deriv_fd_solve(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                     const double *qd, const double *tau, const double *qdd, const double *tid,
                     const double *dq, const double *dqd, double *rhs, double *dqdd)
{
    const int nq = m->nq;
    fd_rhs(m, q, qd, tau, qdd, tid, dq, dqd, rhs);
    if (alg == MBS_FD_SEMI_RECURSIVE) {
        if (nq > 0) LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', nq, 1, d->scratch, nq, rhs, 1);
        memcpy(dqdd, rhs, sizeof(double) * (size_t)nq);
    } else {
        mbs_aba_solve(m, &d->ws, &d->dws, rhs, dqdd);
    }
}

/* fd_rhs applied to every column of R (nq x nq, row-major) for the unit
 * directions e_k in q (which = 0) or qd (which = 1); the same operations
 * as fd_rhs column by column, done row-wise (only Euler rows change). */
static void fd_rhs_columns(const mbs_model *m, const double *q, const double *qd,
                           const double *tau, const double *qdd, const double *tid, int which,
                           double *R)
{
    const int nq = m->nq;
    for (int k = 0; k < nq * nq; k++) R[k] = -R[k];
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->qoff + jt->euler;
        const double *p = q + e, *pd = qd ? qd + e : NULL;
        double c = 0;
        for (int k = 0; k < 4; k++) c += p[k] * ((tau ? tau[e + k] : 0) - tid[e + k]);
        double *R0 = R + (size_t)e * nq, *R1 = R0 + nq, *R2 = R1 + nq, *R3 = R2 + nq;
        for (int k = 0; k < nq; k++) {
            double t = p[0] * R0[k] + p[1] * R1[k] + p[2] * R2[k] + p[3] * R3[k];  /* pE */
            const int own = k >= e && k < e + 4;
            if (own && which == 0) t += qdd[k] + p[k - e] * c;                 /* dpa + dpp c */
            if (own && which == 1 && pd) t += 2 * pd[k - e];                    /* pdd */
            R0[k] -= p[0] * t; R1[k] -= p[1] * t; R2[k] -= p[2] * t; R3[k] -= p[3] * t;
            if (own && which == 0) R[(size_t)k * nq + k] -= c;
        }
    }
}

/* 1 if M'^-1 is better formed densely (LAPACK) than with the tree
 * sparsity: the sparse inverse of fd_apply_inverse costs sum_j (e_j - j)^2
 * multiply-adds (e_j: the end of coordinate j's subtree), the dense one
 * about nq^3 at several times the speed; the sparse one is taken below a
 * sixth of that (chains are dense, branched trees such as the human are
 * not). */
int mbs_deriv_fd_inverse_dense(const mbs_model *m)
{
    const int nq = m->nq;
    double cost = 0;
    for (int i = 1; i <= m->nb; i++) {
        const int e = m->body[i].subtree_end <= m->nb ? m->joint[m->body[i].subtree_end].qoff : nq;
        for (int j = m->joint[i].qoff; j < m->joint[i].qoff + m->joint[i].nq; j++)
            cost += (double)(e - j) * (e - j);
    }
    return cost > (double)nq * nq * nq / 6;
}

/* Factor M' = M + sum_k P_k P_k^T (M in d->scratch; Euler completion) in
 * place as M' = L^T L, L lower triangular with the tree sparsity of M
 * (Featherstone's LTL factorization, no fill-in): L(k, i) != 0 only for i
 * = k or i an ancestor coordinate of k (d->ws.qpar). Cost O(sum depth^2).
 * dense (mbs_deriv_fd_inverse_dense): M'^-1 itself instead, full, by LAPACK
 * (Cholesky, then its inverse: dpotrf, dpotri). */
static int fd_factor(const mbs_model *m, mbs_data *d, const double *q, int dense)
{
    const int nq = m->nq, *lam = d->ws.qpar;
    double *H = d->scratch;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->qoff + jt->euler;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) H[(e + r) * nq + e + c] += q[e + r] * q[e + c];
    }
    if (dense && nq > 0) {
        /* symmetric: the row-major H is its own column-major self */
        lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', nq, H, nq);
        if (info > 0)
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix not "
                                 "positive definite (leading minor %d, coordinate %s)", (int)info,
                                 m->coord_name[info - 1]);
        if (info < 0)
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix factor failed");
        return MBS_OK;
    }
    for (int k = nq - 1; k >= 0; k--) {
        double *Hk = H + (size_t)k * nq;
        if (!(Hk[k] > 0))
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix not "
                                 "positive definite at coordinate %d (%s)", k, m->coord_name[k]);
        Hk[k] = sqrt(Hk[k]);
        for (int i = lam[k]; i >= 0; i = lam[i]) Hk[i] /= Hk[k];
        for (int i = lam[k]; i >= 0; i = lam[i])
            for (int j = i; j >= 0; j = lam[j]) H[(size_t)i * nq + j] -= Hk[i] * Hk[j];
    }
    return MBS_OK;
}

/* x = M'^-1 x with the dense Cholesky factor of fd_factor in d->scratch */
static void fd_dense_solve(const mbs_model *m, mbs_data *d, double *x)
{
    if (m->nq > 0) LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', m->nq, 1, d->scratch, m->nq, x, m->nq);
}

/* dense: M'^-1 from its Cholesky factor in d->scratch (LAPACK dpotri),
 * both triangles */
static int fd_dense_inverse(const mbs_model *m, mbs_data *d)
{
    const int nq = m->nq;
    double *H = d->scratch;
    if (nq == 0) return MBS_OK;
    if (LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', nq, H, nq) != 0)
        return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix inverse failed");
    for (int c = 0; c < nq; c++)   /* column-major lower -> the upper part too */
        for (int r = c + 1; r < nq; r++) H[(size_t)r * nq + c] = H[(size_t)c * nq + r];
    return MBS_OK;
}

/* Solve M' X = R in place for the right-hand sides of dqdd/dq, dqdd/dqd
 * and dqdd/dtau (NULL: skipped) with M'^-1 formed once. With the factor
 * M' = L^T L of fd_factor in d->scratch (tree-sparse: column j of L and of
 * L^-1 lives on the coordinates of the subtree below j, a contiguous range
 * [j, e_j)), M'^-1 = L^-1 L^-T = sum_j c_j c_j^T with c_j = column j of
 * L^-1: both in O(sum of subtree sizes^2) (n^3/3 for a chain, far less for
 * branched trees); when that is not much below n^3/3 (mbs_deriv_fd_inverse_dense),
 * fd_factor formed M'^-1 with LAPACK instead (dpotrf, dpotri). Then X_q = M'^-1 R_q and X_qd = M'^-1 R_qd (dgemm), and
 * for the right-hand sides Pi of dqdd/dtau (identity minus the Euler
 * projections) M'^-1 Pi = M'^-1 - sum_J (M'^-1 P_J) P_J^T. Cheaper
 * than triangular solves with all columns (by rows with the tree sparsity,
 * or dtrsm) and than one articulated-body solve per column, on the models
 * of bench/bench_derivatives.c. */
static void fd_apply_inverse(const mbs_model *m, mbs_data *d, const double *q, double *Rq,
                             double *Rqd, double *Rtau, double alpha, int dense, const double *B, int ldb)
{
    const int nq = m->nq, *lam = d->ws.qpar;
    if (nq == 0) return;
    const size_t n2 = (size_t)nq * nq;
    double *C = d->dws.jac + (mbs_jac_size(m) - n2), *L = d->scratch;
    double *X = Rtau ? Rtau : L;   /* L is not needed once M'^-1 is formed */
    if (dense) {
        /* fd_factor left M'^-1 in d->scratch */
        if (X != L) memcpy(X, L, sizeof(double) * n2);
        goto apply;
    }
    /* columns of L^-1, stored as rows of C (C[j][k] = L^-1(k, j), k in [j, e_j)) */
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int e = m->body[i].subtree_end <= m->nb ? m->joint[m->body[i].subtree_end].qoff : nq;
        for (int j = jt->qoff; j < jt->qoff + jt->nq; j++) {
            double *c = C + (size_t)j * nq;
            c[j] = 1 / L[(size_t)j * nq + j];
            for (int k = j + 1; k < e; k++) {
                const double *Lk = L + (size_t)k * nq;
                double t = 0;
                for (int a = lam[k]; a >= j; a = lam[a]) t += Lk[a] * c[a];
                c[k] = -t / Lk[k];
            }
        }
    }
    /* M'^-1 = sum_j c_j c_j^T (lower triangle, then mirrored) */
    memset(X, 0, sizeof(double) * n2);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int e = m->body[i].subtree_end <= m->nb ? m->joint[m->body[i].subtree_end].qoff : nq;
        for (int j = jt->qoff; j < jt->qoff + jt->nq; j++) {
            const double *c = C + (size_t)j * nq;
            for (int a = j; a < e; a++) {
                double *Xa = X + (size_t)a * nq;
                const double ca = c[a];
                for (int b = j; b <= a; b++) Xa[b] += ca * c[b];
            }
        }
    }
    for (int a = 0; a < nq; a++)
        for (int b = 0; b < a; b++) X[(size_t)b * nq + a] = X[(size_t)a * nq + b];
apply:;
    double *R[2] = { Rq, Rqd };
    for (int t = 0; t < 2; t++) {
        if (!R[t]) continue;
        if (B) {   /* the right-hand sides elsewhere: B (q), B + ldb / 2 (qd), rows ldb apart */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, nq, nq, alpha, X, nq, B + t * (ldb / 2), ldb,
                        0.0, R[t], nq);
            continue;
        }
        memcpy(C, R[t], sizeof(double) * n2);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, nq, nq, alpha, X, nq, C, nq, 0.0, R[t], nq);
    }
    if (!Rtau) return;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->qoff + jt->euler;
        const double *p = q + e;
        for (int r = 0; r < nq; r++) {
            double *Xr = X + (size_t)r * nq;
            const double xp = Xr[e] * p[0] + Xr[e + 1] * p[1] + Xr[e + 2] * p[2] + Xr[e + 3] * p[3];
            for (int a = 0; a < 4; a++) Xr[e + a] -= xp * p[a];
        }
    }
}

/* Trees of revolute, prismatic and fixed joints (mbs_idl_usable; no Euler
 * completion). The accelerations as the chosen algorithm computes them
 * (the derivatives are those of that function; where M is ill-conditioned,
 * as with the human model's massless frames near gimbal lock, the two
 * differ by cond(M) eps):
 *   fully recursive: qdd from the forward dynamics (joint frames), then the
 *     fused pass at (q, qd, qdd) gives M and [dtau/dq | dtau/dqd];
 *   semi-recursive: no forward-dynamics pass; the fused pass at qdd = 0
 *     gives M and the bias b = ID(q, qd, 0), qdd = M^-1 (tau - b) with the
 *     factor of M that the derivatives need anyway, and the pass moved to
 *     qdd (only the column vectors that depend on it) gives the Jacobians.
 * The Jacobians land in the pass's own workspace (its zeros kept from call
 * to call). Then dqdd/dx = -M^-1 dtau/dx and dqdd/dtau = M^-1: on branched
 * trees by triangular solves with the tree-sparse factor M = L^T L
 * (mbs_idl_fd_solve; n^2/2 multiply-adds per column on a chain, far fewer
 * on the human); where that saves little (chain-like trees,
 * mbs_deriv_fd_inverse_dense) by LAPACK's Cholesky factor and inverse and dgemm. */
static int fd_derivatives_local(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                                const double *qd, const double *tau, double *qdd, double *dqdd_dq,
                                double *dqdd_dqd, double *dqdd_dtau)
{
    const int nq = m->nq;
    double *a = d->dbuf, *b = d->dbuf + nq, *H = d->scratch;
    const int want = dqdd_dq || dqdd_dqd || dqdd_dtau, dense = mbs_deriv_fd_inverse_dense(m);
    const int semi = alg == MBS_FD_SEMI_RECURSIVE;
    int rc;
    if (!semi) {
        if ((rc = mbs_fd_qdd(m, d, alg, q, qd, tau, a))) return rc;
        if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nq);
        if (!want) {
            d->err[0] = 0;
            return MBS_OK;
        }
    }
    if (mbs_idl_fd_begin(m, d, q, qd, semi ? NULL : a, semi ? b : NULL, H))
        return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix%s not finite",
                             semi ? " or bias forces" : "");
    if ((rc = fd_factor(m, d, q, dense))) return rc;
    if (semi) {
        for (int k = 0; k < nq; k++) a[k] = (tau ? tau[k] : 0) - b[k];
        if (dense) fd_dense_solve(m, d, a);
        else mbs_idl_fd_factor_solve(m, d, H, a);
        for (int k = 0; k < nq; k++)
            if (!isfinite(a[k]))
                return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics: acceleration of %s is not finite",
                                     m->coord_name[k]);
        if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nq);
        if (!want) {
            d->err[0] = 0;
            return MBS_OK;
        }
        if (dqdd_dq || dqdd_dqd) mbs_idl_fd_move(m, d, a, NULL);
    }
    const double *J = NULL;
    int ld = 0;
    if (dqdd_dq || dqdd_dqd) {
        int bad;
        J = mbs_idl_fd_jacobians(m, d, &bad, &ld);
        if (bad && (rc = check_finite(d, J, nq * ld, "dtau/dq, dtau/dqd"))) return rc;
    }
    if (dense) {
        if ((rc = fd_dense_inverse(m, d))) return rc;
        fd_apply_inverse(m, d, q, dqdd_dq, dqdd_dqd, dqdd_dtau, -1.0, 1, J, ld);
    } else if (!mbs_idl_fd_solve(m, d, H, dqdd_dq, dqdd_dqd, dqdd_dtau)) {
        d->err[0] = 0;   /* the sum of the results is finite: so are they */
        return MBS_OK;
    }
    if (dqdd_dq && (rc = check_finite(d, dqdd_dq, nq * nq, "dqdd/dq"))) return rc;
    if (dqdd_dqd && (rc = check_finite(d, dqdd_dqd, nq * nq, "dqdd/dqd"))) return rc;
    if (dqdd_dtau && (rc = check_finite(d, dqdd_dtau, nq * nq, "dqdd/dtau"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_forward_dynamics_derivatives(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                     const double *q, const double *qd, const double *tau,
                                     double *qdd, double *dqdd_dq, double *dqdd_dqd,
                                     double *dqdd_dtau)
{
    const int nq = m->nq;
    double *a = d->dbuf, *tid = d->dbuf + nq;
    int rc;
    if (mbs_idl_usable(m, d))
        return fd_derivatives_local(m, d, alg, q, qd, tau, qdd, dqdd_dq, dqdd_dqd, dqdd_dtau);
    /* the primal of mbs_deriv_fd_primal without its factorization of M'
     * for the semi-recursive algorithm (fd_factor below replaces it) */
    rc = mbs_fd_unchecked(m, d, alg, q, qd, tau, a);
    if (rc) return rc;
    mbs_kin_accelerations(m, &d->ws, a);
    mbs_rnea(m, &d->ws, tid);
    if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nq);
    /* dqdd/dq = M'^-1 (-dID/dq + completion), the same for qd, and
     * dqdd/dtau = M'^-1 (e_k + completion), all columns at once; M comes
     * with the ID Jacobians (or from composite inertias on the generic
     * path) and is factored with its tree sparsity */
    if (!dqdd_dq && !dqdd_dqd && !dqdd_dtau) {
        d->err[0] = 0;
        return MBS_OK;
    }
    id_jacobians(m, d, q, qd, a, dqdd_dq, dqdd_dqd, d->scratch);
    const int dense = mbs_deriv_fd_inverse_dense(m);
    if ((rc = fd_factor(m, d, q, dense)) || (dense && (rc = fd_dense_inverse(m, d)))) return rc;
    if (dqdd_dq) fd_rhs_columns(m, q, qd, tau, a, tid, 0, dqdd_dq);
    if (dqdd_dqd) fd_rhs_columns(m, q, qd, tau, a, tid, 1, dqdd_dqd);
    /* dqdd/dtau: the right-hand sides -(-e_k) completed are the columns of
     * Pi (identity minus the Euler projections), applied in fd_apply_inverse */
    fd_apply_inverse(m, d, q, dqdd_dq, dqdd_dqd, dqdd_dtau, 1.0, dense, NULL, 0);
    if (dqdd_dq && (rc = check_finite(d, dqdd_dq, nq * nq, "dqdd/dq"))) return rc;
    if (dqdd_dqd && (rc = check_finite(d, dqdd_dqd, nq * nq, "dqdd/dqd"))) return rc;
    if (dqdd_dtau && (rc = check_finite(d, dqdd_dtau, nq * nq, "dqdd/dtau"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_forward_dynamics_param_derivatives(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                           const double *q, const double *qd, const double *tau,
                                           double *qdd, double *dqdd_drho)
{
    const int nq = m->nq, np = m->nparam;
    double *a = d->dbuf, *tid = d->dbuf + nq, *rhs = d->dbuf + 3 * nq, *col = d->dbuf + 4 * nq;
    int rc = mbs_deriv_fd_primal(m, d, alg, q, qd, tau, a, tid);
    if (rc) return rc;
    if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nq);
    for (int k = 0; k < np; k++) {
        mbs_deriv_param_dx(m, k, d->dx);
        mbs_deriv_id_tangent(m, d, q, qd, a, NULL, NULL, NULL, d->dx, rhs, 1, m->nb + 1);
        mbs_deriv_fd_solve(m, d, alg, q, qd, tau, a, tid, NULL, NULL, rhs, col);
        for (int r = 0; r < nq; r++) dqdd_drho[r * np + k] = col[r];
    }
    if (np && (rc = check_finite(d, dqdd_drho, nq * np, "dqdd/drho"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_forward_dynamics_directional(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                     const double *q, const double *qd, const double *tau,
                                     const double *dq, const double *dqd, const double *dtau,
                                     const double *drho, double *qdd, double *dqdd)
{
    const int nq = m->nq;
    double *a = d->dbuf, *tid = d->dbuf + nq, *rhs = d->dbuf + 3 * nq;
    int rc = mbs_deriv_fd_primal(m, d, alg, q, qd, tau, a, tid);
    if (rc) return rc;
    if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nq);
    param_direction(m, drho, d->dx);
    mbs_deriv_id_tangent(m, d, q, qd, a, dq, dqd, NULL, drho ? d->dx : NULL, rhs, 1, m->nb + 1);
    if (dtau)
        for (int k = 0; k < nq; k++) rhs[k] -= dtau[k];
    mbs_deriv_fd_solve(m, d, alg, q, qd, tau, a, tid, dq, dqd, rhs, dqdd);
    if ((rc = check_finite(d, dqdd, nq, "directional dqdd"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}
