/*
 * forward_dynamics.c - public forward dynamics: the fully recursive kernel
 * (src/kernels/aba.c) and the semi-recursive method
 * (thesis §2.4.1): M by composite inertias, Q by the Newton-Euler residual
 * at qdd = 0, and a dense Cholesky factorization (LAPACKE).
 *
 * Euler-parameter completion (both methods): M' = M + sum_k P_k P_k^T and
 * rhs' = rhs - sum_k P_k (P_k^T rhs + |pd_k|^2), where P_k places p_k in
 * coordinate space. Since M P_k = 0, the solution satisfies the equations of
 * motion on the complement of p_k and P_k^T qdd = -|pd_k|^2.
 */
#include <math.h>
#include <string.h>
#include <lapacke.h>

#include "mbsens/mbsens.h"
#include "kernels/data.h"
#include "kernels/results.h"
#include "base/tree_sparse.h"

const char *mbs_fd_algorithm_name(mbs_fd_algorithm a)
{
    return a == MBS_FD_SEMI_RECURSIVE ? "semi" : "fr";
}

int mbs_fd_algorithm_from_name(const char *name)
{
    if (!name) return -1;
    if (!strcmp(name, "fr")) return MBS_FD_RECURSIVE;
    if (!strcmp(name, "semi")) return MBS_FD_SEMI_RECURSIVE;
    return -1;
}

/* The Euler-parameter completion of rhs and, given M or tp, of M (dense
 * row-major, both triangles; or the lower triangle in the tree storage
 * of tp) */
void mbs_fd_euler_completion(const mbs_model *m, const double *q, const double *qd, double *rhs, double *M,
                             const mbs_tree_pattern *tp)
{
    const int nv = m->nv;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler;
        const double *p = q + jt->qoff + jt->euler;
        double pr = 0, pdpd = 0;
        for (int k = 0; k < 4; k++) { pr += p[k] * rhs[e + k]; pdpd += qd ? qd[e + k] * qd[e + k] : 0; }
        for (int r = 0; r < 4; r++) {
            rhs[e + r] -= p[r] * (pr + pdpd);
            if (!M && !tp) continue;
            for (int c = 0; c < 4; c++) {
                if (!tp) M[(e + r) * nv + e + c] += p[r] * p[c];
                else if (c <= r) M[tp->rowptr[e + r] + tp->rowptr[e + c + 1] - tp->rowptr[e + c] - 1] += p[r] * p[c];
            }
        }
    }
}

static int semi_recursive(const mbs_model *m, mbs_data *d, const double *q,
                          const double *qd, const double *tau, double *qdd)
{
    const int nv = m->nv;
    double *M = d->scratch, *rhs = d->scratch + (size_t)nv * nv;
    mbs_ws *w = &d->ws;
    mbs_kin_forward(m, m->x, w, q, qd, NULL, 2);
    mbs_data_prepare_loads(m, d, q, qd);
    mbs_body_terms(m, m->x, w);
    mbs_rnea(m, w, rhs);                 /* rhs = M*0 - Q = -Q */
    for (int k = 0; k < nv; k++) rhs[k] = (tau ? tau[k] : 0) - rhs[k];
    mbs_crba(m, w, M);
    mbs_fd_euler_completion(m, q, qd, rhs, M, NULL);
    if (nv == 0) return MBS_OK;
    /* M is symmetric: its row-major lower triangle is the column-major
     * upper one, so the column-major _work routines apply without the
     * transposed copy (and allocation) of the row-major LAPACKE layer */
    lapack_int info = LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', nv, M, nv);
    if (info != 0)
        return mbs_data_fail(d, MBS_ERR_NUMERIC,
                             "forward dynamics (semi-recursive): mass matrix not positive definite "
                             "at coordinate %d (%s)", (int)info - 1,
                             info > 0 ? m->coord_name[info - 1] : "?");
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', nv, 1, M, nv, rhs, nv);
    memcpy(qdd, rhs, sizeof(double) * (size_t)nv);
    mbs_kin_accelerations(m, w, qdd);
    return MBS_OK;
}

/* From this size on, the public semi-recursive method takes the joint-frame
 * M and h: the shipped models of the thesis's examples and human43 (all
 * smaller) keep the results of the global-axes pass. */
#define SEMI_JF_MIN_NQ 64

/* The semi-recursive method on the joint-frame M and h
 * (crba_joint_frames.c, when mbs_abajf_usable), factored in the tree
 * storage (base/tree_sparse.c, M = L^T D L without fill-in) when that
 * costs less than an eighth of the dense Cholesky, else by LAPACK as
 * semi_recursive. Leaves nothing in d->ws. */
static int semi_joint_frames(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                             const double *tau, double *qdd)
{
    const int nv = m->nv;
    const mbs_tree_pattern *tp = mbs_crbajf_tree(d);
    double *M = d->scratch, *rhs = d->scratch + (size_t)nv * nv;
    mbs_crbajf_bias_forces(m, d, q, qd, rhs);
    for (int k = 0; k < nv; k++) rhs[k] = (tau ? tau[k] : 0) - rhs[k];
    mbs_crbajf_mass_matrix(m, d, q, tp != NULL, M);
    mbs_fd_euler_completion(m, q, qd, rhs, M, tp);
    int bad = 0;
    if (nv > 0 && tp) {
        bad = mbs_tree_ltdl_rows(tp, M);
        if (!bad) mbs_tree_solve_ltdl(tp, M, rhs);
    } else if (nv > 0) {
        bad = (int)LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'U', nv, M, nv);   /* as semi_recursive */
        if (!bad) LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'U', nv, 1, M, nv, rhs, nv);
    }
    if (bad != 0)
        return mbs_data_fail(d, MBS_ERR_NUMERIC,
                             "forward dynamics (semi-recursive): mass matrix not positive definite "
                             "at coordinate %d (%s)", bad - 1, bad > 0 ? m->coord_name[bad - 1] : "?");
    memcpy(qdd, rhs, sizeof(double) * (size_t)nv);
    return MBS_OK;
}

/* The outcome of an articulated-body solve (bad < 0: joint -bad has a
 * singular articulated inertia) or of a successful one (bad = 0): every
 * acceleration finite, or MBS_ERR_NUMERIC naming the joint or coordinate. */
static int fd_outcome(const mbs_model *m, mbs_data *d, int bad, const double *qdd)
{
    if (bad < 0)
        return mbs_data_fail(d, MBS_ERR_NUMERIC,
                             "forward dynamics (fully recursive): articulated inertia of joint "
                             "'%s' is not positive definite (massless subtree?)", m->joint[-bad].name);
    return mbs_data_results(d, "forward dynamics", MBS_RESULTS({ "qdd", qdd, m->nv, 1, MBS_IX_COORD, 0 }));
}

int mbs_forward_dynamics(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg,
                         const double *q, const double *qd, const double *tau,
                         double *qdd)
{
    int rc = mbs_data_check_state(d, q, qd, tau);
    if (rc) return rc;
    if (alg == MBS_FD_SEMI_RECURSIVE && qd && m->nq >= SEMI_JF_MIN_NQ && d->model == m && mbs_abajf_usable(d)) {
        /* joint-frame M and h (the integrators and sensitivities, which
         * read d->ws afterwards, keep semi_recursive) */
        rc = semi_joint_frames(m, d, q, qd, tau, qdd);
        return rc ? rc : fd_outcome(m, d, 0, qdd);
    }
    return mbs_fd_accelerations(m, d, alg, q, qd, tau, qdd);
}

int mbs_fd_accelerations(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q, const double *qd,
               const double *tau, double *qdd)
{
    /* (its constants belong to the model d is created for) */
    if (alg == MBS_FD_RECURSIVE && !d->fr_global && d->model == m && mbs_abajf_usable(d)) {
        /* joint-frame articulated bodies (aba_joint_frames.c): the
         * same accelerations at about half the cost; it leaves no
         * kinematics or factors in d->ws, which only mbs_fd_in_workspace's
         * callers (derivatives, sensitivities) read */
        return fd_outcome(m, d, mbs_abajf_forward_dynamics(m, d, q, qd, tau, qdd), qdd);
    }
    return mbs_fd_in_workspace(m, d, alg, q, qd, tau, qdd);
}

int mbs_fd_in_workspace(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                     const double *qd, const double *tau, double *qdd)
{
    if (alg == MBS_FD_SEMI_RECURSIVE) {
        int rc = semi_recursive(m, d, q, qd, tau, qdd);
        return rc ? rc : fd_outcome(m, d, 0, qdd);
    }
    mbs_kin_forward(m, m->x, &d->ws, q, qd, NULL, 1);
    mbs_data_prepare_loads(m, d, q, qd);
    mbs_body_terms(m, m->x, &d->ws);
    return fd_outcome(m, d, mbs_aba(m, &d->ws, q, qd, tau, qdd), qdd);
}

int mbs_fd_prescribed_in_workspace(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                                   const double *tau, const unsigned char *presc, double *qdd, double *frc)
{
    mbs_kin_forward(m, m->x, &d->ws, q, qd, NULL, 1);
    mbs_data_prepare_loads(m, d, q, qd);
    mbs_body_terms(m, m->x, &d->ws);
    return fd_outcome(m, d, mbs_aba_prescribed(m, &d->ws, q, qd, tau, presc, qdd, frc), qdd);
}
