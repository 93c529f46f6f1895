/*
 * sparsity.h - the patterns of a model's matrices (sparsity.c; the public
 * side is mbsens/sparse.h).
 */
#ifndef MBS_MODEL_SPARSITY_H
#define MBS_MODEL_SPARSITY_H

#include "mbsens/sparse.h"

/* 1 if p is the tree pattern of m (the parents of mbs_model_tree_pattern;
 * the rest of p is what mbs_tree_pattern_create made of them), else 0. */
int mbs_model_is_tree_pattern(const mbs_model *m, const mbs_tree_pattern *p);

#endif
