/*
 * lin_matrixr.h - the linearization of one Matrix R step, shared
 * by the DDM (ddm_matrixr.c) and the discrete adjoint
 * (davm_matrixr.c) (internal; lin_matrixr.c).
 */
#ifndef MBS_LIN_MATRIXR_H
#define MBS_LIN_MATRIXR_H

#include <lapacke.h>

#include "sens_common.h"

struct mbs_form;

typedef struct sens_mr_lin {
    int n, nd, np;
    double h;
    double *base;
    double *J;    /* nd x nd: dF/dD^i, LU-factored */
    double *Bz;   /* 3n x nd: full-state chain tangents of the columns of J */
    double *pz, *pF, *e, *a, *dx;
    lapack_int *ipiv;
} sens_mr_lin;

int sens_mr_lin_create(sens_mr_lin *w, const mbs_model *m, int nd, int np);
void sens_mr_lin_free(sens_mr_lin *w);
/* Prepare g at the step's end state (t, q, qd, qdd), the step Jacobian J
 * (LU) and the chain tangents of its columns, for a step of length h. */
int sens_mr_lin_factor(sens_mr_lin *w, struct mbs_form *g, double t, const double *q, const double *qd,
                       const double *qdd, double h, mbs_error *err);
/* The step's linearization applied to one input: the start-of-step
 * independent sensitivities yi (3 nd: z^i', zd^i', zdd^i'; NULL = 0) and
 * parameter param (its unit direction; -1: none). Out: yi1 (3 nd), the
 * end-of-step independent sensitivities, and y1 (3 n), the full state's. */
void sens_mr_lin_apply(sens_mr_lin *w, struct mbs_form *g, double t, const double *q, const double *qd,
                       const double *qdd, const double *yi, int param, double *yi1, double *y1);
/* t0: Yi0 (3 nd x np) and Y0 (3 n x np), column per parameter: the
 * kinematic sensitivities of the assembly and the velocity problem, and
 * zdd^i0' = -(R^T M R)^-1 dF_0. */
int sens_mr_lin_init(sens_mr_lin *w, sens_run *r, struct mbs_form *g, double t, const double *q, const double *qd,
                     const double *qdd, double *Yi0, double *Y0, mbs_error *err);

#endif
