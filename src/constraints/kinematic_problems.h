/*
 * kinematic_problems.h - the constraint workspace of an mbs_data
 * (internal; kinematic_problems.c). Allocated once by mbs_data_create, so
 * that constraint evaluations and the kinematic problems never allocate.
 */
#ifndef MBS_KINEMATIC_PROBLEMS_H
#define MBS_KINEMATIC_PROBLEMS_H

#include "kernels/data.h"

typedef struct mbs_con_ws {
    int ncon, nv, mmax;    /* rows, velocities (columns), max(ncon, nv) */
    double *phi;           /* ncon */
    double *vec;           /* ncon: b or c */
    double *Phi;           /* ncon x nv, row-major */
    double *A;             /* ncon x nv, column-major (LAPACK): the free columns */
    double *rhs;           /* max(mmax, nv) */
    double *sv;            /* singular values, nv */
    double *q;             /* nq: iterate */
    double *held;          /* nv: values of the fixed columns (velocity indices) */
    double *work;          /* LAPACK dgelsd work */
    int lwork, liwork;
    int *iwork;
    int *fixed;            /* nv: fixed columns of the current problem, then the free ones */
} mbs_con_ws;

int mbs_con_ws_create(mbs_data *d, const mbs_model *m);
void mbs_con_ws_free(mbs_data *d);
/* Test hook (mbs_data_scribble): garbage in every array (coordinate indices
 * in range). */
void mbs_con_ws_scribble(mbs_data *d, uint64_t *s);

#endif
