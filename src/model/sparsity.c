/*
 * sparsity.c - the patterns of a model's matrices (mbsens/sparse.h): the
 * tree pattern of the mass matrix.
 */
#include <stdlib.h>

#include "base/error.h"
#include "base/tree_sparse.h"
#include "model_impl.h"

/* The parent of each coordinate: the previous one of its joint, else the
 * last coordinate at or above the joint's parent body (joints without
 * coordinates pass their parent's on); the bodies are numbered parent first
 * with contiguous subtrees, so the coordinates are depth-first. */
int mbs_model_tree_pattern(const mbs_model *m, mbs_tree_pattern *p, mbs_error *err)
{
    if (!m || !p) return mbs_error_set(err, MBS_ERR_ARG, "model tree pattern: NULL model or pattern");
    int *parent = malloc(sizeof(int) * (size_t)(m->nq > 0 ? m->nq : 1));
    int *last = malloc(sizeof(int) * (size_t)(m->nb + 1));
    if (!parent || !last) {
        free(parent);
        free(last);
        return mbs_error_set(err, MBS_ERR_NOMEM, "model tree pattern: out of memory");
    }
    last[0] = -1;
    for (int i = 1; i <= m->nb; i++) {
        const mbs_joint_info *jt = &m->joint[i];
        const int up = last[jt->parent];
        for (int k = 0; k < jt->nq; k++) parent[jt->qoff + k] = k > 0 ? jt->qoff + k - 1 : up;
        last[i] = jt->nq > 0 ? jt->qoff + jt->nq - 1 : up;
    }
    const int rc = mbs_tree_pattern_create(p, m->nq, parent, err);
    free(parent);
    free(last);
    return rc;
}
