/*
 * fd_derivatives.c - the derivatives of forward dynamics
 * (include/mbsens/derivatives.h: mbs_forward_dynamics_derivatives,
 * _param_derivatives, _directional) and their building blocks
 * (mbs_deriv_fd_primal, _solve), from the inverse-dynamics tangents.
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

/* ------------------------------------------------------------------ */
/* forward dynamics                                                    */

/* Primal FD leaving: qdd, the factors (ABA) or the Cholesky factor of M'
 * (semi, in d->scratch), and a completed RNEA at (q, qd, qdd) in d->ws with
 * tau_id = ID(q, qd, qdd) in tid. */
int mbs_deriv_fd_primal(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                        const double *qd, const double *tau, double *qdd, double *tid)
{
    const int nv = m->nv;
    int rc;
    if (alg == MBS_FD_SEMI_RECURSIVE) {
        rc = mbs_fd_in_workspace(m, d, MBS_FD_SEMI_RECURSIVE, q, qd, tau, qdd);
        if (rc) return rc;
        /* factor M' (the forward solve left it factored in scratch only if
         * nv > 0; recompute explicitly to keep this independent) */
        double *M = d->scratch;
        mbs_crba(m, &d->ws, M);
        for (int i = 1; i <= m->nb; i++) {
            const mbs_joint_info *jt = &m->joint[i];
            if (jt->euler < 0) continue;
            const int e = jt->voff + jt->euler, eq = jt->qoff + jt->euler;
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 4; c++) M[(e + r) * nv + e + c] += q[eq + r] * q[eq + c];
        }
        if (nv > 0 && LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', nv, M, nv) != 0)
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix not positive definite");
    } else {
        rc = mbs_fd_in_workspace(m, d, MBS_FD_RECURSIVE, q, qd, tau, qdd);
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
    const int nv = m->nv;
    for (int k = 0; k < nv; k++) rhs[k] = -rhs[k];
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler;
        const double *p = q + jt->qoff + jt->euler, *pd = qd ? qd + e : NULL;
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
    const int nv = m->nv;
    fd_rhs(m, q, qd, tau, qdd, tid, dq, dqd, rhs);
    if (alg == MBS_FD_SEMI_RECURSIVE) {
        if (nv > 0) LAPACKE_dpotrs(LAPACK_ROW_MAJOR, 'L', nv, 1, d->scratch, nv, rhs, 1);
        memcpy(dqdd, rhs, sizeof(double) * (size_t)nv);
    } else {
        mbs_aba_solve(m, &d->ws, &d->dws, rhs, dqdd);
    }
}

/* fd_rhs applied to every column of R (nv x nv, row-major) for the unit
 * directions e_k in q (which = 0) or qd (which = 1); the same operations
 * as fd_rhs column by column, done row-wise (only Euler rows change). */
static void fd_rhs_columns(const mbs_model *m, const double *q, const double *qd,
                           const double *tau, const double *qdd, const double *tid, int which,
                           double *R)
{
    const int nv = m->nv;
    for (int k = 0; k < nv * nv; k++) R[k] = -R[k];
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler;
        const double *p = q + jt->qoff + jt->euler, *pd = qd ? qd + e : NULL;
        double c = 0;
        for (int k = 0; k < 4; k++) c += p[k] * ((tau ? tau[e + k] : 0) - tid[e + k]);
        double *R0 = R + (size_t)e * nv, *R1 = R0 + nv, *R2 = R1 + nv, *R3 = R2 + nv;
        for (int k = 0; k < nv; k++) {
            double t = p[0] * R0[k] + p[1] * R1[k] + p[2] * R2[k] + p[3] * R3[k];  /* pE */
            const int own = k >= e && k < e + 4;
            if (own && which == 0) t += qdd[k] + p[k - e] * c;                 /* dpa + dpp c */
            if (own && which == 1 && pd) t += 2 * pd[k - e];                    /* pdd */
            R0[k] -= p[0] * t; R1[k] -= p[1] * t; R2[k] -= p[2] * t; R3[k] -= p[3] * t;
            if (own && which == 0) R[(size_t)k * nv + k] -= c;
        }
    }
}

/* 1 if M'^-1 is better formed densely (LAPACK) than with the tree
 * sparsity: the sparse inverse of fd_apply_inverse costs sum_j (e_j - j)^2
 * multiply-adds (e_j: the end of coordinate j's subtree), the dense one
 * about nv^3 at several times the speed; the sparse one is taken below a
 * sixth of that (chains are dense, branched trees such as the human are
 * not). */
int mbs_deriv_fd_inverse_dense(const mbs_model *m)
{
    const int nv = m->nv;
    double cost = 0;
    for (int i = 1; i <= m->nb; i++) {
        const int e = m->body[i].subtree_end <= m->nb ? m->joint[m->body[i].subtree_end].voff : nv;
        for (int j = m->joint[i].voff; j < m->joint[i].voff + m->joint[i].nv; j++)
            cost += (double)(e - j) * (e - j);
    }
    return cost > (double)nv * nv * nv / 6;
}

/* Factor M' = M + sum_k P_k P_k^T (M in d->scratch; Euler completion) in
 * place as M' = L^T L, L lower triangular with the tree sparsity of M
 * (Featherstone's LTL factorization, no fill-in): L(k, i) != 0 only for i
 * = k or i an ancestor velocity of k (d->ws.vpar). Cost O(sum depth^2).
 * dense (mbs_deriv_fd_inverse_dense): M'^-1 itself instead, full, by LAPACK
 * (Cholesky, then its inverse: dpotrf, dpotri). */
static int fd_factor(const mbs_model *m, mbs_data *d, const double *q, int dense)
{
    const int nv = m->nv, *lam = d->ws.vpar;
    double *H = d->scratch;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler, eq = jt->qoff + jt->euler;
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) H[(e + r) * nv + e + c] += q[eq + r] * q[eq + c];
    }
    if (dense && nv > 0) {
        /* symmetric: the row-major H is its own column-major self */
        lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', nv, H, nv);
        if (info > 0)
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix not "
                                 "positive definite (leading minor %d, coordinate %s)", (int)info,
                                 m->coord_name[info - 1]);
        if (info < 0)
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix factor failed");
        return MBS_OK;
    }
    for (int k = nv - 1; k >= 0; k--) {
        double *Hk = H + (size_t)k * nv;
        if (!(Hk[k] > 0))
            return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix not "
                                 "positive definite at coordinate %d (%s)", k, m->coord_name[k]);
        Hk[k] = sqrt(Hk[k]);
        for (int i = lam[k]; i >= 0; i = lam[i]) Hk[i] /= Hk[k];
        for (int i = lam[k]; i >= 0; i = lam[i])
            for (int j = i; j >= 0; j = lam[j]) H[(size_t)i * nv + j] -= Hk[i] * Hk[j];
    }
    return MBS_OK;
}

/* x = M'^-1 x with the dense Cholesky factor of fd_factor in d->scratch */
static void fd_dense_solve(const mbs_model *m, mbs_data *d, double *x)
{
    if (m->nv > 0) LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', m->nv, 1, d->scratch, m->nv, x, m->nv);
}

/* dense: M'^-1 from its Cholesky factor in d->scratch (LAPACK dpotri),
 * both triangles */
static int fd_dense_inverse(const mbs_model *m, mbs_data *d)
{
    const int nv = m->nv;
    double *H = d->scratch;
    if (nv == 0) return MBS_OK;
    if (LAPACKE_dpotri_work(LAPACK_COL_MAJOR, 'L', nv, H, nv) != 0)
        return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix inverse failed");
    for (int c = 0; c < nv; c++)   /* column-major lower -> the upper part too */
        for (int r = c + 1; r < nv; r++) H[(size_t)r * nv + c] = H[(size_t)c * nv + r];
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
    const int nv = m->nv, *lam = d->ws.vpar;
    if (nv == 0) return;
    const size_t n2 = (size_t)nv * nv;
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
        const int e = m->body[i].subtree_end <= m->nb ? m->joint[m->body[i].subtree_end].voff : nv;
        for (int j = jt->voff; j < jt->voff + jt->nv; j++) {
            double *c = C + (size_t)j * nv;
            c[j] = 1 / L[(size_t)j * nv + j];
            for (int k = j + 1; k < e; k++) {
                const double *Lk = L + (size_t)k * nv;
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
        const int e = m->body[i].subtree_end <= m->nb ? m->joint[m->body[i].subtree_end].voff : nv;
        for (int j = jt->voff; j < jt->voff + jt->nv; j++) {
            const double *c = C + (size_t)j * nv;
            for (int a = j; a < e; a++) {
                double *Xa = X + (size_t)a * nv;
                const double ca = c[a];
                for (int b = j; b <= a; b++) Xa[b] += ca * c[b];
            }
        }
    }
    for (int a = 0; a < nv; a++)
        for (int b = 0; b < a; b++) X[(size_t)b * nv + a] = X[(size_t)a * nv + b];
apply:;
    double *R[2] = { Rq, Rqd };
    for (int t = 0; t < 2; t++) {
        if (!R[t]) continue;
        if (B) {   /* the right-hand sides elsewhere: B (q), B + ldb / 2 (qd), rows ldb apart */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nv, nv, nv, alpha, X, nv, B + t * (ldb / 2), ldb,
                        0.0, R[t], nv);
            continue;
        }
        memcpy(C, R[t], sizeof(double) * n2);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nv, nv, nv, alpha, X, nv, C, nv, 0.0, R[t], nv);
    }
    if (!Rtau) return;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler;
        const double *p = q + jt->qoff + jt->euler;
        for (int r = 0; r < nv; r++) {
            double *Xr = X + (size_t)r * nv;
            const double xp = Xr[e] * p[0] + Xr[e + 1] * p[1] + Xr[e + 2] * p[2] + Xr[e + 3] * p[3];
            for (int a = 0; a < 4; a++) Xr[e + a] -= xp * p[a];
        }
    }
}

/* Trees of revolute, prismatic and fixed joints (mbs_jac1_usable; no Euler
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
 * (mbs_jac1_fd_solve; n^2/2 multiply-adds per column on a chain, far fewer
 * on the human); where that saves little (chain-like trees,
 * mbs_deriv_fd_inverse_dense) by LAPACK's Cholesky factor and inverse and dgemm. */
static int fd_derivatives_local(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                                const double *qd, const double *tau, double *qdd, double *dqdd_dq,
                                double *dqdd_dqd, double *dqdd_dtau)
{
    const int nv = m->nv;
    double *a = d->dbuf, *b = d->dbuf + nv, *H = d->scratch;
    const int want = dqdd_dq || dqdd_dqd || dqdd_dtau, dense = mbs_deriv_fd_inverse_dense(m);
    const int semi = alg == MBS_FD_SEMI_RECURSIVE;
    int rc;
    if (!semi) {
        if ((rc = mbs_fd_accelerations(m, d, alg, q, qd, tau, a))) return rc;
        if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nv);
        if (!want) {
            d->err[0] = 0;
            return MBS_OK;
        }
    }
    if (mbs_jac1_fd_begin(m, d, q, qd, semi ? NULL : a, semi ? b : NULL, H))
        return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives: mass matrix%s not finite",
                             semi ? " or bias forces" : "");
    if ((rc = fd_factor(m, d, q, dense))) return rc;
    if (semi) {
        for (int k = 0; k < nv; k++) a[k] = (tau ? tau[k] : 0) - b[k];
        if (dense) fd_dense_solve(m, d, a);
        else mbs_jac1_fd_factor_solve(m, d, H, a);
        for (int k = 0; k < nv; k++)
            if (!isfinite(a[k]))
                return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics: acceleration of %s is not finite",
                                     m->coord_name[k]);
        if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nv);
        if (!want) {
            d->err[0] = 0;
            return MBS_OK;
        }
        if (dqdd_dq || dqdd_dqd) mbs_jac1_fd_move(m, d, a, NULL);
    }
    const double *J = NULL;
    int ld = 0;
    if (dqdd_dq || dqdd_dqd) {
        int bad;
        J = mbs_jac1_fd_jacobians(m, d, &bad, &ld);
        if (bad && (rc = mbs_deriv_check_finite(d, J, nv * ld, "dtau/dq, dtau/dqd"))) return rc;
    }
    if (dense) {
        if ((rc = fd_dense_inverse(m, d))) return rc;
        fd_apply_inverse(m, d, q, dqdd_dq, dqdd_dqd, dqdd_dtau, -1.0, 1, J, ld);
    } else if (!mbs_jac1_fd_solve(m, d, H, dqdd_dq, dqdd_dqd, dqdd_dtau)) {
        d->err[0] = 0;   /* the sum of the results is finite: so are they */
        return MBS_OK;
    }
    if (dqdd_dq && (rc = mbs_deriv_check_finite(d, dqdd_dq, nv * nv, "dqdd/dq"))) return rc;
    if (dqdd_dqd && (rc = mbs_deriv_check_finite(d, dqdd_dqd, nv * nv, "dqdd/dqd"))) return rc;
    if (dqdd_dtau && (rc = mbs_deriv_check_finite(d, dqdd_dtau, nv * nv, "dqdd/dtau"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_forward_dynamics_derivatives(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                     const double *q, const double *qd, const double *tau,
                                     double *qdd, double *dqdd_dq, double *dqdd_dqd,
                                     double *dqdd_dtau)
{
    const int nv = m->nv;
    double *a = d->dbuf, *tid = d->dbuf + nv;
    int rc;
    if (mbs_jac1_usable(m, d))
        return fd_derivatives_local(m, d, alg, q, qd, tau, qdd, dqdd_dq, dqdd_dqd, dqdd_dtau);
    /* the primal of mbs_deriv_fd_primal without its factorization of M'
     * for the semi-recursive algorithm (fd_factor below replaces it) */
    rc = mbs_fd_in_workspace(m, d, alg, q, qd, tau, a);
    if (rc) return rc;
    mbs_kin_accelerations(m, &d->ws, a);
    mbs_rnea(m, &d->ws, tid);
    if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nv);
    /* dqdd/dq = M'^-1 (-dID/dq + completion), the same for qd, and
     * dqdd/dtau = M'^-1 (e_k + completion), all columns at once; M comes
     * with the ID Jacobians (or from composite inertias on the generic
     * path) and is factored with its tree sparsity */
    if (!dqdd_dq && !dqdd_dqd && !dqdd_dtau) {
        d->err[0] = 0;
        return MBS_OK;
    }
    mbs_deriv_id_jacobians(m, d, q, qd, a, dqdd_dq, dqdd_dqd, d->scratch);
    const int dense = mbs_deriv_fd_inverse_dense(m);
    if ((rc = fd_factor(m, d, q, dense)) || (dense && (rc = fd_dense_inverse(m, d)))) return rc;
    if (dqdd_dq) fd_rhs_columns(m, q, qd, tau, a, tid, 0, dqdd_dq);
    if (dqdd_dqd) fd_rhs_columns(m, q, qd, tau, a, tid, 1, dqdd_dqd);
    /* dqdd/dtau: the right-hand sides -(-e_k) completed are the columns of
     * Pi (identity minus the Euler projections), applied in fd_apply_inverse */
    fd_apply_inverse(m, d, q, dqdd_dq, dqdd_dqd, dqdd_dtau, 1.0, dense, NULL, 0);
    if (dqdd_dq && (rc = mbs_deriv_check_finite(d, dqdd_dq, nv * nv, "dqdd/dq"))) return rc;
    if (dqdd_dqd && (rc = mbs_deriv_check_finite(d, dqdd_dqd, nv * nv, "dqdd/dqd"))) return rc;
    if (dqdd_dtau && (rc = mbs_deriv_check_finite(d, dqdd_dtau, nv * nv, "dqdd/dtau"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_forward_dynamics_param_derivatives(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                           const double *q, const double *qd, const double *tau,
                                           double *qdd, double *dqdd_drho)
{
    const int nv = m->nv, np = m->nparam;
    double *a = d->dbuf, *tid = d->dbuf + nv, *rhs = d->dbuf + 3 * nv, *col = d->dbuf + 4 * nv;
    int rc = mbs_deriv_fd_primal(m, d, alg, q, qd, tau, a, tid);
    if (rc) return rc;
    if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nv);
    for (int k = 0; k < np; k++) {
        mbs_deriv_param_dx(m, k, d->dx);
        mbs_deriv_id_tangent(m, d, q, qd, a, NULL, NULL, NULL, d->dx, rhs, 1, m->nb + 1);
        mbs_deriv_fd_solve(m, d, alg, q, qd, tau, a, tid, NULL, NULL, rhs, col);
        for (int r = 0; r < nv; r++) dqdd_drho[r * np + k] = col[r];
    }
    if (np && (rc = mbs_deriv_check_finite(d, dqdd_drho, nv * np, "dqdd/drho"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}

int mbs_forward_dynamics_directional(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                                     const double *q, const double *qd, const double *tau,
                                     const double *dq, const double *dqd, const double *dtau,
                                     const double *drho, double *qdd, double *dqdd)
{
    const int nv = m->nv;
    double *a = d->dbuf, *tid = d->dbuf + nv, *rhs = d->dbuf + 3 * nv;
    int rc = mbs_deriv_fd_primal(m, d, alg, q, qd, tau, a, tid);
    if (rc) return rc;
    if (qdd) memcpy(qdd, a, sizeof(double) * (size_t)nv);
    mbs_deriv_param_direction(m, drho, d->dx);
    mbs_deriv_id_tangent(m, d, q, qd, a, dq, dqd, NULL, drho ? d->dx : NULL, rhs, 1, m->nb + 1);
    if (dtau)
        for (int k = 0; k < nv; k++) rhs[k] -= dtau[k];
    mbs_deriv_fd_solve(m, d, alg, q, qd, tau, a, tid, dq, dqd, rhs, dqdd);
    if ((rc = mbs_deriv_check_finite(d, dqdd, nv, "directional dqdd"))) return rc;
    d->err[0] = 0;
    return MBS_OK;
}
