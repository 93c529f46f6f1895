/*
 * dense.h - small dense linear algebra of the closed-loop systems and
 * their sensitivities: products with a constraint Jacobian, the norm, LU
 * and Cholesky with one right-hand side (dense.c).
 */
#ifndef MBS_DENSE_H
#define MBS_DENSE_H

#include <lapacke.h>

/* A += s Phi^T Phi (A col-major n x n, Phi row-major, rows 0..rows-1). */
void mbs_dense_add_PtP(int n, int rows, const double *Phi, double s, double *A);
/* y = Phi^T v (rows 0..rows-1); y += ... with add. */
void mbs_dense_Ptv(int n, int rows, const double *Phi, const double *v, double *y, int add);
/* y = Phi x */
void mbs_dense_Pv(int n, int rows, const double *Phi, const double *x, double *y);
/* the Euclidean norm of v (n) */
double mbs_dense_norm(const double *v, int n);
/* Small dense LU (partial pivoting, 1-based pivots) and Cholesky (lower),
 * column-major, n x n, one right-hand side; LAPACK above 24 unknowns.
 * Factorizations return 0 or (column + 1) of a zero pivot / non-positive
 * diagonal. */
int mbs_dense_lu(int n, double *A, lapack_int *piv);
void mbs_dense_lu_solve(int n, const double *A, const lapack_int *piv, double *b);
int mbs_dense_chol(int n, double *A);
void mbs_dense_chol_solve(int n, const double *A, double *b);

#endif
