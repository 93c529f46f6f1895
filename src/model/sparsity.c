/*
 * sparsity.c - the patterns of a model's matrices (mbsens/sparse.h): the
 * tree pattern of the mass matrix and the patterns of the derivatives
 * (mbs_sparsity_pattern).
 */
#include "sparsity.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/tree_sparse.h"
#include "model_impl.h"

/* The parent of joint i's first coordinate: the last coordinate of the
 * nearest joint above it that has coordinates, or -1. The other
 * coordinates of a joint have the previous one as parent. */
static int first_parent(const mbs_model *m, int i)
{
    for (int b = m->joint[i].parent; b > 0; b = m->joint[b].parent)
        if (m->joint[b].nv > 0) return m->joint[b].voff + m->joint[b].nv - 1;
    return -1;
}

/* The bodies are numbered parent first with contiguous subtrees, so the
 * coordinates are depth-first. */
int mbs_model_tree_pattern(const mbs_model *m, mbs_tree_pattern *p, mbs_error *err)
{
    if (!m || !p) return mbs_error_set(err, MBS_ERR_ARG, "model tree pattern: NULL model or pattern");
    int *parent = malloc(sizeof(int) * (size_t)(m->nv > 0 ? m->nv : 1));
    if (!parent) return mbs_error_set(err, MBS_ERR_NOMEM, "model tree pattern: out of memory");
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        for (int k = 0; k < jt->nv; k++) parent[jt->voff + k] = k > 0 ? jt->voff + k - 1 : first_parent(m, i);
    }
    const int rc = mbs_tree_pattern_create(p, m->nv, parent, err);
    free(parent);
    return rc;
}

int mbs_model_is_tree_pattern(const mbs_model *m, const mbs_tree_pattern *p)
{
    if (!p || p->n != m->nv || !p->parent || !p->rowptr) return 0;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        for (int k = 0; k < jt->nv; k++)
            if (p->parent[jt->voff + k] != (k > 0 ? jt->voff + k - 1 : first_parent(m, i))) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ */
/* the derivative patterns (mbs_sparsity_pattern)                      */

void mbs_model_vparents(const mbs_model *m, int *vpar)
{
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        for (int k = 0; k < jt->nv; k++) vpar[jt->voff + k] = k > 0 ? jt->voff + k - 1 : first_parent(m, i);
    }
}

/* the last velocity on the path of body b to the ground, or -1 */
static int body_velocity(const mbs_model *m, int b)
{
    for (; b > 0; b = m->joint[b].parent)
        if (m->joint[b].nv > 0) return m->joint[b].voff + m->joint[b].nv - 1;
    return -1;
}

static int find_root(int *uf, int a)
{
    while (uf[a] != a) a = uf[a] = uf[uf[a]];
    return a;
}

static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Column c of the ID pattern into rows (sorted; its count returned): the
 * ancestors of c, c and its subtree [c, end[c]), and every velocity on the
 * paths of the force elements whose paths hold c (mark: nv entries, all
 * 0 on entry and on return). */
static int id_column(const mbs_model *m, const int *vpar, const int *end, const int *evel, int c, char *mark,
                     int *rows)
{
    int n = 0, clique = 0;
    for (int a = vpar[c]; a >= 0; a = vpar[a]) rows[n++] = a;
    for (int l = 0, r = n - 1; l < r; l++, r--) { const int t = rows[l]; rows[l] = rows[r]; rows[r] = t; }
    for (int r = c; r < end[c]; r++) rows[n++] = r;
    for (int f = 0; f < m->nforce; f++) {
        int on = 0;
        for (int s = 0; s < 2; s++)
            for (int a = evel[2 * f + s]; a >= 0 && !on; a = vpar[a]) on = a == c;
        if (!on) continue;
        if (!clique) {
            clique = 1;
            for (int k = 0; k < n; k++) mark[rows[k]] = 1;
        }
        for (int s = 0; s < 2; s++)
            for (int a = evel[2 * f + s]; a >= 0; a = vpar[a])
                if (!mark[a]) { mark[a] = 1; rows[n++] = a; }
    }
    if (clique) {
        for (int k = 0; k < n; k++) mark[rows[k]] = 0;
        qsort(rows, (size_t)n, sizeof(int), cmp_int);
    }
    return n;
}

/* The ground subtree of every velocity merged over force elements:
 * group[k] = the smallest velocity of k's group (uf: nv). */
static void fd_groups(const mbs_model *m, const int *vpar, const int *evel, int *uf, int *group)
{
    const int nv = m->nv;
    for (int k = 0; k < nv; k++) uf[k] = vpar[k] < 0 ? k : uf[vpar[k]];
    for (int f = 0; f < m->nforce; f++) {
        const int a = evel[2 * f], b = evel[2 * f + 1];
        if (a < 0 || b < 0) continue;
        const int ra = find_root(uf, uf[a]), rb = find_root(uf, uf[b]);
        if (ra < rb) uf[rb] = ra;
        else uf[ra] = rb;
    }
    for (int k = 0; k < nv; k++) group[k] = find_root(uf, uf[k]);
}

long long mbs_model_sparsity(const mbs_model *m, mbs_sparsity s, int *ptr, int *ind)
{
    const int nv = m->nv;
    const size_t n1 = (size_t)(nv > 0 ? nv : 1);
    int *vpar = malloc(sizeof(int) * n1), *end = malloc(sizeof(int) * n1), *rows = malloc(sizeof(int) * n1);
    int *evel = malloc(sizeof(int) * (size_t)(2 * m->nforce + 1)), *uf = malloc(sizeof(int) * n1);
    int *group = malloc(sizeof(int) * n1), *gsize = calloc(n1, sizeof(int));
    char *mark = calloc(n1, 1);
    long long nnz = -1;
    if (!vpar || !end || !rows || !evel || !uf || !group || !gsize || !mark) goto out;
    mbs_model_vparents(m, vpar);
    for (int i = 1; i <= m->nb; i++) {
        const int e = m->body[i].subtree_end <= m->nb ? m->joint[m->body[i].subtree_end].voff : nv;
        for (int k = m->joint[i].voff; k < m->joint[i].voff + m->joint[i].nv; k++) end[k] = e;
    }
    for (int f = 0; f < m->nforce; f++)
        for (int t = 0; t < 2; t++) evel[2 * f + t] = body_velocity(m, m->force[f].body[t]);
    if (s == MBS_SPARSITY_FD) {
        fd_groups(m, vpar, evel, uf, group);
        for (int k = 0; k < nv; k++) gsize[group[k]]++;
    }
    nnz = 0;
    for (int c = 0; c < nv; c++) {
        int n = 0;
        if (s == MBS_SPARSITY_MASS) {
            for (int a = c; a >= 0; a = vpar[a]) rows[n++] = a;
            for (int l = 0, r = n - 1; l < r; l++, r--) { const int t = rows[l]; rows[l] = rows[r]; rows[r] = t; }
        } else if (s == MBS_SPARSITY_ID) {
            n = id_column(m, vpar, end, evel, c, mark, rows);
        } else {
            n = gsize[group[c]];
            if (ind)   /* the rows of c's group, in increasing order */
                for (int k = group[c], j = 0; j < n; k++)
                    if (group[k] == group[c]) rows[j++] = k;
        }
        if (ptr) ptr[c] = (int)nnz;
        if (ind) memcpy(ind + nnz, rows, sizeof(int) * (size_t)n);
        nnz += n;
        if (nnz > INT_MAX) { nnz = -1; goto out; }
    }
    if (ptr) ptr[nv] = (int)nnz;
out:
    free(vpar); free(end); free(rows); free(evel); free(uf); free(group); free(gsize); free(mark);
    return nnz;
}

int mbs_sparsity_nnz(const mbs_model *m, mbs_sparsity s)
{
    if (!m || (s != MBS_SPARSITY_MASS && s != MBS_SPARSITY_ID && s != MBS_SPARSITY_FD)) return -1;
    return (int)mbs_model_sparsity(m, s, NULL, NULL);
}

int mbs_sparsity_pattern(const mbs_model *m, mbs_sparsity s, int *colptr, int *rowind, mbs_error *err)
{
    if (!m || !colptr || !rowind || (s != MBS_SPARSITY_MASS && s != MBS_SPARSITY_ID && s != MBS_SPARSITY_FD))
        return mbs_error_set(err, MBS_ERR_ARG, "sparsity pattern: NULL model or output, or unknown kind %d", (int)s);
    if (mbs_model_sparsity(m, s, colptr, rowind) < 0)
        return mbs_error_set(err, MBS_ERR_NOMEM, "sparsity pattern: out of memory or more than %d entries", INT_MAX);
    return MBS_OK;
}
