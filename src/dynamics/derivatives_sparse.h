/*
 * derivatives_sparse.h - the workspace of the derivatives in pattern order
 * (id_derivatives_sparse.c, fd_derivatives_sparse.c; mbsens/sparse.h):
 * the patterns and their index tables, made once at mbs_data_create, and
 * arrays of O(nnz) and O(largest ground block^2), never nv x nv.
 */
#ifndef MBS_DERIVATIVES_SPARSE_H
#define MBS_DERIVATIVES_SPARSE_H

#include "kernels/data.h"

struct mbs_dsparse {
    int nnz_id, nnz_fd;
    int *idptr, *idind, *iddiag;   /* the ID pattern; iddiag[c]: position of (c, c) */
    int *fdptr, *fdind;            /* the FD pattern */
    int *fdoff;                    /* fdoff[r]: r's place among the rows of each column of its group */
    int *vbody;                    /* the body of each velocity */
    char *ecol;                    /* columns that force elements change (element_columns) */
    mbs_tree_pattern tp;           /* the tree pattern of M (the storage of mval) */
    int smax;                      /* the largest ground subtree */
    double *jq, *jqd;              /* nnz_id: the ID Jacobians of the FD derivatives */
    double *mval;                  /* tp.nnz: M', then its L^T D L factor */
    double *minv, *rb, *ob;        /* smax^2, smax, smax */
    double *e, *col, *dqf;         /* nv each */
};

/* Create (the patterns of m) or free d->dsp; MBS_OK or MBS_ERR_NOMEM. */
int mbs_dsparse_create(mbs_data *d, const mbs_model *m);
void mbs_dsparse_free(mbs_data *d);
void mbs_dsparse_scribble(mbs_data *d, uint64_t *s);

/* The ID Jacobians in the ID pattern's order (jq, jqd: either NULL) and M
 * in the tree storage (mval: NULL or tp.nnz), at the completed Newton-Euler
 * primal left in d->ws at (q, qd, qdd): mbs_deriv_id_jacobians's
 * operations on the pattern's entries only. */
void mbs_deriv_id_jacobians_sparse(const mbs_model *m, mbs_data *d, const double *q, const double *qd,
                                   const double *qdd, double *jq, double *jqd, double *mval);

#endif
