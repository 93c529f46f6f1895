/*
 * id_derivatives_sparse.c - mbs_inverse_dynamics_derivatives_sparse and
 * the workspace of the derivatives in pattern order (derivatives_sparse.h,
 * mbsens/sparse.h).
 *
 * The steps of mbs_deriv_id_jacobians (id_derivatives.c) on the entries of
 * the ID pattern only: the all-columns kernel writes at the pattern's
 * positions (mbs_rnea_jacobians_sparse); the force elements' columns, the
 * radial parts of the Euler-parameter columns and the per-column sweeps
 * off |p| = 1 add to the same entries in the same order, each sweep
 * confined to its subtree and root path (mbs_rnea_d_range). Every entry
 * is then the dense function's, bit for bit; the cost is O(nnz) plus the
 * sweeps, with no O(nv) work per column when the model has no force
 * elements (with elements, each sweep covers the tree, as in the dense
 * code: the elements' tangents need it).
 */
#include <stdlib.h>
#include <string.h>

#include "mbsens/mbsens.h"
#include "dynamics/derivatives.h"
#include "dynamics/derivatives_sparse.h"
#include "forces/force.h"
#include "kernels/jacobians_1dof.h"
#include "model/sparsity.h"

/* ------------------------------------------------------------------ */
/* workspace                                                           */

/* the index tables of the patterns and the element columns */
static int dsparse_tables(struct mbs_dsparse *s, const mbs_model *m)
{
    const int nv = m->nv;
    const long long nid = mbs_model_sparsity(m, MBS_SPARSITY_ID, NULL, NULL);
    const long long nfd = mbs_model_sparsity(m, MBS_SPARSITY_FD, NULL, NULL);
    if (nid < 0 || nfd < 0) return -1;
    s->nnz_id = (int)nid;
    s->nnz_fd = (int)nfd;
    const size_t n1 = (size_t)nv + 1;
    s->idptr = malloc(sizeof(int) * n1);
    s->idind = malloc(sizeof(int) * (size_t)(nid + 1));
    s->iddiag = malloc(sizeof(int) * n1);
    s->fdptr = malloc(sizeof(int) * n1);
    s->fdind = malloc(sizeof(int) * (size_t)(nfd + 1));
    s->fdoff = malloc(sizeof(int) * n1);
    s->vbody = malloc(sizeof(int) * n1);
    s->ecol = calloc(n1, 1);
    if (!s->idptr || !s->idind || !s->iddiag || !s->fdptr || !s->fdind || !s->fdoff || !s->vbody || !s->ecol)
        return -1;
    mbs_model_sparsity(m, MBS_SPARSITY_ID, s->idptr, s->idind);
    mbs_model_sparsity(m, MBS_SPARSITY_FD, s->fdptr, s->fdind);
    for (int c = 0; c < nv; c++) {
        int p = s->idptr[c];
        while (s->idind[p] != c) p++;
        s->iddiag[c] = p;
        for (int k = s->fdptr[c]; k < s->fdptr[c + 1]; k++)
            if (s->fdind[k] == c) s->fdoff[c] = k - s->fdptr[c];
    }
    for (int i = 1; i <= m->nb; i++)
        for (int k = m->joint[i].voff; k < m->joint[i].voff + m->joint[i].nv; k++) s->vbody[k] = i;
    /* the columns on the paths of the elements' bodies and the joint
     * elements' own coordinates */
    for (int f = 0; f < m->nforce; f++) {
        for (int t = 0; t < 2; t++)
            for (int b = m->force[f].body[t]; b > 0; b = m->joint[b].parent)
                for (int k = m->joint[b].voff; k < m->joint[b].voff + m->joint[b].nv; k++) s->ecol[k] = 1;
        if (m->force[f].coord >= 0 && m->force[f].coord < nv) s->ecol[m->force[f].coord] = 1;
    }
    return 0;
}

int mbs_dsparse_create(mbs_data *d, const mbs_model *m)
{
    struct mbs_dsparse *s = calloc(1, sizeof *s);
    d->dsp = s;
    if (!s || dsparse_tables(s, m) || mbs_model_tree_pattern(m, &s->tp, NULL)) return -1;
    for (int k = 0; k < m->nv; k++)
        if (s->tp.parent[k] < 0 && s->tp.subtree_end[k] - k > s->smax) s->smax = s->tp.subtree_end[k] - k;
    const size_t n1 = (size_t)m->nv + 1, sm = (size_t)s->smax + 1;
    s->jq = calloc((size_t)s->nnz_id + 1, sizeof(double));
    s->jqd = calloc((size_t)s->nnz_id + 1, sizeof(double));
    s->mval = calloc((size_t)s->tp.nnz + 1, sizeof(double));
    s->minv = calloc(sm * sm, sizeof(double));
    s->rb = calloc(sm, sizeof(double));
    s->ob = calloc(sm, sizeof(double));
    s->e = calloc(n1, sizeof(double));
    s->col = calloc(n1, sizeof(double));
    s->dqf = calloc(n1, sizeof(double));
    return s->jq && s->jqd && s->mval && s->minv && s->rb && s->ob && s->e && s->col && s->dqf ? 0 : -1;
}

void mbs_dsparse_free(mbs_data *d)
{
    struct mbs_dsparse *s = d->dsp;
    if (!s) return;
    free(s->idptr); free(s->idind); free(s->iddiag); free(s->fdptr); free(s->fdind); free(s->fdoff);
    free(s->vbody); free(s->ecol);
    mbs_tree_pattern_free(&s->tp);
    free(s->jq); free(s->jqd); free(s->mval); free(s->minv); free(s->rb); free(s->ob);
    free(s->e); free(s->col); free(s->dqf);
    free(s);
    d->dsp = NULL;
}

void mbs_dsparse_scribble(mbs_data *d, uint64_t *r)
{
    struct mbs_dsparse *s = d->dsp;
    const size_t z = sizeof(double), n1 = (size_t)d->model->nv + 1, sm = (size_t)s->smax + 1;
    mbs_scribble_bytes(s->jq, z * ((size_t)s->nnz_id + 1), r);
    mbs_scribble_bytes(s->jqd, z * ((size_t)s->nnz_id + 1), r);
    mbs_scribble_bytes(s->mval, z * ((size_t)s->tp.nnz + 1), r);
    mbs_scribble_bytes(s->minv, z * sm * sm, r);
    mbs_scribble_bytes(s->rb, z * sm, r);
    mbs_scribble_bytes(s->ob, z * sm, r);
    mbs_scribble_bytes(s->e, z * n1, r);
    mbs_scribble_bytes(s->col, z * n1, r);
    mbs_scribble_bytes(s->dqf, z * n1, r);
}

/* ------------------------------------------------------------------ */
/* the Jacobians                                                       */

/* the position of row r in column c of the ID pattern, or -1 */
static int id_pos(const struct mbs_dsparse *s, int c, int r)
{
    int lo = s->idptr[c], hi = s->idptr[c + 1] - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2, v = s->idind[mid];
        if (v == r) return mid;
        if (v < r) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* mbs_deriv_id_tangent along (dq, dqd) with no parameter direction: the
 * same operations, confined to the subtree first..last-1 and its root
 * path when the model has no force elements (col holds the tangent at
 * those rows only). */
static void tangent(const mbs_model *m, mbs_data *d, const double *q, const double *qd, const double *qdd,
                    const double *dq, const double *dqd, double *col, int first, int last)
{
    if (m->nforce > 0) {
        mbs_deriv_id_tangent(m, d, q, qd, qdd, dq, dqd, NULL, NULL, col, first, last);
        return;
    }
    if (last > m->nb + 1) last = m->nb + 1;
    mbs_kin_forward_d(m, m->x, &d->ws, NULL, &d->dws, q, qd, qdd, dq, dqd, NULL, 2, first, last);
    memset(d->dws.xfrc + 15 * first, 0, sizeof(double) * 15 * (size_t)(last - first));
    const int k0 = m->joint[first].voff, k1 = last <= m->nb ? m->joint[last].voff : m->nv;
    memset(d->dws.qfrc + k0, 0, sizeof(double) * (size_t)(k1 - k0));
    for (int j = m->joint[first].parent; j > 0; j = m->joint[j].parent)
        memset(d->dws.qfrc + m->joint[j].voff, 0, sizeof(double) * (size_t)m->joint[j].nv);
    mbs_body_terms_d(m, m->x, &d->ws, NULL, &d->dws, first, last);
    mbs_rnea_d_range(m, &d->ws, &d->dws, d->dws.qfrc, col, first, last);
}

/* the element load tangent of body b (dw->xfrc) subtracted up its path
 * from column k (element_columns of id_derivatives.c) */
static void element_path(const mbs_model *m, mbs_data *d, int b, int k, double *J)
{
    const mbs_ws *w = &d->ws;
    double *L = d->dws.xfrc + 15 * b, W[6];
    if (!mbs_deriv_load_wrench(w->A + 9 * b, w->o + 3 * b, L, W)) return;
    for (int j = b; j > 0; j = m->joint[j].parent) {
        const mbs_joint_info *jj = &m->joint[j];
        const double *bj = w->b + MBS_BSTRIDE * j, *rj = w->r + 3 * j;
        for (int c = 0; c < jj->nv; c++)
            J[id_pos(d->dsp, k, jj->voff + c)] -= mbs_deriv_column_work(bj + 6 * c, rj, W);
    }
    memset(L, 0, 15 * sizeof(double));
}

/* element_columns of id_derivatives.c on the columns the elements change
 * (the others get exact zeros there) */
static void element_columns(const mbs_model *m, mbs_data *d, const double *q, const double *qd, int which,
                            double *J)
{
    struct mbs_dsparse *s = d->dsp;
    mbs_ws *w = &d->ws, *dw = &d->dws;
    for (int k = 0; k < m->nv; k++) {
        if (!s->ecol[k]) continue;
        const int i = s->vbody[k], end = m->body[i].subtree_end;
        for (int f = 0; f < m->nforce; f++)
            for (int t = 0; t < 2; t++) {
                const int b = m->force[f].body[t];
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
        for (int f = 0; f < m->nforce; f++)
            if (m->force[f].coord >= 0) s->dqf[m->force[f].coord] = 0;
        s->e[k] = 1;
        mbs_forces_apply_d(m, m->x, w, NULL, dw, q, qd, which == 0 ? s->e : NULL, which == 1 ? s->e : NULL,
                           s->dqf, d->time);
        s->e[k] = 0;
        for (int f = 0; f < m->nforce; f++) {
            const int r = m->force[f].coord, p = r >= 0 ? id_pos(s, k, r) : -1;
            if (p >= 0) {
                J[p] -= s->dqf[r];
                s->dqf[r] = 0;   /* subtracted once */
            }
        }
        for (int f = 0; f < m->nforce; f++)
            for (int t = 0; t < 2; t++)
                if (m->force[f].body[t] > 0) element_path(m, d, m->force[f].body[t], k, J);
    }
}

/* the tangent col (rows of c's pattern) added, times a, to column c */
static void add_column(const struct mbs_dsparse *s, int c, double a, const double *col, double *J, int set)
{
    for (int p = s->idptr[c]; p < s->idptr[c + 1]; p++) {
        if (set) J[p] = col[s->idind[p]];
        else J[p] += a * col[s->idind[p]];
    }
}

void mbs_deriv_id_jacobians_sparse(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                                   const double *qdd, double *jq, double *jqd, double *mval)
{
    struct mbs_dsparse *s = d->dsp;
    const int fast = mbs_deriv_id_fast(m, q);
    const mbs_jac_pattern sp = { s->idptr, s->idind, s->iddiag, s->tp.rowptr };
    if (fast) {
        mbs_rnea_jacobians_sparse(m, m->x, &d->ws, q, qd, qdd, &sp, jq, jqd, mval);
        if (m->nforce > 0) {
            memset(s->e, 0, sizeof(double) * (size_t)m->nv);
            memset(s->dqf, 0, sizeof(double) * (size_t)m->nv);
            if (jq) element_columns(m, d, q, qd, 0, jq);
            if (jqd) element_columns(m, d, q, qd, 1, jqd);
        }
    } else if (mval) {
        mbs_crba_tree(m, &d->ws, s->tp.rowptr, mval);
    }
    memset(s->e, 0, sizeof(double) * (size_t)m->nv);
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int end = m->body[i].subtree_end;
        if (fast) {
            if (!jq || jt->euler < 0) continue;
            const int e0 = jt->voff + jt->euler;
            const double *p = q + jt->qoff + jt->euler;
            for (int a = 0; a < 4; a++) s->e[e0 + a] = p[a];
            tangent(m, d, q, qd, qdd, s->e, NULL, s->col, i, end);
            for (int a = 0; a < 4; a++) s->e[e0 + a] = 0;
            for (int a = 0; a < 4; a++) add_column(s, e0 + a, p[a], s->col, jq, 0);
            continue;
        }
        for (int k = jt->voff; k < jt->voff + jt->nv; k++) {
            s->e[k] = 1;
            if (jq) {
                tangent(m, d, q, qd, qdd, s->e, NULL, s->col, i, end);
                add_column(s, k, 0, s->col, jq, 1);
            }
            if (jqd) {
                tangent(m, d, q, qd, qdd, NULL, s->e, s->col, i, end);
                add_column(s, k, 0, s->col, jqd, 1);
            }
            s->e[k] = 0;
        }
    }
}

int mbs_inverse_dynamics_derivatives_sparse(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                                            const double *vd, double *tau, double *dtau_dq, double *dtau_dv)
{
    if (!m || !d || d->model != m)
        return d ? mbs_data_fail(d, MBS_ERR_ARG, "inverse dynamics derivatives (sparse): the data is not the "
                                 "model's (mbs_data_create(m))") : MBS_ERR_ARG;
    int rc = mbs_data_check_state(d, q, v, vd);
    if (rc) return rc;
    const int nv = m->nv, nz = d->dsp->nnz_id;
    double *t = d->dbuf;
    mbs_deriv_id_primal(m, d, q, v, vd, t);
    if (tau) memcpy(tau, t, sizeof(double) * (size_t)nv);
    mbs_deriv_id_jacobians_sparse(m, d, q, v, vd, dtau_dq, dtau_dv, NULL);
    return mbs_data_results(d, "derivatives (sparse)",
                            MBS_RESULTS({ "tau", tau, nv, 1, MBS_IX_COORD, 0 },
                                        { "dtau/dq", dtau_dq, nz, 1, MBS_IX_NONE, 0 },
                                        { "dtau/dv", dtau_dv, nz, 1, MBS_IX_NONE, 0 }));
}
