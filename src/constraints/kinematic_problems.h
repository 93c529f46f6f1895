/*
 * kinematic_problems.h - the constraint workspace of an mbs_data
 * (internal; kinematic_problems.c). Allocated once by mbs_data_create, so
 * that constraint evaluations and the kinematic problems never allocate.
 */
#ifndef MBS_KINEMATIC_PROBLEMS_H
#define MBS_KINEMATIC_PROBLEMS_H

#include "kernels/data.h"

typedef struct mbs_con_ws {
    int ncon, nq, mmax;    /* rows, coordinates, max(ncon, nq) */
    double *phi;           /* ncon */
    double *vec;           /* ncon: b or c */
    double *Phi;           /* ncon x nq, row-major */
    double *A;             /* ncon x nq, column-major (LAPACK): the free columns */
    double *rhs;           /* max(mmax, nq) */
    double *sv;            /* singular values, nq */
    double *q;             /* nq: iterate */
    double *held;          /* nq: values of the fixed coordinates */
    double *work;          /* LAPACK dgelsd work */
    int lwork, liwork;
    int *iwork;
    int *fixed;            /* nq: fixed coordinates of the current problem, then the free ones */
} mbs_con_ws;

int mbs_con_ws_create(mbs_data *d, const mbs_model *m);
void mbs_con_ws_free(mbs_data *d);
/* Test hook (mbs_data_scribble): garbage in every array (coordinate indices
 * in range). */
void mbs_con_ws_scribble(mbs_data *d, uint64_t *s);

#endif
