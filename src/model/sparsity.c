/*
 * sparsity.c - the patterns of a model's matrices (mbsens/sparse.h): the
 * tree pattern of the mass matrix.
 */
#include "sparsity.h"

#include <stdlib.h>

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
