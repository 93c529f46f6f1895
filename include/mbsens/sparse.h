/*
 * mbsens/sparse.h - the tree pattern of the mass matrix and its
 * factorizations without fill-in (docs/api.md, "Sparse mass matrix").
 *
 * In a kinematic tree, M(i, j) can be non-zero only when velocity i is j,
 * an ancestor of j or a descendant of j: the ancestors of velocity k are the
 * velocities of the joints on the path from k's body to the ground, and the
 * velocities of one joint are a chain (each is the parent of the next). The
 * tree storage keeps the lower triangle of such a symmetric matrix row by
 * row:
 *
 *   row k = the entries (k, a) for every ancestor a of k in increasing
 *           order, then the diagonal (k, k);
 *
 * rows one after the other, row k at val[rowptr[k]], with its column
 * indices at colind[rowptr[k]] (compressed rows of the lower triangle, or
 * compressed columns of the upper one). Row k minus its diagonal is the
 * whole row of k's parent, so the factorizations below work on contiguous
 * pieces of rows and produce no fill-in: the factor has the pattern of M.
 *
 * Velocities are numbered parent first, every subtree on a contiguous range
 * [k, subtree_end[k]) (depth-first order). M is then block diagonal over the
 * ground subtrees (those whose root has no parent), and so is its inverse.
 */
#ifndef MBSENS_SPARSE_H
#define MBSENS_SPARSE_H

#include "data.h"
#include "dynamics.h"
#include "error.h"
#include "model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mbs_tree_pattern {
    int n;              /* rows: the velocities */
    int nnz;            /* stored entries: sum over k of (number of ancestors of k + 1) */
    int *parent;        /* n: the parent of k (the last velocity before k on its path to the ground), -1 for none */
    int *rowptr;        /* n + 1: row k is [rowptr[k], rowptr[k + 1]), its diagonal at rowptr[k + 1] - 1 */
    int *colind;        /* nnz: the column of each entry */
    int *subtree_end;   /* n: k's subtree is the range [k, subtree_end[k]) */
} mbs_tree_pattern;

/* The pattern of the tree given by parent[k] for k in [0, n): parent[k] in
 * [-1, k), and depth-first (parent[k] is k - 1, an ancestor of k - 1 or -1).
 * Allocates the arrays of p (free with mbs_tree_pattern_free). MBS_ERR_ARG
 * with the offending k otherwise, MBS_ERR_NOMEM. */
int mbs_tree_pattern_create(mbs_tree_pattern *p, int n, const int *parent, mbs_error *err);
/* The pattern of the mass matrix of a model (n = mbs_model_nv; closed loops
 * are not part of it: the pattern of their tree). */
int mbs_model_tree_pattern(const mbs_model *m, mbs_tree_pattern *p, mbs_error *err);
void mbs_tree_pattern_free(mbs_tree_pattern *p);

/* The mass matrix at q (composite inertias, as mbs_mass_matrix) in the
 * tree storage of p, the model's pattern (mbs_model_tree_pattern): its
 * lower triangle, each entry bit for bit the one of mbs_mass_matrix, in
 * O(sum of depths) numbers instead of nv^2. val: p->nnz. MBS_ERR_ARG if p
 * is not the model's pattern; errors as mbs_mass_matrix, in
 * mbs_data_error(d). */
int mbs_mass_matrix_sparse(const mbs_model *m, mbs_data *d, const double *q, const mbs_tree_pattern *p,
                           double *val);

/* Between the tree storage (val, nnz entries) and a dense symmetric n x n
 * matrix (row-major, leading dimension ld >= n). to_dense writes both
 * triangles and zeros outside the pattern; from_dense reads the lower
 * triangle at the pattern's entries only. */
void mbs_tree_to_dense(const mbs_tree_pattern *p, const double *val, double *M, int ld);
void mbs_tree_from_dense(const mbs_tree_pattern *p, const double *M, int ld, double *val);

/* In place, M = L^T D L (Featherstone's LTDL): L unit lower triangular with
 * the pattern of M, its off-diagonal entries at M's, D at the diagonal
 * entries. Cost: the sum over k of (number of ancestors of k)^2 / 2
 * multiply-adds. MBS_ERR_NUMERIC naming the row if a pivot is not positive
 * (M not positive definite; val is then partly overwritten). */
int mbs_tree_factor_ltdl(const mbs_tree_pattern *p, double *val, mbs_error *err);
/* x = M^-1 x with the factor of mbs_tree_factor_ltdl (x: n). */
void mbs_tree_solve_ltdl(const mbs_tree_pattern *p, const double *val, double *x);
/* In place, M = L^T L: L lower triangular with the pattern of M and a
 * positive diagonal (the cost of the L^T D L form plus a square root per
 * row). */
int mbs_tree_factor_ltl(const mbs_tree_pattern *p, double *val, mbs_error *err);
/* x = M^-1 x with the factor of mbs_tree_factor_ltl. */
void mbs_tree_solve_ltl(const mbs_tree_pattern *p, const double *val, double *x);

/* The diagonal block of M^-1 on the ground subtree of `root` (parent[root]
 * == -1: the rows and columns [root, subtree_end[root])), dense, both
 * triangles, row-major with leading dimension ld >= its size, from the
 * factor of mbs_tree_factor_ltdl. M^-1 is zero between ground subtrees.
 * MBS_ERR_ARG if root is not the root of a ground subtree. */
int mbs_tree_inverse_block(const mbs_tree_pattern *p, const double *val, int root, double *Minv, int ld,
                           mbs_error *err);

/* The patterns of the derivatives, in compressed columns (CSC: column c
 * holds the entries ind[ptr[c]] .. ind[ptr[c + 1] - 1], rows in increasing
 * order; ptr: nv + 1, ind: mbs_sparsity_nnz). An entry outside the pattern
 * is zero at every state (docs/api.md, "Sparse derivatives"):
 *
 *   MBS_SPARSITY_MASS  the upper triangle of M by columns (= the lower one
 *                      by rows: the tree storage above);
 *   MBS_SPARSITY_ID    dtau/dq and dtau/dv: (r, c) with r an ancestor of c,
 *                      c itself or in c's subtree, plus a clique per force
 *                      element: every pair of velocities on the paths to
 *                      the ground of the bodies it joins;
 *   MBS_SPARSITY_FD    dvd/dq, dvd/dv and dvd/dtau: (r, c) in one ground
 *                      subtree (the subtree of a joint on the ground), the
 *                      subtrees that force elements join merged into one.
 *
 * mbs_sparsity_nnz: -1 for a NULL model, an unknown kind or more than
 * INT_MAX entries. */
typedef enum mbs_sparsity { MBS_SPARSITY_MASS = 0, MBS_SPARSITY_ID = 1, MBS_SPARSITY_FD = 2 } mbs_sparsity;
int mbs_sparsity_nnz(const mbs_model *m, mbs_sparsity s);
int mbs_sparsity_pattern(const mbs_model *m, mbs_sparsity s, int *colptr, int *rowind, mbs_error *err);

/* mbs_inverse_dynamics_derivatives with dtau/dq and dtau/dv in the order
 * of the MBS_SPARSITY_ID pattern (mbs_sparsity_nnz values each): the
 * dense function's entries at those positions (the same operations: the
 * same numbers; on trees of 1-DOF joints without body loads the dense
 * function takes a fused pass, whose values differ at round-off), in
 * O(nnz) time and no nv x nv array. tau: nv. Any output may be NULL.
 * Errors as the dense function. */
int mbs_inverse_dynamics_derivatives_sparse(const mbs_model *m, mbs_data *d, const double *q, const double *v,
                                            const double *vd, double *tau, double *dtau_dq, double *dtau_dv);

/* mbs_forward_dynamics_derivatives with dvd/dq, dvd/dv and dvd/dtau in the
 * order of the MBS_SPARSITY_FD pattern (mbs_sparsity_nnz values each): per
 * ground subtree, the dense block of M'^-1 from the tree factorization
 * times the block of the completed right-hand sides. Cost: the sparse ID
 * derivatives plus the sum over ground subtrees of (size^2 x the size of
 * its merged group), linear in the number of subtrees of bounded size.
 * The dense function's values to round-off (another order of the same
 * products; docs/api.md gives the bound). vd: nv. Any output may be NULL.
 * alg: the algorithm of vd as in the dense function. */
int mbs_forward_dynamics_derivatives_sparse(const mbs_model *m, mbs_data *d, mbs_fd_algorithm alg, const double *q,
                                            const double *v, const double *tau, double *vd, double *dvd_dq,
                                            double *dvd_dv, double *dvd_dtau);

#ifdef __cplusplus
}
#endif
#endif
