/*
 * base/tree_sparse.h - the tree storage of a symmetric matrix with the
 * pattern of a kinematic tree and its factorizations (tree_sparse.c; the
 * public side is mbsens/sparse.h, which describes the storage). The
 * functions here report a failed factorization by the row, for callers
 * that name it themselves (a coordinate name, an mbs_data message).
 */
#ifndef MBS_BASE_TREE_SPARSE_H
#define MBS_BASE_TREE_SPARSE_H

#include "mbsens/sparse.h"

/* M = L^T D L in place (mbs_tree_factor_ltdl); 0, or k + 1 if the pivot of
 * row k is not positive (or not a number). */
int mbs_tree_ltdl_rows(const mbs_tree_pattern *p, double *val);
/* M = L^T L in place (mbs_tree_factor_ltl); 0, or k + 1 as above. */
int mbs_tree_ltl_rows(const mbs_tree_pattern *p, double *val);

#endif
