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

/* vpar[k]: the parent of velocity k in the tree pattern (-1: none). */
void mbs_model_vparents(const mbs_model *m, int *vpar);

/* The pattern s (mbs_sparsity_pattern) in compressed columns, its nnz
 * returned; ptr (nv + 1) and ind (nnz) may be NULL (count only). -1 if
 * memory runs out or nnz would pass INT_MAX. */
long long mbs_model_sparsity(const mbs_model *m, mbs_sparsity s, int *ptr, int *ind);

#endif
