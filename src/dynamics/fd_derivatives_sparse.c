/*
 * fd_derivatives_sparse.c - mbs_forward_dynamics_derivatives_sparse
 * (mbsens/sparse.h): the forward-dynamics derivatives in the order of the
 * FD pattern, one ground subtree at a time.
 *
 * As in fd_derivatives.c, M' dvd = rhs with M' = M + sum_k P_k P_k^T (the
 * Euler completion) and the right-hand sides -dtau/dq, -dtau/dv completed
 * column by column (fd_rhs_columns) and Pi (dvd/dtau). M' and its inverse
 * are block diagonal over the ground subtrees S; the right-hand sides of
 * a column c have rows only in the subtrees of c's group G (the subtrees
 * that force elements join). So, per S: the dense block M'_S^-1 from the
 * tree factor (mbs_tree_inverse_block), and for every column c of G the
 * block column M'_S^-1 rhs_S(c): size(S)^2 |G| multiply-adds, never an
 * nv x nv array.
 */
#include <math.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "base/tree_sparse.h"
#include "dynamics/derivatives.h"
#include "dynamics/derivatives_sparse.h"

/* M' = M + p p^T on each Euler quadruple in the tree storage, factored
 * M' = L^T D L */
static int fd_factor(const mbs_model *m, mbs_data *d, const double *q)
{
    struct mbs_dsparse *s = d->dsp;
    const int *rp = s->tp.rowptr;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler, eq = jt->qoff + jt->euler;
        for (int r = 0; r < 4; r++)   /* row e + r ends with the columns e .. e + r */
            for (int c = 0; c <= r; c++) s->mval[rp[e + r + 1] - 1 - (r - c)] += q[eq + r] * q[eq + c];
    }
    const int bad = mbs_tree_ltdl_rows(&s->tp, s->mval);
    if (bad)
        return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics derivatives (sparse): mass matrix not "
                             "positive definite at coordinate %d (%s)", bad - 1, m->coord_name[bad - 1]);
    return MBS_OK;
}

/* The primal: vd by the chosen algorithm, then a completed Newton-Euler
 * pass at (q, v, vd) in d->ws with tid = ID(q, v, vd). The
 * semi-recursive vd as mbs_forward_dynamics computes it (M' vd = Pi(tau -
 * h) - sum P |pd|^2, forward_dynamics.c) with M from the composite
 * inertias in the tree storage and its factor, which the derivatives
 * then use (*factored = 1). */
static int fd_primal(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q, const double *v,
                     const double *tau, double *a, double *tid, int *factored)
{
    int rc;
    *factored = 0;
    if (alg != MBS_FD_SEMI_RECURSIVE) {
        if ((rc = mbs_fd_in_workspace(m, d, MBS_FD_RECURSIVE, q, v, tau, a))) return rc;
    } else {
        struct mbs_dsparse *s = d->dsp;
        mbs_kin_forward(m, m->x, &d->ws, q, v, NULL, 2);
        mbs_data_prepare_loads(m, d, q, v);
        mbs_body_terms(m, m->x, &d->ws);
        mbs_rnea(m, &d->ws, a);
        for (int k = 0; k < m->nv; k++) a[k] = (tau ? tau[k] : 0) - a[k];
        mbs_fd_euler_completion(m, q, v, a, NULL, NULL);
        mbs_crba_tree(m, &d->ws, s->tp.rowptr, s->mval);
        if ((rc = fd_factor(m, d, q))) return rc;
        *factored = 1;
        mbs_tree_solve_ltdl(&s->tp, s->mval, a);
        for (int k = 0; k < m->nv; k++)
            if (!isfinite(a[k]))
                return mbs_data_fail(d, MBS_ERR_NUMERIC, "forward dynamics (semi-recursive): acceleration of %s "
                                     "is not finite", m->coord_name[k]);
    }
    mbs_kin_accelerations(m, &d->ws, a);
    mbs_rnea(m, &d->ws, tid);
    return MBS_OK;
}

/* The right-hand side of column c (which: 0 q, 1 v) on the rows [r0, r1)
 * of one ground subtree (bodies i0 .. i1 - 1): -J(., c) gathered from the
 * ID pattern, then fd_rhs_columns's Euler completion of column c. */
static void rhs_column(const mbs_model *m, const struct mbs_dsparse *s, const double *J, int c, int which, int r0,
                       int r1, int i0, int i1, const double *q, const double *v, const double *tau,
                       const double *a, const double *tid, double *R)
{
    memset(R, 0, sizeof(double) * (size_t)(r1 - r0));
    for (int p = s->idptr[c]; p < s->idptr[c + 1]; p++) {
        const int r = s->idind[p];
        if (r >= r0 && r < r1) R[r - r0] = -J[p];
    }
    for (int i = i0; i < i1; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler;
        const double *p = q + jt->qoff + jt->euler, *pd = v ? v + e : NULL;
        double cc = 0;
        for (int k = 0; k < 4; k++) cc += p[k] * ((tau ? tau[e + k] : 0) - tid[e + k]);
        double *Re = R + (e - r0);
        double t = p[0] * Re[0] + p[1] * Re[1] + p[2] * Re[2] + p[3] * Re[3];
        const int own = c >= e && c < e + 4;
        if (own && which == 0) t += a[c] + p[c - e] * cc;
        if (own && which == 1 && pd) t += 2 * pd[c - e];
        for (int k = 0; k < 4; k++) Re[k] -= p[k] * t;
        if (own && which == 0) R[c - r0] -= cc;
    }
}

/* out = X R (X: n x n row-major) */
static void block_product(const double *X, int n, const double *R, double *out)
{
    for (int r = 0; r < n; r++) {
        const double *Xr = X + (size_t)r * n;
        double t = 0;
        for (int k = 0; k < n; k++) t += Xr[k] * R[k];
        out[r] = t;
    }
}

/* The outputs on the rows of the ground subtree rooted at velocity r0
 * (M'^-1 of it in s->minv) for every column of its group. */
static void subtree_outputs(const mbs_model *m, mbs_data *d, int r0, const double *q, const double *v,
                            const double *tau, const double *a, const double *tid, double *dq, double *dv,
                            double *dtau)
{
    struct mbs_dsparse *s = d->dsp;
    const int r1 = s->tp.subtree_end[r0], n = r1 - r0, i0 = s->vbody[r0];
    const int i1 = m->body[i0].subtree_end, g = s->fdind[s->fdptr[r0]], off = s->fdoff[r0];
    double *X = s->minv;
    /* the columns of the group: the rows of column g */
    for (int p = s->fdptr[g]; p < s->fdptr[g + 1]; p++) {
        const int c = s->fdind[p], o = s->fdptr[c] + off;
        double *out[2] = { dq, dv };
        const double *J[2] = { s->jq, s->jqd };
        for (int w = 0; w < 2; w++) {
            if (!out[w]) continue;
            rhs_column(m, s, J[w], c, w, r0, r1, i0, i1, q, v, tau, a, tid, s->rb);
            block_product(X, n, s->rb, out[w] + o);
        }
    }
    if (!dtau) return;
    /* M'^-1 Pi: the columns of each Euler quadruple projected */
    for (int i = i0; i < i1; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        if (jt->euler < 0) continue;
        const int e = jt->voff + jt->euler - r0;
        const double *p = q + jt->qoff + jt->euler;
        for (int r = 0; r < n; r++) {
            double *Xr = X + (size_t)r * n;
            const double xp = Xr[e] * p[0] + Xr[e + 1] * p[1] + Xr[e + 2] * p[2] + Xr[e + 3] * p[3];
            for (int k = 0; k < 4; k++) Xr[e + k] -= xp * p[k];
        }
    }
    for (int p = s->fdptr[g]; p < s->fdptr[g + 1]; p++) {
        const int c = s->fdind[p];
        double *o = dtau + s->fdptr[c] + off;
        if (c < r0 || c >= r1) {
            memset(o, 0, sizeof(double) * (size_t)n);
            continue;
        }
        for (int r = 0; r < n; r++) o[r] = X[(size_t)r * n + (c - r0)];
    }
}

int mbs_forward_dynamics_derivatives_sparse(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                                            const double *v, const double *tau, double *vd, double *dvd_dq,
                                            double *dvd_dv, double *dvd_dtau)
{
    if (!m || !d || d->model != m)
        return d ? mbs_data_fail(d, MBS_ERR_ARG, "forward dynamics derivatives (sparse): the data is not the "
                                 "model's (mbs_data_create(m))") : MBS_ERR_ARG;
    int rc = mbs_data_check_state(d, q, v, NULL);
    if (rc) return rc;
    struct mbs_dsparse *s = d->dsp;
    const int nv = m->nv, nz = s->nnz_fd;
    double *a = d->dbuf, *tid = d->dbuf + nv;
    int factored;
    if ((rc = fd_primal(m, d, alg, q, v, tau, a, tid, &factored))) return rc;
    if (vd) memcpy(vd, a, sizeof(double) * (size_t)nv);
    if (dvd_dq || dvd_dv || dvd_dtau) {
        mbs_deriv_id_jacobians_sparse(m, d, q, v, a, dvd_dq ? s->jq : NULL, dvd_dv ? s->jqd : NULL,
                                      factored ? NULL : s->mval);
        if (!factored && (rc = fd_factor(m, d, q))) return rc;
        for (int r0 = 0; r0 < nv; r0 = s->tp.subtree_end[r0]) {
            mbs_tree_inverse_block(&s->tp, s->mval, r0, s->minv, s->tp.subtree_end[r0] - r0, NULL);
            subtree_outputs(m, d, r0, q, v, tau, a, tid, dvd_dq, dvd_dv, dvd_dtau);
        }
    }
    return mbs_data_results(d, "derivatives (sparse)",
                            MBS_RESULTS({ "vd", vd, nv, 1, MBS_IX_COORD, 0 },
                                        { "dvd/dq", dvd_dq, nz, 1, MBS_IX_NONE, 0 },
                                        { "dvd/dv", dvd_dv, nz, 1, MBS_IX_NONE, 0 },
                                        { "dvd/dtau", dvd_dtau, nz, 1, MBS_IX_NONE, 0 }));
}
